/*
 * Timers on the virtual clock (tracer/timer.c): alarm, ITIMER_REAL,
 * POSIX timers and timerfd expiry, kept per process in virtual time.
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
struct choice;
struct alt;
/* While a thread can run: every armed timer's expiry as an OP_TIMER
 * alternative (a preemption), appended to c. */
void timer_alternatives(struct session *s, struct choice *c);
/* That alternative was chosen: time moves to its deadline and it fires.
 * Returns the signal it sent (0: none). */
int timer_fire_alt(struct session *s, const struct alt *a);
/* Some timer is armed (a livelock is then not provable). */
bool timer_armed(struct session *s);
/* pid exec'd: its POSIX timers are gone. */
void timer_exec(struct session *s, pid_t pid);
/* Before a choice: fire the timers the virtual clock reached (time jumps
 * to the earliest when no thread can run).  Returns how many fired while
 * nobody could run. */
int timer_tick(struct session *s);
void timer_free(struct session *s);
/* "fd 3 (anon_inode:[timerfd])" */
void timer_describe_fd(pid_t pid, int fd, char *buf, size_t len);

#endif
