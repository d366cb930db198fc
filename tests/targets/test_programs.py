"""pytest tests that run compiled test programs through subprocess
(tests/integration test_suite_mode.c): `ptloom run --per-test -- python3 -m
pytest` explores each program on its own.  PTLOOM_TARGETS names the
directory of the built targets."""
import os
import subprocess

TARGETS = os.environ.get("PTLOOM_TARGETS", "build/tests")


def run(name):
    return subprocess.run([os.path.join(TARGETS, name)],
                          capture_output=True, check=False).returncode


def test_locked_withdraw():
    assert run("bank_locked") == 0


def test_atomic_increment():
    assert run("plain_inc_fixed_O0") == 0


def test_racy_withdraw():
    assert run("bank_nolock") == 0
