#!/usr/bin/env bash
# Cost per run of what stands in front of a program (issue 9): the same
# 2-thread program (tests/targets/fork_race_fixed: a worker process with two
# threads) bare, behind `sh -c`, behind the two-level script
# tests/targets/outer.sh, and the Criterion test binary
# tests/targets/criterion_tests.c (one test through --filter, and both
# tests; Criterion forks and re-execs a worker per test).  Random strategy,
# fixed seed, sync points; prints ptloom's runs/s, native runs/s of the
# same command, the slowdown against native, and the cost per run against
# the bare program under ptloom.  Asserts nothing.
#
# Measured on the 2-core VM (load ~10 from other work), PROC_RUNS=50
# (Criterion: PROC_CRIT_RUNS=10):
#   bare fork_race_fixed          343 runs/s
#   sh -c fork_race_fixed         254 runs/s   1.34 x the bare cost per run
#   sh outer.sh fork_race_fixed   145 runs/s   2.36 x
#   Criterion --filter            failed before this issue's fix (every run
#                                 FAILed: see below)
# After the Criterion fix (see the numbers printed by this script in the
# issue 9 note): a Criterion run costs about a second under ptloom, against
# ~10 ms natively; most of it is ~50,000 trapped rdtsc per process start
# (mbedtls's HAVEGE entropy init, run by libgit2 from criterion_initialize,
# in the runner and again in each re-exec'd worker), each a ptrace stop.
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
	(cd "$BIN" && PTLOOM_STATS=1 timeout 600 "$PTLOOM" run -s random -n "$n" \
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

bare=$(rate "$RUNS" "$T/fork_race_fixed")
printf "%-34s %8s runs/s  native %8s runs/s\n" "bare fork_race_fixed" "$bare" \
	"$(native "$RUNS" "$T/fork_race_fixed")"
for what in sh outer crit1 crit; do
	n=$RUNS
	case $what in
	sh) name="sh -c fork_race_fixed"; cmd=(sh -c "$T/fork_race_fixed") ;;
	outer) name="sh outer.sh fork_race_fixed"
	       cmd=(sh "$ROOT/tests/targets/outer.sh" "$T/fork_race_fixed") ;;
	crit1) name="criterion --filter suite/locked"; n=$CRIT_RUNS
	       cmd=("$T/criterion_tests" --filter suite/locked) ;;
	crit) name="criterion (2 tests)"; n=$CRIT_RUNS
	      cmd=("$T/criterion_tests") ;;
	esac
	[ -x "${cmd[0]}" ] || [ "${cmd[0]}" = sh ] ||
		{ printf "%-34s   not built\n" "$name"; continue; }
	r=$(rate "$n" "${cmd[@]}")
	nat=$(native "$n" "${cmd[@]}")
	if [ -n "$r" ] && [ -n "$bare" ]; then
		printf "%-34s %8s runs/s  native %8s runs/s  %6s x native  %6s x the bare cost\n" \
			"$name" "$r" "$nat" "$(echo "scale=1; $nat / $r" | bc)" \
			"$(echo "scale=2; $bare / $r" | bc)"
	else
		printf "%-34s   failed (see ptloom run output)\n" "$name"
	fi
done
