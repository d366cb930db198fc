/* A plugin of the program's own loaded while it already has threads: a
 * thread starts and ends, then main dlopens libcounter.so (the racy visit
 * counter of library_counter.c, built next to this executable) and two
 * threads visit it; the visits must add up.
 *   late_plugin          the plugin loaded after the first thread
 *   late_plugin early    loaded before it
 *   late_plugin system   no plugin: a system library (libm) loaded after
 *                        the first thread, and a counter under a mutex */
#define _DEFAULT_SOURCE /* readlink */
#include <assert.h>
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void (*visit)(void);
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long locked_visits;

static void locked_visit(void)
{
	pthread_mutex_lock(&lock);
	locked_visits++;
	pthread_mutex_unlock(&lock);
}

static void *visitor(void *arg)
{
	visit();
	return arg;
}

static void *idle(void *arg)
{
	return arg;
}

/* libcounter.so in this executable's directory */
static void *load_plugin(void)
{
	char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 32);
	void *h;

	assert(n > 0);
	path[n] = 0;
	strcpy(strrchr(path, '/') + 1, "libcounter.so");
	h = dlopen(path, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		_exit(2);
	}
	return h;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "late";
	pthread_t t[2];
	void *h = NULL;
	long (*visits)(void);

	if (!strcmp(mode, "early"))
		h = load_plugin();
	pthread_create(&t[0], NULL, idle, NULL);
	pthread_join(t[0], NULL);
	if (!strcmp(mode, "system")) {
		double (*cosine)(double);

		h = dlopen("libm.so.6", RTLD_NOW);
		assert(h);
		*(void **)&cosine = dlsym(h, "cos");
		assert(cosine(0.0) == 1.0);
		visit = locked_visit;
	} else {
		if (!h)
			h = load_plugin();
		*(void **)&visit = dlsym(h, "counter_visit");
		assert(visit);
	}
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, visitor, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	if (!strcmp(mode, "system")) {
		assert(locked_visits == 2);
		printf("%ld visits\n", locked_visits);
		return 0;
	}
	*(void **)&visits = dlsym(h, "counter_visits");
	assert(visits() == 2);
	printf("%ld visits\n", visits());
	return 0;
}
