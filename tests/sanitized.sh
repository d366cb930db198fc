#!/bin/bash
# One unit test, or one integration group, against the ptloom of a second
# build made with -fsanitize=address,undefined (meson test 'sanitize-*').
#
#   tests/sanitized.sh unit NAME
#   tests/sanitized.sh integration GROUP TEST_CLI
#
# scripts/test.sh makes that build under CI (or with PTLOOM_SANITIZE=1)
# and names its directory in $PTLOOM_SANITIZED; without it we skip (77).
# The unit test is the sanitized build's own (it links the sanitized
# library); an integration group is this build's test_cli with $PTLOOM and
# $PTLOOM_SCHEDTOOL taken from the sanitized build: its targets and
# examples are built without sanitizers in both builds, so this build's
# serve.  The dfs unit test checks 12 generated programs each, not 80;
# replay repeats less (PTLOOM_TEST_SANITIZED; sampling too, when run).
set -euo pipefail

san=${PTLOOM_SANITIZED:-}
if [ -z "$san" ]; then
	echo "no sanitizer build: scripts/test.sh makes one under CI=true" \
		"or PTLOOM_SANITIZE=1 (PTLOOM_SANITIZED names it)"
	exit 77
fi
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# ptloom runs several times slower under ASan: the tests' own limits grow
export PTLOOM_TEST_SLOWDOWN=3
export PTLOOM_DFS_PROGRAMS=12
# repeat less where the normal run repeats (tests/integration/common.h
# sanitized_run(): sampling's correct programs with one seed, not three;
# replay's failures replayed 4 times, not 20)
export PTLOOM_TEST_SANITIZED=1

case $1 in
unit)
	exec "$san/tests/test_$2"
	;;
integration)
	export PTLOOM=$san/ptloom PTLOOM_SCHEDTOOL=$san/tests/schedtool
	echo "ptloom: $PTLOOM (-fsanitize=address,undefined)"
	exec "$3" --filter "$2/*"
	;;
esac
echo "usage: $0 unit NAME | integration GROUP TEST_CLI" >&2
exit 2
