#!/bin/sh
# Two tests that talk over a Unix socket while both run (a client that
# waits for its server, and the server; $1 is tests/targets/
# socket_pair_test): not split by `ptloom run --per-test` (alone, the
# client finds no server and fails).  Run in a scratch directory.
"$1" client &
"$1" server
wait
