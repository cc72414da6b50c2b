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

#include "event/sink.h"

/* The most frames a stack field holds (HIST_STACKTRACE_DEPTH), its
 * frame count first. */
#define DP_SYNTH_STACK_DEPTH 16

/*
 * A record of synthetic event @ev with its fields set to @vals (@n of
 * them, in order; numbers, each cut to its field's size) or, where @strs
 * (may be NULL) has one, that string (cut to a char[N] field), or for a
 * stack field ('unsigned long[]'), where @stacks (may be NULL) has one,
 * that stack: its frame count, then the frames (what a hist trigger's
 * stack variable holds); its common fields from @meta.  malloc'd, *@len
 * its size; NULL without memory.
 *
 * A stack field's data are the kernel's trace_stack() copy: the count
 * and the frames, DP_SYNTH_STACK_DEPTH words at most (15 frames), none
 * for an empty stack.
 */
void *dp_synth_record(const struct dp_event *ev, const uint64_t *vals,
		      const char *const *strs,
		      const uint64_t *const *stacks, unsigned n,
		      const struct dp_rec_meta *meta, size_t *len);

/* After "NAME: ", the fields as the kernel prints a synthetic event:
 * "pid=1 lat=20" (a checked record); a stack field as
 * "stack=STACK:\n=> FRAME\n..." with each frame as %pS prints it,
 * through @sym (may be NULL: the address in hex). */
void dp_synth_print(FILE *out, const struct dp_event *ev, const void *rec,
		    size_t len, const struct dp_symbolizer *sym);

#endif
