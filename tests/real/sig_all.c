/*
 * kill(-1, sig) reaches every process the caller may signal but its own:
 * under ptloom, as far as the program's processes go (never ptloom, never
 * the rest of the machine).  The child sends SIGURG (ignored by default,
 * so harmless if it did escape) with kill(-1); the parent's handler
 * records the sender.  Also kill(0) from the child (its group: both) and
 * kill(-pgrp).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t got, from_child, child_got;
static volatile pid_t child;

static void on_urg(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	got++;
	from_child += si->si_pid == child && si->si_code == SI_USER;
}

static void on_urg_child(int sig)
{
	(void)sig;
	child_got++;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_sigaction = on_urg,
				.sa_flags = SA_SIGINFO | SA_RESTART };
	const char *how = argc > 1 ? argv[1] : "all";
	int st, p[2];
	char b;

	sigset_t urg;

	sigaction(SIGURG, &sa, NULL);
	if (pipe(p))
		return 2;
	/* the parent takes SIGURG only once it knows the child's pid (else
	 * a native run's handler may compare against 0) */
	sigemptyset(&urg);
	sigaddset(&urg, SIGURG);
	sigprocmask(SIG_BLOCK, &urg, NULL);
	child = fork();
	if (child == 0) {
		signal(SIGURG, on_urg_child);
		sigprocmask(SIG_UNBLOCK, &urg, NULL);
		if (!strcmp(how, "all"))
			kill(-1, SIGURG);
		else if (!strcmp(how, "zero"))
			kill(0, SIGURG);
		else
			kill(-getpgrp(), SIGURG);
		/* its own: none with -1, one with 0 and -pgrp */
		_exit(child_got == (strcmp(how, "all") ? 1 : 0) ? 0 : 3);
	}
	sigprocmask(SIG_UNBLOCK, &urg, NULL);
	close(p[1]);
	if (read(p[0], &b, 1) != 0) /* the child's end closed at its exit */
		return 4;
	waitpid(child, &st, 0);
	while (!got) {
		struct timespec ms = { 0, 1000000 };

		nanosleep(&ms, NULL);
	}
	printf("%s: parent got %d from the child %d, child status %d\n", how,
	       (int)got, (int)from_child, WEXITSTATUS(st));
	return 0;
}
