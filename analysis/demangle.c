/*
 * C++ and Rust (legacy and v0) symbols as gdb and c++filt show them:
 * libiberty's demangler, which they use (its files carry a linking
 * exception to the LGPL).  Kept apart: libiberty.h declares functions
 * (basename) the rest of the tree takes from glibc.
 */
#include <stdlib.h>
#include <libiberty/demangle.h>
#include "demangle.h"

char *symbols_demangle(const char *sym)
{
	if (!sym || sym[0] != '_' || (sym[1] != 'Z' && sym[1] != 'R'))
		return NULL;
	return cplus_demangle(sym, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
}
