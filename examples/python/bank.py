# Two people withdraw 100 from an account holding 100.  Each checks the
# balance and withdraws under the lock, but not under the same `with`:
# between the two, the other may withdraw too, and the account is overdrawn.
import threading

balance = 100
lock = threading.Lock()


def withdraw(amount):
    global balance
    with lock:
        ok = balance >= amount
    if ok:
        with lock:
            balance -= amount


def main():
    people = [threading.Thread(target=withdraw, args=(100,), name=n)
              for n in ("Lucas", "Mathieu")]
    for t in people:
        t.start()
    for t in people:
        t.join()
    assert balance >= 0, "overdrawn: %d" % balance


if __name__ == "__main__":
    main()
