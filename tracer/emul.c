/*
 * The instruction under a breakpoint, executed by the supervisor (emul.h).
 * A small decoder of its own: the forms it accepts are few and must be
 * decoded exactly, down to the bytes of every prefix, so that nothing it
 * does not know is ever emulated; capstone stays the general decoder.
 */
#include <string.h>
#include "emul.h"

enum { F_CF = 1u << 0, F_PF = 1u << 2, F_AF = 1u << 4, F_ZF = 1u << 6,
       F_SF = 1u << 7, F_OF = 1u << 11 };
#define F_ARITH (F_CF | F_PF | F_AF | F_ZF | F_SF | F_OF)

uint64_t *emul_reg(struct user_regs_struct *r, int n)
{
	switch (n & 15) {
	case 0: return (uint64_t *)&r->rax;
	case 1: return (uint64_t *)&r->rcx;
	case 2: return (uint64_t *)&r->rdx;
	case 3: return (uint64_t *)&r->rbx;
	case 4: return (uint64_t *)&r->rsp;
	case 5: return (uint64_t *)&r->rbp;
	case 6: return (uint64_t *)&r->rsi;
	case 7: return (uint64_t *)&r->rdi;
	case 8: return (uint64_t *)&r->r8;
	case 9: return (uint64_t *)&r->r9;
	case 10: return (uint64_t *)&r->r10;
	case 11: return (uint64_t *)&r->r11;
	case 12: return (uint64_t *)&r->r12;
	case 13: return (uint64_t *)&r->r13;
	case 14: return (uint64_t *)&r->r14;
	default: return (uint64_t *)&r->r15;
	}
}

static uint64_t mask(int size)
{
	return size >= 8 ? ~0ull : (1ull << (size * 8)) - 1;
}

static uint64_t sext(uint64_t v, int size)
{
	int sh = 64 - size * 8;

	return size >= 8 ? v : (uint64_t)((int64_t)(v << sh) >> sh);
}

/* ---- decoding ------------------------------------------------------ */

struct cursor {
	const uint8_t *p, *end;
	bool ok;
};

static uint8_t next(struct cursor *c)
{
	if (c->p >= c->end) {
		c->ok = false;
		return 0;
	}
	return *c->p++;
}

static int64_t imm(struct cursor *c, int size)
{
	uint64_t v = 0;

	for (int i = 0; i < size; i++)
		v |= (uint64_t)next(c) << (8 * i);
	return (int64_t)sext(v, size);
}

/* ModRM, and SIB and displacement for a memory operand; *is_reg for a
 * register operand (mod 3, its number in e->base).  False: cut short. */
static bool modrm(struct cursor *c, uint8_t rex, struct emul_insn *e,
		  uint8_t *regfield, bool *is_reg)
{
	uint8_t m = next(c), mod = m >> 6, rm = m & 7;

	*regfield = (uint8_t)((m >> 3) & 7);
	e->reg = (uint8_t)(*regfield | (rex & 4) << 1);
	*is_reg = mod == 3;
	if (mod == 3) {
		e->base = (uint8_t)(rm | (rex & 1) << 3);
		return c->ok;
	}
	if (rm == 4) {
		uint8_t sib = next(c), idx = (uint8_t)(((sib >> 3) & 7) |
						       (rex & 2) << 2);

		e->scale = (uint8_t)(1u << (sib >> 6));
		e->has_index = idx != 4;
		e->index = idx;
		if ((sib & 7) == 5 && mod == 0) {
			e->has_base = false;
			e->disp = (int32_t)imm(c, 4);
			return c->ok;
		}
		e->has_base = true;
		e->base = (uint8_t)((sib & 7) | (rex & 1) << 3);
	} else if (rm == 5 && mod == 0) {
		e->rip = true;
		e->disp = (int32_t)imm(c, 4);
		return c->ok;
	} else {
		e->has_base = true;
		e->base = (uint8_t)(rm | (rex & 1) << 3);
	}
	if (mod == 1)
		e->disp = (int32_t)imm(c, 1);
	else if (mod == 2)
		e->disp = (int32_t)imm(c, 4);
	return c->ok;
}

bool emul_decode(const uint8_t *code, size_t n, struct emul_insn *e)
{
	struct cursor c = { code, code + n, true };
	uint8_t b, rex = 0, regf;
	bool opsz16 = false, lock = false, is_reg, byte;
	int osz;

	memset(e, 0, sizeof(*e));
	for (;;) {
		b = next(&c);
		if (b == 0xf0) {
			lock = true;
			continue;
		}
		if (b == 0x2e || b == 0x3e || b == 0x26 || b == 0x36)
			continue; /* null segments in 64-bit mode */
		if (b == 0x66) {
			opsz16 = true;
			continue;
		}
		if (b == 0x64 || b == 0x65) {
			e->seg = b == 0x64 ? 4 : 5;
			continue;
		}
		break; /* f2/f3/67 and the rest: not a prefix we take */
	}
	if ((b & 0xf0) == 0x40) {
		rex = b;
		b = next(&c);
	}
	if (!c.ok)
		return false;
	osz = rex & 8 ? 8 : opsz16 ? 2 : 4;
	byte = false;
	if (b == 0x0f) {
		b = next(&c);
		switch (b) {
		case 0xb6: case 0xb7: case 0xbe: case 0xbf:
			e->op = EMU_LOAD;
			e->size = b & 1 ? 2 : 1;
			e->rsize = (uint8_t)osz;
			e->sext = b >= 0xbe;
			break;
		case 0xb0: case 0xb1:
			e->op = EMU_CMPXCHG;
			byte = b == 0xb0;
			break;
		case 0xc0: case 0xc1:
			e->op = EMU_XADD;
			byte = b == 0xc0;
			break;
		default:
			return false;
		}
		if (!modrm(&c, rex, e, &regf, &is_reg) || is_reg)
			return false;
		if (!e->size)
			e->size = e->rsize = (uint8_t)(byte ? 1 : osz);
		goto done;
	}
	if (b >= 0xb8 && b <= 0xbf && !opsz16) {
		/* mov $imm, %reg (a function's first instruction) */
		e->reg = (uint8_t)((b - 0xb8) | (rex & 1) << 3);
		e->size = e->rsize = (uint8_t)osz;
		e->imm = osz == 8 ? imm(&c, 8) : (int64_t)(uint32_t)imm(&c, 4);
		e->has_imm = true;
		e->len = (uint8_t)(c.p - code);
		e->op = EMU_LOAD;
		e->form = EF_IMM;
		return c.ok && !lock;
	}
	switch (b) {
	case 0x88: case 0x89:
		e->op = EMU_STORE;
		byte = b == 0x88;
		break;
	case 0x8a: case 0x8b:
		e->op = EMU_LOAD;
		byte = b == 0x8a;
		break;
	case 0x63:
		e->op = EMU_LOAD;
		e->size = 4;
		e->rsize = (uint8_t)osz;
		e->sext = osz == 8;
		if (opsz16)
			return false;
		break;
	case 0xc6: case 0xc7:
		e->op = EMU_STORE_IMM;
		byte = b == 0xc6;
		break;
	case 0x86: case 0x87:
		e->op = EMU_XCHG;
		byte = b == 0x86;
		break;
	case 0x00: case 0x01: case 0x08: case 0x09: case 0x20: case 0x21:
	case 0x28: case 0x29: case 0x30: case 0x31: case 0x38: case 0x39:
		e->op = EMU_ALU;
		e->alu = (uint8_t)(b >> 3);
		byte = !(b & 1);
		break;
	case 0x02: case 0x03: case 0x0a: case 0x0b: case 0x22: case 0x23:
	case 0x2a: case 0x2b: case 0x32: case 0x33: case 0x3a: case 0x3b:
		e->op = EMU_ALU_LOAD;
		e->alu = (uint8_t)(b >> 3);
		byte = !(b & 1);
		break;
	case 0x84: case 0x85:
		e->op = EMU_ALU;
		e->alu = EA_TEST;
		byte = b == 0x84;
		break;
	case 0x80: case 0x81: case 0x83:
		e->op = EMU_ALU;
		byte = b == 0x80;
		break;
	case 0xf6: case 0xf7:
		e->op = EMU_ALU;
		e->alu = EA_TEST;
		byte = b == 0xf6;
		break;
	case 0xfe: case 0xff:
		e->op = EMU_INC;
		byte = b == 0xfe;
		break;
	default:
		return false;
	}
	e->size = e->rsize = (uint8_t)(byte ? 1 : e->size ? e->size : osz);
	if (e->op == EMU_LOAD && b == 0x63)
		e->rsize = (uint8_t)osz;
	if (!modrm(&c, rex, e, &regf, &is_reg))
		return false;
	if (is_reg) {
		/* register-register: only the plain 32/64-bit mov, as at a
		 * function's entry, and test (glibc's free() starts with
		 * `test %rdi,%rdi`: race discovery's free hook, single-stepped
		 * 386 times in 6 runs of a small Rust program) */
		if ((b != 0x89 && b != 0x8b && b != 0x85) || osz == 2)
			return false;
		if (b != 0x85)
			e->op = b == 0x89 ? EMU_STORE : EMU_LOAD;
		e->len = (uint8_t)(c.p - code);
		e->form = EF_REG; /* base is rm */
		return !lock;
	}
	switch (b) {
	case 0x80: case 0x81: case 0x83:
		if (regf == 2 || regf == 3)
			return false; /* adc, sbb */
		e->alu = regf;
		e->has_imm = true;
		e->imm = imm(&c, b == 0x81 ? (osz == 2 ? 2 : 4) : 1);
		break;
	case 0xc6: case 0xc7:
		if (regf)
			return false;
		e->has_imm = true;
		e->imm = imm(&c, byte ? 1 : osz == 2 ? 2 : 4);
		break;
	case 0xf6: case 0xf7:
		if (regf)
			return false; /* not, neg, mul, div */
		e->has_imm = true;
		e->imm = imm(&c, byte ? 1 : osz == 2 ? 2 : 4);
		break;
	case 0xfe: case 0xff:
		if (regf > 1)
			return false; /* call, jmp, push */
		e->op = regf ? EMU_DEC : EMU_INC;
		break;
	}
done:
	if (!c.ok)
		return false;
	/* lock on what cannot be locked faults: the CPU's to do */
	if (lock && e->op != EMU_XCHG && e->op != EMU_CMPXCHG &&
	    e->op != EMU_XADD && e->op != EMU_INC && e->op != EMU_DEC &&
	    !(e->op == EMU_ALU && e->alu != EA_CMP && e->alu != EA_TEST))
		return false;
	/* an 8-bit register operand without REX: ah, ch, dh, bh */
	if ((e->op == EMU_LOAD ? e->rsize : e->size) == 1 && !rex &&
	    !e->has_imm && e->reg >= 4 && e->reg < 8) {
		e->high8 = true;
		e->reg -= 4;
	}
	e->len = (uint8_t)(c.p - code);
	return true;
}

/* ---- execution ----------------------------------------------------- */

uint64_t emul_addr(const struct emul_insn *e,
		   const struct user_regs_struct *r, uint64_t rip)
{
	struct user_regs_struct c = *r;
	uint64_t a = (uint64_t)(int64_t)e->disp;

	if (e->form != EF_MEM)
		return 0;
	if (e->rip)
		a += rip + e->len;
	if (e->has_base)
		a += *emul_reg(&c, e->base);
	if (e->has_index)
		a += *emul_reg(&c, e->index) * e->scale;
	if (e->seg == 4)
		a += r->fs_base;
	else if (e->seg == 5)
		a += r->gs_base;
	return a;
}

bool emul_reads(const struct emul_insn *e)
{
	if (e->form != EF_MEM)
		return false;
	return e->op != EMU_STORE && e->op != EMU_STORE_IMM;
}

bool emul_writes(const struct emul_insn *e)
{
	if (e->form != EF_MEM)
		return false;
	switch (e->op) {
	case EMU_STORE: case EMU_STORE_IMM: case EMU_XCHG: case EMU_CMPXCHG:
	case EMU_XADD: case EMU_INC: case EMU_DEC:
		return true;
	case EMU_ALU:
		return e->alu != EA_CMP && e->alu != EA_TEST;
	default:
		return false;
	}
}

static uint64_t get(struct user_regs_struct *r, int n, bool high8, int size)
{
	uint64_t v = *emul_reg(r, n);

	return high8 ? (v >> 8) & 0xff : v & mask(size);
}

/* As the CPU writes a register: 32 bits zero-extend, 8 and 16 merge. */
static void put(struct user_regs_struct *r, int n, bool high8, int size,
		uint64_t v)
{
	uint64_t *p = emul_reg(r, n);

	if (high8)
		*p = (*p & ~0xff00ull) | (v & 0xff) << 8;
	else if (size == 4)
		*p = v & 0xffffffffull;
	else if (size == 8)
		*p = v;
	else
		*p = (*p & ~mask(size)) | (v & mask(size));
}

/* ZF, SF, PF of a result. */
static uint64_t szp(uint64_t res, int size)
{
	uint64_t f = 0;

	res &= mask(size);
	if (!res)
		f |= F_ZF;
	if (res >> (size * 8 - 1) & 1)
		f |= F_SF;
	if (!(__builtin_popcount((unsigned)(res & 0xff)) & 1))
		f |= F_PF;
	return f;
}

/* a OP b, its flags in *flags (the arithmetic ones only). */
static uint64_t alu(int op, uint64_t a, uint64_t b, int size, uint64_t *flags)
{
	uint64_t m = mask(size), res, f;
	int top = size * 8 - 1;

	a &= m;
	b &= m;
	switch (op) {
	case EA_ADD:
		res = (a + b) & m;
		f = szp(res, size);
		if (res < a)
			f |= F_CF;
		if (((a ^ res) & (b ^ res)) >> top & 1)
			f |= F_OF;
		if ((a ^ b ^ res) & 0x10)
			f |= F_AF;
		break;
	case EA_SUB:
	case EA_CMP:
		res = (a - b) & m;
		f = szp(res, size);
		if (a < b)
			f |= F_CF;
		if (((a ^ b) & (a ^ res)) >> top & 1)
			f |= F_OF;
		if ((a ^ b ^ res) & 0x10)
			f |= F_AF;
		break;
	case EA_OR:
		res = a | b;
		f = szp(res, size);
		break;
	case EA_XOR:
		res = a ^ b;
		f = szp(res, size);
		break;
	default: /* and, test */
		res = a & b;
		f = szp(res, size);
		break;
	}
	*flags = f;
	return res;
}

static void set_flags(struct user_regs_struct *r, uint64_t f, uint64_t which)
{
	r->eflags = (r->eflags & ~which) | (f & which);
}

void emul_run(const struct emul_insn *e, struct user_regs_struct *r,
	      uint64_t *mem)
{
	int sz = e->size;
	uint64_t f, v, m = *mem & mask(sz);

	r->rip += e->len;
	if (e->form == EF_IMM) {
		put(r, e->reg, false, e->rsize, (uint64_t)e->imm);
		return;
	}
	if (e->form == EF_REG) {
		if (e->op == EMU_ALU) /* test */
			set_flags(r, szp(get(r, e->base, false, sz) &
					 get(r, e->reg, false, sz), sz),
				  F_ARITH);
		else if (e->op == EMU_LOAD)
			put(r, e->reg, false, sz, get(r, e->base, false, sz));
		else
			put(r, e->base, false, sz, get(r, e->reg, false, sz));
		return;
	}
	switch (e->op) {
	case EMU_LOAD:
		v = e->sext ? sext(m, sz) : m;
		put(r, e->reg, e->high8, e->rsize, v);
		break;
	case EMU_STORE:
		*mem = get(r, e->reg, e->high8, sz);
		break;
	case EMU_STORE_IMM:
		*mem = (uint64_t)e->imm & mask(sz);
		break;
	case EMU_XCHG:
		*mem = get(r, e->reg, e->high8, sz);
		put(r, e->reg, e->high8, sz, m);
		break;
	case EMU_CMPXCHG:
		v = get(r, 0, false, sz); /* the accumulator */
		alu(EA_CMP, v, m, sz, &f);
		set_flags(r, f, F_ARITH);
		if (v == m) {
			*mem = get(r, e->reg, e->high8, sz);
		} else {
			*mem = m; /* written back, as the CPU does */
			put(r, 0, false, sz, m);
		}
		break;
	case EMU_XADD:
		v = get(r, e->reg, e->high8, sz);
		*mem = alu(EA_ADD, m, v, sz, &f);
		set_flags(r, f, F_ARITH);
		put(r, e->reg, e->high8, sz, m);
		break;
	case EMU_ALU:
		v = e->has_imm ? (uint64_t)e->imm
			       : get(r, e->reg, e->high8, sz);
		*mem = alu(e->alu, m, v, sz, &f);
		set_flags(r, f, F_ARITH);
		if (e->alu == EA_CMP || e->alu == EA_TEST)
			*mem = m;
		break;
	case EMU_ALU_LOAD:
		v = get(r, e->reg, e->high8, sz);
		v = alu(e->alu, v, m, sz, &f);
		set_flags(r, f, F_ARITH);
		if (e->alu != EA_CMP && e->alu != EA_TEST)
			put(r, e->reg, e->high8, sz, v);
		break;
	case EMU_INC:
	case EMU_DEC:
		*mem = alu(e->op == EMU_INC ? EA_ADD : EA_SUB, m, 1, sz, &f);
		set_flags(r, f, F_ARITH & ~F_CF);
		break;
	}
}
