/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel engine: dprobe as a front-end to the host kernel's own
 * probe events, through tracefs.  User-space places become uprobe_events
 * lines (PATH:OFFSET), kernel places (--kernel) kprobe_events lines, and
 * kernel tracepoints are enabled by name.  Everything lives in a private
 * instance (instances/dprobe.PID) and private groups (dprobePID_GROUP),
 * removed on every way out; records are read in the ring buffer's binary
 * page format from the instance's per_cpu/cpuN/trace_pipe_raw and handed,
 * byte for byte, to the same sink as the other engines' records.
 */
#ifndef DPROBE_ENGINE_KERNEL_H
#define DPROBE_ENGINE_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "event/sink.h"

struct dp_kernel_opts {
	struct dp_registry *reg;	/* every event in it is created */
	bool kernel;			/* places are kernel symbols */
	bool follow;			/* -f: the process tree */
	bool count_only;		/* stat: no records unless filtered */
	struct dp_sink sink;
	FILE *log;			/* warnings; NULL: stderr */
	const sigset_t *child_mask;	/* a launched command's mask */
	bool quiet_target;		/* its stdout, stderr: /dev/null */
	/* User places: the file of places without MOD:, and the objects a
	 * MOD: (basename or soname) is looked up in. */
	const char *binary;
	char *const *objs;
	size_t nobjs;
	/* --kernel: kernel tracepoints "GROUP:NAME", added to @reg as
	 * DP_KIND_TRACEPOINT events whose fields are the kernel's. */
	const char *const *tracepoints;
	size_t ntracepoints;
	/* --filter EVENT=EXPR for those tracepoints (their fields are known
	 * only once their format is read); others are ignored here. */
	const char *const *filters;
	size_t nfilters;
};

/* Whether @event (@len bytes: NAME, GROUP:NAME or GROUP/NAME) names the
 * kernel tracepoint @tp ("GROUP:NAME"). */
bool dp_kernel_tp_named(const char *tp, const char *event, size_t len);

struct dp_kernel;
struct dp_engine_opts;

/*
 * Whether the engine can run for @o's target at all: the host's pid
 * namespace (a launch or processes), root, tracefs found or mounted.
 * 0, or -errno with @why, in the words dp_kernel_launch() would use.
 */
int dp_kernel_ready(const struct dp_engine_opts *o, char *why, size_t whylen);

/*
 * Start @argv (looked up in PATH) with every event created and enabled
 * for it before it runs.  0, or -errno with @why filled (one or more
 * lines) and nothing left in tracefs.
 */
int dp_kernel_launch(const struct dp_kernel_opts *o, char *const argv[],
		     struct dp_kernel **out, char *why, size_t whylen);
/* The same for running processes; @npids == 0: system-wide (--kernel). */
int dp_kernel_attach(const struct dp_kernel_opts *o, const pid_t *pids,
		     int npids, struct dp_kernel **out, char *why,
		     size_t whylen);
/*
 * Read events until the command (or every process) is gone or
 * dp_kernel_stop() is called; then everything is removed from tracefs.
 * *@status is a launched command's wait status.
 */
int dp_kernel_run(struct dp_kernel *k, int *status);
/* Async-signal-safe. */
void dp_kernel_stop(struct dp_kernel *k);
/* kprobe_profile on request (SIGUSR1): the counts are read from the
 * kernel's *_profile files into the probes, then @cb runs.  The same
 * counts are read once more when the run ends.  Async-signal-safe. */
void dp_kernel_request_profile(struct dp_kernel *k);
void dp_kernel_set_profile_cb(struct dp_kernel *k, void (*cb)(void *),
			      void *priv);
const struct dp_stats *dp_kernel_stats(const struct dp_kernel *k);
/* Removes whatever is still in tracefs, then frees. */
void dp_kernel_free(struct dp_kernel *k);

/*
 * Remove what crashed dprobe runs left in tracefs: instances/dprobe.PID
 * and groups dprobePID_* of PIDs that are not a running dprobe.  One line
 * per thing removed to @report (NULL: silent).  Returns how many things
 * were removed, or -errno with the reason (no tracefs, not root) printed
 * on stderr.
 */
int dp_kernel_cleanup(FILE *report);

/*
 * available_events as `dprobe list` prints it: "GROUP:NAME  [Tracepoint
 * event]", sorted, those matching @glob (NULL: all).  0, or -errno with
 * the reason printed on stderr.
 */
/* engine.h's tracepoint_formats */
int dp_kernel_tracepoint_formats(const char *glob,
				 int (*cb)(void *priv, const char *group,
					   const char *name, const char *format),
				 void *priv, char *why, size_t whylen);
int dp_kernel_list_tracepoints(const char *glob, FILE *out);

#endif
