/*
 * Instructions whose answer is the machine's, at an int3 of ptloom's:
 * rdrand and rdseed everywhere, rdtsc and rdtscp where PR_SET_TSC does
 * not make them trap.
 *
 * rdrand and rdseed never trap.  libstdc++'s std::random_device reads
 * rdrand (rdseed) where the CPU has it, so a C++ test seeding its random
 * choices from it made other runs from one schedule: two invocations of
 * `run --seed 1` printed two numbers.  Their answer is now a number of
 * the run's --seed stream, the one getrandom reads.
 *
 * The launcher sets PR_TSC_SIGSEGV (spawn.c), so that every rdtsc faults
 * and syscall_emulate_rdtsc() answers it from the virtual clock.  Some
 * hypervisors ignore the guest's CR4.TSD: on an AMD EPYC Firecracker VM
 * PR_GET_TSC says PR_TSC_SIGSEGV and rdtsc still runs, so a program read
 * the real counter, and Go's runtime, which seeds its scheduler's and its
 * select's random choices with cputicks(), made other runs from one
 * schedule (three invocations, three trace digests).  tsc_traps()
 * (probe.c) finds out once per ptloom process.
 *
 * tsc_install() puts the int3s on what the sweep of a mapped object finds
 * (disasm.c, DISASM_TSC, kept in the file cache): the executable and the
 * interpreter at the exec stop, before ld.so runs; the libraries ld.so
 * maps at its set_tid_address (its TLS set-up, after the objects and
 * before their constructors); the objects mapped by the time of the
 * first thread's breakpoints (bp_install).  tsc_hit() answers the trap.
 * What is not swept (code made at run time, an object dlopen'd after the
 * process's breakpoints) still reads the machine's.  PTLOOM_TSC_SITES=1
 * takes the rdtsc sites on any machine (tests).
 *
 * Where it can, an rdtsc or rdtscp is not trapped at all, on any machine:
 * it moves, with the instructions after it (move_len), into a slot of the
 * agent's code that answers from the shared page's clock as the stop
 * would (tramp.h tramp_emit_tsc; INTERNALS, the agent's item 10): a
 * library's in the region, the executable's in the near region.  A
 * breakpoint that would meet a slot's moved bytes puts them back first
 * (tsc_unslot).  PTLOOM_TSC_SLOTS=0 keeps every site at its int3 (or
 * fault).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "session_int.h"
#include "tramp.h"

enum { K_RDTSC, K_RDTSCP, K_RAND };

/*
 * rdrand/rdseed: [66] [REX] 0f c7 /6 or /7 with a register operand.
 * The register (0-15) and the operand's size, or false.
 */
static bool rand_operand(const uint8_t *c, int len, uint8_t *reg,
			 uint8_t *size)
{
	int i = 0;
	uint8_t rex = 0;

	*size = 4;
	if (i < len && c[i] == 0x66) {
		*size = 2;
		i++;
	}
	if (i < len && (c[i] & 0xf0) == 0x40)
		rex = c[i++];
	if (rex & 8)
		*size = 8;
	if (i + 3 != len || c[i] != 0x0f || c[i + 1] != 0xc7 ||
	    (c[i + 2] & 0xc0) != 0xc0 ||
	    ((c[i + 2] >> 3) & 7) < 6)
		return false;
	*reg = (uint8_t)((c[i + 2] & 7) | (rex & 1 ? 8 : 0));
	return true;
}

/* The CPU has BMI2 (the slot's rorx). */
static bool bmi2(void)
{
	static int has = -1;

	if (has < 0) {
		const char *e = getenv("PTLOOM_TSC_SLOTS");

		__builtin_cpu_init();
		has = __builtin_cpu_supports("bmi2") && !(e && !strcmp(e, "0"));
	}
	return has;
}

/* The rdtsc (rdtscp) at a, len bytes, whose span of mlen bytes moves:
 * into a slot of the agent's region, answered there (tramp.h).  false:
 * it cannot (no region, no room, no BMI2, bytes not the file's). */
static bool put_slot(struct process *p, uint64_t a, int len, int mlen, int k)
{
	struct tramp_plan pl;
	uint8_t orig[16], code[TRAMP_TSLOT], jump[16];
	uint64_t page = 0, slot = agent_tsc_slot(p, p->tsc.nslot, a, &page);

	if (!slot || mlen < 5 || mlen > 16 || !bmi2() ||
	    mem_read(p, a, orig, (size_t)mlen) ||
	    memchr(orig, 0xcc, (size_t)mlen) || bp_near(p, a, a + mlen) ||
	    !tramp_plan_span(orig, (size_t)mlen, a, (size_t)mlen, &pl) ||
	    !tramp_emit_tsc(&pl, len == 3, a, slot, page, code))
		return false;
	tramp_jump(a, slot, jump);
	memset(jump + 5, 0xcc, (size_t)mlen - 5);
	if (mem_write(p, slot, code, sizeof(code)) ||
	    mem_write(p, a, jump, (size_t)mlen))
		return false;
	p->tsc.slot[k] = (uint8_t)(++p->tsc.nslot);
	p->tsc.mlen[k] = (uint8_t)mlen;
	memcpy(p->tsc.morig[k], orig, (size_t)mlen);
	return true;
}

/* The sites of the object whose first mapping starts at base: rdrand
 * and rdseed, and rdtsc and rdtscp: in a slot where one can take them,
 * else at an int3 when tsc (PR_SET_TSC does not trap them). */
static void install_object(struct process *p, const char *path,
			   uint64_t base, bool tsc)
{
	const struct insn_info *in = NULL;
	struct disasm_elf_info info = { 0 };
	int n;

	if (p->tsc.nobj >= TSC_OBJS)
		return;
	p->tsc.obj[p->tsc.nobj++] = base;
	n = bp_scan_tsc(path, &in, &info);
	uint64_t bias = info.pie ? base - info.min_vaddr : 0;

	for (int i = 0; i < n && p->tsc.n < TSC_SITES; i++) {
		uint64_t a = in[i].addr + bias;
		uint8_t c[16] = { 0 }, reg = 0, size = 0;
		int len = in[i].len, k = p->tsc.n;

		/* an int3 there already is not ours to answer for (a
		 * process's table carries its sites: a fork's, the
		 * template's, a run's from it) */
		if (!(in[i].is_rand || in[i].is_tsc) || len < 2 ||
		    len > 15 || mem_read(p, a, c, (size_t)len) || c[0] == 0xcc)
			continue;
		uint8_t first = c[0];

		if (in[i].is_tsc) {
			if (c[0] != 0x0f ||
			    (len == 2 ? c[1] != 0x31
				      : len != 3 || c[1] != 0x01 ||
						c[2] != 0xf9))
				continue;
			p->tsc.kind[k] = len == 2 ? K_RDTSC : K_RDTSCP;
			p->tsc.slot[k] = 0;
			if (put_slot(p, a, len, in[i].move_len, k)) {
				p->tsc.site[k] = a;
				p->tsc.len[k] = (uint8_t)len;
				p->tsc.orig[k] = first;
				p->tsc.n++;
				continue;
			}
			if (!tsc)
				continue; /* it traps */
		} else {
			if (!rand_operand(c, len, &reg, &size))
				continue;
			p->tsc.kind[k] = K_RAND;
			p->tsc.slot[k] = 0;
		}
		uint8_t int3 = 0xcc;

		if (mem_write(p, a, &int3, 1))
			continue;
		p->tsc.site[k] = a;
		p->tsc.len[k] = (uint8_t)len;
		p->tsc.orig[k] = first;
		p->tsc.reg[k] = reg;
		p->tsc.size[k] = size;
		p->tsc.n++;
	}
}

bool tsc_exe_slots(struct process *p)
{
	const struct insn_info *in = NULL;
	struct disasm_elf_info info = { 0 };
	char name[64], exe[4096];
	ssize_t len;
	int n;

	snprintf(name, sizeof(name), "/proc/%d/exe", (int)p->pid);
	if (!bmi2() || (len = readlink(name, exe, sizeof(exe) - 1)) <= 0)
		return false;
	exe[len] = 0;
	n = bp_scan_tsc(exe, &in, &info);
	for (int i = 0; i < n; i++)
		if (in[i].is_tsc && in[i].move_len >= 5)
			return true;
	return false;
}

void tsc_install(struct session *s, struct process *p)
{
	struct mapped_file *m = NULL;
	int n = proc_mapped_files(p->pid, &m);
	bool tsc = !tsc_traps();

	for (int i = 0; i < n; i++) {
		bool done = false;

		/* a first sweep of a large program's libraries takes
		 * seconds each (GraphicsMagick's: 12 s in all): a time bound
		 * or Ctrl-C ends the run here, before code whose reads are
		 * not answered yet can run */
		if (session_stop_due(s)) {
			session_fail(s, FAIL_INTERRUPTED, NULL, "interrupted");
			break;
		}

		for (int k = 0; k < p->tsc.nobj && !done; k++)
			done = p->tsc.obj[k] == m[i].start;
		if (m[i].exec && m[i].start && !done)
			install_object(p, m[i].path, m[i].start, tsc);
	}
	mapped_files_free(m, n);
}

/* The register of enum rand_operand's numbering in regs. */
static unsigned long long *reg_of(struct user_regs_struct *r, int n)
{
	unsigned long long *const regs[16] = {
		&r->rax, &r->rcx, &r->rdx, &r->rbx, &r->rsp, &r->rbp,
		&r->rsi, &r->rdi, &r->r8,  &r->r9,  &r->r10, &r->r11,
		&r->r12, &r->r13, &r->r14, &r->r15,
	};

	return regs[n & 15];
}

/* rdrand or rdseed at a site: a number of the run's --seed stream (the
 * one getrandom reads), CF set (a number is there), OF SF ZF AF PF
 * cleared, as the CPU does. */
static void answer_rand(struct session *s, struct thread *t, int i)
{
	unsigned long long *r = reg_of(&t->regs, t->p->tsc.reg[i]);
	uint64_t v = splitmix(&s->rng);

	switch (t->p->tsc.size[i]) {
	case 2:
		*r = (*r & ~0xffffull) | (v & 0xffff);
		break;
	case 4:
		*r = v & 0xffffffffu; /* a 32-bit write clears the rest */
		break;
	default:
		*r = v;
	}
	t->regs.eflags = (t->regs.eflags & ~0x8d5ull) | 1;
	t->regs.rip += t->p->tsc.len[i];
	t->regs_dirty = true;
}

bool tsc_hit(struct session *s, struct thread *t, uint64_t addr)
{
	for (int i = 0; i < t->p->tsc.n; i++) {
		if (t->p->tsc.site[i] != addr || t->p->tsc.slot[i])
			continue;
		t->regs.rip = addr;
		if (t->p->tsc.kind[i] == K_RAND)
			answer_rand(s, t, i);
		else
			syscall_answer_rdtsc(s, t, t->p->tsc.kind[i] == K_RDTSCP,
					     t->p->tsc.len[i]);
		return true;
	}
	return false;
}

/* The instructions' own first byte back, through memfd (a free child, a
 * hand-over to gdb). */
void tsc_restore(const struct process *p, int memfd)
{
	for (int i = 0; i < p->tsc.n; i++) {
		if (p->tsc.slot[i]) {
			/* (a thread in the slot goes on there, and back to
			 * the same bytes' end) */
			if (pwrite(memfd, p->tsc.morig[i], p->tsc.mlen[i],
				   (off_t)p->tsc.site[i]) != p->tsc.mlen[i])
				continue;
		} else if (pwrite(memfd, &p->tsc.orig[i], 1,
				  (off_t)p->tsc.site[i]) != 1) {
			continue;
		}
	}
}

bool tsc_slot_site(const struct process *p, uint64_t pc)
{
	for (int i = 0; i < p->tsc.n && p->tsc.nslot; i++)
		if (p->tsc.slot[i] && p->tsc.site[i] == pc)
			return true;
	return false;
}

void tsc_unslot(struct process *p, uint64_t lo, uint64_t hi)
{
	for (int i = 0; i < p->tsc.n && p->tsc.nslot; i++) {
		uint64_t a = p->tsc.site[i];
		uint8_t int3 = 0xcc;

		if (!p->tsc.slot[i] || a >= hi || a + p->tsc.mlen[i] <= lo)
			continue;
		/* its own bytes back, and the int3 where the rdtsc does not
		 * trap; a thread in the slot goes on there and back to the
		 * same bytes' end */
		if (mem_write(p, a, p->tsc.morig[i], p->tsc.mlen[i]))
			continue;
		p->tsc.slot[i] = 0;
		if (!tsc_traps())
			mem_write(p, a, &int3, 1);
	}
}

bool tsc_fault_pc(const struct process *p, uint64_t pc, uint64_t *prog)
{
	uint64_t off;
	int n = agent_tsc_slot_at(p, pc, &off);
	struct tramp_plan pl;

	for (int i = 0; n >= 0 && i < p->tsc.n; i++)
		if (p->tsc.slot[i] == n + 1)
			return tramp_plan_span(p->tsc.morig[i], p->tsc.mlen[i],
					       p->tsc.site[i], p->tsc.mlen[i],
					       &pl) &&
			       tramp_tsc_unmove(&pl, p->tsc.site[i], off, prog);
	return false;
}
