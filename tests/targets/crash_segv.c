/* Bug: is-connected check and use in separate critical sections; NULL deref. */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

struct session {
	int id;
	int requests;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct session *current;

static bool is_connected(void)
{
	bool connected;

	pthread_mutex_lock(&lock);
	connected = current != NULL;
	pthread_mutex_unlock(&lock);
	return connected;
}

static void *requester(void *arg)
{
	(void)arg;
	if (is_connected()) {
		pthread_mutex_lock(&lock);
		current->requests++; /* current may be NULL by now */
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

static void *disconnector(void *arg)
{
	struct session *s;

	(void)arg;
	pthread_mutex_lock(&lock);
	s = current;
	current = NULL;
	pthread_mutex_unlock(&lock);
	free(s);
	return NULL;
}

int main(void)
{
	pthread_t r, d;

	current = calloc(1, sizeof(*current));
	if (!current)
		return 1;
	current->id = 1;

	pthread_create(&r, NULL, requester, NULL);
	pthread_create(&d, NULL, disconnector, NULL);
	pthread_join(r, NULL);
	pthread_join(d, NULL);
	printf("disconnected\n");
	return 0;
}
