/*
 * The in-process agent: scheduling-free work done inside the traced
 * program instead of at a ptrace stop.
 *
 * Every traced image gets, at its exec, a vDSO whose functions jump into
 * ptloom's own code (tracer/agent.S) instead of the kernel's: the
 * program's libc (and Go's runtime, and a static binary's) keep calling
 * the vDSO as they would natively, but what they read is ptloom's virtual
 * clock.  The clock lives in a page of shared memory (struct agent_data)
 * that the supervisor maps too; one page per ptloom process, so every
 * process of the tree (a fork inherits the mapping) reads one clock.  A
 * clock read there costs a few nanoseconds where the emulated syscall
 * (tracer/syscall.c emulate_clock_gettime) costs a seccomp stop.
 *
 * The semantics are the stop's, exactly: each read advances the clock
 * by one quantum and realtime is realtime_base + now; the supervisor puts
 * its clock into the page before a thread runs (agent_resume) and takes
 * the reads' advance back at the next stop (agent_stopped), where the
 * run's choices, timers and state keys see it.  Clock reads are not
 * scheduling points and leave no event: a run makes the same events,
 * trace hash and schedule with the agent answering or not.  Whether the
 * vDSO is visible to the program (it is patched: visible; else hidden,
 * as before) never depends on the switch (--no-fast-path), so the
 * program's address space is the same either way.
 *
 * Where the page cannot be mapped (a seccomp filter of the program's own,
 * a file system without /proc, no room above the mmap base) the patched
 * vDSO makes the real syscalls and the supervisor answers them at stops,
 * as without the agent; run_result.agent_note says why.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "session_int.h"

extern const uint8_t ptloom_agent_start[], ptloom_agent_end[],
	ptloom_agent_clock_gettime[], ptloom_agent_gettimeofday[],
	ptloom_agent_time[], ptloom_agent_clock_getres[],
	ptloom_agent_getcpu[], ptloom_agent_enosys[];

/* The shared page (tracer/agent.S reads it at these offsets). */
struct agent_data {
	uint64_t now;		/* the virtual clock: session.now */
	uint64_t quantum;	/* session.quantum */
	uint64_t realtime;	/* session.realtime_base */
	uint64_t reads;		/* clock reads answered in the program */
};

#define PAGE 4096ul
#define BLOB_AT 16 /* the code's place in its host function */

/* The supervisor's side of the page: one per ptloom process (a -j
 * worker, a fork of ptloom, makes its own). */
static struct agent_data *g_page;
static int g_fd = -1;
static pid_t g_owner;

static struct agent_data *agent_page(void)
{
	pid_t me = getpid();

	if (g_page && g_owner == me)
		return g_page;
	if (g_page) { /* the parent's, inherited by a fork of ptloom */
		munmap(g_page, PAGE);
		close(g_fd);
		g_page = NULL;
		g_fd = -1;
	}
	int fd = memfd_create("ptloom-agent", MFD_CLOEXEC);

	if (fd < 0)
		return NULL;
	void *m = MAP_FAILED;

	if (!ftruncate(fd, (off_t)PAGE))
		m = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		close(fd);
		return NULL;
	}
	g_page = m;
	g_fd = fd;
	g_owner = me;
	return g_page;
}

/* What each function of the vDSO becomes. */
enum { F_ENOSYS, F_CLOCK_GETTIME, F_GETTIMEOFDAY, F_TIME, F_GETRES, F_GETCPU };

static const uint8_t *entry_of(int kind)
{
	switch (kind) {
	case F_CLOCK_GETTIME:
		return ptloom_agent_clock_gettime;
	case F_GETTIMEOFDAY:
		return ptloom_agent_gettimeofday;
	case F_TIME:
		return ptloom_agent_time;
	case F_GETRES:
		return ptloom_agent_clock_getres;
	case F_GETCPU:
		return ptloom_agent_getcpu;
	default:
		return ptloom_agent_enosys;
	}
}

/* The vDSO's functions, found once: the kernel maps the same one into
 * every process (its bytes are compared to be sure). */
#define MAX_FUNCS 32
static struct {
	uint8_t *bytes;
	size_t len;
	bool ok;
	int n;
	struct {
		uint64_t off, size;
		int kind;
	} f[MAX_FUNCS];
	uint64_t host; /* offset of the function the code goes into */
} plan;

static int kind_of(const char *name)
{
	if (!strncmp(name, "__vdso_", 7))
		name += 7;
	if (!strcmp(name, "clock_gettime"))
		return F_CLOCK_GETTIME;
	if (!strcmp(name, "gettimeofday"))
		return F_GETTIMEOFDAY;
	if (!strcmp(name, "time"))
		return F_TIME;
	if (!strcmp(name, "clock_getres"))
		return F_GETRES;
	if (!strcmp(name, "getcpu"))
		return F_GETCPU;
	return F_ENOSYS;
}

/* Parse the vDSO image b (len bytes) into plan; false: not patchable. */
static bool make_plan(const uint8_t *b, size_t len)
{
	size_t blob = (size_t)(ptloom_agent_end - ptloom_agent_start);
	uint8_t *copy = malloc(len);
	bool ok = false;

	free(plan.bytes);
	plan.bytes = NULL;
	plan.ok = false;
	plan.n = 0;
	if (!copy)
		return false;
	memcpy(copy, b, len);
	elf_version(EV_CURRENT);
	Elf *e = elf_memory((char *)copy, len);
	GElf_Ehdr eh;
	uint64_t base = UINT64_MAX;

	if (!e || elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64)
		goto out;
	for (size_t i = 0; i < eh.e_phnum; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    ph.p_vaddr < base)
			base = ph.p_vaddr;
	}
	if (base == UINT64_MAX)
		goto out;
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM ||
		    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		size_t n = sh.sh_size / sh.sh_entsize;

		for (size_t i = 0; i < n; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(d, (int)i, &sym) ||
			    GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    sym.st_shndx == SHN_UNDEF ||
			    !(name = elf_strptr(e, sh.sh_link, sym.st_name)))
				continue;
			uint64_t off = sym.st_value - base;
			int k = kind_of(name), j;

			if (off + sym.st_size > len || sym.st_size < 5)
				goto out; /* not ours to understand */
			for (j = 0; j < plan.n; j++)
				if (plan.f[j].off == off)
					break;
			if (j < plan.n) {
				if (k != F_ENOSYS)
					plan.f[j].kind = k;
				continue;
			}
			if (plan.n == MAX_FUNCS)
				goto out;
			plan.f[plan.n].off = off;
			plan.f[plan.n].size = sym.st_size;
			plan.f[plan.n++].kind = k;
		}
	}
	/* the largest function holds the code (at BLOB_AT), after the
	 * 5-byte jump its own entry gets; no other entry inside it */
	int host = -1;

	for (int j = 0; j < plan.n; j++)
		if (host < 0 || plan.f[j].size > plan.f[host].size)
			host = j;
	if (host < 0 || plan.f[host].size < BLOB_AT + blob)
		goto out;
	for (int j = 0; j < plan.n; j++)
		if (j != host && plan.f[j].off < plan.f[host].off + plan.f[host].size &&
		    plan.f[j].off + 5 > plan.f[host].off)
			goto out;
	plan.host = plan.f[host].off;
	ok = true;
out:
	if (e)
		elf_end(e);
	if (ok) {
		memcpy(copy, b, len);
		plan.bytes = copy;
		plan.len = len;
		plan.ok = true;
	} else {
		free(copy);
		plan.n = 0;
	}
	return ok;
}

/* The [vdso] mapping of pid and the end of the highest mapping below the
 * stack (where the kernel's mmap base is). */
static bool find_vdso(pid_t pid, uint64_t *lo, uint64_t *hi, uint64_t *top,
		      uint64_t *stack_hi)
{
	char name[64], line[512];
	FILE *f;

	*lo = *hi = *top = *stack_hi = 0;
	snprintf(name, sizeof(name), "/proc/%d/maps", (int)pid);
	if (!(f = fopen(name, "re")))
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long a, b;

		if (sscanf(line, "%lx-%lx", &a, &b) != 2)
			continue;
		if (strstr(line, "[vdso]")) {
			*lo = a;
			*hi = b;
		}
		if (strstr(line, "[stack]"))
			*stack_hi = b;
		else if (!strstr(line, "[vsyscall]") && b > *top)
			*top = b;
	}
	fclose(f);
	return *lo && *hi > *lo && *hi - *lo <= (1u << 20);
}

/*
 * Run one syscall in t, stopped at its exec with registers base: at the
 * gadget ("syscall; int3") written into its vDSO.  A seccomp stop on the
 * way lets it run; a signal that arrives meanwhile is kept in *sig to be
 * sent again.  Returns 0 with the result in *ret, or -1.
 */
static int remote(struct thread *t, const struct user_regs_struct *base,
		  uint64_t gadget, long nr, const uint64_t a[6], long *ret,
		  int *sig)
{
	struct user_regs_struct r = *base;

	r.rip = nr < 0 ? gadget + 2 : gadget; /* nr < 0: the int3 alone */
	r.rax = (uint64_t)nr;
	r.orig_rax = (uint64_t)-1;
	r.rdi = a[0];
	r.rsi = a[1];
	r.rdx = a[2];
	r.r10 = a[3];
	r.r8 = a[4];
	r.r9 = a[5];
	if (ptrace(PTRACE_SETREGS, t->tid, 0, &r))
		return -1;
	for (int i = 0; i < 64; i++) {
		int st;
		pid_t w;

		if (ptrace(PTRACE_CONT, t->tid, 0, 0))
			return -1;
		while ((w = waitpid(t->tid, &st, __WALL)) < 0 && errno == EINTR)
			;
		if (w != t->tid || !WIFSTOPPED(st))
			return -1;
		if (st >> 8 == (SIGTRAP | (PTRACE_EVENT_SECCOMP << 8)))
			continue;
		if (WSTOPSIG(st) == SIGTRAP && !(st >> 16)) {
			if (ptrace(PTRACE_GETREGS, t->tid, 0, &r) ||
			    r.rip != gadget + 3)
				return -1;
			*ret = (long)r.rax;
			return 0;
		}
		if (!(st >> 16) && WSTOPSIG(st) != SIGSTOP)
			*sig = WSTOPSIG(st);
	}
	return -1;
}

/* Map the shared page into t's process at `at`: its address, 0 if it
 * could not (why into note). */
static uint64_t map_page(struct session *s, struct thread *t, uint64_t gadget,
			 uint64_t at, char *note, size_t len)
{
	struct user_regs_struct base = t->regs;
	char path[64];
	long fd = -1, m = -1, ignore;
	int sig = 0;
	uint64_t r = 0;
	uint64_t none[6] = { 0 };

	(void)s;
	/* out of the execve first: the kernel writes its result into rax
	 * on the way out, over the next syscall's number */
	base.rax = 0;
	base.orig_rax = (uint64_t)-1;
	if (remote(t, &base, gadget, -1, none, &ignore, &sig)) {
		snprintf(note, len, "it stopped elsewhere");
		goto out;
	}
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)getpid(), g_fd);
	if (mem_write(t->p, gadget + 8, path, strlen(path) + 1)) {
		snprintf(note, len, "its vDSO cannot be written");
		return 0;
	}
	uint64_t a_open[6] = { (uint64_t)AT_FDCWD, gadget + 8,
			       O_RDWR | O_CLOEXEC, 0, 0, 0 };

	if (remote(t, &base, gadget, SYS_openat, a_open, &fd, &sig) || fd < 0) {
		snprintf(note, len, "it cannot open ptloom's page (%s)",
			 fd < 0 && fd > -4096 ? strerror((int)-fd) : "stopped");
		goto out;
	}
	uint64_t a_mmap[6] = { at, PAGE, PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_FIXED_NOREPLACE, (uint64_t)fd,
			       0 };

	if (remote(t, &base, gadget, SYS_mmap, a_mmap, &m, &sig) ||
	    (uint64_t)m != at)
		snprintf(note, len, "it cannot map ptloom's page at %#llx: %s",
			 (unsigned long long)at,
			 m < 0 && m > -4096 ? strerror((int)-m) : "elsewhere");
	else
		r = at;
	uint64_t a_close[6] = { (uint64_t)fd, 0, 0, 0, 0, 0 };

	remote(t, &base, gadget, SYS_close, a_close, &ignore, &sig);
	if (!r && m > 0 && m < -4096l) {
		uint64_t a_unmap[6] = { (uint64_t)m, PAGE, 0, 0, 0, 0 };

		remote(t, &base, gadget, SYS_munmap, a_unmap, &ignore, &sig);
	}
out:
	/* where the exec left it, its result in rax */
	ptrace(PTRACE_SETREGS, t->tid, 0, &base);
	t->regs = base;
	t->regs_valid = true;
	t->regs_dirty = false;
	if (sig)
		syscall(SYS_tgkill, t->p->pid, t->tid, sig);
	return r;
}

bool agent_install(struct session *s, struct thread *t)
{
	struct process *p = t->p;
	uint64_t lo, hi, top, stack_hi;
	size_t blob = (size_t)(ptloom_agent_end - ptloom_agent_start);

	p->ag_page = p->ag_lo = p->ag_hi = p->ag_blob = 0;
	if (regs_set(t) || regs_get(t) ||
	    !find_vdso(p->pid, &lo, &hi, &top, &stack_hi))
		return false;
	uint8_t *b = malloc(hi - lo);

	if (!b)
		return false;
	if (mem_read(p, lo, b, hi - lo) ||
	    (!(plan.ok && plan.len == hi - lo && !memcmp(plan.bytes, b, hi - lo)) &&
	     !make_plan(b, hi - lo))) {
		free(b);
		return false;
	}
	free(b);
	uint64_t code = lo + plan.host + BLOB_AT;
	uint64_t page = 0;

	if (!s->cfg->no_fast_path && !s->ag_note[0]) {
		/* above the mmap base, where no mmap(NULL) of the program
		 * goes (its layout stays what it is without the page), and
		 * below where the stack may grow */
		uint64_t at = (top + (2ul << 20)) & ~((1ul << 20) - 1);
		struct rlimit rl;

		if (!agent_page())
			snprintf(s->ag_note, sizeof(s->ag_note),
				 "ptloom's shared page: %s", strerror(errno));
		else if (prlimit(p->pid, RLIMIT_STACK, NULL, &rl) ||
			 rl.rlim_cur == RLIM_INFINITY || !stack_hi ||
			 at + PAGE + rl.rlim_cur + (2ul << 20) > stack_hi)
			snprintf(s->ag_note, sizeof(s->ag_note),
				 "no room for ptloom's page below the stack");
		else {
			static const uint8_t gadget[3] = { 0x0f, 0x05, 0xcc };

			if (!mem_write(p, code, gadget, sizeof(gadget)))
				page = map_page(s, t, code, at, s->ag_note,
						sizeof(s->ag_note));
		}
	}
	/* the code (with its two words), then a jump at each entry */
	uint8_t *c = malloc(blob);

	if (!c)
		return false;
	memcpy(c, ptloom_agent_start, blob);
	uint64_t on = page != 0;

	memcpy(c, &page, 8);
	memcpy(c + 8, &on, 8);
	bool ok = !mem_write(p, code, c, blob);

	free(c);
	for (int j = 0; ok && j < plan.n; j++) {
		uint64_t at = lo + plan.f[j].off;
		uint64_t to = code + (uint64_t)(entry_of(plan.f[j].kind) -
						ptloom_agent_start);
		int32_t rel = (int32_t)(to - (at + 5));
		uint8_t jmp[5] = { 0xe9 };

		memcpy(jmp + 1, &rel, 4);
		ok = !mem_write(p, at, jmp, sizeof(jmp));
	}
	if (!ok)
		return false; /* the process is gone */
	p->ag_lo = lo;
	p->ag_hi = hi;
	p->ag_blob = code;
	p->ag_page = page;
	if (page)
		s->ag = g_page;
	return true;
}

void agent_inherit(struct process *child, const struct process *parent)
{
	child->ag_lo = parent->ag_lo;
	child->ag_hi = parent->ag_hi;
	child->ag_blob = parent->ag_blob;
	child->ag_page = parent->ag_page;
}

void agent_disable_in(const struct process *parent, pid_t child)
{
	char name[64];
	uint64_t off = 0;
	int fd;

	if (!parent->ag_page)
		return;
	snprintf(name, sizeof(name), "/proc/%d/mem", (int)child);
	if ((fd = open(name, O_WRONLY | O_CLOEXEC)) < 0)
		return;
	(void)!pwrite(fd, &off, 8, (off_t)(parent->ag_blob + 8)); /* or gone */
	close(fd);
}

void agent_resume(struct session *s)
{
	struct agent_data *d = s->ag;

	if (!d)
		return;
	d->now = s->now;
	d->quantum = s->quantum;
	d->realtime = s->realtime_base;
	s->ag_now = s->now;
	s->ag_reads = d->reads;
	s->ag_synced = true;
}

void agent_stopped(struct session *s)
{
	struct agent_data *d = s->ag;

	if (!d || !s->ag_synced)
		return;
	uint64_t now = __atomic_load_n(&d->now, __ATOMIC_RELAXED);
	uint64_t reads = __atomic_load_n(&d->reads, __ATOMIC_RELAXED);

	if (now != s->ag_now) {
		s->now += now - s->ag_now;
		s->ag_now = now;
	}
	if (reads != s->ag_reads) {
		/* time_observed(): the choices cannot change while the
		 * program runs */
		if (s->choices)
			s->time_used = true;
		s->stop_kinds[STOPK_AGENT_CLOCK] += reads - s->ag_reads;
		s->ag_reads = reads;
	}
}

bool agent_code(const struct process *p, uint64_t pc)
{
	return pc >= p->ag_lo && pc < p->ag_hi;
}

bool agent_page_at(const struct process *p, uint64_t lo)
{
	return p->ag_page && lo == p->ag_page;
}
