/*
 * Buggy: a thread reads a pipe (or, with the argument "socketpair", a
 * socketpair) that only the program holds and nobody writes, main joins
 * it: a deadlock ptloom must report at once, without waiting for the
 * world.  With any other argument it reads that path (a FIFO whose writer
 * is outside the program: no deadlock, a wait for the world).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int fds[2];

static void *reader(void *arg)
{
	char b[8];

	(void)arg;
	printf("read %zd\n", read(fds[0], b, sizeof(b)));
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc > 1 && strcmp(argv[1], "socketpair"))
		fds[0] = open(argv[1], O_RDONLY);
	else if (argc > 1 ? socketpair(AF_UNIX, SOCK_STREAM, 0, fds)
			  : pipe(fds))
		return 2;
	pthread_create(&t, NULL, reader, NULL);
	pthread_join(t, NULL);
	return 0;
}
