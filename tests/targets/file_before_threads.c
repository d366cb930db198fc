/*
 * Opens a file before its first thread and reads it from the threads: a
 * fork checkpoint would share the file's offset between runs, so ptloom
 * must run this program from exec (tests/integration issue10), and every
 * run must still read the file from its start.
 */
#include <assert.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static int fd;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long total;

static void *reader(void *arg)
{
	char buf[64];
	ssize_t n;

	(void)arg;
	pthread_mutex_lock(&lock);
	n = read(fd, buf, sizeof(buf));
	total += n > 0 ? n : 0;
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b;

	(void)argc;
	fd = open(argv[0], O_RDONLY); /* the binary: more than 128 bytes */
	assert(fd >= 0);
	pthread_create(&a, NULL, reader, NULL);
	pthread_create(&b, NULL, reader, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	/* both reads see fresh bytes of a file opened by this run */
	assert(total == 128);
	printf("read %ld bytes\n", total);
	return 0;
}
