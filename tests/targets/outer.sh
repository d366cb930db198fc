#!/bin/sh
# A two-level shell wrapper in front of a program (tests/integration,
# issue9): outer.sh runs inner.sh with sh, inner.sh runs the program.
sh "$(dirname "$0")/inner.sh" "$@" || exit $?
echo "outer: done"
