#!/bin/bash
# The quick-start demo: set up and build, then let ptloom find the bug in
# examples/bank.c (a check and a withdrawal in two critical sections) and
# replay the schedule it saved.
#
#   bash scripts/demo.sh
#
# Exits 0 when ptloom found the failure (its exit 1) and the replay
# reproduced it (exit 1 again); anything else is a failure of the demo.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${PTLOOM_BUILD:-build}
cd "$root"

bash scripts/setup.sh || exit 1

echo
echo "\$ $build/ptloom run -- $build/examples/bank"
out=$("$build/ptloom" run -- "$build/examples/bank")
rc=$?
printf '%s\n' "$out"
if [ $rc -ne 1 ]; then
	echo "demo: expected ptloom to find the failure (exit 1), got exit $rc" >&2
	exit 1
fi

# the exact replay command ptloom printed, with our build's ptloom
cmd=$(printf '%s\n' "$out" | sed -n 's/^replay: ptloom //p' | tail -n 1)
if [ -z "$cmd" ]; then
	echo "demo: ptloom printed no replay command" >&2
	exit 1
fi
echo
echo "\$ $build/ptloom $cmd"
eval "\"$build/ptloom\" $cmd"
rc=$?
if [ $rc -ne 1 ]; then
	echo "demo: the replay did not reproduce the failure (exit $rc)" >&2
	exit 1
fi
echo
echo "demo: ptloom found the bug and its saved schedule reproduces it."
