/*
 * Event loops: the order in which a wait for several descriptors learns
 * of them (asyncio, libuv, tokio/mio, Go's netpoller, GLib, libevent and
 * hand-written loops are all a poll, select or epoll_wait in a loop).
 *
 * A wait that finds descriptors ready is the kernel's to answer, with all
 * of them.  Natively, a message sent over the network may arrive later
 * than another, and a loop's timer may come due before a message it
 * races with: the order an event loop sees them in is nondeterminism
 * like a thread switch.  ptloom turns it into a choice (DEC_POLL) at
 * every such wait, made when the waiting thread performs it:
 *
 *   - the default, free: every ready descriptor, as the kernel answers;
 *   - a socket's readiness comes later ("this message arrived later"),
 *     cost 1, when two or more are ready: it is *held*, and waits of any
 *     thread leave it out until a wait finds nothing else ready and would
 *     otherwise block (a wait that must not block, timeout 0, sees nothing
 *     up to HOLD_ZERO_MAX times in a row first: a loop that only polls
 *     cannot wait for it forever);
 *   - the wait's timeout comes first, cost 1, when the wait has one
 *     within MAX_STALL_NS (world.h): the clock moves to its deadline, the
 *     ready sockets are held and the wait returns the others (nothing:
 *     it timed out).  A loop then runs its due timer before the I/O it
 *     raced with.
 *
 * Only sockets of the network families are held (TCP and UDP, loopback
 * included): their data goes through the network stack, which may deliver
 * it late, and when it comes from another process or thread of the
 * program ptloom's own scheduling decides it anyway.  A pipe, a Unix
 * socket or an eventfd written by the loop itself is ready the moment the
 * write returns, and a wait must see it (a program may rely on that), so
 * those are never held, though a timeout may still come first (the loop
 * was slow).  The sockets held are those whose other end is the
 * program's, or that listen on a loopback address (tracer/fdext.c): the
 * world's messages are the world's.
 *
 * A held answer means the wait is emulated: poll's revents, select's sets
 * and epoll_wait's events are written by ptloom and the syscall is
 * skipped.  For epoll, ptloom takes the ready events from the kernel
 * itself (an epoll_wait on its own copy of the set, which moves every
 * item as the program's would), so a held event of an edge-triggered or
 * one-shot item, which the kernel will not report again, waits in
 * struct evloop until it is delivered.  A wait with no choice and nothing
 * held runs in the kernel as before: a program without such waits, or
 * whose waits never see two ready sockets, a timeout or a held one, pays
 * nothing.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "session_int.h"

#define EVL_FILES 512	/* descriptors' files met in a run */
#define EVL_HELD 64	/* held at once */
#define EVL_PEND 256	/* epoll events taken from the kernel, held */
#define EVL_MAX 256	/* entries of one wait */
#define HOLD_ZERO_MAX 16

struct evl_file {
	uint64_t dev, ino;
	int8_t cls;		/* 0: not classified, 1: never held, 2: may be */
	char name[96];		/* "socket 127.0.0.1:41234 -> 127.0.0.1:8080" */
};

struct evl_pend {
	uint64_t set;		/* the epoll set's key */
	uint64_t key;		/* its item's descriptor's */
	uint32_t events;
	uint64_t data;
};

struct evloop {
	struct evl_file files[EVL_FILES];
	int nfiles;
	uint64_t held[EVL_HELD];
	int nheld;
	struct evl_pend pend[EVL_PEND];
	int npend;
	/* tracer/fdext.c's verdicts on sockets (evloop_memo), apart from
	 * the keys: they do not number anything */
	struct { uint64_t dev, ino; uint8_t v; } memo[EVL_FILES];
	int nmemo;
};

/* One descriptor of a wait as it is answered. */
struct ent {
	int tfd;		/* the program's descriptor */
	int slot;		/* poll/select: its index in t->pfd */
	uint32_t ev;		/* revents (poll, select) or events (epoll) */
	uint64_t data;		/* epoll */
	uint64_t key;		/* its file's (evl_key), 0: unknown */
	bool holdable, held, et, pending, out;
};

/* The key of file (dev, ino): its order of first meeting, so that it is
 * the same in every run of a schedule; 0 when the table is full. */
static uint64_t evl_key(struct evloop *v, uint64_t dev, uint64_t ino,
			struct evl_file **f)
{
	for (int i = 0; i < v->nfiles; i++)
		if (v->files[i].dev == dev && v->files[i].ino == ino) {
			*f = &v->files[i];
			return (1ull << 63) | (1ull << 62) | (uint64_t)(i + 1);
		}
	if (v->nfiles == EVL_FILES)
		return 0;
	*f = &v->files[v->nfiles];
	**f = (struct evl_file){ .dev = dev, .ino = ino };
	v->nfiles++;
	return (1ull << 63) | (1ull << 62) | (uint64_t)v->nfiles;
}

static struct evl_file *evl_file_of(struct evloop *v, uint64_t key)
{
	uint64_t i = key & ((1ull << 62) - 1);

	return i >= 1 && i <= (uint64_t)v->nfiles ? &v->files[i - 1] : NULL;
}

/* The device number as the kernel prints it (fdinfo's sdev). */
static uint64_t kdev(dev_t d)
{
	return (minor(d) & 0xff) | ((uint64_t)major(d) << 8) |
	       ((uint64_t)(minor(d) & ~0xffu) << 12);
}

static bool is_held(const struct evloop *v, uint64_t key)
{
	for (int i = 0; key && i < v->nheld; i++)
		if (v->held[i] == key)
			return true;
	return false;
}

static void hold(struct evloop *v, uint64_t key)
{
	if (key && !is_held(v, key) && v->nheld < EVL_HELD)
		v->held[v->nheld++] = key;
}

static void unhold(struct evloop *v, uint64_t key)
{
	for (int i = 0; i < v->nheld; i++)
		if (v->held[i] == key) {
			v->held[i] = v->held[--v->nheld];
			return;
		}
}

static void addr_text(const struct sockaddr_storage *a, char *buf,
		      size_t len)
{
	char h[INET6_ADDRSTRLEN] = "?";

	if (a->ss_family == AF_INET) {
		const struct sockaddr_in *i = (const void *)a;

		inet_ntop(AF_INET, &i->sin_addr, h, sizeof(h));
		snprintf(buf, len, "%s:%u", h, ntohs(i->sin_port));
	} else {
		const struct sockaddr_in6 *i = (const void *)a;

		inet_ntop(AF_INET6, &i->sin6_addr, h, sizeof(h));
		snprintf(buf, len, "[%s]:%u", h, ntohs(i->sin6_port));
	}
}

/* Classify and name the file of our copy ourfd, once per run. */
static void classify(struct session *s, struct evl_file *f, int ourfd)
{
	struct sockaddr_storage la, ra;
	socklen_t ll = sizeof(la), rl = sizeof(ra);
	char l[64], r[64];
	int type = 0, acc = 0;
	socklen_t tl = sizeof(type), al = sizeof(acc);
	int k = fdext_inet_class(s, ourfd);

	f->cls = k == FDEXT_PROGRAM || k == FDEXT_OPEN ? 2 : 1;
	if (f->cls != 2)
		return;
	getsockopt(ourfd, SOL_SOCKET, SO_TYPE, &type, &tl);
	getsockopt(ourfd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &al);
	if (getsockname(ourfd, (struct sockaddr *)&la, &ll))
		return;
	addr_text(&la, l, sizeof(l));
	if (acc)
		snprintf(f->name, sizeof(f->name), "socket listening on %s", l);
	else if (!getpeername(ourfd, (struct sockaddr *)&ra, &rl)) {
		addr_text(&ra, r, sizeof(r));
		snprintf(f->name, sizeof(f->name), "%ssocket %s -> %s",
			 type == SOCK_DGRAM ? "udp " : "", l, r);
	} else
		snprintf(f->name, sizeof(f->name), "udp socket %s", l);
}

/* The key of our copy ourfd's file, classified (0: none). */
static uint64_t key_of_fd(struct session *s, int ourfd, struct evl_file **f)
{
	struct stat sb;
	uint64_t key;

	*f = NULL;
	if (ourfd < 0 || fstat(ourfd, &sb))
		return 0;
	key = evl_key(s->evl, kdev(sb.st_dev), sb.st_ino, f);
	if (key && !(*f)->cls) {
		if (S_ISSOCK(sb.st_mode))
			classify(s, *f, ourfd);
		else
			(*f)->cls = 1;
	}
	return key;
}

static bool is_epoll(long nr)
{
	return nr == SYS_epoll_wait || nr == SYS_epoll_pwait ||
	       nr == SYS_epoll_pwait2;
}

/* poll, ppoll: every entry of the program's array, with its revents. */
static int poll_gather(struct session *s, struct thread *t, struct ent *e,
		       struct pollfd *pa, int *np)
{
	size_t n = t->regs.rsi;
	struct pollfd q[POLL_MAX];

	if (n > POLL_MAX || (int)n != t->npfd ||
	    (n && mem_read(t->p, t->regs.rdi, pa, n * sizeof(*pa))))
		return -1;
	for (size_t i = 0; i < n; i++)
		q[i] = (struct pollfd){ .fd = pa[i].fd >= 0 ? t->pfd[i] : -1,
					.events = pa[i].events };
	if (n && poll(q, (nfds_t)n, 0) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct evl_file *f;

		e[i] = (struct ent){ .tfd = pa[i].fd, .slot = (int)i,
				     .ev = (uint16_t)q[i].revents };
		if (pa[i].fd >= 0 && t->pfd[i] < 0)
			e[i].ev = POLLNVAL; /* closed */
		e[i].key = key_of_fd(s, t->pfd[i], &f);
		e[i].holdable = f && f->cls == 2;
	}
	*np = (int)n;
	return 0;
}

/* select, pselect6: the descriptors of its sets, by what they report. */
static int select_gather(struct session *s, struct thread *t, struct ent *e,
			 int *np)
{
	struct pollfd q[POLL_MAX];
	int n = t->npfd;

	if (n < 0 || n > POLL_MAX)
		return -1;
	for (int i = 0; i < n; i++)
		q[i] = (struct pollfd){ .fd = t->pfd[i], .events = t->pev[i] };
	if (n && poll(q, (nfds_t)n, 0) < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		struct evl_file *f;
		short r = q[i].revents, want = t->pev[i];
		uint32_t ev = 0;

		if (t->pfd[i] < 0)
			return -1; /* EBADF: the kernel's */
		/* what select counts: POLLIN_SET, POLLOUT_SET, POLLEX_SET */
		if ((want & POLLIN) && (r & (POLLIN | POLLHUP | POLLERR)))
			ev |= POLLIN;
		if ((want & POLLOUT) && (r & (POLLOUT | POLLERR)))
			ev |= POLLOUT;
		if ((want & POLLPRI) && (r & POLLPRI))
			ev |= POLLPRI;
		e[i] = (struct ent){ .tfd = t->ptfd[i], .slot = i, .ev = ev };
		e[i].key = key_of_fd(s, t->pfd[i], &f);
		e[i].holdable = f && f->cls == 2;
	}
	*np = n;
	return 0;
}

/* An item of an epoll set, from its fdinfo. */
struct item {
	int tfd;
	uint32_t events;
	uint64_t data, key, dev, ino;
	bool holdable, dup;	/* dup: its data is another item's too */
};

static int cmp_tfd(const void *a, const void *b)
{
	const struct item *x = a, *y = b;

	return (x->tfd > y->tfd) - (x->tfd < y->tfd);
}

static int epoll_items(struct session *s, struct thread *t, int ourfd,
		       struct item *it, int max)
{
	char nm[64], line[256];
	FILE *f;
	int n = 0;

	snprintf(nm, sizeof(nm), "/proc/self/fdinfo/%d", ourfd);
	if (!(f = fopen(nm, "re")))
		return -1;
	while (fgets(line, sizeof(line), f)) {
		int tfd;
		unsigned ev;
		uint64_t data, ino;
		unsigned dev;

		if (sscanf(line,
			   "tfd: %d events: %x data: %" SCNx64
			   " pos:%*d ino:%" SCNx64 " sdev:%x",
			   &tfd, &ev, &data, &ino, &dev) != 5)
			continue;
		if (n == max) {
			n = -1;
			break;
		}
		it[n] = (struct item){ .tfd = tfd, .events = ev, .data = data,
				       .dev = dev, .ino = ino };
		for (int k = 0; k < n; k++)
			if (it[k].data == data)
				it[k].dup = it[n].dup = true;
		n++;
	}
	fclose(f);
	if (n < 0)
		return n;
	/* the kernel lists them by its own addresses: met in descriptor
	 * order, their keys are the same in every run */
	qsort(it, (size_t)n, sizeof(*it), cmp_tfd);
	for (int i = 0; i < n; i++) {
		struct evl_file *ef;

		it[i].key = evl_key(s->evl, it[i].dev, it[i].ino, &ef);
		if (it[i].key && !ef->cls) {
			int pfd = process_pidfd(t->p);
			int fd = pfd >= 0 ? (int)syscall(SYS_pidfd_getfd, pfd,
							  it[i].tfd, 0)
					  : -1;

			if (fd >= 0) {
				struct stat sb;

				if (!fstat(fd, &sb) && S_ISSOCK(sb.st_mode))
					classify(s, ef, fd);
				else
					ef->cls = 1;
				close(fd);
			} else
				ef->cls = 1;
		}
		it[i].holdable = it[i].key && ef->cls == 2;
	}
	return n;
}

/* epoll events by their item's descriptor (arg: the set's items, struct
 * items_of; a datum of no item last) */
struct items_of {
	const struct item *it;
	int n;
};

static int tfd_of_data(const struct items_of *io, uint64_t data)
{
	for (int k = 0; k < io->n; k++)
		if (io->it[k].data == data)
			return io->it[k].tfd;
	return 1 << 30;
}

static int cmp_event_fd(const void *a, const void *b, void *arg)
{
	const struct epoll_event *x = a, *y = b;
	int fx = tfd_of_data(arg, x->data.u64),
	    fy = tfd_of_data(arg, y->data.u64);

	if (fx != fy)
		return (fx > fy) - (fx < fy);
	return (x->data.u64 > y->data.u64) - (x->data.u64 < y->data.u64);
}

static bool pending_in(const struct evloop *v, uint64_t set)
{
	for (int i = 0; i < v->npend; i++)
		if (v->pend[i].set == set)
			return true;
	return false;
}

/*
 * epoll_wait and its kin: the events the kernel would report (taken from
 * it: *taken), after the held ones of edge-triggered or one-shot items.
 * 1 when nothing here needs ptloom (the kernel answers), 0 or -1.
 */
static int epoll_gather(struct session *s, struct thread *t, struct ent *e,
			int *np, uint64_t *setkey, bool *taken)
{
	struct evloop *v = s->evl;
	struct item it[EVL_MAX];
	struct evl_file *sf;
	struct stat sb;
	int ourfd = t->pfd[0], max = (int)t->regs.rdx, n = 0, ni;
	bool holdable = false, held = false;

	*taken = false;
	if (ourfd < 0 || max <= 0 || fstat(ourfd, &sb))
		return 1; /* EBADF, EINVAL: the kernel's */
	*setkey = evl_key(v, kdev(sb.st_dev), sb.st_ino, &sf);
	if (!*setkey || (ni = epoll_items(s, t, ourfd, it, EVL_MAX)) < 0)
		return 1;
	if (sf->cls == 0)
		sf->cls = 1;
	for (int i = 0; i < ni; i++) {
		holdable |= it[i].holdable && !it[i].dup;
		held |= is_held(v, it[i].key);
	}
	if (!holdable && !held && !pending_in(v, *setkey) &&
	    t->poll_timeout_ms <= 0)
		return 1;
	/* the held events first: they were ready before */
	for (int i = 0; i < v->npend && n < EVL_MAX; i++) {
		struct evl_pend *p = &v->pend[i];
		int k;

		if (p->set != *setkey)
			continue;
		for (k = 0; k < ni; k++)
			if (it[k].key == p->key && it[k].data == p->data &&
			    !it[k].dup)
				break;
		if (k == ni)
			continue; /* deleted since, or changed: dropped */
		e[n++] = (struct ent){ .tfd = it[k].tfd, .slot = -1,
				       .ev = p->events, .data = p->data,
				       .key = p->key,
				       .holdable = it[k].holdable,
				       .et = true, .pending = true };
	}
	struct epoll_event ev[EVL_MAX];
	int want = max < EVL_MAX - n ? max : EVL_MAX - n;
	int got = want > 0 ? epoll_wait(ourfd, ev, want, 0) : 0;

	if (got < 0)
		return -1;
	*taken = true;
	/* the kernel's ready list is in the order the events came, and a
	 * message over loopback may come a little later in one run than in
	 * another: the answer lists them by descriptor, the same in every
	 * run of a schedule (the order of an epoll_wait's events is not
	 * specified; which one comes later is the choice above) */
	qsort_r(ev, (size_t)got, sizeof(ev[0]), cmp_event_fd,
		&(struct items_of){ it, ni });
	for (int i = 0; i < got; i++) {
		int k, j;

		for (k = 0; k < ni; k++)
			if (it[k].data == ev[i].data.u64 && !it[k].dup)
				break;
		/* again: a held edge that came again is one event */
		for (j = 0; k < ni && j < n; j++)
			if (e[j].pending && e[j].key == it[k].key) {
				e[j].ev |= ev[i].events;
				break;
			}
		if (k < ni && j < n)
			continue;
		e[n++] = (struct ent){
			.tfd = k < ni ? it[k].tfd : -1,
			.slot = -1,
			.ev = ev[i].events,
			.data = ev[i].data.u64,
			.key = k < ni ? it[k].key : 0,
			.holdable = k < ni && it[k].holdable,
			.et = k < ni &&
			      (it[k].events & (EPOLLET | EPOLLONESHOT)),
		};
	}
	/* the set's pending events are all in e now */
	int m = 0;

	for (int i = 0; i < v->npend; i++)
		if (v->pend[i].set != *setkey)
			v->pend[m++] = v->pend[i];
	v->npend = m;
	/* a held descriptor of the set that is no longer ready was read:
	 * its hold is over */
	for (int k = 0; k < ni; k++) {
		bool ready = false;

		if (!is_held(v, it[k].key))
			continue;
		for (int j = 0; j < n && !ready; j++)
			ready = e[j].key == it[k].key;
		if (!ready && !(it[k].events & (EPOLLET | EPOLLONESHOT)))
			unhold(v, it[k].key);
	}
	*np = n;
	return 0;
}

static void keep_pending(struct evloop *v, uint64_t set, const struct ent *e)
{
	if (v->npend < EVL_PEND)
		v->pend[v->npend++] = (struct evl_pend){
			.set = set, .key = e->key, .events = e->ev,
			.data = e->data };
}

/* Write the answer: the entries marked out. */
static int answer(struct thread *t, long nr, struct ent *e, int n,
		  struct pollfd *pa, bool timed_out)
{
	int count = 0;

	if (nr == SYS_poll || nr == SYS_ppoll) {
		for (int i = 0; i < n; i++) {
			pa[e[i].slot].revents =
				e[i].out ? (short)e[i].ev : 0;
			count += e[i].out && e[i].ev;
		}
		if (n && mem_write(t->p, t->regs.rdi, pa, (size_t)n * sizeof(*pa)))
			return -EFAULT;
		return count;
	}
	if (nr == SYS_select || nr == SYS_pselect6) {
		uint64_t ptr[3] = { t->regs.rsi, t->regs.rdx, t->regs.r10 };
		static const short bit[3] = { POLLIN, POLLOUT, POLLPRI };
		int nfds = (int)t->regs.rdi;
		size_t bytes = (size_t)(nfds + 63) / 64 * 8;
		fd_set sets[3];

		for (int k = 0; k < 3; k++) {
			FD_ZERO(&sets[k]);
			for (int i = 0; i < n; i++)
				if (e[i].out && (e[i].ev & bit[k])) {
					FD_SET(e[i].tfd, &sets[k]);
					count++;
				}
			if (ptr[k] && bytes &&
			    mem_write(t->p, ptr[k], &sets[k], bytes))
				return -EFAULT;
		}
		if (timed_out && t->regs.r8) {
			/* the time left: none */
			struct timespec z = { 0, 0 };

			mem_write(t->p, t->regs.r8, &z,
				  nr == SYS_select ? sizeof(struct timeval)
						   : sizeof(z));
		}
		return count;
	}
	struct epoll_event ev[EVL_MAX];

	for (int i = 0; i < n; i++)
		if (e[i].out) {
			ev[count].events = e[i].ev;
			ev[count].data.u64 = e[i].data;
			count++;
		}
	if (count && mem_write(t->p, t->regs.rsi, ev,
			       (size_t)count * sizeof(ev[0])))
		return -EFAULT;
	return count;
}

/* Which wait it is, for the event's fn (show: event_line). */
static int wait_code(long nr)
{
	switch (nr) {
	case SYS_poll: return 0;
	case SYS_ppoll: return 1;
	case SYS_select: return 2;
	case SYS_pselect6: return 3;
	case SYS_epoll_wait: return 4;
	case SYS_epoll_pwait: return 5;
	default: return 6;
	}
}

/* The choice, recorded for the trace and show. */
static void note(struct session *s, struct thread *t, long nr,
		 const struct ent *held, int64_t tmo_ms)
{
	struct event ev = {
		.kind = OP_DELAY,
		.fn = (uint8_t)(EVL_FN(wait_code(nr), !held)),
		.obj = held ? held->key : 0,
		.pc = t->pc,
		.arg = held ? held->tfd : tmo_ms,
	};
	struct evl_file *f = held ? evl_file_of(s->evl, held->key) : NULL;

	if (f && f->name[0])
		session_name_object(s, held->key, f->name);
	session_push_event(s, t, &ev, true, true);
	s->step++;
}

void evloop_poll(struct session *s, struct thread *t)
{
	long nr = (long)t->regs.orig_rax;
	struct ent e[EVL_MAX];
	struct pollfd pa[POLL_MAX];
	uint64_t set = 0;
	int n = 0, r;
	bool taken = false, epoll = is_epoll(nr);
	int64_t tmo = t->poll_timeout_ms;

	if (!t->npfd)
		return;
	for (int i = 0; i < t->npfd; i++)
		if (t->pkind[i] == FDK_SIGNALFD || t->pkind[i] == FDK_EPOLL ||
		    t->pkind[i] == FDK_FLOCK)
			return; /* ready for one thread only: the kernel's */
	if (!s->evl && !(s->evl = calloc(1, sizeof(*s->evl))))
		return;
	struct evloop *v = s->evl;

	if (epoll)
		r = epoll_gather(s, t, e, &n, &set, &taken);
	else if (nr == SYS_poll || nr == SYS_ppoll)
		r = poll_gather(s, t, e, pa, &n);
	else
		r = select_gather(s, t, e, &n);
	if (r)
		return; /* nothing for ptloom, or the kernel's error */
	int ready = 0, free_ = 0;
	bool hidden = false;

	for (int i = 0; i < n; i++) {
		e[i].held = is_held(v, e[i].key);
		if (!e[i].ev) {
			/* read since it was held: the hold is over */
			if (!epoll && e[i].held)
				unhold(v, e[i].key);
			e[i].held = false;
			continue;
		}
		ready++;
		if (!e[i].held)
			free_++;
	}
	if (!ready) {
		if (taken && tmo != 0)
			return; /* nothing after all: the kernel waits */
		if (taken)
			t->skip = true, t->result = 0;
		return;
	}
	if (!free_) {
		/* only held ones: a wait that must not block sees nothing
		 * for a while; any other wait gets them now */
		if (tmo == 0 && t->evl_empty < HOLD_ZERO_MAX) {
			t->evl_empty++;
			for (int i = 0; i < n; i++)
				if (e[i].ev && e[i].et)
					keep_pending(v, set, &e[i]);
			int c = answer(t, nr, e, n, pa, false);

			t->skip = true;
			t->result = c;
			return;
		}
		for (int i = 0; i < n; i++)
			if (e[i].held) {
				unhold(v, e[i].key);
				e[i].held = false;
				free_++;
			}
	}
	struct choice *c = malloc(sizeof(*c));

	if (!c)
		return;
	c->kind = DEC_POLL;
	c->current = t->idx;
	c->nalts = 0;
	c->alts[c->nalts++] = (struct alt){ .thread = (uint16_t)t->idx,
					    .kind = OP_POLL,
					    .obj = t->obj };
	int who[MAX_ALTS];

	/* a socket may come later when the wait still sees another, or
	 * must not block anyway (it then sees nothing, as when nothing has
	 * arrived yet); a wait that may block must not return empty */
	bool may_hold = free_ >= 2 || tmo == 0;

	for (int i = 0; may_hold && i < n && c->nalts < MAX_ALTS - 1; i++) {
		if (!e[i].ev || e[i].held || !e[i].holdable)
			continue;
		struct evl_file *f = evl_file_of(v, e[i].key);

		who[c->nalts] = i;
		c->alts[c->nalts++] = (struct alt){
			.thread = (uint16_t)t->idx, .kind = OP_POLL,
			.cost = 1, .obj = e[i].key,
			/* which descriptor, for the search's node prints */
			.fn = (uint8_t)(f ? 1 + (f - v->files) % 255 : 0) };
	}
	if (tmo > 0)
		time_observed(s);
	uint64_t deadline = s->now + (uint64_t)(tmo > 0 ? tmo : 0) * 1000000ull;
	int timer = -1;

	/* not in a wrapper that times its children (timeout(1), ctest's
	 * TIMEOUT over libuv): their deadline comes with their own time */
	if (tmo > 0 && deadline <= session_stall_limit(s) &&
	    session_may_expire_early(s, t->p, s->step)) {
		timer = c->nalts;
		c->alts[c->nalts++] = (struct alt){
			.thread = (uint16_t)t->idx, .kind = OP_TIMEOUT,
			.timeout = 1, .cost = 1, .obj = t->obj };
	}
	int pick = 0;

	if (c->nalts > 1)
		pick = session_pick_or_fail(s, c, "an event loop's wait");
	if (pick < 0) {
		free(c);
		return;
	}
	if (pick > 0)
		s->preemptions++;
	for (int i = 0; i < n; i++)
		e[i].out = e[i].ev && !e[i].held;
	if (pick > 0 && pick != timer) {
		struct ent *h = &e[who[pick]];

		h->out = false;
		hold(v, h->key);
		note(s, t, nr, h, tmo);
	} else if (pick == timer) {
		for (int i = 0; i < n; i++)
			if (e[i].out && e[i].holdable) {
				e[i].out = false;
				hold(v, e[i].key);
			}
		if (deadline > s->now)
			s->now = deadline;
		note(s, t, nr, NULL, tmo);
	}
	free(c);
	/* epoll_wait reports at most maxevents */
	int outs = 0, max = epoll ? (int)t->regs.rdx : n;

	for (int i = 0; i < n; i++) {
		if (e[i].out && ++outs > max)
			e[i].out = false;
		hidden |= e[i].ev && !e[i].out;
		if (epoll && e[i].ev && !e[i].out && e[i].et)
			keep_pending(v, set, &e[i]);
	}
	t->evl_empty = outs ? 0 : t->evl_empty;
	if (!taken && !hidden)
		return; /* all of them: the kernel answers */
	int cnt = answer(t, nr, e, n, pa, pick == timer && pick > 0);

	t->skip = true;
	t->result = cnt;
}

uint8_t *evloop_memo(struct session *s, const struct stat *sb)
{
	struct evloop *v;

	if (!s->evl && !(s->evl = calloc(1, sizeof(*s->evl))))
		return NULL;
	v = s->evl;
	for (int i = 0; i < v->nmemo; i++)
		if (v->memo[i].dev == sb->st_dev && v->memo[i].ino == sb->st_ino)
			return &v->memo[i].v;
	if (v->nmemo == EVL_FILES)
		return NULL;
	v->memo[v->nmemo].dev = sb->st_dev;
	v->memo[v->nmemo].ino = sb->st_ino;
	v->memo[v->nmemo].v = 0;
	return &v->memo[v->nmemo++].v;
}

bool evloop_held(const struct session *s)
{
	return s->evl && (s->evl->nheld || s->evl->npend);
}

struct evloop *evloop_dup(const struct evloop *v)
{
	struct evloop *c;

	if (!v || !(c = malloc(sizeof(*c))))
		return NULL;
	memcpy(c, v, sizeof(*c));
	return c;
}

bool evloop_pending(struct session *s, struct thread *t)
{
	struct evloop *v = s->evl;
	struct stat sb;

	if (!v || !v->npend || t->kind != OP_POLL || t->npfd != 1 ||
	    t->pfd[0] < 0 || !is_epoll((long)t->regs.orig_rax) ||
	    fstat(t->pfd[0], &sb))
		return false;
	for (int i = 0; i < v->nfiles; i++)
		if (v->files[i].dev == kdev(sb.st_dev) &&
		    v->files[i].ino == sb.st_ino)
			return pending_in(v, (1ull << 63) | (1ull << 62) |
						     (uint64_t)(i + 1));
	return false;
}

void evloop_free(struct session *s)
{
	free(s->evl);
	s->evl = NULL;
}
