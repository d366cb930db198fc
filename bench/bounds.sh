#!/usr/bin/env bash
# Runs to complete each preemption bound (bench/SEARCH.md "Bound by bound"):
# `--dfs-only --seed 1 -n CAP -p B` for B = 0, 1, 2 under the default
# reduction (sleep sets + state cache) and under DPOR, for the correct
# examples, then join_many with N threads (examples/join_many.c with
# NTHREADS changed, compiled like the examples).  A bound that is not
# exhausted stops that row (">CAP").  Prints Markdown tables; asserts
# nothing, and is not part of the test suite.
#
#   bench/bounds.sh                uses build/ (or $PTLOOM_BUILD)
#
# Knobs: PTLOOM (the binary; default $BUILD/ptloom, rebuilt), BOUNDS_CAP (10000 runs), BOUNDS_PROGRAMS (names in build/examples),
# BOUNDS_THREADS (join_many thread counts; "" skips them), BOUNDS_MAX (2).
set -u -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${PTLOOM_BUILD:-$ROOT/build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
CAP=${BOUNDS_CAP:-10000}
MAXB=${BOUNDS_MAX:-2}
PROGRAMS=${BOUNDS_PROGRAMS-mutex_condvar barrier rwlock join_many}
THREADS=${BOUNDS_THREADS-2 3 4 5 6 8}
CC=${CC:-cc}

if [ -n "${PTLOOM:-}" ]; then
	: # a given binary (a copy, so that a rebuild does not change it)
else
	PTLOOM=$BUILD/ptloom
	ninja -C "$BUILD" >/dev/null || { echo "bounds: build failed" >&2; exit 2; }
fi
TMP=$(mktemp -d) || exit 2
trap 'rm -rf "$TMP"' EXIT

# the summary's runs, ">CAP" when incomplete, or the verdict
runs() {
	local out
	out=$("$PTLOOM" run -q --dfs-only --seed 1 -n "$CAP" "$@" 2>&1 | tail -1)
	case $out in
	*"PASS "*" runs, complete"*) sed 's/.*PASS \([0-9]*\) runs.*/\1/' <<<"$out" ;;
	*INCOMPLETE*) echo ">$CAP" ;;
	*FAIL*) echo "FAIL" ;;
	*) echo "? ($out)" ;;
	esac
}

# one row: bounds 0..MAXB under one reduction, stopping at the first
# bound not exhausted
row() {
	local bin=$1 red=$2 b cells="" r stop=
	for ((b = 0; b <= MAXB; b++)); do
		if [ -n "$stop" ]; then
			cells="$cells | -"
			continue
		fi
		r=$(runs -p "$b" $red -- "$bin")
		cells="$cells | $r"
		case $r in [0-9]*) ;; *) stop=1 ;; esac
	done
	echo "$cells"
}

hdr="| program | reduction"
sep="|---|---"
for ((b = 0; b <= MAXB; b++)); do
	hdr="$hdr | bound $b"
	sep="$sep|---"
done
echo "$hdr |"
echo "$sep|"
for p in $PROGRAMS; do
	bin=$BUILD/examples/$p
	[ -x "$bin" ] || { echo "| $p | not built |"; continue; }
	echo "| $p | sleep sets + state cache$(row "$bin" "--reduction sleep") |"
	echo "| $p | DPOR$(row "$bin" "--reduction dpor") |"
done

[ -n "$THREADS" ] || exit 0
echo
echo "$hdr |" | sed 's/| program/| join_many threads/'
echo "$sep|"
for n in $THREADS; do
	src=$TMP/join_many_$n.c
	sed "s/^#define NTHREADS 16$/#define NTHREADS $n/" \
		"$ROOT/examples/join_many.c" >"$src"
	"$CC" -std=c17 -O0 -g -pthread -o "$TMP/join_many_$n" "$src" ||
		{ echo "| $n | did not compile |"; continue; }
	echo "| $n | sleep sets + state cache$(row "$TMP/join_many_$n" "--reduction sleep") |"
done
