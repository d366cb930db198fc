/*
 * C++20 synchronisation in libstdc++ (g++ -O2 -std=c++20): atomic
 * wait/notify (futexes on the atomic itself, or on libstdc++'s waiter
 * pool for bool and long), latch, barrier, counting and binary
 * semaphores, jthread with stop_token, async and promise/future,
 * shared_mutex, condition_variable_any with a stop_token.
 * `cpp20_sync bug`: main waits for the first of two notifications only,
 * then reads what the second one publishes (found with default options).
 */
#include <atomic>
#include <barrier>
#include <cassert>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <future>
#include <latch>
#include <mutex>
#include <semaphore>
#include <shared_mutex>
#include <stop_token>
#include <thread>
#include <vector>

static std::atomic<bool> first{false};
static std::atomic<long> go{0};
static std::atomic_flag second;

static int notify_twice(bool bug)
{
	int data = 0;
	std::thread t([&] {
		data = 1;
		first.store(true);
		first.notify_one();
		go.wait(0);
		data = 2;
		second.test_and_set();
		second.notify_all();
	});
	first.wait(false);
	assert(data >= 1);
	go.store(1);
	go.notify_one();
	if (!bug)
		second.wait(false);
	int d = data;
	t.join();
	return d;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "bug")) {
		int d = notify_twice(true);

		printf("data %d\n", d);
		assert(d == 2);
		return 0;
	}
	{
		std::atomic<int> flag{0};
		int data = 0;
		std::thread t([&] {
			data = 42;
			flag.store(1, std::memory_order_release);
			flag.notify_one();
		});
		flag.wait(0, std::memory_order_acquire);
		printf("atomic wait: %d\n", data);
		t.join();
		printf("notify twice: %d\n", notify_twice(false));
	}
	{
		std::latch l(3);
		std::atomic<int> n{0};
		std::vector<std::thread> v;
		for (int i = 0; i < 2; i++)
			v.emplace_back([&] {
				n++;
				l.count_down();
			});
		n++;
		l.arrive_and_wait();
		printf("latch: %d\n", n.load());
		for (auto &t : v)
			t.join();
	}
	{
		int phases = 0;
		std::barrier b(2, [&]() noexcept { phases++; });
		std::thread t([&] {
			for (int i = 0; i < 3; i++)
				b.arrive_and_wait();
		});
		for (int i = 0; i < 3; i++)
			b.arrive_and_wait();
		t.join();
		printf("barrier: %d phases\n", phases);
	}
	{
		std::counting_semaphore<4> s(0);
		std::binary_semaphore done(0);
		int got = 0;
		std::thread t([&] {
			for (int i = 0; i < 3; i++) {
				s.acquire();
				got++;
			}
			done.release();
		});
		for (int i = 0; i < 3; i++)
			s.release();
		done.acquire();
		t.join();
		printf("semaphore: %d\n", got);
	}
	{
		std::atomic<int> ticks{0};
		{
			std::jthread j([&](std::stop_token st) {
				while (!st.stop_requested()) {
					ticks++;
					std::this_thread::yield();
				}
			});
			while (ticks.load() < 2)
				std::this_thread::yield();
		}
		printf("jthread stopped\n");
	}
	{
		auto f = std::async(std::launch::async, [] { return 6 * 7; });
		std::promise<int> p;
		auto g = p.get_future();
		std::thread t([&] { p.set_value(5); });
		printf("async: %d %d\n", f.get(), g.get());
		t.join();
	}
	{
		std::shared_mutex sm;
		int v = 0, seen = 0;
		std::thread w([&] {
			std::unique_lock l(sm);
			v++;
		});
		std::thread r([&] {
			std::shared_lock l(sm);
			seen = v >= 0;
		});
		{
			std::unique_lock l(sm);
			v++;
		}
		w.join();
		r.join();
		printf("shared_mutex: %d %d\n", v, seen);
	}
	{
		std::condition_variable_any cv;
		std::mutex mu;
		bool ready = false;
		std::jthread t([&](std::stop_token st) {
			std::unique_lock l(mu);
			cv.wait(l, st, [&] { return ready; });
		});
		{
			std::lock_guard g(mu);
			ready = true;
		}
		cv.notify_all();
		t.join();
		std::jthread u([&](std::stop_token st) {
			std::unique_lock l(mu);
			cv.wait(l, st, [] { return false; });
		});
		u.request_stop();
		u.join();
		printf("condition_variable_any: done\n");
	}
	return 0;
}
