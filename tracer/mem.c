/*
 * Tracee memory and registers.  Memory goes through /proc/PID/mem, which
 * reads and writes read-only text too (breakpoints) in one syscall.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <unistd.h>
#include "session_int.h"

/* Returns 0, -ESRCH if the process is gone, -EFAULT if unmapped. */
int mem_read(struct process *p, uint64_t addr, void *buf, size_t len)
{
	ssize_t n = pread(p->memfd, buf, len, (off_t)addr);

	if (n == (ssize_t)len)
		return 0;
	return n < 0 && errno == ESRCH ? -ESRCH : -EFAULT;
}

int mem_write(struct process *p, uint64_t addr, const void *buf, size_t len)
{
	ssize_t n = pwrite(p->memfd, buf, len, (off_t)addr);

	if (n == (ssize_t)len)
		return 0;
	return n < 0 && errno == ESRCH ? -ESRCH : -EFAULT;
}

/*
 * As the program itself would: process_vm_readv/writev honour page
 * protection where /proc/PID/mem does not, so an emulated store to a
 * read-only page fails here and the CPU gets to fault for real.
 */
int mem_access_user(struct process *p, uint64_t addr, void *buf, size_t len,
		    bool write)
{
	struct iovec local = { buf, len }, remote = { (void *)addr, len };
	ssize_t n = write ? process_vm_writev(p->pid, &local, 1, &remote, 1, 0)
			  : process_vm_readv(p->pid, &local, 1, &remote, 1, 0);

	return n == (ssize_t)len ? 0 : -EFAULT;
}

int regs_get(struct thread *t)
{
	if (t->regs_valid)
		return 0;
	if (ptrace(PTRACE_GETREGS, t->tid, 0, &t->regs) < 0)
		return -errno;
	t->regs_valid = true;
	t->regs_dirty = false;
	return 0;
}

int regs_set(struct thread *t)
{
	if (!t->regs_dirty)
		return 0;
	if (ptrace(PTRACE_SETREGS, t->tid, 0, &t->regs) < 0)
		return -errno;
	t->regs_dirty = false;
	return 0;
}
