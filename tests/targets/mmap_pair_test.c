/*
 * Two tests that share a file through mmap while both run: `writer` maps
 * ./shared.dat and stores 42 into it; `reader` maps the same file (once it
 * exists) and waits for the 42, failing after a second without it.
 * Alone, the reader fails: test-suite mode must not split them
 * (tests/targets/share_mmap.sh).
 */
#define _DEFAULT_SOURCE /* usleep */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static const char path[] = "shared.dat";

static volatile int *map(int flags)
{
	int fd = open(path, flags, 0600);
	void *p;

	if (fd < 0)
		return NULL;
	if ((flags & O_CREAT) && ftruncate(fd, 4096))
		return NULL;
	p = mmap(NULL, 4096, PROT_READ | ((flags & O_CREAT) ? PROT_WRITE : 0),
		 MAP_SHARED, fd, 0);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

int main(int argc, char **argv)
{
	volatile int *w = NULL;

	if (argc == 2 && !strcmp(argv[1], "writer")) {
		if (!(w = map(O_RDWR | O_CREAT)))
			return 2;
		*w = 42;
		usleep(200000);	/* the reader may still be looking */
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "reader")) {
		for (int i = 0; i < 1000; i++) {
			if (!w)
				w = map(O_RDONLY);
			if (w && *w == 42) {
				puts("reader: 42");
				return 0;
			}
			usleep(1000);
		}
		puts("reader: no writer");
		return 1;
	}
	fprintf(stderr, "usage: %s writer|reader\n", argv[0]);
	return 2;
}
