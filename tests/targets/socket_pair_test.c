/*
 * Two tests that talk over a Unix socket while both run: `server` accepts
 * one connection on ./pair.sock and answers "ping" with "pong"; `client`
 * connects (trying for a second while the server starts), sends "ping" and
 * exits 0 on "pong", 1 when no server answers.  Alone, the client fails:
 * test-suite mode must not split them (tests/targets/share_socket.sh).
 */
#define _DEFAULT_SOURCE /* usleep */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static const char path[] = "pair.sock";

static int server(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char buf[16] = { 0 };
	int s = socket(AF_UNIX, SOCK_STREAM, 0), c;

	memcpy(a.sun_path, path, sizeof(path));
	unlink(path);
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(s, 1) || (c = accept(s, NULL, NULL)) < 0)
		return 2;
	if (read(c, buf, sizeof(buf) - 1) <= 0 || strcmp(buf, "ping"))
		return 1;
	if (write(c, "pong", 4) != 4)
		return 1;
	close(c);
	close(s);
	unlink(path);
	return 0;
}

static int client(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char buf[16] = { 0 };
	int s = -1;

	memcpy(a.sun_path, path, sizeof(path));
	for (int i = 0; i < 1000; i++) {
		s = socket(AF_UNIX, SOCK_STREAM, 0);
		if (s >= 0 && !connect(s, (struct sockaddr *)&a, sizeof(a)))
			break;
		close(s);
		s = -1;
		usleep(1000);
	}
	if (s < 0) {
		puts("client: no server");
		return 1;
	}
	if (write(s, "ping", 4) != 4 || read(s, buf, sizeof(buf) - 1) <= 0)
		return 1;
	puts(buf);
	return strcmp(buf, "pong") != 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "server"))
		return server();
	if (argc == 2 && !strcmp(argv[1], "client"))
		return client();
	fprintf(stderr, "usage: %s server|client\n", argv[0]);
	return 2;
}
