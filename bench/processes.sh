#!/usr/bin/env bash
# Cost per run of what stands in front of a program (issue 9): the same
# 2-thread program (tests/targets/fork_race_fixed: a worker process with two
# threads) bare, behind `sh -c`, behind the two-level script
# tests/targets/outer.sh, and a Criterion test binary (one test, run
# through Criterion's own per-test fork).  Random strategy, fixed seed,
# sync points; prints runs/s and the ratio to the bare program.  Asserts
# nothing.
#
# Measured on the 2-core VM (load ~10 from other work), PROC_RUNS=50:
#   bare fork_race_fixed          343 runs/s
#   sh -c fork_race_fixed         254 runs/s   1.34 x the bare cost per run
#   sh outer.sh fork_race_fixed   145 runs/s   2.36 x
#   Criterion --filter            fails: the worker crashes under ptloom
#                                 (SIGABRT in libcriterion; issue 9 note)
#
#   bench/processes.sh            uses build/ (or $PTLOOM_BUILD)
#   PROC_RUNS=200 bench/processes.sh
set -u -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${PTLOOM_BUILD:-$ROOT/build}
RUNS=${PROC_RUNS:-100}
PTLOOM=$BUILD/ptloom
T=$BUILD/tests
BIN=$(mktemp -d /tmp/ptloom-proc.XXXXXX)
trap 'rm -rf "$BIN"' EXIT

ninja -C "$BUILD" >/dev/null || { echo "build failed" >&2; exit 2; }
cat > "$BIN/crit.c" <<'C'
#include <criterion/criterion.h>
#include <pthread.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int n;
static void *inc(void *a) { (void)a; pthread_mutex_lock(&m); n++; pthread_mutex_unlock(&m); return 0; }
Test(bench, locked) { pthread_t x, y; pthread_create(&x, 0, inc, 0); pthread_create(&y, 0, inc, 0); pthread_join(x, 0); pthread_join(y, 0); cr_assert_eq(n, 2); }
C
have_crit=0
gcc -O0 -g -pthread -o "$BIN/crit" "$BIN/crit.c" -lcriterion 2>/dev/null && have_crit=1

# runs/s of one exploration, from PTLOOM_STATS
rate() {
	(cd "$BIN" && PTLOOM_STATS=1 timeout 300 "$PTLOOM" run -s random -n "$RUNS" --no-minimize \
		--seed 1 --points sync -o "$BIN/out" -- "$@" 2>&1 >/dev/null) |
		sed -n 's/.* \([0-9.]*\) runs\/s.*/\1/p' | tail -1
}

bare=$(rate "$T/fork_race_fixed")
printf "%-34s %8s runs/s\n" "bare fork_race_fixed" "$bare"
for what in sh outer crit; do
	case $what in
	sh) name="sh -c fork_race_fixed"; r=$(rate sh -c "$T/fork_race_fixed") ;;
	outer) name="sh outer.sh fork_race_fixed"
	       r=$(rate sh "$ROOT/tests/targets/outer.sh" "$T/fork_race_fixed") ;;
	crit) [ $have_crit = 1 ] || { echo "criterion: not built"; continue; }
	      name="criterion --filter bench/locked"
	      r=$(rate "$BIN/crit" --filter 'bench/locked') ;;
	esac
	if [ -n "$r" ] && [ -n "$bare" ]; then
		printf "%-34s %8s runs/s  %s x the bare cost per run\n" "$name" \
			"$r" "$(echo "scale=2; $bare / $r" | bc)"
	else
		printf "%-34s   failed (see ptloom run output)\n" "$name"
	fi
done
