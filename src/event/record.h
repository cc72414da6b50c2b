/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An event record as its readers see it: the fields an event's record is
 * made of, where each one's values lie, the checks a record must pass
 * before any field is read (not shorter than its fixed part, every
 * __data_loc inside it), and the strings its __data_loc words point at.
 * The bytes themselves are laid out as lang/layout.h says; filters,
 * renderers and engines read them through this header only.
 */
#ifndef DPROBE_EVENT_RECORD_H
#define DPROBE_EVENT_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lang/lang.h"
#include "lang/layout.h"

/* How a field's bytes are interpreted (by filters and renderers). */
enum dp_field_class {
	DP_FC_NUM,		/* integer of size 1/2/4/8 */
	DP_FC_ARRAY,		/* count elements of elem_size */
	DP_FC_STRING,		/* __data_loc char[] */
	DP_FC_STRING_ARRAY,	/* count __data_loc words */
	DP_FC_STACK,		/* __data_loc unsigned long[]: a synthetic
				 * event's stack, its frame count first */
};

struct dp_field {
	const char *name;
	const char *type;	/* format-file type, e.g. "u32", "unsigned long" */
	enum dp_field_class fclass;
	unsigned offset;
	unsigned size;		/* bytes in the fixed part */
	unsigned elem_size;
	unsigned count;		/* array elements, 0 for a scalar */
	bool is_signed;
	const struct dp_type *ptype;	/* probe-arg type; NULL for header fields */
};

/* The four common fields, then the probe header, then the arguments. */
#define DP_NR_COMMON_FIELDS 4
extern const struct dp_field dp_common_fields[DP_NR_COMMON_FIELDS];

/* Metadata a renderer or filter needs besides the record bytes. */
struct dp_rec_meta {
	uint64_t ts_ns;		/* CLOCK_MONOTONIC nanoseconds */
	int cpu;
	int pid;		/* thread id */
	int tgid;
	const char *comm;	/* NULL: unknown ("<...>") */
	/* the process whose memory the record's addresses are in, as the
	 * engine knows it, never as the record says (a traced program can
	 * write its rings): what an event probe reads; 0: nothing */
	int mm_pid;
	/*
	 * The user stack at the hit, for an event that captures it
	 * (dp_event.stack; NULL otherwise): @nstack return addresses,
	 * innermost first, at most DP_STACK_MAX.  stack[0] is where the
	 * probe hit (a return probe: the probed function, then the
	 * address it returned to); the rest come from the frame-pointer
	 * chain, so a program built without frame pointers gives a short
	 * or wrong one, or with dp_event.stack_dwarf from the CFI over a
	 * copy of the stack (sym/unwind.h).  The frames are the traced process's own
	 * addresses (meta->mm_pid), to symbolize with the same
	 * dp_symbolizer as the record.  Only valid during the call that
	 * hands them on: a consumer that keeps them (a hist key) copies.
	 */
	const uint64_t *stack;
	unsigned nstack;
	/* an event with dp_event.stack_max: each frame's depth, bytes from
	 * the top of the thread's stack to the frame's lowest byte (for
	 * stack[0], the stack pointer at the hit); 0 where not known */
	const uint64_t *stack_depth;
};

/* The deepest user stack an engine records (the first frame included). */
#define DP_STACK_MAX 32

/*
 * The last entry of a user stack whose walk stopped at a bad frame (a
 * frame pointer where a frame was expected that is misaligned, below the
 * stack pointer or the frame before, out of the stack, unreadable, or a
 * frame with return address 0; a DWARF unwinding that failed before the
 * outermost frame), as opposed to one that reached the chain's end or
 * DP_STACK_MAX.  Not a canonical x86-64 address: no code is there, in
 * the process or the kernel.  The agent writes it, dprobe reads it
 * (renderers print DP_STACK_BAD_FRAME_NAME for it).
 */
#define DP_STACK_BAD_FRAME	0xbadfbadfbadfbadfull
#define DP_STACK_BAD_FRAME_NAME	"[bad frame]"

/* Where one field's values lie: @n elements of @esz bytes from @off. */
struct dp_rec_geom {
	unsigned off;
	unsigned n;		/* 1 for a scalar */
	unsigned esz;
	bool array;		/* printed as {..} / [..] */
	bool string;		/* elements are __data_loc words */
};

/* Geometry of an argument field; -1 if the description is unusable. */
int dp_rec_geom(const struct dp_field *f, struct dp_rec_geom *g);

struct dp_event;

/* Bytes of @ev's record before its first argument. */
unsigned dp_rec_head_size(const struct dp_event *ev);

/*
 * 0 if @rec holds at least @ev's fixed part and every field of @ev and
 * every non-empty __data_loc lies inside its @len bytes, else -1.  A
 * record that passed can be read without further bounds checks.
 */
int dp_rec_check(const struct dp_event *ev, const void *rec, size_t len);

/*
 * For a caller that checks many records of one event: 0 and in *@min
 * the least length dp_rec_check() passes, when that length is all it
 * looks at (no string field, every field's geometry usable); else -1
 * (dp_rec_check() for each record then).
 */
int dp_rec_check_min(const struct dp_event *ev, size_t *min);

/*
 * The string the __data_loc word at @slot refers to, cut at its first
 * NUL (what the kernel's "%s" prints).  False for a fault (length 0).
 * Only valid on a record that passed dp_rec_check().  Inline: renderers
 * call it for every string they print.
 */
static inline bool dp_rec_str(const uint8_t *rec, const uint8_t *slot,
			      const char **s, size_t *n)
{
	uint32_t loc = (uint32_t)dp_rec_load(slot, 4);
	size_t slen = dp_data_loc_len(loc);
	const char *p = (const char *)rec + dp_data_loc_off(loc);
	const char *nul;

	if (!slen)
		return false;
	nul = memchr(p, '\0', slen);
	*s = p;
	*n = nul ? (size_t)(nul - p) : slen;
	return true;
}

/* True if the __data_loc word at @slot records a fault (length 0). */
static inline bool dp_rec_str_faulted(const uint8_t *slot)
{
	return !dp_data_loc_len((uint32_t)dp_rec_load(slot, 4));
}

/* The address of element @i of a field whose geometry is @g. */
static inline const uint8_t *dp_rec_elem(const uint8_t *rec,
					 const struct dp_rec_geom *g,
					 unsigned i)
{
	return rec + g->off + (size_t)i * g->esz;
}

#endif
