#!/bin/sh
# Minimisation behind a test runner: a racy Criterion test (tests/targets/
# criterion_tests.c -DRACY) found by a surw sample with hundreds of
# preemptions, then minimised.  Goal: found and minimised within 120 s on
# the project's machines (2 CPUs), the summary saying whether the minimum
# is proven.  Prints wall time, the minimized: line and the summary for
# each ptloom given (e.g. a session-start binary and the current one).
#   bench/minimise.sh BUILD_DIR [PTLOOM...]
set -eu
build=${1:?usage: bench/minimise.sh BUILD_DIR [PTLOOM...]}
shift
[ $# -gt 0 ] || set -- "$build/ptloom"
prog=$build/tests/criterion_racy
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for p in "$@"; do
	t0=$(date +%s.%N)
	timeout 900 "$p" run --timeout 120 -s surw -n 20 --seed 1 \
		-o "$out/s" -- "$prog" >"$out/log" 2>&1 || true
	t1=$(date +%s.%N)
	printf '%s: %.0f s\n' "$p" "$(echo "$t1 - $t0" | bc)"
	grep -a -E '^(minimized:|ptloom:)' "$out/log" | sed 's/^/  /'
done
