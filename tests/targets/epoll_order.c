/*
 * A hand-written epoll server and its two clients in one process and one
 * thread, over loopback TCP.  Client A asks the server to create a record,
 * client B to update it, right after A: natively A's request is always
 * first.  The server answers requests in the order its epoll_wait reports
 * them, and an update of a record that does not exist yet fails (exit 1):
 * a network may deliver B's request first.  With -DFIXED, B sends only
 * once A has its answer.  With -DEDGE every descriptor is edge-triggered
 * (an event held back must still be delivered once: the kernel reports
 * an edge once).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

static int client(const struct sockaddr_in *at)
{
	int c = socket(AF_INET, SOCK_STREAM, 0);

	if (c < 0 || connect(c, (const struct sockaddr *)at, sizeof(*at))) {
		perror("connect");
		exit(2);
	}
	fcntl(c, F_SETFL, O_NONBLOCK);
	return c;
}

static void watch(int ep, int fd)
{
#ifdef EDGE
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET, .data.fd = fd };
#else
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };
#endif

	if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev)) {
		perror("epoll_ctl");
		exit(2);
	}
}

int main(void)
{
	struct sockaddr_in at = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(at);
	int lis = socket(AF_INET, SOCK_STREAM, 0), ep = epoll_create1(0);
	int exists = 0, answers = 0;

	if (lis < 0 || ep < 0 || bind(lis, (struct sockaddr *)&at, len) ||
	    listen(lis, 8) ||
	    getsockname(lis, (struct sockaddr *)&at, &len)) {
		perror("listen");
		return 2;
	}
	fcntl(lis, F_SETFL, O_NONBLOCK);
	int a = client(&at), b = client(&at);

	watch(ep, lis);
	watch(ep, a);
	watch(ep, b);
	if (write(a, "create\n", 7) != 7)
		return 2;
#ifndef FIXED
	if (write(b, "update\n", 7) != 7)
		return 2;
#endif
	while (answers < 2) {
		struct epoll_event ev[8];
		int n = epoll_wait(ep, ev, 8, -1);

		if (n <= 0) {
			fprintf(stderr, "epoll_wait: %d\n", n);
			return 2;
		}
		for (int i = 0; i < n; i++) {
			int fd = ev[i].data.fd;
			char buf[64];
			ssize_t k;

			if (fd == lis) { /* every connection waiting */
				int c;

				while ((c = accept(lis, NULL, NULL)) >= 0) {
					fcntl(c, F_SETFL, O_NONBLOCK);
					watch(ep, c);
				}
				continue;
			}
			k = read(fd, buf, sizeof(buf) - 1);
			if (k <= 0)
				continue;
			buf[k] = 0;
			if (fd == a || fd == b) { /* a client's answer */
				printf("%s got %s", fd == a ? "A" : "B", buf);
				answers++;
#ifdef FIXED
				if (fd == a && write(b, "update\n", 7) != 7)
					return 2;
#endif
				continue;
			}
			if (!strcmp(buf, "create\n")) {
				exists = 1;
			} else if (!exists) {
				fprintf(stderr, "update of a record that does "
						"not exist\n");
				return 1;
			}
			if (write(fd, "ok\n", 3) != 3)
				return 2;
		}
	}
	return 0;
}
