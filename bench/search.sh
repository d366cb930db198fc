#!/usr/bin/env bash
# Search benchmarks (bench/SEARCH.md): for each bug program of bench/bugs/
# (and a few targets) and each strategy, the schedules (runs) to the first
# failure, median over seeds; then the runs dfs needs to complete bound 2 on
# the correct examples, with and without reduction.  Asserts nothing.
#
#   bench/search.sh                  uses build/ (or $PTLOOM_BUILD)
#
# Knobs: SEARCH_SEEDS (20), SEARCH_CAP (1000 runs per exploration),
# SEARCH_BUGS (names, see bench/bugsuite.sh), SEARCH_STRATEGIES, SEARCH_PROOF_CAP
# (10000), SEARCH_SKIP_PROOFS=1, SEARCH_DFS_SEEDS (3: dfs does not
# depend on the seed but for race discovery).
# A median needs 11 of 20 seeds: once 11 seeds miss within the cap, the
# median is "> cap" and the remaining seeds are skipped.
set -u -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${PTLOOM_BUILD:-$ROOT/build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
SEEDS=${SEARCH_SEEDS:-20}
CAP=${SEARCH_CAP:-1000}
PROOF_CAP=${SEARCH_PROOF_CAP:-10000}
STRATEGIES=${SEARCH_STRATEGIES:-dfs-only hybrid hybrid:pct random pct pos surw rr cov}
# SEARCH_PTLOOM: a ptloom binary to measure instead of $BUILD's (a copy,
# so that rebuilding during a long measurement changes nothing)
PTLOOM=${SEARCH_PTLOOM:-$BUILD/ptloom}
BIN=$(mktemp -d /tmp/ptloom-search.XXXXXX)
trap 'rm -rf "$BIN"' EXIT

die() { echo "search: $*" >&2; exit 2; }
[ -n "${SEARCH_PTLOOM:-}" ] || ninja -C "$BUILD" ptloom >/dev/null ||
	die "build failed"
# shellcheck source=bench/bugsuite.sh
. "$ROOT/bench/bugsuite.sh"
BUGS=${SEARCH_BUGS:-$BUG_SUITE}
bug_suite_build "$BIN"

opts_of() {
	case $1 in
	dfs-only) echo "--dfs-only" ;;
	hybrid) echo "" ;;
	hybrid:*) echo "--hybrid-mix ${1#hybrid:}" ;;
	*) echo "-s $1" ;;
	esac
}

# runs to the first failure of one exploration, or "-" (none within CAP)
first_failure() {
	local prog=$1 strat=$2 seed=$3 rep="$BIN/r.json"

	rm -f "$rep"
	# shellcheck disable=SC2046
	"$PTLOOM" run -q --no-minimize --seed "$seed" -n "$CAP" \
		--points "$(points_of "$prog")" $(opts_of "$strat") \
		-o "$BIN/out" --report "$rep" --report-format json \
		-- "$BIN/$prog" >/dev/null 2>&1
	if grep -q '"verdict": "fail"' "$rep" 2>/dev/null; then
		grep -o '"runs": [0-9]*' "$rep" | head -1 | grep -o '[0-9]*'
	else
		echo -
	fi
}

median() { # values (numbers or -), count $#; "-" sorts last
	printf '%s\n' "$@" | sed "s/^-$/999999999/" | sort -n |
		awk -v n="$#" -v cap="$CAP" '{ v[NR] = $1 }
		END { a = v[int((n + 1) / 2)]; b = v[int(n / 2) + 1];
		      if (a >= 999999999 || b >= 999999999) print ">" cap;
		      else printf "%g\n", (a + b) / 2 }'
}

echo "# schedules to first failure (median of $SEEDS seeds, cap $CAP runs;" \
	"found/seeds in brackets)"
printf '| bug |'
for s in $STRATEGIES; do printf ' %s |' "$s"; done
printf '\n|---|'
for s in $STRATEGIES; do printf -- '---|'; done
echo
for b in $BUGS; do
	printf '| %s |' "$b"
	for s in $STRATEGIES; do
		vals=() miss=0 found=0 n=$SEEDS
		# dfs's schedules do not depend on the seed (only race
		# discovery and the program's randomness do): fewer seeds
		[ "$s" = dfs-only ] && n=${SEARCH_DFS_SEEDS:-3}
		for seed in $(seq 1 "$n"); do
			if [ $miss -gt $((n / 2)) ]; then
				vals+=(-)
				continue
			fi
			v=$(first_failure "$b" "$s" "$seed")
			vals+=("$v")
			if [ "$v" = - ]; then miss=$((miss + 1)); else found=$((found + 1)); fi
		done
		m=$(SEEDS=$n median "${vals[@]}")
		if [ $miss -gt $((n / 2)) ]; then
			printf ' %s (%d/%d+) |' "$m" "$found" "$((found + miss))"
		else
			printf ' %s (%d/%d) |' "$m" "$found" "$n"
		fi
	done
	echo
done

[ "${SEARCH_SKIP_PROOFS:-0}" = 1 ] && exit 0
echo
echo "# runs to complete bound 2 (dfs-only, seed 1, cap $PROOF_CAP)"
echo "| program | no reduction | sleep sets |"
echo "|---|---|---|"
for p in bank_fixed deadlock_fixed mutex_condvar barrier rwlock join_many \
	lost_wakeup_fixed semaphore; do
	printf '| %s |' "$p"
	for red in --no-reduction ""; do
		rep="$BIN/p.json"
		rm -f "$rep"
		# shellcheck disable=SC2086
		"$PTLOOM" run -q --dfs-only $red --seed 1 -n "$PROOF_CAP" \
			-o "$BIN/out" --report "$rep" --report-format json \
			-- "$BUILD/examples/$p" >/dev/null 2>&1
		runs=$(grep -o '"runs": [0-9]*' "$rep" | head -1 | grep -o '[0-9]*')
		v=$(grep -o '"verdict": "[a-z]*"' "$rep" | cut -d'"' -f4)
		if [ "$v" = pass ]; then printf ' %s |' "$runs"; else printf ' %s (%s) |' "$runs" "$v"; fi
	done
	echo
done
