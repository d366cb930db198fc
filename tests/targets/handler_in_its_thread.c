/*
 * A signal handler runs between two instructions of the thread it
 * interrupts: another thread sends SIGUSR1 to a thread that adds to a
 * counter (a load, an add, a store: `counter++`), and the handler adds to
 * the same counter.
 *
 *   main      buggy: main adds three times, the handler once; when the
 *             signal lands between main's load and its store, the
 *             handler's increment is lost (4 expected)
 *   worker    buggy: the same in a worker main sends the signal to (it
 *             then waits for its handler: sigsuspend, SIGUSR1 blocked)
 *   blocked   correct: main blocks SIGUSR1 around its increments
 *   flag      correct: the handler only sets a volatile sig_atomic_t,
 *             which main reads once the sender is joined
 *   fault     correct: main's own fault (a store to a page it protected)
 *             runs the SIGSEGV handler, which reads what main wrote
 *             before and opens the page; the store is made again
 *   longjmp   correct: the handler leaves by siglongjmp, out of a wait
 *             nobody ends, and main goes on with its own data
 */
#define _DEFAULT_SOURCE /* sigsetjmp, MAP_ANONYMOUS with -std=c17 */
#include <pthread.h>
#include <semaphore.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static volatile long counter;
static volatile sig_atomic_t got, handled;
static pthread_t target;
static const char *mode = "";
static long before_fault;
static char *page;
static sigjmp_buf back;

static void on_usr1(int sig)
{
	(void)sig;
	if (!strcmp(mode, "flag"))
		got = 1;
	else if (!strcmp(mode, "longjmp"))
		siglongjmp(back, 1);
	else
		counter++;
	handled = 1;
}

static void on_segv(int sig)
{
	(void)sig;
	if (before_fault != 41)
		abort();
	before_fault = 42;
	mprotect(page, 4096, PROT_READ | PROT_WRITE);
}

static void *sender(void *arg)
{
	(void)arg;
	pthread_kill(target, SIGUSR1);
	return NULL;
}

static void add_three(void)
{
	for (int i = 0; i < 3; i++)
		counter++;
}

static void *worker(void *arg)
{
	sigset_t usr1, old;

	(void)arg;
	add_three();
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, &old);
	while (!handled)
		sigsuspend(&old);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return NULL;
}

static void *idle(void *arg)
{
	return arg;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	pthread_t t, w;

	if (argc > 1)
		mode = argv[1];
	sigaction(SIGUSR1, &sa, NULL);
	if (!strcmp(mode, "fault")) {
		struct sigaction sv = { .sa_handler = on_segv };

		sigaction(SIGSEGV, &sv, NULL);
		page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
			    -1, 0);
		if (page == MAP_FAILED)
			return 2;
		pthread_create(&t, NULL, idle, NULL);
		before_fault = 41;
		page[0] = 1; /* SIGSEGV, handled, then made again */
		pthread_join(t, NULL);
		printf("page %d, %ld\n", page[0], before_fault);
		return page[0] == 1 && before_fault == 42 ? 0 : 1;
	}
	if (!strcmp(mode, "longjmp")) {
		sem_t never;

		sem_init(&never, 0, 0);
		counter = 1;
		target = pthread_self();
		if (!sigsetjmp(back, 1)) {
			pthread_create(&t, NULL, sender, NULL);
			while (sem_wait(&never))
				; /* until the handler jumps out */
		}
		counter++;
		pthread_join(t, NULL);
		printf("counter %ld\n", counter);
		return counter == 2 ? 0 : 1;
	}
	if (!strcmp(mode, "worker")) {
		pthread_create(&w, NULL, worker, NULL);
		target = w;
		pthread_create(&t, NULL, sender, NULL);
		pthread_join(t, NULL);
		pthread_join(w, NULL);
	} else {
		target = pthread_self();
		pthread_create(&t, NULL, sender, NULL);
		if (!strcmp(mode, "blocked")) {
			sigset_t usr1;

			sigemptyset(&usr1);
			sigaddset(&usr1, SIGUSR1);
			pthread_sigmask(SIG_BLOCK, &usr1, NULL);
			add_three();
			pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
		} else {
			add_three();
		}
		pthread_join(t, NULL);
	}
	if (!strcmp(mode, "flag")) {
		printf("got %d, counter %ld\n", (int)got, counter);
		return got == 1 && counter == 3 ? 0 : 1;
	}
	printf("counter %ld\n", counter);
	if (counter != 4)
		abort();
	return 0;
}
