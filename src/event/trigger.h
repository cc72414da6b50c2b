/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Event triggers: the kernel's trigger commands other than `hist`
 * (kernel/trace/trace_events_trigger.c, and enable_hist/disable_hist of
 * trace_events_hist.c) on a dprobe event: what a write to an event's
 * `trigger` file parses into, the rules by which triggers are added and
 * removed, their lines in that file, and when each one runs on a record.
 *
 * The commands: traceon, traceoff, snapshot, stacktrace, and
 * enable_event, disable_event, enable_hist, disable_hist with a target
 * SYSTEM:EVENT; each with an optional `:N` count (how many more times it
 * may fire) and an optional `if FILTER` (the event filter language,
 * event/filter.h, on the triggering event's fields).  What they act on
 * (tracing on/off, the snapshot buffer, a stack entry, another event's
 * soft-disabled bit, hist triggers' pause) is the caller's: struct
 * dp_trigger_ops.  Knows nothing of the mount.
 *
 * As the kernel: at most one trigger of each type per event (traceon and
 * traceoff are one type, as are enable_event and disable_event, and
 * enable_hist and disable_hist, per target), a second one is EEXIST;
 * "!CMD..." removes the trigger of CMD's type whatever its count or
 * filter (nothing to remove is no error); triggers are listed and run
 * newest first.
 */
#ifndef DPROBE_EVENT_TRIGGER_H
#define DPROBE_EVENT_TRIGGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "event/event.h"
#include "event/filter.h"
#include "event/record.h"

enum dp_trig_cmd {
	DP_TRIG_TRACEON,
	DP_TRIG_TRACEOFF,
	DP_TRIG_SNAPSHOT,
	DP_TRIG_STACKTRACE,
	DP_TRIG_ENABLE_EVENT,
	DP_TRIG_DISABLE_EVENT,
	DP_TRIG_ENABLE_HIST,
	DP_TRIG_DISABLE_HIST,
	DP_TRIG_NCMDS,
	/* set_ftrace_filter's function commands only (event/fcmd.h): the
	 * buffer printed to the console, all of it or the hit's CPU's */
	DP_TRIG_DUMP = DP_TRIG_NCMDS,
	DP_TRIG_CPUDUMP,
};

/* The kernel's enum event_trigger_type bits (ETT_*). */
enum dp_trig_type {
	DP_ETT_TRACE_ONOFF = 1 << 0,
	DP_ETT_SNAPSHOT = 1 << 1,
	DP_ETT_STACKTRACE = 1 << 2,
	DP_ETT_EVENT_ENABLE = 1 << 3,
	DP_ETT_EVENT_HIST = 1 << 4,
	DP_ETT_HIST_ENABLE = 1 << 5,
};

#define DP_TRIG_UNLIMITED ((unsigned long)-1)

struct dp_trigger {
	enum dp_trig_cmd cmd;
	unsigned long count;		/* DP_TRIG_UNLIMITED: no count */
	bool counted;			/* a :N was given (count_func runs) */
	char *filter_text;		/* after "if ", as written; NULL: none */
	struct dp_filter *filter;
	/* enable_event & co: the target (an event that cannot go away
	 * while this trigger is on it: the caller keeps it busy) */
	const struct dp_event *target;
	struct dp_trigger *next;
};

/* Every trigger command's name, in the kernel's order of registration
 * ("traceon traceoff snapshot stacktrace enable_event disable_event
 * enable_hist disable_hist"), then "hist". */
extern const char *const dp_trigger_names[DP_TRIG_NCMDS];
/* "# Available triggers:\n# traceon ... hist\n", as an empty `trigger`
 * file reads. */
extern const char dp_trigger_help[];

/*
 * The command word of a trigger write @text (already stripped), as the
 * kernel's trigger_process_regex() cuts it: up to the first ':', ' ' or
 * '\t', without a leading '!', into @word (of @size bytes).  True if it
 * is one of this module's commands (*@cmd set); "hist" is not.
 */
bool dp_trigger_command(const char *text, char *word, size_t size,
			enum dp_trig_cmd *cmd);

/* Finds an enable_event target: NULL if there is no such event or it
 * cannot be enabled (the kernel's find_event_file()). */
typedef const struct dp_event *(*dp_trigger_find_t)(void *priv,
						    const char *sys,
						    const char *name);

/*
 * Parse a write of @text (stripped, a command of this module) to @ev's
 * trigger file.  Returns 0 with *@out (and *@remove for "!..."), or
 * -errno: -EINVAL for what the kernel refuses; a bad filter fills @ferr
 * (ferr->err != 0, the error_log entry is the caller's), *@filter_text
 * then the filter as the kernel logs it.  A removal's count and filter
 * are not looked at, as in the kernel.
 */
int dp_trigger_parse(const struct dp_event *ev, const char *text,
		     dp_trigger_find_t find, void *priv,
		     struct dp_trigger **out, bool *remove,
		     struct dp_filter_error *ferr, char **filter_text);
void dp_trigger_free(struct dp_trigger *t);

/* The type bit of @t (DP_ETT_*). */
unsigned dp_trigger_type(const struct dp_trigger *t);
/* A trigger that runs after its event is recorded (traceoff,
 * stacktrace: the kernel's EVENT_CMD_FL_POST_TRIGGER). */
bool dp_trigger_is_post(const struct dp_trigger *t);
/* enable_event, disable_event, enable_hist, disable_hist. */
bool dp_trigger_has_target(const struct dp_trigger *t);
bool dp_trigger_same(const struct dp_trigger *a, const struct dp_trigger *b);

/* The trigger's line in the `trigger` file ("traceon:count=5 if a > 3"). */
void dp_trigger_print(const struct dp_trigger *t, FILE *out);

/* One event's triggers, newest first. */
struct dp_trigger_set {
	struct dp_trigger *head;
};

/* Add @t (taken) unless one of its type is there: 0 or -EEXIST. */
int dp_trigger_set_add(struct dp_trigger_set *s, struct dp_trigger *t);
/* Take out the trigger of @like's type (and target): it, or NULL. */
struct dp_trigger *dp_trigger_set_remove(struct dp_trigger_set *s,
					 const struct dp_trigger *like);
void dp_trigger_set_clear(struct dp_trigger_set *s);
void dp_trigger_set_print(const struct dp_trigger_set *s, FILE *out);
/* Any trigger has a filter or runs after the record (the kernel's
 * TRIGGER_COND, which hist triggers also set). */
bool dp_trigger_set_cond(const struct dp_trigger_set *s);

/* What triggers act on. */
struct dp_trigger_ops {
	bool (*tracing_is_on)(void *priv);
	void (*tracing_set)(void *priv, bool on);
	void (*snapshot)(void *priv);
	/* a stack entry for the record being processed */
	void (*stacktrace)(void *priv);
	bool (*soft_disabled)(void *priv, const struct dp_event *target);
	void (*set_soft_disabled)(void *priv, const struct dp_event *target,
				  bool disabled);
	void (*hist_pause)(void *priv, const struct dp_event *target,
			   bool paused);
	/* dump, cpudump: tracing off, the buffer (@all_cpus, or the CPU of
	 * the record being processed) printed and consumed */
	void (*dump)(void *priv, bool all_cpus);
};

/* Run @t once, as a hit of its event (its count rules first): what
 * both calls below do for each trigger, and function commands for
 * theirs. */
void dp_trigger_fire(struct dp_trigger *t, const struct dp_trigger_ops *ops,
		     void *priv);

/*
 * The kernel's event_triggers_call(): with @rec NULL every trigger runs
 * (the unconditional call, before the record is made); with a record,
 * those whose filter passes run, except post triggers, whose type bits
 * are returned for dp_trigger_set_post_call() once the record is in.
 * A count only goes down when its trigger fires.
 */
unsigned dp_trigger_set_call(struct dp_trigger_set *s,
			     const struct dp_event *ev, const void *rec,
			     size_t len, const struct dp_rec_meta *meta,
			     const struct dp_trigger_ops *ops, void *priv);
void dp_trigger_set_post_call(struct dp_trigger_set *s, unsigned tt,
			      const struct dp_trigger_ops *ops, void *priv);

#endif
