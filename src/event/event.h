/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Events: the registry of probe events (groups, names, ids), each event's
 * record layout and `format` text, enable state and hit/miss profile (the
 * record itself is described in event/record.h).  An event is fed by one
 * or more probes (the kernel's multi-probe events).
 * Knows nothing of how probes are armed.
 */
#ifndef DPROBE_EVENT_H
#define DPROBE_EVENT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "event/record.h"
#include "lang/lang.h"
#include "lang/synth.h"

/* The group of the tracers' events (sym/tracer.h; the kernel's is
 * `ftrace` too): their return probes keep no maxactive (registry.c). */
#define DP_TRACER_GROUP "ftrace"

struct dp_event;

struct dp_probe {
	struct dp_event *event;
	struct dp_probe_def def;	/* owns args and their fetch programs */
	uint64_t nhit, nmiss;		/* kprobe_profile counters */
	uint64_t nevents;		/* records that passed the filter */
	/* Resolution, filled by a resolver or engine (0 if unknown). */
	uint64_t file_offset;		/* of the probed instruction */
	uint64_t vaddr;			/* link-time address */
	bool ifunc_said;		/* "X is an IFUNC: probing Y" shown */
	struct dp_probe *next;
};

struct dp_filter;

struct dp_event {
	unsigned id;
	/* made by the registry in order and never reused, where an id is
	 * reused by the next event made after a delete */
	unsigned serial;
	char group[DP_MAX_EVENT_NAME_LEN];
	char name[DP_MAX_EVENT_NAME_LEN];
	enum dp_probe_kind kind;
	bool is_return;
	bool enabled;
	struct dp_probe *probes;	/* first probe defines the layout */
	unsigned nfields;		/* header + argument fields */
	struct dp_field *fields;	/* without the common fields */
	unsigned fixed_size;		/* bytes before dynamic data */
	/* a static event (an application tracepoint a dprobe mount finds in
	 * its target): in events/ but in no *_events listing, never deleted */
	bool builtin;
	/* with @builtin, shown nowhere (events/, available_events, the
	 * enable of all events, profiles): a set_ftrace_filter function
	 * command's probe in a dprobe mount */
	bool hidden;
	/* a synthetic event (DP_KIND_SYNTH): its definition; no probes */
	struct dp_synth_def *synth;
	struct dp_filter *filter;	/* NULL: no filter */
	char *filter_text;
	/* the event probes (e:) on this event, which its records feed */
	struct dp_event **eprobes;
	unsigned neprobes;
	/* an event probe: the event it is on, and its "if" filter, run on
	 * that event's records */
	struct dp_event *attached;
	struct dp_filter *ep_filter;
	/* armed only for the event probes on it: its own records go no
	 * further (the kernel's soft-enabled event) */
	bool soft;
	/* its records are wanted by triggers (hist): the sink's trigger
	 * hook sees every one of them (sink.h) */
	bool triggered;
	/* its records carry the user stack at the hit (dprobe trace
	 * --stack): engines capture it for this event only, and hand it on
	 * in dp_rec_meta.stack (record.h) */
	bool stack;
	/* with @stack: not the frame-pointer chain but a snapshot of the
	 * registers and of this many stack bytes, unwound by dprobe with
	 * the CFI (--call-graph dwarf, sym/unwind.h); 0: frame pointers */
	unsigned stack_dwarf;
	/* with @stack, the stack tracer's (sym/tracer.h): a record only
	 * when a process's stack is deeper than any it recorded, with each
	 * frame's depth (dp_rec_meta.stack_depth): engines with
	 * DP_ENGINE_STACK_MAX (the in-process one checks it in the process,
	 * the ptrace one at its stops); the CLI refuses it on others. */
	bool stack_max;
	/* a kernel tracepoint (events/syscalls/ in a dprobe mount): no
	 * probes, its records made by the kernel engine; its print fmt is
	 * the kernel's own */
	bool kernel;
	char *kprint_fmt;
	struct dp_ktp *ktp;		/* event/kformat.h: its fields' owner */
	struct dp_event *next;
};

struct dp_registry {
	struct dp_event *events;	/* in creation order */
	unsigned next_id_base;		/* first dynamic id */
	unsigned serials;		/* events made so far (dp_event.serial) */
	/*
	 * Optional check run on a parsed definition before it is applied:
	 * resolves the place (file, symbol, instruction boundary).  Returns
	 * 0 or -errno with @err filled.
	 */
	int (*resolve)(void *priv, const char *line,
		       struct dp_probe_def *def, struct dp_probe *probe,
		       struct dp_error *err);
	void *resolve_priv;
	unsigned parse_flags;		/* DP_PARSE_* for every definition */
	/* error_log: the last 8 entries */
	struct dp_error log[8];
	unsigned nlog;
	/* lookups by name, id and place (event/regindex.c), or NULL */
	struct dp_reg_index *index;
};

#define DP_FIRST_EVENT_ID 1000
/* kernel tracepoints' ids (dp_registry_kernel_tp()); common_type is 16 bits */
#define DP_FIRST_KERNEL_TP_ID 30000

void dp_registry_init(struct dp_registry *reg);
void dp_registry_free(struct dp_registry *reg);
/*
 * Code that relinks reg->events itself (the mount's views of one kind of
 * event, a session child's lane) calls this after each change, so that
 * the registry's lookups see the list as it is now.
 */
void dp_registry_relinked(struct dp_registry *reg);

/*
 * Apply one line as a write of it to kprobe_events / uprobe_events would:
 * create, append a probe to an existing event, or delete (-:).  Blank and
 * comment lines are no-ops.  Returns 0 or -errno; on error the registry is
 * unchanged and @err (if not NULL) describes the rejection.  On success
 * *@probe_out (if not NULL) is the probe created (NULL for deletes/no-ops).
 */
int dp_registry_apply(struct dp_registry *reg, const char *line,
		      struct dp_probe **probe_out, struct dp_error *err);

/*
 * A synthetic event definition, as a write to dynamic_events (@dyn: an
 * "s:" line) or to synthetic_events makes it.  Returns 0 (also for a blank
 * line), -ECANCELED for a dynamic_events line that is not "s:", or -errno
 * with @err filled; on error the registry is unchanged.
 */
int dp_registry_synth(struct dp_registry *reg, const char *line, bool dyn,
		      struct dp_error *err);

/*
 * A kernel tracepoint GROUP/NAME as its `format` file (@format) describes
 * it: an event with the fields of the records the kernel engine makes of
 * the kernel's (event/kformat.c), in events/ but in no listing.  Its id is
 * the registry's next; an event of that name already there is returned.
 */
struct dp_event *dp_registry_kernel_tp(struct dp_registry *reg,
				       const char *group, const char *name,
				       const char *format);

/* True if engines arm @ev's probes: not an event probe, a synthetic
 * event or a kernel tracepoint (nothing to place in a process). */
static inline bool dp_event_placed(const struct dp_event *ev)
{
	return ev->probes && ev->kind != DP_KIND_EPROBE && !ev->kernel;
}

struct dp_event *dp_registry_find(const struct dp_registry *reg,
				  const char *group, const char *name);
struct dp_event *dp_registry_find_id(const struct dp_registry *reg,
				     unsigned id);

/* Field by name: event fields, then the common fields.  NULL if none. */
const struct dp_field *dp_event_field(const struct dp_event *ev,
				      const char *name);

/* Write the event's `format` file, byte for byte as the kernel's. */
void dp_event_format(const struct dp_event *ev, FILE *out);
/* The `print fmt:` value alone (malloc'd). */
char *dp_event_print_fmt(const struct dp_event *ev);

/* `*_events` listing: one canonical line per probe. */
void dp_registry_list(const struct dp_registry *reg, enum dp_probe_kind kind,
		      FILE *out);
/* kprobe_profile / uprobe_profile lines. */
void dp_registry_profile(const struct dp_registry *reg,
			 enum dp_probe_kind kind, FILE *out);

#endif
