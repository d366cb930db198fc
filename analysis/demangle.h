#ifndef PTLOOM_DEMANGLE_H
#define PTLOOM_DEMANGLE_H

/* sym demangled (C++ _Z, Rust legacy _ZN...17h<hash>E and v0 _R),
 * malloc'd; NULL when it is no mangled name. */
char *symbols_demangle(const char *sym);

#endif
