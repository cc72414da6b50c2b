/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Private to src/engine/kernel/: per-thread entries keyed by tid, an
 * open-addressing hash table (linear probing, grown to twice its size
 * when half full).  An entry is any struct whose first member is its
 * `pid_t tid`, 0 in a free slot.  All zeros is an empty table.
 */
#ifndef DPROBE_ENGINE_KERNEL_TIDMAP_H
#define DPROBE_ENGINE_KERNEL_TIDMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct dp_tidmap {
	void *v;		/* cap entries */
	size_t cap, n;		/* cap: 0 or a power of two */
};

/*
 * The entry of @tid in @m, whose entries are @size bytes; made (zeroed
 * but its tid, and *@made true if @made is not NULL) if there is none.
 * The first table has @first_cap (a power of two) slots.  NULL: out of
 * memory.  An entry moves when the table grows: a pointer to one holds
 * until the next call that makes one.
 */
void *dp_tidmap_get(struct dp_tidmap *m, pid_t tid, size_t size,
		    size_t first_cap, bool *made);

/* Slot @i (< m->cap) of @m, free (tid 0) or not. */
static inline void *dp_tidmap_slot(const struct dp_tidmap *m, size_t i,
				   size_t size)
{
	return (char *)m->v + i * size;
}

/* The table itself (not what its entries point to); empty again. */
void dp_tidmap_free(struct dp_tidmap *m);

#endif
