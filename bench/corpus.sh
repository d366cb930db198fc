#!/usr/bin/env bash
# Corpus-class benchmark (bench/CORPUS.md): each bug program of bench/bugs/
# built at -O0 and -O2, explored with default options (`ptloom run`, only
# --seed and a run cap added), over a few seeds: the runs to the first
# failure, the minimised preemptions, and whether the printed replay
# reproduces the failure exactly.  Then the -DFIXED variants, which must
# never FAIL.  Asserts nothing; prints one line per exploration.
#
#   bench/corpus.sh                  uses build/ (or $PTLOOM_BUILD)
#
# Knobs: CORPUS_SEEDS ("1 2 3"), CORPUS_CAP (2000 runs), CORPUS_BUGS
# (names, default every bench/bugs/*.c), CORPUS_OPT ("0 2"),
# CORPUS_FIXED (1: also run the -DFIXED variants), CORPUS_CC (gcc; e.g.
# "clang"), CORPUS_CFLAGS (-g; e.g. "-s" for stripped binaries or
# "-g -static"), CORPUS_ARGS (extra
# ptloom options, e.g. "-s random --no-minimize"), CORPUS_REPLAY (1: replay
# each failure's printed command).
set -u -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${PTLOOM_BUILD:-$ROOT/build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
SEEDS=${CORPUS_SEEDS:-1 2 3}
CAP=${CORPUS_CAP:-2000}
OPTS=${CORPUS_OPT:-0 2}
FIXED=${CORPUS_FIXED:-1}
ARGS=${CORPUS_ARGS:-}
REPLAY=${CORPUS_REPLAY:-1}
CC=${CORPUS_CC:-gcc}
CFLAGS=${CORPUS_CFLAGS:--g}
PTLOOM=$BUILD/ptloom
BIN=$(mktemp -d /tmp/ptloom-corpus.XXXXXX)
trap 'rm -rf "$BIN"' EXIT

die() { echo "corpus: $*" >&2; exit 2; }
ninja -C "$BUILD" ptloom >/dev/null || die "build failed"
if [ -n "${CORPUS_BUGS:-}" ]; then
	BUGS=$CORPUS_BUGS
else
	BUGS=$(cd "$ROOT/bench/bugs" && ls ./*.c | sed 's|^\./||; s|\.c$||')
fi

field() { # json file, key: the first number or string value of "key"
	sed -n "s/^ *\"$2\": \"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}$/\1/p" "$1" |
		head -1
}

explore() { # name binary seed
	local name=$1 bin=$2 seed=$3 rep="$BIN/r.json" out verdict runs pre by rp
	rm -rf "$rep" "$BIN/out"
	# shellcheck disable=SC2086
	out=$(cd "$BIN" && "$PTLOOM" run --seed "$seed" -n "$CAP" $ARGS \
		-o "$BIN/out" --report "$rep" -- "$bin" 2>&1)
	verdict=$(field "$rep" verdict)
	runs=$(field "$rep" runs)
	pre=$(sed -n 's/^ *"preemptions": \([0-9]*\),$/\1/p' "$rep" | head -1)
	by=$(echo "$out" | tail -1 | grep -o "found by an* [a-z]*" |
		sed "s/found by an* //")
	rp=-
	if [ "$verdict" = fail ] && [ "$REPLAY" = 1 ]; then
		local cmd
		cmd=$(echo "$out" | sed -n 's/^replay: ptloom replay \([^ ]*\) .*/\1/p')
		(cd "$BIN" && "$PTLOOM" replay -q "$cmd" -- "$bin") \
			>"$BIN/replay.txt" 2>&1
		if grep -q 'replay exact' "$BIN/replay.txt"; then
			rp=exact
		else
			rp=NOT
		fi
	fi
	printf '%-22s seed %-2s %-10s runs %-5s preempt %-3s replay %-5s %s\n' \
		"$name" "$seed" "${verdict:-?}" "${runs:-?}" "${pre:--}" "$rp" \
		"${by:-dfs}"
}

for b in $BUGS; do
	for o in $OPTS; do
		# shellcheck disable=SC2086
		$CC -O"$o" $CFLAGS -pthread -o "$BIN/$b.O$o" "$ROOT/bench/bugs/$b.c" ||
			die "cannot build $b"
		for s in $SEEDS; do explore "$b -O$o" "$BIN/$b.O$o" "$s"; done
		[ "$FIXED" = 1 ] || continue
		grep -q FIXED "$ROOT/bench/bugs/$b.c" || continue
		# shellcheck disable=SC2086
		$CC -O"$o" $CFLAGS -pthread -DFIXED -o "$BIN/$b.fixed.O$o" \
			"$ROOT/bench/bugs/$b.c" || die "cannot build $b -DFIXED"
		explore "$b.fixed -O$o" "$BIN/$b.fixed.O$o" 1
	done
done
