// Correct: C++17 std::thread producer/consumer with mutex and condvar.
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <thread>

namespace {

constexpr int kItems = 8;
constexpr int kDone = -1;

class Channel {
public:
	void send(int v)
	{
		{
			std::lock_guard<std::mutex> guard(lock_);
			items_.push_back(v);
		}
		ready_.notify_one();
	}

	int receive()
	{
		std::unique_lock<std::mutex> guard(lock_);
		ready_.wait(guard, [this] { return !items_.empty(); });
		int v = items_.front();
		items_.pop_front();
		return v;
	}

private:
	std::mutex lock_;
	std::condition_variable ready_;
	std::deque<int> items_;
};

} // namespace

int main()
{
	Channel ch;
	long sum = 0;

	std::thread consumer([&] {
		for (int v = ch.receive(); v != kDone; v = ch.receive())
			sum += v;
	});
	std::thread producer([&] {
		for (int i = 1; i <= kItems; i++)
			ch.send(i * 10);
		ch.send(kDone);
	});
	producer.join();
	consumer.join();

	std::printf("sum=%ld\n", sum);
	return sum == 10L * kItems * (kItems + 1) / 2 ? 0 : 1;
}
