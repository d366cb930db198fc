#!/bin/bash
# Prepares a fresh Debian 12 for ptloom and builds it in build/.
#
#   bash scripts/setup.sh
#
#   bash scripts/setup.sh --tests    # also what only the tests use
#
# Installs, with apt-get and only when missing, the build tools and
# libraries (meson, ninja, a C/C++ compiler, libelf, libdw, capstone,
# protobuf-c, json-c, Criterion) and clang with libFuzzer for tests/fuzz;
# with --tests (scripts/test.sh) also chromium, for the headless-browser
# test of `ptloom show --format html`, and golang-go and rustc for the real
# Go and Rust programs of tests/real (about a minute of apt-get in CI; the
# demo does not wait for them).  That needs root; without it, the missing
# packages are named and we stop.
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
	libiberty-dev		# C++ and Rust demangling
	libjson-c-dev		# ptloom merge reads shard reports
	libcriterion-dev
	libgtest-dev		# tests: a GoogleTest binary's tests split
	catch2 doctest-dev	# tests: Catch2's and doctest's tests split
	libboost-test-dev	# tests: a Boost.Test binary's tests split
	clang libclang-rt-dev	# tests/fuzz: clang -fsanitize=fuzzer
	libxml2-utils python3	# tests: xmllint and json.load check reports
	python3-pytest		# tests (python): pytest under ptloom
	python3-dev		# tests (python): a shared-libpython python
	python3-venv		# tests (python): a venv's python
	gdb			# tests: replay --gdb
	pigz zstd pbzip2 lbzip2	# tests/real: real multithreaded tools
	libglib2.0-dev		# tests/real: glib's thread pool and locks; event_loops
	cmake make		# tests (issue9): a ctest project, make -j2
)
# only for the tests, and not fatal: a test that needs one skips, saying why
optional=()
if [ "${1:-}" = --tests ]; then
	optional+=(chromium)	# tests (reports): show --format html rendered
	optional+=(golang-go)	# tests/real: Go's runtime (about 335 MB)
	optional+=(rustc)	# tests/real: Rust's std threads
	optional+=(libboost-thread-dev)	# tests/real: Boost.Asio's thread pool
	optional+=(libtbb-dev)	# tests/real: oneTBB's parallel_for
	optional+=(libomp-dev)	# tests/real: clang -fopenmp's runtime
fi

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
	updated=1
	apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

for p in "${optional[@]}"; do
	if dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		grep -q 'install ok installed'; then
		continue
	fi
	if [ "$(id -u)" != 0 ]; then
		log "not installing $p (not root): the tests that need it skip"
		continue
	fi
	log "installing $p (for the tests)"
	if ! { [ -n "${updated:-}" ] || apt-get update -qq; } ||
		! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends "$p"; then
		log "could not install $p: the tests that need it skip"
	fi
done

# a configured build directory regenerates itself when meson.build changes
if [ ! -e "$build/build.ninja" ]; then
	meson setup "$build"
fi
ninja -C "$build"
