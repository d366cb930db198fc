/*
 * Futex wait queues, as the supervisor's own model of the kernel's.
 *
 * Pure bookkeeping: which thread waits on which futex word with which
 * bitset, in FIFO order.  The session decides when a wait blocks and whom a
 * wake picks; nothing here touches a tracee.
 */
#ifndef PTLOOM_FUTEX_H
#define PTLOOM_FUTEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct futex_waiter {
	int thread;
	uint64_t addr;
	uint32_t bitset; /* FUTEX_PI_WAITER: a FUTEX_LOCK_PI waiter */
};

/* A priority-inheritance waiter's bitset: no wake's bitset matches it, so
 * only an unlock hands it the lock (futex_pi_first). */
#define FUTEX_PI_WAITER 0u

struct futex_table {
	struct futex_waiter *w; /* FIFO: oldest first */
	size_t n, cap;
};

void futex_init(struct futex_table *ft);
void futex_destroy(struct futex_table *ft);
/* Enqueue thread as a waiter on addr. Returns 0 or -ENOMEM. */
int futex_wait(struct futex_table *ft, uint64_t addr, uint32_t bitset,
	       int thread);
/* Up to max waiters that a wake of (addr, bitset) could pick, oldest
 * first.  Returns how many were written to out. */
int futex_waiters(const struct futex_table *ft, uint64_t addr,
		  uint32_t bitset, int *out, int max);
/* How many threads wait on addr (any bitset). */
int futex_count(const struct futex_table *ft, uint64_t addr);
/* Remove thread from the queues (woken or timed out). 0 or -ENOENT. */
int futex_remove(struct futex_table *ft, int thread);
/* Move up to max waiters of from (oldest first) to the tail of to's queue.
 * Returns how many moved. */
int futex_requeue(struct futex_table *ft, uint64_t from, uint64_t to,
		  int max);
/* The oldest priority-inheritance waiter of addr, or -1; *more says
 * whether another one waits behind it. */
int futex_pi_first(const struct futex_table *ft, uint64_t addr, bool *more);
bool futex_is_waiting(const struct futex_table *ft, int thread);

#endif
