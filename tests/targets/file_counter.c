/* Two threads each add 1 to a counter kept in a regular file (a
 * temporary file, unlinked at once), read and written back without a
 * lock.  Modes:
 *   pread     (buggy) pread, then pwrite: an update may be lost
 *   read      (buggy) lseek and read, then lseek and write, through one
 *             descriptor each
 *   locked    (correct) the same read-modify-write under a mutex
 *   readers   (correct) two threads pread the counter main wrote first
 * main asserts the final count is 2 (readers: that each read 7) and
 * prints "file_counter MODE ok".
 */
#define _GNU_SOURCE
#include <assert.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *mode;
static char path[] = "/tmp/ptloom-file-counter-XXXXXX";
static int fd;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static long get(int d)
{
	long v;

	if (!strcmp(mode, "read")) {
		assert(lseek(d, 0, SEEK_SET) == 0);
		assert(read(d, &v, sizeof(v)) == sizeof(v));
	} else {
		assert(pread(d, &v, sizeof(v), 0) == sizeof(v));
	}
	return v;
}

static void put(int d, long v)
{
	if (!strcmp(mode, "read")) {
		assert(lseek(d, 0, SEEK_SET) == 0);
		assert(write(d, &v, sizeof(v)) == sizeof(v));
	} else {
		assert(pwrite(d, &v, sizeof(v), 0) == sizeof(v));
	}
}

static void *worker(void *arg)
{
	/* "read" mode: a description of its own, so offsets are apart */
	char self[64];
	long *seen = arg;

	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	int d = !strcmp(mode, "read") ? open(self, O_RDWR) : fd;

	assert(d >= 0);
	if (!strcmp(mode, "readers")) {
		*seen = get(d);
		return NULL;
	}
	if (!strcmp(mode, "locked"))
		pthread_mutex_lock(&m);
	put(d, get(d) + 1);
	if (!strcmp(mode, "locked"))
		pthread_mutex_unlock(&m);
	if (d != fd)
		close(d);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];
	long seen[2] = { 0, 0 };

	mode = argc > 1 ? argv[1] : "pread";
	if (strcmp(mode, "pread") && strcmp(mode, "read") &&
	    strcmp(mode, "locked") && strcmp(mode, "readers"))
		return 2;
	fd = mkstemp(path);
	assert(fd >= 0);
	unlink(path); /* nothing left behind by a run cut short */
	put(fd, !strcmp(mode, "readers") ? 7 : 0);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, &seen[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	if (!strcmp(mode, "readers"))
		assert(seen[0] == 7 && seen[1] == 7);
	else
		assert(get(fd) == 2 && "no update lost");
	printf("file_counter %s ok\n", mode);
	return 0;
}
