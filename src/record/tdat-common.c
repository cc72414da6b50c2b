// SPDX-License-Identifier: GPL-2.0
/* The page description both ends of a trace.dat share, and a pair set. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "record/tdat-common.h"
#include "record/tracedat.h"

/* What a 64-bit kernel's events/header_page and events/header_event
 * read (ring_buffer.c's ring_buffer_print_page_header() and
 * _entry_header() on x86-64; the data's size is the sub-buffer's, less
 * its header): trace-cmd takes the page's and the event header's layout
 * from them rather than assuming it, and a dprobe mount serves them. */
const char dp_tdat_header_page_fmt[] =
	"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield: char data;\toffset:16;\tsize:%u;\tsigned:1;\n";

const char *dp_tdat_header_page(void)
{
	static char text[256];

	if (!text[0])
		snprintf(text, sizeof(text), dp_tdat_header_page_fmt,
			 DP_TDAT_PAGE_DATA);
	return text;
}

const char dp_tdat_header_event[] =
	"# compressed entry header\n"
	"\ttype_len    :    5 bits\n"
	"\ttime_delta  :   27 bits\n"
	"\tarray       :   32 bits\n"
	"\n"
	"\tpadding     : type == 29\n"
	"\ttime_extend : type == 30\n"
	"\ttime_stamp : type == 31\n"
	"\tdata max type_len  == 28\n";

#define FREE_B	(~0ull)

static size_t slot_of(uint64_t a, uint64_t b, size_t cap)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull) *
		     0xbf58476d1ce4e5b9ull;

	return (size_t)(h ^ h >> 31) & (cap - 1);
}

static bool insert(uint64_t *v, size_t cap, uint64_t a, uint64_t b)
{
	size_t i = slot_of(a, b, cap);

	while (v[2 * i + 1] != FREE_B) {
		if (v[2 * i] == a && v[2 * i + 1] == b)
			return false;
		i = (i + 1) & (cap - 1);
	}
	v[2 * i] = a;
	v[2 * i + 1] = b;
	return true;
}

static int grow(struct dp_pairset *s)
{
	size_t cap = s->cap ? s->cap * 2 : 64;
	uint64_t *v = malloc(cap * 2 * sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < cap; i++)
		v[2 * i + 1] = FREE_B;
	for (size_t i = 0; i < s->cap; i++)
		if (s->v[2 * i + 1] != FREE_B)
			insert(v, cap, s->v[2 * i], s->v[2 * i + 1]);
	free(s->v);
	s->v = v;
	s->cap = cap;
	return 0;
}

bool dp_pairset_add(struct dp_pairset *s, uint64_t a, uint64_t b, bool *oom)
{
	/* b == ~0 marks a free slot: such a pair is stored as another one,
	 * which can only make a seen-set think, once in 2^64, that a pair
	 * was seen (what its users can afford) */
	if (b == FREE_B) {
		a = ~a;
		b = 0x5a5a5a5a5a5a5a5aull;
	}
	if ((s->n + 1) * 4 > s->cap * 3 && grow(s)) {
		if (oom)
			*oom = true;
		return false;
	}
	if (!insert(s->v, s->cap, a, b))
		return false;
	s->n++;
	return true;
}

void dp_pairset_free(struct dp_pairset *s)
{
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}
