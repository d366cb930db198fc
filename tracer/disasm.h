/*
 * Instruction decoding for scheduling points (capstone, x86-64).
 *
 * The tracer needs two things from machine code: which instructions in a
 * program may touch shared memory (to plant breakpoints there before a run),
 * and, when one of them is hit, what address it is about to access (to tell
 * the race detector) or how to execute it without single-stepping (push).
 *
 * disasm_decode() describes one instruction; disasm_scan() and
 * disasm_scan_elf() sweep code and keep the instructions a --points mode
 * cares about.  Decoding is pure: nothing here reads a tracee.
 *
 * Capstone 4's per-operand read/write flags are wrong for many stores
 * (cmpxchg, movq/movnti/vmovdqa to memory, fst, fistp, stmxcsr, rol ...);
 * disasm.c derives them from operand order and a short list instead.  See
 * tests/unit/test_disasm.c.
 */
#ifndef PTLOOM_DISASM_H
#define PTLOOM_DISASM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/user.h>

/* Registers that can appear in an address, by their own numbering. */
enum disasm_reg {
	DISASM_REG_NONE = 0,
	DISASM_REG_RAX,
	DISASM_REG_RCX,
	DISASM_REG_RDX,
	DISASM_REG_RBX,
	DISASM_REG_RSP,
	DISASM_REG_RBP,
	DISASM_REG_RSI,
	DISASM_REG_RDI,
	DISASM_REG_R8,
	DISASM_REG_R9,
	DISASM_REG_R10,
	DISASM_REG_R11,
	DISASM_REG_R12,
	DISASM_REG_R13,
	DISASM_REG_R14,
	DISASM_REG_R15,
	DISASM_REG_RIP,
	DISASM_REG_VECTOR, /* a VSIB index (gather/scatter): not computable */
	DISASM_REG_MAX
};

/* Segments that change an address in 64-bit mode. */
enum disasm_seg {
	DISASM_SEG_NONE = 0,
	DISASM_SEG_FS,
	DISASM_SEG_GS,
};

/* One explicit memory operand: seg:[base + index*scale + disp]. */
struct disasm_mem {
	int64_t disp;  /* rip-relative: already the absolute address */
	uint8_t seg;   /* enum disasm_seg */
	uint8_t base;  /* enum disasm_reg; never RIP once decoded */
	uint8_t index; /* enum disasm_reg */
	uint8_t scale; /* 1, 2, 4 or 8 */
	uint8_t size;  /* bytes accessed (one element for string ops) */
	bool read;
	bool write;
	bool addr32; /* 0x67 prefix: the address wraps at 4 GiB */
};

struct insn_info {
	uint64_t addr;
	/* direct call/jump destination; for a call of an OpenMP runtime's
	 * copyprivate (memfn), its copy function; else 0 */
	uint64_t target;
	struct disasm_mem mem[2]; /* the written operand first */
	uint8_t nmem;		  /* memory operands that access memory */
	uint8_t len;
	/* DISASM_MEMORY, swept in its function: the bytes from here that a
	 * 5-byte jump may cover when the instruction is shorter (it and the
	 * ones after it: no call, return, indirect jump, memory operand or
	 * syscall among them, no branch of the function, direct or
	 * endbr64-marked, into them, the function without an indirect jump;
	 * tracer/tramp.c), else 0 */
	uint8_t move_len;
	uint8_t size;	     /* access size in bytes: mem[0].size */
	bool is_atomic;	     /* lock prefix, xchg with memory, cmpxchg* */
	bool is_tsc;	     /* rdtsc or rdtscp (DISASM_TSC) */
	bool is_rand;	     /* rdrand or rdseed (DISASM_TSC) */
	bool mem_read;	     /* some operand reads memory */
	bool mem_write;	     /* some operand writes memory */
	bool rip_relative;   /* mem[0].disp came from rip: relocate it */
	bool stack_relative; /* base rsp, or rbp used as a frame pointer */
	bool tls;	     /* fs: or gs: segment */
	bool vsib;	     /* vector-indexed: no single address */
	bool is_call;
	/* DISASM_MEMORY: a call of the file's to one of libc's memory and
	 * string functions (memcpy, memset, strcpy, strcmp, strlen, their
	 * _chk forms...; through its PLT entry or its GOT slot): which
	 * (enum disasm_memfn), else 0.  Their accesses are libc's, which
	 * no sweep of the file sees (race discovery observes them at the
	 * call: tracer/thread.c ranged_access) */
	uint8_t memfn;
	bool is_ret;
	bool is_jump;
	bool is_string_op; /* movs, stos, lods, scas, cmps, ins, outs */
	bool has_rep;	   /* rep/repe/repne prefix (string ops) */
	bool repne;	   /* ... repne: a cmps or scas ends at an equal */
	bool is_push_reg;  /* push of a 64-bit general register */
	int push_reg;	   /* enum disasm_reg, when is_push_reg */
	/* disasm_scan_elf: it only reads, rip-relative, the file's read-only
	 * data (a segment without write permission, or what the loader
	 * makes read-only after relocation, RELRO, in a dynamic object):
	 * no write can race with it */
	bool reads_constant;
	/* it touches no memory, explicitly or implicitly (no stack, no
	 * string op, no lock), and is no syscall, fence, interrupt or
	 * privileged or serialising instruction: single-stepping it can
	 * neither read nor write anything another thread could see
	 * (tracer/tso.c) */
	bool reg_only;
};

/* Scan modes. */
enum {
	DISASM_ATOMICS = 1, /* atomic read-modify-writes only */
	DISASM_MEMORY = 2,  /* any non-stack, non-TLS memory access + atomics */
	DISASM_TSC = 4,	    /* rdtsc, rdtscp, rdrand, rdseed only (tsc.c) */
	/* with DISASM_MEMORY: the stack-relative accesses too (rsp-based,
	 * rbp-based in a frame-pointer function): race discovery once a
	 * thread was seen touching another's stack (session_config.
	 * observe_stack) */
	DISASM_STACK = 8,
};

/* Facts about a scanned ELF file the caller needs to place its results. */
struct disasm_elf_info {
	bool pie;	    /* ET_DYN: add the load bias to every address */
	bool has_symtab;    /* swept function by function */
	uint64_t min_vaddr; /* lowest PT_LOAD p_vaddr, page-aligned down */
	size_t nfuncs;	    /* function ranges swept */
	size_t bytes;	    /* code bytes swept */
};

/* Decode one instruction from bytes at addr.  Returns 0 or -EINVAL.  Uses
 * a capstone handle per calling thread, opened on first use. */
int disasm_decode(const uint8_t *code, size_t len, uint64_t addr,
		  struct insn_info *out);

/* The address m accesses given the registers (fs:/gs: bases included).
 * A vsib operand yields its address with the vector index left out. */
uint64_t disasm_mem_addr(const struct disasm_mem *m,
			 const struct user_regs_struct *regs);

/* Effective address of the first (written, if any) memory operand. */
uint64_t disasm_effective_addr(const struct insn_info *in,
			       const struct user_regs_struct *regs);

/* The value of a register in enum disasm_reg numbering (0 for NONE). */
uint64_t disasm_reg_value(int reg, const struct user_regs_struct *regs);

/* Add a load bias to addr, target and rip-relative displacements. */
void disasm_relocate(struct insn_info *in, uint64_t bias);

/*
 * Linear sweep of code at vaddr, keeping what mode selects.  Undecodable
 * bytes are skipped one at a time.  Returns the count or -errno; *out is
 * malloc'd (NULL when the count is 0) and sorted by address.
 */
int disasm_scan(const uint8_t *code, size_t len, uint64_t vaddr, int mode,
		struct insn_info **out);

/*
 * Sweep the executable sections of an ELF file, function by function when
 * .symtab has FUNC symbols (the PLT, .init/.fini and the C runtime's own
 * functions such as _start or frame_dummy are left out), else section by
 * section.  Addresses are link-time; for a PIE add the load bias
 * (disasm_relocate()); in a relocatable object (.o) they are offsets in
 * their section.  info may be NULL.  Returns the count, -ENOEXEC if the
 * file is not an x86-64 ELF file, or another -errno.
 *
 * stack_relative: disasm_decode() takes any [rbp + disp] for a frame
 * access.  DISASM_MEMORY sweeps follow prologues instead: `push %rbp`
 * makes rbp a general register until `mov %rsp,%rbp`; a .symtab function
 * starts without a frame pointer, a range without symbols with one.
 */
int disasm_scan_elf(const char *path, int mode, struct insn_info **out,
		    struct disasm_elf_info *info);
/* insn_info.memfn: which libc function a call calls, by what its
 * accesses are (tracer/thread.c ranged_access takes their ranges from the
 * registers and, for a string's length, from memory) */
enum disasm_memfn {
	DISASM_MEMFN_NONE,
	DISASM_MEMFN_COPY,	/* memcpy, memmove, mempcpy: reads rsi, writes
				 * rdi, rdx bytes */
	DISASM_MEMFN_SET,	/* memset: writes rdi, rdx bytes */
	DISASM_MEMFN_BZERO,	/* bzero, explicit_bzero: writes rdi, rsi */
	DISASM_MEMFN_STRCPY,	/* strcpy, stpcpy: reads rsi's string,
				 * writes as many bytes at rdi */
	DISASM_MEMFN_STRNCPY,	/* strncpy, stpncpy: reads rsi's string (at
				 * most rdx bytes), writes rdx at rdi */
	DISASM_MEMFN_STRCAT,	/* strcat: reads both strings, writes rsi's
				 * after rdi's */
	DISASM_MEMFN_STRNCAT,	/* strncat: the same, at most rdx of rsi's */
	DISASM_MEMFN_STRLEN,	/* strlen, strdup, strrchr: reads rdi's
				 * string */
	DISASM_MEMFN_STRNLEN,	/* strnlen, strndup: at most rsi bytes */
	DISASM_MEMFN_STRCMP,	/* strcmp: reads rdi's and rsi's strings to
				 * their first difference */
	DISASM_MEMFN_STRNCMP,	/* strncmp: at most rdx bytes */
	DISASM_MEMFN_STRCASECMP,  /* strcasecmp: ASCII case folded */
	DISASM_MEMFN_STRNCASECMP, /* strncasecmp */
	DISASM_MEMFN_MEMCMP,	/* memcmp, bcmp: to the first difference, at
				 * most rdx bytes */
	DISASM_MEMFN_STRCHR,	/* strchr, strchrnul: rdi's string to the
				 * byte sil */
	DISASM_MEMFN_MEMCHR,	/* memchr: the same, rdx bytes, no NUL */
	DISASM_MEMFN_PRINT,	/* sprintf, snprintf, fgets, strftime: writes
				 * rdi's first byte (its length is known
				 * only at the return) */
	DISASM_MEMFN_FREAD,	/* fread, qsort: writes rsi * rdx at rdi */
	DISASM_MEMFN_FWRITE,	/* fwrite: reads rsi * rdx at rdi */
	DISASM_MEMFN_READ,	/* read, pread, recv: writes rdx at rsi */
	DISASM_MEMFN_WRITE,	/* write, pwrite, send: reads rdx at rsi */
	DISASM_MEMFN_PUTS,	/* puts, fputs: reads rdi's string */
	DISASM_MEMFN_STRSTR,	/* strstr, strcasestr: rsi's string, and
				 * rdi's to the end of the first match */
	DISASM_MEMFN_STRSPN,	/* strspn: rsi's string, and rdi's to the
				 * first byte not in it */
	DISASM_MEMFN_STRCSPN,	/* strcspn, strpbrk: to the first byte in
				 * it */
	DISASM_MEMFN_NUMBER,	/* atoi, strtol, strtod...: rdi's number,
				 * to the first byte that cannot be one's */
	DISASM_MEMFN_COUNT,
	/* from here on, a function with hidden state of libc's (POSIX's
	 * MT-Unsafe ones: strtok's position, the struct tm localtime and
	 * gmtime return, the environment): DISASM_MEMFN_STATE + 2 * its
	 * family, + 1 when the call changes the state; observed as an
	 * access to DISASM_STATE_ADDR(family) */
	DISASM_MEMFN_STATE = 32,
	/* from here on, a call of one of an OpenMP runtime's waits (LLVM
	 * libomp's fork, barrier, critical section, lock, taskwait):
	 * DISASM_MEMFN_OMP + enum disasm_omp.  No access of its own: what
	 * follows its return is ordered after what it waited for (bp.c
	 * add_omp_return) */
	DISASM_MEMFN_OMP = 96
};

/* what a wait of an OpenMP runtime orders after its return */
enum disasm_omp {
	DISASM_OMP_EVERYONE, /* all that every thread did (a join, a
				* taskwait) */
	DISASM_OMP_BARRIER,  /* what each thread did before it entered a
				* barrier */
	DISASM_OMP_MUTEX,    /* what was done before an unlock (critical,
				* omp lock, ordered, a reduction's lock) */
	DISASM_OMP_COPYPRIVATE, /* everyone's (its last barrier follows
				   every copy); its copy function
				   (insn_info.target) runs after its
				   first barrier */
	DISASM_OMP_COUNT
};

/* the families of hidden state (disasm_state_name) */
enum disasm_state {
	DISASM_STATE_STRTOK,	/* strtok */
	DISASM_STATE_TM,	/* localtime, gmtime, ctime: their struct tm */
	DISASM_STATE_ASCTIME,	/* asctime: its string */
	DISASM_STATE_ENV,	/* getenv; setenv, putenv, unsetenv, clearenv */
	DISASM_STATE_RAND48,	/* drand48, lrand48, mrand48, srand48, ... */
	DISASM_STATE_PASSWD,	/* getpwnam, getpwuid, getpwent */
	DISASM_STATE_GROUP,	/* getgrnam, getgrgid, getgrent */
	DISASM_STATE_HOST,	/* gethostbyname, gethostbyaddr */
	DISASM_STATE_COUNT
};

/* An address no process can map (past the 47 bits of user space, below
 * the 48 of a process's tag, process.h mem_name) standing for a hidden
 * state's memory */
#define DISASM_STATE_BASE 0x800000000000ull
#define DISASM_STATE_ADDR(family) \
	(DISASM_STATE_BASE + 64 * (uint64_t)(family))

/* "strtok's position": the hidden state at addr (a DISASM_STATE_ADDR,
 * any process tag above its 48 bits), NULL if addr is none */
const char *disasm_state_name(uint64_t addr);

/* "lock cmpxchgq %rdx, (%rdi)" into buf (AT&T syntax); "(bad)" when the
 * bytes do not decode.  Always NUL-terminates when buflen > 0. */
void disasm_format(const uint8_t *code, size_t len, uint64_t addr, char *buf,
		   size_t buflen);

#endif
