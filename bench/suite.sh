#!/usr/bin/env bash
# Test-suite mode (`ptloom run --per-test`) against its alternatives, one
# table in one invocation, for the 6-test ctest project
# tests/targets/ctest_suite (five correct tests, one racy):
#   per-test     ptloom run --per-test -- ctest    (each test explored alone)
#   six alone    ptloom run -- TEST, for each of the six programs, summed
#   whole tree   ptloom run -- ctest               (today's default), capped
#                by --max-time $SUITE_WHOLE_TIME (default 120 s)
# Columns: wall seconds, runs (from the JSON reports), verdict, and the
# ratio of wall time to "six alone" (goal for per-test: at most 1.3x).
# dfs, seed 1, bound 2, --no-minimize for all.  Asserts nothing.
# Usage: bash bench/suite.sh [BUILD_DIR]
#
# 2-core VM shared with other sessions, load average 16-20 (swings of 3x
# between invocations at this load: one run of the first row took 33 s),
# SUITE_BASE=/work/base/build/ptloom SUITE_WHOLE_TIME=60:
#   6-test ctest suite                    wall s    runs verdict      / alone
#   per-test (ptloom run --per-test)       13.17    1325 fail           1.02x
#   six tests explored alone, summed       12.93    1324 -              1.00x
#   per-test -j 2, ctest -j 2               2.09    1325 fail           0.16x
#   whole tree (--max-time 60)             12.16      32 fail           0.94x
#   5 correct tests (racy one left out)    wall s    runs verdict
#   per-test                               10.58    1313 pass
#   whole tree (--max-time 60)             60.32     192 incomplete
#   whole tree, session-start binary       60.08     193 incomplete
# hsuite2 (after the runner follows failing schedules, -j no longer lets
# held tests time out, Criterion tests split), one invocation at load
# 6-20 with test runs of mine overlapping the ctest rows (the "six alone"
# row is inflated by them: its 0.45x is noise), SUITE_BASE as above:
#   6-test ctest suite                    wall s    runs verdict      / alone
#   per-test (ptloom run --per-test)        6.99    1325 fail           0.45x
#   six tests explored alone, summed       15.40    1324 -              1.00x
#   per-test -j 2, ctest -j 2               8.64    1325 fail           0.56x
#   whole tree (--max-time 60)              7.32      36 fail           0.48x
#   5 correct tests (racy one left out)    wall s    runs verdict
#   per-test                                6.29    1313 pass
#   whole tree (--max-time 60)             60.07     685 incomplete
#   whole tree, session-start binary       60.09     705 incomplete
#   Criterion, 3 tests (surw -n 20)       wall s    runs verdict      / alone
#   per-test (ptloom run --per-test)      112.72      45 fail           1.29x
#   three tests explored alone, summed     87.66      44 -              1.00x
#   whole tree                             85.38      21 pass           0.97x
# The ctest rows again alone (SUITE_CRITERION=0), load 5, nothing else of
# mine running:
#   per-test (ptloom run --per-test)        4.32    1325 fail           0.91x
#   six tests explored alone, summed        4.74    1324 -              1.00x
#   per-test -j 2, ctest -j 2               1.78    1325 fail           0.38x
#   whole tree (--max-time 60)              4.78      36 fail           1.01x
#   5 correct: per-test 4.89 s 1313 runs pass; whole tree 60.13 s 564 runs
#   incomplete; session-start binary whole tree 60.14 s 598 incomplete
# The whole Criterion binary sampled 20 times misses suite::racy (each run
# interleaves all three tests: PASS, "every requested run passed"); per
# test, suite::racy fails in its second run.
# per-test's runs are the six explorations' plus the one suite run.  The
# whole tree stops at the first failure (32 runs) with one verdict for the
# suite; on the five correct tests it does not finish bound 0 in 60 s
# (192 runs: every schedule runs ctest and all five tests again), where
# per-test proves each complete to bound 2 in 1313 runs.
# Criterion (tests/targets/criterion_tests.c -DSUITE: suite/locked,
# suite/plain, suite/racy; SUITE_CRITERION=0 leaves it out): each test is
# explored as `criterion_suite --filter suite/TEST` (docs/ci.md,
# "Fork-per-test runners"), sampled (-s surw -n $SUITE_CRIT_RUNS, default
# 20, --timeout 120: a Criterion run costs about 2 s, a dfs bound is out of
# reach):
#   per-test     ptloom run --per-test -- criterion_suite
#   three alone  ptloom run -- criterion_suite --filter suite/TEST, summed
#   whole tree   ptloom run -- criterion_suite (the same -n)
set -u
B=${1:-${PTLOOM_BUILD:-build}}
B=$(cd "$B" && pwd)
P=$B/ptloom
T=$B/tests
SRC=$(cd "$(dirname "$0")/.." && pwd)
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
WHOLE=${SUITE_WHOLE_TIME:-120}
cmake -S "$SRC/tests/targets/ctest_suite" -B "$W/ct" -DTARGETS="$T" >/dev/null
now() { date +%s.%N; }
runs() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["runs"])' "$1" 2>/dev/null || echo '?'; }
verdict() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["verdict"])' "$1" 2>/dev/null || echo '?'; }

t0=$(now)
"$P" run --per-test -q --seed 1 --no-minimize -o "$W/o1" --report "$W/pt.json" -- ctest --test-dir "$W/ct" >/dev/null
t1=$(now)
pt_s=$(echo "$t1 - $t0" | bc); pt_r=$(runs "$W/pt.json"); pt_v=$(verdict "$W/pt.json")

alone_s=0; alone_r=0
for prog in bank_locked plain_inc_fixed_O0 plain_inc_fixed_O2 fork_race_fixed treiber_ok bank_nolock; do
	t0=$(now)
	"$P" run -q --seed 1 --no-minimize -o "$W/o2" --report "$W/a.json" -- "$T/$prog" >/dev/null
	t1=$(now)
	alone_s=$(echo "$alone_s + $t1 - $t0" | bc)
	alone_r=$((alone_r + $(runs "$W/a.json")))
done

t0=$(now)
"$P" run --per-test -j 2 -q --seed 1 --no-minimize -o "$W/o4" --report "$W/pj.json" -- ctest -j 2 --test-dir "$W/ct" >/dev/null
t1=$(now)
pj_s=$(echo "$t1 - $t0" | bc); pj_r=$(runs "$W/pj.json"); pj_v=$(verdict "$W/pj.json")

t0=$(now)
"$P" run -q --seed 1 --no-minimize --max-time "$WHOLE" -o "$W/o3" --report "$W/w.json" -- ctest --test-dir "$W/ct" >/dev/null
t1=$(now)
w_s=$(echo "$t1 - $t0" | bc); w_r=$(runs "$W/w.json"); w_v=$(verdict "$W/w.json")

# the same suite with its racy test left out: what a whole-tree
# exploration of five correct tests costs (the session-start binary too,
# SUITE_BASE=path/to/old/ptloom)
sed '/racy_withdraw/d' "$SRC/tests/targets/ctest_suite/CMakeLists.txt" >"$W/CMakeLists.txt"
mkdir -p "$W/src5" && mv "$W/CMakeLists.txt" "$W/src5/"
cmake -S "$W/src5" -B "$W/ct5" -DTARGETS="$T" >/dev/null
t0=$(now)
"$P" run --per-test -q --seed 1 --no-minimize -o "$W/o5" --report "$W/p5.json" -- ctest --test-dir "$W/ct5" >/dev/null
t1=$(now)
p5_s=$(echo "$t1 - $t0" | bc); p5_r=$(runs "$W/p5.json"); p5_v=$(verdict "$W/p5.json")
t0=$(now)
"$P" run -q --seed 1 --no-minimize --max-time "$WHOLE" -o "$W/o6" --report "$W/w5.json" -- ctest --test-dir "$W/ct5" >/dev/null
t1=$(now)
w5_s=$(echo "$t1 - $t0" | bc); w5_r=$(runs "$W/w5.json"); w5_v=$(verdict "$W/w5.json")
if [ -n "${SUITE_BASE:-}" ]; then
	t0=$(now)
	"$SUITE_BASE" run -q --seed 1 --no-minimize --max-time "$WHOLE" -o "$W/o7" --report "$W/b5.json" -- ctest --test-dir "$W/ct5" >/dev/null
	t1=$(now)
	b5_s=$(echo "$t1 - $t0" | bc); b5_r=$(runs "$W/b5.json"); b5_v=$(verdict "$W/b5.json")
fi

printf '%-34s %9s %7s %-11s %8s\n' "6-test ctest suite" "wall s" "runs" "verdict" "/ alone"
printf '%-34s %9.2f %7s %-11s %7.2fx\n' "per-test (ptloom run --per-test)" "$pt_s" "$pt_r" "$pt_v" "$(echo "$pt_s / $alone_s" | bc -l)"
printf '%-34s %9.2f %7s %-11s %7.2fx\n' "six tests explored alone, summed" "$alone_s" "$alone_r" "-" 1
printf '%-34s %9.2f %7s %-11s %7.2fx\n' "per-test -j 2, ctest -j 2" "$pj_s" "$pj_r" "$pj_v" "$(echo "$pj_s / $alone_s" | bc -l)"
printf '%-34s %9.2f %7s %-11s %7.2fx\n' "whole tree (--max-time $WHOLE)" "$w_s" "$w_r" "$w_v" "$(echo "$w_s / $alone_s" | bc -l)"
printf '%-34s %9s %7s %-11s\n' "5 correct tests (racy one left out)" "wall s" "runs" "verdict"
printf '%-34s %9.2f %7s %-11s\n' "per-test" "$p5_s" "$p5_r" "$p5_v"
printf '%-34s %9.2f %7s %-11s\n' "whole tree (--max-time $WHOLE)" "$w5_s" "$w5_r" "$w5_v"
if [ -n "${SUITE_BASE:-}" ]; then
	printf '%-34s %9.2f %7s %-11s\n' "whole tree, session-start binary" "$b5_s" "$b5_r" "$b5_v"
fi

[ "${SUITE_CRITERION:-1}" = 0 ] && exit 0
CR=${SUITE_CRIT_RUNS:-20}
copt=(-s surw -n "$CR" --no-minimize --timeout 120 --seed 1)
t0=$(now)
"$P" run --per-test -q "${copt[@]}" -o "$W/c1" --report "$W/cp.json" -- "$T/criterion_suite" >/dev/null
t1=$(now)
cp_s=$(echo "$t1 - $t0" | bc); cp_r=$(runs "$W/cp.json"); cp_v=$(verdict "$W/cp.json")
ca_s=0; ca_r=0
for t in locked plain racy; do
	t0=$(now)
	"$P" run -q "${copt[@]}" -o "$W/c2" --report "$W/ca.json" -- "$T/criterion_suite" --filter "suite/$t" >/dev/null
	t1=$(now)
	ca_s=$(echo "$ca_s + $t1 - $t0" | bc)
	ca_r=$((ca_r + $(runs "$W/ca.json")))
done
t0=$(now)
"$P" run -q "${copt[@]}" -o "$W/c3" --report "$W/cw.json" -- "$T/criterion_suite" >/dev/null
t1=$(now)
cw_s=$(echo "$t1 - $t0" | bc); cw_r=$(runs "$W/cw.json"); cw_v=$(verdict "$W/cw.json")
printf '%-34s %9s %7s %-11s %8s\n' "Criterion, 3 tests (surw -n $CR)" "wall s" "runs" "verdict" "/ alone"
printf '%-34s %9.2f %7s %-11s %7.2fx\n' "per-test (ptloom run --per-test)" "$cp_s" "$cp_r" "$cp_v" "$(echo "$cp_s / $ca_s" | bc -l)"
printf '%-34s %9.2f %7s %-11s %7.2fx\n' "three tests explored alone, summed" "$ca_s" "$ca_r" "-" 1
printf '%-34s %9.2f %7s %-11s %7.2fx\n' "whole tree" "$cw_s" "$cw_r" "$cw_v" "$(echo "$cw_s / $ca_s" | bc -l)"
