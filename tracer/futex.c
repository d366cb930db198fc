/*
 * Futex wait queues: see futex.h.  The queues are one FIFO array; programs
 * under test have few waiters at a time, so a linear scan beats a hash.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "futex.h"

void futex_init(struct futex_table *ft)
{
	memset(ft, 0, sizeof(*ft));
}

void futex_destroy(struct futex_table *ft)
{
	free(ft->w);
	memset(ft, 0, sizeof(*ft));
}

int futex_wait(struct futex_table *ft, uint64_t addr, uint32_t bitset,
	       int thread)
{
	if (ft->n == ft->cap) {
		size_t cap = ft->cap ? ft->cap * 2 : 16;
		struct futex_waiter *w = realloc(ft->w, cap * sizeof(*w));

		if (!w)
			return -ENOMEM;
		ft->w = w;
		ft->cap = cap;
	}
	ft->w[ft->n++] = (struct futex_waiter){ thread, addr, bitset };
	return 0;
}

int futex_waiters(const struct futex_table *ft, uint64_t addr,
		  uint32_t bitset, int *out, int max)
{
	int k = 0;

	for (size_t i = 0; i < ft->n && k < max; i++)
		if (ft->w[i].addr == addr && (ft->w[i].bitset & bitset))
			out[k++] = ft->w[i].thread;
	return k;
}

int futex_count(const struct futex_table *ft, uint64_t addr)
{
	int k = 0;

	for (size_t i = 0; i < ft->n; i++)
		k += ft->w[i].addr == addr;
	return k;
}

int futex_remove(struct futex_table *ft, int thread)
{
	for (size_t i = 0; i < ft->n; i++) {
		if (ft->w[i].thread != thread)
			continue;
		memmove(&ft->w[i], &ft->w[i + 1],
			(ft->n - i - 1) * sizeof(ft->w[0]));
		ft->n--;
		return 0;
	}
	return -ENOENT;
}

int futex_requeue(struct futex_table *ft, uint64_t from, uint64_t to,
		  int max)
{
	int moved = 0;
	size_t n = ft->n;

	/* Move matching waiters to the tail, keeping their relative order. */
	for (size_t i = 0; i < n && moved < max;) {
		if (ft->w[i].addr != from ||
		    ft->w[i].bitset == FUTEX_PI_WAITER) {
			i++;
			continue;
		}
		struct futex_waiter w = ft->w[i];

		memmove(&ft->w[i], &ft->w[i + 1],
			(ft->n - i - 1) * sizeof(ft->w[0]));
		w.addr = to;
		ft->w[ft->n - 1] = w;
		n--;
		moved++;
	}
	return moved;
}

int futex_pi_first(const struct futex_table *ft, uint64_t addr, bool *more)
{
	int first = -1;

	*more = false;
	for (size_t i = 0; i < ft->n; i++) {
		if (ft->w[i].addr != addr ||
		    ft->w[i].bitset != FUTEX_PI_WAITER)
			continue;
		if (first >= 0) {
			*more = true;
			break;
		}
		first = ft->w[i].thread;
	}
	return first;
}

bool futex_is_waiting(const struct futex_table *ft, int thread)
{
	for (size_t i = 0; i < ft->n; i++)
		if (ft->w[i].thread == thread)
			return true;
	return false;
}
