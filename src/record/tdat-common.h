/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the trace.dat writer and reader share: the ring buffer's encoding
 * of a page (the kernel's header_page and header_event describe it), the
 * text of dprobe's option, and a set of number pairs both use to
 * remember what they have seen.
 */
#ifndef DPROBE_RECORD_TDAT_COMMON_H
#define DPROBE_RECORD_TDAT_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A page: u64 timestamp, u64 commit (bytes of data, and the flags
 * below), then the data.  Each record is a 32-bit word, type_len in its
 * low 5 bits and the time since the record before in the other 27, then
 * its data: type_len words of it (1..28), or for type_len 0 a word
 * holding the data's bytes + 4, then the data. */
#define DP_RB_TYPE_PADDING	29
#define DP_RB_TYPE_TIME_EXTEND	30
#define DP_RB_TYPE_TIME_STAMP	31
#define DP_RB_MAX_SMALL		(28 * 4)
#define DP_RB_DELTA_BITS	27
/* commit's flags: events were lost before this page; their count is the
 * u64 right after the data */
#define DP_RB_MISSED_EVENTS	(1ull << 31)
#define DP_RB_MISSED_STORED	(1ull << 30)
#define DP_RB_COMMIT_MASK	((1ull << 30) - 1)

/* events/header_page for dprobe's 4 KiB pages (tracedat.h has the rest). */
const char *dp_tdat_header_page(void);

/* The first line of dprobe's option: "dprobe-recording VERSION". */
#define DP_TDAT_MAGIC_WORD	"dprobe-recording"

/* Little-endian words of a file's bytes, at any alignment. */
static inline uint32_t tdat_get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static inline uint64_t tdat_get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* A set of (a, b) pairs, open addressing. */
struct dp_pairset {
	uint64_t *v;		/* 2 words a slot; a slot with b == ~0 is free */
	size_t n, cap;
};

/* True if (@a, @b) was not there and is now; false if it was, or on
 * ENOMEM (@oom set then). */
bool dp_pairset_add(struct dp_pairset *s, uint64_t a, uint64_t b, bool *oom);
void dp_pairset_free(struct dp_pairset *s);

#endif
