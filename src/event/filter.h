/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Event filters: the kernel's filter language (trace_events_filter.c,
 * trace_events_filter.c), compiled once per event and evaluated on records.
 */
#ifndef DPROBE_EVENT_FILTER_H
#define DPROBE_EVENT_FILTER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "event/event.h"

/* The kernel's filter error codes, in err_text[] order. */
#define DP_FILTER_ERRORS(X)						\
	X(NONE, "No error")						\
	X(INVALID_OP, "Invalid operator")				\
	X(TOO_MANY_OPEN, "Too many '('")				\
	X(TOO_MANY_CLOSE, "Too few '('")				\
	X(MISSING_QUOTE, "Missing matching quote")			\
	X(MISSING_BRACE_OPEN, "Missing '{'")				\
	X(MISSING_BRACE_CLOSE, "Missing '}'")				\
	X(OPERAND_TOO_LONG, "Operand too long")				\
	X(EXPECT_STRING, "Expecting string field")			\
	X(EXPECT_DIGIT, "Expecting numeric field")			\
	X(ILLEGAL_FIELD_OP, "Illegal operation for field type")		\
	X(FIELD_NOT_FOUND, "Field not found")				\
	X(ILLEGAL_INTVAL, "Illegal integer value")			\
	X(BAD_SUBSYS_FILTER, "Couldn't find or set field in one of a subsystem's events") \
	X(TOO_MANY_PREDS, "Too many terms in predicate expression")	\
	X(INVALID_FILTER, "Meaningless filter expression")		\
	X(INVALID_CPULIST, "Invalid cpulist")				\
	X(IP_FIELD_ONLY, "Only 'ip' field is supported for function trace") \
	X(INVALID_VALUE, "Invalid value (did you forget quotes)?")	\
	X(NO_FUNCTION, "Function not found")				\
	X(ERRNO, "Error")						\
	X(NO_FILTER, "No filter found")

enum dp_filter_err_code {
#define DP_FERR_ENUM(id, msg) DP_FERR_##id,
	DP_FILTER_ERRORS(DP_FERR_ENUM)
#undef DP_FERR_ENUM
};

struct dp_filter_error {
	int err;		/* positive errno, as the kernel's write returns */
	bool has_code;		/* false: the kernel prints "Error: (<n>)" */
	enum dp_filter_err_code code;
	int pos;		/* caret position in the filter text */
	int raw;		/* the <n> of "Error: (<n>)" */
};

struct dp_filter;

/*
 * Compile @text for @ev.  Returns the filter, or NULL with @err filled.
 * "0" is not special here (the caller clears the filter for it).
 */
struct dp_filter *dp_filter_compile(const struct dp_event *ev,
				    const char *text,
				    struct dp_filter_error *err);
void dp_filter_free(struct dp_filter *f);

/* True if the record (of @rec_len bytes) passes. */
bool dp_filter_match(const struct dp_filter *f, const struct dp_event *ev,
		     const void *rec, size_t rec_len,
		     const struct dp_rec_meta *meta);

const char *dp_filter_err_message(enum dp_filter_err_code code);

/*
 * What the kernel's `filter` file shows after a failed write:
 *   <text>\n<caret line>\nparse_error: <message>\n  (or "\nError: (<n>)\n")
 * (the file itself adds one more '\n', see dp_event_filter_print()).
 */
void dp_filter_error_print(const char *text, const struct dp_filter_error *e,
			   FILE *out);

/*
 * The instance error_log entry for the same failure, without the kernel's
 * "[timestamp] " prefix:
 *   event filter parse error: error: <message>\n
 *     Command: <text>\n
 *   <11+pos spaces>^\n
 * Without a code the kernel logs "Error" with the caret at 0.
 */
void dp_filter_error_log_print(const char *text,
			       const struct dp_filter_error *e, FILE *out);

/*
 * Set or clear (text "0") an event's filter, as a write to its `filter`
 * file does.  Returns 0 or -errno.
 */
int dp_event_set_filter(struct dp_event *ev, const char *text,
			struct dp_filter_error *err);

/* What reading the event's `filter` file gives ("none\n" without one). */
void dp_event_filter_print(const struct dp_event *ev, FILE *out);

/* CPU ids CPUS{...} accepts are 0 .. n-1 (the kernel's nr_cpu_ids). */
unsigned dp_filter_nr_cpus(void);

/*
 * FIELD.function: the kernel resolves the operand (a symbol name, or an
 * address) with kallsyms to the function around it.  dprobe asks this
 * hook instead: resolve @name (NULL when the operand is a number) or @addr
 * to the enclosing function's [*start, *start + *size); false if none.
 * Without a hook every .function predicate fails with NO_FUNCTION.
 */
typedef bool (*dp_filter_func_lookup_t)(void *priv, const char *name,
					uint64_t addr, uint64_t *start,
					uint64_t *size);
void dp_filter_set_func_lookup(dp_filter_func_lookup_t fn, void *priv);

#endif
