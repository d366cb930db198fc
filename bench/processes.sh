#!/usr/bin/env bash
# Cost per run of what stands in front of a program (issue 9), one table in
# one invocation: the 2-thread program tests/targets/fork_race_fixed (a
# worker process with two threads) bare, behind `sh -c` and behind the
# two-level script tests/targets/outer.sh; and the Criterion test binary
# tests/targets/criterion_tests.c (one test through --filter, and both;
# Criterion forks and re-execs a worker per test) against the same two test
# bodies in one plain process (criterion_bare, -DBARE).  Random strategy,
# fixed seed, sync points.  Columns: ptloom's seconds per run, native
# seconds per run of the same command, their ratio, and the cost per run
# against its bare program under ptloom.  Asserts nothing.
#
# 2-core VM, load ~8-11 from other work, PROC_RUNS=30 PROC_CRIT_RUNS=6
# (the sub-10 ms rows swing 2-5x with the load; a bare run under ptloom
# is a fork of a checkpoint, cheaper than a native fork + exec):
#                                        ptloom     native  ptloom /   x bare
#   command                               s/run      s/run    native     cost
#   bare fork_race_fixed                  .0042      .0023      1.7x       1x
#   sh -c fork_race_fixed                 .0251      .0085      2.9x    5.97x
#   sh outer.sh fork_race_fixed           .0112      .0087      1.2x    2.66x
#   bare test bodies (no Criterion)       .0013      .0040       .3x       1x
#   criterion --filter suite/locked      1.6666      .1923      8.6x 1207.33x
#   criterion (2 tests, 2 workers)       2.5000      .1886     13.2x 1811.00x
# Earlier (before the Criterion fix every Criterion run failed): sh -c
# 1.34x and outer.sh 2.36x the bare cost at load ~10.
# Most of a Criterion run was ~65,000 trapped rdtsc per process start-up
# (mbedtls's entropy init, run by libgit2 from criterion_initialize, in the
# runner and again in each re-exec'd worker), each a ptrace stop, until the
# agent answered rdtsc in the program (INTERNALS, the agent's item 10); the
# two "rdtsc at stops" rows run with PTLOOM_TSC_SLOTS=0.  December 2026,
# load 3-5, PROC_RUNS=20 PROC_CRIT_RUNS=3:
#   criterion --filter suite/locked       .3125      .1041      3.0x
#   criterion (2 tests, 2 workers)        .2564      .1149      2.2x
#     rdtsc at stops: --filter            .7142      .0892      8.0x
#     rdtsc at stops: 2 tests             .9090      .1030      8.8x
# No fork checkpoint (nanomsg's eventfd is open at the first thread).
#
#   bench/processes.sh            uses build/ (or $PTLOOM_BUILD)
#   PROC_RUNS=200 PROC_CRIT_RUNS=20 bench/processes.sh
set -u -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${PTLOOM_BUILD:-$ROOT/build}
RUNS=${PROC_RUNS:-100}
CRIT_RUNS=${PROC_CRIT_RUNS:-10}
PTLOOM=$BUILD/ptloom
T=$BUILD/tests
BIN=$(mktemp -d /tmp/ptloom-proc.XXXXXX)
trap 'rm -rf "$BIN"' EXIT

ninja -C "$BUILD" >/dev/null || { echo "build failed" >&2; exit 2; }

# runs/s of one exploration of N runs, from PTLOOM_STATS; "" if it failed
rate() {
	local n=$1
	shift
	(cd "$BIN" && env PTLOOM_STATS=1 ${RATE_ENV:-} timeout 600 "$PTLOOM" run -s random -n "$n" \
		--no-minimize --timeout 120 --seed 1 --points sync -o "$BIN/out" \
		-- "$@" 2>&1 >/dev/null) |
		sed -n 's/.* \([0-9.]*\) runs\/s.*/\1/p' | tail -1
}

# native runs/s of N runs of the command
native() {
	local n=$1 t0 t1
	shift
	t0=$(date +%s.%N)
	for _ in $(seq "$n"); do "$@" >/dev/null 2>&1; done
	t1=$(date +%s.%N)
	echo "scale=1; $n / ($t1 - $t0)" | bc
}

# one row: ptloom's and native seconds per run, ptloom against native,
# and the cost per run against its bare program under ptloom
printf "%-34s %10s %10s %9s %8s\n" "" "ptloom" "native" "ptloom /" "x bare"
printf "%-34s %10s %10s %9s %8s\n" "command" "s/run" "s/run" "native" "cost"
row() {
	local name=$1 n=$2 base=$3 r nat
	shift 3
	r=$(rate "$n" "$@")
	nat=$(native "$n" "$@")
	if [ -z "$r" ]; then
		printf "%-34s   failed (see ptloom run output)\n" "$name"
		return
	fi
	printf "%-34s %10s %10s %8sx %7sx\n" "$name" \
		"$(echo "scale=4; 1 / $r" | bc)" "$(echo "scale=4; 1 / $nat" | bc)" \
		"$(echo "scale=1; $nat / $r" | bc)" \
		"$( [ -n "$base" ] && echo "scale=2; $base / $r" | bc || echo 1)"
	last=$r
}

row "bare fork_race_fixed" "$RUNS" "" "$T/fork_race_fixed"
bare=$last
row "sh -c fork_race_fixed" "$RUNS" "$bare" sh -c "$T/fork_race_fixed"
row "sh outer.sh fork_race_fixed" "$RUNS" "$bare" \
	sh "$ROOT/tests/targets/outer.sh" "$T/fork_race_fixed"
# Criterion's runner and its fork + re-exec of a worker per test, against
# the same two test bodies in one plain process (criterion_bare)
if [ -x "$T/criterion_tests" ] && [ -x "$T/criterion_bare" ]; then
	row "bare test bodies (no Criterion)" "$RUNS" "" "$T/criterion_bare"
	cbare=$last
	row "criterion --filter suite/locked" "$CRIT_RUNS" "$cbare" \
		"$T/criterion_tests" --filter suite/locked
	row "criterion (2 tests, 2 workers)" "$CRIT_RUNS" "$cbare" \
		"$T/criterion_tests"
	# the same with every rdtsc at a stop (before the agent's rdtsc
	# slots; INTERNALS, the agent's item 10)
	RATE_ENV=PTLOOM_TSC_SLOTS=0
	row "  rdtsc at stops: --filter" "$CRIT_RUNS" "$cbare" \
		"$T/criterion_tests" --filter suite/locked
	row "  rdtsc at stops: 2 tests" "$CRIT_RUNS" "$cbare" \
		"$T/criterion_tests"
	RATE_ENV=
else
	echo "criterion targets not built"
fi
