// Correct: threads that draw their work from std::random_device, which
// libstdc++ reads from the CPU's rdrand (rdseed) where there is one, as
// C++ tests seed their random choices.  Prints what each thread drew.
#include <cstdio>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

int main()
{
	std::random_device rd;
	std::mutex m;
	std::vector<unsigned> drawn(2);
	unsigned first = rd();
	std::vector<std::thread> ts;

	for (int i = 0; i < 2; i++)
		ts.emplace_back([&, i] {
			std::mt19937 gen(rd());
			std::lock_guard<std::mutex> g(m);
			drawn[i] = gen() % 1000;
		});
	for (auto &t : ts)
		t.join();
	std::printf("token %s first %u drawn %u %u\n",
		    rd.entropy() > 0 ? "hw" : "other", first, drawn[0],
		    drawn[1]);
	return 0;
}
