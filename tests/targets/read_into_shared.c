/* Bug: main fills a shared buffer with read() from a pipe while a reader
 * thread copies it byte by byte: the copy can be half old, half new.  The
 * buffer's writes are the kernel's, at a call of libc's read: no
 * instruction of the program writes it.  -DFIXED: both hold a mutex. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define LEN 15

static char buf[LEN + 1] = "aaaaaaaaaaaaaaa";
#ifdef FIXED
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
#endif

static void *reader(void *arg)
{
	char copy[LEN];

#ifdef FIXED
	pthread_mutex_lock(&lock);
#endif
	for (int i = 0; i < LEN; i++)
		copy[i] = ((volatile char *)buf)[i];
#ifdef FIXED
	pthread_mutex_unlock(&lock);
#endif
	for (int i = 1; i < LEN; i++)
		assert(copy[i] == copy[0]);
	return arg;
}

int main(void)
{
	pthread_t t;
	int fds[2];

	if (pipe(fds) || write(fds[1], "bbbbbbbbbbbbbbb", LEN) != LEN)
		return 2;
	pthread_create(&t, NULL, reader, NULL);
#ifdef FIXED
	pthread_mutex_lock(&lock);
#endif
	ssize_t got = read(fds[0], buf, LEN);
#ifdef FIXED
	pthread_mutex_unlock(&lock);
#endif
	pthread_join(t, NULL);
	printf("%zd bytes read\n", got);
	return 0;
}
