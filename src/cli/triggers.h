/* SPDX-License-Identifier: GPL-2.0 */
/* --trigger: hist triggers on the events of `dprobe trace` (triggers.c). */
#ifndef DPROBE_CLI_TRIGGERS_H
#define DPROBE_CLI_TRIGGERS_H

#include <stdbool.h>
#include <stdio.h>

#include "cli/cli.h"
#include "event/hist.h"

#define DP_CLI_MAX_TRIGGERS 64

struct dp_cli_triggers {
	struct {
		struct dp_event *ev;
		struct dp_hist *hist;
	} v[DP_CLI_MAX_TRIGGERS];
	unsigned n;
	/* variables, name= and actions see the other triggers */
	struct dp_hist_env env;
	/* where a synthetic event's records go once past its filter (the
	 * sink's emit; NULL: nowhere), and their count */
	void (*emit)(void *priv, const struct dp_event *ev, const void *rec,
		     size_t len, const struct dp_rec_meta *meta,
		     const struct dp_symbolizer *sym);
	void *emit_priv;
	struct dp_stats *stats;
	/* the symbols of the record being added: a synthetic event it
	 * makes names its stack fields' frames with them */
	const struct dp_symbolizer *sym;
};

/* Every --trigger, in order (a variable is there for the triggers after
 * the one that defines it): 0, or -1 after saying why. */
int dp_cli_triggers_setup(struct dp_cli_triggers *t, struct dp_registry *reg,
			  const char *const *args, int nargs);
/* A record of @ev (marked triggered): aggregated by its triggers. */
void dp_cli_triggers_add(struct dp_cli_triggers *t, const struct dp_event *ev,
			 const void *rec, size_t len,
			 const struct dp_rec_meta *meta,
			 const struct dp_symbolizer *sym);
/*
 * The triggers the engine may keep in the traced processes (sink.h's
 * struct dp_agg_req, cookie: the histogram): those of each event whose
 * triggers all can be (dp_hist_agg_spec()) and whose records nothing
 * else needs (no --filter, no event probe on it).  How many of @out are
 * filled; 0 with DPROBE_AGG=0 in the environment (the records' way, to
 * compare the two).
 */
size_t dp_cli_triggers_aggs(const struct dp_cli_triggers *t,
			    struct dp_agg_req *out, size_t max);
/* sink.agg: what an entry of such a table went up by. */
void dp_cli_triggers_agg(void *cookie, const uint64_t *key, uint64_t hits,
			 const uint64_t *val, const char *comm);
/* Each event's `hist` file, headed "GROUP/EVENT/hist:". */
void dp_cli_triggers_print(const struct dp_cli_triggers *t, FILE *out);
void dp_cli_triggers_free(struct dp_cli_triggers *t);

#endif
