/* Bug: balance check and withdrawal in separate critical sections. */
#include <assert.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>

#define AMOUNT 100

static pthread_mutex_t account_lock = PTHREAD_MUTEX_INITIALIZER;
static int balance = 100;

static bool can_withdraw(int amount)
{
	bool ok;

	pthread_mutex_lock(&account_lock);
	ok = balance >= amount;
	pthread_mutex_unlock(&account_lock);
	return ok;
}

static void withdraw(int amount)
{
	pthread_mutex_lock(&account_lock);
	balance -= amount;
	pthread_mutex_unlock(&account_lock);
}

static void *customer(void *arg)
{
	(void)arg;
	if (can_withdraw(AMOUNT))
		withdraw(AMOUNT);
	return NULL;
}

int main(void)
{
	pthread_t alice, bob;

	pthread_create(&alice, NULL, customer, NULL);
	pthread_create(&bob, NULL, customer, NULL);
	pthread_join(alice, NULL);
	pthread_join(bob, NULL);

	assert(balance >= 0 &&
	       "overdrawn: both withdrawals passed the balance check");
	printf("balance=%d\n", balance);
	return 0;
}
