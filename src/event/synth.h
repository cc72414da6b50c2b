/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Synthetic events firing: the record a hist trigger's action makes of
 * its params (the kernel's trace_event_raw_event_synth()), and its trace
 * line (print_synth_event()).  The definitions are lang/synth.h's, the
 * events the registry's.
 */
#ifndef DPROBE_EVENT_SYNTH_H
#define DPROBE_EVENT_SYNTH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "event/event.h"

/*
 * A record of synthetic event @ev with its fields set to @vals (@n of
 * them, in order; numbers, each cut to its field's size) or, where @strs
 * (may be NULL) has one, that string (cut to a char[N] field), its
 * common fields from @meta.  malloc'd, *@len its size; NULL without
 * memory.
 */
void *dp_synth_record(const struct dp_event *ev, const uint64_t *vals,
		      const char *const *strs, unsigned n,
		      const struct dp_rec_meta *meta, size_t *len);

/* After "NAME: ", the fields as the kernel prints a synthetic event:
 * "pid=1 lat=20" (a checked record). */
void dp_synth_print(FILE *out, const struct dp_event *ev, const void *rec,
		    size_t len);

#endif
