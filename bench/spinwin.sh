#!/usr/bin/env bash
# Spin windows side by side: each program's verdict, runs and wall time
# under two ptloom binaries, same options (`run -q --seed 1`, and `-p 1`
# for the spin-locked deque's correct twins, whose bound 2 is large).
# Asserts nothing; bench/SEARCH.md has the numbers.
#
#   bench/spinwin.sh [BUILD] [OTHER_PTLOOM]
#   bench/spinwin.sh build /work/base/build/ptloom
set -u -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${1:-$ROOT/build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
NEW=$BUILD/ptloom
OLD=${2:-}
T=$BUILD/tests
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 2

one() { # binary, options..., -- program
	local b=$1 s e out
	shift
	s=$(date +%s.%N)
	out=$(timeout 600 nice -n 5 "$b" run -q "$@" 2>&1 | tail -1)
	e=$(date +%s.%N)
	printf '%6.1f s  %s\n' "$(echo "$e - $s" | bc)" "${out:0:110}"
}

for p in spsc_stack_ring_O0 spsc_stack_ring_O2 spsc_stack_ring_racy_O0 \
	 spsc_stack_ring_racy_O2 spsc_linked_fifo_O0 spsc_linked_fifo_O2 \
	 spsc_linked_fifo_fixed_O0 spsc_linked_fifo_fixed_O2 \
	 wsq_spinlock_O0 wsq_spinlock_O2 wsq_spinlock_racy_O0 \
	 wsq_spinlock_racy_O2; do
	opts=(--seed 1)
	case $p in wsq_spinlock_O*) opts+=(-p 1) ;; esac
	echo "$p ${opts[*]}"
	[ -n "$OLD" ] && printf '  old %s\n' "$(one "$OLD" "${opts[@]}" -- "$T/$p")"
	printf '  new %s\n' "$(one "$NEW" "${opts[@]}" -- "$T/$p")"
done
