/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The registry's lookups by name, id and probe place (regindex.c), so
 * that making n events, or one event of n probes, costs O(n) and not
 * O(n^2).  Internal to event/registry.c.
 *
 * The index is built on first use and dropped whenever events or probes
 * go (a delete) or the list is relinked from outside
 * (dp_registry_relinked()); it is then built again on the next lookup.
 * Without memory for it, each function answers from the lists.
 */
#ifndef DPROBE_EVENT_REGINDEX_H
#define DPROBE_EVENT_REGINDEX_H

#include "event/event.h"

void dp_regidx_drop(struct dp_registry *reg);
/* @ev was just linked at the end of the list (with its probes). */
void dp_regidx_event_added(struct dp_registry *reg, struct dp_event *ev);
/* @p was just appended to @p->event's probes. */
void dp_regidx_probe_added(struct dp_registry *reg, struct dp_probe *p);

struct dp_event *dp_regidx_find(struct dp_registry *reg, const char *group,
				const char *name);
struct dp_event *dp_regidx_find_if(struct dp_registry *reg, const char *group,
				   const char *name,
				   bool (*ok)(const struct dp_event *, const void *),
				   const void *arg);
struct dp_event *dp_regidx_find_id(struct dp_registry *reg, unsigned id);
/* Where the next event is linked / @ev's next probe is linked. */
struct dp_event **dp_regidx_events_tail(struct dp_registry *reg);
struct dp_probe **dp_regidx_probes_tail(struct dp_registry *reg,
					struct dp_event *ev);
/* The lowest id >= @base that no event has. */
unsigned dp_regidx_free_id(struct dp_registry *reg, unsigned base);
/* A probe of @ev at @def's place with the same argument bodies. */
bool dp_regidx_same_probe(struct dp_registry *reg, const struct dp_event *ev,
			  const struct dp_probe_def *def,
			  bool (*same_place)(const struct dp_probe_def *,
					     const struct dp_probe_def *));

#endif
