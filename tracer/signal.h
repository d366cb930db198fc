/*
 * Signals in the supervisor's model (tracer/signal.c): the sigwait family
 * as scheduling points that block in ptloom's model, and signals that
 * interrupt an emulated wait as the kernel would.
 */
#ifndef PTLOOM_SIGNAL_H
#define PTLOOM_SIGNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct session;
struct thread;

/* What a thread in BLOCK_SIGNAL waits for. */
enum {
	SIGWAIT_SET = 1, /* rt_sigtimedwait: a signal of sig_set pending */
	SIGWAIT_MASK,	 /* rt_sigsuspend: a signal not in the mask sig_set */
	SIGWAIT_PAUSE,	 /* pause: a signal not in the thread's mask */
};

/* At a seccomp stop: true when nr is ours; *point says whether it is a
 * scheduling point (else it is left to the kernel). */
bool signal_enter(struct session *s, struct thread *t, long nr, bool *point);
/* t's pending kill, tgkill, tkill, rt_(tg)sigqueueinfo or
 * pidfd_send_signal (syscall nr): its signal and target, for show
 * (thread.sent_sig, sent_to) */
void signal_note_send(struct session *s, struct thread *t, long nr);
/* t armed a timer of its process that sends sig, or another process
 * sends sig to t's process of one thread */
void signal_handler_may_run(struct session *s, struct thread *t, int sig);
/* Execute a sigwait-family point: true if it runs, false if it blocked. */
bool signal_execute(struct session *s, struct thread *t);
/* Before a choice: wake or interrupt blocked threads that have a signal
 * pending, when one may have been sent since the last look (or force). */
void signal_recheck(struct session *s, bool force);
void signal_recheck_blocked(struct session *s, struct thread *t);
const char *signal_wait_name(const struct thread *t);
/* The signals t blocks during its pending call: a ppoll/pselect6/
 * epoll_pwait mask argument, else its own mask. */
uint64_t signal_wait_mask(struct thread *t);
/* A signal t does not block and that interrupts a wait (caught, or fatal
 * by default) is pending for it (its own queue or its process's). */
bool signal_deliverable(struct session *s, struct thread *t);
/* ourfd (ptloom's copy of a descriptor t waits on) is a signalfd, or with
 * epoll an epoll set holding one, that t would find readable: a signal
 * it accepts is pending for t.  The kernel cannot say, as a signalfd is
 * ready for the thread that polls it. */
bool signal_fd_ready(struct session *s, struct thread *t, int ourfd,
		     bool epoll);
/* t could take sig sent to its process now: it does not block it, or it
 * waits for it in the sigwait family. */
bool signal_takes(struct session *s, struct thread *t, int sig);
/* The threads of process pid (T-numbers in out) that could take sig sent
 * to the process, when it matters which one does (the signal is caught,
 * or a thread sigwaits for it); else 0. */
int signal_takers(struct session *s, pid_t pid, int sig, int *out, int max);
/* A kill or sigqueue the current thread t is about to make to a process
 * of the program: which thread takes it is a choice (DEC_WAKE) when
 * several could; the call is rewritten to send it to the chosen one. */
void signal_route(struct session *s, struct thread *t);
/* kill/tgkill/tkill from the program to a ptloom process (its parent):
 * not delivered, the run ends as unsupported naming it; true if so. */
bool signal_to_supervisor(struct session *s, struct thread *t);
/* ptloom directed sig to thread tid in place of a process-directed one:
 * its handler may run at the thread's next step (the reduction sees it),
 * and at delivery the siginfo says code (SI_USER, SI_KERNEL) from pid
 * from, as the kernel's would (SI_TKILL: the siginfo is right). */
void signal_directed(struct session *s, pid_t tid, int sig, int code,
		     pid_t from);
/* At t's signal-delivery-stop for sig, first: a signal sent to t's whole
 * process (by the kernel: SIGCHLD, SIGIO, SIGURG; to a process group;
 * through a pidfd; from outside) may be taken by any of its threads that
 * does not block it: a choice (DEC_WAKE, t first) when several could.
 * True when it went to another thread (t was resumed without it). */
bool signal_redirect(struct session *s, struct thread *t, int sig);
/* At t's signal-delivery-stop for sig: fix the siginfo (above). */
void signal_delivering(struct session *s, struct thread *t, int sig);
/* At t's signal-delivery-stop for sig once it is t's: a caught signal's
 * handler runs; t's current step says so (event.handler_sig, for show)
 * and, for race discovery (session_config.observer), the handler runs in
 * a context of its own (SYNC_HANDLER_ENTER). */
void signal_handler_enter(struct session *s, struct thread *t, int sig);
/* ... at any stop of t with its registers: t left its handlers by a
 * jump (siglongjmp) when its stack is back where the outermost one
 * interrupted it (SYNC_HANDLER_LEAVE). */
void signal_handler_check(struct session *s, struct thread *t);
/* ... t left its handlers (rt_sigreturn, a jump out, an exec) */
void signal_handler_leave(struct session *s, struct thread *t);
/* Race discovery: what t did so far comes before every handler that
 * runs later (a kill sent, a timer armed, a handler installed) */
void signal_release_to_handlers(struct session *s, struct thread *t);
/* ourfd is an epoll set in which pid registered a signalfd. */
bool signal_epoll_has_sfd(pid_t pid, int ourfd);

#endif
