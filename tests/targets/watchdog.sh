#!/bin/sh
# A shell watchdog (correct): runs "$@" in the background and kills it if
# it is still running after WATCHDOG seconds (default 5), as CI scripts do
# with `sleep N; kill`; exits with the program's status.
"$@" &
pid=$!
(sleep "${WATCHDOG:-5}"; kill "$pid" 2>/dev/null) &
dog=$!
wait "$pid"
status=$?
kill "$dog" 2>/dev/null
exit "$status"
