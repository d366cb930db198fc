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
# invocation, so that a change reads as a ratio of one machine state;
# SPEED_ONLY="rust go": only the rows whose first word is listed
# (bank_fixed mutex_condvar mutex_condvar-complete python3 rust go).
#
#   bench/speed.sh --goals    issue 25's goals only (a few minutes): each
#                             as a row measured with SPEED_BEFORE (if set),
#                             this build with PTLOOM_NO_FAST_PATH=1, and
#                             this build as it is, beside the machine's
#                             limits; see bench/README.md.  Knobs:
#                             GOALS_ONLY="lock bank real mc" (rows),
#                             GOALS_REAL="pigz cpp rust go python3",
#                             GOALS_REAL_RUNS (10), GOALS_LOCK_N (200)
set -u -o pipefail
GOALS=false
case ${1:-} in
--goals) GOALS=true ;;
"") ;;
*) echo "usage: bench/speed.sh [--goals]" >&2; exit 2 ;;
esac
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
cc -O2 -pthread -o "$OUT/limits" "$ROOT/bench/limits.c" || exit 2

echo "ptloom speed  $(date -u '+%Y-%m-%d %H:%M:%SZ')  $(nproc) CPUs  load $(cut -d' ' -f1-3 /proc/loadavg)"
"$OUT/limits" >"$OUT/lim"
SECCOMP=$(awk '$1=="seccomp"{print $2}' "$OUT/lim")
INT3=$(awk '$1=="int3"{print $2}' "$OUT/lim")
FORK=$(awk '$1=="fork"{print $2}' "$OUT/lim")
EXEC=$(awk '$1=="exec"{print $2}' "$OUT/lim")
FUTEX=$(awk '$1=="futex"{print $2}' "$OUT/lim")
echo
echo "limits (µs): seccomp stop $SECCOMP, int3 hit (emulated) $INT3, fork of a stopped tracee $FORK, traced fork+exec of /bin/true $EXEC, futex hand-off between two threads $FUTEX"
# the same with both CPUs busy at once (-j 2's workers): a machine whose
# CPUs serialise page-table work (a hypervisor's shadow paging) forks and
# execs no faster on two CPUs than on one
SECCOMP2=$SECCOMP FORK2=$FORK
if "$OUT/limits" pair >"$OUT/lim2" 2>/dev/null; then
	SECCOMP2=$(awk '$1=="seccomp2"{print $2}' "$OUT/lim2")
	FORK2=$(awk '$1=="fork2"{print $2}' "$OUT/lim2")
	EXEC2=$(awk '$1=="exec2"{print $2}' "$OUT/lim2")
	echo "two at once, one per CPU (µs each): seccomp stop $SECCOMP2, fork of a stopped tracee $FORK2, traced fork+exec $EXEC2"
fi

# CPU seconds (user + system) of the children this shell has waited for
# (ptloom, its launcher and every run's processes are among them), into
# variable $1: `times` runs in this shell, not in a $(...) subshell
child_cpu() {
	times >"$OUT/times"
	printf -v "$1" '%s' "$(awk 'NR == 2 { t = 0
		for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] }
		printf "%.6f", t }' "$OUT/times")"
}

# "wall_us cpu_us" per run of a program: a loop of bare fork+exec+run
native_us() {
	local t0 t1 c0 c1
	child_cpu c0
	t0=$(date +%s%N)
	for ((i = 0; i < NATIVE; i++)); do "$@" >/dev/null 2>&1; done
	t1=$(date +%s%N)
	child_cpu c1
	awk -v a="$t0" -v b="$t1" -v c="$c0" -v d="$c1" -v n="$NATIVE" \
		'BEGIN { printf "%.0f %.0f", (b - a) / 1000 / n, (d - c) * 1e6 / n }'
}

# "runs/s us/step stops cpu_us" of one exploration (PTLOOM_STATS) by $PT;
# cpu_us: the CPU time of ptloom and its tracees per schedule (race
# discovery included, as in runs/s), which a loaded machine moves far
# less than wall time
PT=$PTLOOM
explore() {
	local env=$1 c0 c1
	shift
	child_cpu c0
	env $env PTLOOM_STATS=1 timeout -k 5 600 "$PT" run -o "$OUT/s" "$@" \
		>/dev/null 2>"$OUT/err"
	child_cpu c1
	local rs stops n
	rs=$(sed -n 's/^ptloom: [0-9]* runs, [0-9]* pruned, [0-9.]* s[^,]*, \([0-9.]*\) runs\/s, \([0-9.]*\) us\/step.*/\1 \2/p' "$OUT/err" | tail -1)
	n=$(sed -n 's/^ptloom: \([0-9]*\) runs, [0-9]* pruned.*/\1/p' "$OUT/err" | tail -1)
	stops=$(sed -n 's/^ptloom: per run \([0-9.]*\) stops.*/\1/p' "$OUT/err" | tail -1)
	echo "${rs:-0 0} ${stops:-0} $(awk -v c="$c0" -v d="$c1" -v n="${n:-0}" \
		'BEGIN { printf "%.0f", (n > 0 ? (d - c) * 1e6 / n : 0) }')"
}

# --goals: issue 25's rows instead of the ones below
if $GOALS; then
	. "$ROOT/bench/goals.sh"
	exit 0
fi
echo
printf '%-26s %9s %17s %8s %9s %10s %9s %10s %7s %8s %7s %9s %8s\n' program native_us mode runs/s us/sched ratio_nat us/point pt/seccomp stops floor_us x_floor cpu_us cpu_nat
# floor_us: what one schedule costs at the machine's limits alone: its
# stops at one seccomp stop each, plus one fork of the stopped template
# (checkpoint) or one traced fork+exec (exec), over 2 CPUs for -j 2
row() { # name "native_wall native_cpu" mode runs/s us/step stops/run cpu_us
	awk -v n="$1" -v nat="${2%% *}" -v natc="${2##* }" -v m="$3" -v rs="$4" \
		-v us="$5" -v st="${6:-0}" -v cpu="${7:-0}" \
		-v sc="$SECCOMP" -v fk="$FORK" -v ex="$EXEC" 'BEGIN {
		per = rs > 0 ? 1e6 / rs : 0
		rn = (nat > 0) ? per / nat : 0
		rp = (sc > 0) ? us / sc : 0
		fl = st * sc + (m ~ /^exec/ ? ex : fk)
		if (m ~ /j2/)
			fl /= 2
		xf = fl > 0 ? per / fl : 0
		cn = natc > 0 ? cpu / natc : 0
		if (us > 0)
			printf "%-26s %9d %17s %8.1f %9.0f %10.2f %9.1f %10.1f %7.1f %8.0f %7.1f %9.0f %8.2f\n", n, nat, m, rs, per, rn, us, rp, st, fl, xf, cpu, cn
		else
			printf "%-26s %9d %17s %8.1f %9.0f %10.2f %9s %10s %7s %8s %7s %9.0f %8.2f\n", n, nat, m, rs, per, rn, "-", "-", "-", "-", "-", cpu, cn }'
}
want() { [ -z "${SPEED_ONLY:-}" ] || [[ " $SPEED_ONLY " == *" $1 "* ]]; }
for prog in examples/bank_fixed examples/mutex_condvar; do
	want "${prog##*/}" || continue
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
# a complete search: mutex_condvar to bound 2 (--dfs-only --points sync),
# serially, with -j 2 (its workers share one state cache), and with -j 2
# uncached (session 9's -j); runs and wall time, each as a ratio to the
# serial search (issue 25's goal: -j 2 <= 1.1x the runs, <= 0.6x the wall)
if want mutex_condvar-complete; then
	echo
	printf '%-34s %8s %8s %10s %10s\n' "mutex_condvar to bound 2" runs wall_s x_runs x_wall
	sruns=0 swall=0
	for mode in serial j2 j2-uncached ${BEFORE:+j2-before}; do
		PT=$PTLOOM
		case $mode in
		serial) a="" ;;
		j2) a="-j 2" ;;
		j2-uncached) a="-j 2 --no-state-cache" ;;
		j2-before) a="-j 2"; PT=$BEFORE ;;
		esac
		t0=$(date +%s%N)
		sum=$(timeout -k 5 900 "$PT" run -q --dfs-only --points sync --seed 1 $a \
			-o "$OUT/s" -- "$BUILD/examples/mutex_condvar" 2>/dev/null | tail -1)
		t1=$(date +%s%N)
		n=$(sed -n 's/^ptloom: PASS \([0-9]*\) runs.*/\1/p' <<<"$sum")
		w=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
		[ "$mode" = serial ] && { sruns=${n:-0}; swall=$w; }
		awk -v m="$mode" -v n="${n:-0}" -v w="$w" -v sn="$sruns" -v sw="$swall" 'BEGIN {
			xr = 0; xw = 0
			if (sn > 0) xr = n / sn
			if (sw > 0) xw = w / sw
			printf "%-34s %8d %8.2f %10.2f %10.2f\n", m, n, w, xr, xw }'
	done
	PT=$PTLOOM
fi
# rows of a sampled (-s random) program, from exec and from the checkpoint
# (and from the checkpoint by $SPEED_BEFORE): sampled_rows NAME RUNS COMMAND...
sampled_rows() {
	local name=$1 n=$2 nat mode r
	shift 2
	want "${name%% *}" || return 0
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
echo "for -j 2; x_floor: us/sched over floor_us; cpu_us: CPU time of ptloom and its"
echo "tracees per schedule; cpu_nat: that over one native run's CPU time (both"
echo "move less with the machine's load than wall times)."
