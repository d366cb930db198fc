/*
 * Bytes read from /dev/urandom by a thread (after the first thread, so
 * runs forked from the checkpoint do not share one read): ptloom answers
 * them from --seed like getrandom, so every run, and a replay, reads the
 * same (perl seeds its hashes from /dev/urandom: its replays were not
 * exact).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static unsigned char b[8];
static int ok;

static void *reader(void *arg)
{
	int fd = open(arg, O_RDONLY | O_CLOEXEC);

	ok = fd >= 0 && read(fd, b, sizeof(b)) == (ssize_t)sizeof(b);
	if (fd >= 0)
		close(fd);
	return NULL;
}

int main(void)
{
	const char *dev[] = { "/dev/urandom", "/dev/random" };

	for (int i = 0; i < 2; i++) {
		pthread_t t;

		pthread_create(&t, NULL, reader, (void *)dev[i]);
		pthread_join(t, NULL);
		if (!ok)
			return 1;
		for (int k = 0; k < 8; k++)
			printf("%02x", b[k]);
		printf("\n");
	}
	return 0;
}
