/*
 * How a run is described (tracer/describe.c): where a stopped thread is in
 * user code, data addresses by name, the trace's symbols while each
 * process is alive, and the report of every thread at a failure.
 */
#ifndef PTLOOM_DESCRIBE_H
#define PTLOOM_DESCRIBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct session;
struct process;
struct thread;

void session_where(struct session *s, struct thread *t, char *buf,
		   size_t len);
/* A data address by name ("balance"), or in hex without symbols. */
void session_describe_data(struct session *s, struct process *p,
			   uint64_t addr, char *buf, size_t len);
/* Symbolise the events of p's current image while p is alive. */
void session_symbolize_process(struct session *s, struct process *p);
/* At p's exec: the events of the image it leaves, if a fork copy. */
void session_symbolize_fork_image(struct session *s, struct process *p);
/* A policy's own name of the place of t's event e (a Python frame). */
struct event;
void policy_locate(struct session *s, struct thread *t, struct event *e);
/* Every live process's events. */
void symbolize_trace(struct session *s);
/* The symbolizer lets go of its process (a new image, an end). */
void drop_symbols(struct session *s);
/* res->threads: every thread's state, place and stack. */
void report_threads(struct session *s);
/* A runner's failure its output places at a source line (describe.c). */
void describe_output_failure(struct session *s);

#endif
