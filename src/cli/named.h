/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Events by name (named.c): application tracepoints ("GROUP:NAME") and
 * SDT probes ("sdt_PROVIDER:NAME") turned into definitions, and listed.
 */
#ifndef DPROBE_CLI_NAMED_H
#define DPROBE_CLI_NAMED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/* The ELF files a session's program is made of. */
struct dp_cli_objs {
	char **paths;
	size_t n;
};

/* @binary and the libraries the dynamic loader maps for it. */
int dp_cli_objs_of_binary(struct dp_cli_objs *o, const char *binary);
/* The files process @pid maps. */
int dp_cli_objs_of_pid(struct dp_cli_objs *o, pid_t pid);
void dp_cli_objs_free(struct dp_cli_objs *o);

struct dp_cli_lines {
	char **v;
	size_t n;
};

/*
 * @def as definitions: a named tracepoint or SDT probe becomes its
 * definitions (one per SDT site), anything else is copied as is.  0, or
 * -errno with the reason printed.
 */
/* Whether @def names a tracepoint or SDT probe (dp_cli_expand's work). */
bool dp_cli_names_event(const char *def);
int dp_cli_expand(const char *def, const struct dp_cli_objs *objs,
		  struct dp_cli_lines *out);
void dp_cli_lines_free(struct dp_cli_lines *l);
/* Append @line (taken over; NULL: -ENOMEM) to @l. */
int dp_cli_lines_push(struct dp_cli_lines *l, char *line);

/*
 * Definitions whose place is a glob over function names (globs.c):
 * `p:grp/ [MOD:]GLOB[%return] ARGS` is one event per function, with the
 * name the kernel generates; `p:grp/evt GLOB` one event with a probe on
 * each.  dp_cli_expand() calls dp_cli_expand_glob() for them.
 */
struct dp_funclist;
bool dp_cli_names_glob(const char *def);
int dp_cli_expand_glob(const char *def, const struct dp_cli_objs *objs,
		       struct dp_cli_lines *out);
/* --force: a pattern may select more than DP_FUNCSEL_LIMIT functions. */
extern bool dp_cli_glob_force;
/* Above the limit without --force: -E2BIG, said; else the functions
 * skipped, by reason, on stderr ("WHAT: N functions, K skipped (...)"). */
int dp_cli_funcs_checked(const char *what, const struct dp_funclist *l);
void dp_cli_funcs_summary(const char *what, const struct dp_funclist *l);


/* `dprobe list`'s named events of one file: "  NAME  [Tracepoint event]". */
void dp_cli_list_named(const char *path, const char *glob, FILE *out);

#endif
