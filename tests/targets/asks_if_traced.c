/*
 * A program that asks whether it is traced, as test frameworks do before
 * breaking into a debugger at a failed check (doctest's WARN and CHECK,
 * Catch2 with --break) and as programs that refuse to run under one do:
 * the "TracerPid:" line of /proc/self/status, of its own task's file
 * under /proc/PID/task/TID and /proc/thread-self (from a second thread),
 * and of its forked child's own.  Natively each reads 0; exit status 1
 * names the first that did not (under ptloom the tracer is ptloom, which
 * answers 0 as a native run would).  Read with stdio and with one read(2)
 * of the whole file.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int traced;

/* path's TracerPid line read with stdio: anything but 0 counts */
static void ask_stdio(const char *path)
{
	FILE *f = fopen(path, "r");
	char l[256];

	while (f && fgets(l, sizeof(l), f))
		if (!strncmp(l, "TracerPid:", 10) &&
		    strcmp(l, "TracerPid:\t0\n")) {
			fprintf(stderr, "%s: %s", path, l);
			traced = 1;
		}
	if (f)
		fclose(f);
}

/* the same with one read(2) of an O_CLOEXEC descriptor */
static void ask_read(const char *path)
{
	char b[8192];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, b, sizeof(b) - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return;
	b[n] = 0;
	const char *p = strstr(b, "\nTracerPid:\t");

	if (!p || strncmp(p, "\nTracerPid:\t0\n", 14)) {
		fprintf(stderr, "%s: read: %.24s\n", path, p ? p + 1 : "none");
		traced = 1;
	}
}

static void ask(const char *path)
{
	ask_stdio(path);
	ask_read(path);
}

static void *worker(void *arg)
{
	(void)arg;
	ask("/proc/thread-self/status");
	return NULL;
}

int main(void)
{
	char task[64];
	pthread_t t;
	int st = 0;

	ask("/proc/self/status");
	snprintf(task, sizeof(task), "/proc/%d/task/%d/status", (int)getpid(),
		 (int)gettid());
	ask(task);
	pthread_create(&t, NULL, worker, NULL);
	pthread_join(t, NULL);
	pid_t c = fork();

	if (c == 0) {
		ask("/proc/self/status");
		_exit(traced);
	}
	if (c > 0 && waitpid(c, &st, 0) == c && WIFEXITED(st) &&
	    WEXITSTATUS(st))
		traced = 1;
	return traced;
}
