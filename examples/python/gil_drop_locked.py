"""gil_drop_lost_update.py with the read, the sleep and the write under a
threading.Lock: correct, whatever the schedule."""
import threading
import time

balance = 0
lock = threading.Lock()


def add():
    global balance
    with lock:
        v = balance
        time.sleep(0)
        balance = v + 1


def main():
    threads = [threading.Thread(target=add) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert balance == 2, f"lost update: balance {balance}"


main()
