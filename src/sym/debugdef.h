/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Definitions that name things the debug information knows (debugdef.c),
 * turned into the definitions the language already has before the
 * registry sees them, on every engine:
 *
 *   p:ev prog:handle r n              (the kernel's BTF-argument syntax)
 *     p:ev prog:handle r=%di:x64 n=%si:s32
 *   p:ev prog:handle r->hdr.len name  (members, as the kernel's BTF args)
 *     p:ev prog:handle arg1=+4(%di):u16 name=+0(%dx):string
 *   p:ev prog:handle $arg*            (every parameter)
 *   r:ev prog:handle $retval          (typed from the return type)
 *   p:ev prog:parse:12 i buf->len     (perf probe's FUNC:REL_LINE and
 *   p:ev prog:parse.c:40 i            FILE:LINE places, locals there)
 *   p:ev 'prog:parse;len = *'         (a lazy pattern: every line of the
 *                                     function that matches)
 *
 * A place that stands for several addresses (a line with code in two
 * functions, a pattern matching several lines) makes one definition per
 * address, under the same event.
 */
#ifndef DPROBE_SYM_DEBUGDEF_H
#define DPROBE_SYM_DEBUGDEF_H

#include <stdbool.h>
#include <stddef.h>

#include "lang/errors.h"

struct dp_debugdef;

/*
 * Where places are looked up: @binary for a place without MOD: (NULL:
 * none), and @objs (the files a MOD: may name by base name).
 */
struct dp_debugdef *dp_debugdef_new(const char *binary, char *const *objs,
				    size_t nobjs);
void dp_debugdef_free(struct dp_debugdef *c);

/* Whether @line names something only the debug information knows. */
bool dp_debugdef_needed(const char *line);

/*
 * @line as plain definitions: *@out is a NULL-terminated array of
 * malloc'd lines (free with dp_debugdef_lines_free()).  0, or -errno with
 * @e (the kernel's wording and caret, dprobe's detail); -ENODATA, with
 * nothing set, when a plain place has no debug information: the caller
 * applies @line as it is and the kernel's parser reports its own error.
 */
int dp_debugdef_translate(struct dp_debugdef *c, const char *line,
			  char ***out, struct dp_error *e);
void dp_debugdef_lines_free(char **lines);
/*
 * A plain definition on a function the debug information describes,
 * checked as the kernel checks it with BTF: $argN past the declared
 * parameters (NO_BTFARG), $retval of a void function (NO_RETVAL).  0
 * (also without debug information), or -EINVAL with @e.
 */
int dp_debugdef_check(struct dp_debugdef *c, const char *line,
		      struct dp_error *e);
/*
 * The kernel's traceprobe_expand_dentry_args() on a kprobe or fprobe
 * line: each "[NAME=]BODY:%pd" becomes "NAME=+0x0(+OFF(BODY)):string" (a
 * struct dentry's name) and ":%pD" the same through a struct file, the
 * offsets those of the place's file's debug information.  0 with *@out
 * (malloc'd), -ENODATA when the line has none, or -EINVAL with @e.
 */
int dp_debugdef_vfs_args(struct dp_debugdef *c, const char *line, char **out,
			 struct dp_error *e);
/* What the last translation placed, when a function had several copies
 * ("scale: 3 places (2 inlined copies)"), else "". */
const char *dp_debugdef_note(const struct dp_debugdef *c);
/* Argument @arg of line @line of the last translation as it was
 * written (up to a newline), or NULL. */
const char *dp_debugdef_shown(const struct dp_debugdef *c, size_t line,
			      unsigned arg);

#endif
