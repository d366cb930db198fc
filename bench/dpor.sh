#!/usr/bin/env bash
# Runs to complete preemption bound 2 with and without DPOR (bench/SEARCH.md
# "DPOR"): for each correct example, `--dfs-only --seed 1 -n CAP` under
# each reduction: none, sleep sets without and with the state cache (the
# default), and DPOR (which turns the cache off).  Prints a Markdown table;
# asserts nothing, and is not part of the test suite.
#
#   bench/dpor.sh                  uses build/ (or $PTLOOM_BUILD)
#
# Knobs: DPOR_CAP (10000 runs), DPOR_PROGRAMS (names in build/examples),
# DPOR_BOUND (2).
set -u -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${PTLOOM_BUILD:-$ROOT/build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
CAP=${DPOR_CAP:-10000}
BOUND=${DPOR_BOUND:-2}
PROGRAMS=${DPOR_PROGRAMS:-bank_fixed deadlock_fixed lost_wakeup_fixed pipe mutex_condvar barrier semaphore rwlock join_many}
PTLOOM=$BUILD/ptloom

ninja -C "$BUILD" >/dev/null || { echo "dpor: build failed" >&2; exit 2; }

# the summary's runs, ">CAP" when incomplete, or the verdict
runs() {
	local out
	out=$("$PTLOOM" run -q --dfs-only --seed 1 -n "$CAP" -p "$BOUND" "$@" 2>&1 | tail -1)
	case $out in
	*"PASS "*" runs, complete"*) sed 's/.*PASS \([0-9]*\) runs.*/\1/' <<<"$out" ;;
	*INCOMPLETE*) echo ">$CAP" ;;
	*FAIL*) echo "FAIL" ;;
	*) echo "? ($out)" ;;
	esac
}

echo "| program | none | sleep sets | sleep sets + state cache (default) | DPOR |"
echo "|---|---|---|---|---|"
for p in $PROGRAMS; do
	bin=$BUILD/examples/$p
	[ -x "$bin" ] || bin=$BUILD/tests/$p
	[ -x "$bin" ] || { echo "| $p | not built | | | |"; continue; }
	none=$(runs --reduction none --no-state-cache -- "$bin")
	sleep=$(runs --reduction sleep --no-state-cache -- "$bin")
	cache=$(runs --reduction sleep -- "$bin")
	dpor=$(runs --reduction dpor -- "$bin")
	echo "| $p | $none | $sleep | $cache | $dpor |"
done
