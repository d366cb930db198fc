/*
 * rdtsc and rdtscp where PR_SET_TSC does not make them trap.
 *
 * The launcher sets PR_TSC_SIGSEGV (spawn.c), so that every rdtsc faults
 * and syscall_emulate_rdtsc() answers it from the virtual clock.  Some
 * hypervisors ignore the guest's CR4.TSD: on an AMD EPYC Firecracker VM
 * PR_GET_TSC says PR_TSC_SIGSEGV and rdtsc still runs, so a program read
 * the real counter, and Go's runtime, which seeds its scheduler's and its
 * select's random choices with cputicks(), made other runs from one
 * schedule (three invocations, three trace digests).
 *
 * tsc_traps() (probe.c) finds out once per ptloom process.  Where it does not,
 * tsc_install() puts an int3 on every rdtsc and rdtscp the sweep of a
 * mapped object finds (disasm.c, DISASM_TSC, kept in the file cache):
 * the executable and the interpreter at the exec stop, before ld.so has
 * run, and the objects mapped by the first thread's breakpoints
 * (bp_install), and tsc_hit() answers the trap as the fault is answered.
 * What is not swept (code made at run time, an object mapped after the
 * process's breakpoints, a process with one thread only after its exec)
 * still reads the real counter.  PTLOOM_TSC_SITES=1 makes the sites the
 * way on any machine (tests).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "session_int.h"

struct map_line {
	uint64_t lo, off;
	bool x;
	char path[512];
};

/* The sites of the object whose first mapping starts at base. */
static void install_object(struct process *p, const char *path,
			   uint64_t base)
{
	struct insn_info *in = NULL;
	struct disasm_elf_info info;
	int n;

	if (p->tsc.nobj >= TSC_OBJS)
		return;
	p->tsc.obj[p->tsc.nobj++] = base;
	n = bp_scan_tsc(path, &in, &info);
	uint64_t bias = info.pie ? base - info.min_vaddr : 0;

	for (int i = 0; i < n && p->tsc.n < TSC_SITES; i++) {
		uint64_t a = in[i].addr + bias;
		uint8_t c[3] = { 0 };
		bool rdtscp = in[i].len == 3;

		if (!in[i].is_tsc || (in[i].len != 2 && in[i].len != 3) ||
		    mem_read(p, a, c, in[i].len))
			continue;
		/* the file's instruction, or our int3 on it already (the
		 * template's breakpoints made again for another run) */
		bool file = c[0] == 0x0f &&
			    (rdtscp ? c[1] == 0x01 && c[2] == 0xf9
				    : c[1] == 0x31);
		bool ours = c[0] == 0xcc &&
			    (rdtscp ? c[1] == 0x01 && c[2] == 0xf9
				    : c[1] == 0x31);
		uint8_t int3 = 0xcc;

		if ((!file && !ours) || (file && mem_write(p, a, &int3, 1)))
			continue;
		p->tsc.site[p->tsc.n] = a;
		p->tsc.len[p->tsc.n++] = in[i].len;
	}
	free(in);
}

void tsc_install(struct session *s, struct process *p)
{
	char name[64], line[1024];
	struct map_line *m = NULL;
	size_t n = 0, cap = 0;
	FILE *f;

	(void)s;
	if (tsc_traps())
		return;
	snprintf(name, sizeof(name), "/proc/%d/maps", p->pid);
	if (!(f = fopen(name, "re")))
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off;
		char perm[8], path[512];
		int at = 0;

		path[0] = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &lo, &hi,
			   perm, &off, &at) < 4)
			continue;
		if (at > 0 && sscanf(line + at, "%511[^\n]", path) < 1)
			path[0] = 0;
		if (path[0] != '/')
			continue; /* anonymous, [vdso] (the agent's), ... */
		if (n == cap) {
			size_t nc = cap ? 2 * cap : 64;
			struct map_line *nm = realloc(m, nc * sizeof(*m));

			if (!nm)
				break;
			m = nm;
			cap = nc;
		}
		m[n].lo = lo;
		m[n].off = off;
		m[n].x = perm[2] == 'x';
		snprintf(m[n].path, sizeof(m[n].path), "%s", path);
		n++;
	}
	fclose(f);
	for (size_t i = 0; i < n; i++) {
		uint64_t base = 0;
		bool done = false;

		if (!m[i].x)
			continue;
		/* its object's load base: the mapping of its offset 0 */
		for (size_t k = 0; k < n && !base; k++)
			if (m[k].off == 0 && !strcmp(m[k].path, m[i].path))
				base = m[k].lo;
		for (int k = 0; base && k < p->tsc.nobj && !done; k++)
			done = p->tsc.obj[k] == base;
		if (base && !done)
			install_object(p, m[i].path, base);
	}
	free(m);
}

bool tsc_hit(struct session *s, struct thread *t, uint64_t addr)
{
	for (int i = 0; i < t->p->tsc.n; i++)
		if (t->p->tsc.site[i] == addr) {
			t->regs.rip = addr;
			syscall_answer_rdtsc(s, t, t->p->tsc.len[i] == 3,
					     t->p->tsc.len[i]);
			return true;
		}
	return false;
}

/* The instructions' own first byte back, through memfd (a free child, a
 * hand-over to gdb). */
void tsc_restore(const struct process *p, int memfd)
{
	static const uint8_t op = 0x0f;

	for (int i = 0; i < p->tsc.n; i++)
		if (pwrite(memfd, &op, 1, (off_t)p->tsc.site[i]) != 1)
			continue;
}
