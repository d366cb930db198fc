/* Correct except "order": threads talk through a POSIX message queue
 * (unlinked at once: the program's alone).
 *   pc        two producers send 2 messages each into a queue of 1 (so
 *             their sends wait for room) and main receives the 4 with
 *             mq_timedreceive and a 30 s deadline: each producer's in order
 *   deadline  mq_timedreceive on the empty queue with a deadline 50 ms
 *             ahead fails with ETIMEDOUT, not before the deadline
 *   nobody    main receives with no deadline and nobody ever sends: the
 *             program hangs (a deadlock)
 *   order     (buggy) main asserts the first message is producer 1's,
 *             though producer 2 may send first
 * Prints "mq_threads MODE ok".
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static mqd_t q;
static const char *mode;

static void *producer(void *arg)
{
	int id = (int)(long)arg;
	int n = !strcmp(mode, "order") ? 1 : 2;

	for (int i = 0; i < n; i++) {
		char b[2] = { (char)('0' + id), (char)('0' + i) };

		assert(mq_send(q, b, sizeof(b), 0) == 0);
	}
	return NULL;
}

static struct timespec realtime_in(long ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

int main(int argc, char **argv)
{
	char name[64], b[16];
	struct mq_attr at = { .mq_maxmsg = 1, .mq_msgsize = 16 };
	pthread_t t[2];
	int nt = 0;

	mode = argc > 1 ? argv[1] : "pc";
	snprintf(name, sizeof(name), "/ptloom-mq-threads-%d", (int)getpid());
	q = mq_open(name, O_CREAT | O_EXCL | O_RDWR, 0600, &at);
	assert(q != (mqd_t)-1);
	mq_unlink(name);
	if (!strcmp(mode, "pc") || !strcmp(mode, "order"))
		for (long i = 1; i <= 2; i++)
			pthread_create(&t[nt++], NULL, producer, (void *)i);
	if (!strcmp(mode, "pc")) {
		int last[3] = { -1, -1, -1 };

		for (int got = 0; got < 4; got++) {
			struct timespec dl = realtime_in(30000);
			ssize_t n = mq_timedreceive(q, b, sizeof(b), NULL, &dl);

			assert(n == 2);
			int id = b[0] - '0', i = b[1] - '0';

			assert(i == last[id] + 1 && "a producer's messages in order");
			last[id] = i;
		}
	} else if (!strcmp(mode, "order")) {
		assert(mq_receive(q, b, sizeof(b), NULL) == 2);
		assert(b[0] == '1' && "producer 1's message first");
		assert(mq_receive(q, b, sizeof(b), NULL) == 2);
	} else if (!strcmp(mode, "deadline")) {
		struct timespec dl = realtime_in(50), after;
		ssize_t n = mq_timedreceive(q, b, sizeof(b), NULL, &dl);
		int e = errno;

		clock_gettime(CLOCK_REALTIME, &after);
		assert(n == -1 && e == ETIMEDOUT);
		assert((after.tv_sec > dl.tv_sec ||
			(after.tv_sec == dl.tv_sec &&
			 after.tv_nsec >= dl.tv_nsec)) &&
		       "not before the deadline");
	} else {
		mq_receive(q, b, sizeof(b), NULL);
	}
	for (int i = 0; i < nt; i++)
		pthread_join(t[i], NULL);
	mq_close(q);
	printf("mq_threads %s ok\n", mode);
	return 0;
}
