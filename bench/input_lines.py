#!/usr/bin/env python3
"""The text the real-program rows compress and sort (bench/goals.sh,
bench/fastpath.sh): N lines (8000) from a xorshift generator, into PATH."""
import sys

x = 88172645463325252
m = (1 << 64) - 1
n = int(sys.argv[2]) if len(sys.argv) > 2 else 8000
with open(sys.argv[1], "w") as f:
    for i in range(n):
        x ^= (x << 13) & m
        x ^= x >> 7
        x ^= (x << 17) & m
        f.write("%d line %d %s\n" % (x % 100000, i,
                "alpha beta" if x & 3 else "gamma"))
