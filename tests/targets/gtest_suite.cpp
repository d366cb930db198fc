/*
 * A GoogleTest binary: its tests run one after the other in one process
 * (test-suite mode splits them, tests/integration/test_suite_mode.c).
 * Correct: Bank.Locked (two threads add under a mutex) and the two
 * instances of Nums/Square.Positive (a value-parameterised test, named as
 * GoogleTest lists it).  Racy: Bank.Racy, a lost update across two
 * threads (`v = balance; balance = v + 1;` unlocked); natively it nearly
 * always passes.  Bank.DISABLED_Slow is disabled: GoogleTest lists it but
 * runs it only with --gtest_also_run_disabled_tests, so it is no test of
 * its own to test-suite mode.
 */
#include <gtest/gtest.h>
#include "bank_tests.h"

TEST(Bank, Locked)
{
	EXPECT_EQ(locked_adds(), 2);
}

TEST(Bank, Racy)
{
	EXPECT_EQ(racy_adds(), 2) << "lost update";
}

TEST(Bank, DISABLED_Slow)
{
	FAIL() << "a disabled test runs only when asked";
}

class Square : public ::testing::TestWithParam<int> {};

TEST_P(Square, Positive)
{
	EXPECT_GT(GetParam() * GetParam(), 0);
}

INSTANTIATE_TEST_SUITE_P(Nums, Square, ::testing::Values(1, 2));
