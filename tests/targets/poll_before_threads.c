/*
 * Polls its standard descriptors before its first thread, as Rust's
 * runtime does at start-up (a poll of 0, 1 and 2 with timeout 0: are
 * they open?), then, beside a thread, serves two loopback clients whose
 * requests race: client A creates a record, client B updates it, and a
 * poll that reports B's request first fails (exit 1), as a network may
 * deliver it first.  ptloom numbers the descriptors' files a run's waits
 * meet (tracer/evloop.c): a run forked from the checkpoint at the first
 * thread must number the sockets as a run from exec does, after the
 * standard descriptors the template met.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int ticks;

static void *ticker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 3; i++) {
		pthread_mutex_lock(&lock);
		ticks++;
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

static int client(const struct sockaddr_in *at)
{
	int c = socket(AF_INET, SOCK_STREAM, 0);

	if (c < 0 || connect(c, (const struct sockaddr *)at, sizeof(*at)))
		return -1;
	return c;
}

int main(void)
{
	struct pollfd std[3] = { { .fd = 0 }, { .fd = 1 }, { .fd = 2 } };
	struct sockaddr_in at = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(at);
	pthread_t t;
	int exists = 0;

	if (poll(std, 3, 0) < 0) {
		perror("poll");
		return 2;
	}
	pthread_create(&t, NULL, ticker, NULL);
	int lis = socket(AF_INET, SOCK_STREAM, 0);

	if (lis < 0 || bind(lis, (struct sockaddr *)&at, len) ||
	    listen(lis, 8) || getsockname(lis, (struct sockaddr *)&at, &len)) {
		perror("listen");
		return 2;
	}
	int a = client(&at), b = client(&at);
	int sa = accept(lis, NULL, NULL), sb = accept(lis, NULL, NULL);

	if (a < 0 || b < 0 || sa < 0 || sb < 0) {
		perror("connect");
		return 2;
	}
	if (write(a, "create\n", 7) != 7 || write(b, "update\n", 7) != 7)
		return 2;
	for (int served = 0; served < 2;) {
		struct pollfd p[2] = { { .fd = sa, .events = POLLIN },
				       { .fd = sb, .events = POLLIN } };

		if (poll(p, 2, -1) <= 0)
			return 2;
		for (int i = 0; i < 2; i++) {
			char buf[64];
			ssize_t k;

			if (!(p[i].revents & POLLIN))
				continue;
			k = read(p[i].fd, buf, sizeof(buf) - 1);
			if (k <= 0)
				continue;
			buf[k] = 0;
			served++;
			if (!strcmp(buf, "create\n"))
				exists = 1;
			else if (!exists) {
				fprintf(stderr, "update of a record that does "
						"not exist\n");
				return 1;
			}
		}
	}
	pthread_join(t, NULL);
	printf("served, %d ticks\n", ticks);
	return 0;
}
