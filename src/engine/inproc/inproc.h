/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The in-process engine, dprobe's side: the probes run inside the target,
 * in libdprobe.so (src/engine/agent/), and write records into per-thread
 * rings in shared memory that dprobe reads, filters and prints.
 *
 * A command is launched with the agent preloaded (LD_PRELOAD), which
 * connects back before main(); a running process gets it injected by the
 * ptrace engine (dlopen() run in the process), which then lets go of it.
 * dprobe resolves every probe against the live process, as the ptrace
 * engine does, and sends the agent addresses and fetch programs over the
 * control channel (src/engine/agent/protocol.h).  The records are the
 * ptrace engine's, byte for byte, so the output is too.  With -f every
 * fork child and every exec'd image (of a launched command) joins the
 * session with rings of its own (tree.c).
 *
 * What this engine does not do (dprobe trace falls back to, or asks for,
 * the ptrace engine): probes in objects loaded after the start (dlopen),
 * statically linked programs, exec in a process it attached to.
 */
#ifndef DPROBE_ENGINE_INPROC_H
#define DPROBE_ENGINE_INPROC_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "event/sink.h"

struct dp_inproc_opts {
	struct dp_registry *reg;	/* every event in it is armed */
	bool count_only;		/* stat: records carry no payload */
	struct dp_sink sink;
	FILE *log;			/* notes; NULL: stderr */
	const sigset_t *child_mask;	/* as dp_ptrace_opts */
	bool quiet_target;		/* as dp_ptrace_opts */
	const char *agent;		/* libdprobe.so, an absolute path */
	uint64_t buffer_size;		/* bytes per thread ring, 0: default */
	bool overwrite;			/* flight recorder: overwrite old records */
	bool blocking;			/* a full ring waits for the reader */
	bool follow;			/* -f: fork children and exec'd images */
	const struct dp_agg_req *aggs;	/* hist triggers kept in the images */
	size_t naggs;
	FILE *show;			/* dprobe show (engine.h) */
};

struct dp_inproc;

/*
 * What the program @path is, as the in-process engine asks before it
 * preloads itself there: DP_PROGRAM_DYNAMIC (it has a dynamic loader),
 * DP_PROGRAM_SETID (engine.h), or -1 if it cannot be read.
 */
int dp_inproc_program(const char *path);

/*
 * The agent library, an absolute path (malloc'd), or NULL: $DPROBE_AGENT,
 * else next to the running dprobe, else in ../lib/dprobe/ from it
 * (agent_path.c).  NULL with @why set: $DPROBE_AGENT is refused, an
 * error (the user named that file: no other copy is used, no other
 * engine either); NULL with @why empty: not found.
 */
char *dp_inproc_find_agent(char *why, size_t whylen);
#define DP_INPROC_NO_AGENT \
	"libdprobe.so was not found next to dprobe nor in ../lib/dprobe/ from it"

/*
 * Start @argv with the agent, which connects, receives the probes and
 * arms them before main().  0, or -errno with @why (then no process is
 * left behind).  -ENOTSUP: a probe the agent cannot arm (the caller may
 * use the ptrace engine instead).
 */
int dp_inproc_launch(const struct dp_inproc_opts *o, char *const argv[],
		     struct dp_inproc **out, char *why, size_t whylen);

/*
 * Inject the agent into running process @pid and arm the probes.
 * -EALREADY: another dprobe's agent is attached there (do not fall back
 * to the ptrace engine: two engines would patch the same code).
 */
int dp_inproc_attach(const struct dp_inproc_opts *o, pid_t pid,
		     struct dp_inproc **out, char *why, size_t whylen);

/*
 * Read and print records until the target exits or dp_inproc_stop();
 * then every probe is removed (DETACH) and what is left in the rings is
 * read.  *@status: a launched command's wait status.  0, or -errno.
 */
int dp_inproc_run(struct dp_inproc *t, int *status);

/* Async-signal-safe. */
void dp_inproc_stop(struct dp_inproc *t);
void dp_inproc_request_profile(struct dp_inproc *t);
void dp_inproc_set_profile_cb(struct dp_inproc *t, void (*cb)(void *),
			      void *priv);

/* How each probe location is handled, as the agent said ("optimized",
 * "int3 (...)"), one line per location: "GROUP/EVENT ADDR HOW". */
void dp_inproc_list_probes(const struct dp_inproc *t, FILE *out);
/* What the locations of @ev (NULL: every event) did to the code of the
 * first image (engine.h's show()): 0, -ENOENT if none, -errno. */
int dp_inproc_show(struct dp_inproc *t, const struct dp_event *ev, FILE *out);

/* From the profile callback: @ev's probes switched on (armed where it
 * had none) or off in every image.  0 or -errno (logged). */
int dp_inproc_enable(struct dp_inproc *t, struct dp_event *ev);
int dp_inproc_disable(struct dp_inproc *t, struct dp_event *ev);

const struct dp_stats *dp_inproc_stats(const struct dp_inproc *t);
void dp_inproc_free(struct dp_inproc *t);

#endif
