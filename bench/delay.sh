#!/usr/bin/env bash
# Delay bounding (bench/SEARCH.md "Sixth step"): runs to complete delay
# bounds 0..DELAY_MAX on the correct examples (`--dfs-only --bound delay
# --seed 1 -n CAP -p B`; a count for bound B includes bounds 0..B-1), then
# for each bug program of bench/search.sh the runs to the first failure and
# the delay bound it was found at (`-p DELAY_MAX`, one exploration; dfs does
# not depend on the seed but for race discovery).  Prints Markdown tables;
# asserts nothing, and is not part of the test suite.
#
#   bench/delay.sh                 uses build/ (or $PTLOOM_BUILD)
#
# Knobs: PTLOOM (the binary; default $BUILD/ptloom, rebuilt), DELAY_CAP
# (10000 runs), DELAY_MAX (3), DELAY_PROGRAMS (names in build/examples),
# DELAY_BUGS (names as in bench/search.sh; "" skips them), DELAY_KIND
# (delay, or preemption for the same tables under preemption bounding).
set -u -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${PTLOOM_BUILD:-$ROOT/build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
CAP=${DELAY_CAP:-10000}
MAXB=${DELAY_MAX:-3}
KIND=${DELAY_KIND:-delay}
PROGRAMS=${DELAY_PROGRAMS-join_many rwlock mutex_condvar barrier}
# shellcheck source=bench/bugsuite.sh
. "$ROOT/bench/bugsuite.sh"
BUGS=${DELAY_BUGS-$BUG_SUITE}

die() { echo "delay: $*" >&2; exit 2; }
if [ -z "${PTLOOM:-}" ]; then
	PTLOOM=$BUILD/ptloom
	ninja -C "$BUILD" >/dev/null || die "build failed"
fi
BIN=$(mktemp -d /tmp/ptloom-delay.XXXXXX) || exit 2
trap 'rm -rf "$BIN"' EXIT

summary() {
	"$PTLOOM" run -q --dfs-only --bound "$KIND" --seed 1 -n "$CAP" \
		-o "$BIN/out" "$@" 2>&1 | tail -1
}

hdr="| program"
sep="|---"
for ((b = 0; b <= MAXB; b++)); do
	hdr="$hdr | $KIND bound $b"
	sep="$sep|---"
done
echo "$hdr |"
echo "$sep|"
for p in $PROGRAMS; do
	bin=$BUILD/examples/$p
	[ -x "$bin" ] || { echo "| $p | not built |"; continue; }
	line="| $p" stop=
	for ((b = 0; b <= MAXB; b++)); do
		if [ -n "$stop" ]; then
			line="$line | -"
			continue
		fi
		out=$(summary -p "$b" -- "$bin")
		case $out in
		*"PASS "*" run"*", complete"*)
			r=$(sed 's/.*PASS \([0-9]*\) run.*/\1/' <<<"$out") ;;
		*INCOMPLETE*) r=">$CAP" stop=1 ;;
		*FAIL*) r=FAIL stop=1 ;;
		*) r="? ($out)" stop=1 ;;
		esac
		line="$line | $r"
	done
	echo "$line |"
done

[ -n "$BUGS" ] || exit 0
bug_suite_build "$BIN"
echo
echo "| bug ($KIND bound $MAXB, cap $CAP) | runs to the first failure | summary |"
echo "|---|---|---|"
for b in $BUGS; do
	out=$(summary --no-minimize -p "$MAXB" --points "$(points_of "$b")" \
		-- "$BIN/$b")
	case $out in
	*FAIL*) r=$(sed 's/.* after \([0-9]*\) run.*/\1/' <<<"$out") ;;
	*) r=- ;;
	esac
	echo "| $b | $r | ${out#ptloom: } |"
done
