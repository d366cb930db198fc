/*
 * A program that looks at what it inherited: SIGPIPE ignored or not, as
 * argv[1] ("ignored" or "default") says it must be (exit status 1 if
 * not).  An ignored signal survives fork and exec: under a parent that
 * ignores SIGPIPE (a CI service systemd started: IgnoreSIGPIPE=yes) a
 * program's write to a closed pipe fails with EPIPE instead of killing
 * it, so the same must hold under ptloom, whose own SIGPIPE is ignored
 * whatever it inherited.  A thread, so that there is a schedule.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

static void *worker(void *arg)
{
	return arg;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	pthread_t t;

	sigaction(SIGPIPE, NULL, &sa);
	pthread_create(&t, NULL, worker, NULL);
	pthread_join(t, NULL);
	int ignored = sa.sa_handler == SIG_IGN;
	int want = argc > 1 && !strcmp(argv[1], "ignored");

	if (ignored != want) {
		fprintf(stderr, "SIGPIPE is %s\n",
			ignored ? "ignored" : "not ignored");
		return 1;
	}
	return 0;
}
