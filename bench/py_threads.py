# A small threading script for bench/speed.sh: two threads update a
# counter under a lock.  Correct; every schedule passes.
import threading

count = 0
lock = threading.Lock()


def work():
    global count
    for _ in range(3):
        with lock:
            count += 1


threads = [threading.Thread(target=work) for _ in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert count == 6
