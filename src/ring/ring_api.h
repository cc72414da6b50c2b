/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Ring buffers, producer side: the shared-memory layout of a ring set and
 * the code a producer thread runs (claim, reserve, commit, discard).
 *
 * Everything here is header-only and calls nothing: no libc, no syscall
 * (but sched_yield while a full ring waits in block mode), no
 * lock prefix on the fast path, no allocation, no floating point or SIMD
 * (it compiles under -mgeneral-regs-only).  The in-process agent runs it
 * inside probe handlers, which may themselves run inside signal handlers,
 * so it must not depend on anything a probe could be placed on.
 *
 * Layout of a ring set (one memfd, mapped by producer and reader at
 * different addresses, so it holds offsets, never pointers):
 *
 *	[set header, DP_RING_SET_HDR_SIZE]
 *	[ring 0: control page | data, ring_size bytes]
 *	[ring 1: control page | data] ...
 *
 * A ring's data is a circle of ring_size (a power of two) bytes addressed
 * by free-running 64-bit byte positions: head (end of the published
 * records, written by the producer), tail (what the consuming reader has
 * read, written by it) and, in overwrite mode, start (the oldest record
 * the producer has not overwritten).  A record is a 16-byte header and
 * its payload, 8-byte aligned, never split across the end of the circle:
 * a pad record fills the space before the end instead.
 *
 * Modes.  Discard: a record that does not fit before tail + ring_size is
 * dropped and counted.  Overwrite (flight recorder): before writing over
 * old records the producer moves start past them, a block (1/64 of the
 * ring) at a time, to a record boundary it noted when it wrote there, with
 * the number of events before it; the reader re-checks start after
 * copying a record, and when start has passed it, resyncs there and
 * counts exactly what it lost.  Records dropped by the producer (full
 * ring, nested reserve, record too big) are announced in the stream by a
 * lost marker record, written before the next record that fits, so the
 * reader knows where the hole is.  Block: as discard, but a full ring
 * first waits for the reader to make room (spinning, as uftrace's and
 * LTTng's blocking channels make a program wait for their writer): every
 * record is kept while the reader keeps up on average.  The wait is
 * bounded, and a reader that frees nothing during a whole wait is taken
 * for stopped or gone: the producer drops without waiting until the
 * reader's tail moves again, so a tracer that dies leaves its target
 * running at full speed.
 *
 * Fast path: reserve checks one limit (free space, the end of the circle,
 * the next block) and writes the header; commit is a release store of
 * head.  Everything else (wrapping, a full ring, markers, eviction) is in
 * the out-of-line slow path, taken about once per block.
 *
 * Signal-handler nesting.  A reserve on a ring that already has an open
 * record (a signal handler that interrupted the same thread between
 * reserve and commit, or a probe in that handler) fails and is counted
 * as lost.  It touches nothing but the lost counter, which is
 * incremented with one instruction, so the interrupted writer cannot
 * notice.  A handler that runs entirely before the outer reserve has set
 * the nesting flag simply writes an earlier record.
 */
#ifndef DPROBE_RING_API_H
#define DPROBE_RING_API_H

#include <stddef.h>
#include <stdint.h>

#define DP_RING_MAGIC		0x31676e6972706464ULL	/* "ddpring1" */
#define DP_RING_VERSION		1
#define DP_RING_SET_HDR_SIZE	4096u
#define DP_RING_CTRL_SIZE	4096u	/* control page before each ring's data */

#define DP_RING_HDR_SIZE	16u	/* record header */
#define DP_RING_NCOUNTERS	256u	/* counters per ring (struct dp_ring) */
#define DP_RING_MARKER_SIZE	24u	/* header + u64 count */
#define DP_RING_LEN_MASK	0x00ffffffu	/* exact length, header included */
#define DP_RING_F_PAD		(1u << 24)	/* filler up to the next record */
#define DP_RING_F_LOST		(1u << 25)	/* lost marker: u64 count follows */
#define DP_RING_ALIGN(x)	(((uint64_t)(x) + 7) & ~(uint64_t)7)

enum dp_ring_mode {
	DP_RING_DISCARD,
	DP_RING_OVERWRITE,
	DP_RING_BLOCK,		/* discard, after a bounded wait for room */
};

/* Block mode: how long a full ring waits for the reader, in TSC ticks
 * (2^27: some 40-60 ms at 2-3.5 GHz), far longer than the reader sleeps
 * between looks; between looks at its tail, a sched_yield (the reader
 * may share the CPU). */
#define DP_RING_WAIT_TICKS	(1ull << 27)

enum dp_ring_state {
	DP_RING_FREE,		/* no producer */
	DP_RING_ACTIVE,		/* claimed by thread (pid, tid) */
	DP_RING_DEAD,		/* released; the reader drains and frees it */
};

/*
 * Record header.  len_flags: the record's exact length (header included)
 * in the low 24 bits, DP_RING_F_* above; the record occupies
 * DP_RING_ALIGN(length) bytes.  info is the producer's (dprobe: the CPU),
 * ts its timestamp.  A pad record only has len_flags (it may be 8 bytes);
 * a lost marker carries the ts of the record that follows it.
 */
struct dp_ring_rec_hdr {
	uint32_t len_flags;
	uint32_t info;
	uint64_t ts;
};

/*
 * A position and the number of events before it, written by one side and
 * read by the other under a sequence count (odd while being written), so
 * the pair is always read consistently.  "Events" are records plus the
 * counts in lost markers.
 */
struct dp_ring_pos {
	uint64_t gen;
	uint64_t pos;
	uint64_t seq;
};

/*
 * Overwrite mode: where the first reservation that began in each 1/64 of
 * the circle ("block") began, with the events and records before it, so
 * that start can move to a record boundary without walking old records.
 */
#define DP_RING_BLOCKS		64u

struct dp_ring_blk {
	uint64_t pos;
	uint64_t seq;		/* events before pos */
	uint64_t recs;		/* records before pos */
};

/*
 * One ring's control page.  Each group sits in its own cache line: what
 * only the producer touches, what it publishes (the reader loads head once
 * per batch of records, which costs the producer one line transfer, not
 * one per field), start, the reader's tail, the owner.  mask, max_len,
 * blk_shift and mode are written once, when the set is created.  Nothing
 * the reader relies on is trusted from here without a bounds check (the
 * target can scribble on its mapping).
 */
struct dp_ring {
	/* producer only */
	uint64_t pending;	/* end of the open reservation */
	uint64_t limit;		/* a record ending at or below goes as is */
	uint64_t mask;		/* ring_size - 1 */
	uint64_t lost_marked;	/* lost announced by lost markers */
	uint64_t next_blk;	/* overwrite: start of the next block */
	uint32_t nest;		/* a record is open */
	uint32_t max_len;	/* largest record, header included */
	uint32_t blk_shift;	/* log2(block size) */
	uint32_t mode;
	uint64_t stall_tail;	/* block: the tail of a reader that did not
				 * move during a whole wait (~0: none) */

	/* producer, published */
	uint64_t head __attribute__((aligned(64)));	/* end of the
							 * committed records */
	uint64_t lost;		/* records the producer dropped */
	uint64_t committed;	/* records committed */

	/* producer, overwrite mode only */
	struct dp_ring_pos start __attribute__((aligned(64)));
	uint64_t overwritten;	/* records before start */

	/* consuming reader */
	struct dp_ring_pos tail __attribute__((aligned(64)));

	struct dp_ring_blk blk[DP_RING_BLOCKS] __attribute__((aligned(64)));

	/* ownership */
	uint32_t state __attribute__((aligned(64)));
	int32_t pid;
	int32_t tid;
	uint32_t index;		/* position in the set */
	char comm[16];		/* the owner's name when it claimed the ring
				 * (producer's note; for a thread that is
				 * gone by the time the reader looks) */

	/*
	 * Counters the producer increments instead of writing records (a
	 * count-only consumer: dprobe stat), with dp_ring_local_inc().
	 * Never reset: a ring's next owner goes on counting, so the sum over
	 * all rings is always the total.
	 */
	uint64_t counters[DP_RING_NCOUNTERS] __attribute__((aligned(64)));
};

struct dp_ring_set_hdr {
	uint64_t magic;
	uint32_t version;
	uint32_t hdr_size;	/* offset of ring 0 */
	uint32_t nr_rings;
	uint32_t mode;
	uint64_t ring_size;	/* data bytes per ring, a power of two */
	uint64_t ring_stride;	/* control page + data */
	uint32_t max_record;	/* largest record, header included */
	uint32_t pad;
	uint64_t claim_failed;	/* threads that found no free ring */
	uint64_t noring_lost;	/* records of threads without a ring */
};

_Static_assert(sizeof(struct dp_ring) <= DP_RING_CTRL_SIZE, "ring control");
_Static_assert(sizeof(struct dp_ring_set_hdr) <= DP_RING_SET_HDR_SIZE,
	       "ring set header");

/* Orders a thread's accesses against a signal handler on the same thread. */
#define dp_ring_signal_barrier() __atomic_signal_fence(__ATOMIC_SEQ_CST)

static inline unsigned char *dp_ring_data(struct dp_ring *r)
{
	return (unsigned char *)r + DP_RING_CTRL_SIZE;
}

static inline struct dp_ring *dp_ring_at(struct dp_ring_set_hdr *set,
					 unsigned i)
{
	return (struct dp_ring *)((unsigned char *)set + set->hdr_size +
				  (uint64_t)i * set->ring_stride);
}

/*
 * +1 in one instruction: a signal handler on this thread cannot split it,
 * and it needs no lock prefix because only this thread writes the counter
 * (the reader only loads it).
 */
static inline void dp_ring_local_inc(uint64_t *p)
{
#if defined(__x86_64__)
	__asm__ volatile("incq %0" : "+m"(*p));
#else
	__atomic_fetch_add(p, 1, __ATOMIC_RELAXED);
#endif
}

/* Producer side of dp_ring_pos: a seqcount write. */
static inline void dp_ring_pos_write(struct dp_ring_pos *p, uint64_t pos,
				     uint64_t seq)
{
	uint64_t gen = p->gen;

	__atomic_store_n(&p->gen, gen + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&p->seq, seq, __ATOMIC_RELAXED);
	__atomic_store_n(&p->pos, pos, __ATOMIC_RELAXED);
	__atomic_store_n(&p->gen, gen + 2, __ATOMIC_RELEASE);
}

/* Where a chunk of @n bytes at @p lands: @p, or the start of the circle. */
static inline uint64_t dp_ring_place(const struct dp_ring *r, uint64_t p,
				     uint64_t n)
{
	uint64_t off = p & r->mask;

	return off + n > r->mask + 1 ? p + (r->mask + 1 - off) : p;
}

/* Fill [from, to) with a pad record, if it is not empty. */
static inline void dp_ring_pad(struct dp_ring *r, uint64_t from, uint64_t to)
{
	struct dp_ring_rec_hdr *hdr;

	if (to == from)
		return;
	hdr = (struct dp_ring_rec_hdr *)(dp_ring_data(r) + (from & r->mask));
	hdr->len_flags = (uint32_t)(to - from) | DP_RING_F_PAD;
}

/*
 * Overwrite mode: move start to a record boundary at or after @target, the
 * first reservation of a block (so old records are never read).  A block
 * entry left from an earlier lap does not count; if none fits (only
 * possible if the target scribbled over the page), everything up to head
 * goes.  start is published before any of the bytes it frees are written:
 * the fence keeps the data stores after it.
 */
static __attribute__((noinline, unused)) void
dp_ring_evict(struct dp_ring *r, uint64_t head, uint64_t target)
{
	uint32_t shift = r->blk_shift;
	uint64_t b = (target + (1ULL << shift) - 1) >> shift;
	uint64_t s = head, seq = r->committed + r->lost_marked;
	uint64_t recs = r->committed;

	for (; b << shift <= head; b++) {
		const struct dp_ring_blk *e = &r->blk[b % DP_RING_BLOCKS];

		if (e->pos >> shift == b && e->pos >= target &&
		    e->pos <= head) {
			s = e->pos;
			seq = e->seq;
			recs = e->recs;
			break;
		}
	}
	__atomic_store_n(&r->overwritten, recs, __ATOMIC_RELAXED);
	dp_ring_pos_write(&r->start, s, seq);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

/*
 * Overwrite mode, at each reservation that begins a new block: note it in
 * the block index, and make sure that what follows fits (evicting a whole
 * block ahead, so that eviction, like this, happens about once a block).
 * The fast path limit stops at the next block boundary.
 */
static inline void dp_ring_overwrite_room(struct dp_ring *r, uint64_t head,
					  uint64_t end)
{
	uint64_t size = r->mask + 1, blk = 1ULL << r->blk_shift;
	uint64_t limit;

	if (head >= r->next_blk) {
		struct dp_ring_blk *e =
			&r->blk[(head >> r->blk_shift) % DP_RING_BLOCKS];

		e->pos = head;
		e->seq = r->committed + r->lost_marked;
		e->recs = r->committed;
		r->next_blk = (head | (blk - 1)) + 1;
	}
	if (end + blk - r->start.pos > size)
		dp_ring_evict(r, head, end + blk - size);
	limit = r->start.pos + size;
	r->limit = limit < r->next_blk ? limit : r->next_blk;
}

/*
 * Make room for a reservation [head, end): true if it fits.  Discard mode
 * looks at the reader's tail again (acquire: the reader is done with the
 * bytes below it); overwrite mode evicts.
 */
static inline int dp_ring_make_room(struct dp_ring *r, uint64_t head,
				    uint64_t end)
{
	uint64_t tail;

	if (r->mode == DP_RING_OVERWRITE) {
		dp_ring_overwrite_room(r, head, end);
		return 1;
	}
	tail = __atomic_load_n(&r->tail.pos, __ATOMIC_ACQUIRE);
	if (tail > head)	/* nonsense: never trust it past head */
		tail = head;
	r->limit = tail + r->mask + 1;
	return end <= r->limit;
}

/* sched_yield(2) without libc: the producer's only system call, made
 * only while a full ring waits. */
static inline void dp_ring_yield(void)
{
	long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "0"(24L /* SYS_sched_yield */)
			 : "rcx", "r11", "memory");
	(void)ret;
}

/*
 * Block mode, the ring full: wait for the reader to make room for
 * [head, end), at most DP_RING_WAIT_TICKS.  A reader that frees nothing
 * in all that time is stalled (stopped, gone): not waited for again
 * while its tail stays where it is.
 */
static inline int dp_ring_wait_room(struct dp_ring *r, uint64_t head,
				    uint64_t end)
{
	uint64_t tail = __atomic_load_n(&r->tail.pos, __ATOMIC_ACQUIRE);
	uint64_t t0;

	if (r->mode != DP_RING_BLOCK || tail == r->stall_tail)
		return 0;
	t0 = __builtin_ia32_rdtsc();
	do {
		dp_ring_yield();
		if (dp_ring_make_room(r, head, end))
			return 1;
	} while (__builtin_ia32_rdtsc() - t0 < DP_RING_WAIT_TICKS);
	r->stall_tail = __atomic_load_n(&r->tail.pos, __ATOMIC_ACQUIRE);
	return 0;
}

/* Leave the reservation state; a nested reserve may run again. */
static inline void dp_ring_unnest(struct dp_ring *r)
{
	dp_ring_signal_barrier();
	r->nest = 0;
}

/*
 * Everything the fast path does not do: a record that wraps, a ring that
 * looks full, pending lost events to announce, a record too big.  Entered
 * with nest set (by dp_ring_reserve).
 */
static __attribute__((noinline, cold, unused)) void *
dp_ring_reserve_slow(struct dp_ring *r, uint32_t size, uint64_t ts,
		     uint32_t info)
{
	uint64_t len = (uint64_t)size + DP_RING_HDR_SIZE;
	uint64_t alen = DP_RING_ALIGN(len);
	uint64_t head = r->head, p = head, pm = 0, pr, end;
	uint64_t lost = __atomic_load_n(&r->lost, __ATOMIC_RELAXED);
	uint64_t mark = lost - r->lost_marked;
	struct dp_ring_rec_hdr *hdr;

	if (len > r->max_len)
		goto drop;
	if (mark) {
		pm = dp_ring_place(r, p, DP_RING_MARKER_SIZE);
		p = pm + DP_RING_MARKER_SIZE;
	}
	pr = dp_ring_place(r, p, alen);
	end = pr + alen;
	if (end > r->limit && !dp_ring_make_room(r, head, end) &&
	    !dp_ring_wait_room(r, head, end))
		goto drop;

	if (mark) {
		dp_ring_pad(r, head, pm);
		hdr = (void *)(dp_ring_data(r) + (pm & r->mask));
		hdr->len_flags = DP_RING_MARKER_SIZE | DP_RING_F_LOST;
		hdr->info = info;
		hdr->ts = ts;
		*(uint64_t *)(hdr + 1) = mark;
		r->lost_marked = lost;
		head = p;
	}
	dp_ring_pad(r, head, pr);
	hdr = (void *)(dp_ring_data(r) + (pr & r->mask));
	hdr->len_flags = (uint32_t)len;
	hdr->info = info;
	hdr->ts = ts;
	r->pending = end;
	return hdr + 1;

drop:
	dp_ring_local_inc(&r->lost);
	dp_ring_unnest(r);
	return NULL;
}

/*
 * Reserve a record of @size payload bytes stamped @ts and @info.  Returns
 * where to write the payload (8-byte aligned), or NULL when the record is
 * dropped (counted; announced to the reader before the next record).
 * Every non-NULL reserve must be followed by dp_ring_commit() or
 * dp_ring_discard() on the same thread.
 */
static inline void *dp_ring_reserve(struct dp_ring *r, uint32_t size,
				    uint64_t ts, uint32_t info)
{
	uint64_t len = (uint64_t)size + DP_RING_HDR_SIZE;
	uint64_t alen = DP_RING_ALIGN(len);
	uint64_t head, off;
	struct dp_ring_rec_hdr *hdr;

	if (__builtin_expect(r->nest, 0)) {
		dp_ring_local_inc(&r->lost);
		return NULL;
	}
	/* From here a nested reserve fails; only then is head read. */
	r->nest = 1;
	dp_ring_signal_barrier();

	head = r->head;
	off = head & r->mask;
	if (__builtin_expect((len > r->max_len) |
			     (r->lost != r->lost_marked) |
			     (head + alen > r->limit) |
			     (off + alen > r->mask + 1), 0))
		return dp_ring_reserve_slow(r, size, ts, info);

	hdr = (struct dp_ring_rec_hdr *)(dp_ring_data(r) + off);
	hdr->len_flags = (uint32_t)len;
	hdr->info = info;
	hdr->ts = ts;
	r->pending = head + alen;
	return hdr + 1;
}

/* Publish the open record (release: its bytes are visible first). */
static inline void dp_ring_commit(struct dp_ring *r)
{
	__atomic_store_n(&r->committed, r->committed + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&r->head, r->pending, __ATOMIC_RELEASE);
	dp_ring_unnest(r);
}

/*
 * Publish the open record cut to @size payload bytes (at most what was
 * reserved): a producer that only knows an upper bound when it reserves
 * (strings) gives the space it did not use back.  Nothing was reserved
 * after the record, and block notes only hold record starts, so the end
 * can move back freely.
 */
static inline void dp_ring_commit_len(struct dp_ring *r, void *payload,
				      uint32_t size)
{
	struct dp_ring_rec_hdr *hdr = (struct dp_ring_rec_hdr *)payload - 1;
	uint32_t old = hdr->len_flags & DP_RING_LEN_MASK;
	uint32_t len = size + DP_RING_HDR_SIZE;

	if (len < old) {
		hdr->len_flags = (hdr->len_flags & ~DP_RING_LEN_MASK) | len;
		r->pending -= DP_RING_ALIGN(old) - DP_RING_ALIGN(len);
	}
	dp_ring_commit(r);
}

/*
 * Drop the open record (@payload as dp_ring_reserve returned it), e.g.
 * when a filter rejects it after the fetch.  It is simply forgotten when
 * nothing else was written with it; otherwise (a lost marker or a pad
 * went before it) it becomes a pad record and is committed, so the marker
 * is not lost.
 */
static inline void dp_ring_discard(struct dp_ring *r, void *payload)
{
	struct dp_ring_rec_hdr *hdr = (struct dp_ring_rec_hdr *)payload - 1;
	uint64_t alen = DP_RING_ALIGN(hdr->len_flags & DP_RING_LEN_MASK);

	if (r->pending - alen != r->head) {
		hdr->len_flags = (uint32_t)alen | DP_RING_F_PAD;
		__atomic_store_n(&r->head, r->pending, __ATOMIC_RELEASE);
	}
	dp_ring_unnest(r);
}

/*
 * Copy @n bytes without calling memcpy: 8 bytes at a time while it can
 * (the destination is 8-byte aligned), then bytes.  The empty asm keeps
 * the compiler from turning the loops back into a memcpy call.
 */
static inline void dp_ring_copy(void *dst, const void *src, uint32_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;

	for (; n >= 8; n -= 8, d += 8, s += 8) {
		uint64_t w;

		__builtin_memcpy(&w, s, 8);	/* one unaligned load */
		*(uint64_t *)(void *)d = w;
		__asm__("" : "+r"(d));
	}
	for (; n; n--) {
		*d++ = *s++;
		__asm__("" : "+r"(d));
	}
}

/* reserve + copy + commit.  Returns 0, or -1 if the record was dropped. */
static inline int dp_ring_write(struct dp_ring *r, uint64_t ts, uint32_t info,
				const void *payload, uint32_t size)
{
	void *p = dp_ring_reserve(r, size, ts, info);

	if (!p)
		return -1;
	dp_ring_copy(p, payload, size);
	dp_ring_commit(r);
	return 0;
}

/*
 * Take a free ring for thread @tid of process @pid; NULL when all are
 * taken (counted in the set header).  Called once per thread; the caller
 * keeps the pointer (in TLS).  The hint spreads threads so they do not all
 * race for ring 0.
 */
/*
 * The producer runs on a ring's control-page constants: a ring whose
 * constants are not the set's is never used.  Checked when a ring is
 * claimed rather than when the set is mapped, so that mapping a set
 * touches only its header (a fork child maps one before it runs on).
 */
static inline int dp_ring_consts_ok(const struct dp_ring_set_hdr *set,
				    const struct dp_ring *r)
{
	return r->mask == set->ring_size - 1 &&
	       r->max_len == set->max_record && r->mode == set->mode &&
	       r->blk_shift ==
		       (uint32_t)__builtin_ctzll(set->ring_size / DP_RING_BLOCKS);
}

static inline struct dp_ring *dp_ring_claim(struct dp_ring_set_hdr *set,
					    int32_t pid, int32_t tid)
{
	uint32_t n = set->nr_rings;

	for (uint32_t k = 0; k < n; k++) {
		struct dp_ring *r = dp_ring_at(set, ((uint32_t)tid + k) % n);
		uint32_t free_state = DP_RING_FREE;

		if (__atomic_load_n(&r->state, __ATOMIC_RELAXED) != DP_RING_FREE)
			continue;
		if (!__atomic_compare_exchange_n(&r->state, &free_state,
						 DP_RING_ACTIVE, 0,
						 __ATOMIC_ACQUIRE,
						 __ATOMIC_RELAXED))
			continue;
		if (!dp_ring_consts_ok(set, r))
			return NULL;	/* a set nobody should write into */
		r->stall_tail = ~(uint64_t)0;
		__atomic_store_n(&r->pid, pid, __ATOMIC_RELAXED);
		__atomic_store_n(&r->tid, tid, __ATOMIC_RELEASE);
		return r;
	}
	__atomic_fetch_add(&set->claim_failed, 1, __ATOMIC_RELAXED);
	return NULL;
}

/*
 * The thread is done with @r (e.g. from a pthread key destructor at thread
 * exit).  Its committed records stay readable; the consuming reader frees
 * the ring once it has drained it.  The thread must not touch @r again.
 * A fork child must not use its parent's rings: it forgets the pointer
 * (pthread_atfork) and claims its own.
 */
static inline void dp_ring_release(struct dp_ring *r)
{
	__atomic_store_n(&r->state, DP_RING_DEAD, __ATOMIC_RELEASE);
}

/* A record of a thread that has no ring (none was free). */
static inline void dp_ring_set_note_lost(struct dp_ring_set_hdr *set)
{
	__atomic_fetch_add(&set->noring_lost, 1, __ATOMIC_RELAXED);
}

#endif
