// SPDX-License-Identifier: GPL-2.0
/*
 * Reading the agent's rings: records in timestamp order across threads,
 * turned into the ptrace engine's events (the same record bytes, the same
 * metadata) and handed to the sink after the event's filter; losses become
 * the kernel's "[LOST N EVENTS]" marks.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/agent/protocol.h"
#include "engine/inproc/internal.h"
#include "event/deliver.h"
#include "lang/fetch.h"
#include "lang/layout.h"
#include "sym/fpframe.h"

/* ---- clock ------------------------------------------------------------- */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

/* A (tick, ns) pair read as close together as the two clocks allow. */
static void measure(uint64_t *tsc, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 5; i++) {
		uint64_t a = rdtsc(), n = mono_ns(), b = rdtsc();

		if (b - a < best) {
			best = b - a;
			*tsc = a + (b - a) / 2;
			*ns = n;
		}
	}
}

static struct clk_knot knot(uint64_t tsc, uint64_t ns, double ns_per_tick)
{
	return (struct clk_knot){ tsc, ns, ns_per_tick,
				  (uint64_t)(ns_per_tick * 4294967296.0) };
}

static const struct clk_knot *knot_last(const struct clk *c)
{
	return &c->k[(c->nk - 1) % CLK_KNOTS];
}

void clk_init(struct clk *c, bool tsc)
{
	uint64_t t1, n1;

	memset(c, 0, sizeof(*c));
	c->tsc = tsc;
	if (!tsc)
		return;
	measure(&c->tsc0, &c->ns0);
	/* a first rate over 2 ms; clk_sample() refines it */
	do
		measure(&t1, &n1);
	while (n1 - c->ns0 < 2000000);
	c->k[0] = knot(c->tsc0, c->ns0,
		       (double)(n1 - c->ns0) / (double)(t1 - c->tsc0));
	c->nk = 1;
}

/* The newest knot at or before @stamp, else the oldest one kept. */
static const struct clk_knot *knot_for(const struct clk *c, uint64_t stamp)
{
	const struct clk_knot *k = NULL;

	for (unsigned i = 0; i < c->nk && i < CLK_KNOTS; i++) {
		k = &c->k[(c->nk - 1 - i) % CLK_KNOTS];
		if (stamp >= k->tsc)
			break;
	}
	return k;
}

uint64_t clk_ns(const struct clk *c, uint64_t stamp)
{
	const struct clk_knot *k;

	if (!c->tsc)
		return stamp;
	/* records are recent: the newest knot, mostly */
	k = c->nk ? knot_last(c) : NULL;
	if (k && stamp < k->tsc)
		k = knot_for(c, stamp);
	if (!k)
		return 0;
	/* in fixed point (every record's stamp is converted), signed all
	 * the way: a stamp before the oldest knot is before it; the knots
	 * are a second apart, so the rate's rounding (2^-33 ns a tick) is
	 * under a nanosecond */
	return k->ns + (uint64_t)(int64_t)((__int128)(int64_t)(stamp - k->tsc) *
					   (__int128)k->mult >> 32);
}

void clk_sample(struct clk *c)
{
	const struct clk_knot *last;
	uint64_t tsc, ns, at;
	double rate, slope;

	if (!c->tsc)
		return;
	last = knot_last(c);
	measure(&tsc, &ns);
	if (ns < last->ns + 1000000000ull || tsc <= c->tsc0)
		return;
	rate = (double)(ns - c->ns0) / (double)(tsc - c->tsc0);
	at = clk_ns(c, tsc);
	/* reach the clock one second from now; never run backwards */
	slope = rate * (1.0 + ((double)ns - (double)at) / 1e9);
	if (slope < rate / 2)
		slope = rate / 2;
	c->k[c->nk % CLK_KNOTS] = knot(tsc, at, slope);
	c->nk++;
}

/* ---- thread names -------------------------------------------------------- */

static struct comm_ent *comm_slot(struct ip_proc *p, int tid)
{
	struct comm_ent *v;

	for (unsigned i = 0; i < p->ncomms; i++)
		if (p->comms[i].tid == tid)
			return &p->comms[i];
	if (p->ncomms == p->comms_cap) {
		unsigned cap = p->comms_cap ? 2 * p->comms_cap : 16;

		v = realloc(p->comms, cap * sizeof(*v));
		if (!v)
			return NULL;
		p->comms = v;
		p->comms_cap = cap;
	}
	v = &p->comms[p->ncomms++];
	memset(v, 0, sizeof(*v));
	v->tid = tid;
	return v;
}

static bool read_comm(pid_t pid, int tid, char *buf)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, 15);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return true;
}

/* How long a thread's name read from /proc is taken as its name: a
 * read is a path lookup, an open and a close, and the passes of a busy
 * reader come thousands of times a second. */
#define COMM_FRESH_NS	(50 * 1000 * 1000ull)

/*
 * The thread's name as the ptrace engine would show it (read when the
 * event is read, again once COMM_FRESH_NS old); for a thread that has
 * exited, the last name read, or the one the agent noted in the ring.
 */
static const char *comm_of(struct ip_proc *p, unsigned ring, int tid)
{
	struct comm_ent *c = comm_slot(p, tid);
	const struct dp_ring *r;

	if (!c)
		return NULL;
	if (c->comm[0] && p->pass_ns - c->read_ns < COMM_FRESH_NS)
		return c->comm;
	/* a thread that has exited is not looked for again at each of its
	 * records (a reader draining after the exit would open() per record) */
	c->read_ns = p->pass_ns;
	if (read_comm(p->pid, tid, c->comm))
		return c->comm;
	if (c->comm[0])
		return c->comm;
	r = dp_ring_get(&p->rings, ring);
	memcpy(c->comm, r->comm, sizeof(c->comm));
	c->comm[sizeof(c->comm) - 1] = '\0';
	return c->comm[0] ? c->comm : NULL;
}

/* ---- records --------------------------------------------------------------- */

#define DRAIN_BATCH 65536	/* entries per pass while tracing */
/* Entries in one drain that make the next look come sooner: at the ten
 * million and more records a second a call-heavy program makes under
 * function_graph, a default 1 MiB ring (some 24,000 of them) fills in
 * one to two milliseconds, not much more than the idle wait */
#define DRAIN_LIVELY 1024
#define FINAL_SIGNAL_CHECK 4096	/* entries between looks for a stop */

static struct dp_deliver deliver_of(struct ip_proc *p)
{
	return (struct dp_deliver){ &p->tree->o.sink, &p->stats,
				   p->tree->o.count_only };
}

static void lost(struct ip_proc *p, const struct dp_ring_entry *e)
{
	struct dp_deliver d = deliver_of(p);

	dp_event_lost(&d, (int)DP_AGENT_INFO_CPU(e->info),
		      e->lost == DP_RING_LOST_UNKNOWN ? DP_LOST_UNKNOWN :
		      e->lost);
}

/*
 * The snapshot at the end of a record of slot @s (DP_AGENT_F_DWARF),
 * unwound into @out: the first frames the agent gives, then the callers
 * the CFI finds.  -1 when the record does not end as the agent writes.
 */
static int unwind_snap(struct ip_proc *p, const struct slot *s, pid_t tid,
		       const void *rec, uint32_t *len, uint64_t *out,
		       unsigned *n)
{
	struct dp_agent_snap_head h;
	struct dp_stack_snap snap;
	uint32_t slen;
	unsigned k = 0;

	if (dp_agent_snap_take(rec, len, s->snap, &h, &snap.stack, &slen))
		return -1;
	memcpy(snap.regs, h.regs, sizeof(snap.regs));
	snap.len = slen;
	snap.whole = slen < s->snap;	/* the agent met the stack's end */
	if (h.ret_ip)
		out[k++] = h.first;	/* the function, then the caller */
	if (!p->unw && p->proc && dp_unwinder_new(p->proc, &p->unw))
		p->unw = NULL;
	if (p->unw)
		k += dp_unwind(p->unw, tid, &snap, out + k, DP_STACK_MAX - k,
			       NULL);
	else
		out[k++] = snap.regs[DP_UNWIND_RIP];
	*n = k;
	return 0;
}

static void record(struct ip_proc *p, const struct dp_ring_entry *e)
{
	unsigned slot = DP_AGENT_INFO_SLOT(e->info);
	struct dp_deliver d = deliver_of(p);
	struct dp_rec_meta meta;
	int pid, tid;
	struct dp_probe *pr;
	uint64_t stack[DP_STACK_MAX], depth[DP_STACK_MAX];
	uint32_t len = e->len;
	unsigned nstack = 0;

	if (slot >= p->nslots || !p->slots[slot].pr)
		return;		/* nothing dprobe asked for */
	pr = p->slots[slot].pr;
	pr->nhit++;
	if (dp_event_deliver_counted(&d, pr))
		return;
	dp_ring_owner(&p->rings, e->ring, &pid, &tid);
	if (p->slots[slot].stack &&
	    (p->slots[slot].depths ?
	     dp_agent_depths_take(e->data, &len, stack, depth, DP_STACK_MAX,
				  &nstack) :
	     p->slots[slot].snap ?
	     unwind_snap(p, &p->slots[slot], tid, e->data, &len, stack,
			 &nstack) :
	     dp_agent_stack_take(e->data, &len, stack, DP_STACK_MAX,
				 &nstack))) {
		dp_event_lost_record(&d);	/* not what the agent writes */
		return;
	}
	if (len < dp_layout_head_size(pr->def.kind, pr->def.is_return) +
		  pr->def.args_size) {
		dp_event_lost_record(&d);	/* not what the agent writes */
		return;
	}
	meta = (struct dp_rec_meta){
		.ts_ns = clk_ns(&p->tree->clk, e->ts),
		.cpu = (int)DP_AGENT_INFO_CPU(e->info),
		.pid = tid,
		.tgid = pid,
		/* the image dprobe attached: its rings are in its memory
		 * (a vfork child's records too) */
		.mm_pid = p->pid,
	};
	meta.comm = comm_of(p, e->ring, tid);
	if (p->slots[slot].stack) {
		/* the agent marks every early stop; a bad frame is one
		 * where the code kept frame pointers */
		if (!p->slots[slot].snap)
			dp_proc_stack_settle(p->proc, stack, &nstack);
		meta.stack = stack;
		meta.nstack = nstack;
		if (p->slots[slot].depths)
			meta.stack_depth = depth;
	}
	dp_event_deliver(&d, pr, e->data, len, &meta, &p->symbolizer);
}

/* Count-only probes: what their counters went up by since the last look. */
static void counters(struct ip_proc *p)
{
	struct dp_deliver d = deliver_of(p);

	for (unsigned i = 0; i < p->nslots; i++) {
		struct slot *s = &p->slots[i];
		uint64_t n;

		if (!s->counter)
			continue;
		n = dp_ring_set_counter(&p->rings, i) - s->counted;
		s->counted += n;
		s->pr->nhit += n;
		dp_event_count(&d, s->pr, n);
	}
}

/* The next entry of @p's rings, read ahead: whether there is one. */
static bool peek(struct ip_proc *p, bool final)
{
	if (p->helper || p->hsock >= 0)
		return handoff_peek(p, final);
	if (!p->have_head && p->rd)
		p->have_head = dp_ring_read_merged(p->rd, &p->head) !=
			       DP_RING_EMPTY;
	return p->have_head;
}

static void take(struct ip_proc *p)
{
	if (p->hbuf && p->have_head)
		handoff_take(p);
	else if (p->head.kind == DP_RING_LOST)
		lost(p, &p->head);
	else
		record(p, &p->head);
	p->have_head = false;
}

static void pass_begin(struct ip_proc *p, bool final)
{
	p->pass++;
	p->pass_ns = mono_ns();
	if (final)
		dp_ring_reader_final(p->rd);
}

static void pass_end(struct ip_proc *p, bool final)
{
	counters(p);
	if (final) {
		p->stats.lost += dp_ring_set_noring_lost(&p->rings);
		return;
	}
	/* rings of threads that exited: every 64 passes (it reads /proc) */
	if (!(p->pass % 64))
		dp_ring_reader_reap(p->rd);
	dp_ring_reader_reclaim(p->rd);
}

/* The image whose next entry is the oldest (@only: that one), or NULL. */
static struct ip_proc *oldest(struct dp_inproc *t, struct ip_proc *only,
			      bool final)
{
	struct ip_proc *best = NULL;
	uint64_t best_ns = 0;

	if (only)
		return peek(only, final) ? only : NULL;
	/* one image: nothing to order, no clock to convert */
	if (t->procs && !t->procs->next)
		return peek(t->procs, final) ? t->procs : NULL;
	for (struct ip_proc *p = t->procs; p; p = p->next) {
		uint64_t ns;

		if (!peek(p, final))
			continue;
		/* a helper's records carry ns already (handoff.c) */
		ns = p->hbuf ? p->head.ts : clk_ns(&t->clk, p->head.ts);
		if (!best || ns < best_ns) {
			best = p;
			best_ns = ns;
		}
	}
	return best;
}

bool reader_drain(struct dp_inproc *t, struct ip_proc *only, bool final)
{
	struct ip_proc *p = NULL;
	unsigned n;

	clk_sample(&t->clk);
	inproc_agg_clock(t);
	for (struct ip_proc *q = t->procs; q; q = q->next)
		if (q->rd && (!only || q == only))
			pass_begin(q, final);
	/*
	 * A bounded batch while tracing: the producers can make records
	 * faster than they are printed, and a stop must still be seen.  The
	 * last read goes up to what the rings held when it began (the ring
	 * reader's final mode), however fast a target that scribbles on
	 * them writes; and a second Ctrl-C still ends it.
	 */
	for (n = 0; final || (n < DRAIN_BATCH && !t->stop_req); n++) {
		if (final && !(n % FINAL_SIGNAL_CHECK)) {
			inproc_take_signals(t);
			if (inproc_must_quit(t))
				break;
		}
		p = oldest(t, only, final);
		if (!p)
			break;
		take(p);
	}
	for (struct ip_proc *q = t->procs; q; q = q->next)
		if (q->rd && (!only || q == only))
			pass_end(q, final);
	/* the tables' slots of threads that exited, once for the tree (its
	 * images share them): every 64 passes, as it reads /proc */
	if (!final && !(++t->agg.passes % 64))
		inproc_agg_reap(t);
	if (n && !p && t->o.sink.idle)
		t->o.sink.idle(t->o.sink.priv);
	t->lively = n >= DRAIN_LIVELY;
	/* the batch ended with entries left: the producers are ahead */
	return !final && n == DRAIN_BATCH;
}

void reader_free(struct ip_proc *p)
{
	if (p->rd)
		dp_ring_reader_free(p->rd);
	p->rd = NULL;
	p->have_head = false;
	if (p->have_rings)
		dp_ring_set_close(&p->rings);
	p->have_rings = false;
}
