"""Two worker processes add to one multiprocessing.Value.

`v.value += 1` reads the value under its lock, then writes it back under
the lock again: another process can read or write in between, and an
addition is lost.  With FIXED=1 in the environment each addition holds
the lock (`with v.get_lock():`) and the count is always 4.

    ptloom run -- python3 examples/python/mp_value.py
"""
import multiprocessing as mp
import os

FIXED = os.environ.get("FIXED") == "1"


def work(v):
    for _ in range(2):
        if FIXED:
            with v.get_lock():
                v.value += 1
        else:
            v.value += 1


def main():
    mp.set_start_method("fork")
    v = mp.Value("i", 0)
    procs = [mp.Process(target=work, args=(v,)) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    assert v.value == 4, f"lost update: count {v.value}"
    print("count", v.value)


if __name__ == "__main__":
    main()
