/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What `dprobe latency`, `count` and `top` share (oneliner.c): the
 * argument vector of the trace session they run (session.h), the target
 * options they pass on to it unchanged, and the histograms they keep,
 * one dp_hist per key of --by, printed with bars (output/histbar.h).
 */
#ifndef DPROBE_CLI_ONELINER_H
#define DPROBE_CLI_ONELINER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "event/hist.h"
#include "output/histbar.h"

/* ---- trace's argument vector --------------------------------------- */

struct dp_ol_argv {
	char **v;		/* NULL-terminated, each string malloc'd */
	int n, cap;
};

void dp_ol_push(struct dp_ol_argv *a, const char *s);
void dp_ol_pushf(struct dp_ol_argv *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void dp_ol_argv_free(struct dp_ol_argv *a);

/* The target options every one-liner takes, passed on to trace as they
 * are (trace checks them and says what is wrong): getopt_long codes. */
enum {
	DP_OL_DURATION = 200, DP_OL_ENGINE, DP_OL_BUFFER_SIZE,
	DP_OL_QUIET_TARGET,
	DP_OL_FIRST_OWN,	/* the commands' own options from here */
};
#define DP_OL_TARGET_LONGOPTS \
	{ "pid", required_argument, NULL, 'p' }, \
	{ "follow-forks", no_argument, NULL, 'f' }, \
	{ "duration", required_argument, NULL, DP_OL_DURATION }, \
	{ "engine", required_argument, NULL, DP_OL_ENGINE }, \
	{ "buffer-size", required_argument, NULL, DP_OL_BUFFER_SIZE }, \
	{ "quiet-target", no_argument, NULL, DP_OL_QUIET_TARGET }, \
	{ "help", no_argument, NULL, 'h' }

/* A target option (-p, -f, --duration, --engine, --buffer-size,
 * --quiet-target) into @a:
 * true, or false for any other @c. */
bool dp_ol_target_opt(struct dp_ol_argv *a, int c, const char *arg);
/* "-- CMD ARGS..." from @argv[@first..] (nothing when @first == @argc). */
void dp_ol_push_cmd(struct dp_ol_argv *a, int argc, char **argv, int first);

/* "--by"'s value: @s parsed as a positive number of seconds, else -1. */
double dp_ol_seconds(const char *s);

/* ---- histograms per key ---------------------------------------------- */

/*
 * One histogram (a dp_hist on @ev with @trigger) per key value, made at
 * the key's first record, with the count, min, max and sum of a value
 * alongside (latency's durations).  At most DP_OL_MAX_KEYS keys; records
 * of more are counted as dropped.
 */
#define DP_OL_MAX_KEYS 1024

struct dp_ol_key {
	char name[64];		/* the key as printed: "comm=fib", "" */
	struct dp_hist *hist;
	uint64_t count, min, max, sum;
};

struct dp_ol_hists {
	const struct dp_event *ev;
	const char *trigger;
	struct dp_ol_key *keys;
	unsigned nkeys, cap;
	uint64_t dropped;	/* records of keys past DP_OL_MAX_KEYS */
};

/* The histogram of key @name, made if new: NULL when over the limit. */
struct dp_ol_key *dp_ol_key(struct dp_ol_hists *h, const char *name);
/* A value (latency) of one record of @k, for count/min/avg/max. */
void dp_ol_key_value(struct dp_ol_key *k, uint64_t v);
/* Keys by their number of records, most first (ties by name). */
void dp_ol_sort_keys(struct dp_ol_hists *h);
/* The kernel's hist text of @k with bars (@o), to @out. */
void dp_ol_print_hist(const struct dp_ol_key *k, FILE *out,
		      const struct dp_histbar_opts *o);
void dp_ol_hists_free(struct dp_ol_hists *h);


/* ---- counting by keys (count, top) ---------------------------------- */

/*
 * Each event's records counted by KEY[,KEY...] (--by), as a hist trigger
 * `hist:keys=KEYS:vals=hitcount:sort=hitcount.descending` would, on a
 * synthetic event made of the keys: fields of the event (numbers as u64
 * or s64, strings as char[256]), `comm` (the thread's name), `pid` (the
 * process), `tid`, and `common_pid`, each with the hist modifiers
 * (.hex, .sym, .log2, .execname on common_pid...).  `comm` and `pid` are
 * what the kernel's hist keys cannot say (common_pid is the thread).
 */
#define DP_OL_MAX_EVENTS 64
#define DP_OL_MAX_BY 3

struct dp_ol_count {
	const char *by;			/* "comm,a.log2" */
	struct dp_registry synreg;
	bool synreg_init;
	struct dp_ol_counted {
		const struct dp_event *ev, *syn;
		struct dp_hist *hist;
		struct dp_ol_keysrc {
			int kind;	/* the source: a field, comm, pid... */
			const struct dp_field *src;
			unsigned dst, size;	/* in the synthetic record */
		} k[DP_OL_MAX_BY];
		unsigned nk;
		char *trigger;
	} v[DP_OL_MAX_EVENTS];
	unsigned n;
	struct dp_histbar_opts bar;
};

/* Keys checked against every event of @reg, histograms made: 0, or -1
 * after saying why. */
int dp_ol_count_setup(struct dp_ol_count *c, struct dp_registry *reg);
void dp_ol_count_record(struct dp_ol_count *c, const struct dp_event *ev,
			const void *rec, size_t len,
			const struct dp_rec_meta *meta,
			const struct dp_symbolizer *sym);
/* Each event's "GROUP/EVENT/hist:" and its hist text with bars; @clear:
 * the counts start again after. */
void dp_ol_count_print(struct dp_ol_count *c, FILE *out, bool clear);
void dp_ol_count_free(struct dp_ol_count *c);

#endif
