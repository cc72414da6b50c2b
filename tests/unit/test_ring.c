// SPDX-License-Identifier: GPL-2.0
/*
 * ring/: ring sets (creation, mapping checks, seals), reserve/commit and
 * the readers, wrap-around, both modes with exact lost counts, readers
 * racing a producer thread, producers in another process writing through
 * their own mapping of the memfd, signal handlers nesting on the producing
 * thread, snapshots, the merge, ring reuse, and garbage in the mapping.
 *
 * Every payload says what it is: a 16-byte head {seq, tag, n} and then
 * bytes that are a function of (seq, tag, position), so a torn, shifted
 * or mixed-up record never passes check_payload().
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "ring/ring.h"

/* ---- payloads ------------------------------------------------------------- */

struct pl_head {
	uint64_t seq;
	uint32_t tag;
	uint32_t n;
};

static uint8_t fill_byte(uint64_t seq, uint32_t tag, uint32_t k)
{
	return (uint8_t)(seq * 131 + (seq >> 8) * 29 + tag * 17 + k * 7);
}

/* Payload size of record @seq: 16..215 bytes, so every alignment occurs. */
static uint32_t size_for(uint64_t seq)
{
	return 16 + (uint32_t)((seq * 37) % 200);
}

static void make_payload(void *p, uint32_t n, uint64_t seq, uint32_t tag)
{
	struct pl_head h = { seq, tag, n };
	uint8_t *b = p;

	memcpy(b, &h, sizeof(h));
	for (uint32_t k = sizeof(h); k < n; k++)
		b[k] = fill_byte(seq, tag, k);
}

static bool check_payload(const void *p, uint32_t n, uint64_t *seq,
			  uint32_t *tag)
{
	struct pl_head h;
	const uint8_t *b = p;

	if (n < sizeof(h))
		return false;
	memcpy(&h, b, sizeof(h));
	if (h.n != n)
		return false;
	for (uint32_t k = sizeof(h); k < n; k++)
		if (b[k] != fill_byte(h.seq, h.tag, k))
			return false;
	*seq = h.seq;
	*tag = h.tag;
	return true;
}

/* One record of @n payload bytes; false if the ring dropped it. */
static bool put(struct dp_ring *r, uint64_t seq, uint32_t tag, uint32_t n,
		uint64_t ts)
{
	void *p = dp_ring_reserve(r, n, ts, tag);

	if (!p)
		return false;
	make_payload(p, n, seq, tag);
	dp_ring_commit(r);
	return true;
}

static void mkset(struct dp_ring_set *set, unsigned nr, uint64_t size,
		  enum dp_ring_mode mode)
{
	int rc = dp_ring_set_create(set, nr, size, mode);

	cr_assert_eq(rc, 0, "create: %s", strerror(-rc));
}

/* A record's payload, checked; returns its seq. */
static uint64_t expect_record(const struct dp_ring_entry *e, uint32_t tag)
{
	uint64_t seq;
	uint32_t t;

	cr_assert_eq(e->kind, DP_RING_RECORD);
	cr_assert(check_payload(e->data, e->len, &seq, &t), "corrupt record");
	cr_assert_eq(t, tag);
	cr_assert_eq(e->info, tag);
	return seq;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * Stream accounting for one ring: records must come in seq order, and
 * every gap between two records must be exactly the lost count reported
 * between them.
 */
struct acct {
	uint64_t next;		/* seq expected next */
	uint64_t lost;		/* reported since the last record */
	uint64_t seen, lost_total;
	bool bad;
};

static void acct_entry(struct acct *a, const struct dp_ring_entry *e,
		       uint32_t tag)
{
	uint64_t seq;
	uint32_t t;

	if (e->kind == DP_RING_LOST) {
		if (e->lost == DP_RING_LOST_UNKNOWN)
			a->bad = true;
		else
			a->lost += e->lost;
		return;
	}
	if (!check_payload(e->data, e->len, &seq, &t) || t != tag ||
	    e->len != size_for(seq) || seq != a->next + a->lost)
		a->bad = true;
	a->next = seq + 1;
	a->lost_total += a->lost;
	a->lost = 0;
	a->seen++;
}

/* ---- creation and mapping ------------------------------------------------- */

Test(ring, create_rejects_bad_geometry)
{
	struct dp_ring_set set;

	cr_assert_eq(dp_ring_set_create(&set, 1, 3000, DP_RING_DISCARD),
		     -EINVAL);
	cr_assert_eq(dp_ring_set_create(&set, 1, 2048, DP_RING_DISCARD),
		     -EINVAL);
	cr_assert_eq(dp_ring_set_create(&set, 1, 1ULL << 31, DP_RING_DISCARD),
		     -EINVAL);
	cr_assert_eq(dp_ring_set_create(&set, 0, 4096, DP_RING_DISCARD),
		     -EINVAL);
	cr_assert_eq(dp_ring_set_create(&set, 1, 4096, 7), -EINVAL);
	cr_assert_eq(dp_ring_set_create(&set, DP_RING_MAX_RINGS, 1ULL << 30,
					DP_RING_DISCARD), -E2BIG);

	cr_assert_eq(dp_ring_size_round(0), 4096);
	cr_assert_eq(dp_ring_size_round(4097), 8192);
	cr_assert_eq(dp_ring_size_round(1408 * 1024), 2 * 1024 * 1024);
	cr_assert_eq(dp_ring_size_round(1ULL << 30), 1ULL << 30);
	cr_assert_eq(dp_ring_size_round((1ULL << 30) + 1), 0);
}

Test(ring, map_checks_seals_and_header)
{
	struct dp_ring_set set, other;
	int fd, rc;

	mkset(&set, 3, 8192, DP_RING_OVERWRITE);
	cr_assert_eq(set.max_record, 2048);

	/* A second mapping of the same memfd sees the same set. */
	rc = dp_ring_set_map(&other, dup(set.fd));
	cr_assert_eq(rc, 0, "%s", strerror(-rc));
	cr_assert_eq(other.nr_rings, 3);
	cr_assert_eq(other.ring_size, 8192);
	cr_assert_eq(other.mode, DP_RING_OVERWRITE);
	cr_assert_neq((void *)other.hdr, (void *)set.hdr);
	cr_assert(put(dp_ring_get(&set, 1), 0, 5, 40, 1));
	cr_assert_eq(__atomic_load_n(&dp_ring_get(&other, 1)->head,
				     __ATOMIC_ACQUIRE), 56);
	dp_ring_set_close(&other);

	/* Nobody can shrink it under a reader. */
	cr_assert_eq(ftruncate(set.fd, 4096), -1);
	cr_assert_eq(errno, EPERM);

	/* Not sealed, or sealed but not a ring set, or the wrong size. */
	fd = memfd_create("plain", MFD_CLOEXEC);
	cr_assert_eq(ftruncate(fd, 65536), 0);
	cr_assert_eq(dp_ring_set_map(&other, fd), -EINVAL);
	close(fd);
	fd = memfd_create("sealed", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	cr_assert_eq(ftruncate(fd, 65536), 0);
	cr_assert_eq(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK), 0);
	cr_assert_eq(dp_ring_set_map(&other, fd), -EINVAL);
	close(fd);
	fd = memfd_create("short", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	cr_assert_eq(ftruncate(fd, 8192), 0);
	cr_assert_eq(pwrite(fd, set.hdr, 4096, 0), 4096);
	cr_assert_eq(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK), 0);
	cr_assert_eq(dp_ring_set_map(&other, fd), -EINVAL);
	close(fd);
	cr_assert_eq(dp_ring_set_map(&other, -1), -EBADF);

	dp_ring_set_close(&set);
}

/* ---- one thread ------------------------------------------------------------ */

Test(ring, single_record)
{
	struct dp_ring_set set;
	struct dp_ring_reader *rd;
	struct dp_ring_entry e;
	struct dp_ring_stats st;
	struct dp_ring *r;
	uint64_t *p;

	mkset(&set, 2, 4096, DP_RING_DISCARD);
	r = dp_ring_claim(set.hdr, 100, 101);
	cr_assert_not_null(r);
	p = dp_ring_reserve(r, 24, 123456789, 3);
	cr_assert_not_null(p);
	cr_assert_eq((uintptr_t)p % 8, 0);
	p[0] = 0x1111;
	p[1] = 0x2222;
	p[2] = 0x3333;

	rd = dp_ring_reader_new(&set, true);
	cr_assert_not_null(rd);
	/* Not visible before the commit. */
	cr_assert_eq(dp_ring_read(rd, r->index, &e), DP_RING_EMPTY);
	cr_assert(!dp_ring_reader_wait(rd, 0));
	dp_ring_commit(r);
	cr_assert(dp_ring_reader_wait(rd, 0));

	cr_assert_eq(dp_ring_read(rd, r->index, &e), DP_RING_RECORD);
	cr_assert_eq(e.ring, r->index);
	cr_assert_eq(e.ts, 123456789);
	cr_assert_eq(e.info, 3);
	cr_assert_eq(e.len, 24);
	cr_assert_eq(((const uint64_t *)e.data)[0], 0x1111);
	cr_assert_eq(((const uint64_t *)e.data)[2], 0x3333);
	cr_assert_eq(dp_ring_read(rd, r->index, &e), DP_RING_EMPTY);
	cr_assert_eq(dp_ring_read(rd, 99, &e), DP_RING_EMPTY);

	dp_ring_stats(&set, r->index, &st);
	cr_assert_eq(st.state, DP_RING_ACTIVE);
	cr_assert_eq(st.pid, 100);
	cr_assert_eq(st.tid, 101);
	cr_assert_eq(st.committed, 1);
	cr_assert_eq(st.dropped, 0);
	/* The consumer's tail is in the shared page: the space is free. */
	cr_assert_eq(r->tail.pos, 40);

	cr_assert_eq(dp_ring_write(r, 7, 3, "hello, ring", 11), 0);
	cr_assert_eq(dp_ring_read(rd, r->index, &e), DP_RING_RECORD);
	cr_assert_eq(e.len, 11);
	cr_assert_eq(memcmp(e.data, "hello, ring", 11), 0);

	dp_ring_reader_free(rd);
	dp_ring_set_close(&set);
}

Test(ring, wraparound_varying_sizes)
{
	struct dp_ring_set set;
	struct dp_ring_reader *rd;
	struct dp_ring_entry e;
	struct acct a = { 0 };
	struct dp_ring *r;
	uint64_t seq = 0;

	mkset(&set, 1, 4096, DP_RING_DISCARD);
	r = dp_ring_claim(set.hdr, 1, 1);
	rd = dp_ring_reader_new(&set, true);
	/*
	 * Batches of up to ~1.5 KiB, drained in between: they never fill the
	 * ring (so nothing may be lost) but wrap it about 700 times, at every
	 * offset, with pads of every size.
	 */
	for (int round = 0; round < 2000; round++) {
		uint64_t bytes = 0;

		while (bytes < 1500) {
			uint32_t n = size_for(seq);

			cr_assert(put(r, seq, 9, n, seq), "drop at %lu", seq);
			bytes += DP_RING_ALIGN(n + 16);
			seq++;
		}
		while (dp_ring_read(rd, 0, &e) != DP_RING_EMPTY) {
			cr_assert_eq(e.ts, a.next);
			acct_entry(&a, &e, 9);
		}
	}
	cr_assert(!a.bad);
	cr_assert_eq(a.seen, seq);
	cr_assert_eq(a.lost_total, 0);
	cr_assert_gt(r->head, 700 * 4096);

	/* Empty payloads, and the largest record a 4 KiB ring takes. */
	cr_assert_not_null(dp_ring_reserve(r, 0, 1, 9));
	dp_ring_commit(r);
	cr_assert_eq(dp_ring_read(rd, 0, &e), DP_RING_RECORD);
	cr_assert_eq(e.len, 0);
	cr_assert_not_null(dp_ring_reserve(r, 1024 - 16, 1, 9));
	dp_ring_commit(r);
	cr_assert_eq(dp_ring_read(rd, 0, &e), DP_RING_RECORD);
	cr_assert_eq(e.len, 1008);
	cr_assert_null(dp_ring_reserve(r, 1024 - 15, 1, 9));
	cr_assert_null(dp_ring_reserve(r, UINT32_MAX, 1, 9));
	cr_assert_eq(r->lost, 2);

	dp_ring_reader_free(rd);
	dp_ring_set_close(&set);
}

Test(ring, wait_polls_in_batches)
{
	struct dp_ring_set set;
	struct dp_ring_reader *rd;
	struct dp_ring *r;
	uint64_t t0, i;

	mkset(&set, 2, 65536, DP_RING_DISCARD);
	r = dp_ring_claim(set.hdr, 1, 1);
	rd = dp_ring_reader_new(&set, true);

	t0 = now_ns();
	cr_assert(!dp_ring_reader_wait(rd, 5));
	cr_assert_geq(now_ns() - t0, 5000000);

	/* A little data is returned at the next poll, not at the timeout. */
	cr_assert(put(r, 0, 1, 32, 0));
	t0 = now_ns();
	cr_assert(dp_ring_reader_wait(rd, 10000));
	cr_assert_lt(now_ns() - t0, 2000000000);

	/* A ring 1/8 full is returned without sleeping. */
	for (i = 1; r->head < 65536 / 8; i++)
		cr_assert(put(r, i, 1, 200, i));
	t0 = now_ns();
	cr_assert(dp_ring_reader_wait(rd, 10000));
	cr_assert_lt(now_ns() - t0, 20000000);

	dp_ring_reader_free(rd);
	dp_ring_set_close(&set);
}

/* ---- modes ----------------------------------------------------------------- */

Test(ring, discard_counts_lost_exactly)
{
	struct dp_ring_set set;
	struct dp_ring_reader *rd;
	struct dp_ring_entry e;
	struct dp_ring *r;
	uint64_t ok = 0, drops = 0, lost;
	bool unknown;

	mkset(&set, 1, 4096, DP_RING_DISCARD);
	r = dp_ring_claim(set.hdr, 1, 1);
	while (put(r, ok, 4, 48, ok))
		ok++;
	drops = 1;
	/* 64-byte records fill 4 KiB exactly. */
	cr_assert_eq(ok, 64);
	for (int i = 0; i < 100; i++, drops++)
		cr_assert(!put(r, 1000 + i, 4, 48, 0));
	cr_assert_eq(r->lost, 101);

	rd = dp_ring_reader_new(&set, true);
	for (uint64_t i = 0; i < ok; i++) {
		cr_assert_eq(dp_ring_read(rd, 0, &e), DP_RING_RECORD);
		cr_assert_eq(expect_record(&e, 4), i);
	}
	/* The drops are announced where they happened: before the next one. */
	cr_assert_eq(dp_ring_read(rd, 0, &e), DP_RING_EMPTY);
	cr_assert(put(r, 5000, 4, 48, 77));
	cr_assert_eq(dp_ring_read(rd, 0, &e), DP_RING_LOST);
	cr_assert_eq(e.lost, 101);
	cr_assert_eq(e.ts, 77);
	cr_assert_eq(dp_ring_read(rd, 0, &e), DP_RING_RECORD);
	cr_assert_eq(expect_record(&e, 4), 5000);

	/* A drop after the last record shows once the producer is gone. */
	cr_assert(!put(r, 0, 4, 5000, 0));
	cr_assert_eq(dp_ring_read(rd, 0, &e), DP_RING_EMPTY);
	cr_assert(!dp_ring_reader_wait(rd, 0));
	dp_ring_reader_final(rd);
	cr_assert(dp_ring_reader_wait(rd, 0));
	cr_assert_eq(dp_ring_read(rd, 0, &e), DP_RING_LOST);
	cr_assert_eq(e.lost, 1);
	cr_assert_eq(dp_ring_read(rd, 0, &e), DP_RING_EMPTY);
	cr_assert(!dp_ring_reader_wait(rd, 0));

	lost = dp_ring_reader_lost(rd, &unknown);
	cr_assert_eq(lost, drops + 1);
	cr_assert(!unknown);
	dp_ring_reader_free(rd);
	dp_ring_set_close(&set);
}

Test(ring, overwrite_keeps_newest)
{
	struct dp_ring_set set;
	struct dp_ring_reader *rd;
	struct dp_ring_entry e;
	struct dp_ring_stats st;
	struct dp_ring *r;
	uint64_t kept = 0, first = 0, lost;

	mkset(&set, 1, 4096, DP_RING_OVERWRITE);
	r = dp_ring_claim(set.hdr, 1, 1);
	rd = dp_ring_reader_new(&set, true);
	for (uint64_t i = 0; i < 1000; i++)
		cr_assert(put(r, i, 2, 48, i));

	/* One LOST entry, then the newest records, up to the last one. */
	cr_assert_eq(dp_ring_read(rd, 0, &e), DP_RING_LOST);
	lost = e.lost;
	while (dp_ring_read(rd, 0, &e) == DP_RING_RECORD) {
		uint64_t seq = expect_record(&e, 2);

		if (!kept)
			first = seq;
		cr_assert_eq(seq, first + kept);
		kept++;
	}
	cr_assert_eq(e.kind, DP_RING_EMPTY);
	cr_assert_eq(first + kept, 1000);
	cr_assert_eq(lost, first);
	/* Nearly the whole ring: 64 slots, less 1/64 of it kept spare. */
	cr_assert_geq(kept, 62);
	cr_assert_leq(kept, 64);
	dp_ring_stats(&set, 0, &st);
	cr_assert_eq(st.overwritten, first);
	cr_assert_eq(st.dropped, 0);

	/* Read as they come: nothing lost. */
	for (uint64_t i = 1000; i < 1010; i++)
		cr_assert(put(r, i, 2, 48, i));
	for (uint64_t i = 1000; i < 1010; i++) {
		cr_assert_eq(dp_ring_read(rd, 0, &e), DP_RING_RECORD);
		cr_assert_eq(expect_record(&e, 2), i);
	}
	cr_assert_eq(dp_ring_read(rd, 0, &e), DP_RING_EMPTY);

	/* Lapped again: the count covers exactly the records never seen. */
	for (uint64_t i = 1010; i < 3000; i++)
		cr_assert(put(r, i, 2, size_for(i), i));
	cr_assert_eq(dp_ring_read(rd, 0, &e), DP_RING_LOST);
	lost = e.lost;
	cr_assert_eq(dp_ring_read(rd, 0, &e), DP_RING_RECORD);
	cr_assert_eq(expect_record(&e, 2), 1010 + lost);

	dp_ring_reader_free(rd);
	dp_ring_set_close(&set);
}

Test(ring, too_big_and_discarded_records)
{
	struct dp_ring_set set;
	struct dp_ring_reader *rd;
	struct dp_ring_entry e;
	struct dp_ring *r;
	void *p;

	mkset(&set, 1, 4096, DP_RING_DISCARD);
	r = dp_ring_claim(set.hdr, 1, 1);
	rd = dp_ring_reader_new(&set, true);

	/* A discarded record leaves no trace. */
	p = dp_ring_reserve(r, 40, 1, 6);
	cr_assert_not_null(p);
	dp_ring_discard(r, p);
	cr_assert_eq(r->head, 0);
	cr_assert(put(r, 1, 6, 40, 2));
	cr_assert_eq(dp_ring_read(rd, 0, &e), DP_RING_RECORD);
	cr_assert_eq(expect_record(&e, 6), 1);
	cr_assert_eq(dp_ring_read(rd, 0, &e), DP_RING_EMPTY);

	/* Discarded behind a lost marker: the marker still gets through. */
	cr_assert(!put(r, 2, 6, 4096, 3));
	p = dp_ring_reserve(r, 40, 4, 6);
	cr_assert_not_null(p);
	dp_ring_discard(r, p);
	cr_assert(put(r, 3, 6, 40, 5));
	cr_assert_eq(dp_ring_read(rd, 0, &e), DP_RING_LOST);
	cr_assert_eq(e.lost, 1);
	cr_assert_eq(dp_ring_read(rd, 0, &e), DP_RING_RECORD);
	cr_assert_eq(expect_record(&e, 6), 3);
	cr_assert_eq(dp_ring_read(rd, 0, &e), DP_RING_EMPTY);
	cr_assert_eq(r->committed, 2);
	cr_assert_eq(r->lost, 1);

	dp_ring_reader_free(rd);
	dp_ring_set_close(&set);
}

/* ---- snapshots and the merge ---------------------------------------------- */

Test(ring, snapshot_does_not_consume)
{
	struct dp_ring_set set;
	struct dp_ring_reader *snap, *pipe;
	struct dp_ring_entry e;
	struct dp_ring *r;
	int n;

	mkset(&set, 2, 4096, DP_RING_DISCARD);
	r = dp_ring_claim(set.hdr, 1, 1);
	for (uint64_t i = 0; i < 10; i++)
		cr_assert(put(r, i, 1, 32, i));
	snap = dp_ring_reader_new(&set, false);
	pipe = dp_ring_reader_new(&set, true);

	for (int pass = 0; pass < 2; pass++) {
		for (uint64_t i = 0; i < 10; i++) {
			cr_assert_eq(dp_ring_read_merged(snap, &e),
				     DP_RING_RECORD);
			cr_assert_eq(expect_record(&e, 1), i);
		}
		cr_assert_eq(dp_ring_read_merged(snap, &e), DP_RING_EMPTY);
		dp_ring_reader_rewind(snap);
	}
	cr_assert_eq(r->tail.pos, 0);

	/* Later records are not in a snapshot taken before them. */
	cr_assert(put(r, 10, 1, 32, 10));
	for (n = 0; dp_ring_read(snap, r->index, &e) == DP_RING_RECORD; n++)
		;
	cr_assert_eq(n, 10);

	/*
	 * Consumed records are gone from the next snapshot once the consumer
	 * hands their space back: at the latest when it has read everything.
	 */
	for (uint64_t i = 0; i < 11; i++) {
		cr_assert_eq(dp_ring_read(pipe, r->index, &e), DP_RING_RECORD);
		cr_assert_eq(expect_record(&e, 1), i);
	}
	cr_assert_eq(dp_ring_read(pipe, r->index, &e), DP_RING_EMPTY);
	for (uint64_t i = 11; i < 14; i++)
		cr_assert(put(r, i, 1, 32, i));
	dp_ring_reader_rewind(snap);
	for (n = 0; dp_ring_read(snap, r->index, &e) == DP_RING_RECORD; n++)
		cr_assert_eq(expect_record(&e, 1), 11 + n);
	cr_assert_eq(n, 3);
	cr_assert_eq(dp_ring_read(pipe, r->index, &e), DP_RING_RECORD);
	cr_assert_eq(expect_record(&e, 1), 11);

	dp_ring_reader_free(snap);
	dp_ring_reader_free(pipe);
	dp_ring_set_close(&set);
}

Test(ring, snapshot_of_overwritten_ring)
{
	struct dp_ring_set set;
	struct dp_ring_reader *snap;
	struct dp_ring_entry e;
	struct dp_ring *r;
	uint64_t first = 0, n = 0;

	mkset(&set, 1, 8192, DP_RING_OVERWRITE);
	r = dp_ring_claim(set.hdr, 1, 1);
	for (uint64_t i = 0; i < 5000; i++)
		cr_assert(put(r, i, 1, size_for(i), i));
	snap = dp_ring_reader_new(&set, false);
	/* What was overwritten before the snapshot is not a loss of it. */
	for (int pass = 0; pass < 2; pass++) {
		n = 0;
		while (dp_ring_read(snap, 0, &e) == DP_RING_RECORD) {
			uint64_t seq = expect_record(&e, 1);

			if (!n)
				first = seq;
			cr_assert_eq(seq, first + n);
			n++;
		}
		cr_assert_eq(e.kind, DP_RING_EMPTY);
		cr_assert_eq(first + n, 5000);
		cr_assert_gt(n, 40);
		dp_ring_reader_rewind(snap);
	}
	dp_ring_reader_free(snap);
	dp_ring_set_close(&set);
}

Test(ring, merge_in_timestamp_order)
{
	struct dp_ring_set set;
	struct dp_ring_reader *rd;
	struct dp_ring_entry e;
	struct dp_ring *r[3];
	uint64_t ts = 0;

	mkset(&set, 4, 65536, DP_RING_DISCARD);
	for (int i = 0; i < 3; i++)
		r[i] = dp_ring_claim(set.hdr, 1, 10 + i);
	/* Ring k gets timestamps k, k+3, k+6, ... except ring 1 drops 30..59. */
	for (uint64_t t = 0; t < 300; t++) {
		struct dp_ring *w = r[t % 3];

		if (t % 3 == 1 && t >= 30 && t < 60)
			cr_assert(!put(w, t, 7, 20000, t));
		else
			cr_assert(put(w, t, 7, 24, t));
	}
	rd = dp_ring_reader_new(&set, true);
	while (dp_ring_read_merged(rd, &e) != DP_RING_EMPTY) {
		if (e.kind == DP_RING_LOST) {
			/* announced with the next record of its ring */
			cr_assert_eq(e.ring, r[1]->index);
			cr_assert_eq(e.lost, 10);
			cr_assert_eq(ts, 61);
			continue;
		}
		while (ts % 3 == 1 && ts >= 30 && ts < 60)
			ts++;
		cr_assert_eq(e.ts, ts, "got %lu, want %lu", e.ts, ts);
		cr_assert_eq(expect_record(&e, 7), ts);
		cr_assert_eq(e.ring, r[ts % 3]->index);
		ts++;
	}
	cr_assert_eq(ts, 300);
	dp_ring_reader_free(rd);
	dp_ring_set_close(&set);
}

/* ---- rings of threads that come and go ------------------------------------ */

Test(ring, claim_release_reclaim)
{
	struct dp_ring_set set;
	struct dp_ring_reader *rd;
	struct dp_ring_entry e;
	struct dp_ring *a, *b, *c;
	int st;
	pid_t pid;

	mkset(&set, 2, 4096, DP_RING_DISCARD);
	rd = dp_ring_reader_new(&set, true);
	a = dp_ring_claim(set.hdr, 1, 7);
	b = dp_ring_claim(set.hdr, 1, 8);
	cr_assert_not_null(a);
	cr_assert_not_null(b);
	cr_assert_neq(a, b);
	cr_assert_null(dp_ring_claim(set.hdr, 1, 9));
	cr_assert_eq(dp_ring_set_claim_failed(&set), 1);
	dp_ring_set_note_lost(set.hdr);
	cr_assert_eq(dp_ring_set_noring_lost(&set), 1);

	cr_assert(put(a, 0, 1, 32, 1));
	cr_assert(!put(a, 1, 1, 9999, 2));
	dp_ring_release(a);
	/* Not before it is drained, with its last drop reported. */
	cr_assert_eq(dp_ring_reader_reclaim(rd), 0);
	cr_assert_eq(dp_ring_read(rd, a->index, &e), DP_RING_RECORD);
	cr_assert_eq(dp_ring_read(rd, a->index, &e), DP_RING_LOST);
	cr_assert_eq(e.lost, 1);
	cr_assert_eq(dp_ring_read(rd, a->index, &e), DP_RING_EMPTY);
	cr_assert_eq(dp_ring_reader_reclaim(rd), 1);

	/* Reused from scratch by the next thread (this one: it is alive). */
	c = dp_ring_claim(set.hdr, getpid(), gettid());
	cr_assert_eq(c, a);
	cr_assert_eq(c->tid, gettid());
	cr_assert_eq(c->head, 0);
	cr_assert_eq(c->lost, 0);
	cr_assert(put(c, 42, 1, 32, 3));
	cr_assert_eq(dp_ring_read(rd, c->index, &e), DP_RING_RECORD);
	cr_assert_eq(expect_record(&e, 1), 42);

	/* A thread that exits without releasing: the reader finds out. */
	dp_ring_release(b);
	cr_assert_eq(dp_ring_reader_reclaim(rd), 1);
	pid = fork();
	if (pid == 0) {
		struct dp_ring_set s2;

		if (dp_ring_set_map(&s2, dup(set.fd)) ||
		    !dp_ring_claim(s2.hdr, getpid(), gettid()))
			_exit(1);
		_exit(0);
	}
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert_eq(st, 0);
	cr_assert_eq(b->tid, pid);
	cr_assert_eq(dp_ring_reader_reap(rd), 1);
	cr_assert_eq(b->state, DP_RING_DEAD);
	cr_assert_eq(dp_ring_reader_reap(rd), 0);
	cr_assert_eq(c->state, DP_RING_ACTIVE);	/* us: still alive */
	cr_assert_eq(dp_ring_reader_reclaim(rd), 1);

	dp_ring_reader_free(rd);
	dp_ring_set_close(&set);
}

/* ---- a producer thread racing the reader ----------------------------------- */

struct race {
	struct dp_ring *r;
	uint64_t n;
	bool done;
};

static void *race_producer(void *arg)
{
	struct race *rc = arg;

	/*
	 * The yields make sure the reader runs in between even when the
	 * machine is busy with other tests.
	 */
	for (uint64_t i = 0; i < rc->n; i++) {
		put(rc->r, i, 3, size_for(i), i);
		if (i % 4096 == 0)
			sched_yield();
	}
	__atomic_store_n(&rc->done, true, __ATOMIC_RELEASE);
	return NULL;
}

/* A producer thread writing @rc->n records into @set's first ring, read
 * as they come (@nap_us between drains), accounted into @a. */
static void race_read(struct dp_ring_set *set, struct race *rc,
		      struct acct *a, unsigned nap_us)
{
	struct dp_ring_reader *rd = dp_ring_reader_new(set, true);
	struct dp_ring_entry e;
	pthread_t th;
	bool done = false;

	rc->r = dp_ring_claim(set->hdr, 1, 1);
	cr_assert_eq(pthread_create(&th, NULL, race_producer, rc), 0);
	while (!done) {
		done = __atomic_load_n(&rc->done, __ATOMIC_ACQUIRE);
		if (done)
			dp_ring_reader_final(rd);
		while (dp_ring_read(rd, 0, &e) != DP_RING_EMPTY)
			acct_entry(a, &e, 3);
		if (nap_us)
			usleep(nap_us);
	}
	pthread_join(th, NULL);
	dp_ring_reader_free(rd);
}

static void race(enum dp_ring_mode mode, uint64_t size)
{
	struct dp_ring_set set;
	struct race rc = { .n = 2000000 };
	struct acct a = { 0 };

	mkset(&set, 1, size, mode);
	race_read(&set, &rc, &a, 0);
	cr_assert(!a.bad, "torn, reordered or miscounted records");
	/* Every record is either seen or counted lost, exactly. */
	cr_assert_eq(a.seen + a.lost_total + a.lost, rc.n,
		     "seen %lu + lost %lu != %lu", a.seen,
		     a.lost_total + a.lost, rc.n);
	/* The producer is far faster than the reader: losses happened. */
	cr_assert_gt(a.seen, 0);
	cr_assert_gt(a.lost_total + a.lost, 0);
	if (mode == DP_RING_DISCARD)
		cr_assert_eq(a.lost_total + a.lost, rc.r->lost);
	else
		cr_assert_eq(rc.r->lost, 0);
	dp_ring_set_close(&set);
}

Test(ring, race_discard)
{
	race(DP_RING_DISCARD, 16384);
}

Test(ring, race_overwrite)
{
	race(DP_RING_OVERWRITE, 16384);
}

/*
 * Block mode: a producer far faster than a reader that naps keeps every
 * record, in order: a full ring waits for the reader.
 */
Test(ring, block_keeps_every_record, .timeout = 60)
{
	struct dp_ring_set set;
	struct race rc = { .n = 300000 };
	struct acct a = { 0 };

	mkset(&set, 1, 16384, DP_RING_BLOCK);
	race_read(&set, &rc, &a, 100);	/* the ring fills meanwhile */
	cr_assert(!a.bad, "torn, reordered or miscounted records");
	cr_assert_eq(a.seen, rc.n, "seen %lu of %lu", a.seen, rc.n);
	cr_assert_eq(rc.r->lost, 0);
	dp_ring_set_close(&set);
}

/*
 * Block mode with a reader that never reads (a tracer gone): the first
 * full ring waits once, bounded; then records drop at once, counted,
 * until the reader's tail moves, after which the ring takes records
 * again.
 */
Test(ring, block_stalled_reader_is_not_waited_for)
{
	struct dp_ring_set set;
	struct dp_ring_reader *rd;
	struct dp_ring_entry e;
	struct dp_ring *r;
	uint64_t ok = 0, t0, t1, t2;

	mkset(&set, 1, 4096, DP_RING_BLOCK);
	r = dp_ring_claim(set.hdr, 1, 1);
	while (ok < 64 && put(r, ok, 4, 48, ok))
		ok++;
	cr_assert_eq(ok, 64);
	t0 = now_ns();
	cr_assert(!put(r, 100, 4, 48, 0));	/* waits once, then drops */
	t1 = now_ns();
	for (int i = 0; i < 10000; i++)
		cr_assert(!put(r, 200 + i, 4, 48, 0));
	t2 = now_ns();
	cr_assert_lt(t1 - t0, 2000000000ull, "the wait took %lu ns",
		     (unsigned long)(t1 - t0));
	/* not waited for again: 10,000 drops cost far less than a wait
	 * each (some 40 ms) */
	cr_assert_lt(t2 - t1, 200000000ull, "10000 drops took %lu ns",
		     (unsigned long)(t2 - t1));
	cr_assert_eq(r->lost, 10001);
	rd = dp_ring_reader_new(&set, true);
	for (uint64_t i = 0; i < ok; i++) {
		cr_assert_eq(dp_ring_read(rd, 0, &e), DP_RING_RECORD);
		cr_assert_eq(expect_record(&e, 4), i);
	}
	cr_assert_eq(dp_ring_read(rd, 0, &e), DP_RING_EMPTY);
	/* the tail moved: the ring takes a record again */
	cr_assert(put(r, 5000, 4, 48, 9));
	dp_ring_reader_free(rd);
	dp_ring_set_close(&set);
}

/* ---- producers in another process ------------------------------------------ */

#define MP_THREADS 8

struct mp_thread {
	struct dp_ring_set *set;
	uint64_t n;
	int ok;
};

static void *mp_producer(void *arg)
{
	struct mp_thread *t = arg;
	uint32_t tid = (uint32_t)gettid();
	struct dp_ring *r = dp_ring_claim(t->set->hdr, getpid(), (int)tid);

	if (!r)
		return NULL;
	for (uint64_t i = 0; i < t->n; i++)
		put(r, i, tid, size_for(i), now_ns());
	dp_ring_release(r);
	t->ok = 1;
	return NULL;
}

/* In the child: map the memfd afresh and produce from MP_THREADS threads. */
static int mp_child(int fd, uint64_t n)
{
	struct dp_ring_set set;
	struct mp_thread t[MP_THREADS];
	pthread_t th[MP_THREADS];
	int ok = 0;

	if (dp_ring_set_map(&set, fd))
		return 2;
	for (int i = 0; i < MP_THREADS; i++) {
		t[i] = (struct mp_thread){ &set, n, 0 };
		if (pthread_create(&th[i], NULL, mp_producer, &t[i]))
			return 3;
	}
	for (int i = 0; i < MP_THREADS; i++) {
		pthread_join(th[i], NULL);
		ok += t[i].ok;
	}
	return ok == MP_THREADS ? 0 : 4;
}

/*
 * The parent reads everything, merged, while the child writes; each
 * thread's stream is checked on its own (tag = tid).
 */
static void multiprocess(enum dp_ring_mode mode, uint64_t size, uint64_t n,
			 bool expect_all)
{
	struct dp_ring_set set;
	struct dp_ring_reader *rd;
	struct dp_ring_entry e;
	struct acct a[MP_THREADS] = { 0 };
	uint32_t tid[MP_THREADS] = { 0 };
	uint64_t lost = 0;
	bool exited = false;
	int st = -1;
	pid_t pid;

	mkset(&set, MP_THREADS, size, mode);
	rd = dp_ring_reader_new(&set, true);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0)
		_exit(mp_child(dup(set.fd), n));
	for (;;) {
		bool got = false;

		while (dp_ring_read_merged(rd, &e) != DP_RING_EMPTY) {
			struct acct *ac = &a[e.ring];

			got = true;
			if (e.kind == DP_RING_RECORD && !tid[e.ring])
				tid[e.ring] = e.info;
			acct_entry(ac, &e, tid[e.ring]);
		}
		if (exited && !got)
			break;
		if (!exited && waitpid(pid, &st, WNOHANG) == pid) {
			exited = true;
			dp_ring_reader_final(rd);
		} else if (!got) {
			dp_ring_reader_wait(rd, 2);
		}
	}
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child: %#x", st);
	for (int i = 0; i < MP_THREADS; i++) {
		struct dp_ring_stats rs;

		dp_ring_stats(&set, i, &rs);
		cr_assert_eq(rs.state, DP_RING_DEAD);
		cr_assert_eq(rs.pid, pid);
		cr_assert_eq((uint32_t)rs.tid, tid[i]);
		cr_assert(!a[i].bad, "ring %d: corrupt or miscounted", i);
		cr_assert_eq(a[i].seen + a[i].lost_total + a[i].lost, n);
		if (mode == DP_RING_DISCARD)
			cr_assert_eq(rs.committed, a[i].seen);
		else
			cr_assert_eq(rs.committed, n);
		if (expect_all) {
			cr_assert_eq(a[i].seen, n);
			cr_assert_eq(a[i].next, n);
		}
		cr_assert_gt(a[i].seen, 0);
		lost += a[i].lost_total + a[i].lost;
	}
	if (!expect_all)
		cr_assert_gt(lost, 0);
	cr_assert_eq(dp_ring_reader_reclaim(rd), MP_THREADS);
	dp_ring_reader_free(rd);
	dp_ring_set_close(&set);
}

/* Rings large enough for everything: exact counts whatever the timing. */
Test(ring, multiprocess_exact, .timeout = 60)
{
	multiprocess(DP_RING_DISCARD, 1 << 20, 6000, true);
}

/* Small rings: records are lost, each one accounted for. */
Test(ring, multiprocess_lossy_discard, .timeout = 60)
{
	multiprocess(DP_RING_DISCARD, 8192, 60000, false);
}

Test(ring, multiprocess_lossy_overwrite, .timeout = 60)
{
	multiprocess(DP_RING_OVERWRITE, 8192, 60000, false);
}

/* ---- signal handlers nesting on the producing thread ---------------------- */

#define TAG_MAIN 1
#define TAG_SIG 2

static struct dp_ring *sig_ring;
static volatile uint64_t sig_attempts, sig_ok;

static void sig_handler(int sig)
{
	int saved = errno;
	uint64_t seq = sig_attempts;

	(void)sig;
	sig_attempts = seq + 1;
	if (put(sig_ring, seq, TAG_SIG, size_for(seq), seq))
		sig_ok = sig_ok + 1;
	errno = saved;
}

static void drain_split(struct dp_ring_reader *rd, struct acct *m,
			struct acct *s)
{
	struct dp_ring_entry e;

	while (dp_ring_read(rd, 0, &e) != DP_RING_EMPTY) {
		/* only the handler's records can be lost */
		if (e.kind == DP_RING_LOST || e.info == TAG_SIG)
			acct_entry(s, &e, TAG_SIG);
		else
			acct_entry(m, &e, TAG_MAIN);
	}
}

static void nesting(enum dp_ring_mode mode)
{
	struct dp_ring_set set;
	struct dp_ring_reader *rd;
	struct acct m = { 0 }, s = { 0 };
	struct sigaction sa = { .sa_handler = sig_handler };
	struct sigevent sev = { 0 };
	struct itimerspec its = { { 0, 50000 }, { 0, 50000 } };
	timer_t timer;
	uint64_t seq = 0, t0 = now_ns();

	mkset(&set, 1, 1 << 22, mode);
	sig_ring = dp_ring_claim(set.hdr, getpid(), gettid());
	sig_attempts = sig_ok = 0;
	rd = dp_ring_reader_new(&set, true);
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	cr_assert_eq(sigaction(SIGALRM, &sa, NULL), 0);
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGALRM;
	sev._sigev_un._tid = gettid();	/* sigev_notify_thread_id */
	cr_assert_eq(timer_create(CLOCK_MONOTONIC, &sev, &timer), 0);
	cr_assert_eq(timer_settime(timer, 0, &its, NULL), 0);

	/*
	 * Most of each iteration is spent with a record open (the payload is
	 * written a byte at a time), so most signals land inside one; the
	 * rest land between records, and the handler's records go in.
	 */
	while ((sig_attempts < 3000 || sig_ok < 100) &&
	       now_ns() - t0 < 5000000000ULL) {
		uint32_t n = size_for(seq);
		volatile uint8_t *p = dp_ring_reserve(sig_ring, n, seq,
						      TAG_MAIN);
		uint8_t tmp[256];

		cr_assert_not_null((void *)p, "main record %lu dropped", seq);
		make_payload(tmp, n, seq, TAG_MAIN);
		for (uint32_t k = 0; k < n; k++)
			p[k] = tmp[k];
		dp_ring_commit(sig_ring);
		seq++;
		for (volatile int k = 0; k < 100; k++)
			;
		if (seq % 64 == 0)
			drain_split(rd, &m, &s);
	}
	timer_delete(timer);
	signal(SIGALRM, SIG_IGN);
	/* The last drops are announced by a record, or at the end. */
	dp_ring_release(sig_ring);
	drain_split(rd, &m, &s);

	cr_assert(!m.bad && !s.bad, "corrupt or miscounted records");
	cr_assert_eq(m.seen, seq);
	cr_assert_eq(m.lost_total + m.lost, 0);
	cr_assert_eq(s.seen, sig_ok);
	cr_assert_eq(s.seen + s.lost_total + s.lost, sig_attempts);
	cr_assert_eq(sig_ring->lost, sig_attempts - sig_ok);
	/* Both paths were taken: nested (dropped) and not. */
	cr_assert_gt(sig_attempts - sig_ok, 0);
	cr_assert_gt(sig_ok, 0);
	cr_log_info("nesting: %lu main, %lu signals, %lu nested", seq,
		    (uint64_t)sig_attempts, (uint64_t)(sig_attempts - sig_ok));
	dp_ring_reader_free(rd);
	dp_ring_set_close(&set);
}

Test(ring, signal_nesting_discard, .timeout = 30)
{
	nesting(DP_RING_DISCARD);
}

Test(ring, signal_nesting_overwrite, .timeout = 30)
{
	nesting(DP_RING_OVERWRITE);
}

/* ---- garbage in the shared mapping ----------------------------------------- */

/* Read until empty; the reader must stop, and say the loss is unknown. */
static int read_all(struct dp_ring_reader *rd, unsigned i, bool *unknown)
{
	struct dp_ring_entry e;
	int n = 0;

	*unknown = false;
	while (dp_ring_read(rd, i, &e) != DP_RING_EMPTY) {
		if (e.kind == DP_RING_LOST && e.lost == DP_RING_LOST_UNKNOWN)
			*unknown = true;
		cr_assert_lt(++n, 100000);
	}
	return n;
}

Test(ring, garbage_is_survived)
{
	struct dp_ring_set set;
	struct dp_ring_reader *rd;
	struct dp_ring *r;
	bool unknown;
	unsigned seed = 1;

	for (int mode = 0; mode < 2; mode++) {
		mkset(&set, 1, 4096, mode);
		r = dp_ring_claim(set.hdr, 1, 1);
		rd = dp_ring_reader_new(&set, true);

		/* A length running past head. */
		cr_assert(put(r, 0, 1, 40, 0));
		*(uint32_t *)dp_ring_data(r) = 4000;
		read_all(rd, 0, &unknown);
		cr_assert(unknown);

		/* head moving backwards. */
		cr_assert(put(r, 1, 1, 40, 0));
		read_all(rd, 0, &unknown);
		r->head = 8;
		r->pending = 8;
		read_all(rd, 0, &unknown);
		cr_assert(unknown);

		/* Random bytes everywhere, many times. */
		for (int round = 0; round < 200; round++) {
			uint8_t *d = dp_ring_data(r);

			for (int k = 0; k < 4096; k++)
				d[k] = (uint8_t)rand_r(&seed);
			if (round % 2)
				for (int k = 0; k < 4096; k += 8)
					*(uint32_t *)(d + k) &= 0x030000f8;
			r->head += (rand_r(&seed) % 512) * 8;
			read_all(rd, 0, &unknown);
		}

		/* The producer carries on from where head is; so does the reader. */
		for (uint64_t i = 0; i < 50; i++) {
			struct dp_ring_entry e;

			cr_assert(put(r, i, 1, size_for(i), i));
			cr_assert_eq(dp_ring_read(rd, 0, &e), DP_RING_RECORD);
			cr_assert_eq(expect_record(&e, 1), i);
		}
		dp_ring_reader_free(rd);
		dp_ring_set_close(&set);
	}
}

/*
 * A record reserved at its largest and committed shorter (the agent's
 * string records): the reader sees the short length, the next record
 * follows right after it, and in overwrite mode eviction still lands on
 * record boundaries.
 */
static void commit_len_mode(enum dp_ring_mode mode)
{
	struct dp_ring_set set;
	struct dp_ring_reader *rd;
	struct dp_ring_entry e;
	struct dp_ring *r;
	uint64_t seen = 0;

	mkset(&set, 1, 4096, mode);
	r = dp_ring_claim(set.hdr, 1, 2);
	cr_assert_not_null(r);
	rd = dp_ring_reader_new(&set, true);
	cr_assert_not_null(rd);
	for (uint64_t i = 0; i < 1000; i++) {
		uint8_t *p = dp_ring_reserve(r, 1000, i, 0);
		uint32_t n = 8 + (uint32_t)(i % 40);

		cr_assert_not_null(p, "record %lu", (unsigned long)i);
		memset(p, (int)(i & 0xff), n);
		dp_ring_commit_len(r, p, n);
		if (i == 0)	/* header + 8 bytes, not the 1000 reserved */
			cr_assert_eq(r->head, DP_RING_HDR_SIZE + 8);
		if (mode == DP_RING_OVERWRITE && i % 7)
			continue;	/* read now and then: some are overwritten */
		while (dp_ring_read(rd, r->index, &e) != DP_RING_EMPTY) {
			if (e.kind != DP_RING_RECORD)
				continue;
			cr_assert_eq(e.len, 8 + e.ts % 40);
			cr_assert_eq(((const uint8_t *)e.data)[e.len - 1],
				     e.ts & 0xff);
			seen++;
		}
	}
	if (mode == DP_RING_DISCARD)
		cr_assert_eq(seen, 1000);
	else
		cr_assert_gt(seen, 100);
	dp_ring_reader_free(rd);
	dp_ring_set_close(&set);
}

Test(ring, commit_len_discard)
{
	commit_len_mode(DP_RING_DISCARD);
}

Test(ring, commit_len_overwrite)
{
	commit_len_mode(DP_RING_OVERWRITE);
}

/* Per-ring counters: summed over the set, and kept across owners. */
Test(ring, counters_survive_reclaim)
{
	struct dp_ring_set set;
	struct dp_ring_reader *rd;
	struct dp_ring *r;

	mkset(&set, 2, 4096, DP_RING_DISCARD);
	rd = dp_ring_reader_new(&set, true);
	r = dp_ring_claim(set.hdr, 1, 10);
	for (int i = 0; i < 5; i++)
		dp_ring_local_inc(&r->counters[3]);
	dp_ring_local_inc(&r->counters[DP_RING_NCOUNTERS - 1]);
	dp_ring_release(r);
	cr_assert_eq(dp_ring_reader_reclaim(rd), 1);
	r = dp_ring_claim(set.hdr, 1, 10);	/* the same ring, a new owner */
	dp_ring_local_inc(&r->counters[3]);
	r = dp_ring_claim(set.hdr, 1, 11);
	dp_ring_local_inc(&r->counters[3]);
	cr_assert_eq(dp_ring_set_counter(&set, 3), 7);
	cr_assert_eq(dp_ring_set_counter(&set, DP_RING_NCOUNTERS - 1), 1);
	cr_assert_eq(dp_ring_set_counter(&set, DP_RING_NCOUNTERS), 0);
	dp_ring_reader_free(rd);
	dp_ring_set_close(&set);
}
