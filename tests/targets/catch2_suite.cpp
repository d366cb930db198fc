/*
 * A Catch2 (2.x, header-only) test binary: its tests run one after the
 * other in one process (test-suite mode splits them,
 * tests/integration/test_suite_mode.c).  Correct: "bank: locked" (two
 * threads add under a mutex) and "a [bracketed] name" (a name with
 * characters a test spec must escape).  Racy: "bank: racy, withdraw", a
 * lost update across two threads (`v = balance; balance = v + 1;`
 * unlocked), with a comma in its name; natively it nearly always passes.
 * "slow one" is hidden ([.]): Catch2 lists and runs it only when asked, so
 * it is no test of its own to test-suite mode.
 */
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
#include "bank_tests.h"

TEST_CASE("bank: locked", "[bank]")
{
	REQUIRE(locked_adds() == 2);
}

TEST_CASE("bank: racy, withdraw", "[bank]")
{
	REQUIRE(racy_adds() == 2);
}

TEST_CASE("a [bracketed] name")
{
	REQUIRE(1 + 1 == 2);
}

TEST_CASE("slow one", "[.]")
{
	FAIL("a hidden test runs only when asked");
}
