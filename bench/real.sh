#!/usr/bin/env bash
# Real programs under ptloom (issue 8), side by side: native time (best of
# 3), ptloom's seconds per run with the default points (sync,races) and
# with --points sync, the verdicts of dfs, random and pct (--seed $SEED,
# -n $RUNS each, default points), the longest single run (of all four
# explorations; --timeout is 10 s), and whether
# every run's output was the native run's, byte for byte.  Then the
# syscalls still fenced with `unsupported:` (grepped from tracer/).
# Prints Markdown; asserts nothing.  Not part of the test suite; a few
# minutes on 2 CPUs.
#
#   bench/real.sh                      uses build/ (or $PTLOOM_BUILD)
#   REAL_RUNS=5 REAL_SEED=1 REAL_ONLY="pigz zstd" bench/real.sh
#
# The tools are those of tests/real (scripts/setup.sh installs them) on
# the same inputs; a missing one is a row saying so.  go_wg is built when
# `go` is installed.
set -u -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${PTLOOM_BUILD:-$ROOT/build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
PT=$BUILD/ptloom
REAL=$BUILD/tests/real
RUNS=${REAL_RUNS:-5}
SEED=${REAL_SEED:-1}
ONLY=${REAL_ONLY:-}
PY=/usr/bin/python3
[ -x "$PT" ] || { echo "bench: build ptloom first ($PT)"; exit 2; }
[ -x "$PY" ] || { echo "bench: needs $PY"; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# the inputs of tests/real/test_real.c:make_input()
"$PY" - "$tmp" <<'EOF'
import sys
def make(path, lines):
    x = 88172645463325252
    m = (1 << 64) - 1
    with open(path, "w") as f:
        for i in range(lines):
            x ^= (x << 13) & m
            x ^= x >> 7
            x ^= (x << 17) & m
            if lines > 100000:
                f.write("%d\n" % (x % 100000))
            else:
                f.write("%d line %d %s\n" % (x % 100000, i,
                        "alpha beta" if x & 3 else "gamma"))
make(sys.argv[1] + "/in.txt", 8000)
make(sys.argv[1] + "/big.txt", 150000)
EOF

if command -v go >/dev/null 2>&1; then
	(cd "$tmp" && GOCACHE=$tmp/gocache GOPATH=$tmp/gopath \
		GOFLAGS=-mod=mod go build -o "$tmp/go_wg" \
		"$ROOT/tests/real/go_wg.go" >/dev/null 2>&1)
fi

# name|command (run in $tmp)
PROGRAMS=(
	"pigz -p4|pigz -p 4 -c in.txt"
	"zstd -T4|zstd -T4 -q -c in.txt"
	"sort --parallel=4|sort --parallel=4 big.txt"
	"pbzip2 -p4|pbzip2 -p4 -b1 -c in.txt"
	"lbzip2 -n4|lbzip2 -n4 -c in.txt"
	"C++ atomics -O2|$REAL/cpp_atomic"
	"compute under lock|$REAL/compute_lock 30"
	"go_wg|$tmp/go_wg"
	"python3 threading|$PY $ROOT/bench/py_threads.py"
)

now() { date +%s%N; }

# check FILE NATIVE: "VERDICT RUNS SAME" from ptloom's --output stdout
check() {
	"$PY" - "$1" "$2" <<'EOF'
import re, sys
out = open(sys.argv[1], "rb").read()
native = open(sys.argv[2], "rb").read()
cut = out.rfind(b"ptloom: ")
line = out[cut:].decode(errors="replace").strip() if cut >= 0 else ""
body = out[:cut] if cut >= 0 else out
m = re.match(r"ptloom: (\w+)", line)
verdict = m.group(1) if m else "?"
if verdict == "FAIL":
    verdict = "FAIL:" + "_".join(line.split()[2:4])
n = re.search(r"(\d+) runs?", line)
runs = int(n.group(1)) if n else 0
# discovery runs print too: whole copies, at least one per run
if not native:
    same = runs > 0 and not body
else:
    same = len(body) >= runs * len(native) and \
        len(body) % len(native) == 0 and \
        all(body[i:i + len(native)] == native
            for i in range(0, len(body), len(native)))
print(verdict, runs, "yes" if same else "no")
EOF
}

# ptl STRATEGY POINTS CMD...: one exploration; prints "VERDICT RUNS SAME
# SECONDS LONGEST" (LONGEST: its longest run, from PTLOOM_STATS)
ptl() {
	local s=$1 pts=$2 t0 t1
	shift 2
	t0=$(now)
	(cd "$tmp" && PTLOOM_STATS=1 timeout 900 "$PT" run --output -s "$s" \
		-n "$RUNS" --seed "$SEED" --points "$pts" \
		-e OMP_NUM_THREADS=4 -- "$@" >"$tmp/ptl.out" 2>"$tmp/ptl.err")
	t1=$(now)
	echo "$(check "$tmp/ptl.out" "$tmp/native.out")" \
		"$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')" \
		"$(sed -n 's/.*(longest run \([0-9.]*\) s).*/\1/p' "$tmp/ptl.err" | head -1)"
}

max() { awk -v a="$1" -v b="${2:-0}" 'BEGIN { print (b > a) ? b : a }'; }

per_run() { # SECONDS RUNS
	awk -v t="$1" -v n="$2" 'BEGIN { if (n > 0) printf "%.2f", t / n; else print "-" }'
}

echo "ptloom $("$PT" --version 2>/dev/null | head -1), $(nproc) CPUs," \
	"load $(cut -d' ' -f1-3 /proc/loadavg), -n $RUNS --seed $SEED"
echo
echo "| program | native s | ptloom s/run (sync,races) | ptloom s/run (--points sync) | longest run s | dfs | random | pct | output identical |"
echo "|---|---|---|---|---|---|---|---|---|"
for e in "${PROGRAMS[@]}"; do
	name=${e%%|*}
	cmd=${e#*|}
	[ -n "$ONLY" ] && [[ " $ONLY " != *" ${name%% *} "* ]] && continue
	read -r -a argv <<<"$cmd"
	if ! command -v "${argv[0]}" >/dev/null 2>&1; then
		echo "| $name | not installed | | | | | | | |"
		continue
	fi
	best=
	for i in 1 2 3; do
		t0=$(now)
		(cd "$tmp" && "${argv[@]}" >"$tmp/native.out" 2>/dev/null)
		t1=$(now)
		d=$(((t1 - t0) / 1000000))
		[ -z "$best" ] || [ "$d" -lt "$best" ] && best=$d
	done
	native=$(awk -v d="$best" 'BEGIN { printf "%.3f", d / 1000 }')
	tot=0 nruns=0 same=yes verdicts=() longest=0
	for s in dfs random pct; do
		read -r v n ok secs l <<<"$(ptl "$s" sync,races "${argv[@]}")"
		grep -q 'past --timeout' "$tmp/ptl.out" && v="$v(timeout)"
		verdicts+=("$v")
		tot=$(awk -v a="$tot" -v b="$secs" 'BEGIN { print a + b }')
		nruns=$((nruns + n))
		longest=$(max "$longest" "$l")
		[ "$ok" = yes ] || same=no
	done
	read -r v n ok secs l <<<"$(ptl random sync "${argv[@]}")"
	longest=$(max "$longest" "$l")
	[ "$ok" = yes ] || same=no
	echo "| $name | $native | $(per_run "$tot" "$nruns") |" \
		"$(per_run "$secs" "$n") | $longest | ${verdicts[0]} |" \
		"${verdicts[1]} | ${verdicts[2]} | $same |"
done

echo
echo "Still fenced with \`unsupported:\` (tracer/):"
echo
(cd "$ROOT" && grep -rnoE '"unsupported: [^"]*"?' tracer) |
	sed 's/:"/: "/; s/^/- /'
