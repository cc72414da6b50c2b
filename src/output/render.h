/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Private to src/output/: what the ftrace and JSON renderers share.  A
 * record is validated once (dp_out_check) before anything is written, so
 * the printers below can read fields without re-checking bounds and a
 * malformed record never leaves half a line in the output.
 */
#ifndef DPROBE_OUTPUT_RENDER_H
#define DPROBE_OUTPUT_RENDER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "output/output.h"

/* Offsets of the probe header words (their `format` file, 64-bit). */
#define DP_OUT_IP_OFF		8	/* entry: __probe_ip */
#define DP_OUT_FUNC_OFF		8	/* return: __probe_func */
#define DP_OUT_RET_IP_OFF	16	/* return: __probe_ret_ip */

/* Where one argument lives: @n elements of @esz bytes from @off. */
struct dp_out_geom {
	unsigned off;
	unsigned n;		/* 1 for a scalar */
	unsigned esz;
	bool array;		/* printed as {..} / [..] */
	bool string;		/* elements are __data_loc words */
};

/* Layout of an argument field; -1 if the description is unusable. */
int dp_out_geom(const struct dp_field *f, struct dp_out_geom *g);

/*
 * 0 if every field of @ev and every non-empty __data_loc lies inside the
 * @len bytes of @rec, else -1.
 */
int dp_out_check(const struct dp_event *ev, const void *rec, size_t len);

/*
 * The string a __data_loc word at @slot refers to, cut at its first NUL
 * (what the kernel's "%s" prints).  False for a fault (length 0).  Only
 * valid on a record that passed dp_out_check().
 */
bool dp_out_str(const uint8_t *rec, const uint8_t *slot, const char **s,
		size_t *n);

/* Symbolize @addr through @opts; false if there is no symbol for it. */
bool dp_out_lookup(const struct dp_trace_opts *opts, uint64_t addr,
		   const char **name, uint64_t *off, uint64_t *size);

/* Records are host-endian and packed without alignment: load by memcpy. */
static inline uint64_t dp_out_load(const uint8_t *p, unsigned size)
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

static inline int64_t dp_out_sload(const uint8_t *p, unsigned size)
{
	uint64_t v = dp_out_load(p, size);
	unsigned shift = 64 - 8 * size;

	/* Sign-extend through the top bit of the stored width. */
	return (int64_t)(v << shift) >> shift;
}

/*
 * Number printers: the reader prints millions of values, so skip printf's
 * format parsing for the common cases.  Callers hold the FILE lock.
 */
static inline void dp_out_udec(FILE *out, uint64_t v)
{
	char buf[20];
	char *q = buf + sizeof(buf);

	do {
		*--q = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	fwrite_unlocked(q, 1, buf + sizeof(buf) - q, out);
}

static inline void dp_out_sdec(FILE *out, int64_t v)
{
	if (v < 0) {
		fputc_unlocked('-', out);
		/* negate in unsigned space: INT64_MIN has no positive twin */
		dp_out_udec(out, -(uint64_t)v);
		return;
	}
	dp_out_udec(out, (uint64_t)v);
}

/* "0x" + lowercase hex, no padding: the kernel's "0x%Lx". */
static inline void dp_out_hex(FILE *out, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	char buf[18];
	char *q = buf + sizeof(buf);

	do {
		*--q = digits[v & 0xf];
		v >>= 4;
	} while (v);
	*--q = 'x';
	*--q = '0';
	fwrite_unlocked(q, 1, buf + sizeof(buf) - q, out);
}

#endif
