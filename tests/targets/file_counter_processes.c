/* A parent and its child each add 1 to a counter kept in a regular file,
 * read with pread and written back with pwrite.  Modes:
 *   racy     (buggy) both at once: an update may be lost
 *   locked   (correct) each under flock(LOCK_EX) of its own descriptor
 *   ordered  (correct) the parent updates once the child has exited
 * The parent asserts the count is 2 and prints "file_counter_processes
 * MODE ok".
 */
#define _GNU_SOURCE
#include <assert.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *mode;
static char path[] = "/tmp/ptloom-file-processes-XXXXXX";

static void add_one(void)
{
	int d = open(path, O_RDWR);
	long v;

	assert(d >= 0);
	if (!strcmp(mode, "locked"))
		assert(flock(d, LOCK_EX) == 0);
	assert(pread(d, &v, sizeof(v), 0) == sizeof(v));
	v++;
	assert(pwrite(d, &v, sizeof(v), 0) == sizeof(v));
	close(d);
}

int main(int argc, char **argv)
{
	int fd = mkstemp(path), st;
	long v = 0;
	pid_t c;

	mode = argc > 1 ? argv[1] : "racy";
	assert(fd >= 0);
	assert(pwrite(fd, &v, sizeof(v), 0) == sizeof(v));
	c = fork();
	assert(c >= 0);
	if (c == 0) {
		add_one();
		_exit(0);
	}
	if (!strcmp(mode, "ordered"))
		assert(waitpid(c, &st, 0) == c);
	add_one();
	if (strcmp(mode, "ordered"))
		assert(waitpid(c, &st, 0) == c);
	assert(pread(fd, &v, sizeof(v), 0) == sizeof(v));
	unlink(path);
	printf("%ld\n", v);
	assert(v == 2);
	printf("file_counter_processes %s ok\n", mode);
	return 0;
}
