/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The end of every hit, whatever the engine: the record an engine made
 * (or the hit it only counted) is filtered with its event's filter,
 * counted, and handed to the sink.  Engines call these and nothing else
 * once they hold a record, so that counting, filtering and the count-only
 * (stat) mode behave the same on all of them.
 *
 * The per-probe hit count (nhit, the profile's first column) is not kept
 * here: when a hit counts depends on the engine and the probe kind (the
 * kernel counts a return probe when it fires, a uretprobe when its
 * function is entered).
 */
#ifndef DPROBE_EVENT_DELIVER_H
#define DPROBE_EVENT_DELIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event/event.h"
#include "event/sink.h"

/* Where an engine's hits end: its sink, its counts and its mode. */
struct dp_deliver {
	const struct dp_sink *sink;
	struct dp_stats *stats;
	bool count_only;	/* stat: count, hand nothing to the sink */
};

/*
 * Count-only mode and an event without a filter: no record is needed.
 * Counts the hit as delivered and returns true; the engine then makes no
 * record.  False: the engine makes one and calls dp_event_deliver().
 */
bool dp_event_deliver_counted(const struct dp_deliver *d,
			      struct dp_probe *pr);

/*
 * @n hits of @pr that made no record (count-only probes counted where
 * they fired) and passed, as no filter applies to them.
 */
void dp_event_count(const struct dp_deliver *d, struct dp_probe *pr,
		    uint64_t n);

/*
 * A record of @pr's event: run the event's filter on it, count it as
 * filtered or as an event (of @pr too), and unless in count-only mode
 * hand it to the sink with @sym.  True if it passed the filter.
 */
bool dp_event_deliver(const struct dp_deliver *d, struct dp_probe *pr,
		      const void *rec, size_t len,
		      const struct dp_rec_meta *meta,
		      const struct dp_symbolizer *sym);

/*
 * @n records lost before the next one on @cpu (DP_LOST_UNKNOWN: an
 * unknown number): counted when known, and reported to the sink unless
 * in count-only mode.
 */
void dp_event_lost(const struct dp_deliver *d, int cpu, unsigned long n);

/* One hit whose record could not be made or read: counted as lost, not
 * reported (the reader sees no gap in a CPU's stream). */
void dp_event_lost_record(const struct dp_deliver *d);

#endif
