/*
 * The supervisor's internals, shared by the files of tracer/: the world
 * (world.h: one struct session per execution), its processes (process.h)
 * and threads (thread.h), how they are described (describe.h), and the
 * breakpoints, memory, spawn and syscall helpers every file uses.
 */
#ifndef PTLOOM_SESSION_INT_H
#define PTLOOM_SESSION_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/user.h>
#include "describe.h"
#include "disasm.h"
#include "futex.h"
#include "emul.h"
#include "process.h"
#include "sched.h"
#include "signal.h"
#include "spin.h"
#include "thread.h"
#include "timer.h"
#include "tracer.h"
#include "world.h"

/* The number the annotation in include/ptloom.h uses. */
#define PTLOOM_SYSCALL_NR 0x7074

/* struct bp.omp: at an OpenMP runtime's entry point (sync) or at the
 * return from a call of one in the program (add_omp_returns), the thread
 * acquires everyone (session_acquire_everyone), or acquires or releases
 * its process's key of a kind (a fork, a barrier, mutual exclusion) */
enum bp_omp {
	BP_OMP_NONE,
	BP_OMP_EVERYONE,
	BP_OMP_ACQUIRE_FORK,
	BP_OMP_RELEASE_FORK,
	BP_OMP_ACQUIRE_BARRIER,
	BP_OMP_RELEASE_BARRIER,
	BP_OMP_ACQUIRE_MUTEX,
	BP_OMP_RELEASE_MUTEX
};

struct bp {
	uint64_t addr;
	uint8_t orig[16];	/* original bytes (orig[0] is under the int3) */
	uint8_t kind;		/* OP_CALL, OP_ATOMIC, OP_ACCESS, OP_SPIN */
	uint8_t fn;		/* OP_CALL: enum call_fn */
	uint8_t emul;		/* how to execute the original instruction */
	uint8_t emul_reg;	/* EMUL_PUSH: register */
	uint8_t len;		/* instruction length when emulated */
	struct emul_insn ei;	/* EMUL_INSN */
	bool observe;		/* race discovery: observe, not a point */
	bool sync;		/* observe: an atomic of a shared object, only
				 * synchronisation, never sampled out */
	bool freeing;		/* sync: libc's free or realloc */
	/* race discovery: an OpenMP runtime's synchronisation (enum
	 * bp_omp; bp.c add_omp_entries, add_omp_returns) */
	uint8_t omp;
	/* observe: a call of memcpy, memset and the like (insn_info.memfn):
	 * its ranges, from the registers (thread.c ranged_access) */
	uint8_t memfn;
	bool src_atomic;	/* in cfg->atomic_code: an atomic operation */
	bool untyped;		/* in atomic_exe, not in cfg->typed_code */
	bool runtime;		/* observe: a plain access in cfg->runtime_code */
	/* observe: a stack-relative access (session_config.observe_stack) */
	bool stack;
	bool lifted;		/* original byte back while no one could
				 * preempt (bp_lift) */
	bool retired;		/* original byte back for the run */
	bool shared;		/* observed in two threads */
	bool dormant;		/* race discovery: hot in one thread, original
				 * byte back until another thread runs */
	uint8_t wakes;		/* times re-armed from dormant */
	int first_tid;
	uint32_t hits;		/* observations this run */
	bool policy;		/* a point of cfg->policy */
	bool shm_only;		/* a libc call in a policy's process that
				 * shares memory with another: a point only
				 * on an object in that memory (bp_install) */
	bool shm_alone;		/* the same in a process of one thread whose
				 * points came with a file mapped apart
				 * (process.install_alone), until its next
				 * thread (bp_calls_all) */
	bool decoded;		/* insn is valid */
	struct insn_info *insn;	/* decoded instruction (user points) */
	bool rmw;		/* insn reads and writes one memory operand
				 * without a lock prefix (bp_split_rmw) */
	uint8_t tso;		/* 0 not asked yet; 1 a plain store that a
				 * racy load may pass (tso.c); 2 not */
	/* a jump to a trampoline instead of the int3 (tracer/tramp.c): its
	 * slot (0: an int3) and the bytes the jump covers */
	uint64_t tramp;
	uint8_t plen;
	bool access;		/* tramp is an access slot (race discovery) */
	/* access: the jump covers the instructions after this one too (a
	 * shorter one, insn_info.move_len: move, 0 none); such a jump is
	 * never taken back while the process observes (lifting, dozing and
	 * retiring are the flush's and the int3's to honour): a pc inside
	 * it (a signal frame's, Go's preempted goroutine's) would meet half
	 * a jump when it was put back */
	uint8_t move;
	bool multi;
	bool by_int3;		/* access: armed as an int3 now (acc_int3) */
	const struct tramp_plan *plan; /* bp_install's, until armed */
};

enum { EMUL_STEP = 0, EMUL_PUSH, EMUL_SKIP, EMUL_INSN };
/* tracer/mem.c */
int mem_read(struct process *p, uint64_t addr, void *buf, size_t len);
int mem_write(struct process *p, uint64_t addr, const void *buf,
	      size_t len);
int mem_access_user(struct process *p, uint64_t addr, void *buf, size_t len,
		    bool write);
int regs_get(struct thread *t);
int regs_set(struct thread *t);
/* tracer/thread.c: thread t, at its clone's seccomp stop (a thread's or a
 * process's), asks for the id the new T-number is to have
 * (thread_wanted_id) */
void thread_clone_same_tid(struct session *s, struct thread *t);
/* the id T-number idx asks for: the recording's (session_config.ids),
 * else the one it had in this process's earlier runs; 0: none */
pid_t thread_wanted_id(const struct session *s, int idx);
/* that id if it is free, else a free one with as many decimal digits that
 * no other T-number wants; 0: none */
pid_t thread_id_to_ask(const struct session *s, int idx);
/* T-number idx has kernel id got (its first thread's pid for a process) */
void thread_note_id(struct session *s, int idx, pid_t got);
/* c was made by parent's clone or fork: its id noted, the registers
 * thread_clone_same_tid changed put back */
void thread_clone_made(struct session *s, struct thread *parent,
		       struct thread *c);
/* t's syscall, rewritten from regs was, runs to its exit, where
 * thread_exit_fix puts the program's argument registers back */
void thread_fix_at_exit(struct thread *t, const struct user_regs_struct *was);
/* t's trap is the exit of such a syscall: the registers put back (and a
 * wait's rusage the run's), t resumed; false: it is not (the fix is
 * dropped, the trap is another's) */
bool thread_exit_fix(struct session *s, struct thread *t);
/* t's mmap of a file shared returned: names it with the file's other
 * mappings (syscall.c) */
void syscall_mmap_exit(struct session *s, struct thread *t);
/* the thread clone t resumed with thread_clone_same_tid failed (t is at
 * the syscall's exit): the clone runs again as the program made it */
void thread_clone_retry(struct session *s, struct thread *t);

/* tracer/spawn.c */
int spawn_program(const struct session_config *cfg, int outfd, pid_t want,
		  pid_t *pid);
void spawn_register(pid_t pid);
/* The key that lets a syscall of the launcher's children pass the seccomp
 * filter untraced (its sixth argument). */
uint64_t spawn_key(void);
void spawn_unregister(pid_t pid);
double now_seconds(void);
/* Ctrl-C, or --max-time's bound (cfg->stop_wall) passed (world.c) */
bool session_stop_due(const struct session *s);
/* CPU seconds ptloom itself has used. */
double self_cpu_seconds(void);
/* The run's future depends on the virtual clock from here on: it was read
 * or a deadline set against it (session.time_used).  Before the run's
 * first choice every run does the same (ld.so's rdtsc at startup): the
 * value is the same in all of them and cannot tell two states apart. */
static inline void time_observed(struct session *s)
{
	if (s->choices)
		s->time_used = true;
}

/* tracer/detach.c: stop_at reached */
int session_hand_over(struct session *s);

/* tracer/agent.c: the in-process agent.  agent_install: at t's exec
 * stop, patch its vDSO and map the shared page (false: the vDSO cannot be
 * patched; hide it).  agent_resume before any thread of the program runs,
 * agent_stopped after every stop: the virtual clock goes to the page and
 * comes back.  agent_code: pc is in the patched vDSO (never stepped
 * through: its clock reads are not the spin's).  agent_page_at: the
 * mapping at lo is the shared page (no program state). */
bool agent_install(struct session *s, struct thread *t);
void agent_inherit(struct process *child, const struct process *parent);
void agent_disable_in(const struct process *parent, pid_t child);
void agent_resume(struct session *s, struct thread *t);
/* true: the stop was the agent's alone (a signal that met a thread parked
 * in the program: held back, sent again once it goes on), nothing more
 * to do with it */
bool agent_stopped(struct session *s, pid_t tid, int status);
bool agent_code(const struct process *p, uint64_t pc);
/* Trampolines (tracer/tramp.c): agent_resume lets t log the points it
 * passes in the page (up to session_solo_budget(s, t) of them, 0: none)
 * when it is the one thread that can run; agent_stopped unwinds a thread
 * stopped inside a slot's sequence and hands each logged point to
 * session_agent_point (world.c), in order, before the stop is taken.
 * agent_logged: points were logged since its last look (a step that
 * logs points is no long step, no spin); agent_take_log: the points
 * logged so far taken now, while their thread runs on (the run is being
 * judged at --timeout: a wake logged before a long computation counts).
 * agent_slot_at: pc is in p's slot for the breakpoint at *site (an
 * access slot when *access; access may be NULL): its offset in the slot,
 * else -1.  session_agent_access (thread.c): an access logged in race
 * discovery (its instruction at site, its address ea), taken as its
 * observation stop would have been. */
uint64_t session_solo_budget(struct session *s, struct thread *t);
/* n, or fewer: the steps left before --max-steps or replay --gdb's step,
 * where a stop must be (0: there already) */
uint64_t session_steps_before_stop(const struct session *s, uint64_t n);
uint64_t session_known_budget(struct session *s, struct thread *t);
void session_agent_point(struct session *s, struct thread *t, uint64_t site,
			 uint64_t rdi, uint64_t rsi, uint64_t ret);
/* The hand-off between threads in the program (agent.c): the plan of
 * picks for t about to run (its length, 0: none), and a point the
 * hand-off's code logged, whose pick was the plan's `to`. */
int session_handoff_plan(struct session *s, struct thread *t,
			 uint16_t *picks, int max);
void session_agent_handoff_point(struct session *s, struct thread *t,
				 uint64_t site, uint64_t rdi, uint64_t rsi,
				 uint64_t ret, int to);
/* A thread parked in the program (thread.ho_parked): brought to a ptrace
 * stop at its point, its registers as there (0, or -errno: it died);
 * sent on from it by its go word (false: it must be resumed by ptrace) */
int agent_ho_materialise(struct thread *t);
bool agent_ho_wake(struct session *s, struct thread *t);
/* check_limits, before it acts on the running thread: false while a
 * plan runs, which then ends at its next switch (no thread hands over
 * any more); true once the thread whose turn it is is the running one
 * of the session (the points logged so far taken) */
bool agent_ho_freeze(struct session *s);
/* A futex wake t passed in a futex slot (tramp.h; site: its `mov`):
 * futex(rdi, rsi, rdx) answered `answer`, taken as its seccomp stop and
 * the choice after it would have been. */
void session_agent_futex(struct session *s, struct thread *t, uint64_t site,
			 uint64_t rdi, uint64_t rsi, uint64_t rdx, int answer);
bool agent_logged(struct session *s);
void agent_take_log(struct session *s);
/* t meets signal sig in a slot's displaced instructions: if sig is not
 * caught (the process dies of it), t's pc goes to the function's own
 * instruction, where the unwinder and the report see it as without the
 * agent */
void agent_fault_pc(struct thread *t, int sig);
int agent_slot_at(const struct process *p, uint64_t pc, uint64_t *site,
		  bool *access);
/* a call of free or realloc t logged in its slot (tramp_emit_free): the
 * block, its chunk header then (when the block is 16-aligned), the
 * return address; as the observation point's stop takes it */
void session_agent_free(struct session *s, struct thread *t, uint64_t site,
			uint64_t p, uint64_t hdr, uint64_t ret);
void session_agent_access(struct session *s, struct thread *t, uint64_t site,
			  uint64_t ea);
/* A spin probe (spin.c) single-steps t: session_probe_observes says
 * whether an observation point is armed at t's pc (and the address its
 * instruction touches, *ea: found before the step's pc moves into a
 * slot); session_probe_access takes it, just before the probe steps it,
 * as its stop or its slot would have.  What race discovery observes is
 * then the same whether or not a probe looked (a probe's steps through
 * the runtime's start lost accesses: go_wg's races, and so its runs,
 * differed per invocation). */
bool session_probe_observes(struct session *s, struct thread *t,
			    uint64_t *ea);
void session_probe_access(struct session *s, struct thread *t, uint64_t site,
			  uint64_t ea);
/* t, stopped by ptloom while it ran (the probe's SIGSTOP), goes on as it
 * was resumed: to its syscall's exit, by watching steps, or running. */
void resume_running(struct session *s, struct thread *t);
bool agent_page_at(const struct process *p, uint64_t lo);
/* pc is in an access slot's displaced instructions: the program's own
 * address of the one there (*back: pc is the jump back, and this the
 * address after the moved ones; back may be NULL), else 0 */
uint64_t agent_unmoved(struct process *p, uint64_t pc, bool *back);

/* tracer/bp.c */
int bp_install(struct session *s, struct process *p);
/* bp_install outside p's first clone (unless already installed or dead):
 * while p has one thread its libc calls are points only on objects in
 * shared memory (bp.shm_alone); apart: no futex wake nor access slots
 * (process.install_apart) */
void bp_install_now(struct session *s, struct process *p, bool apart);
/* p has a second thread: every libc call of its is a point (shm_alone
 * cleared) */
void bp_calls_all(struct process *p);
struct bp *bp_find(struct process *p, uint64_t addr);
int bp_step_over(struct session *s, struct thread *t);
int bp_remove_all_in(struct process *p, pid_t pid);
int bp_restore_bytes(int memfd, const struct bp *bps, size_t n);
/* b's original bytes back (arm: its int3 or jump again), for a step */
void bp_put(struct process *p, const struct bp *b, bool arm);
int bp_remove_observers(struct process *p);
void bp_late_objects(struct session *s, struct process *p);
/* Race discovery: t sees everything the other threads of its process did
 * so far (they release into a key of t's, t acquires it): a spinner's
 * re-check, an OpenMP task wait's entry.  More happens-before than there
 * may be, never less. */
void session_acquire_everyone(struct session *s, struct thread *t);
/* An instruction point hit while no other thread could run is no choice:
 * put its original byte back until another thread could (bp_drop_lifts). */
void bp_lift(struct process *p, struct bp *b);
void bp_drop_lifts(struct process *p);
/* A sampled observation point done for the run: never traps again. */
void bp_retire(struct process *p, struct bp *b);
/* An observation point hot in one thread: it stops trapping until
 * bp_wake_dormant() for another thread. */
void bp_doze(struct process *p, struct bp *b);
void bp_wake_dormant(struct process *p, int thread);
/* p's access slots are entered through int3s from now on (agent.c) */
void bp_access_int3(struct process *p);
/* The int3 path at observation point b (its address ea) would have
 * single-stepped its instruction (race discovery's budget counts it). */
bool bp_would_step(const struct bp *b, uint64_t ea);
/* ea is in an atomic object of p's executable (cfg->atomic_data) */
bool bp_atomic_datum(const struct process *p,
		     const struct session_config *cfg, uint64_t ea);
int bp_lift_all(struct process *p);
/* Effective address of the memory operand at breakpoint b for t. */
bool bp_split_rmw(struct thread *t);
/* One PTRACE_SINGLESTEP of stopped t and the wait for its next stop
 * (*status); -errno when either fails (bp.c) */
int thread_step_wait(struct thread *t, int *status);
/* The words t watches that [ea, ea + size) overlaps: their number, and
 * them in hit[] (may be NULL). */
int thread_watched(const struct thread *t, uint64_t ea, int size,
		   uint64_t *hit);
/* tracer/tso.c: x86-TSO store buffers (POINTS_TSO) */
/* t stands at a store that may enter its store buffer (ALT_BUFFER) */
bool tso_may_buffer(struct session *s, struct thread *t);
enum { TSO_RUNS, TSO_POINT };
/* t was picked for ALT_BUFFER: its store enters the buffer, and it runs on
 * to its next memory access (TSO_POINT: it stands there, at a point) or
 * until its buffer drains (TSO_RUNS: resume it) */
int tso_buffer(struct session *s, struct thread *t);
/* t, standing at an access of its window (t->tso_window), was picked:
 * the same, from that access */
int tso_step(struct session *s, struct thread *t);
/* p's threads' buffered stores into memory (p exits as a whole: the
 * hardware drains every store it executed) */
void tso_drain_process(struct session *s, const struct process *p);
uint64_t bp_operand(struct session *s, struct thread *t, struct bp *b,
		    int *size, bool *write);
/* b's instruction accesses memory: its size and whether it writes */
bool bp_operand_kind(struct bp *b, int *size, bool *write);

/* tracer/syscall.c: classify a seccomp stop; returns true when it is a
 * scheduling point (t's pending operation is set), false when handled. */
/* tracer/evloop.c: t performs its poll, select or epoll_wait, which
 * finds descriptors ready or must not block: what it sees may be a choice
 * (DEC_POLL), and its answer written by ptloom (t->skip). */
void evloop_poll(struct session *s, struct thread *t);
/* t's epoll_wait has events ptloom took from the kernel and held: it is
 * ready although the kernel's set is not. */
bool evloop_pending(struct session *s, struct thread *t);
/* A byte kept for the run with the file of sb, 0 at first (tracer/fdext.c
 * keeps its verdicts there), or NULL. */
struct stat;
uint8_t *evloop_memo(struct session *s, const struct stat *sb);
/* A socket's readiness is held, or an epoll event ptloom took from the
 * kernel waits in the run: state of kernel objects a checkpoint cannot
 * give each run. */
bool evloop_held(const struct session *s);
/* A copy of the run's numbering of descriptors' files (a checkpoint's,
 * and each run's from it: a file the template has open has the same
 * device and inode in every fork), or NULL (none, out of memory). */
struct evloop *evloop_dup(const struct evloop *v);
/* tracer/describe.c: name an object of the trace (a descriptor's key) as
 * data, for show, when the trace is symbolised. */
void session_name_object(struct session *s, uint64_t key, const char *text);
void evloop_free(struct session *s);
/* tracer/syscall.c: the deterministic stream behind getrandom and
 * AT_RANDOM */
uint64_t splitmix(uint64_t *x);
/* One word into a running hash (the livelock state, the state key). */
static inline void hash_mix(uint64_t *h, uint64_t v)
{
	*h ^= v;
	*h *= 0x9e3779b97f4a7c15ull;
	*h ^= *h >> 29;
}
bool syscall_enter(struct session *s, struct thread *t);
void spinners_wake(struct session *s, const struct thread *t);
/* Execute t's pending operation. Returns true if t now runs, false if it
 * blocked (the scheduler picks again). */
bool syscall_execute(struct session *s, struct thread *t);
/* Re-check a blocked fd/poll wait; true if it became ready. */
bool syscall_fd_ready(struct session *s, struct thread *t);
void syscall_close_fds(struct thread *t);
void syscall_poll_timed_out(struct thread *t);
/* The time left ns into t's select, pselect6 or ppoll's timeout struct
 * (registers read) */
void syscall_poll_left_write(struct thread *t, uint64_t ns);
/* Can the world outside the program make t's descriptors ready?
 * (tracer/fdext.c) */
bool syscall_fd_external(struct session *s, struct thread *t);
/* Is our copy ourfd a POSIX message queue's descriptor? */
bool fd_is_mqueue(int ourfd);
/* Whose an inet socket (our copy ourfd) is: FDEXT_PROGRAM, a connection
 * whose other end the program holds; FDEXT_OPEN, a socket listening on a
 * loopback address, or an unconnected UDP one bound there; FDEXT_WORLD;
 * FDEXT_NOT_INET for another kind of descriptor. */
enum { FDEXT_NOT_INET = -1, FDEXT_WORLD, FDEXT_PROGRAM, FDEXT_OPEN };
int fdext_inet_class(struct session *s, int ourfd);
/* tracer/flock.c: can t's flock request t->pfd[i] be granted now; is
 * what it waits for held outside the program */
enum { LK_FLOCK = 0, LK_POSIX, LK_OFD };
bool flock_ready(struct thread *t, int i);
bool flock_external(struct session *s, struct thread *t, int i);
/* t's pending semop (waits_sem): would it complete (or fail) now?  Is
 * its set gone?  May a process outside the program post it?
 * (tracer/sysvsem.c) */
bool sem_ready(struct thread *t);
/* A file's object key (device and inode), as syscall.c names files and
 * pipes; does process pid hold a descriptor of it open for reading
 * (HOLD_READ), writing (HOLD_WRITE) or either (syscall.c)? */
enum { HOLD_ANY = 0, HOLD_READ, HOLD_WRITE };
struct stat;
uint64_t syscall_file_key(const struct stat *sb);
bool syscall_holds_open(pid_t pid, uint64_t key, int want);
/* does a process outside the program (and ptloom) hold a descriptor of
 * the file whose key is key, open as mode (HOLD_*) says
 * (tracer/fdext.c)? */
bool fdext_held_outside(struct session *s, uint64_t key, int mode);
/* tracer/fifo.c: the open of a FIFO the run made as a wait of the model.
 * fifo_made: t's mknod or mknodat of path returned (a FIFO: the run's);
 * fifo_is_runs: is the FIFO whose key is key one the run made?
 * fifo_ready: would t's pending open complete now (world: counting the
 * descriptors of processes outside the program too)?  fifo_external:
 * may the world end its wait?  fifo_go: t's ready open goes to the
 * kernel; fifo_opened: it returned (its exit); fifo_settle: ptloom's own
 * descriptors no pending open needs any more are closed; fifo_free:
 * all of them, at the run's end. */
void fifo_made(struct session *s, struct thread *t, const char *path);
bool fifo_is_runs(const struct session *s, uint64_t key);
bool fifo_ready(struct session *s, struct thread *t, bool world);
bool fifo_external(struct session *s, struct thread *t);
void fifo_go(struct session *s, struct thread *t);
void fifo_opened(struct session *s, struct thread *t);
void fifo_settle(struct session *s);
void fifo_free(struct session *s);
/* the path of the FIFO t's pending open waits for */
void fifo_describe(const struct thread *t, char *buf, size_t len);
/* t's mknod or mknodat returned: fifo_made of its path (syscall.c) */
void syscall_mknod_exit(struct session *s, struct thread *t);
/* t's exclusive create (open, openat with O_CREAT|O_EXCL) or mkdir
 * returned its file: the run's, removed when the run is over if it lies in
 * a temporary directory (syscall.c; world.h run_temp) */
void syscall_created_exit(struct session *s, struct thread *t);
/* t's process opened descriptor fd to write or create: its regular file
 * is one whose I/O is a point while another process lives
 * (syscall.c) */
void syscall_file_opened(struct thread *t, int fd);
bool sem_gone(struct thread *t);
bool sem_external(struct session *s, struct thread *t);
/* A blocking write of more than PIPE_BUF bytes to a pipe or stream socket
 * (tracer/bigwrite.c): prepare marks it (t->wbig), step writes what fits
 * without blocking. */
enum { BIGWRITE_DONE, BIGWRITE_BLOCKED, BIGWRITE_KERNEL };
void bigwrite_prepare(struct thread *t);
int bigwrite_step(struct thread *t);
bool syscall_emulate_rdtsc(struct session *s, struct thread *t);
void syscall_answer_rdtsc(struct session *s, struct thread *t, bool rdtscp,
			  int len);
/* tracer/probe.c: what this machine's CPU does (once per process) */
bool tsc_traps(void);
bool watch_traps(void);
/* tracer/tsc.c: rdrand and rdseed, and rdtsc and rdtscp where PR_SET_TSC
 * does not trap them, answered at int3s on their sites */
void tsc_install(struct session *s, struct process *p);
bool tsc_hit(struct session *s, struct thread *t, uint64_t addr);
void tsc_restore(const struct process *p, int memfd);
/* pc is an rdtsc site whose jump leads to its slot (the spin prober runs
 * it as it would the rdtsc); tsc_unslot: the slots whose moved bytes
 * [lo, hi) meets go back to the int3 (a breakpoint goes there);
 * tsc_fault_pc: the program's address of the instruction at pc in a
 * slot */
bool tsc_slot_site(const struct process *p, uint64_t pc);
/* bp.c: a breakpoint of p's (its address and the 15 bytes after it, its
 * moved or emulated bytes) meets [lo, hi); p's breakpoints are sorted */
bool bp_near(struct process *p, uint64_t lo, uint64_t hi);
void tsc_unslot(struct process *p, uint64_t lo, uint64_t hi);
bool tsc_fault_pc(const struct process *p, uint64_t pc, uint64_t *prog);
/* agent.c: the address of p's rdtsc slot i (0: none), and which one pc
 * is in (-1: none), at offset *off */
uint64_t agent_tsc_slot(const struct process *p, int i, uint64_t site,
			uint64_t *page);
int agent_tsc_slot_at(const struct process *p, uint64_t pc, uint64_t *off);
/* the near region's bytes for access slots (the rest: rdtsc slots) */
uint64_t agent_near_access_len(const struct process *p);
/* p's executable has an rdtsc a slot can take (it wants the near
 * region) */
bool tsc_exe_slots(struct process *p);
/* bp.c: the rdtsc and rdtscp of an ELF file (the file cache's) */
/* The wall-clock and CPU seconds ptloom has spent sweeping files
 * (bp.c scan_elf), in this process so far. */
void bp_analysis_seconds(double *wall, double *cpu);
int bp_scan_tsc(const char *path, const struct insn_info **out,
		struct disasm_elf_info *info);
/* A priority-inheritance lock whose owner is gone passes to its oldest
 * waiter (syscall.c). */
void futex_pi_owner_gone(struct session *s, const struct thread *dead);
void futex_wake_addr(struct session *s, uint64_t addr, int n,
		     uint32_t bitset, int *woken);

/* tracer/checkpoint.c: at t's seccomp stop, take the checkpoint if this
 * is the first thread's clone; true when the session now runs a fork of
 * the template (the stop is not handled further). */
bool checkpoint_at(struct session *s, struct thread *t);
/* Start the session from the checkpoint: 0, or 1 when it does not apply
 * (spawn as usual). */
int checkpoint_start(struct session *s);
/* A run's child from the template reached its clone's seccomp stop: the
 * vDSO bytes its start-up stub borrowed go back. */
void checkpoint_child_started(struct session *s, struct thread *t);
/* The mapped objects of a run from the checkpoint (the template's), and
 * keeping the first such run's for the others. */
bool checkpoint_objects(struct session *s, struct run_result *r);
void checkpoint_keep_objects(struct session *s, const struct run_result *r);

#endif
