/*
 * Trampolines for the in-process agent's synchronisation points (see
 * tramp.h, and tracer/agent.c for the page and the code region).
 *
 * A slot, TRAMP_SLOT bytes in the process's code region beside the shared
 * page (both within 2 GiB of libc, so every distance below is a rel32):
 *
 *    0  jmp  *table[id](%rip)      the supervisor's word in the page:
 *                                  6 (log the call) or int3 (a stop)
 *    6  mov  %rax, SCR_RAX(%rip)   what the sequence changes, kept:
 *   13  mov  %r11, SCR_R11(%rip)   rax, r11 and the flags (lahf takes
 *   20  lahf                       SF ZF AF PF CF, seto OF)
 *   21  seto %al
 *   24  mov  %rax, SCR_FL(%rip)
 *   31  mov  CURSOR(%rip), %r11    the log's next free entry (an offset
 *   38  cmp  LIMIT(%rip), %r11      in the page: processes of the tree
 *   45  jae  fail                   may map it at other addresses)
 *   51  lea  page(%rip), %rax
 *   58  add  %rax, %r11
 *   61  movq $id, (%r11)           the entry: slot, rdi, rsi, return
 *   68  mov  %rdi, 8(%r11)         address
 *   72  mov  %rsi, 16(%r11)
 *   76  mov  (%rsp), %rax
 *   80  mov  %rax, 24(%r11)
 *   84  addq $32, CURSOR(%rip)     the commit: one instruction
 *   92  mov  QUANTUM(%rip), %rax   the point's quantum of virtual time,
 *   99  lock add %rax, NOW(%rip)   as a stop would advance it
 *  107  rax, r11, flags back (add $0x7f, %al sets OF; sahf the rest)
 *  131  jmp  disp
 *  136  fail: rax, r11, flags back
 *  160  int3                       the breakpoint, as without the agent
 *  161  disp: the displaced instructions, then jmp back past them
 *
 * Every register and flag is what it was at the function's entry when
 * the thread leaves the slot, by either way, and nothing is written below
 * the stack pointer: the program's state (and a state key) is the same as
 * at the int3 it replaces.  The log entry is written before its commit
 * and is idempotent: a thread stopped inside the sequence (a signal) is
 * put back at the slot's start with its registers (tramp_where), or past
 * the clock's advance, which the supervisor then makes itself.
 */
#include "tramp.h"
#include "disasm.h"

#include <capstone/capstone.h>
#include <string.h>

static csh handle;
static cs_insn *insn;

/* A capstone handle h with its instruction i, opened once (detail:
 * operands and groups too). */
static bool open_handle(csh *h, cs_insn **i, bool detail)
{
	if (*i)
		return true;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, h) != CS_ERR_OK)
		return false;
	if (detail)
		cs_option(*h, CS_OPT_DETAIL, CS_OPT_ON);
	*i = cs_malloc(*h);
	if (!*i) {
		cs_close(h);
		return false;
	}
	return true;
}

static bool open_capstone(void)
{
	return open_handle(&handle, &insn, true);
}

static bool in_group(const cs_detail *d, uint8_t g)
{
	for (int i = 0; i < d->groups_count; i++)
		if (d->groups[i] == g)
			return true;
	return false;
}

/* The direct target of a jump or call, or 0. */
static uint64_t direct_target(const cs_insn *ci)
{
	const cs_x86 *x = &ci->detail->x86;

	if (!in_group(ci->detail, CS_GRP_JUMP) &&
	    !in_group(ci->detail, CS_GRP_CALL))
		return 0;
	if (x->op_count == 1 && x->operands[0].type == X86_OP_IMM)
		return (uint64_t)x->operands[0].imm;
	return 0;
}

static bool movable(const cs_insn *ci, struct tramp_insn *ti, uint64_t vaddr)
{
	const cs_detail *d = ci->detail;
	const cs_x86 *x = &d->x86;
	const uint8_t *b = ci->bytes;

	ti->kind = TI_PLAIN;
	if (in_group(d, CS_GRP_CALL) || in_group(d, CS_GRP_RET) ||
	    in_group(d, CS_GRP_INT) || in_group(d, CS_GRP_IRET) ||
	    ci->id == X86_INS_SYSCALL || ci->id == X86_INS_SYSENTER ||
	    ci->id == X86_INS_INT3 || ci->id == X86_INS_UD2)
		return false;
	if (in_group(d, CS_GRP_JUMP)) {
		uint64_t t = direct_target(ci);

		if (!t)
			return false; /* indirect */
		ti->target = (int64_t)(t - vaddr);
		if (ci->id == X86_INS_JMP) {
			ti->kind = TI_JMP;
			return true;
		}
		/* jcc rel8 (0x70-0x7f) or rel32 (0f 80-8f); jrcxz and loop
		 * have no rel32 form */
		if (ci->size == 2 && b[0] >= 0x70 && b[0] <= 0x7f) {
			ti->cc = b[0] & 0xf;
		} else if (ci->size == 6 && b[0] == 0x0f && b[1] >= 0x80 &&
			   b[1] <= 0x8f) {
			ti->cc = b[1] & 0xf;
		} else {
			return false;
		}
		ti->kind = TI_JCC;
		return true;
	}
	for (int i = 0; i < x->op_count; i++)
		if (x->operands[i].type == X86_OP_MEM &&
		    x->operands[i].mem.base == X86_REG_RIP) {
			if (!x->encoding.disp_offset ||
			    x->encoding.disp_size != 4)
				return false;
			ti->kind = TI_RIPREL;
			ti->disp_at = x->encoding.disp_offset;
			ti->target = (int64_t)(ci->address + ci->size +
					       (uint64_t)x->disp - vaddr);
		}
	return true;
}

/*
 * The movable instructions at code's start (at vaddr) that cover want
 * bytes: at least want, or exactly when exact; none a jump with code of
 * the move after it, none a branch into the moved bytes past the first;
 * 16 bytes at most (struct bp keeps 16 original bytes).  Sets everything
 * in *out but ok.
 */
static bool plan_moved(const uint8_t *code, size_t size, uint64_t vaddr,
		       size_t want, bool exact, struct tramp_plan *out)
{
	size_t off = 0;

	memset(out, 0, sizeof(*out));
	if (size < want || !open_capstone())
		return false;
	while (off < want) {
		const uint8_t *c = code + off;
		size_t left = size - off;
		uint64_t a = vaddr + off;

		if (out->n == sizeof(out->insn) / sizeof(out->insn[0]) ||
		    !cs_disasm_iter(handle, &c, &left, &a, insn))
			return false;
		struct tramp_insn *ti = &out->insn[out->n];

		if (!movable(insn, ti, vaddr))
			return false;
		ti->off = (uint8_t)off;
		ti->len = (uint8_t)insn->size;
		off += insn->size;
		out->n++;
		if (ti->kind == TI_JMP && off < want)
			return false; /* what follows it is not its code */
	}
	if (off > 16 || (exact && off != want))
		return false;
	out->len = (uint8_t)off;
	memcpy(out->bytes, code, off);
	/* a jump inside the moved bytes: to them, past the entry, there
	 * would be half a jump (to the entry itself is the call again) */
	for (int i = 0; i < out->n; i++)
		if ((out->insn[i].kind == TI_JCC || out->insn[i].kind == TI_JMP) &&
		    out->insn[i].target > 0 && out->insn[i].target < (int64_t)off)
			return false;
	return true;
}

bool tramp_plan(const uint8_t *code, size_t size, uint64_t vaddr,
		struct tramp_plan *out)
{
	/* the instructions that make up the first 5 bytes */
	if (!plan_moved(code, size, vaddr, 5, false, out))
		return false;
	/* and from anywhere in the function: a linear sweep (glibc keeps no
	 * data in its text); an undecodable byte ends the plan */
	const uint8_t *c = code;
	size_t left = size;
	uint64_t a = vaddr;

	while (left) {
		if (!cs_disasm_iter(handle, &c, &left, &a, insn))
			return false;
		uint64_t t = direct_target(insn);

		if (t > vaddr && t < vaddr + out->len)
			return false;
	}
	out->ok = true;
	return true;
}

static bool fits(int64_t d)
{
	return d >= INT32_MIN && d <= INT32_MAX;
}

/* rel32 from the end of an instruction at pc of length len to target */
static bool rel32(uint8_t *at, uint64_t pc, size_t len, uint64_t target)
{
	int64_t d = (int64_t)(target - (pc + len));
	int32_t v = (int32_t)d;

	if (!fits(d))
		return false;
	memcpy(at, &v, 4);
	return true;
}

void tramp_jump(uint64_t site, uint64_t slot, uint8_t *out)
{
	int32_t v = (int32_t)(int64_t)(slot - (site + 5));

	out[0] = 0xe9;
	memcpy(out + 1, &v, 4);
}

/* The displaced instructions of plan pl (moved from site) at the slot's
 * TRAMP_DISP (slot_len bytes in all), then the jump back. */
static bool emit_moved(const struct tramp_plan *pl, int first,
		       uint64_t site, uint64_t slot, size_t k, size_t slot_len,
		       uint8_t *out)
{
	for (int i = first; i < pl->n; i++) {
		const struct tramp_insn *ti = &pl->insn[i];
		uint64_t pc = slot + k;

		if (k + 15 > slot_len - 5)
			return false;
		switch (ti->kind) {
		case TI_PLAIN:
			memcpy(out + k, pl->bytes + ti->off, ti->len);
			k += ti->len;
			break;
		case TI_RIPREL:
			memcpy(out + k, pl->bytes + ti->off, ti->len);
			if (!rel32(out + k + ti->disp_at, pc, ti->len,
				   site + (uint64_t)ti->target))
				return false;
			k += ti->len;
			break;
		case TI_JCC:
			out[k] = 0x0f;
			out[k + 1] = (uint8_t)(0x80 | ti->cc);
			if (!rel32(out + k + 2, pc, 6,
				   site + (uint64_t)ti->target))
				return false;
			k += 6;
			break;
		case TI_JMP:
			out[k] = 0xe9;
			if (!rel32(out + k + 1, pc, 5,
				   site + (uint64_t)ti->target))
				return false;
			k += 5;
			break;
		}
	}
	out[k] = 0xe9;
	return rel32(out + k + 1, slot + k, 5, site + pl->len);
}

static bool emit_displaced(const struct tramp_plan *pl, uint64_t site,
			   uint64_t slot, size_t slot_len, uint8_t *out)
{
	return emit_moved(pl, 0, site, slot, TRAMP_DISP, slot_len, out);
}

/* rax, r11 and the flags back from the page's scratch words, at offset r
 * of the slot at slot (24 bytes) */
static bool put_restore(uint8_t *out, uint64_t slot, uint64_t r,
			uint64_t page)
{
	static const uint8_t restore[24] = {
		0x48, 0x8b, 0x05, 0, 0, 0, 0,	    /* mov SCR_FL, %rax */
		0x04, 0x7f,			    /* add $0x7f, %al: OF */
		0x9e,				    /* sahf: SF ZF AF PF CF */
		0x48, 0x8b, 0x05, 0, 0, 0, 0,	    /* mov SCR_RAX, %rax */
		0x4c, 0x8b, 0x1d, 0, 0, 0, 0,	    /* mov SCR_R11, %r11 */
	};

	memcpy(out + r, restore, sizeof(restore));
	return rel32(out + r + 3, slot + r, 7, page + TRAMP_SCR_FL) &&
	       rel32(out + r + 13, slot + r + 10, 7, page + TRAMP_SCR_RAX) &&
	       rel32(out + r + 20, slot + r + 17, 7, page + TRAMP_SCR_R11);
}

bool tramp_emit(const struct tramp_plan *pl, uint64_t site, uint64_t slot,
		uint32_t id, uint64_t page, uint8_t *out)
{
	static const uint8_t head[107] = {
		0xff, 0x25, 0, 0, 0, 0,		    /* jmp *table[id] */
		0x48, 0x89, 0x05, 0, 0, 0, 0,	    /* mov %rax, SCR_RAX */
		0x4c, 0x89, 0x1d, 0, 0, 0, 0,	    /* mov %r11, SCR_R11 */
		0x9f,				    /* lahf */
		0x0f, 0x90, 0xc0,		    /* seto %al */
		0x48, 0x89, 0x05, 0, 0, 0, 0,	    /* mov %rax, SCR_FL */
		0x4c, 0x8b, 0x1d, 0, 0, 0, 0,	    /* mov CURSOR, %r11 */
		0x4c, 0x3b, 0x1d, 0, 0, 0, 0,	    /* cmp LIMIT, %r11 */
		0x0f, 0x83, 0, 0, 0, 0,		    /* jae fail */
		0x48, 0x8d, 0x05, 0, 0, 0, 0,	    /* lea page, %rax */
		0x49, 0x01, 0xc3,		    /* add %rax, %r11 */
		0x49, 0xc7, 0x03, 0, 0, 0, 0,	    /* movq $id, (%r11) */
		0x49, 0x89, 0x7b, 0x08,		    /* mov %rdi, 8(%r11) */
		0x49, 0x89, 0x73, 0x10,		    /* mov %rsi, 16(%r11) */
		0x48, 0x8b, 0x04, 0x24,		    /* mov (%rsp), %rax */
		0x49, 0x89, 0x43, 0x18,		    /* mov %rax, 24(%r11) */
		0x48, 0x83, 0x05, 0, 0, 0, 0, 0x20, /* addq $32, CURSOR */
		0x48, 0x8b, 0x05, 0, 0, 0, 0,	    /* mov QUANTUM, %rax */
		0xf0, 0x48, 0x01, 0x05, 0, 0, 0, 0, /* lock add %rax, NOW */
	};
	if (!pl->ok)
		return false;
	memset(out, 0xcc, TRAMP_SLOT);
	memcpy(out, head, sizeof(head));
	out[131] = 0xe9; /* jmp disp */
	/* rip-relative operands count from their instruction's end (the
	 * addq's imm8 follows its disp32) */
	if (!rel32(out + 2, slot + 0, 6, page + TRAMP_TABLE + 8ull * id) ||
	    !rel32(out + 9, slot + 6, 7, page + TRAMP_SCR_RAX) ||
	    !rel32(out + 16, slot + 13, 7, page + TRAMP_SCR_R11) ||
	    !rel32(out + 27, slot + 24, 7, page + TRAMP_SCR_FL) ||
	    !rel32(out + 34, slot + 31, 7, page + TRAMP_CURSOR) ||
	    !rel32(out + 41, slot + 38, 7, page + TRAMP_LIMIT) ||
	    !rel32(out + 47, slot + 45, 6, slot + TRAMP_FAIL) ||
	    !rel32(out + 54, slot + 51, 7, page) ||
	    !rel32(out + 87, slot + 84, 8, page + TRAMP_CURSOR) ||
	    !rel32(out + 95, slot + 92, 7, page + TRAMP_QUANTUM) ||
	    !rel32(out + 103, slot + 99, 8, page + TRAMP_NOW) ||
	    !rel32(out + 132, slot + 131, 5, slot + TRAMP_DISP) ||
	    !put_restore(out, slot, 107, page) ||
	    !put_restore(out, slot, TRAMP_FAIL, page))
		return false;
	memcpy(out + 64, &id, 4);
	return emit_displaced(pl, site, slot, TRAMP_SLOT, out);
}

bool tramp_emit_free(const struct tramp_plan *pl, uint64_t site, uint64_t slot,
		     uint32_t id, uint64_t page, uint8_t *out)
{
	/* after the entry's rdi (68): its chunk header where rdi is a
	 * block's address (nonzero, 16-aligned; else the word is left as
	 * it is, and the supervisor knows rdi), the return address, the
	 * commit; no clock (an observation is no step) */
	static const uint8_t mid[35] = {
		0x48, 0x85, 0xff,		    /* test %rdi, %rdi */
		0x74, 0x0e,			    /* jz 91 */
		0x40, 0xf6, 0xc7, 0x0f,		    /* test $15, %dil */
		0x75, 0x08,			    /* jnz 91 */
		0x48, 0x8b, 0x47, 0xf8,		    /* mov -8(%rdi), %rax */
		0x49, 0x89, 0x43, 0x10,		    /* mov %rax, 16(%r11) */
		0x48, 0x8b, 0x04, 0x24,		    /* 91: mov (%rsp), %rax */
		0x49, 0x89, 0x43, 0x18,		    /* mov %rax, 24(%r11) */
		0x48, 0x83, 0x05, 0, 0, 0, 0, 0x20, /* 99: addq $32, CURSOR */
	};

	if (!tramp_emit(pl, site, slot, id, page, out))
		return false;
	memcpy(out + 72, mid, sizeof(mid));
	return rel32(out + 102, slot + 99, 8, page + TRAMP_CURSOR);
}

bool tramp_fix_free(uint64_t off, struct tramp_fix *f)
{
	/* a call's, but its commit is at 99 and it has no clock */
	if (off > 84 && off <= 99) {
		memset(f, 0, sizeof(*f));
		f->regs = TFIX_ALL; /* not committed: it logs again */
		return true;
	}
	return tramp_fix(false, off, f);
}

bool tramp_fix(bool access, uint64_t off, struct tramp_fix *f)
{
	memset(f, 0, sizeof(*f));
	if (access) {
		/* see tramp_emit_access's layout; the stub's jump has
		 * changed nothing yet */
		if (off == 0 || off == 7 || off == 14 || off == TRAMP_ASTUB)
			return true;
		if (off > 14 && off <= 31)
			f->regs = TFIX_R11;
		else if (off == 32 || off == 35)
			f->regs = TFIX_R11 | TFIX_RAX;
		else if (off >= 42 && off <= 96)
			f->regs = TFIX_ALL;
		else if (off >= 104 && off <= 128) {
			f->regs = TFIX_ALL;
			f->resume = TRAMP_DISP;
		} else if (off >= TRAMP_FAIL && off < TRAMP_INT3)
			f->regs = TFIX_ALL;
		else
			return false;
		return true;
	}
	if (off == 6 || off == 13 || off == 20)
		return true;
	if (off == 21 || off == 24)
		f->regs = TFIX_RAX;
	else if (off >= 31 && off <= 84)
		f->regs = TFIX_ALL;
	else if (off == 92 || off == 99) {
		/* committed, the clock not yet advanced */
		f->regs = TFIX_ALL;
		f->clock = true;
		f->resume = TRAMP_DISP;
	} else if (off >= 107 && off <= 131) {
		f->regs = TFIX_ALL;
		f->resume = TRAMP_DISP;
	} else if (off >= TRAMP_FAIL && off < TRAMP_INT3)
		f->regs = TFIX_ALL;
	else
		return false;
	return true;
}

bool tramp_plan_one(const uint8_t *code, size_t len, uint64_t vaddr,
		    struct tramp_plan *out)
{
	/* an instruction of 5 bytes or more covers them alone */
	out->ok = plan_moved(code, len, vaddr, 5, false, out) && out->n == 1 &&
		  (out->insn[0].kind == TI_PLAIN ||
		   out->insn[0].kind == TI_RIPREL);
	return out->ok;
}

bool tramp_plan_span(const uint8_t *code, size_t size, uint64_t vaddr,
		     size_t len, struct tramp_plan *out)
{
	out->ok = len >= 5 && plan_moved(code, size, vaddr, len, true, out);
	return out->ok;
}

/* lea m, %r11 (movabs for an absolute address), nop-padded to 10 bytes */
static bool ea_code(const struct disasm_mem *m, uint8_t *out)
{
	int base = m->base ? m->base - DISASM_REG_RAX : -1;
	int index = m->index ? m->index - DISASM_REG_RAX : -1;
	int32_t d = (int32_t)m->disp;
	size_t n = 0;

	if (m->seg || m->addr32 || m->base >= DISASM_REG_RIP ||
	    m->index >= DISASM_REG_RIP || index == 4)
		return false;
	if (base < 0 && index < 0) {
		out[0] = 0x49; /* movabs $disp, %r11 */
		out[1] = 0xbb;
		memcpy(out + 2, &m->disp, 8);
		return true;
	}
	if ((int64_t)d != m->disp)
		return false;
	out[n++] = (uint8_t)(0x4c | (index >= 8 ? 2 : 0) |
			     (base >= 8 ? 1 : 0));
	out[n++] = 0x8d;
	if (index < 0 && (base & 7) != 4) {
		out[n++] = (uint8_t)(0x80 | 3 << 3 | (base & 7));
	} else {
		int ss = m->scale == 8 ? 3 : m->scale == 4 ? 2
				: m->scale == 2 ? 1 : 0;

		/* no base: mod 00 with SIB base 101 is disp32 alone */
		out[n++] = (uint8_t)((base < 0 ? 0x00 : 0x80) | 3 << 3 | 4);
		out[n++] = (uint8_t)(ss << 6 | (index < 0 ? 4 : index & 7) << 3 |
				     (base < 0 ? 5 : base & 7));
	}
	memcpy(out + n, &d, 4);
	n += 4;
	if (n == 7) {
		static const uint8_t nop3[3] = { 0x0f, 0x1f, 0x00 };

		memcpy(out + n, nop3, 3);
	} else {
		out[n] = 0x66;
		out[n + 1] = 0x90;
	}
	return true;
}

/*
 * An access slot (offsets in decimal):
 *
 *    0  mov  %rax, SCR_RAX(%rip)
 *    7  mov  %r11, SCR_R11(%rip)
 *   14  lea  <the operand>, %r11      (or movabs; nops to 24)
 *   24  mov  %r11, SCR_EA(%rip)
 *   31  lahf
 *   32  seto %al
 *   35  mov  %rax, SCR_FL(%rip)
 *   42  mov  CURSOR(%rip), %r11
 *   49  cmp  LIMIT(%rip), %r11
 *   56  jae  fail
 *   62  lea  page(%rip), %rax
 *   69  add  %rax, %r11
 *   72  movabs $site|TRAMP_ACCESS, %rax
 *   82  mov  %rax, (%r11)
 *   85  mov  SCR_EA(%rip), %rax
 *   92  mov  %rax, 8(%r11)
 *   96  addq $32, CURSOR(%rip)        the commit
 *  104  rax, r11, flags back
 *  128  jmp  disp
 *  136  fail: rax, r11, flags back
 *  160  int3
 *  161  disp: the instruction, jmp back
 *
 * As a call's slot, it keeps every register and flag and writes nothing
 * below the stack pointer; it reads the operand's registers before it
 * changes any.
 */
bool tramp_emit_access(const struct tramp_plan *pl, const struct disasm_mem *m,
		       uint64_t site, uint64_t slot, uint64_t page,
		       uint8_t *out)
{
	static const uint8_t head[104] = {
		0x48, 0x89, 0x05, 0, 0, 0, 0,	    /* mov %rax, SCR_RAX */
		0x4c, 0x89, 0x1d, 0, 0, 0, 0,	    /* mov %r11, SCR_R11 */
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0,	    /* lea m, %r11 */
		0x4c, 0x89, 0x1d, 0, 0, 0, 0,	    /* mov %r11, SCR_EA */
		0x9f,				    /* lahf */
		0x0f, 0x90, 0xc0,		    /* seto %al */
		0x48, 0x89, 0x05, 0, 0, 0, 0,	    /* mov %rax, SCR_FL */
		0x4c, 0x8b, 0x1d, 0, 0, 0, 0,	    /* mov CURSOR, %r11 */
		0x4c, 0x3b, 0x1d, 0, 0, 0, 0,	    /* cmp LIMIT, %r11 */
		0x0f, 0x83, 0, 0, 0, 0,		    /* jae fail */
		0x48, 0x8d, 0x05, 0, 0, 0, 0,	    /* lea page, %rax */
		0x49, 0x01, 0xc3,		    /* add %rax, %r11 */
		0x48, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, /* movabs $site, %rax */
		0x49, 0x89, 0x03,		    /* mov %rax, (%r11) */
		0x48, 0x8b, 0x05, 0, 0, 0, 0,	    /* mov SCR_EA, %rax */
		0x49, 0x89, 0x43, 0x08,		    /* mov %rax, 8(%r11) */
		0x48, 0x83, 0x05, 0, 0, 0, 0, 0x20, /* addq $32, CURSOR */
	};
	uint64_t tag = site | TRAMP_ACCESS, disp = slot + TRAMP_DISP;

	if (!pl->ok || pl->len > 16)
		return false;
	memset(out, 0xcc, TRAMP_ASLOT);
	memcpy(out, head, sizeof(head));
	if (!ea_code(m, out + 14))
		return false;
	memcpy(out + TRAMP_ASITE, &tag, 8);
	/* the site's way in: jmp *0(%rip), the word right after it */
	static const uint8_t stub[6] = { 0xff, 0x25, 0, 0, 0, 0 };

	memcpy(out + TRAMP_ASTUB, stub, sizeof(stub));
	memcpy(out + TRAMP_AWORD, &slot, 8);
	out[128] = 0xe9; /* jmp disp */
	if (!rel32(out + 3, slot + 0, 7, page + TRAMP_SCR_RAX) ||
	    !rel32(out + 10, slot + 7, 7, page + TRAMP_SCR_R11) ||
	    !rel32(out + 27, slot + 24, 7, page + TRAMP_SCR_EA) ||
	    !rel32(out + 38, slot + 35, 7, page + TRAMP_SCR_FL) ||
	    !rel32(out + 45, slot + 42, 7, page + TRAMP_CURSOR) ||
	    !rel32(out + 52, slot + 49, 7, page + TRAMP_LIMIT) ||
	    !rel32(out + 58, slot + 56, 6, slot + TRAMP_FAIL) ||
	    !rel32(out + 65, slot + 62, 7, page) ||
	    !rel32(out + 88, slot + 85, 7, page + TRAMP_SCR_EA) ||
	    !rel32(out + 99, slot + 96, 8, page + TRAMP_CURSOR) ||
	    !rel32(out + 129, slot + 128, 5, disp) ||
	    !put_restore(out, slot, 104, page) ||
	    !put_restore(out, slot, TRAMP_FAIL, page))
		return false;
	return emit_displaced(pl, site, slot, TRAMP_ASTUB, out);
}

bool tramp_unmove(const uint8_t *orig, size_t len, uint64_t site,
		  uint64_t off, uint64_t *pc)
{
	struct tramp_insn ti;
	size_t o = 0;
	uint64_t k = TRAMP_DISP;

	if (off < TRAMP_DISP || !open_capstone())
		return false;
	while (o < 5) {
		const uint8_t *c = orig + o;
		size_t left = len - o;
		uint64_t a = site + o;

		if (o >= len || !cs_disasm_iter(handle, &c, &left, &a, insn))
			return false;
		memset(&ti, 0, sizeof(ti));
		if (!movable(insn, &ti, site))
			return false;
		if (off == k) {
			*pc = site + o;
			return true;
		}
		k += ti.kind == TI_JCC ? 6 : ti.kind == TI_JMP ? 5 : insn->size;
		o += insn->size;
	}
	if (off != k)
		return false;
	*pc = site + o; /* the jump back */
	return true;
}

/* ---- futex wakes taken in the program (tramp.h) ---- */

const uint8_t tramp_futex_moved[TRAMP_FUTEX_KINDS][5] = {
	[TRAMP_FUTEX_GLIBC] = { 0xb8, 0xca, 0x00, 0x00, 0x00 },
	[TRAMP_FUTEX_SYSCALL] = { 0x4c, 0x8b, 0x4c, 0x24, 0x08 },
};

static csh fast; /* no detail: the sweeps want lengths and ids */
static cs_insn *fi;

static bool open_fast(void)
{
	return open_handle(&fast, &fi, false);
}

bool tramp_futex_site_at(const uint8_t *b, int kind)
{
	return kind >= 0 && kind < TRAMP_FUTEX_KINDS &&
	       !memcmp(b, tramp_futex_moved[kind], 5) && b[5] == 0x0f &&
	       b[6] == 0x05;
}

/* A sweep from from (code[0..size) at vaddr) meets site as a whole
 * instruction, a `mov`, with a `syscall` right after it. */
static bool whole_site(const uint8_t *code, size_t size, uint64_t vaddr,
		       uint64_t from, uint64_t site)
{
	if (from < vaddr || from > site || site - from > 16384 ||
	    site + TRAMP_FUTEX_LEN > vaddr + size)
		return false;
	const uint8_t *c = code + (from - vaddr);
	size_t left = size - (from - vaddr);
	uint64_t a = from;

	while (a < site && cs_disasm_iter(fast, &c, &left, &a, fi))
		;
	return a == site && cs_disasm_iter(fast, &c, &left, &a, fi) &&
	       fi->id == X86_INS_MOV && a == site + 5 &&
	       cs_disasm_iter(fast, &c, &left, &a, fi) &&
	       fi->id == X86_INS_SYSCALL;
}

bool tramp_futex_syscall_site(const uint8_t *code, size_t size,
			      uint64_t vaddr, uint64_t *site)
{
	/* glibc's syscall(): its arguments moved down, the seventh from
	 * the stack into r9, then the syscall */
	for (size_t o = 0; o + TRAMP_FUTEX_LEN <= size && o < 64; o++)
		if (tramp_futex_site_at(code + o, TRAMP_FUTEX_SYSCALL)) {
			*site = vaddr + o;
			return open_fast() &&
			       whole_site(code, size, vaddr, vaddr, *site);
		}
	return false;
}

int tramp_futex_sites(const uint8_t *code, size_t size, uint64_t vaddr,
		      const uint64_t *starts, size_t n, uint64_t *out, int max)
{
	int found = 0;
	size_t at = 0;

	if (!open_fast())
		return 0;
	while (found < max && at + TRAMP_FUTEX_LEN <= size) {
		/* (memchr of the number's byte, the mov's second: glibc's
		 * memmem took longer) */
		const uint8_t *h = memchr(code + at + 1, 0xca,
					  size - at - TRAMP_FUTEX_LEN + 1);

		if (!h)
			break;
		h--;
		if (!tramp_futex_site_at(h, TRAMP_FUTEX_GLIBC)) {
			at = (size_t)(h - code) + 1;
			continue;
		}
		size_t off = (size_t)(h - code);
		uint64_t site = vaddr + off;

		at = off + 1;
		/* the nearest function start at or before it, in this
		 * section and not too far (glibc keeps no data in its
		 * text: a sweep from a start meets every instruction) */
		size_t lo = 0, hi = n;

		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (starts[mid] <= site)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (!lo || !whole_site(code, size, vaddr, starts[lo - 1], site))
			continue;
		out[found++] = site;
		at = off + TRAMP_FUTEX_LEN;
	}
	return found;
}

/* a small assembler: bytes at out[k], the code at base */
struct fasm {
	uint8_t *out;
	size_t k;
	uint64_t base;
	bool ok;
};

static void fput(struct fasm *a, const uint8_t *b, size_t n)
{
	memcpy(a->out + a->k, b, n);
	a->k += n;
}

/* an instruction whose rel32 is at offset d of its n bytes, to target */
static void frel(struct fasm *a, const uint8_t *b, size_t n, size_t d,
		 uint64_t target)
{
	size_t at = a->k;

	fput(a, b, n);
	a->ok &= rel32(a->out + at + d, a->base + at, n, target);
}

/* the offsets tramp_fix_futex knows (set by the first emission) */
static struct {
	bool set;
	uint16_t save0, saved, clocked, committed, end;
} fl;

bool tramp_emit_futex(uint64_t site, int kind, uint64_t slot, uint32_t id,
		      uint64_t page, uint8_t *out)
{
	struct fasm a = { out, 0, slot, true };
	size_t jfail[6];
	int nfail = 0;
	uint64_t next = site + TRAMP_FUTEX_LEN;
	uint32_t tag = id | (uint32_t)TRAMP_FUTEX;

	if (kind < 0 || kind >= TRAMP_FUTEX_KINDS)
		return false;
	memset(out, 0xcc, TRAMP_FSLOT);
	frel(&a, (const uint8_t[]){ 0xff, 0x25, 0, 0, 0, 0 }, 6, 2,
	     page + TRAMP_TABLE + 8ull * id);
	/* the moved instruction first (a load of a register the sequence
	 * does not save: doing it again from the site changes nothing) */
	fput(&a, tramp_futex_moved[kind], 5);
	uint16_t save0 = (uint16_t)a.k;
	frel(&a, (const uint8_t[]){ 0x48, 0x89, 0x05, 0, 0, 0, 0 }, 7, 3,
	     page + TRAMP_SCR_RAX);
	frel(&a, (const uint8_t[]){ 0x4c, 0x89, 0x1d, 0, 0, 0, 0 }, 7, 3,
	     page + TRAMP_SCR_R11);
	fput(&a, (const uint8_t[]){ 0x9f, 0x0f, 0x90, 0xc0 }, 4); /* lahf; seto %al */
	frel(&a, (const uint8_t[]){ 0x48, 0x89, 0x05, 0, 0, 0, 0 }, 7, 3,
	     page + TRAMP_SCR_FL);
	uint16_t saved = (uint16_t)a.k;
	/* (jcc rel32 to fail: patched below) */
#define JFAIL(cc)                                                              \
	do {                                                                   \
		jfail[nfail++] = a.k;                                          \
		fput(&a, (const uint8_t[]){ 0x0f, (cc), 0, 0, 0, 0 }, 6);      \
	} while (0)
	/* cmpl $SYS_futex, SCR_RAX (rax itself holds the flags now) */
	frel(&a, (const uint8_t[]){ 0x81, 0x3d, 0, 0, 0, 0, 0xca, 0, 0, 0 }, 10,
	     2, page + TRAMP_SCR_RAX);
	JFAIL(0x85); /* jne */
	fput(&a, (const uint8_t[]){ 0x81, 0xfe, 0x81, 0, 0, 0 }, 6); /* cmp $0x81, %esi */
	JFAIL(0x85);						     /* jne */
	fput(&a, (const uint8_t[]){ 0x85, 0xd2 }, 2);		     /* test %edx, %edx */
	JFAIL(0x8e);						     /* jle */
	/* a jump past the stop's way at TRAMP_FSTOP, to the second unit */
	frel(&a, (const uint8_t[]){ 0xe9, 0, 0, 0, 0 }, 5, 1, slot + TRAMP_SLOT);
	if (a.k > TRAMP_FSTOP - 24)
		return false;
	a.k = TRAMP_FSTOP;
	fput(&a, tramp_futex_moved[kind], 5);
	frel(&a, (const uint8_t[]){ 0xe9, 0, 0, 0, 0 }, 5, 1, site + 5);
	a.k = TRAMP_SLOT;
	fput(&a, (const uint8_t[]){ 0x31, 0xc0 }, 2); /* xor %eax, %eax */
	for (int i = 0; i < TRAMP_NWAIT; i++) {
		frel(&a, (const uint8_t[]){ 0x48, 0x3b, 0x3d, 0, 0, 0, 0 }, 7,
		     3, page + TRAMP_WADDR + 16ull * (uint64_t)i);
		fput(&a, (const uint8_t[]){ 0x75, 0x07 }, 2);
		frel(&a, (const uint8_t[]){ 0x48, 0x8b, 0x05, 0, 0, 0, 0 }, 7,
		     3, page + TRAMP_WADDR + 16ull * (uint64_t)i + 8);
	}
	fput(&a, (const uint8_t[]){ 0x48, 0x83, 0xf8, 0x01 }, 4); /* cmp $1, %rax */
	JFAIL(0x87);						  /* ja */
	frel(&a, (const uint8_t[]){ 0x48, 0x89, 0x05, 0, 0, 0, 0 }, 7, 3,
	     page + TRAMP_SCR_EA);
	frel(&a, (const uint8_t[]){ 0x4c, 0x8b, 0x1d, 0, 0, 0, 0 }, 7, 3,
	     page + TRAMP_CURSOR);
	frel(&a, (const uint8_t[]){ 0x4c, 0x3b, 0x1d, 0, 0, 0, 0 }, 7, 3,
	     page + TRAMP_LIMIT);
	JFAIL(0x83); /* jae */
	frel(&a, (const uint8_t[]){ 0x48, 0x8d, 0x05, 0, 0, 0, 0 }, 7, 3, page);
	fput(&a, (const uint8_t[]){ 0x49, 0x01, 0xc3 }, 3);	    /* add %rax, %r11 */
	fput(&a, (const uint8_t[]){ 0x49, 0x89, 0x7b, 0x08 }, 4); /* rdi */
	fput(&a, (const uint8_t[]){ 0x49, 0x89, 0x73, 0x10 }, 4); /* rsi */
	fput(&a, (const uint8_t[]){ 0x49, 0x89, 0x53, 0x18 }, 4); /* rdx */
	frel(&a, (const uint8_t[]){ 0x48, 0x8b, 0x05, 0, 0, 0, 0 }, 7, 3,
	     page + TRAMP_SCR_EA);
	fput(&a, (const uint8_t[]){ 0x48, 0xc1, 0xe0, 0x20 }, 4); /* shl $32 */
	fput(&a, (const uint8_t[]){ 0x48, 0x0d }, 2);		    /* or $tag */
	fput(&a, (const uint8_t *)&tag, 4);
	fput(&a, (const uint8_t[]){ 0x49, 0x89, 0x03 }, 3); /* mov %rax, (%r11) */
	/* the cursor after the entry, for the commit; the log closes there */
	frel(&a, (const uint8_t[]){ 0x48, 0x8b, 0x05, 0, 0, 0, 0 }, 7, 3,
	     page + TRAMP_CURSOR);
	fput(&a, (const uint8_t[]){ 0x48, 0x83, 0xc0, 0x20 }, 4); /* add $32 */
	frel(&a, (const uint8_t[]){ 0x48, 0x89, 0x05, 0, 0, 0, 0 }, 7, 3,
	     page + TRAMP_SCR_NEW);
	/* a wake of somebody closes the log there (a wake of nobody changes
	 * no thread's state) */
	frel(&a, (const uint8_t[]){ 0x48, 0x83, 0x3d, 0, 0, 0, 0, 0 }, 8, 3,
	     page + TRAMP_SCR_EA);			  /* cmpq $0, SCR_EA */
	fput(&a, (const uint8_t[]){ 0x74, 0x07 }, 2);	  /* je +7 */
	frel(&a, (const uint8_t[]){ 0x48, 0x89, 0x05, 0, 0, 0, 0 }, 7, 3,
	     page + TRAMP_LIMIT);
	/* the clock, as the stop would advance it */
	frel(&a, (const uint8_t[]){ 0x48, 0x8b, 0x05, 0, 0, 0, 0 }, 7, 3,
	     page + TRAMP_QUANTUM);
	frel(&a, (const uint8_t[]){ 0xf0, 0x48, 0x01, 0x05, 0, 0, 0, 0 }, 8, 4,
	     page + TRAMP_NOW);
	uint16_t clocked = (uint16_t)a.k;
	/* r11 as the syscall instruction leaves it: the flags, that is
	 * IF, bit 1 and the arithmetic ones (a user program's DF, AC and
	 * TF are clear at a libc call); nothing written to memory (the
	 * stack is in state keys) */
	frel(&a, (const uint8_t[]){ 0x4c, 0x8b, 0x1d, 0, 0, 0, 0 }, 7, 3,
	     page + TRAMP_SCR_FL);			     /* mov SCR_FL, %r11 */
	fput(&a, (const uint8_t[]){ 0x4c, 0x89, 0xd8,	     /* mov %r11, %rax */
				    0x49, 0xc1, 0xeb, 0x08,   /* shr $8, %r11 */
				    0x41, 0x81, 0xe3, 0xd5, 0, 0, 0, /* and $0xd5 */
				    0x83, 0xe0, 0x01,	      /* and $1, %eax */
				    0xc1, 0xe0, 0x0b,	      /* shl $11, %eax */
				    0x49, 0x09, 0xc3,	      /* or %rax, %r11 */
				    0x41, 0x81, 0xcb, 0x02, 0x02, 0, 0 },
	     30);					      /* or $0x202 */
	/* the flags back; rax the answer */
	frel(&a, (const uint8_t[]){ 0x48, 0x8b, 0x05, 0, 0, 0, 0 }, 7, 3,
	     page + TRAMP_SCR_FL);
	fput(&a, (const uint8_t[]){ 0x04, 0x7f, 0x9e }, 3); /* add $0x7f,%al; sahf */
	frel(&a, (const uint8_t[]){ 0x48, 0x8b, 0x05, 0, 0, 0, 0 }, 7, 3,
	     page + TRAMP_SCR_EA);
	/* the commit: two movs, no flag changed (rcx is the syscall's) */
	frel(&a, (const uint8_t[]){ 0x48, 0x8b, 0x0d, 0, 0, 0, 0 }, 7, 3,
	     page + TRAMP_SCR_NEW);
	frel(&a, (const uint8_t[]){ 0x48, 0x89, 0x0d, 0, 0, 0, 0 }, 7, 3,
	     page + TRAMP_CURSOR);
	uint16_t committed = (uint16_t)a.k;
	frel(&a, (const uint8_t[]){ 0x48, 0x8d, 0x0d, 0, 0, 0, 0 }, 7, 3, next);
	frel(&a, (const uint8_t[]){ 0xe9, 0, 0, 0, 0 }, 5, 1, next);
	uint16_t end = (uint16_t)a.k;
	/* fail: rax, r11, flags back, then on into the way to the stop */
	uint16_t fail = TRAMP_FSTOP - 24;

	for (int i = 0; i < nfail; i++)
		a.ok &= rel32(out + jfail[i] + 2, slot + jfail[i], 6, slot + fail);
	if (!a.ok || end > TRAMP_FSLOT || !put_restore(out, slot, fail, page))
		return false;
	if (!fl.set) {
		fl.save0 = save0;
		fl.saved = saved;
		fl.clocked = clocked;
		fl.committed = committed;
		fl.end = end;
		fl.set = true;
	}
#undef JFAIL
	return true;
}

bool tramp_fix_futex(uint64_t off, struct tramp_ffix *f)
{
	memset(f, 0, sizeof(*f));
	if (!fl.set || off >= fl.end)
		return false;
	/* nothing of the slot's own changed yet (the moved instruction
	 * runs again from the site), or the way to the stop; then lahf and
	 * seto have changed rax */
	if (off == 0 || off == TRAMP_FAST || off == fl.save0 ||
	    off == fl.save0 + 7u || off == fl.save0 + 14u ||
	    (off >= TRAMP_FSTOP && off < TRAMP_SLOT))
		return true;
	if (off == fl.save0 + 15u || off == fl.save0 + 18u) {
		f->regs = TFIX_RAX;
		return true;
	}
	if (off < fl.saved)
		return false;
	if (off >= fl.committed) {
		f->past = true; /* logged: rax, r11, flags are the answer */
		return true;
	}
	/* before the commit (or failing): all back, from the site again */
	f->regs = TFIX_ALL;
	f->unclock = off >= fl.clocked;
	return true;
}

/* ---- rdtsc answered in the program (tramp.h) ---- */

bool tramp_emit_tsc(const struct tramp_plan *pl, bool rdtscp, uint64_t site,
		    uint64_t slot, uint64_t page, uint8_t *out)
{
	static const uint8_t seq[TRAMP_TDISP] = {
		0x9f,			      /* lahf */
		0x0f, 0x90, 0xc0,	      /* seto %al */
		0x89, 0xc2,		      /* mov %eax, %edx: the flags */
		0x48, 0x8b, 0x05, 0, 0, 0, 0, /* mov QUANTUM(page), %rax */
		0xf0, 0x48, 0x0f, 0xc1, 0x05, 0, 0, 0, 0,
					      /* lock xadd %rax, NOW(page) */
		0xf0, 0x48, 0xff, 0x05, 0, 0, 0, 0, /* lock incq READS(page) */
		0x48, 0x8d, 0x04, 0x40,	      /* lea (%rax,%rax,2), %rax */
		0x48, 0x92,		      /* xchg %rax, %rdx */
		0x04, 0x7f,		      /* add $0x7f, %al: OF */
		0x9e,			      /* sahf: SF ZF AF PF CF */
		0x89, 0xd0,		      /* mov %edx, %eax: the low half */
		0xc4, 0xe3, 0xfb, 0xf0, 0xd2, 0x20, /* rorx $32, %rdx, %rdx */
		0x89, 0xd2,		      /* mov %edx, %edx: the high half */
		0x0f, 0x1f, 0x44, 0x00, 0x00, /* nop (rdtscp: mov $0, %ecx) */
	};
	static const uint8_t ecx0[5] = { 0xb9, 0, 0, 0, 0 };

	if (!pl->ok || pl->n < 1 || pl->insn[0].len != (rdtscp ? 3 : 2) ||
	    pl->len < 5)
		return false;
	memset(out, 0xcc, TRAMP_TSLOT);
	memcpy(out, seq, sizeof(seq));
	if (rdtscp)
		memcpy(out + TRAMP_TDISP - 5, ecx0, sizeof(ecx0));
	if (!rel32(out + 9, slot + 6, 7, page + TRAMP_QUANTUM) ||
	    !rel32(out + 18, slot + 13, 9, page + TRAMP_NOW) ||
	    !rel32(out + 26, slot + 22, 8, page + TRAMP_READS))
		return false;
	return emit_moved(pl, 1, site, slot, TRAMP_TDISP, TRAMP_TSLOT, out);
}

bool tramp_tsc_unmove(const struct tramp_plan *pl, uint64_t site,
		      uint64_t off, uint64_t *pc)
{
	uint64_t k = TRAMP_TDISP;

	if (off < TRAMP_TDISP) {
		*pc = site; /* (the answer: it cannot fault) */
		return true;
	}
	for (int i = 1; i < pl->n; i++) {
		const struct tramp_insn *ti = &pl->insn[i];

		if (off == k) {
			*pc = site + ti->off;
			return true;
		}
		k += ti->kind == TI_JCC ? 6 : ti->kind == TI_JMP ? 5 : ti->len;
	}
	if (off != k)
		return false;
	*pc = site + pl->len; /* the jump back */
	return true;
}
