#!/bin/sh
# A suite whose one test passes and whose runner then fails on its own
# (a check of a file no test writes): `ptloom run --per-test` reports the
# runner's failure as a test of its own.  $1: the built targets' directory.
"$1"/bank_locked
test -f /nonexistent-ptloom-file
