/*
 * What a hostile schedule file would preload: it leaves a file named
 * "pwned" in the current directory the moment it is loaded.  The issue13
 * tests check that a replay never loads it unless --trust-env says so.
 */
#include <fcntl.h>
#include <unistd.h>

__attribute__((constructor)) static void pwn(void)
{
	int fd = open("pwned", O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd >= 0)
		close(fd);
}
