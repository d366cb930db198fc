/*
 * ptloom's cache of file analyses on disk (the tracer's
 * struct tracer_file_cache): what a ptloom process learns of the files it
 * runs at its first run (libc's entry points and futex sites, the sweeps
 * of executables' and libraries' instructions), read back by the next
 * process instead of made again.
 */
#ifndef PTLOOM_FILECACHE_H
#define PTLOOM_FILECACHE_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Install the cache for this process.  Its directory: $PTLOOM_CACHE_DIR,
 * else $XDG_CACHE_HOME/ptloom, else $HOME/.cache/ptloom; none (nothing
 * cached) when PTLOOM_NO_CACHE=1, PTLOOM_CACHE_DIR is empty or no home is
 * known.  The directory is made on the first store.  An entry is used only
 * when ptloom's own build, the kind, the key and the length match and its
 * sum is right; anything else is a miss and the analysis is made again.
 * The directory's entries are kept under 256 MiB (PTLOOM_CACHE_MAX bytes):
 * the least recently used go first; other files there are never touched.
 */
void filecache_install(void);

/* Entries read, entries missed (absent, stale, damaged) and stored by
 * this process (PTLOOM_STATS). */
struct filecache_stats {
	uint64_t hits, misses, stores, store_errors;
	char dir[4096]; /* "" when off */
};
void filecache_stats(struct filecache_stats *s);

#endif
