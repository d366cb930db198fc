// oneTBB's parallel_for in an arena of 2 threads, counting its
// iterations: with a std::atomic (correct), or with `racy` a plain long,
// whose increments of two chunks run on two threads can lose one (the
// program aborts when the count is short).  Every chunk of the
// parallel_for takes and leaves words of libtbb's task pools with atomic
// instructions, so the plain counter's race is ordered only by "the
// thread that left the word nonzero may have released it since".
#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

enum { N = 8, THREADS = 2 };

static std::atomic<long> counted{ 0 };
static long plain;
static bool racy;

int main(int argc, char **argv)
{
	racy = argc > 1 && !strcmp(argv[1], "racy");
	tbb::global_control gc(tbb::global_control::max_allowed_parallelism,
			       THREADS);
	tbb::task_arena arena(THREADS);

	arena.execute([] {
		tbb::parallel_for(tbb::blocked_range<int>(0, N, 1),
				  [](const tbb::blocked_range<int> &r) {
					  for (int i = r.begin(); i != r.end();
					       ++i) {
						  if (racy)
							  plain++;
						  else
							  counted++;
					  }
				  });
	});
	long n = racy ? plain : counted.load();

	printf("counted %ld of %d\n", n, N);
	if (n != N)
		abort();
	return 0;
}
