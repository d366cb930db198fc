#!/bin/bash
# Set up and build (scripts/setup.sh), then run the whole test suite:
# unit, integration and fuzz.  Extra arguments go to `meson test`, e.g.
#
#   bash scripts/test.sh                     # everything
#   bash scripts/test.sh --suite unit        # one suite
#
# Exits with meson test's status.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${PTLOOM_BUILD:-build}
cd "$root"

bash scripts/setup.sh || exit 1
meson test -C "$build" --print-errorlogs --num-processes 2 "$@"
