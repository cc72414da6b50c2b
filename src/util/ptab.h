/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A table of pointers found by a 64-bit hash: open addressing, linear
 * probing, insert-only (a table that would lose entries is thrown away
 * and built again by its owner).  Several entries may share a hash, and
 * the caller compares what they point to.  Lookups and inserts cost O(1)
 * on average, which is what registering thousands of probes needs where
 * a list walk made it quadratic.
 *
 * Header-only and calling only calloc/free: the agent (libdprobe.so)
 * uses it too, never on its hit path.
 */
#ifndef DPROBE_UTIL_PTAB_H
#define DPROBE_UTIL_PTAB_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

struct dp_ptab {
	uint64_t *hash;
	void **val;		/* NULL: an empty slot */
	size_t cap;		/* a power of two, or 0 */
	size_t n;
};

#define DP_PTAB_START ((size_t)-1)

static inline uint64_t dp_hash_u64(uint64_t x)
{
	/* the finaliser of SplitMix64: every input bit reaches every output bit */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* FNV-1a over a string, from @seed (0 for a first string) */
static inline uint64_t dp_hash_str(const char *s, uint64_t seed)
{
	uint64_t h = seed ^ 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return dp_hash_u64(h);
}

static inline void dp_ptab_free(struct dp_ptab *t)
{
	free(t->hash);
	free(t->val);
	t->hash = NULL;
	t->val = NULL;
	t->cap = t->n = 0;
}

static inline void dp_ptab_put(struct dp_ptab *t, uint64_t h, void *v)
{
	size_t i = (size_t)h & (t->cap - 1);

	while (t->val[i])
		i = (i + 1) & (t->cap - 1);
	t->hash[i] = h;
	t->val[i] = v;
	t->n++;
}

/* Keeps the load under a half; 0 or -1 (out of memory: @t unchanged). */
static inline int dp_ptab_grow(struct dp_ptab *t)
{
	struct dp_ptab bigger = { 0 };

	if (2 * (t->n + 1) <= t->cap)
		return 0;
	bigger.cap = t->cap ? 2 * t->cap : 16;
	bigger.hash = calloc(bigger.cap, sizeof(*bigger.hash));
	bigger.val = calloc(bigger.cap, sizeof(*bigger.val));
	if (!bigger.hash || !bigger.val) {
		dp_ptab_free(&bigger);
		return -1;
	}
	for (size_t i = 0; i < t->cap; i++)
		if (t->val[i])
			dp_ptab_put(&bigger, t->hash[i], t->val[i]);
	dp_ptab_free(t);
	*t = bigger;
	return 0;
}

/* Add @v (not NULL) under @h; 0 or -1 (out of memory). */
static inline int dp_ptab_add(struct dp_ptab *t, uint64_t h, void *v)
{
	if (dp_ptab_grow(t))
		return -1;
	dp_ptab_put(t, h, v);
	return 0;
}

/*
 * The next entry under @h: *@pos starts at DP_PTAB_START and is moved on;
 * returns where the entry's pointer is kept (the caller may replace it
 * with another non-NULL one), or NULL after the last.
 */
static inline void **dp_ptab_next(const struct dp_ptab *t, uint64_t h,
				  size_t *pos)
{
	size_t i;

	if (!t->cap)
		return NULL;
	i = *pos == DP_PTAB_START ? (size_t)h & (t->cap - 1) :
		(*pos + 1) & (t->cap - 1);
	for (; t->val[i]; i = (i + 1) & (t->cap - 1)) {
		if (t->hash[i] == h) {
			*pos = i;
			return &t->val[i];
		}
	}
	return NULL;
}

#endif
