/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ptrace engine: dprobe controls the target as a debugger does.  Every
 * probe is an int3 over the first byte of an instruction; on a hit the
 * tracer runs the fetch programs against the stopped thread, then lets the
 * displaced instruction take effect out of line (a copy in a slot of a
 * page mapped into the target, followed by a jump back) or emulates it, and
 * resumes the thread: one stop per hit, no single-step, and the original
 * byte never goes back while the probe is armed, so no other thread can run
 * past it unseen.  Return probes replace the return address with a
 * trampoline (an int3 in the same page).
 */
#ifndef DPROBE_ENGINE_PTRACE_H
#define DPROBE_ENGINE_PTRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <sys/types.h>

#include "event/sink.h"

struct dp_ptrace_opts {
	struct dp_registry *reg;	/* every event in it is armed */
	bool follow;			/* -f: follow forks and vforks */
	bool count_only;		/* stat: no records unless filtered */
	struct dp_sink sink;
	FILE *log;			/* warnings; NULL: stderr */
	/* The signal mask a launched command starts with (the caller may
	 * have signals blocked for itself); NULL: the caller's. */
	const sigset_t *child_mask;
	bool quiet_target;		/* its stdout, stderr: /dev/null */
	/* One more signal, besides SIGINT, SIGTERM, SIGHUP, SIGUSR1 and
	 * SIGALRM, whose handler (the caller's) may call dp_ptrace_stop() or
	 * dp_ptrace_request_profile(): the loop sleeps with it unblocked and
	 * holds it blocked otherwise.  0: none. */
	int wake_sig;
	/* attach: the processes are about to exec (the caller lets them
	 * once dp_ptrace_attach() returned): their threads are taken
	 * without a stop and the probes go into the image the exec starts,
	 * before its first instruction */
	bool at_exec;
	FILE *show;			/* dprobe show (engine.h) */
};

struct dp_tracer;

/*
 * Start @argv (argv[0] looked up in PATH) under the tracer, stopped at its
 * exec with the probes armed.  Returns 0, or -errno with @why filled and
 * no process left behind.
 */
int dp_ptrace_launch(const struct dp_ptrace_opts *o, char *const argv[],
		     struct dp_tracer **out, char *why, size_t whylen);

/* Attach to every thread of each of @pids, arm the probes (with
 * o->at_exec: at their exec). */
int dp_ptrace_attach(const struct dp_ptrace_opts *o, const pid_t *pids,
		     int npids, struct dp_tracer **out, char *why,
		     size_t whylen);

/*
 * Trace until every traced process has exited or dp_ptrace_stop() was
 * called (then every process is detached with its original bytes back).
 * For a launched command, *@status is its wait status.
 */
int dp_ptrace_run(struct dp_tracer *t, int *status);

/* Ask dp_ptrace_run() to detach and return; async-signal-safe. */
void dp_ptrace_stop(struct dp_tracer *t);
/*
 * The same, and do not wait for a launched command after the detach (the
 * one who would get its status is gone); async-signal-safe.
 */
void dp_ptrace_abandon(struct dp_tracer *t);
/* Ask for a profile dump (SIGUSR1); async-signal-safe. */
void dp_ptrace_request_profile(struct dp_tracer *t);
/* Called by dp_ptrace_run() when a profile was requested. */
void dp_ptrace_set_profile_cb(struct dp_tracer *t, void (*cb)(void *),
			      void *priv);

const struct dp_stats *dp_ptrace_stats(const struct dp_tracer *t);
void dp_ptrace_free(struct dp_tracer *t);

/* What the sites of @ev (NULL: all) did to the code of the first
 * process (engine.h's show()): 0, -ENOENT if none. */
int dp_ptrace_show(struct dp_tracer *tr, const struct dp_event *ev, FILE *out);

#endif
