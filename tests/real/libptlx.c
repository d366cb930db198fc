/* A shared object for tests/real/uses_lib.c (the loaded-object identity
 * recorded in schedule files). */
int ptlx_value(void);

int ptlx_value(void)
{
	return 42;
}
