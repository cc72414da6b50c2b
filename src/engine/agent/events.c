// SPDX-License-Identifier: GPL-2.0
/*
 * Probe events inside the traced process, on top of the kprobes API (see
 * events.h).
 *
 * dprobe parses, resolves and checks every definition; what arrives here
 * is one location per message: an address, the definition line (parsed
 * again, for its fetch program) and the event id.  Locations at the same
 * address share one site: one kprobe for the entry probes, one kretprobe
 * for the return probes, whose handlers run the site's probes in the
 * order the ptrace engine runs them, so both engines produce the same
 * records in the same order.
 *
 * Hit path: the handler stamps the hit (clock.h: the TSC or the vDSO's
 * CLOCK_MONOTONIC, and the CPU, without a system call), reserves the probe's largest record in the thread's ring,
 * runs the fetch program straight into it (faulting reads are recovered by
 * dp_probe_read()), and commits what it used.  Nothing here takes a lock,
 * allocates, or calls a library function; a thread's first hit claims its
 * ring and notes its tid and comm with raw system calls, once.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "dprobe/tracepoint.h"
#include "engine/agent/agent.h"
#include "engine/agent/clock.h"
#include "engine/agent/events.h"
#include "engine/agent/protocol.h"
#include "event/agg.h"
#include "event/record.h"
#include "lang/layout.h"
#include "lang/errors.h"
#include "lang/fetch.h"
#include "lang/lang.h"
#include "util/ptab.h"

#define container_of(p, type, member) \
	((type *)((char *)(p) - __builtin_offsetof(type, member)))

/* Return probes without r<N> (uprobe places, fprobes, the tracers') take
 * a thread's return stack (KPROBE_FLAG_RP_THREAD); where there is none (a
 * kernel without membarrier()), a pool as large as the kernel allows. */
#define EV_DEFAULT_MAXACTIVE KRETPROBE_MAXACTIVE_MAX

struct ev_site;

/*
 * The common case made cheap: every argument a register stored as is
 * (%di, $arg1, $retval...).  The record is then a fixed number of words
 * written straight from the register frame; anything else runs the
 * fetch program.
 */
#define EV_FAST_MAX_ARGS 8
#define EV_FAST_MAX_SIZE 128

struct ev_fast {
	unsigned n;			/* 0: no fast path */
	uint32_t size;			/* the whole record */
	struct {
		uint16_t reg;		/* byte offset in struct pt_regs */
		uint16_t dst;		/* byte offset in the record */
		uint8_t size;
	} arg[EV_FAST_MAX_ARGS];
};

struct ev_probe {
	struct ev_probe *all_next;	/* every location, in arrival order */
	struct ev_site *site;
	unsigned slot, id;
	uint32_t flags;			/* DP_AGENT_F_* */
	uint32_t rec_max;		/* payload bytes reserved per hit */
	/* DP_AGENT_F_AGG: how many hist tables its hits are added to (agg) */
	unsigned nagg;
	bool counter;			/* count-only: a ring counter, no record */
	bool fast;			/* @fp holds the record's recipe */
	bool off;			/* switched off (SLOT): records nothing */
	bool stack;			/* DP_AGENT_F_STACK: the user stack too */
	bool at_entry;			/* DP_AGENT_F_ENTRY: at a function's start */
	bool timed;			/* DP_AGENT_F_LAT: a call's duration */
	bool stackmax;			/* DP_AGENT_F_STACKMAX: the stack tracer */
	uint32_t snap;			/* DP_AGENT_F_DWARF: stack bytes to copy */
	struct ev_fast fp;
	uint64_t addr, foffs;
	struct dp_probe_def def;
	/* DP_AGENT_F_AGG: the hist tables its hits are added to (AGG) */
	struct dp_agg_spec agg[DP_AGG_PER_PROBE];
};

struct ev_site {
	struct ev_site *next;
	uint64_t addr;
	struct ev_probe **probes;	/* fixed while registered */
	unsigned n;
	bool has_entry, has_return;
	bool is_tp;			/* @addr is a struct dp_tracepoint */
	bool timed;			/* a DP_AGENT_F_LAT probe: entries stamped */
	bool tp_on;			/* its probe records (hit path) */
	bool registered;
	struct kprobe kp;		/* entry probes */
	struct kretprobe rp;		/* return probes */
	/* not read by a hit: */
	int err;			/* registration outcome */
	char why[160];			/* ...and its text, or "" */
	uint64_t ref_ctr;		/* counter: +1 while registered; 0: none */
};

/* The entry arguments a return probe's $argN reads; the entry's stamp
 * on a timed site (0: the call was entered before it was timed). */
struct ev_ret_data {
	uint64_t args[DP_NR_REG_ARGS];
	uint64_t ts;
};

struct ev_thread {
	bool quiet;			/* the agent's own work: no events */
	/* this thread's memory may be a spawning child's too (spawn.c):
	 * EV_SPAWN inside posix_spawn() & co, EV_VFORK after vfork() */
	uint8_t spawning;
	/* with -f, the ring a spawning child records into (claimed in the
	 * child, on this shared memory, for its tid) */
	int child_tid;
	struct dp_ring *child_ring;
	unsigned gen;			/* ev_gen when the fields were set */
	int tid;
	struct dp_ring *ring;		/* NULL: none was free */
	unsigned agg_slot;		/* 1 + its hist table slot; 0: none yet */
	/* the stack tracer: the mapping its stack pointer was last in
	 * (the top of its stack is the end); 0s: not looked up yet */
	uint64_t stk_lo, stk_hi;
	char comm[DP_TASK_COMM_LEN];
};

static __thread struct ev_thread ev_tls
	__attribute__((tls_model("initial-exec")));

/* Under the control thread (one at a time), except where said. */
static struct ev_probe *probes, **probes_tail = &probes;
static struct ev_site *sites;
/* the sites by address, built again after sites go (site_for()) */
static struct dp_ptab site_tab;
static bool site_tab_ok;
static struct dp_ring_set rings;
/* read by the hit path: */
static struct dp_ring_set_hdr *ev_hdr;
static unsigned ev_gen;		/* a new ring set: threads claim again */
/* the session's aggregation tables (event/agg.h, AGGMEM): NULL, none */
static uint8_t *agg_base;
static uint64_t agg_size;
static bool ev_follow;		/* -f: spawning children are traced */
/* the stack tracer: the deepest stack recorded, in bytes from the top of
 * its thread's stack (hit path: compared, raised by compare-exchange) */
static uint64_t ev_stack_max;
static int ev_pid;

const char *dp_ev_clock_name(void)
{
	return dp_clock_base();
}

/* ---- the hit path ------------------------------------------------------- */

/* A thread's first hit (or its first since new rings came): raw calls. */
static __attribute__((noinline, cold)) struct ev_thread *
thread_setup(struct ev_thread *t, unsigned gen)
{
	struct dp_ring_set_hdr *hdr = __atomic_load_n(&ev_hdr, __ATOMIC_ACQUIRE);

	t->ring = NULL;
	t->agg_slot = 0;
	t->stk_lo = t->stk_hi = 0;
	t->tid = (int)dp_raw_syscall(SYS_gettid, 0, 0, 0);
	dp_raw_syscall(SYS_prctl, PR_GET_NAME, (long)t->comm, 0);
	t->comm[DP_TASK_COMM_LEN - 1] = '\0';
	if (hdr)
		t->ring = dp_ring_claim(hdr, ev_pid, t->tid);
	if (t->ring)
		for (int i = 0; i < DP_TASK_COMM_LEN; i++)
			t->ring->comm[i] = t->comm[i];
	t->gen = gen;
	return t;
}

static inline struct ev_thread *ev_thread(void)
{
	struct ev_thread *t = &ev_tls;
	unsigned gen = __atomic_load_n(&ev_gen, __ATOMIC_ACQUIRE);

	if (__builtin_expect(t->gen != gen, 0))
		return thread_setup(t, gen);
	return t;
}

static int read_mem(void *priv, uint64_t addr, void *dst, size_t len)
{
	(void)priv;
	return dp_probe_read(dst, (const void *)(uintptr_t)addr, len) ?
		-EFAULT : 0;
}

/* A string with its NUL within @max bytes, or -EFAULT (as the engines
 * agree: a string cut short is a fault, not a shorter string). */
static long read_str(void *priv, uint64_t addr, char *dst, size_t max)
{
	long n = dp_probe_read_str(dst, (const void *)(uintptr_t)addr, max);
	char last;

	(void)priv;
	if (n == (long)max &&
	    (read_mem(NULL, addr + max - 1, &last, 1) || last))
		return -EFAULT;
	return n;
}

static void ctx_init(struct dp_hit_ctx *ctx, const struct pt_regs *regs,
		     const struct ev_thread *t)
{
	*ctx = (struct dp_hit_ctx){
		/* struct pt_regs is laid out as user_regs_struct */
		.regs = (const struct dp_regs *)regs,
		.read_mem = read_mem,
		.read_str = read_str,
		.comm = t->comm,
		.pid = t->tid,
	};
}

/* Room a stack takes after a record: padding to 8, frames, the word. */
#define EV_STACK_ROOM (7u + DP_AGENT_STACK_BYTES(DP_STACK_MAX))
/* ...and with a depth for each frame (DP_AGENT_F_STACKMAX) */
#define EV_DEPTHS_ROOM (EV_STACK_ROOM + 8u * DP_STACK_MAX)

/* The same for @p: the frames, or its snapshot (DP_AGENT_F_DWARF). */
static inline uint32_t stack_room(const struct ev_probe *p)
{
	return p->snap ? DP_AGENT_SNAP_BYTES(p->snap) :
	       p->stackmax ? EV_DEPTHS_ROOM : EV_STACK_ROOM;
}

/*
 * The stack tracer (the kernel's trace_stack.c): a thread's stack depth
 * at a function's entry is the top of its stack less the stack pointer.
 * The top is the end of the mapping the stack pointer is in, looked up
 * again only when the stack pointer leaves the mapping last found (a
 * main stack grown by a page, another stack switched to).
 */
static __attribute__((noinline, cold)) uint64_t
stack_top_slow(struct ev_thread *t, uint64_t sp)
{
	/* none found (no /proc, no descriptor left): this thread's stack
	 * is not checked again until its next ring, and the range kept
	 * is empty at any address but 0, so no hit looks again */
	if (dp_stack_mapping(sp, &t->stk_lo, &t->stk_hi)) {
		t->stk_lo = 1;
		t->stk_hi = 0;
	}
	return t->stk_hi;
}

/* Whether the stack at @regs is deeper than any recorded: then it is
 * the deepest now, and this hit records it. */
static inline bool stack_deeper(struct ev_thread *t, const struct pt_regs *regs)
{
	uint64_t sp = regs->sp, top = t->stk_hi, cur, d;

	if (__builtin_expect(sp - t->stk_lo >= t->stk_hi - t->stk_lo, 0))
		top = stack_top_slow(t, sp);
	if (!top)
		return false;
	d = top - sp;
	cur = __atomic_load_n(&ev_stack_max, __ATOMIC_RELAXED);
	while (d > cur)
		if (__atomic_compare_exchange_n(&ev_stack_max, &cur, d, false,
						__ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			return true;
	return false;
}

/* The frames of a new deepest stack, then their depths (protocol.h);
 * the bytes written at @fr. */
static size_t add_depths(uint64_t *fr, const struct dp_hit_ctx *ctx)
{
	const struct pt_regs *regs = (const struct pt_regs *)(const void *)ctx->regs;
	unsigned n = dp_user_stack_depths(regs, ctx->ip, ev_tls.stk_hi, fr,
					  fr + DP_STACK_MAX, DP_STACK_MAX);
	uint64_t w = DP_AGENT_DEPTHS_WORD(n);

	/* the depths right after the frames: a copy down, in order */
	for (unsigned i = 0; i < n; i++)
		fr[n + i] = fr[DP_STACK_MAX + i];
	__builtin_memcpy(fr + 2 * n, &w, 8);
	return 8 * (2 * (size_t)n + 1);
}

/*
 * The user stack at a tracepoint: from the function that fired it, as
 * the kernel's stacks of its tracepoints start (the tracepoint's own
 * frames skipped).  on_tracepoint() passes its own frame in %bp: the
 * frame pointer of its caller, the tracepoint's __dp_tp_call_NAME(),
 * and the return into it.  That caller's frame holds the return into
 * the function that fired the tracepoint and the frame pointer to walk
 * on from.  A program built without frame pointers gives a wrong or
 * short stack, as anywhere; at least the return into
 * __dp_tp_call_NAME(), when its frame pointer is none.
 */
static unsigned tp_stack(const struct dp_hit_ctx *ctx, uint64_t *out)
{
	struct pt_regs r = *(const struct pt_regs *)(const void *)ctx->regs;
	const uint64_t *own = (const uint64_t *)(uintptr_t)r.bp;
	uint64_t fp = own[0], f[2];

	/* the caller's frame lies above ours (its two words), as
	 * dp_user_stack() checks every frame */
	if (dp_frame_check(fp, r.bp + 16, r.bp) != DP_FRAME_NEXT ||
	    dp_probe_read(f, (const void *)(uintptr_t)fp, sizeof(f)) ||
	    !f[1]) {
		out[0] = own[1];
		return 1;
	}
	r.bp = f[0];
	return dp_user_stack(&r, dp_kretprobe_real_ret(f[1], fp + 8), 0,
			     false, out, DP_STACK_MAX);
}

/*
 * The user stack after the @len bytes of the record at @buf, as
 * protocol.h lays it out; the record's new length.  The frame pointers
 * are the program's and are read without faulting (stack.c).
 */
static __attribute__((noinline)) size_t
add_stack(uint8_t *buf, size_t len, const struct ev_probe *p,
	  const struct dp_hit_ctx *ctx)
{
	size_t at = (len + 7) & ~(size_t)7;
	uint64_t *fr = (uint64_t *)(void *)(buf + at);
	uint64_t w;
	unsigned n;

	for (size_t i = len; i < at; i++)
		buf[i] = 0;
	if (p->stackmax)
		return at + add_depths(fr, ctx);
	if (p->snap)
		return at + dp_user_stack_snap(
			(const struct pt_regs *)(const void *)ctx->regs,
			p->def.is_return ? ctx->func : ctx->ip,
			p->def.is_return ? ctx->ret_ip : 0, buf + at, p->snap);
	/* struct dp_regs is laid out as struct pt_regs */
	if (p->site->is_tp)
		n = tp_stack(ctx, fr);
	else
		n = dp_user_stack((const struct pt_regs *)(const void *)ctx->regs,
				  p->def.is_return ? ctx->func : ctx->ip,
				  p->def.is_return ? ctx->ret_ip : 0,
				  p->at_entry, fr, DP_STACK_MAX);
	w = DP_AGENT_STACK_WORD(n);
	__builtin_memcpy(fr + n, &w, 8);
	return at + 8 * ((size_t)n + 1);
}

/*
 * A ring's pages are mapped ahead of the records, a chunk at a time, in
 * its first lap: a first touch costs a page fault (20 us and more on a
 * paravirtualised VM, against under 2 us a page for MADV_POPULATE_WRITE),
 * and a large --buffer-size would otherwise pay one every 146 records.
 * Per thread: the ring last filled, and how far into it pages are
 * mapped (UINT64_MAX: all, or the kernel cannot populate).
 */
#define PREFAULT_CHUNK	(256u << 10)
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

static __thread struct {
	const struct dp_ring *ring;
	uint64_t mapped;
} ev_prefault __attribute__((tls_model("initial-exec")));

static __attribute__((noinline, cold)) void prefault_slow(struct dp_ring *r)
{
	uint64_t size = r->mask + 1, chunk;

	if (ev_prefault.ring != r) {
		ev_prefault.ring = r;
		ev_prefault.mapped = 0;
	}
	chunk = size < PREFAULT_CHUNK ? size : PREFAULT_CHUNK;
	while (ev_prefault.mapped < size &&
	       ev_prefault.mapped <= (r->head & r->mask) + chunk / 2) {
		if (dp_raw_syscall(SYS_madvise,
				   (long)(dp_ring_data(r) + ev_prefault.mapped),
				   (long)chunk, MADV_POPULATE_WRITE)) {
			ev_prefault.mapped = UINT64_MAX;
			return;
		}
		ev_prefault.mapped += chunk;
	}
	if (ev_prefault.mapped >= size)
		ev_prefault.mapped = UINT64_MAX;
}

/* After a record: the next chunk mapped before the records reach it. */
static inline void prefault(struct dp_ring *r)
{
	if (__builtin_expect(ev_prefault.ring != r, 0) ||
	    __builtin_expect(ev_prefault.mapped != UINT64_MAX &&
			     (r->head & r->mask) + PREFAULT_CHUNK / 2 >=
			     ev_prefault.mapped, 0))
		prefault_slow(r);
}

static void record(struct dp_ring *r, const struct ev_probe *p,
		   struct dp_hit_ctx *ctx, uint64_t ts, uint32_t cpu)
{
	void *buf = dp_ring_reserve(r, p->rec_max +
				    (p->stack ? stack_room(p) : 0), ts,
				    DP_AGENT_INFO(cpu, p->slot));
	size_t len = 0;

	if (!buf)
		return;		/* counted as lost by the ring */
	if (!(p->flags & DP_AGENT_F_COUNT)) {
		ctx->foffs_base = p->foffs;
		len = dp_fetch_record(&p->def, p->id, ctx, buf, p->rec_max);
		if (p->stack && len)
			len = add_stack(buf, len, p, ctx);
	}
	dp_ring_commit_len(r, buf, (uint32_t)len);
	prefault(r);
}


/* A register-only record (ev_fast) into @buf (8-byte aligned, padded to
 * 8 bytes): stores, no interpretation. */
static inline void fill_fast(uint8_t *buf, const struct ev_probe *p,
			     const struct pt_regs *regs,
			     const struct ev_thread *t, uint64_t ip,
			     uint64_t ret_ip)
{
	struct dp_trace_entry ent = { .type = (uint16_t)p->id, .pid = t->tid };

	for (uint32_t i = 0; i < (p->fp.size + 7) / 8; i++)
		((uint64_t *)(void *)buf)[i] = 0;
	__builtin_memcpy(buf, &ent, sizeof(ent));
	if (p->site->is_tp)
		ip = 0;				/* a tracepoint's record has no place */
	else
		__builtin_memcpy(buf + DP_REC_IP_OFF, &ip, 8); /* or __probe_func */
	if (p->def.is_return)
		__builtin_memcpy(buf + DP_REC_RET_IP_OFF, &ret_ip, 8);
	for (unsigned i = 0; i < p->fp.n; i++) {
		uint64_t v = *(const uint64_t *)(const void *)
			((const char *)regs + p->fp.arg[i].reg);
		uint8_t *d = buf + p->fp.arg[i].dst;

		switch (p->fp.arg[i].size) {
		case 1: *d = (uint8_t)v; break;
		case 2: __builtin_memcpy(d, &v, 2); break;
		case 4: __builtin_memcpy(d, &v, 4); break;
		default: __builtin_memcpy(d, &v, 8); break;
		}
	}
}

static inline void record_fast(struct dp_ring *r, const struct ev_probe *p,
			       const struct pt_regs *regs, const struct ev_thread *t,
			       uint64_t ip, uint64_t ret_ip, uint64_t ts,
			       uint32_t cpu)
{
	uint8_t *buf = dp_ring_reserve(r, p->fp.size, ts,
				       DP_AGENT_INFO(cpu, p->slot));

	if (!buf)
		return;
	fill_fast(buf, p, regs, t, ip, ret_ip);
	dp_ring_commit(r);
	prefault(r);
}

/* A hit with nowhere to go: a thread without a ring, or the agent's own. */
static __attribute__((noinline, cold)) int no_ring(const struct ev_thread *t)
{
	struct dp_ring_set_hdr *hdr = __atomic_load_n(&ev_hdr, __ATOMIC_ACQUIRE);

	if (hdr && !t->quiet)
		dp_ring_set_note_lost(hdr);
	return 0;
}

/*
 * A spawning child's ring, with -f: a ring of the parent's set claimed for
 * the child's tid, so that dprobe reads its records as the child's (its
 * exec'd image joins with rings of its own).  Kept in the parent thread's
 * memory, which the child shares while the parent waits.
 */
static __attribute__((noinline, cold)) struct dp_ring *
child_ring(struct ev_thread *t, int tid)
{
	struct dp_ring_set_hdr *hdr = __atomic_load_n(&ev_hdr, __ATOMIC_ACQUIRE);
	struct dp_ring *r;
	char comm[DP_TASK_COMM_LEN];

	if (!__atomic_load_n(&ev_follow, __ATOMIC_RELAXED) || !hdr)
		return NULL;
	if (t->child_tid == tid)
		return t->child_ring;
	r = dp_ring_claim(hdr, tid, tid);
	if (r) {
		dp_raw_syscall(SYS_prctl, PR_GET_NAME, (long)comm, 0);
		comm[DP_TASK_COMM_LEN - 1] = '\0';
		for (int i = 0; i < DP_TASK_COMM_LEN; i++)
			r->comm[i] = comm[i];
	}
	t->child_tid = tid;
	t->child_ring = r;
	return r;
}

/*
 * Off the fast path: the ring a hit records into, or NULL.  While this
 * thread spawns (vfork, posix_spawn, system, popen), a child may be
 * running on its stack and memory until its exec: the one system call
 * tells them apart.  The child's hits go to a ring of its own with -f,
 * nowhere without; the parent's go on as usual, and after a vfork() its
 * first hit ends the check (the child has exec'd or exited by then).
 */
static __attribute__((noinline, cold)) struct dp_ring *
slow_ring(struct ev_thread *t)
{
	if (t->ring && !t->quiet && t->spawning) {
		int tid = (int)dp_raw_syscall(SYS_gettid, 0, 0, 0);

		if (tid != t->tid)
			return child_ring(t, tid);
		t->spawning &= (uint8_t)~EV_VFORK;
		return t->ring;
	}
	no_ring(t);
	return NULL;
}

void dp_ev_set_follow(bool on)
{
	__atomic_store_n(&ev_follow, on, __ATOMIC_RELAXED);
}

void dp_ev_spawning(unsigned flag, bool on)
{
	struct ev_thread *t = ev_thread();

	/* a child's ring is its own: never the next child's */
	t->child_tid = 0;
	t->child_ring = NULL;
	if (on)
		t->spawning |= (uint8_t)flag;
	else
		t->spawning &= (uint8_t)~flag;
}

/*
 * The thread's hist table slot (event/agg.h), claimed at its first hit
 * that aggregates, and again after a fork or new rings (thread_setup()).
 * A vfork child runs on its parent thread's slot while the parent waits.
 */
static __attribute__((noinline, cold)) unsigned agg_claim(struct ev_thread *t,
							  uint8_t *base)
{
	unsigned k = dp_agg_claim(base, dp_agg_owner_word(ev_pid, t->tid));

	t->agg_slot = k + 1;
	return k;
}

/*
 * A hit of a probe whose hist triggers are kept here: its record is made
 * on the stack, never in the ring, and added to each table.
 */
static void agg_record(const struct ev_probe *p, const uint8_t *rec,
		       size_t len, struct ev_thread *t)
{
	uint8_t *base = __atomic_load_n(&agg_base, __ATOMIC_ACQUIRE);
	unsigned k;

	if (!base)
		return;
	k = t->agg_slot ? t->agg_slot - 1 : agg_claim(t, base);
	for (unsigned i = 0; i < p->nagg; i++) {
		const struct dp_agg_spec *s = &p->agg[i];

		if (len >= s->rec_size)
			dp_agg_add(base + s->off + k * dp_agg_stride(s->bits),
				   s, rec, t->comm, k != 0);
	}
}

/* ...its record made by the fetch program (@ctx set up for the hit) */
static __attribute__((noinline)) void aggregate(const struct ev_probe *p,
						struct dp_hit_ctx *ctx,
						struct ev_thread *t)
{
	uint8_t buf[DP_AGG_REC_MAX] __attribute__((aligned(8)));

	ctx->foffs_base = p->foffs;
	agg_record(p, buf, dp_fetch_record(&p->def, p->id, ctx, buf,
					   sizeof(buf)), t);
}

/* ...or from registers alone (ev_fast) */
static __attribute__((noinline)) void aggregate_fast(const struct ev_probe *p,
						     const struct pt_regs *regs,
						     struct ev_thread *t,
						     uint64_t ip, uint64_t ret_ip)
{
	uint8_t buf[DP_AGG_REC_MAX] __attribute__((aligned(8)));

	if (p->fp.size > sizeof(buf))
		return;
	fill_fast(buf, p, regs, t, ip, ret_ip);
	agg_record(p, buf, p->fp.size, t);
}

/*
 * A hit of a timed return probe (DP_AGENT_F_LAT): no fetch, its record is
 * the call's duration from @from, the stamp its entry left, to @to (the
 * layout protocol.h gives), added to its tables.
 */
static __attribute__((noinline)) void aggregate_timed(const struct ev_probe *p,
						      struct ev_thread *t,
						      uint64_t from, uint64_t to,
						      uint64_t ret_ip)
{
	uint64_t rec[DP_AGG_LAT_SIZE / 8];
	struct dp_trace_entry ent = { .type = (uint16_t)p->id, .pid = t->tid };
	const struct dp_agg_owners *o = (const void *)
		__atomic_load_n(&agg_base, __ATOMIC_ACQUIRE);

	if (!from || !o)
		return;
	__builtin_memcpy(rec, &ent, sizeof(ent));
	rec[DP_REC_FUNC_OFF / 8] = p->site->addr;
	rec[DP_REC_RET_IP_OFF / 8] = ret_ip;
	rec[DP_AGG_LAT_NS_OFF / 8] = to <= from ? 0 :
		dp_agg_ticks_ns(to - from, __atomic_load_n(&o->tick_mult,
							   __ATOMIC_RELAXED));
	rec[DP_AGG_LAT_PID_OFF / 8] = (uint64_t)ev_pid;
	agg_record(p, (const uint8_t *)rec, sizeof(rec), t);
}

/*
 * The entry probes of a site, @regs->ip being the probed address.
 * Count-only probes cost one increment; the clock and the fetch context
 * are only set up for the first record.
 */
static inline void site_entry(const struct ev_site *s, struct pt_regs *regs)
{
	struct ev_thread *t = ev_thread();
	struct dp_hit_ctx ctx;
	uint32_t cpu = 0;
	uint64_t ts = 0;
	bool ready = false, stamped = false;

	struct dp_ring *ring = t->ring;

	if (__builtin_expect(!ring || t->quiet || t->spawning, 0) &&
	    !(ring = slow_ring(t)))
		return;
	/* the ptrace engine's order: the last added first; n first: a probe
	 * appended live is in the array before n counts it */
	unsigned n = __atomic_load_n(&s->n, __ATOMIC_ACQUIRE);
	struct ev_probe *const *v = __atomic_load_n(&s->probes, __ATOMIC_ACQUIRE);

	for (unsigned i = n; i-- > 0;) {
		const struct ev_probe *p = v[i];

		if (p->def.is_return || __atomic_load_n(&p->off, __ATOMIC_RELAXED))
			continue;
		if (p->counter) {
			dp_ring_local_inc(&ring->counters[p->slot]);
			if (!p->nagg)
				continue;
		}
		if (p->nagg && p->fast) {
			aggregate_fast(p, regs, t, s->addr, 0);
			continue;	/* no time, no ring */
		}
		if (p->stackmax && !stack_deeper(t, regs))
			continue;
		/* a fast probe's record is made from the registers alone */
		if (!ready && !p->fast) {
			ctx_init(&ctx, regs, t);
			ctx.ip = s->addr;
			ready = true;
		}
		if (p->nagg) {
			aggregate(p, &ctx, t);
			continue;
		}
		if (!stamped) {
			ts = dp_clock_now(&cpu);
			stamped = true;
		}
		if (p->fast)
			record_fast(ring, p, regs, t, s->addr, 0, ts, cpu);
		else
			record(ring, p, &ctx, ts, cpu);
	}
}

static int on_entry(struct kprobe *kp, struct pt_regs *regs)
{
	struct ev_site *s = container_of(kp, struct ev_site, kp);
	unsigned long ip = regs->ip;

	/* %ip reads as the probed address, as on the ptrace engine (a
	 * kprobe's regs->ip is past the int3) */
	regs->ip = s->addr;
	site_entry(s, regs);
	regs->ip = ip;
	return 0;
}

/*
 * The probe registered on an application tracepoint: called by the
 * tracepoint as probe(data, args...), every argument an integer or a
 * pointer (tracepoint.h allows nothing else), so they arrive in the
 * argument registers and then on the stack, the unused ones holding
 * whatever is there.  The fetch programs read them as at the entry of
 * a function called with the tracepoint's arguments: $argN, %di...
 */
static void on_tracepoint(void *data, uint64_t a1, uint64_t a2, uint64_t a3,
			  uint64_t a4, uint64_t a5, uint64_t a6, uint64_t a7,
			  uint64_t a8)
{
	const struct ev_site *s = data;
	/* the stack as the callee sees it: a return address, then $arg7 */
	uint64_t stack[3] = { 0, a7, a8 };
	struct pt_regs regs;

	if (!__atomic_load_n(&s->tp_on, __ATOMIC_RELAXED))
		return;
	/*
	 * Field by field: an initialiser would clear the whole frame with a
	 * string instruction (this file is built -minline-all-stringops),
	 * slower than the rest of the hit.  The registers that carry no
	 * argument read as 0, the segment registers too (%cs and %ss can
	 * be fetched).
	 */
	regs.di = a1;
	regs.si = a2;
	regs.dx = a3;
	regs.cx = a4;
	regs.r8 = a5;
	regs.r9 = a6;
	regs.sp = (uintptr_t)stack;
	regs.ip = s->addr;
	/* our frame (built with frame pointers): our caller's frame
	 * pointer and the return into it, where a stack is walked from
	 * (tp_stack()) */
	regs.bp = (uintptr_t)__builtin_frame_address(0);
	regs.ax = regs.bx = regs.orig_ax = 0;
	regs.r10 = regs.r11 = regs.r12 = regs.r13 = regs.r14 = regs.r15 = 0;
	regs.flags = regs.fs_base = regs.gs_base = 0;
	regs.cs = regs.ss = regs.ds = regs.es = regs.fs = regs.gs = 0;
	site_entry(s, &regs);
}

static int on_return_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct ev_ret_data *d = (struct ev_ret_data *)ri->data;

	d->args[0] = regs->di;
	d->args[1] = regs->si;
	d->args[2] = regs->dx;
	d->args[3] = regs->cx;
	d->args[4] = regs->r8;
	d->args[5] = regs->r9;
	d->ts = 0;
	return 0;
}

/* ...on a timed site: the call's start too */
static int on_return_entry_timed(struct kretprobe_instance *ri,
				 struct pt_regs *regs)
{
	on_return_entry(ri, regs);
	((struct ev_ret_data *)ri->data)->ts = dp_clock_stamp();
	return 0;
}

static int on_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct kretprobe *rp = get_kretprobe(ri);
	struct ev_site *s = rp ? container_of(rp, struct ev_site, rp) : NULL;
	struct ev_thread *t = ev_thread();
	uint64_t ret_ip = (uint64_t)(uintptr_t)ri->ret_addr;
	struct pt_regs r;
	struct dp_hit_ctx ctx;
	uint32_t cpu = 0;
	uint64_t ts = 0;
	bool stamped = false, ready = false;

	if (!s)
		return 0;
	struct dp_ring *ring = t->ring;

	if (__builtin_expect(!ring || t->quiet || t->spawning, 0) &&
	    !(ring = slow_ring(t)))
		return 0;
	unsigned n = __atomic_load_n(&s->n, __ATOMIC_ACQUIRE);
	struct ev_probe *const *v = __atomic_load_n(&s->probes, __ATOMIC_ACQUIRE);

	for (unsigned i = n; i-- > 0;) {
		const struct ev_probe *p = v[i];

		if (!p->def.is_return || __atomic_load_n(&p->off, __ATOMIC_RELAXED))
			continue;
		if (p->counter) {
			dp_ring_local_inc(&ring->counters[p->slot]);
			if (!p->nagg)
				continue;
		}
		if (!stamped) {
			ts = dp_clock_now(&cpu);
			stamped = true;
		}
		if (p->timed) {
			aggregate_timed(p, t, ((struct ev_ret_data *)ri->data)->ts,
					ts, ret_ip);
			continue;
		}
		if (p->fast && p->nagg) {
			aggregate_fast(p, regs, t, s->addr, ret_ip);
			continue;
		}
		if (p->fast) {
			record_fast(ring, p, regs, t, s->addr, ret_ip, ts, cpu);
			continue;
		}
		if (!ready) {
			r = *regs;
			r.ip = ret_ip;	/* %ip reads where it returns */
			ctx_init(&ctx, &r, t);
			ctx.ip = s->addr;
			ctx.func = s->addr;
			ctx.ret_ip = ret_ip;
			ctx.entry_args = ((struct ev_ret_data *)ri->data)->args;
			ctx.n_entry_args = DP_NR_REG_ARGS;
			ready = true;
		}
		if (p->nagg)
			aggregate(p, &ctx, t);
		else
			record(ring, p, &ctx, ts, cpu);
	}
	return 0;
}

/* ---- definitions (control thread) --------------------------------------- */

void dp_ev_quiet(bool on)
{
	ev_tls.quiet = on;
}

bool dp_ev_quiet_now(void)
{
	return ev_tls.quiet;
}

int dp_ev_rings(int fd)
{
	int ret;

	if (ev_hdr)
		return -EBUSY;
	ret = dp_ring_set_map(&rings, fd);
	if (ret)
		return ret;
	/* the mapping is all a hit needs: the caller closes @fd */
	rings.fd = -1;
	dp_clock_setup();
	ev_pid = getpid();
	__atomic_store_n(&ev_hdr, rings.hdr, __ATOMIC_RELEASE);
	__atomic_add_fetch(&ev_gen, 1, __ATOMIC_RELEASE);
	return 0;
}

bool dp_ev_rings_meet(uintptr_t addr, size_t len)
{
	uintptr_t lo = (uintptr_t)__atomic_load_n(&ev_hdr, __ATOMIC_ACQUIRE);
	uintptr_t alo = (uintptr_t)__atomic_load_n(&agg_base, __ATOMIC_ACQUIRE);

	return (lo && len && addr < lo + rings.map_size && lo < addr + len) ||
	       (alo && len && addr < alo + agg_size && alo < addr + len);
}

int dp_ev_agg_mem(int fd)
{
	struct stat st;
	void *m;

	/* a fork child goes on with its parent's mapping of the same tables */
	if (agg_base)
		return 0;
	if (fstat(fd, &st) || st.st_size < DP_AGG_OWNERS_SIZE)
		return -EINVAL;
	m = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 fd, 0);
	if (m == MAP_FAILED)
		return -errno;
	agg_size = (uint64_t)st.st_size;
	__atomic_store_n(&agg_base, (uint8_t *)m, __ATOMIC_RELEASE);
	return 0;
}

static bool agg_field_ok(const struct dp_agg_field *f, uint32_t rec_size,
			 bool key)
{
	return (f->size == 1 || f->size == 2 || f->size == 4 || f->size == 8) &&
	       (uint32_t)f->off + f->size <= rec_size &&
	       (key ? f->mode <= DP_AGG_BUCKET :
		f->mode == DP_AGG_RAW || f->mode >= DP_AGG_MAX) &&
	       f->mode <= DP_AGG_MIN;
}

int dp_ev_agg(unsigned slot, const struct dp_agg_spec *spec, char *why,
	      size_t whylen)
{
	struct ev_probe *p;

	for (p = probes; p && p->slot != slot; p = p->all_next)
		;
	if (!p || !(p->flags & DP_AGENT_F_AGG))
		return snprintf(why, whylen, "no such probe"), -EINVAL;
	if (p->site && p->site->registered)
		return snprintf(why, whylen, "the probe is armed"), -EBUSY;
	if (p->nagg == DP_AGG_PER_PROBE)
		return snprintf(why, whylen, "too many tables"), -ENOSPC;
	if (!agg_base || spec->bits < DP_AGG_BITS_MIN ||
	    spec->bits > DP_AGG_BITS_MAX || spec->off % 64 ||
	    spec->off < DP_AGG_OWNERS_SIZE || spec->off > agg_size ||
	    dp_agg_group_size(spec->bits) > agg_size - spec->off ||
	    spec->rec_size > DP_AGG_REC_MAX ||
	    spec->nkeys > DP_AGG_MAX_KEYS || spec->nvals > DP_AGG_NVALS ||
	    (p->timed && spec->rec_size > DP_AGG_LAT_SIZE))
		return snprintf(why, whylen, "bad table"), -EINVAL;
	for (unsigned k = 0; k < spec->nkeys; k++)
		if (!agg_field_ok(&spec->key[k], spec->rec_size, true))
			return snprintf(why, whylen, "bad key"), -EINVAL;
	for (unsigned v = 0; v < spec->nvals; v++)
		if (!agg_field_ok(&spec->val[v], spec->rec_size, false))
			return snprintf(why, whylen, "bad value"), -EINVAL;
	p->agg[p->nagg++] = *spec;
	return 0;
}

/*
 * The program takes the rings' memory (maps.c): no hit writes there from
 * now on (a thread finds no ring at its next hit: they count as lost),
 * and the mapping is the program's to unmap, so it is forgotten, never
 * unmapped here.  dprobe reads its own mapping of them to the end.
 */
void dp_ev_rings_taken(void)
{
	dp_lock();
	/* the tables stop with the rings: no hit adds to them from now on */
	__atomic_store_n(&agg_base, NULL, __ATOMIC_RELEASE);
	if (ev_hdr) {
		__atomic_store_n(&ev_hdr, NULL, __ATOMIC_RELEASE);
		__atomic_add_fetch(&ev_gen, 1, __ATOMIC_RELEASE);
		dp_synchronize();	/* the hits in flight end first */
		rings.hdr = NULL;
		dp_chan_rings_taken();
	}
	dp_unlock();
}

/* The stack bytes a snapshot copies: what dprobe asked, as far as half a
 * ring record holds it (the other half is the record's own). */
static uint32_t snap_size(uint32_t asked)
{
	uint32_t fit = (rings.max_record - DP_RING_HDR_SIZE) / 2 -
		DP_AGENT_SNAP_BYTES(0);

	fit &= ~7u;
	return asked < 8 ? 8 : asked < fit ? asked : fit;
}

/* The largest payload a hit of @def can need: strings at their limit. */
static uint32_t record_max(const struct dp_probe_def *def, uint32_t cap)
{
	uint64_t n = dp_probe_head_size(def) + def->args_size;

	for (unsigned i = 0; i < def->nargs; i++) {
		const struct dp_type *t = &def->args[i].type;

		if (dp_type_is_string(t))
			n += (uint64_t)(t->count ? t->count : 1) *
			     DP_MAX_STRING_SIZE;
	}
	return n < cap ? (uint32_t)n : cap;
}

/* Where register @idx (dp_reg_lookup()'s numbering) is in struct pt_regs. */
static int reg_offset(int idx)
{
	struct dp_regs probe;
	uint64_t *w = (uint64_t *)&probe;

	/* struct pt_regs is laid out as struct dp_regs: ask dp_reg_get()
	 * which word it reads */
	for (size_t i = 0; i < sizeof(probe) / 8; i++)
		w[i] = i * 8;
	return (int)dp_reg_get(&probe, idx);
}

/* The register a whole argument stores as is, or -1. */
static int plain_register(const struct dp_arg *a, bool is_return)
{
	const struct dp_fetch_insn *in = a->insn;
	int reg;

	if (a->type.count || a->n_insn < 2 || in[1].op != DP_FOP_ST_RAW ||
	    (a->n_insn > 2 && in[2].op != DP_FOP_END))
		return -1;
	if (in[0].op == DP_FOP_REG)
		reg = in[0].param;
	else if (in[0].op == DP_FOP_RETVAL && is_return)
		return (int)__builtin_offsetof(struct pt_regs, ax);
	else if (in[0].op == DP_FOP_ARG && !is_return &&
		 in[0].param < DP_NR_REG_ARGS)
		reg = dp_reg_arg(in[0].param);
	else
		return -1;
	if (reg < 0)
		return -1;
	reg = reg_offset(reg);
	/* a return probe's %ip is where it returns, not in the frame */
	if (is_return && reg == (int)__builtin_offsetof(struct pt_regs, ip))
		return -1;
	return reg;
}

/* Probes whose arguments are all plain registers: the recipe. */
static bool fast_recipe(const struct dp_probe_def *def, struct ev_fast *f)
{
	unsigned head = dp_probe_head_size(def);

	if (def->nargs > EV_FAST_MAX_ARGS ||
	    head + def->args_size > EV_FAST_MAX_SIZE)
		return false;
	for (unsigned i = 0; i < def->nargs; i++) {
		const struct dp_arg *a = &def->args[i];
		int off = plain_register(a, def->is_return);

		if (off < 0)
			return false;
		f->arg[i].reg = (uint16_t)off;
		f->arg[i].dst = (uint16_t)(head + a->offset);
		f->arg[i].size = a->insn[1].size;
	}
	f->n = def->nargs;
	f->size = head + def->args_size;
	return true;
}

static bool site_tab_build(void)
{
	dp_ptab_free(&site_tab);
	for (struct ev_site *s = sites; s; s = s->next)
		if (dp_ptab_add(&site_tab, dp_hash_u64(s->addr), s))
			return false;
	return site_tab_ok = true;
}

/* Sites went: the table is built again when next needed. */
static void site_tab_drop(void)
{
	dp_ptab_free(&site_tab);
	site_tab_ok = false;
}

static struct ev_site *site_find(uint64_t addr)
{
	size_t pos = DP_PTAB_START;
	void **v;

	if (!site_tab_ok && !site_tab_build()) {
		site_tab_drop();
		for (struct ev_site *s = sites; s; s = s->next)
			if (s->addr == addr)
				return s;
		return NULL;
	}
	while ((v = dp_ptab_next(&site_tab, dp_hash_u64(addr), &pos)))
		if (((struct ev_site *)*v)->addr == addr)
			return *v;
	return NULL;
}

static struct ev_site *site_for(uint64_t addr)
{
	struct ev_site *s = site_find(addr);

	if (s)
		return s;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->addr = addr;
	s->next = sites;
	sites = s;
	if (site_tab_ok && dp_ptab_add(&site_tab, dp_hash_u64(addr), s))
		site_tab_drop();
	return s;
}

static int site_register_entry(struct ev_site *s);
static int site_register_return(struct ev_site *s);

/*
 * A probe added to a live site (an event enabled while others run there,
 * dprobe mount): the hit path reads the array without a lock, so a new
 * one is published before the count that makes its last entry visible;
 * the old one is kept until everything is cleared (dp_ev_clear(), after
 * the grace periods of unregistering).  A kind of probe the site did not
 * have (a return probe where only entries were) registers its half.
 */
static struct old_array {
	struct old_array *next;
	struct ev_probe **v;
} *old_arrays;

static int site_append_live(struct ev_site *s, struct ev_probe *p)
{
	struct ev_probe **v = malloc((s->n + 1) * sizeof(*v));
	struct old_array *o = malloc(sizeof(*o));
	bool ret = p->def.is_return;
	int err = 0;

	if (!v || !o || s->is_tp != (p->def.kind == DP_KIND_TRACEPOINT)) {
		free(v);
		free(o);
		return v && o ? -EBUSY : -ENOMEM;
	}
	memcpy(v, s->probes, s->n * sizeof(*v));
	v[s->n] = p;
	p->site = s;
	*o = (struct old_array){ old_arrays, s->probes };
	old_arrays = o;
	__atomic_store_n(&s->probes, v, __ATOMIC_RELEASE);
	__atomic_store_n(&s->n, s->n + 1, __ATOMIC_RELEASE);
	if (p->timed && !s->timed) {
		/* calls entered before read 0: not timed */
		s->timed = true;
		__atomic_store_n(&s->rp.entry_handler, on_return_entry_timed,
				 __ATOMIC_RELEASE);
	}
	if (ret && !s->has_return) {
		s->has_return = true;
		err = site_register_return(s);
	} else if (!ret && !s->has_entry && !s->is_tp) {
		s->has_entry = true;
		err = site_register_entry(s);
	}
	return err;
}

static int site_append(struct ev_site *s, struct ev_probe *p)
{
	struct ev_probe **v;

	if (s->registered)
		return site_append_live(s, p);
	v = realloc(s->probes, (s->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	s->probes = v;
	v[s->n++] = p;
	p->site = s;
	if (p->def.kind == DP_KIND_TRACEPOINT)
		s->is_tp = true;
	if (p->def.is_return)
		s->has_return = true;
	else
		s->has_entry = true;
	s->timed |= p->timed;
	return 0;
}

int dp_ev_add(unsigned slot, unsigned id, uint64_t addr, uint64_t foffs,
	      uint32_t flags, const char *line, char *why, size_t whylen)
{
	struct dp_error e = { 0 };
	struct ev_probe *p;
	struct ev_site *s;
	int ret;

	if (!ev_hdr || slot > DP_AGENT_MAX_SLOTS)
		return snprintf(why, whylen, "no rings yet"), -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	ret = dp_parse_probe(line, &p->def, &e);
	if (ret) {
		snprintf(why, whylen, "%s", dp_err_message(e.code));
		dp_error_clear(&e);
		free(p);
		return ret;
	}
	p->slot = slot;
	p->id = id;
	p->addr = addr;
	p->foffs = foffs;
	p->flags = flags;
	/* an aggregated probe is counted too: its hits are the events */
	p->counter = (flags & (DP_AGENT_F_COUNT | DP_AGENT_F_AGG)) &&
		     slot < DP_RING_NCOUNTERS;
	/* an aggregated probe makes no record to put one after */
	p->stack = (flags & DP_AGENT_F_STACK) &&
		!(flags & (DP_AGENT_F_COUNT | DP_AGENT_F_AGG)) &&
		rings.max_record > DP_RING_HDR_SIZE + 2 * EV_STACK_ROOM;
	p->at_entry = (flags & DP_AGENT_F_ENTRY) && !p->def.is_return;
	p->stackmax = p->stack && (flags & DP_AGENT_F_STACKMAX) &&
		!p->def.is_return && p->def.kind != DP_KIND_TRACEPOINT &&
		!(flags & DP_AGENT_F_DWARF);
	/* a stack tracer placed (again): the search starts from nothing */
	if (p->stackmax)
		__atomic_store_n(&ev_stack_max, 0, __ATOMIC_RELAXED);
	p->timed = (flags & DP_AGENT_F_LAT) && (flags & DP_AGENT_F_AGG) &&
		p->def.is_return;
	/* a tracepoint's registers are made up (on_tracepoint()): its
	 * stack is the frame-pointer chain from its caller's frame, never
	 * a snapshot to unwind from them */
	if (p->stack && (flags & DP_AGENT_F_DWARF) &&
	    p->def.kind != DP_KIND_TRACEPOINT)
		p->snap = snap_size(DP_AGENT_DWARF_SIZE(flags));
	p->fast = !(flags & DP_AGENT_F_COUNT) && !p->stack &&
		fast_recipe(&p->def, &p->fp);
	p->rec_max = flags & DP_AGENT_F_COUNT ? 0 :
		record_max(&p->def, rings.max_record - DP_RING_HDR_SIZE -
			   (p->stack ? stack_room(p) : 0));
	s = site_for(addr);
	ret = s ? site_append(s, p) : -ENOMEM;
	if (ret) {
		snprintf(why, whylen, "%s", ret == -EBUSY ?
			 "the address is probed already" : strerror(-ret));
		dp_probe_def_free(&p->def);
		free(p);
		return ret;
	}
	*probes_tail = p;
	probes_tail = &p->all_next;
	return 0;
}

/*
 * @SYM of argument @arg: the program starts with DP_FOP_SYMBOL then the
 * link-time address as an immediate; the immediate becomes the run-time
 * address and the symbol step goes, so the hit path looks nothing up.
 */
int dp_ev_sym(unsigned slot, unsigned arg, uint64_t addr)
{
	int n = 0;

	for (struct ev_probe *p = probes; p; p = p->all_next) {
		struct dp_arg *a;

		if (p->slot != slot || arg >= p->def.nargs || p->site->registered)
			continue;
		a = &p->def.args[arg];
		if (a->n_insn < 2 || a->insn[0].op != DP_FOP_SYMBOL)
			continue;
		a->insn[1].imm = addr;
		memmove(&a->insn[0], &a->insn[1],
			(a->n_insn - 1) * sizeof(a->insn[0]));
		a->n_insn--;
		n++;
	}
	return n ? 0 : -ENOENT;
}

int dp_ev_ref_ctr(unsigned slot, uint64_t addr)
{
	int n = 0;

	for (struct ev_probe *p = probes; p; p = p->all_next) {
		if (p->slot != slot || p->site->registered)
			continue;
		p->site->ref_ctr = addr;
		n++;
	}
	return n ? 0 : -ENOENT;
}

/* The 2 bytes at @addr of our own memory, by a system call that fails
 * with EFAULT instead of faulting (and honours page protections). */
static int self_rw(bool write, uint64_t addr, uint16_t *val)
{
	struct iovec local = { val, sizeof(*val) };
	struct iovec remote = { (void *)(uintptr_t)addr, sizeof(*val) };
	ssize_t n = write ?
		process_vm_writev(getpid(), &local, 1, &remote, 1, 0) :
		process_vm_readv(getpid(), &local, 1, &remote, 1, 0);

	return n == (ssize_t)sizeof(*val) ? 0 : -EFAULT;
}

/*
 * A uprobe's reference counter (an SDT semaphore): the kernel adds one
 * when it installs the probe in a process and takes it back when it
 * removes it; programs test it before doing the work of firing their
 * probe.  As the kernel (and the ptrace engine, dp_mm_ref_ctr_add()):
 * the value is a short, a change that leaves it negative is refused
 * (-EINVAL, *@val the value), and it is added in 16 bits (0x7fff + 1
 * wraps).  The counter is the program's memory, anywhere the definition
 * said: read and written by system calls, so an unmapped or read-only
 * counter is -EFAULT rather than a SIGSEGV of the program, and never at
 * an odd address (-EINVAL), where it could also cross into the next page.
 * Only the control thread changes it.
 */
static int ref_ctr_add(uint64_t addr, int d, int *val)
{
	uint16_t raw;
	int16_t cur;

	*val = 0;
	if (addr & 1)
		return -EINVAL;
	if (self_rw(false, addr, &raw))
		return -EFAULT;
	cur = (int16_t)raw;
	*val = cur;
	if (cur + d < 0)
		return -EINVAL;
	raw = (uint16_t)(raw + d);
	return self_rw(true, addr, &raw);
}

/* +1 on @s's counter before it is armed: 0, or -errno with s->why. */
static int ref_ctr_get(struct ev_site *s)
{
	int val, err;

	if (!s->ref_ctr)
		return 0;
	err = ref_ctr_add(s->ref_ctr, 1, &val);
	if (err == -EINVAL && (s->ref_ctr & 1))
		snprintf(s->why, sizeof(s->why), "reference counter at "
			 "0x%llx: an odd address", (unsigned long long)s->ref_ctr);
	else if (err == -EINVAL)
		snprintf(s->why, sizeof(s->why), "reference counter at 0x%llx "
			 "holds %d (0x%04x): adding 1 leaves it negative",
			 (unsigned long long)s->ref_ctr, val,
			 (unsigned)(uint16_t)val);
	else if (err)
		snprintf(s->why, sizeof(s->why), "reference counter at 0x%llx "
			 "cannot be written (not in a writable mapping)",
			 (unsigned long long)s->ref_ctr);
	return err;
}

/* The 1 back; as the kernel, never below zero (then left as it is). */
static void ref_ctr_put(struct ev_site *s)
{
	int val;

	if (s->ref_ctr)
		ref_ctr_add(s->ref_ctr, -1, &val);
}

static int maxactive(const struct ev_site *s)
{
	int m = 0;

	for (unsigned i = 0; i < s->n; i++) {
		int v = s->probes[i]->def.maxactive;

		if (s->probes[i]->def.is_return && v > 0 && (!m || v < m))
			m = v;
	}
	return m;	/* 0: no r<N> */
}

static int site_register(struct ev_site *s)
{
	int ret;

	if (s->is_tp) {
		s->tp_on = true;
		ret = dp_tracepoint_probe_register(
			(struct dp_tracepoint *)(uintptr_t)s->addr,
			(void *)on_tracepoint, s, NULL);
		if (ret)
			return ret;
		s->registered = true;
		return 0;
	}
	/* counted before the probe can fire, as the kernel does */
	ret = ref_ctr_get(s);
	if (ret)
		return ret;
	if (s->has_entry) {
		ret = site_register_entry(s);
		if (ret) {
			ref_ctr_put(s);
			return ret;
		}
	}
	if (s->has_return) {
		ret = site_register_return(s);
		if (ret) {
			if (s->has_entry)
				unregister_kprobe(&s->kp);
			ref_ctr_put(s);
			return ret;
		}
	}
	s->registered = true;
	return 0;
}

static int site_register_entry(struct ev_site *s)
{
	s->kp.addr = (kprobe_opcode_t *)(uintptr_t)s->addr;
	s->kp.pre_handler = on_entry;
	/* compiled -mgeneral-regs-only: no SIMD state to save */
	s->kp.flags = KPROBE_FLAG_NOSIMD;
	return register_kprobe(&s->kp);
}

static int site_register_return(struct ev_site *s)
{
	int m = maxactive(s);

	s->rp.kp.addr = (kprobe_opcode_t *)(uintptr_t)s->addr;
	s->rp.kp.flags = KPROBE_FLAG_NOSIMD;
	/* no r<N>: a return stack per thread, as the kernel's uretprobes
	 * and function_graph have, not a pool of a limited size */
	if (!m)
		s->rp.kp.flags |= KPROBE_FLAG_RP_THREAD;
	s->rp.handler = on_return;
	s->rp.entry_handler = s->timed ? on_return_entry_timed :
		on_return_entry;
	s->rp.data_size = sizeof(struct ev_ret_data);
	s->rp.maxactive = m ? m : EV_DEFAULT_MAXACTIVE;
	return register_kretprobe(&s->rp);
}

/* "optimized", or "int3 (xol; why it is not optimized)" */
static void site_how(struct ev_site *s, char *buf, size_t len)
{
	if (s->is_tp) {
		snprintf(buf, len, "tracepoint");
		return;
	}
	const struct kprobe *kp = s->has_entry ? &s->kp : &s->rp.kp;
	const char *how = dp_kprobe_strategy(kp);
	const char *why = kprobe_opt_reason(kp);

	if (how && !strcmp(how, "optimized"))
		snprintf(buf, len, "optimized");
	else
		snprintf(buf, len, "int3 (%s; not optimized: %s)",
			 how ? how : "?", why && *why ? why : "not tried");
}

/*
 * SHOWN's fields for slot @slot: "ADDR ARMED OPT EMUL PATCH NBYTES DETOUR
 * DLEN TAIL XOL ORIGHEX HOW" (hex addresses, 0 where there is none).
 */
int dp_ev_show(unsigned slot, char *buf, size_t len)
{
	struct ev_probe *p = probes;
	struct dp_site_view v;
	char how[256], hex[2 * sizeof(v.orig) + 1];
	const struct kprobe *kp;

	while (p && p->slot != slot)
		p = p->all_next;
	if (!p || !p->site || p->site->is_tp)
		return -ENOENT;
	kp = p->site->has_entry ? &p->site->kp : &p->site->rp.kp;
	if (dp_kprobe_view(kp, &v))
		return -ENOENT;
	site_how(p->site, how, sizeof(how));
	for (unsigned i = 0; i < v.orig_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", v.orig[i]);
	hex[2 * v.orig_len] = '\0';
	snprintf(buf, len, "%llx %d %d %d %llx %u %llx %u %llx %llx %s %s",
		 (unsigned long long)v.addr, v.armed, v.optimized, v.emulated,
		 (unsigned long long)v.patch, v.nbytes,
		 (unsigned long long)v.detour, v.detour_len,
		 (unsigned long long)v.tail, (unsigned long long)v.slot, hex,
		 how);
	return 0;
}

static bool verbose(void);

/* (only with DPROBE_VERBOSE: clock_gettime() may be probed too) */
static uint64_t now_ns(void)
{
	struct timespec ts;

	if (!verbose())
		return 0;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* the calling thread's CPU time: what arming costs on a loaded machine */
static uint64_t cpu_ns(void)
{
	struct timespec ts;

	if (!verbose())
		return 0;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* read once, before the first arming: getenv() may be probed */
static bool verbose(void)
{
	static int on = -1;

	if (on < 0) {
		const char *v = getenv("DPROBE_VERBOSE");

		on = v && *v && strcmp(v, "0");
	}
	return on;
}

/*
 * DPROBE_VERBOSE=1: how long arming (@what "armed") or disarming took in
 * the process, for bench/arm.sh, and the memory the probes hold: the
 * pages of slots and detours, and the tables' allocations.
 */
static void say_timing(const char *what, unsigned nsites, uint64_t t0,
		       uint64_t c0)
{
	char msg[256];
	size_t tables = nsites * (sizeof(struct ev_site) + sizeof(struct ev_probe) +
				  sizeof(struct dp_site));

	if (!verbose())
		return;
	uint64_t us = (now_ns() - t0) / 1000, cus = (cpu_ns() - c0) / 1000;

	/* (no floating point: the library is built without SSE) */
	snprintf(msg, sizeof(msg), "libdprobe: %s %u locations in %llu.%03llu ms "
		 "(code pages %zu KiB, tables %zu KiB, cpu %llu.%03llu ms)\n",
		 what, nsites,
		 (unsigned long long)(us / 1000), (unsigned long long)(us % 1000),
		 dp_slots_mapped() >> 10, tables >> 10,
		 (unsigned long long)(cus / 1000), (unsigned long long)(cus % 1000));
	if (!dp_own_files_now()) {
		dp_warn(msg);
		return;
	}
	/* the control thread's table has no stderr: the program's, through
	 * /proc (which shows the main thread's table) */
	int fd = open("/proc/self/fd/2", O_WRONLY | O_APPEND | O_CLOEXEC);

	if (fd >= 0) {
		ssize_t w = write(fd, msg, strlen(msg));

		(void)w;	/* a message lost: nothing to do about it */
		close(fd);
	}
}

int dp_ev_arm(dp_ev_report_fn report, void *priv)
{
	uint64_t t0, c0;
	unsigned nsites = 0;
	char how[256];
	int n = 0;

	t0 = now_ns();
	c0 = cpu_ns();
	/* every site's int3 first, then the jumps of all at once */
	dp_opt_batch_begin();
	for (struct ev_site *s = sites; s; s = s->next) {
		if (!s->registered && !s->err)
			s->err = site_register(s);
		nsites += s->registered;
	}
	dp_opt_batch_end();
	say_timing("armed", nsites, t0, c0);
	for (struct ev_probe *p = probes; p; p = p->all_next) {
		struct ev_site *s = p->site;

		if (s->err) {
			report(priv, p->slot, s->err,
			       s->why[0] ? s->why : strerror(-s->err));
			continue;
		}
		site_how(s, how, sizeof(how));
		report(priv, p->slot, 0, how);
		n++;
	}
	return n;
}

static void site_follow(struct ev_site *s);

void dp_ev_enable(bool on)
{
	for (struct ev_site *s = sites; s; s = s->next) {
		if (!s->registered)
			continue;
		if (on) {
			site_follow(s);	/* the probes switched off stay so */
			continue;
		}
		if (s->is_tp)
			__atomic_store_n(&s->tp_on, false, __ATOMIC_RELAXED);
		else if (s->has_entry)
			disable_kprobe(&s->kp);
		if (s->has_return)
			disable_kretprobe(&s->rp);
	}
}

static unsigned long probe_missed(const struct ev_probe *p)
{
	const struct ev_site *s = p->site;

	if (!s->registered || s->is_tp)
		return 0;
	if (p->def.is_return)
		return (unsigned long)s->rp.nmissed + s->rp.kp.nmissed;
	return s->kp.nmissed;
}

/*
 * Each slot once, in the order of its first location, with what its
 * locations missed: one pass over them, whatever their number.
 */
struct slot_sum {
	unsigned slot;
	unsigned long missed;
};

static struct slot_sum *slot_sum_of(struct dp_ptab *t, struct slot_sum *v,
				    size_t *n, unsigned slot)
{
	size_t pos = DP_PTAB_START;
	void **e;

	while ((e = dp_ptab_next(t, dp_hash_u64(slot), &pos)))
		if (((struct slot_sum *)*e)->slot == slot)
			return *e;
	v[*n].slot = slot;
	if (dp_ptab_add(t, dp_hash_u64(slot), &v[*n]))
		return NULL;
	return &v[(*n)++];
}

void dp_ev_for_each_missed(void (*fn)(void *priv, unsigned slot,
				      unsigned long missed), void *priv)
{
	struct dp_ptab t = { 0 };
	struct slot_sum *v, *e;
	size_t n = 0, count = 0;

	for (struct ev_probe *p = probes; p; p = p->all_next)
		count++;
	/* sized by the probes, not the slots' range: a small session
	 * allocates little (agent-churn watches the target's maps) */
	v = calloc(count + 1, sizeof(*v));
	if (!v)
		return;
	for (struct ev_probe *p = probes; p; p = p->all_next) {
		e = slot_sum_of(&t, v, &n, p->slot);
		if (!e)
			break;
		e->missed += probe_missed(p);
	}
	for (size_t i = 0; i < n; i++)
		fn(priv, v[i].slot, v[i].missed);
	dp_ptab_free(&t);
	free(v);
}

/*
 * Take @s's probe off its tracepoint.  If that fails the tracepoint may
 * still call it, with @s as its data: it is told to record nothing, and
 * it is left allocated (with its probes), never to be freed.
 */
static bool tp_site_unregister(struct ev_site *s)
{
	__atomic_store_n(&s->tp_on, false, __ATOMIC_RELAXED);
	if (dp_tracepoint_probe_unregister(
		    (struct dp_tracepoint *)(uintptr_t)s->addr,
		    (void *)on_tracepoint, s))
		return false;
	s->registered = false;
	return true;
}

/* Whether some probe of @s records (on return: @ret, else on entry). */
static bool site_wants(const struct ev_site *s, bool ret)
{
	for (unsigned i = 0; i < s->n; i++)
		if (s->probes[i]->def.is_return == ret && !s->probes[i]->off)
			return true;
	return false;
}

/*
 * A site whose probes are all switched off is disabled too (its bytes
 * put back: no hit costs anything), and enabled again with one of them.
 */
static void site_follow(struct ev_site *s)
{
	if (!s->registered)
		return;
	if (s->is_tp) {
		__atomic_store_n(&s->tp_on, site_wants(s, false), __ATOMIC_RELAXED);
		return;
	}
	if (s->has_entry && site_wants(s, false))
		enable_kprobe(&s->kp);
	else if (s->has_entry)
		disable_kprobe(&s->kp);
	if (s->has_return && site_wants(s, true))
		enable_kretprobe(&s->rp);
	else if (s->has_return)
		disable_kretprobe(&s->rp);
}

int dp_ev_switch(unsigned slot, bool on)
{
	int n = 0;

	for (struct ev_probe *p = probes; p; p = p->all_next) {
		if (p->slot != slot)
			continue;
		__atomic_store_n(&p->off, !on, __ATOMIC_RELAXED);
		/* the stack tracer starts again (stack_max_size reset) */
		if (on && p->stackmax)
			__atomic_store_n(&ev_stack_max, 0, __ATOMIC_RELAXED);
		if (p->site)
			site_follow(p->site);
		n++;
	}
	return n;
}

/* Unregister @s (waits until no handler can still be running). */
static bool site_unregister(struct ev_site *s)
{
	if (s->registered && s->is_tp)
		return tp_site_unregister(s);
	if (s->registered) {
		if (s->has_entry)
			unregister_kprobe(&s->kp);
		if (s->has_return)
			unregister_kretprobe(&s->rp);
		ref_ctr_put(s);
	}
	return true;
}

/* The probes of the sites that went (site NULL), out of the list. */
static void probes_prune(bool (*gone)(const struct ev_probe *))
{
	struct ev_probe **pp = &probes, *p;

	probes_tail = &probes;
	while ((p = *pp)) {
		if (gone(p)) {
			*pp = p->all_next;
			dp_probe_def_free(&p->def);
			free(p);
			continue;
		}
		probes_tail = &p->all_next;
		pp = &p->all_next;
	}
}

static bool orphan(const struct ev_probe *p)
{
	return !p->site;
}

int dp_ev_drop(uint64_t start, uint64_t end)
{
	struct ev_site **sp = &sites, *s;
	int n = 0;

	site_tab_drop();
	while ((s = *sp)) {
		if (s->is_tp || s->addr < start || s->addr >= end ||
		    !site_unregister(s)) {
			sp = &s->next;
			continue;
		}
		*sp = s->next;
		for (unsigned i = 0; i < s->n; i++)
			s->probes[i]->site = NULL;
		n += (int)s->n;
		free(s->probes);
		free(s);
	}
	probes_prune(orphan);
	return n;
}

/*
 * The registered kprobe sites, all together: their jumps out in one
 * batch (dp_opt_unoptimize_many()), then unregistered with one grace
 * period for the entries and one for the returns.  Without memory for
 * the arrays, site_unregister() does each alone.
 */
static void unregister_all(void)
{
	size_t n = 0, nk = 0, nr = 0, ns = 0;
	struct kretprobe **rps;
	struct kprobe **kps;
	struct dp_site **v;

	for (struct ev_site *s = sites; s; s = s->next)
		n += s->registered && !s->is_tp;
	kps = malloc(n * sizeof(*kps) + 1);
	rps = malloc(n * sizeof(*rps) + 1);
	v = malloc(2 * n * sizeof(*v) + 1);
	if (kps && rps && v) {
		for (struct ev_site *s = sites; s; s = s->next) {
			if (!s->registered || s->is_tp)
				continue;
			if (s->has_entry && s->kp.__site)
				v[ns++] = s->kp.__site;
			if (s->has_return && s->rp.kp.__site)
				v[ns++] = s->rp.kp.__site;
			if (s->has_entry)
				kps[nk++] = &s->kp;
			if (s->has_return)
				rps[nr++] = &s->rp;
		}
		dp_lock();
		dp_opt_unoptimize_many(v, ns);
		dp_unlock();
		if (nk)
			unregister_kprobes(kps, (int)nk);
		if (nr)
			unregister_kretprobes(rps, (int)nr);
		for (struct ev_site *s = sites; s; s = s->next) {
			if (!s->registered || s->is_tp)
				continue;
			ref_ctr_put(s);
			s->registered = false;
		}
	}
	free(kps);
	free(rps);
	free(v);
}

void dp_ev_clear(void)
{
	struct ev_site *s, *sn;
	struct ev_probe *p, *pn;
	uint64_t t0 = now_ns(), c0 = cpu_ns();
	unsigned nsites = 0;

	site_tab_drop();
	for (s = sites; s; s = s->next)
		nsites += s->registered;
	/* a site losing one of its two kprobes is not optimised again */
	dp_opt_batch_begin();
	unregister_all();
	/* unregistering waits until no handler can still be running */
	for (s = sites; s; s = sn) {
		sn = s->next;
		if (!site_unregister(s))
			continue;	/* leaked, see tp_site_unregister() */
		for (unsigned i = 0; i < s->n; i++)
			s->probes[i]->site = NULL;
		free(s->probes);
		free(s);
	}
	sites = NULL;
	dp_opt_batch_end();
	if (nsites)
		say_timing("disarmed", nsites, t0, c0);
	for (p = probes; p; p = pn) {
		pn = p->all_next;
		/* still reachable from a leaked site: it stays too */
		if (p->site)
			continue;
		dp_probe_def_free(&p->def);
		free(p);
	}
	probes = NULL;
	probes_tail = &probes;
	while (old_arrays) {
		struct old_array *o = old_arrays;

		old_arrays = o->next;
		free(o->v);
		free(o);
	}
	/* the tables stop with the rings: no hit adds to them from now on */
	__atomic_store_n(&agg_base, NULL, __ATOMIC_RELEASE);
	if (ev_hdr) {
		__atomic_store_n(&ev_hdr, NULL, __ATOMIC_RELEASE);
		__atomic_add_fetch(&ev_gen, 1, __ATOMIC_RELEASE);
		dp_ring_set_close(&rings);
	}
}

/*
 * In a fork child (one thread, the one that forked): the parent's rings
 * are not the child's to write.  The child's copy of their mapping goes
 * (hits find no ring until dprobe sends the child rings of its own), and
 * the miss counts start from zero: they are the child's from now on.
 */
static void drop_parent_rings(void)
{
	__atomic_store_n(&ev_hdr, NULL, __ATOMIC_RELEASE);
	__atomic_add_fetch(&ev_gen, 1, __ATOMIC_RELEASE);
	if (rings.hdr)
		dp_ring_set_close(&rings);
	for (struct ev_site *s = sites; s; s = s->next) {
		s->kp.nmissed = 0;
		s->rp.nmissed = 0;
		s->rp.kp.nmissed = 0;
	}
}

void dp_ev_follow_in_child(void)
{
	drop_parent_rings();
}

/*
 * Not followed, the child's events are not traced: every probed byte
 * goes back, the kprobes stay registered and silent, and our probes
 * leave their tracepoints (which the program tests with
 * trace_NAME_enabled() before costly work).  The child has no other
 * thread and none of the parent's read sides (core.c's fork handler ran
 * first), so the grace periods of unregistering end at once.
 */
void dp_ev_forget_in_child(void)
{
	if (!sites)
		return;
	drop_parent_rings();
	dp_agent_disarm_all();
	for (struct ev_site *s = sites; s; s = s->next) {
		if (!s->registered)
			continue;
		if (s->is_tp)
			tp_site_unregister(s);
		else	/* the child's copy follows its probes */
			ref_ctr_put(s);
	}
}
