/* Buggy: a lock-free stack's push publishes the node (a store to `top`)
 * before it fills the node in, and the filling is a library call
 * (memcpy), whose stores are not the program's own code.  A pop that
 * reads `top` right after that store, before the memcpy, sees an empty
 * node.  No scheduling point lies between the store and the memcpy: the
 * racy instructions are the store and the pop's load, and a point is
 * *before* its instruction, so the window opens only with a point right
 * after the store.
 * -DFIXED: the node is filled in before it is published. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

struct node {
	struct node *next;
	char name[16];
};

static struct node *top;
static struct node slot;

static void *pusher(void *arg)
{
	struct node *n = &slot;

	(void)arg;
	n->next = NULL;
#ifdef FIXED
	memcpy(n->name, "filled", 7);
	__atomic_store_n(&top, n, __ATOMIC_RELEASE);
#else
	__atomic_store_n(&top, n, __ATOMIC_RELEASE);
	memcpy(n->name, "filled", 7);
#endif
	return NULL;
}

static void *popper(void *arg)
{
	struct node *n = __atomic_load_n(&top, __ATOMIC_ACQUIRE);

	(void)arg;
	if (n)
		assert(n->name[0] == 'f' && "a node popped before it was filled");
	return NULL;
}

int main(void)
{
	pthread_t a, b;

	pthread_create(&a, NULL, pusher, NULL);
	pthread_create(&b, NULL, popper, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("top=%s\n", top ? top->name : "(empty)");
	return 0;
}
