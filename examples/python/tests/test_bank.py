# The bank race as a pytest test: `python3 -m pytest tests/test_bank.py`.
import threading


def test_two_withdrawals_never_overdraw():
    account = {"balance": 100}
    lock = threading.Lock()

    def withdraw(amount):
        with lock:
            ok = account["balance"] >= amount
        if ok:
            with lock:
                account["balance"] -= amount

    people = [threading.Thread(target=withdraw, args=(100,), name=n)
              for n in ("Lucas", "Mathieu")]
    for t in people:
        t.start()
    for t in people:
        t.join()
    assert account["balance"] >= 0
