/*
 * SIGIO for an owner process (O_ASYNC, F_SETOWN getpid()): the kernel
 * sends it to the whole process when the worker writes to the pipe, and
 * any thread that does not block it may take it (a choice).  Correct:
 * the handler only sets a flag, whoever runs it, and main polls the flag.  argv[1] "tid": the owner is main itself (F_SETOWN_EX,
 * F_OWNER_TID), so the signal is main's alone.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t got;
static int p[2];

static void on_io(int sig)
{
	(void)sig;
	got++;
}

static void *worker(void *arg)
{
	(void)arg;
	if (write(p[1], "x", 1) != 1)
		return (void *)1;
	return NULL;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_io, .sa_flags = SA_RESTART };
	pthread_t t;
	char b;

	sigaction(SIGIO, &sa, NULL);
	if (pipe(p))
		return 2;
	if (argc > 1 && !strcmp(argv[1], "tid")) {
		struct f_owner_ex o = { F_OWNER_TID, (pid_t)syscall(SYS_gettid) };

		fcntl(p[0], F_SETOWN_EX, &o);
	} else {
		fcntl(p[0], F_SETOWN, getpid());
	}
	fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_ASYNC);
	pthread_create(&t, NULL, worker, NULL);
	while (!got) {
		struct timespec ms = { 0, 1000000 };

		nanosleep(&ms, NULL);
	}
	if (read(p[0], &b, 1) != 1)
		return 3;
	pthread_join(t, NULL);
	printf("sigio %d\n", (int)got);
	return 0;
}
