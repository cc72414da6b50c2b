// SPDX-License-Identifier: GPL-2.0
/*
 * The flame graph's tree: folded stacks merged frame by frame from the
 * outermost ("all", the root, holds every sample), each frame counting
 * the samples of the stacks that pass through it.  The lines come from
 * files anyone may write (and their names from traced programs), so
 * every length, depth and count is checked, and a stack that cannot be
 * added leaves the tree as it was.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "output/flamegraph.h"

/* Past this the script's numbers (doubles) would round the counts. */
#define MAX_TOTAL	(1ull << 53)

struct dp_flame *dp_flame_new(void)
{
	struct dp_flame *f = calloc(1, sizeof(*f));

	if (f && !(f->root.name = strdup("all"))) {
		free(f);
		return NULL;
	}
	return f;
}

static void node_free(struct dp_flame_node *n)
{
	for (size_t i = 0; i < n->nkids; i++)
		node_free(&n->kids[i]);
	free(n->kids);
	free(n->slots);
	free(n->name);
}

void dp_flame_free(struct dp_flame *f)
{
	if (!f)
		return;
	node_free(&f->root);
	free(f);
}

uint64_t dp_flame_total(const struct dp_flame *f)
{
	return f->root.count;
}

void dp_flame_reindex(struct dp_flame_node *n)
{
	free(n->slots);
	n->slots = NULL;
	n->nslots = 0;
}

/* Up to this many callees a frame is searched without an index. */
#define INDEX_FROM	8

static bool named(const struct dp_flame_node *k, const char *name,
		  size_t len)
{
	return !strncmp(k->name, name, len) && !k->name[len];
}

/* FNV-1a of the @len bytes at @name. */
static size_t name_hash(const char *name, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 0x100000001b3ull;
	return (size_t)h;
}

/* The slot of @n's index that holds the callee named @name, or the
 * empty one where it would go. */
static size_t *slot_of(struct dp_flame_node *n, const char *name, size_t len)
{
	size_t mask = n->nslots - 1, i = name_hash(name, len) & mask;

	while (n->slots[i] && !named(&n->kids[n->slots[i] - 1], name, len))
		i = (i + 1) & mask;
	return &n->slots[i];
}

/* Index @n's callees in a table at most a quarter full with one more;
 * -ENOMEM leaves the old index (or none) as it was. */
static int index_kids(struct dp_flame_node *n)
{
	size_t want = 16, *old = n->slots;

	while (want < 4 * (n->nkids + 1))
		want *= 2;
	n->slots = calloc(want, sizeof(*n->slots));
	if (!n->slots) {
		n->slots = old;
		return -ENOMEM;
	}
	n->nslots = want;
	for (size_t i = 0; i < n->nkids; i++)
		*slot_of(n, n->kids[i].name, strlen(n->kids[i].name)) = i + 1;
	free(old);
	return 0;
}

/* @n's callee named by the @len bytes at @name, or NULL: from the index,
 * or from the last (sorted input adds to the one added last). */
static struct dp_flame_node *find_kid(struct dp_flame_node *n,
				      const char *name, size_t len)
{
	if (n->nslots) {
		size_t s = *slot_of(n, name, len);

		return s ? &n->kids[s - 1] : NULL;
	}
	for (size_t i = n->nkids; i-- > 0;)
		if (named(&n->kids[i], name, len))
			return &n->kids[i];
	return NULL;
}

/*
 * @n's callee named by the @len bytes at @name, made (with no samples
 * yet) if it has none.  NULL if out of memory.
 */
static struct dp_flame_node *kid(struct dp_flame_node *n, const char *name,
				 size_t len)
{
	struct dp_flame_node *k = find_kid(n, name, len);

	if (k)
		return k;
	if (n->nkids == n->cap) {
		size_t cap = n->cap ? 2 * n->cap : 4;

		k = realloc(n->kids, cap * sizeof(*k));
		if (!k)
			return NULL;
		n->kids = k;
		n->cap = cap;
	}
	/* the index, grown before the callee is added: a failure there
	 * adds nothing */
	if (n->nkids >= INDEX_FROM && 4 * (n->nkids + 1) > n->nslots &&
	    index_kids(n))
		return NULL;
	k = &n->kids[n->nkids];
	*k = (struct dp_flame_node){ .name = strndup(name, len) };
	if (!k->name)
		return NULL;
	if (n->nslots)
		*slot_of(n, name, len) = n->nkids + 1;
	n->nkids++;
	return k;
}

static unsigned frames_of(const char *stack, size_t len)
{
	unsigned n = 1;

	for (size_t i = 0; i < len; i++)
		n += stack[i] == ';';
	return n;
}

/* Walk (making what is missing) the frames of @stack; when @count is
 * non-zero, add it to each.  0 or -ENOMEM. */
static int walk(struct dp_flame *f, const char *stack, size_t len,
		uint64_t count)
{
	struct dp_flame_node *n = &f->root;
	size_t pos = 0;

	n->count += count;
	while (pos <= len) {
		const char *sc = memchr(stack + pos, ';', len - pos);
		size_t flen = sc ? (size_t)(sc - stack) - pos : len - pos;

		n = kid(n, stack + pos, flen);
		if (!n)
			return -ENOMEM;
		n->count += count;
		pos += flen + 1;
	}
	return 0;
}

int dp_flame_add(struct dp_flame *f, const char *stack, size_t len,
		 uint64_t count)
{
	unsigned depth;

	if (!len || memchr(stack, '\0', len))
		return -EINVAL;
	depth = frames_of(stack, len);
	if (depth > DP_FLAME_MAX_DEPTH)
		return -E2BIG;
	if (count > MAX_TOTAL - f->root.count)
		return -EOVERFLOW;
	if (!count)
		return 0;
	/* the frames first, then the counts: a failure changes nothing
	 * that is drawn (frames without samples are not) */
	if (walk(f, stack, len, 0))
		return -ENOMEM;
	walk(f, stack, len, count);
	if (depth > f->depth)
		f->depth = depth;
	return 0;
}

static bool blank(int c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

int dp_flame_add_line(struct dp_flame *f, const char *line)
{
	size_t end = strlen(line), sp, i;
	uint64_t count = 0;

	while (end && blank(line[end - 1]))
		end--;
	if (!end)
		return 1;
	for (sp = end; sp && line[sp - 1] >= '0' && line[sp - 1] <= '9'; sp--)
		;
	if (sp == end || !sp || (line[sp - 1] != ' ' && line[sp - 1] != '\t'))
		return -EINVAL;
	for (i = sp; i < end; i++) {
		unsigned d = (unsigned)(line[i] - '0');

		if (count > (MAX_TOTAL - d) / 10)
			return -EOVERFLOW;
		count = count * 10 + d;
	}
	for (sp--; sp && blank(line[sp - 1]); sp--)
		;
	return dp_flame_add(f, line, sp, count);
}
