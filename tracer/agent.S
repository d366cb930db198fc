/*
 * The in-process agent's code (tracer/agent.c): copied by the supervisor
 * into each traced process's vDSO, whose clock functions jump here.  It
 * answers the clock reads from the virtual clock kept in a page shared
 * with the supervisor (struct agent_data in agent.c), exactly as the
 * supervisor's emulation at a syscall stop would (tracer/syscall.c):
 * the clock advances by one quantum per read, the realtime clocks read
 * realtime_base + now.  Position-independent: two words at its start,
 * filled in by the supervisor, say where the page is and whether to
 * answer at all (0: every call is the real syscall, which the supervisor
 * then answers at a stop: --no-fast-path, a child left to run free, a
 * process the page could not be mapped into).  Only caller-saved
 * registers are used and nothing is pushed (Go calls the vDSO on small
 * stacks).
 */
	.section .rodata.ptloom_agent, "a"
	.balign 16
	.globl ptloom_agent_start
	.globl ptloom_agent_clock_gettime
	.globl ptloom_agent_gettimeofday
	.globl ptloom_agent_time
	.globl ptloom_agent_clock_getres
	.globl ptloom_agent_getcpu
	.globl ptloom_agent_enosys
	.globl ptloom_agent_end

/* the page's layout (struct agent_data) */
	.set NOW, 0
	.set QUANTUM, 8
	.set REALTIME, 16
	.set READS, 24

/* one read: the clock advances by a quantum (as a stop would advance it),
 * its new value into rax; r11 keeps the page's address */
	.macro tick
	movq	data(%rip), %r11
	movq	QUANTUM(%r11), %rcx
	movq	%rcx, %rax
	lock xaddq %rax, NOW(%r11)
	addq	%rcx, %rax
	lock incq READS(%r11)
	.endm

ptloom_agent_start:
data:	.quad 0		/* the shared page's address in the process */
on:	.quad 0		/* answer here (1) or make the syscall (0) */

/* int clock_gettime(clockid_t clk (edi), struct timespec *ts (rsi)) */
ptloom_agent_clock_gettime:
	cmpl	$11, %edi		/* CLOCK_TAI; negative ids too */
	ja	8f
	cmpq	$0, on(%rip)
	je	8f
	tick
	cmpl	$0, %edi		/* CLOCK_REALTIME */
	je	1f
	cmpl	$5, %edi		/* CLOCK_REALTIME_COARSE */
	je	1f
	cmpl	$11, %edi		/* CLOCK_TAI */
	jne	2f
1:	addq	REALTIME(%r11), %rax
2:	testq	%rsi, %rsi
	jz	9f
	xorl	%edx, %edx
	movl	$1000000000, %ecx
	divq	%rcx
	movq	%rax, (%rsi)
	movq	%rdx, 8(%rsi)
	xorl	%eax, %eax
	ret
8:	movl	$228, %eax		/* SYS_clock_gettime */
	syscall
	ret
9:	movq	$-14, %rax		/* -EFAULT */
	ret

/* int gettimeofday(struct timeval *tv (rdi), struct timezone *tz (rsi)) */
ptloom_agent_gettimeofday:
	cmpq	$0, on(%rip)
	je	8f
	tick
	addq	REALTIME(%r11), %rax
	testq	%rdi, %rdi
	jz	1f
	xorl	%edx, %edx
	movl	$1000000000, %ecx
	divq	%rcx
	movq	%rax, (%rdi)
	movq	%rdx, %rax
	xorl	%edx, %edx
	movl	$1000, %ecx
	divq	%rcx
	movq	%rax, 8(%rdi)
1:	testq	%rsi, %rsi
	jz	2f
	movq	$0, (%rsi)		/* struct timezone: two ints, 0 */
2:	xorl	%eax, %eax
	ret
8:	movl	$96, %eax		/* SYS_gettimeofday */
	syscall
	ret

/* time_t time(time_t *tloc (rdi)) */
ptloom_agent_time:
	cmpq	$0, on(%rip)
	je	8f
	tick
	addq	REALTIME(%r11), %rax
	xorl	%edx, %edx
	movl	$1000000000, %ecx
	divq	%rcx
	testq	%rdi, %rdi
	jz	1f
	movq	%rax, (%rdi)
1:	ret
8:	movl	$201, %eax		/* SYS_time */
	syscall
	ret

/* clock_getres and getcpu: the syscalls, as without a vDSO */
ptloom_agent_clock_getres:
	movl	$229, %eax
	syscall
	ret
ptloom_agent_getcpu:
	movl	$309, %eax
	syscall
	ret

/* any other vDSO function (getrandom, ...): not there, so its caller
 * makes the syscall the supervisor answers */
ptloom_agent_enosys:
	movq	$-38, %rax		/* -ENOSYS */
	ret
ptloom_agent_end:

/*
 * The page's mapping, run once in the process at its exec stop from where
 * the agent's code goes (which then overwrites it): open ptloom's memfd
 * through /proc, map it shared at `at` (boot_len bytes), close it, map
 * the code region for the trampolines (tracer/tramp.c: private, read and
 * execute, boot_code_len bytes) at boot_code_at; for race discovery, the
 * page again at boot_near_at with a region for access slots after it
 * (boot_near_len bytes: near the executable, tracer/tramp.c), and stop
 * at the int3 with the descriptor in r12, the page's mmap result in r13,
 * the region's in r14 and the near region's in r15.  The sixth
 * argument of openat, munmap and close is the launcher's key, which lets
 * them past ptloom's seccomp filter without a stop (tracer/spawn.c).
 */
	.globl ptloom_boot_start
	.globl ptloom_boot_code
	.globl ptloom_boot_end
	.balign 16
ptloom_boot_start:
boot_key:	.quad 0
boot_at:	.quad 0
boot_len:	.quad 0
boot_code_len:	.quad 0
boot_code_at:	.quad 0
boot_path:	.fill 64, 1, 0
boot_near_at:	.quad 0
boot_near_len:	.quad 0
ptloom_boot_code:
	movq	$-1, %r13
	movq	$-1, %r14
	movq	$-1, %r15
	movl	$257, %eax		/* openat(AT_FDCWD, path, O_RDWR|O_CLOEXEC) */
	movq	$-100, %rdi
	leaq	boot_path(%rip), %rsi
	movl	$0x80002, %edx
	xorl	%r10d, %r10d
	movq	boot_key(%rip), %r9
	syscall
	movq	%rax, %r12
	testq	%rax, %rax
	js	3f
	movl	$9, %eax		/* mmap(at, len, RW, SHARED|FIXED_NOREPLACE, fd, 0) */
	movq	boot_at(%rip), %rdi
	movq	boot_len(%rip), %rsi
	movl	$3, %edx
	movl	$0x100001, %r10d
	movq	%r12, %r8
	xorl	%r9d, %r9d
	syscall
	movq	%rax, %r13
	cmpq	boot_at(%rip), %rax
	je	2f
	cmpq	$-4096, %rax
	jae	2f			/* an error */
	movl	$11, %eax		/* elsewhere (a kernel without NOREPLACE) */
	movq	%r13, %rdi
	movq	boot_len(%rip), %rsi
	movq	boot_key(%rip), %r9
	syscall
2:	cmpq	boot_at(%rip), %r13
	jne	4f
	cmpq	$0, boot_near_len(%rip)
	je	4f
	movl	$9, %eax		/* mmap(near_at, len, RW, SHARED|FIXED_NOREPLACE, fd, 0): the page again */
	movq	boot_near_at(%rip), %rdi
	movq	boot_len(%rip), %rsi
	movl	$3, %edx
	movl	$0x100001, %r10d
	movq	%r12, %r8
	xorl	%r9d, %r9d
	syscall
	cmpq	boot_near_at(%rip), %rax
	jne	4f
	movl	$9, %eax		/* mmap(near_at + len, near_len, RX, PRIVATE|ANON|FIXED_NOREPLACE, -1, 0) */
	movq	boot_near_at(%rip), %rdi
	addq	boot_len(%rip), %rdi
	movq	boot_near_len(%rip), %rsi
	movl	$5, %edx
	movl	$0x100022, %r10d
	movq	$-1, %r8
	xorl	%r9d, %r9d
	syscall
	movq	%rax, %r15
4:	movl	$3, %eax		/* close(fd) */
	movq	%r12, %rdi
	movq	boot_key(%rip), %r9
	syscall
	cmpq	boot_at(%rip), %r13
	jne	3f
	cmpq	$0, boot_code_len(%rip)
	je	3f
	movl	$9, %eax		/* mmap(code_at, code_len, RX, PRIVATE|ANON|FIXED_NOREPLACE, -1, 0) */
	movq	boot_code_at(%rip), %rdi
	movq	boot_code_len(%rip), %rsi
	movl	$5, %edx
	movl	$0x100022, %r10d
	movq	$-1, %r8
	xorl	%r9d, %r9d
	syscall
	movq	%rax, %r14
3:	int3
ptloom_boot_end:

	.section .note.GNU-stack, "", @progbits
