/* Bug: two threads split their own lists with strtok, whose position in
 * the string being split is libc's hidden state, one for the process: a
 * thread's strtok(NULL, ...) can go on in the other's list.  No
 * instruction of the program touches that state.  -DFIXED: strtok_r,
 * with a position of each thread's own. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static void *count_items(void *arg)
{
	char list[32];
	int n = 0;
#ifdef FIXED
	char *pos;
#define TOKEN(s) strtok_r(s, ",", &pos)
#else
#define TOKEN(s) strtok(s, ",")
#endif

	strcpy(list, arg);
	for (char *item = TOKEN(list); item; item = TOKEN(NULL))
		n++;
	assert(n == 3);
	return arg;
}

int main(void)
{
	pthread_t a, b;

	pthread_create(&a, NULL, count_items, "red,green,blue");
	pthread_create(&b, NULL, count_items, "one,two,three");
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("3 items each\n");
	return 0;
}
