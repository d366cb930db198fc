#!/bin/sh
# The second level of tests/targets/outer.sh: runs the program it is given
# and passes its status on, as a test script would.
"$@"
status=$?
echo "inner: $1 exited with $status"
exit $status
