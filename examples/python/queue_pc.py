# A producer and a consumer share a queue.Queue; the consumer sums what
# it gets until the sentinel.  Correct: the queue does the locking.
import queue
import threading

N = 3
q = queue.Queue(maxsize=2)
total = []


def producer():
    for i in range(1, N + 1):
        q.put(i)
    q.put(None)


def consumer():
    s = 0
    while True:
        item = q.get()
        if item is None:
            break
        s += item
    total.append(s)


def main():
    ts = [threading.Thread(target=producer, name="producer"),
          threading.Thread(target=consumer, name="consumer")]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert total == [N * (N + 1) // 2], total


if __name__ == "__main__":
    main()
