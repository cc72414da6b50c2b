/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Hist triggers: the kernel's `hist:` event trigger
 * (kernel/trace/trace_events_hist.c) on a dprobe event.  Each record of
 * the event that passes the trigger's own filter is aggregated under its
 * key (one to three fields, with the kernel's modifiers) into a table of
 * at most `size` entries, counting hits and summing up to three value
 * fields; the table reads back as the kernel's `hist` file does, byte for
 * byte for the same data.
 *
 * What is the kernel's here: the syntax (`keys=`/`key=`, `vals=`/
 * `values=`/`val=`, `sort=` with `.descending`/`.ascending`, `size=`,
 * `pause`, `cont`/`continue`, `clear`, `nohitcount`, `if FILTER`), the
 * modifiers `.hex .sym .sym-offset .execname .syscall .log2 .buckets=N`
 * on keys and `.hex .percent .graph` on values, the limits (3 keys, 3
 * values, 2 sort keys, 128..131072 entries), the default sort
 * (hitcount, ascending), the error messages, and the text; variables
 * and expressions (common_timestamp, common_cpu), the onmatch(),
 * onmax() and onchange() actions (trace, save, snapshot), `name=`, and
 * common_stacktrace keys from the records' user stacks, and stack
 * variables (common_stacktrace, or the older stacktrace) that trace()
 * hands to synthetic events' 'unsigned long[]' fields.  Not here yet:
 * string variables.
 *
 * Symbols and comms are taken when an entry is made (the process may be
 * gone when the histogram is read), as the kernel takes comms.
 */
#ifndef DPROBE_EVENT_HIST_H
#define DPROBE_EVENT_HIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "event/event.h"
#include "event/record.h"
#include "event/sink.h"

struct dp_hist;

/*
 * What a trigger sees besides its event: the other triggers (for
 * variables, references and name=), the registry (onmatch() events and
 * synthetic events), and where the records of the synthetic events its
 * actions generate go.  Kept by whoever keeps the triggers, for as long
 * as they live.
 */
struct dp_hist_env {
	const struct dp_registry *reg;
	/* the @i-th trigger there is (NULL past the last) */
	struct dp_hist *(*each)(void *priv, size_t i);
	/* a record of synthetic event @ev, made by an action */
	void (*fire)(void *priv, const struct dp_event *ev, const void *rec,
		     size_t len, const struct dp_rec_meta *meta);
	void *priv;
	/* an event outside @reg that triggers may be on and onmatch() may
	 * name (the mount's ftrace/print); may be NULL */
	const struct dp_event *extra;
	/* take a snapshot of the trace buffer (onmax()/onchange()
	 * .snapshot()); NULL: there is no snapshot buffer, the action is
	 * refused */
	void (*snapshot)(void *priv);
};

/* Why a trigger was refused: the kernel's message and where in the
 * text (0: its start). */
struct dp_hist_error {
	const char *msg;
	unsigned pos;
	/* entries the kernel logs before that one for the same command
	 * (a reference to no variable: "Couldn't find variable", then
	 * "Couldn't find field"), oldest first */
	const char *prev_msg[2];
	unsigned prev_pos[2];
	unsigned nprev;
};

/*
 * A hist trigger on @ev from @text ("hist:keys=...[ if FILTER]"): 0 and
 * *@out, or -errno with @err (-EINVAL for what the kernel refuses).
 */
int dp_hist_new(const struct dp_event *ev, const char *text,
		struct dp_hist **out, struct dp_hist_error *err);
/* The same among the triggers of @env (may be NULL: none).  @remove: the
 * text of a "!hist:..." (a variable may be there already). */
int dp_hist_new_in(const struct dp_hist_env *env, const struct dp_event *ev,
		   const char *text, bool remove, struct dp_hist **out,
		   struct dp_hist_error *err);
/* The event it is on. */
const struct dp_event *dp_hist_event(const struct dp_hist *h);
/* Whether another trigger of its env refers to one of @h's variables
 * (it may not go: -EBUSY), or an action of @h generates event @id. */
bool dp_hist_referenced(const struct dp_hist *h);
bool dp_hist_generates(const struct dp_hist *h, unsigned id);
/* Whether @h has a snapshot() action (it holds the snapshot buffer). */
bool dp_hist_snapshots(const struct dp_hist *h);
/* Whether the trigger has a name= (its table may be shared). */
const char *dp_hist_name(const struct dp_hist *h);
void dp_hist_free(struct dp_hist *h);
/* @err as the kernel's error_log shows it ("hist:GROUP:EVENT: error: ..."
 * with the command and a caret, after its earlier entries); an error
 * without a message: errno's. */
void dp_hist_error_print(const struct dp_event *ev, const char *text,
			 int ret, const struct dp_hist_error *err, FILE *out);

/* The command words alone (pause, cont, clear): the trigger's state. */
enum dp_hist_cmd { DP_HIST_ADD, DP_HIST_PAUSE, DP_HIST_CONT, DP_HIST_CLEAR };
enum dp_hist_cmd dp_hist_command(const struct dp_hist *h);
/* Whether a key is shown as a symbol (dp_hist_add() wants @sym). */
bool dp_hist_wants_symbols(const struct dp_hist *h);
/* Whether a key or a variable is the user stack (common_stacktrace): the
 * event's records must carry it (dp_event.stack, dp_rec_meta.stack). */
bool dp_hist_wants_stacks(const struct dp_hist *h);
/* Whether @a and @b are the same trigger (keys, values, sort, filter):
 * what a second write of it, or its pause/cont/clear, is matched to. */
bool dp_hist_same(const struct dp_hist *a, const struct dp_hist *b);
void dp_hist_pause(struct dp_hist *h, bool paused);
void dp_hist_clear(struct dp_hist *h);

/* One record of the event, with @sym for .sym keys (may be NULL). */
void dp_hist_add(struct dp_hist *h, const void *rec, size_t len,
		 const struct dp_rec_meta *meta,
		 const struct dp_symbolizer *sym);

/*
 * Whether @h can be kept in the traced processes (event/agg.h): numeric
 * keys and values of a fixed-size record, no filter, no .sym keys.  True
 * with @s filled (but its offset), else false.
 */
struct dp_agg_spec;
bool dp_hist_agg_spec(const struct dp_hist *h, struct dp_agg_spec *s);
/* What such a table's entry went up by (sink.agg): @hits hits and the
 * values' sums @val under @key (as dp_agg_key() made them), the first hit
 * by @comm; @key NULL: @hits hits dropped. */
void dp_hist_add_sums(struct dp_hist *h, const uint64_t *key, uint64_t hits,
		      const uint64_t *val, const char *comm);

/* The trigger as the `trigger` file lists it ("hist:keys=... [active]"). */
void dp_hist_print_trigger(const struct dp_hist *h, FILE *out);
/* Its part of the `hist` file: @n is how many triggers came before. */
void dp_hist_print(const struct dp_hist *h, unsigned n, FILE *out);

#endif
