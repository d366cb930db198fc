/* Correct: one thread forks and execs /bin/true while another works. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define NINCS 5

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int counter;

static void *spawner(void *arg)
{
	int *status = arg;
	pid_t pid;

	pid = fork();
	if (pid < 0) {
		perror("fork");
		*status = -1;
		return NULL;
	}
	if (pid == 0) {
		char *const argv[] = { "true", NULL };

		/* Only async-signal-safe calls in a forked threaded child. */
		execv("/bin/true", argv);
		_exit(127);
	}
	if (waitpid(pid, status, 0) != pid) {
		perror("waitpid");
		*status = -1;
	}
	return NULL;
}

static void *counter_thread(void *arg)
{
	(void)arg;
	for (int i = 0; i < NINCS; i++) {
		pthread_mutex_lock(&lock);
		counter++;
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

int main(void)
{
	pthread_t s, c;
	int status = -1;

	pthread_create(&c, NULL, counter_thread, NULL);
	pthread_create(&s, NULL, spawner, &status);
	pthread_join(s, NULL);
	pthread_join(c, NULL);

	if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "/bin/true failed: status %#x\n", status);
		return 1;
	}
	if (counter != NINCS) {
		fprintf(stderr, "counter=%d, expected %d\n", counter, NINCS);
		return 1;
	}
	printf("ok\n");
	return 0;
}
