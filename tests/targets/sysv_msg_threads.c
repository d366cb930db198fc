/*
 * SysV message queues between threads.  sysv_msg_threads MODE:
 *   pingpong  correct: main sends three messages, a worker receives them
 *   typed     correct: the worker takes type 2 only; main sends 1, then 2
 *   full      correct: the queue holds one message (msg_qbytes); main's
 *             second msgsnd waits until the worker has taken the first
 *   removed   correct: main removes the queue a worker may wait on: its
 *             msgrcv ends with EIDRM (or EINVAL, when it came later)
 *   nobody    main waits for a message nobody sends (a deadlock)
 *   order     main and a worker each send one; main takes the first and
 *             assumes it is its own (fails when the worker's came first)
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>

struct m {
	long type;
	char text[8];
};

static int q;
static int got;

static void send1(long type, const char *text)
{
	struct m msg = { type, "" };

	strcpy(msg.text, text);
	assert(msgsnd(q, &msg, sizeof(msg.text), 0) == 0);
}

static void *receiver(void *arg)
{
	int n = *(const int *)arg;

	for (int i = 0; i < n; i++) {
		struct m msg;

		assert(msgrcv(q, &msg, sizeof(msg.text), 0, 0) > 0);
		got++;
	}
	return NULL;
}

static void *typed(void *arg)
{
	struct m msg;

	(void)arg;
	assert(msgrcv(q, &msg, sizeof(msg.text), 2, 0) > 0);
	assert(msg.type == 2 && !strcmp(msg.text, "two"));
	return NULL;
}

static void *waits_removed(void *arg)
{
	struct m msg;

	(void)arg;
	assert(msgrcv(q, &msg, sizeof(msg.text), 0, 0) < 0);
	assert(errno == EIDRM || errno == EINVAL);
	return NULL;
}

static void *sends(void *arg)
{
	(void)arg;
	send1(1, "worker");
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "pingpong";
	pthread_t t;
	struct m msg;
	int n = 3;

	q = msgget(IPC_PRIVATE, 0600 | IPC_CREAT);
	assert(q >= 0);
	if (!strcmp(mode, "pingpong")) {
		pthread_create(&t, NULL, receiver, &n);
		for (int i = 0; i < n; i++)
			send1(1, "hi");
		pthread_join(t, NULL);
		assert(got == n);
	} else if (!strcmp(mode, "typed")) {
		pthread_create(&t, NULL, typed, NULL);
		send1(1, "one");
		send1(2, "two");
		pthread_join(t, NULL);
		assert(msgrcv(q, &msg, sizeof(msg.text), 0, IPC_NOWAIT) > 0);
		assert(msg.type == 1);
	} else if (!strcmp(mode, "full")) {
		struct msqid_ds ds;

		assert(msgctl(q, IPC_STAT, &ds) == 0);
		ds.msg_qbytes = sizeof(msg.text);
		assert(msgctl(q, IPC_SET, &ds) == 0);
		n = 2;
		pthread_create(&t, NULL, receiver, &n);
		send1(1, "first");
		send1(1, "second");
		pthread_join(t, NULL);
		assert(got == 2);
	} else if (!strcmp(mode, "removed")) {
		pthread_create(&t, NULL, waits_removed, NULL);
		assert(msgctl(q, IPC_RMID, NULL) == 0);
		pthread_join(t, NULL);
		printf("removed\n");
		return 0;
	} else if (!strcmp(mode, "nobody")) {
		msgrcv(q, &msg, sizeof(msg.text), 0, 0);
	} else if (!strcmp(mode, "order")) {
		pthread_create(&t, NULL, sends, NULL);
		send1(1, "main");
		assert(msgrcv(q, &msg, sizeof(msg.text), 0, 0) > 0);
		pthread_join(t, NULL);
		assert(!strcmp(msg.text, "main"));
	}
	msgctl(q, IPC_RMID, NULL);
	printf("%s ok\n", mode);
	return 0;
}
