/*
 * Opens a file before its first thread and uses it from the threads.  A
 * fork checkpoint's runs share the file's description (its offset, and
 * the file) with the template, so ptloom must put them back for every
 * run, or run this program from exec (tests/integration issue10).  Every
 * run must see the file as a run from exec does.
 *
 * Built three ways: reading this binary, open read-only (its offset is put
 * back); -DTMPFILE, a deleted file written before the threads and by them
 * (its offset and contents are put back); -DNAMED, a named file open for
 * writing (its contents are not ptloom's to put back: no checkpoint).
 */
#define _GNU_SOURCE
#include <assert.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fd;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long total;

static void *worker(void *arg)
{
	char buf[64];
	ssize_t n;

	(void)arg;
	pthread_mutex_lock(&lock);
	/* the description's flags are the template's too: the first
	 * worker of every run finds them as the program left them */
	if (total == 0)
		assert(!(fcntl(fd, F_GETFL) & O_NONBLOCK));
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
#if defined(TMPFILE) || defined(NAMED)
	memset(buf, 'w', sizeof(buf));
	n = write(fd, buf, sizeof(buf));
#else
	n = read(fd, buf, sizeof(buf));
#endif
	total += n > 0 ? n : 0;
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b;

	(void)argc;
	(void)argv;
#if defined(TMPFILE)
	char name[] = "/tmp/ptloom-fbt-XXXXXX";

	fd = mkstemp(name);
	assert(fd >= 0);
	unlink(name);
	assert(write(fd, "hello", 5) == 5);
#elif defined(NAMED)
	char name[64];

	snprintf(name, sizeof(name), "/tmp/ptloom-fbt-%d", (int)getpid());
	fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert(fd >= 0); /* named at the first thread: unlinked at the end */
#else
	fd = open(argv[0], O_RDONLY); /* the binary: more than 128 bytes */
	assert(fd >= 0);
#endif
	pthread_create(&a, NULL, worker, NULL);
	pthread_create(&b, NULL, worker, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	assert(total == 128);
	/* the file as this run made it, from where a run from exec starts */
	off_t end = lseek(fd, 0, SEEK_CUR);
#if defined(TMPFILE)
	char all[256];

	assert(end == 133);
	assert(pread(fd, all, sizeof(all), 0) == 133);
	assert(!memcmp(all, "hello", 5) && all[132] == 'w');
#else
	assert(end == 128);
#endif
#ifdef NAMED
	unlink(name);
#endif
	printf("%ld bytes at %ld\n", total, (long)end);
	return 0;
}
