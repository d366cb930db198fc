/*
 * Fork checkpoints: start-up paid once per exploration, not once per run.
 *
 * Until its second thread exists a program is single-threaded and, under
 * ptloom, deterministic: ld.so, libc start-up, constructors, an
 * interpreter's imports.  The first run of an exploration is stopped at
 * its first thread-creating clone (the seccomp stop, before the clone
 * runs) and kept there as a *template*, with a copy of the supervisor's
 * state at that moment.  Every run, the first included, then continues in
 * a fork of the template: ptloom rewrites the template's pending clone
 * into clone(CLONE_PARENT|SIGCHLD) (the new process is ptloom's child and,
 * through PTRACE_O_TRACEFORK, its tracee with the same options and the
 * same inherited seccomp filter), rewinds both processes to re-issue the
 * original clone, and restores the copied state in the session, so a run
 * from the checkpoint is step for step the run an exec would have given
 * (same events, same trace hash; tests/integration issue10).
 *
 * What a fork shares with its template is checked before the template is
 * kept: open files other than stdin, the output, stateless devices, files
 * open read-only and small deleted files (their offsets, and a deleted
 * file's contents, are put back before each run; other files' offsets
 * and contents would be shared between runs), writable shared mappings,
 * SysV IPC objects (a semget, msgget or shmget before the first thread),
 * child processes,
 * futex waiters, breakpoints.  Where one is found the exploration runs
 * every execution from exec, and checkpoint_note() says why.  The
 * template's output so far is kept: each run's output starts with it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <linux/kcmp.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include "session_int.h"

/* The area in the vDSO: "syscall; int3" where the template forks, the
 * child's start-up stub, clone3's arguments, the pid a run asks for, and
 * "mov eax, NR; syscall; int3" for clone3 and clone, where a template
 * stopped at its last fork's event forks again (the kernel writes that
 * fork's result into rax as it resumes). */
enum {
	AREA_GADGET = 0,
	AREA_STUB = 8,
	AREA_ARGS = 88,
	AREA_TID = 176,
	AREA_REFORK3 = 184,
	AREA_REFORK = 192,
	AREA_LEN = 200
};

/* Where a template's pid appeared in it, but for its pd->tid
 * (tid_in_memory) */
#define TID_SEEN_MAX 64
struct tid_seen {
	pid_t pid;		/* that template's, 0: none seen */
	uint64_t shape;		/* its layout: mappings, pc, sp, events */
	int n;			/* words, -1: more than kept, or unread */
	uint64_t addr[TID_SEEN_MAX];
	unsigned regs;		/* the registers holding it (tid_regs) */
};

/* Where the template stands (area_fork) */
enum { AT_SECCOMP, AT_INT3, AT_EVENT };

struct checkpoint {
	pid_t pid;		/* the template, 0: none (yet) */
	bool off;		/* unsafe for this program: exec every run */
	char note[160];		/* why not, for verbose output */
	bool at_seccomp;	/* the template waits at its clone's stop */
	bool armed;		/* or at the area's int3, set to fork again */
	bool at_event;		/* or at its last fork's event stop */
	struct user_regs_struct regs; /* registers at the clone's stop */
	/* the program's signal mask at the clone's stop (glibc's
	 * pthread_create blocks every signal around its clone): the
	 * template runs with SIGTRAP unblocked, since an int3 (the area's)
	 * that meets a blocked SIGTRAP resets the program's handler of it
	 * to SIG_DFL, and every run forked after would die of its own
	 * int3 or raise(SIGTRAP); each fork gets the mask back */
	uint64_t sigmask;
	bool sigmask_known;
	uint64_t key;		/* the launcher's key (tracer/spawn.c) */
	/* code and data of the fork in the template's vDSO, which glibc
	 * never calls (its address is hidden from it): put_area() */
	uint64_t area;		/* its address, 0: none */
	uint8_t area_orig[AREA_LEN];
	bool child_stub;	/* a child starts in the area's stub */
	bool same_tid;		/* runs get the template's pid (set_tid) */
	/* the note says an earlier run changed named files first: a
	 * later run's template ends it */
	bool fs_note;
	pid_t tid0;		/* that pid: the program's first process */
	uint64_t tid_addr;	/* the main thread's pd->tid word */
	/* without one (not glibc): the word its set_tid_address() named,
	 * cleared at its exit; runs need the template's pid then */
	uint64_t clear_addr;
	struct tid_seen seen;	/* the first exec'd run's, if it had any */
	uint64_t robust;	/* its robust-futex list head, 0: none */
	size_t robust_len;
	int outfd;		/* the template's output (shared description) */
	off_t out_len;		/* output written before the checkpoint */
	/* the template's other files, whose descriptions (offsets, and a
	 * deleted file's contents) the runs share: put back for each run */
	struct cp_file {
		int ours;	/* the description, through pidfd_getfd */
		int fl;		/* its status flags (F_GETFL) */
		off_t pos;
		char *data;	/* a deleted file's contents, or NULL */
		off_t size;
	} *files;
	int nfiles;
	/* what the runs must share with the template */
	uint64_t seed, quantum, realtime;
	int cpu;
	bool pass_output;
	char *const *argv, *const *envp;
	/* the supervisor's state at the checkpoint */
	struct session snap;
	struct thread th0;
	struct process p0;
	uint64_t *fdobj;
	struct evloop *evl;	/* the numbering of files, or NULL */
	struct event *ev;
	size_t nev;
	struct decision *dec;
	size_t ndec;
	unsigned forks;
	/* runs from exec because the pid they ask for (same_tid) was
	 * another process's at their start */
	unsigned pid_taken;
	unsigned fork_stops;	/* stops the last fork_template() took */
	/* the template's breakpoints, installed once for the points a run
	 * asks for and inherited by every fork (bp_key() says for which) */
	int memfd;		/* the template's /proc/PID/mem, -1: none */
	bool have_bps;
	unsigned bp_points;
	bool bp_observe;
	struct user_point *bp_user;
	size_t bp_nuser;
	const struct sched_policy *bp_policy;
	/* the observed code a run's configuration names (race discovery's
	 * runs and the search's share the template) */
	const uint64_t *bp_atomic, *bp_runtime;
	size_t bp_natomic, bp_nruntime;
	bool bp_runtime_atomics;
	bool bp_stack;		/* session_config.observe_stack */
	const void *bp_watch;
	struct bp *bps;
	size_t nbps;
	uint64_t policy_at;	/* process.h policy_at of the template */
	bool observing;
	bool rwlock_known; /* struct process */
	bool data_known;   /* struct process */
	uint64_t data_bias;
	struct object_libs rt; /* struct process */
	struct swept_objects swept; /* struct process */
	/* the program's mapped objects at the checkpoint (run_result) */
	char **objects;
	int nobjects;
};

struct checkpoint *checkpoint_new(void)
{
	struct checkpoint *cp = calloc(1, sizeof(*cp));

	if (cp)
		cp->outfd = cp->memfd = -1;
	return cp;
}

/* Nothing of a template that was not kept stays: the next exec'd run
 * may be one (its breakpoints are the run's now: inherit_bps). */
static void template_forget(struct checkpoint *cp)
{
	if (cp->memfd >= 0)
		close(cp->memfd);
	cp->memfd = -1;
	for (int i = 0; i < cp->nfiles; i++) {
		close(cp->files[i].ours);
		free(cp->files[i].data);
	}
	free(cp->files);
	cp->files = NULL;
	cp->nfiles = 0;
	free(cp->bps);
	cp->bps = NULL;
	cp->nbps = 0;
	free(cp->bp_user);
	cp->bp_user = NULL;
	cp->have_bps = false;
	free(cp->ev);
	free(cp->dec);
	free(cp->fdobj);
	cp->ev = NULL;
	cp->dec = NULL;
	cp->fdobj = NULL;
	cp->nev = cp->ndec = 0;
}

void checkpoint_free(struct checkpoint *cp)
{
	if (!cp)
		return;
	if (cp->pid > 0) {
		kill(cp->pid, SIGKILL);
		while (waitpid(cp->pid, NULL, __WALL) < 0 && errno == EINTR)
			;
		spawn_unregister(cp->pid);
	}
	if (cp->outfd >= 0)
		close(cp->outfd);
	template_forget(cp);
	for (int i = 0; i < cp->nobjects; i++)
		free(cp->objects[i]);
	free(cp->objects);
	free(cp->evl);
	free(cp);
}

const char *checkpoint_note(const struct checkpoint *cp)
{
	return cp && cp->note[0] ? cp->note : NULL;
}

unsigned checkpoint_forks(const struct checkpoint *cp)
{
	return cp ? cp->forks : 0;
}

unsigned checkpoint_pid_taken(const struct checkpoint *cp)
{
	return cp ? cp->pid_taken : 0;
}

static bool same_strings(char *const *a, char *const *b)
{
	if (a == b)
		return true;
	for (; a && b && *a && *b; a++, b++)
		if (strcmp(*a, *b))
			return false;
	return (!a || !*a) && (!b || !*b);
}

/* The run this configuration asks for starts where the template stands. */
static bool matches(const struct checkpoint *cp,
		    const struct session_config *cfg)
{
	return cp->seed == cfg->seed &&
	       cp->quantum == cfg->clock_quantum_ns &&
	       cp->realtime == cfg->clock_realtime_ns && cp->cpu == cfg->cpu &&
	       cp->pass_output == cfg->pass_output &&
	       same_strings(cp->argv, cfg->argv) &&
	       same_strings(cp->envp, cfg->envp);
}

static void say_off(struct checkpoint *cp, const char *why)
{
	cp->off = true;
	snprintf(cp->note, sizeof(cp->note), "no fork checkpoint: %s", why);
}

/* A deleted file's contents are copied up to this size (an unnamed
 * capture file: pytest's); larger, the runs start from exec. */
#define CP_FILE_MAX (1 << 20)

/* Does pid hold a file lock (flock, POSIX or OFD) through its fd (its
 * fdinfo's "lock:" lines)?  A fork shares an flock or OFD lock with the
 * template, so one run's unlock would be the next run's too, and a POSIX
 * lock is not inherited at all: such a file means exec. */
static bool holds_lock(pid_t pid, int fd)
{
	char path[64], line[256];
	bool lock = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", pid, fd);
	if (!(f = fopen(path, "r")))
		return true;
	while (!lock && fgets(line, sizeof(line), f))
		lock = !strncmp(line, "lock:", 5);
	fclose(f);
	return lock;
}

/*
 * A file whose state a run can put back before it starts: a regular file
 * or directory open read-only (its offset), or a deleted regular file of
 * at most CP_FILE_MAX bytes open for writing (its offset and contents;
 * nothing but the template and its runs can reach it); and its status
 * flags (fcntl F_SETFL) for both.  Keeps the template's description
 * (pidfd_getfd), st is what fd refers to.  False if the run could not be
 * given the template's state of it.
 */
static bool keep_file(struct checkpoint *cp, pid_t pid, int pidfd, int fd,
		      const struct stat *st)
{
	if (pidfd < 0 || (!S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode)) ||
	    holds_lock(pid, fd))
		return false;
	struct cp_file *n = realloc(cp->files,
				    (cp->nfiles + 1) * sizeof(*n));

	if (!n)
		return false;
	cp->files = n;
	/* the template's description itself: its offset and flags are
	 * what a run shares */
	int ours = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);

	if (ours < 0)
		return false;
	struct cp_file *k = &cp->files[cp->nfiles];
	bool ro;

	k->ours = ours;
	k->fl = fcntl(ours, F_GETFL);
	k->pos = lseek(ours, 0, SEEK_CUR);
	k->data = NULL;
	k->size = st->st_size;
	ro = (k->fl & O_ACCMODE) == O_RDONLY;
	if (k->fl < 0 || k->pos < 0)
		goto drop;
	if (!ro && (!S_ISREG(st->st_mode) || st->st_nlink ||
		    k->size > CP_FILE_MAX))
		goto drop;
	if (!ro && k->size &&
	    (!(k->data = malloc((size_t)k->size)) ||
	     pread(ours, k->data, (size_t)k->size, 0) != k->size))
		goto drop;
	cp->nfiles++;
	return true;
drop:
	free(k->data);
	close(ours);
	return false;
}

/* Each run starts with the template's files as they were (keep_file). */
static bool put_files_back(const struct checkpoint *cp)
{
	for (int i = 0; i < cp->nfiles; i++) {
		const struct cp_file *k = &cp->files[i];

		if (k->data && (pwrite(k->ours, k->data, (size_t)k->size, 0) !=
					k->size ||
				ftruncate(k->ours, k->size)))
			return false;
		/* O_APPEND, O_NONBLOCK, ... are the description's too */
		if (fcntl(k->ours, F_GETFL) != k->fl &&
		    fcntl(k->ours, F_SETFL, k->fl))
			return false;
		if (lseek(k->ours, k->pos, SEEK_SET) != k->pos)
			return false;
	}
	return true;
}

/* Devices without state a run could leave behind. */
static bool stateless_device(const struct stat *st)
{
	/* mem: null 1:3, zero 1:5, full 1:7, random 1:8, urandom 1:9 */
	unsigned mj = major(st->st_rdev), mn = minor(st->st_rdev);

	return S_ISCHR(st->st_mode) && mj == 1 &&
	       (mn == 3 || mn == 5 || mn == 7 || mn == 8 || mn == 9);
}

/* Did p change the named files before its first thread (syscall.c
 * fs_change): a removal, rename, new directory or link, or a file it
 * opened to write that is still a regular file (relative names from its
 * working directory)? */
static bool fs_changed_before(const struct process *p)
{
	if (p->fs_changed)
		return true;
	for (int i = 0; i < p->nfs_made; i++) {
		char path[512];
		struct stat st;

		if (p->fs_made[i][0] == '/')
			snprintf(path, sizeof(path), "%s", p->fs_made[i]);
		else
			snprintf(path, sizeof(path), "/proc/%d/cwd/%s",
				 (int)p->pid, p->fs_made[i]);
		if (!stat(path, &st) && S_ISREG(st.st_mode))
			return true;
	}
	return false;
}

/* Does process pid have a signal pending (its thread's or its own)?  A
 * fork's child starts with none: a signal the program raised while it
 * blocked it, and takes later (sigwait), would be lost in every run. */
static bool signal_pending(pid_t pid)
{
	char path[64], line[256];
	bool any = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (!(f = fopen(path, "re")))
		return true; /* cannot tell */
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v;

		if ((sscanf(line, "SigPnd: %llx", &v) == 1 ||
		     sscanf(line, "ShdPnd: %llx", &v) == 1) &&
		    v)
			any = true;
	}
	fclose(f);
	return any;
}

/* Nothing a fork would share between runs but what can be put back:
 * files, shared memory. */
static bool template_is_safe(struct checkpoint *cp, pid_t pid, int outfd)
{
	char path[64], link[256], line[512];
	struct stat out, st;
	DIR *d;
	struct dirent *e;
	bool ok = true;

	if (outfd >= 0 && fstat(outfd, &out))
		return false;
	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	if (!(d = opendir(path)))
		return false;
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	pid_t me = getpid();
	while (ok && (e = readdir(d))) {
		int fd = atoi(e->d_name);
		char p[300];

		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "/proc/%d/fd/%s", pid, e->d_name);
		if (stat(p, &st)) {
			ok = false;
			break;
		}
		if (fd == 0 && S_ISCHR(st.st_mode))
			continue; /* /dev/null */
		if ((fd == 1 || fd == 2) &&
		    (outfd < 0 || (st.st_dev == out.st_dev &&
				   st.st_ino == out.st_ino)))
			continue;
		/* the output under another number (a saved stdout) */
		if (outfd >= 0 && syscall(SYS_kcmp, me, pid, KCMP_FILE, outfd,
					  fd) == 0)
			continue;
		if (stateless_device(&st) || keep_file(cp, pid, pidfd, fd, &st))
			continue;
		ssize_t n = readlink(p, link, sizeof(link) - 1);

		link[n > 0 ? n : 0] = 0;
		snprintf(cp->note, sizeof(cp->note),
			 "no fork checkpoint: fd %d (%s) is open at the first "
			 "thread",
			 fd, link);
		ok = false;
	}
	closedir(d);
	if (pidfd >= 0)
		close(pidfd);
	if (!ok) {
		cp->off = true;
		return false;
	}
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	FILE *f = fopen(path, "re");

	if (!f)
		return false;
	while (ok && fgets(line, sizeof(line), f)) {
		char perm[8] = "";

		if (sscanf(line, "%*s %7s", perm) == 1 && perm[1] == 'w' &&
		    perm[3] == 's' && !strstr(line, "/memfd:ptloom-agent")) {
			line[strcspn(line, "\n")] = 0;
			snprintf(cp->note, sizeof(cp->note),
				 "no fork checkpoint: a writable shared "
				 "mapping (%.100s)",
				 line);
			cp->off = true;
			ok = false;
		}
	}
	fclose(f);
	return ok;
}

static int wait_stop(struct checkpoint *cp, pid_t pid, int *status)
{
	while (waitpid(pid, status, __WALL) < 0)
		if (errno != EINTR)
			return -errno;
	cp->fork_stops++;
	return WIFSTOPPED(*status) ? 0 : -ESRCH;
}

/*
 * Process c, stopped in its first stop, runs set_robust_list(head, len)
 * at the template's syscall instruction (rip - 2): a new task has no
 * robust list, glibc's fork() registers it again, and so do we.  0 or -1.
 */
static int robust_list_again(struct checkpoint *cp, pid_t c)
{
	struct user_regs_struct r = cp->regs;
	int st;

	r.rip -= 2;
	r.rax = r.orig_rax = SYS_set_robust_list;
	r.rdi = cp->robust;
	r.rsi = cp->robust_len;
	if (ptrace(PTRACE_SETREGS, c, 0, &r))
		return -1;
	/* entry and exit stops; a seccomp stop may come between them */
	for (int stops = 0; stops < 2;) {
		if (ptrace(PTRACE_SYSCALL, c, 0, 0) || wait_stop(cp, c, &st))
			return -1;
		if (st >> 16 == PTRACE_EVENT_SECCOMP)
			continue;
		if ((WSTOPSIG(st) & 0x7f) != SIGTRAP)
			return -1; /* a signal: no fork with pending signals */
		stops++;
	}
	return ptrace(PTRACE_GETREGS, c, 0, &r) || r.rax ? -1 : 0;
}

/*
 * A new process from the template, stopped, rewound to re-issue the
 * template's clone, in a process group of its own.  The clone is the one
 * glibc's fork() makes: the kernel writes the child's tid into its
 * pd->tid (CLONE_CHILD_SETTID) and clears it at exit (CLONE_CHILD_CLEARTID),
 * and its robust list is registered again, so what glibc knows of the
 * main thread is what an exec'd run has.  The template's thread id is in
 * whatever else the program stored before its first thread (an
 * interpreter's thread state): sched_policy.forked may fix that.  Returns
 * its pid or -errno.
 */
/* The template's breakpoints are the ones this configuration's runs
 * install at their first thread. */
static bool bps_match(const struct checkpoint *cp,
		      const struct session_config *cfg)
{
	return cp->have_bps && cp->bp_points == cfg->points &&
	       cp->bp_observe == (cfg->observer != NULL) &&
	       cp->bp_policy == cfg->policy &&
	       cp->bp_atomic == cfg->atomic_code &&
	       cp->bp_natomic == cfg->natomic_code &&
	       cp->bp_runtime == cfg->runtime_code &&
	       cp->bp_nruntime == cfg->nruntime_code &&
	       cp->bp_runtime_atomics == cfg->runtime_atomics_only &&
	       cp->bp_stack == cfg->observe_stack &&
	       cp->bp_watch == (const void *)cfg->watch &&
	       cp->bp_nuser == cfg->nuser_points &&
	       (!cfg->nuser_points ||
		!memcmp(cp->bp_user, cfg->user_points,
			cfg->nuser_points * sizeof(*cfg->user_points)));
}

/*
 * Put the breakpoints a run installs at its first thread (bp_install)
 * into the template itself, once per kind of run: every fork then
 * inherits their bytes, and a run starts with them in place instead of
 * reading /proc/PID/maps, the libraries' symbols and every original byte
 * again (two syscalls a breakpoint).  The run's first clone would install
 * the same set at the same moment, before any instruction of the program
 * runs, so the runs are unchanged.  False: the runs install their own.
 */
static bool template_bps(struct checkpoint *cp, struct session *s)
{
	const struct session_config *cfg = s->cfg;
	struct process tp;

	if (bps_match(cp, cfg))
		return true;
	if (cp->memfd < 0) {
		char name[64];

		snprintf(name, sizeof(name), "/proc/%d/mem", cp->pid);
		cp->memfd = open(name, O_RDWR | O_CLOEXEC);
		if (cp->memfd < 0)
			return false;
	}
	/* the bytes of another kind of run's breakpoints go back first */
	if (bp_restore_bytes(cp->memfd, cp->bps, cp->nbps))
		goto fail;
	free(cp->bps);
	cp->bps = NULL;
	cp->nbps = 0;
	cp->have_bps = false;
	free(cp->bp_user);
	cp->bp_user = NULL;
	if (cfg->nuser_points) {
		size_t n = cfg->nuser_points * sizeof(*cfg->user_points);

		if (!(cp->bp_user = malloc(n)))
			goto fail;
		memcpy(cp->bp_user, cfg->user_points, n);
	}
	tp = cp->p0;
	tp.pid = cp->pid;
	tp.memfd = cp->memfd;
	tp.pidfd = -1;
	tp.bps = NULL;
	tp.nbps = tp.nlifted = 0;
	tp.dormant = NULL;
	tp.ndormant = tp.capdormant = 0;
	if (bp_install(s, &tp)) {
		/* bytes it wrote go back; the runs install their own */
		bp_restore_bytes(cp->memfd, tp.bps, tp.nbps);
		free(tp.bps);
		goto fail;
	}
	cp->bps = tp.bps;
	cp->nbps = tp.nbps;
	cp->p0.tsc = tp.tsc; /* its rdtsc sites are in the template too */
	/* its trampolines too (their code is in the template) */
	cp->p0.ntramp = tp.ntramp;
	memcpy(cp->p0.tslot, tp.tslot, sizeof(tp.tslot));
	cp->p0.nacc = tp.nacc;
	cp->p0.acc_int3 = false;
	cp->policy_at = tp.policy_at;
	cp->observing = tp.observing;
	cp->rwlock_known = tp.rwlock_known;
	cp->data_known = tp.data_known;
	cp->data_bias = tp.data_bias;
	cp->rt = tp.rt;
	cp->swept = tp.swept;
	cp->bp_points = cfg->points;
	cp->bp_observe = cfg->observer != NULL;
	cp->bp_policy = cfg->policy;
	cp->bp_atomic = cfg->atomic_code;
	cp->bp_natomic = cfg->natomic_code;
	cp->bp_runtime = cfg->runtime_code;
	cp->bp_nruntime = cfg->nruntime_code;
	cp->bp_runtime_atomics = cfg->runtime_atomics_only;
	cp->bp_stack = cfg->observe_stack;
	cp->bp_watch = cfg->watch;
	cp->bp_nuser = cfg->nuser_points;
	cp->have_bps = true;
	return true;
fail:
	/* a template whose bytes are unknown cannot be forked from */
	say_off(cp, "the template's breakpoints could not be set");
	return false;
}

/* A run forked from the template has its breakpoints already. */
static void inherit_bps(const struct checkpoint *cp, struct process *p)
{
	struct process tp = cp->p0;

	if (!cp->have_bps)
		return;
	tp.bps = cp->bps;
	tp.nbps = cp->nbps;
	tp.nlifted = 0;
	tp.dormant = NULL;
	tp.ndormant = tp.capdormant = 0;
	tp.bps_installed = true;
	tp.bps_lifted = false;
	tp.policy_at = cp->policy_at;
	tp.observing = cp->observing;
	tp.rwlock_known = cp->rwlock_known;
	tp.data_known = cp->data_known;
	tp.data_bias = cp->data_bias;
	tp.rt = cp->rt;
	tp.swept = cp->swept;
	p->ntramp = tp.ntramp;
	memcpy(p->tslot, tp.tslot, sizeof(tp.tslot));
	p->nacc = tp.nacc;
	p->acc_int3 = false;
	if (process_copy_bps(p, &tp)) {
		/* without the array the inherited bytes would be stray
		 * traps: take them out */
		bp_restore_bytes(p->memfd, cp->bps, cp->nbps);
		p->bps_installed = false;
		p->nbps = 0;
	}
}

/* A copy of n strings (the strings that could not be copied left out),
 * or NULL. */
static char **copy_strings(char *const *from, int n, int *copied)
{
	char **to = calloc((size_t)n + 1, sizeof(*to));

	*copied = 0;
	for (int i = 0; to && i < n; i++)
		if ((to[*copied] = strdup(from[i])))
			(*copied)++;
	return to;
}

/* The mapped objects of a run from the checkpoint, as collected at its
 * first thread: the template's (same mappings).  False: not known yet. */
bool checkpoint_objects(struct session *s, struct run_result *r)
{
	struct checkpoint *cp = s->cfg->checkpoint;

	if (!s->from_checkpoint || !cp || !cp->objects)
		return false;
	r->objects = copy_strings(cp->objects, cp->nobjects, &r->nobjects);
	return r->objects != NULL;
}

/* Keep what the first run from the template collected, for the others. */
void checkpoint_keep_objects(struct session *s, const struct run_result *r)
{
	struct checkpoint *cp = s->cfg->checkpoint;

	if (!s->from_checkpoint || !cp || cp->objects || !r->objects)
		return;
	cp->objects = copy_strings(r->objects, r->nobjects, &cp->nobjects);
}

enum { FORK_PLAIN, FORK_RUN };

/*
 * The registers of the template's fork.  FORK_RUN: the clone glibc's
 * fork() makes (the kernel writes the child's tid into its pd->tid and
 * clears it at exit), or with same_tid a clone3 asking for the template's
 * pid (its arguments in the area).  FORK_PLAIN: a bare
 * clone(CLONE_PARENT|SIGCHLD).  Both at the area's syscall instruction,
 * or the template's own without an area, with the launcher's key as the
 * sixth argument so that the seccomp filter lets them run untraced.
 */
static struct user_regs_struct fork_regs(const struct checkpoint *cp,
					 int how)
{
	struct user_regs_struct r = cp->regs;

	r.rip = cp->area ? cp->area + AREA_GADGET : cp->regs.rip - 2;
	r.r9 = cp->key;
	if (how == FORK_RUN && cp->same_tid) {
		r.rax = r.orig_rax = SYS_clone3;
		r.rdi = cp->area + AREA_ARGS;
		r.rsi = 80; /* CLONE_ARGS_SIZE_VER1: set_tid */
		return r;
	}
	r.rax = r.orig_rax = SYS_clone;
	r.rdi = CLONE_PARENT | SIGCHLD;
	r.rsi = r.rdx = r.r10 = r.r8 = 0;
	if (how == FORK_RUN && cp->tid_addr) {
		r.rdi |= CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID;
		r.r10 = cp->tid_addr;
	}
	return r;
}

/*
 * The area, written once into the template's vDSO (in its last page's
 * tail): "syscall; int3", where the template forks and stops again at
 * the int3 whether the clone worked or not (never running on into the
 * program); the child's start-up stub: set_robust_list (a new task has
 * none; glibc's fork() registers it again), then the registers the
 * program's clone had and a jump to its syscall instruction, so the child
 * reaches the clone's seccomp stop exactly where robust_list_again()
 * leaves it (rcx and r11 are the syscall instruction's own), in one stop
 * instead of three; clone3's arguments and the pid a same_tid run asks
 * for.  Each run puts the vDSO's bytes back at its first stop
 * (checkpoint_child_started()).  False: no vDSO, or not writable.
 */
static bool put_area(struct checkpoint *cp)
{
	char path[64], line[512];
	unsigned long lo = 0, hi = 0;
	uint8_t b[AREA_LEN] = { 0 };
	size_t n;
	FILE *f;

	cp->area = 0;
	cp->child_stub = false;
	if (cp->memfd < 0)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/maps", cp->pid);
	if (!(f = fopen(path, "re")))
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "[vdso]") &&
		    sscanf(line, "%lx-%lx", &lo, &hi) == 2)
			break;
		lo = hi = 0;
	}
	fclose(f);
	if (!lo || hi - lo < 4096)
		return false;
	uint64_t a = hi - 256;

#define EMIT1(x) (b[n++] = (uint8_t)(x))
#define EMIT8(v)                                            \
	do {                                                \
		uint64_t v_ = (v);                          \
		for (int i_ = 0; i_ < 8; i_++)              \
			b[n++] = (uint8_t)(v_ >> (8 * i_)); \
	} while (0)
	n = AREA_GADGET;
	EMIT1(0x0f); EMIT1(0x05); EMIT1(0xcc);		      /* syscall; int3 */
	n = AREA_STUB;
	EMIT1(0x48); EMIT1(0xb8); EMIT8(SYS_set_robust_list); /* mov rax */
	EMIT1(0x48); EMIT1(0xbf); EMIT8(cp->robust);	      /* mov rdi */
	EMIT1(0x48); EMIT1(0xbe); EMIT8(cp->robust_len);      /* mov rsi */
	EMIT1(0x0f); EMIT1(0x05);			      /* syscall */
	EMIT1(0x48); EMIT1(0xb8); EMIT8(cp->regs.orig_rax);   /* mov rax */
	EMIT1(0x48); EMIT1(0xbf); EMIT8(cp->regs.rdi);	      /* mov rdi */
	EMIT1(0x48); EMIT1(0xbe); EMIT8(cp->regs.rsi);	      /* mov rsi */
	EMIT1(0xff); EMIT1(0x25); EMIT1(0); EMIT1(0); EMIT1(0); EMIT1(0);
	EMIT8(cp->regs.rip - 2);	      /* jmp [rip]: to the syscall */
	if (n > AREA_ARGS)
		return false;
	/* struct clone_args, CLONE_ARGS_SIZE_VER1 */
	n = AREA_ARGS;
	EMIT8(CLONE_PARENT |
	      (cp->tid_addr ? CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID
	       : cp->clear_addr ? CLONE_CHILD_CLEARTID
				: 0));		      /* flags */
	EMIT8(0);				      /* pidfd */
	EMIT8(cp->tid_addr ? cp->tid_addr : cp->clear_addr); /* child_tid */
	EMIT8(0);				      /* parent_tid */
	EMIT8(0); /* exit_signal: CLONE_PARENT takes the template's */
	EMIT8(0);				      /* stack */
	EMIT8(0);				      /* stack_size */
	EMIT8(0);				      /* tls */
	EMIT8(a + AREA_TID);			      /* set_tid */
	EMIT8(1);				      /* set_tid_size */
	n = AREA_TID;
	EMIT8((uint64_t)(uint32_t)cp->pid);	      /* the pid wanted */
	n = AREA_REFORK3;
	EMIT1(0xb8); EMIT1(SYS_clone3 & 0xff); EMIT1(SYS_clone3 >> 8);
	EMIT1(0); EMIT1(0);			      /* mov eax, clone3 */
	EMIT1(0x0f); EMIT1(0x05); EMIT1(0xcc);	      /* syscall; int3 */
	n = AREA_REFORK;
	EMIT1(0xb8); EMIT1(SYS_clone); EMIT1(0); EMIT1(0); EMIT1(0);
	EMIT1(0x0f); EMIT1(0x05); EMIT1(0xcc);	      /* mov eax, clone... */
#undef EMIT1
#undef EMIT8
	if (pread(cp->memfd, cp->area_orig, AREA_LEN, (off_t)a) != AREA_LEN ||
	    pwrite(cp->memfd, b, AREA_LEN, (off_t)a) != AREA_LEN)
		return false;
	cp->area = a;
	cp->child_stub = cp->robust != 0;
	return true;
}

/* The template's vDSO bytes back (no checkpoint after all). */
static void take_area_back(struct checkpoint *cp)
{
	if (cp->area && cp->memfd >= 0)
		pwrite(cp->memfd, cp->area_orig, AREA_LEN, (off_t)cp->area);
	cp->area = 0;
	cp->child_stub = false;
}

/* The first stop of a run's child from the template (its clone's
 * seccomp stop, after the stub): the vDSO's own bytes go back. */
void checkpoint_child_started(struct session *s, struct thread *t)
{
	struct checkpoint *cp = s->cfg->checkpoint;

	/* only once it is out of the stub, at the clone's syscall */
	if (!cp || t->idx != 0 || t->regs.rip != cp->regs.rip)
		return;
	s->stub_pending = false;
	if (cp->area)
		mem_write(t->p, cp->area, cp->area_orig, AREA_LEN);
}

/* Where the template stands now */
static void set_at(struct checkpoint *cp, int at)
{
	cp->at_seccomp = at == AT_SECCOMP;
	cp->armed = at == AT_INT3;
	cp->at_event = at == AT_EVENT;
}

/*
 * The template t, stopped at `at`, forks with registers r: at a seccomp
 * stop r's syscall runs and returns to the area's int3; at the int3 the
 * area's "syscall; int3" runs it; at its last fork's event stop (whose
 * result the kernel writes into rax as it resumes) the area's "mov eax,
 * NR; syscall; int3".  A fork leaves t at the fork's event stop (*now
 * AT_EVENT): the next fork starts there, one stop a run instead of the
 * event and the int3 after it.  No fork: back at the int3, set to fork
 * again with r (AT_INT3).  Returns the child's pid, stopped but not yet
 * waited for, or -errno of the clone.
 */
static pid_t area_fork(struct checkpoint *cp, pid_t t,
		       const struct user_regs_struct *r, int at, int *now)
{
	struct user_regs_struct q = *r;
	unsigned long msg;
	pid_t c = 0;
	int st;

	if (at == AT_SECCOMP)
		q.rip += 2;
	else if (at == AT_EVENT)
		q.rip = cp->area +
			(r->rax == SYS_clone3 ? AREA_REFORK3 : AREA_REFORK);
	if (ptrace(PTRACE_SETREGS, t, 0, &q) || ptrace(PTRACE_CONT, t, 0, 0) ||
	    wait_stop(cp, t, &st))
		return -EIO;
	/* clone3 with CLONE_PARENT and no exit signal is a "clone" */
	if (st >> 16 == PTRACE_EVENT_FORK || st >> 16 == PTRACE_EVENT_CLONE) {
		if (ptrace(PTRACE_GETEVENTMSG, t, 0, &msg))
			return -EIO;
		c = (pid_t)msg;
		spawn_register(c);
		*now = AT_EVENT;
		return c;
	}
	/* the int3 after the syscall: the clone failed */
	if (st >> 8 != SIGTRAP || ptrace(PTRACE_GETREGS, t, 0, &q) ||
	    (q.rip != cp->area + AREA_GADGET + 3 &&
	     q.rip != cp->area + AREA_REFORK3 + 8 &&
	     q.rip != cp->area + AREA_REFORK + 8))
		return -EIO; /* not at the int3: unknown */
	long long ret = (long long)q.rax;

	/* set to fork again */
	q = *r;
	if (ptrace(PTRACE_SETREGS, t, 0, &q))
		return -EIO;
	*now = AT_INT3;
	return ret < 0 ? (pid_t)ret : -EIO;
}

/* The template, stopped at its last fork's event, on to the int3 after
 * that fork (where its registers may be set to anything).  0 or -1. */
static int event_to_int3(struct checkpoint *cp)
{
	struct user_regs_struct q;
	int st;

	if (!cp->at_event)
		return 0;
	cp->at_event = false;
	if (ptrace(PTRACE_CONT, cp->pid, 0, 0) || wait_stop(cp, cp->pid, &st) ||
	    st >> 8 != SIGTRAP || ptrace(PTRACE_GETREGS, cp->pid, 0, &q) ||
	    (q.rip != cp->area + AREA_GADGET + 3 &&
	     q.rip != cp->area + AREA_REFORK3 + 8 &&
	     q.rip != cp->area + AREA_REFORK + 8))
		return -1;
	cp->armed = true;
	return 0;
}

/* SIGKILL and reap process pid, ours. */
static void kill_reap(pid_t pid)
{
	int st;

	kill(pid, SIGKILL);
	for (;;) {
		pid_t w = waitpid(pid, &st, __WALL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 || WIFEXITED(st) || WIFSIGNALED(st))
			break;
	}
	spawn_unregister(pid);
}

/*
 * Runs from the template with the template's own pid (clone3's set_tid),
 * so that every thread id the program stored before its first thread (a
 * mutex's owner, an interpreter's thread state) is the main thread's in
 * every run, as in an exec'd run.  That pid must be free: the template
 * becomes a plain fork X of the program's process T, T is killed, and
 * each run asks for T's pid.  The kernel allows set_tid only with
 * CAP_CHECKPOINT_RESTORE (or CAP_SYS_ADMIN) in the pid namespace: X first
 * asks for it while T lives, where EEXIST says it may and EPERM that it
 * may not (T stays the template then).  1: X is the template, 0: T still
 * is (armed), -1: neither.
 */
static int same_tid_template(struct checkpoint *cp)
{
	struct user_regs_struct r;
	pid_t t = cp->pid, x;
	char name[64];
	int st, memfd, now = AT_SECCOMP, xnow = AT_INT3;

	r = fork_regs(cp, FORK_PLAIN);
	x = area_fork(cp, t, &r, AT_SECCOMP, &now);
	set_at(cp, now);
	if (x < 0)
		return -1;
	if (wait_stop(cp, x, &st) || setpgid(x, x))
		goto no;
	/* X's first stop: set it to fork, then ask while T lives
	 * (PTLOOM_NO_SET_TID=1: as if the kernel said no, for tests) */
	cp->same_tid = true;
	r = fork_regs(cp, FORK_RUN);
	r.orig_rax = (uint64_t)-1;
	pid_t probe = getenv("PTLOOM_NO_SET_TID")
			      ? -EPERM
			      : area_fork(cp, x, &r, AT_INT3, &xnow);

	if (probe != -EEXIST) {
		cp->same_tid = false;
		if (probe > 0)
			kill_reap(probe);
		goto no;
	}
	if (ptrace(PTRACE_SETREGS, x, 0, &r))
		goto no;
	snprintf(name, sizeof(name), "/proc/%d/mem", x);
	if ((memfd = open(name, O_RDWR | O_CLOEXEC)) < 0)
		goto no;
	kill_reap(t);
	close(cp->memfd);
	cp->memfd = memfd;
	cp->pid = x;
	cp->tid0 = t;
	set_at(cp, xnow); /* at the int3, set to fork */
	return 1;
no:
	cp->same_tid = false;
	kill_reap(x);
	/* T, at its fork's event, is the template: the next fork
	 * (area_fork) sets its registers */
	return 0;
}

/* The registers a thread id could be held in at the clone's stop (bit
 * i: the i-th) that hold id, in either half */
static unsigned tid_regs(const struct user_regs_struct *r, pid_t id)
{
	const unsigned long long w[] = { r->rbx, r->rbp, r->r12, r->r13,
					 r->r14, r->r15, r->rdx, r->rsi,
					 r->rdi, r->r8,  r->r9,  r->r10 };
	unsigned m = 0;

	for (unsigned i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		if ((uint32_t)w[i] == (uint32_t)id ||
		    (w[i] >> 32) == (uint32_t)id)
			m |= 1u << i;
	return m;
}

/*
 * Where the template's pid appears in its registers and its writable
 * memory, but for its pd->tid: aligned 32-bit words of the private
 * writable mappings.  Its shape is what the layout depends on (the
 * mappings, the stack and pc, the events so far).  n < 0: more places
 * than kept, or the memory could not be read.
 */
static void tid_scan(const struct checkpoint *cp, struct tid_seen *out)
{
	char path[64], line[512];
	static uint32_t buf[1 << 16];
	uint32_t tid = (uint32_t)cp->pid;
	uint64_t h = 1469598103934665603ULL;
	FILE *f;

	memset(out, 0, sizeof(*out));
	out->pid = cp->pid;
	out->regs = tid_regs(&cp->regs, cp->pid);
	snprintf(path, sizeof(path), "/proc/%d/maps", cp->pid);
	if (!(f = fopen(path, "re"))) {
		out->n = -1;
		return;
	}
	while (out->n >= 0 && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char perm[8];

		for (const char *c = line; *c; c++)
			h = (h ^ (uint8_t)*c) * 1099511628211ULL;
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perm) != 3 ||
		    perm[1] != 'w' || perm[3] != 'p')
			continue;
		for (unsigned long a = lo; out->n >= 0 && a < hi;) {
			size_t len = hi - a < sizeof(buf) ? hi - a : sizeof(buf);
			struct iovec l = { buf, len }, rv = { (void *)a, len };
			ssize_t got = process_vm_readv(cp->pid, &l, 1, &rv, 1, 0);

			if (got <= 0) {
				a += 4096; /* unreadable (guard) page */
				continue;
			}
			for (size_t i = 0; i < (size_t)got / 4; i++) {
				uint64_t at = a + 4 * i;

				if (buf[i] != tid || at == cp->tid_addr)
					continue;
				if (out->n == TID_SEEN_MAX) {
					out->n = -1;
					break;
				}
				out->addr[out->n++] = at;
			}
			a += (unsigned long)got;
		}
	}
	fclose(f);
	const uint64_t more[] = { cp->regs.rip, cp->regs.rsp, cp->nev,
				  cp->ndec };
	for (size_t i = 0; i < sizeof(more) / sizeof(more[0]); i++)
		h = (h ^ more[i]) * 1099511628211ULL;
	out->shape = h;
}

enum { TID_NONE, TID_HELD, TID_ASK_AGAIN };

/*
 * Would a run with another pid than the template's hold a stale thread
 * id (a mutex the main thread locked before its first thread: its
 * owner) where an exec'd run holds its own?  Any word equal to the pid
 * might be such a copy, or a number that equals it by chance (small pids
 * in a container make that common).  The first exec'd run that has such
 * words only notes where (TID_ASK_AGAIN); the next one, with another pid
 * and the same layout, tells them apart: a copy holds the new pid there,
 * a chance number still holds the old one.  Anything else (a word that
 * changed otherwise, another layout, memory not read): TID_HELD.
 */
static int tid_in_memory(struct checkpoint *cp)
{
	struct tid_seen now, *was = &cp->seen;

	tid_scan(cp, &now);
	if (now.n < 0)
		return TID_HELD;
	if (!now.n && !now.regs)
		return TID_NONE;
	if (!was->pid) {
		*was = now;
		return TID_ASK_AGAIN;
	}
	if (was->n < 0 || was->shape != now.shape || was->pid == now.pid)
		return TID_HELD;
	for (int i = 0; i < was->n; i++) {
		uint32_t v;
		struct iovec l = { &v, 4 }, rv = { (void *)was->addr[i], 4 };

		if (process_vm_readv(cp->pid, &l, 1, &rv, 1, 0) != 4 ||
		    v != (uint32_t)was->pid)
			return TID_HELD;
	}
	if (was->regs & ~tid_regs(&cp->regs, was->pid))
		return TID_HELD;
	/* the words equal to this run's pid did not hold the last run's:
	 * not copies of it either */
	return TID_NONE;
}

static pid_t fork_template(struct checkpoint *cp)
{
	struct user_regs_struct r;
	pid_t t = cp->pid, c;
	unsigned long msg;
	int st;

	cp->fork_stops = 0;
	if (cp->area) {
		/* armed or at the last fork's event: straight to the fork
		 * event, no seccomp stop */
		int now = cp->at_event ? AT_EVENT
			  : cp->armed  ? AT_INT3
			  : cp->at_seccomp ? AT_SECCOMP
					   : -1;

		if (now < 0)
			return -EIO;
		r = fork_regs(cp, FORK_RUN);
		c = area_fork(cp, t, &r, now, &now);
		set_at(cp, c == -EIO ? -1 : now);
		if (c < 0)
			return c;
	} else {
		if (!cp->at_seccomp) {
			/* re-issue the clone: back at its seccomp stop */
			if (ptrace(PTRACE_CONT, t, 0, 0) ||
			    wait_stop(cp, t, &st) ||
			    st >> 16 != PTRACE_EVENT_SECCOMP)
				return -EIO;
			cp->at_seccomp = true;
		}
		r = fork_regs(cp, FORK_RUN);
		r.rip = cp->regs.rip;
		if (ptrace(PTRACE_SETREGS, t, 0, &r) ||
		    ptrace(PTRACE_SYSCALL, t, 0, 0) || wait_stop(cp, t, &st) ||
		    st >> 16 != PTRACE_EVENT_FORK ||
		    ptrace(PTRACE_GETEVENTMSG, t, 0, &msg))
			return -EIO;
		c = (pid_t)msg;
		spawn_register(c);
		/* the template to its syscall exit, then rewound */
		r = cp->regs;
		r.rip -= 2;
		r.rax = cp->regs.orig_rax;
		if (ptrace(PTRACE_SYSCALL, t, 0, 0) || wait_stop(cp, t, &st) ||
		    ptrace(PTRACE_SETREGS, t, 0, &r))
			goto out_kill;
		cp->at_seccomp = false;
	}
	/* the child: its first stop, then rewound to re-issue the clone */
	if (wait_stop(cp, c, &st))
		goto out_kill;
	r = cp->regs;
	r.rip -= 2;
	r.rax = cp->regs.orig_rax;
	r.orig_rax = (uint64_t)-1;
	if (cp->child_stub)
		r.rip = cp->area + AREA_STUB;
	else if (cp->robust && robust_list_again(cp, c))
		goto out_kill;
	if (ptrace(PTRACE_SETREGS, c, 0, &r) ||
	    (cp->sigmask_known &&
	     ptrace(PTRACE_SETSIGMASK, c, sizeof(cp->sigmask), &cp->sigmask)))
		goto out_kill;
	/* it has not exec'd: its parent (us, by CLONE_PARENT) may */
	if (setpgid(c, c))
		goto out_kill;
	cp->forks++;
	return c;
out_kill:
	kill_reap(c);
	return -EIO;
}

/* The session now runs process c, fresh from the template. */
static void adopt(struct session *s, pid_t c)
{
	struct process *p = s->procs[0];
	pid_t old = s->pid;

	s->pid = c;
	p->pid = c;
	process_open(p);
	s->th[0].tid = c;
	s->th[0].regs_valid = false;
	s->th[0].stop = STOP_NONE;
	s->th[0].st = SCHED_RUNNING;
	s->from_checkpoint = true;
	s->stub_pending = s->cfg->checkpoint->area != 0;
	s->stops = 0; /* the template's were paid once, not by this run */
	memset(s->stop_kinds, 0, sizeof(s->stop_kinds));
	s->stop_kinds[STOPK_FORK] = s->cfg->checkpoint->fork_stops;
	s->resume_cpu = 0; /* a new process's clock */
	if (s->cfg->policy && s->cfg->policy->forked)
		s->cfg->policy->forked(s->cfg->policy->ctx, s, old);
	s->resume_time = s->step_wall = now_seconds();
	ptrace(PTRACE_CONT, c, 0, 0);
}

/* The clone t stops at creates the first thread (and nothing else makes
 * a fork unsafe in the supervisor's state). */
static bool first_thread_clone(struct session *s, struct thread *t,
			       uint64_t *tid_addr)
{
	const struct user_regs_struct *r = &t->regs;
	uint64_t args[8] = { 0 };
	uint64_t flags, ctid = 0, tls = 0;

	if (s->nth != 1 || s->nprocs != 1 || s->nfreep || s->nstray ||
	    s->ft.n || t->p->nbps || s->failed || !s->exec_seen)
		return false;
	if (r->orig_rax == SYS_clone3) {
		if (mem_read(t->p, r->rdi, args, sizeof(args)))
			return false;
		flags = args[0];
		ctid = args[2];
		tls = args[7];
	} else if (r->orig_rax == SYS_clone) {
		flags = r->rdi;
		ctid = r->r10;
		tls = r->r8;
	} else {
		return false;
	}
	if (!(flags & CLONE_THREAD))
		return false;
	*tid_addr = 0;
	if ((flags & CLONE_CHILD_CLEARTID) && tls && ctid > tls &&
	    ctid - tls < 4096 && r->fs_base) {
		/* glibc: the new thread's &pd->tid - pd; ours is at the same
		 * offset from our own pd (fs base), and holds our tid */
		uint64_t a = r->fs_base + (ctid - tls);
		uint32_t v = 0;

		if (mem_read(t->p, a, &v, 4) == 0 && v == (uint32_t)s->pid)
			*tid_addr = a;
	}
	return true;
}

bool checkpoint_at(struct session *s, struct thread *t)
{
	struct checkpoint *cp = s->cfg->checkpoint;
	uint64_t tid_addr;

	if (!cp || cp->off || cp->pid || s->from_checkpoint || regs_get(t) ||
	    !first_thread_clone(s, t, &tid_addr))
		return false;
	/* no pd->tid word (not glibc): only a run with the template's own
	 * pid is the exec'd run (same_tid_template() below) */
	if (s->timers) {
		/* tracer/timer.c keeps them per run and per pid */
		say_off(cp, "a timer was set before the first thread");
		return false;
	}
	if (s->procs[0]->sysv_ipc) {
		/* a semaphore's value, a queue's messages, a segment's
		 * contents and their removal (IPC_RMID) would pass from one
		 * run to the next */
		say_off(cp, "SysV IPC (semget, msgget or shmget) was used "
			    "before the first thread");
		return false;
	}
	if (signal_pending(s->pid)) {
		say_off(cp, "a signal was pending at the first thread (a "
			    "fork's child has none)");
		return false;
	}
	if (evloop_held(s)) {
		/* held readiness and taken epoll events are the kernel's
		 * objects' state, which the forks do not get back */
		say_off(cp, "an event loop held a descriptor's readiness before the first thread");
		return false;
	}
	/* tracer/evloop.c numbers descriptors' files per run: each run
	 * from the checkpoint starts with the template's numbering */
	free(cp->evl);
	cp->evl = NULL;
	if (s->evl && !(cp->evl = evloop_dup(s->evl))) {
		say_off(cp, "out of memory");
		return false;
	}
	if (!template_is_safe(cp, s->pid, s->outfd))
		return false;
	if (fs_changed_before(s->procs[0])) {
		/* what the runs do to those files would pass from one run
		 * to the next, where each run from exec makes them again:
		 * not this run's template; a later run that changes none
		 * (one that reads what the first made) may give one */
		template_forget(cp);
		snprintf(cp->note, sizeof(cp->note),
			 "no fork checkpoint yet: the program changed named "
			 "files (made, wrote, removed or renamed one) before "
			 "the first thread");
		cp->fs_note = true;
		return false;
	}
	/* keep the state as it is before this stop is handled */
	cp->snap = *s;
	cp->snap.ntemp = 0; /* (none before a file changed; the run's) */
	cp->th0 = s->th[0];
	cp->th0.regs_valid = false;
	cp->p0 = *s->procs[0];
	cp->p0.memfd = cp->p0.pidfd = -1;
	cp->p0.mapsfd = cp->p0.pagemapfd = cp->p0.iofd = -1;
	cp->p0.bps = NULL;
	if (s->nfdobj) {
		cp->fdobj = malloc(s->nfdobj * sizeof(*s->fdobj));
		if (!cp->fdobj) {
			say_off(cp, "out of memory");
			return false;
		}
		memcpy(cp->fdobj, s->fdobj, s->nfdobj * sizeof(*s->fdobj));
	}
	cp->ev = s->nev ? malloc(s->nev * sizeof(*s->ev)) : NULL;
	cp->dec = s->ndec ? malloc(s->ndec * sizeof(*s->dec)) : NULL;
	if ((s->nev && !cp->ev) || (s->ndec && !cp->dec)) {
		say_off(cp, "out of memory");
		return false;
	}
	if (s->nev)
		memcpy(cp->ev, s->ev, s->nev * sizeof(*s->ev));
	if (s->ndec)
		memcpy(cp->dec, s->dec, s->ndec * sizeof(*s->dec));
	cp->nev = s->nev;
	cp->ndec = s->ndec;
	cp->regs = t->regs;
	cp->tid_addr = tid_addr;
	cp->clear_addr = s->th[0].ctid;
	cp->robust = 0;
	if (syscall(SYS_get_robust_list, s->pid, &cp->robust,
		    &cp->robust_len))
		cp->robust = 0;
	cp->at_seccomp = true;
	cp->armed = false;
	cp->key = spawn_key();
	cp->pid = s->pid;
	cp->seed = s->cfg->seed;
	cp->quantum = s->cfg->clock_quantum_ns;
	cp->realtime = s->cfg->clock_realtime_ns;
	cp->cpu = s->cfg->cpu;
	cp->pass_output = s->cfg->pass_output;
	cp->argv = s->cfg->argv;
	cp->envp = s->cfg->envp;
	cp->outfd = s->outfd; /* the template's now; runs share it */
	cp->out_len = s->outfd >= 0 ? lseek(s->outfd, 0, SEEK_CUR) : 0;
	s->outfd_shared = true;

	bool ok = template_bps(cp, s);
	int same = 0;
	uint64_t unblocked;

	cp->sigmask_known = !ptrace(PTRACE_GETSIGMASK, t->tid,
				    sizeof(cp->sigmask), &cp->sigmask);
	unblocked = cp->sigmask & ~(1ull << (SIGTRAP - 1));
	if (cp->sigmask_known && unblocked != cp->sigmask &&
	    ptrace(PTRACE_SETSIGMASK, t->tid, sizeof(unblocked), &unblocked))
		ok = false;

	cp->same_tid = false;
	if (ok && put_area(cp) && (same = same_tid_template(cp)) < 0)
		ok = false;
	if (ok && same == 0 && !cp->tid_addr) {
		say_off(cp, "the main thread's tid word was not found (not "
			    "glibc?) and the kernel does not let ptloom give "
			    "runs the template's pid");
		ok = false;
	}
	int held = ok && same == 0 ? tid_in_memory(cp) : TID_NONE;

	if (held == TID_HELD) {
		/* runs with another pid would hold a stale thread id */
		say_off(cp, "the main thread's id is in the program's memory "
			    "(a lock held at the first thread?) and the "
			    "kernel does not let ptloom give runs that pid");
		ok = false;
	} else if (held == TID_ASK_AGAIN) {
		snprintf(cp->note, sizeof(cp->note),
			 "no fork checkpoint yet: %d words equal the first "
			 "run's pid; the next exec'd run tells copies of it "
			 "from chance", cp->seen.n);
		ok = false;
	} else if (ok && cp->seen.pid) {
		snprintf(cp->note, sizeof(cp->note),
			 "the first run from exec: %d words equal to its pid "
			 "held the same number in the second run (not its id)",
			 cp->seen.n);
	}
	/* tests: SIGTERM here, whose handler kills T first (in -j's
	 * first worker only with "worker-checkpoint:TERM") */
	const char *ti = getenv("PTLOOM_TEST_INTERRUPT");

	if (ok && ti &&
	    (!strcmp(ti, "checkpoint:TERM") ||
	     (!strcmp(ti, "worker-checkpoint:TERM") && tracer_worker() == 1)))
		raise(SIGTERM);
	pid_t c = ok ? fork_template(cp) : -EIO;

	/* T's pid, free since T was killed, taken by another process in
	 * that instant (pid_max is 32768 on small machines): this run has
	 * nowhere else to go on with T's pid, so wait for it a while (most
	 * processes are short-lived), up to 0.5 s */
	for (int k = 0; c == -EEXIST && cp->same_tid && k < 250; k++) {
		usleep(2000);
		c = fork_template(cp);
	}
	/* an earlier run's "not yet" is over */
	if (c >= 0 && cp->fs_note) {
		cp->note[0] = 0;
		cp->fs_note = false;
	}

	if (c < 0 && cp->same_tid) {
		/* T is gone: nothing to run on in */
		say_off(cp, "the template could not fork");
		cp->pid = 0;
		cp->outfd = -1;
		s->outfd_shared = false;
		s->failed = true;
		s->res->failure = FAIL_INTERNAL;
		snprintf(s->res->message, sizeof(s->res->message),
			 "the fork checkpoint's template could not fork");
		return true;
	}
	if (c < 0) {
		/* at the int3 the registers may be set */
		event_to_int3(cp);
		take_area_back(cp);
		if (cp->armed) {
			/* not set to fork any more: to re-issue its clone */
			struct user_regs_struct r = cp->regs;

			r.rip -= 2;
			r.rax = r.orig_rax;
			ptrace(PTRACE_SETREGS, cp->pid, 0, &r);
			cp->armed = false;
		}
		/* the template stays as it was: run on in it, no checkpoint */
		if (cp->sigmask_known)
			ptrace(PTRACE_SETSIGMASK, cp->pid, sizeof(cp->sigmask),
			       &cp->sigmask);
		cp->pid = 0;
		cp->outfd = -1;
		s->outfd_shared = false;
		/* its breakpoints are this run's now */
		inherit_bps(cp, s->procs[0]);
		template_forget(cp);
		if (!cp->off && held != TID_ASK_AGAIN)
			say_off(cp, "the template could not fork");
		return false;
	}
	/* the template is the checkpoint's now, not this run's */
	adopt(s, c);
	inherit_bps(cp, s->procs[0]);
	return true;
}

/* Tests: PTLOOM_CHECKPOINT_EXEC_EVERY=N makes every N-th run of the
 * process's checkpoints start from exec, as when another process holds the
 * template's pid (EEXIST): such a run must be the run a fork would have
 * made. */
static bool exec_forced(void)
{
	static long every = -1;
	static unsigned long n;

	if (every < 0) {
		const char *e = getenv("PTLOOM_CHECKPOINT_EXEC_EVERY");

		every = e && atol(e) > 0 ? atol(e) : 0;
	}
	return every > 0 && ++n % (unsigned long)every == 0;
}

int checkpoint_start(struct session *s)
{
	struct checkpoint *cp = s->cfg->checkpoint;
	const struct session_config *cfg = s->cfg;
	struct strategy *strat = s->strat;
	struct run_result *res = s->res;
	struct thread *th;
	struct process *p, **procs;
	uint64_t *fdobj = NULL;
	struct evloop *evl;
	pid_t c;

	if (!cp || cp->off || !cp->pid || !matches(cp, cfg))
		return 1;
	th = malloc(64 * sizeof(*th));
	p = malloc(sizeof(*p));
	procs = malloc(8 * sizeof(*procs));
	if (cp->snap.nfdobj)
		fdobj = malloc(cp->snap.capfdobj * sizeof(*fdobj));
	evl = cp->evl ? evloop_dup(cp->evl) : NULL;
	if (!th || !p || !procs || (cp->snap.nfdobj && !fdobj) ||
	    (cp->evl && !evl)) {
		free(evl);
		free(th);
		free(p);
		free(procs);
		free(fdobj);
		return 1;
	}
	if ((cp->outfd >= 0 &&
	     (ftruncate(cp->outfd, cp->out_len) ||
	      lseek(cp->outfd, cp->out_len, SEEK_SET) != cp->out_len)) ||
	    !put_files_back(cp)) {
		free(evl);
		free(th);
		free(p);
		free(procs);
		free(fdobj);
		return 1;
	}
	c = !template_bps(cp, s)	? -EIO
	    : cp->same_tid && exec_forced() ? -EEXIST
					    : fork_template(cp);
	if (c < 0) {
		free(evl);
		free(th);
		free(p);
		free(procs);
		free(fdobj);
		if (c == -EEXIST && cp->same_tid && !cp->off) {
			/* the template's pid, free between runs, is another
			 * process's now (pid_max is 32768 on small machines):
			 * this run from exec, as it would be without the
			 * checkpoint; the template, at its int3, forks the
			 * next */
			cp->pid_taken++;
			snprintf(cp->note, sizeof(cp->note),
				 "%u from exec: the pid they ask for was "
				 "another process's then",
				 cp->pid_taken);
			return 1;
		}
		if (!cp->off)
			say_off(cp, "the template could not fork");
		return 1;
	}
	double t0 = s->t0;

	*s = cp->snap;
	s->ag_synced = false; /* the page holds another run's clock */
	s->cfg = cfg;
	s->strat = strat;
	s->res = res;
	s->t0 = t0;
	s->th = th;
	s->cap = 64;
	s->th[0] = cp->th0;
	*p = cp->p0;
	procs[0] = p;
	s->procs = procs;
	s->nprocs = 1;
	s->capprocs = 8;
	s->th[0].p = p;
	s->fdobj = fdobj;
	s->evl = evl;
	if (fdobj)
		memcpy(fdobj, cp->fdobj, cp->snap.nfdobj * sizeof(*fdobj));
	s->ev = malloc((cp->nev + 1) * sizeof(*s->ev));
	s->dec = malloc((cp->ndec + 1) * sizeof(*s->dec));
	s->capev = cp->nev + 1;
	s->capdec = cp->ndec + 1;
	if (s->ev && cp->nev)
		memcpy(s->ev, cp->ev, cp->nev * sizeof(*s->ev));
	if (s->dec && cp->ndec)
		memcpy(s->dec, cp->dec, cp->ndec * sizeof(*s->dec));
	s->nev = s->ev ? cp->nev : 0;
	s->ndec = s->dec ? cp->ndec : 0;
	futex_init(&s->ft);
	s->sym_pid = 0;
	s->seen_ticks = 0;
	s->outfd = cp->outfd;
	s->outfd_shared = true;
	adopt(s, c);
	inherit_bps(cp, p);
	return 0;
}
