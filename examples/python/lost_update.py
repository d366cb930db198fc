# Two threads each add 1 to a counter attribute, without a lock.  The read
# and the write of `self.count += 1` are separate bytecodes, and the call
# between them lets the GIL change hands: one update can be lost.
import threading


class Counter:
    def __init__(self):
        self.count = 0

    def bump(self):
        c = self.count
        c = step(c)
        self.count = c


def step(c):
    return c + 1


def main():
    counter = Counter()
    ts = [threading.Thread(target=counter.bump, name="adder%d" % i)
          for i in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert counter.count == 2, "lost update: count %d" % counter.count


if __name__ == "__main__":
    main()
