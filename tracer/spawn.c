/*
 * Starting the program under ptrace.
 *
 * The seccomp filter that makes only the interesting syscalls stop is
 * installed once per ptloom process, never once per run: a new filter is a
 * new BPF program JIT-compiled into the kernel, and freeing thousands of
 * them a second (one per run's exit) can wedge the kernel's BPF pack
 * allocator for good.  So a *launcher* process, forked from ptloom on the
 * first run, installs the filter once and then forks every run's program
 * with clone(CLONE_PARENT): the program inherits the filter (reference
 * counted, nothing compiled), and its parent, hence its tracer after
 * PTRACE_TRACEME, is ptloom itself.  The launcher's own syscalls carry a
 * per-launcher 64-bit key in the sixth argument register, which the
 * filter lets through untraced (the launcher is not traced: a RET_TRACE
 * would fail with ENOSYS).
 *
 * Every started process is registered so that tracer_kill_all() (atexit,
 * SIGINT/SIGTERM) can end it; PTRACE_O_EXITKILL covers a crash of ptloom
 * and PR_SET_PDEATHSIG ends the launcher with the ptloom process it
 * serves.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "session_int.h"

static const int traced_syscalls[] = {
	SYS_futex, SYS_clone, SYS_clone3, SYS_exit, SYS_exit_group,
	SYS_sched_yield, SYS_nanosleep, SYS_clock_nanosleep, SYS_read,
	SYS_write, SYS_readv, SYS_writev, SYS_recvfrom, SYS_recvmsg,
	SYS_sendto, SYS_sendmsg, SYS_accept, SYS_accept4, SYS_connect,
	SYS_poll, SYS_ppoll, SYS_select, SYS_pselect6, SYS_epoll_wait,
	SYS_epoll_pwait, SYS_epoll_pwait2, SYS_wait4, SYS_waitid, SYS_kill,
	SYS_tgkill, SYS_tkill, SYS_clock_gettime, SYS_gettimeofday, SYS_time,
	SYS_getrandom, SYS_set_tid_address, SYS_futex_waitv,
	/* the machine's momentary state (syscall.c) */
	SYS_getrusage, SYS_times, SYS_sysinfo,
	SYS_clock_getres, PTLOOM_SYSCALL_NR, SYS_flock,
	/* memory moved: a file's mapping named apart (syscall.c) */
	SYS_mremap,
	/* POSIX message queues: descriptor waits (syscall.c) */
	SYS_mq_timedsend, SYS_mq_timedreceive,
	/* SysV IPC objects: no fork checkpoint shares them (checkpoint.c) */
	SYS_semget, SYS_msgget, SYS_shmget,
	/* a SysV segment attached: shared memory named apart (syscall.c) */
	SYS_shmat,
	/* SysV semaphore and message queue waits (sysvsem.c) */
	SYS_semop, SYS_semtimedop, SYS_msgsnd, SYS_msgrcv,
	/* a regular file's I/O at a position, a truncation: points while
	 * the process has other threads (syscall.c file_point) */
	SYS_pread64, SYS_pwrite64, SYS_preadv, SYS_pwritev, SYS_preadv2,
	SYS_pwritev2, SYS_ftruncate,
	/* the CPUs of a native run (syscall.c) */
	SYS_sched_getaffinity, SYS_sched_setaffinity,
	SYS_ptrace, /* refused: ptloom is every process's tracer */
	SYS_io_uring_setup, /* refused: the kernel's asynchronous work */
	/* the named files: no fork checkpoint after they changed
	 * (checkpoint.c), and opens to write below */
	SYS_creat, SYS_unlink, SYS_unlinkat, SYS_rename, SYS_renameat,
	SYS_renameat2, SYS_mkdir, SYS_mkdirat, SYS_rmdir, SYS_link,
	SYS_linkat, SYS_symlink, SYS_symlinkat, SYS_truncate, SYS_mknod,
	SYS_mknodat, SYS_openat2,
	/* signals (tracer/signal.c) */
	SYS_rt_sigtimedwait, SYS_rt_sigsuspend, SYS_pause,
	SYS_rt_sigqueueinfo, SYS_rt_tgsigqueueinfo, SYS_pidfd_send_signal,
	/* timers on the virtual clock (tracer/timer.c) */
	SYS_alarm, SYS_setitimer, SYS_getitimer, SYS_timerfd_settime,
	SYS_timerfd_gettime, SYS_timer_create, SYS_timer_settime,
	SYS_timer_gettime, SYS_timer_getoverrun, SYS_timer_delete,
};

#define NTRACED (sizeof(traced_syscalls) / sizeof(traced_syscalls[0]))

/* The launcher of this ptloom process (a -j worker has its own). */
static struct {
	pid_t pid;	/* 0: none yet */
	pid_t owner;	/* the process it serves */
	int sock;	/* our end of its socket */
	uint64_t key;	/* its syscalls' sixth argument */
} L = { .sock = -1 };
static unsigned filters_installed;
static pid_t filters_pid;	/* the process that counted them */

/* A request: this header, then argc + envc NUL-terminated strings. */
struct launch_req {
	uint32_t magic;
	uint32_t len;	/* bytes of strings */
	int32_t cpu;	/* -1: do not pin */
	uint32_t argc, envc;
	uint32_t has_out; /* the output memfd rides along (SCM_RIGHTS) */
	int32_t want;	/* the pid to ask for (clone3's set_tid); 0: any */
	uint32_t has_argv0; /* a last string: the program's argv[0] */
	uint32_t discovery; /* race discovery's: discovery_filter() */
};
#define LAUNCH_MAGIC 0x504c4e43u
#define LAUNCH_MAX (4u << 20)	/* bytes of argv + environment */
#define LAUNCH_MAXV (256u << 10) /* strings */

/* A raw syscall carrying the launcher's key; no errno. */
static long ksys(long nr, long a1, long a2, long a3, long a4, long a5)
{
	long ret;
	register long r10 __asm__("r10") = a4;
	register long r8 __asm__("r8") = a5;
	register long r9 __asm__("r9") = (long)L.key;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10),
			   "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

static int install_filter(uint64_t key)
{
	struct sock_filter f[9 + NTRACED + 12 + 7 + 6];
	int k = 0;
	const unsigned a5 = offsetof(struct seccomp_data, args[5]);

	f[k++] = (struct sock_filter)BPF_STMT(
		BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
					      AUDIT_ARCH_X86_64, 1, 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
					      SECCOMP_RET_ALLOW);
	/* the launcher's own syscalls: sixth argument == key */
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, a5);
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
					      (uint32_t)key, 0, 3);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      a5 + 4);
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
					      (uint32_t)(key >> 32), 0, 1);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
					      SECCOMP_RET_ALLOW);
	f[k++] = (struct sock_filter)BPF_STMT(
		BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
	for (size_t i = 0; i < NTRACED; i++) {
		/* on a match, jump to the RET_TRACE at the end */
		f[k] = (struct sock_filter)BPF_JUMP(
			BPF_JMP | BPF_JEQ | BPF_K, (unsigned)traced_syscalls[i],
			(unsigned char)(NTRACED - i + 12 + 4 + 7), 0);
		k++;
	}
	/* open and openat only to write or create (checkpoint.c), or to
	 * read with none of O_NONBLOCK, O_PATH, O_CLOEXEC, O_NOCTTY or
	 * O_DIRECTORY: a FIFO's may wait (tracer/fifo.c), as a shell's `<`
	 * or a plain open(path, O_RDONLY) does; ld.so's, an interpreter's
	 * and a compiler's reads (O_CLOEXEC, O_NOCTTY: hundreds a run) are
	 * no stops, and a FIFO opened so stays the kernel's */
	static const struct {
		int nr;
		unsigned flags;
	} opens[] = { { SYS_openat, offsetof(struct seccomp_data, args[2]) },
		      { SYS_open, offsetof(struct seccomp_data, args[1]) } };

	for (int i = 0; i < 2; i++) {
		f[k++] = (struct sock_filter)BPF_JUMP(
			BPF_JMP | BPF_JEQ | BPF_K, (unsigned)opens[i].nr, 0, 5);
		f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
						      opens[i].flags);
		f[k++] = (struct sock_filter)BPF_JUMP(
			BPF_JMP | BPF_JSET | BPF_K,
			O_WRONLY | O_RDWR | O_CREAT | O_TRUNC, 1, 0);
		f[k++] = (struct sock_filter)BPF_JUMP(
			BPF_JMP | BPF_JSET | BPF_K,
			O_NONBLOCK | O_PATH | O_CLOEXEC | O_NOCTTY |
				O_DIRECTORY,
			1, 0);
		f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
						      SECCOMP_RET_TRACE);
		f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
						      SECCOMP_RET_ALLOW);
	}
	/* mmap only of a file, shared (a watcher sees what processes
	 * share through it: test-suite mode) */
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
					      SYS_mmap, 0, 6);
	f[k++] = (struct sock_filter)BPF_STMT(
		BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[3]));
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K,
					      MAP_SHARED, 0, 3);
	f[k++] = (struct sock_filter)BPF_STMT(
		BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[4]));
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
					      0xffffffffu, 1, 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
					      SECCOMP_RET_TRACE);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
					      SECCOMP_RET_ALLOW);
	/* fcntl only where it waits for a record lock (tracer/flock.c) */
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
					      SYS_fcntl, 0, 3);
	f[k++] = (struct sock_filter)BPF_STMT(
		BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1]));
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
					      F_SETLKW, 2, 0);
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
					      F_OFD_SETLKW, 1, 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
					      SECCOMP_RET_ALLOW);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
					      SECCOMP_RET_TRACE);
	struct sock_fprog prog = { .len = (unsigned short)k, .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

/*
 * Race discovery's processes also stop at the calls that change a
 * thread's signal state and at a handler's return (signal.c: a handler's
 * accesses are a context of their own), and at munmap (syscall.c: the
 * memory is forgotten, a new object's when mapped again), stacked on the
 * launcher's filter in the new process only: no other run pays for them
 * (munmap was a stop in every run for a session).
 */
static void discovery_filter(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_rt_sigreturn, 4, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_rt_sigprocmask, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_rt_sigaction, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_munmap, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]),
				   .filter = f };

	ksys(SYS_prctl, PR_SET_SECCOMP, SECCOMP_MODE_FILTER, (long)&prog, 0,
	     0);
}

/* The launcher's buffers (it cannot call malloc safely: only keyed
 * syscalls are its own). */
static char req_buf[LAUNCH_MAX];
static char *req_vec[LAUNCH_MAXV + 2];
static char *req_argv0; /* the program's argv[0], else NULL */

/* In the run's new process: set up, stop for ptloom, exec. */
static __attribute__((noreturn)) void launch_child(const struct launch_req *q,
						    int outfd, int sock)
{
	char **argv = req_vec, **envp = req_vec + q->argc + 1;
	long devnull;

	ksys(SYS_close, sock, 0, 0, 0, 0);
	ksys(SYS_setpgid, 0, 0, 0, 0, 0);
	/* our parent is ptloom (CLONE_PARENT) */
	ksys(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (ksys(SYS_getppid, 0, 0, 0, 0, 0) != L.owner)
		ksys(SYS_exit_group, 126, 0, 0, 0, 0);
	devnull = ksys(SYS_openat, AT_FDCWD, (long)"/dev/null", O_RDONLY, 0, 0);
	if (devnull >= 0) {
		ksys(SYS_dup2, devnull, 0, 0, 0, 0);
		if (devnull != 0)
			ksys(SYS_close, devnull, 0, 0, 0, 0);
	}
	if (outfd >= 0) {
		ksys(SYS_dup2, outfd, 1, 0, 0, 0);
		ksys(SYS_dup2, outfd, 2, 0, 0, 0);
		if (outfd > 2)
			ksys(SYS_close, outfd, 0, 0, 0, 0);
	}
	if (q->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(q->cpu, &set);
		ksys(SYS_sched_setaffinity, 0, sizeof(set), (long)&set, 0, 0);
	}
	ksys(SYS_personality, ADDR_NO_RANDOMIZE, 0, 0, 0, 0);
	ksys(SYS_prctl, PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0);
	if (ksys(SYS_ptrace, PTRACE_TRACEME, 0, 0, 0, 0) < 0)
		ksys(SYS_exit_group, 126, 0, 0, 0, 0);
	if (q->discovery)
		discovery_filter();
	ksys(SYS_kill, ksys(SYS_getpid, 0, 0, 0, 0, 0), SIGSTOP, 0, 0, 0);
	const char *file = argv[0];

	if (req_argv0)
		argv[0] = req_argv0;
	ksys(SYS_execve, (long)file, (long)argv, (long)envp, 0, 0);
	ksys(SYS_exit_group, 127, 0, 0, 0, 0);
	__builtin_unreachable();
}

/* Receive exactly len bytes; the first segment may carry an fd. */
static long recv_all(int sock, void *buf, size_t len, int *fd)
{
	size_t got = 0;

	while (got < len) {
		union {
			struct cmsghdr h;
			char b[CMSG_SPACE(sizeof(int))];
		} cm;
		struct iovec iov = { (char *)buf + got, len - got };
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };

		if (fd) {
			m.msg_control = cm.b;
			m.msg_controllen = sizeof(cm.b);
		}
		long n = ksys(SYS_recvmsg, sock, (long)&m, MSG_CMSG_CLOEXEC, 0,
			      0);

		if (n == -EINTR)
			continue;
		if (n <= 0)
			return -1;
		if (fd && m.msg_controllen >= sizeof(struct cmsghdr)) {
			struct cmsghdr *c = CMSG_FIRSTHDR(&m);

			if (c && c->cmsg_level == SOL_SOCKET &&
			    c->cmsg_type == SCM_RIGHTS)
				memcpy(fd, CMSG_DATA(c), sizeof(int));
		}
		fd = NULL;
		got += (size_t)n;
	}
	return 0;
}

/* Split the strings of a request into argv and envp; false if malformed. */
static bool split_request(const struct launch_req *q)
{
	size_t n = (size_t)q->argc + q->envc, k = 0, vi = 0;

	req_argv0 = NULL;
	if (q->magic != LAUNCH_MAGIC || q->len > LAUNCH_MAX || !q->argc ||
	    n > LAUNCH_MAXV || (q->len && req_buf[q->len - 1]))
		return false;
	for (size_t i = 0; i < n; i++) {
		if (k >= q->len)
			return false;
		req_vec[vi++] = req_buf + k;
		k += strlen(req_buf + k) + 1;
		if (i + 1 == q->argc)
			req_vec[vi++] = NULL;
	}
	req_vec[vi] = NULL;
	if (q->has_argv0) {
		if (k >= q->len)
			return false;
		req_argv0 = req_buf + k;
	}
	return true;
}

/* The signals ignored and blocked when ptloom started, before it set
 * anything of its own: what the program inherits natively (an ignored
 * signal and the mask survive fork and exec: a CI service started by
 * systemd ignores SIGPIPE, `nohup` SIGHUP).  Not SIGCHLD: ignored, the
 * kernel reaps a process's children itself. */
static sigset_t inherited_ign, inherited_mask;

__attribute__((constructor)) static void note_inherited_signals(void)
{
	struct sigaction sa;

	sigemptyset(&inherited_ign);
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGCHLD && !sigaction(sig, NULL, &sa) &&
		    !(sa.sa_flags & SA_SIGINFO) && sa.sa_handler == SIG_IGN)
			sigaddset(&inherited_ign, sig);
	if (sigprocmask(SIG_SETMASK, NULL, &inherited_mask))
		sigemptyset(&inherited_mask);
	sigdelset(&inherited_mask, SIGCHLD);
}

static __attribute__((noreturn)) void launcher_main(int sock)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	struct sigaction ign = { .sa_handler = SIG_IGN };

	/* what the program starts with: the dispositions and the mask
	 * ptloom was started with, not its own (its handlers, its SIGPIPE
	 * ignored), and our own process group, away from terminal signals */
	for (int sig = 1; sig < NSIG; sig++)
		sigaction(sig, sigismember(&inherited_ign, sig) ? &ign : &dfl,
			  NULL);
	sigprocmask(SIG_SETMASK, &inherited_mask, NULL);
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != L.owner)
		_exit(0);
	if (sock != 3) {
		dup2(sock, 3);
		sock = 3;
	}
	fcntl(sock, F_SETFD, FD_CLOEXEC);
	syscall(SYS_close_range, 4u, ~0u, 0u);
	if (install_filter(L.key))
		_exit(126);
	for (;;) {
		struct launch_req q;
		int outfd = -1;
		long pid;

		if (recv_all(sock, &q, sizeof(q), &outfd))
			ksys(SYS_exit_group, 0, 0, 0, 0, 0);
		if (q.len > LAUNCH_MAX ||
		    recv_all(sock, req_buf, q.len, NULL))
			ksys(SYS_exit_group, 0, 0, 0, 0, 0);
		if (!split_request(&q)) {
			pid = -E2BIG;
		} else {
			/* the pid asked for, if the kernel gives it (root or
			 * CAP_CHECKPOINT_RESTORE, and free); else any */
			pid = -1;
			if (q.want > 0) {
				pid_t w = q.want;
				/* no exit_signal: CLONE_PARENT's is the
				 * launcher's own (SIGCHLD), as with clone */
				uint64_t ca[10] = { [0] = CLONE_PARENT,
						    [8] = (uintptr_t)&w,
						    [9] = 1 };

				pid = ksys(SYS_clone3, (long)ca, sizeof(ca), 0,
					   0, 0);
			}
			if (pid < 0)
				pid = ksys(SYS_clone, CLONE_PARENT | SIGCHLD, 0,
					   0, 0, 0);
			if (pid == 0)
				launch_child(&q, q.has_out ? outfd : -1, sock);
		}
		if (outfd >= 0)
			ksys(SYS_close, outfd, 0, 0, 0, 0);
		int64_t reply = pid;

		if (ksys(SYS_write, sock, (long)&reply, sizeof(reply), 0, 0) !=
		    sizeof(reply))
			ksys(SYS_exit_group, 0, 0, 0, 0, 0);
	}
}

static void launcher_close(void)
{
	if (L.sock >= 0)
		close(L.sock);
	L.sock = -1;
	if (L.pid > 0 && L.owner == getpid()) {
		kill(L.pid, SIGKILL);
		while (waitpid(L.pid, NULL, __WALL) < 0 && errno == EINTR)
			;
	}
	L.pid = 0;
}

/* A launcher serving this process, started when there is none. */
static int launcher_ensure(void)
{
	int sv[2];

	if (L.pid > 0 && L.owner == getpid())
		return 0;
	if (L.pid > 0) {
		/* inherited across a fork (a -j worker): not ours */
		if (L.sock >= 0)
			close(L.sock);
		L.sock = -1;
		L.pid = 0;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -errno;
	L.owner = getpid();
	do {
		if (getrandom(&L.key, sizeof(L.key), 0) != sizeof(L.key))
			L.key = (uint64_t)now_seconds() * 0x9e3779b97f4a7c15ull ^
				(uint64_t)L.owner;
		/* never a value a program's sixth argument plausibly has */
	} while ((uint32_t)L.key < 0x10000 || (L.key >> 32) < 0x10000 ||
		 (L.key >> 32) == 0xffffffffu);
	pid_t pid = fork();

	if (pid < 0) {
		int e = -errno;

		close(sv[0]);
		close(sv[1]);
		return e;
	}
	if (pid == 0) {
		close(sv[0]);
		launcher_main(sv[1]);
	}
	close(sv[1]);
	L.pid = pid;
	L.sock = sv[0];
	if (filters_pid != L.owner) {
		/* a -j worker: what its parent installed is not its own */
		filters_pid = L.owner;
		filters_installed = 0;
	}
	filters_installed++;
	return 0;
}

unsigned tracer_filters_installed(void)
{
	return filters_pid == getpid() ? filters_installed : 0;
}

/* Ask the launcher for a new process; its pid, or -errno. */
static long launch(const struct session_config *cfg, int outfd, pid_t want)
{
	struct launch_req q = { .magic = LAUNCH_MAGIC, .cpu = cfg->cpu,
				.want = want };
	size_t len = 0;

	for (char *const *a = cfg->argv; *a; a++, q.argc++)
		len += strlen(*a) + 1;
	for (char *const *e = cfg->envp; e && *e; e++, q.envc++)
		len += strlen(*e) + 1;
	q.has_argv0 = cfg->argv0 && strcmp(cfg->argv0, cfg->argv[0]);
	if (q.has_argv0)
		len += strlen(cfg->argv0) + 1;
	q.discovery = cfg->observer != NULL;
	if (len > LAUNCH_MAX || q.argc + q.envc > LAUNCH_MAXV)
		return -E2BIG;
	char *buf = malloc(len + 1), *p = buf;

	if (!buf)
		return -ENOMEM;
	for (char *const *a = cfg->argv; *a; a++)
		p = stpcpy(p, *a) + 1;
	for (char *const *e = cfg->envp; e && *e; e++)
		p = stpcpy(p, *e) + 1;
	if (q.has_argv0)
		p = stpcpy(p, cfg->argv0) + 1;
	q.len = (uint32_t)len;
	q.has_out = !cfg->pass_output && outfd >= 0;

	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} cm;
	struct iovec iov = { &q, sizeof(q) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (q.has_out) {
		memset(&cm, 0, sizeof(cm));
		m.msg_control = cm.b;
		m.msg_controllen = sizeof(cm.b);
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);

		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &outfd, sizeof(int));
	}
	long r = 0;
	int64_t reply;

	if (sendmsg(L.sock, &m, MSG_NOSIGNAL) != (ssize_t)sizeof(q))
		r = -EPIPE;
	for (size_t off = 0; !r && off < len;) {
		ssize_t n = send(L.sock, buf + off, len - off, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			r = -EPIPE;
		else
			off += (size_t)n;
	}
	free(buf);
	for (size_t got = 0; !r && got < sizeof(reply);) {
		ssize_t n = read(L.sock, (char *)&reply + got,
				 sizeof(reply) - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			r = -EPIPE;
		else
			got += (size_t)n;
	}
	return r ? r : (long)reply;
}

int spawn_program(const struct session_config *cfg, int outfd, pid_t want,
		  pid_t *out)
{
	int st;
	long pid = -EPIPE;

	/* a launcher that died (killed from outside) is replaced once */
	for (int attempt = 0; attempt < 2 && pid == -EPIPE; attempt++) {
		int e = launcher_ensure();

		if (e)
			return e;
		pid = launch(cfg, outfd, want);
		if (pid == -EPIPE)
			launcher_close();
	}
	if (pid < 0)
		return (int)pid;
	spawn_register((pid_t)pid);
	while (waitpid((pid_t)pid, &st, __WALL) < 0) {
		if (errno != EINTR) {
			spawn_unregister((pid_t)pid);
			return -ECHILD;
		}
	}
	if (!WIFSTOPPED(st)) {
		spawn_unregister((pid_t)pid);
		return -ECHILD;
	}
	long opts = PTRACE_O_EXITKILL | PTRACE_O_TRACESECCOMP |
		    PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK |
		    PTRACE_O_TRACEVFORK | PTRACE_O_TRACEEXEC;

	if (ptrace(PTRACE_SETOPTIONS, (pid_t)pid, 0, opts) < 0) {
		int e = -errno;

		kill((pid_t)pid, SIGKILL);
		waitpid((pid_t)pid, &st, __WALL);
		spawn_unregister((pid_t)pid);
		return e;
	}
	ptrace(PTRACE_CONT, (pid_t)pid, 0, 0);
	*out = (pid_t)pid;
	return 0;
}

/* The processes alive now, for tracer_kill_all(). */
static volatile pid_t live[64];

uint64_t spawn_key(void)
{
	return L.key;
}

void spawn_register(pid_t pid)
{
	for (int i = 0; i < 64; i++)
		if (!live[i]) {
			live[i] = pid;
			return;
		}
}

void spawn_unregister(pid_t pid)
{
	for (int i = 0; i < 64; i++)
		if (live[i] == pid)
			live[i] = 0;
}

void tracer_kill_all(void)
{
	for (int i = 0; i < 64; i++)
		if (live[i] > 0)
			kill(live[i], SIGKILL);
	if (L.pid > 0 && L.owner == getpid())
		kill(L.pid, SIGKILL);
}

double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double self_cpu_seconds(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts))
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

char *tracer_find_program(const char *name)
{
	char buf[PATH_MAX];
	struct stat sb;

	if (!name || !*name) {
		errno = ENOENT;
		return NULL;
	}
	if (strchr(name, '/')) {
		if (stat(name, &sb) < 0)
			return NULL;
		if (!S_ISREG(sb.st_mode) || access(name, X_OK)) {
			errno = EACCES;
			return NULL;
		}
		return realpath(name, NULL);
	}
	const char *path = getenv("PATH");

	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *c = strchr(path, ':');
		size_t n = c ? (size_t)(c - path) : strlen(path);

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)n,
			 n ? path : ".", name);
		if (stat(buf, &sb) == 0 && S_ISREG(sb.st_mode) &&
		    !access(buf, X_OK))
			return realpath(buf, NULL);
		path += n + (c != NULL);
	}
	errno = ENOENT;
	return NULL;
}

const char *tracer_start_error(int e)
{
	if (e == -EAGAIN)
		return "fork failed with EAGAIN: the process limit is reached "
		       "(ulimit -u for this user, or the cgroup's pids.max)";
	return strerror(-e);
}
