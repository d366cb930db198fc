/* Buggy (SCTBench CS account_bad class): a depositor and a withdrawer
 * update a balance that is a plain global (no lock); each reads the
 * balance, computes and writes it back, so one update can overwrite the
 * other.  The main thread checks the final balance.  -DFIXED: both
 * updates under a mutex. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

static int balance = 100;
#ifdef FIXED
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
#define LOCK() pthread_mutex_lock(&m)
#define UNLOCK() pthread_mutex_unlock(&m)
#else
#define LOCK() (void)0
#define UNLOCK() (void)0
#endif

static int fee(int amount)
{
	return amount > 100 ? 2 : 1;
}

static void *deposit(void *arg)
{
	(void)arg;
	LOCK();
	int b = balance;

	balance = b + 50 - fee(50);
	UNLOCK();
	return NULL;
}

static void *withdraw(void *arg)
{
	(void)arg;
	LOCK();
	int b = balance;

	if (b >= 30)
		balance = b - 30 - fee(30);
	UNLOCK();
	return NULL;
}

int main(void)
{
	pthread_t d, w;

	pthread_create(&d, NULL, deposit, NULL);
	pthread_create(&w, NULL, withdraw, NULL);
	pthread_join(d, NULL);
	pthread_join(w, NULL);
	assert(balance == 100 + 49 - 31 && "an update was lost");
	printf("ok %d\n", balance);
	return 0;
}
