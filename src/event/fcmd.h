/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Function commands: the `FUNC:COMMAND[:PARAM]` words of set_ftrace_filter
 * (kernel/trace/ftrace.c's ftrace_process_regex() and the commands
 * trace_functions.c, trace.c and trace_events.c register): traceon[:N],
 * traceoff[:N], stacktrace[:N], snapshot[:N], dump, cpudump,
 * enable_event:SYS:EVENT[:N], disable_event:SYS:EVENT[:N]; `!FUNC:COMMAND`
 * takes them off again.  Each command is a row of one table; what it does
 * on a hit is an event trigger's (event/trigger.h: the same dp_trigger and
 * dp_trigger_ops), run once per call of the function.
 *
 * As in the kernel, a command with a PARAM and one without are two
 * different "probe ops" (traceon and traceon:5 may both be on a function),
 * a function holds one command of each, and adding only functions that
 * already have it is EINVAL; `!FUNC:CMD[:ANY]` takes the ops with (or
 * without) a count off every function FUNC matches, ENODEV when that ops
 * is on no function, EINVAL when FUNC matches none of them.  The listing
 * goes by ops, the newest first.  Which functions a glob names, and the
 * probes that make the hits, are the caller's: a function is a "site"
 * number and the name it is listed by.  Knows nothing of the mount.
 */
#ifndef DPROBE_EVENT_FCMD_H
#define DPROBE_EVENT_FCMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "event/trigger.h"

/* Two ops (with and without a count) for each command. */
#define DP_FCMD_NOPS 16

/* One command on one function (under one of its names). */
struct dp_fcmd {
	unsigned site;			/* the caller's: which function */
	const struct dp_event *ev;	/* the caller's: the site's event */
	char *name;			/* the function's name, as matched */
	char *lib;			/* " [lib]" in the listing; NULL: none */
	unsigned row;			/* the command */
	struct dp_trigger trig;		/* what runs; .counted: the ops */
};

/* Every function command of a set_ftrace_filter. */
struct dp_fcmd_set {
	struct dp_fcmd *v;
	size_t n;
	/* when each ops (row, counted) got its first function: the
	 * listing's order; 0 while it has none */
	unsigned seq[DP_FCMD_NOPS];
	unsigned next_seq;
};

/* A word of set_ftrace_filter, parsed. */
struct dp_fcmd_req {
	char *glob;			/* FUNC, without the '!' */
	bool remove;
	unsigned row;
	struct dp_trigger trig;		/* cmd, count, counted, target */
};

/* Whether @word is FUNC:COMMAND... (and not `:mod:`, a filter rule). */
bool dp_fcmd_is_command(const char *word);

/*
 * Parse @word as the kernel does: an unknown command, enable_event
 * without SYS:EVENT or naming no event (@find, as for triggers; also
 * for a removal), and a count that is no number are EINVAL (or kstrtoul's
 * ERANGE).  A removal's count is not looked at.
 */
int dp_fcmd_parse(const char *word, dp_trigger_find_t find, void *priv,
		  struct dp_fcmd_req *req);
void dp_fcmd_req_free(struct dp_fcmd_req *req);

/* @req's command on @site (@ev: the caller's event for it, handed back
 * by dp_fcmd_site_event()) under @name (@lib: NULL, or its library's
 * name): 1 if added, 0 if it has that ops under that name already,
 * -ENOMEM. */
int dp_fcmd_add(struct dp_fcmd_set *s, unsigned site,
		const struct dp_event *ev, const char *name, const char *lib,
		const struct dp_fcmd_req *req);

/*
 * Take @req's ops off the functions whose name its glob matches ("" and
 * "*": all), calling @gone for each before it is freed.  The number
 * taken off, or -ENODEV (the ops is on none) or -EINVAL (none matched).
 */
int dp_fcmd_remove(struct dp_fcmd_set *s, const struct dp_fcmd_req *req,
		   void (*gone)(void *priv, const struct dp_fcmd *c),
		   void *priv);

/* The event given with @site's commands; NULL: none is on it. */
const struct dp_event *dp_fcmd_site_event(const struct dp_fcmd_set *s,
					  unsigned site);
/* Whether any command is on @site; a stacktrace one. */
bool dp_fcmd_on_site(const struct dp_fcmd_set *s, unsigned site);
bool dp_fcmd_site_stacks(const struct dp_fcmd_set *s, unsigned site);
/* Whether an enable_event or disable_event names @ev. */
bool dp_fcmd_targets(const struct dp_fcmd_set *s, const struct dp_event *ev);

/* The listing lines: "FUNC[ [lib]]:CMD[:SYS:EVENT]:count=N|:unlimited". */
void dp_fcmd_print(const struct dp_fcmd_set *s, FILE *out);

/* A call of @site's function: each ops on it runs once, newest first. */
void dp_fcmd_run(struct dp_fcmd_set *s, unsigned site,
		 const struct dp_trigger_ops *ops, void *priv);

void dp_fcmd_set_free(struct dp_fcmd_set *s);

#endif
