#!/usr/bin/env bash
# Compare bug-finding on the buggy and correct examples/targets:
#   stress   the -O0 native binary STRESS_RUNS times (timeout 5 s each)
#   tsan     gcc -fsanitize=thread -g -O1 -pthread, TSAN_RUNS runs
#   helgrind valgrind --tool=helgrind on the -O0 binary, once (timeout 60 s)
#   ptloom   ptloom run -q --seed 1 --points sync,races (sync,atomics for treiber_*)
# Results go to $CMP_RESULTS (default /tmp/ptloom-compare), one file per
# tool and program; the last phase prints a markdown table (COMPARISON.md).
# Not part of the test suite; takes several minutes.
#
#   bench/compare.sh [stress|tsan|helgrind|ptloom|table ...]   (default: all)
set -u -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${PTLOOM_BUILD:-$ROOT/build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
RES=${CMP_RESULTS:-/tmp/ptloom-compare}
STRESS_RUNS=${STRESS_RUNS:-1000}
TSAN_RUNS=${TSAN_RUNS:-20}
PTLOOM_TIMEOUT=${PTLOOM_TIMEOUT:-600}
mkdir -p "$RES"

# name:dir:kind, overridable with $CMP_PROGRAMS   (dir: examples/ or tests/ in the build; source in examples/ or tests/targets/)
PROGRAMS=${CMP_PROGRAMS:-"
bank:examples:bug deadlock:examples:bug lost_wakeup:examples:bug
counter_race:tests:bug bank_nolock:tests:bug treiber_aba:tests:bug
spsc_ring:tests:bug crash_segv:tests:bug exit_code:tests:bug
sleep_assume:tests:bug timedlock_abort:tests:bug
bank_fixed:examples:ok deadlock_fixed:examples:ok lost_wakeup_fixed:examples:ok
bank_locked:tests:ok treiber_ok:tests:ok peterson:tests:ok spin_yield:tests:ok
"}

src_of() { case $2 in examples) echo "$ROOT/examples/$1.c" ;; *) echo "$ROOT/tests/targets/$1.c" ;; esac; }

phase_stress() {
	for e in $PROGRAMS; do
		IFS=: read -r name dir _ <<<"$e"
		bin=$BUILD/$dir/$name
		fail=0 hang=0
		t0=$(date +%s%N)
		for ((i = 0; i < STRESS_RUNS; i++)); do
			# in a subshell, so bash's "Aborted" notices go to /dev/null
			rc=$( (timeout -k 1 5 "$bin" >/dev/null 2>&1; echo $?) 2>/dev/null)
			[ $rc -ne 0 ] && fail=$((fail + 1))
			[ $rc -eq 124 ] || [ $rc -eq 137 ] && hang=$((hang + 1))
		done
		t1=$(date +%s%N)
		secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
		echo "$fail $hang $STRESS_RUNS $secs" >"$RES/stress.$name"
		echo "stress $name: $fail/$STRESS_RUNS failed ($hang timeouts), ${secs}s"
	done
}

phase_tsan() {
	mkdir -p "$RES/tsan-bin"
	for e in $PROGRAMS; do
		IFS=: read -r name dir _ <<<"$e"
		bin=$RES/tsan-bin/$name
		if ! gcc -fsanitize=thread -g -O1 -pthread -o "$bin" "$(src_of "$name" "$dir")" 2>"$RES/tsan.$name.cc"; then
			echo "compile-error" >"$RES/tsan.$name"
			continue
		fi
		reported=0 fail=0 hang=0 kinds=""
		for ((i = 0; i < TSAN_RUNS; i++)); do
			# exitcode=0: a report does not change the exit status, so a
			# non-zero status is the program's own failure (or a timeout)
			TSAN_OPTIONS="exitcode=0" timeout -k 2 30 "$bin" >/dev/null 2>"$RES/tsan.$name.err"
			rc=$?
			[ $rc -ne 0 ] && fail=$((fail + 1))
			[ $rc -eq 124 ] || [ $rc -eq 137 ] && hang=$((hang + 1))
			k=$(sed -n 's/^WARNING: ThreadSanitizer: \(.*\) (pid=.*/\1/p' "$RES/tsan.$name.err" | sort -u | tr ' ' '-' | tr '\n' ' ')
			if [ -n "$k" ]; then
				reported=$((reported + 1))
				cp "$RES/tsan.$name.err" "$RES/tsan.$name.report"
				for x in $k; do case " $kinds " in *" $x "*) ;; *) kinds="$kinds $x" ;; esac; done
			fi
		done
		echo "$reported $fail $hang $TSAN_RUNS${kinds}" >"$RES/tsan.$name"
		echo "tsan $name: reports in $reported/$TSAN_RUNS runs [${kinds# }], $fail failed ($hang timeouts)"
	done
}

phase_helgrind() {
	for e in $PROGRAMS; do
		IFS=: read -r name dir _ <<<"$e"
		bin=$BUILD/$dir/$name
		timeout -k 5 60 valgrind --tool=helgrind "$bin" >/dev/null 2>"$RES/helgrind.$name.log"
		rc=$?
		errs=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' "$RES/helgrind.$name.log" | tail -1)
		# kinds: the first line of each error block (after a line of dashes),
		# without thread numbers and addresses
		kinds=$(awk '/^==[0-9]+== ----------+$/ { hdr = 1; next }
			hdr && /^==[0-9]+== ./ { sub(/^==[0-9]+== /, ""); print; hdr = 0 }' "$RES/helgrind.$name.log" |
			sed -E 's/^Possible data race.*/data race/; s/Thread #[0-9]+:? ?//; s/ ?"?0x[0-9A-Fa-f]+( before 0x[0-9A-Fa-f]+)?"? ?/ /g; s/  +/ /g; s/ *$//' |
			sort -u | paste -sd';' | sed 's/;/; /g')
		echo "${errs:-?} $rc ${kinds}" >"$RES/helgrind.$name"
		echo "helgrind $name: ${errs:-?} errors, exit $rc [${kinds}]"
	done
}

phase_ptloom() {
	for e in $PROGRAMS; do
		IFS=: read -r name dir _ <<<"$e"
		bin=$BUILD/$dir/$name
		points=sync,races
		case $name in treiber_*) points=sync,atomics ;; esac
		rm -rf /tmp/cmp
		t0=$(date +%s%N)
		line=$(timeout -k 5 "$PTLOOM_TIMEOUT" "$BUILD/ptloom" run -q --seed 1 -o /tmp/cmp --points "$points" -- "$bin" 2>"$RES/ptloom.$name.err" | tail -1)
		rc=$?
		t1=$(date +%s%N)
		secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
		echo "$rc $secs $points $line" >"$RES/ptloom.$name"
		echo "ptloom $name ($points): exit $rc, ${secs}s: $line"
	done
}

phase_table() {
	echo "| Program | Bug? | Stress (native -O0, fails/${STRESS_RUNS}) | TSan (-O1, runs reporting/${TSAN_RUNS}; failures) | Helgrind (-O0, 1 run) | ptloom (verdict, runs, s) |"
	echo "|---|---|---|---|---|---|"
	for e in $PROGRAMS; do
		IFS=: read -r name _ kind <<<"$e"
		s="-" t="-" h="-" p="-"
		if [ -f "$RES/stress.$name" ]; then
			read -r f hg n _ <"$RES/stress.$name"
			s="$f/$n"; [ "$hg" != 0 ] && s="$s ($hg hung)"
		fi
		if [ -f "$RES/tsan.$name" ]; then
			read -r r f hg n kinds <"$RES/tsan.$name"
			t="$r/$n"; [ -n "${kinds:-}" ] && t="$t ${kinds// /, }"
			[ "$f" != 0 ] && t="$t; $f failed" && [ "$hg" != 0 ] && t="$t ($hg hung)"
		fi
		if [ -f "$RES/helgrind.$name" ]; then
			read -r er rc kinds <"$RES/helgrind.$name"
			h="$er errors"; [ -n "${kinds:-}" ] && h="$h: $kinds"
			[ "$rc" = 124 ] || [ "$rc" = 137 ] && h="$h; hung (timeout 60 s)"
			case $rc in 0|124|137) ;; *) h="$h; exit $rc" ;; esac
		fi
		if [ -f "$RES/ptloom.$name" ]; then
			read -r rc secs points line <"$RES/ptloom.$name"
			line=${line#ptloom: }
			# the deadlock's blocked threads are in the ptloom.* file
			line=$(sed -E 's/^FAIL deadlock \(.*\) after/FAIL deadlock after/' <<<"$line")
			p="${line//|/\\|} (${secs} s, --points $points)"
		fi
		echo "| \`$name\` | $kind | $s | $t | $h | $p |"
	done
}

phases=${*:-stress tsan helgrind ptloom table}
for ph in $phases; do "phase_$ph"; done
