# Two threads write their part, meet at a threading.Barrier, then each
# reads the other's part.  Correct: the barrier orders the writes first.
import threading

parts = [None, None]
seen = [None, None]
barrier = threading.Barrier(2)


def worker(i):
    parts[i] = i + 1
    barrier.wait()
    seen[i] = parts[1 - i]


def main():
    ts = [threading.Thread(target=worker, args=(i,), name="w%d" % i)
          for i in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert seen == [2, 1], seen


if __name__ == "__main__":
    main()
