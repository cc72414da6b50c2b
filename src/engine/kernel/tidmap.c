// SPDX-License-Identifier: GPL-2.0
/* Per-thread entries keyed by tid (see tidmap.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/kernel/tidmap.h"

static pid_t tid_at(const struct dp_tidmap *m, size_t i, size_t size)
{
	pid_t tid;

	memcpy(&tid, dp_tidmap_slot(m, i, size), sizeof(tid));
	return tid;
}

static int grow(struct dp_tidmap *m, size_t size, size_t first_cap)
{
	size_t cap = m->cap ? 2 * m->cap : first_cap;
	struct dp_tidmap to = { calloc(cap, size), cap, m->n };

	if (!to.v)
		return -ENOMEM;
	for (size_t i = 0; i < m->cap; i++) {
		pid_t tid = tid_at(m, i, size);
		size_t h;

		if (!tid)
			continue;
		for (h = (size_t)tid & (cap - 1); tid_at(&to, h, size);
		     h = (h + 1) & (cap - 1))
			;
		memcpy(dp_tidmap_slot(&to, h, size),
		       dp_tidmap_slot(m, i, size), size);
	}
	free(m->v);
	*m = to;
	return 0;
}

void *dp_tidmap_get(struct dp_tidmap *m, pid_t tid, size_t size,
		    size_t first_cap, bool *made)
{
	size_t h;
	pid_t t;

	if (made)
		*made = false;
	if (2 * (m->n + 1) > m->cap && grow(m, size, first_cap))
		return NULL;
	for (h = (size_t)tid & (m->cap - 1); (t = tid_at(m, h, size));
	     h = (h + 1) & (m->cap - 1))
		if (t == tid)
			return dp_tidmap_slot(m, h, size);
	memcpy(dp_tidmap_slot(m, h, size), &tid, sizeof(tid));
	m->n++;
	if (made)
		*made = true;
	return dp_tidmap_slot(m, h, size);
}

void dp_tidmap_free(struct dp_tidmap *m)
{
	free(m->v);
	*m = (struct dp_tidmap){ 0 };
}
