/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Functions by pattern: which functions of a program's files a glob
 * names (`p:grp/ sqlite3_*`, `--tracer function_graph`), with the rules
 * of ftrace's set_ftrace_filter and set_ftrace_notrace: each line is
 * `[!]GLOB[:mod:MODULE]` (or `:mod:MODULE`, every function of it); a `!`
 * line takes functions out of what the others put in, and the last rule
 * that names a function decides.  A GLOB without :mod: is about every
 * file of the program, as the kernel's is about the kernel and all its
 * modules; with no rule that puts functions in, the selection is every
 * function of the program itself (its libraries only when named).  What is selected
 * is only what can be probed safely: the functions that cannot are
 * counted by reason, never armed.
 */
#ifndef DPROBE_SYM_FUNCSEL_H
#define DPROBE_SYM_FUNCSEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Above this many functions a selection must be asked for with --force:
 * each function is one or two probes, and a mistyped `*` over every
 * library of a program should not arm a hundred thousand of them.
 */
#define DP_FUNCSEL_LIMIT 20000

/* Why a function that matched is not probed. */
enum dp_func_skip {
	DP_SKIP_NOTRACE,	/* taken out by a `!` rule or the notrace list */
	DP_SKIP_NOSIZE,		/* no size: where it ends is unknown */
	DP_SKIP_IFUNC,		/* an IFUNC resolver, run once by the loader */
	DP_SKIP_RUNTIME,	/* dprobe's own agent or the loader */
	DP_SKIP_TRAMPOLINE,	/* a signal return or entry stub, not a call */
	DP_SKIP_NOTEXT,		/* not in an executable section of the file */
	DP_SKIP_NOTENTRY,	/* a part of a function jumped to, never
				 * called (GCC's foo.cold) */
	DP_SKIP_AMBIGUOUS,	/* its name is several functions of its
				 * file: one event with a probe on each
				 * names its places by symbol */
	DP_SKIP_N
};

/* The reason's name for a summary: "too short", "IFUNC resolver", ... */
const char *dp_func_skip_name(enum dp_func_skip why);

struct dp_funcrule {
	char *glob;		/* fnmatch(3) pattern on the name; "*" for all */
	char *mod;		/* :mod:MODULE, or NULL: the program itself */
	bool neg;		/* a `!` line */
};

/* A set of rules: set_ftrace_filter's lines, or set_ftrace_notrace's. */
struct dp_funcsel {
	struct dp_funcrule *v;
	size_t n;
};

/*
 * Add one line of set_ftrace_filter's language to @s; several may be
 * given separated by blanks or commas.  0, or -EINVAL with the reason
 * in @err.
 */
int dp_funcsel_add(struct dp_funcsel *s, const char *line, char *err,
		   size_t errlen);
void dp_funcsel_free(struct dp_funcsel *s);
/* Only the first @n rules of @s kept: a write taken back. */
void dp_funcsel_truncate(struct dp_funcsel *s, size_t n);

/* A selected function. */
struct dp_func {
	const char *path;	/* the file it is in (one of the paths given) */
	char *name;		/* its symbol, without a version */
	uint64_t vaddr;		/* link-time address */
	uint64_t size;
	bool unique;		/* its name is one address in its file */
};

struct dp_funclist {
	struct dp_func *v;
	size_t n;
	size_t skipped[DP_SKIP_N];	/* matched, not probed, by reason */
	size_t matched;			/* every function a rule put in */
};

/*
 * The functions of @paths (@paths[0] the program) that @filter selects
 * and @notrace does not, in file then address order, one per address.
 * @filter with no rule that puts functions in selects every function of
 * the program.  Returns 0 or -errno with the reason in @err.
 */
int dp_funcs_select(const char *const *paths, size_t npaths,
		    const struct dp_funcsel *filter,
		    const struct dp_funcsel *notrace,
		    struct dp_funclist *out, char *err, size_t errlen);
/*
 * For a listing (available_filter_functions, set_ftrace_filter): the
 * same functions, @filter's, under every name each has (aliases too),
 * with no notrace list.
 */
int dp_funcs_names(const char *const *paths, size_t npaths,
		   const struct dp_funcsel *filter, struct dp_funclist *out,
		   char *err, size_t errlen);
void dp_funclist_free(struct dp_funclist *l);

/* @f's place in a definition: [MOD:]NAME (@mod, @modlen bytes, or no
 * MOD when NULL), or PATH:0xOFFSET for a name that is several functions
 * of its file.  0, or -errno. */
int dp_func_place(const struct dp_func *f, const char *mod, size_t modlen,
		  char *buf, size_t len);

/* Whether @module names @path: its path, its base name, or the base name
 * up to ".so" ("libc" for libc.so.6). */
bool dp_funcsel_mod_is(const char *module, const char *path);

/* Whether @s contains a glob character. */
bool dp_is_glob(const char *s);

#endif
