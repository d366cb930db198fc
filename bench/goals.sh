# Sourced by `bench/speed.sh --goals` (after the limits): issue 25's goals,
# each a row measured side by side in this one invocation by up to three
# binaries: `before` ($SPEED_BEFORE, e.g. a session's start), `no-fast`
# (this build with PTLOOM_NO_FAST_PATH=1: today's path, every point a
# ptrace stop) and `fast` (this build as it is).  `met` judges the `fast`
# column against the goal; `floor` is what the machine allows (limits
# above, a native run).  Asserts nothing.  Uses from speed.sh: $PTLOOM,
# $BEFORE, $BUILD, $ROOT, $OUT, $SECCOMP, $FORK, $FUTEX, native_us.

GONLY=${GOALS_ONLY:-lock bank real mc}
GREAL=${GOALS_REAL:-pigz cpp rust go python3}
GRUNS=${GOALS_REAL_RUNS:-10}
GLOCK=${GOALS_LOCK_N:-200}
gwant() { [[ " $GONLY " == *" $1 "* ]]; }
# the binaries: "name|path|environment"
GBINS=()
[ -n "$BEFORE" ] && GBINS+=("before|$BEFORE|X=1")
GBINS+=("no-fast|$PTLOOM|PTLOOM_NO_FAST_PATH=1" "fast|$PTLOOM|X=1")
DETAIL=$OUT/detail
: >"$DETAIL"

# gx BIN ENV DIR ARGS...: one `ptloom run ARGS` in DIR with PTLOOM_STATS;
# prints "runs seconds runs/s us/step stops wall_s verdict cpu_s" (seconds:
# ptloom's exploration time; wall_s: the whole command's; cpu_s: the CPU
# time of ptloom and its tracees, which load moves less than wall time)
gx() {
	local bin=$1 env=$2 dir=$3 t0 t1 st v w c0 c1
	shift 3
	child_cpu c0
	t0=$(date +%s%N)
	(cd "$dir" && env $env PTLOOM_STATS=1 timeout -k 5 900 "$bin" run \
		-o "$OUT/s" "$@" >"$OUT/gout" 2>"$OUT/gerr")
	t1=$(date +%s%N)
	child_cpu c1
	st=$(sed -n 's/^ptloom: \([0-9]*\) runs, [0-9]* pruned, \([0-9.]*\) s[^,]*, \([0-9.]*\) runs\/s, \([0-9.]*\) us\/step.*/\1 \2 \3 \4/p' "$OUT/gerr" | tail -1)
	v=$(sed -n 's/^ptloom: \(PASS\|FAIL\|INCOMPLETE\|ERROR\) .*/\1/p' "$OUT/gout" | tail -1)
	w=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
	echo "${st:-0 0 0 0} $(sed -n 's/^ptloom: per run \([0-9.]*\) stops.*/\1/p' "$OUT/gerr" | tail -1 | grep . || echo 0) $w ${v:-?}" \
		"$(awk -v a="$c0" -v b="$c1" 'BEGIN { printf "%.3f", b - a }')"
}

# grow NAME GOAL(le|ge) TARGET FLOOR VALUE... (one per binary, "-" if none)
grow() {
	local name=$1 cmp=$2 target=$3 floor=$4 i
	shift 4
	local cells="" last=${!#}
	local first=$1
	for i in "$@"; do cells+=$(printf ' %10s' "$i"); done
	for ((i = $#; i < 3; i++)); do cells=$(printf ' %10s' -)$cells; done
	awk -v n="$name" -v c="$cmp" -v t="$target" -v f="$floor" \
		-v cells="$cells" -v last="$last" -v first="$first" -v nb="${#GBINS[@]}" 'BEGIN {
		met = "-"
		if (last != "-" && last != "")
			met = (c == "le" ? last + 0 <= t + 0 : last + 0 >= t + 0) ? "met" : "NOT met"
		r = "-"
		if (nb > 2 && first + 0 > 0 && last != "-")
			r = sprintf("%.2f", last / first)
		printf "%-44s %9s%s %8s %8s  %s\n", n, (c == "le" ? "<= " : ">= ") t, cells, r, met, f }'
}

echo
printf '%-44s %9s %10s %10s %10s %8s %8s  %s\n' "goal (issue 25)" target \
	before no-fast fast fast/bef met floor
[ -n "$BEFORE" ] || echo "(no SPEED_BEFORE: the before column is empty)"

# 1. a point: two threads lock and unlock one mutex GLOCK times each; a
# random walk, and PCT (whose decisions the agent follows in the program)
if gwant lock; then
	cc -O2 -pthread -o "$OUT/lock_loop" "$ROOT/bench/lock_loop.c" || exit 2
	for how in random pct; do
		vals=()
		for b in "${GBINS[@]}"; do
			IFS='|' read -r bn bp be <<<"$b"
			read -r n secs rate us stops wall v <<<"$(gx "$bp" "$be" "$OUT" -s "$how" \
				-n 20 --points sync --seed 1 -- "$OUT/lock_loop" "$GLOCK")"
			vals+=("$us")
			echo "lock_loop $GLOCK $how: $bn $v $n runs, $stops stops a run, $us us/step, ${secs} s" >>"$DETAIL"
		done
		grow "us per sync point (lock loop, $how)" le 5 \
			"stop $SECCOMP, futex $FUTEX" "${vals[@]}"
	done
	# the hand-off between threads in the program (agent.c): threads
	# locking mutexes of their own, so that every switch is at a call;
	# the columns here are no-fast, the agent without the hand-off
	# (PTLOOM_HANDOFF=0) and fast
	cc -O2 -pthread -o "$OUT/own_lock_loops" \
		"$ROOT/tests/targets/own_lock_loops.c" || exit 2
	vals=()
	for b in "no-fast|$PTLOOM|PTLOOM_NO_FAST_PATH=1" \
		"no-handoff|$PTLOOM|PTLOOM_HANDOFF=0" "fast|$PTLOOM|X=1"; do
		IFS='|' read -r bn bp be <<<"$b"
		read -r n secs rate us stops wall v <<<"$(gx "$bp" "$be" "$OUT" -s random \
			-n 20 --points sync --seed 1 -- "$OUT/own_lock_loops" 2 "$GLOCK")"
		vals+=("$us")
		echo "own_lock_loops $GLOCK random: $bn $v $n runs, $stops stops a run, $us us/step, ${secs} s" >>"$DETAIL"
	done
	grow "us per point (own locks, random; cols: no-fast, no-handoff, fast)" le 5 \
		"stop $SECCOMP, futex $FUTEX" "${vals[@]}"
fi

# 2. schedules/s with -j 2 on bank_fixed, and a schedule's cost in native
# fork+exec runs of bank_fixed; the dfs search to bound 2 (126 runs) and
# the random and PCT samplers' steady state (2000 runs); the dfs search takes a
# tenth of a second, so its row is the best of three invocations
if gwant bank; then
	bin=$BUILD/examples/bank_fixed
	nat=$(native_us "$bin")
	nat=${nat%% *}
	for how in dfs random pct; do
		vals=() cost=() stops=0
		for b in "${GBINS[@]}"; do
			IFS='|' read -r bn bp be <<<"$b"
			if [ "$how" = dfs ]; then
				# a tenth of a second: the best of three
				r="0 0 0"
				for k in 1 2 3; do
					x=$(gx "$bp" "$be" "$OUT" --dfs-only -j 2 -n 2000 --seed 1 -- "$bin")
					r=$(awk -v a="$r" -v b="$x" 'BEGIN { split(a, p, " "); split(b, q, " "); print (q[3] + 0 > p[3] + 0 ? b : a) }')
				done
			else
				r=$(gx "$bp" "$be" "$OUT" -s "$how" -j 2 -n 2000 --seed 1 -- "$bin")
			fi
			read -r n secs rate us st wall v <<<"$r"
			stops=$st
			vals+=("$rate")
			cost+=("$(awk -v r="$rate" -v n="$nat" 'BEGIN { printf "%.2f", (r > 0 && n > 0 ? 1e6 / r / n : 0) }')")
			echo "bank_fixed -j 2 $how: $bn $v $n runs in $secs s, $rate runs/s, $st stops a run; native fork+exec $nat us" >>"$DETAIL"
		done
		# the ptrace design's best on 2 CPUs: each run's stops at one
		# seccomp stop and one fork of the template, as measured with
		# both CPUs at work (limits pair), halved
		fl=$(awk -v s="$stops" -v sc="$SECCOMP2" -v fk="$FORK2" \
			'BEGIN { f = (s * sc + fk) / 2; printf "%.0f", (f > 0 ? 1e6 / f : 0) }')
		grow "bank_fixed -j 2 schedules/s ($how)" ge 3000 \
			"ptrace floor $fl/s" "${vals[@]}"
		grow "bank_fixed -j 2 schedule / native run ($how)" le 0.5 \
			"native $nat us" "${cost[@]}"
	done
fi

# 3. real programs, per run against a native run, with --points sync and
# with the default points: `-s random -n GOALS_REAL_RUNS`, the whole
# command's wall time over its runs (start-up and, with the default
# points, race discovery's 6 runs included, as bench/real.sh counts)
if gwant real; then
	python3 "$ROOT/bench/input_lines.py" "$OUT/in.txt"
	for prog in $GREAL; do
		cmd=()
		case $prog in
		pigz)
			command -v pigz >/dev/null &&
				cmd=(pigz -p 4 -c "$OUT/in.txt") ||
				why="pigz not installed" ;;
		cpp)
			ninja -C "$BUILD" tests/real/cpp_atomic >/dev/null 2>&1 &&
				cmd=("$BUILD/tests/real/cpp_atomic") ||
				why="tests/real/cpp_atomic not built (-Dtests=true)" ;;
		rust)
			command -v rustc >/dev/null &&
				rustc -O -o "$OUT/rs_threads" "$ROOT/bench/rs_threads.rs" 2>/dev/null &&
				cmd=("$OUT/rs_threads") || why="rustc not installed" ;;
		go)
			command -v go >/dev/null &&
				(cd "$OUT" && cp "$ROOT/tests/real/go_wg.go" . &&
				 GOCACHE=$OUT/gocache GOPATH=$OUT/gopath GOFLAGS=-mod=mod \
					 go build -o go_wg go_wg.go) >/dev/null 2>&1 &&
				cmd=("$OUT/go_wg") || why="go not installed" ;;
		python3)
			[ -x /usr/bin/python3 ] &&
				cmd=(/usr/bin/python3 "$ROOT/bench/py_threads.py") ||
				why="/usr/bin/python3 not installed" ;;
		*) why="unknown program (pigz cpp rust go python3)" ;;
		esac
		if [ ${#cmd[@]} -eq 0 ]; then
			echo "$prog: skipped, $why"
			continue
		fi
		natw=$(NATIVE=20 native_us "${cmd[@]}")
		nat=${natw%% *}
		natc=${natw##* }
		for pts in sync default; do
			vals=() stops=0
			for b in "${GBINS[@]}"; do
				IFS='|' read -r bn bp be <<<"$b"
				if [ "$pts" = sync ]; then
					r=$(gx "$bp" "$be" "$OUT" -s random -n "$GRUNS" --seed 1 --points sync -- "${cmd[@]}")
				else
					r=$(gx "$bp" "$be" "$OUT" -s random -n "$GRUNS" --seed 1 -- "${cmd[@]}")
				fi
				read -r n secs rate us st wall v cpu <<<"$r"
				stops=$st
				vals+=("$(awk -v w="$wall" -v n="$n" -v nat="$nat" 'BEGIN { printf "%.1f", (n > 0 && nat > 0 ? w * 1e6 / n / nat : 0) }')")
				echo "$prog --points $pts: $bn $v $n runs, wall $wall s, ptloom's $secs s, $st stops a run; native $nat us; CPU per run over native CPU $(awk -v c="$cpu" -v n="$n" -v nc="$natc" 'BEGIN { printf "%.1f", (n > 0 && nc > 0 ? c * 1e6 / n / nc : 0) }')x" >>"$DETAIL"
			done
			# the ptrace floor: a run's stops at one seccomp stop each
			# and one fork of the template, over a native run
			fl=$(awk -v s="$stops" -v sc="$SECCOMP" -v fk="$FORK" -v n="$nat" \
				'BEGIN { printf "%.1f", (n > 0 ? (s * sc + fk) / n + 1 : 0) }')
			if [ "$pts" = sync ]; then
				grow "$prog per run / native (--points sync)" le 5 \
					"ptrace floor ${fl}x" "${vals[@]}"
			else
				grow "$prog per run / native (default points)" le 20 \
					"ptrace floor ${fl}x" "${vals[@]}"
			fi
		done
	done
fi

# 4. -j 2 against serial on mutex_condvar, `ptloom run`'s default search
# (dfs to bound 2 with the hybrid's samples, complete): run counts and
# whole-command wall times
if gwant mc; then
	bin=$BUILD/examples/mutex_condvar
	rr=() wr=()
	for b in "${GBINS[@]}"; do
		IFS='|' read -r bn bp be <<<"$b"
		read -r n1 s1 r1 u1 t1 w1 v1 <<<"$(gx "$bp" "$be" "$OUT" --seed 1 -- "$bin")"
		read -r n2 s2 r2 u2 t2 w2 v2 <<<"$(gx "$bp" "$be" "$OUT" -j 2 --seed 1 -- "$bin")"
		rr+=("$(awk -v a="$n1" -v b="$n2" 'BEGIN { printf "%.2f", (a > 0 ? b / a : 0) }')")
		wr+=("$(awk -v a="$w1" -v b="$w2" 'BEGIN { printf "%.2f", (a > 0 ? b / a : 0) }')")
		echo "mutex_condvar: $bn serial $v1 $n1 runs $w1 s, -j 2 $v2 $n2 runs $w2 s" >>"$DETAIL"
	done
	# the machine's own floor for the wall ratio: this build's serial
	# search twice at once, one per CPU, over two serial searches one
	# after the other (a machine that scales perfectly gives 0.50)
	mfl="0.50 (2 CPUs)"
	# the first two CPUs allowed ("0-1", "0,2-5")
	c0=$(awk '/^Cpus_allowed_list/ { n = split($2, r, ",")
		for (i = 1; i <= n && k < 2; i++) {
			m = split(r[i], ab, "-"); hi = m > 1 ? ab[2] : ab[1]
			for (c = ab[1]; c <= hi && k < 2; c++) { printf "%s%d", (k ? " " : ""), c; k++ }
		} }' /proc/self/status)
	if [ -n "$w1" ] && [ "$(wc -w <<<"$c0")" -eq 2 ]; then
		read -r ca cb <<<"$c0"
		t0=$(date +%s%N)
		(cd "$OUT" && taskset -c "$ca" "$PTLOOM" run -o "$OUT/p1" --seed 1 -- "$bin" >/dev/null 2>&1) &
		(cd "$OUT" && taskset -c "$cb" "$PTLOOM" run -o "$OUT/p2" --seed 1 -- "$bin" >/dev/null 2>&1) &
		wait
		t1=$(date +%s%N)
		mfl=$(awk -v a="$t0" -v b="$t1" -v w="$w1" 'BEGIN { printf "%.2f", (b - a) / 1e9 / 2 / w }')
		echo "mutex_condvar: this build's serial search twice at once (CPUs $ca and $cb): $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }') s against $w1 s alone" >>"$DETAIL"
		mfl="$mfl (machine: 2 serial at once)"
	fi
	grow "mutex_condvar -j 2 runs / serial runs" le 1.1 "1.00 (same set)" "${rr[@]}"
	grow "mutex_condvar -j 2 wall / serial wall" le 0.6 "$mfl" "${wr[@]}"
fi

echo
cat "$DETAIL"
echo
echo "before: \$SPEED_BEFORE; no-fast: this build with PTLOOM_NO_FAST_PATH=1; fast:"
echo "this build as it is (met: the fast column against the goal).  us per"
echo "point: ptloom's us/step (-s random -n 20 --points sync); schedules/s:"
echo "ptloom's runs/s; schedule / native run: 1e6 / runs/s over one native"
echo "fork+exec+run; real programs: the whole command's wall time over its runs"
echo "(-s random -n $GRUNS) over one native run; -j 2 ratios: runs and wall"
echo "time of the default search, -j 2 over serial.  floor: stop = a seccomp"
echo "stop (a ptrace stop and resume), futex = a hand-off between two threads"
echo "in one process; the ptrace floors count each run's stops at one seccomp"
echo "stop plus one fork of a stopped tracee (halved for 2 CPUs)."
