#!/usr/bin/env bash
# Speed of an exploration, as ratios measured side by side in one
# invocation (issue 10): schedules/s serial and -j 2, from exec and from a
# fork checkpoint; ptloom's time per schedule against a native
# fork+exec+run of the same binary; microseconds per scheduling point;
# the same for python3 on a small threading script; and the machine's
# limits (bench/limits.c) so that every figure reads as a multiple of what
# the machine allows.  Asserts nothing; not part of the test suite.
#
#   bench/speed.sh            uses build/ (or $PTLOOM_BUILD)
#
# Knobs: SPEED_RUNS (2000 schedules per exploration), SPEED_NATIVE (300),
# SPEED_BEFORE=/path/to/an/older/ptloom: the sampled programs (python3,
# Rust, Go) also get a `before` row from that binary, in the same
# invocation, so that a change reads as a ratio of one machine state.
set -u -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${PTLOOM_BUILD:-$ROOT/build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
RUNS=${SPEED_RUNS:-2000}
NATIVE=${SPEED_NATIVE:-300}
PTLOOM=$BUILD/ptloom
BEFORE=${SPEED_BEFORE:-}
if [ -n "$BEFORE" ] && [ ! -x "$BEFORE" ]; then
	echo "speed: SPEED_BEFORE=$BEFORE is not an executable" >&2
	exit 2
fi
ninja -C "$BUILD" ptloom examples/bank_fixed examples/mutex_condvar >/dev/null ||
	{ echo "speed: build failed" >&2; exit 2; }
OUT=$(mktemp -d /tmp/ptloom-speed.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
cc -O2 -o "$OUT/limits" "$ROOT/bench/limits.c" || exit 2

echo "ptloom speed  $(date -u '+%Y-%m-%d %H:%M:%SZ')  $(nproc) CPUs  load $(cut -d' ' -f1-3 /proc/loadavg)"
"$OUT/limits" >"$OUT/lim"
SECCOMP=$(awk '$1=="seccomp"{print $2}' "$OUT/lim")
INT3=$(awk '$1=="int3"{print $2}' "$OUT/lim")
FORK=$(awk '$1=="fork"{print $2}' "$OUT/lim")
EXEC=$(awk '$1=="exec"{print $2}' "$OUT/lim")
echo
echo "limits (µs): seccomp stop $SECCOMP, int3 hit (emulated) $INT3, fork of a stopped tracee $FORK, traced fork+exec of /bin/true $EXEC"

# native µs per run of a program: a loop of bare fork+exec+run
native_us() {
	local t0 t1
	t0=$(date +%s%N)
	for ((i = 0; i < NATIVE; i++)); do "$@" >/dev/null 2>&1; done
	t1=$(date +%s%N)
	awk -v a="$t0" -v b="$t1" -v n="$NATIVE" 'BEGIN { printf "%.0f", (b - a) / 1000 / n }'
}

# "runs/s us/step stops" of one exploration (PTLOOM_STATS) by $PT
PT=$PTLOOM
explore() {
	local env=$1
	shift
	env $env PTLOOM_STATS=1 timeout -k 5 600 "$PT" run -o "$OUT/s" "$@" \
		>/dev/null 2>"$OUT/err"
	local rs stops
	rs=$(sed -n 's/^ptloom: [0-9]* runs, [0-9]* pruned, [0-9.]* s[^,]*, \([0-9.]*\) runs\/s, \([0-9.]*\) us\/step.*/\1 \2/p' "$OUT/err" | tail -1)
	stops=$(sed -n 's/^ptloom: per run \([0-9.]*\) stops.*/\1/p' "$OUT/err" | tail -1)
	echo "$rs ${stops:-0}"
}

echo
printf '%-26s %9s %17s %8s %9s %10s %9s %10s %7s %8s %7s\n' program native_us mode runs/s us/sched ratio_nat us/point pt/seccomp stops floor_us x_floor
# floor_us: what one schedule costs at the machine's limits alone: its
# stops at one seccomp stop each, plus one fork of the stopped template
# (checkpoint) or one traced fork+exec (exec), over 2 CPUs for -j 2
row() { # name native mode runs/s us/step stops/run
	awk -v n="$1" -v nat="$2" -v m="$3" -v rs="$4" -v us="$5" -v st="${6:-0}" \
		-v sc="$SECCOMP" -v fk="$FORK" -v ex="$EXEC" 'BEGIN {
		per = rs > 0 ? 1e6 / rs : 0
		rn = (nat > 0) ? per / nat : 0
		rp = (sc > 0) ? us / sc : 0
		fl = st * sc + (m ~ /^exec/ ? ex : fk)
		if (m ~ /j2/)
			fl /= 2
		xf = fl > 0 ? per / fl : 0
		if (us > 0)
			printf "%-26s %9d %17s %8.1f %9.0f %10.2f %9.1f %10.1f %7.1f %8.0f %7.1f\n", n, nat, m, rs, per, rn, us, rp, st, fl, xf
		else
			printf "%-26s %9d %17s %8.1f %9.0f %10.2f %9s %10s %7s %8s %7s\n", n, nat, m, rs, per, rn, "-", "-", "-", "-", "-" }'
}
for prog in examples/bank_fixed examples/mutex_condvar; do
	bin=$BUILD/$prog
	nat=$(native_us "$bin")
	for mode in exec checkpoint "checkpoint-j2"; do
		case $mode in
		exec) r=$(explore PTLOOM_NO_CHECKPOINT=1 --dfs-only -n "$RUNS" --seed 1 -- "$bin") ;;
		checkpoint) r=$(explore X=1 --dfs-only -n "$RUNS" --seed 1 -- "$bin") ;;
		checkpoint-j2) r=$(explore X=1 --dfs-only -j 2 -n "$RUNS" --seed 1 -- "$bin") ;;
		esac
		row "${prog##*/}" "$nat" "$mode" $r
	done
done
# rows of a sampled (-s random) program, from exec and from the checkpoint
# (and from the checkpoint by $SPEED_BEFORE): sampled_rows NAME RUNS COMMAND...
sampled_rows() {
	local name=$1 n=$2 nat mode r
	shift 2
	nat=$(native_us "$@")
	for mode in exec checkpoint ${BEFORE:+checkpoint-before}; do
		PT=$PTLOOM
		case $mode in
		exec) r=$(explore PTLOOM_NO_CHECKPOINT=1 -s random -n "$n" --seed 1 -- "$@") ;;
		checkpoint) r=$(explore X=1 -s random -n "$n" --seed 1 -- "$@") ;;
		checkpoint-before)
			PT=$BEFORE
			r=$(explore X=1 -s random -n "$n" --seed 1 -- "$@") ;;
		esac
		row "$name" "$nat" "$mode" $r
	done
	PT=$PTLOOM
}
if [ -x /usr/bin/python3 ]; then
	sampled_rows "python3 py_threads.py" 100 /usr/bin/python3 "$ROOT/bench/py_threads.py"
else
	echo "python3: not installed, skipped"
fi
# compiled runtimes: a Rust std::thread program and a Go program with
# goroutines, a WaitGroup and a channel (tests/real/go_wg.go), each built
# here when its compiler is installed
if command -v rustc >/dev/null &&
	rustc -O -o "$OUT/rs_threads" "$ROOT/bench/rs_threads.rs" 2>/dev/null; then
	sampled_rows "rust rs_threads" 100 "$OUT/rs_threads"
else
	echo "rust: rustc not installed, skipped"
fi
if command -v go >/dev/null &&
	(cd "$OUT" && cp "$ROOT/tests/real/go_wg.go" . &&
	 GOCACHE=$OUT/gocache GOPATH=$OUT/gopath GOFLAGS=-mod=mod \
		 go build -o go_wg go_wg.go) >/dev/null 2>&1; then
	sampled_rows "go go_wg" 20 "$OUT/go_wg"
else
	echo "go: not installed, skipped"
fi
echo
echo "us/sched: exploration time per schedule; ratio_nat: that over one native run"
echo "(goal <= 0.5); us/point: whole-run time per scheduling point; pt/seccomp:"
echo "us/point as a multiple of one seccomp stop (the floor of a point); stops:"
echo "tracee stops per run (PTLOOM_STATS); floor_us: those stops at one seccomp"
echo "stop each plus one fork of the template (or one traced fork+exec), halved"
echo "for -j 2; x_floor: us/sched over floor_us."
