// SPDX-License-Identifier: GPL-2.0
/*
 * Cost of one ring record: reserve, write a 32-byte payload, commit, on
 * one thread, against baseline loops, with and without a reader draining
 * the ring from another thread at the same time.
 *
 *   ring_bench [N [REPEATS [RING_KIB]]]    (default 1e8, 5, 1024)
 *
 * Every case calls a hook through a function pointer N times (as a probe
 * handler is called), times the loop with CLOCK_MONOTONIC and keeps the
 * median and the minimum of REPEATS runs.  "over call" is the median less
 * that of the empty hook: the cost the record adds to a call.  The payload
 * is four words (the shape of a probe record: ip and two arguments and a
 * word more); the record's timestamp is the loop counter, except in the
 * rdtsc row.  Prints a Markdown table.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

#include "ring/ring.h"

static struct dp_ring *ring;
static __thread uint64_t tls_buf[4096];

static __attribute__((noinline)) void h_empty(uint64_t i)
{
	__asm__ volatile("" : : "r"(i));
}

/* The floor: the same 32 bytes to a thread-local array, no ring logic. */
static __attribute__((noinline)) void h_store(uint64_t i)
{
	uint64_t *p = &tls_buf[(i * 4) & 4095];

	p[0] = i;
	p[1] = i * 3;
	p[2] = i ^ 0x55;
	p[3] = i + 7;
}

static __attribute__((noinline)) void h_ring(uint64_t i)
{
	uint64_t *p = dp_ring_reserve(ring, 32, i, 0);

	if (!p)
		return;
	p[0] = i;
	p[1] = i * 3;
	p[2] = i ^ 0x55;
	p[3] = i + 7;
	dp_ring_commit(ring);
}

static __attribute__((noinline)) void h_ring_tsc(uint64_t i)
{
	uint64_t *p = dp_ring_reserve(ring, 32, __rdtsc(), 0);

	if (!p)
		return;
	p[0] = i;
	p[1] = i * 3;
	p[2] = i ^ 0x55;
	p[3] = i + 7;
	dp_ring_commit(ring);
}

enum reader_kind {
	NO_READER,
	FREE_TAIL,	/* the loop hands the space back itself, reads nothing */
	READER,		/* a thread consumes (copies out) records, spinning */
	POLLER,		/* the same, sleeping 1 ms whenever the ring is empty */
};

struct bcase {
	const char *name;
	void (*hook)(uint64_t);
	int ring;			/* -1: none, else enum dp_ring_mode */
	enum reader_kind reader;
};

struct reader_arg {
	struct dp_ring_set *set;
	unsigned index;
	int stop;
	bool poll;
	uint64_t read, lost;
};

static void *reader_main(void *p)
{
	struct reader_arg *a = p;
	struct dp_ring_reader *rd = dp_ring_reader_new(a->set, true);
	struct dp_ring_entry e;
	int stop = 0;

	if (!rd)
		abort();
	while (!stop) {
		stop = __atomic_load_n(&a->stop, __ATOMIC_ACQUIRE);
		if (stop)
			dp_ring_reader_final(rd);
		while (dp_ring_read(rd, a->index, &e) != DP_RING_EMPTY) {
			if (e.kind == DP_RING_RECORD)
				a->read++;
			else
				a->lost += e.lost;
		}
		if (a->poll && !stop)
			dp_ring_reader_wait(rd, 1);
	}
	dp_ring_reader_free(rd);
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct result {
	double ns;
	uint64_t read, lost, dropped, overwritten;
};

static struct result run_once(const struct bcase *c, uint64_t n,
			      uint64_t ring_size)
{
	struct result res = { 0 };
	struct reader_arg ra = { 0 };
	struct dp_ring_set set;
	pthread_t th;
	void (*volatile hook)(uint64_t) = c->hook;
	double t0, t1;

	if (c->ring >= 0) {
		if (dp_ring_set_create(&set, 1, ring_size, c->ring))
			abort();
		ring = dp_ring_claim(set.hdr, 1, 1);
		ra.set = &set;
		ra.index = ring->index;
		ra.poll = c->reader == POLLER;
		if ((c->reader == READER || c->reader == POLLER) &&
		    pthread_create(&th, NULL, reader_main, &ra))
			abort();
	}
	t0 = now_s();
	if (c->reader == FREE_TAIL) {
		for (uint64_t i = 0; i < n; i++) {
			hook(i);
			if (!(i & 1023))
				ring->tail.pos = ring->head;
		}
	} else {
		for (uint64_t i = 0; i < n; i++)
			hook(i);
	}
	t1 = now_s();
	res.ns = (t1 - t0) * 1e9 / n;
	if (c->ring >= 0) {
		if (c->reader == READER || c->reader == POLLER) {
			__atomic_store_n(&ra.stop, 1, __ATOMIC_RELEASE);
			pthread_join(th, NULL);
		}
		res.read = ra.read;
		res.lost = ra.lost;
		res.dropped = ring->lost;
		res.overwritten = ring->overwritten;
		dp_ring_set_close(&set);
	}
	return res;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static const struct bcase cases[] = {
	{ "empty hook (baseline)", h_empty, -1, NO_READER },
	{ "32 B to a TLS array (floor)", h_store, -1, NO_READER },
	{ "ring, discard, space handed back in the loop", h_ring,
	  DP_RING_DISCARD, FREE_TAIL },
	{ "ring, overwrite, no reader", h_ring, DP_RING_OVERWRITE, NO_READER },
	{ "ring, discard, full, no reader (all dropped)", h_ring,
	  DP_RING_DISCARD, NO_READER },
	{ "ring, discard, reader thread polling (1 ms)", h_ring,
	  DP_RING_DISCARD, POLLER },
	{ "ring, overwrite, reader thread polling (1 ms)", h_ring,
	  DP_RING_OVERWRITE, POLLER },
	{ "ring, discard, reader thread spinning", h_ring, DP_RING_DISCARD,
	  READER },
	{ "ring, overwrite, reader thread spinning", h_ring,
	  DP_RING_OVERWRITE, READER },
	{ "ring, discard + rdtsc timestamp, space handed back", h_ring_tsc,
	  DP_RING_DISCARD, FREE_TAIL },
};

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 0) : 100000000;
	int reps = argc > 2 ? atoi(argv[2]) : 5;
	uint64_t kib = argc > 3 ? strtoull(argv[3], NULL, 0) : 1024;
	uint64_t ring_size = dp_ring_size_round(kib * 1024);
	unsigned nc = sizeof(cases) / sizeof(cases[0]);
	double base = 0;

	if (!n || reps < 1 || reps > 99 || !ring_size) {
		fprintf(stderr, "usage: ring_bench [N [REPEATS [RING_KIB]]]\n");
		return 2;
	}
	printf("%llu records per run, median of %d runs, ring %llu KiB, "
	       "32-byte payload (48-byte record)\n\n",
	       (unsigned long long)n, reps,
	       (unsigned long long)(ring_size / 1024));
	printf("| case | median ns/rec | min ns/rec | over call ns | "
	       "read by reader | lost |\n");
	printf("| --- | ---: | ---: | ---: | ---: | ---: |\n");
	for (unsigned k = 0; k < nc; k++) {
		const struct bcase *c = &cases[k];
		double ns[99], med;
		struct result last = { 0 };
		char rd[32] = "-", lost[32] = "-";

		for (int r = 0; r < reps; r++) {
			last = run_once(c, n, ring_size);
			ns[r] = last.ns;
		}
		qsort(ns, reps, sizeof(ns[0]), cmp_double);
		med = reps % 2 ? ns[reps / 2] :
				 (ns[reps / 2 - 1] + ns[reps / 2]) / 2;
		if (k == 0)
			base = med;
		if (c->reader == READER || c->reader == POLLER) {
			snprintf(rd, sizeof(rd), "%.1f%%", 100.0 * last.read / n);
			snprintf(lost, sizeof(lost), "%.1f%%",
				 100.0 * last.lost / n);
		} else if (c->ring == DP_RING_OVERWRITE) {
			snprintf(lost, sizeof(lost), "%.1f%% overwritten",
				 100.0 * last.overwritten / n);
		} else if (c->ring >= 0) {
			snprintf(lost, sizeof(lost), "%.1f%% dropped",
				 100.0 * last.dropped / n);
		}
		if (k)
			printf("| %s | %.2f | %.2f | %.2f | %s | %s |\n",
			       c->name, med, ns[0], med - base, rd, lost);
		else
			printf("| %s | %.2f | %.2f | - | - | - |\n", c->name,
			       med, ns[0]);
		fflush(stdout);
	}
	return 0;
}
