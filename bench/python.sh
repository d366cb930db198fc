#!/usr/bin/env bash
# Python programs under ptloom: schedules/s and time to first failure, in
# Python mode (GIL hand-offs at eval-breaker checks, docs/python.md) and,
# for comparison, with C-level points only (PTLOOM_PYTHON=off).  Prints
# numbers and ratios; asserts nothing.  Not part of the test suite.
#
#   bench/python.sh              uses build/ (or $PTLOOM_BUILD)
#   BENCH_PY_CLEVEL=0 bench/python.sh    skip the slow C-level rows
#   BENCH_PY_VERSIONS_ONLY=1 bench/python.sh   section 4 only (per version)
set -u -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${PTLOOM_BUILD:-$ROOT/build}
PY=${BENCH_PYTHON:-/usr/bin/python3}
EX=$ROOT/examples/python
CLEVEL=${BENCH_PY_CLEVEL:-1}
PT=$BUILD/ptloom
[ -x "$PY" ] || { echo "bench: no $PY: nothing to measure"; exit 0; }
[ -x "$PT" ] || ninja -C "$BUILD" ptloom >/dev/null || exit 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

now() { date +%s.%N; }

# native: seconds per execution (mean of N)
native() {
	local n=${2:-20} t0 t1
	t0=$(now)
	for ((i = 0; i < n; i++)); do "$PY" "$1" >/dev/null 2>&1; done
	t1=$(now)
	echo "($t1 - $t0) / $n" | bc -l
}

row() { # name mode command...
	local name=$1 mode=$2
	shift 2
	local t0 t1 s
	t0=$(now)
	s=$(cd "$tmp" && env "$@" 2>/dev/null | grep '^ptloom: ' | tail -1)
	t1=$(now)
	printf '%-16s %-7s %6.1f s  %s\n' "$name" "$mode" \
		"$(echo "$t1 - $t0" | bc -l)" "$s"
}

echo "python.sh: $($PY -V 2>&1), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "${BENCH_PY_VERSIONS_ONLY:-0}" != 1 ]; then
echo
echo "1. Per-execution cost (random strategy, 30 runs, --seed 1)"
printf '%-16s %10s %10s %8s %8s\n' program native_ms run_ms ratio runs/s
for p in bank_fixed.py queue_pc.py lost_update.py; do
	nat=$(native "$EX/$p")
	st=$(cd "$tmp" && PTLOOM_STATS=1 "$PT" run -s random -n 30 --seed 1 \
		-- "$PY" "$EX/$p" 2>&1 >/dev/null | grep 'runs/s' | tail -1)
	secs=$(echo "$st" | awk '{print $6}')
	rps=$(echo "$st" | awk '{print $8}')
	run_ms=$(echo "$secs * 1000 / 30" | bc -l)
	printf '%-16s %10.1f %10.1f %8.1f %8s\n' "$p" \
		"$(echo "$nat * 1000" | bc -l)" "$run_ms" \
		"$(echo "$run_ms / ($nat * 1000)" | bc -l)" "$rps"
done
echo
echo "2. Time to first failure and to a complete search (default options)"
for p in bank.py lost_update.py bank_fixed.py barrier.py; do
	row "$p" python "$PT" run --seed 1 -q -- "$PY" "$EX/$p"
done
row "pytest bank" python "$PT" run --seed 1 -q --no-minimize -- "$PY" -m \
	pytest -q -p no:cacheprovider "$EX/tests/test_bank.py"
if [ "$CLEVEL" = 1 ]; then
	echo
	echo "3. The same with C-level points only (PTLOOM_PYTHON=off, as before)"
	row bank.py c-level PTLOOM_PYTHON=off "$PT" run --seed 1 -q -p 5 \
		--max-runs 400 --no-minimize -- "$PY" "$EX/bank.py"
	row bank_fixed.py c-level PTLOOM_PYTHON=off "$PT" run --seed 1 -q \
		--max-runs 100 -- "$PY" "$EX/bank_fixed.py"
fi
fi
echo
echo "4. Per CPython version: Debian's python3 and pyenv's newest 3.12, 3.13"
echo "   (bank race found and its twin complete, default options; py_threads.py"
echo "   schedules/s, random strategy, 100 runs)"
pyenv_root=${PYENV_ROOT:-$HOME/.pyenv}
[ -d "$pyenv_root" ] || pyenv_root=/root/.pyenv
versions=(/usr/bin/python3)
for v in 3.12 3.13; do
	best=$(ls -d "$pyenv_root"/versions/$v.* 2>/dev/null |
		grep -E "/$v\.[0-9]+$" | sort -t. -k3 -n | tail -1)
	if [ -n "$best" ] && [ -x "$best/bin/python$v" ]; then
		versions+=("$best/bin/python$v")
	else
		echo "   CPython $v: not installed under $pyenv_root, skipped"
	fi
done
for py in "${versions[@]}"; do
	ver=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	row "bank.py" "$ver" "$PT" run --seed 1 -q -- "$py" "$EX/bank.py"
	row "bank_fixed.py" "$ver" "$PT" run --seed 1 -q -- "$py" "$EX/bank_fixed.py"
	st=$(cd "$tmp" && PTLOOM_STATS=1 "$PT" run -s random -n 100 --seed 1 \
		-- "$py" "$ROOT/bench/py_threads.py" 2>&1 >/dev/null |
		grep 'runs/s' | tail -1)
	printf '%-16s %-7s %s schedules/s\n' "py_threads.py" "$ver" \
		"$(echo "$st" | awk '{for (i = 2; i <= NF; i++)
			if ($i == "runs/s,") print $(i - 1)}')"
done
