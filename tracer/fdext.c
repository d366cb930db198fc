/*
 * Descriptors the outside world can make ready.
 *
 * ptloom models a blocked read, write, accept or poll as a wait on the
 * program's own threads: when every thread waits, nobody can end the wait,
 * and it is a deadlock.  That holds only when the other end belongs to the
 * program.  A client waiting for a server outside ptloom (a TCP connection,
 * a named Unix socket, a FIFO opened by path, a pipe from the shell, a
 * terminal, inotify) waits for the world: the wait is real, and its
 * timeout must not fire before real time has passed.
 *
 * A descriptor is *internal* when its other end is held only by the
 * program's processes: anonymous pipes nobody outside holds, socketpairs
 * and Unix connections whose peer socket is the program's (or, not
 * accepted yet, whose listening socket is the program's), TCP
 * connections and connected UDP sockets likewise (loopback: the peer
 * found with sock_diag by its address and port), eventfd, timerfd and
 * signalfd (ptloom runs their clocks), and an epoll set of internal
 * descriptors.  Anything else is *external*: a listening socket or an
 * unconnected UDP socket (anyone on the machine may connect or send), a
 * connection to a server outside.  Unknown kinds are external, which
 * costs a real wait instead of an instant deadlock report, never a false
 * one.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <netinet/tcp.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>
#include "session_int.h"

#ifndef MQUEUE_MAGIC
#define MQUEUE_MAGIC 0x19800202 /* ipc/mqueue.c */
#endif

static bool in_tree(struct session *s, pid_t pid)
{
	struct process *p = process_find(s, pid);

	if (p && !p->dead)
		return true;
	for (int i = 0; i < s->nfreep; i++)
		if (s->freep[i] == pid)
			return true;
	return false;
}

/* Its parent, from /proc/PID/stat; 0 if unknown. */
static pid_t parent_of(pid_t pid)
{
	char buf[512];
	const char *t = proc_stat_tail(pid, buf, sizeof(buf));
	int ppid = 0;

	if (!t || sscanf(t, "%*c %d", &ppid) != 1)
		return 0;
	return ppid;
}

/*
 * Does a process outside the program (and outside ptloom: ptloom itself,
 * its launcher and its checkpoint templates are its children) hold a
 * descriptor whose link reads `want` ("pipe:[123]", "socket:[456]")?
 * With only_tree, the question is the converse: does the program hold it?
 * Without want, a descriptor of the file whose key is key
 * (syscall_file_key: a named FIFO's link is its path) open as mode
 * (HOLD_*) says.
 */
static bool held_by(struct session *s, const char *want, uint64_t key,
		    int mode, bool only_tree)
{
	pid_t me = getpid();
	DIR *d = opendir("/proc");
	struct dirent *e;
	bool found = false;

	if (!d)
		return !only_tree; /* unknown: assume the world */
	while (!found && (e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);

		if (*end || pid <= 0)
			continue;
		bool mine = in_tree(s, (pid_t)pid);

		if (only_tree != mine || pid == me)
			continue;
		char dir[64];

		if (!want) {
			/* the file's key, open as mode asks */
			found = syscall_holds_open((pid_t)pid, key, mode) &&
				(only_tree || parent_of((pid_t)pid) != me);
			continue;
		}
		snprintf(dir, sizeof(dir), "/proc/%ld/fd", pid);
		DIR *fds = opendir(dir);
		struct dirent *f;

		if (!fds)
			continue;
		while ((f = readdir(fds))) {
			char path[128], link[64];

			if (f->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, f->d_name);
			ssize_t n = readlink(path, link, sizeof(link) - 1);

			if (n <= 0)
				continue;
			link[n] = 0;
			if (strcmp(link, want))
				continue;
			if (only_tree || parent_of((pid_t)pid) != me)
				found = true;
			break;
		}
		closedir(fds);
	}
	closedir(d);
	return found;
}

static bool held(struct session *s, const char *want, bool only_tree)
{
	return held_by(s, want, 0, HOLD_ANY, only_tree);
}

bool fdext_held_outside(struct session *s, uint64_t key, int mode)
{
	return held_by(s, NULL, key, mode, false);
}

/* The inode of a Unix socket's peer (sock_diag), 0 if none, -1 if unknown. */
static long unix_peer(ino_t ino)
{
	int nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC,
			NETLINK_SOCK_DIAG);

	if (nl < 0)
		return -1;
	struct {
		struct nlmsghdr nlh;
		struct unix_diag_req r;
	} req = {
		.nlh = { .nlmsg_len = sizeof(req),
			 .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			 .nlmsg_flags = NLM_F_REQUEST },
		.r = { .sdiag_family = AF_UNIX,
		       .udiag_states = ~0u,
		       .udiag_ino = (unsigned)ino,
		       .udiag_show = UDIAG_SHOW_PEER,
		       .udiag_cookie = { ~0u, ~0u } },
	};
	long peer = -1;
	union {
		char buf[8192];
		struct nlmsghdr align;
	} u;

	if (send(nl, &req, sizeof(req), 0) != (ssize_t)sizeof(req))
		goto out;
	ssize_t n = recv(nl, u.buf, sizeof(u.buf), 0);

	for (struct nlmsghdr *h = &u.align; n > 0 && NLMSG_OK(h, (size_t)n);
	     h = NLMSG_NEXT(h, n)) {
		if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY)
			break;
		struct unix_diag_msg *m = NLMSG_DATA(h);
		struct rtattr *a = (struct rtattr *)(m + 1);
		int len = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*m)));

		peer = 0;
		for (; RTA_OK(a, len); a = RTA_NEXT(a, len))
			if (a->rta_type == UNIX_DIAG_PEER &&
			    RTA_PAYLOAD(a) >= (int)sizeof(uint32_t))
				peer = *(uint32_t *)RTA_DATA(a);
		break;
	}
out:
	close(nl);
	return peer;
}

/*
 * One sock_diag request; fn sees each answer until it returns true.  A
 * dump ends with NLMSG_DONE, a lookup with its one answer.  Returns 0, or
 * -1 when the kernel could not be asked or refused (ENOENT: no such
 * socket).
 */
static int diag_query(const void *req, size_t len, bool dump,
		      bool (*fn)(const struct nlmsghdr *h, void *ctx),
		      void *ctx)
{
	int nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC,
			NETLINK_SOCK_DIAG);
	union {
		char buf[16384];
		struct nlmsghdr align;
	} u;
	int ret = -1;

	if (nl < 0)
		return -1;
	if (send(nl, req, len, 0) != (ssize_t)len)
		goto out;
	for (;;) {
		ssize_t n = recv(nl, u.buf, sizeof(u.buf), 0);

		if (n <= 0)
			goto out;
		for (struct nlmsghdr *h = &u.align; NLMSG_OK(h, (size_t)n);
		     h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_DONE) {
				ret = 0;
				goto out;
			}
			if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY)
				goto out;
			if (fn(h, ctx) || !dump) {
				ret = 0;
				goto out;
			}
		}
	}
out:
	close(nl);
	return ret;
}

/* An inet socket's address as inet_diag spells it. */
struct inet_end {
	int family;
	uint16_t port;	/* network order */
	uint32_t addr[4];
};

static bool inet_end_of(const struct sockaddr_storage *a, struct inet_end *e)
{
	memset(e, 0, sizeof(*e));
	e->family = a->ss_family;
	if (a->ss_family == AF_INET) {
		const struct sockaddr_in *i = (const void *)a;

		e->port = i->sin_port;
		e->addr[0] = i->sin_addr.s_addr;
		return true;
	}
	if (a->ss_family == AF_INET6) {
		const struct sockaddr_in6 *i = (const void *)a;

		e->port = i->sin6_port;
		memcpy(e->addr, &i->sin6_addr, 16);
		return true;
	}
	return false;
}

struct inet_found {
	long ino;		/* -1: none */
	int state;
	const struct inet_end *want; /* a listener's: port and address */
};

static bool inet_found_one(const struct nlmsghdr *h, void *ctx)
{
	struct inet_found *f = ctx;
	const struct inet_diag_msg *m = NLMSG_DATA(h);

	if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*m)))
		return false;
	if (f->want) {
		static const uint32_t any[4];
		size_t alen = f->want->family == AF_INET ? 4 : 16;

		if (m->id.idiag_sport != f->want->port ||
		    (memcmp(m->id.idiag_src, f->want->addr, alen) &&
		     memcmp(m->id.idiag_src, any, alen)))
			return false;
	}
	f->ino = m->idiag_inode;
	f->state = m->idiag_state;
	return true;
}

/*
 * The inode of the socket at the other end of inet socket (local,
 * remote) of protocol proto (0 when it has no file yet: a connection not
 * accepted), or -1 if none is found.
 */
static long inet_peer(int proto, const struct inet_end *local,
		      const struct inet_end *remote, int *state)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 r;
	} req = {
		.nlh = { .nlmsg_len = sizeof(req),
			 .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			 .nlmsg_flags = NLM_F_REQUEST },
		.r = { .sdiag_family = (uint8_t)local->family,
		       .sdiag_protocol = (uint8_t)proto,
		       .idiag_states = ~0u },
	};
	struct inet_found f = { .ino = -1 };
	/* TCP's lookup takes the socket's own end as the source; UDP's the
	 * sender of a datagram and its receiver, the peer */
	const struct inet_end *src = proto == IPPROTO_TCP ? remote : local,
			      *dst = proto == IPPROTO_TCP ? local : remote;

	req.r.id.idiag_sport = src->port;
	req.r.id.idiag_dport = dst->port;
	memcpy(req.r.id.idiag_src, src->addr, sizeof(src->addr));
	memcpy(req.r.id.idiag_dst, dst->addr, sizeof(dst->addr));
	req.r.id.idiag_cookie[0] = req.r.id.idiag_cookie[1] =
		INET_DIAG_NOCOOKIE;
	if (diag_query(&req, sizeof(req), false, inet_found_one, &f))
		return -1;
	*state = f.state;
	return f.ino;
}

/* The inode of the TCP socket listening at e (its address or any), -1 if
 * none. */
static long inet_listener(const struct inet_end *e)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 r;
	} req = {
		.nlh = { .nlmsg_len = sizeof(req),
			 .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			 .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
		.r = { .sdiag_family = (uint8_t)e->family,
		       .sdiag_protocol = IPPROTO_TCP,
		       .idiag_states = 1u << TCP_LISTEN },
	};
	struct inet_found f = { .ino = -1, .want = e };

	if (diag_query(&req, sizeof(req), true, inet_found_one, &f))
		return -1;
	return f.ino;
}

static bool held_inode(struct session *s, long ino)
{
	char want[64];

	snprintf(want, sizeof(want), "socket:[%ld]", ino);
	return held(s, want, true);
}

static bool loopback(const struct inet_end *e)
{
	static const uint8_t v6[16] = { [15] = 1 };
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
	const uint8_t *b = (const uint8_t *)e->addr;

	if (e->family == AF_INET)
		return b[0] == 127;
	return !memcmp(b, v6, 16) || (!memcmp(b, mapped, 12) && b[12] == 127);
}

/*
 * A TCP connection or a connected UDP socket is the program's when the
 * socket at its other end is (or, a connection not accepted yet, the
 * socket listening there).  A socket listening on a loopback address, or
 * an unconnected UDP socket bound to one, is the program's too, but
 * *open*: another process of the machine could connect or send, so a run
 * that has nothing left but such a wait waits for it in real time
 * (t->ext_open, tracer/world.c) instead of calling it a deadlock.  Other
 * listening and unconnected sockets are the world's.
 */
int fdext_inet_class(struct session *s, int ourfd)
{
	struct sockaddr_storage la, ra;
	socklen_t ll = sizeof(la), rl = sizeof(ra);
	struct inet_end l, r;
	int type = 0, acc = 0, state = 0, dom = 0;
	socklen_t tl = sizeof(type), al = sizeof(acc), dl = sizeof(dom);

	if (getsockopt(ourfd, SOL_SOCKET, SO_DOMAIN, &dom, &dl) ||
	    (dom != AF_INET && dom != AF_INET6))
		return FDEXT_NOT_INET;
	if (getsockopt(ourfd, SOL_SOCKET, SO_TYPE, &type, &tl) ||
	    (type != SOCK_STREAM && type != SOCK_DGRAM))
		return FDEXT_WORLD;
	if (getsockname(ourfd, (struct sockaddr *)&la, &ll) ||
	    !inet_end_of(&la, &l))
		return FDEXT_WORLD;
	if ((!getsockopt(ourfd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &al) &&
	     acc) ||
	    getpeername(ourfd, (struct sockaddr *)&ra, &rl) ||
	    !inet_end_of(&ra, &r)) {
		/* listening, or unconnected */
		if (!loopback(&l) || (type == SOCK_STREAM && !acc))
			return FDEXT_WORLD;
		return FDEXT_OPEN;
	}
	int proto = type == SOCK_STREAM ? IPPROTO_TCP : IPPROTO_UDP;
	long peer = inet_peer(proto, &l, &r, &state);

	if (peer == 0 && proto == IPPROTO_TCP)
		peer = inet_listener(&r);
	return peer > 0 && held_inode(s, peer) ? FDEXT_PROGRAM : FDEXT_WORLD;
}

struct unix_found {
	const char *name;	/* sun_path, abstract names with their NUL */
	size_t len;
	long ino;
};

static bool unix_found_one(const struct nlmsghdr *h, void *ctx)
{
	struct unix_found *f = ctx;
	const struct unix_diag_msg *m = NLMSG_DATA(h);
	int len = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*m)));

	for (struct rtattr *a = (struct rtattr *)(m + 1); RTA_OK(a, len);
	     a = RTA_NEXT(a, len))
		if (a->rta_type == UNIX_DIAG_NAME &&
		    (size_t)RTA_PAYLOAD(a) == f->len &&
		    !memcmp(RTA_DATA(a), f->name, f->len)) {
			f->ino = m->udiag_ino;
			return true;
		}
	return false;
}

/* The inode of the Unix socket listening at a (a path or an abstract
 * name of len bytes), -1 if none. */
static long unix_listener(const struct sockaddr_un *a, socklen_t len)
{
	struct {
		struct nlmsghdr nlh;
		struct unix_diag_req r;
	} req = {
		.nlh = { .nlmsg_len = sizeof(req),
			 .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			 .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
		.r = { .sdiag_family = AF_UNIX,
		       .udiag_states = 1u << TCP_LISTEN,
		       .udiag_show = UDIAG_SHOW_NAME },
	};
	struct unix_found f = { .name = a->sun_path, .ino = -1 };

	if (len <= sizeof(sa_family_t))
		return -1;
	f.len = len - sizeof(sa_family_t);
	if (a->sun_path[0]) /* a path: up to its NUL */
		f.len = strnlen(a->sun_path, f.len);
	if (diag_query(&req, sizeof(req), true, unix_found_one, &f))
		return -1;
	return f.ino;
}

static bool external(struct session *s, struct thread *t, int ourfd,
		     int depth);

/* An epoll set is external when one of its descriptors is. */
static bool epoll_external(struct session *s, struct thread *t, int ourfd,
			   int depth)
{
	char nm[64], line[256];

	snprintf(nm, sizeof(nm), "/proc/self/fdinfo/%d", ourfd);
	FILE *f = fopen(nm, "re");
	bool ext = false;

	if (!f)
		return true;
	while (!ext && fgets(line, sizeof(line), f)) {
		int tfd;

		if (sscanf(line, "tfd: %d", &tfd) != 1)
			continue;
		int pfd = process_pidfd(t->p);
		int fd = pfd >= 0 ? (int)syscall(SYS_pidfd_getfd, pfd, tfd, 0)
				  : -1;

		if (fd < 0) {
			ext = true;
			break;
		}
		ext = external(s, t, fd, depth + 1);
		close(fd);
	}
	fclose(f);
	return ext;
}

/* A socket: see the top of this file. */
static bool sock_external(struct session *s, struct thread *t, int ourfd,
			  const struct stat *st)
{
	struct stat sb = *st;

	int dom = 0, acc = 0;
	socklen_t l = sizeof(dom);

	if (getsockopt(ourfd, SOL_SOCKET, SO_DOMAIN, &dom, &l))
		return true;
	if (dom == AF_INET || dom == AF_INET6) {
		int k = fdext_inet_class(s, ourfd);

		t->ext_open |= k == FDEXT_OPEN;
		return k != FDEXT_PROGRAM && k != FDEXT_OPEN;
	}
	if (dom != AF_UNIX)
		return true; /* netlink, ...: the world */
	l = sizeof(acc);
	if (!getsockopt(ourfd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &l) &&
	    acc) {
		/* listening: the program's, open to the machine */
		t->ext_open = true;
		return false;
	}
	long peer = unix_peer(sb.st_ino);
	struct sockaddr_un a;

	if (peer > 0) {
		char want[64];

		snprintf(want, sizeof(want), "socket:[%ld]", peer);
		return !held(s, want, true);
	}
	/* connected to a named server that has not accepted yet (its
	 * end has no inode): the server's, the program's when it holds
	 * the listening socket */
	l = sizeof(a);
	if (!getpeername(ourfd, (struct sockaddr *)&a, &l)) {
		long lis;

		if (peer < 0)
			return true;
		if (l <= sizeof(sa_family_t))
			return false;
		lis = unix_listener(&a, l);
		return lis <= 0 || !held_inode(s, lis);
	}
	if (peer < 0)
		return true;
	/* unconnected: named, the program's, open to the machine */
	l = sizeof(a);
	if (getsockname(ourfd, (struct sockaddr *)&a, &l))
		return true;
	if (l > sizeof(sa_family_t))
		t->ext_open = true;
	return false;
}

bool fd_is_mqueue(int ourfd)
{
	struct statfs f;

	return fstatfs(ourfd, &f) == 0 && f.f_type == MQUEUE_MAGIC;
}

static bool external(struct session *s, struct thread *t, int ourfd,
		     int depth)
{
	struct stat sb;
	char nm[64], link[128];

	if (depth > 4 || fstat(ourfd, &sb) < 0)
		return true;
	snprintf(nm, sizeof(nm), "/proc/self/fd/%d", ourfd);
	ssize_t n = readlink(nm, link, sizeof(link) - 1);

	link[n > 0 ? n : 0] = 0;
	if (S_ISREG(sb.st_mode) && fd_is_mqueue(ourfd))
		/* a message queue others may still open by its name; one
		 * unlinked (mq_unlink: no link left) is the program's */
		return sb.st_nlink > 0;
	if (S_ISREG(sb.st_mode) || S_ISDIR(sb.st_mode))
		return false; /* always ready */
	if (S_ISFIFO(sb.st_mode))
		/* a FIFO opened by path: anyone may open its other end */
		return strncmp(link, "pipe:", 5) || held(s, link, false);
	if (S_ISSOCK(sb.st_mode)) {
		/* the program's once, the program's for the run: its peer
		 * found once, not again at every wait */
		uint8_t *memo = evloop_memo(s, &sb);
		bool open = t->ext_open, ext;

		if (memo && *memo) {
			t->ext_open |= *memo == 2;
			return false;
		}
		t->ext_open = false;
		ext = sock_external(s, t, ourfd, &sb);
		if (memo && !ext)
			*memo = t->ext_open ? 2 : 1;
		t->ext_open |= open;
		return ext;
	}
	if (!strncmp(link, "anon_inode:", 11)) {
		const char *k = link + 11;

		if (!strcmp(k, "[eventfd]") || !strcmp(k, "[timerfd]") ||
		    !strcmp(k, "[signalfd]") || !strcmp(k, "[pidfd]"))
			return false;
		if (!strcmp(k, "[eventpoll]"))
			return epoll_external(s, t, ourfd, depth);
		return true; /* inotify, fanotify, io_uring, ...: the world */
	}
	return true; /* terminals and other devices */
}

bool syscall_fd_external(struct session *s, struct thread *t)
{
	if (waits_lock(t))
		return flock_external(s, t, 0); /* holders come and go */
	if (waits_sem(t))
		return sem_external(s, t);
	if (waits_fifo(t))
		return fifo_external(s, t);
	if (t->ext_known)
		return t->ext;
	bool ext = false;

	t->ext_open = false;
	for (int i = 0; i < t->npfd && !ext; i++)
		if (t->pfd[i] >= 0)
			ext = external(s, t, t->pfd[i], 0);
	t->ext = ext;
	t->ext_known = true;
	return ext;
}

/*
 * The inode of the socket at the other end of descriptor fd of process
 * pid (a Unix socket's peer, or a TCP or connected UDP socket's on this
 * machine), 0 when it has none or it cannot be told.  For watchers
 * (test-suite mode): two processes that talk over a connection each use
 * their own end's inode.
 */
long fdext_socket_peer(pid_t pid, int fd)
{
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0), ours, dom = 0, typ = 0;
	long peer = 0;
	struct stat sb;
	socklen_t l;

	if (pfd < 0)
		return 0;
	ours = (int)syscall(SYS_pidfd_getfd, pfd, fd, 0);
	close(pfd);
	if (ours < 0)
		return 0;
	l = sizeof(dom);
	if (fstat(ours, &sb) || !S_ISSOCK(sb.st_mode) ||
	    getsockopt(ours, SOL_SOCKET, SO_DOMAIN, &dom, &l))
		goto out;
	if (dom == AF_UNIX) {
		peer = unix_peer(sb.st_ino);
	} else if (dom == AF_INET || dom == AF_INET6) {
		struct sockaddr_storage la, ra;
		struct inet_end le, re;
		socklen_t ll = sizeof(la), rl = sizeof(ra);
		int state;

		l = sizeof(typ);
		if (getsockopt(ours, SOL_SOCKET, SO_TYPE, &typ, &l) ||
		    getsockname(ours, (struct sockaddr *)&la, &ll) ||
		    getpeername(ours, (struct sockaddr *)&ra, &rl) ||
		    !inet_end_of(&la, &le) || !inet_end_of(&ra, &re))
			goto out;
		peer = inet_peer(typ == SOCK_STREAM ? IPPROTO_TCP : IPPROTO_UDP,
				 &le, &re, &state);
	}
out:
	close(ours);
	return peer > 0 ? peer : 0;
}
