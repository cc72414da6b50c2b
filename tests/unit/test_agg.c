// SPDX-License-Identifier: GPL-2.0
/*
 * The hist tables kept in traced processes (event/agg.h): keys as the
 * histogram keys them, counts exact under threads, a full table dropping
 * and counting, slots of threads' own (claimed once, plain adds that a
 * signal handler cannot split), and dp_hist_agg_spec() / dp_hist_add_sums() giving the
 * same `hist` text as records do.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "event/agg.h"
#include "event/hist.h"
#include "lang/lang.h"
#include "event/event.h"

struct rec {
	uint64_t a;
	int32_t b;
	uint32_t pad;
};

static struct dp_agg_spec spec_ab(uint32_t bits, uint8_t mode, uint64_t arg)
{
	return (struct dp_agg_spec){
		.nkeys = 1, .nvals = 1, .bits = bits,
		.rec_size = sizeof(struct rec),
		.key = { { .off = 0, .size = 8, .mode = mode, .arg = arg } },
		.val = { { .off = 8, .size = 4, .is_signed = 1 } },
	};
}

static void *table_new(uint32_t bits)
{
	void *t = calloc(1, dp_agg_table_size(bits));

	cr_assert(t);
	return t;
}

static const struct dp_agg_entry *find(void *t, uint32_t bits, uint64_t key)
{
	const struct dp_agg_entry *e = (const void *)((struct dp_agg_hdr *)t + 1);

	for (uint64_t i = 0; i < (uint64_t)2 << bits; i++)
		if (e[i].tag >> 63 && e[i].key[0] == key)
			return &e[i];
	return NULL;
}

Test(agg, keys_as_the_histogram_keys_them)
{
	struct dp_agg_field log2 = { .size = 8, .mode = DP_AGG_LOG2 };
	struct dp_agg_field buck = { .size = 8, .mode = DP_AGG_BUCKET, .arg = 10 };
	struct dp_agg_field s8 = { .size = 1, .is_signed = 1 };
	static const struct { uint64_t v, log2; } cases[] = {
		{ 0, 0 }, { 1, 0 }, { 2, 1 }, { 3, 2 }, { 4, 2 }, { 5, 3 },
		{ 1024, 10 }, { 1025, 11 }, { 1ull << 63, 63 },
		{ (1ull << 63) + 1, 0 }, { ~0ull, 0 },
	};
	uint8_t rec[8];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memcpy(rec, &cases[i].v, 8);
		cr_expect_eq(dp_agg_key(&log2, rec), cases[i].log2,
			     "log2 of %llu", (unsigned long long)cases[i].v);
	}
	memcpy(rec, &(uint64_t){ 37 }, 8);
	cr_expect_eq(dp_agg_key(&buck, rec), 30);
	rec[0] = 0xfe;
	cr_expect_eq(dp_agg_key(&s8, rec), (uint64_t)-2);
}

Test(agg, counts_and_sums)
{
	struct dp_agg_spec s = spec_ab(7, DP_AGG_RAW, 0);
	void *t = table_new(7);
	const struct dp_agg_entry *e;

	for (int i = 0; i < 100; i++) {
		struct rec r = { .a = (uint64_t)(i % 3), .b = -i };

		dp_agg_add(t, &s, (const uint8_t *)&r, "worker", false);
	}
	cr_assert_eq(((struct dp_agg_hdr *)t)->used, 3);
	e = find(t, 7, 0);
	cr_assert(e);
	cr_expect_eq(e->hits, 34);
	/* -0 - 3 - ... - 99: the sum of a signed field, two's complement */
	cr_expect_eq((int64_t)e->val[0], -(0 + 99) * 34 / 2);
	cr_expect_str_eq(e->comm, "worker");
	cr_expect_eq(((struct dp_agg_hdr *)t)->drops, 0);
	free(t);
}

Test(agg, a_full_table_drops_and_counts)
{
	struct dp_agg_spec s = spec_ab(7, DP_AGG_RAW, 0);
	void *t = table_new(7);

	for (uint64_t i = 0; i < 200; i++) {
		struct rec r = { .a = i };

		dp_agg_add(t, &s, (const uint8_t *)&r, NULL, false);
	}
	cr_expect_eq(((struct dp_agg_hdr *)t)->used, 128);
	cr_expect_eq(((struct dp_agg_hdr *)t)->drops, 72);
	free(t);
}

Test(agg, a_busy_entry_is_waited_for_then_dropped)
{
	struct dp_agg_spec s = spec_ab(7, DP_AGG_RAW, 0);
	void *t = table_new(7);
	struct dp_agg_entry *e = (void *)((struct dp_agg_hdr *)t + 1);
	struct rec r = { .a = 5 };
	uint64_t key = 5;

	/* an insert interrupted between its claim and its key */
	e[dp_agg_hash(&key, 1) & 255].tag = DP_AGG_TAG_BUSY;
	dp_agg_add(t, &s, (const uint8_t *)&r, NULL, false);
	cr_expect_eq(((struct dp_agg_hdr *)t)->drops, 1);
	free(t);
}

struct worker {
	void *t;
	const struct dp_agg_spec *s;
	unsigned id;
};

static void *work(void *arg)
{
	struct worker *w = arg;

	for (uint64_t i = 0; i < 200000; i++) {
		struct rec r = { .a = (i * 7 + w->id) % 50, .b = 1 };

		dp_agg_add(w->t, w->s, (const uint8_t *)&r, "w", false);
	}
	return NULL;
}

Test(agg, exact_under_threads)
{
	struct dp_agg_spec s = spec_ab(7, DP_AGG_RAW, 0);
	void *t = table_new(7);
	struct worker w[4];
	pthread_t th[4];
	const struct dp_agg_entry *e = (const void *)((struct dp_agg_hdr *)t + 1);
	uint64_t hits = 0, sum = 0;

	/* every key's entry claimed first: a thread preempted between its
	 * claim and its key would make the others drop their hits after
	 * spinning (by design), which a 2-CPU machine under load does;
	 * what is checked is that adds to claimed entries are exact */
	for (uint64_t k = 0; k < 50; k++) {
		struct rec r = { .a = k, .b = 1 };

		dp_agg_add(t, &s, (const uint8_t *)&r, "w", false);
	}
	for (unsigned i = 0; i < 4; i++) {
		w[i] = (struct worker){ t, &s, i };
		cr_assert_eq(pthread_create(&th[i], NULL, work, &w[i]), 0);
	}
	for (unsigned i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	for (unsigned i = 0; i < 256; i++) {
		hits += e[i].hits;
		sum += e[i].val[0];
	}
	cr_expect_eq(((struct dp_agg_hdr *)t)->used, 50, "one entry per key");
	cr_expect_eq(hits, 800050);
	cr_expect_eq(sum, 800050);
	cr_expect_eq(((struct dp_agg_hdr *)t)->drops, 0);
	free(t);
}

Test(agg, slots_claimed_once_each)
{
	struct dp_agg_owners *o = calloc(1, DP_AGG_OWNERS_SIZE);
	unsigned seen[DP_AGG_SLOTS] = { 0 }, k;

	cr_assert(o);
	k = dp_agg_claim(o, dp_agg_owner_word(10, 11));
	cr_expect_neq(k, 0, "slot 0 is never a thread's own");
	cr_expect_eq(dp_agg_claim(o, dp_agg_owner_word(10, 11)), k,
		     "a thread claiming again gets its slot back");
	seen[k] = 1;
	for (int tid = 12; tid < 12 + DP_AGG_SLOTS - 2; tid++) {
		unsigned j = dp_agg_claim(o, dp_agg_owner_word(10, tid));

		cr_expect(j > 0 && j < DP_AGG_SLOTS && !seen[j],
			  "tid %d: slot %u", tid, j);
		seen[j] = 1;
	}
	cr_expect_eq(dp_agg_claim(o, dp_agg_owner_word(10, 99)), 0,
		     "every slot taken: the shared one");
	o->owner[k] = 0;	/* dprobe frees a gone thread's slot */
	cr_expect_eq(dp_agg_claim(o, dp_agg_owner_word(11, 99)), k);
	free(o);
}

static void *own_work(void *arg)
{
	struct worker *w = arg;
	unsigned k = dp_agg_claim(w->t, dp_agg_owner_word(1, 100 + w->id));
	uint8_t *table = (uint8_t *)w->t + w->s->off +
			 k * dp_agg_stride(w->s->bits);

	for (uint64_t i = 0; i < 200000; i++) {
		struct rec r = { .a = (i * 7 + w->id) % 50, .b = 1 };

		dp_agg_add(table, w->s, (const uint8_t *)&r, "w", k != 0);
	}
	return NULL;
}

/* every slot's entries of key @key, summed */
static uint64_t slot_sum(void *mem, const struct dp_agg_spec *s, bool vals)
{
	uint64_t n = 0;

	for (unsigned k = 0; k < DP_AGG_SLOTS; k++) {
		const struct dp_agg_hdr *h = (const void *)((uint8_t *)mem +
					s->off + k * dp_agg_stride(s->bits));
		const struct dp_agg_entry *e = (const void *)(h + 1);

		for (uint64_t i = 0; i < (uint64_t)2 << s->bits; i++)
			n += vals ? e[i].val[0] : e[i].hits;
	}
	return n;
}

Test(agg, exact_in_slots_of_their_own)
{
	struct dp_agg_spec s = spec_ab(7, DP_AGG_RAW, 0);
	void *mem;
	struct worker w[4];
	pthread_t th[4];

	s.off = DP_AGG_OWNERS_SIZE;
	mem = calloc(1, s.off + dp_agg_group_size(s.bits));
	cr_assert(mem);
	for (unsigned i = 0; i < 4; i++) {
		w[i] = (struct worker){ mem, &s, i };
		cr_assert_eq(pthread_create(&th[i], NULL, own_work, &w[i]), 0);
	}
	for (unsigned i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	cr_expect_eq(slot_sum(mem, &s, false), 800000);
	cr_expect_eq(slot_sum(mem, &s, true), 800000);
	free(mem);
}

/* A signal handler adding into the table its thread is adding into. */
static void *sig_table;
static const struct dp_agg_spec *sig_spec;
static volatile uint64_t sig_hits;

static void on_alarm(int sig)
{
	struct rec r = { .a = 7, .b = 1 };

	(void)sig;
	dp_agg_add(sig_table, sig_spec, (const uint8_t *)&r, "h", true);
	sig_hits++;
}

Test(agg, own_adds_whole_under_signals)
{
	struct dp_agg_spec s = spec_ab(7, DP_AGG_RAW, 0);
	struct itimerval it = { { 0, 50 }, { 0, 50 } };
	struct sigaction sa = { .sa_handler = on_alarm };
	uint64_t n = 0;
	const struct dp_agg_entry *e;

	sig_table = table_new(7);
	sig_spec = &s;
	sigemptyset(&sa.sa_mask);
	cr_assert_eq(sigaction(SIGALRM, &sa, NULL), 0);
	/* the key's entry first: a handler that meets it being claimed
	 * drops its hit (counted), by design; the adds are what is tested */
	{
		struct rec r = { .a = 7, .b = 1 };

		dp_agg_add(sig_table, &s, (const uint8_t *)&r, "m", true);
		n++;
	}
	cr_assert_eq(setitimer(ITIMER_REAL, &it, NULL), 0);
	for (uint64_t i = 0; i < 500000 || sig_hits < 100; i++) {
		struct rec r = { .a = 7, .b = 1 };

		dp_agg_add(sig_table, &s, (const uint8_t *)&r, "m", true);
		n++;
	}
	it = (struct itimerval){ 0 };
	setitimer(ITIMER_REAL, &it, NULL);
	signal(SIGALRM, SIG_DFL);
	e = find(sig_table, 7, 7);
	cr_assert(e);
	cr_expect_eq(e->hits, n + sig_hits, "%llu hits for %llu + %llu",
		     (unsigned long long)e->hits, (unsigned long long)n,
		     (unsigned long long)sig_hits);
	cr_expect_eq(e->val[0], n + sig_hits);
	cr_expect_eq(((struct dp_agg_hdr *)sig_table)->drops, 0);
	free(sig_table);
}

/* ---- the histogram's side ------------------------------------------------ */

static struct dp_registry reg;

static struct dp_event *event(const char *def, const char *name)
{
	cr_assert_eq(dp_registry_apply(&reg, def, NULL, NULL), 0, "%s", def);
	return dp_registry_find(&reg, "kp", name);
}

static void setup(void)
{
	dp_registry_init(&reg);
}

static void teardown(void)
{
	dp_registry_free(&reg);
}

static struct dp_hist *make(struct dp_event *ev, const char *text)
{
	struct dp_hist_error err;
	struct dp_hist *h = NULL;

	cr_assert_eq(dp_hist_new(ev, text, &h, &err), 0, "%s", text);
	return h;
}

static bool eligible(struct dp_event *ev, const char *text)
{
	struct dp_hist *h = make(ev, text);
	struct dp_agg_spec s;
	bool ok = dp_hist_agg_spec(h, &s);

	dp_hist_free(h);
	return ok;
}

static char *print(const struct dp_hist *h)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	cr_assert(f);
	dp_hist_print(h, 0, f);
	fclose(f);
	return buf;
}

TestSuite(agg_hist, .init = setup, .fini = teardown);

Test(agg_hist, what_can_be_kept_in_a_process)
{
	struct dp_event *k = event("p:kp/k work a=%di:s32 b=%si:u64", "k");
	struct dp_event *s = event("p:kp/s work a=%di:s32 s=+0(%si):string", "s");

	cr_expect(eligible(k, "hist:keys=a"));
	cr_expect(eligible(k, "hist:keys=a.log2,b.buckets=10:vals=b:sort=b"));
	cr_expect(eligible(k, "hist:keys=common_pid.execname:vals=a,b"));
	cr_expect(eligible(k, "hist:keys=a.hex:size=8192"));
	cr_expect_not(eligible(k, "hist:keys=a if b > 3"), "a filter");
	cr_expect_not(eligible(k, "hist:keys=b.sym"), "a process's symbols");
	cr_expect_not(eligible(k, "hist:keys=b.sym-offset"), "symbols too");
	cr_expect_not(eligible(s, "hist:keys=a"), "a string in the record");
}

/* The same hits by records and by a table print the same text. */
Test(agg_hist, a_table_gives_the_records_hist)
{
	struct dp_event *k = event("p:kp/k work a=%di:s32 b=%si:u64", "k");
	const char *text = "hist:keys=a.log2,common_pid.execname:vals=b:sort=a";
	struct dp_hist *byrec = make(k, text), *bytab = make(k, text);
	const struct dp_field *fa = dp_event_field(k, "a");
	const struct dp_field *fb = dp_event_field(k, "b");
	const struct dp_field *fp = dp_event_field(k, "common_pid");
	struct dp_rec_meta meta = { .pid = 7, .tgid = 7, .comm = "worker" };
	struct dp_agg_spec s;
	void *t;
	const struct dp_agg_entry *e;
	uint8_t rec[256] = { 0 };
	char *p1, *p2;

	cr_assert(fa && fb && fp && k->fixed_size <= sizeof(rec));
	cr_assert(dp_hist_agg_spec(bytab, &s));
	t = table_new(s.bits);
	for (int i = 0; i < 1000; i++) {
		int32_t a = i * 37 % 5000 - 100;
		uint64_t b = (uint64_t)i;
		int32_t pid = 7;

		memset(rec, 0, sizeof(rec));
		memcpy(rec + fa->offset, &a, 4);
		memcpy(rec + fb->offset, &b, 8);
		memcpy(rec + fp->offset, &pid, 4);
		dp_hist_add(byrec, rec, k->fixed_size, &meta, NULL);
		dp_agg_add(t, &s, rec, "worker", false);
	}
	e = (const void *)((struct dp_agg_hdr *)t + 1);
	for (uint64_t i = 0; i < (uint64_t)2 << s.bits; i++)
		if (e[i].tag >> 63)
			dp_hist_add_sums(bytab, e[i].key, e[i].hits, e[i].val,
					 e[i].comm);
	p1 = print(byrec);
	p2 = print(bytab);
	cr_expect_str_eq(p2, p1);
	cr_expect(strstr(p1, "worker"), "%s", p1);
	free(p1);
	free(p2);
	free(t);
	dp_hist_free(byrec);
	dp_hist_free(bytab);
}

/* dprobe latency --us: the log2 of the duration in microseconds, as the
 * records' way keys ns / 1000 */
Test(agg, log2_key_of_a_divided_value)
{
	struct dp_agg_field us = { .size = 8, .mode = DP_AGG_LOG2, .arg = 1000 };
	static const struct { uint64_t ns, key; } cases[] = {
		{ 0, 0 }, { 999, 0 }, { 1999, 0 }, { 2000, 1 }, { 3000, 2 },
		{ 3000000, 12 }, { 4096000, 12 }, { 4097000, 13 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cr_expect_eq(dp_agg_key(&us, (const uint8_t *)&cases[i].ns),
			     cases[i].key, "%llu ns",
			     (unsigned long long)cases[i].ns);
}

/* ticks * mult >> 32: exact for whole factors, rounded down, saturated */
Test(agg, ticks_to_ns)
{
	uint64_t third = (1ull << 32) / 3;	/* a 3 GHz clock */

	cr_expect_eq(dp_agg_ticks_ns(12345, 1ull << 32), 12345);
	cr_expect_eq(dp_agg_ticks_ns(3000000000ull, third), 999999999);
	cr_expect_eq(dp_agg_ticks_ns(7, 3ull << 31), 10);
	cr_expect_eq(dp_agg_ticks_ns(0, third), 0);
	/* a day of 3 GHz ticks does not overflow the product */
	cr_expect_eq(dp_agg_ticks_ns(86400ull * 3000000000ull, third + 1),
		     86400000040233ull);
	cr_expect_eq(dp_agg_ticks_ns(UINT64_MAX, UINT64_MAX), UINT64_MAX);
}

/* latency's values: the sum, the largest and the smallest of a bucket;
 * the smallest kept as the largest complement, 0 meaning none yet */
Test(agg, sum_max_and_min_values)
{
	struct dp_agg_spec s = {
		.nkeys = 1, .nvals = 3, .bits = DP_AGG_BITS_MIN,
		.rec_size = sizeof(struct rec),
		.key = { { .off = 0, .size = 8, .mode = DP_AGG_LOG2 } },
		.val = { { .off = 0, .size = 8 },
			 { .off = 0, .size = 8, .mode = DP_AGG_MAX },
			 { .off = 0, .size = 8, .mode = DP_AGG_MIN } },
	};
	static const uint64_t v[] = { 3000, 2500, 4000, 2049, 3500 };
	void *t = table_new(s.bits);
	const struct dp_agg_entry *e;

	cr_expect_eq(dp_agg_val_of(&s.val[2], 0), UINT64_MAX);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct rec r = { .a = v[i] };

		dp_agg_add(t, &s, (const uint8_t *)&r, "t", i & 1);
	}
	e = find(t, s.bits, 12);	/* all in (2048, 4096] */
	cr_assert(e);
	cr_expect_eq(e->hits, 5);
	cr_expect_eq(dp_agg_val_of(&s.val[0], e->val[0]), 15049);
	cr_expect_eq(dp_agg_val_of(&s.val[1], e->val[1]), 4000);
	cr_expect_eq(dp_agg_val_of(&s.val[2], e->val[2]), 2049);
	free(t);
}
