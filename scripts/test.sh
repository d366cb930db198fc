#!/bin/bash
# Set up and build (scripts/setup.sh), then run the whole test suite:
# unit, integration and fuzz.  Extra arguments go to `meson test`, e.g.
#
#   bash scripts/test.sh                     # everything
#   bash scripts/test.sh --suite unit        # one suite
#
# Under CI (CI=true) or with PTLOOM_SANITIZE=1 it first builds ptloom once
# more with AddressSanitizer and UBSan, in $build-sanitize (only ptloom,
# the unit tests and schedtool: the targets are this build's), and the
# same run of `meson test` then runs the unit tests and the lighter
# integration groups on that build too (suite 'sanitize',
# tests/sanitized.sh; the dfs unit test's checks against brute force on
# 12 generated programs each, not 80, and replay repeating less:
# PTLOOM_TEST_SANITIZED): one run, so that the two CPUs share them
# with the rest to the end.
#
# Exits non-zero when any of it failed.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${PTLOOM_BUILD:-build}
cd "$root"

bash scripts/setup.sh --tests || exit 1

if [ "${CI:-}" = true ] || [ "${PTLOOM_SANITIZE:-}" = 1 ]; then
	san="$build-sanitize"
	echo "== ptloom built with -fsanitize=address,undefined in $san"
	if [ ! -f "$san/build.ninja" ]; then
		# (not tests/real: none of its groups runs there)
		meson setup "$san" -Db_sanitize=address,undefined \
			-Db_lundef=false -Dreal_tests=false >/dev/null || exit 1
	fi
	# what tests/sanitized.sh runs from it (meson test's 'sanitize-*')
	ninja -C "$san" ptloom tests/schedtool tests/test_futex \
		tests/test_sched tests/test_minimize tests/test_schedule \
		tests/test_symbols tests/test_disasm tests/test_dfs \
		tests/test_races tests/test_samplers tests/test_coverage \
		tests/test_emul tests/test_trampolines >/dev/null || exit 1
	case $san in
	/*) export PTLOOM_SANITIZED=$san ;;
	*) export PTLOOM_SANITIZED=$root/$san ;;
	esac
fi

meson test -C "$build" --print-errorlogs --num-processes 2 "$@"
