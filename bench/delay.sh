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
BUGS=${DELAY_BUGS-alt3 alt4 alt5 alt6 safestack spsc lost8 order8 overbook16 ring3 ring4}

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
cc() { gcc -O0 -g -pthread -Wall -o "$BIN/$1" "${@:2}" || die "cannot build $1"; }
for k in 3 4 5 6; do cc alt$k -DK=$k "$ROOT/tests/targets/alternation.c"; done
cc safestack "$ROOT/bench/bugs/safestack.c"
cc spsc "$ROOT/tests/targets/spsc_ring.c"
cc lost8 "$ROOT/tests/targets/lost_update_8.c"
cc order8 "$ROOT/bench/bugs/order8.c"
cc overbook16 "$ROOT/bench/bugs/overbook16.c"
cc ring3 "$ROOT/bench/bugs/ring_deadlock.c"
cc ring4 -DNLOCKS=4 "$ROOT/bench/bugs/ring_deadlock.c"
points_of() {
	case $1 in
	safestack) echo sync,atomics ;;
	spsc) echo sync,races ;;
	*) echo sync ;;
	esac
}
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
