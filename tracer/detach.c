/*
 * Handing the stopped program over (ptloom replay --gdb): at the step the
 * configuration names (session_config.stop_at), every thread is at a
 * ptrace stop where the schedule left it.  session_hand_over() lets go of
 * them without letting any run an instruction: the program ends up in a
 * job-control group-stop, free of ptrace, for a debugger to attach to.
 *
 *   - the int3 bytes of ptloom's breakpoints are put back, and a thread
 *     stopped at one is set back to its address;
 *   - a thread parked at a syscall's seccomp stop gets the syscall skipped
 *     and rewound (rip back over the 2-byte `syscall`, rax = its number),
 *     so it sits in front of the syscall and issues it again when it is
 *     continued, as the fork checkpoint does (../shared/PTRACE-NOTES.md);
 *   - a SIGSTOP sent to the process before the first PTRACE_DETACH puts
 *     each thread into group-stop as it leaves its ptrace stop, before it
 *     returns to user code; a signal ptloom was holding for a thread is
 *     not delivered.
 *
 * The seccomp filter stays (it cannot be removed): a trapped syscall made
 * after the hand-over fails with ENOSYS, so the program can be inspected
 * where it stopped, not run on faithfully.  See tests/integration
 * (issue13, replay_gdb_shows_every_thread_at_the_stop).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include "session_int.h"

static void unpark(struct session *s, struct thread *t)
{
	struct user_regs_struct r;

	/* the kernel's view: the cache may hold a result not yet written,
	 * which the syscall issued again will produce itself */
	if (ptrace(PTRACE_GETREGS, t->tid, 0, &r) < 0)
		return;
	if (t->stop == STOP_SECCOMP && (int64_t)r.orig_rax >= 0) {
		r.rax = r.orig_rax;
		r.orig_rax = (uint64_t)-1;
		r.rip -= 2;
	} else if (t->stop == STOP_BP) {
		r.rip = t->bp_addr;
	} else {
		return;
	}
	ptrace(PTRACE_SETREGS, t->tid, 0, &r);
	(void)s;
}

int session_hand_over(struct session *s)
{
	size_t off = 0;

	/* what the unpark below cannot give the debugger: a thread between
	 * the two points of a split read-modify-write has loaded a value
	 * ptloom holds, and continued it would load again */
	s->res->split_note[0] = 0;
	for (int i = 0; i < s->nth; i++) {
		struct thread *t = &s->th[i];

		if (t->st == SCHED_DEAD || !t->split ||
		    off >= sizeof(s->res->split_note))
			continue;
		off += (size_t)snprintf(s->res->split_note + off,
					sizeof(s->res->split_note) - off,
					"T%d %#llx %u %llu\n", t->idx,
					(unsigned long long)t->split_addr,
					t->split_size,
					(unsigned long long)t->split_val);
	}
	for (int i = 0; i < s->nprocs; i++)
		if (!s->procs[i]->dead && s->procs[i]->nbps)
			bp_remove_all_in(s->procs[i], s->procs[i]->pid);
	for (int i = 0; i < s->nth; i++)
		if (s->th[i].st != SCHED_DEAD)
			unpark(s, &s->th[i]);
	/* every process of the tree stops; P0's pid goes to the debugger */
	for (int i = 1; i < s->nprocs; i++)
		if (!s->procs[i]->dead)
			kill(s->procs[i]->pid, SIGSTOP);
	if (kill(s->pid, SIGSTOP) < 0)
		return -errno;
	for (int i = 0; i < s->nth; i++)
		if (s->th[i].st != SCHED_DEAD)
			ptrace(PTRACE_DETACH, s->th[i].tid, 0, 0);
	agent_resume(s, NULL); /* the debugger's program reads the run's clock */
	s->res->handed_over = s->pid;
	s->handed_over = true;
	s->ended = true;
	return 0;
}
