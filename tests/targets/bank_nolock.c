/* Bug: unlocked check-then-withdraw on a plain balance can overdraw. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

static int balance = 100;

static void *customer(void *arg)
{
	int amount = *(const int *)arg;

	if (balance >= amount)
		balance -= amount;
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
