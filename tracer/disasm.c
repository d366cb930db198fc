/*
 * Instruction decoding for scheduling points: capstone in detail mode,
 * reduced to the facts the tracer acts on (see disasm.h).
 *
 * Two decisions shape this file.  First, which memory operands are written
 * is derived here rather than taken from capstone 4, whose access flags miss
 * many stores: in Intel operand order a memory destination comes first, so
 * a memory operand 0 of an instruction with more operands is written unless
 * the instruction only compares (cmp, test, bt); single-operand stores
 * (fst, fistp, fnstcw, stmxcsr, xsave, cmpxchg8b ...) are listed.  Second,
 * whether rbp-based accesses are stack accesses depends on the function:
 * the sweep tracks `push %rbp` / `mov %rsp,%rbp`, so -O2 code that uses rbp
 * as a general register keeps its accesses.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "disasm.h"

#include <capstone/capstone.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "elf.h"

/* Handles for the one-instruction entry points, opened on first use. */
static _Thread_local csh decode_handle;
static _Thread_local cs_insn *decode_insn;
static _Thread_local csh format_handle;
static _Thread_local cs_insn *format_insn;

static int errno_of(cs_err err)
{
	return err == CS_ERR_MEM ? -ENOMEM : -EINVAL;
}

static int open_handle(csh *h, cs_insn **insn, bool att)
{
	cs_err err;

	err = cs_open(CS_ARCH_X86, CS_MODE_64, h);
	if (err != CS_ERR_OK)
		return errno_of(err);
	cs_option(*h, CS_OPT_DETAIL, CS_OPT_ON);
	if (att)
		cs_option(*h, CS_OPT_SYNTAX, CS_OPT_SYNTAX_ATT);
	*insn = cs_malloc(*h);
	if (!*insn) {
		cs_close(h);
		*h = 0;
		return -ENOMEM;
	}
	return 0;
}

static int map_reg(x86_reg r)
{
	switch (r) {
	case X86_REG_INVALID:
		return DISASM_REG_NONE;
	case X86_REG_RAX:
	case X86_REG_EAX:
		return DISASM_REG_RAX;
	case X86_REG_RCX:
	case X86_REG_ECX:
		return DISASM_REG_RCX;
	case X86_REG_RDX:
	case X86_REG_EDX:
		return DISASM_REG_RDX;
	case X86_REG_RBX:
	case X86_REG_EBX:
		return DISASM_REG_RBX;
	case X86_REG_RSP:
	case X86_REG_ESP:
		return DISASM_REG_RSP;
	case X86_REG_RBP:
	case X86_REG_EBP:
		return DISASM_REG_RBP;
	case X86_REG_RSI:
	case X86_REG_ESI:
		return DISASM_REG_RSI;
	case X86_REG_RDI:
	case X86_REG_EDI:
		return DISASM_REG_RDI;
	case X86_REG_R8:
	case X86_REG_R8D:
		return DISASM_REG_R8;
	case X86_REG_R9:
	case X86_REG_R9D:
		return DISASM_REG_R9;
	case X86_REG_R10:
	case X86_REG_R10D:
		return DISASM_REG_R10;
	case X86_REG_R11:
	case X86_REG_R11D:
		return DISASM_REG_R11;
	case X86_REG_R12:
	case X86_REG_R12D:
		return DISASM_REG_R12;
	case X86_REG_R13:
	case X86_REG_R13D:
		return DISASM_REG_R13;
	case X86_REG_R14:
	case X86_REG_R14D:
		return DISASM_REG_R14;
	case X86_REG_R15:
	case X86_REG_R15D:
		return DISASM_REG_R15;
	case X86_REG_RIP:
	case X86_REG_EIP:
		return DISASM_REG_RIP;
	default:
		return DISASM_REG_VECTOR;
	}
}

/* 64-bit general registers only: what `push %reg` can be emulated for. */
static int map_reg64(x86_reg r)
{
	switch (r) {
	case X86_REG_RAX:
	case X86_REG_RCX:
	case X86_REG_RDX:
	case X86_REG_RBX:
	case X86_REG_RSP:
	case X86_REG_RBP:
	case X86_REG_RSI:
	case X86_REG_RDI:
	case X86_REG_R8:
	case X86_REG_R9:
	case X86_REG_R10:
	case X86_REG_R11:
	case X86_REG_R12:
	case X86_REG_R13:
	case X86_REG_R14:
	case X86_REG_R15:
		return map_reg(r);
	default:
		return DISASM_REG_NONE;
	}
}

/* Memory operands that address memory without accessing it. */
static bool no_access(unsigned int id)
{
	switch (id) {
	case X86_INS_LEA:
	case X86_INS_NOP:
	case X86_INS_PREFETCH:
	case X86_INS_PREFETCHNTA:
	case X86_INS_PREFETCHT0:
	case X86_INS_PREFETCHT1:
	case X86_INS_PREFETCHT2:
	case X86_INS_PREFETCHW:
	case X86_INS_CLFLUSH:
	case X86_INS_CLFLUSHOPT:
	case X86_INS_CLWB:
		return true;
	default:
		return false;
	}
}

/* Single-operand instructions that store to their memory operand. */
static bool stores_only(unsigned int id)
{
	switch (id) {
	case X86_INS_FST:
	case X86_INS_FSTP:
	case X86_INS_FIST:
	case X86_INS_FISTP:
	case X86_INS_FISTTP:
	case X86_INS_FBSTP:
	case X86_INS_FNSTCW:
	case X86_INS_FNSTSW:
	case X86_INS_FNSTENV:
	case X86_INS_FNSAVE:
	case X86_INS_FXSAVE:
	case X86_INS_FXSAVE64:
	case X86_INS_XSAVE:
	case X86_INS_XSAVE64:
	case X86_INS_XSAVEC:
	case X86_INS_XSAVEC64:
	case X86_INS_XSAVEOPT:
	case X86_INS_XSAVEOPT64:
	case X86_INS_XSAVES:
	case X86_INS_XSAVES64:
	case X86_INS_STMXCSR:
	case X86_INS_VSTMXCSR:
		return true;
	default:
		return false;
	}
}

/* Instructions with a memory operand 0 that they only read. */
static bool compares_only(unsigned int id)
{
	return id == X86_INS_CMP || id == X86_INS_TEST || id == X86_INS_BT;
}

enum string_kind { STR_NONE, STR_STORE, STR_LOAD, STR_COMPARE };

/* String instructions by their one-byte opcode (SSE movsd/cmpsd share the
 * capstone ids of the string ones). */
static enum string_kind string_kind(const cs_x86 *x)
{
	if (x->opcode[1] != 0)
		return STR_NONE;
	switch (x->opcode[0]) {
	case 0xa4: /* movs */
	case 0xa5:
	case 0xaa: /* stos */
	case 0xab:
	case 0x6c: /* ins */
	case 0x6d:
		return STR_STORE;
	case 0xac: /* lods */
	case 0xad:
	case 0x6e: /* outs */
	case 0x6f:
		return STR_LOAD;
	case 0xa6: /* cmps */
	case 0xa7:
	case 0xae: /* scas */
	case 0xaf:
		return STR_COMPARE;
	default:
		return STR_NONE;
	}
}

static bool has_mem_operand(const cs_x86 *x)
{
	for (int i = 0; i < x->op_count; i++)
		if (x->operands[i].type == X86_OP_MEM)
			return true;
	return false;
}

static bool in_group(const cs_detail *d, uint8_t group)
{
	for (int i = 0; i < d->groups_count; i++)
		if (d->groups[i] == group)
			return true;
	return false;
}

static bool stack_reg(unsigned int r)
{
	return r == X86_REG_RSP || r == X86_REG_ESP || r == X86_REG_SP;
}

/* insn_info.reg_only */
static bool reg_only(const cs_insn *ci)
{
	const cs_detail *d = ci->detail;
	const cs_x86 *x = &d->x86;

	if (in_group(d, CS_GRP_CALL) || in_group(d, CS_GRP_RET) ||
	    in_group(d, CS_GRP_INT) || in_group(d, CS_GRP_IRET) ||
	    in_group(d, CS_GRP_PRIVILEGE) ||
	    x->prefix[0] == X86_PREFIX_LOCK || string_kind(x) != STR_NONE)
		return false;
	for (int i = 0; i < x->op_count; i++)
		if (x->operands[i].type == X86_OP_MEM &&
		    ci->id != X86_INS_LEA && ci->id != X86_INS_NOP)
			return false;
	for (int i = 0; i < d->regs_read_count; i++)
		if (stack_reg(d->regs_read[i]))
			return false;
	for (int i = 0; i < d->regs_write_count; i++)
		if (stack_reg(d->regs_write[i]))
			return false;
	switch (ci->id) {
	case X86_INS_CPUID: case X86_INS_RDTSC: case X86_INS_RDTSCP:
	case X86_INS_RDRAND: case X86_INS_RDSEED:
	case X86_INS_SYSCALL: case X86_INS_SYSENTER: case X86_INS_MFENCE:
	case X86_INS_LFENCE: case X86_INS_SFENCE: case X86_INS_HLT:
	case X86_INS_UD2: case X86_INS_XGETBV: case X86_INS_IN:
	case X86_INS_OUT: case X86_INS_INT: case X86_INS_INT3:
	case X86_INS_INTO: case X86_INS_XLATB: case X86_INS_XCHG:
	case X86_INS_CLFLUSH: case X86_INS_CLFLUSHOPT: case X86_INS_CLWB:
	case X86_INS_WRFSBASE: case X86_INS_WRGSBASE: case X86_INS_RDFSBASE:
	case X86_INS_RDGSBASE: case X86_INS_INVALID:
		return false;
	default:
		return true;
	}
}

/*
 * Fill *o from a decoded instruction.  frame_pointer says whether rbp holds
 * a frame pointer at this point (rbp-based accesses are then stack ones).
 */
static void describe(const cs_insn *ci, bool frame_pointer, struct insn_info *o)
{
	const cs_detail *d = ci->detail;
	const cs_x86 *x = &d->x86;
	enum string_kind sk = string_kind(x);
	bool lock = x->prefix[0] == X86_PREFIX_LOCK;
	bool stack = true;

	memset(o, 0, sizeof(*o));
	o->addr = ci->address;
	o->len = (uint8_t)ci->size;
	o->is_call = in_group(d, CS_GRP_CALL);
	o->is_ret = in_group(d, CS_GRP_RET);
	o->is_jump = in_group(d, CS_GRP_JUMP);
	o->is_string_op = sk != STR_NONE;
	o->repne = o->is_string_op && x->prefix[0] == X86_PREFIX_REPNE;
	o->has_rep = o->is_string_op && (x->prefix[0] == X86_PREFIX_REP ||
					 x->prefix[0] == X86_PREFIX_REPNE);

	if ((o->is_call || o->is_jump) && in_group(d, CS_GRP_BRANCH_RELATIVE) &&
	    x->op_count == 1 && x->operands[0].type == X86_OP_IMM)
		o->target = (uint64_t)x->operands[0].imm;

	o->reg_only = reg_only(ci);
	if (ci->id == X86_INS_PUSH && x->op_count == 1 &&
	    x->operands[0].type == X86_OP_REG) {
		o->push_reg = map_reg64(x->operands[0].reg);
		o->is_push_reg = o->push_reg != DISASM_REG_NONE;
	}

	if (no_access(ci->id))
		return;

	for (int i = 0; i < x->op_count && o->nmem < 2; i++) {
		const cs_x86_op *op = &x->operands[i];
		struct disasm_mem *m = &o->mem[o->nmem];
		bool write;

		if (op->type != X86_OP_MEM)
			continue;
		m->addr32 = x->addr_size == 4;
		if (op->mem.segment == X86_REG_FS)
			m->seg = DISASM_SEG_FS;
		else if (op->mem.segment == X86_REG_GS)
			m->seg = DISASM_SEG_GS;
		m->base = (uint8_t)map_reg(op->mem.base);
		m->index = (uint8_t)map_reg(op->mem.index);
		m->scale = op->mem.scale > 0 ? (uint8_t)op->mem.scale : 1;
		m->disp = op->mem.disp;
		m->size = op->size ? op->size : 1;
		if (m->base == DISASM_REG_RIP) {
			uint64_t ea = ci->address + ci->size;

			ea += (uint64_t)m->disp;
			m->disp = (int64_t)(m->addr32 ? (uint32_t)ea : ea);
			m->base = DISASM_REG_NONE;
			o->rip_relative = true;
		}

		if (sk != STR_NONE) {
			write = sk == STR_STORE && m->base == DISASM_REG_RDI;
		} else {
			/* capstone 4 reports test's memory operand as
			 * written when the other one is an immediate */
			write = !compares_only(ci->id) &&
				((op->access & CS_AC_WRITE) ||
				 (i == 0 && x->op_count >= 2) ||
				 stores_only(ci->id) ||
				 ci->id == X86_INS_CMPXCHG8B ||
				 ci->id == X86_INS_CMPXCHG16B);
		}
		m->write = write;
		m->read = !write || (op->access & CS_AC_READ) ||
			  ci->id == X86_INS_CMPXCHG8B ||
			  ci->id == X86_INS_CMPXCHG16B;
		if (stores_only(ci->id))
			m->read = false;

		if (m->seg != DISASM_SEG_NONE)
			o->tls = true;
		if (m->index == DISASM_REG_VECTOR ||
		    m->base == DISASM_REG_VECTOR)
			o->vsib = true;
		if (!(m->base == DISASM_REG_RSP ||
		      (frame_pointer && m->base == DISASM_REG_RBP &&
		       m->index == DISASM_REG_NONE)))
			stack = false;
		o->mem_read |= m->read;
		o->mem_write |= m->write;
		o->nmem++;
	}

	if (o->nmem == 0)
		return;
	/* The written operand first: it is the one a race report names. */
	if (o->nmem == 2 && !o->mem[0].write && o->mem[1].write) {
		struct disasm_mem t = o->mem[0];

		o->mem[0] = o->mem[1];
		o->mem[1] = t;
	}
	o->size = o->mem[0].size;
	o->stack_relative = stack;
	o->is_atomic =
		lock || ci->id == X86_INS_XCHG || ci->id == X86_INS_CMPXCHG ||
		ci->id == X86_INS_CMPXCHG8B || ci->id == X86_INS_CMPXCHG16B;
}

/* disasm_decode's results by address and bytes (direct-mapped) */
#define MEMO_SLOTS 16384
struct memo {
	uint64_t addr;
	uint8_t bytes[16], len;
	bool valid;
	struct insn_info in;
};
static struct memo *memo;

static struct memo *memo_of(const uint8_t *code, size_t len, uint64_t addr)
{
	size_t n = len < 16 ? len : 16;
	struct memo *m;

	if (!memo && !(memo = calloc(MEMO_SLOTS, sizeof(*memo))))
		return NULL;
	m = &memo[(addr ^ (addr >> 14)) % MEMO_SLOTS];
	if (!m->valid || m->addr != addr || m->len != n ||
	    memcmp(m->bytes, code, n)) {
		/* another instruction's slot: this one's, not yet decoded */
		*m = (struct memo){ .addr = addr, .len = (uint8_t)n };
		memcpy(m->bytes, code, n);
	}
	return m;
}

int disasm_decode(const uint8_t *code, size_t len, uint64_t addr,
		  struct insn_info *out)
{
	const uint8_t *p = code;
	size_t n = len;
	uint64_t a = addr;
	int err;

	if (!code || !out)
		return -EINVAL;
	/* a run installs the same breakpoints as the last one: their
	 * instructions are decoded once per ptloom process */
	struct memo *m = memo_of(code, len, addr);

	if (m && m->valid) {
		*out = m->in;
		return 0;
	}
	if (!decode_handle) {
		err = open_handle(&decode_handle, &decode_insn, false);
		if (err)
			return err;
	}
	if (!cs_disasm_iter(decode_handle, &p, &n, &a, decode_insn))
		return -EINVAL;
	describe(decode_insn, true, out);
	if (m) {
		m->in = *out;
		m->valid = true;
	}
	return 0;
}

uint64_t disasm_reg_value(int reg, const struct user_regs_struct *regs)
{
	switch (reg) {
	case DISASM_REG_RAX:
		return regs->rax;
	case DISASM_REG_RCX:
		return regs->rcx;
	case DISASM_REG_RDX:
		return regs->rdx;
	case DISASM_REG_RBX:
		return regs->rbx;
	case DISASM_REG_RSP:
		return regs->rsp;
	case DISASM_REG_RBP:
		return regs->rbp;
	case DISASM_REG_RSI:
		return regs->rsi;
	case DISASM_REG_RDI:
		return regs->rdi;
	case DISASM_REG_R8:
		return regs->r8;
	case DISASM_REG_R9:
		return regs->r9;
	case DISASM_REG_R10:
		return regs->r10;
	case DISASM_REG_R11:
		return regs->r11;
	case DISASM_REG_R12:
		return regs->r12;
	case DISASM_REG_R13:
		return regs->r13;
	case DISASM_REG_R14:
		return regs->r14;
	case DISASM_REG_R15:
		return regs->r15;
	case DISASM_REG_RIP:
		return regs->rip;
	default:
		return 0;
	}
}

uint64_t disasm_mem_addr(const struct disasm_mem *m,
			 const struct user_regs_struct *regs)
{
	uint64_t ea = (uint64_t)m->disp;

	ea += disasm_reg_value(m->base, regs);
	ea += disasm_reg_value(m->index, regs) * m->scale;
	if (m->addr32)
		ea = (uint32_t)ea;
	if (m->seg == DISASM_SEG_FS)
		ea += regs->fs_base;
	else if (m->seg == DISASM_SEG_GS)
		ea += regs->gs_base;
	return ea;
}

uint64_t disasm_effective_addr(const struct insn_info *in,
			       const struct user_regs_struct *regs)
{
	if (in->nmem == 0)
		return 0;
	return disasm_mem_addr(&in->mem[0], regs);
}

void disasm_relocate(struct insn_info *in, uint64_t bias)
{
	in->addr += bias;
	if (in->target)
		in->target += bias;
	if (in->rip_relative)
		for (int i = 0; i < in->nmem; i++)
			if (in->mem[i].base == DISASM_REG_NONE &&
			    in->mem[i].index == DISASM_REG_NONE)
				in->mem[i].disp += (int64_t)bias;
}

/* A growing array of kept instructions. */
struct insn_vec {
	struct insn_info *v;
	size_t n, cap;
};

static int vec_push(struct insn_vec *vec, const struct insn_info *in)
{
	if (vec->n == vec->cap) {
		size_t cap = vec->cap ? vec->cap * 2 : 256;
		struct insn_info *v = realloc(vec->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		vec->v = v;
		vec->cap = cap;
	}
	vec->v[vec->n++] = *in;
	return 0;
}

static bool keep(const struct insn_info *in, int mode)
{
	if (in->is_atomic)
		return true;
	if (!(mode & DISASM_MEMORY))
		return false;
	/* a thread's own stack and thread-local data (%fs-relative) are
	 * its own until another thread is seen to reach them (the wider
	 * sweep, DISASM_STACK) */
	return (in->mem_read || in->mem_write) &&
	       (!(in->stack_relative || in->tls) || (mode & DISASM_STACK)) &&
	       !in->vsib;
}

/*
 * A sweep's state.  In atomics-only mode a second handle without detail
 * finds the candidates (lock prefix, xchg, cmpxchg) and only those are
 * decoded again in detail: the detail pass costs a quarter of the time.
 */
struct entries;

/* A libc memory function the file calls: its PLT entry or GOT slot. */
struct memfn_site {
	uint64_t addr;
	uint8_t kind; /* DISASM_MEMFN_* */
};

struct sweeper {
	/* DISASM_MEMORY: the file's PLT entries and GOT slots of memcpy and
	 * the like (memfn_sites), sorted by address */
	const struct memfn_site *plt, *got;
	size_t nplt, ngot;
	csh h;
	cs_insn *ci;
	csh quick;
	cs_insn *qi;
	cs_insn *ci2;	/* the detailed handle's second (move_len) */
	int mode;
	struct insn_vec vec;
	/* direct branch targets of the whole file (sorted), for the ways
	 * into a function from outside it: a `foo.cold` part jumps back
	 * into foo's middle */
	const struct entries *global;
	bool cur_bad; /* the function being swept: its ways in unknown */
};

static int sweeper_open(struct sweeper *s, int mode)
{
	cs_err cerr;
	int err;

	memset(s, 0, sizeof(*s));
	s->mode = mode;
	err = open_handle(&s->h, &s->ci, false);
	if (err)
		return err;
	if ((mode & (DISASM_MEMORY | DISASM_TSC)) &&
	    !(s->ci2 = cs_malloc(s->h))) {
		err = -ENOMEM;
		goto out_close_h;
	}
	cerr = cs_open(CS_ARCH_X86, CS_MODE_64, &s->quick);
	if (cerr != CS_ERR_OK) {
		err = errno_of(cerr);
		goto out_close_h;
	}
	s->qi = cs_malloc(s->quick);
	if (!s->qi) {
		err = -ENOMEM;
		goto out_close_quick;
	}
	return 0;

out_close_quick:
	cs_close(&s->quick);
out_close_h:
	if (s->ci2)
		cs_free(s->ci2, 1);
	cs_free(s->ci, 1);
	cs_close(&s->h);
	return err;
}

/* Closes the handles; the kept instructions stay in s->vec. */
static void sweeper_close(struct sweeper *s)
{
	if (s->qi) {
		cs_free(s->qi, 1);
		cs_close(&s->quick);
	}
	if (s->ci2)
		cs_free(s->ci2, 1);
	cs_free(s->ci, 1);
	cs_close(&s->h);
}

static bool atomic_candidate(const cs_insn *ci)
{
	if (ci->id == X86_INS_XCHG || ci->id == X86_INS_CMPXCHG ||
	    ci->id == X86_INS_CMPXCHG8B || ci->id == X86_INS_CMPXCHG16B)
		return true;
	/* legacy prefixes precede REX and the opcode */
	for (int i = 0; i < ci->size; i++) {
		switch (ci->bytes[i]) {
		case 0xf0:
			return true;
		case 0xf2:
		case 0xf3:
		case 0x2e:
		case 0x36:
		case 0x3e:
		case 0x26:
		case 0x64:
		case 0x65:
		case 0x66:
		case 0x67:
			continue;
		default:
			return false;
		}
	}
	return false;
}

/*
 * Where instructions start is lost after bytes capstone cannot decode (an
 * AVX-512 instruction of glibc's string functions, data in the code): the
 * byte after them may be in the middle of the next instruction, and a
 * breakpoint there changes that instruction (a jump to an access slot
 * changes five bytes: glibc's strlen_evex then clobbered rbp).  Nothing
 * is kept until the sweep is in step again: in a function's sweep, not in
 * that function; in a sweep of a whole section, once a block has ended (a
 * return, a jump, ud2, hlt) and its padding has reached a 16-byte boundary,
 * where functions start.
 */
struct lost {
	bool lost, pending;
};

/* An undecodable byte that may start an instruction capstone does not
 * know (an escape, a VEX/EVEX/XOP or legacy prefix, a REX): the step is
 * lost.  Another (0x06, 0x60, 0xd6 ...) is invalid alone in 64-bit mode:
 * the next byte starts the next instruction. */
static bool loses_step(uint8_t b)
{
	return b == 0x0f || b == 0x62 || b == 0xc4 || b == 0xc5 || b == 0x8f ||
	       (b >= 0x40 && b <= 0x4f) || b == 0x66 || b == 0x67 ||
	       b == 0xf0 || b == 0xf2 || b == 0xf3 || b == 0x26 || b == 0x2e ||
	       b == 0x36 || b == 0x3e || b == 0x64 || b == 0x65;
}

static void lost_step(struct lost *l, const cs_insn *ci, bool resync)
{
	bool end = ci->id == X86_INS_RET || ci->id == X86_INS_JMP ||
		   ci->id == X86_INS_UD2 || ci->id == X86_INS_HLT;
	bool pad = ci->id == X86_INS_NOP || ci->id == X86_INS_INT3;

	if (!l->lost || !resync)
		return;
	l->pending = end || (l->pending && pad);
	if (l->pending && (ci->address + ci->size) % 16 == 0)
		l->lost = l->pending = false;
}

static int sweep_atomics(struct sweeper *s, const uint8_t *code, size_t len,
			 uint64_t vaddr, bool resync)
{
	struct lost l = { false, false };
	const uint8_t *p = code;
	size_t n = len;
	uint64_t a = vaddr;
	struct insn_info in;
	int err;

	while (n) {
		const uint8_t *dp;
		size_t dn;
		uint64_t da;

		if (!cs_disasm_iter(s->quick, &p, &n, &a, s->qi)) {
			if (loses_step(*p)) {
				l.lost = true;
				l.pending = false;
			}
			p++;
			n--;
			a++;
			continue;
		}
		if (l.lost) {
			lost_step(&l, s->qi, resync);
			continue;
		}
		bool rnd = s->qi->id == X86_INS_RDRAND ||
			   s->qi->id == X86_INS_RDSEED;

		if ((s->mode & DISASM_TSC) &&
		    (rnd || s->qi->id == X86_INS_RDTSC ||
		     s->qi->id == X86_INS_RDTSCP)) {
			in = (struct insn_info){ .addr = s->qi->address,
						 .len = (uint8_t)s->qi->size,
						 .is_tsc = !rnd,
						 .is_rand = rnd };
			if ((err = vec_push(&s->vec, &in)))
				return err;
			continue;
		}
		if (!(s->mode & DISASM_ATOMICS) || !atomic_candidate(s->qi))
			continue;
		dp = p - s->qi->size;
		dn = s->qi->size;
		da = s->qi->address;
		if (!cs_disasm_iter(s->h, &dp, &dn, &da, s->ci))
			continue;
		describe(s->ci, true, &in);
		if (!in.is_atomic)
			continue;
		err = vec_push(&s->vec, &in);
		if (err)
			return err;
	}
	return 0;
}

/*
 * A function's ways in besides its entry, for move_len: every direct
 * branch's target in it, every endbr64 past its entry (an indirect
 * branch's target); none known when it jumps indirectly (a switch's
 * table) or has bytes capstone cannot decode (*bad).  Sorted.
 */
struct entries {
	uint64_t *a;
	size_t n, cap;
	bool bad;
	/* every direct target, past an indirect jump too (the file's set);
	 * undecodable says the sweep stopped at bytes capstone refused */
	bool keep_going, undecodable;
};

static void entries_add(struct entries *e, uint64_t a)
{
	if (e->n == e->cap) {
		size_t nc = e->cap ? 2 * e->cap : 64;
		uint64_t *na = realloc(e->a, nc * sizeof(*na));

		if (!na) {
			e->bad = true;
			return;
		}
		e->a = na;
		e->cap = nc;
	}
	e->a[e->n++] = a;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

static void function_entries(struct sweeper *s, const uint8_t *code,
			     size_t len, uint64_t vaddr, struct entries *e)
{
	const uint8_t *p = code;
	size_t n = len;
	uint64_t a = vaddr;
	cs_insn *ci = s->qi;

	e->n = 0;
	e->bad = false;
	e->undecodable = false;
	while (n && (!e->bad || e->keep_going)) {
		if (!cs_disasm_iter(s->quick, &p, &n, &a, ci)) {
			e->bad = true;
			e->undecodable = true;
			break;
		}
		const uint8_t *b = ci->bytes;
		size_t k = 0, sz = ci->size;

		/* legacy prefixes and REX, then the opcode */
		while (k < sz && (b[k] == 0x66 || b[k] == 0x67 || b[k] == 0xf2 ||
				  b[k] == 0xf3 || b[k] == 0x2e || b[k] == 0x3e ||
				  b[k] == 0x26 || b[k] == 0x36 || b[k] == 0x64 ||
				  b[k] == 0x65 || b[k] == 0xf0))
			k++;
		if (k < sz && (b[k] & 0xf0) == 0x40)
			k++;
		if (k >= sz)
			continue;
		uint64_t end = ci->address + sz;
		int32_t rel = 0;
		bool direct = false;

		if (b[k] == 0xe8 || b[k] == 0xe9) {
			if (k + 5 == sz) {
				memcpy(&rel, b + k + 1, 4);
				direct = true;
			}
		} else if (b[k] == 0xeb || (b[k] >= 0x70 && b[k] <= 0x7f) ||
			   b[k] == 0xe0 || b[k] == 0xe1 || b[k] == 0xe2 ||
			   b[k] == 0xe3) {
			if (k + 2 == sz) {
				rel = (int8_t)b[k + 1];
				direct = true;
			}
		} else if (b[k] == 0x0f && k + 1 < sz && b[k + 1] >= 0x80 &&
			   b[k + 1] <= 0x8f) {
			if (k + 6 == sz) {
				memcpy(&rel, b + k + 2, 4);
				direct = true;
			}
		} else if (b[k] == 0xff && k + 1 < sz &&
			   ((b[k + 1] >> 3 & 7) == 4 || (b[k + 1] >> 3 & 7) == 5)) {
			e->bad = true; /* jmp through a register or memory */
		} else if (b[k] == 0x0f && k + 2 < sz && b[k + 1] == 0x1e &&
			   b[k + 2] == 0xfa && ci->address != vaddr) {
			entries_add(e, ci->address); /* endbr64 */
		}
		if (direct)
			entries_add(e, end + (uint64_t)(int64_t)rel);
	}
	if ((!e->bad || e->keep_going) && e->n > 1)
		qsort(e->a, e->n, sizeof(*e->a), cmp_u64);
}

static bool is_entry(const struct entries *e, uint64_t a)
{
	size_t lo = 0, hi = e->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (e->a[mid] == a)
			return true;
		if (e->a[mid] < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* The file's branch targets in [vaddr, vaddr + len) join e's. */
static void add_global_entries(struct sweeper *s, uint64_t vaddr, size_t len,
			       struct entries *e)
{
	const struct entries *g = s->global;
	size_t lo = 0, hi, n0 = e->n;

	if (!g || g->bad) {
		e->bad = true; /* the ways in are unknown */
		return;
	}
	hi = g->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (g->a[mid] < vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < g->n && g->a[i] < vaddr + len && !e->bad; i++)
		entries_add(e, g->a[i]);
	if (!e->bad && e->n > n0)
		qsort(e->a, e->n, sizeof(*e->a), cmp_u64);
}

/* move_len of the instruction ci (described in *in) at the start of
 * code[0..n): its bytes and those of the instructions after it that a
 * jump covering 5 bytes would cover, or 0 (see insn_info.move_len) */
static uint8_t move_len(struct sweeper *s, const cs_insn *ci,
			const uint8_t *code, size_t n, const struct entries *e)
{
	const uint8_t *p = code + ci->size;
	size_t left = n - ci->size, len = ci->size;
	uint64_t a = ci->address + ci->size;
	cs_insn *qi = s->ci2;

	if (e->bad || len >= 5)
		return 0;
	while (len < 5) {
		if (is_entry(e, a) || !left ||
		    !cs_disasm_iter(s->h, &p, &left, &a, qi))
			return 0;
		const cs_detail *d = qi->detail;

		if (has_mem_operand(&d->x86) || in_group(d, CS_GRP_CALL) ||
		    in_group(d, CS_GRP_RET) || in_group(d, CS_GRP_INT) ||
		    in_group(d, CS_GRP_IRET) || qi->id == X86_INS_SYSCALL ||
		    qi->id == X86_INS_SYSENTER || qi->id == X86_INS_UD2 ||
		    qi->id == X86_INS_HLT || qi->id == X86_INS_JRCXZ ||
		    qi->id == X86_INS_JECXZ || qi->id == X86_INS_LOOP ||
		    qi->id == X86_INS_LOOPE || qi->id == X86_INS_LOOPNE ||
		    /* a prologue: the sweep's frame pointer changes */
		    (qi->size == 1 && qi->bytes[0] == 0x55))
			return 0;
		len += qi->size;
		if (qi->id == X86_INS_JMP && len < 5)
			return 0; /* what follows it is not its code */
	}
	return len <= 16 ? (uint8_t)len : 0;
}

/* whether a call of memfn kind k reads, writes memory */
static bool memfn_reads(uint8_t k)
{
	return k < DISASM_MEMFN_OMP && k != DISASM_MEMFN_SET &&
	       k != DISASM_MEMFN_BZERO && k != DISASM_MEMFN_PRINT &&
	       k != DISASM_MEMFN_FREAD && k != DISASM_MEMFN_READ;
}

static bool memfn_writes(uint8_t k)
{
	if (k >= DISASM_MEMFN_OMP)
		return false;
	if (k >= DISASM_MEMFN_STATE)
		return (k - DISASM_MEMFN_STATE) & 1;
	return k <= DISASM_MEMFN_STRNCAT || k == DISASM_MEMFN_PRINT ||
	       k == DISASM_MEMFN_FREAD || k == DISASM_MEMFN_READ;
}

/* The kind of the memory function at addr in v (sorted), 0 if none */
static uint8_t memfn_find(const struct memfn_site *v, size_t n,
			  uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].addr == addr)
			return v[mid].kind;
		if (v[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* ci a call: of a memory function's PLT entry (`call memcpy@plt`), or
 * through its GOT slot (`call *memcpy@GOTPCREL(%rip)`, -fno-plt)? */
static uint8_t memfn_call(const struct sweeper *s, const cs_insn *ci)
{
	const cs_x86 *x = &ci->detail->x86;

	if (x->op_count != 1)
		return 0;
	if (x->operands[0].type == X86_OP_IMM)
		return memfn_find(s->plt, s->nplt,
				  (uint64_t)x->operands[0].imm);
	if (x->operands[0].type == X86_OP_MEM &&
	    x->operands[0].mem.base == X86_REG_RIP &&
	    x->operands[0].mem.index == X86_REG_INVALID &&
	    x->operands[0].mem.segment == X86_REG_INVALID)
		return memfn_find(s->got, s->ngot,
				  ci->address + ci->size +
					  (uint64_t)x->operands[0].mem.disp);
	return 0;
}

/*
 * Linear sweep of [code, code + len) at vaddr.  frame_pointer is whether
 * rbp is taken to be a frame pointer before the first prologue is seen.
 */
static int sweep(struct sweeper *s, const uint8_t *code, size_t len,
		 uint64_t vaddr, bool frame_pointer)
{
	const uint8_t *p = code;
	size_t n = len;
	uint64_t a = vaddr;
	cs_insn *ci = s->ci;
	struct insn_info in;
	int err;
	/* a function's sweep starts without a frame pointer */
	bool resync = frame_pointer;
	struct lost l = { false, false };
	struct entries e = { .bad = true };
	/* the last function address put in r8 (`lea f(%rip), %r8`, `mov
	 * $f, %r8`) and where: a copyprivate's copy function */
	uint64_t r8_fn = 0, r8_at = 0;

	if (!(s->mode & DISASM_MEMORY))
		return sweep_atomics(s, code, len, vaddr, resync);
	if (!resync) {
		/* the file's targets in it, found once (sweep_functions) */
		e.bad = s->cur_bad;
		if (!e.bad)
			add_global_entries(s, vaddr, len, &e);
	}
	while (n) {
		if (!cs_disasm_iter(s->h, &p, &n, &a, ci)) {
			if (loses_step(*p)) {
				l.lost = true;
				l.pending = false;
			}
			p++;
			n--;
			a++;
			continue;
		}
		if (l.lost) {
			lost_step(&l, ci, resync);
			continue;
		}
		/* push %rbp starts a prologue; mov %rsp,%rbp completes it */
		if (ci->size == 1 && ci->bytes[0] == 0x55) {
			frame_pointer = false;
			continue;
		}
		if (ci->size == 3 && ci->bytes[0] == 0x48 &&
		    ((ci->bytes[1] == 0x89 && ci->bytes[2] == 0xe5) ||
		     (ci->bytes[1] == 0x8b && ci->bytes[2] == 0xec))) {
			frame_pointer = true;
			continue;
		}
		if ((ci->id == X86_INS_LEA || ci->id == X86_INS_MOV) &&
		    ci->detail->x86.op_count == 2 &&
		    ci->detail->x86.operands[0].type == X86_OP_REG &&
		    ci->detail->x86.operands[0].reg == X86_REG_R8) {
			const cs_x86_op *o = &ci->detail->x86.operands[1];

			r8_at = ci->address;
			r8_fn = ci->id == X86_INS_LEA && o->type == X86_OP_MEM &&
					o->mem.base == X86_REG_RIP &&
					o->mem.index == X86_REG_INVALID
				? ci->address + ci->size + (uint64_t)o->mem.disp
			      : ci->id == X86_INS_MOV && o->type == X86_OP_IMM
				? (uint64_t)o->imm
				: 0;
		}
		if (ci->id == X86_INS_CALL && (s->nplt || s->ngot)) {
			uint8_t k = memfn_call(s, ci);

			if (k) {
				memset(&in, 0, sizeof(in));
				in.addr = ci->address;
				in.len = (uint8_t)ci->size;
				in.is_call = true;
				in.memfn = k;
				/* (a copyprivate's copy function: set up
				 * just before the call) */
				if (k == DISASM_MEMFN_OMP +
						 DISASM_OMP_COPYPRIVATE &&
				    r8_at && ci->address - r8_at < 64)
					in.target = r8_fn;
				/* (libc's accesses, at its call) */
				in.mem_read = memfn_reads(k);
				in.mem_write = memfn_writes(k);
				err = vec_push(&s->vec, &in);
				if (err) {
					free(e.a);
					return err;
				}
				continue;
			}
		}
		if (!has_mem_operand(&ci->detail->x86))
			continue;
		describe(ci, frame_pointer, &in);
		if (!keep(&in, s->mode))
			continue;
		/* (p, n: past ci) */
		in.move_len = move_len(s, ci, p - ci->size, n + ci->size, &e);
		err = vec_push(&s->vec, &in);
		if (err) {
			free(e.a);
			return err;
		}
	}
	free(e.a);
	return 0;
}

static int cmp_insn(const void *a, const void *b)
{
	const struct insn_info *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int finish(struct insn_vec *vec, struct insn_info **out)
{
	for (size_t i = 1; i < vec->n; i++) {
		if (vec->v[i - 1].addr > vec->v[i].addr) {
			qsort(vec->v, vec->n, sizeof(*vec->v), cmp_insn);
			break;
		}
	}
	if (vec->n > (size_t)0x7fffffff) {
		free(vec->v);
		return -EOVERFLOW;
	}
	*out = vec->v;
	return (int)vec->n;
}

int disasm_scan(const uint8_t *code, size_t len, uint64_t vaddr, int mode,
		struct insn_info **out)
{
	struct sweeper s;
	int err;

	if (!out || (!code && len) || mode < 1 ||
	    mode > (DISASM_ATOMICS | DISASM_MEMORY | DISASM_TSC |
		    DISASM_STACK) ||
	    ((mode & DISASM_TSC) && (mode & DISASM_MEMORY)) ||
	    ((mode & DISASM_STACK) && !(mode & DISASM_MEMORY)))
		return -EINVAL;
	*out = NULL;
	err = sweeper_open(&s, mode);
	if (err)
		return err;
	err = sweep(&s, code, len, vaddr, true);
	sweeper_close(&s);
	if (err) {
		free(s.vec.v);
		return err;
	}
	return finish(&s.vec, out);
}

/* ---- ELF files ---- */

/* An executable section (or segment, without section headers). */
struct code_range {
	uint64_t addr;
	const uint8_t *bytes;
	size_t size;
	size_t index; /* section index, 0 for a segment */
};

struct func {
	uint64_t addr;
	uint64_t size;
	size_t range; /* index into the code ranges */
	bool skip;
	bool bad; /* ways in unknown: an indirect jump, undecodable bytes */
};

static const char *const skipped_names[] = {
	"_start",
	"_init",
	"_fini",
	"frame_dummy",
	"register_tm_clones",
	"deregister_tm_clones",
	"__do_global_dtors_aux",
	"_dl_relocate_static_pie",
};

static bool skipped_function(const char *name)
{
	if (!name)
		return false;
	if (!strncmp(name, "__libc_csu_", 11))
		return true;
	for (size_t i = 0; i < sizeof(skipped_names) / sizeof(*skipped_names);
	     i++)
		if (!strcmp(name, skipped_names[i]))
			return true;
	return false;
}

/* PLT stubs and the C runtime's .init/.fini hold no program logic. */
static bool skipped_section(const char *name)
{
	return name && (!strncmp(name, ".plt", 4) || !strcmp(name, ".iplt") ||
			!strcmp(name, ".init") || !strcmp(name, ".fini"));
}

struct elf_scan {
	struct code_range *ranges;
	size_t nranges;
	struct func *funcs;
	size_t nfuncs, funcs_cap;
};

static int add_range(struct elf_scan *s, uint64_t addr, const void *bytes,
		     size_t size, size_t index)
{
	struct code_range *r;

	r = realloc(s->ranges, (s->nranges + 1) * sizeof(*r));
	if (!r)
		return -ENOMEM;
	s->ranges = r;
	r[s->nranges++] = (struct code_range){ addr, bytes, size, index };
	return 0;
}

static int collect_sections(Elf *e, struct elf_scan *s)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	int err;

	if (elf_getshdrstrndx(e, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type != SHT_PROGBITS ||
		    (sh.sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) !=
			    (SHF_ALLOC | SHF_EXECINSTR))
			continue;
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if (skipped_section(name))
			continue;
		d = elf_rawdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size == 0)
			continue;
		err = add_range(s, sh.sh_addr, d->d_buf,
				d->d_size < sh.sh_size ? d->d_size : sh.sh_size,
				elf_ndxscn(scn));
		if (err)
			return err;
	}
	return 0;
}

/* Without section headers: the executable PT_LOAD segments. */
static int collect_segments(Elf *e, struct elf_scan *s)
{
	size_t nphdr, fsize;
	const uint8_t *file = (const uint8_t *)elf_rawfile(e, &fsize);
	int err;

	if (!file || elf_getphdrnum(e, &nphdr))
		return 0;
	for (size_t i = 0; i < nphdr; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_X))
			continue;
		if (ph.p_offset > fsize || ph.p_filesz > fsize - ph.p_offset)
			continue;
		err = add_range(s, ph.p_vaddr, file + ph.p_offset, ph.p_filesz,
				0);
		if (err)
			return err;
	}
	return 0;
}

static int add_func(struct elf_scan *s, const struct func *f)
{
	if (s->nfuncs == s->funcs_cap) {
		size_t cap = s->funcs_cap ? s->funcs_cap * 2 : 1024;
		struct func *v = realloc(s->funcs, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->funcs = v;
		s->funcs_cap = cap;
	}
	s->funcs[s->nfuncs++] = *f;
	return 0;
}

/* An FDE's function (elf_eh_frame_functions): a stripped file's. */
static int fde_one(void *ctx, uint64_t addr, uint64_t size)
{
	struct elf_scan *s = ctx;
	struct func f = { .addr = addr, .size = size };

	for (f.range = 0; f.range < s->nranges; f.range++) {
		const struct code_range *cr = &s->ranges[f.range];

		if (addr >= cr->addr && addr - cr->addr < cr->size)
			return add_func(s, &f);
	}
	return 0; /* not code ptloom sweeps */
}

static int collect_symtab_functions(Elf *e, struct elf_scan *s);

/* The functions of the symbol table; without one, those of the FDEs
 * (.eh_frame: a stripped program's, as Debian's are), so that a sweep
 * goes function by function either way (move lengths need it). */
static int collect_functions(Elf *e, struct elf_scan *s)
{
	int err = collect_symtab_functions(e, s);

	if (err || s->nfuncs)
		return err;
	if (elf_eh_frame_functions(e, fde_one, s) < 0)
		s->nfuncs = 0; /* unread FDEs: a linear sweep, as before */
	return 0;
}

static int collect_symtab_functions(Elf *e, struct elf_scan *s)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t nsyms;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB ||
		    sh.sh_entsize == 0)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		nsyms = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < nsyms; i++) {
			GElf_Sym sym;
			struct func f = { 0 };
			int type;
			size_t r;
			int err;

			if (!gelf_getsym(d, (int)i, &sym))
				break;
			type = GELF_ST_TYPE(sym.st_info);
			if ((type != STT_FUNC && type != STT_GNU_IFUNC) ||
			    sym.st_shndx == SHN_UNDEF ||
			    sym.st_shndx >= SHN_LORESERVE)
				continue;
			for (r = 0; r < s->nranges; r++)
				if (s->ranges[r].index == sym.st_shndx)
					break;
			if (r == s->nranges)
				continue;
			f.addr = sym.st_value;
			f.size = sym.st_size;
			f.range = r;
			f.skip = skipped_function(
				elf_strptr(e, sh.sh_link, sym.st_name));
			err = add_func(s, &f);
			if (err)
				return err;
		}
	}
	return 0;
}

/* By range, address, larger first, skipped first (so a skipped function's
 * name wins over an alias). */
static int cmp_func(const void *a, const void *b)
{
	const struct func *x = a, *y = b;

	if (x->range != y->range)
		return x->range < y->range ? -1 : 1;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return (int)y->skip - (int)x->skip;
}

/* The targets of [code, code + len) at vaddr join all's.  Whether its
 * own ways in are unknown (an indirect jump in it, or bytes capstone
 * refuses); after such bytes the targets are unknown, and so are the
 * file's: no move length anywhere. */
static bool collect_entries(struct sweeper *sw, const uint8_t *code,
			    size_t len, uint64_t vaddr, struct entries *one,
			    struct entries *all)
{
	function_entries(sw, code, len, vaddr, one);
	for (size_t j = 0; j < one->n && !all->bad; j++)
		entries_add(all, one->a[j]);
	if (one->undecodable)
		all->bad = true;
	return one->bad;
}

/*
 * Each function of s (and the code between them) once: collect (all
 * non-NULL) gathers every direct branch target of the file into all and
 * marks the functions whose ways in are unknown; else each function is
 * swept, its move lengths knowing the file's targets (sw->global).
 */
static int sweep_ranges(struct sweeper *sw, struct elf_scan *s,
			struct disasm_elf_info *info, struct entries *all)
{
	struct entries one = { .keep_going = true };
	size_t i = 0;
	int err = 0;

	for (size_t r = 0; r < s->nranges && !err; r++) {
		const struct code_range *cr = &s->ranges[r];
		uint64_t lo = cr->addr, hi = cr->addr + cr->size;
		uint64_t covered = lo;
		bool any = false;

		for (; i < s->nfuncs && s->funcs[i].range == r && !err; i++) {
			struct func *f = &s->funcs[i];
			uint64_t start = f->addr, end;

			if (start < lo || start >= hi)
				continue;
			any = true;
			if (f->size) {
				end = start + f->size;
			} else {
				size_t j = i + 1;

				/* up to the next function that starts later */
				while (j < s->nfuncs &&
				       s->funcs[j].range == r &&
				       s->funcs[j].addr == start)
					j++;
				end = j < s->nfuncs && s->funcs[j].range == r ?
					      s->funcs[j].addr :
					      hi;
			}
			if (end > hi || end < start)
				end = hi;
			if (start < covered)
				start = covered;
			if (start >= end)
				continue;
			if (all && start > covered)
				/* code of no function: hand-written code
				 * may jump anywhere, padding does not */
				collect_entries(sw, cr->bytes + (covered - lo),
						(size_t)(start - covered),
						covered, &one, all);
			covered = end;
			if (all) {
				f->bad = collect_entries(sw,
							 cr->bytes + (start - lo),
							 (size_t)(end - start),
							 start, &one, all);
				continue;
			}
			if (f->skip)
				continue;
			sw->cur_bad = f->bad;
			err = sweep(sw, cr->bytes + (start - lo),
				    (size_t)(end - start), start, false);
			if (err)
				break;
			info->nfuncs++;
			info->bytes += end - start;
		}
		if (all && covered < hi)
			/* after the last function; a range with none at
			 * all is hand-written code, a way in anywhere */
			collect_entries(sw, cr->bytes + (covered - lo),
					(size_t)(hi - covered), covered, &one,
					all);
		/* code with no FUNC symbol at all (hand-written sections) */
		if (!any && !all) {
			err = sweep(sw, cr->bytes, cr->size, cr->addr, true);
			if (!err)
				info->bytes += cr->size;
		}
	}
	free(one.a);
	return err;
}

/*
 * DISASM_TSC: the move_len of each rdtsc and rdtscp found (tsc.c moves
 * it, with the instructions after it, into a slot of the agent's), with
 * the file's branch targets (all) and its function's ways in, as the
 * memory sweep computes it for an access.
 */
static void tsc_move_lens(struct sweeper *sw, struct elf_scan *s,
			  struct entries *all)
{
	sw->global = all;
	for (size_t k = 0; k < sw->vec.n; k++) {
		struct insn_info *in = &sw->vec.v[k];
		uint64_t a = in->addr, end;
		size_t f = s->nfuncs;

		if (!in->is_tsc)
			continue;
		/* its function: the last to start at or before it in its
		 * code range (the first of those at one address is the
		 * largest, cmp_func) */
		for (size_t i = 0; i < s->nfuncs; i++) {
			const struct code_range *r = &s->ranges[s->funcs[i].range];

			if (s->funcs[i].addr <= a && a >= r->addr &&
			    a < r->addr + r->size &&
			    (f == s->nfuncs || s->funcs[i].addr > s->funcs[f].addr))
				f = i;
		}
		if (f == s->nfuncs || s->funcs[f].bad)
			continue;
		const struct func *fn = &s->funcs[f];
		const struct code_range *cr = &s->ranges[fn->range];
		size_t j = f + 1;

		while (j < s->nfuncs && s->funcs[j].range == fn->range &&
		       s->funcs[j].addr == fn->addr)
			j++;
		end = fn->size ? fn->addr + fn->size
		      : j < s->nfuncs && s->funcs[j].range == fn->range
			      ? s->funcs[j].addr
			      : cr->addr + cr->size;
		if (end > cr->addr + cr->size)
			end = cr->addr + cr->size;
		if (a >= end)
			continue;
		const uint8_t *code = cr->bytes + (a - cr->addr), *p = code;
		size_t n = (size_t)(end - a), left = n;
		uint64_t pc = a;
		struct entries e = { 0 };

		add_global_entries(sw, fn->addr, (size_t)(end - fn->addr), &e);
		if (cs_disasm_iter(sw->h, &p, &left, &pc, sw->ci) &&
		    sw->ci->size == in->len)
			in->move_len = move_len(sw, sw->ci, code, n, &e);
		free(e.a);
	}
	sw->global = NULL;
}

static int sweep_functions(struct sweeper *sw, struct elf_scan *s,
			   struct disasm_elf_info *info)
{
	struct entries all = { 0 };
	int err;
	bool tsc = false;

	qsort(s->funcs, s->nfuncs, sizeof(*s->funcs), cmp_func);
	if (sw->mode & DISASM_TSC) {
		if ((err = sweep_ranges(sw, s, info, NULL)))
			return err;
		for (size_t k = 0; k < sw->vec.n && !tsc; k++)
			tsc = sw->vec.v[k].is_tsc;
		if (!tsc)
			return 0;
		/* a file with an rdtsc: its branch targets, for the sites'
		 * move lengths */
		sweep_ranges(sw, s, info, &all);
		if (all.n > 1)
			qsort(all.a, all.n, sizeof(*all.a), cmp_u64);
		if (!all.bad)
			tsc_move_lens(sw, s, &all);
		free(all.a);
		return 0;
	}
	if (!(sw->mode & DISASM_MEMORY))
		return sweep_ranges(sw, s, info, NULL);
	/* every direct branch target of the file first: a function's move
	 * lengths must know the ways into it from the others too (a
	 * foo.cold part jumps back into foo's middle) */
	sweep_ranges(sw, s, info, &all);
	if (all.bad) {
		/* unknown ways in: no move length anywhere */
		free(all.a);
		all = (struct entries){ .bad = true };
	} else if (all.n > 1) {
		qsort(all.a, all.n, sizeof(*all.a), cmp_u64);
	}
	sw->global = &all;
	err = sweep_ranges(sw, s, info, NULL);
	sw->global = NULL;
	free(all.a);
	return err;
}

static void load_info(Elf *e, const GElf_Ehdr *eh, struct disasm_elf_info *info)
{
	size_t nphdr;
	uint64_t min = UINT64_MAX;

	info->pie = eh->e_type == ET_DYN;
	if (elf_getphdrnum(e, &nphdr))
		nphdr = 0;
	for (size_t i = 0; i < nphdr; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    ph.p_vaddr < min)
			min = ph.p_vaddr;
	}
	info->min_vaddr = min == UINT64_MAX ? 0 : min & ~(uint64_t)0xfff;
}

/* The link-time ranges of e that are read-only while the program runs:
 * PT_LOAD segments without PF_W (less any page a writable one shares),
 * and, in an object with PT_DYNAMIC, its PT_GNU_RELRO range as the loader
 * protects it (whole pages, the end rounded down).  Up to max, the count. */
static int constant_ranges(Elf *e, uint64_t (*r)[2], int max)
{
	size_t nphdr;
	int n = 0;
	bool dyn = false;
	uint64_t w[16][2];
	int nw = 0;

	if (elf_getphdrnum(e, &nphdr))
		return 0;
	for (size_t i = 0; i < nphdr; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph))
			continue;
		if (ph.p_type == PT_DYNAMIC)
			dyn = true;
		if (ph.p_type == PT_LOAD && (ph.p_flags & PF_W)) {
			if (nw == 16)
				return 0; /* (unusual: nothing is constant) */
			w[nw][0] = ph.p_vaddr & ~(uint64_t)0xfff;
			w[nw++][1] = (ph.p_vaddr + ph.p_memsz + 0xfff) &
				     ~(uint64_t)0xfff;
		}
	}
	for (size_t i = 0; i < nphdr && n < max; i++) {
		GElf_Phdr ph;
		uint64_t lo, hi;

		if (!gelf_getphdr(e, (int)i, &ph))
			continue;
		if (ph.p_type == PT_LOAD && !(ph.p_flags & PF_W)) {
			lo = ph.p_vaddr;
			hi = ph.p_vaddr + ph.p_memsz;
			for (int k = 0; k < nw; k++) {
				/* trim a page a writable segment maps too */
				if (w[k][0] < hi && w[k][1] > lo) {
					if (w[k][0] <= lo)
						lo = w[k][1];
					else
						hi = w[k][0];
				}
			}
		} else if (ph.p_type == PT_GNU_RELRO && dyn) {
			lo = ph.p_vaddr & ~(uint64_t)0xfff;
			hi = (ph.p_vaddr + ph.p_memsz) & ~(uint64_t)0xfff;
		} else
			continue;
		if (lo < hi) {
			r[n][0] = lo;
			r[n++][1] = hi;
		}
	}
	return n;
}

static void mark_constant_reads(Elf *e, struct insn_info *v, int n)
{
	uint64_t r[32][2];
	int nr = constant_ranges(e, r, 32);

	for (int i = 0; i < n && nr; i++) {
		struct insn_info *in = &v[i];
		bool all = in->rip_relative && in->nmem && !in->is_atomic &&
			   !in->mem_write;

		for (int k = 0; all && k < in->nmem; k++) {
			const struct disasm_mem *m = &in->mem[k];
			uint64_t a = (uint64_t)m->disp, sz = m->size ? m->size : 1;
			bool in_r = false;

			all = !m->write && m->base == DISASM_REG_NONE &&
			      m->index == DISASM_REG_NONE && !m->addr32 &&
			      m->seg == DISASM_SEG_NONE;
			for (int j = 0; all && !in_r && j < nr; j++)
				in_r = a >= r[j][0] && a + sz <= r[j][1] &&
				       a + sz > a;
			all = all && in_r;
		}
		in->reads_constant = all;
	}
}

static int cmp_memfn(const void *a, const void *b)
{
	const struct memfn_site *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static uint8_t memfn_kind(const char *name)
{
	static const struct {
		const char *name;
		uint8_t kind;
	} fns[] = {
		{ "memcpy", DISASM_MEMFN_COPY },
		{ "memmove", DISASM_MEMFN_COPY },
		{ "mempcpy", DISASM_MEMFN_COPY },
		{ "__mempcpy", DISASM_MEMFN_COPY },
		{ "__memcpy_chk", DISASM_MEMFN_COPY },
		{ "__memmove_chk", DISASM_MEMFN_COPY },
		{ "__mempcpy_chk", DISASM_MEMFN_COPY },
		{ "memset", DISASM_MEMFN_SET },
		{ "__memset_chk", DISASM_MEMFN_SET },
		{ "bzero", DISASM_MEMFN_BZERO },
		{ "explicit_bzero", DISASM_MEMFN_BZERO },
		{ "__explicit_bzero_chk", DISASM_MEMFN_BZERO },
		{ "strcpy", DISASM_MEMFN_STRCPY },
		{ "stpcpy", DISASM_MEMFN_STRCPY },
		{ "__stpcpy", DISASM_MEMFN_STRCPY },
		{ "__strcpy_chk", DISASM_MEMFN_STRCPY },
		{ "__stpcpy_chk", DISASM_MEMFN_STRCPY },
		{ "strncpy", DISASM_MEMFN_STRNCPY },
		{ "stpncpy", DISASM_MEMFN_STRNCPY },
		{ "__strncpy_chk", DISASM_MEMFN_STRNCPY },
		{ "__stpncpy_chk", DISASM_MEMFN_STRNCPY },
		{ "strcat", DISASM_MEMFN_STRCAT },
		{ "__strcat_chk", DISASM_MEMFN_STRCAT },
		{ "strncat", DISASM_MEMFN_STRNCAT },
		{ "__strncat_chk", DISASM_MEMFN_STRNCAT },
		{ "strlen", DISASM_MEMFN_STRLEN },
		{ "strdup", DISASM_MEMFN_STRLEN },
		{ "__strdup", DISASM_MEMFN_STRLEN },
		{ "strrchr", DISASM_MEMFN_STRLEN },
		{ "rindex", DISASM_MEMFN_STRLEN },
		{ "strnlen", DISASM_MEMFN_STRNLEN },
		{ "strndup", DISASM_MEMFN_STRNLEN },
		{ "__strndup", DISASM_MEMFN_STRNLEN },
		{ "strcmp", DISASM_MEMFN_STRCMP },
		{ "strncmp", DISASM_MEMFN_STRNCMP },
		{ "strcasecmp", DISASM_MEMFN_STRCASECMP },
		{ "strncasecmp", DISASM_MEMFN_STRNCASECMP },
		{ "memcmp", DISASM_MEMFN_MEMCMP },
		{ "bcmp", DISASM_MEMFN_MEMCMP },
		{ "__memcmpeq", DISASM_MEMFN_MEMCMP },
		{ "strchr", DISASM_MEMFN_STRCHR },
		{ "index", DISASM_MEMFN_STRCHR },
		{ "strchrnul", DISASM_MEMFN_STRCHR },
		{ "memchr", DISASM_MEMFN_MEMCHR },
		{ "sprintf", DISASM_MEMFN_PRINT },
		{ "vsprintf", DISASM_MEMFN_PRINT },
		{ "__sprintf_chk", DISASM_MEMFN_PRINT },
		{ "__vsprintf_chk", DISASM_MEMFN_PRINT },
		{ "snprintf", DISASM_MEMFN_PRINT },
		{ "vsnprintf", DISASM_MEMFN_PRINT },
		{ "__snprintf_chk", DISASM_MEMFN_PRINT },
		{ "__vsnprintf_chk", DISASM_MEMFN_PRINT },
		{ "fgets", DISASM_MEMFN_PRINT },
		{ "__fgets_chk", DISASM_MEMFN_PRINT },
		{ "fgets_unlocked", DISASM_MEMFN_PRINT },
		{ "strftime", DISASM_MEMFN_PRINT },
		{ "fread", DISASM_MEMFN_FREAD },
		{ "fread_unlocked", DISASM_MEMFN_FREAD },
		{ "qsort", DISASM_MEMFN_FREAD },
		{ "fwrite", DISASM_MEMFN_FWRITE },
		{ "fwrite_unlocked", DISASM_MEMFN_FWRITE },
		{ "read", DISASM_MEMFN_READ },
		{ "pread", DISASM_MEMFN_READ },
		{ "pread64", DISASM_MEMFN_READ },
		{ "recv", DISASM_MEMFN_READ },
		{ "recvfrom", DISASM_MEMFN_READ },
		{ "write", DISASM_MEMFN_WRITE },
		{ "pwrite", DISASM_MEMFN_WRITE },
		{ "pwrite64", DISASM_MEMFN_WRITE },
		{ "send", DISASM_MEMFN_WRITE },
		{ "sendto", DISASM_MEMFN_WRITE },
		{ "strstr", DISASM_MEMFN_STRSTR },
		{ "strcasestr", DISASM_MEMFN_STRSTR },
		{ "strspn", DISASM_MEMFN_STRSPN },
		{ "strcspn", DISASM_MEMFN_STRCSPN },
		{ "strpbrk", DISASM_MEMFN_STRCSPN },
		{ "atoi", DISASM_MEMFN_NUMBER },
		{ "atol", DISASM_MEMFN_NUMBER },
		{ "atoll", DISASM_MEMFN_NUMBER },
		{ "atof", DISASM_MEMFN_NUMBER },
		{ "strtol", DISASM_MEMFN_NUMBER },
		{ "strtoul", DISASM_MEMFN_NUMBER },
		{ "strtoll", DISASM_MEMFN_NUMBER },
		{ "strtoull", DISASM_MEMFN_NUMBER },
		{ "strtoimax", DISASM_MEMFN_NUMBER },
		{ "strtoumax", DISASM_MEMFN_NUMBER },
		{ "strtod", DISASM_MEMFN_NUMBER },
		{ "strtof", DISASM_MEMFN_NUMBER },
		{ "strtold", DISASM_MEMFN_NUMBER },
		{ "__isoc23_strtol", DISASM_MEMFN_NUMBER },
		{ "__isoc23_strtoul", DISASM_MEMFN_NUMBER },
		{ "__isoc23_strtoll", DISASM_MEMFN_NUMBER },
		{ "__isoc23_strtoull", DISASM_MEMFN_NUMBER },
		{ "puts", DISASM_MEMFN_PUTS },
		{ "fputs", DISASM_MEMFN_PUTS },
		{ "fputs_unlocked", DISASM_MEMFN_PUTS },
	};

	/* hidden state: its family, and whether the call changes it */
	static const struct {
		const char *name;
		uint8_t family;
		bool write;
	} states[] = {
		{ "strtok", DISASM_STATE_STRTOK, true },
		{ "localtime", DISASM_STATE_TM, true },
		{ "gmtime", DISASM_STATE_TM, true },
		{ "ctime", DISASM_STATE_TM, true },
		{ "asctime", DISASM_STATE_ASCTIME, true },
		{ "getenv", DISASM_STATE_ENV, false },
		{ "secure_getenv", DISASM_STATE_ENV, false },
		{ "setenv", DISASM_STATE_ENV, true },
		{ "unsetenv", DISASM_STATE_ENV, true },
		{ "putenv", DISASM_STATE_ENV, true },
		{ "clearenv", DISASM_STATE_ENV, true },
		{ "drand48", DISASM_STATE_RAND48, true },
		{ "lrand48", DISASM_STATE_RAND48, true },
		{ "mrand48", DISASM_STATE_RAND48, true },
		{ "srand48", DISASM_STATE_RAND48, true },
		{ "seed48", DISASM_STATE_RAND48, true },
		{ "lcong48", DISASM_STATE_RAND48, true },
		{ "getpwnam", DISASM_STATE_PASSWD, true },
		{ "getpwuid", DISASM_STATE_PASSWD, true },
		{ "getpwent", DISASM_STATE_PASSWD, true },
		{ "getgrnam", DISASM_STATE_GROUP, true },
		{ "getgrgid", DISASM_STATE_GROUP, true },
		{ "getgrent", DISASM_STATE_GROUP, true },
		{ "gethostbyname", DISASM_STATE_HOST, true },
		{ "gethostbyname2", DISASM_STATE_HOST, true },
		{ "gethostbyaddr", DISASM_STATE_HOST, true },
	};

	/* an OpenMP runtime's waits (LLVM libomp: its barriers, fork/join
	 * and locks end on plain loads of flags its threads store) */
	static const struct {
		const char *name;
		uint8_t kind;
	} omp[] = {
		{ "__kmpc_fork_call", DISASM_OMP_EVERYONE },
		{ "__kmpc_fork_teams", DISASM_OMP_EVERYONE },
		{ "__kmpc_omp_taskwait", DISASM_OMP_EVERYONE },
		{ "__kmpc_end_taskgroup", DISASM_OMP_EVERYONE },
		{ "__kmpc_omp_wait_deps", DISASM_OMP_EVERYONE },
		{ "GOMP_taskwait", DISASM_OMP_EVERYONE },
		{ "GOMP_taskgroup_end", DISASM_OMP_EVERYONE },
		{ "__kmpc_barrier", DISASM_OMP_BARRIER },
		{ "__kmpc_copyprivate", DISASM_OMP_COPYPRIVATE },
		{ "__kmpc_cancel_barrier", DISASM_OMP_BARRIER },
		{ "__kmpc_critical", DISASM_OMP_MUTEX },
		{ "__kmpc_critical_with_hint", DISASM_OMP_MUTEX },
		{ "__kmpc_ordered", DISASM_OMP_MUTEX },
		{ "__kmpc_reduce", DISASM_OMP_MUTEX },
		{ "__kmpc_reduce_nowait", DISASM_OMP_MUTEX },
		{ "__kmpc_set_lock", DISASM_OMP_MUTEX },
		{ "__kmpc_set_nest_lock", DISASM_OMP_MUTEX },
		{ "__kmpc_test_lock", DISASM_OMP_MUTEX },
		{ "__kmpc_test_nest_lock", DISASM_OMP_MUTEX },
		{ "omp_set_lock", DISASM_OMP_MUTEX },
		{ "omp_set_nest_lock", DISASM_OMP_MUTEX },
		{ "omp_test_lock", DISASM_OMP_MUTEX },
		{ "omp_test_nest_lock", DISASM_OMP_MUTEX },
	};

	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		if (!strcmp(name, fns[i].name))
			return fns[i].kind;
	for (size_t i = 0; i < sizeof(omp) / sizeof(omp[0]); i++)
		if (!strcmp(name, omp[i].name))
			return (uint8_t)(DISASM_MEMFN_OMP + omp[i].kind);
	for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++)
		if (!strcmp(name, states[i].name))
			return (uint8_t)(DISASM_MEMFN_STATE +
					 2 * states[i].family +
					 states[i].write);
	return DISASM_MEMFN_NONE;
}

const char *disasm_state_name(uint64_t addr)
{
	static const char *const names[DISASM_STATE_COUNT] = {
		[DISASM_STATE_STRTOK] = "strtok's position",
		[DISASM_STATE_TM] = "the struct tm of localtime and gmtime",
		[DISASM_STATE_ASCTIME] = "asctime's string",
		[DISASM_STATE_ENV] = "the environment (getenv, setenv)",
		[DISASM_STATE_RAND48] = "drand48's seed",
		[DISASM_STATE_PASSWD] = "getpwnam's struct passwd",
		[DISASM_STATE_GROUP] = "getgrnam's struct group",
		[DISASM_STATE_HOST] = "gethostbyname's struct hostent",
	};
	uint64_t a = addr & ((1ull << 48) - 1);

	if (a < DISASM_STATE_BASE ||
	    a >= DISASM_STATE_ADDR(DISASM_STATE_COUNT))
		return NULL;
	return names[(a - DISASM_STATE_BASE) / 64];
}

/* x onto *v (*n of them, room for *cap); false when out of memory */
static bool memfn_add(struct memfn_site **v, size_t *n, size_t *cap,
		      struct memfn_site x)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 8;
		struct memfn_site *w = realloc(*v, nc * sizeof(*w));

		if (!w)
			return false;
		*v = w;
		*cap = nc;
	}
	(*v)[(*n)++] = x;
	return true;
}

/*
 * The file's GOT slots that the loader binds to a memory function of
 * libc's (R_X86_64_JUMP_SLOT, R_X86_64_GLOB_DAT relocations naming it),
 * and the PLT entries (16 bytes each, in .plt or .plt.sec) that jump
 * through them: *got and *plt, malloc'd and sorted.  None is no error.
 */
struct got_sites {
	struct memfn_site **v;
	size_t *n, cap;
};

static bool add_got_site(void *ctx, const GElf_Rela *r, const GElf_Sym *sym,
			 const char *name)
{
	struct got_sites *g = ctx;
	uint8_t k;

	(void)sym;
	if ((GELF_R_TYPE(r->r_info) != R_X86_64_JUMP_SLOT &&
	     GELF_R_TYPE(r->r_info) != R_X86_64_GLOB_DAT) ||
	    !(k = memfn_kind(name)))
		return true;
	return memfn_add(g->v, g->n, &g->cap,
			 (struct memfn_site){ r->r_offset, k });
}

static void memfn_sites(Elf *e, struct memfn_site **got, size_t *ngot,
			struct memfn_site **plt, size_t *nplt)
{
	Elf_Scn *scn = NULL;
	size_t pcap = 0, shstr;
	struct got_sites g = { got, ngot, 0 };

	*got = *plt = NULL;
	*ngot = *nplt = 0;
	elf_dyn_relocs(e, add_got_site, &g);
	if (!*ngot)
		return;
	qsort(*got, *ngot, sizeof(**got), cmp_memfn);
	if (elf_getshdrstrndx(e, &shstr))
		return;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		const char *nm;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(nm = elf_strptr(e, shstr, sh.sh_name)) ||
		    (strcmp(nm, ".plt") && strcmp(nm, ".plt.sec")) ||
		    !(d = elf_getdata(scn, NULL)) || !d->d_buf ||
		    d->d_size < sh.sh_size)
			continue;
		const uint8_t *b = d->d_buf;

		for (size_t at = 0; at + 16 <= sh.sh_size; at += 16) {
			/* an entry's jump through its slot: [f2] ff 25 disp32
			 * (bnd jmp *disp(%rip)), after an endbr64 or not */
			for (size_t j = at; j + 6 <= at + 16; j++) {
				size_t op = b[j] == 0xf2 ? j + 1 : j;

				if (op + 6 > at + 16 || b[op] != 0xff ||
				    b[op + 1] != 0x25)
					continue;
				int32_t disp;

				memcpy(&disp, b + op + 2, 4);
				uint64_t slot = sh.sh_addr + op + 6 +
						(uint64_t)(int64_t)disp;
				uint8_t k = memfn_find(*got, *ngot, slot);

				if (k && !memfn_add(plt, nplt, &pcap,
						    (struct memfn_site){
							    sh.sh_addr + at, k }))
					return;
				break;
			}
		}
	}
	if (*nplt)
		qsort(*plt, *nplt, sizeof(**plt), cmp_memfn);
}

int disasm_scan_elf(const char *path, int mode, struct insn_info **out,
		    struct disasm_elf_info *info)
{
	struct disasm_elf_info local;
	struct elf_scan s = { 0 };
	struct sweeper sw;
	GElf_Ehdr eh;
	Elf *e;
	int fd, err;

	if (!path || !out || mode < 1 ||
	    mode > (DISASM_ATOMICS | DISASM_MEMORY | DISASM_TSC |
		    DISASM_STACK) ||
	    ((mode & DISASM_TSC) && (mode & DISASM_MEMORY)) ||
	    ((mode & DISASM_STACK) && !(mode & DISASM_MEMORY)))
		return -EINVAL;
	*out = NULL;
	if (!info)
		info = &local;
	memset(info, 0, sizeof(*info));
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e) {
		err = -ENOEXEC;
		goto out_close_fd;
	}
	if (elf_kind(e) != ELF_K_ELF || gelf_getclass(e) != ELFCLASS64 ||
	    !gelf_getehdr(e, &eh) || eh.e_machine != EM_X86_64) {
		err = -ENOEXEC;
		goto out_end_elf;
	}
	load_info(e, &eh, info);

	err = collect_sections(e, &s);
	if (!err && s.nranges == 0)
		err = collect_segments(e, &s);
	if (!err)
		err = collect_functions(e, &s);
	if (err)
		goto out_free_scan;

	err = sweeper_open(&sw, mode);
	if (err)
		goto out_free_scan;
	struct memfn_site *got = NULL, *plt = NULL;

	if (mode & DISASM_MEMORY) {
		memfn_sites(e, &got, &sw.ngot, &plt, &sw.nplt);
		sw.got = got;
		sw.plt = plt;
	}
	if (s.nfuncs) {
		info->has_symtab = true;
		err = sweep_functions(&sw, &s, info);
	} else if (mode & DISASM_TSC) {
		/* an int3 goes where these are found, in every run: not from
		 * a sweep of whole sections, which decodes the data some
		 * hand-written code keeps there (a 2-byte 0f 31 in a table
		 * would be changed) */
	} else {
		for (size_t r = 0; r < s.nranges && !err; r++) {
			err = sweep(&sw, s.ranges[r].bytes, s.ranges[r].size,
				    s.ranges[r].addr, true);
			info->bytes += s.ranges[r].size;
		}
	}
	sweeper_close(&sw);
	free(got);
	free(plt);
	if (err)
		free(sw.vec.v);
	else
		err = finish(&sw.vec, out);
	if (err > 0 && (mode & DISASM_MEMORY))
		mark_constant_reads(e, *out, err);

out_free_scan:
	free(s.funcs);
	free(s.ranges);
out_end_elf:
	elf_end(e);
out_close_fd:
	close(fd);
	return err;
}

void disasm_format(const uint8_t *code, size_t len, uint64_t addr, char *buf,
		   size_t buflen)
{
	const uint8_t *p = code;
	size_t n = len;
	uint64_t a = addr;
	const cs_insn *ci;
	int w;

	if (!buf || buflen == 0)
		return;
	if (!code || (!format_handle &&
		      open_handle(&format_handle, &format_insn, true))) {
		snprintf(buf, buflen, "(bad)");
		return;
	}
	if (!cs_disasm_iter(format_handle, &p, &n, &a, format_insn)) {
		snprintf(buf, buflen, "(bad)");
		return;
	}
	ci = format_insn;
	w = snprintf(buf, buflen, "%s%s%s", ci->mnemonic,
		     ci->op_str[0] ? " " : "", ci->op_str);
	/* rip-relative operands: the absolute address, as objdump does */
	if (w >= 0 && (size_t)w < buflen) {
		const cs_x86 *x = &ci->detail->x86;

		for (int i = 0; i < x->op_count; i++) {
			const cs_x86_op *op = &x->operands[i];
			uint64_t ea;

			if (op->type != X86_OP_MEM ||
			    (op->mem.base != X86_REG_RIP &&
			     op->mem.base != X86_REG_EIP))
				continue;
			ea = ci->address + ci->size + (uint64_t)op->mem.disp;
			snprintf(buf + w, buflen - (size_t)w, "  # 0x%llx",
				 (unsigned long long)ea);
			break;
		}
	}
}
