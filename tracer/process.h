/*
 * Processes of one execution: every process the program starts (fork,
 * vfork, clone without CLONE_THREAD) is followed, and its threads are
 * scheduled in the same world as the first process's, one thread of the
 * whole tree at a time.
 *
 * A process owns what the kernel keeps per address space and per thread
 * group: /proc/PID/mem, a pidfd, its breakpoints, the join offset glibc
 * uses, its image (reset at exec), and what its parent may learn through
 * wait4/waitid (exit, stop, continue).  Waits are emulated: a waiter
 * blocks in ptloom's model and is woken when a child's state changes under
 * ptloom's control; which child a wait returns is a choice.
 */
#ifndef PTLOOM_PROCESS_H
#define PTLOOM_PROCESS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* trampolines a process image may have (tracer/tramp.c) */
#define AGENT_TRAMPS 224
/* rdtsc slots in the agent's region (tsc.c, tramp.h TRAMP_TSLOT) */
#define AGENT_TSC_SLOTS 64

struct session;
struct thread;
struct bp;

#define TSC_SITES 128
#define TSC_OBJS 48

#define PROC_WFILES 32

/* The system libraries whose code works on the program's objects in a
 * process (bp.c add_object_libraries: libstdc++, GLib) */
#define OBJECT_LIBS 4
struct object_libs {
	uint64_t span[OBJECT_LIBS][2]; /* their loaded spans [lo, hi) */
	int n;
	const uint64_t (*copies)[2]; /* bp.c's static storage */
	int ncopies;
	uint64_t copies_bias;
	/* libc's static struct tm that localtime and gmtime return (bp.c
	 * libc_tmbuf; 0: unknown) */
	uint64_t tmbuf;
};

/* Race discovery: the program's own shared objects swept at the install
 * (bp.c add_program_objects), by load address, so that one mapped later (a
 * plugin dlopen'ed after the first thread), whose code was neither
 * observed nor armed, is seen at the process's exit_group
 * (bp_late_objects) and the run not said to cover it */
#define SWEPT_OBJECTS 16
struct swept_objects {
	uint64_t start[SWEPT_OBJECTS];
	int n;
	bool watch; /* discovery swept them, and no more than fit */
};

struct process {
	int idx;		/* P-number: creation order, P0 is the program */
	pid_t pid;		/* thread-group id (real, never in the trace) */
	int parent;		/* P-number of the real parent, -1 if none */
	/* a fork child before its exec: a copy of the parent's image
	 * fork_img (the same code at the same addresses) */
	bool fork_copy;
	unsigned fork_img;
	int memfd;		/* /proc/PID/mem */
	int pidfd;		/* process_pidfd() */
	/* /proc/PID/maps, pagemap and io, opened by the run's first state
	 * key (tracer/state.c) and read again at each: -1, not yet */
	int mapsfd, pagemapfd, iofd;
	bool pidfd_tried;
	/* the program set a task's CPU mask to ptloom's pin itself: its
	 * sched_getaffinity is the kernel's to answer (syscall.c) */
	bool set_pin;
	/* it called semget, msgget or shmget: the kernel's SysV IPC
	 * objects it may use are no fork's own (checkpoint.c) */
	bool sysv_ipc;
	/* the regular files it or a process it was forked from opened to
	 * write or create (file object keys: device, inode; syscall.c
	 * file_point), wfile_all past PROC_WFILES: while another process
	 * lives, their I/O is a point */
	uint64_t wfile[PROC_WFILES];
	int nwfile;
	bool wfile_all;
	/* the named files it changed before a fork checkpoint could stand
	 * (checkpoint.c): fs_changed for a removal, rename, new directory
	 * or link; fs_made, the files it opened to write (up to 8), which
	 * must be gone or no regular file at the checkpoint */
	bool fs_changed;
	int nfs_made;
	char fs_made[8][256];
	uint32_t img;		/* image number: tags its events' addresses */
	char comm[16];		/* program name */
	int nthreads;		/* threads created, for its own T-numbers */
	struct bp *bps;		/* sorted by addr */
	size_t nbps;
	size_t nlifted;		/* of them, lifted (bp_lift) */
	uint64_t *dormant;	/* addresses of dormant ones (bp_doze) */
	size_t ndormant, capdormant;
	bool bps_installed;
	bool bps_lifted;	/* lifted while one thread was left (bp.c) */
	/* its writable MAP_SHARED mappings (not the agent's page), as read
	 * at its forks (process_shm_refresh) and inherited by a fork child:
	 * the same address in the parent and the child is one memory there,
	 * named with the tag of the image that mapped it first (mem_name);
	 * and its mappings of a file another process maps shared on its own
	 * (apart: syscall.c apart_mapped), named by the file's first
	 * mapping (session.apart_files): address + delta in image img */
	struct shm_range {
		uint64_t lo, hi;
		uint32_t img;
		bool sem; /* a POSIX semaphore's file (sem_open) */
		bool apart; /* mapped on its own, delta its naming */
		/* anonymous (MAP_SHARED | MAP_ANONYMOUS): only a fork
		 * shares it, where a file may be mapped by any process */
		bool anon;
		int64_t delta;
		uint64_t dev, ino, off; /* the file's, the offset of lo */
	} shm[16];
	int nshm;
	/* instructions whose answer is the machine's, with an int3 of
	 * ptloom's (tracer/tsc.c): rdrand and rdseed always, rdtsc and
	 * rdtscp where PR_SET_TSC does not make them trap; answered at the
	 * trap.  Each site's length, kind, first byte (the int3 replaced
	 * it) and, for rdrand, its register and size; the load bases of
	 * the objects swept.  Copied with the process (a fork, the
	 * template) */
	struct tsc_table {
		uint64_t site[TSC_SITES];
		uint64_t obj[TSC_OBJS];
		uint8_t len[TSC_SITES], kind[TSC_SITES], orig[TSC_SITES];
		uint8_t reg[TSC_SITES], size[TSC_SITES];
		uint16_t n, nobj;
		/* an rdtsc answered in the agent's slot (tsc.c): the slot's
		 * number + 1 (0: the int3, or nothing), the span moved
		 * there and its original bytes */
		uint8_t slot[TSC_SITES], mlen[TSC_SITES];
		uint8_t morig[TSC_SITES][16];
		uint8_t nslot;
	} tsc;
	/* where the scheduling policy's shared object starts, found when
	 * its points were installed (0: not known); the policy's own
	 * session_object_start() gets it without reading the maps again */
	uint64_t policy_at;
	/* the scheduling policy's image for its image (sched_policy.adopt at
	 * its exec; a fork's parent's), NULL: C-level points */
	const struct policy_image *pimg;
	/* bp_install_now while p has one thread (a file it maps apart, a
	 * handler that may run: signal.c): its libc calls are points only
	 * on objects in shared memory (bp.shm_alone) until its next thread */
	bool install_alone;
	bool calls_alone; /* some of its bps are shm_alone */
	/* bp_install is called for a file p maps apart, at its mmap's exit:
	 * no futex wake slots nor access slots (int3s; with them a
	 * Criterion worker's race discovery failed its runner's handshake,
	 * "Protocol error", and a futex slot's wake was "no point") */
	bool install_apart;
	bool ever_policy;	/* pimg was set in this run */
	bool ever_c;		/* ... and an exec gave it none (C-level) */
	bool observing;		/* observation breakpoints are in place */
	/* a timer of its own, or another process, sends it a signal it has
	 * a handler for: the handler may run between any two instructions
	 * of its threads, so one thread alone is observed and keeps its
	 * points (signal.c signal_handler_may_run) */
	bool handler_race;
	/* the executable is cfg->atomic_exe, loaded at data_bias from its
	 * link-time addresses (cfg->atomic_data) */
	bool data_known;
	uint64_t data_bias;
	/* race discovery: the loaded spans of the system libraries whose
	 * code works on the program's objects (the C++ standard library,
	 * GLib), and the objects the executable holds copies of (std::cout):
	 * their code's accesses to their own state there are not the
	 * program's (thread.c library_internal) */
	struct object_libs rt;
	struct swept_objects swept;
	bool rwlock_known;	/* its libc is a glibc whose pthread_rwlock_t
				 * world.c rwlock_readers reads (>= 2.30) */
	/* signals the program sent to its process group (kill 0, -pgrp,
	 * -1) or through a pidfd, not yet delivered: which thread takes
	 * one is explored at its delivery (signal_redirect); pd_from: who
	 * sent it when ptloom sent it on the program's behalf (kill -1) */
	uint64_t pd_open;
	pid_t pd_from[65];
	uint64_t join_off;	/* pthread_t + join_off = its tid word */
	bool exec_seen;
	bool dead;		/* its leader is reaped by ptloom */
	bool reaped;		/* its parent's wait consumed the exit */
	uint64_t child_reaped;	/* 1 + the step its last child was reaped at */
	/* its exit_group came from a sanitizer's runtime with a non-zero
	 * status (the report's end): SIG_SANITIZER + SANITIZER_*, the
	 * exiting thread's T-number and where it was; 0: no */
	int san_sig, san_thread;
	char san_where[256];
	int status;		/* wait status at death */
	bool stopped;		/* in a group-stop its parent may see */
	bool stop_reported;	/* a wait consumed the stop */
	bool continued;		/* SIGCONT after a stop, not yet reported */
	int vfork_parent;	/* T-number of a vfork parent to release, -1 */
	bool symbolized;	/* its image's events are symbolised */
	bool reaping;		/* session_reap_process() is collecting it */
	/* the in-process agent (tracer/agent.c): its patched vDSO [ag_lo,
	 * ag_hi) (0: hidden), its code in it, the shared page (0: none,
	 * the vDSO makes the syscalls) */
	uint64_t ag_lo, ag_hi, ag_blob, ag_page;
	/* the trampolines' code region (0: none; tracer/tramp.c) and what
	 * each of its first ntramp slots serves: the breakpoint's address,
	 * and whether its call may be a spin's (a trylock: logged only while
	 * no other thread can run, world.c session_known_budget) */
	uint64_t ag_code;
	int ntramp;
	bool ho_ready;	/* the hand-off's stubs and code are in its region */
	/* race discovery's access slots (tracer/tramp.c): the page's view
	 * near the executable (0: none) and the region after it, the slots
	 * used; acc_int3: they are entered through int3s now, never jumps
	 * (another thread ran beside a logging one, agent.c) */
	uint64_t ag_page2, ag_near, ag_near_len;
	int nacc;
	bool acc_int3;
	/* glibc's futex wake sites (bp.c's libc lookup, link-time) and
	 * where its file is loaded, for the futex slots (tramp.h) */
	const uint64_t *libc_fsites;
	const uint8_t *libc_fkinds;
	int libc_nfsites;
	uint64_t libc_bias;
	struct tramp_slot {
		uint64_t site;
		bool passive;
		/* a futex wake's slot (tramp.h: two units, the second
		 * marked) */
		bool futex, second;
		uint8_t fkind; /* TRAMP_FUTEX_* */
		/* race discovery's free() or realloc() (tramp_emit_free) */
		bool freeing;
	} tslot[AGENT_TRAMPS];
};

/* Tag of a process image in event addresses (P0's first image: 0). */
static inline uint64_t process_tag(const struct process *p)
{
	return (uint64_t)p->img << 48;
}

/* The writable shared mapping of p (struct process.shm) that holds a,
 * NULL: none. */
static inline const struct shm_range *shm_at(const struct process *p,
					     uint64_t a)
{
	for (int i = 0; i < p->nshm; i++)
		if (a >= p->shm[i].lo && a < p->shm[i].hi)
			return &p->shm[i];
	return NULL;
}

/* Whether a writable shared mapping of p (struct process.shm) overlaps
 * [lo, hi). */
static inline bool shm_overlapping(const struct process *p, uint64_t lo,
				   uint64_t hi)
{
	for (int i = 0; i < p->nshm; i++)
		if (p->shm[i].lo < hi && lo < p->shm[i].hi)
			return true;
	return false;
}

/* The name of the memory at a in p's address space, in events and race
 * discovery: a tagged with the image's that mapped it first if it is in a
 * writable shared mapping p inherited or forked with (the same address in
 * those processes is one memory), or as the file's first mapping names
 * the same byte if p maps the file on its own (shm_range.apart: two
 * addresses, one memory); else a with p's own tag. */
static inline uint64_t mem_name(const struct process *p, uint64_t a)
{
	const struct shm_range *r = shm_at(p, a);

	if (!r)
		return a | process_tag(p);
	return (uint64_t)r->img << 48 | (a + (uint64_t)r->delta);
}

/* The address a synchronisation object at a is keyed by (untagged, as
 * the observer keys them): a itself, or in a mapping made apart the
 * address the file's first mapping has for it. */
static inline uint64_t mem_sync_key(const struct process *p, uint64_t a)
{
	const struct shm_range *r;

	if (!p->nshm || !a || (a >> 47))
		return a;
	r = shm_at(p, a);
	return r ? a + (uint64_t)r->delta : a;
}

/* Is a in one of p's writable shared mappings (struct process.shm)? */
static inline bool mem_shared(const struct process *p, uint64_t a)
{
	return shm_at(p, a) != NULL;
}

/* Read p's writable shared mappings again (at a fork of p: its child
 * inherits them): a range it had keeps its image, a new one gets p's.
 * Their number. */
int process_shm_refresh(struct session *s, struct process *p);
/* One line of /proc/PID/maps: [lo, hi), its file (dev as
 * major << 32 | minor, inode; 0: none) at offset off, shared or not,
 * writable or not, its path (cut at 127 bytes). */
struct map_line {
	uint64_t lo, hi, off, dev, ino;
	bool shared, writable;
	char path[128];
};
bool map_line_parse(const char *line, struct map_line *m);

/* A new process with leader pid, child of parent (NULL for P0). */
struct process *process_new(struct session *s, pid_t pid,
			    struct process *parent);
struct process *process_find(struct session *s, pid_t pid);
/* Open /proc/PID/mem (at creation and at exec). */
int process_open(struct process *p);
/* Its pidfd (for pidfd_getfd), opened when first asked for; -1: none. */
int process_pidfd(struct process *p);
void process_close(struct process *p);
/* /proc/PID/stat past the program name: "S 1234 ..." (state, parent, ...)
 * in buf, or NULL when the task is gone. */
const char *proc_stat_tail(pid_t pid, char *buf, size_t len);
/* waitpid(tid, __WALL), again when a signal interrupts it, unless tid
 * is gone or a zombie by then: -1 with ESRCH.  A thread-group leader
 * that died with its process (an exit_group, a fatal signal) is a zombie
 * whose status the kernel holds back until every other thread of the
 * group is reaped, which only the run's own loop does: waiting for it
 * alone never returned (a discovery run of go_wg, stepping its leader
 * over a breakpoint, waited 100 minutes and ignored SIGTERM). */
pid_t wait_task(pid_t tid, int *status);
/* One line of /proc/PID/maps. */
struct proc_map {
	uint64_t lo, hi;
	bool writable, shared;
	bool anon;		/* no file behind it */
	bool none;		/* no access at all (a guard) */
	bool stack;		/* the main thread's [stack] */
	bool vdso;		/* the [vdso] */
	/* right above an anonymous mapping with no access (a guard page:
	 * glibc's thread stacks have one) */
	bool guard_below;
	/* guard_below not looked up yet (proc_maps_writable leaves it to
	 * proc_map_guard) */
	bool guard_unknown;
};
/* The first max mappings of pid into m: their number, -1 if the file
 * cannot be read; *more (may be NULL) says whether there were others. */
int proc_maps(pid_t pid, struct proc_map *m, int max, bool *more);
/* Is m a stack glibc allocated for a thread whose descriptor is at tp:
 * an anonymous mapping right above its own guard page, the descriptor
 * (struct pthread, about 2.3 KiB in glibc 2.36, less the static TLS
 * alignment) at its top.  A stack the program gave
 * (pthread_attr_setstack) has no guard of glibc's and is the program's
 * memory again once the thread is gone. */
bool proc_map_glibc_stack(const struct proc_map *m, uint64_t tp);
/* A file mapped in a process: where its mapping of file offset 0 starts
 * (its load base; 0: none seen) and whether a mapping of it executes. */
struct mapped_file {
	char *path;
	uint64_t start;
	bool exec;
};
/* The files pid maps, each once, in the order they first appear: their
 * number (*out malloc'd, mapped_files_free), -1 if the maps cannot be
 * read. */
int proc_mapped_files(pid_t pid, struct mapped_file **out);
void mapped_files_free(struct mapped_file *f, int n);
/* The number after "name:" in a /proc status file at path (strtoull's
 * base) into *v; false if the file or the field is not there. */
bool proc_status_value(const char *path, const char *name, int base,
		       uint64_t *v);
/* The writable ones only, from an open /proc/PID/maps (the kernel's
 * PROCMAP_QUERY where it has one, else the file read again from its
 * start); guard_below may be left for proc_map_guard (a query more per
 * anonymous mapping, asked only where it is needed). */
int proc_maps_writable(int fd, struct proc_map *m, int max, bool *more);
/* m's guard_below looked up where proc_maps_writable left it (fd: the
 * maps file it read); -1 if the query failed. */
int proc_map_guard(int fd, struct proc_map *m);
/* A fork child inherits its parent's breakpoints (and their bytes). */
int process_copy_bps(struct process *child, const struct process *parent);
/* At PTRACE_EVENT_EXEC: a new image, no breakpoints yet. */
void process_exec(struct session *s, struct process *p);
/* The leader of p was reaped with status: it is dead; wake its waiters. */
void process_died(struct session *s, struct process *p, int status);
/* A thread of p reached a group-stop (SIGSTOP delivered). */
void process_stopped(struct session *s, struct process *p);
/* "P1 racy T2" (or "T2" for P0) into buf. */
void process_thread_label(struct session *s, struct thread *t, char *buf,
			  size_t len);

/* wait4/waitid at its seccomp stop, chosen to run: true if the kernel may
 * perform it now (possibly rewritten to name one child), false if it
 * blocked in ptloom's model. */
bool process_wait_execute(struct session *s, struct thread *t);
/* t's pending wait4/waitid would only block now: no child it waits for
 * can be reported yet (and it has one), no WNOHANG. */
bool process_wait_blocks(struct session *s, struct thread *t);
/* kill/tgkill/tkill chosen to run: note a SIGCONT to a stopped child. */
void process_kill_execute(struct session *s, struct thread *t);

/* Reap every thread of p, which is dying (SIGKILL, exit_group). */
void session_reap_process(struct session *s, struct process *p);
/* The program's own child processes under --free-children. */
bool is_free_process(struct session *s, pid_t pid);
/* PTRACE_EVENT_FORK/VFORK/CLONE of a new process by thread parent_idx. */
void on_fork_event(struct session *s, int parent_idx, int ev);
/* PTRACE_EVENT_EXEC: the thread that goes on as the leader, then its new
 * image. */
struct thread *exec_from_thread(struct session *s, struct thread *t);
void on_exec(struct session *s, struct thread *t);
/* A stop of a free child process: it goes on. */
void free_process_stop(struct session *s, pid_t pid, int status);
/* tid exited or was killed. */
void on_death(struct session *s, pid_t tid, int status);
/* P0's shared objects into the run's result (once). */
void collect_objects(struct session *s, struct process *p);
void note_exe(struct session *s, struct process *p);
/* Kill the process group and reap everything, so nothing is left behind. */
void kill_and_reap(struct session *s);

void process_free_all(struct session *s);

/* At the end of a run that noted P0's execs (session_config.note_execs)
 * and created no thread: run_result's exec_argv from its last exec. */
void process_note_last_exec(struct session *s);

/* SANITIZER_* (tracer.h) if pc of process pid lies in a sanitizer's
 * runtime (a shared libasan/libtsan/... or, linked in, a __sanitizer
 * function), else 0. */
int sanitizer_at(pid_t pid, uint64_t pc);

#endif
