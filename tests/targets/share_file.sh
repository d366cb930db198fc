#!/bin/sh
# Two tests that talk through a file while both run (the second reads what
# the first writes): not split by `ptloom run --per-test`.
# Run in a scratch directory.
sh -c 'echo hello > message' &
cat message
wait
