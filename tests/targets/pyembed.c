/*
 * A CPython interpreter whose interpreter is a shared libpython, as
 * pyenv's, Fedora's or an --enable-shared build's python is: the
 * executable only calls Py_BytesMain (issue 12's Python-level scheduling
 * must find the eval loop in the library).
 */
#include <Python.h>

int main(int argc, char **argv)
{
	return Py_BytesMain(argc, argv);
}
