/*
 * Happens-before data race detection over one serialized execution at a
 * time, pure logic with no ptrace: the tracer's access_observer feeds it
 * thread creation and joins, release/acquire on synchronisation objects,
 * and the memory accesses of the program's own code, in execution order.
 *
 * Vector clocks order the threads (FastTrack-style epochs in the shadow
 * memory).  Two accesses race when they touch a common byte, come from
 * different threads, at least one writes, not both are atomic, and
 * neither happens before the other.  Racy pairs are kept, deduplicated by
 * the unordered pair of code addresses, across executions: exploration
 * runs many executions and wants every pair any of them showed.
 *
 * The shadow memory keeps up to four accesses per aligned 8-byte granule,
 * as ThreadSanitizer does; when more are concurrent, one is forgotten and
 * a race with it may be missed (never invented).
 */
#ifndef PTLOOM_RACES_H
#define PTLOOM_RACES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Threads are T-numbers in [0, RACES_MAX_THREADS). */
#define RACES_MAX_THREADS 65535
#define RACES_MAX_ACCESS 65536

struct race_detector;

struct race_pair {
	uint64_t pc[2]; /* earlier access first, as first observed */
	int thread[2];
	bool write[2];
	bool freed;	/* the later access is the block's free (a write) */
	uint64_t addr;	/* first byte both accesses touched */
	int size;	/* size of the later access */
	uint64_t count; /* how many times the pair was observed */
};

int races_new(struct race_detector **out);
void races_free(struct race_detector *r);

/* Fork edge: everything parent did so far happens before child's start. */
void races_thread_create(struct race_detector *r, int parent, int child);
/* Join edge: everything joined did happens before joiner's next step. */
void races_thread_join(struct race_detector *r, int joiner, int joined);
/* Does every access recorded so far by thread other happen before
 * thread's current step?  Then none of them can race with what thread
 * does from here. */
bool races_after(const struct race_detector *r, int thread, int other);
/* Lock acquire, futex wait return, sem wait, cond wait return, atomic
 * read: the thread sees every release on obj so far. */
void races_acquire(struct race_detector *r, int thread, uint64_t obj);
/* races_acquire of every object whose key k has (k & mask) == value: a
 * thread whose reads were not observed acquires all it may have read. */
void races_acquire_all(struct race_detector *r, int thread, uint64_t mask,
		       uint64_t value);
/* Unlock, futex wake, sem post, atomic write.  Releases accumulate: an
 * acquire sees all earlier releases of obj, whoever made them. */
void races_release(struct race_detector *r, int thread, uint64_t obj);
/* An atomic read-modify-write on obj by code whose other accesses are not
 * observed (a lock in a shared object): acquire and release now.  held:
 * obj is left nonzero (a lock taken), and that code's unlock may be a
 * plain store nobody sees, so until the thread's next touch that leaves
 * it 0 (held false), a later acquire of obj by another thread also sees
 * everything this thread did up to that acquire (races.c lazy_join). */
void races_touch_unseen(struct race_detector *r, int thread, uint64_t obj,
			bool held);
/* [addr, addr + size) was freed: its accesses so far are forgotten, so
 * that whoever gets the memory next does not race with its last owner (a
 * race with an access after the free is missed, none is invented). */
void races_forget(struct race_detector *r, uint64_t addr, uint64_t size);
/* ... freed by thread in a call from pc (free, realloc): as
 * ThreadSanitizer takes it, a write of every byte first, so an access not
 * ordered before it races with it (a reader still holding the block a
 * writer frees: the allocator's own stores into it are not observed, and
 * a dead store before a free is gone at -O2) */
void races_freed(struct race_detector *r, int thread, uint64_t pc,
		 uint64_t addr, uint64_t size);
/* An access of size bytes at [addr, addr + size) by the instruction at
 * pc (a rep string operation may pass its whole extent).  Sizes below 1
 * count as 1; accesses are cut at RACES_MAX_ACCESS bytes. */
void races_access(struct race_detector *r, int thread, uint64_t pc,
		  uint64_t addr, int size, bool write, bool atomic);

/*
 * The racy pairs found so far, in order of discovery.  The array stays
 * valid until the next call on r other than races_pairs().  Returns 0, or
 * the first error an earlier call met (-ENOMEM, or -EINVAL for a thread
 * out of range; such events were dropped) with the pairs still valid.
 */
int races_pairs(struct race_detector *r, const struct race_pair **pairs,
		size_t *n);

/* Forget the clocks and the shadow memory of the execution that ended;
 * keep the pairs. */
void races_reset_execution(struct race_detector *r);

#endif
