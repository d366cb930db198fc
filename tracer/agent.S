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


/*
 * The hand-off between threads in the program (agent.c: "The hand-off"):
 * copied into every process's code region after its slots, entered from
 * each call slot's stub (r11 = the page, eax = the slot, the page's
 * SCR_RAX and SCR_R11 holding the program's rax and r11) while the
 * supervisor's plan runs, and by a thread the supervisor parks (at
 * ptloom_ho_park, r12 = its save area, r9 = the key).  One thread runs
 * at a time: the one whose turn it is (HO_CUR); the one that hands over
 * touches only its registers and its own save area once it has set the
 * next one's go word.  Nothing is written below the stack pointer.  The
 * two rip-relative references to the page's HO_JMP are patched where the
 * blob is copied (ptloom_ho_fix1 and 2 follow their disp32).
 */
#include "agent_layout.h"
	.set	P_NOW, 0
	.set	P_QUANTUM, 8
	.set	P_CURSOR, 40
	.set	P_LIMIT, 48
	.set	P_REGION, 56
	.set	P_SCR_RAX, 64
	.set	P_SCR_R11, 72
	.set	P_SCR_FL, 80
	.set	P_LOG, 2048
	.set	T_SLOT, 224
	.set	T_DISP, 161

	.section .rodata.ptloom_agent, "a"
	.balign 16
	.globl ptloom_ho_start
	.globl ptloom_ho_flsaved
	.globl ptloom_ho_r12
	.globl ptloom_ho_saved
	.globl ptloom_ho_committed
	.globl ptloom_ho_clocked
	.globl ptloom_ho_handing
	.globl ptloom_ho_handed
	.globl ptloom_ho_park
	.globl ptloom_ho_taken
	.globl ptloom_ho_stopping
	.globl ptloom_ho_trap
	.globl ptloom_ho_fix1
	.globl ptloom_ho_fix2
	.globl ptloom_ho_end
ptloom_ho_start:
	movq	%rax, HO_ID(%r11)
	lahf
	seto	%al
	movq	%rax, P_SCR_FL(%r11)
ptloom_ho_flsaved:			/* (flags change from here) */
	movq	HO_CUR(%r11), %rax
	imulq	$HO_SV, %rax, %rax
	leaq	HO_SAVE(%r11,%rax), %rax
	movq	%rcx, SV_RCX(%rax)
	movq	%rdx, SV_RDX(%rax)
	movq	%rsi, SV_RSI(%rax)
	movq	%rdi, SV_RDI(%rax)
	movq	%r8, SV_R8(%rax)
	movq	%r9, SV_R9(%rax)
	movq	%r10, SV_R10(%rax)
	movq	%r12, SV_R12(%rax)
	movq	%rax, %r12
ptloom_ho_r12:				/* r12, rcx, rdx change from here */
	movq	P_SCR_RAX(%r11), %rcx
	movq	%rcx, SV_RAX(%r12)
	movq	P_SCR_R11(%r11), %rcx
	movq	%rcx, SV_R11(%r12)
	movq	P_SCR_FL(%r11), %rcx
	movq	%rcx, SV_FL(%r12)
	movq	HO_ID(%r11), %rcx
	movq	%rcx, SV_ID(%r12)
	imulq	$T_SLOT, %rcx, %rcx
	addq	P_REGION(%r11), %rcx
	addq	$T_DISP, %rcx
	movq	%rcx, SV_TGT(%r12)
	movq	P_CURSOR(%r11), %rdx
	movq	%rdx, SV_ENTRY(%r12)
	movq	$SVP_SAVED, SV_PHASE(%r12)
ptloom_ho_saved:			/* the context is in the save area */
	xorl	%r8d, %r8d		/* r8: this point is a switch */
	cmpq	P_LIMIT(%r11), %rdx
	jb	2f			/* before the limit: log, go on */
	jne	8f			/* past it: stop */
	cmpq	HO_SW(%r11), %rdx	/* at it: the planned switch? (read */
	jne	8f			/* once: the supervisor may end the */
	cmpq	HO_LIM(%r11), %rdx	/* plan meanwhile, agent_ho_freeze) */
	jne	8f
	movl	$1, %r8d
	cmpq	$P_LOG, %rdx
	je	2f
	movq	-32(%r11,%rdx), %rcx	/* a futex slot's wake of somebody */
	btq	$30, %rcx		/* right before closed the log here */
	jnc	2f
	shrq	$32, %rcx
	jnz	8f
2:	leaq	(%r11,%rdx), %rcx	/* the entry: slot and participant, */
	movq	HO_CUR(%r11), %rsi	/* rdi, rsi, the return address */
	shlq	$32, %rsi
	orq	HO_ID(%r11), %rsi
	btsq	$HO_ENTRY_FLAG, %rsi
	movq	%rsi, (%rcx)
	movq	%rdi, 8(%rcx)
	movq	SV_RSI(%r12), %rsi
	movq	%rsi, 16(%rcx)
	movq	(%rsp), %rsi
	movq	%rsi, 24(%rcx)
	addq	$32, P_CURSOR(%r11)	/* the commit */
ptloom_ho_committed:
	movq	P_QUANTUM(%r11), %rcx
	lock addq %rcx, P_NOW(%r11)
ptloom_ho_clocked:
	movq	$SVP_ON, SV_PHASE(%r12)
	testl	%r8d, %r8d
	jz	6f			/* no switch here: go on */
	movq	%rdx, %rcx		/* the decision: its word */
	subq	$P_LOG, %rcx
	shrq	$2, %rcx
	movq	HO_DEC(%r11,%rcx), %rcx
	movq	%rcx, %rdx		/* the next limit */
	shrq	$16, %rdx
	movl	%edx, %edx
	movq	%rdx, P_LIMIT(%r11)
	movq	%rdx, HO_LIM(%r11)
	btq	$63, %rcx		/* a switch there, or the plan's end */
	jc	3f
	movq	$-1, %rdx
3:	movq	SV_ENTRY(%r12), %rax	/* unless the supervisor ended the */
	lock cmpxchgq %rdx, HO_SW(%r11)	/* plan meanwhile */
	movzwl	%cx, %ecx		/* the next participant */
	movq	%rcx, SV_NEXT(%r12)
	movq	%rcx, HO_CUR(%r11)
	movq	$SVP_SWITCH, SV_PHASE(%r12)
	imulq	$HO_SV, %rcx, %rcx
	leaq	HO_SAVE+SV_GO(%r11,%rcx), %rdi
	movq	HO_KEY(%r11), %r9
ptloom_ho_handing:
	movl	$1, (%rdi)		/* its turn */
ptloom_ho_handed:			/* only r12's area and registers now */
	movq	$SVP_PARKED, SV_PHASE(%r12)
	movl	$202, %eax		/* futex(&go[next], FUTEX_WAKE, 1) */
	movl	$1, %esi
	movl	$1, %edx
	syscall
ptloom_ho_park:
	leaq	SV_GO(%r12), %rdi
4:	movl	(%rdi), %eax
	testl	%eax, %eax
	jnz	5f
	movl	$202, %eax		/* futex(&go[self], FUTEX_WAIT, 0) */
	xorl	%esi, %esi
	xorl	%edx, %edx
	xorl	%r10d, %r10d
	syscall
	jmp	4b
5:	cmpl	$1, %eax
	jne	ptloom_ho_trap
	movl	$0, (%rdi)		/* taken */
ptloom_ho_taken:
	jmp	6f
ptloom_ho_stopping:
8:	decq	SV_TGT(%r12)		/* the slot's int3: a stop */
6:	movq	SV_TGT(%r12), %rax
	movq	%rax, ho_jmpword(%rip)
ptloom_ho_fix1:
	movq	SV_RCX(%r12), %rcx
	movq	SV_RDX(%r12), %rdx
	movq	SV_RSI(%r12), %rsi
	movq	SV_RDI(%r12), %rdi
	movq	SV_R8(%r12), %r8
	movq	SV_R9(%r12), %r9
	movq	SV_R10(%r12), %r10
	movq	SV_R11(%r12), %r11
	movq	SV_FL(%r12), %rax
	addb	$0x7f, %al
	sahf
	movq	SV_RAX(%r12), %rax
	movq	SV_R12(%r12), %r12
	jmp	*ho_jmpword(%rip)
ptloom_ho_fix2:
ptloom_ho_trap:
	int3				/* go = 2: the supervisor's */
	jmp	ptloom_ho_trap
ptloom_ho_end:
ho_jmpword:
	.quad	0

	.section .note.GNU-stack, "", @progbits
