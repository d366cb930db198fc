"""A lost update across a GIL drop: each thread reads the balance, sleeps
for no time (time.sleep(0) drops the GIL around its syscall, as any
blocking call does), then writes it back plus one.  While one thread is in
its sleep, the other may take the GIL and read the same balance: natively
this fails about one run in two; ptloom finds it at bound 1."""
import threading
import time

balance = 0


def add():
    global balance
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
