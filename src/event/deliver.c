// SPDX-License-Identifier: GPL-2.0
/*
 * The one per-hit tail: filter, count, hand to the sink (see deliver.h).
 */
#include "event/deliver.h"
#include "event/eprobe.h"
#include "event/filter.h"

bool dp_event_deliver_counted(const struct dp_deliver *d,
			      struct dp_probe *pr)
{
	/* a filter or an event probe needs the record's fields: it has
	 * to be made */
	if (!d->count_only || pr->event->filter || pr->event->neprobes ||
	    pr->event->soft || pr->event->triggered)
		return false;
	dp_event_count(d, pr, 1);
	return true;
}

void dp_event_count(const struct dp_deliver *d, struct dp_probe *pr,
		    uint64_t n)
{
	pr->nevents += n;
	d->stats->events += n;
}

/* The event's own record: its filter, its count, the sink. */
static bool deliver_own(const struct dp_deliver *d, struct dp_probe *pr,
			const void *rec, size_t len,
			const struct dp_rec_meta *meta,
			const struct dp_symbolizer *sym)
{
	const struct dp_event *ev = pr->event;

	if (ev->soft)
		return false;	/* armed for its event probes only */
	if (ev->filter && !dp_filter_match(ev->filter, ev, rec, len, meta)) {
		d->stats->filtered++;
		return false;
	}
	dp_event_count(d, pr, 1);
	if (!d->count_only)
		d->sink->emit(d->sink->priv, ev, rec, len, meta, sym);
	return true;
}

bool dp_event_deliver(const struct dp_deliver *d, struct dp_probe *pr,
		      const void *rec, size_t len,
		      const struct dp_rec_meta *meta,
		      const struct dp_symbolizer *sym)
{
	bool pass;

	/* triggers first, on every record, as the kernel's hist triggers */
	if (pr->event->triggered && d->sink->trigger)
		d->sink->trigger(d->sink->priv, pr->event, rec, len, meta, sym);
	pass = deliver_own(d, pr, rec, len, meta, sym);

	/* then the event probes on it, whatever its own filter said (the
	 * kernel's triggers see every record) */
	if (pr->event->neprobes)
		dp_eprobe_fire(d, pr->event, rec, len, meta, sym);
	return pass;
}

void dp_event_lost(const struct dp_deliver *d, int cpu, unsigned long n)
{
	if (n != DP_LOST_UNKNOWN)
		d->stats->lost += n;
	if (d->sink->lost && !d->count_only)
		d->sink->lost(d->sink->priv, cpu, n);
}

void dp_event_lost_record(const struct dp_deliver *d)
{
	d->stats->lost++;
}
