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
 * and Unix connections whose peer socket is the program's, eventfd,
 * timerfd and signalfd (ptloom runs their clocks), and an epoll set of
 * internal descriptors.  Anything else is *external*; unknown kinds are
 * external, which costs a real wait instead of an instant deadlock report,
 * never a false one.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>
#include "session_int.h"

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
 */
static bool held(struct session *s, const char *want, bool only_tree)
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
	if (S_ISREG(sb.st_mode) || S_ISDIR(sb.st_mode))
		return false; /* always ready */
	if (S_ISFIFO(sb.st_mode))
		/* a FIFO opened by path: anyone may open its other end */
		return strncmp(link, "pipe:", 5) || held(s, link, false);
	if (S_ISSOCK(sb.st_mode)) {
		int dom = 0, acc = 0;
		socklen_t l = sizeof(dom);

		if (getsockopt(ourfd, SOL_SOCKET, SO_DOMAIN, &dom, &l) ||
		    dom != AF_UNIX)
			return true; /* TCP, UDP, netlink: the world */
		l = sizeof(acc);
		if (!getsockopt(ourfd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &l) &&
		    acc)
			return true; /* listening: only the world connects */
		long peer = unix_peer(sb.st_ino);
		struct sockaddr_un a;

		if (peer > 0) {
			char want[64];

			snprintf(want, sizeof(want), "socket:[%ld]", peer);
			return !held(s, want, true);
		}
		/* connected to a named server that has not accepted yet (its
		 * end has no inode): the server's */
		l = sizeof(a);
		if (!getpeername(ourfd, (struct sockaddr *)&a, &l))
			return l > sizeof(sa_family_t) || peer < 0;
		if (peer < 0)
			return true;
		/* unconnected: named, anyone may send to it */
		l = sizeof(a);
		return getsockname(ourfd, (struct sockaddr *)&a, &l) ||
		       l > sizeof(sa_family_t);
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
	if (t->ext_known)
		return t->ext;
	bool ext = false;

	for (int i = 0; i < t->npfd && !ext; i++)
		if (t->pfd[i] >= 0)
			ext = external(s, t, t->pfd[i], 0);
	t->ext = ext;
	t->ext_known = true;
	return ext;
}
