/*
 * ptloom's cache of file analyses on disk: see filecache.h.
 *
 * One file per kind and key, DIR/KIND-HASH (HASH: FNV-1a of the kind and
 * the key), so that a new build of ptloom replaces its predecessor's entry
 * instead of adding one.  The file:
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
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC "PTLMFC1"
#define MAX_FILE (1u << 20)

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

static void entry_path(const char *kind, const void *key, size_t keylen,
		       char *out, size_t len)
{
	uint64_t h = fnv(fnv(FNV0, kind, strlen(kind) + 1), key, keylen);

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

static bool load(const char *kind, const void *key, size_t keylen,
		 void *buf, size_t len)
{
	char path[4200];
	struct header h;
	size_t kl = strlen(kind);
	size_t total = sizeof(h) + self_len + kl + keylen + len;
	struct stat st;
	uint8_t *all = NULL;
	bool ok = false;

	entry_path(kind, key, keylen, path, sizeof(path));
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		goto out;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || total > MAX_FILE ||
	    (uint64_t)st.st_size != total || !(all = malloc(total)))
		goto out;
	size_t got = 0;

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
	    h.kind_len != kl || h.key_len != keylen || h.zero || h.len != len ||
	    memcmp(p, self, self_len) || memcmp(p + self_len, kind, kl) ||
	    memcmp(p + self_len + kl, key, keylen))
		goto out;
	p += self_len + kl + keylen;
	if (h.sum != entry_sum(kind, key, keylen, p, len))
		goto out;
	memcpy(buf, p, len);
	ok = true;
out:
	if (fd >= 0)
		close(fd);
	free(all);
	if (ok)
		stats.hits++;
	else
		stats.misses++;
	return ok;
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

/* mkdir -p, private */
static bool make_dir(const char *d)
{
	char p[sizeof(dir)];

	snprintf(p, sizeof(p), "%s", d);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0700) && errno != EEXIST)
			return false;
		*s = '/';
	}
	return !mkdir(p, 0700) || errno == EEXIST;
}

static void store(const char *kind, const void *key, size_t keylen,
		  const void *buf, size_t len)
{
	char path[4200];
	struct entry e = { kind, key, buf, keylen, len };

	if (sizeof(struct header) + self_len + strlen(kind) + keylen + len >
	    MAX_FILE)
		return;
	entry_path(kind, key, keylen, path, sizeof(path));
	if (make_dir(dir) && write_atomically(path, write_entry, &e) == 0)
		stats.stores++;
	else
		stats.store_errors++;
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
	/* ptloom's own build */
	int id = elf_build_id("/proc/self/exe", self, sizeof(self));
	struct stat st;

	if (id > 0) {
		self_len = (size_t)id;
	} else if (!stat("/proc/self/exe", &st)) {
		int64_t v[4] = { (int64_t)st.st_size,
				 (int64_t)st.st_mtim.tv_sec,
				 (int64_t)st.st_mtim.tv_nsec,
				 (int64_t)st.st_ino };

		memcpy(self, v, sizeof(v));
		self_len = sizeof(v);
	} else {
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
