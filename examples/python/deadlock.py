# Two threads take two locks in opposite orders: each can end up holding
# one and waiting for the other.  (The log() call matters: two `with`
# statements in a row contain no eval-breaker check, so under CPython
# 3.11's GIL nothing can run between them.)
import threading

done = []


def log(what):
    done.append(what)

accounts = threading.Lock()
orders = threading.Lock()


def migrate_users():
    with accounts:
        log("accounts")
        with orders:
            pass


def audit_orders():
    with orders:
        log("orders")
        with accounts:
            pass


def main():
    ts = [threading.Thread(target=migrate_users, name="migrate"),
          threading.Thread(target=audit_orders, name="audit")]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


if __name__ == "__main__":
    main()
