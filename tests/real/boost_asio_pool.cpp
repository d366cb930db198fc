/*
 * Boost.Asio: a thread_pool of two threads running handlers posted to a
 * strand (the strand's mutex, the scheduler's mutex and condition
 * variable, shared_ptr reference counts: atomics), then an io_context run
 * by main and a boost::thread.  The handlers' counter is ordered by the
 * strand: no failure, and the systematic search repeats every run (before,
 * points lifted while the pool's threads waited came back after main's
 * wake at a time that depended on the fast path: "the program does not
 * repeat itself" at run 133).
 * `boost_asio_pool racy`: the handlers are posted to the pool itself, not
 * the strand (a lost update), found with default options.
 */
#include <boost/asio.hpp>
#include <boost/thread.hpp>
#include <cassert>
#include <cstdio>
#include <cstring>

int main(int argc, char **argv)
{
	bool racy = argc > 1 && !strcmp(argv[1], "racy");
	long count = 0, sum = 0;

	{
		boost::asio::thread_pool pool(2);
		auto strand = boost::asio::make_strand(pool);

		for (int i = 0; i < 6; i++) {
			if (racy)
				boost::asio::post(pool, [&] { count++; });
			else
				boost::asio::post(strand, [&] { count++; });
		}
		pool.join();
	}
	printf("count %ld\n", count);
	assert(count == 6);
	{
		boost::asio::io_context io;
		auto strand = boost::asio::make_strand(io);

		for (int i = 0; i < 4; i++)
			boost::asio::post(strand, [&, i] { sum += i; });
		boost::thread t([&] { io.run(); });
		io.run();
		t.join();
	}
	printf("sum %ld\n", sum);
	assert(sum == 6);
	return 0;
}
