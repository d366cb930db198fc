/*
 * libdw (elfutils 0.188, Debian 12's) loads libdebuginfod, and with it
 * the thirty-odd libraries that client needs (curl, gnutls, krb5, ...),
 * the first time a module's debug information is not found on disk,
 * whether or not a debuginfod server is configured: 10-20 ms of nearly
 * every ptloom command (a program built without separate debug
 * information has a module so), for nothing when DEBUGINFOD_URLS is unset
 * or empty, since the client then asks no server.  elfutils 0.190 and
 * later look at the variable first; here the executable's own dlopen,
 * which libdw's call binds to, does: it refuses that library when no
 * server is configured and passes every other call on.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

void *dlopen(const char *file, int mode)
{
	static void *(*real)(const char *, int);
	const char *urls = getenv("DEBUGINFOD_URLS");

	if (file && strstr(file, "libdebuginfod") && (!urls || !*urls))
		return NULL;
	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "dlopen");
	return real ? real(file, mode) : NULL;
}
