/*
 * Opens of a FIFO the program made (mkfifo argv[1]), which wait in the
 * kernel until the other end is opened (tests/integration:
 * blocking_waits).  argv[2]:
 *   threads  a thread opens it for reading and reads a number, main opens
 *            it for writing and writes 42: always 42;
 *   fork     the same between a parent (reading) and its child (writing):
 *            always 7;
 *   order    main opens it for writing, writes one byte and only then
 *            sets the flag the reading thread checks once the byte has
 *            come: an order bug (abort) in some schedules;
 *   lonely   main opens it for reading and nobody ever opens it for
 *            writing: a deadlock in every schedule.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char fifo[4096];
static int flag;

static void *reader(void *arg)
{
	char b[16] = { 0 };
	int fd = open(fifo, O_RDONLY);

	if (fd < 0)
		abort();
	*(int *)arg = read(fd, b, sizeof(b) - 1) > 0 ? atoi(b) : -1;
	close(fd);
	return NULL;
}

static void writer(int v)
{
	char b[16];
	int fd = open(fifo, O_WRONLY);

	if (fd < 0)
		abort();
	snprintf(b, sizeof(b), "%d", v);
	if (write(fd, b, strlen(b)) < 0)
		abort();
	close(fd);
}

/* the byte says the flag is set */
static void *checker(void *arg)
{
	char c;
	int fd = open(fifo, O_RDONLY);

	if (fd < 0 || read(fd, &c, 1) != 1)
		abort();
	if (flag != 1) {
		fprintf(stderr, "the byte came before the flag\n");
		abort();
	}
	close(fd);
	return arg;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 2 ? argv[2] : "threads";
	pthread_t t;
	int got = 0, st, fd;

	if (argc < 2)
		return 2;
	snprintf(fifo, sizeof(fifo), "%s", argv[1]);
	unlink(fifo);
	if (mkfifo(fifo, 0600))
		return 2;
	if (!strcmp(mode, "threads")) {
		pthread_create(&t, NULL, reader, &got);
		writer(42);
		pthread_join(t, NULL);
	} else if (!strcmp(mode, "fork")) {
		pid_t c = fork();

		if (c == 0) {
			writer(7);
			_exit(0);
		}
		reader(&got);
		waitpid(c, &st, 0);
		got = got == 7 ? 42 : got;
	} else if (!strcmp(mode, "order")) {
		pthread_create(&t, NULL, checker, NULL);
		fd = open(fifo, O_WRONLY);
		if (fd < 0 || write(fd, "x", 1) != 1)
			abort();
		flag = 1;
		close(fd);
		pthread_join(t, NULL);
		got = 42;
	} else if (!strcmp(mode, "lonely")) {
		close(open(fifo, O_RDONLY));
		got = 42;
	}
	unlink(fifo);
	printf("got %d\n", got);
	return got != 42;
}
