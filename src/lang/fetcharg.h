/* SPDX-License-Identifier: GPL-2.0 */
/* Internal to lang/: compiling one fetch argument. */
#ifndef DPROBE_LANG_FETCHARG_H
#define DPROBE_LANG_FETCHARG_H

#include <stdbool.h>

#include "lang/lang.h"

/* What the kernel keeps in traceprobe_parse_context, plus error plumbing. */
struct dp_parse_ctx {
	bool kernel;		/* symbol place (kprobe grammar) */
	bool is_return;
	bool fentry;		/* at a function entry: $argN allowed */
	bool fprobe;		/* f: and t: lines: no registers (BAD_VAR) */
	bool tracepoint;	/* t: lines: the pid_t type too */
	/* e: lines: $NAME is a field of the attached event (the kernel's
	 * TPARG_FL_TEVENT), looked up here */
	const struct dp_attach_lookup *tevent;
	const char *att_group, *att_event;
	const char *line;	/* for error positions */
	int index;		/* token index of the argument */
	struct dp_error *err;
};

/*
 * Parse token @tok as argument @i into @args[i] (earlier ones are used for
 * name conflicts).  @size accumulates the fixed record size (starting at
 * the probe header size).  Returns 0 or -errno with the error filled.
 */
int dp_parse_fetcharg(const struct dp_parse_ctx *pc, struct dp_arg *args,
		      int i, const char *tok, unsigned *size);
void dp_arg_free(struct dp_arg *a);
bool dp_is_good_name(const char *s);

#endif
