/*
 * ptloom's cache of file analyses on disk: see filecache.h.
 *
 * One file per build of ptloom, kind and name, DIR/KIND-HASH (HASH: FNV-1a
 * of ptloom's build, the kind and the name, a file's path), so that a
 * rebuilt program replaces its predecessor's entry instead of adding one,
 * and two builds of ptloom used side by side (a CI's plain and sanitized
 * builds, two checkouts) keep an entry each instead of making the other's
 * again at every command (libc's analysis: 0.17 s a command); a former
 * build's entries go as the least recently used.  The
 * directory is kept under CACHE_MAX bytes: a store that finds more
 * removes the entries used least recently (a load marks its entry used)
 * until it holds CACHE_MAX / 2.  The file:
 *
 *   "PTLMFC1\0", u32 self_len, u32 kind_len, u32 key_len, u32 0,
 *   u64 payload_len, u64 sum; then self, kind, key, payload
 *
 * where self names ptloom's own build (its build id, else the size and
 * modification time of its executable: the payload is a struct of that
 * build) and sum is FNV-1a over everything after the header.  Written
 * atomically (write_atomically); read only when every part matches.
 */
#include "filecache.h"
#include "report.h"
#include "../tracer/elf.h"
#include "../tracer/tracer.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC "PTLMFC1"
#define MAX_FILE (128u << 20) /* node's memory sweep: 96 MB */
#define CACHE_MAX (256ull << 20)

struct header {
	char magic[8];
	uint32_t self_len, kind_len, key_len, zero;
	uint64_t len, sum;
};

static char dir[4096];
static uint8_t self[64];
static size_t self_len;
static struct filecache_stats stats;

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}
#define FNV0 0xcbf29ce484222325ull

/* ptloom's own build, read on the first load or store (a command that
 * runs no program never needs it): false when it cannot be told, and
 * nothing is read or kept. */
static bool self_known(void)
{
	static bool tried;
	struct stat st;

	if (tried)
		return self_len > 0;
	tried = true;
	int id = elf_build_id("/proc/self/exe", self, sizeof(self));

	if (id > 0) {
		self_len = (size_t)id;
	} else if (!stat("/proc/self/exe", &st)) {
		int64_t v[4] = { (int64_t)st.st_size,
				 (int64_t)st.st_mtim.tv_sec,
				 (int64_t)st.st_mtim.tv_nsec,
				 (int64_t)st.st_ino };

		memcpy(self, v, sizeof(v));
		self_len = sizeof(v);
	}
	return self_len > 0;
}

/* (after self_known()) */
static void entry_path(const char *kind, const char *name, char *out,
		       size_t len)
{
	uint64_t h = fnv(fnv(fnv(FNV0, self, self_len), kind,
			     strlen(kind) + 1),
			 name, strlen(name));

	snprintf(out, len, "%s/%s-%016llx", dir, kind, (unsigned long long)h);
}

static uint64_t entry_sum(const char *kind, const void *key, size_t keylen,
			  const void *buf, size_t len)
{
	uint64_t h = fnv(FNV0, self, self_len);

	h = fnv(h, kind, strlen(kind));
	h = fnv(h, key, keylen);
	return fnv(h, buf, len);
}

static void *load(const char *kind, const char *name, const void *key,
		  size_t keylen, size_t *len)
{
	char path[4200];
	struct header h;
	size_t kl = strlen(kind), head;
	struct stat st;
	uint8_t *all = NULL, *out = NULL;

	*len = 0;
	if (!self_known())
		return NULL;
	entry_path(kind, name, path, sizeof(path));
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		goto out;
	head = sizeof(h) + self_len + kl + keylen;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size > MAX_FILE || (size_t)st.st_size < head ||
	    !(all = malloc((size_t)st.st_size)))
		goto out;
	size_t total = (size_t)st.st_size, got = 0;

	while (got < total) {
		ssize_t n = read(fd, all + got, total - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			goto out;
		got += (size_t)n;
	}
	memcpy(&h, all, sizeof(h));
	const uint8_t *p = all + sizeof(h);

	if (memcmp(h.magic, MAGIC, sizeof(h.magic)) || h.self_len != self_len ||
	    h.kind_len != kl || h.key_len != keylen || h.zero ||
	    h.len != total - head || memcmp(p, self, self_len) ||
	    memcmp(p + self_len, kind, kl) ||
	    memcmp(p + self_len + kl, key, keylen))
		goto out;
	p += self_len + kl + keylen;
	if (h.sum != entry_sum(kind, key, keylen, p, h.len) ||
	    !(out = malloc(h.len ? h.len : 1)))
		goto out;
	memcpy(out, p, h.len);
	*len = h.len;
	/* used: the eviction keeps it */
	futimens(fd, NULL);
out:
	if (fd >= 0)
		close(fd);
	free(all);
	if (out)
		stats.hits++;
	else
		stats.misses++;
	return out;
}

struct entry {
	const char *kind;
	const void *key, *buf;
	size_t keylen, len;
};

static void write_entry(FILE *f, const void *arg)
{
	const struct entry *e = arg;
	struct header h = { .magic = MAGIC };

	h.self_len = (uint32_t)self_len;
	h.kind_len = (uint32_t)strlen(e->kind);
	h.key_len = (uint32_t)e->keylen;
	h.len = e->len;
	h.sum = entry_sum(e->kind, e->key, e->keylen, e->buf, e->len);
	fwrite(&h, sizeof(h), 1, f);
	fwrite(self, 1, self_len, f);
	fwrite(e->kind, 1, h.kind_len, f);
	fwrite(e->key, 1, e->keylen, f);
	fwrite(e->buf, 1, e->len, f);
}

struct old_entry {
	char name[300];
	struct timespec used;
	off_t size;
};

static int by_use(const void *a, const void *b)
{
	const struct old_entry *x = a, *y = b;

	if (x->used.tv_sec != y->used.tv_sec)
		return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
	if (x->used.tv_nsec != y->used.tv_nsec)
		return x->used.tv_nsec < y->used.tv_nsec ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Named as ours: KIND-HASH (lower-case letters and digits, a dash, 16
 * hex digits). */
static bool ours_by_name(const char *name)
{
	const char *dash = strrchr(name, '-');

	return dash && dash > name && strlen(dash + 1) == 16 &&
	       strspn(dash + 1, "0123456789abcdef") == 16 &&
	       strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789") ==
		       (size_t)(dash - name);
}

/* One of ours: named so, and it starts with the magic; the directory
 * may be a user's, whose other files are never touched. */
static bool ours(int dfd, const char *name)
{
	char m[8];
	bool ok;

	if (!ours_by_name(name))
		return false;
	int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return false;
	ok = read(fd, m, sizeof(m)) == (ssize_t)sizeof(m) &&
	     !memcmp(m, MAGIC, sizeof(m));
	close(fd);
	return ok;
}

/* The bytes the directory's entries hold, as this process last counted
 * them plus what it has stored since (-1: not counted yet).  Another
 * process's stores are seen at the next count: the cap is a soft one. */
static long long dir_bytes = -1;

/* Over the cap (CACHE_MAX, or PTLOOM_CACHE_MAX bytes): the least recently
 * used entries go until half of it is left.  The directory is counted
 * once per process, and again only when what it stored since may have
 * passed the cap: a count reads every entry's metadata, and one per
 * store made each new program's first run in a test suite read some
 * thousand entries (four system calls each) for each of its analyses. */
static void evict(size_t stored)
{
	const char *capv = getenv("PTLOOM_CACHE_MAX");
	unsigned long long cap_bytes = CACHE_MAX;

	if (capv && *capv) {
		char *end;
		unsigned long long v = strtoull(capv, &end, 10);

		if (!*end)
			cap_bytes = v;
	}
	if (dir_bytes >= 0) {
		dir_bytes += (long long)stored;
		if ((unsigned long long)dir_bytes <= cap_bytes)
			return;
	}
	DIR *d = opendir(dir);
	struct dirent *e;
	struct old_entry *v = NULL;
	size_t n = 0, cap = 0;
	unsigned long long total = 0;

	if (!d)
		return;
	while ((e = readdir(d))) {
		struct stat st;

		if (e->d_name[0] == '.' || strlen(e->d_name) >= 300 ||
		    !ours_by_name(e->d_name) ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode))
			continue;
		if (n == cap) {
			struct old_entry *w =
				realloc(v, (cap = cap ? 2 * cap : 64) *
						   sizeof(*v));

			if (!w)
				break;
			v = w;
		}
		snprintf(v[n].name, sizeof(v[n].name), "%s", e->d_name);
		v[n].used = st.st_mtim;
		v[n].size = st.st_size;
		total += (unsigned long long)st.st_size;
		n++;
	}
	if (total > cap_bytes && v) {
		qsort(v, n, sizeof(*v), by_use);
		/* (only what starts with the magic is ours to remove) */
		for (size_t i = 0; i < n && total > cap_bytes / 2; i++)
			if (ours(dirfd(d), v[i].name) &&
			    !unlinkat(dirfd(d), v[i].name, 0))
				total -= (unsigned long long)v[i].size;
	}
	dir_bytes = (long long)total;
	free(v);
	closedir(d);
}

static void store(const char *kind, const char *name, const void *key,
		  size_t keylen, const void *buf, size_t len)
{
	char path[4200];
	struct entry e = { kind, key, buf, keylen, len };

	if (!self_known())
		return;
	if (sizeof(struct header) + self_len + strlen(kind) + keylen + len >
	    MAX_FILE) {
		stats.store_errors++;
		return;
	}
	entry_path(kind, name, path, sizeof(path));
	if (!make_dirs(dir, 0700) &&
	    write_atomically(path, write_entry, &e) == 0) {
		stats.stores++;
		evict(sizeof(struct header) + self_len + strlen(kind) +
		      keylen + len);
	} else {
		stats.store_errors++;
	}
}

static const struct tracer_file_cache cache = { load, store };

void filecache_install(void)
{
	const char *d = getenv("PTLOOM_CACHE_DIR");
	const char *no = getenv("PTLOOM_NO_CACHE");
	const char *x = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	int n;

	dir[0] = '\0';
	tracer_set_file_cache(NULL);
	if (no && *no && strcmp(no, "0"))
		return;
	if (d)
		n = snprintf(dir, sizeof(dir), "%s", d);
	else if (x && x[0] == '/')
		n = snprintf(dir, sizeof(dir), "%s/ptloom", x);
	else if (home && home[0] == '/')
		n = snprintf(dir, sizeof(dir), "%s/.cache/ptloom", home);
	else
		n = 0;
	if (n <= 0 || (size_t)n >= sizeof(dir)) {
		dir[0] = '\0';
		return;
	}
	snprintf(stats.dir, sizeof(stats.dir), "%s", dir);
	tracer_set_file_cache(&cache);
}

void filecache_stats(struct filecache_stats *s)
{
	*s = stats;
}
