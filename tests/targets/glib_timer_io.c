/*
 * A GLib main loop with a 2 ms timeout racing an I/O callback: the program
 * writes its message into a pipe, then runs the loop, whose watch reads it
 * and whose timeout checks that it was read (a deadline).  When the loop is
 * slow enough that both are due at once, GLib dispatches the timeout first
 * (same priority, added first) and the check fails (exit 1).  With -DFIXED
 * the watch has a higher priority than the timeout, so GLib always reads
 * what is there first.
 */
#include <glib-unix.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static gboolean got;

static gboolean on_io(gint fd, GIOCondition cond, gpointer data)
{
	char buf[16];

	(void)cond;
	(void)data;
	got = read(fd, buf, sizeof(buf)) > 0;
	return G_SOURCE_REMOVE;
}

static gboolean on_timeout(gpointer loop)
{
	if (!got) {
		fprintf(stderr, "no message within the deadline\n");
		exit(1);
	}
	g_main_loop_quit(loop);
	return G_SOURCE_REMOVE;
}

int main(void)
{
	int p[2];

	if (pipe(p))
		return 2;
	GMainLoop *loop = g_main_loop_new(NULL, FALSE);
	GSource *watch = g_unix_fd_source_new(p[0], G_IO_IN);

	g_timeout_add(2, on_timeout, loop);
	g_source_set_callback(watch, (GSourceFunc)(void (*)(void))on_io, NULL,
			      NULL);
#ifdef FIXED
	g_source_set_priority(watch, G_PRIORITY_HIGH);
#endif
	g_source_attach(watch, NULL);
	if (write(p[1], "hello", 5) != 5)
		return 2;
	g_main_loop_run(loop);
	printf("read it in time\n");
	return 0;
}
