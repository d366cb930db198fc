# The bug suite of bench/SEARCH.md, shared by bench/search.sh and
# bench/delay.sh (sourced, not run): bug_suite_build DIR builds every
# program into DIR (die must be defined); points_of NAME says which
# scheduling points its search needs.
# shellcheck shell=bash

BUG_SUITE="alt3 alt4 alt5 alt6 alt10 safestack spsc lost8 order8 overbook16 ring3 ring4"

bug_suite_build() {
	local dir=$1 root
	root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	cc() { gcc -O0 -g -pthread -Wall -o "$dir/$1" "${@:2}" ||
		die "cannot build $1"; }
	for k in 3 4 5 6 10; do
		cc alt$k -DK=$k "$root/tests/targets/alternation.c"
	done
	cc safestack "$root/bench/bugs/safestack.c"
	cc spsc "$root/tests/targets/spsc_ring.c"
	cc lost8 "$root/tests/targets/lost_update_8.c"
	cc order8 "$root/bench/bugs/order8.c"
	cc overbook16 "$root/bench/bugs/overbook16.c"
	cc ring3 "$root/bench/bugs/ring_deadlock.c"
	cc ring4 -DNLOCKS=4 "$root/bench/bugs/ring_deadlock.c"
}

points_of() {
	case $1 in
	safestack) echo sync,atomics ;;
	spsc) echo sync,races ;;
	*) echo sync ;; # lock-based: race discovery would find nothing
	esac
}
