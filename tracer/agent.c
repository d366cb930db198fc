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
#include <linux/futex.h>
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
#include "tramp.h"
#include "agent_layout.h"

extern const uint8_t ptloom_boot_start[], ptloom_boot_code[],
	ptloom_boot_end[];
extern const uint8_t ptloom_ho_start[], ptloom_ho_flsaved[], ptloom_ho_r12[],
	ptloom_ho_saved[], ptloom_ho_committed[], ptloom_ho_clocked[],
	ptloom_ho_handing[], ptloom_ho_handed[], ptloom_ho_park[],
	ptloom_ho_taken[], ptloom_ho_stopping[],
	ptloom_ho_trap[], ptloom_ho_fix1[], ptloom_ho_fix2[], ptloom_ho_end[];
extern const uint8_t ptloom_agent_start[], ptloom_agent_end[],
	ptloom_agent_clock_gettime[], ptloom_agent_gettimeofday[],
	ptloom_agent_time[], ptloom_agent_clock_getres[],
	ptloom_agent_getcpu[], ptloom_agent_enosys[];

/* The shared page (tracer/agent.S and the trampolines of tracer/tramp.c
 * read it at these offsets). */
struct agent_data {
	uint64_t now;		/* the virtual clock: session.now */
	uint64_t quantum;	/* session.quantum */
	uint64_t realtime;	/* session.realtime_base */
	uint64_t reads;		/* clock reads answered in the program */
	uint64_t on;		/* table entries that say "log" */
	uint64_t cursor;	/* offset of the log's next free entry */
	uint64_t limit;		/* offset no entry may reach */
	uint64_t region;	/* where every process's trampolines are */
	uint64_t scr_rax, scr_r11, scr_fl; /* a slot's saved registers */
	uint64_t scr_ea;	/* an access slot's address */
	uint64_t scr_new;	/* a futex slot's cursor after its entry */
	/* futex slots: address, waiters; TRAMP_NWAIT times */
	uint64_t waddr[2 * TRAMP_NWAIT];
	/* the hand-off's words (agent_layout.h) */
	uint64_t ho_cur, ho_sw, ho_lim, ho_id, ho_jmp, ho_key;
	uint64_t pad[19 - 2 * TRAMP_NWAIT - 6];
	uint64_t table[AGENT_TRAMPS]; /* each slot's way: log or stop */
};

/* a point logged by a trampoline */
struct agent_entry {
	uint64_t slot, rdi, rsi, ret;
};

_Static_assert(offsetof(struct agent_data, now) == TRAMP_NOW, "now");
_Static_assert(offsetof(struct agent_data, quantum) == TRAMP_QUANTUM, "q");
_Static_assert(offsetof(struct agent_data, cursor) == TRAMP_CURSOR, "cursor");
_Static_assert(offsetof(struct agent_data, limit) == TRAMP_LIMIT, "limit");
_Static_assert(offsetof(struct agent_data, scr_rax) == TRAMP_SCR_RAX, "rax");
_Static_assert(offsetof(struct agent_data, scr_r11) == TRAMP_SCR_R11, "r11");
_Static_assert(offsetof(struct agent_data, scr_fl) == TRAMP_SCR_FL, "fl");
_Static_assert(offsetof(struct agent_data, scr_ea) == TRAMP_SCR_EA, "ea");
_Static_assert(offsetof(struct agent_data, scr_new) == TRAMP_SCR_NEW, "new");
_Static_assert(offsetof(struct agent_data, waddr) == TRAMP_WADDR, "waddr");
_Static_assert(offsetof(struct agent_data, table) == TRAMP_TABLE, "table");
_Static_assert(sizeof(struct agent_data) <= TRAMP_LOG, "log");
_Static_assert(sizeof(struct agent_entry) == TRAMP_ENTRY, "entry");
_Static_assert(offsetof(struct agent_data, ho_cur) == HO_CUR &&
		       offsetof(struct agent_data, ho_sw) == HO_SW &&
		       offsetof(struct agent_data, ho_lim) == HO_LIM &&
		       offsetof(struct agent_data, ho_id) == HO_ID &&
		       offsetof(struct agent_data, ho_jmp) == HO_JMP &&
		       offsetof(struct agent_data, ho_key) == HO_KEY,
	       "the hand-off's words");
_Static_assert(offsetof(struct agent_data, region) == 56, "region");
_Static_assert(TRAMP_SLOT == 224 && TRAMP_DISP == 161 && TRAMP_LOG == 2048 &&
		       TRAMP_INT3 == TRAMP_DISP - 1,
	       "agent.S's T_SLOT, T_DISP, P_LOG");
_Static_assert(HO_DEC + HO_NDEC * 8 <= HO_SAVE &&
		       HO_SAVE + HO_MAX * HO_SV <= (64 << 10),
	       "the hand-off's words fit in the page");

#define PAGE (64ul << 10) /* the page and its log */
#define LOG_START ((uint64_t)TRAMP_LOG)
/* the region: the slots, then the hand-off's stubs (one a slot) and its
 * code (agent.S) */
#define HO_STUBS ((uint64_t)AGENT_TRAMPS * TRAMP_SLOT)
#define HO_STUB 32
#define HO_CODE (HO_STUBS + (uint64_t)AGENT_TRAMPS * HO_STUB)
#define HO_CODE_MAX 1024ul
/* the rdtsc slots (tsc.c) after the hand-off's code */
#define TSC_AREA (HO_CODE + HO_CODE_MAX)
#define CODE_LEN \
	((TSC_AREA + (uint64_t)AGENT_TSC_SLOTS * TRAMP_TSLOT + 4095) & ~4095ul)
#define BLOB_AT 16 /* the code's place in its host function */
/* race discovery's access slots: at most this region, near the
 * executable (and the page's second view before it) */
#define NEAR_MAX (8ul << 20)
#define NEAR_MIN (256ul << 10)

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
	size_t blob = (size_t)(ptloom_agent_end - ptloom_agent_start),
	       boot = (size_t)(ptloom_boot_end - ptloom_boot_start);
	uint8_t *copy = malloc(len);

	if (boot > blob)
		blob = boot; /* both go where the code goes */
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
	static struct proc_map m[256];
	bool more;
	int n = proc_maps(pid, m, 256, &more);
	uint64_t stack_lo = 0;

	*lo = *hi = *top = *stack_hi = 0;
	for (int i = 0; i < n; i++)
		if (m[i].vdso) {
			*lo = m[i].lo;
			*hi = m[i].hi;
		} else if (m[i].stack) {
			stack_lo = m[i].lo;
			*stack_hi = m[i].hi;
		}
	for (int i = 0; i < n && m[i].hi <= stack_lo; i++)
		*top = m[i].hi;
	return !more && *lo && *hi > *lo && *hi - *lo <= (1u << 20);
}

/*
 * Run agent.S's boot code in t, stopped at its exec, from `at` (where it
 * was written into the vDSO) to its int3: a seccomp stop on the way lets
 * its syscall run; a signal that arrives meanwhile is kept in *sig to be
 * sent again.  The registers it ends with into *r; 0, or -1 if it stopped
 * elsewhere or died (its death is not collected: the session's next wait
 * finds it).
 */
static int run_boot(struct thread *t, const struct user_regs_struct *base,
		    uint64_t at, struct user_regs_struct *r, int *sig)
{
	uint64_t end = at + (uint64_t)(ptloom_boot_end - ptloom_boot_start);

	*r = *base;
	r->rip = at + (uint64_t)(ptloom_boot_code - ptloom_boot_start);
	if (ptrace(PTRACE_SETREGS, t->tid, 0, r))
		return -1;
	for (int i = 0; i < 64; i++) {
		int st;
		pid_t w;

		siginfo_t si;

		if (ptrace(PTRACE_CONT, t->tid, 0, 0))
			return -1;
		/* a death is left where it is, for the session's wait to
		 * find (only stops are taken here) */
		si.si_pid = 0;
		while (waitid(P_PID, (id_t)t->tid, &si,
			      WEXITED | WSTOPPED | __WALL | WNOWAIT) < 0)
			if (errno != EINTR)
				return -1;
		if (si.si_pid != t->tid || (si.si_code != CLD_TRAPPED &&
					    si.si_code != CLD_STOPPED))
			return -1;
		while ((w = waitpid(t->tid, &st, __WALL)) < 0 && errno == EINTR)
			;
		if (w != t->tid || !WIFSTOPPED(st))
			return -1;
		if (st >> 8 == (SIGTRAP | (PTRACE_EVENT_SECCOMP << 8)))
			continue;
		if (WSTOPSIG(st) == SIGTRAP && !(st >> 16))
			return ptrace(PTRACE_GETREGS, t->tid, 0, r) ||
					       r->rip != end
				       ? -1
				       : 0;
		if (!(st >> 16) && WSTOPSIG(st) != SIGSTOP)
			*sig = WSTOPSIG(st);
	}
	return -1;
}

/* A filter of the program's own, besides those ptloom runs under and the
 * launcher's (Seccomp_filters, where the kernel says), and race
 * discovery's second one (spawn.c, when session_config.observer): its
 * syscalls are the program's business (one may kill it), so none is run
 * in it. */
static bool own_filter(pid_t pid, bool discovery)
{
	static bool known, have_mine;
	static uint64_t mine;
	char path[64];
	uint64_t n;

	if (!known) {
		have_mine = proc_status_value("/proc/self/status",
					      "Seccomp_filters", 10, &mine);
		known = true;
	}
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	return have_mine &&
	       proc_status_value(path, "Seccomp_filters", 10, &n) &&
	       n > mine + 1 + discovery;
}

/* Map the shared page into t's process at `at`, and the trampolines'
 * code region at *code (0: none; *code becomes 0 if it could not be
 * mapped), running the boot code written at `boot`: at, or 0 if it could
 * not (why into note). */
static uint64_t map_page(struct session *s, struct thread *t, uint64_t boot,
			 uint64_t at, uint64_t *code, uint64_t *near,
			 uint64_t *near_len, char *note, size_t len)
{
	size_t n = (size_t)(ptloom_boot_end - ptloom_boot_start);
	struct user_regs_struct base = t->regs, r;
	uint8_t *b = malloc(n);
	uint64_t key = spawn_key(), ok = 0;
	int sig = 0;

	(void)s;
	if (!b)
		return 0;
	memcpy(b, ptloom_boot_start, n);
	memcpy(b, &key, 8);
	uint64_t page_len = PAGE, code_len = CODE_LEN;

	memcpy(b + 8, &at, 8);
	memcpy(b + 16, &page_len, 8);
	memcpy(b + 24, &code_len, 8);
	memcpy(b + 32, code, 8);
	snprintf((char *)b + 40, 64, "/proc/%d/fd/%d", (int)getpid(), g_fd);
	memcpy(b + 104, near, 8);
	memcpy(b + 112, near_len, 8);
	uint64_t want = *code, want_near = *near + PAGE, near_want = *near_len;

	*code = 0;
	*near_len = 0;
	if (mem_write(t->p, boot, b, n)) {
		snprintf(note, len, "its vDSO cannot be written");
		free(b);
		return 0;
	}
	free(b);
	/* the kernel writes execve's result into rax on the way out: the
	 * code sets every register it uses itself */
	base.rax = 0;
	base.orig_rax = (uint64_t)-1;
	if (run_boot(t, &base, boot, &r, &sig))
		snprintf(note, len, "it stopped elsewhere");
	else if ((int64_t)r.r12 < 0)
		snprintf(note, len, "it cannot open ptloom's page: %s",
			 strerror((int)-(int64_t)r.r12));
	else if (r.r13 != at)
		snprintf(note, len, "it cannot map ptloom's page at %#llx: %s",
			 (unsigned long long)at,
			 r.r13 >= (uint64_t)-4096 ? strerror((int)-(int64_t)r.r13)
						  : "elsewhere");
	else
		ok = at;
	/* the trampolines' region: without it, the page still serves the
	 * clock (breakpoints stay int3s) */
	*code = ok && want && r.r14 == want ? r.r14 : 0;
	if (ok && near_want && r.r15 == want_near)
		*near_len = near_want;
	else
		*near = 0;
	/* where the exec left it, its result in rax */
	ptrace(PTRACE_SETREGS, t->tid, 0, &base);
	t->regs = base;
	t->regs_valid = true;
	t->regs_dirty = false;
	t->regs_kernel = base;
	t->regs_kernel_known = true;
	if (sig)
		syscall(SYS_tgkill, t->p->pid, t->tid, sig);
	return ok;
}

/* Every slot's way back to its int3 (the region's address known). */
static void table_reset(struct agent_data *d, uint64_t region)
{
	d->region = region;
	for (int i = 0; i < AGENT_TRAMPS; i++)
		__atomic_store_n(&d->table[i],
				 region + (uint64_t)i * TRAMP_SLOT + TRAMP_INT3,
				 __ATOMIC_RELAXED);
	d->on = 0;
}

/* The first n slots log (on; not the passive ones when given) or
 * stop. */
static void table_set(struct agent_data *d, uint64_t n, bool on,
		      const struct tramp_slot *passive)
{
	for (uint64_t i = 0; i < n; i++)
		__atomic_store_n(&d->table[i],
				 d->region + i * TRAMP_SLOT +
					 (on && !(passive && (passive[i].passive ||
							      passive[i].freeing))
						  ? TRAMP_FAST
						  : TRAMP_INT3),
				 __ATOMIC_RELEASE);
	d->on = on ? n : 0;
}

/* p's free() and realloc() slots log (race discovery, t alone: the log
 * is open for its observations); true if it has any */
static bool frees_on(struct agent_data *d, const struct process *p)
{
	uint64_t last = 0;

	for (int i = 0; i < p->ntramp; i++)
		if (p->tslot[i].freeing) {
			__atomic_store_n(&d->table[i],
					 d->region + (uint64_t)i * TRAMP_SLOT +
						 TRAMP_FAST,
					 __ATOMIC_RELEASE);
			last = (uint64_t)i + 1;
		}
	if (last > d->on)
		d->on = last; /* (agent_stopped puts every word back) */
	return last != 0;
}

/*
 * The futex slots' waiter words (tramp.h) for p: every address of p's own
 * (its private key) that threads wait on, with their number, when
 * TRAMP_NWAIT at most; else its futex slots stop.
 */
static void futex_waiters_out(struct session *s, const struct process *p)
{
	struct agent_data *d = s->ag;
	uint64_t w[2 * TRAMP_NWAIT];
	int n = 0;
	bool fits = true, lifted = false;

	/* points lifted while nobody else could run (thread.c
	 * quiet_others): a wake that wakes somebody stops, so that they
	 * trap again before t runs on through them (world.c schedule), as
	 * without the agent */
	for (int i = 0; i < s->nprocs && !lifted; i++)
		lifted = s->procs[i] && !s->procs[i]->dead &&
			 s->procs[i]->nlifted;

	for (int i = 0; i < TRAMP_NWAIT; i++) {
		w[2 * i] = ~0ull; /* no address: 0 waiters */
		w[2 * i + 1] = 0;
	}

	for (size_t i = 0; i < s->ft.n; i++) {
		uint64_t a = s->ft.w[i].addr ^ ((uint64_t)p->idx << 48);
		int k = 0;

		if (a >> 47)
			continue; /* another process's, or a shared key */
		while (k < n && w[2 * k] != a)
			k++;
		if (k == n) {
			if (n == TRAMP_NWAIT) {
				fits = false;
				break;
			}
			w[2 * n] = a;
			w[2 * n++ + 1] = 0;
		}
		/* a lock's waiter is no wake's (two: the slot stops) */
		w[2 * k + 1] +=
			s->ft.w[i].bitset == FUTEX_PI_WAITER || lifted ? 2 : 1;
	}
	memcpy(d->waddr, w, sizeof(w));
	for (int i = 0; !fits && i < p->ntramp; i++)
		if (p->tslot[i].futex && !p->tslot[i].second)
			__atomic_store_n(&d->table[i],
					 d->region + (uint64_t)i * TRAMP_SLOT +
						 TRAMP_FSTOP,
					 __ATOMIC_RELEASE);
}

/* The executable's mappings [lo, hi): the lowest file mapping's, as far
 * as its file goes. */
static bool exe_span(pid_t pid, uint64_t *lo, uint64_t *hi)
{
	char name[64], line[4352], first[4096] = "";
	FILE *f;

	snprintf(name, sizeof(name), "/proc/%d/maps", (int)pid);
	if (!(f = fopen(name, "re")))
		return false;
	*lo = *hi = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a, b;
		char path[4096] = "";

		if (sscanf(line, "%llx-%llx %*s %*s %*s %*s %4095s", &a, &b,
			   path) < 3 || path[0] != '/')
			continue;
		if (!first[0]) {
			snprintf(first, sizeof(first), "%s", path);
			*lo = a;
		}
		if (!strcmp(path, first))
			*hi = b;
	}
	fclose(f);
	return first[0] != 0;
}

/* Where race discovery's access slots go (the page's second view, then
 * *len bytes of slots): below the executable, within a rel32 of all of
 * it; 0 if there is no room. */
static uint64_t near_place(pid_t pid, uint64_t *len)
{
	uint64_t lo, hi, floor = 1ul << 20, at, n = NEAR_MAX;
	FILE *f = fopen("/proc/sys/vm/mmap_min_addr", "re");
	unsigned long long min = 0;

	if (f) {
		if (fscanf(f, "%llu", &min) == 1 && min > floor)
			floor = (min + (1ul << 20) - 1) & ~((1ul << 20) - 1);
		fclose(f);
	}
	*len = 0;
	if (!exe_span(pid, &lo, &hi))
		return 0;
	if (lo >= floor + PAGE + NEAR_MAX + (16ul << 20)) {
		at = (lo - (16ul << 20) - PAGE - NEAR_MAX) & ~((1ul << 20) - 1);
	} else if (lo >= floor + PAGE + NEAR_MIN) {
		/* an executable linked low (0x400000): under it */
		at = floor;
		if (lo - at - PAGE < n)
			n = (lo - at - PAGE) & ~4095ul;
	} else {
		return 0;
	}
	if (hi - at >= (2ul << 30) - (1ul << 20))
		return 0;
	*len = n;
	return at;
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
	uint64_t page = 0, tramps = 0, near = 0, near_len = 0;
	char note[sizeof(s->ag_note)] = "";

	if (!s->cfg->no_fast_path) {
		/* above the mmap base, where no mmap(NULL) of the program
		 * goes (its layout stays what it is without the page), and
		 * below where the stack may grow */
		uint64_t at = (top + (2ul << 20)) & ~((1ul << 20) - 1);
		struct rlimit rl;

		if (!agent_page())
			snprintf(note, sizeof(note), "ptloom's shared page: %s",
				 strerror(errno));
		else if (own_filter(p->pid, s->cfg->observer != NULL))
			snprintf(note, sizeof(note),
				 "it runs under a seccomp filter of its own");
		else if (prlimit(p->pid, RLIMIT_STACK, NULL, &rl) ||
			 rl.rlim_cur == RLIM_INFINITY || !stack_hi ||
			 at + PAGE + CODE_LEN + rl.rlim_cur + (2ul << 20) >
				 stack_hi)
			snprintf(note, sizeof(note),
				 "no room for ptloom's page below the stack");
		else {
			/* every process's trampolines at one address, the
			 * first's, so that the page's table serves them all;
			 * near the page (a rel32 from the slots) */
			uint64_t r = g_page->region;

			tramps = r && r - at + (1ul << 30) < (2ul << 30)
					 ? r
					 : r ? 0 : at + PAGE;
			/* (race discovery's access slots, an executable's
			 * rdtsc slots) */
			if (s->cfg->observer || tsc_exe_slots(p))
				near = near_place(p->pid, &near_len);
			page = map_page(s, t, code, at, &tramps, &near,
					&near_len, note, sizeof(note));
			if (tramps && !g_page->region)
				table_reset(g_page, tramps);
		}
		/* the run's first such note, each process tries anew */
		if (!page && note[0] && !s->ag_note[0])
			snprintf(s->ag_note, sizeof(s->ag_note), "P%d %s: %s",
				 p->idx, p->comm, note);
	}
	/* the code (with its two words) and a jump at each entry, into a
	 * copy of the image written back in one piece */
	size_t boot = (size_t)(ptloom_boot_end - ptloom_boot_start);
	uint8_t *img = malloc(plan.len);
	uint64_t on = page != 0, from = plan.host,
		 /* the boot code's tail, if longer, gets its bytes back */
		 to = plan.host + BLOB_AT + (boot > blob ? boot : blob);

	if (!img)
		return false;
	memcpy(img, plan.bytes, plan.len);
	memcpy(img + plan.host + BLOB_AT, ptloom_agent_start, blob);
	memcpy(img + plan.host + BLOB_AT, &page, 8);
	memcpy(img + plan.host + BLOB_AT + 8, &on, 8);
	for (int j = 0; j < plan.n; j++) {
		uint64_t at = plan.f[j].off;
		uint64_t dst = plan.host + BLOB_AT +
			       (uint64_t)(entry_of(plan.f[j].kind) -
					  ptloom_agent_start);
		int32_t rel = (int32_t)(dst - (at + 5));

		img[at] = 0xe9; /* jmp rel32 */
		memcpy(img + at + 1, &rel, 4);
		if (at < from)
			from = at;
		if (at + 5 > to)
			to = at + 5;
	}
	bool ok = !mem_write(p, lo + from, img + from, to - from);

	free(img);
	if (!ok)
		return false; /* the process is gone */
	p->ag_lo = lo;
	p->ag_hi = hi;
	p->ag_blob = code;
	p->ag_page = page;
	p->ag_code = tramps;
	p->ntramp = 0;
	p->ag_page2 = near_len ? near : 0;
	p->ag_near = near_len ? near + PAGE : 0;
	p->ag_near_len = near_len;
	p->nacc = 0;
	p->acc_int3 = false;
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
	child->ag_code = parent->ag_code;
	child->ntramp = parent->ntramp;
	child->ag_page2 = parent->ag_page2;
	child->ag_near = parent->ag_near;
	child->ag_near_len = parent->ag_near_len;
	child->nacc = parent->nacc;
	child->acc_int3 = parent->acc_int3;
	memcpy(child->tslot, parent->tslot, sizeof(child->tslot));
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

/* The points the trampolines logged since the last look, as the stops
 * they replace would have been taken (world.c session_agent_point), in
 * the thread the supervisor let log them. */
static void agent_flush(struct session *s)
{
	struct agent_data *d = s->ag;
	uint64_t end = __atomic_load_n(&d->cursor, __ATOMIC_ACQUIRE);

	if (end > HO_LOG_END)
		end = HO_LOG_END;
	while (s->ag_flushed + TRAMP_ENTRY <= end) {
		const struct agent_entry *e =
			(const void *)((const char *)d + s->ag_flushed);
		struct thread *t = s->ag_solo >= 0 && s->ag_solo < s->nth
					   ? &s->th[s->ag_solo]
					   : NULL;
		uint32_t fs; /* a futex slot's index */

		s->ag_flushed += TRAMP_ENTRY;
		if (e->slot >> HO_ENTRY_FLAG & 1) {
			/* the hand-off's: who passed it, and the plan's
			 * pick there */
			uint64_t who = e->slot >> 32 & 0xffff;
			uint32_t id = (uint32_t)e->slot;
			uint64_t k = (s->ag_flushed - TRAMP_ENTRY - LOG_START) /
				     TRAMP_ENTRY;
			struct thread *u = who < (uint64_t)s->nth
						   ? &s->th[who]
						   : NULL;

			if (u && id < (uint32_t)u->p->ntramp && k < (uint64_t)s->ho_n)
				session_agent_handoff_point(
					s, u, u->p->tslot[id].site, e->rdi,
					e->rsi, e->ret, s->ho_picks[k]);
			else if (!s->failed)
				session_fail(s, FAIL_INTERNAL, u,
					     "internal error: a hand-off point "
					     "outside its plan");
			continue;
		}
		if (t && (e->slot & TRAMP_ACCESS))
			session_agent_access(s, t, e->slot & ~TRAMP_ACCESS,
					     e->rdi);
		else if (t && (e->slot & TRAMP_FUTEX) &&
			 (fs = (uint32_t)e->slot & ~(uint32_t)TRAMP_FUTEX) <
				 (uint32_t)t->p->ntramp &&
			 t->p->tslot[fs].futex)
			session_agent_futex(s, t, t->p->tslot[fs].site, e->rdi,
					    e->rsi, e->ret,
					    (int)(e->slot >> 32));
		else if (t && e->slot < (uint64_t)t->p->ntramp &&
			 t->p->tslot[e->slot].freeing)
			session_agent_free(s, t, t->p->tslot[e->slot].site,
					   e->rdi, e->rsi, e->ret);
		else if (t && e->slot < (uint64_t)t->p->ntramp)
			session_agent_point(s, t, t->p->tslot[e->slot].site,
					    e->rdi, e->rsi, e->ret);
		/* (else never written so: the log is ptloom's) */
	}
}

/* Access slots are entered through int3s from now on in every process
 * (their sequence shares the page's scratch words: one thread at a time),
 * never again through jumps in this run. */
static void access_by_int3(struct session *s)
{
	for (int i = 0; i < s->nprocs; i++) {
		struct process *p = s->procs[i];

		if (p && !p->dead && p->nacc && !p->acc_int3)
			bp_access_int3(p);
	}
}

/*
 * The hand-off between threads in the program (issue 25's design, see
 * docs/INTERNALS.md "The hand-off"): while a plan of the strategy's
 * coming picks runs (world.c session_handoff_plan), every thread that can
 * run waits at a trampolined call, and the table sends those calls to
 * per-slot stubs and the common code of agent.S instead of the slots'
 * own logging: each point is logged with the thread that passed it; at
 * a planned switch the thread sets the next one's go word, wakes it and
 * waits on its own (shared futexes on the page; their syscalls carry the
 * launcher's key past ptloom's filter).  A thread waiting so is parked
 * (thread.ho_parked): at its point in the model, its registers in its
 * save area; the supervisor sends it on with its go word (agent_ho_wake)
 * or brings it to a ptrace stop at its point when it needs its
 * registers (agent_ho_materialise).  The thread whose turn it is,
 * stopped by a signal in the park or in the restore after it, is taken
 * apart (ho_took_apart); a stop elsewhere in this code is FAIL_INTERNAL.
 * PTLOOM_HANDOFF=0 turns it off (the same runs).
 */
#define HO_AT(d, off) ((char *)(d) + (off))
#define HO_SAVE_OF(d, i) ((uint64_t *)HO_AT(d, HO_SAVE + (uint64_t)(i) * HO_SV))
#define HO_GO_OF(d, i) ((uint32_t *)HO_AT(d, HO_SAVE + (uint64_t)(i) * HO_SV + SV_GO))
#define HO_OFF(sym) ((uint64_t)((sym) - ptloom_ho_start))

static bool ho_enabled(void)
{
	static int on = -1;

	if (on < 0) {
		const char *e = getenv("PTLOOM_HANDOFF");

		on = !e || strcmp(e, "0"); /* PTLOOM_HANDOFF=0: off */
	}
	return on;
}

/* No switch from now on: agent.S reads HO_SW once at a point and changes
 * it by a compare-and-swap, so one that passed its check goes through;
 * the turn's holder stops at the plan's next switch. */
static void ho_no_switch(struct agent_data *d)
{
	__atomic_store_n(&d->ho_sw, ~0ull, __ATOMIC_SEQ_CST);
	__atomic_store_n(&d->ho_lim, ~1ull, __ATOMIC_SEQ_CST);
}

static long ho_futex(uint32_t *w, int op, uint32_t val)
{
	return syscall(SYS_futex, w, op, val, NULL, NULL, 0);
}

/* The stubs and the common code in p's region, once. */
static bool ho_write(struct process *p)
{
	size_t blob = (size_t)(ptloom_ho_end - ptloom_ho_start);
	size_t len = (size_t)(HO_CODE - HO_STUBS) + blob;
	uint64_t base = p->ag_code + HO_STUBS, code = p->ag_code + HO_CODE;
	uint8_t *b;
	bool ok = true;

	if (p->ho_ready)
		return true;
	if (!p->ag_code || !p->ag_page || blob > HO_CODE_MAX ||
	    !(b = malloc(len)))
		return false;
	memset(b, 0xcc, len);
	for (uint32_t i = 0; i < AGENT_TRAMPS && ok; i++) {
		uint8_t *o = b + i * HO_STUB;
		uint64_t at = base + i * HO_STUB;
		int64_t r;
		int32_t r32;

		/* mov %r11, SCR_R11(%rip); mov %rax, SCR_RAX(%rip);
		 * mov $i, %eax; lea page(%rip), %r11; jmp common */
		static const uint8_t tpl[31] = {
			0x4c, 0x89, 0x1d, 0, 0, 0, 0, 0x48, 0x89, 0x05, 0,
			0,    0,    0,    0xb8, 0, 0, 0, 0, 0x4c, 0x8d, 0x1d,
			0,    0,    0,    0,    0xe9, 0, 0, 0, 0 };
		const struct {
			int at, end;
			uint64_t to;
		} rel[4] = { { 3, 7, p->ag_page + TRAMP_SCR_R11 },
			     { 10, 14, p->ag_page + TRAMP_SCR_RAX },
			     { 22, 26, p->ag_page },
			     { 27, 31, code } };

		memcpy(o, tpl, sizeof(tpl));
		memcpy(o + 15, &i, 4);
		for (int k = 0; k < 4; k++) {
			r = (int64_t)(rel[k].to - (at + (uint64_t)rel[k].end));
			if (r != (int32_t)r)
				ok = false;
			r32 = (int32_t)r;
			memcpy(o + rel[k].at, &r32, 4);
		}
	}
	uint8_t *c = b + (HO_CODE - HO_STUBS);

	memcpy(c, ptloom_ho_start, blob);
	/* the two references to the page's HO_JMP */
	uint64_t fix[2] = { HO_OFF(ptloom_ho_fix1), HO_OFF(ptloom_ho_fix2) };

	for (int k = 0; k < 2 && ok; k++) {
		int64_t r = (int64_t)(p->ag_page + HO_JMP - (code + fix[k]));
		int32_t r32 = (int32_t)r;

		ok = r == r32;
		memcpy(c + fix[k] - 4, &r32, 4);
	}
	if (ok && !mem_write(p, base, b, len))
		p->ho_ready = true;
	free(b);
	return p->ho_ready;
}

/* The slot index of p's breakpoint at site, or -1. */
static int ho_slot_of(const struct process *p, uint64_t site)
{
	for (int i = 0; i < p->ntramp; i++)
		if (!p->tslot[i].futex && p->tslot[i].site == site)
			return i;
	return -1;
}

/* o, stopped at its trampolined point, waits in the program from now on:
 * its registers into its save area, on at the park.  false: it cannot. */
static bool ho_park(struct session *s, struct thread *o)
{
	struct agent_data *d = s->ag;
	struct bp *b = bp_find(o->p, o->bp_addr);
	int id = b ? ho_slot_of(o->p, o->bp_addr) : -1;
	uint64_t *sv = HO_SAVE_OF(d, o->idx);
	struct user_regs_struct *r = &o->regs;

	if (!b || !b->tramp || id < 0 || regs_get(o))
		return false;
	sv[SV_RAX / 8] = r->rax;
	sv[SV_RCX / 8] = r->rcx;
	sv[SV_RDX / 8] = r->rdx;
	sv[SV_RSI / 8] = r->rsi;
	sv[SV_RDI / 8] = r->rdi;
	sv[SV_R8 / 8] = r->r8;
	sv[SV_R9 / 8] = r->r9;
	sv[SV_R10 / 8] = r->r10;
	sv[SV_R11 / 8] = r->r11;
	sv[SV_R12 / 8] = r->r12;
	sv[SV_FL / 8] = ((r->eflags & 0xd5) << 8) | ((r->eflags >> 11) & 1);
	sv[SV_TGT / 8] = b->tramp + TRAMP_DISP;
	sv[SV_PHASE / 8] = SVP_PARKED;
	sv[SV_ID / 8] = (uint64_t)id;
	__atomic_store_n(HO_GO_OF(d, o->idx), 0, __ATOMIC_RELEASE);
	struct user_regs_struct park = *r;

	park.rip = o->p->ag_code + HO_CODE + HO_OFF(ptloom_ho_park);
	park.r12 = o->p->ag_page + HO_SAVE + (uint64_t)o->idx * HO_SV;
	park.r9 = spawn_key();
	park.orig_rax = (uint64_t)-1;
	if (ptrace(PTRACE_SETREGS, o->tid, 0, &park) < 0 ||
	    ptrace(PTRACE_CONT, o->tid, 0, 0) < 0)
		return false;
	o->regs_valid = false;
	o->regs_dirty = false;
	o->regs_this_stop = false;
	o->ho_parked = true;
	return true;
}

/* the program's registers a save area holds (its flags: lahf/seto's;
 * no system call restarted); rip is the caller's */
static void ho_regs_from_save(struct user_regs_struct *r, const uint64_t *sv)
{
	r->rax = sv[SV_RAX / 8];
	r->rcx = sv[SV_RCX / 8];
	r->rdx = sv[SV_RDX / 8];
	r->rsi = sv[SV_RSI / 8];
	r->rdi = sv[SV_RDI / 8];
	r->r8 = sv[SV_R8 / 8];
	r->r9 = sv[SV_R9 / 8];
	r->r10 = sv[SV_R10 / 8];
	r->r11 = sv[SV_R11 / 8];
	r->r12 = sv[SV_R12 / 8];
	r->eflags = (r->eflags & ~0x8d5ull) | ((sv[SV_FL / 8] >> 8) & 0xd5) |
		    ((sv[SV_FL / 8] & 1) << 11);
	r->orig_rax = (uint64_t)-1;
}

/* A plan for t about to run: true when it runs (the table leads t's
 * calls to the hand-off's stubs). */
static bool ho_start(struct session *s, struct thread *t)
{
	struct agent_data *d = s->ag;
	uint16_t *pk = s->ho_picks;
	int n, cur = t->idx, first = -1;
	uint64_t end;

	if (!ho_enabled() || !t->p->ag_page || t->p->ag_code != d->region ||
	    !ho_write(t->p) ||
	    (n = session_handoff_plan(s, t, pk, HO_NDEC)) <= 0)
		return false;
	for (int k = 0; k < n && first < 0; k++) {
		if (pk[k] != cur)
			first = k;
		cur = pk[k];
	}
	if (first < 0)
		return false; /* t's alone: the known budget does that */
	/* every thread of the plan waits in the program */
	for (int k = 0; k < n; k++) {
		struct thread *o = &s->th[pk[k]];

		if (o != t && !o->ho_parked && !ho_park(s, o))
			return false; /* (those parked stay so) */
	}
	end = LOG_START + (uint64_t)n * TRAMP_ENTRY;
	/* each switch's word: whom it hands over to, where the next switch
	 * (or the plan's end) is */
	uint64_t *dec = (uint64_t *)HO_AT(d, HO_DEC);
	int last = -1;

	cur = t->idx;
	for (int k = 0; k < n; k++) {
		if (pk[k] != cur) {
			if (last >= 0)
				dec[last] |= (LOG_START +
					      (uint64_t)k * TRAMP_ENTRY) << 16 |
					     1ull << 63;
			dec[k] = pk[k];
			last = k;
		}
		cur = pk[k];
	}
	dec[last] |= end << 16;
	uint64_t sw = LOG_START + (uint64_t)first * TRAMP_ENTRY;

	HO_SAVE_OF(d, t->idx)[SV_PHASE / 8] = SVP_PARKED;
	d->ho_cur = (uint64_t)t->idx;
	d->ho_sw = sw;
	d->ho_lim = sw;
	d->ho_key = spawn_key();
	__atomic_store_n(HO_GO_OF(d, t->idx), 0, __ATOMIC_RELEASE);
	d->cursor = s->ag_flushed = s->ag_looked = LOG_START;
	__atomic_store_n(&d->limit, sw, __ATOMIC_RELEASE);
	for (int i = 0; i < t->p->ntramp; i++) {
		const struct tramp_slot *ts = &t->p->tslot[i];
		uint64_t to = ts->futex    ? d->region + (uint64_t)i * TRAMP_SLOT +
						 TRAMP_FAST
			      : ts->passive || ts->freeing
				      ? d->region + (uint64_t)i * TRAMP_SLOT +
						TRAMP_INT3
					    : d->region + HO_STUBS +
						  (uint64_t)i * HO_STUB;

		if (!ts->second)
			__atomic_store_n(&d->table[i], to, __ATOMIC_RELEASE);
	}
	d->on = (uint64_t)t->p->ntramp;
	futex_waiters_out(s, t->p);
	s->ho_n = n;
	s->ho_active = true;
	s->ho_frozen = false;
	s->ag_solo = t->idx;
	s->ag_known = true;
	return true;
}

int agent_ho_materialise(struct thread *t)
{
	struct agent_data *d = g_page;
	struct process *p = t->p;
	uint64_t *sv, trap;
	int resend = t->ho_resend, status;

	if (!t->ho_parked)
		return 0;
	t->ho_resend = 0;
	t->ho_parked = false;
	if (!d)
		return -ESRCH;
	sv = HO_SAVE_OF(d, t->idx);
	trap = p->ag_code + HO_CODE + HO_OFF(ptloom_ho_trap);
	__atomic_store_n(HO_GO_OF(d, t->idx), 2, __ATOMIC_RELEASE);
	ho_futex(HO_GO_OF(d, t->idx), FUTEX_WAKE, 1);
	for (;;) {
		siginfo_t si;

		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)t->tid, &si,
			   WEXITED | WSTOPPED | WNOWAIT | __WALL) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		/* its death, an exit's event: the session's to take */
		if (si.si_code != CLD_TRAPPED || (si.si_status >> 8))
			return -ESRCH;
		if (waitpid(t->tid, &status, __WALL) != t->tid ||
		    !WIFSTOPPED(status) ||
		    ptrace(PTRACE_GETREGS, t->tid, 0, &t->regs) < 0)
			return -ESRCH;
		if (WSTOPSIG(status) == SIGTRAP && t->regs.rip == trap + 1)
			break;
		/* a signal on the way: held back, sent again once it is at
		 * its point (as to a thread stopped there, it comes when
		 * the thread is sent on) */
		if (WSTOPSIG(status) != SIGTRAP && WSTOPSIG(status) != SIGSTOP)
			resend = WSTOPSIG(status);
		ptrace(PTRACE_CONT, t->tid, 0, 0);
	}
	t->regs_kernel = t->regs;
	t->regs_kernel_known = true;
	ho_regs_from_save(&t->regs, sv);
	t->regs.rip = t->bp_addr; /* at its point, as on_breakpoint left it */
	t->regs_valid = true;
	t->regs_dirty = true;
	t->regs_this_stop = true;
	if (resend)
		syscall(SYS_tgkill, p->pid, t->tid, resend);
	return 0;
}

bool agent_ho_wake(struct session *s, struct thread *t)
{
	struct agent_data *d = s->ag;

	/* (a spin watched by debug registers: those are set by ptrace,
	 * at a stop) */
	/* a signal held back while it was parked: it is brought to its
	 * ptrace stop, the signal sent again there, and goes on by ptrace,
	 * so that the signal meets it at its point as without the agent
	 * (sent again once it ran on, the handler ran from the park's
	 * code: a lost signal in pi_mutexes signal under -s random) */
	if (!t->ho_parked || !d || t->stop != STOP_BP || s->watching ||
	    t->ndr || t->ho_resend)
		return false;
	t->ho_parked = false;
	thread_set_running(s, t);
	__atomic_store_n(HO_GO_OF(d, t->idx), 1, __ATOMIC_RELEASE);
	ho_futex(HO_GO_OF(d, t->idx), FUTEX_WAKE, 1);
	return true;
}

bool agent_ho_freeze(struct session *s)
{
	struct agent_data *d = s->ag;
	uint64_t c;

	if (!s->ho_active || !d)
		return true;
	if (!s->ho_frozen) {
		ho_no_switch(d);
		s->ho_frozen = true;
		return false;
	}
	c = __atomic_load_n(&d->ho_cur, __ATOMIC_ACQUIRE);
	if (c < HO_MAX) {
		uint64_t ph = HO_SAVE_OF(d, c)[SV_PHASE / 8];

		if (ph == SVP_SAVED || ph == SVP_ON || ph == SVP_SWITCH)
			return false; /* inside the hand-off's code */
	}
	s->ho_active = false;
	s->ho_frozen = false;
	agent_flush(s);
	return true;
}

void agent_resume(struct session *s, struct thread *t)
{
	struct agent_data *d = s->ag;
	bool others = false;

	if (!d)
		return;
	if (d->on)
		table_set(d, d->on, false, NULL);
	d->limit = LOG_START; /* closed: an access slot stops */
	/* a thread still running (one starting, the one the log is of)
	 * may be inside a slot: its log stays where it is */
	for (int i = 0; i < s->nth && !others; i++)
		others = &s->th[i] != t && s->th[i].st == SCHED_RUNNING;
	if (s->ag_flushed != d->cursor && s->ag_synced && !others)
		agent_flush(s);
	d->now = s->now;
	d->quantum = s->quantum;
	d->realtime = s->realtime_base;
	s->ag_now = s->now;
	s->ag_reads = d->reads;
	/* every thread is stopped (any stopped inside a slot's sequence
	 * was put back), or the page holds another run's log: the log
	 * starts again */
	if (!others || !s->ag_synced) {
		d->cursor = s->ag_flushed = s->ag_looked = LOG_START;
		s->ag_solo = -1;
	}
	s->ag_synced = true;
	if (others) {
		access_by_int3(s);
		return;
	}
	uint64_t n = t && t->p->ag_page && t->p->ntramp
			     ? session_solo_budget(s, t)
			     : 0;

	if (n && s->ag_known && ho_start(s, t))
		return;

	if (!n && t && t->p->observing && s->cfg->observer) {
		/* race discovery: t's accesses (and its calls of free and
		 * realloc) go to the log, which takes them as the stops
		 * they replace (session_agent_access, session_agent_free) */
		bool frees = t->p->ag_code == d->region && frees_on(d, t->p);

		if (frees || (t->p->nacc && !t->p->acc_int3)) {
			d->limit = HO_LOG_END - TRAMP_ENTRY;
			s->ag_solo = t->idx;
			return;
		}
	}
	if (!n)
		return;
	if (n > (HO_LOG_END - LOG_START) / TRAMP_ENTRY)
		n = (HO_LOG_END - LOG_START) / TRAMP_ENTRY;
	d->limit = LOG_START + n * TRAMP_ENTRY;
	s->ag_solo = t->idx;
	if (t->p->ag_code == d->region) {
		table_set(d, (uint64_t)t->p->ntramp, true,
			  s->ag_known ? t->p->tslot : NULL);
		futex_waiters_out(s, t->p);
	}
}

/* The region unit of p's slots pc is in, or -1. */
static int slot_unit(const struct process *p, uint64_t pc)
{
	if (!p->ag_code || pc < p->ag_code ||
	    pc >= p->ag_code + (uint64_t)p->ntramp * TRAMP_SLOT)
		return -1;
	return (int)((pc - p->ag_code) / TRAMP_SLOT);
}

/* pc in one of p's futex slots: its offset there (and the site), or -1 */
static int agent_futex_slot_at(const struct process *p, uint64_t pc,
			       uint64_t *site)
{
	int i = slot_unit(p, pc);

	if (i < 0 || !p->tslot[i].futex)
		return -1;
	while (i > 0 && p->tslot[i].second)
		i--;
	*site = p->tslot[i].site;
	return (int)(pc - p->ag_code - (uint64_t)i * TRAMP_SLOT);
}

/* The registers a slot's sequence saved (TFIX_*) back from the scratch
 * words into t's: lahf's SF ZF AF PF CF in bits 15..8, seto's OF in
 * bit 0. */
static void scratch_back(const struct agent_data *d, struct thread *t,
			 int regs)
{
	if (regs & TFIX_R11)
		t->regs.r11 = d->scr_r11;
	if (regs & TFIX_RAX)
		t->regs.rax = d->scr_rax;
	if (regs & TFIX_FLAGS)
		t->regs.eflags = (t->regs.eflags & ~0x8d5ull) |
				 ((d->scr_fl >> 8) & 0xd5) |
				 ((d->scr_fl & 1) << 11);
}

/* t stopped while it could log: inside a slot's sequence, the registers
 * the sequence changed come back now and it starts again at the site, or,
 * past the commit, goes on at the displaced instructions (in a futex
 * slot: after the syscall), the clock advanced here if the sequence had
 * not (taken back if a futex slot's had, uncommitted) (tracer/tramp.c). */
static void agent_unwind(struct session *s, struct thread *t)
{
	struct agent_data *d = s->ag;
	struct tramp_fix f;
	uint64_t site;
	bool access;
	int off;

	t->regs_valid = false; /* a new stop */
	if (regs_get(t))
		return;
	t->regs_this_stop = true;
	if ((off = agent_futex_slot_at(t->p, t->regs.rip, &site)) >= 0) {
		struct tramp_ffix ff;

		if (!tramp_fix_futex((uint64_t)off, &ff))
			return;
		if (ff.past) {
			t->regs.rip = t->regs.rcx = site + TRAMP_FUTEX_LEN;
		} else {
			scratch_back(d, t, ff.regs);
			if (ff.unclock)
				__atomic_fetch_sub(&d->now, d->quantum,
						   __ATOMIC_RELAXED);
			/* (the way to the stop goes on where it is) */
			if (off < TRAMP_FSTOP || off >= TRAMP_SLOT)
				t->regs.rip = site;
		}
		t->regs_dirty = true;
		return;
	}
	int unit = slot_unit(t->p, t->regs.rip);

	if ((off = agent_slot_at(t->p, t->regs.rip, &site, &access)) < 0 ||
	    !(!access && unit >= 0 && t->p->tslot[unit].freeing
		      ? tramp_fix_free((uint64_t)off, &f)
		      : tramp_fix(access, (uint64_t)off, &f)))
		return;
	uint64_t slot = t->regs.rip - (uint64_t)off;

	scratch_back(d, t, f.regs);
	if (f.clock)
		__atomic_fetch_add(&d->now, d->quantum, __ATOMIC_RELAXED);
	/* starting again is starting at the site, whose jump leads here:
	 * a signal's handler (Go's, which asks whether the pc is a safe
	 * point) sees the program's own pc, as without the slot */
	t->regs.rip = f.resume ? slot + f.resume : site;
	t->regs_dirty = true;
}

/*
 * x, whose turn it is, stopped in the park or in the restore after it
 * (pc): a signal met it as it was handed the turn (or as it went on past
 * a logged point, or to its slot's int3).  It goes on from its target with
 * its registers from its save area, as the log says it does; a go word
 * the hand-over set (or is about to set: the thread handing over runs)
 * is taken here.  false: pc is elsewhere.
 */
static bool ho_took_apart(struct session *s, struct thread *x, uint64_t pc)
{
	struct agent_data *d = s->ag;
	uint64_t code = x->p->ag_code + HO_CODE;
	uint64_t *sv = HO_SAVE_OF(d, x->idx);
	uint32_t *go = HO_GO_OF(d, x->idx);

	if (x->idx >= HO_MAX || pc < code + HO_OFF(ptloom_ho_park) ||
	    pc >= code + HO_OFF(ptloom_ho_fix2))
		return false;
	if (pc < code + HO_OFF(ptloom_ho_taken)) {
		/* not taken yet: set, or about to be (the thread handing over
		 * runs between its log's HO_CUR and its go word); a hand-over
		 * stopped there itself is not taken apart */
		int i;

		for (i = 0; i < 200000 &&
			    __atomic_load_n(go, __ATOMIC_ACQUIRE) != 1;
		     i++)
			usleep(10);
		if (i == 200000)
			return false;
		__atomic_store_n(go, 0, __ATOMIC_RELEASE);
	}
	ho_regs_from_save(&x->regs, sv);
	/* on at its target; at its slot's int3 when it was on its way
	 * there and had not stepped its target back yet */
	x->regs.rip = sv[SV_TGT / 8] -
		      (pc == code + HO_OFF(ptloom_ho_stopping) ? 1 : 0);
	x->regs_dirty = true;
	return true;
}

bool agent_stopped(struct session *s, pid_t tid, int status)
{
	struct agent_data *d = s->ag;

	s->ag_taken = false;
	if (!d || !s->ag_synced)
		return false;
	struct thread *x = find_thread(s, tid);

	if (x && x->ho_parked && WIFSTOPPED(status) && !(status >> 16) &&
	    !(s->ho_active && x->idx == (int)d->ho_cur)) {
		/* a signal met a thread parked at its point: as to a thread
		 * stopped there, it comes when the thread goes on (sent
		 * again then); it waits on */
		int sig = WSTOPSIG(status);

		if (sig != SIGTRAP && sig != SIGSTOP) {
			x->ho_resend = sig;
			/* and nobody hands over to it in the program any
			 * more (the plan ends at its next switch) */
			ho_no_switch(d);
		}
		ptrace(PTRACE_CONT, x->tid, 0, 0);
		return true;
	}
	bool on = d->on;

	if (on)
		table_set(d, d->on, false, NULL);
	int odd = -1;

	/* a parked thread that dies, or meets its exit's event (another's
	 * exit_group), waits no more */
	if (x && x->ho_parked && (!WIFSTOPPED(status) || (status >> 16)))
		x->ho_parked = false;
	if (s->ho_active) {
		/* the plan ends at any stop; the parked stay parked */
		ho_no_switch(d);
		s->ho_active = s->ho_frozen = false;
		if (x && WIFSTOPPED(status) && !(status >> 16)) {
			uint64_t pc = 0;

			/* the thread whose turn it is runs (the log taken
			 * below says so: its hand-over is logged before its
			 * go word is set); another stopped while parked */
			if (x->idx == (int)d->ho_cur) {
				x->ho_parked = false;
				if (!regs_get(x))
					pc = x->regs.rip;
				if (ho_took_apart(s, x, pc))
					;
				else if (pc >= x->p->ag_code + HO_STUBS &&
					 pc < x->p->ag_code + CODE_LEN)
					odd = x->idx;
				else
					agent_unwind(s, x);
			} else {
				odd = x->idx;
				x->ho_parked = false; /* (stopped already) */
			}
		}
	} else if (s->ag_solo >= 0 && WIFSTOPPED(status)) {
		if (x && x->idx == s->ag_solo)
			agent_unwind(s, x);
	}
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
	agent_flush(s);
	if (odd >= 0 && !s->failed)
		session_fail(s, FAIL_INTERNAL, x,
			     "internal error: T%d stopped inside the agent's "
			     "hand-off between threads, which ptloom does not "
			     "take apart yet (PTLOOM_HANDOFF)",
			     odd);
	return false;
}

/* pc is in the displaced instructions of a slot of p's: the breakpoint's
 * site, whether it is an access slot, the program's own address of the
 * instruction there (the jump back: the address after the moved ones),
 * and the breakpoint */
static bool slot_unmove(struct process *p, uint64_t pc, uint64_t *site,
			bool *access, uint64_t *opc, struct bp **bp)
{
	int off = agent_slot_at(p, pc, site, access);

	return off >= TRAMP_DISP && (*bp = bp_find(p, *site)) && (*bp)->tramp &&
	       tramp_unmove((*bp)->orig, sizeof((*bp)->orig), *site,
			    (uint64_t)off, opc);
}

void agent_fault_pc(struct thread *t, int sig)
{
	uint64_t site, pc, caught = 0;
	bool access;
	struct bp *b;
	char path[64];
	siginfo_t si;

	if (regs_get(t))
		return;
	if (!slot_unmove(t->p, t->regs.rip, &site, &access, &pc, &b)) {
		/* an instruction moved with an rdtsc (tsc.c) */
		if (!tsc_fault_pc(t->p, t->regs.rip, &pc))
			return;
		site = 0;
		access = false;
	}
	/* an access slot's one instruction faulted (the kernel's signal):
	 * its own address, caught or not, as at its int3, so that a
	 * handler (Go's sigpanic, which looks the pc up) sees the program's
	 * code, and one that returns runs the slot again */
	if (!(access && pc == site && !ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si) &&
	      si.si_code > 0)) {
		snprintf(path, sizeof(path), "/proc/%d/status", (int)t->tid);
		if (!proc_status_value(path, "SigCgt", 16, &caught) ||
		    (caught >> (sig - 1) & 1))
			return;
	}
	t->regs.rip = pc;
	t->regs_dirty = true;
	regs_set(t);
}

bool agent_logged(struct session *s)
{
	if (!s->ag || !s->ag_synced)
		return false;
	uint64_t end = __atomic_load_n(&s->ag->cursor, __ATOMIC_RELAXED);
	uint64_t from = s->ag_looked > s->ag_flushed ? s->ag_looked
						     : s->ag_flushed;

	if (end > HO_LOG_END)
		end = HO_LOG_END;
	/* only what was logged since the last look: the log is taken at
	 * the thread's next stop, and a thread that logged a point (a
	 * wake) and then computed for seconds looked busy at every look,
	 * so no spin probe stopped it and its log was never taken (the
	 * woken thread stayed blocked: a false hang) */
	s->ag_looked = end;
	/* points: an access observed is none (a spin observed is a spin) */
	for (uint64_t o = from; o + TRAMP_ENTRY <= end; o += TRAMP_ENTRY) {
		const struct agent_entry *e =
			(const void *)((const char *)s->ag + o);

		if (!(__atomic_load_n(&e->slot, __ATOMIC_RELAXED) &
		      TRAMP_ACCESS))
			return true;
	}
	return false;
}

void agent_take_log(struct session *s)
{
	if (s->ag && s->ag_synced)
		agent_flush(s);
}

int agent_slot_at(const struct process *p, uint64_t pc, uint64_t *site,
		  bool *access)
{
	if (access)
		*access = false;
	if (p->ag_near && pc >= p->ag_near &&
	    pc < p->ag_near + (uint64_t)p->nacc * TRAMP_ASLOT) {
		/* the site is in the slot's code (tramp_emit_access) */
		uint64_t slot = pc - (pc - p->ag_near) % TRAMP_ASLOT, tag = 0;

		if (mem_read((struct process *)p, slot + TRAMP_ASITE, &tag, 8) ||
		    !(tag & TRAMP_ACCESS))
			return -1;
		*site = tag & ~TRAMP_ACCESS;
		if (access)
			*access = true;
		return (int)(pc - slot);
	}
	int i = slot_unit(p, pc);

	if (i < 0 || p->tslot[i].futex)
		return -1; /* (a futex slot's: agent_futex_slot_at) */
	*site = p->tslot[i].site;
	return (int)((pc - p->ag_code) % TRAMP_SLOT);
}

uint64_t agent_unmoved(struct process *p, uint64_t pc, bool *back)
{
	uint64_t site, opc;
	bool access;
	struct bp *b;

	if (back)
		*back = false;
	if (!slot_unmove(p, pc, &site, &access, &opc, &b) || !access)
		return 0;
	if (back)
		*back = opc == site + b->plen;
	return opc;
}

/* the rdtsc slots of the near region (an executable's sites): at its
 * end, after race discovery's access slots */
#define NEAR_TSC \
	(((uint64_t)AGENT_TSC_SLOTS * TRAMP_TSLOT + 4095) & ~4095ul)

uint64_t agent_near_access_len(const struct process *p)
{
	return p->ag_near_len > NEAR_TSC ? p->ag_near_len - NEAR_TSC : 0;
}

uint64_t agent_tsc_slot(const struct process *p, int i, uint64_t site,
			uint64_t *page)
{
	uint64_t a;

	if (!p->ag_page || i < 0 || i >= AGENT_TSC_SLOTS)
		return 0;
	/* the region (near the libraries), else the near region (below
	 * the executable), whichever a rel32 from the site reaches */
	a = p->ag_code + TSC_AREA + (uint64_t)i * TRAMP_TSLOT;
	if (p->ag_code && a - site + (1ul << 30) < (2ul << 30)) {
		*page = p->ag_page;
		return a;
	}
	a = p->ag_near + agent_near_access_len(p) +
	    (uint64_t)i * TRAMP_TSLOT;
	if (p->ag_near && p->ag_page2 && agent_near_access_len(p) &&
	    a - site + (1ul << 30) < (2ul << 30)) {
		*page = p->ag_page2;
		return a;
	}
	return 0;
}

int agent_tsc_slot_at(const struct process *p, uint64_t pc, uint64_t *off)
{
	uint64_t lo[2] = { p->ag_code ? p->ag_code + TSC_AREA : 0,
			   p->ag_near && agent_near_access_len(p)
				   ? p->ag_near + agent_near_access_len(p)
				   : 0 };

	for (int k = 0; k < 2; k++) {
		if (!lo[k] || pc < lo[k] ||
		    pc >= lo[k] + (uint64_t)AGENT_TSC_SLOTS * TRAMP_TSLOT)
			continue;
		*off = (pc - lo[k]) % TRAMP_TSLOT;
		return (int)((pc - lo[k]) / TRAMP_TSLOT);
	}
	return -1;
}

bool agent_code(const struct process *p, uint64_t pc)
{
	return (pc >= p->ag_lo && pc < p->ag_hi) ||
	       (p->ag_code && pc >= p->ag_code && pc < p->ag_code + CODE_LEN) ||
	       (p->ag_near && pc >= p->ag_near &&
		pc < p->ag_near + p->ag_near_len);
}

bool agent_page_at(const struct process *p, uint64_t lo)
{
	return p->ag_page && (lo == p->ag_page || lo == p->ag_page2);
}
