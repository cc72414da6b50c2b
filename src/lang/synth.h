/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Synthetic event definitions (the kernel's trace_events_synth.c): an
 * event made of typed fields and no probe, written to synthetic_events
 * as "NAME TYPE FIELD[; TYPE FIELD]..." or to dynamic_events as
 * "s:[synthetic/]NAME ...".  Hist triggers' actions generate them.
 */
#ifndef DPROBE_LANG_SYNTH_H
#define DPROBE_LANG_SYNTH_H

#include <stdbool.h>

#include "lang/lang.h"

#define DP_SYNTH_FIELDS_MAX	64
#define DP_SYNTH_STR_MAX	256	/* STR_VAR_LEN_MAX: a char[N] slot */
#define DP_SYNTH_GROUP		"synthetic"

struct dp_synth_field {
	char *type;		/* as the format shows it ("__data_loc char[]") */
	char *name;
	unsigned size;		/* bytes of the value (8 for __data_loc) */
	unsigned offset;	/* after the common fields: 8-byte slots */
	bool is_signed;
	bool is_string;		/* char[N] or char[] */
	bool is_dynamic;	/* char[] or long[]: a __data_loc word */
	bool is_stack;		/* long[]: a stack trace */
};

struct dp_synth_def {
	char name[DP_MAX_EVENT_NAME_LEN];
	unsigned nfields;
	struct dp_synth_field *fields;
	unsigned size;		/* fixed bytes after the common fields */
};

/*
 * Parse a definition.  @dyn: a dynamic_events line ("s:..."; anything else
 * is not a synthetic event: -ECANCELED, nothing logged), else a
 * synthetic_events line.  Returns 0, -ENODATA for a blank line, or
 * -errno with @err as the kernel's "synthetic_events" error_log entry.
 */
int dp_parse_synth(const char *line, bool dyn, struct dp_synth_def *def,
		   struct dp_error *err);
void dp_synth_def_free(struct dp_synth_def *def);
/* Fill @e as the kernel logs @code for @line, the caret on the first
 * occurrence of @word (NULL: at the start).  Returns -@err. */
int dp_synth_error(struct dp_error *e, const char *line, enum dp_err_code code,
		   const char *word, int err);

/* "NAME\tTYPE FIELD; TYPE FIELD", as synthetic_events lists it (malloc'd). */
char *dp_synth_listing(const struct dp_synth_def *def);
/* The printf conversion the kernel's print fmt uses for a field type. */
const char *dp_synth_field_fmt(const char *type);

#endif
