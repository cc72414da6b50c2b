/* SPDX-License-Identifier: GPL-2.0 */
/*
 * C++ and Rust names (demangle.c): the readable name of a mangled
 * symbol, for trace lines, and the symbol a readable name stands for,
 * for places ('prog:ns::Widget::draw', 'prog:ns::Widget::draw(int)').
 */
#ifndef DPROBE_SYM_DEMANGLE_H
#define DPROBE_SYM_DEMANGLE_H

#include <stdbool.h>
#include <stddef.h>

struct dp_elf;

/* Whether trace lines show readable names (--no-demangle: false). */
extern bool dp_demangle_on;

/*
 * @name readable (malloc'd), @params false: without its parameter list
 * and qualifiers ("ns::Widget::draw"), as trace lines show it.  NULL if
 * @name is not mangled (or no demangler is installed: libstdc++'s).
 */
char *dp_demangle(const char *name, bool params);

/* Whether @place (after MOD:) is a C++ name rather than a symbol. */
bool dp_cxx_place(const char *place);

/*
 * The symbol of @elf that C++ name @name stands for: one function,
 * named with its parameter list to choose an overload.  0 with @sym
 * filled, or -ENOENT (with "did you mean" candidates) / -ENOTUNIQ (the
 * overloads listed) and @why.
 */
int dp_cxx_lookup(const struct dp_elf *elf, const char *name, char *sym,
		  size_t symlen, char *why, size_t whylen);

/* Readable names of @elf's C++ functions called @name (their last part)
 * or nearly: up to @max, malloc'd into @out; how many. */
size_t dp_cxx_suggest(const struct dp_elf *elf, const char *name,
		      char **out, size_t max);

#endif
