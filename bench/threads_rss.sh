#!/usr/bin/env bash
# The supervisor's memory per program thread: ptloom's peak RSS (VmHWM of
# its main process, from /usr/bin/time's "Maximum resident set size") for
# one run of tests/targets/threads_n with N threads alive at once, at the
# default bound 2 (every costly alternative queued for the next bound) and
# at bound 0, for N in THREADS_N; with BASE=path/to/old/ptloom, the same for
# that binary side by side, and the ratio.  Prints a Markdown table; asserts
# nothing (tests/integration/test_hardening.c bounds it for 400 threads).
#
#   bench/threads_rss.sh                     uses build/ (or $PTLOOM_BUILD)
#   BASE=/work/base/build/ptloom bench/threads_rss.sh
#
# Knobs: PTLOOM (the binary; default $BUILD/ptloom), THREADS_N ("100 400
# 1000"), TIMEOUT (per-run --timeout, 120).
set -u -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${PTLOOM_BUILD:-$ROOT/build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
NS=${THREADS_N:-100 400 1000}
TO=${TIMEOUT:-120}
BASE=${BASE:-}

die() { echo "threads_rss: $*" >&2; exit 2; }
if [ -z "${PTLOOM:-}" ]; then
	PTLOOM=$BUILD/ptloom
	ninja -C "$BUILD" >/dev/null || die "build failed"
fi
PROG=$BUILD/tests/threads_n
[ -x "$PROG" ] || die "$PROG is not built"
[ -x /usr/bin/time ] || die "needs /usr/bin/time (GNU time)"
TMP=$(mktemp -d /tmp/ptloom-rss.XXXXXX) || exit 2
trap 'rm -rf "$TMP"' EXIT

# peak RSS in KiB, wall seconds and the summary of one run of N threads
measure() {
	local bin=$1 n=$2 bound=$3 out
	out=$(cd "$TMP" && /usr/bin/time -f 'rss %M wall %e' "$bin" run -q \
		--seed 1 -n 1 -p "$bound" --timeout "$TO" -o "$TMP/out" -- \
		"$PROG" "$n" 2>&1)
	local rss wall verdict
	rss=$(echo "$out" | sed -n 's/^rss \([0-9]*\) wall.*/\1/p' | tail -1)
	wall=$(echo "$out" | sed -n 's/^rss [0-9]* wall \(.*\)/\1/p' | tail -1)
	verdict=$(echo "$out" | grep '^ptloom:' | tail -1 | cut -d' ' -f2)
	echo "${rss:-?} ${wall:-?} ${verdict:-?}"
}

mb() { [ "$1" = "?" ] && echo "?" || awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

printf '| threads | bound | peak RSS (MB) | KB per thread | s | verdict |'
[ -n "$BASE" ] && printf ' base RSS (MB) | base s | base verdict | base/ours |'
printf '\n|---|---|---|---|---|---|'
[ -n "$BASE" ] && printf '%s' '---|---|---|---|'
printf '\n'
for n in $NS; do
	for b in 2 0; do
		read -r rss wall v < <(measure "$PTLOOM" "$n" "$b")
		per=?
		[ "$rss" != "?" ] && per=$((rss / n))
		printf '| %s | %s | %s | %s | %s | %s |' "$n" "$b" \
			"$(mb "$rss")" "$per" "$wall" "$v"
		if [ -n "$BASE" ]; then
			read -r brss bwall bv < <(measure "$BASE" "$n" "$b")
			ratio=?
			[ "$rss" != "?" ] && [ "$brss" != "?" ] &&
				ratio=$(awk -v a="$brss" -v b="$rss" \
					'BEGIN { printf "%.1fx", a / b }')
			printf ' %s | %s | %s | %s |' "$(mb "$brss")" "$bwall" \
				"$bv" "$ratio"
		fi
		printf '\n'
	done
done
