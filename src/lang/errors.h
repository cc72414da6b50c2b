/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Probe-definition errors: the kernel's error codes and messages
 * (kernel/trace/trace_probe.h ERRORS), and how one is reported
 * in the form of the kernel's error_log.
 */
#ifndef DPROBE_LANG_ERRORS_H
#define DPROBE_LANG_ERRORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* X(ID, "message"), in the kernel's enum order. */
#define DP_PROBE_ERRORS(X)						\
	X(FILE_NOT_FOUND, "Failed to find the given file")		\
	X(NO_REGULAR_FILE, "Not a regular file")			\
	X(BAD_REFCNT, "Invalid reference counter offset")		\
	X(REFCNT_OPEN_BRACE, "Reference counter brace is not closed")	\
	X(BAD_REFCNT_SUFFIX, "Reference counter has wrong suffix")	\
	X(BAD_UPROBE_OFFS, "Invalid uprobe offset")			\
	X(BAD_MAXACT_TYPE, "Maxactive is only for function exit")	\
	X(BAD_MAXACT, "Invalid maxactive number")			\
	X(MAXACT_TOO_BIG, "Maxactive is too big")			\
	X(BAD_PROBE_ADDR, "Invalid probed address or symbol")		\
	X(NON_UNIQ_SYMBOL, "The symbol is not unique")			\
	X(BAD_RETPROBE, "Retprobe address must be an function entry")	\
	X(NO_TRACEPOINT, "Tracepoint is not found")			\
	X(BAD_TP_NAME, "Invalid character in tracepoint name")		\
	X(BAD_ADDR_SUFFIX, "Invalid probed address suffix")		\
	X(NO_GROUP_NAME, "Group name is not specified")			\
	X(GROUP_TOO_LONG, "Group name is too long")			\
	X(BAD_GROUP_NAME, "Group name must follow the same rules as C identifiers") \
	X(NO_EVENT_NAME, "Event name is not specified")			\
	X(EVENT_TOO_LONG, "Event name is too long")			\
	X(BAD_EVENT_NAME, "Event name must follow the same rules as C identifiers") \
	X(EVENT_EXIST, "Given group/event name is already used by another event") \
	X(RETVAL_ON_PROBE, "$retval is not available on probe")		\
	X(NO_RETVAL, "This function returns 'void' type")		\
	X(BAD_STACK_NUM, "Invalid stack number")			\
	X(BAD_ARG_NUM, "Invalid argument number")			\
	X(BAD_VAR, "Invalid $-variable specified")			\
	X(BAD_REG_NAME, "Invalid register name")			\
	X(BAD_MEM_ADDR, "Invalid memory address")			\
	X(BAD_IMM, "Invalid immediate value")				\
	X(IMMSTR_NO_CLOSE, "String is not closed with '\"'")		\
	X(FILE_ON_KPROBE, "File offset is not available with kprobe")	\
	X(BAD_FILE_OFFS, "Invalid file offset value")			\
	X(SYM_ON_UPROBE, "Symbol is not available with uprobe")		\
	X(TOO_MANY_OPS, "Dereference is too much nested")		\
	X(DEREF_NEED_BRACE, "Dereference needs a brace")		\
	X(BAD_DEREF_OFFS, "Invalid dereference offset")			\
	X(DEREF_OPEN_BRACE, "Dereference brace is not closed")		\
	X(COMM_CANT_DEREF, "$comm can not be dereferenced")		\
	X(BAD_FETCH_ARG, "Invalid fetch argument")			\
	X(ARRAY_NO_CLOSE, "Array is not closed")			\
	X(BAD_ARRAY_SUFFIX, "Array has wrong suffix")			\
	X(BAD_ARRAY_NUM, "Invalid array size")				\
	X(ARRAY_TOO_BIG, "Array number is too big")			\
	X(BAD_TYPE, "Unknown type is specified")			\
	X(BAD_STRING, "String accepts only memory argument")		\
	X(BAD_SYMSTRING, "Symbol String doesn't accept data/userdata")	\
	X(BAD_BITFIELD, "Invalid bitfield")				\
	X(ARG_NAME_TOO_LONG, "Argument name is too long")		\
	X(NO_ARG_NAME, "Argument name is not specified")		\
	X(BAD_ARG_NAME, "Argument name must follow the same rules as C identifiers") \
	X(USED_ARG_NAME, "This argument name is already used")		\
	X(ARG_TOO_LONG, "Argument expression is too long")		\
	X(NO_ARG_BODY, "No argument expression")			\
	X(BAD_INSN_BNDRY, "Probe point is not an instruction boundary")	\
	X(FAIL_REG_PROBE, "Failed to register probe event")		\
	X(DIFF_PROBE_TYPE, "Probe type is different from existing probe") \
	X(DIFF_ARG_TYPE, "Argument type or name is different from existing probe") \
	X(SAME_PROBE, "There is already the exact same probe event")	\
	X(NO_EVENT_INFO, "This requires both group and event name to attach") \
	X(BAD_ATTACH_EVENT, "Attached event does not exist")		\
	X(BAD_ATTACH_ARG, "Attached event does not have this field")	\
	X(NO_EP_FILTER, "No filter rule after 'if'")			\
	X(NOSUP_BTFARG, "BTF is not available or not supported")	\
	X(NO_BTFARG, "This variable is not found at this probe point")	\
	X(NO_BTF_ENTRY, "No BTF entry for this probe point")		\
	X(BAD_VAR_ARGS, "$arg* must be an independent parameter without name etc.") \
	X(NOFENTRY_ARGS, "$arg* can be used only on function entry or exit") \
	X(DOUBLE_ARGS, "$arg* can be used only once in the parameters")	\
	X(ARGS_2LONG, "$arg* failed because the argument list is too long") \
	X(ARGIDX_2BIG, "$argN index is too big")			\
	X(NO_PTR_STRCT, "This is not a pointer to union/structure.")	\
	X(NOSUP_DAT_ARG, "Non pointer structure/union argument is not supported.") \
	X(BAD_HYPHEN, "Failed to parse single hyphen. Forgot '>'?")	\
	X(NO_BTF_FIELD, "This field is not found.")			\
	X(BAD_BTF_TID, "Failed to get BTF type info.")			\
	X(BAD_TYPE4STR, "This type does not fit for string.")		\
	X(NEED_STRING_TYPE, "$comm and immediate-string only accepts string type") \
	X(TOO_MANY_ARGS, "Too many arguments are specified")		\
	X(TOO_MANY_EARGS, "Too many entry arguments specified")		\
	X(EVENT_TOO_BIG, "Event too big (too many fields?)")

/* The synthetic events' own (trace_events_synth.c), logged as
 * "synthetic_events". */
#define DP_SYNTH_ERRORS(X)						\
	X(SYNTH_BAD_NAME, "Illegal name")				\
	X(SYNTH_INVALID_CMD,						\
	  "Command must be of the form: <name> field[;field] ...")	\
	X(SYNTH_INVALID_DYN_CMD, "Command must be of the form: s or "	\
	  "-:[synthetic/]<name> field[;field] ...")			\
	X(SYNTH_EVENT_EXISTS, "Event already exists")			\
	X(SYNTH_TOO_MANY_FIELDS, "Too many fields")			\
	X(SYNTH_INCOMPLETE_TYPE, "Incomplete type")			\
	X(SYNTH_INVALID_TYPE, "Invalid type")				\
	X(SYNTH_INVALID_FIELD, "Invalid field")				\
	X(SYNTH_INVALID_ARRAY_SPEC, "Invalid array specification")

enum dp_err_code {
	DP_ERR_NONE = 0,
#define DP_ERR_ENUM(id, msg) DP_ERR_##id,
	DP_PROBE_ERRORS(DP_ERR_ENUM)
	DP_SYNTH_ERRORS(DP_ERR_ENUM)
#undef DP_ERR_ENUM
	/*
	 * Rejections for which the kernel writes no error_log entry (it only
	 * returns an errno); dprobe still says what is wrong.
	 */
	DP_ERR_NOT_PROBE,	/* first letter not p/r/-, or fewer than 2 tokens */
	DP_ERR_BAD_PLACE,	/* uprobe path without '/', or no digit after ':' */
	DP_ERR_LINE_TOO_LONG,
	DP_ERR_BAD_DELETE,
	DP_ERR_NO_SUCH_EVENT,	/* delete matched nothing */
	DP_ERR_BUSY,
	DP_ERR_REFCTR_MISMATCH,
	DP_ERR_NOT_ELF,		/* dprobe: the file is not an x86-64 ELF */
	DP_ERR_OFFS_OUTSIDE,	/* dprobe: offset not in an executable segment */
	DP_ERR_BAD_EP_FILTER,	/* e: "if FILTER" does not compile (the
				 * kernel logs the filter's own error) */
	DP_ERR_EP_ATTACHED,	/* delete: an event probe is on the event */
	DP_ERR_MAX,
};

/*
 * One rejected command, as the kernel's error_log records it:
 *   <loc>: error: <message>
 *     Command: <command>
 *   <11+pos spaces>^
 */
#define DP_ERROR_DETAIL_MAX 640

struct dp_error {
	enum dp_err_code code;
	int err;		/* positive errno */
	const char *loc;	/* "trace_uprobe", "trace_kprobe", "dprobe", ... */
	char *command;		/* argv joined by single spaces (malloc'd) */
	int pos;		/* caret column in command */
	bool logged;		/* the kernel writes an error_log entry */
	/* extra dprobe context, "" if none; long enough for two full paths */
	char detail[DP_ERROR_DETAIL_MAX];
};

const char *dp_err_message(enum dp_err_code code);
/*
 * Fill @e for a rejection of @line at token @index (argv index after
 * splitting at whitespace), @offset characters into that token, as the
 * kernel's trace_probe_log_err() positions its caret.  An @index past the
 * last token puts the caret just after the command.  @loc is chosen from
 * the line's place ("trace_uprobe" or "trace_kprobe").
 */
void dp_error_at(struct dp_error *e, const char *line, enum dp_err_code code,
		 int err, int index, int offset);
/* "EINVAL", "EEXIST", ... */
const char *dp_errno_name(int err);
void dp_error_clear(struct dp_error *e);
/*
 * dp_error_at() plus a dprobe detail (printf-style) for a rejection found
 * while resolving a place.  Returns -@err; does nothing but that if @e is
 * NULL.
 */
int dp_error_detail(struct dp_error *e, const char *line,
		    enum dp_err_code code, int err, int index, int offset,
		    const char *fmt, ...) __attribute__((format(printf, 7, 8)));
/* Print the error_log block (without the kernel's timestamp). */
void dp_error_print(const struct dp_error *e, FILE *out);

#endif
