/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every engine hands its records to, and the counts every engine
 * keeps: the seam between the engines (src/engine/) and the output
 * (src/output/), so that neither includes the other.
 */
#ifndef DPROBE_EVENT_SINK_H
#define DPROBE_EVENT_SINK_H

#include <stddef.h>
#include <stdint.h>

#include "event/event.h"
#include "event/agg.h"

/*
 * Symbolizer for kprobe-style places: fills @sym with the symbol name
 * containing @addr, @off the offset in it and @size its size.  Returns 0,
 * or -1 if @addr is in no known symbol.
 */
struct dp_symbolizer {
	int (*lookup)(void *priv, uint64_t addr, const char **sym,
		      uint64_t *off, uint64_t *size);
	void *priv;
};

/* A count of lost events that is not known (a ring that overran without
 * counting). */
#define DP_LOST_UNKNOWN ((unsigned long)-1)

/* Where records go once they have passed their event's filter. */
struct dp_sink {
	void (*emit)(void *priv, const struct dp_event *ev, const void *rec,
		     size_t len, const struct dp_rec_meta *meta,
		     const struct dp_symbolizer *sym);
	/* Events lost before the next one on @cpu (DP_LOST_UNKNOWN: an
	 * unknown number); NULL: not reported.  The ptrace engine never
	 * loses events this way. */
	void (*lost)(void *priv, int cpu, unsigned long n);
	void *priv;
	/* Nothing more to read for now, after some records: the moment to
	 * flush what was written, so that a file (-o) or a pipe shows the
	 * events while the target runs.  NULL: nothing to do. */
	void (*idle)(void *priv);
	/* Every record of an event marked `triggered` (hist triggers), as
	 * the kernel's triggers see them: before the event's filter, also
	 * when it is soft and in count-only mode.  NULL: none. */
	void (*trigger)(void *priv, const struct dp_event *ev, const void *rec,
			size_t len, const struct dp_rec_meta *meta,
			const struct dp_symbolizer *sym);
	/* What an entry of a table kept in the processes (struct
	 * dp_agg_req) went up by: @hits hits with the values' sums @val,
	 * under the keys @key, first hit by a thread called @comm; @key
	 * NULL: @hits hits dropped (the table was full).  NULL: none. */
	void (*agg)(void *priv, void *cookie, const uint64_t *key,
		    uint64_t hits, const uint64_t *val, const char *comm);
};

/*
 * Hist triggers an engine may keep inside the traced processes (event/agg.h)
 * instead of handing the event's records to sink.trigger: @n tables, each
 * reported to sink.agg with its @cookie.  The event's records are then
 * not made at all where the engine does so (the in-process engine);
 * other engines ignore the request and deliver records as usual.
 */
struct dp_agg_req {
	const struct dp_event *ev;
	/*
	 * Non-NULL: @ev is a return probe timed in the process (dprobe
	 * latency): each hit's record is the call's duration, made from the
	 * stamp its entry left in the return instance (the agent's
	 * DP_AGENT_LAT_* layout), and @timed_from, the entry event of the
	 * same place, is only counted there (the calls that never
	 * returned).  Engines that ignore the request record both.
	 */
	const struct dp_event *timed_from;
	unsigned n;
	struct dp_agg_spec spec[DP_AGG_PER_PROBE];	/* off: set by the engine */
	void *cookie[DP_AGG_PER_PROBE];
};

/* What an engine did with the hits, for the summary. */
struct dp_stats {
	uint64_t events;	/* records emitted */
	uint64_t filtered;	/* records a filter discarded */
	uint64_t missed;	/* hits not recorded (return instances full) */
	uint64_t lost;		/* records that did not fit */
	uint64_t dropped;	/* return instances dropped as stale */
	unsigned procs;		/* process images traced (exec: a new one) */
	unsigned forks;		/* of them, fork children */
	unsigned untraced;	/* processes of the session left untraced */
};

#endif
