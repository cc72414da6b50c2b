/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Ring buffers: per-thread single-producer rings in shared memory, the
 * record header, lost-event counting, and the readers.  Knows nothing of
 * what a record holds.
 *
 * dprobe creates a ring set (one sealed memfd), hands the fd to the
 * producer process (the in-process agent), which maps it too; each
 * producer thread claims a ring once and writes records with the
 * header-only fast path in ring_api.h.  dprobe reads them with a
 * consuming reader (trace_pipe: records in order, consumed) or a snapshot
 * reader (trace: the current contents, not consumed), ring by ring or
 * merged in timestamp order.
 *
 * Wakeups: none.  The producer never makes a syscall, so the reader polls
 * (dp_ring_reader_wait() sleeps 1 ms at a time).  A 1 MiB ring holds about
 * 20,000 typical records, far more than arrive in a millisecond at the
 * rates a reader that formats text can keep up with.
 *
 * Lost events.  The reader turns every loss into a DP_RING_LOST entry at
 * the place in the ring's stream where it happened: records the producer
 * dropped (discard mode full, nested reserve, too big), records
 * overwritten before the reader got to them (overwrite mode), and data
 * that made no sense (DP_RING_LOST_UNKNOWN).  Drops after a thread's last
 * record are reported once the ring is released or dp_ring_reader_final()
 * says the producers are gone.
 *
 * Rings of exited threads: the producer releases its ring at thread exit
 * (dp_ring_release() from a pthread key destructor), or the reader finds
 * the thread gone (dp_ring_reader_reap()); the consuming reader drains a
 * released ring, then dp_ring_reader_reclaim() resets and frees it for
 * the next thread.
 */
#ifndef DPROBE_RING_H
#define DPROBE_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ring/ring_api.h"

#define DP_RING_MIN_SIZE	4096ULL
#define DP_RING_MAX_SIZE	(1ULL << 30)
#define DP_RING_DEFAULT_SIZE	(1ULL << 20)	/* per thread */
#define DP_RING_DEFAULT_RINGS	256
#define DP_RING_MAX_RINGS	65536
/* Largest record, header included: this or a quarter of the ring. */
#define DP_RING_MAX_RECORD	65536u

/* A mapping of a ring set, local to one process. */
struct dp_ring_set {
	int fd;
	struct dp_ring_set_hdr *hdr;
	size_t map_size;
	/* copied from the header when mapped, validated: trusted from here */
	unsigned nr_rings;
	uint64_t ring_size;
	uint64_t ring_stride;
	enum dp_ring_mode mode;
	uint32_t max_record;
};

/*
 * Ring size for a size in bytes (ftrace's buffer_size_kb * 1024): rounded
 * up to a power of two, at least DP_RING_MIN_SIZE.  0 if above
 * DP_RING_MAX_SIZE.
 */
uint64_t dp_ring_size_round(uint64_t bytes);

/*
 * Create a ring set: a memfd named "dprobe-rings" (close-on-exec, sealed
 * against shrinking and growing), mapped.  @ring_size must be a power of
 * two in [DP_RING_MIN_SIZE, DP_RING_MAX_SIZE], @nr_rings in
 * [1, DP_RING_MAX_RINGS].  Pages are allocated when first written, so an
 * unused ring costs nothing.  Returns 0 or -errno.
 */
int dp_ring_set_create(struct dp_ring_set *set, unsigned nr_rings,
		       uint64_t ring_size, enum dp_ring_mode mode);

/*
 * Map a ring set from @fd (which the set owns on success): checks the
 * seals, the header, the rings' constants and the file size.  Returns 0,
 * -EINVAL if @fd is not a ring set this code understands, or another
 * -errno.
 */
int dp_ring_set_map(struct dp_ring_set *set, int fd);

/* Unmap and close. */
void dp_ring_set_close(struct dp_ring_set *set);

static inline struct dp_ring *dp_ring_get(const struct dp_ring_set *set,
					  unsigned i)
{
	return (struct dp_ring *)((unsigned char *)set->hdr +
				  DP_RING_SET_HDR_SIZE + i * set->ring_stride);
}

/* A ring's counters and owner as the producer left them (loads only). */
struct dp_ring_stats {
	enum dp_ring_state state;
	int pid, tid;
	uint64_t committed;	/* records written */
	uint64_t dropped;	/* records the producer dropped */
	uint64_t overwritten;	/* overwrite mode: records written over
				 * (read ones included) */
};

void dp_ring_stats(const struct dp_ring_set *set, unsigned i,
		   struct dp_ring_stats *st);
/* Ring @i's owner alone: what a reader needs for each record, read from
 * the ownership line only (the counters' line is the producer's, written
 * on every record: reading it for each costs a cache miss).  Inline:
 * it is called for every record. */
static inline void dp_ring_owner(const struct dp_ring_set *set, unsigned i,
				 int *pid, int *tid)
{
	struct dp_ring *r = dp_ring_get(set, i);

	*pid = __atomic_load_n(&r->pid, __ATOMIC_RELAXED);
	*tid = __atomic_load_n(&r->tid, __ATOMIC_RELAXED);
}

/* Counter @idx (< DP_RING_NCOUNTERS) summed over every ring of the set. */
uint64_t dp_ring_set_counter(const struct dp_ring_set *set, unsigned idx);

/* claim_failed and noring_lost of the set header. */
uint64_t dp_ring_set_claim_failed(const struct dp_ring_set *set);
uint64_t dp_ring_set_noring_lost(const struct dp_ring_set *set);

/* ---- readers ------------------------------------------------------------ */

enum dp_ring_kind {
	DP_RING_EMPTY,		/* nothing to read now */
	DP_RING_RECORD,
	DP_RING_LOST,		/* events lost at this point of the stream */
};

#define DP_RING_LOST_UNKNOWN UINT64_MAX

struct dp_ring_entry {
	enum dp_ring_kind kind;
	unsigned ring;		/* index in the set */
	uint32_t info;		/* as the producer gave it */
	uint64_t ts;		/* LOST: a time next to the loss (for the
				 * merge order) */
	const void *data;	/* payload, valid until the next read */
	uint32_t len;		/* payload bytes */
	uint64_t lost;		/* LOST: count, or DP_RING_LOST_UNKNOWN */
};

struct dp_ring_reader;

/*
 * A reader of @set, which must outlive it.  Consuming (@consume: reads
 * advance each ring's tail, which in discard mode frees the space for the
 * producer) or a snapshot (the contents as of creation or the last
 * dp_ring_reader_rewind(), nothing consumed).  Use one consuming reader
 * per set.  A consuming reader hands space back to the producer in
 * batches (every 1/16 of the ring, and whenever it has read all there is),
 * so a snapshot taken meanwhile may still show records it has just taken.
 * NULL on allocation failure.
 */
struct dp_ring_reader *dp_ring_reader_new(struct dp_ring_set *set,
					  bool consume);
void dp_ring_reader_free(struct dp_ring_reader *rd);

/*
 * The next entry of ring @ring into @e: returns its kind (DP_RING_EMPTY
 * when there is none now).  Records of one ring come in the order they
 * were written.
 */
enum dp_ring_kind dp_ring_read(struct dp_ring_reader *rd, unsigned ring,
			       struct dp_ring_entry *e);

/*
 * The next entry of all rings in timestamp order (a k-way merge of what
 * is in the rings now; records arriving during a pass wait for the next
 * one, so a ring that keeps filling cannot starve the others).  Do not
 * mix with dp_ring_read() on the same reader.
 */
enum dp_ring_kind dp_ring_read_merged(struct dp_ring_reader *rd,
				      struct dp_ring_entry *e);

/* Snapshot reader: take a new snapshot of every ring. */
void dp_ring_reader_rewind(struct dp_ring_reader *rd);

/*
 * Wait up to @timeout_ms for something to read; true if there is.  It
 * polls every millisecond and lets a small amount of data wait for the
 * next poll (so records are read in batches), but returns at once when a
 * ring is 1/8 full.  @timeout_ms 0 only looks.
 */
bool dp_ring_reader_wait(struct dp_ring_reader *rd, int timeout_ms);

/*
 * The producers are gone (the target exited): drops after a ring's last
 * record are reported as well, for every ring.
 */
void dp_ring_reader_final(struct dp_ring_reader *rd);

/*
 * Mark as released the claimed rings whose thread no longer exists
 * (/proc/PID/task/TID of its owner is gone): threads that exited without
 * releasing theirs.  Returns how many.
 */
unsigned dp_ring_reader_reap(struct dp_ring_reader *rd);

/*
 * Consuming reader: free the released rings it has drained, for new
 * threads to claim.  Returns how many.
 */
unsigned dp_ring_reader_reclaim(struct dp_ring_reader *rd);

/* Events the reader has reported lost; *@unknown if some count was. */
uint64_t dp_ring_reader_lost(const struct dp_ring_reader *rd, bool *unknown);

#endif
