/*
 * ptloom.h: optional annotations for programs tested under ptloom.
 *
 * ptloom_yield("label") marks an explicit scheduling point: under ptloom
 * another thread may run there.  Outside ptloom it is one unknown system
 * call that the kernel refuses at once (ENOSYS, well under a microsecond);
 * no library is needed and nothing else changes.
 */
#ifndef PTLOOM_H
#define PTLOOM_H

#define PTLOOM_SYSCALL_NR 0x7074

static inline void ptloom_yield(const char *label)
{
#if defined(__x86_64__)
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"((long)PTLOOM_SYSCALL_NR), "D"(label)
			 : "rcx", "r11", "memory");
	(void)ret;
#else
	(void)label;
#endif
}

#endif
