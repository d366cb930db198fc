/*
 * flock(2) between threads (and processes) that open one file each, so
 * that a second locker waits in the kernel while the first holds it
 * (tests/integration: issue10 flock).  argv[1]: the lock file; argv[2]:
 *   (none)  two threads update a counter under the lock: always 6;
 *   racy    the second thread does not lock: a lost update (exit 1);
 *   abba    two locks (argv[1] and argv[1].b) taken in opposite orders:
 *           a deadlock in some schedules;
 *   fork    a child process and the parent add to a counter in a file
 *           under the lock: always 6;
 *   lockf   the same under a POSIX record lock (lockf: F_SETLKW);
 *   ofd     two threads as in the first, under an open file
 *           description's record lock (F_OFD_SETLKW) of bytes 0-9;
 *   held    main takes the flock of a file it opened read-only before its
 *           first thread, and after the join another description of the
 *           file must not get it (a run forked from a checkpoint shares
 *           the template's description: one run's unlock was the next
 *           run's, a false failure);
 *   vmsplice  a thread vmsplices a byte into a full pipe, which waits in
 *           the kernel until main reads from the pipe, after a sleep: a
 *           wait ptloom does not schedule.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *path, *mode = "";
static char path_b[4096];
static int counter;

static int open_lock(const char *p)
{
	int fd = open(p, O_RDWR | O_CREAT, 0644);

	if (fd < 0)
		abort();
	return fd;
}

/* lock or unlock fd: flock, or bytes 0-9 by F_OFD_SETLKW ("ofd") */
static void lock_fd(int fd, bool on)
{
	if (!strcmp(mode, "ofd")) {
		struct flock fl = { .l_type = on ? F_WRLCK : F_UNLCK,
				    .l_whence = SEEK_SET, .l_len = 10 };

		if (fcntl(fd, F_OFD_SETLKW, &fl))
			abort();
	} else {
		flock(fd, on ? LOCK_EX : LOCK_UN);
	}
}

static void *worker(void *arg)
{
	long me = (long)arg;
	int fd = open_lock(path);
	bool lock = strcmp(mode, "racy") || me == 0;

	for (int i = 0; i < 3; i++) {
		if (lock)
			lock_fd(fd, true);
		int c = counter;

		usleep(1000);
		counter = c + 1;
		if (lock)
			lock_fd(fd, false);
	}
	close(fd);
	return NULL;
}

static void *abba(void *arg)
{
	long me = (long)arg;
	int a = open_lock(me ? path_b : path), b = open_lock(me ? path : path_b);

	flock(a, LOCK_EX);
	usleep(1000);
	flock(b, LOCK_EX);
	counter++;
	flock(b, LOCK_UN);
	flock(a, LOCK_UN);
	close(a);
	close(b);
	return NULL;
}

/* the counter in the lock file itself, read and written under the lock */
static void add_in_file(void)
{
	int fd = open_lock(path);

	for (int i = 0; i < 3; i++) {
		char b[16] = { 0 };

		if (!strcmp(mode, "lockf"))
			lockf(fd, F_LOCK, 0);
		else
			flock(fd, LOCK_EX);
		pread(fd, b, sizeof(b) - 1, 0);
		int c = atoi(b);

		usleep(1000);
		snprintf(b, sizeof(b), "%8d", c + 1);
		pwrite(fd, b, strlen(b), 0);
		if (!strcmp(mode, "lockf"))
			lockf(fd, F_ULOCK, 0);
		else
			flock(fd, LOCK_UN);
	}
	close(fd);
}

static int full[2]; /* the "vmsplice" mode's pipe */

/* a thread that only exists (the "held" mode's) */
static void *nothing(void *arg)
{
	return arg;
}

static void *splicer(void *arg)
{
	char c = 'x';
	struct iovec v = { &c, 1 };

	(void)arg;
	if (vmsplice(full[1], &v, 1, 0) != 1)
		abort();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];

	if (argc < 2)
		return 2;
	path = argv[1];
	mode = argc > 2 ? argv[2] : "";
	snprintf(path_b, sizeof(path_b), "%s.b", path);
	if (!strcmp(mode, "fork") || !strcmp(mode, "lockf")) {
		char b[16] = { 0 };
		int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644), st;
		pid_t c = fork();

		if (c == 0) {
			add_in_file();
			_exit(0);
		}
		add_in_file();
		waitpid(c, &st, 0);
		pread(fd, b, sizeof(b) - 1, 0);
		return atoi(b) != 6;
	}
	if (!strcmp(mode, "held")) {
		int fd = open(path, O_RDONLY | O_CREAT, 0644), g, r;

		if (fd < 0 || flock(fd, LOCK_EX))
			return 2;
		pthread_create(&t[0], NULL, nothing, NULL);
		pthread_join(t[0], NULL);
		g = open(path, O_RDONLY);
		r = flock(g, LOCK_EX | LOCK_NB); /* fd holds it: must fail */
		flock(fd, LOCK_UN);
		return r == 0;
	}
	if (!strcmp(mode, "vmsplice")) {
		char b[4096];

		if (pipe(full) || fcntl(full[1], F_SETFL, O_NONBLOCK))
			return 2;
		memset(b, 'f', sizeof(b));
		while (write(full[1], b, sizeof(b)) > 0)
			;
		if (fcntl(full[1], F_SETFL, 0))
			return 2;
		pthread_create(&t[0], NULL, splicer, NULL);
		usleep(1000);
		if (read(full[0], b, sizeof(b)) <= 0)
			return 2;
		pthread_join(t[0], NULL);
		return 0;
	}
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, strcmp(mode, "abba") ? worker : abba,
			       (void *)i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return strcmp(mode, "abba") ? counter != 6 : counter != 2;
}
