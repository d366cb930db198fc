"""A Python unittest module (test-suite mode splits its tests,
tests/integration/test_suite_mode.c): Bank.test_locked adds under a lock
in two threads; Bank.test_racy loses an update when a thread switch falls
between its read and its write (the sleep(0) between them lets one
happen: natively it nearly always passes); test_plain has no threads;
test_skipped skips itself.  It runs as `python3 -m unittest unittest_bank`
or as a script (unittest.main())."""
import threading
import time
import unittest


def run2(f):
    ts = [threading.Thread(target=f) for _ in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


class Bank(unittest.TestCase):
    def test_locked(self):
        n, lock = [0], threading.Lock()

        def add():
            with lock:
                n[0] += 1
        run2(add)
        self.assertEqual(n[0], 2)

    def test_racy(self):
        n = [0]

        def add():
            v = n[0]
            time.sleep(0)
            n[0] = v + 1
        run2(add)
        self.assertEqual(n[0], 2, "lost update")

    def test_plain(self):
        self.assertEqual(sorted([3, 1, 2]), [1, 2, 3])

    @unittest.skip("not today")
    def test_skipped(self):
        self.fail("a skipped test does not run")


if __name__ == '__main__':
    unittest.main()
