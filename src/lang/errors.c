// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "lang/argv.h"
#include "lang/errors.h"

static const char *const messages[DP_ERR_MAX] = {
	[DP_ERR_NONE] = "No error",
#define DP_ERR_TEXT(id, msg) [DP_ERR_##id] = msg,
	DP_PROBE_ERRORS(DP_ERR_TEXT)
	DP_SYNTH_ERRORS(DP_ERR_TEXT)
#undef DP_ERR_TEXT
	/* The kernel logs nothing for these; the words are dprobe's. */
	[DP_ERR_NOT_PROBE] =
		"A definition is p|r|f|t|e[:[GRP/]EVENT] PLACE [ARGS] or -:[GRP/]EVENT",
	[DP_ERR_BAD_PLACE] =
		"A PATH:OFFSET place needs a '/' in PATH and a number after the last ':'",
	[DP_ERR_LINE_TOO_LONG] =
		"Line length is too long: Should be less than 4094",
	[DP_ERR_BAD_DELETE] = "A delete is -:[GRP/]EVENT [PLACE [NAME=BODY ...]]",
	[DP_ERR_NO_SUCH_EVENT] = "No probe event matches this delete",
	[DP_ERR_BUSY] = "The event is busy (enabled); disable it first",
	[DP_ERR_REFCTR_MISMATCH] = "Reference counter offset mismatch.",
	[DP_ERR_NOT_ELF] = "Not an x86-64 ELF file",
	[DP_ERR_OFFS_OUTSIDE] =
		"Offset is not inside an executable segment of the file",
	[DP_ERR_BAD_EP_FILTER] =
		"The filter after 'if' is not a filter of the attached event",
	[DP_ERR_EP_ATTACHED] =
		"An event probe is on this event; delete the event probe first",
};

const char *dp_err_message(enum dp_err_code code)
{
	if (code < 0 || code >= DP_ERR_MAX || !messages[code])
		return "Error";
	return messages[code];
}

const char *dp_errno_name(int err)
{
	switch (err) {
#define N(e) case e: return #e
	N(EPERM); N(ENOENT); N(ESRCH); N(EIO); N(E2BIG); N(ENOEXEC);
	N(ENOMEM); N(EACCES); N(EFAULT); N(EBUSY); N(EEXIST); N(ENOTDIR);
	N(EISDIR); N(EINVAL); N(ERANGE); N(ENAMETOOLONG); N(ELOOP);
	N(EADDRNOTAVAIL); N(EILSEQ); N(EOPNOTSUPP); N(ENOTUNIQ);
	N(ECANCELED); N(ENODATA);
#undef N
	default:
		return "EUNKNOWN";
	}
}

void dp_error_clear(struct dp_error *e)
{
	if (!e)
		return;
	free(e->command);
	memset(e, 0, sizeof(*e));
}

/*
 * "trace_uprobe" if the place looks like PATH:OFFSET, "trace_fprobe" for
 * an f: or t: line (the kernel's fprobes and tprobes live there),
 * "event_probe" for an e: line, else "trace_kprobe".
 */
static const char *loc_for(const struct dp_argv *a)
{
	const char *p, *colon;

	if (a->argc >= 1 && (a->argv[0][0] == 't' || a->argv[0][0] == 'f'))
		return "trace_fprobe";
	if (a->argc >= 1 && a->argv[0][0] == 'e')
		return "event_probe";
	if (a->argc < 2)
		return "trace_kprobe";
	p = a->argv[1];
	colon = strrchr(p, ':');
	if (strchr(p, '/') && colon && colon[1] >= '0' && colon[1] <= '9')
		return "trace_uprobe";
	return "trace_kprobe";
}

static bool code_is_logged(enum dp_err_code code)
{
	return code > DP_ERR_NONE && code < DP_ERR_NOT_PROBE;
}

/* Mirrors __trace_probe_log_err(): caret = start of argv[index] + offset. */
void dp_error_at(struct dp_error *e, const char *line, enum dp_err_code code,
		 int err, int index, int offset)
{
	struct dp_argv a;
	int pos = 0, len = 0;

	if (!e)
		return;
	dp_error_clear(e);
	e->code = code;
	e->err = err;
	e->logged = code_is_logged(code);
	if (dp_argv_split(line, &a) < 0) {
		e->loc = "dprobe";
		return;
	}
	for (int i = 0; i < a.argc; i++) {
		if (i == index)
			pos = len;
		len += (int)strlen(a.argv[i]) + 1;
	}
	if (index >= a.argc) {
		pos = len;
		offset = 0;
	}
	e->pos = pos + offset;
	e->command = dp_argv_join(&a);
	e->loc = e->logged ? loc_for(&a) : "dprobe";
	dp_argv_free(&a);
}

void dp_error_print(const struct dp_error *e, FILE *out)
{
	fprintf(out, "%s: error: %s\n", e->loc ? e->loc : "dprobe",
		dp_err_message(e->code));
	fprintf(out, "  Command: %s\n", e->command ? e->command : "");
	fprintf(out, "%*s\n", 11 + e->pos + 1, "^");
	if (e->detail[0])
		fprintf(out, "  (%s)\n", e->detail);
}

int dp_error_detail(struct dp_error *e, const char *line,
		    enum dp_err_code code, int err, int index, int offset,
		    const char *fmt, ...)
{
	va_list ap;

	if (!e)
		return -err;
	dp_error_at(e, line, code, err, index, offset);
	va_start(ap, fmt);
	vsnprintf(e->detail, sizeof(e->detail), fmt, ap);
	va_end(ap);
	return -err;
}
