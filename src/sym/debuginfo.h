/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Debug information of one ELF file (DWARF, read with libdw): where it
 * lives (the file itself, .gnu_debuglink and build-id paths under
 * /usr/lib/debug, debuginfod when DEBUGINFOD_URLS is set, through
 * libdwfl's standard search, which checks the build-id or CRC of what
 * it finds), and what a probe definition needs of it: a function's
 * entry, source lines, and where a variable lives at an address, as the
 * fetch arguments the language already has (debugdef.c writes them).
 */
#ifndef DPROBE_SYM_DEBUGINFO_H
#define DPROBE_SYM_DEBUGINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dp_dbg;

/*
 * @path's debug information.  0, or -errno with @why ("no debug
 * information for PATH: searched ...; install its -dbgsym package or set
 * DEBUGINFOD_URLS").
 */
int dp_dbg_open(const char *path, struct dp_dbg **out, char *why,
		size_t whylen);
void dp_dbg_close(struct dp_dbg *d);
/* The offset of member path @path ("d_name.name") in struct @type, as
 * offsetof() gives it; 0, or -ENOENT. */
int dp_dbg_member_offset(struct dp_dbg *d, const char *type, const char *path,
			 int64_t *off);

/* A place in the file: a function and an address in it. */
struct dp_dbg_place {
	uint64_t addr;		/* link-time address */
	uint64_t func;		/* the out-of-line function's entry */
	char sym[256];		/* its ELF symbol (place text) */
	bool entry;		/* addr == func */
	uint64_t scope;		/* an inlined copy's DIE (its variables), or 0 */
	/* an fprobe's or tracepoint's place: parameters are read as $argN,
	 * never as registers */
	bool args;
};

/* Function @name's entry (out-of-line copy).  0, or -ENOENT with @why
 * (with "did you mean" candidates). */
int dp_dbg_func(struct dp_dbg *d, const char *name, struct dp_dbg_place *pl,
		char *why, size_t whylen);
/*
 * Every copy of function @name: its out-of-line copy (or the compiler's
 * clone, name.isra.0, when it has no symbol of its own) and each inlined
 * copy's entry.  Up to @max places; how many (*@inlined of them
 * inlined), or -ENOENT with @why.
 */
int dp_dbg_func_places(struct dp_dbg *d, const char *name,
		       struct dp_dbg_place *pl, int max, int *inlined,
		       char *why, size_t whylen);
/*
 * The addresses where source line @line starts: @rel true, relative to
 * the declaration line of function @where (perf probe's FUNC:N); false,
 * absolute in source file @where (FILE:N, its name's tail).  Up to @max
 * places; returns how many, or -errno with @why.
 */
int dp_dbg_lines(struct dp_dbg *d, const char *where, bool rel, int line,
		 struct dp_dbg_place *pl, int max, char *why, size_t whylen);
/* The lines of function @func whose source text matches @pattern
 * (perf's lazy FUNC;PATTERN: blanks ignored, '*' and '?' wildcards). */
int dp_dbg_lazy(struct dp_dbg *d, const char *func, const char *pattern,
		struct dp_dbg_place *pl, int max, char *why, size_t whylen);

/* How a value is fetched: the argument text, its type, its name. */
struct dp_dbg_arg {
	char body[64];		/* FETCHARG[:TYPE], at most 63 characters */
	char name[33];		/* a bare variable's name; "" for a chain */
};

/* Why a name could not be fetched, as the kernel's error codes say it. */
enum dp_dbg_err {
	DP_DBG_OK,
	DP_DBG_NO_VAR,		/* not a variable there */
	DP_DBG_NO_FIELD,	/* no such member */
	DP_DBG_NOT_PTR,		/* -> on a non-pointer */
	DP_DBG_STRUCT_VAL,	/* a struct or union by value */
	DP_DBG_BAD_HYPHEN,	/* "-" without ">" */
	DP_DBG_NO_RETVAL,	/* $retval of a void function */
	DP_DBG_OPTIMIZED,	/* no location at that address */
	DP_DBG_UNSUPPORTED,	/* a location or type dprobe cannot fetch */
	DP_DBG_TOO_LONG,	/* the argument text is too long */
	DP_DBG_BAD_INDEX,	/* an index past the array's end */
	DP_DBG_BAD_STRING,	/* :string on something not a string */
};

/*
 * The expression @expr (NAME, NAME->f.g[2], $retval, ...) at place @pl,
 * for an entry probe (@ret false) or a return probe of the function,
 * with the user's @type ("" to type it from the debug information).
 * DP_DBG_OK with @out, else the error with @why (which member, which
 * variables exist) and @at, the offset in @expr it is about.
 */
enum dp_dbg_err dp_dbg_arg(struct dp_dbg *d, const struct dp_dbg_place *pl,
			   bool ret, const char *expr, const char *type,
			   struct dp_dbg_arg *out, int *at, char *why,
			   size_t whylen);
/* The function's parameters at @pl ($arg*), in order: up to @max names
 * into @names (each 33 bytes); returns how many, or -errno. */
int dp_dbg_params(struct dp_dbg *d, const struct dp_dbg_place *pl,
		  char (*names)[33], int max);

/* Function @pl's parameter count (-1: variadic) and whether it returns
 * a value.  0, or -ENOENT. */
int dp_dbg_signature(struct dp_dbg *d, const struct dp_dbg_place *pl,
		     int *nparams, bool *returns);

/* ---- what there is (dprobe list -L, -V, -v) ------------------------------ */

/*
 * The source of function @func, perf probe -L's way: @line is called for
 * each line from its declaration to its last, with @rel >= 0 (the
 * number FUNC:N takes) where code starts, -1 elsewhere.  @file gets the
 * source file's path.  0, or -errno with @why.
 */
int dp_dbg_func_lines(struct dp_dbg *d, const char *func, char *file,
		      size_t filelen,
		      void (*line)(void *priv, int rel, const char *text),
		      void *priv, char *why, size_t whylen);
/* The variables visible at @pl, innermost scope first: @var is called
 * with each one's type and name, and whether it has a location there. */
int dp_dbg_vars(struct dp_dbg *d, const struct dp_dbg_place *pl,
		void (*var)(void *priv, const char *type, const char *name,
			    bool located),
		void *priv);
/* Each function with debug information and its prototype
 * ("int handle(struct msg* r, int n, const char* who)"). */
int dp_dbg_prototypes(struct dp_dbg *d,
		      void (*fn)(void *priv, const char *name,
				 const char *proto),
		      void *priv);

#endif
