/* Correct: both threads lock accounts before orders. */
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t accounts = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t orders = PTHREAD_MUTEX_INITIALIZER;

static int nusers = 3;
static int norders = 5;
static int migrated;
static int audited;

static void *migrate_users(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&accounts);
	pthread_mutex_lock(&orders);
	migrated = nusers + norders;
	pthread_mutex_unlock(&orders);
	pthread_mutex_unlock(&accounts);
	return NULL;
}

static void *audit_orders(void *arg)
{
	(void)arg;
	/* Lock order: accounts, then orders, everywhere. */
	pthread_mutex_lock(&accounts);
	pthread_mutex_lock(&orders);
	audited = norders;
	pthread_mutex_unlock(&orders);
	pthread_mutex_unlock(&accounts);
	return NULL;
}

int main(void)
{
	pthread_t migrator, auditor;

	pthread_create(&migrator, NULL, migrate_users, NULL);
	pthread_create(&auditor, NULL, audit_orders, NULL);
	pthread_join(migrator, NULL);
	pthread_join(auditor, NULL);

	printf("migrated=%d audited=%d\n", migrated, audited);
	return 0;
}
