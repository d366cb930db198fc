/*
 * Calling code with every general register and the flags set, for the
 * unit tests that run machine code natively (test_emul.c,
 * test_trampolines.c): call_with() loads all but rsp from a struct cpu,
 * calls the code, and stores them back.  It defines the function: include
 * it in one file of a test.
 */
#ifndef PTLOOM_TESTS_CPU_CALL_H
#define PTLOOM_TESTS_CPU_CALL_H

#include <stdint.h>

/* rax rbx rcx rdx rsi rdi rbp (rsp unused) r8..r15, flags */
struct cpu {
	uint64_t g[16];
	uint64_t flags;
	uint64_t ret; /* the return address the call pushed */
};

/* call_with(struct cpu *c, void *fn): every general register but rsp and
 * the flags from c, call fn, everything back into c */
void call_with(struct cpu *c, void *fn);
__asm__(".text\n"
	".globl call_with\n"
	"call_with:\n"
	"push %rbx\n push %rbp\n push %r12\n push %r13\n push %r14\n"
	"push %r15\n"
	"push %rdi\n"
	"push %rsi\n"
	"lea 1f(%rip), %rax\n mov %rax, 136(%rdi)\n"
	"mov 128(%rdi), %rax\n push %rax\n popfq\n"
	"mov 8(%rdi), %rbx\n mov 16(%rdi), %rcx\n mov 24(%rdi), %rdx\n"
	"mov 32(%rdi), %rsi\n mov 48(%rdi), %rbp\n"
	"mov 64(%rdi), %r8\n mov 72(%rdi), %r9\n mov 80(%rdi), %r10\n"
	"mov 88(%rdi), %r11\n mov 96(%rdi), %r12\n mov 104(%rdi), %r13\n"
	"mov 112(%rdi), %r14\n mov 120(%rdi), %r15\n"
	"mov 0(%rdi), %rax\n mov 40(%rdi), %rdi\n"
	"call *(%rsp)\n"
	"1:\n"
	"pushfq\n"
	"push %rdi\n"
	"mov 24(%rsp), %rdi\n"
	"mov %rax, 0(%rdi)\n mov %rbx, 8(%rdi)\n mov %rcx, 16(%rdi)\n"
	"mov %rdx, 24(%rdi)\n mov %rsi, 32(%rdi)\n mov %rbp, 48(%rdi)\n"
	"mov %r8, 64(%rdi)\n mov %r9, 72(%rdi)\n mov %r10, 80(%rdi)\n"
	"mov %r11, 88(%rdi)\n mov %r12, 96(%rdi)\n mov %r13, 104(%rdi)\n"
	"mov %r14, 112(%rdi)\n mov %r15, 120(%rdi)\n"
	"pop %rax\n mov %rax, 40(%rdi)\n"
	"pop %rax\n mov %rax, 128(%rdi)\n"
	"add $16, %rsp\n"
	"pop %r15\n pop %r14\n pop %r13\n pop %r12\n pop %rbp\n pop %rbx\n"
	"ret\n");

#endif
