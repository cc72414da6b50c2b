/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The probe-definition language: what a user writes to kprobe_events or
 * uprobe_events, parsed into a probe definition whose arguments are compiled
 * into fetch programs.  Knows nothing of processes or engines.
 */
#ifndef DPROBE_LANG_H
#define DPROBE_LANG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lang/errors.h"

/* Limits, as the kernel's (trace_probe.h). */
#define DP_MAX_EVENT_NAME_LEN	64	/* names are 1..63 chars */
#define DP_MAX_TRACE_ARGS	128
#define DP_MAX_ARG_NAME_LEN	32
#define DP_MAX_ARGSTR_LEN	63
#define DP_MAX_ARRAY_LEN	64
#define DP_MAX_STRING_SIZE	4096	/* PATH_MAX, incl. NUL */
#define DP_MAX_PROBE_EVENT_SIZE	3072	/* fixed part of all args */
#define DP_FETCH_INSN_MAX	16
#define DP_MAX_MAXACTIVE	4096
#define DP_MAX_STACK_NUM	2048	/* THREAD_SIZE / sizeof(long) */
#define DP_MAX_ARG_NUM		2048
#define DP_MAX_LINE_LEN		4094	/* WRITE_BUFSIZE - 2 */
#define DP_TASK_COMM_LEN	16

/*
 * Grammar family of a definition, decided by its place as the kernel's
 * dynamic_events does: PATH:OFFSET is a uprobe, anything else a kprobe
 * (a symbol, MOD:SYM or an address in the traced process).
 */
enum dp_probe_kind {
	DP_KIND_KPROBE,
	DP_KIND_UPROBE,
	DP_KIND_TRACEPOINT,	/* t: an application tracepoint (dprobe's
				 * tracepoint.h), as the kernel's tprobes */
	DP_KIND_SYNTH,		/* s: a synthetic event: fields, no probe
				 * (lang/synth.h) */
	DP_KIND_EPROBE,		/* e: an event probe: a new event made from
				 * the fields of another event's records,
				 * as the kernel's eprobes; no place */
};

/* Fetch-argument types (probe_fetch_types in trace_probe.c). */
enum dp_type_kind {
	DP_T_U,		/* u8..u64, unsigned decimal */
	DP_T_S,		/* s8..s64, signed decimal */
	DP_T_X,		/* x8..x64, 0x-hex */
	DP_T_CHAR,	/* 'c' */
	DP_T_STRING,
	DP_T_USTRING,
	DP_T_SYMBOL,	/* kprobe places only: sym+0xoff/0xsize */
	DP_T_SYMSTR,	/* kprobe places only: the same, as a string */
	DP_T_BITFIELD,	/* b<W>@<O>/<C> */
};

struct dp_type {
	enum dp_type_kind kind;
	uint8_t size;		/* bytes per element in the fixed part */
	uint8_t bf_width;	/* bitfield: W */
	uint8_t bf_offset;	/* bitfield: O */
	/* an application tracepoint's pid (tracepoint.h's tp_pid()): an
	 * s32 the `format` file calls pid_t, as the kernel's sched
	 * events do; written "pid_t" in t: lines only */
	bool pid_t_name;
	uint16_t count;		/* array elements; 0 for a scalar */
};

static inline bool dp_type_is_string(const struct dp_type *t)
{
	return t->kind == DP_T_STRING || t->kind == DP_T_USTRING ||
	       t->kind == DP_T_SYMSTR;
}

/* Total bytes the argument occupies in the fixed part of a record. */
static inline unsigned dp_type_fixed_size(const struct dp_type *t)
{
	return t->size * (t->count ? t->count : 1);
}

/* Fetch instructions, modelled on the kernel's struct fetch_insn. */
enum dp_fetch_op {
	DP_FOP_NOP,
	/* stage 1: where the value comes from */
	DP_FOP_REG,		/* param = register index (dp_reg) */
	DP_FOP_STACK,		/* param = N: word at sp + N*8 */
	DP_FOP_STACKP,		/* sp */
	DP_FOP_RETVAL,		/* ax at a return */
	DP_FOP_IMM,		/* imm */
	DP_FOP_COMM,		/* task comm */
	DP_FOP_DATA,		/* immediate string (data) */
	DP_FOP_FOFFS,		/* file-offset address: foffs_base + imm */
	DP_FOP_ARG,		/* param = N-1: $argN at function entry */
	DP_FOP_ENTRY_ARG,	/* param = N-1: entry value of $argN at return */
	DP_FOP_SYMBOL,		/* @SYM placeholder: data = "SYM[+-offs]"; the
				 * resolver stores its address in the next IMM */
	DP_FOP_FIELD,		/* e: $FIELD of the attached event's record:
				 * offset = its offset, basesize = its size,
				 * lshift = signed, param = enum dp_tfield_kind
				 * (the kernel's FETCH_OP_TP_ARG) */
	/* stage 2: dereferences */
	DP_FOP_DEREF,		/* val = *(unsigned long *)(val + offset) */
	DP_FOP_UDEREF,		/* the same, user-space access requested */
	/* stage 3: store */
	DP_FOP_ST_RAW,		/* store val (size bytes) */
	DP_FOP_ST_MEM,		/* read size bytes at val + offset */
	DP_FOP_ST_UMEM,
	DP_FOP_ST_STRING,	/* read a string at val + offset */
	DP_FOP_ST_USTRING,
	DP_FOP_ST_SYMSTR,	/* symbolize val into a string */
	/* stage 4: modify */
	DP_FOP_MOD_BF,		/* basesize, lshift, rshift */
	/* stage 5: loop */
	DP_FOP_LP_ARRAY,	/* param = count */
	DP_FOP_END,
};

struct dp_fetch_insn {
	uint8_t op;
	uint8_t size;		/* store size */
	uint8_t basesize, lshift, rshift;	/* bitfield */
	int param;
	int64_t offset;		/* deref / store offset */
	uint64_t imm;
	const char *data;	/* DATA: owned by the argument */
};

struct dp_arg {
	char name[DP_MAX_ARG_NAME_LEN + 1];
	char *body;		/* EXPR[:TYPE] as written, shown in listings */
	/* a definition by name (sym/debugdef.h): the text written, which
	 * the kernel lists for its BTF arguments (NULL: body) */
	char *shown;
	char *data;		/* immediate string for DP_FOP_DATA */
	struct dp_type type;
	unsigned offset;	/* after the probe header (16 or 24 bytes) */
	unsigned n_insn;
	struct dp_fetch_insn insn[DP_FETCH_INSN_MAX];
};

/* Where a probe goes. */
struct dp_place {
	/* uprobe: PATH:OFFSET[(REF)] */
	char *path;
	uint64_t dev, ino;	/* identity of PATH, as the kernel's inode */
	uint64_t offset;	/* file offset (uprobe) or symbol offset */
	uint64_t ref_ctr;	/* 0: none */
	/* kprobe: [MOD:]SYM[+offs] | MEMADDR; tracepoint: [GROUP:]NAME,
	 * GROUP in module (NULL: any group), NAME in symbol */
	char *module;		/* NULL: the main executable */
	char *symbol;		/* as written, without MOD: and +offs */
	uint64_t addr;		/* MEMADDR form (symbol == NULL) */
};

struct dp_probe_def {
	enum dp_probe_kind kind;
	bool is_return;
	/* an f: line: a kprobe on a function's entry or return, as the
	 * kernel's fprobe events (listed as f:, in dynamic_events only) */
	bool fprobe;
	int maxactive;		/* r<N>: 0 = default */
	char group[DP_MAX_EVENT_NAME_LEN];
	char event[DP_MAX_EVENT_NAME_LEN];
	struct dp_place place;
	unsigned nargs;
	struct dp_arg *args;
	unsigned args_size;	/* fixed bytes of all arguments */
	/* e: the attached event is place.module/place.symbol (SYSTEM and
	 * EVENT); "if FILTER" on its fields, as written (NULL: none) */
	char *filter;
};

/*
 * A field of the event an e: line attaches to, as the kernel's
 * get_event_field() reads it: a number, or a string held in the record
 * (__data_loc, __rel_loc, char[N]) or pointed to by it (char *).
 */
enum dp_tfield_kind {
	DP_TF_NUM,
	DP_TF_DYN_STR,		/* __data_loc char[] */
	DP_TF_REL_STR,		/* __rel_loc char[] */
	DP_TF_STATIC_STR,	/* char[N] */
	DP_TF_PTR_STR,		/* char *: the pointer is the value */
};

struct dp_tfield {
	unsigned offset, size;
	bool is_signed;
	enum dp_tfield_kind kind;
};

/* What an e: line needs to know of the events it may attach to. */
struct dp_attach_lookup {
	bool (*event)(void *priv, const char *group, const char *name);
	/* 0 and *@out filled if GROUP/NAME has the field @field */
	int (*field)(void *priv, const char *group, const char *name,
		     const char *field, struct dp_tfield *out);
	void *priv;
};

/*
 * Parse "e[:[GRP/]EVENT] SYSTEM.EVENT [FETCHARGS] [if FILTER]" (or
 * SYSTEM/EVENT) as the kernel's __trace_eprobe_create() does, fields
 * looked up through @lk.  Returns as dp_parse_probe().
 */
int dp_parse_eprobe(const char *line, struct dp_probe_def *def,
		    struct dp_error *err, const struct dp_attach_lookup *lk);

/*
 * Parse one definition line (no '\n'; comments already stripped or not: a
 * '#' cuts the line as the kernel's write path does).  On success returns 0
 * and fills @def; on failure returns -errno with @err describing it, and
 * @def is left empty.  A line with no tokens gives -ENODATA (a no-op).
 */
int dp_parse_probe(const char *line, struct dp_probe_def *def,
		   struct dp_error *err);

/*
 * dp_parse_probe() with options.  DP_PARSE_KERNEL_PLACES refuses what
 * neither kernel parser takes (PATH:SYM, a symbol place in a file), as
 * uprobe_events does: for checks without ELF resolution.
 */
#define DP_PARSE_KERNEL_PLACES	0x1
int dp_parse_probe_flags(const char *line, struct dp_probe_def *def,
			 struct dp_error *err, unsigned flags);
void dp_probe_def_free(struct dp_probe_def *def);

/*
 * Parse "-:[GRP/]EVENT [LOCATION [NAME=BODY ...]]".  Fills the match
 * criteria; returns 0, or -EINVAL for a malformed delete.
 */
struct dp_delete_cmd {
	bool any_group;				/* no "GRP/" given */
	char group[DP_MAX_EVENT_NAME_LEN];
	char event[DP_MAX_EVENT_NAME_LEN];	/* "" = every event of group */
	int nmatch;				/* extra tokens */
	char **match;
	char **argv_;				/* owner of match */
};
int dp_parse_delete(const char *line, struct dp_delete_cmd *cmd,
		    struct dp_error *err);
void dp_delete_cmd_free(struct dp_delete_cmd *cmd);

/* True for a line whose first byte is '-' (a delete, as the kernel decides). */
bool dp_line_is_delete(const char *line);

/*
 * Canonical line, as the kernel lists the probe in uprobe_events (uprobe
 * places) or kprobe_events (symbol places), without the trailing newline.
 * Returns a malloc'd string.
 */
char *dp_probe_canonical(const struct dp_probe_def *def);
/* The same, each argument as it was written where that differs from
 * what is fetched (arguments by name): the kernel's listing. */
char *dp_probe_listing(const struct dp_probe_def *def);
/* The place part alone ("PATH:0x%016lx(0x%lx)" / "SYM+N" / "0x%016lx"). */
char *dp_place_canonical(const struct dp_probe_def *def);

/* Type names as written ("u8", "x64", "string", "b4@4/16", "u8[4]") */
void dp_type_name(const struct dp_type *t, char *buf, size_t len);
/* Type as in a format file ("u8", "u64", "__data_loc char[]", ...). */
void dp_type_format_name(const struct dp_type *t, char *buf, size_t len);
bool dp_type_is_signed(const struct dp_type *t);
/* printf spec for print fmt ("%u", "0x%Lx", "\\\"%s\\\"", "'%c'"...). */
const char *dp_type_print_fmt(const struct dp_type *t);

#endif
