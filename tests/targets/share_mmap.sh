#!/bin/sh
# Two tests that share a file through mmap while both run (a reader that
# waits for the writer's value, and the writer; $1 is tests/targets/
# mmap_pair_test): not split by `ptloom run --per-test` (alone, the reader
# never sees the value and fails).  Run in a scratch directory.
"$1" reader &
"$1" writer
wait
