/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel tracepoints as dprobe events: a kernel `format` file read into
 * the fields of an event, and the kernel's records of it turned into
 * records of that layout (integers where the kernel has them, every char
 * array and __data_loc/__rel_loc string as a __data_loc string), so that
 * filters, renderers and event probes read them as any other record.
 * The kernel engine converts; a dprobe mount describes the events in
 * events/syscalls/ with the same layout before any record exists.
 */
#ifndef DPROBE_EVENT_KFORMAT_H
#define DPROBE_EVENT_KFORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "event/event.h"

/* One field line of a `format` file. */
struct dp_kfield {
	char type[128];
	char name[DP_MAX_EVENT_NAME_LEN];
	unsigned count;		/* NAME[N]: N; else 0 */
	unsigned offset, size;
	bool is_signed;
};
/* The next "\tfield:" line from *@pos (advanced): 1, 0 at the end. */
int dp_kformat_next(const char **pos, struct dp_kfield *f);

/* How one kernel tracepoint's records become dprobe's (opaque). */
struct dp_ktp;

/* From the kernel's `format` text; NULL when out of memory. */
struct dp_ktp *dp_ktp_parse(const char *format);
void dp_ktp_free(struct dp_ktp *tp);
/* @ev's fields, fixed_size and kprint_fmt (@format's "print fmt:"). */
int dp_ktp_describe(struct dp_event *ev, const struct dp_ktp *tp,
		    const char *format);
/*
 * The kernel's record @rec of @len bytes as dprobe's, into *@buf (grown
 * as needed, *@cap its size), with @id as common_type.  Returns the
 * record or NULL for a malformed one; *@out_len is its length.
 */
const uint8_t *dp_ktp_convert_rec(const struct dp_ktp *tp, uint16_t id,
				  const uint8_t *rec, size_t len,
				  uint8_t **buf, size_t *cap, size_t *out_len);

#endif
