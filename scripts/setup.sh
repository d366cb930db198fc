#!/bin/bash
# Prepares a fresh Debian 12 for ptloom and builds it in build/.
#
#   bash scripts/setup.sh
#
# Installs, with apt-get and only when missing, the build tools and
# libraries (meson, ninja, a C/C++ compiler, libelf, libdw, capstone,
# protobuf-c, json-c, Criterion) and clang with libFuzzer for tests/fuzz.  That
# needs root; without it, the missing packages are named and we stop.
# Then configures build/ (once) and builds everything.
# $PTLOOM_BUILD names another build directory.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${PTLOOM_BUILD:-build}
cd "$root"

log() { echo "setup: $*" >&2; }

packages=(
	meson ninja-build pkg-config gcc g++
	libelf-dev libdw-dev libcapstone-dev
	libprotobuf-c-dev protobuf-c-compiler
	libjson-c-dev		# ptloom merge reads shard reports
	libcriterion-dev
	clang libclang-rt-dev	# tests/fuzz: clang -fsanitize=fuzzer
	libxml2-utils python3	# tests: xmllint and json.load check reports
	python3-pytest		# tests (cli-issue12): pytest under ptloom
	gdb			# tests: replay --gdb
	cmake make		# tests (issue9): a ctest project, make -j2
)

missing=()
for p in "${packages[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done

if ((${#missing[@]})); then
	if [ "$(id -u)" != 0 ]; then
		log "missing packages: ${missing[*]}"
		log "run as root (or: sudo apt-get install ${missing[*]})"
		exit 1
	fi
	log "installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# a configured build directory regenerates itself when meson.build changes
if [ ! -e "$build/build.ninja" ]; then
	meson setup "$build"
fi
ninja -C "$build"
