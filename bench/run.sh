#!/usr/bin/env bash
# ptloom micro-benchmarks.  Prints tables of numbers and ratios; asserts
# nothing about timing (the exit status is non-zero only if the build or a
# ptloom invocation itself fails).  Not part of the test suite.  See
# bench/README.md for what each number means.
#
#   bench/run.sh                   uses build/ (or $PTLOOM_BUILD), builds if needed
#   PTLOOM_BUILD=/tmp/bb bench/run.sh
#
# Knobs (environment): BENCH_NATIVE_RUNS (200), BENCH_PTLOOM_RUNS (200),
# BENCH_EXAMPLES (space-separated, paths relative to the build directory),
# BENCH_DFS (path:bound ...).
set -u -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${PTLOOM_BUILD:-$ROOT/build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
NATIVE_RUNS=${BENCH_NATIVE_RUNS:-200}
PTLOOM_RUNS=${BENCH_PTLOOM_RUNS:-200}
EXAMPLES=${BENCH_EXAMPLES:-examples/bank_fixed examples/deadlock_fixed examples/mutex_condvar examples/barrier examples/join_many}
DFS_PROGRAMS=${BENCH_DFS:-examples/bank_fixed:2 examples/deadlock_fixed:2 examples/deadlock_fixed:3}
RACE_PROGRAMS="tests/counter_race tests/spsc_ring"

die() { echo "bench: $*" >&2; exit 2; }

# --- build if needed ---------------------------------------------------------
if [ ! -f "$BUILD/build.ninja" ]; then
	echo "bench: configuring $BUILD" >&2
	meson setup "$BUILD" "$ROOT" >/dev/null || die "meson setup failed"
fi
wanted="ptloom"
for p in $EXAMPLES ${DFS_PROGRAMS//:[0-9]/} $RACE_PROGRAMS; do
	case " $wanted " in *" $p "*) ;; *) wanted="$wanted $p" ;; esac
done
# Build only what the bench runs; an up-to-date tree is a no-op.
if ! ninja -C "$BUILD" $wanted >/dev/null 2>&1; then
	# tests/* exist only with -Dtests=true: build what we can
	ninja -C "$BUILD" ptloom $(for p in $wanted; do
		case $p in examples/*) echo "$p" ;; esac; done) >/dev/null ||
		die "ninja -C $BUILD failed"
fi
PTLOOM=$BUILD/ptloom
[ -x "$PTLOOM" ] || die "no $PTLOOM"

OUT=$(mktemp -d /tmp/ptloom-bench.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
cd "$OUT" || die "cannot cd to $OUT"

# run ptloom with a wall-clock cap; never leave a stopped tracee behind
pt() { PTLOOM_STATS=1 timeout -k 5 "$@"; }

# "ptloom: N runs, P pruned, S s, R runs/s, U us/step" -> "N P S R U"
stats_of() {
	sed -n 's/^ptloom: \([0-9]*\) runs, \([0-9]*\) pruned, \([0-9.]*\) s[^,]*, \([0-9.]*\) runs\/s, \([0-9.]*\) us\/step.*/\1 \2 \3 \4 \5/p' "$1" | tail -1
}

echo "ptloom bench  $(date -u '+%Y-%m-%d %H:%M:%SZ')  $(nproc) CPUs  load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "build: $BUILD ($("$PTLOOM" --version 2>/dev/null | head -1))"
echo

# --- 1. per-run cost: native vs ptloom (random strategy) ------------------
echo "1. Per-execution cost: native ($NATIVE_RUNS runs) vs \`ptloom run -s random -n $PTLOOM_RUNS\`"
printf '%-16s %10s %10s %7s %9s %8s %10s\n' \
	program native_us ptloom_us ratio points/run us/point ovh_us/pt
for p in $EXAMPLES; do
	bin=$BUILD/$p
	name=${p##*/}
	if [ ! -x "$bin" ]; then
		printf '%-16s (not built)\n' "$name"
		continue
	fi
	# native: the whole loop under one timeout, so each run is a bare fork+exec
	t0=$(date +%s%N)
	if ! timeout -k 5 120 bash -c 'for ((i = 0; i < $2; i++)); do "$1" >/dev/null 2>&1 || exit 1; done' _ "$bin" "$NATIVE_RUNS"; then
		printf '%-16s native run failed or timed out\n' "$name"
		continue
	fi
	t1=$(date +%s%N)
	native_us=$(awk -v a="$t0" -v b="$t1" -v n="$NATIVE_RUNS" 'BEGIN { printf "%.0f", (b - a) / 1000 / n }')
	pt 120 "$PTLOOM" run -s random -n "$PTLOOM_RUNS" --seed 1 -o "$OUT/s" -- "$bin" >"$OUT/stdout" 2>"$OUT/stderr"
	rc=$?
	read -r n _pruned s _rps us_step <<<"$(stats_of "$OUT/stderr")"
	if [ $rc -ne 0 ] || [ -z "${n:-}" ]; then
		printf '%-16s ptloom exit %d: %s\n' "$name" "$rc" "$(tail -1 "$OUT/stdout")"
		continue
	fi
	awk -v name="$name" -v nat="$native_us" -v n="$n" -v s="$s" -v ups="$us_step" 'BEGIN {
		per = s * 1e6 / n                        # ptloom us per execution
		pts = (ups > 0) ? s * 1e6 / ups / n : 0  # scheduling points per execution
		ovh = (pts > 0) ? (per - nat) / pts : 0  # extra us per point over native
		printf "%-16s %10.0f %10.0f %6.1fx %9.1f %8.1f %10.1f\n", name, nat, per, per / nat, pts, ups, ovh
	}'
done
echo

# --- 2. systematic exploration: sleep sets on / off ------------------------
echo "2. \`ptloom run -p BOUND\` (dfs) with and without --no-reduction"
printf '%-16s %5s %-14s %-6s %7s %8s %8s %7s\n' program bound mode verdict runs seconds runs/s pruned
# "program:bound"; bound 3 on deadlock_fixed (two locks) is where sleep
# sets first change the run count
for pb in $DFS_PROGRAMS; do
	p=${pb%:*} bound=${pb##*:}
	bin=$BUILD/$p
	name=${p##*/}
	[ -x "$bin" ] || { printf '%-16s (not built)\n' "$name"; continue; }
	for mode in reduction no-reduction; do
		flag=; [ $mode = no-reduction ] && flag=--no-reduction
		pt 120 "$PTLOOM" run -p "$bound" $flag -o "$OUT/d" -- "$bin" >"$OUT/stdout" 2>"$OUT/stderr"
		rc=$?
		read -r n pruned s rps _ <<<"$(stats_of "$OUT/stderr")"
		case $rc in 0) v=PASS ;; 1) v=FAIL ;; 3) v=INCOMP ;; *) v="rc=$rc" ;; esac
		printf '%-16s %5s %-14s %-6s %7s %8s %8s %7s\n' "$name" "$bound" "$mode" "$v" \
			"${n:-?}" "${s:-?}" "${rps:-?}" "${pruned:-?}"
	done
done
echo

# --- 3. race discovery cost ---------------------------------------------------
echo "3. \`ptloom races\` (default 6 runs): discovery cost"
printf '%-16s %6s %10s %8s %12s %6s\n' program runs accesses seconds us/access races
for p in $RACE_PROGRAMS; do
	bin=$BUILD/$p
	name=${p##*/}
	[ -x "$bin" ] || { printf '%-16s (not built: configure with -Dtests=true)\n' "$name"; continue; }
	timeout -k 5 120 "$PTLOOM" races -- "$bin" >"$OUT/stdout" 2>"$OUT/stderr"
	rc=$?
	line=$(grep -m1 'accesses observed in' "$OUT/stdout")
	nraces=$(grep -c '^race on' "$OUT/stdout")
	# "ptloom: N runs, A accesses observed in S s"
	read -r runs acc secs <<<"$(sed -n 's/^ptloom: \([0-9]*\) runs, \([0-9]*\) accesses observed in \([0-9.]*\) s.*/\1 \2 \3/p' <<<"$line")"
	if [ -z "${runs:-}" ]; then
		printf '%-16s ptloom races exit %d\n' "$name" "$rc"
		continue
	fi
	awk -v name="$name" -v r="$runs" -v a="$acc" -v s="$secs" -v k="$nraces" 'BEGIN {
		printf "%-16s %6d %10d %8.2f %12.1f %6d\n", name, r, a, s, a ? s * 1e6 / a : 0, k }'
done
