/*
 * tracer/disasm: decoding of the instructions that become scheduling
 * points, their effective addresses, and sweeps of bytes and of ELF files
 * (this test binary itself).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <criterion/criterion.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../tracer/disasm.h"

/* Decode the bytes given; they must make exactly one instruction. */
#define DECODE(in, addr, ...)                                                  \
	do {                                                                   \
		static const uint8_t code_[] = { __VA_ARGS__ };                \
		cr_assert_eq(                                                  \
			disasm_decode(code_, sizeof(code_), (addr), (in)), 0); \
		cr_assert_eq((in)->len, sizeof(code_));                        \
	} while (0)

Test(disasm, lock_cmpxchg)
{
	struct insn_info in;

	DECODE(&in, 0x1000, 0xf0, 0x48, 0x0f, 0xb1, 0x17);
	cr_assert(in.is_atomic);
	/* capstone 4 reports the operand as read only */
	cr_assert(in.mem_read && in.mem_write);
	cr_assert_eq(in.size, 8);
	cr_assert_eq(in.nmem, 1);
	cr_assert_eq(in.mem[0].base, DISASM_REG_RDI);
	cr_assert_eq(in.mem[0].index, DISASM_REG_NONE);
	cr_assert(!in.stack_relative && !in.tls);
}

Test(disasm, xchg_with_memory_is_atomic)
{
	struct insn_info in;

	DECODE(&in, 0, 0x87, 0x06); /* xchg %eax,(%rsi) */
	cr_assert(in.is_atomic);
	cr_assert(in.mem_read && in.mem_write);
	cr_assert_eq(in.size, 4);
	cr_assert_eq(in.mem[0].base, DISASM_REG_RSI);

	DECODE(&in, 0, 0x93); /* xchg %eax,%ebx */
	cr_assert(!in.is_atomic);
	cr_assert_eq(in.nmem, 0);
	DECODE(&in, 0, 0x66, 0x90); /* xchg %ax,%ax: a nop */
	cr_assert(!in.is_atomic);
}

Test(disasm, xadd_needs_lock)
{
	struct insn_info in;

	DECODE(&in, 0, 0xf0, 0x0f, 0xc1, 0x47, 0x08); /* lock xadd 8(%rdi) */
	cr_assert(in.is_atomic);
	cr_assert_eq(in.mem[0].disp, 8);
	cr_assert_eq(in.size, 4);
	DECODE(&in, 0, 0x0f, 0xc1, 0x07); /* xadd %eax,(%rdi) */
	cr_assert(!in.is_atomic);
	cr_assert(in.mem_write);
}

Test(disasm, cmpxchg16b_and_lock_or)
{
	struct insn_info in;

	DECODE(&in, 0, 0x48, 0x0f, 0xc7, 0x0f); /* cmpxchg16b (%rdi) */
	cr_assert(in.is_atomic && in.mem_write);
	cr_assert_eq(in.size, 16);
	DECODE(&in, 0, 0xf0, 0x83, 0x08, 0x01); /* lock orl $1,(%rax) */
	cr_assert(in.is_atomic && in.mem_read && in.mem_write);
}

Test(disasm, rip_relative_store_is_resolved)
{
	struct insn_info in;
	struct user_regs_struct regs = { .rip = 0xdead };

	/* mov %eax,0x1234(%rip) */
	DECODE(&in, 0x401000, 0x89, 0x05, 0x34, 0x12, 0x00, 0x00);
	cr_assert(in.rip_relative);
	cr_assert(in.mem_write && !in.mem_read);
	cr_assert_eq(in.mem[0].base, DISASM_REG_NONE);
	cr_assert_eq(in.mem[0].disp, 0x401000 + 6 + 0x1234);
	cr_assert_eq(disasm_effective_addr(&in, &regs), 0x401000 + 6 + 0x1234);
	cr_assert(!in.stack_relative);

	disasm_relocate(&in, 0x555555554000);
	cr_assert_eq(in.addr, 0x555555554000 + 0x401000);
	cr_assert_eq(disasm_effective_addr(&in, &regs),
		     0x555555554000 + 0x401000 + 6 + 0x1234);
}

Test(disasm, stack_accesses)
{
	struct insn_info in;

	DECODE(&in, 0, 0x48, 0x8b, 0x04, 0x24); /* mov (%rsp),%rax */
	cr_assert(in.stack_relative && in.mem_read && !in.mem_write);
	DECODE(&in, 0, 0x48, 0x8b, 0x45, 0x08); /* mov 8(%rbp),%rax */
	cr_assert(in.stack_relative);
	/* mov 0(%rbp,%rbx,8),%rax: rbp indexed is not a frame access */
	DECODE(&in, 0, 0x48, 0x8b, 0x44, 0xdd, 0x00);
	cr_assert(!in.stack_relative);
}

Test(disasm, fs_access_is_tls)
{
	struct insn_info in;
	struct user_regs_struct regs = { .fs_base = 0x7ffff7d8a740,
					 .rax = 0x10 };

	/* mov %fs:0x28,%rax */
	DECODE(&in, 0, 0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0x00, 0x00, 0x00);
	cr_assert(in.tls);
	cr_assert_eq(in.mem[0].seg, DISASM_SEG_FS);
	cr_assert_eq(disasm_effective_addr(&in, &regs), 0x7ffff7d8a740 + 0x28);

	DECODE(&in, 0, 0x64, 0x48, 0x8b, 0x18); /* mov %fs:(%rax),%rbx */
	cr_assert(in.tls);
	cr_assert_eq(disasm_effective_addr(&in, &regs), 0x7ffff7d8a740 + 0x10);
}

Test(disasm, push_register)
{
	struct insn_info in;
	struct user_regs_struct regs = { .rbx = 42, .r12 = 7 };

	DECODE(&in, 0, 0x53); /* push %rbx */
	cr_assert(in.is_push_reg);
	cr_assert_eq(in.push_reg, DISASM_REG_RBX);
	cr_assert_eq(disasm_reg_value(in.push_reg, &regs), 42);
	cr_assert_eq(in.nmem, 0);

	DECODE(&in, 0, 0x41, 0x54); /* push %r12 */
	cr_assert(in.is_push_reg);
	cr_assert_eq(disasm_reg_value(in.push_reg, &regs), 7);

	DECODE(&in, 0, 0xff, 0x30); /* push (%rax): not emulable as a reg */
	cr_assert(!in.is_push_reg);
	cr_assert(in.mem_read);
	DECODE(&in, 0, 0x6a, 0x05); /* push $5 */
	cr_assert(!in.is_push_reg);
	DECODE(&in, 0, 0x66, 0x55); /* push %bp */
	cr_assert(!in.is_push_reg);
}

Test(disasm, effective_address)
{
	struct insn_info in;
	struct user_regs_struct regs = { .rax = 0x1000, .rbx = 3 };

	DECODE(&in, 0, 0x8b, 0x4c, 0x98, 0x10); /* mov 0x10(%rax,%rbx,4) */
	cr_assert_eq(in.mem[0].scale, 4);
	cr_assert_eq(disasm_effective_addr(&in, &regs), 0x1000 + 12 + 0x10);

	regs.rax = 0x100000010ULL;
	DECODE(&in, 0, 0x67, 0x8b, 0x18); /* mov (%eax),%ebx */
	cr_assert(in.mem[0].addr32);
	cr_assert_eq(disasm_effective_addr(&in, &regs), 0x10);
}

Test(disasm, stores_capstone_misreports)
{
	struct insn_info in;

	DECODE(&in, 0, 0x66, 0x0f, 0xd6, 0x00); /* movq %xmm0,(%rax) */
	cr_assert(in.mem_write);
	DECODE(&in, 0, 0xdd, 0x18); /* fstpl (%rax) */
	cr_assert(in.mem_write && !in.mem_read);
	DECODE(&in, 0, 0x0f, 0xae, 0x18); /* stmxcsr (%rax) */
	cr_assert(in.mem_write);
	DECODE(&in, 0, 0xd0, 0x00); /* rolb (%rax) */
	cr_assert(in.mem_write);
	DECODE(&in, 0, 0x83, 0x3f, 0x00); /* cmpl $0,(%rdi) */
	cr_assert(in.mem_read && !in.mem_write);
	DECODE(&in, 0, 0x0f, 0xa3, 0x07); /* bt %eax,(%rdi) */
	cr_assert(!in.mem_write);
	/* capstone 4 calls these operands written: two threads testing one
	 * flag would race */
	DECODE(&in, 0, 0x41, 0xf6, 0x06, 0x05); /* testb $5,(%r14) */
	cr_assert(in.mem_read && !in.mem_write);
	DECODE(&in, 0, 0xf7, 0x07, 0x01, 0x00, 0x00, 0x00); /* testl $1,(%rdi) */
	cr_assert(in.mem_read && !in.mem_write);
	DECODE(&in, 0, 0x81, 0x3f, 0x00, 0x01, 0x00, 0x00); /* cmpl $256,(%rdi) */
	cr_assert(in.mem_read && !in.mem_write);
}

Test(disasm, address_without_access)
{
	struct insn_info in;

	DECODE(&in, 0, 0x48, 0x8d, 0x58, 0x08); /* lea 8(%rax),%rbx */
	cr_assert_eq(in.nmem, 0);
	cr_assert(!in.mem_read && !in.mem_write);
	DECODE(&in, 0, 0x66, 0x0f, 0x1f, 0x04, 0x00); /* nopw (%rax,%rax) */
	cr_assert(!in.mem_read && !in.mem_write);
	DECODE(&in, 0, 0x0f, 0x18, 0x08); /* prefetcht0 (%rax) */
	cr_assert(!in.mem_read);
}

Test(disasm, string_ops)
{
	struct insn_info in;

	DECODE(&in, 0, 0xf3, 0xa4); /* rep movsb */
	cr_assert(in.is_string_op && in.has_rep);
	cr_assert_eq(in.nmem, 2);
	cr_assert(in.mem[0].write && in.mem[0].base == DISASM_REG_RDI);
	cr_assert(in.mem[1].read && !in.mem[1].write);
	cr_assert_eq(in.mem[1].base, DISASM_REG_RSI);
	DECODE(&in, 0, 0xae); /* scasb: reads (%rdi) */
	cr_assert(in.is_string_op && !in.has_rep && !in.mem_write);
	/* movsd %xmm0,(%rax) shares capstone's id with the string movsd */
	DECODE(&in, 0, 0xf2, 0x0f, 0x11, 0x00);
	cr_assert(!in.is_string_op && in.mem_write);
}

Test(disasm, control_flow)
{
	struct insn_info in;

	DECODE(&in, 0x1000, 0xe8, 0x00, 0x00, 0x00, 0x00); /* call next */
	cr_assert(in.is_call && !in.is_jump);
	cr_assert_eq(in.target, 0x1005);
	DECODE(&in, 0, 0xc3);
	cr_assert(in.is_ret);
	/* jmp *0x10(%rip) */
	DECODE(&in, 0x2000, 0xff, 0x25, 0x10, 0x00, 0x00, 0x00);
	cr_assert(in.is_jump && in.mem_read && in.rip_relative);
	cr_assert_eq(in.mem[0].disp, 0x2016);
	cr_assert_eq(in.target, 0);
}

Test(disasm, invalid_bytes)
{
	static const uint8_t bad[] = { 0x06 }; /* push %es: invalid in 64-bit */
	static const uint8_t cut[] = { 0xf0, 0x48, 0x0f }; /* truncated */
	struct insn_info in;

	cr_assert_eq(disasm_decode(bad, sizeof(bad), 0, &in), -EINVAL);
	cr_assert_eq(disasm_decode(cut, sizeof(cut), 0, &in), -EINVAL);
	cr_assert_eq(disasm_decode(cut, 0, 0, &in), -EINVAL);
}

Test(disasm, format)
{
	static const uint8_t cx[] = { 0xf0, 0x48, 0x0f, 0xb1, 0x17 };
	static const uint8_t rip[] = { 0x89, 0x05, 0x34, 0x12, 0x00, 0x00 };
	static const uint8_t bad[] = { 0x06 };
	char buf[128];

	disasm_format(cx, sizeof(cx), 0, buf, sizeof(buf));
	cr_assert(strstr(buf, "lock cmpxchg") && strstr(buf, "%rdx, (%rdi)"),
		  "%s", buf);
	disasm_format(rip, sizeof(rip), 0x1000, buf, sizeof(buf));
	cr_assert(strstr(buf, "0x223a"), "%s", buf);
	disasm_format(bad, sizeof(bad), 0, buf, sizeof(buf));
	cr_assert_str_eq(buf, "(bad)");
	disasm_format(cx, sizeof(cx), 0, buf, 5);
	cr_assert_eq(strlen(buf), 4);
}

/* Code with data in it, at 0x1000. */
/* clang-format off */
static const uint8_t sweep_code[] = {
	0x53,				/* 1000 push %rbx */
	0xf0, 0x48, 0x0f, 0xb1, 0x17,	/* 1001 lock cmpxchg %rdx,(%rdi) */
	0x48, 0x8b, 0x04, 0x24,		/* 1006 mov (%rsp),%rax */
	0x89, 0x07,			/* 100a mov %eax,(%rdi) */
	0x06,				/* 100c (bad) */
	0x64, 0x48, 0x8b, 0x04, 0x25,	/* 100d mov %fs:0x28,%rax */
	0x28, 0x00, 0x00, 0x00,
	0x87, 0x06,			/* 1016 xchg %eax,(%rsi) */
	0x48, 0x8d, 0x58, 0x08,		/* 1018 lea 8(%rax),%rbx */
	0x5b,				/* 101c pop %rbx */
	0xc3,				/* 101d ret */
};
/* clang-format on */

Test(disasm, scan_bytes_atomics)
{
	struct insn_info *v;
	int n;

	n = disasm_scan(sweep_code, sizeof(sweep_code), 0x1000, DISASM_ATOMICS,
			&v);
	cr_assert_eq(n, 2);
	cr_assert_eq(v[0].addr, 0x1001);
	cr_assert_eq(v[1].addr, 0x1016);
	cr_assert(v[0].is_atomic && v[1].is_atomic);
	free(v);
}

Test(disasm, scan_bytes_memory)
{
	struct insn_info *v;
	int n;

	n = disasm_scan(sweep_code, sizeof(sweep_code), 0x1000, DISASM_MEMORY,
			&v);
	cr_assert_eq(n, 3);
	cr_assert_eq(v[0].addr, 0x1001);
	cr_assert_eq(v[1].addr, 0x100a);
	cr_assert(v[1].mem_write && !v[1].is_atomic);
	cr_assert_eq(v[2].addr, 0x1016);
	free(v);

	cr_assert_eq(disasm_scan(sweep_code, 0, 0x1000, DISASM_MEMORY, &v), 0);
	cr_assert_eq(disasm_scan(sweep_code, 1, 0, 0, &v), -EINVAL);
}

/* After an instruction capstone cannot decode (glibc's strlen_evex: an
 * EVEX vpcmpeqb into a mask register) the sweep does not know where the
 * next instruction starts: its guess (here an "add %cl, ...(%rcx)" from
 * the vpcmpeqb's last byte into the mov) gets no breakpoint, which would
 * change the instruction it lands in, until a block has ended at a
 * 16-byte boundary. */
/* clang-format off */
static const uint8_t evex_code[] = {
	0x62, 0xf3, 0x7d, 0x20, 0x3f, 0x07, 0x00, /* 2000 vpcmpeqb (%rdi),%ymm16,%k0 */
	0x89, 0x07,			/* 2007 mov %eax,(%rdi) */
	0xc3,				/* 2009 ret */
	0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, /* 200a padding */
	0x89, 0x07,			/* 2010 mov %eax,(%rdi) */
	0xc3,				/* 2012 ret */
	0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, /* 2013 padding */
	0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
	0x89, 0x07,			/* 2020 mov %eax,(%rdi) */
	0xc3,
};
/* clang-format on */

Test(disasm, scan_keeps_no_guess_after_undecodable_code)
{
	struct insn_info *v;
	int n;

	n = disasm_scan(evex_code, sizeof(evex_code), 0x2000, DISASM_MEMORY,
			&v);
	for (int i = 0; i < n; i++)
		cr_assert(v[i].addr >= 0x2010, "a breakpoint at %#llx, in "
			  "code decoded out of step", (unsigned long long)v[i].addr);
	cr_assert_gt(n, 0, "never in step again");
	cr_assert_eq(v[n - 1].addr, 0x2020, "the last store");
	free(v);
}

Test(disasm, scan_follows_frame_pointer)
{
	/* 8(%rbp) is a frame slot after `mov %rsp,%rbp`; after a bare
	 * `push %rbp` (-O2 saving it) rbp is a general register */
	static const uint8_t code[] = {
		0x55, 0x48, 0x89, 0xe5, /* 0: push %rbp; mov %rsp,%rbp */
		0x48, 0x8b, 0x45, 0x08, /* 4: mov 8(%rbp),%rax */
		0x5d, 0xc3,		/* 8: pop %rbp; ret */
		0x55,			/* a: push %rbp */
		0x48, 0x8b, 0x45, 0x08, /* b: mov 8(%rbp),%rax */
		0x5d, 0xc3,		/* f: pop %rbp; ret */
	};
	struct insn_info *v;

	cr_assert_eq(disasm_scan(code, sizeof(code), 0, DISASM_MEMORY, &v), 1);
	cr_assert_eq(v[0].addr, 0xb);
	cr_assert(!v[0].stack_relative && v[0].mem_read);
	free(v);
}

/* Kept out of line so the scan below finds it in this binary. */
static __attribute__((noinline)) void disasm_scan_target(int *p,
							 volatile int *q)
{
	__atomic_fetch_add(p, 1, __ATOMIC_SEQ_CST);
	*q = 5;
}

static int main_bias(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	*(uint64_t *)data = info->dlpi_addr;
	return 1; /* the program comes first */
}

Test(disasm, scan_elf_finds_own_atomic)
{
	struct disasm_elf_info info;
	struct insn_info *v;
	uint64_t bias = 0, fn = (uint64_t)(uintptr_t)&disasm_scan_target;
	int n, found = 0;
	int x = 0, y = 0;

	disasm_scan_target(&x, &y);
	dl_iterate_phdr(main_bias, &bias);
	n = disasm_scan_elf("/proc/self/exe", DISASM_ATOMICS, &v, &info);
	cr_assert_gt(n, 0, "%d", n);
	cr_assert(info.has_symtab);
	cr_assert_gt(info.nfuncs, 0);
	for (int i = 0; i < n; i++) {
		struct insn_info live;
		const uint8_t *code;

		cr_assert(v[i].is_atomic);
		disasm_relocate(&v[i], info.pie ? bias : 0);
		if (i)
			cr_assert_leq(v[i - 1].addr, v[i].addr);
		if (v[i].addr < fn || v[i].addr >= fn + 4096)
			continue;
		/* what the scan saw is what runs at that address */
		code = (const uint8_t *)(uintptr_t)v[i].addr;
		cr_assert_eq(disasm_decode(code, 16, v[i].addr, &live), 0);
		cr_assert(live.is_atomic);
		cr_assert_eq(live.len, v[i].len);
		found++;
	}
	cr_assert_geq(found, 1);
	free(v);
}

/* Functions whose first instruction is a 2-byte load (never called):
 * what follows it decides whether a jump may cover it too. */
void mv_plain(void), mv_target(void), mv_indirect(void), mv_memnext(void),
	mv_endbr(void), mv_hot(void);
__asm__(".text\n"
	".globl mv_plain\n.type mv_plain,@function\nmv_plain:\n"
	"movl (%rdi), %eax\naddl $5, %eax\nret\n.size mv_plain, .-mv_plain\n"
	/* a branch back into the add */
	".globl mv_target\n.type mv_target,@function\nmv_target:\n"
	"movl (%rdi), %eax\n1: addl $5, %eax\ncmpl $9, %eax\njne 1b\nret\n"
	".size mv_target, .-mv_target\n"
	/* a jump through a register: any instruction may be its target */
	".globl mv_indirect\n.type mv_indirect,@function\nmv_indirect:\n"
	"movl (%rdi), %eax\naddl $5, %eax\njmp *%rsi\n"
	".size mv_indirect, .-mv_indirect\n"
	/* the next instruction is an access of its own */
	".globl mv_memnext\n.type mv_memnext,@function\nmv_memnext:\n"
	"movl (%rdi), %eax\nmovl %eax, (%rsi)\nret\n"
	".size mv_memnext, .-mv_memnext\n"
	/* an endbr64 after it: an indirect branch's landing */
	".globl mv_endbr\n.type mv_endbr,@function\nmv_endbr:\n"
	"movl (%rdi), %eax\nendbr64\naddl $5, %eax\nret\n"
	".size mv_endbr, .-mv_endbr\n"
	/* a separate part (gcc's `foo.cold`) jumps back into the add */
	".globl mv_hot\n.type mv_hot,@function\nmv_hot:\n"
	"movl (%rdi), %eax\nmv_hot_back: addl $5, %eax\nret\n"
	".size mv_hot, .-mv_hot\n"
	".type mv_hot_cold,@function\nmv_hot_cold:\n"
	"xorl %eax, %eax\njmp mv_hot_back\n"
	".size mv_hot_cold, .-mv_hot_cold\n");

/* This test binary's memory sweep, and where it is loaded (a PIE's bias) */
struct self_scan {
	struct insn_info *v;
	int n;
	uint64_t bias;
};

static struct self_scan scan_self(void)
{
	struct disasm_elf_info info;
	struct self_scan s = { 0 };

	dl_iterate_phdr(main_bias, &s.bias);
	s.n = disasm_scan_elf("/proc/self/exe", DISASM_MEMORY, &s.v, &info);
	cr_assert_gt(s.n, 0, "%d", s.n);
	if (!info.pie)
		s.bias = 0;
	return s;
}

/* The swept instruction at function fn's first byte, or NULL */
static const struct insn_info *insn_of(const struct self_scan *s,
				       void (*fn)(void))
{
	for (int i = 0; i < s->n; i++)
		if (s->v[i].addr + s->bias == (uint64_t)(uintptr_t)fn)
			return &s->v[i];
	return NULL;
}

Test(disasm, scan_elf_says_which_short_accesses_can_move_with_the_next)
{
	struct {
		void (*fn)(void);
		int len;
		const char *why;
	} want[] = { { mv_plain, 5, "a load and an add" },
		     { mv_target, 0, "a branch into the add" },
		     { mv_indirect, 0, "an indirect jump in the function" },
		     { mv_memnext, 0, "the next instruction an access" },
		     { mv_endbr, 0, "an endbr64 inside" },
		     { mv_hot, 0, "a jump from another function into the "
				  "add (a .cold part's way back)" } };
	struct self_scan sc = scan_self();

	for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
		const struct insn_info *in = insn_of(&sc, want[k].fn);
		int found = in ? in->move_len : -1;

		cr_assert_eq(found, want[k].len, "%s: move_len %d, want %d",
			     want[k].why, found, want[k].len);
	}
	free(sc.v);
}

/* reads of constant data, and not: .rodata, the GOT (RELRO in a dynamic
 * executable), .data, a store, a read through a register */
void rc_rodata(void), rc_got(void), rc_gotcall(void), rc_data(void),
	rc_store(void), rc_reg(void);
__asm__(".section .rodata\n.p2align 3\nrc_const: .quad 7\n"
	".data\n.p2align 3\nrc_var: .quad 7\n.text\n"
	".globl rc_rodata\n.type rc_rodata,@function\nrc_rodata:\n"
	"movq rc_const(%rip), %rax\nret\n.size rc_rodata, .-rc_rodata\n"
	".globl rc_got\n.type rc_got,@function\nrc_got:\n"
	"movq free@GOTPCREL(%rip), %rax\nret\n.size rc_got, .-rc_got\n"
	".globl rc_gotcall\n.type rc_gotcall,@function\nrc_gotcall:\n"
	"jmp *free@GOTPCREL(%rip)\n.size rc_gotcall, .-rc_gotcall\n"
	".globl rc_data\n.type rc_data,@function\nrc_data:\n"
	"movq rc_var(%rip), %rax\nret\n.size rc_data, .-rc_data\n"
	".globl rc_store\n.type rc_store,@function\nrc_store:\n"
	"movq %rax, rc_var(%rip)\nret\n.size rc_store, .-rc_store\n"
	".globl rc_reg\n.type rc_reg,@function\nrc_reg:\n"
	"movq (%rdi), %rax\nret\n.size rc_reg, .-rc_reg\n");

Test(disasm, scan_elf_says_which_reads_are_of_constant_data)
{
	struct {
		void (*fn)(void);
		int constant;
		const char *why;
	} want[] = { { rc_rodata, 1, "a read of .rodata" },
		     { rc_got, 1, "a read of the GOT (RELRO)" },
		     { rc_gotcall, 1, "a jump through the GOT" },
		     { rc_data, 0, "a read of .data" },
		     { rc_store, 0, "a store to .data" },
		     { rc_reg, 0, "a read through a register" } };
	struct self_scan sc = scan_self();

	for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
		const struct insn_info *in = insn_of(&sc, want[k].fn);
		int found = in ? in->reads_constant : -1;

		cr_assert_eq(found, want[k].constant, "%s: reads_constant %d",
			     want[k].why, found);
	}
	free(sc.v);
}

/* The atomics of a memory sweep are the atomics sweep's (tracer/bp.c
 * takes them from race discovery's sweep instead of sweeping again). */
Test(disasm, scan_elf_memory_sweep_finds_the_atomics_sweeps_atomics)
{
	const char *files[] = { "/proc/self/exe", "/bin/sh", "/usr/bin/env" };

	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		struct insn_info *a, *m;
		int na = disasm_scan_elf(files[f], DISASM_ATOMICS, &a, NULL);
		int nm = disasm_scan_elf(files[f], DISASM_MEMORY, &m, NULL);
		int k = 0;

		if (na < 0 && f)
			continue; /* not there: the test binary suffices */
		cr_assert_geq(na, 0, "%s", files[f]);
		cr_assert_geq(nm, na, "%s", files[f]);
		for (int i = 0; i < nm; i++) {
			if (!m[i].is_atomic)
				continue;
			cr_assert_lt(k, na, "%s: an extra atomic at %#lx",
				     files[f], (unsigned long)m[i].addr);
			cr_assert_eq(m[i].addr, a[k].addr, "%s: %#lx, %#lx",
				     files[f], (unsigned long)m[i].addr,
				     (unsigned long)a[k].addr);
			k++;
		}
		cr_assert_eq(k, na, "%s", files[f]);
		free(a);
		free(m);
	}
}

Test(disasm, scan_elf_memory_excludes_stack_and_tls)
{
	struct insn_info *v;
	int n;

	n = disasm_scan_elf("/proc/self/exe", DISASM_MEMORY, &v, NULL);
	cr_assert_gt(n, 0);
	for (int i = 0; i < n; i++) {
		cr_assert(v[i].is_atomic || v[i].mem_read || v[i].mem_write);
		/* (a memcpy's, memset's or strcmp's call: libc's
		 * accesses) */
		cr_assert(!v[i].memfn ||
			  (v[i].is_call && !v[i].nmem &&
			   (v[i].memfn < DISASM_MEMFN_COUNT ||
			    (v[i].memfn >= DISASM_MEMFN_STATE &&
			     v[i].memfn < DISASM_MEMFN_STATE +
						  2 * DISASM_STATE_COUNT)) &&
			   (v[i].mem_read || v[i].mem_write)));
		cr_assert(v[i].is_atomic ||
			  (!v[i].stack_relative && !v[i].tls && !v[i].vsib));
	}
	free(v);
}

/* DISASM_STACK (race discovery once a thread's stack or thread-local
 * data is shared): the same sweep plus the stack-relative and the
 * %fs/%gs-relative accesses, never vsib ones; only with DISASM_MEMORY */
Test(disasm, scan_elf_memory_with_stack)
{
	struct insn_info *m, *v;
	int nm, n, k = 0, stack = 0;

	nm = disasm_scan_elf("/proc/self/exe", DISASM_MEMORY, &m, NULL);
	n = disasm_scan_elf("/proc/self/exe", DISASM_MEMORY | DISASM_STACK,
			    &v, NULL);
	cr_assert_gt(nm, 0);
	cr_assert_gt(n, nm);
	for (int i = 0; i < n; i++) {
		cr_assert(!v[i].vsib);
		if ((v[i].stack_relative || v[i].tls) && !v[i].is_atomic) {
			stack++;
			continue;
		}
		/* the rest is DISASM_MEMORY's, in order */
		cr_assert_lt(k, nm);
		cr_assert_eq(v[i].addr, m[k].addr);
		k++;
	}
	cr_assert_eq(k, nm);
	cr_assert_gt(stack, 0);
	free(m);
	free(v);
	cr_assert_eq(disasm_scan_elf("/proc/self/exe",
				     DISASM_ATOMICS | DISASM_STACK, &v, NULL),
		     -EINVAL);
	cr_assert_eq(disasm_scan(sweep_code, 1, 0, DISASM_TSC | DISASM_STACK,
				 &v),
		     -EINVAL);
}

Test(disasm, scan_elf_errors)
{
	char path[] = "/tmp/ptloom-disasm-XXXXXX";
	struct insn_info *v;
	int fd;

	cr_assert_eq(disasm_scan_elf("/nonexistent/ptloom", DISASM_ATOMICS, &v,
				     NULL),
		     -ENOENT);
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "#!/bin/sh\n", 10), 10);
	close(fd);
	cr_assert_eq(disasm_scan_elf(path, DISASM_ATOMICS, &v, NULL), -ENOEXEC);
	unlink(path);
}
