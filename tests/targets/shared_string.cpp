// Two threads append to one std::string without a lock: the append is
// libstdc++'s code (basic_string::_M_append, not inlined), so every
// access of the race is the library's; a lost or torn append shows as a
// wrong length, or a corrupted heap.  -DFIXED: a mutex around the append.
// Both print from their threads through std::cout, as the standard
// allows without a lock (the stream's own fields are libstdc++'s state).
#include <cassert>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>

static std::string log_line;
#ifdef FIXED
static std::mutex lock;
#endif

static void add(char c)
{
	{
#ifdef FIXED
		std::lock_guard<std::mutex> g(lock);
#endif
		log_line.append(20, c);
	}
	std::cout << "appended " << c << std::endl;
}

int main()
{
	std::thread a(add, 'a'), b(add, 'b');

	a.join();
	b.join();
	assert(log_line.size() == 40);
	std::cout << log_line.size() << " characters" << std::endl;
	return 0;
}
