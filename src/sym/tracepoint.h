/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Application tracepoints (include/dprobe/tracepoint.h) as dprobe finds
 * them in an ELF file: each struct dp_tracepoint sits in the writable
 * section "__dp_tracepoints", 64-byte aligned, its constant part (magic,
 * version, group, name, prototype, fields) initialised at compile time
 * without relocations, so the file alone describes it.
 */
#ifndef DPROBE_SYM_TRACEPOINT_H
#define DPROBE_SYM_TRACEPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <stdint.h>

#include "sym/elf.h"

#define DP_TP_SECTION		"__dp_tracepoints"
/* The file layout of struct dp_tracepoint's constant part (version 1). */
#define DP_TP_FILE_MAGIC	0x70747064u
#define DP_TP_FILE_VERSION	1
#define DP_TP_FILE_ALIGN	64
#define DP_TP_FILE_GROUP_OFF	8
#define DP_TP_FILE_GROUP_LEN	32
#define DP_TP_FILE_NAME_OFF	40
#define DP_TP_FILE_NAME_LEN	64
#define DP_TP_FILE_PROTO_OFF	104
#define DP_TP_FILE_PROTO_LEN	256
#define DP_TP_FILE_FIELDS_OFF	360
#define DP_TP_FILE_FIELD_SIZE	40
#define DP_TP_FILE_FIELD_NAME_KIND 32	/* a field: name[32], kind, size,
					 * is_signed, type... */
#define DP_TP_FILE_TYPE_PID_T	1	/* a field's type: pid_t */
#define DP_TP_FILE_MAX_ARGS	8
#define DP_TP_FILE_CONST_SIZE	(DP_TP_FILE_FIELDS_OFF + \
				 DP_TP_FILE_MAX_ARGS * DP_TP_FILE_FIELD_SIZE)

enum dp_tp_kind { DP_TP_INT = 1, DP_TP_STRING = 2, DP_TP_ARRAY = 3 };

struct dp_tp_arg {
	char name[DP_TP_FILE_FIELD_SIZE - 8 + 1];
	enum dp_tp_kind kind;
	unsigned size;		/* integer, or array element, bytes */
	bool is_signed;
	bool pid;		/* an INT declared tp_pid(): "pid_t" */
	unsigned count;		/* array elements */
};

struct dp_tp_desc {
	char group[DP_TP_FILE_GROUP_LEN + 1];
	char name[DP_TP_FILE_NAME_LEN + 1];
	char proto[DP_TP_FILE_PROTO_LEN + 1];
	unsigned nargs;
	struct dp_tp_arg args[DP_TP_FILE_MAX_ARGS];
	uint64_t vaddr;		/* link-time address of the struct */
	uint64_t file_offset;	/* its offset in the file */
};

/*
 * Every tracepoint of @elf, in section order, in a malloc'd *@out.
 * Returns the count (0: none), or -EINVAL for a malformed entry (a bad
 * string, kind or size: the file is not what it claims).
 */
ssize_t dp_elf_tracepoints(const struct dp_elf *elf, struct dp_tp_desc **out);

/*
 * The tracepoint [@group:]@name of @elf (@group NULL: any group; the
 * first).  0 with *@out filled, -ENOENT if there is none.
 */
int dp_elf_tracepoint(const struct dp_elf *elf, const char *group,
		      const char *name, struct dp_tp_desc *out);

/* Whether @a and @b have the same arguments (names, kinds, sizes). */
bool dp_tp_same_fields(const struct dp_tp_desc *a, const struct dp_tp_desc *b);

/*
 * The fetch arguments that record every field of @tp as its declared
 * type ("id=$arg1:s32 path=+0($arg2):string key=+0($arg3):u8[16]"; a
 * tp_pid() field "pid=$arg4:pid_t"), in
 * a malloc'd string.
 */
char *dp_tp_default_args(const struct dp_tp_desc *tp);

#endif
