#!/bin/bash
# Fuzzes, with libFuzzer under ASan and UBSan, the schedule-file decoder
# and the script parser (tests/fuzz/fuzz_schedule.c, from a copy of
# tests/corpus), then the escaping of untrusted strings for terminals and
# reports (tests/fuzz/fuzz_escape.c), each for SECONDS.
#
#   tests/fuzz/run.sh [SECONDS]        default 20, or $FUZZ_SECONDS
#
# Exits 0 if nothing was found, non-zero on a crash, a leak, a hang or a
# broken contract (the input is kept and its path printed), and 77 (skip)
# when clang's libFuzzer is missing and we are not root to install it.
# As root it installs what is missing with apt-get, and only that.
set -euo pipefail

secs=${1:-${FUZZ_SECONDS:-20}}
root=$(cd "$(dirname "$0")/../.." && pwd)
keep=${FUZZ_ARTIFACTS:-/tmp/ptloom-fuzz-artifacts}

log() { echo "fuzz: $*" >&2; }

apt_updated=
install() {
	if [ "$(id -u)" != 0 ]; then
		log "missing $*, and not root to install it: skipping"
		exit 77
	fi
	if [ -z "$apt_updated" ]; then
		apt-get update -qq
		apt_updated=1
	fi
	log "installing $*"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends "$@" >/dev/null
}

command -v clang >/dev/null || install clang
command -v protoc-c >/dev/null || install protobuf-c-compiler
[ -e /usr/include/protobuf-c/protobuf-c.h ] || install libprotobuf-c-dev

tmp=$(mktemp -d /tmp/ptloom-fuzz.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# libFuzzer comes with compiler-rt, in a package named after clang's major
# version on Debian (libclang-rt-14-dev for clang 14)
probe() {
	echo 'int LLVMFuzzerTestOneInput(const char *d, long n)
	      { (void)d; (void)n; return 0; }' |
		clang -fsanitize=fuzzer -x c - -o "$tmp/probe" 2>/dev/null
}
if ! probe; then
	major=$(clang -dumpversion | cut -d. -f1)
	install "libclang-rt-$major-dev"
	probe || { log "clang -fsanitize=fuzzer still does not link"; exit 1; }
fi

protoc-c --proto_path="$root/proto" --c_out="$tmp" "$root/proto/schedule.proto"
for h in fuzz_schedule fuzz_escape; do
	clang -std=c17 -g -O1 -Wall -Wextra -Werror \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		-I"$tmp" \
		"$root/tests/fuzz/$h.c" \
		"$root/replayer/schedule.c" "$root/replayer/script.c" \
		"$root/analysis/escape.c" \
		"$root/tracer/event.c" "$tmp/schedule.pb-c.c" \
		-lprotobuf-c -o "$tmp/$h"
done

# libFuzzer adds what it finds to its first corpus directory: a copy
mkdir "$tmp/corpus" "$tmp/corpus-escape"
cp "$root"/tests/corpus/*.pb "$root"/tests/corpus/*.txt "$tmp/corpus/"
# strings a hostile program or file would use
printf '\033]0;pwned\007\033[2J\rptloom: PASS' >"$tmp/corpus-escape/esc"
printf 'a\xff\xfe\xc0\xaf\xe2\x80\xae\xc2\x9b\xed\xa0\x80\xf4\x90\x80\x80' \
	>"$tmp/corpus-escape/utf8"
printf 'line\nnext\ttab <&>"\x27 ]]> `code`' >"$tmp/corpus-escape/markup"
cp "$root"/tests/corpus/valid-*.pb "$tmp/corpus-escape/"
cat >"$tmp/dict" <<'DICT'
"PTLOOM\x00\x01"
"\x08\x01"
"# ptloom schedule script v1\x0a"
"run T"
"wake T"
"timeout T"
"step "
": "
"seed "
"points "
"sync"
"atomics"
"races"
"none"
"# "
"\x0a"
"="
"PATH=/usr/bin"
"BASH_ENV="
"BASH_FUNC_"
"LD_PRELOAD="
"/proc/self/pagemap"
"/etc/ld.so.cache"
DICT

mkdir -p "$keep"
for h in fuzz_schedule fuzz_escape; do
	corpus=$tmp/corpus
	[ $h = fuzz_escape ] && corpus=$tmp/corpus-escape
	log "$h: running for ${secs}s"
	set +e
	"$tmp/$h" -max_total_time="$secs" -max_len=4096 -timeout=10 \
		-rss_limit_mb=2048 -print_final_stats=1 -dict="$tmp/dict" \
		-artifact_prefix="$keep/$h-" "$corpus" 2>"$tmp/log"
	rc=$?
	set -e
	grep -E '^(stat::number_of_executed_units|stat::new_units_added)|^#[0-9]+ *DONE' \
		"$tmp/log" >&2 || true
	if [ $rc -ne 0 ]; then
		tail -n 60 "$tmp/log" >&2
		log "$h FAILED (exit $rc); the input is in $keep/"
		exit 1
	fi
	log "$h passed: no crash in ${secs}s"
done
