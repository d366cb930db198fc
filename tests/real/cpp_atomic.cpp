// Correct: std::thread workers count with std::atomic fetch_add and hand
// a result over with a release store / acquire spin; built at -O2.
// `cpp_atomic racy` is the buggy twin: the count is a load then a store
// (each atomic, the increment not), so an update can be lost.
#include <atomic>
#include <cassert>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

static std::atomic<long> count{0};
static std::atomic<bool> ready{false};
static long payload;

int main(int argc, char **argv)
{
	bool racy = argc > 1 && !std::strcmp(argv[1], "racy");
	const int threads = 3, each = 2;
	std::vector<std::thread> pool;

	for (int i = 0; i < threads; i++)
		pool.emplace_back([racy] {
			for (int k = 0; k < each; k++) {
				if (racy)
					count.store(count.load() + 1);
				else
					count.fetch_add(1);
			}
		});
	std::thread producer([] {
		payload = 42;
		ready.store(true, std::memory_order_release);
	});
	while (!ready.load(std::memory_order_acquire))
		std::this_thread::yield();
	long got = payload;

	producer.join();
	for (auto &t : pool)
		t.join();
	assert(count.load() == threads * each);
	std::printf("count %ld payload %ld\n", count.load(), got);
	return 0;
}
