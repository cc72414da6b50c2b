// SPDX-License-Identifier: GPL-2.0
/*
 * Ring sets (memfd creation, mapping, checks) and the readers.
 *
 * The reader trusts nothing in the shared mapping: the producer is another
 * process that may die at any instruction or scribble over its mapping.
 * Positions and lengths are bounds-checked before use, loops are bounded,
 * and whatever makes no sense becomes a "lost, count unknown" entry; the
 * reader never faults and never spins forever.
 *
 * Reading a record while the producer may overwrite it (overwrite mode,
 * or a snapshot behind another consumer) is a seqlock read: copy, then
 * look again at where the oldest intact data starts (start, or tail); if
 * it moved past the record, the copy may be torn and is thrown away, and
 * the reader resyncs at the new position, counting what it skipped.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ring/ring.h"

/* A whole set must fit comfortably in the address space. */
#define SET_MAX_BYTES	(1ULL << 40)
/* Records this long or shorter are copied out as this many bytes. */
#define SMALL_COPY	64
/* Reads of a seqcount pair before giving up on it for now. */
#define PAIR_TRIES	1000
/* Resyncs in one read before giving up for now (a producer lapping us). */
#define RESYNC_TRIES	64

static bool is_pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

static uint32_t max_record_for(uint64_t ring_size)
{
	uint64_t q = ring_size / 4;

	return q < DP_RING_MAX_RECORD ? (uint32_t)q : DP_RING_MAX_RECORD;
}

uint64_t dp_ring_size_round(uint64_t bytes)
{
	uint64_t size = DP_RING_MIN_SIZE;

	if (bytes > DP_RING_MAX_SIZE)
		return 0;
	while (size < bytes)
		size <<= 1;
	return size;
}

/* ---- ring sets ------------------------------------------------------------ */

static void set_fill(struct dp_ring_set *set, int fd, void *base,
		     size_t map_size)
{
	struct dp_ring_set_hdr *h = base;

	set->fd = fd;
	set->hdr = h;
	set->map_size = map_size;
	set->nr_rings = h->nr_rings;
	set->ring_size = h->ring_size;
	set->ring_stride = h->ring_stride;
	set->mode = h->mode;
	set->max_record = h->max_record;
}

/* A ring's blocks (ring_api.h): 1/DP_RING_BLOCKS of it each. */
static uint32_t blk_shift_for(uint64_t ring_size)
{
	return (uint32_t)__builtin_ctzll(ring_size / DP_RING_BLOCKS);
}

/* The constants of a ring's control page; everything else zero. */
static void ring_consts(struct dp_ring *r, uint64_t ring_size,
			enum dp_ring_mode mode)
{
	r->mask = ring_size - 1;
	r->max_len = max_record_for(ring_size);
	r->blk_shift = blk_shift_for(ring_size);
	r->mode = mode;
}

int dp_ring_set_create(struct dp_ring_set *set, unsigned nr_rings,
		       uint64_t ring_size, enum dp_ring_mode mode)
{
	uint64_t stride = DP_RING_CTRL_SIZE + ring_size, total;
	struct dp_ring_set_hdr *h;
	void *base;
	int fd, err;

	if (!nr_rings || nr_rings > DP_RING_MAX_RINGS || !is_pow2(ring_size) ||
	    ring_size < DP_RING_MIN_SIZE || ring_size > DP_RING_MAX_SIZE ||
	    (mode != DP_RING_DISCARD && mode != DP_RING_OVERWRITE &&
	     mode != DP_RING_BLOCK))
		return -EINVAL;
	total = DP_RING_SET_HDR_SIZE + nr_rings * stride;
	if (total > SET_MAX_BYTES)
		return -E2BIG;

	fd = memfd_create("dprobe-rings", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	/* Sealed so that no side can truncate it under the other's mapping. */
	if (ftruncate(fd, (off_t)total) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) < 0)
		goto fail;
	base = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED)
		goto fail;

	h = base;
	h->version = DP_RING_VERSION;
	h->hdr_size = DP_RING_SET_HDR_SIZE;
	h->nr_rings = nr_rings;
	h->mode = mode;
	h->ring_size = ring_size;
	h->ring_stride = stride;
	h->max_record = max_record_for(ring_size);
	for (unsigned i = 0; i < nr_rings; i++) {
		struct dp_ring *r = dp_ring_at(h, i);

		ring_consts(r, ring_size, mode);
		r->index = i;
	}
	__atomic_store_n(&h->magic, DP_RING_MAGIC, __ATOMIC_RELEASE);
	set_fill(set, fd, base, total);
	return 0;

fail:
	err = -errno;
	close(fd);
	return err;
}

/* Is the header at @h, in a file of @size bytes, one we can read safely? */
static bool hdr_ok(const struct dp_ring_set_hdr *h, uint64_t size)
{
	uint64_t rs = h->ring_size;

	if (h->magic != DP_RING_MAGIC || h->version != DP_RING_VERSION ||
	    h->hdr_size != DP_RING_SET_HDR_SIZE ||
	    !h->nr_rings || h->nr_rings > DP_RING_MAX_RINGS ||
	    !is_pow2(rs) || rs < DP_RING_MIN_SIZE || rs > DP_RING_MAX_SIZE ||
	    h->ring_stride != DP_RING_CTRL_SIZE + rs ||
	    (h->mode != DP_RING_DISCARD && h->mode != DP_RING_OVERWRITE &&
	     h->mode != DP_RING_BLOCK) ||
	    h->max_record != max_record_for(rs))
		return false;
	return DP_RING_SET_HDR_SIZE + h->nr_rings * h->ring_stride <= size;
}

int dp_ring_set_map(struct dp_ring_set *set, int fd)
{
	struct stat st;
	void *base;
	int seals;

	seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0)
		return errno == EINVAL ? -EINVAL : -errno;
	if (!(seals & F_SEAL_SHRINK))
		return -EINVAL;
	if (fstat(fd, &st) < 0)
		return -errno;
	if ((uint64_t)st.st_size < DP_RING_SET_HDR_SIZE ||
	    (uint64_t)st.st_size > SET_MAX_BYTES)
		return -EINVAL;
	base = mmap(NULL, st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		    0);
	if (base == MAP_FAILED)
		return -errno;
	/* the rings' own constants are checked as each is claimed */
	if (!hdr_ok(base, st.st_size)) {
		munmap(base, st.st_size);
		return -EINVAL;
	}
	set_fill(set, fd, base, st.st_size);
	return 0;
}

void dp_ring_set_close(struct dp_ring_set *set)
{
	if (set->hdr)
		munmap(set->hdr, set->map_size);
	if (set->fd >= 0)
		close(set->fd);
	set->hdr = NULL;
	set->fd = -1;
}

void dp_ring_stats(const struct dp_ring_set *set, unsigned i,
		   struct dp_ring_stats *st)
{
	struct dp_ring *r = dp_ring_get(set, i);

	st->state = __atomic_load_n(&r->state, __ATOMIC_ACQUIRE);
	st->pid = __atomic_load_n(&r->pid, __ATOMIC_RELAXED);
	st->tid = __atomic_load_n(&r->tid, __ATOMIC_RELAXED);
	st->committed = __atomic_load_n(&r->committed, __ATOMIC_RELAXED);
	st->dropped = __atomic_load_n(&r->lost, __ATOMIC_RELAXED);
	st->overwritten = __atomic_load_n(&r->overwritten, __ATOMIC_RELAXED);
}

uint64_t dp_ring_set_claim_failed(const struct dp_ring_set *set)
{
	return __atomic_load_n(&set->hdr->claim_failed, __ATOMIC_RELAXED);
}

uint64_t dp_ring_set_noring_lost(const struct dp_ring_set *set)
{
	return __atomic_load_n(&set->hdr->noring_lost, __ATOMIC_RELAXED);
}

/* ---- readers -------------------------------------------------------------- */

/* The reader's place in one ring. */
struct rd_ring {
	uint64_t pos;		/* next record */
	uint64_t seq;		/* events before pos */
	uint64_t head;		/* head as last loaded: read up to it first */
	uint64_t published;	/* pos as last published in tail */
	uint64_t lim;		/* read no further (snapshot end, merge pass) */
	uint64_t pending_lost;	/* to report before anything else */
	uint64_t last_ts;
	uint64_t key;		/* merge: ts of the peeked entry */
	bool pending_unknown;
	bool seq_unknown;	/* seq is not known (after garbage) */
	bool tail_reported;	/* final drops reported (this pass of a
				 * snapshot; for good after final) */
	bool populated;		/* its pages mapped at once (populate()) */
};

struct dp_ring_reader {
	struct dp_ring_set *set;
	bool consume;
	bool final;
	struct rd_ring *rs;
	unsigned char *buf;	/* one record, header included */
	uint64_t lost;
	bool lost_unknown;
	unsigned *heap;		/* merge: rings with an entry, by key */
	unsigned nheap;
	/* merge: the one ring left in this pass (the others are empty up
	 * to their pass limit), read on with no look ahead and no heap */
	bool solo;
	unsigned solo_ring;
};

/*
 * Read a (pos, seq) pair.  False if its writer is in the middle of writing
 * it: it may have been preempted there (try again later), or have died
 * there (then *@pos is the best guess and *@seq unknown).
 */
static bool pair_read(const struct dp_ring_pos *p, uint64_t *pos,
		      uint64_t *seq)
{
	for (int i = 0; i < PAIR_TRIES; i++) {
		uint64_t gen = __atomic_load_n(&p->gen, __ATOMIC_ACQUIRE);

		if (gen & 1)
			continue;
		*pos = __atomic_load_n(&p->pos, __ATOMIC_RELAXED);
		*seq = __atomic_load_n(&p->seq, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&p->gen, __ATOMIC_RELAXED) == gen)
			return true;
	}
	*pos = __atomic_load_n(&p->pos, __ATOMIC_ACQUIRE);
	*seq = 0;
	return false;
}

/* No producer will write to @r again (so a half-written pair stays so). */
static bool producer_gone(const struct dp_ring_reader *rd, struct dp_ring *r)
{
	return rd->final ||
	       __atomic_load_n(&r->state, __ATOMIC_ACQUIRE) == DP_RING_DEAD;
}

static void lost_unknown(struct rd_ring *s)
{
	s->pending_unknown = true;
	s->seq_unknown = true;
}

/* Give up on the ring's contents up to @h: they make no sense. */
static void skip_garbage(struct rd_ring *s, uint64_t h)
{
	lost_unknown(s);
	s->pos = h;
}

/*
 * Hand what was read back to the producer: at the end of each batch (when
 * head is loaded again), or every 1/16 of the ring, not for every record,
 * which would pull the line back and forth.
 */
static void publish_tail(struct dp_ring_reader *rd, struct dp_ring *r,
			 struct rd_ring *s, bool now)
{
	if (!rd->consume || s->pos == s->published ||
	    (!now && s->pos - s->published < rd->set->ring_size / 16))
		return;
	dp_ring_pos_write(&r->tail, s->pos, s->seq);
	s->published = s->pos;
}

/* Move to (@pos, @seq), @pos ahead of s->pos; the events between are lost. */
static void resync(struct rd_ring *s, uint64_t pos, uint64_t seq, bool known)
{
	if (!known || s->seq_unknown || seq < s->seq) {
		s->pending_unknown = true;
	} else {
		s->pending_lost += seq - s->seq;
	}
	s->pos = pos;
	s->seq = seq;
	s->seq_unknown = !known;
}

/*
 * Bring s->pos up to date with what the producer may have done: skipped
 * over by start (overwrite mode: lost), or, for a snapshot, over by
 * another reader's tail (consumed there, not lost).  False if a pair is
 * being written by a writer that may still finish: read again later.
 */
static bool catch_up(struct dp_ring_reader *rd, struct dp_ring *r,
		     struct rd_ring *s)
{
	uint64_t pos, seq;
	bool known;

	if (!rd->consume) {
		known = pair_read(&r->tail, &pos, &seq);
		if (!known && !rd->final)	/* the consumer is alive */
			return false;
		if (pos > s->pos) {
			s->pos = pos;
			s->seq = seq;
			s->seq_unknown = !known;
		}
	}
	if (rd->set->mode == DP_RING_OVERWRITE) {
		known = pair_read(&r->start, &pos, &seq);
		if (!known && !producer_gone(rd, r))
			return false;
		if (pos > s->pos)
			resync(s, pos, seq, known);
	}
	return true;
}

/*
 * After copying the record at @pos: could the producer have been writing
 * over it meanwhile?  (The fence orders the copy before the look.)
 */
static bool overrun(struct dp_ring_reader *rd, struct dp_ring *r,
		    uint64_t pos)
{
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (rd->set->mode == DP_RING_OVERWRITE)
		return __atomic_load_n(&r->start.pos, __ATOMIC_RELAXED) > pos;
	return !rd->consume &&
	       __atomic_load_n(&r->tail.pos, __ATOMIC_RELAXED) > pos;
}

/* Does a header say something possible for a record at @pos below @h? */
static bool hdr_sane(const struct dp_ring_set *set, uint32_t lf, uint64_t pos,
		     uint64_t h)
{
	uint64_t len = lf & DP_RING_LEN_MASK, alen = DP_RING_ALIGN(len);
	uint64_t off = pos & (set->ring_size - 1);

	if (off + alen > set->ring_size || pos + alen > h)
		return false;
	switch (lf & ~DP_RING_LEN_MASK) {
	case DP_RING_F_PAD:
		return len >= 8 && !(len & 7);
	case DP_RING_F_LOST:
		return len == DP_RING_MARKER_SIZE;
	case 0:
		return len >= DP_RING_HDR_SIZE && len <= set->max_record;
	default:
		return false;
	}
}

/*
 * Drops after the ring's last record, once no producer can still announce
 * them with a marker (the ring was released, or the reader was told the
 * producers are gone) and the reader is at the real end of the ring, not
 * only at the end of a pass or snapshot: they come after every record.
 * head is loaded after the state, so it includes the last commit.  The
 * consuming reader takes the drops over for good.
 */
static bool final_drops(struct dp_ring_reader *rd, struct dp_ring *r,
			struct rd_ring *s)
{
	uint64_t lost, marked;

	if (!rd->final &&
	    __atomic_load_n(&r->state, __ATOMIC_ACQUIRE) != DP_RING_DEAD)
		return false;
	/* once per ring in a snapshot, and once for good after final */
	if (((!rd->consume || rd->final) && s->tail_reported) ||
	    __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) != s->pos)
		return false;
	lost = __atomic_load_n(&r->lost, __ATOMIC_RELAXED);
	marked = __atomic_load_n(&r->lost_marked, __ATOMIC_RELAXED);
	if (lost <= marked)
		return false;
	if (rd->consume)
		__atomic_store_n(&r->lost_marked, lost, __ATOMIC_RELAXED);
	if (!rd->consume || rd->final)
		s->tail_reported = true;
	s->pending_lost += lost - marked;
	return true;
}

static enum dp_ring_kind emit_lost(struct dp_ring_reader *rd,
				   struct rd_ring *s, struct dp_ring_entry *e,
				   bool take)
{
	e->kind = DP_RING_LOST;
	e->info = 0;
	e->ts = s->last_ts;
	e->data = NULL;
	e->len = 0;
	e->lost = s->pending_unknown ? DP_RING_LOST_UNKNOWN : s->pending_lost;
	if (take) {
		if (s->pending_unknown)
			rd->lost_unknown = true;
		else
			rd->lost += s->pending_lost;
		s->pending_lost = 0;
		s->pending_unknown = false;
	}
	return DP_RING_LOST;
}

/* Fill @e from the record (or its first bytes) copied to @buf. */
static enum dp_ring_kind fill_entry(const unsigned char *buf,
				    struct dp_ring_entry *e, uint32_t lf)
{
	const struct dp_ring_rec_hdr *hdr = (const void *)buf;

	e->info = hdr->info;
	e->ts = hdr->ts;
	if (lf & DP_RING_F_LOST) {
		e->kind = DP_RING_LOST;
		e->data = NULL;
		e->len = 0;
		memcpy(&e->lost, hdr + 1, sizeof(e->lost));
	} else {
		e->kind = DP_RING_RECORD;
		e->data = hdr + 1;
		e->len = (lf & DP_RING_LEN_MASK) - DP_RING_HDR_SIZE;
		e->lost = 0;
	}
	return e->kind;
}

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

/*
 * The reader's page tables for a ring's data, made at once when the ring
 * first has records: a page
 * first touched by a copy out of the ring costs a fault (20 us and more
 * on a paravirtualised VM), one populate call a fraction of it.  Best
 * effort (kernels before 5.14 say EINVAL): the copies fault instead.
 */
static void populate(const struct dp_ring_set *set, struct dp_ring *r)
{
	/* the set's size, validated when mapped: not the ring's own mask,
	 * which its producer could have changed */
	madvise(dp_ring_data(r), set->ring_size, MADV_POPULATE_READ);
}

/*
 * The next entry of ring @i: taken (copied out to rd->buf and, for a
 * consuming reader, consumed) if @take, else only looked at (header and
 * marker count copied aside, e->data not to be used): a look must not
 * clobber the record the caller holds.
 */
static enum dp_ring_kind rd_next(struct dp_ring_reader *rd, unsigned i,
				 struct dp_ring_entry *e, bool take)
{
	const struct dp_ring_set *set = rd->set;
	struct dp_ring *r = dp_ring_get(set, i);
	const unsigned char *data = dp_ring_data(r);
	struct rd_ring *s = &rd->rs[i];
	uint64_t peek[DP_RING_MARKER_SIZE / 8];
	unsigned char *buf = take ? rd->buf : (unsigned char *)peek;

	e->ring = i;
	for (int tries = 0; tries < RESYNC_TRIES;) {
		uint64_t h, off, alen;
		uint32_t lf;

		if (s->pending_lost || s->pending_unknown)
			return emit_lost(rd, s, e, take);
		/* (a consuming reader of a discarding ring has nothing to
		 * catch up with: only it moves the tail) */
		if (!rd->consume || set->mode == DP_RING_OVERWRITE) {
			if (!catch_up(rd, r, s))
				break;
			if (s->pending_lost || s->pending_unknown)
				return emit_lost(rd, s, e, take);
		}

		if (s->pos >= s->head) {
			publish_tail(rd, r, s, true);
			s->head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
		}
		h = s->head;
		if (s->pos > h) {	/* head went back: garbage */
			skip_garbage(s, h);
			tries++;
			continue;
		}
		if (h > s->lim)
			h = s->lim;
		if (s->pos >= h) {
			if (s->pos == h && final_drops(rd, r, s))
				continue;
			break;
		}
		/* a ring with records: a thread's, which is likely to
		 * make more (not every ring of the set: most stay empty) */
		if (!s->populated) {
			s->populated = true;
			populate(rd->set, r);
		}

		off = s->pos & (set->ring_size - 1);
		lf = __atomic_load_n((const uint32_t *)(data + off),
				     __ATOMIC_RELAXED);
		if (!hdr_sane(set, lf, s->pos, h)) {
			if (!overrun(rd, r, s->pos))
				skip_garbage(s, h);
			tries++;
			continue;
		}
		alen = DP_RING_ALIGN(lf & DP_RING_LEN_MASK);
		if (lf & DP_RING_F_PAD) {
			if (overrun(rd, r, s->pos)) {	/* a torn length */
				tries++;
				continue;
			}
			s->pos += alen;
			continue;
		}
		if (take && alen <= SMALL_COPY && off + SMALL_COPY <=
		    set->ring_size && SMALL_COPY <= set->max_record)
			/* a fixed size the compiler copies inline, the
			 * bytes after the record included (they are not
			 * used) */
			memcpy(buf, data + off, SMALL_COPY);
		else
			memcpy(buf, data + off, take ? alen :
			       (lf & DP_RING_F_LOST) ? DP_RING_MARKER_SIZE :
			       DP_RING_HDR_SIZE);
		if (overrun(rd, r, s->pos)) {
			tries++;	/* catch_up() resyncs */
			continue;
		}
		fill_entry(buf, e, lf);
		if (!take)
			return e->kind;

		s->pos += alen;
		if (e->kind == DP_RING_LOST) {
			s->seq += e->lost;
			rd->lost += e->lost;
		} else {
			s->seq++;
		}
		s->last_ts = e->ts;
		if (s->pos - s->published >= set->ring_size / 16)
			publish_tail(rd, r, s, false);
		return e->kind;
	}
	e->kind = DP_RING_EMPTY;
	return DP_RING_EMPTY;
}

/* Where a reader starts in ring @i: the consumer's tail, or start. */
static void rd_ring_start(struct dp_ring_reader *rd, unsigned i)
{
	struct dp_ring *r = dp_ring_get(rd->set, i);
	struct rd_ring *s = &rd->rs[i];
	uint64_t pos, seq, h;
	bool known;

	memset(s, 0, sizeof(*s));
	known = pair_read(&r->tail, &pos, &seq);
	s->pos = pos;
	s->published = pos;
	s->seq = seq;
	s->seq_unknown = !known;
	s->lim = UINT64_MAX;
	/* A writer preempted inside a pair write gets the CPU back soon. */
	for (int k = 0; k < 100 && !catch_up(rd, r, s); k++)
		sched_yield();
	/* What start skipped before the reader ever looked is not news. */
	s->pending_lost = 0;
	s->pending_unknown = false;
	if (!rd->consume) {
		h = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
		s->lim = h;
		if (s->pos > h)
			s->pos = h;
	}
}

struct dp_ring_reader *dp_ring_reader_new(struct dp_ring_set *set,
					  bool consume)
{
	struct dp_ring_reader *rd = calloc(1, sizeof(*rd));

	if (!rd)
		return NULL;
	rd->set = set;
	rd->consume = consume;
	rd->rs = calloc(set->nr_rings, sizeof(*rd->rs));
	rd->heap = calloc(set->nr_rings, sizeof(*rd->heap));
	rd->buf = malloc(set->max_record);
	if (!rd->rs || !rd->heap || !rd->buf) {
		dp_ring_reader_free(rd);
		return NULL;
	}
	for (unsigned i = 0; i < set->nr_rings; i++)
		rd_ring_start(rd, i);
	return rd;
}

void dp_ring_reader_free(struct dp_ring_reader *rd)
{
	if (!rd)
		return;
	free(rd->rs);
	free(rd->heap);
	free(rd->buf);
	free(rd);
}

void dp_ring_reader_rewind(struct dp_ring_reader *rd)
{
	if (rd->consume)
		return;
	rd->nheap = 0;
	rd->solo = false;
	for (unsigned i = 0; i < rd->set->nr_rings; i++)
		rd_ring_start(rd, i);
}

enum dp_ring_kind dp_ring_read(struct dp_ring_reader *rd, unsigned ring,
			       struct dp_ring_entry *e)
{
	if (ring >= rd->set->nr_rings) {
		e->kind = DP_RING_EMPTY;
		return DP_RING_EMPTY;
	}
	return rd_next(rd, ring, e, true);
}

/* ---- merge ---------------------------------------------------------------- */

static bool key_less(const struct dp_ring_reader *rd, unsigned a, unsigned b)
{
	uint64_t ka = rd->rs[a].key, kb = rd->rs[b].key;

	return ka < kb || (ka == kb && a < b);
}

static void heap_swap(unsigned *h, unsigned a, unsigned b)
{
	unsigned t = h[a];

	h[a] = h[b];
	h[b] = t;
}

static void heap_push(struct dp_ring_reader *rd, unsigned ring, uint64_t key)
{
	unsigned *h = rd->heap, k = rd->nheap++;

	rd->rs[ring].key = key;
	h[k] = ring;
	while (k && key_less(rd, h[k], h[(k - 1) / 2])) {
		heap_swap(h, k, (k - 1) / 2);
		k = (k - 1) / 2;
	}
}

static unsigned heap_pop(struct dp_ring_reader *rd)
{
	unsigned *h = rd->heap, top = h[0], n = --rd->nheap, k = 0;

	h[0] = h[n];
	for (;;) {
		unsigned l = 2 * k + 1, m = k;

		if (l < n && key_less(rd, h[l], h[m]))
			m = l;
		if (l + 1 < n && key_less(rd, h[l + 1], h[m]))
			m = l + 1;
		if (m == k)
			break;
		heap_swap(h, k, m);
		k = m;
	}
	return top;
}

/* Peek ring @i and put it in the heap if it has an entry. */
static void merge_add(struct dp_ring_reader *rd, unsigned i)
{
	struct dp_ring_entry pk;

	if (rd_next(rd, i, &pk, false) != DP_RING_EMPTY)
		heap_push(rd, i, pk.ts);
}

/*
 * A pass reads each ring up to where its head was when the pass began.
 * The heads are all read first, then the rings' first entries: reading
 * an entry may take time (the ring's pages mapped, populate()), and a
 * head read after it could take in a later thread's records while an
 * earlier ring's last ones wait for the next pass, out of order.
 */
static void merge_start_pass(struct dp_ring_reader *rd)
{
	if (rd->consume && !rd->final)
		for (unsigned i = 0; i < rd->set->nr_rings; i++)
			rd->rs[i].lim = __atomic_load_n(
				&dp_ring_get(rd->set, i)->head,
				__ATOMIC_ACQUIRE);
	for (unsigned i = 0; i < rd->set->nr_rings; i++)
		merge_add(rd, i);
}

enum dp_ring_kind dp_ring_read_merged(struct dp_ring_reader *rd,
				      struct dp_ring_entry *e)
{
	/* a single thread's records (the common case): each is read once,
	 * not looked at first to be ordered against no other */
	if (rd->solo) {
		if (rd_next(rd, rd->solo_ring, e, true) != DP_RING_EMPTY)
			return e->kind;
		rd->solo = false;
	}
	if (!rd->nheap)
		merge_start_pass(rd);
	while (rd->nheap) {
		unsigned i = heap_pop(rd);

		if (rd_next(rd, i, e, true) == DP_RING_EMPTY)
			continue;
		if (rd->nheap) {
			merge_add(rd, i);
		} else {
			rd->solo = true;
			rd->solo_ring = i;
		}
		return e->kind;
	}
	e->kind = DP_RING_EMPTY;
	return DP_RING_EMPTY;
}

/* ---- waiting, exited threads ---------------------------------------------- */

/* Bytes of ring @i the reader has not read (1 for lost events only). */
static uint64_t unread(struct dp_ring_reader *rd, unsigned i)
{
	struct dp_ring *r = dp_ring_get(rd->set, i);
	const struct rd_ring *s = &rd->rs[i];
	uint64_t h = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);

	if (!rd->consume && h > s->lim)
		h = s->lim;
	if (h > s->pos)
		return h - s->pos;
	if (s->pending_lost || s->pending_unknown || h != s->pos)
		return 1;
	/* drops after the last record, which the next read reports */
	return producer_gone(rd, r) &&
	       !((!rd->consume || rd->final) && s->tail_reported) &&
	       __atomic_load_n(&r->lost, __ATOMIC_RELAXED) >
		       __atomic_load_n(&r->lost_marked, __ATOMIC_RELAXED);
}

/*
 * Poll every millisecond.  A little data waits for the next poll, so it is
 * read in a batch: a reader taking records one at a time right behind a
 * producer pulls the same cache lines back and forth and slows both.
 */
bool dp_ring_reader_wait(struct dp_ring_reader *rd, int timeout_ms)
{
	const struct timespec ms = { 0, 1000000 };
	uint64_t batch = rd->set->ring_size / 8;

	for (int waited = 0;; waited++) {
		bool any = rd->nheap > 0 || rd->solo;

		for (unsigned i = 0; i < rd->set->nr_rings; i++) {
			uint64_t n = unread(rd, i);

			if (n >= batch)
				return true;
			any |= n > 0;
		}
		if (any && waited > 0)
			return true;
		if (waited >= timeout_ms)
			return any;
		nanosleep(&ms, NULL);
	}
}

void dp_ring_reader_final(struct dp_ring_reader *rd)
{
	rd->final = true;
	/* nothing written from now on is read: no producer is left, and a
	 * process that keeps scribbling on its mapping must not keep the
	 * reader reading */
	if (rd->consume)
		for (unsigned i = 0; i < rd->set->nr_rings; i++)
			rd->rs[i].lim = __atomic_load_n(
				&dp_ring_get(rd->set, i)->head, __ATOMIC_ACQUIRE);
}

unsigned dp_ring_reader_reap(struct dp_ring_reader *rd)
{
	unsigned n = 0;

	for (unsigned i = 0; i < rd->set->nr_rings; i++) {
		struct dp_ring *r = dp_ring_get(rd->set, i);
		uint32_t active = DP_RING_ACTIVE;
		char path[64];
		int pid, tid;

		if (__atomic_load_n(&r->state, __ATOMIC_ACQUIRE) != active)
			continue;
		tid = __atomic_load_n(&r->tid, __ATOMIC_ACQUIRE);
		pid = __atomic_load_n(&r->pid, __ATOMIC_RELAXED);
		if (pid <= 0 || tid <= 0)	/* being claimed, or garbage */
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d", pid, tid);
		if (access(path, F_OK) == 0 || errno != ENOENT)
			continue;
		if (__atomic_compare_exchange_n(&r->state, &active,
						DP_RING_DEAD, false,
						__ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED))
			n++;
	}
	return n;
}

/*
 * Back to a fresh ring (no producer can be using it), then free it.  The
 * state word is left alone until everything else is reset: a thread may
 * claim the ring the moment it reads FREE.
 */
static void ring_reset(struct dp_ring_set *set, unsigned i)
{
	struct dp_ring *r = dp_ring_get(set, i);

	memset(r, 0, offsetof(struct dp_ring, state));
	ring_consts(r, set->ring_size, set->mode);
	r->pid = 0;
	r->tid = 0;
	__atomic_store_n(&r->state, DP_RING_FREE, __ATOMIC_RELEASE);
}

unsigned dp_ring_reader_reclaim(struct dp_ring_reader *rd)
{
	unsigned n = 0;

	if (!rd->consume)
		return 0;
	for (unsigned i = 0; i < rd->set->nr_rings; i++) {
		struct dp_ring *r = dp_ring_get(rd->set, i);
		struct rd_ring *s = &rd->rs[i];

		if (__atomic_load_n(&r->state, __ATOMIC_ACQUIRE) !=
			    DP_RING_DEAD ||
		    s->pos != __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) ||
		    s->pending_lost || s->pending_unknown ||
		    __atomic_load_n(&r->lost, __ATOMIC_RELAXED) !=
			    __atomic_load_n(&r->lost_marked, __ATOMIC_RELAXED))
			continue;
		ring_reset(rd->set, i);
		memset(s, 0, sizeof(*s));
		s->lim = UINT64_MAX;
		/* a new thread's records wait for the next pass, as in any
		 * ring that pass did not take in */
		if (rd->solo && rd->solo_ring == i)
			rd->solo = false;
		n++;
	}
	return n;
}

uint64_t dp_ring_reader_lost(const struct dp_ring_reader *rd, bool *unknown)
{
	if (unknown)
		*unknown = rd->lost_unknown;
	return rd->lost;
}

uint64_t dp_ring_set_counter(const struct dp_ring_set *set, unsigned idx)
{
	uint64_t n = 0;

	if (idx >= DP_RING_NCOUNTERS)
		return 0;
	for (unsigned i = 0; i < set->nr_rings; i++)
		n += __atomic_load_n(&dp_ring_get(set, i)->counters[idx],
				     __ATOMIC_RELAXED);
	return n;
}
