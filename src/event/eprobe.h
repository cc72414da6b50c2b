/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Event probes (e: lines, the kernel's eprobes): a new event whose fields
 * are fetched from the records of another event, its attached event,
 * each time that event fires, and from the memory they point to.
 *
 * The registry parses and links them (dp_eprobe_parse(), _link(),
 * _unlink()); dp_event_deliver() fires them on each record of the
 * attached event (dp_eprobe_fire()), in whatever process delivers it, so
 * no engine knows of them: an engine only arms the attached event (for
 * its event probes alone when it is "soft").  Memory an argument reads
 * is that of the process the engine says the record is from
 * (dp_rec_meta.mm_pid, never what the record says: a traced program can
 * write its rings), read when the record is delivered.
 */
#ifndef DPROBE_EVENT_EPROBE_H
#define DPROBE_EVENT_EPROBE_H

#include "event/deliver.h"
#include "event/event.h"

/* An e: line, its fields looked up in @reg.  As dp_parse_probe(). */
int dp_eprobe_parse(const struct dp_registry *reg, const char *line,
		    struct dp_probe_def *def, struct dp_error *err);
/* @ev (an event probe, just made) on its attached event; its "if" filter
 * compiled against that event.  0 or -errno (@ev is not linked). */
int dp_eprobe_link(struct dp_registry *reg, struct dp_event *ev,
		   const char *line, struct dp_error *err);
/* @ev off its attached event, before it is freed. */
void dp_eprobe_unlink(struct dp_event *ev);
/* Each enabled event probe on @att, for one record of @att. */
void dp_eprobe_fire(const struct dp_deliver *d, const struct dp_event *att,
		    const void *rec, size_t len, const struct dp_rec_meta *meta,
		    const struct dp_symbolizer *sym);

#endif
