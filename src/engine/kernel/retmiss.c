// SPDX-License-Identifier: GPL-2.0
/*
 * Returns the kernel's uretprobes never report, counted as missed.
 *
 * When longjmp() (or a C++ exception, or a thread's exit) abandons frames
 * of a function with a return probe, the kernel drops the pending return
 * instances without a trace.  To count them, every return probe of a
 * program place gets a hidden entry probe at the same place recording
 * the stack pointer (`__call_N sp=$stack`, created after the return
 * event, so that any entry it records has its return armed).  The reader
 * keeps, per thread, the stack of entries whose return is pending:
 *
 *  - an entry at sp S ends every pending entry at S or below it (a frame
 *    there is dead once a new call uses that stack), except one of another
 *    probe at exactly S: the same hit of two return probes of a function;
 *  - a return of function F (its record's __probe_func) ends the most
 *    recent pending entry of F, and every entry above it;
 *  - at the end, every entry still pending is one that never returned.
 *
 * Each entry ended without its return is one missed return of its probe.
 * The return path costs nothing more; each entry costs one small record.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/kernel/session.h"
#include "lang/layout.h"

struct kframe {
	uint64_t sp, ip;	/* at the entry: the stack, the function */
	struct kev *call;	/* the hidden entry probe (its counter) */
};

struct kstack {
	pid_t tid;		/* 0: a free slot */
	uint32_t n, cap;
	struct kframe *v;
};

static struct kstack *stack_of(struct dp_kernel *k, pid_t tid)
{
	return dp_tidmap_get(&k->stacks, tid, sizeof(struct kstack), 64, NULL);
}

/* Pop the top frame: its return never came. */
static void skipped(struct kstack *s)
{
	s->v[--s->n].call->skipped++;
}

static void enter(struct dp_kernel *k, struct kev *call, pid_t tid,
		  uint64_t ip, uint64_t sp)
{
	struct kstack *s = stack_of(k, tid);
	struct kframe *v;

	if (!s) {
		call->skipped++;	/* cannot follow it: not silent */
		return;
	}
	while (s->n && (s->v[s->n - 1].sp < sp ||
			(s->v[s->n - 1].sp == sp && s->v[s->n - 1].call == call)))
		skipped(s);
	if (s->n == s->cap) {
		uint32_t cap = s->cap ? 2 * s->cap : 16;

		v = realloc(s->v, cap * sizeof(*v));
		if (!v) {
			call->skipped++;
			return;
		}
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = (struct kframe){ sp, ip, call };
}

static void leave(struct dp_kernel *k, pid_t tid, uint64_t func)
{
	struct kstack *s = k->stacks.cap ? stack_of(k, tid) : NULL;
	uint32_t i;

	if (!s)
		return;
	for (i = s->n; i > 0 && s->v[i - 1].ip != func; i--)
		;
	if (!i)
		return;		/* entered before the hidden probe was on */
	while (s->n > i)
		skipped(s);
	s->n--;
}

bool dp_kret_account(struct dp_kernel *k, struct kev *e, pid_t tid,
		     const uint8_t *rec, size_t len)
{
	/* the hidden entry: __probe_ip, then its one argument, sp */
	if (e->ret_pr) {
		if (len >= DP_ENTRY_HEAD_SIZE + 8)
			enter(k, e, tid, dp_rec_load(rec + DP_REC_IP_OFF, 8),
			      dp_rec_load(rec + DP_ENTRY_HEAD_SIZE, 8));
		return true;
	}
	if (e->has_calls && len >= DP_REC_FUNC_OFF + 8)
		leave(k, tid, dp_rec_load(rec + DP_REC_FUNC_OFF, 8));
	return false;
}

void dp_kret_finish(struct dp_kernel *k)
{
	for (size_t i = 0; i < k->stacks.cap; i++) {
		struct kstack *s = dp_tidmap_slot(&k->stacks, i, sizeof(*s));

		while (s->tid && s->n)
			skipped(s);
	}
}

void dp_kret_missed(struct dp_kernel *k)
{
	for (size_t i = 0; i < k->nkevs; i++)
		if (k->kevs[i].ret_pr)
			k->kevs[i].ret_pr->nmiss += k->kevs[i].skipped;
}

void dp_kret_free(struct dp_kernel *k)
{
	for (size_t i = 0; i < k->stacks.cap; i++)
		free(((struct kstack *)dp_tidmap_slot(&k->stacks, i,
						      sizeof(struct kstack)))->v);
	dp_tidmap_free(&k->stacks);
}
