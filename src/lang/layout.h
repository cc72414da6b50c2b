/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The byte layout of an event record, as the fetch program writes it and
 * the kernel's probe events lay theirs out (64-bit, host-endian, packed):
 *
 *   0   common header (struct dp_trace_entry): type (event id), flags,
 *       preempt_count, pid
 *   8   probe header: __probe_ip (entry), or __probe_func then
 *       __probe_ret_ip (return); a tracepoint has none
 *   ..  the arguments' fixed-size fields, packed in order
 *   ..  dynamic data: the strings the __data_loc words point at
 *
 * A __data_loc word is (length << 16) | offset from the record start; the
 * length counts the NUL, and length 0 is a fault.
 *
 * Lang-level: what records mean (fields, filters, rendering) is in
 * src/event/record.h, which builds on this.
 */
#ifndef DPROBE_LANG_LAYOUT_H
#define DPROBE_LANG_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "lang/lang.h"

/* Common header of every record: the kernel's struct trace_entry. */
struct dp_trace_entry {
	uint16_t type;		/* event id */
	uint8_t flags;
	uint8_t preempt_count;
	int32_t pid;
};

#define DP_REC_TYPE_OFF		0	/* common_type (u16) */
#define DP_REC_PID_OFF		4	/* common_pid (s32) */
#define DP_REC_IP_OFF		8	/* entry: __probe_ip */
#define DP_REC_FUNC_OFF		8	/* return: __probe_func */
#define DP_REC_RET_IP_OFF	16	/* return: __probe_ret_ip */

#define DP_TP_HEAD_SIZE		8	/* common only: a tracepoint's or an
				 * event probe's record */
#define DP_ENTRY_HEAD_SIZE	16	/* common + __probe_ip */
#define DP_RET_HEAD_SIZE	24	/* common + __probe_func + __probe_ret_ip */

/* Bytes before the first argument of a record of this kind of probe. */
static inline unsigned dp_layout_head_size(enum dp_probe_kind kind,
					   bool is_return)
{
	if (kind == DP_KIND_TRACEPOINT || kind == DP_KIND_EPROBE)
		return DP_TP_HEAD_SIZE;
	return is_return ? DP_RET_HEAD_SIZE : DP_ENTRY_HEAD_SIZE;
}

/* A __data_loc word: (len << 16) | offset from the record start. */
static inline uint32_t dp_data_loc(unsigned len, unsigned off)
{
	return (uint32_t)len << 16 | (off & 0xffff);
}

static inline unsigned dp_data_loc_len(uint32_t v)
{
	return v >> 16;
}

static inline unsigned dp_data_loc_off(uint32_t v)
{
	return v & 0xffff;
}

/*
 * Loads and stores of 1, 2, 4 or 8 bytes: fields are packed without
 * alignment, so by memcpy.  For readers; the fetch program itself, which
 * also runs inside traced programs, copies its bytes by hand.
 */
static inline uint64_t dp_rec_load(const uint8_t *p, unsigned size)
{
	uint8_t v8;
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;

	switch (size) {
	case 1:
		memcpy(&v8, p, 1);
		return v8;
	case 2:
		memcpy(&v16, p, 2);
		return v16;
	case 4:
		memcpy(&v32, p, 4);
		return v32;
	default:
		memcpy(&v64, p, 8);
		return v64;
	}
}

static inline int64_t dp_rec_sload(const uint8_t *p, unsigned size)
{
	uint64_t v = dp_rec_load(p, size);
	unsigned shift = 64 - 8 * size;

	/* Sign-extend through the top bit of the stored width. */
	return (int64_t)(v << shift) >> shift;
}

/* The low @size bytes of @v at @p (little-endian, as x86-64 stores). */
static inline void dp_rec_put(uint8_t *p, uint64_t v, unsigned size)
{
	memcpy(p, &v, size);
}

#endif
