// SPDX-License-Identifier: GPL-2.0
/*
 * A detach leaves the target's address space as it found it: the pages the
 * engine mapped into it (slots, the return trampoline, the scratch page for
 * syscall arguments) are removed with a remote munmap once no thread can
 * come back into them.  Without this, every attach and detach of the same
 * process (a `dprobe mount` re-arms that way) would cost it a page, and
 * near a non-PIE executable the 1 MiB-aligned spots within rel32 reach of
 * the code run out after a few thousand sessions.
 *
 * With every thread stopped and the int3s out (pages_evacuate()):
 *  - a thread stopped at the start of a slot has not run the copied
 *    instruction: it goes to the original one, intact again; at the end of
 *    the copy it has run it and goes to the instruction after it
 *    (dp_insn_slot_to_orig(); a syscall run from a slot and interrupted
 *    restarts from there as it would have from the slot);
 *  - a thread that returned into the trampoline but has not trapped yet
 *    has its return recorded and goes to the real return address.
 * Then, with the pending return addresses restored (pages_release()), a
 * page is still in use when a thread's ip is in it, or when a word of the
 * live part of a thread's stack (sp to the end of the mapping holding it)
 * points into it: the signal frame of a handler that interrupted a slot,
 * the return address of a call made from a fault slot, a return address
 * that could not be restored.  Such a page stays mapped and one line says
 * why: a page too many is harmless, a page missing kills the target.
 *
 * Not seen by the scan: a slot address copied off the current stack (a
 * handler that interrupted a slot and then saved its context on the heap
 * or switched to another stack).  That needs a signal to land in the one
 * or two instructions a thread spends in a slot, and then a handler that
 * never returns to its frame; the stack scan covers the handler that does.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "engine/ptrace/internal.h"

#define PAGE_SIZE 4096u
/* A live stack larger than this is not scanned: its pages are kept. */
#define SCAN_MAX (8u << 20)
#define SCAN_CHUNK 65536u

/* ---- moving threads out ------------------------------------------------ */

/* The site whose slot holds @ip, or NULL. */
static struct site *site_of_slot(struct proc *p, uint64_t ip)
{
	for (unsigned h = 0; h < SITE_HASH; h++)
		for (struct site *s = p->sites[h]; s; s = s->next)
			if (s->slot && ip >= s->slot &&
			    ip < s->slot + DP_INSN_SLOT_SIZE)
				return s;
	return NULL;
}

/* 0 if @r->ip was moved to the thread's own code, -ENOENT otherwise. */
static int leave_page(struct thread *t, struct dp_regs *r)
{
	struct proc *p = t->proc;
	struct site *s;
	uint64_t orig;

	if (p->tramp && r->ip == p->tramp)
		return rets_complete(t, r);
	s = site_of_slot(p, r->ip);
	/* an int3 that could not be taken out would trap again at once:
	 * better let the slot finish the instruction (the page stays) */
	if (!s || s->armed || dp_insn_slot_to_orig(&s->insn, s->slot, r->ip,
						   &orig))
		return -ENOENT;
	r->ip = orig;
	return 0;
}

static bool in_our_pages(const struct proc *p, uint64_t addr)
{
	for (const struct xol_page *pg = p->pages; pg; pg = pg->next)
		if (addr >= pg->base && addr < pg->base + PAGE_SIZE)
			return true;
	return false;
}

void pages_evacuate(struct proc *p)
{
	struct dp_regs r;

	for (struct thread *t = p->threads; t; t = t->next) {
		if (!t->stopped || dp_get_regs(t->tid, &r) ||
		    !in_our_pages(p, r.ip))
			continue;
		/* pages_release() finds the ones that could not be moved */
		if (!leave_page(t, &r))
			dp_set_regs(t->tid, &r);
	}
}

/* ---- who still uses a page --------------------------------------------- */

struct page_use {
	struct xol_page **pg;	/* the process's pages */
	bool *busy;
	unsigned n, nbusy;
	char why[192];		/* the first reason a page is kept */
};

static int page_index(const struct page_use *u, uint64_t addr)
{
	for (unsigned i = 0; i < u->n; i++)
		if (addr >= u->pg[i]->base && addr < u->pg[i]->base + PAGE_SIZE)
			return (int)i;
	return -1;
}

static void keep_all(struct page_use *u, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void keep_all(struct page_use *u, const char *fmt, ...)
{
	va_list ap;

	if (!u->why[0]) {
		va_start(ap, fmt);
		vsnprintf(u->why, sizeof(u->why), fmt, ap);
		va_end(ap);
	}
	for (unsigned i = 0; i < u->n; i++)
		u->busy[i] = true;
	u->nbusy = u->n;
}

static void keep(struct page_use *u, int i, pid_t tid, const char *what,
		 uint64_t where)
{
	if (u->busy[i])
		return;
	u->busy[i] = true;
	u->nbusy++;
	if (!u->why[0])
		snprintf(u->why, sizeof(u->why), "thread %d %s 0x%lx", (int)tid,
			 what, (unsigned long)where);
}

/* The mappings of the process, from /proc/PID/maps, read once. */
struct spans {
	struct { uint64_t lo, hi; } *v;
	size_t n, cap;
};

static int spans_load(pid_t pid, struct spans *m)
{
	unsigned long lo, hi;
	char path[64], line[512];
	bool start = true;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		/* the rest of a long line is not the start of a mapping */
		bool was_start = start;

		start = strchr(line, '\n') != NULL;
		if (!was_start || sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		if (m->n == m->cap) {
			size_t cap = m->cap ? 2 * m->cap : 64;
			void *v = realloc(m->v, cap * sizeof(*m->v));

			if (!v)
				break;
			m->v = v;
			m->cap = cap;
		}
		m->v[m->n].lo = lo;
		m->v[m->n++].hi = hi;
	}
	fclose(f);
	return 0;
}

/* The end of the mapping that holds @addr; 0: none. */
static uint64_t mapping_end(const struct spans *m, uint64_t addr)
{
	for (size_t i = 0; i < m->n; i++)
		if (addr >= m->v[i].lo && addr < m->v[i].hi)
			return m->v[i].hi;
	return 0;
}

/* Words of @buf (at @addr in the target) pointing into a page of @u. */
static void scan_words(struct page_use *u, pid_t tid, const uint8_t *buf,
		       size_t len, uint64_t addr)
{
	uint64_t v;
	int i;

	for (size_t off = 0; off + 8 <= len; off += 8) {
		memcpy(&v, buf + off, 8);
		i = page_index(u, v);
		if (i >= 0)
			keep(u, i, tid, "has a pointer to it on its stack at",
			     addr + off);
	}
}

/*
 * The live stack of @t, from sp up: aligned as sp is and, if sp is not,
 * on 8 bytes as well (a signal frame is aligned by the kernel).  Chunks
 * overlap by 8 bytes so that no word falls between two reads.
 */
static void scan_stack(struct proc *p, struct thread *t, uint64_t sp,
		       const struct spans *m, struct page_use *u, uint8_t *buf)
{
	uint64_t end = mapping_end(m, sp), a;
	size_t len;

	if (!end) {
		keep_all(u, "thread %d's stack pointer 0x%lx is not in a "
			 "mapping", (int)t->tid, (unsigned long)sp);
		return;
	}
	if (end - sp > SCAN_MAX) {
		keep_all(u, "thread %d's stack above 0x%lx is too large to "
			 "scan", (int)t->tid, (unsigned long)sp);
		return;
	}
	for (a = sp; u->nbusy < u->n; a += len - 8) {
		size_t k = (8 - (a & 7)) & 7;

		len = end - a < SCAN_CHUNK ? end - a : SCAN_CHUNK;
		if (dp_mm_read(&p->mm, a, buf, len)) {
			keep_all(u, "thread %d's stack at 0x%lx cannot be read",
				 (int)t->tid, (unsigned long)a);
			return;
		}
		scan_words(u, t->tid, buf, len, a);
		if (k && len > k)
			scan_words(u, t->tid, buf + k, len - k, a + k);
		if (a + len >= end)
			break;
	}
}

static void find_users(struct proc *p, struct page_use *u)
{
	uint8_t *buf = malloc(SCAN_CHUNK);
	struct spans m = { 0 };
	struct dp_regs r;
	int i, err;

	if (!buf || spans_load(p->pid, &m)) {
		keep_all(u, "cannot read its mappings");
		goto out;
	}
	for (struct thread *t = p->threads; t && u->nbusy < u->n; t = t->next) {
		err = dp_get_regs(t->tid, &r);
		/* every thread was stopped: one that is no longer was
		 * killed, and runs no code of ours again */
		if (err == -ESRCH)
			continue;
		if (err) {
			keep_all(u, "thread %d's registers cannot be read",
				 (int)t->tid);
			break;
		}
		i = page_index(u, r.ip);
		if (i >= 0)
			keep(u, i, t->tid, "is stopped in it at", r.ip);
		scan_stack(p, t, r.sp, &m, u, buf);
	}
out:
	free(m.v);
	free(buf);
}

/* ---- unmapping ---------------------------------------------------------- */

/* A stopped thread to run munmap in: one with no signal to deliver first
 * if there is one (a signal during the step is then kept for it). */
static struct thread *munmap_thread(struct proc *p)
{
	struct thread *any = NULL;

	for (struct thread *t = p->threads; t; t = t->next) {
		if (!t->stopped)
			continue;
		if (!t->pending_sig)
			return t;
		if (!any)
			any = t;
	}
	return any;
}

static int remote_munmap(struct proc *p, uint64_t addr)
{
	struct thread *t = munmap_thread(p);
	uint64_t args[6] = { addr, PAGE_SIZE, 0, 0, 0, 0 };
	int64_t ret;
	int err;

	if (!t)
		return -ESRCH;
	err = dp_remote_syscall(&p->mm, t->tid, SYS_munmap, args, &ret,
				&t->pending_sig);
	return err ? err : ret < 0 ? (int)ret : 0;
}

/* Unmap the pages @u found unused and forget them; false if the process
 * is gone (killed meanwhile: nothing to give back). */
static bool unmap_unused(struct proc *p, struct page_use *u)
{
	struct xol_page **pp = &p->pages;
	unsigned i = 0;
	int err;

	while (*pp) {
		struct xol_page *pg = *pp;

		err = u->busy[i++] ? -EBUSY : remote_munmap(p, pg->base);
		if (err == -ESRCH)
			return false;
		if (err) {
			if (err != -EBUSY && !u->why[0])
				snprintf(u->why, sizeof(u->why), "munmap of "
					 "0x%lx failed: %s", (unsigned long)pg->base,
					 strerror(-err));
			pp = &pg->next;
			continue;
		}
		if (p->tramp >= pg->base && p->tramp < pg->base + PAGE_SIZE)
			p->tramp = 0;
		*pp = pg->next;
		free(pg);
	}
	return true;
}

static unsigned count_pages(const struct proc *p)
{
	unsigned n = 0;

	for (const struct xol_page *pg = p->pages; pg; pg = pg->next)
		n++;
	return n;
}

static void release_slot_pages(struct proc *p)
{
	struct page_use u = { .n = count_pages(p) };
	unsigned i = 0, before = u.n;

	if (!u.n)
		return;
	u.pg = calloc(u.n, sizeof(*u.pg));
	u.busy = calloc(u.n, sizeof(*u.busy));
	if (!u.pg || !u.busy) {
		tracer_log(p->tracer, "dprobe: process %d: out of memory: %u "
			   "page(s) of slots left mapped\n", (int)p->pid, u.n);
		goto out;
	}
	for (struct xol_page *pg = p->pages; pg; pg = pg->next)
		u.pg[i++] = pg;
	find_users(p, &u);
	if (unmap_unused(p, &u) && p->pages)
		tracer_log(p->tracer, "dprobe: process %d: %u of %u page(s) of "
			   "slots left mapped: %s\n", (int)p->pid,
			   count_pages(p), before, u.why);
out:
	free(u.pg);
	free(u.busy);
}

void pages_release(struct proc *p)
{
	int err;

	/* the other process in this memory may still run in them (the
	 * parent says so for both); no thread left: the process is gone */
	if (p->vfork_parent || !p->threads)
		return;
	if (p->shared_mm) {
		if (p->pages || p->scratch)
			tracer_log(p->tracer, "dprobe: process %d: pages of "
				   "slots left mapped: a vfork child still "
				   "runs in its memory\n", (int)p->pid);
		return;
	}
	release_slot_pages(p);
	/* only ever an argument buffer: no code runs there */
	if (p->scratch) {
		err = remote_munmap(p, p->scratch);
		if (err && err != -ESRCH)
			tracer_log(p->tracer, "dprobe: process %d: the scratch "
				   "page 0x%lx left mapped: %s\n", (int)p->pid,
				   (unsigned long)p->scratch, strerror(-err));
		else
			p->scratch = 0;
	}
}
