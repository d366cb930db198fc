#!/usr/bin/env bash
# The in-process agent (the fast path, tracer/agent.c) side by side in one
# invocation: for programs that read the clock or make synchronisation
# calls while the other threads wait (and one that does neither),
# schedules/s, ptrace stops a run, clock reads and sync calls taken in the
# program with the agent (this build), without
# it (PTLOOM_NO_FAST_PATH=1, the same runs) and, with SPEED_BEFORE set, an
# older ptloom; the last column is on/off.  The trace digests of on and off
# must be equal (the runs are the same); a row says "DIFFERENT" if not.
# A second table times race discovery (`ptloom races`) with the access
# slots and without: seconds, observation stops, how many of them were
# logged in the program, and whether the report is the same.
# Asserts nothing; not part of the test suite.
#
#   bench/fastpath.sh         uses build/ (or $PTLOOM_BUILD)
#
# Knobs: SPEED_BEFORE=/path/to/an/older/ptloom; FASTPATH_N (runs a row,
# default 20; node gets a tenth).  Rows for Go, Rust and node are skipped,
# with a line saying so, when the tool is missing.
set -u -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${PTLOOM_BUILD:-$ROOT/build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
PTLOOM=$BUILD/ptloom
BEFORE=${SPEED_BEFORE:-}
N=${FASTPATH_N:-20}
if [ -n "$BEFORE" ] && [ ! -x "$BEFORE" ]; then
	echo "fastpath: SPEED_BEFORE=$BEFORE is not an executable" >&2
	exit 2
fi
ninja -C "$BUILD" ptloom examples/bank_fixed tests/clock_reads \
	tests/clock_reads_static tests/calls_while_others_wait >/dev/null ||
	{ echo "fastpath: build failed" >&2; exit 2; }
OUT=$(mktemp -d /tmp/ptloom-fastpath.XXXXXX)
trap 'rm -rf "$OUT"' EXIT

echo "ptloom fast path  $(date -u '+%Y-%m-%d %H:%M:%SZ')  $(nproc) CPUs  load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-18s %-7s %12s %12s %14s %12s %12s\n' program mode runs/s stops/run \
	"clock reads" "sync calls" "futex wakes"

# one: BIN NOFAST RUNS PROGRAM... -> "runs/s stops clock-in-program
# calls-in-program wakes-in-program digest"
one() {
	local bin=$1 nf=$2 n=$3
	shift 3
	PTLOOM_NO_FAST_PATH=$nf PTLOOM_STATS=1 "$bin" run -s random -n "$n" \
		--seed 3 --no-minimize --clock-start 1767225600 "$@" \
		>/dev/null 2>"$OUT/err"
	local rs st cl ca fw dg
	rs=$(grep -oE '[0-9.]+ runs/s' "$OUT/err" | head -1 | cut -d' ' -f1)
	st=$(grep -oE 'per run [0-9.]+ stops' "$OUT/err" | head -1 | cut -d' ' -f3)
	cl=$(grep -oE 'clock-in-program\(no stop\) [0-9.]+' "$OUT/err" | cut -d' ' -f3)
	ca=$(grep -oE 'sync-call-in-program\(no stop\) [0-9.]+' "$OUT/err" | cut -d' ' -f3)
	fw=$(grep -oE 'futex-wake-in-program\(no stop\) [0-9.]+' "$OUT/err" | cut -d' ' -f3)
	dg=$(grep -oE 'trace digest [0-9a-f]+' "$OUT/err" | cut -d' ' -f3)
	echo "${rs:-?} ${st:-?} ${cl:-0} ${ca:-0} ${fw:-0} ${dg:-none}"
}

row() {
	local name=$1 n=$2
	shift 2
	local on off before
	if [ -n "$BEFORE" ]; then
		before=$(one "$BEFORE" 0 "$n" "$@")
		printf '%-18s %-7s %12s %12s %14s %12s %12s\n' "$name" before \
			$(echo "$before" | cut -d' ' -f1-5)
	fi
	off=$(one "$PTLOOM" 1 "$n" "$@")
	on=$(one "$PTLOOM" 0 "$n" "$@")
	printf '%-18s %-7s %12s %12s %14s %12s %12s\n' "$name" off \
		$(echo "$off" | cut -d' ' -f1-5)
	local ratio same
	ratio=$(awk -v a="${on%% *}" -v b="${off%% *}" \
		'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "-" }')
	same=same
	[ "$(echo "$on" | cut -d' ' -f6)" = "$(echo "$off" | cut -d' ' -f6)" ] ||
		same=DIFFERENT
	printf '%-18s %-7s %12s %12s %14s %12s %12s   on/off %s, runs %s\n' "$name" \
		on $(echo "$on" | cut -d' ' -f1-5) "$ratio" "$same"
}

row clock_reads "$N" -- "$BUILD/tests/clock_reads"
row clock_static "$N" -- "$BUILD/tests/clock_reads_static"
row bank_fixed "$((N * 25))" -- "$BUILD/examples/bank_fixed"
row calls_waiting "$N" -- "$BUILD/tests/calls_while_others_wait"
row lock_loop "$N" --points sync -- "$BUILD/tests/lock_loop"
row python3 "$N" -- python3 "$ROOT/bench/py_threads.py"
for v in 3.12 3.13; do
	# pyenv's interpreter itself (its shim is a shell script)
	py=$(ls -d "$HOME"/.pyenv/versions/$v*/bin/python$v 2>/dev/null | head -1)
	[ -n "$py" ] || py=$(command -v "python$v")
	if [ -n "$py" ]; then
		row "python$v" "$N" -- "$py" "$ROOT/bench/py_threads.py"
	else
		echo "python$v: not installed, row skipped"
	fi
done
if command -v go >/dev/null; then
	mkdir -p "$OUT/go" && cp "$ROOT/tests/real/go_wg.go" "$OUT/go/main.go" &&
		(cd "$OUT/go" && GOCACHE=$OUT/gocache GOPATH=$OUT/gopath \
			GOFLAGS=-mod=mod go mod init fastpath >/dev/null 2>&1 &&
			GOCACHE=$OUT/gocache GOPATH=$OUT/gopath go build -o go_wg . ) &&
		row "go (sync)" "$N" --points sync -- "$OUT/go/go_wg"
else
	echo "go: not installed, row skipped"
fi
if command -v rustc >/dev/null; then
	rustc -O -o "$OUT/rs_threads" "$ROOT/bench/rs_threads.rs" 2>/dev/null &&
		row "rust (sync)" "$N" --points sync -- "$OUT/rs_threads"
else
	echo "rustc: not installed, row skipped"
fi
if command -v node >/dev/null; then
	row "node (sync)" "$(( (N + 9) / 10 ))" --points sync -- node \
		"$ROOT/tests/targets/node_lost_update.js"
else
	echo "node: not installed, row skipped"
fi

# race discovery: `ptloom races --seed 3` with the access slots and without
echo
printf '%-18s %-7s %10s %14s %14s\n' "race discovery" mode seconds \
	"observations" "in program"
# disc BIN NOFAST PROGRAM... -> "seconds observations logged" (report in
# $OUT/rep.NOFAST)
disc() {
	local bin=$1 nf=$2
	shift 2
	PTLOOM_NO_FAST_PATH=$nf PTLOOM_STATS=1 "$bin" races --seed 3 -- "$@" \
		>"$OUT/rep.$nf" 2>"$OUT/err" </dev/null
	local sec ob lg
	sec=$(head -1 "$OUT/rep.$nf" | grep -oE 'in [0-9.]+ s' | cut -d' ' -f2)
	ob=$(grep -oE '[0-9]+ observation stops' "$OUT/err" | cut -d' ' -f1)
	lg=$(grep -oE '\([0-9]+ of them logged' "$OUT/err" | tr -d '(' | cut -d' ' -f1)
	sed -i 1d "$OUT/rep.$nf"
	echo "${sec:-?} ${ob:-?} ${lg:-0}"
}
drow() {
	local name=$1
	shift
	local on off ratio same
	off=$(disc "$PTLOOM" 1 "$@")
	on=$(disc "$PTLOOM" 0 "$@")
	printf '%-18s %-7s %10s %14s %14s\n' "$name" off $off
	ratio=$(awk -v a="${on%% *}" -v b="${off%% *}" \
		'BEGIN { if (a > 0) printf "%.2fx", b / a; else print "-" }')
	same=same
	cmp -s "$OUT/rep.0" "$OUT/rep.1" || same=DIFFERENT
	printf '%-18s %-7s %10s %14s %14s   off/on %s, report %s\n' "$name" on \
		$on "$ratio" "$same"
}
ninja -C "$BUILD" tests/bank_nolock_static tests/wsq_O2 >/dev/null 2>&1
drow bank_nolock_static "$BUILD/tests/bank_nolock_static"
drow wsq_O2 "$BUILD/tests/wsq_O2"
[ -x "$OUT/go/go_wg" ] && drow go_wg "$OUT/go/go_wg"
[ -x "$OUT/rs_threads" ] && drow rs_threads "$OUT/rs_threads"
python3 "$ROOT/bench/input_lines.py" "$OUT/in.txt"
for tool in "lbzip2 -n4 -c" "pigz -p 4 -c" "sort --parallel=4 -S 1M"; do
	set -- $tool
	if command -v "$1" >/dev/null; then
		drow "$1" "$@" "$OUT/in.txt"
	else
		echo "$1: not installed, row skipped"
	fi
done
