# bank.py's fixed twin: the check and the withdrawal under one `with lock:`.
import threading

balance = 100
lock = threading.Lock()


def withdraw(amount):
    global balance
    with lock:
        if balance >= amount:
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
