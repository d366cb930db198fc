/* Bug: two threads insert into one GHashTable without a lock.  The
 * insert, its resize and its probing are GLib's code, not the program's:
 * every access of the race is the library's.  An insert lost or a table
 * torn shows as a wrong size, or a crash.  -DFIXED: a mutex around the
 * insert. */
#include <assert.h>
#include <glib.h>
#include <pthread.h>
#include <stdio.h>

static GHashTable *table;
#ifdef FIXED
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
#endif

static void *add(void *key)
{
#ifdef FIXED
	pthread_mutex_lock(&lock);
#endif
	g_hash_table_insert(table, key, key);
#ifdef FIXED
	pthread_mutex_unlock(&lock);
#endif
	return key;
}

int main(void)
{
	pthread_t a, b;

	table = g_hash_table_new(g_str_hash, g_str_equal);
	pthread_create(&a, NULL, add, "alpha");
	pthread_create(&b, NULL, add, "beta");
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	assert(g_hash_table_size(table) == 2);
	printf("%u keys\n", g_hash_table_size(table));
	g_hash_table_destroy(table);
	return 0;
}
