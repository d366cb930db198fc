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
#include <mutex>
#include <thread>

static volatile int balance;

TEST(Bank, Locked)
{
	std::mutex m;
	int n = 0;
	auto add = [&] {
		std::lock_guard<std::mutex> g(m);
		n++;
	};
	std::thread a(add), b(add);

	a.join();
	b.join();
	EXPECT_EQ(n, 2);
}

TEST(Bank, Racy)
{
	balance = 0;
	auto add = [] {
		int v = balance;

		balance = v + 1;
	};
	std::thread a(add), b(add);

	a.join();
	b.join();
	EXPECT_EQ(balance, 2) << "lost update";
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
