/*
 * Two threads share a std::binary_semaphore: each acquires it, counts,
 * and releases it.  Correct by the standard, and it hangs on Debian 12:
 * libstdc++ 12's acquire (__atomic_wait_address_bare) reads the value its
 * futex wait will compare against before it spins.  A thread that reads
 * 1, loses the semaphore to the other thread while it spins, and is
 * about to wait when the other releases it (1 again, its futex wake
 * finding nobody) sleeps with the semaphore free: a lost wakeup of the
 * family of GCC bug 98033 (pytorch stopped using std::counting_semaphore
 * with libstdc++ for it).  `cpp_semaphore release` prints the libstdc++
 * release it was built with.
 */
#include <cstdio>
#include <cstring>
#include <semaphore>
#include <thread>

static std::binary_semaphore sem(1);
static int shared;

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "release")) {
#ifdef _GLIBCXX_RELEASE
		printf("%d\n", _GLIBCXX_RELEASE);
#else
		printf("0\n");
#endif
		return 0;
	}
	std::thread a([] {
		sem.acquire();
		shared++;
		sem.release();
	});
	std::thread b([] {
		sem.acquire();
		shared++;
		sem.release();
	});
	a.join();
	b.join();
	printf("%d\n", shared);
	return shared != 2;
}
