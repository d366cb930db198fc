/*
 * tracer/emul.c against the CPU: every covered form, with random
 * registers, memory and flags, is executed natively (the bytes copied to
 * an executable page, followed by ret) and emulated; registers, flags
 * and memory must agree bit for bit.  The flags the manual leaves
 * undefined (AF after a logic operation) are the only ones not compared.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include "../../tracer/emul.h"
#include "cpu_call.h"

/* struct cpu slot of x86 register n */
static int slot(int n)
{
	static const int s[16] = { 0, 2, 3, 1, 7, 6, 4, 5,
				   8, 9, 10, 11, 12, 13, 14, 15 };
	return s[n];
}

static void to_regs(const struct cpu *c, struct user_regs_struct *r)
{
	memset(r, 0, sizeof(*r));
	for (int n = 0; n < 16; n++)
		if (n != 4)
			*emul_reg(r, n) = c->g[slot(n)];
	r->eflags = c->flags;
}

static uint64_t rng = 88172645463325252ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* an interesting value: small, near a boundary, or random */
static uint64_t val(void)
{
	static const uint64_t edge[] = { 0, 1, 0x7f, 0x80, 0xff, 0x7fff,
					 0x8000, 0xffff, 0x7fffffff,
					 0x80000000, 0xffffffff,
					 0x7fffffffffffffff,
					 0x8000000000000000, ~0ull };
	uint64_t r = rnd();

	switch (r % 4) {
	case 0: return edge[(r >> 8) % (sizeof(edge) / sizeof(edge[0]))];
	case 1: return (r >> 8) % 4;
	default: return rnd();
	}
}

#define ARITH 0x8d5ull

/*
 * One form: bytes (the memory operand addressed through rbx, or r12, or
 * rbx + rcx*scale, or rip to the page's data area), checked on many
 * random states.  index_reg: the register that must stay small, -1 none.
 */
static void check(const char *name, const uint8_t *code, size_t len,
		  int index_reg, bool logic)
{
	static uint8_t *page;
	struct emul_insn e;

	if (!page) {
		page = mmap(NULL, 8192, PROT_READ | PROT_WRITE | PROT_EXEC,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		cr_assert(page != MAP_FAILED);
	}
	uint8_t *data = page + 4096; /* operands live here */

	cr_assert(emul_decode(code, len, &e), "%s: not decoded", name);
	cr_assert_eq(e.len, len, "%s: length %d, not %zu", name, e.len, len);
	memcpy(page, code, len);
	page[len] = 0xc3;
	for (int k = 0; k < 3000; k++) {
		struct cpu c, n;
		struct user_regs_struct r;
		uint8_t before[64];

		for (int i = 0; i < 16; i++)
			c.g[i] = val();
		c.g[7] = 0;
		c.flags = 0x202 | (rnd() & ARITH);
		/* base registers point into data; an index is small */
		c.g[slot(3)] = (uint64_t)(data + 256);
		c.g[slot(12)] = (uint64_t)(data + 512);
		if (index_reg >= 0)
			c.g[slot(index_reg)] = rnd() % 8;
		for (int i = 0; i < 1024; i++)
			data[i] = (uint8_t)(rnd() % 3 ? rnd() : 0);
		/* make equality (cmpxchg) likely now and then */
		if (rnd() % 3 == 0)
			for (int i = 0; i < 1024; i += 8)
				memcpy(data + i, &c.g[0], 8);
		memcpy(before, data + 256, sizeof(before));
		n = c;
		to_regs(&c, &r);
		r.rip = (uint64_t)page;
		/* emulate on a copy of memory: the address must agree */
		uint64_t a = emul_addr(&e, &r, r.rip), mem = 0;
		uint8_t saved[1024];

		memcpy(saved, data, sizeof(saved));
		if (emul_reads(&e) || emul_writes(&e)) {
			cr_assert(a >= (uint64_t)data &&
					  a + e.size <= (uint64_t)data + 1024,
				  "%s: address %llx outside", name,
				  (unsigned long long)a);
			memcpy(&mem, (void *)a, e.size);
		}
		emul_run(&e, &r, &mem);
		uint8_t emu[1024];

		memcpy(emu, data, sizeof(emu));
		if (emul_writes(&e))
			memcpy(emu + (a - (uint64_t)data), &mem, e.size);
		/* now the CPU */
		call_with(&n, page);
		cr_assert_eq(r.rip, (uint64_t)page + len, "%s: rip", name);
		for (int i = 0; i < 16; i++) {
			if (i == 4)
				continue;
			cr_assert_eq(*emul_reg(&r, i), n.g[slot(i)],
				     "%s: register %d: emulated %llx, cpu %llx "
				     "(case %d)",
				     name, i,
				     (unsigned long long)*emul_reg(&r, i),
				     (unsigned long long)n.g[slot(i)], k);
		}
		uint64_t fm = logic ? ARITH & ~0x10ull : ARITH;

		cr_assert_eq(r.eflags & fm, n.flags & fm,
			     "%s: flags emulated %llx cpu %llx (case %d)", name,
			     (unsigned long long)(r.eflags & fm),
			     (unsigned long long)(n.flags & fm), k);
		cr_assert(!memcmp(emu, data, sizeof(emu)),
			  "%s: memory differs (case %d)", name, k);
		(void)before;
		(void)saved;
	}
}

#define CHECK(name, idx, logic, ...)                                         \
	do {                                                                 \
		static const uint8_t b_[] = { __VA_ARGS__ };                 \
		check(name, b_, sizeof(b_), idx, logic);                     \
	} while (0)

/* rip-relative to data + 256: disp = 4096 + 256 - len */
#define RIPD(len) (uint8_t)((4352 - (len)) & 0xff), \
		  (uint8_t)(((4352 - (len)) >> 8) & 0xff), 0, 0

Test(emul, moves)
{
	CHECK("mov (%rbx),%eax", -1, false, 0x8b, 0x03);
	CHECK("mov 0x10(%rbx),%rsi", -1, false, 0x48, 0x8b, 0x73, 0x10);
	CHECK("mov %r9,0x20(%rbx)", -1, false, 0x4c, 0x89, 0x4b, 0x20);
	CHECK("mov (%r12),%rax", -1, false, 0x49, 0x8b, 0x04, 0x24);
	CHECK("mov 8(%rbx,%rcx,4),%edx", 1, false, 0x8b, 0x54, 0x8b, 0x08);
	CHECK("mov (%rbx,%rcx,8),%r10", 1, false, 0x4c, 0x8b, 0x14, 0xcb);
	CHECK("mov %al,(%rbx)", -1, false, 0x88, 0x03);
	CHECK("mov %ah,1(%rbx)", -1, false, 0x88, 0x63, 0x01);
	CHECK("mov (%rbx),%dh", -1, false, 0x8a, 0x33);
	CHECK("mov (%rbx),%sil", -1, false, 0x40, 0x8a, 0x33);
	CHECK("mov %ax,(%rbx)", -1, false, 0x66, 0x89, 0x03);
	CHECK("mov 2(%rbx),%si", -1, false, 0x66, 0x8b, 0x73, 0x02);
	CHECK("movl $0x12345678,(%rbx)", -1, false, 0xc7, 0x03, 0x78, 0x56,
	      0x34, 0x12);
	CHECK("movq $-2,8(%rbx)", -1, false, 0x48, 0xc7, 0x43, 0x08, 0xfe,
	      0xff, 0xff, 0xff);
	CHECK("movb $7,(%rbx)", -1, false, 0xc6, 0x03, 0x07);
	CHECK("movw $0x1234,(%rbx)", -1, false, 0x66, 0xc7, 0x03, 0x34, 0x12);
	CHECK("movzbl 0x14(%rbx),%ecx", -1, false, 0x0f, 0xb6, 0x4b, 0x14);
	CHECK("movzbl 0x38(%r12),%eax", -1, false, 0x41, 0x0f, 0xb6, 0x44,
	      0x24, 0x38);
	CHECK("movzwl (%rbx),%eax", -1, false, 0x0f, 0xb7, 0x03);
	CHECK("movzbq (%rbx),%r8", -1, false, 0x4c, 0x0f, 0xb6, 0x03);
	CHECK("movsbl (%rbx),%eax", -1, false, 0x0f, 0xbe, 0x03);
	CHECK("movswq (%rbx),%rax", -1, false, 0x48, 0x0f, 0xbf, 0x03);
	CHECK("movslq (%rbx),%rax", -1, false, 0x48, 0x63, 0x03);
	CHECK("mov rip,%eax", -1, false, 0x8b, 0x05, RIPD(6));
	CHECK("mov %rdx,rip", -1, false, 0x48, 0x89, 0x15, RIPD(7));
	CHECK("mov %rdi,%rax", -1, false, 0x48, 0x89, 0xf8);
	CHECK("mov %esi,%r9d", -1, false, 0x41, 0x89, 0xf1);
	CHECK("mov %rsi,%rbp (8b)", -1, false, 0x48, 0x8b, 0xee);
	CHECK("mov $5,%eax", -1, false, 0xb8, 0x05, 0, 0, 0);
	CHECK("movabs $imm,%r11", -1, false, 0x49, 0xbb, 1, 2, 3, 4, 5, 6, 7,
	      0x88);
}

Test(emul, atomics)
{
	CHECK("xchg %eax,(%r15->rbx)", -1, false, 0x87, 0x03);
	CHECK("xchg %r8,(%rbx)", -1, false, 0x4c, 0x87, 0x03);
	CHECK("xchg %cl,(%rbx)", -1, false, 0x86, 0x0b);
	CHECK("lock cmpxchg %ecx,0x10(%rbx)", -1, false, 0xf0, 0x0f, 0xb1,
	      0x4b, 0x10);
	CHECK("lock cmpxchg %rdx,(%rbx)", -1, false, 0xf0, 0x48, 0x0f, 0xb1,
	      0x13);
	CHECK("lock cmpxchg %dl,(%rbx)", -1, false, 0xf0, 0x0f, 0xb0, 0x13);
	CHECK("lock cmpxchg %dx,(%rbx)", -1, false, 0x66, 0xf0, 0x0f, 0xb1,
	      0x13);
	CHECK("lock xadd %eax,(%rbx)", -1, false, 0xf0, 0x0f, 0xc1, 0x03);
	CHECK("lock xadd %rsi,8(%rbx)", -1, false, 0xf0, 0x48, 0x0f, 0xc1,
	      0x73, 0x08);
	CHECK("lock xadd %al,(%rbx)", -1, false, 0xf0, 0x0f, 0xc0, 0x03);
	CHECK("lock incq (%rbx)", -1, false, 0xf0, 0x48, 0xff, 0x03);
	CHECK("lock decq 0x180(%rbx)", -1, false, 0xf0, 0x48, 0xff, 0x8b, 0x80,
	      0x01, 0, 0);
	CHECK("lock decq (%r12)", -1, false, 0xf0, 0x49, 0xff, 0x0c, 0x24);
	CHECK("incl (%rbx)", -1, false, 0xff, 0x03);
	CHECK("decb (%rbx)", -1, false, 0xfe, 0x0b);
	CHECK("incw (%rbx)", -1, false, 0x66, 0xff, 0x03);
	CHECK("lock addl $1,(%rbx)", -1, false, 0xf0, 0x83, 0x03, 0x01);
	CHECK("lock subq $-1,(%rbx)", -1, false, 0xf0, 0x48, 0x83, 0x2b, 0xff);
	CHECK("lock orl $0x80000000,(%rbx)", -1, true, 0xf0, 0x81, 0x0b, 0, 0,
	      0, 0x80);
	CHECK("lock andq %rax,(%rbx)", -1, true, 0xf0, 0x48, 0x21, 0x03);
	CHECK("lock xorb $0x55,(%rbx)", -1, true, 0xf0, 0x80, 0x33, 0x55);
	CHECK("lock addw %cx,(%rbx)", -1, false, 0x66, 0xf0, 0x01, 0x0b);
	CHECK("lock sub %edx,(%rbx,%rcx,2)", 1, false, 0xf0, 0x29, 0x14, 0x4b);
}

Test(emul, reads_and_arith)
{
	CHECK("cmpl $2,(%rbx)", -1, false, 0x83, 0x3b, 0x02);
	CHECK("cmp %rax,(%rbx)", -1, false, 0x48, 0x39, 0x03);
	CHECK("cmp (%rbx),%ecx", -1, false, 0x3b, 0x0b);
	CHECK("cmpb $0,(%rbx)", -1, false, 0x80, 0x3b, 0x00);
	CHECK("cmp (%rbx),%bh", -1, false, 0x3a, 0x3b);
	CHECK("test %eax,(%rbx)", -1, true, 0x85, 0x03);
	CHECK("testb $1,(%rbx)", -1, true, 0xf6, 0x03, 0x01);
	CHECK("testl $0x100,(%rbx)", -1, true, 0xf7, 0x03, 0, 1, 0, 0);
	CHECK("test %rdi,%rdi (free's entry)", -1, true, 0x48, 0x85, 0xff);
	CHECK("test %r9d,%eax", -1, true, 0x44, 0x85, 0xc8);
	CHECK("test %rcx,%r12", -1, true, 0x49, 0x85, 0xcc);
	CHECK("add (%rbx),%rax", -1, false, 0x48, 0x03, 0x03);
	CHECK("sub (%rbx),%edx", -1, false, 0x2b, 0x13);
	CHECK("xor (%rbx),%ecx", -1, true, 0x33, 0x0b);
	CHECK("or (%rbx),%al", -1, true, 0x0a, 0x03);
	CHECK("addq $0x7f,(%rbx)", -1, false, 0x48, 0x83, 0x03, 0x7f);
	CHECK("subl $0x80000000,(%rbx)", -1, false, 0x81, 0x2b, 0, 0, 0, 0x80);
	CHECK("incq 0x18(%rbx)", -1, false, 0x48, 0xff, 0x43, 0x18);
}

Test(emul, refuses_what_it_does_not_know)
{
	static const uint8_t not_ours[][8] = {
		{ 0xf3, 0xa4 },		    /* rep movsb */
		{ 0x0f, 0x10, 0x07 },	    /* movups */
		{ 0xff, 0x25, 0, 0, 0, 0 }, /* jmp *rip */
		{ 0xf0, 0x8b, 0x03 },	    /* lock mov: #UD */
		{ 0x83, 0x13, 0x01 },	    /* adc */
		{ 0xf7, 0x1b },		    /* neg */
		{ 0x67, 0x8b, 0x03 },	    /* address-size prefix */
		{ 0x48, 0x01, 0xc0 },	    /* add %rax,%rax: no memory */
		{ 0x66, 0x85, 0xc0 },	    /* test %ax,%ax: 16 bits */
		{ 0x84, 0xc0 },		    /* test %al,%al: 8 bits */
	};
	struct emul_insn e;

	for (size_t i = 0; i < sizeof(not_ours) / sizeof(not_ours[0]); i++)
		cr_assert(!emul_decode(not_ours[i], 8, &e), "form %zu taken",
			  i);
}
