// SPDX-License-Identifier: GPL-2.0
/*
 * Out-of-line slots.  A displaced instruction with a %rip-relative operand
 * must run from within +-2 GB of what it names, so slot pages are mapped
 * in a free gap of the address space close to the code (the nearest gap in
 * /proc/self/maps, with MAP_FIXED_NOREPLACE so nothing already there is
 * ever replaced).  Pages are read+exec only and written through
 * /proc/self/mem like the code itself.
 *
 * Slots are never freed or reused: a thread may have been interrupted
 * inside one for an unbounded time (a syscall run from a slot, a
 * preempted thread).  Their bytes are written without a core sync: no
 * thread can run them before the int3 that leads there is in the code,
 * and that thread gets there through a trap, which is serialising.
 * A site that loses its last probe keeps its slots
 * and gets them back if the same address is probed again, so the memory
 * grows with the number of distinct addresses ever probed.
 *
 * Slot pair layout (DP_SLOT_BYTES = 64, see agent.h):
 *
 *   +0   copy of the instruction (operands relocated) | jmp addr+len
 *   +32  copy of the instruction | int3 | jmp addr+len
 *
 * The second form is entered when a post handler must run: its int3
 * traps right after the instruction.  If the site has lost its probes by
 * then, the trap handler just returns and the jmp that follows the int3
 * takes the thread home.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "engine/agent/agent.h"

#define PAIRS_PER_PAGE (DP_PAGE_SIZE / DP_SLOT_BYTES)
#define REACH ((1ull << 31) - 4 * DP_PAGE_SIZE)
#define LOW_LIMIT 0x10000ull
#define HIGH_LIMIT 0x7ffffffff000ull
#define BRK_ROOM (256ull << 20)	/* left free above the heap for brk */
#define STACK_ROOM (64ull << 20)	/* and below the main stack */

struct slot_page {
	struct slot_page *next;
	uint64_t base;
	unsigned int used;
	struct dp_site *sites[PAIRS_PER_PAGE];
};

static struct slot_page *pages;	/* published with release stores */

static bool in_reach(uint64_t a, uint64_t b)
{
	return (a > b ? a - b : b - a) < REACH;
}

/* ---- finding room near the code ---------------------------------------- */

struct gap_pick {
	uint64_t near, best;
	uint64_t dist;
};

static void consider(struct gap_pick *g, uint64_t lo, uint64_t hi)
{
	uint64_t c, d;

	if (lo < LOW_LIMIT)
		lo = LOW_LIMIT;
	if (hi > HIGH_LIMIT)
		hi = HIGH_LIMIT;
	if (hi < lo + DP_PAGE_SIZE)
		return;
	c = g->near & ~(DP_PAGE_SIZE - 1);
	if (c < lo)
		c = lo;
	if (c > hi - DP_PAGE_SIZE)
		c = hi - DP_PAGE_SIZE;
	d = c > g->near ? c - g->near : g->near - c;
	if (d < g->dist) {
		g->dist = d;
		g->best = c;
	}
}

/* The free page nearest @near per /proc/self/maps, or 0. */
static uint64_t nearest_gap(uint64_t near)
{
	struct gap_pick g = { near, 0, UINT64_MAX };
	unsigned long lo, hi, prev_hi = 0;
	bool prev_heap = false;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		if (lo > prev_hi)
			consider(&g, prev_hi + (prev_heap ? BRK_ROOM : 0),
				 lo - (strstr(line, "[stack]") ? STACK_ROOM : 0));
		prev_hi = hi;
		prev_heap = strstr(line, "[heap]") != NULL;
	}
	fclose(f);
	consider(&g, prev_hi, HIGH_LIMIT);
	return g.dist < REACH ? g.best : 0;
}

static uint64_t map_near(uint64_t near)
{
	static const uint8_t fill[DP_PAGE_SIZE] = { [0 ... DP_PAGE_SIZE - 1] = DP_INT3 };

	for (int tries = 0; tries < 8; tries++) {
		uint64_t want = nearest_gap(near);
		void *p;

		if (!want)
			return 0;
		p = mmap((void *)(uintptr_t)want, DP_PAGE_SIZE,
			 PROT_READ | PROT_EXEC,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (p == MAP_FAILED)
			continue;	/* taken meanwhile by another thread */
		if ((uint64_t)(uintptr_t)p != want) {
			/* a kernel without MAP_FIXED_NOREPLACE took it as a hint */
			munmap(p, DP_PAGE_SIZE);
			continue;
		}
		/* unused bytes trap rather than run as "add %al,(%rax)" */
		if (dp_text_write_fresh(want, fill, sizeof(fill))) {
			munmap(p, DP_PAGE_SIZE);
			return 0;
		}
		return want;
	}
	return 0;
}

static uint64_t pair_alloc(uint64_t near, struct dp_site *s)
{
	struct slot_page *pg;
	uint64_t base;

	for (pg = pages; pg; pg = pg->next)
		if (pg->used < PAIRS_PER_PAGE && in_reach(pg->base, near))
			goto found;
	base = map_near(near);
	if (!base)
		return 0;
	pg = calloc(1, sizeof(*pg));
	if (!pg)
		return 0;
	pg->base = base;
	pg->next = pages;
	__atomic_store_n(&pages, pg, __ATOMIC_RELEASE);
found:
	/* published before the int3 that leads a thread here is written */
	__atomic_store_n(&pg->sites[pg->used], s, __ATOMIC_RELEASE);
	return pg->base + DP_SLOT_BYTES * pg->used++;
}

static void pair_forget(uint64_t slot)
{
	for (struct slot_page *pg = pages; pg; pg = pg->next)
		if (slot - pg->base < DP_PAGE_SIZE)
			__atomic_store_n(&pg->sites[(slot - pg->base) /
						    DP_SLOT_BYTES], NULL,
					 __ATOMIC_RELEASE);
}

/* ---- slot contents ------------------------------------------------------- */

/* The post form at @at: the copy from dp_insn_make_slot(), int3, jmp. */
static int make_post(const struct dp_insn *in, uint64_t at, uint8_t *buf)
{
	uint8_t tmp[DP_INSN_SLOT_SIZE];
	int n = dp_insn_make_slot(in, at, tmp, sizeof(tmp));
	struct dp_emit e;

	if (n < 0)
		return n;
	dp_emit_init(&e, buf, DP_SLOT_POST, at);
	dp_emit_bytes(&e, tmp, in->len);
	dp_emit_int3(&e, 1);
	n = dp_emit_jmp_far(&e, in->addr + in->len);
	dp_emit_int3(&e, e.cap - e.len);
	return n;
}

int dp_slots_build(struct dp_site *s)
{
	const struct dp_insn *in = &s->insn;
	uint8_t buf[DP_SLOT_BYTES];
	uint64_t near, slot;
	int n;

	if (!dp_insn_needs_slot(in) && !dp_insn_may_fault(in))
		return 0;
	near = in->riprel_off >= 0 ? in->riprel_target : in->addr;
	slot = pair_alloc(near, s);
	if (!slot)
		return -ENOMEM;
	memset(buf, DP_INT3, sizeof(buf));
	n = dp_insn_make_slot(in, slot, buf, DP_SLOT_POST);
	if (n >= 0 && dp_insn_needs_slot(in))
		n = make_post(in, slot + DP_SLOT_POST, buf + DP_SLOT_POST);
	if (n >= 0)
		n = dp_text_write_fresh(slot, buf, sizeof(buf));
	if (n < 0) {
		/* the pair stays unused; nothing will ever jump there */
		pair_forget(slot);
		return n;
	}
	s->slot = slot;
	return 0;
}

struct dp_site *dp_slot_site(uint64_t addr, uint64_t *slot)
{
	struct slot_page *pg = __atomic_load_n(&pages, __ATOMIC_ACQUIRE);

	for (; pg; pg = pg->next) {
		if (addr - pg->base < DP_PAGE_SIZE) {
			unsigned int i = (unsigned int)((addr - pg->base) /
							DP_SLOT_BYTES);

			*slot = pg->base + i * DP_SLOT_BYTES;
			return __atomic_load_n(&pg->sites[i], __ATOMIC_ACQUIRE);
		}
	}
	return NULL;
}

/* ---- detours ------------------------------------------------------------- */

/* Pages for detours: bump-allocated, never freed (see dp_opt_unoptimize). */
struct detour_page {
	struct detour_page *next;
	uint64_t base;
	size_t used;
};

static struct detour_page *detour_pages;
/* where the last allocation was made: the only one dp_slots_trim() may
 * shorten */
static struct detour_page *last_page;

uint64_t dp_slots_alloc_near(uint64_t near, size_t size)
{
	struct detour_page *pg;

	size = (size + 15) & ~(size_t)15;
	if (size > DP_PAGE_SIZE)
		return 0;
	/* the page of the last detour first: the next site is usually near */
	pg = last_page;
	if (pg && pg->used + size <= DP_PAGE_SIZE && in_reach(pg->base, near) &&
	    in_reach(pg->base + DP_PAGE_SIZE, near))
		goto found;
	for (pg = detour_pages; pg; pg = pg->next)
		if (pg->used + size <= DP_PAGE_SIZE && in_reach(pg->base, near) &&
		    in_reach(pg->base + DP_PAGE_SIZE, near))
			goto found;
	pg = calloc(1, sizeof(*pg));
	if (!pg)
		return 0;
	pg->base = map_near(near);
	if (!pg->base) {
		free(pg);
		return 0;
	}
	pg->next = detour_pages;
	detour_pages = pg;
found:
	pg->used += size;
	last_page = pg;
	return pg->base + pg->used - size;
}

/* Bytes of the pages mapped for slots and detours (DPROBE_VERBOSE). */
size_t dp_slots_mapped(void)
{
	size_t n = 0;

	for (struct slot_page *pg = pages; pg; pg = pg->next)
		n += DP_PAGE_SIZE;
	for (struct detour_page *pg = detour_pages; pg; pg = pg->next)
		n += DP_PAGE_SIZE;
	return n;
}

/*
 * The last allocation, @at of @size bytes, used only up to @used: the
 * rest goes back to its page, for the next detour near it.
 */
void dp_slots_trim(uint64_t at, size_t size, size_t used)
{
	size = (size + 15) & ~(size_t)15;
	used = (used + 15) & ~(size_t)15;
	struct detour_page *pg = last_page;

	if (pg && at - pg->base < DP_PAGE_SIZE &&
	    pg->used == at - pg->base + size && used <= size)
		pg->used -= size - used;
}
