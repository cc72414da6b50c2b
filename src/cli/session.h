/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The session of `dprobe trace` (trace.c) for the commands built on it
 * (latency.c, count.c, top.c): they turn their options into trace's
 * (-e, --filter, --duration, --engine, -f, -p, -- CMD) and take the
 * records, the SIGUSR1 or --interval ticks and the end of tracing through
 * these hooks, so there is one session: the same engines, signals,
 * supervisor, summary line and exit status as trace's.
 */
#ifndef DPROBE_CLI_SESSION_H
#define DPROBE_CLI_SESSION_H

#include "event/event.h"
#include "event/sink.h"

struct dp_session_hooks {
	const char *cmd;	/* the command, for messages and its usage */
	void *priv;
	/* The events are made (trace's options applied), before any engine
	 * starts: 0, or -1 after saying why (dprobe exits 2). */
	int (*setup)(void *priv, struct dp_registry *reg);
	/* Each record that passed its event's filter, instead of a line. */
	void (*record)(void *priv, const struct dp_event *ev, const void *rec,
		       size_t len, const struct dp_rec_meta *meta,
		       const struct dp_symbolizer *sym);
	/* After setup: the tables an engine may keep in the traced
	 * processes instead of making some events' records (at most @max
	 * into @out): how many.  NULL: none. */
	size_t (*aggs)(void *priv, struct dp_agg_req *out, size_t max);
	/* What an entry of those tables went up by (struct dp_sink's agg). */
	void (*agg)(void *priv, void *cookie, const uint64_t *key,
		    uint64_t hits, const uint64_t *val, const char *comm);
	/* From the engine's thread: on SIGUSR1, and every @interval seconds
	 * (0: only on SIGUSR1). */
	void (*tick)(void *priv);
	double interval;
	/* Tracing has stopped: print what was gathered. */
	void (*end)(void *priv, const struct dp_stats *st);	/* dprobe show: the engine prints what the probes did to the code
	 * once they are armed, and the session ends (engine.h's show); no
	 * summary, and the exit status is 0 unless arming failed. */
	bool show;
};

/* `dprobe trace` with @argv (trace's options) and @h; dprobe's exit status. */
int dp_trace_session(int argc, char **argv, const struct dp_session_hooks *h);

#endif
