/*
 * A Boost.Test binary (linked with libboost_unit_test_framework): its
 * tests run one after the other in one process (test-suite mode splits
 * them, tests/integration/test_suite_mode.c).  In suite "bank": correct
 * "locked" (two threads add under a mutex) and racy "racy_withdraw", a
 * lost update across two threads (`v = balance; balance = v + 1;`
 * unlocked; natively it nearly always passes).  A template test case,
 * listed as "sizes<int>" and "sizes<unsigned long>" (a name with a space,
 * which a test's command line quotes).  "slow_one" is disabled: Boost.Test
 * runs it only when named, so it is no test of its own to test-suite mode.
 * The module's own arguments follow "--"; it checks that it got them.
 */
#define BOOST_TEST_MODULE bank_module
#ifndef BOOST_TEST_DYN_LINK
#define BOOST_TEST_DYN_LINK
#endif
#include <boost/test/unit_test.hpp>
#include <boost/mpl/list.hpp>
#include <cstring>
#include "bank_tests.h"

BOOST_AUTO_TEST_SUITE(bank)

BOOST_AUTO_TEST_CASE(locked)
{
	BOOST_TEST(locked_adds() == 2);
}

BOOST_AUTO_TEST_CASE(racy_withdraw)
{
	BOOST_TEST(racy_adds() == 2);
}

BOOST_AUTO_TEST_SUITE_END()

typedef boost::mpl::list<int, unsigned long> sizes_types;
BOOST_AUTO_TEST_CASE_TEMPLATE(sizes, T, sizes_types)
{
	BOOST_TEST(sizeof(T) >= sizeof(int));
}

BOOST_AUTO_TEST_CASE(slow_one, *boost::unit_test::disabled())
{
	BOOST_FAIL("a disabled test runs only when named");
}

/* "--" then "custom" on the command line, when it has a "--" */
BOOST_AUTO_TEST_CASE(module_arguments)
{
	auto &m = boost::unit_test::framework::master_test_suite();

	for (int i = 1; i < m.argc; i++)
		BOOST_TEST(std::strcmp(m.argv[i], "custom") == 0);
}
