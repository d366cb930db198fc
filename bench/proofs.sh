#!/usr/bin/env bash
# The correct programs whose bound-2 proof did not finish with default
# options (issue 26, bench/SEARCH.md "Eighth step"): for each, the default
# search (`run --seed 1`, the hybrid, 10,000 runs) and the runs dfs alone
# needs per bound (`--dfs-only -p B --seed 1 -n CAP`; a bound not exhausted
# stops the row).  Two binaries side by side in one invocation: BASE and
# NEW (copies, so that a rebuild does not change them).  Prints Markdown;
# asserts nothing, not part of the test suite.
#
#   PROOFS_BASE=/work/base/build/ptloom bench/proofs.sh
#
# Knobs: PROOFS_BASE (default: none, NEW only), PROOFS_NEW (default
# build/ptloom), PROOFS_CAP (10000), PROOFS_PROGRAMS (tests/targets names,
# plus rwlock = examples/rwlock), PROOFS_BOUNDS ("0 1 2"),
# PROOFS_DEFAULT=0 skips the default-options column.
set -u -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${PTLOOM_BUILD:-$ROOT/build}
CAP=${PROOFS_CAP:-10000}
BOUNDS=${PROOFS_BOUNDS-0 1 2}
PROGRAMS=${PROOFS_PROGRAMS-stateful_counter cond_if_ready rwlock join_in_turn gated_philosophers indexer fs_blocks}
CC=${CC:-cc}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

ninja -C "$BUILD" >/dev/null || { echo "proofs: build failed" >&2; exit 2; }
cp "${PROOFS_NEW:-$BUILD/ptloom}" "$work/new"
bins=new
if [ -n "${PROOFS_BASE:-}" ]; then
	cp "$PROOFS_BASE" "$work/base"
	bins="base new"
fi
for p in $PROGRAMS; do
	src=$ROOT/tests/targets/$p.c
	[ "$p" = rwlock ] && src=$ROOT/examples/rwlock.c
	$CC -O0 -g -pthread -o "$work/$p" "$src" || exit 2
done

verdict() { # the summary up to its first ';'
	grep -E '^ptloom: (PASS|FAIL|INCOMPLETE)' | tail -1 | cut -d';' -f1 |
		sed 's/^ptloom: //'
}

echo "| program | binary | default options | $(for b in $BOUNDS; do printf 'dfs bound %s | ' "$b"; done)"
echo "|---|---|---|$(for b in $BOUNDS; do printf -- '---|'; done)"
for p in $PROGRAMS; do
	for b in $bins; do
		def=-
		if [ "${PROOFS_DEFAULT:-1}" != 0 ]; then
			def=$(nice -n 5 "$work/$b" run -o "$work/out" --seed 1 \
				-- "$work/$p" 2>&1 | verdict)
		fi
		row="| $p | $b | $def |"
		stop=
		for B in $BOUNDS; do
			if [ -n "$stop" ]; then
				row="$row - |"
				continue
			fi
			out=$(nice -n 5 "$work/$b" run -o "$work/out" --dfs-only \
				-p "$B" --seed 1 -n "$CAP" -- "$work/$p" 2>&1 |
				verdict)
			case $out in
			PASS*complete*)
				n=${out#PASS }
				row="$row ${n%% runs*} |" ;;
			*)	row="$row >$CAP |"
				stop=1 ;;
			esac
		done
		echo "$row"
	done
done
