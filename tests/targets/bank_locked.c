/* Correct: bank_nolock.c with a mutex around the check and the withdrawal. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int balance = 100;

static void *customer(void *arg)
{
	int amount = *(const int *)arg;

	pthread_mutex_lock(&lock);
	if (balance >= amount)
		balance -= amount;
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(void)
{
	pthread_t alice, bob;
	int amount = 100;

	pthread_create(&alice, NULL, customer, &amount);
	pthread_create(&bob, NULL, customer, &amount);
	pthread_join(alice, NULL);
	pthread_join(bob, NULL);

	assert(balance >= 0 && "overdrawn: both withdrawals passed the check");
	printf("balance=%d\n", balance);
	return 0;
}
