/*
 * Two child processes write their letter to one pipe, one write(2) at a
 * time; the parent reads everything and prints the letters in the order
 * they arrived.  The order is ptloom's choice: different seeds give
 * different orders, one seed always the same.
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define N 4

int main(void)
{
	int fd[2];
	char buf[64], line[2 * N + 2];
	size_t n = 0;
	ssize_t k;

	if (pipe(fd))
		return 2;
	for (int c = 0; c < 2; c++) {
		pid_t pid = fork();

		if (pid < 0)
			return 2;
		if (pid == 0) {
			close(fd[0]);
			for (int i = 0; i < N; i++)
				if (write(fd[1], c ? "B" : "A", 1) != 1)
					_exit(2);
			_exit(0);
		}
	}
	close(fd[1]);
	while ((k = read(fd[0], buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < k && n < sizeof(line) - 1; i++)
			line[n++] = buf[i];
	line[n] = 0;
	while (wait(NULL) > 0)
		;
	printf("order %s\n", line);
	return strlen(line) == 2 * N ? 0 : 1;
}
