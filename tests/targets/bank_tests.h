/*
 * The test bodies the GoogleTest, Catch2, doctest and Boost.Test binaries
 * share (gtest_suite.cpp, catch2_suite.cpp, doctest_suite.cpp,
 * boost_suite.cpp): each framework asserts on what they return.
 */
#include <mutex>
#include <thread>

static volatile int balance;

/* two threads add one each under a mutex: 2 */
static int locked_adds()
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
	return n;
}

/* two threads add one each to balance unlocked (`v = balance; balance =
 * v + 1;`): 2, or 1 when one's load and store straddle the other's (a
 * lost update; natively it nearly always returns 2) */
static int racy_adds()
{
	balance = 0;
	auto add = [] {
		int v = balance;

		balance = v + 1;
	};
	std::thread a(add), b(add);

	a.join();
	b.join();
	return balance;
}
