# Two threads call a C extension's bump(), which increments a C counter
# with the GIL released: an update can be lost.  argv[1]: the directory
# holding the built counterext module.
import sys
import threading

sys.path.insert(0, sys.argv[1])
import counterext  # noqa: E402


def work():
    counterext.bump()


def main():
    ts = [threading.Thread(target=work, name=n) for n in ("left", "right")]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert counterext.value() == 2, "lost update: %d" % counterext.value()


if __name__ == "__main__":
    main()
