#!/usr/bin/env bash
# What the verdict's coverage says as the runs grow: for each program, the
# conflicting pairs seen and how many in both orders after N runs of the
# default search (`--seed 1 -n N`), one exploration per N.  Asserts
# nothing; bench/SEARCH.md has the numbers.
#
#   bench/coverage.sh                       # all programs, N = 20 100 500
#   COV_RUNS="20 100" COV_ONLY="pigz py" bench/coverage.sh
set -u -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${PTLOOM_BUILD:-$ROOT/build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
PT=$BUILD/ptloom
RUNS=${COV_RUNS:-20 100 500}
ONLY=${COV_ONLY:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 2
head -c 200000 /dev/urandom | od -An -tx1 > in.txt

# 1,000 threads, each adding to one sum under a mutex
cat > thousand.c <<'C'
#include <pthread.h>
#include <stdio.h>
#define N 1000
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long sum;
static void *work(void *a) { pthread_mutex_lock(&m); sum += (long)a; pthread_mutex_unlock(&m); return NULL; }
int main(void) {
	pthread_t t[N];
	for (long i = 0; i < N; i++) pthread_create(&t[i], NULL, work, (void *)i);
	for (int i = 0; i < N; i++) pthread_join(t[i], NULL);
	printf("%ld\n", sum);
	return 0;
}
C
gcc -O2 -pthread -o thousand thousand.c
progs=("pigz|pigz -p 4 -c in.txt"
       "py|/usr/bin/python3 $ROOT/bench/py_threads.py"
       "thousand|./thousand"
       "mutex_condvar|$BUILD/examples/mutex_condvar"
       "rwlock|$BUILD/examples/rwlock")
if command -v rustc >/dev/null &&
	rustc -O -o rs_threads "$ROOT/bench/rs_threads.rs" 2>/dev/null; then
	progs+=("rust|./rs_threads")
fi
if command -v go >/dev/null &&
	GOCACHE=$tmp/gocache GOPATH=$tmp/gopath go build -o go_wg \
		"$ROOT/tests/real/go_wg.go" >/dev/null 2>&1; then
	progs+=("go|./go_wg")	# built first: `go run` would trace the toolchain
fi
printf '%-14s %6s  %-12s  %s\n' program runs verdict "pairs in both orders / seen"
for p in "${progs[@]}"; do
	name=${p%%|*}
	cmd=${p#*|}
	[ -n "$ONLY" ] && [[ " $ONLY " != *" $name "* ]] && continue
	for n in $RUNS; do
		rm -f r.json
		# shellcheck disable=SC2086
		"$PT" run -q --seed 1 -n "$n" --report r.json -- $cmd \
			>/dev/null 2>&1
		v=$(grep -o '"verdict": "[a-z]*"' r.json | head -1 | cut -d'"' -f4)
		r=$(grep -o '"runs": [0-9]*' r.json | head -1 | grep -o '[0-9]*')
		pairs=$(grep -o '"pairs": [0-9]*' r.json | grep -o '[0-9]*')
		cov=$(grep -o '"covered": [0-9]*' r.json | grep -o '[0-9]*')
		printf '%-14s %6s  %-12s  %s / %s\n' "$name" "$r" "$v" "$cov" \
			"$pairs"
	done
done
