// SPDX-License-Identifier: GPL-2.0
/*
 * dprobe latency PLACE: how long a function takes, from its entry to its
 * return, as a log2 histogram of nanoseconds printed as the kernel's
 * `hist` text (key lat.log2) with a bar per bucket, and count, min, avg
 * and max; bpftrace's `hist(nsecs - @start[tid])` and BCC's funclatency.
 *
 * Two probes on PLACE, an entry one and a return one, each recording
 * the stack pointer, run in trace's session (session.h).  Each thread
 * has a stack of the entries not returned yet, with their stack
 * pointers: at the return, the stack pointer is the entry's + 8 (the
 * return address popped), which says which entry it ends, whatever the
 * recursion.  A frame a longjmp, an exception or a thread's exit left
 * never returns (its return probe is counted as missed by the engine);
 * its entry is found stale and dropped when a later entry or return of
 * the thread is at or above its stack pointer, so it never pairs with
 * another call's return.
 *
 * Each duration becomes a record of a synthetic event `latency` (one
 * u64 field, lat) aggregated by a dp_hist per key of --by, so the
 * histogram is the kernel's hist trigger's, byte for byte.
 *
 * Where the engine can (the in-process one), the calls are timed in the
 * process instead, at the cost of an in-process hist trigger: the return
 * probe's entry handler stamps the return instance (one per call in
 * flight, so recursion and longjmp are the return stack's business), the
 * return makes the duration in ns and adds it to a table of the thread's
 * (event/agg.h; struct dp_agg_req's timed_from) under its log2 bucket and
 * --by key, with the sum, largest and smallest; the entry probe only
 * counts.  No record is made; on_agg() adds what the tables went up by
 * into the same histograms.  --filter (the entry's fields) and
 * DPROBE_AGG=0 keep the records' way.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/oneliner.h"
#include "cli/session.h"
#include "event/agg.h"
#include "event/filter.h"

#define ENTRY_EVENT	"entry"
#define RETURN_EVENT	"return"
#define GROUP		"latency"
#define SP_FIELD	"dp_sp"
/* the return event's first fields, which the agent fills when it times
 * the calls (DP_AGG_LAT_*); immediates elsewhere */
#define LAT_FIELDS	"dp_lat=\\0:u64 dp_tgid=\\0:u64 "
#define LAT_BITS	7	/* table size without --by: 64 buckets */
#define LAT_BITS_BY	11	/* with: buckets of up to ~200 threads */
/* frames of a thread kept at most (deeper entries are dropped) */
#define MAX_DEPTH	4096
#define TID_BUCKETS	1024
#define LATENCY_RING	"16M"	/* per thread, in-process engine */

enum by { BY_NONE, BY_COMM, BY_PID, BY_TID };

struct frame {
	uint64_t sp, ts;
	bool keep;		/* the entry passed --filter */
};

struct thread {
	int tid;
	unsigned n, cap;
	struct frame *v;
	struct thread *next;
};

struct latency {
	const char *place;	/* as given, with its fetch args */
	const char *filter;
	enum by by;
	bool us;
	bool timed;		/* the calls may be timed in the processes */
	struct dp_registry synreg;	/* the synthetic event `latency` */
	const struct dp_event *entry, *ret, *syn;
	unsigned entry_sp, ret_sp, lat_off;	/* field offsets */
	struct dp_filter *flt;
	struct dp_ol_hists hists;
	struct thread *threads[TID_BUCKETS];
	uint64_t abandoned;	/* entries that never returned */
	uint64_t unmatched;	/* returns without their entry */
	uint64_t too_deep;
	uint64_t entry_recs, ret_recs;	/* records paired here */
	uint64_t timed_calls;	/* calls timed in the processes */
	uint64_t timed_drops;	/* ...that found their table full */
};

static const char trigger[] = "hist:keys=lat.log2:vals=hitcount:sort=lat";

static struct thread *thread_of(struct latency *l, int tid)
{
	struct thread **b = &l->threads[(unsigned)tid % TID_BUCKETS], *t;

	for (t = *b; t; t = t->next)
		if (t->tid == tid)
			return t;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tid = tid;
	t->next = *b;
	*b = t;
	return t;
}

static void account(struct latency *l, const struct dp_rec_meta *meta,
		    uint64_t ns)
{
	uint8_t rec[64] = { 0 };
	uint64_t v = l->us ? ns / 1000 : ns;
	uint16_t type = (uint16_t)l->syn->id;
	int32_t pid = meta->pid;
	char key[64] = "";
	struct dp_ol_key *k;

	switch (l->by) {
	case BY_COMM:
		snprintf(key, sizeof(key), "comm=%s",
			 meta->comm ? meta->comm : "<...>");
		break;
	case BY_PID: snprintf(key, sizeof(key), "pid=%d", meta->tgid); break;
	case BY_TID: snprintf(key, sizeof(key), "tid=%d", meta->pid); break;
	case BY_NONE: break;
	}
	k = dp_ol_key(&l->hists, key);
	if (!k)
		return;
	memcpy(rec, &type, sizeof(type));
	memcpy(rec + 4, &pid, sizeof(pid));
	memcpy(rec + l->lat_off, &v, sizeof(v));
	dp_hist_add(k->hist, rec, l->syn->fixed_size, meta, NULL);
	dp_ol_key_value(k, ns);
}

static uint64_t load_sp(const void *rec, unsigned off)
{
	uint64_t v;

	memcpy(&v, (const uint8_t *)rec + off, sizeof(v));
	return v;
}

static void on_record(void *priv, const struct dp_event *ev, const void *rec,
		      size_t len, const struct dp_rec_meta *meta,
		      const struct dp_symbolizer *sym)
{
	struct latency *l = priv;
	struct thread *t = thread_of(l, meta->pid);
	uint64_t sp;

	(void)sym;
	if (!t)
		return;
	if (ev == l->entry) {
		l->entry_recs++;
		sp = load_sp(rec, l->entry_sp);
		/* frames at or above this call's are over: left by a
		 * longjmp or an exception, their returns never come */
		while (t->n && t->v[t->n - 1].sp <= sp) {
			t->n--;
			l->abandoned++;
		}
		if (t->n == MAX_DEPTH) {
			l->too_deep++;
			return;
		}
		if (t->n == t->cap) {
			unsigned cap = t->cap ? t->cap * 2 : 16;
			struct frame *v = realloc(t->v, cap * sizeof(*v));

			if (!v)
				return;
			t->v = v;
			t->cap = cap;
		}
		t->v[t->n++] = (struct frame){
			.sp = sp, .ts = meta->ts_ns,
			.keep = !l->flt || dp_filter_match(l->flt, ev, rec,
							   len, meta),
		};
		return;
	}
	if (ev != l->ret)
		return;
	l->ret_recs++;
	/* the return address is popped: the entry's stack pointer + 8 */
	sp = load_sp(rec, l->ret_sp) - 8;
	while (t->n && t->v[t->n - 1].sp < sp) {
		t->n--;
		l->abandoned++;
	}
	if (!t->n || t->v[t->n - 1].sp != sp) {
		l->unmatched++;		/* entered before tracing began */
		return;
	}
	t->n--;
	if (t->v[t->n].keep)
		account(l, meta, meta->ts_ns >= t->v[t->n].ts ?
			meta->ts_ns - t->v[t->n].ts : 0);
}

static unsigned field_off(const struct dp_event *ev, const char *name)
{
	const struct dp_field *f = dp_event_field(ev, name);

	return f ? f->offset : 0;
}

static int on_setup(void *priv, struct dp_registry *reg)
{
	struct latency *l = priv;
	struct dp_hist_error herr = { 0 };
	struct dp_hist *probe;
	struct dp_error err = { 0 };

	l->entry = dp_registry_find(reg, GROUP, ENTRY_EVENT);
	l->ret = dp_registry_find(reg, GROUP, RETURN_EVENT);
	if (!l->entry || !l->ret) {
		fprintf(stderr, "dprobe latency: no probe on '%s'\n", l->place);
		return -1;
	}
	l->entry_sp = field_off(l->entry, SP_FIELD);
	l->ret_sp = field_off(l->ret, SP_FIELD);
	l->timed = l->timed &&
		field_off(l->ret, "dp_lat") == DP_AGG_LAT_NS_OFF &&
		field_off(l->ret, "dp_tgid") == DP_AGG_LAT_PID_OFF &&
		l->ret->fixed_size >= DP_AGG_LAT_SIZE;
	if (l->filter) {
		struct dp_filter_error fe = { 0 };

		l->flt = dp_filter_compile(l->entry, l->filter, &fe);
		if (!l->flt) {
			fprintf(stderr, "dprobe latency: bad --filter:\n");
			dp_filter_error_log_print(l->filter, &fe, stderr);
			return -1;
		}
	}
	dp_registry_init(&l->synreg);
	if (dp_registry_synth(&l->synreg, "latency u64 lat", false, &err)) {
		dp_error_print(&err, stderr);
		dp_error_clear(&err);
		return -1;
	}
	l->syn = dp_registry_find(&l->synreg, DP_SYNTH_GROUP, "latency");
	l->lat_off = l->syn ? field_off(l->syn, "lat") : 0;
	if (!l->syn || !l->lat_off || l->syn->fixed_size > 64 ||
	    dp_hist_new(l->syn, trigger, &probe, &herr)) {
		fprintf(stderr, "dprobe latency: cannot make the histogram "
			"(%s)\n", herr.msg ? herr.msg : "no synthetic event");
		return -1;
	}
	dp_hist_free(probe);
	l->hists.ev = l->syn;
	l->hists.trigger = trigger;
	return 0;
}

/* ---- the calls timed in the processes ------------------------------------ */

static struct dp_agg_field lat_field(uint16_t off, uint8_t size, bool sign,
				     uint8_t mode, uint64_t arg)
{
	return (struct dp_agg_field){ .off = off, .size = size,
				      .is_signed = sign, .mode = mode,
				      .arg = arg };
}

/* The table of the timed return probe: keys (--by's, then the log2
 * bucket of the duration in the unit printed), the durations' sum,
 * largest and smallest in ns. */
static size_t on_aggs(void *priv, struct dp_agg_req *out, size_t max)
{
	struct latency *l = priv;
	struct dp_agg_spec *s = &out->spec[0];
	unsigned k = 0;

	if (!l->timed || !max)
		return 0;
	*out = (struct dp_agg_req){ .ev = l->ret, .timed_from = l->entry,
				    .n = 1, .cookie = { l } };
	if (l->by == BY_TID || l->by == BY_COMM)	/* comm: the thread's */
		s->key[k++] = lat_field(DP_REC_PID_OFF, 4, true, DP_AGG_RAW, 0);
	else if (l->by == BY_PID)
		s->key[k++] = lat_field(DP_AGG_LAT_PID_OFF, 8, false,
					DP_AGG_RAW, 0);
	s->key[k++] = lat_field(DP_AGG_LAT_NS_OFF, 8, false, DP_AGG_LOG2,
				l->us ? 1000 : 0);
	s->nkeys = k;
	s->val[0] = lat_field(DP_AGG_LAT_NS_OFF, 8, false, DP_AGG_RAW, 0);
	s->val[1] = lat_field(DP_AGG_LAT_NS_OFF, 8, false, DP_AGG_MAX, 0);
	s->val[2] = lat_field(DP_AGG_LAT_NS_OFF, 8, false, DP_AGG_MIN, 0);
	s->nvals = 3;
	s->bits = l->by == BY_NONE ? LAT_BITS : LAT_BITS_BY;
	s->rec_size = DP_AGG_LAT_SIZE;
	return 1;
}

/* The key of --by a table entry is under, as account() names it. */
static void agg_key_name(const struct latency *l, const uint64_t *key,
			 const char *comm, char *buf, size_t len)
{
	*buf = '\0';
	switch (l->by) {
	case BY_COMM:
		snprintf(buf, len, "comm=%s", comm && *comm ? comm : "<...>");
		break;
	case BY_PID: snprintf(buf, len, "pid=%d", (int)key[0]); break;
	case BY_TID: snprintf(buf, len, "tid=%d", (int)key[0]); break;
	case BY_NONE: break;
	}
}

/* The histogram of @name if it has one already. */
static struct dp_ol_key *key_of(struct latency *l, const char *name)
{
	for (unsigned i = 0; i < l->hists.nkeys; i++)
		if (!strcmp(l->hists.keys[i].name, name))
			return &l->hists.keys[i];
	return NULL;
}

/* What an entry of the table went up by: @hits calls in its bucket, the
 * sum of their durations, the largest and smallest so far. */
static void on_agg(void *priv, void *cookie, const uint64_t *key,
		   uint64_t hits, const uint64_t *val, const char *comm)
{
	struct latency *l = priv;
	char name[64];
	struct dp_ol_key *k;

	(void)cookie;
	if (!key) {
		l->timed_drops += hits;
		return;
	}
	agg_key_name(l, key, comm, name, sizeof(name));
	/* a look between a call's count and its sum: the rest comes later */
	k = hits ? dp_ol_key(&l->hists, name) : key_of(l, name);
	if (!k) {
		l->hists.dropped += hits;
		return;
	}
	if (hits)
		dp_hist_add_sums(k->hist, &key[l->by == BY_NONE ? 0 : 1], hits,
				 NULL, comm);
	l->timed_calls += hits;
	k->count += hits;
	k->sum += val[0];
	if (val[1] > k->max)
		k->max = val[1];
	if (val[2] < k->min)
		k->min = val[2];
}

/* Hits of @ev's probes that no record brought. */
static uint64_t counted(const struct dp_event *ev, uint64_t recs)
{
	uint64_t n = 0;

	for (const struct dp_probe *pr = ev->probes; pr; pr = pr->next)
		n += pr->nevents;
	return n > recs ? n - recs : 0;
}

static bool verbose(void)
{
	const char *v = getenv("DPROBE_VERBOSE");

	return v && *v && strcmp(v, "0");
}

static void print_all(struct latency *l, FILE *out)
{
	struct dp_histbar_opts o = { .unit = l->us ? DP_DUR_US : DP_DUR_NS };

	dp_ol_sort_keys(&l->hists);
	if (!l->hists.nkeys)
		fprintf(out, "# latency of %s: no call returned\n", l->place);
	for (unsigned i = 0; i < l->hists.nkeys; i++) {
		const struct dp_ol_key *k = &l->hists.keys[i];
		char mn[32], avg[32], mx[32];

		fprintf(out, "%s# latency of %s in %s%s%s\n", i ? "\n" : "",
			l->place, l->us ? "microseconds" : "nanoseconds",
			*k->name ? ", " : "", k->name);
		dp_ol_print_hist(k, out, &o);
		dp_histbar_dur(mn, sizeof(mn), k->min, DP_DUR_NS);
		dp_histbar_dur(avg, sizeof(avg), k->sum / k->count, DP_DUR_NS);
		dp_histbar_dur(mx, sizeof(mx), k->max, DP_DUR_NS);
		fprintf(out, "\ncount %" PRIu64 ", min %s, avg %s, max %s\n",
			k->count, mn, avg, mx);
	}
	if (l->hists.dropped)
		fprintf(out, "# %" PRIu64 " calls of keys past the first %d "
			"not counted\n", l->hists.dropped, DP_OL_MAX_KEYS);
	fflush(out);
}

static void on_tick(void *priv)
{
	print_all(priv, stdout);
}

static void on_end(void *priv, const struct dp_stats *st)
{
	struct latency *l = priv;
	uint64_t running = 0;

	for (unsigned i = 0; i < TID_BUCKETS; i++)
		for (struct thread *t = l->threads[i]; t; t = t->next)
			running += t->n;
	print_all(l, stdout);
	running += l->abandoned;
	/* calls entered where they were timed, minus those that returned:
	 * the return probe's misses, in flight at the end or left */
	if (l->entry && l->ret) {
		uint64_t in = counted(l->entry, l->entry_recs);
		uint64_t back = counted(l->ret, l->ret_recs);

		running += in > back ? in - back : 0;
	}
	if (verbose())
		fprintf(stderr, "dprobe latency: %" PRIu64 " calls timed in "
			"the process, %" PRIu64 " paired by dprobe\n",
			l->timed_calls, l->ret_recs - l->unmatched);
	if (l->timed_drops)
		fprintf(stderr, "dprobe latency: %" PRIu64 " calls not "
			"counted: their table in the process was full\n",
			l->timed_drops);
	if (running)
		fprintf(stderr, "dprobe latency: %" PRIu64 " call%s never "
			"returned (longjmp, exception, thread exit, or still "
			"running at the end): not counted\n", running,
			running == 1 ? "" : "s");
	if (st->lost)
		fprintf(stderr, "dprobe latency: %" PRIu64 " records lost: the "
			"calls they ended or began are not counted (a larger "
			"--buffer-size keeps them)\n", st->lost);
	if (l->too_deep)
		fprintf(stderr, "dprobe latency: %" PRIu64 " calls deeper "
			"than %d in a thread: not counted\n", l->too_deep,
			MAX_DEPTH);
}

static void latency_free(struct latency *l)
{
	for (unsigned i = 0; i < TID_BUCKETS; i++)
		while (l->threads[i]) {
			struct thread *t = l->threads[i];

			l->threads[i] = t->next;
			free(t->v);
			free(t);
		}
	dp_ol_hists_free(&l->hists);
	dp_filter_free(l->flt);
	if (l->syn)
		dp_registry_free(&l->synreg);
}

enum { OPT_BY = DP_OL_FIRST_OWN, OPT_FILTER, OPT_US, OPT_INTERVAL };

static int usage(void)
{
	dp_usage(stderr, "latency");
	return DP_EXIT_USAGE;
}

int dp_cmd_latency(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "by", required_argument, NULL, OPT_BY },
		{ "filter", required_argument, NULL, OPT_FILTER },
		{ "us", no_argument, NULL, OPT_US },
		{ "interval", required_argument, NULL, OPT_INTERVAL },
		DP_OL_TARGET_LONGOPTS,
		{ 0 },
	};
	struct latency l = { 0 };
	struct dp_session_hooks h = { .cmd = "latency", .priv = &l,
				      .setup = on_setup, .record = on_record,
				      .aggs = on_aggs, .agg = on_agg,
				      .tick = on_tick, .end = on_end };
	const char *agg = getenv("DPROBE_AGG"), *engine = NULL;
	struct dp_ol_argv a = { 0 };
	const char *place = NULL;
	bool sized = false;
	int c, ret;

	dp_ol_push(&a, "latency");
	optind = 1;
	for (;;) {
		c = getopt_long(argc, argv, "+p:fh", longopts, NULL);
		if (c == -1) {
			/* PLACE among the options; "--" ends them */
			if (optind < argc && strcmp(argv[optind - 1], "--") &&
			    !place) {
				place = argv[optind++];
				continue;
			}
			break;
		}
		if (c == DP_OL_BUFFER_SIZE)
			sized = true;
		if (c == DP_OL_ENGINE)
			engine = optarg;
		if (dp_ol_target_opt(&a, c, optarg))
			continue;
		switch (c) {
		case OPT_BY:
			l.by = !strcmp(optarg, "comm") ? BY_COMM :
			       !strcmp(optarg, "pid") ? BY_PID :
			       !strcmp(optarg, "tid") ? BY_TID : BY_NONE;
			if (l.by == BY_NONE) {
				fprintf(stderr, "dprobe latency: bad --by '%s' "
					"(comm, pid or tid)\n", optarg);
				goto bad;
			}
			break;
		case OPT_FILTER: l.filter = optarg; break;
		case OPT_US: l.us = true; break;
		case OPT_INTERVAL:
			h.interval = dp_ol_seconds(optarg);
			if (h.interval < 0) {
				fprintf(stderr, "dprobe latency: bad --interval "
					"'%s'\n", optarg);
				goto bad;
			}
			break;
		case 'h':
			dp_usage(stdout, "latency");
			dp_ol_argv_free(&a);
			return DP_EXIT_OK;
		default:
			goto bad;
		}
	}
	if (!place || !*place || strchr("-#", *place)) {
		fprintf(stderr, "dprobe latency: no function given (PLACE, "
			"e.g. prog:work or libc.so.6:malloc)\n");
		goto bad;
	}
	/* the same place twice; MAXACTIVE as high as the kernel takes */
	l.place = place;
	dp_ol_pushf(&a, "-e");
	dp_ol_pushf(&a, "p:" GROUP "/" ENTRY_EVENT " %s " SP_FIELD "=%%sp", place);
	/* timed in the process where the engine can: the entry's fields
	 * (--filter) are not there; an engine named that cannot needs no
	 * fields for it */
	l.timed = !l.filter && !(agg && !strcmp(agg, "0")) &&
		  (!engine || !strcmp(engine, "agent") ||
		   !strcmp(engine, "auto"));
	dp_ol_pushf(&a, "-e");
	dp_ol_pushf(&a, "r4096:" GROUP "/" RETURN_EVENT " %.*s %s" SP_FIELD
		    "=%%sp", (int)strcspn(place, " \t"), place,
		    l.timed ? LAT_FIELDS : "");
	/* every record counts: rings larger than trace's 1M (--buffer-size
	 * says otherwise) */
	if (!sized) {
		dp_ol_push(&a, "--buffer-size");
		dp_ol_push(&a, LATENCY_RING);
	}
	dp_ol_push_cmd(&a, argc, argv, optind);
	ret = dp_trace_session(a.n, a.v, &h);
	latency_free(&l);
	dp_ol_argv_free(&a);
	return ret;
bad:
	dp_ol_argv_free(&a);
	return usage();
}
