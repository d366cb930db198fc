/*
 * A doctest test binary: its tests run one after the other in one
 * process (test-suite mode splits them,
 * tests/integration/test_suite_mode.c).  Correct: "bank: locked" (two
 * threads add under a mutex), "soft check" (a WARN that fails, which only
 * warns) and "known bug" (a check that fails in a test marked
 * should_fail, which passes so): doctest breaks into a debugger at a
 * failed check when it finds one in /proc/self/status, so both would
 * crash with SIGTRAP under a tracer that showed itself there.  Racy:
 * "bank: racy, withdraw", a lost update across two threads, with a comma
 * in its name; natively it nearly always passes.  "skipped" is skipped:
 * doctest lists and runs it only with --no-skip.  Built with -DCASES,
 * one more test, "Bank: Locked", whose name matches "bank: locked" too
 * (doctest matches names without case).
 */
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
#include "bank_tests.h"

TEST_CASE("bank: locked")
{
	CHECK(locked_adds() == 2);
}

TEST_CASE("bank: racy, withdraw")
{
	REQUIRE(racy_adds() == 2);
}

TEST_CASE("soft check")
{
	WARN(1 + 1 == 3);
	CHECK(1 + 1 == 2);
}

TEST_CASE("known bug" * doctest::should_fail())
{
	CHECK(1 + 1 == 3);
}

#ifdef CASES
TEST_CASE("Bank: Locked")
{
	CHECK(true);
}
#endif

TEST_CASE("skipped" * doctest::skip())
{
	REQUIRE(false);
}
