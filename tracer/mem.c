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
	if (t->ho_parked) {
		/* waiting in the program: to its ptrace stop first */
		int r = agent_ho_materialise(t);

		if (r)
			return r;
	}
	if (t->regs_valid)
		return 0;
	if (ptrace(PTRACE_GETREGS, t->tid, 0, &t->regs) < 0) {
		t->regs_kernel_known = false;
		return -errno;
	}
	t->regs_valid = true;
	t->regs_dirty = false;
	t->regs_kernel = t->regs;
	t->regs_kernel_known = true;
	return 0;
}

/*
 * Most stops change one or two registers (the pc past an int3 or into a
 * slot, a syscall's result): PTRACE_SETREGS writes all 27 through the
 * kernel's checks, PTRACE_POKEUSER one (about a third of a stop's ptrace
 * time went to SETREGS).
 */
int regs_set(struct thread *t)
{
	enum { NW = sizeof(struct user_regs_struct) / 8 };

	if (!t->regs_dirty)
		return 0;
	if (t->regs_kernel_known) {
		const uint64_t *now = (const uint64_t *)&t->regs;
		const uint64_t *was = (const uint64_t *)&t->regs_kernel;
		int diff[2], n = 0;

		for (int i = 0; i < NW && n <= 2; i++)
			if (now[i] != was[i]) {
				if (n < 2)
					diff[n] = i;
				n++;
			}
		if (n <= 2) {
			for (int k = 0; k < n; k++)
				if (ptrace(PTRACE_POKEUSER, t->tid,
					   (void *)(uintptr_t)(diff[k] * 8),
					   (void *)(uintptr_t)now[diff[k]]) < 0) {
					t->regs_kernel_known = false;
					return -errno;
				}
			t->regs_kernel = t->regs;
			t->regs_dirty = false;
			return 0;
		}
	}
	if (ptrace(PTRACE_SETREGS, t->tid, 0, &t->regs) < 0) {
		t->regs_kernel_known = false;
		return -errno;
	}
	t->regs_kernel = t->regs;
	t->regs_kernel_known = true;
	t->regs_dirty = false;
	return 0;
}
