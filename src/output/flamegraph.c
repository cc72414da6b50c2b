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

/*
 * @n's callee named by the @len bytes at @name, made (with no samples
 * yet) if it has none.  Callees are searched from the last: sorted input
 * adds to the one added last.  NULL if out of memory.
 */
static struct dp_flame_node *kid(struct dp_flame_node *n, const char *name,
				 size_t len)
{
	struct dp_flame_node *k;

	for (size_t i = n->nkids; i-- > 0;) {
		k = &n->kids[i];
		if (!strncmp(k->name, name, len) && !k->name[len])
			return k;
	}
	if (n->nkids == n->cap) {
		size_t cap = n->cap ? 2 * n->cap : 4;

		k = realloc(n->kids, cap * sizeof(*k));
		if (!k)
			return NULL;
		n->kids = k;
		n->cap = cap;
	}
	k = &n->kids[n->nkids];
	*k = (struct dp_flame_node){ .name = strndup(name, len) };
	if (!k->name)
		return NULL;
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
