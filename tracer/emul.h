/*
 * Emulating the instruction under a breakpoint, so that resuming past it
 * needs no single-step (a second stop, and two writes of the int3 byte).
 *
 * Only one thread of the traced world runs at a time, and the emulating
 * thread is stopped, so a read-modify-write done here as a read, a
 * computation and a write is as atomic as the locked instruction was.
 * Covered: the one-memory-operand integer instructions that racy and
 * atomic points sit on (mov, movzx/movsx/movsxd, mov of an immediate,
 * xchg, cmpxchg, xadd, add/or/and/sub/xor/cmp with a register or an
 * immediate, inc/dec, test), with or without lock, any ModRM/SIB address
 * (rip-relative and fs:/gs: included), 8 to 64 bits, and a
 * register-to-register 32/64-bit mov or test (a function's entry: free()
 * starts with `test %rdi,%rdi`).  Everything else is
 * single-stepped by the caller.  The arithmetic flags are set as the CPU
 * sets them (tests/unit/test_emul.c compares with the CPU itself).
 */
#ifndef PTLOOM_EMUL_H
#define PTLOOM_EMUL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/user.h>

enum emul_op {
	EMU_NONE = 0,
	EMU_LOAD,	/* reg <- mem (mov, movzx, movsx, movsxd) */
	EMU_STORE,	/* mem <- reg */
	EMU_STORE_IMM,	/* mem <- imm */
	EMU_XCHG,	/* reg <-> mem */
	EMU_CMPXCHG,	/* if acc == mem: mem <- reg else acc <- mem */
	EMU_XADD,	/* reg, mem <- mem, mem + reg */
	EMU_ALU,		/* mem <- mem OP src (alu: EA_*); cmp/test: flags */
	EMU_ALU_LOAD,	/* flags of reg OP mem (cmp reg, mem) */
	EMU_INC,
	EMU_DEC,
};

/* x86's own numbering (opcode bits 3-5, the /digit of 80/81/83) */
/* Where the operand other than the register is: memory (the covered
 * instructions), another register (a plain mov at a function's entry),
 * or an immediate loaded into the register (mov $imm, %reg). */
enum emul_form { EF_MEM = 0, EF_REG, EF_IMM };

enum emul_alu { EA_ADD, EA_OR, EA_ADC, EA_SBB, EA_AND, EA_SUB, EA_XOR, EA_CMP,
		EA_TEST };

struct emul_insn {
	uint8_t op;		/* enum emul_op */
	uint8_t form;		/* enum emul_form */
	uint8_t alu;		/* EMU_ALU / EMU_ALU_LOAD: enum emul_alu */
	uint8_t len;		/* instruction length */
	uint8_t size;		/* memory operand size: 1, 2, 4, 8 */
	uint8_t rsize;		/* register operand size (movzx: 4 or 8) */
	bool sext;		/* EMU_LOAD: sign-extend (movsx, movsxd) */
	uint8_t reg;		/* register operand, 0-15 */
	bool high8;		/* it is ah/ch/dh/bh */
	bool has_imm;		/* the source is imm, not reg */
	int64_t imm;		/* sign-extended immediate */
	/* the address: seg + base + index * scale + disp (+ next rip) */
	bool has_base, has_index, rip;
	uint8_t base, index, scale;
	uint8_t seg;		/* 0, 4 (fs), 5 (gs) */
	int32_t disp;
};

/* Decode code[0..n) (n >= 15 is enough).  False: not one of the covered
 * forms; the caller single-steps it. */
bool emul_decode(const uint8_t *code, size_t n, struct emul_insn *e);

/* The memory operand's address, for an instruction at rip. */
uint64_t emul_addr(const struct emul_insn *e,
		   const struct user_regs_struct *r, uint64_t rip);

/* Whether the instruction reads / writes its memory operand. */
bool emul_reads(const struct emul_insn *e);
bool emul_writes(const struct emul_insn *e);

/*
 * Execute e on r (rip advanced past it) with *mem the memory operand's
 * old value (size bytes, zero-extended; ignored when it does not read);
 * on return *mem is the value to store when emul_writes().
 */
void emul_run(const struct emul_insn *e, struct user_regs_struct *r,
	      uint64_t *mem);

/* A general register by its x86 number (0 rax ... 15 r15). */
uint64_t *emul_reg(struct user_regs_struct *r, int n);

#endif
