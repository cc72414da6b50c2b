// SPDX-License-Identifier: GPL-2.0
/*
 * A thread stopped on one of our int3s: run the probes' fetch programs,
 * hijack return addresses for return probes, and let the displaced
 * instruction take effect (out of line, or emulated) before it resumes.
 *
 * Return probes (the kernel's uretprobes, done by the tracer):
 *   entry: save [sp] (the return address) in a per-thread instance and
 *          write the trampoline address there;
 *   trampoline hit: the function returned; its instance is the one whose
 *          slot is just below the current sp.  Instances above it belong
 *          to frames that were skipped (longjmp, stack switches): they are
 *          dropped and counted.  ip goes back to the saved address.
 * When the unwinder starts (a C++ throw, thread cancellation) every
 * pending return address of the thread is put back first, so it never
 * meets the trampoline; those returns are counted as dropped.
 */
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/ptrace/internal.h"
#include "event/deliver.h"
#include "lang/fetch.h"
#include "sym/fpframe.h"
#include "sym/proc.h"

#define MAX_URETPROBE_DEPTH 64	/* the kernel's per-task limit */

static int mem_read(void *priv, uint64_t addr, void *dst, size_t len)
{
	return dp_mm_read(priv, addr, dst, len);
}

static int mem_write(void *priv, uint64_t addr, const void *src, size_t len)
{
	return dp_mm_write(priv, addr, src, len);
}

static long mem_read_str(void *priv, uint64_t addr, char *dst, size_t max)
{
	return dp_mm_read_str(priv, addr, dst, max);
}

static int sym_addr(void *priv, const char *text, uint64_t *addr)
{
	struct proc *p = priv;
	char why[160];

	return dp_proc_sym_addr(p->sym, text, addr, why, sizeof(why));
}

static int symbolize(void *priv, uint64_t addr, char *dst, size_t len)
{
	struct proc *p = priv;
	struct dp_proc_sym s;

	if (dp_proc_symbolize(p->sym, addr, &s) || !s.name)
		return -1;
	snprintf(dst, len, "%s+0x%lx/0x%lx", s.name, (unsigned long)s.off,
		 (unsigned long)s.size);
	return 0;
}

/* comm and cpu of a thread from one read of /proc/PID/task/TID/stat. */
static void thread_comm_cpu(struct thread *t, char *comm, int *cpu)
{
	char buf[1024], path[64], *lp, *rp, *f;
	ssize_t n;
	int field;

	comm[0] = '\0';
	*cpu = 0;
	if (t->stat_fd < 0) {
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat",
			 t->proc->pid, t->tid);
		t->stat_fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	n = t->stat_fd < 0 ? -1 : pread(t->stat_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return;
	buf[n] = '\0';
	lp = strchr(buf, '(');
	rp = strrchr(buf, ')');
	if (!lp || !rp || rp < lp)
		return;
	snprintf(comm, DP_TASK_COMM_LEN, "%.*s", (int)(rp - lp - 1), lp + 1);
	/* field 3 (state) follows ") "; the cpu is field 39 */
	for (f = rp + 2, field = 3; f && field < 39; field++) {
		f = strchr(f, ' ');
		if (f)
			f++;
	}
	if (f)
		*cpu = atoi(f);
}

struct hit {
	struct thread *t;
	struct dp_hit_ctx ctx;
	struct dp_rec_meta meta;
	char comm[DP_TASK_COMM_LEN];
	bool have_meta;
	bool have_stack;
	unsigned nstack;
	uint64_t stack[DP_STACK_MAX];
	/* each frame's lowest stack byte (0: not known), then, for the
	 * stack tracer, its depth below @top */
	uint64_t low[DP_STACK_MAX], depth[DP_STACK_MAX];
	uint64_t top;
};

static void hit_init(struct hit *h, struct thread *t, const struct dp_regs *regs)
{
	struct proc *p = t->proc;

	memset(h, 0, sizeof(*h));
	h->t = t;
	h->ctx.regs = regs;
	h->ctx.read_mem = mem_read;
	h->ctx.read_str = mem_read_str;
	h->ctx.priv = &p->mm;
	h->ctx.pid = t->tid;
	h->ctx.symbolize = symbolize;
	h->ctx.sym_addr = sym_addr;
	h->ctx.sym_priv = p;
}

/* Metadata only when a record is made: it costs a /proc read. */
void thread_meta(struct thread *t, struct dp_rec_meta *m, char *comm)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	thread_comm_cpu(t, comm, &m->cpu);
	m->ts_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	m->pid = t->tid;
	m->tgid = t->proc->pid;
	m->mm_pid = t->proc->pid;
	m->comm = comm[0] ? comm : NULL;
}

static void hit_meta(struct hit *h)
{
	if (h->have_meta)
		return;
	h->have_meta = true;
	thread_meta(h->t, &h->meta, h->comm);
	h->ctx.comm = h->comm;
}

/* @ret read from the slot at @slot: the real return address if it is
 * the trampoline of a return pending on this thread. */
static uint64_t real_ret(const struct thread *t, uint64_t ret, uint64_t slot)
{
	if (!t->proc->tramp || ret != t->proc->tramp)
		return ret;
	for (unsigned i = t->nrets; i-- > 0;)
		if (t->rets[i].sp == slot)
			return t->rets[i].orig_ret;
	return ret;
}

/*
 * The user stack of the stopped thread, as the agent's (agent/stack.c)
 * with the tracer's reads: the hit's place (a return: the function, then
 * where it returned to), the return address at [sp] at a function's
 * first instruction, then the frame-pointer chain from %rbp while frame
 * pointers go up the stack, aligned and readable; a bad frame where one
 * was expected ends it with DP_STACK_BAD_FRAME (sym/fpframe.h).
 */
static void hit_stack(struct hit *h)
{
	const struct dp_regs *regs = h->ctx.regs;
	struct proc *p = h->t->proc;
	uint64_t fp = regs->bp, lo = regs->sp, f[2];
	bool ret = h->ctx.ret_ip != 0;
	struct dp_proc_sym ps;
	unsigned n = 0;

	h->have_stack = true;
	h->low[n] = regs->sp;
	h->stack[n++] = ret ? h->ctx.func : h->ctx.ip;
	if (ret) {
		h->low[n] = 0;
		h->stack[n++] = h->ctx.ret_ip;
	} else if (!dp_proc_symbolize(p->sym, h->ctx.ip, &ps) && ps.name &&
		 !ps.off && !dp_mm_read(&p->mm, regs->sp, &f[1], 8) && f[1]) {
		h->low[n] = regs->sp + 8;
		h->stack[n++] = real_ret(h->t, f[1], regs->sp);
	}
	while (n < DP_STACK_MAX) {
		enum dp_frame_step st = dp_frame_check(fp, lo, regs->sp);

		if (st == DP_FRAME_NEXT &&
		    (dp_mm_read(&p->mm, fp, f, 16) || !f[1]))
			st = DP_FRAME_BAD;
		if (st == DP_FRAME_BAD) {
			h->low[n] = 0;
			h->stack[n++] = DP_STACK_BAD_FRAME;
		}
		if (st != DP_FRAME_NEXT)
			break;
		h->low[n] = fp + 16;
		h->stack[n++] = real_ret(h->t, f[1], fp + 8);
		lo = fp + 16;
		fp = f[0];
	}
	h->nstack = n;
	dp_proc_stack_settle(p->sym, h->stack, &h->nstack);
}

/*
 * The stack above @sp into @dst, at most @size bytes, a page at a time
 * up to the first that cannot be read: the bytes copied.
 */
static size_t copy_stack(const struct dp_mm *mm, uint64_t sp, uint8_t *dst,
			 size_t size)
{
	size_t done = 0;

	while (done < size && sp + done >= sp) {
		size_t chunk = 4096 - ((sp + done) & 4095);

		if (chunk > size - done)
			chunk = size - done;
		if (dp_mm_read(mm, sp + done, dst + done, chunk))
			break;
		done += chunk;
	}
	return done;
}

/*
 * --call-graph dwarf: the registers and @size bytes of the stack, read at
 * the stop as the agent copies them at a hit, unwound with the CFI
 * (sym/unwind.h).  Slots of pending return probes get their real return
 * addresses first, as in the frame-pointer walk.
 */
static void hit_stack_dwarf(struct hit *h, unsigned size)
{
	const struct dp_regs *r = h->ctx.regs;
	struct thread *t = h->t;
	struct proc *p = t->proc;
	bool ret = h->ctx.ret_ip != 0;
	struct dp_stack_snap s = {
		.regs = { r->ax, r->dx, r->cx, r->bx, r->si, r->di, r->bp,
			  r->sp, r->r8, r->r9, r->r10, r->r11, r->r12, r->r13,
			  r->r14, r->r15, ret ? h->ctx.ret_ip : h->ctx.ip },
	};
	uint8_t *buf = malloc(size);
	unsigned n = 0;

	h->have_stack = true;
	if (ret)
		h->stack[n++] = h->ctx.func;
	if (buf)
		s.len = copy_stack(&p->mm, r->sp, buf, size);
	s.whole = buf && s.len < size;	/* the stack's end met */
	s.stack = buf;
	for (unsigned i = 0; i < t->nrets && s.len >= 8; i++) {
		uint64_t at = t->rets[i].sp, v;

		if (at < r->sp || at - r->sp > s.len - 8)
			continue;
		memcpy(&v, buf + (at - r->sp), 8);
		v = real_ret(t, v, at);
		memcpy(buf + (at - r->sp), &v, 8);
	}
	if (!p->unw && p->sym && dp_unwinder_new(p->sym, &p->unw))
		p->unw = NULL;
	if (p->unw)
		n += dp_unwind(p->unw, t->tid, &s, h->stack + n,
			       DP_STACK_MAX - n, NULL);
	else
		h->stack[n++] = s.regs[DP_UNWIND_RIP];
	h->nstack = n;
	free(buf);
}

/*
 * The stack tracer (dp_event.stack_max), as the agent checks it
 * (agent/events.c): the thread's depth is the end of the mapping its
 * stack pointer is in less the stack pointer, the mapping looked up
 * again only when the stack pointer leaves it.  Whether this hit's
 * stack is the deepest of the process yet (it then is, and h->top set).
 */
static bool stack_deeper(struct hit *h, const struct dp_event *ev)
{
	struct thread *t = h->t;
	struct proc *p = t->proc;
	uint64_t sp = h->ctx.regs->sp;
	struct dp_maps m;
	char why[128];

	if (p->stack_max_serial != ev->serial) {
		p->stack_max = 0;
		p->stack_max_serial = ev->serial;
	}
	if (sp - t->stk_lo >= t->stk_hi - t->stk_lo) {
		/* none found: an empty range at any address but 0 */
		t->stk_lo = 1;
		t->stk_hi = 0;
		if (!dp_maps_read(p->pid, &m, why, sizeof(why))) {
			for (size_t i = 0; i < m.n; i++)
				if (sp >= m.v[i].start && sp < m.v[i].end) {
					t->stk_lo = m.v[i].start;
					t->stk_hi = m.v[i].end;
				}
			dp_maps_free(&m);
		}
	}
	if (!t->stk_hi || t->stk_hi - sp <= p->stack_max)
		return false;
	p->stack_max = t->stk_hi - sp;
	h->top = t->stk_hi;
	return true;
}

/* The depths of the frames hit_stack() found, below h->top. */
static const uint64_t *stack_depths(struct hit *h)
{
	for (unsigned i = 0; i < h->nstack; i++)
		h->depth[i] = h->low[i] && h->low[i] <= h->top ?
			      h->top - h->low[i] : 0;
	return h->depth;
}

static void emit(struct hit *h, struct dp_probe *pr)
{
	struct proc *p = h->t->proc;
	struct dp_tracer *tr = p->tracer;
	struct dp_deliver d = { &tr->o.sink, &tr->stats, tr->o.count_only };
	size_t len;

	if (p->silent)
		return;
	/* the stack tracer's event: a hit only at a new deepest stack */
	if (pr->event->stack_max && !stack_deeper(h, pr->event))
		return;
	if (dp_event_deliver_counted(&d, pr))
		return;
	hit_meta(h);
	len = dp_fetch_record(&pr->def, pr->event->id, &h->ctx, tr->rec,
			      sizeof(tr->rec));
	if (!len) {
		dp_event_lost_record(&d);
		return;
	}
	/* walked once per hit, for the events that ask (--stack) */
	if (pr->event->stack && !h->have_stack) {
		if (pr->event->stack_dwarf)
			hit_stack_dwarf(h, pr->event->stack_dwarf);
		else
			hit_stack(h);
	}
	h->meta.stack = pr->event->stack ? h->stack : NULL;
	h->meta.nstack = pr->event->stack ? h->nstack : 0;
	h->meta.stack_depth = pr->event->stack && pr->event->stack_max &&
			      !pr->event->stack_dwarf ? stack_depths(h) : NULL;
	dp_event_deliver(&d, pr, tr->rec, len, &h->meta, &p->symbolizer);
}

static unsigned site_active(const struct proc *p, const struct site *s)
{
	unsigned n = 0;

	for (const struct thread *t = p->threads; t; t = t->next)
		for (unsigned i = 0; i < t->nrets; i++)
			n += t->rets[i].site == s;
	return n;
}

static void miss_returns(struct site *s)
{
	for (unsigned i = 0; i < s->nprobes; i++)
		if (s->probes[i]->def.is_return)
			s->probes[i]->nmiss++;
}

/* A pending return that will never be seen: a miss for its probes. */
/* Give a hijacked return address back, if the slot still holds ours. */
static void restore_slot(struct proc *p, const struct ret_inst *ri)
{
	uint64_t cur;

	if (!dp_mm_read(&p->mm, ri->sp, &cur, 8) && cur == p->tramp)
		dp_mm_write(&p->mm, ri->sp, &ri->orig_ret, 8);
}

/* A pending return that will not be seen: a miss for its probes. */
static void count_drop(struct dp_tracer *tr, const struct ret_inst *ri)
{
	tr->stats.dropped++;
	tr->stats.missed++;
	if (ri->site)
		miss_returns(ri->site);
}

/*
 * Drop an instance judged stale.  Its frame may still live on another
 * stack (coroutines) and return later: it must then return to its real
 * caller, so the slot gets the return address back.
 */
static void drop_return(struct proc *p, const struct ret_inst *ri)
{
	restore_slot(p, ri);
	count_drop(p->tracer, ri);
}

static bool over_limit(struct thread *t, struct site *s)
{
	for (unsigned i = 0; i < s->nprobes; i++) {
		const struct dp_probe_def *d = &s->probes[i]->def;

		if (d->is_return && d->maxactive &&
		    site_active(t->proc, s) >= (unsigned)d->maxactive)
			return true;
	}
	return t->nrets >= MAX_URETPROBE_DEPTH;
}

/* Replace the return address of the function entered at @s. */
static void hijack_return(struct thread *t, struct site *s,
			  const struct dp_regs *regs)
{
	struct proc *p = t->proc;
	struct ret_inst *ri;
	uint64_t ret;

	/*
	 * Instances below this frame's return-address slot belong to frames
	 * that are gone (left by longjmp): drop them now, as the kernel's
	 * cleanup_return_instances() does, so they do not fill the stack.
	 */
	if (dp_mm_read(&p->mm, regs->sp, &ret, 8))
		goto miss;
	/* ... and one for this very slot, unless the slot still holds the
	 * trampoline (a tail call chaining to it), was left there too */
	while (t->nrets && (t->rets[t->nrets - 1].sp < regs->sp ||
			    (t->rets[t->nrets - 1].sp == regs->sp &&
			     ret != p->tramp)))
		drop_return(p, &t->rets[--t->nrets]);
	if (over_limit(t, s))
		goto miss;
	if (t->nrets == t->cap) {
		unsigned cap = t->cap ? 2 * t->cap : 8;
		struct ret_inst *v = realloc(t->rets, cap * sizeof(*v));

		if (!v)
			goto miss;
		t->rets = v;
		t->cap = cap;
	}
	ri = &t->rets[t->nrets];
	memset(ri, 0, sizeof(*ri));
	/* a tail call from another probed function: chain to its instance */
	if (ret == p->tramp) {
		if (!t->nrets)
			goto miss;
		ret = t->rets[t->nrets - 1].orig_ret;
		ri->chained = true;
	} else if (dp_mm_write(&p->mm, regs->sp, &p->tramp, 8)) {
		goto miss;
	}
	ri->sp = regs->sp;
	ri->orig_ret = ret;
	ri->site = s;
	for (int i = 0; i < DP_NR_REG_ARGS; i++)
		ri->args[i] = dp_reg_get(regs, dp_reg_arg(i));
	t->nrets++;
	return;
miss:
	miss_returns(s);
	p->tracer->stats.missed++;
}

static int step_over(struct thread *t, struct site *s, struct dp_regs *regs)
{
	struct dp_insn_mem mem = { mem_read, mem_write, &t->proc->mm };
	struct dp_regs r = *regs;
	int err;

	if (dp_insn_needs_slot(&s->insn)) {
		regs->ip = s->slot;
		return 0;
	}
	err = dp_insn_emulate(&s->insn, &r, &mem);
	if (!err) {
		*regs = r;
		return 0;
	}
	/* let the real access fault, from the fault slot, for the target */
	err = site_build_fault_slot(t->proc, s);
	if (err)
		return err;
	regs->ip = s->slot;
	return 0;
}

static int site_roles(struct thread *t, struct site *s)
{
	struct proc *p = t->proc;
	char why[256] = "";
	int err = 0;

	if (s->roles & ROLE_UNWIND)
		rets_restore(t, true);
	if (s->roles & (ROLE_ENTRY | ROLE_DLBRK)) {
		/* at the launched program's entry every initial library is
		 * mapped: a probe that still does not resolve is an error
		 * (in a program exec'd later it waits, as on the agent) */
		bool entry = s->roles & ROLE_ENTRY;
		bool initial = entry && !p->armed_libs && !p->silent &&
			       !p->execd;

		if (entry) {
			s->roles &= ~ROLE_ENTRY;
			p->armed_libs = true;
		}
		if (dp_proc_refresh(p->sym, NULL, why, sizeof(why)) == 0) {
			sites_prune_unmapped(p);
			err = proc_arm_probes(p, initial, why, sizeof(why));
			proc_arm_internal(p);
		}
		if (err)
			tracer_log(p->tracer, "dprobe: %s\n", why);
		else if (entry)
			p->started = true;
	}
	return err;
}

/* The function entered at @s returned to the trampoline. */
static void emit_returns(struct thread *t, const struct ret_inst *ri,
			 const struct dp_regs *regs)
{
	struct dp_regs r = *regs;
	struct site *s = ri->site;
	struct hit h;

	if (!s)
		return;	/* its code was unmapped meanwhile (dlclose) */

	r.ip = ri->orig_ret;
	hit_init(&h, t, &r);
	h.ctx.func = s->addr;
	h.ctx.ret_ip = ri->orig_ret;
	h.ctx.ip = s->addr;
	h.ctx.entry_args = ri->args;
	h.ctx.n_entry_args = DP_NR_REG_ARGS;
	for (unsigned i = s->nprobes; i-- > 0;) {
		struct dp_probe *pr = s->probes[i];

		if (!pr->def.is_return)
			continue;
		if (pr->def.kind == DP_KIND_KPROBE)
			pr->nhit++;
		emit(&h, pr);
	}
}

int rets_complete(struct thread *t, struct dp_regs *regs)
{
	int i = (int)t->nrets - 1;
	uint64_t orig = 0;

	while (i >= 0 && t->rets[i].sp + 8 != regs->sp)
		i--;
	if (i < 0)
		return -ENOENT;
	while (t->nrets > (unsigned)i + 1)
		drop_return(t->proc, &t->rets[--t->nrets]);
	while (t->nrets && t->rets[t->nrets - 1].sp + 8 == regs->sp) {
		const struct ret_inst *ri = &t->rets[--t->nrets];

		emit_returns(t, ri, regs);
		orig = ri->orig_ret;
	}
	regs->ip = orig;
	return 0;
}

static int trampoline_hit(struct thread *t, struct dp_regs *regs)
{
	if (!rets_complete(t, regs))
		return 0;
	/* no instance for this frame: nothing to return to; the kernel's
	 * uretprobes send SIGILL in this case */
	tracer_log(t->proc->tracer, "dprobe: thread %d returned through the "
		   "trampoline with no pending return (sp 0x%lx)\n", t->tid,
		   (unsigned long)regs->sp);
	t->pending_sig = SIGILL;
	return 0;
}

int hit_handle(struct thread *t, struct dp_regs *regs)
{
	struct proc *p = t->proc;
	uint64_t addr = regs->ip - 1;
	struct dp_regs r;
	struct site *s;
	struct hit h;
	int err;

	if (p->tramp && addr == p->tramp)
		return trampoline_hit(t, regs) ? -ENOENT : 1;
	s = site_find(p, addr);
	if (!s)
		return 0;	/* the target's own int3 (or int $3) */
	if (!s->armed) {
		/* an int3 of ours taken just before it was removed: rerun */
		regs->ip = addr;
		return 1;
	}
	if (s->roles && (err = site_roles(t, s)) < 0)
		return err;
	/* the site may have been pruned and re-made by a dlopen refresh */
	s = site_find(p, addr);
	if (!s)
		return regs->ip = addr, 1;
	r = *regs;
	r.ip = addr;	/* %ip reads as the probed address */
	hit_init(&h, t, &r);
	h.ctx.ip = addr;
	h.ctx.foffs_base = s->foffs_base;
	for (unsigned i = s->nprobes; i-- > 0;) {
		struct dp_probe *pr = s->probes[i];

		/* kprobe_profile counts a return probe when it fires,
		 * uprobe_profile when its function is entered */
		if (!pr->def.is_return || pr->def.kind == DP_KIND_UPROBE)
			pr->nhit++;
		if (!pr->def.is_return)
			emit(&h, pr);
	}
	for (unsigned i = 0; i < s->nprobes; i++) {
		if (s->probes[i]->def.is_return) {
			hijack_return(t, s, &r);
			break;
		}
	}
	return step_over(t, s, regs) ? -EFAULT : 1;
}

void rets_restore(struct thread *t, bool count_dropped)
{
	struct proc *p = t->proc;

	while (t->nrets) {
		const struct ret_inst *ri = &t->rets[--t->nrets];

		restore_slot(p, ri);
		if (count_dropped)
			count_drop(p->tracer, ri);
	}
}

void rets_discard(struct thread *t)
{
	/* the thread is gone: its stack is not written */
	while (t->nrets)
		count_drop(t->proc->tracer, &t->rets[--t->nrets]);
}

/* A fork copies the stack: the child's instances are the parent's, with
 * sites looked up again in the child's own site table. */
int rets_copy(struct thread *dst, const struct thread *src)
{
	if (!src->nrets)
		return 0;
	dst->rets = malloc(src->nrets * sizeof(*dst->rets));
	if (!dst->rets)
		return -ENOMEM;
	memcpy(dst->rets, src->rets, src->nrets * sizeof(*dst->rets));
	dst->nrets = dst->cap = src->nrets;
	for (unsigned i = 0; i < dst->nrets; i++)
		dst->rets[i].site = src->rets[i].site ?
			site_find(dst->proc, src->rets[i].site->addr) : NULL;
	return 0;
}
