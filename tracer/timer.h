/*
 * Timers on the virtual clock (tracer/timer.c): alarm, ITIMER_REAL and
 * timerfd expiry, kept per process in virtual time.
 */
#ifndef PTLOOM_TIMER_H
#define PTLOOM_TIMER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct session;
struct thread;

/* At a seccomp stop: true when nr is a timer call answered here. */
bool timer_enter(struct session *s, struct thread *t, long nr, bool *point);
/* A read chosen to run: true if it reads a timerfd (*runs: it did not
 * block). */
bool timer_read(struct session *s, struct thread *t, bool *runs);
/* Its blocked timerfd read timed out: return the expirations. */
void timer_read_timeout(struct session *s, struct thread *t);
/* Before a choice: fire the timers the virtual clock reached (time jumps
 * to the earliest when no thread can run). */
void timer_tick(struct session *s);
void timer_free(struct session *s);
/* "fd 3 (anon_inode:[timerfd])" */
void timer_describe_fd(pid_t pid, int fd, char *buf, size_t len);

#endif
