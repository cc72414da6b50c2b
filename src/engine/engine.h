/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The engine contract: what the CLI and `dprobe mount` know of engines.
 *
 * An engine arms the probes of a registry in a target (a command it
 * launches, or running processes), hands every record to a dp_sink and
 * keeps dp_stats.  Each engine lives in its own folder under src/engine/
 * and fills one struct dp_engine_ops (its ops.c, over its own API); the
 * table dp_engines[] in engine.c lists them.  Adding an engine is one new
 * folder and one row there.
 *
 * Which engine runs a session is decided in one place, dp_engine_choose(),
 * which also says why in one line (printed with DPROBE_VERBOSE=1), and
 * dp_engine_fallback() is the one step of that policy taken after a
 * launch failed.
 */
#ifndef DPROBE_ENGINE_ENGINE_H
#define DPROBE_ENGINE_ENGINE_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "event/sink.h"

struct dp_engine_ops;

/* What every engine is given; fields an engine has no use for are ignored. */
typedef int (*dp_tp_format_cb)(void *priv, const char *group,
			       const char *name, const char *format);

struct dp_engine_opts {
	struct dp_registry *reg;	/* every event in it is armed */
	/* The target: @argv (argv[0] looked up in PATH) to launch, or the
	 * running processes @pids; none of either with @kernel: the whole
	 * system.  @binary is the program's file (for a launch, what
	 * execvp() would run; else /proc/PID/exe). */
	char *const *argv;
	const pid_t *pids;
	int npids;
	const char *binary;
	bool follow;			/* -f: follow forks and vforks */
	/* --quiet-target: a launched command's stdout and stderr go to
	 * /dev/null (dp_child_quiet(), util.h), whatever the engine */
	bool quiet_target;
	bool count_only;		/* stat: no records unless filtered */
	struct dp_sink sink;
	FILE *log;			/* warnings; NULL: stderr */
	/* The signal mask a launched command starts with (the caller may
	 * have signals blocked for itself); NULL: the caller's. */
	const sigset_t *child_mask;
	/* One more signal, besides SIGINT, SIGTERM, SIGHUP, SIGUSR1 and
	 * SIGALRM, whose handler may call dp_engine_stop() or
	 * dp_engine_request_profile(); 0: none (ptrace engine). */
	int wake_sig;
	/* --engine NAME (or $DPROBE_ENGINE); NULL: auto. */
	const struct dp_engine_ops *forced;
	/* attach (DP_ENGINE_AT_EXEC): @pids are about to exec; the caller
	 * lets them once attach returned, and the probes go into the image
	 * the exec starts before it runs (another engine's session hands
	 * over a process its own cannot trace: a static program) */
	bool at_exec;

	/* dprobe show: once every probe is armed in the first process, the
	 * engine prints what each location did to the code there (its
	 * show(), for every event) to @show and ends the session.  A
	 * launched command is held before its main() meanwhile and killed
	 * after: it never runs its own code.  An attached process runs on. */
	FILE *show;

	/* in-process engine */
	const char *agent;		/* libdprobe.so; dp_engine_choose() sets it */
	/* hist triggers kept in the processes, where the engine can (the
	 * others hand the records to sink.trigger) */
	const struct dp_agg_req *aggs;
	size_t naggs;
	uint64_t buffer_size;		/* bytes per thread ring, 0: default */
	bool overwrite;			/* flight recorder: overwrite old records */
	bool blocking;			/* a full ring waits for the reader */

	/* kernel engine */
	bool kernel;			/* --kernel: places are kernel symbols */
	char *const *objs;		/* where a MOD: is looked up (DP_ENGINE_OBJS) */
	size_t nobjs;
	const char *const *tracepoints;	/* --kernel: "GROUP:NAME" */
	size_t ntracepoints;
	const char *const *filters;	/* --filter EVENT=EXPR for those */
	size_t nfilters;
};

/* What the chooser looks at outside dprobe; the tests give fakes. */
struct dp_engine_env {
	/* libdprobe.so (malloc'd), or NULL: refused with @why set (an
	 * error), not found with @why empty. */
	char *(*find_agent)(char *why, size_t whylen);
	/* What the program @path is: DP_PROGRAM_* flags, -1 if unreadable. */
	int (*program)(const char *path);
	/* Whether the kernel's probe events can serve @o (tracefs found or
	 * mounted, root, the host's pid namespace): 0, or -errno and @why. */
	int (*kernel_ready)(const struct dp_engine_opts *o, char *why,
			    size_t whylen);
};
#define DP_PROGRAM_DYNAMIC	0x1	/* has a PT_INTERP: the loader runs */
#define DP_PROGRAM_SETID	0x2	/* set-user-ID or set-group-ID */

/* The real world: the agent lookup, the file on disk, tracefs. */
extern const struct dp_engine_env dp_engine_real_env;

/* What a choice is: the engine, the one-line reason, what it needs. */
struct dp_engine_choice {
	const struct dp_engine_ops *ops;
	char reason[512];	/* "NAME: why" */
	/* auto took another engine than the first it tried: @no says why */
	bool fallback;
	char no[512];
	char why[4096];		/* no engine: the error, as printed today */
	/* Chosen by name, or the only engine that can do what was asked:
	 * a launch failure is final (no fallback). */
	bool strict;
	char agent[PATH_MAX];	/* the agent library found, "" if none */
	const struct dp_engine_env *env;
};

/* ---- the engines' side ------------------------------------------------- */

/* What an engine can do, in dp_engine_ops.flags. */
enum {
	/* A candidate when no engine is named, in table order. */
	DP_ENGINE_AUTO		= 1 << 0,
	/* Follows forks (-f). */
	DP_ENGINE_FOLLOWS	= 1 << 1,
	/* Attaches to several processes at once. */
	DP_ENGINE_MANY_PIDS	= 1 << 2,
	/* Enables application tracepoints (GROUP:NAME of the program). */
	DP_ENGINE_APP_TRACEPOINTS = 1 << 3,
	/* Kernel places (--kernel); GROUP:NAME is a kernel tracepoint. */
	DP_ENGINE_KERNEL	= 1 << 4,
	/* Looks up MOD: places itself, in dp_engine_opts.objs. */
	DP_ENGINE_OBJS		= 1 << 5,
	/* The tracer owns its tracees: a tracer that dies kills them, so
	 * the caller runs it in a child that a supervisor watches (the CLI's
	 * src/cli/supervisor.c), and may call dp_engine_abandon(). */
	DP_ENGINE_SUPERVISED	= 1 << 6,
	/* Attaches to a process about to exec (dp_engine_opts.at_exec). */
	DP_ENGINE_AT_EXEC	= 1 << 7,
	/* Makes the records of the kernel's syscall events in the registry
	 * (event/syscalls.h) from the target's own system calls, without
	 * the kernel's tracefs. */
	DP_ENGINE_SYSCALLS	= 1 << 8,
	/* Keeps a process's deepest stack and records it when it grows,
	 * with each frame's depth (dp_event.stack_max: the stack tracer). */
	DP_ENGINE_STACK_MAX	= 1 << 9,
};

struct dp_engine_ops {
	const char *name;	/* --engine NAME */
	const char *desc;	/* "in-process engine", after "the" */
	unsigned flags;		/* DP_ENGINE_* */
	/*
	 * Before any target check: what the engine needs to run at all
	 * (the agent library, tracefs); @ch->agent may be filled.  0, or
	 * -errno with @ch->why: an error whichever engine was asked for.
	 * NULL: nothing.
	 */
	int (*prepare)(struct dp_engine_choice *ch,
		       const struct dp_engine_opts *o);
	/*
	 * Whether the target suits it: 0; 1, it does not, with @ch->why
	 * (the words after "cannot use the DESC: ") and @ch->reason (a
	 * sentence for the one-liner).  NULL: every target suits it.
	 */
	int (*unsuitable)(struct dp_engine_choice *ch,
			  const struct dp_engine_opts *o);
	/* Why it was taken when nothing ruled it out; NULL: not said. */
	const char *(*suits)(const struct dp_engine_opts *o);

	/* Start o->argv, or attach to o->pids, with every probe armed:
	 * 0, or -errno with @why filled and nothing left behind. */
	int (*launch)(const struct dp_engine_opts *o, void **state, char *why,
		      size_t whylen);
	int (*attach)(const struct dp_engine_opts *o, void **state, char *why,
		      size_t whylen);
	/* Trace until the target is gone or stop(); then every probe is
	 * removed.  *@status: a launched command's wait status. */
	int (*run)(void *state, int *status);
	/* Async-signal-safe: */
	void (*stop)(void *state);
	void (*abandon)(void *state);	/* NULL: stop() */
	void (*request_profile)(void *state);
	void (*set_profile_cb)(void *state, void (*cb)(void *), void *priv);
	/* How each probe location is handled; NULL: nothing to say. */
	void (*list_probes)(const void *state, FILE *out);
	/* At run time, where the engine can (NULL otherwise). */
	int (*enable)(void *state, struct dp_event *ev);
	int (*disable)(void *state, struct dp_event *ev);
	int (*set_filter)(void *state, struct dp_event *ev, const char *expr);
	/* What the probe locations of @ev (NULL: every event) did to the
	 * code of the first traced process, as dp_show_site() prints it;
	 * from the engine's thread.  0, -ENOENT (none armed) or -errno.
	 * NULL: the engine cannot say. */
	int (*show)(void *state, const struct dp_event *ev, FILE *out);
	const struct dp_stats *(*stats)(const void *state);
	void (*free)(void *state);

	/* Engine-wide, without a session (NULL: none): */
	/* remove what crashed runs left; things removed, or -errno */
	int (*cleanup)(FILE *report);
	/* the kernel's tracepoints matching @glob, as `dprobe list` shows */
	int (*list_tracepoints)(const char *glob, FILE *out);
	/* whether @event (@len bytes) names kernel tracepoint @tp */
	bool (*tp_named)(const char *tp, const char *event, size_t len);
	/* each kernel tracepoint matching @glob ("GROUP:NAME") with its
	 * `format` text, to @cb (non-zero stops the walk and is returned) */
	int (*tracepoint_formats)(const char *glob, dp_tp_format_cb cb,
				  void *priv, char *why, size_t whylen);
};

/* Every engine, in the order auto tries them; NULL-terminated. */
extern const struct dp_engine_ops *const dp_engines[];

/* ---- the callers' side ------------------------------------------------- */

/* The engine called @name, or NULL. */
const struct dp_engine_ops *dp_engine_by_name(const char *name);
/* The first engine with all of @flags, or NULL. */
const struct dp_engine_ops *dp_engine_with(unsigned flags);
/* "agent, ptrace or kernel", for help and error text. */
const char *dp_engine_names(void);

/*
 * The whole choice policy (engine.c says it in order).  0 with @ch->ops
 * and @ch->reason set, and o->agent pointing into @ch; or -errno with
 * @ch->why, the error to print.  @env NULL: dp_engine_real_env.
 */
int dp_engine_choose(struct dp_engine_choice *ch, struct dp_engine_opts *o,
		     const struct dp_engine_env *env);
/*
 * The launch-time step of the same policy: the chosen engine failed with
 * @err and @why.  True: @ch now holds the engine to try instead, and
 * @why the note to print; false: @why is the error to print (as given,
 * else strerror(-@err)).
 */
bool dp_engine_fallback(struct dp_engine_choice *ch, struct dp_engine_opts *o,
			int err, char *why, size_t whylen);
/* DPROBE_VERBOSE=1: say the choice on stderr. */
void dp_engine_say_choice(const struct dp_engine_choice *ch);

struct dp_engine;

/* o->argv set: launch; else attach.  0, or -errno with @why. */
int dp_engine_start(const struct dp_engine_ops *ops,
		    const struct dp_engine_opts *o, struct dp_engine **out,
		    char *why, size_t whylen);
int dp_engine_run(struct dp_engine *e, int *status);
/* Async-signal-safe, @e may be NULL (then nothing happens). */
void dp_engine_stop(struct dp_engine *e);
void dp_engine_abandon(struct dp_engine *e);
void dp_engine_request_profile(struct dp_engine *e);
void dp_engine_set_profile_cb(struct dp_engine *e, void (*cb)(void *),
			      void *priv);
/* "# probes (DESC):" and a line per location; false if it has none. */
bool dp_engine_list_probes(const struct dp_engine *e, FILE *out);
/*
 * While tracing, from the engine's own thread (its profile callback):
 * arm @ev (its `enabled` set by the caller) in every traced process, or
 * take it out, leaving the other events' probes as they are.  0, or
 * -ENOTSUP (the engine cannot: stop it and start it again), -errno.
 */
int dp_engine_enable(struct dp_engine *e, struct dp_event *ev);
int dp_engine_disable(struct dp_engine *e, struct dp_event *ev);
/* The engine's show() (see there); -ENOTSUP if it has none. */
int dp_engine_show(struct dp_engine *e, const struct dp_event *ev, FILE *out);
const struct dp_stats *dp_engine_stats(const struct dp_engine *e);
void dp_engine_free(struct dp_engine *e);

/* ---- dprobe show: what a probe location did to the code (show.c) ------- */

/* One location as an engine knows it; addresses are run-time ones. */
struct dp_show_site {
	const struct dp_event *ev;
	pid_t pid;		/* its memory is read from /proc/PID/mem */
	uint64_t addr;		/* the probe address */
	const uint8_t *orig;	/* the original code from @addr */
	unsigned orig_len;
	bool armed;		/* our bytes are in the code */
	bool optimized;		/* ...and they are the jmp at @patch */
	const char *how;	/* the strategy, and why not optimised */
	const char *engine;	/* "agent", "ptrace" */
	/* a jump-optimised probe's, once built (0: none): the jmp replaces
	 * @nbytes at @patch; the detour (@detour_len bytes) runs the
	 * handlers, its tail (at @tail, 0: none) the relocated region */
	uint64_t patch, detour, tail;
	unsigned nbytes, detour_len;
	/* the int3's out-of-line copy of the instruction (0: emulated) */
	uint64_t xol;
};

/*
 * Print @s for people: the place, the strategy, a compiler's entry site
 * if the place is one, the original instructions, the bytes there now,
 * the detour and its tail or the out-of-line slot, each disassembled,
 * and where the code jumps back.  @sym names addresses (NULL: none).
 */
void dp_show_site(FILE *out, const struct dp_show_site *s,
		  const struct dp_symbolizer *sym);

/* Every engine's cleanup(): things removed, or -errno (reported). */
int dp_engine_cleanup(FILE *report);
/* The kernel's tracepoints, by the engine that has them; 0 or -errno. */
int dp_engine_list_tracepoints(const char *glob, FILE *out);
/* Whether @event (@len bytes) names kernel tracepoint @tp. */
bool dp_engine_tp_named(const char *tp, const char *event, size_t len);
/* The kernel's tracepoints matching @glob and their `format` text, by the
 * engine that has them; 0 or -errno with @why. */
int dp_engine_tracepoint_formats(const char *glob, dp_tp_format_cb cb,
				 void *priv, char *why, size_t whylen);

#endif
