/*
 * Correct: a client thread asks a server outside the program (a Unix
 * socket at argv[1], served by the test) and waits up to 5 s for the
 * answer, which takes the server ~0.3 s of real time.  ptloom must wait
 * for the world in real time: its virtual clock may not time the poll out
 * first, and the wait is no deadlock.
 */
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static const char *path;
static int answered;

static void *client(void *arg)
{
	(void)arg;
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char buf[16] = "";

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof(a)) ||
	    write(s, "ping", 4) != 4) {
		perror("connect");
		exit(2);
	}
	struct pollfd p = { .fd = s, .events = POLLIN };

	if (poll(&p, 1, 5000) != 1) {
		fprintf(stderr, "no answer within 5 s\n");
		exit(1);
	}
	answered = read(s, buf, sizeof(buf) - 1) == 4 && !strcmp(buf, "pong");
	close(s);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc < 2)
		return 2;
	path = argv[1];
	pthread_create(&t, NULL, client, NULL);
	pthread_join(t, NULL);
	printf("answered %d\n", answered);
	return answered ? 0 : 1;
}
