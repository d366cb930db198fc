#!/bin/bash
# Set up and build (scripts/setup.sh), then run the whole test suite:
# unit, integration and fuzz.  Extra arguments go to `meson test`, e.g.
#
#   bash scripts/test.sh                     # everything
#   bash scripts/test.sh --suite unit        # one suite
#
# Under CI (CI=true) or with PTLOOM_SANITIZE=1 it then builds ptloom once
# more with AddressSanitizer and UBSan and runs the unit tests and the
# lighter integration groups on that build (the dfs unit test's checks
# against brute force on 30 generated programs each, not 80).
#
# Exits non-zero when any of it failed.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${PTLOOM_BUILD:-build}
cd "$root"

bash scripts/setup.sh --tests || exit 1
meson test -C "$build" --print-errorlogs --num-processes 2 "$@"
status=$?

if [ "${CI:-}" = true ] || [ "${PTLOOM_SANITIZE:-}" = 1 ]; then
	san="$build-sanitize"
	echo
	echo "== ptloom built with -fsanitize=address,undefined"
	if [ ! -f "$san/build.ninja" ]; then
		# (not tests/real: none of its groups runs here)
		meson setup "$san" -Db_sanitize=address,undefined \
			-Db_lundef=false -Dreal_tests=false >/dev/null || exit 1
	fi
	ninja -C "$san" >/dev/null || exit 1
	ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	PTLOOM_TEST_SLOWDOWN=3 \
	PTLOOM_DFS_PROGRAMS=30 \
		meson test -C "$san" --print-errorlogs --num-processes 2 \
		--timeout-multiplier 3 \
		futex sched minimize schedule symbols disasm dfs races \
		sampling command_line replay schedule_files || status=1
fi
exit $status
