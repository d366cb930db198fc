/*
 * Python programs under the GIL (CPython 3.11 to 3.13): detection of the
 * interpreter, a scheduling policy whose preemptions are GIL hand-offs at
 * the interpreter's eval-breaker checks, and Python-level descriptions of
 * threads (threading name, function, file, line) read from the
 * interpreter's state in the tracee's memory.  docs/python.md explains it.
 */
#ifndef PTLOOM_PYTHON_H
#define PTLOOM_PYTHON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../tracer/tracer.h"

/*
 * Where CPython keeps what ptloom reads, for one interpreter: byte
 * offsets into its structures.  3.11 and 3.12 from tables in python.c
 * (printed with offsetof() against each version's headers); 3.13 and
 * later from the interpreter's own _PyRuntime.debug_offsets
 * (_Py_DebugOffsets), read from its ELF file.
 */
struct python_layout {
	unsigned minor;		/* 11, 12, 13, ... */
	uint32_t rt_interp_head, rt_interp_main;
	uint32_t rt_signals_pending; /* 3.11: the handler's first load */
	uint32_t rt_gil;	/* 3.11: the GIL in _PyRuntime */
	uint32_t is_gil_ptr;	/* 3.12+: interp->ceval.gil */
	uint32_t is_threads_head;
	uint32_t is_eval_breaker; /* 3.11, 3.12: interp->ceval.eval_breaker */
	uint32_t is_keep_breaker; /* 3.12: a flag the breaker is recomputed
				   * from and the handler ignores */
	uint32_t is_initial_thread; /* 0: the list's oldest thread state */
	uint32_t ts_next, ts_interp, ts_native_tid, ts_size;
	uint32_t ts_frame;	/* tstate->cframe (3.11, 3.12) or ->current_frame */
	bool cframe;		/* ts_frame is a _PyCFrame (->current_frame at 0/8) */
	uint32_t cf_current_frame;
	uint32_t ts_eval_breaker; /* 3.13+: the per-thread breaker */
	uint32_t fr_code, fr_previous, fr_instr, fr_owner, fr_localsplus;
	uint32_t co_firstlineno, co_filename, co_name, co_linetable;
	uint32_t co_firsttraceable, co_code;
	uint32_t str_ascii_data, str_compact_data;
	uint32_t tp_flags, tp_basicsize, ht_cached_keys;
	uint32_t dict_keys, dict_values;
	/* asyncio's tasks: sys.modules (interp->modules, 3.12+
	 * interp->imports.modules; 0: unknown) and a coroutine's own frame
	 * (PyCoroObject.cr_iframe) */
	uint32_t is_modules, gen_iframe;
};

/* What the interpreter's ELF file says (link-time addresses). */
struct python_info {
	bool is_python;	    /* a CPython interpreter (it exports _PyRuntime) */
	bool usable;	    /* Python-level scheduling is possible */
	unsigned version;   /* PY_VERSION_HEX, 0 if unknown */
	char path[4096];    /* the interpreter (a script's #! resolved) */
	uint64_t runtime;   /* &_PyRuntime */
	uint64_t check_pc;  /* the eval-breaker handler in the eval loop */
	uint64_t code_type, unicode_type;
	uint64_t text_lo, text_hi; /* the interpreter's own code */
	/* "" when the interpreter is linked into the executable; else the
	 * libpython it loads (pyenv's, Fedora's builds): every address
	 * above is then an offset from that object's first mapping, which
	 * each run finds in the process (sched_policy.object) */
	char object[4096];
	char why[256];	    /* why not usable, one line */
	struct python_layout L;
};

/* Look at the program (an ELF file, or a script whose #! names one).
 * Returns 0 and fills *pi (pi->is_python false for other programs). */
int python_detect(const char *path, struct python_info *pi);

/* The last exec before the first thread, when the program exec'd more
 * than once (a wrapper's): argv/envp malloc'd (free_strings), NULL with
 * why saying why a run cannot start there. */
struct probe_exec {
	char **argv, **envp;
	char why[128];
};

/* What a program that is not itself an interpreter (a shell shim such
 * as pyenv's `python3`) runs as its first process once it creates a
 * thread: one run with the first alternative at every choice, sync
 * points, no policy and no checkpoint.  0 and exe filled, or -errno
 * (-ENOENT: it created no thread); *pe (if not NULL) filled too. */

int python_probe(const struct session_config *cfg, char *exe, size_t len,
		 struct probe_exec *pe);

/* The policy for session_config.policy; c_points: --points was given, so
 * C-level points outside the interpreter (C extensions) stay preemption
 * points.  It applies to every process of the tree that execs a CPython
 * it supports (sched_policy.adopt; pi, if not NULL and usable, is the
 * command's own interpreter as already detected).  The policy lives
 * until python_policy_free(). */
struct sched_policy *python_policy_new(const struct python_info *pi,
				       bool c_points);
/* Why an interpreter a process exec'd was left at the C level (3.14, a
 * free-threaded build, ...), the first one seen; NULL if none. */
const char *python_policy_why(const struct sched_policy *p);
void python_policy_free(struct sched_policy *p);

/* The last Python traceback in a program's output: its innermost frame as
 * "withdraw at bank.py:9" and the exception line.  Returns true if one
 * was found. */
bool python_traceback(const char *out, size_t len, char *where,
		      size_t wlen, char *exc, size_t elen);

/* Decode a 3.11 location table (co_linetable) entry for instruction
 * index idx of a code object starting at firstlineno; -1 if none.
 * Exposed for tests/unit. */
int python_line_311(const uint8_t *tab, size_t len, int firstlineno,
		    int idx);

#endif
