// SPDX-License-Identifier: GPL-2.0
/*
 * dprobe trace: stream probe events from a command or running processes,
 * as ftrace's trace_pipe prints them.
 * dprobe stat: count them, as `perf stat -e` does.
 */
#include <dirent.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/named.h"
#include "cli/tracer.h"
#include "output/tracer.h"
#include "cli/session.h"
#include "cli/supervisor.h"
#include "cli/triggers.h"
#include "engine/engine.h"
#include "event/filter.h"
#include "event/syscalls.h"
#include "output/output.h"
#include "output/renderer.h"
#include "record/tracedat.h"
#include "ring/ring.h"
#include "sym/debugdef.h"
#include "sym/demangle.h"
#include "sym/unwind.h"

#define MAX_DEFS 1024
#define MAX_PIDS 64

struct trace_opts {
	bool stat;
	const char *defs[MAX_DEFS];
	int ndefs;
	const char *filters[DP_MAX_FILTERS];
	int nfilters;
	const char *triggers[DP_CLI_MAX_TRIGGERS];
	int ntriggers;
	const char *output;
	const struct dp_renderer_ops *format;	/* --format, --json */
	bool follow, profile;
	double duration;
	pid_t pids[MAX_PIDS];
	int npids;
	char **cmd;
	const struct dp_engine_ops *engine;	/* NULL: auto */
	bool kernel;			/* --kernel: kernel places */
	uint64_t buffer_size;
	bool overwrite;
	bool blocking;
	bool dry_run;		/* print the definitions as applied, run nothing */
	bool quiet_target;	/* the command's stdout, stderr: /dev/null */
	enum dp_ts_mode ts;	/* --ts */
	const char *name;	/* the command, for messages: trace, stat, ... */
	/* --stack / -g: every event (stack_all) or the events named */
	bool stack_all;
	const char *stacks[MAX_DEFS];
	int nstacks;
	/* --call-graph dwarf[,SIZE]: the stack bytes copied at a hit for
	 * DWARF unwinding (dp_event.stack_dwarf); 0: frame pointers */
	unsigned stack_dwarf;
	bool call_graph;	/* given: it implies -g */
	/* dprobe record: a trace.dat to -o (default trace.dat), which
	 * must not exist unless --force */
	bool record;
	bool force;
	bool compress;		/* record --compress: version 7, zstd */
	const char *recover;	/* record --recover FILE.part */
	/* --tracer: function, function_graph (NULL: nop, events only) */
	const struct dp_tracer *tracer;
	bool tracer_opts;	/* an option of the tracer's output given */
	struct dp_cli_funcopts funcs;	/* --filter-func, --notrace-func */
	/* the tracer's output: --max-depth, --graph-func, --graph-notrace,
	 * --trace-option (the globs point into argv) */
	struct dp_tracer_opts topts;
	const char *graph_funcs[MAX_DEFS], *notrace_funcs[MAX_DEFS];
};

struct trace_ctx {
	FILE *out;
	struct dp_renderer render;	/* what records become on out */
	struct dp_registry reg;
	/* --kernel: the kernel tracepoints named (GROUP:NAME), malloc'd */
	char *ktps[MAX_DEFS];
	size_t nktps;
	struct dp_cli_triggers trig;	/* --trigger */
	bool stat;			/* dprobe stat: counts, no lines */
	const struct dp_session_hooks *hooks;	/* latency, count, top */
};

/*
 * The engine running (set before signals can arrive), or, in the
 * supervisor, the child that runs an engine that needs one.
 */
struct engine {
	struct dp_engine *e;
	pid_t child;
};

static struct engine g_eng;

static void stop_engine(void)
{
	/* the supervisor is gone: nobody waits for the command's status */
	if (dp_sup_orphaned())
		dp_engine_abandon(g_eng.e);
	else
		dp_engine_stop(g_eng.e);
}

static void request_profile(void)
{
	dp_engine_request_profile(g_eng.e);
}

static void on_stop_signal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	/* SI_KERNEL: our own --duration timer (arm_duration()), which a
	 * supervised child sets for itself */
	if (dp_sup_signal_ours(si) ||
	    (sig == SIGALRM && si->si_code == SI_KERNEL))
		stop_engine();
}

static void on_profile_signal(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	/* SI_TIMER: the --interval timer of this very process */
	if (dp_sup_signal_ours(si) || si->si_code == SI_TIMER)
		request_profile();
}

/* In the ptrace engine's child: a signal its supervisor forwarded. */
static void on_forwarded_signal(int sig, siginfo_t *si, void *uc)
{
	int fwd = dp_sup_forwarded(si);

	(void)sig;
	(void)uc;
	if (fwd == SIGUSR1)
		request_profile();
	else if (fwd)
		stop_engine();
}

static void emit(void *priv, const struct dp_event *ev, const void *rec,
		 size_t len, const struct dp_rec_meta *meta,
		 const struct dp_symbolizer *sym)
{
	struct trace_ctx *c = priv;

	if (c->hooks) {
		c->hooks->record(c->hooks->priv, ev, rec, len, meta, sym);
		return;
	}
	/* an event with a hist trigger is aggregated (on_trigger()), not
	 * printed; stat with triggers has records made, and prints none */
	if (!ev->triggered && !c->stat)
		dp_render_event(&c->render, ev, rec, len, meta, sym);
}

static void on_agg(void *priv, void *cookie, const uint64_t *key,
		   uint64_t hits, const uint64_t *val, const char *comm)
{
	struct trace_ctx *c = priv;

	/* a command on the session has its own tables and no triggers */
	if (c->hooks && c->hooks->agg)
		c->hooks->agg(c->hooks->priv, cookie, key, hits, val, comm);
	else
		dp_cli_triggers_agg(cookie, key, hits, val, comm);
}

static void on_trigger(void *priv, const struct dp_event *ev, const void *rec,
		       size_t len, const struct dp_rec_meta *meta,
		       const struct dp_symbolizer *sym)
{
	struct trace_ctx *c = priv;

	dp_cli_triggers_add(&c->trig, ev, rec, len, meta, sym);
}

/* The engine has nothing more to read for now: show what it printed. */
static void flush_out(void *priv)
{
	struct trace_ctx *c = priv;

	dp_render_flush(&c->render);
}

static void emit_lost(void *priv, int cpu, unsigned long n)
{
	struct trace_ctx *c = priv;

	/* the commands on the session count them (the summary line) */
	if (!c->hooks)
		dp_render_lost(&c->render, cpu, n);
}

static bool has_pid(const struct trace_opts *o, pid_t pid)
{
	for (int i = 0; i < o->npids; i++)
		if (o->pids[i] == pid)
			return true;
	return false;
}

/* -p PID[,PID...]: a process named twice is traced once. */
static int parse_pids(struct trace_opts *o, const char *arg)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	int ret = 0;

	for (tok = strtok_r(copy, ",", &save); tok && !ret;
	     tok = strtok_r(NULL, ",", &save)) {
		char *end;
		long v = strtol(tok, &end, 10);

		if (*end || v <= 0 || v > INT_MAX) {
			fprintf(stderr, "dprobe: bad process id '%s'\n", tok);
			ret = -1;
		} else if (has_pid(o, (pid_t)v)) {
			continue;
		} else if (o->npids == MAX_PIDS) {
			fprintf(stderr, "dprobe: too many processes (at most "
				"%d)\n", MAX_PIDS);
			ret = -1;
		} else {
			o->pids[o->npids++] = (pid_t)v;
		}
	}
	free(copy);
	return !ret && o->npids ? 0 : -1;
}

enum { OPT_FILTER = 256, OPT_TRIGGER, OPT_JSON, OPT_FORMAT, OPT_DURATION, OPT_PROFILE,
       OPT_ENGINE, OPT_BUFFER_SIZE, OPT_OVERWRITE, OPT_BLOCKING, OPT_KERNEL,
       OPT_NO_DEMANGLE, OPT_DRY_RUN, OPT_QUIET_TARGET, OPT_TS, OPT_STACK,
       OPT_FLAMEGRAPH, OPT_CALL_GRAPH, OPT_FORCE, OPT_RECOVER,
       OPT_COMPRESS, OPT_TRACER, OPT_FILTER_FUNC, OPT_NOTRACE_FUNC,
       OPT_GRAPH_FUNC, OPT_GRAPH_NOTRACE, OPT_MAX_DEPTH, OPT_TRACE_OPTION };

/*
 * --call-graph fp|dwarf[,SIZE], as perf record spells it: how stacks are
 * taken; SIZE, the stack bytes copied at each hit, 8 to
 * DP_UNWIND_MAX_SIZE, rounded up to 8 (perf's rule).  0, or -1.
 */
static int parse_call_graph(const char *arg, unsigned *dwarf)
{
	unsigned long size = DP_UNWIND_DEFAULT_SIZE;
	char *end;

	if (!strcmp(arg, "fp")) {
		*dwarf = 0;
		return 0;
	}
	if (strncmp(arg, "dwarf", 5) || (arg[5] && arg[5] != ','))
		return -1;
	if (arg[5]) {
		errno = 0;
		size = strtoul(arg + 6, &end, 10);
		if (errno || end == arg + 6 || *end || !isdigit(arg[6]) ||
		    !size || size > DP_UNWIND_MAX_SIZE)
			return -1;
	}
	*dwarf = (unsigned)((size + 7) & ~7ul);
	return 0;
}

/* auto (NULL), or an engine of dp_engines[] by name */
static int parse_engine(const char *arg, const struct dp_engine_ops **e)
{
	if (!strcmp(arg, "auto")) {
		*e = NULL;
		return 0;
	}
	*e = dp_engine_by_name(arg);
	return *e ? 0 : -1;
}

/* --format NAME: one of the renderers' table. */
static int parse_format(const char *arg, struct trace_opts *o)
{
	char names[128];

	o->format = dp_renderer_by_name(arg);
	if (o->format)
		return 0;
	fprintf(stderr, "dprobe: bad format '%s' (%s)\n", arg,
		dp_renderer_names(names, sizeof(names)));
	return -1;
}

int dp_cli_parse_ts(const char *arg, enum dp_ts_mode *ts)
{
	if (!strcmp(arg, "ns"))
		*ts = DP_TS_NS;
	else if (!strcmp(arg, "us"))
		*ts = DP_TS_US;
	else {
		fprintf(stderr, "dprobe: bad --ts '%s' (us or ns)\n", arg);
		return -1;
	}
	return 0;
}

/* ftrace's buffer_size_kb, in bytes, with an optional K, M or G. */
static int parse_size(const char *arg, uint64_t *out)
{
	char *end;
	unsigned long long v = strtoull(arg, &end, 10);
	unsigned shift = 0;

	if (end == arg)
		return -1;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	}
	if (*end || !v || v > (DP_RING_MAX_SIZE >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

/* --graph-func, --graph-notrace, --max-depth, --trace-option: what the
 * tracer's renderer is told (output/tracer.h).  0, or -1 said. */
static int tracer_opt(struct trace_opts *o, int c, const char *arg)
{
	struct dp_tracer_opts *t = &o->topts;
	char *end;
	unsigned long v;

	o->tracer_opts = true;
	switch (c) {
	case OPT_GRAPH_FUNC:
	case OPT_GRAPH_NOTRACE:
		if ((c == OPT_GRAPH_FUNC ? t->ngraph_funcs : t->nnotrace_funcs)
		    == MAX_DEFS) {
			fprintf(stderr, "dprobe: too many --graph-func or "
				"--graph-notrace globs (at most %d)\n",
				MAX_DEFS);
			return -1;
		}
		if (c == OPT_GRAPH_FUNC)
			o->graph_funcs[t->ngraph_funcs++] = arg;
		else
			o->notrace_funcs[t->nnotrace_funcs++] = arg;
		return 0;
	case OPT_MAX_DEPTH:
		errno = 0;
		v = strtoul(arg, &end, 10);
		if (errno || end == arg || *end || v > 100000) {
			fprintf(stderr, "dprobe: bad --max-depth '%s' (a number; "
				"0: no limit)\n", arg);
			return -1;
		}
		t->max_depth = (unsigned)v;
		return 0;
	default:
		for (char *w = strtok((char *)arg, ","); w; w = strtok(NULL, ","))
			if (dp_trace_option_set(&t->flags, w)) {
				fprintf(stderr, "dprobe: no trace option '%s' "
					"(funcgraph-proc, nofuncgraph-cpu, ...: "
					"docs/tracers.md)\n", w);
				return -1;
			}
		return 0;
	}
}

/*
 * dprobe record: trace's options writing trace.dat to -o FILE (default
 * trace.dat), which is never overwritten without --force.
 */
static int check_record(struct trace_opts *o)
{
	const char *rec = "tracedat";

	if (o->format != dp_renderer_by_name("text") &&
	    o->format != dp_renderer_by_name(rec)) {
		fprintf(stderr, "dprobe record: it writes trace.dat, not %s "
			"(dprobe report --format %s reads the recording)\n",
			o->format->name, o->format->name);
		return -1;
	}
	o->format = dp_renderer_by_name(rec);
	if (!o->output)
		o->output = "trace.dat";
	return 0;
}

static int parse_opts(int argc, char **argv, struct trace_opts *o)
{
	static const struct option longopts[] = {
		{ "event", required_argument, NULL, 'e' },
		{ "filter", required_argument, NULL, OPT_FILTER },
		{ "trigger", required_argument, NULL, OPT_TRIGGER },
		{ "output", required_argument, NULL, 'o' },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "follow-forks", no_argument, NULL, 'f' },
		{ "profile", no_argument, NULL, OPT_PROFILE },
		{ "pid", required_argument, NULL, 'p' },
		{ "engine", required_argument, NULL, OPT_ENGINE },
		{ "buffer-size", required_argument, NULL, OPT_BUFFER_SIZE },
		{ "overwrite", no_argument, NULL, OPT_OVERWRITE },
		{ "blocking", no_argument, NULL, OPT_BLOCKING },
		{ "kernel", no_argument, NULL, OPT_KERNEL },
		{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
		{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
		{ "ts", required_argument, NULL, OPT_TS },
		{ "quiet-target", no_argument, NULL, OPT_QUIET_TARGET },
		{ "stack", optional_argument, NULL, OPT_STACK },
		{ "flamegraph", required_argument, NULL, OPT_FLAMEGRAPH },
		{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
		{ "force", no_argument, NULL, OPT_FORCE },
		{ "compress", no_argument, NULL, OPT_COMPRESS },
		{ "recover", required_argument, NULL, OPT_RECOVER },
		{ "tracer", required_argument, NULL, OPT_TRACER },
		{ "filter-func", required_argument, NULL, OPT_FILTER_FUNC },
		{ "notrace-func", required_argument, NULL, OPT_NOTRACE_FUNC },
		{ "graph-func", required_argument, NULL, OPT_GRAPH_FUNC },
		{ "graph-notrace", required_argument, NULL, OPT_GRAPH_NOTRACE },
		{ "max-depth", required_argument, NULL, OPT_MAX_DEPTH },
		{ "trace-option", required_argument, NULL, OPT_TRACE_OPTION },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *cmd = o->name, *env, *flame = NULL;
	char *end;
	int c;

	env = getenv("DPROBE_ENGINE");
	if (env && *env && parse_engine(env, &o->engine)) {
		fprintf(stderr, "dprobe: bad DPROBE_ENGINE '%s'\n", env);
		goto usage;
	}
	o->format = dp_renderer_by_name("text");
	dp_tracer_opts_init(&o->topts);
	o->topts.graph_funcs = o->graph_funcs;
	o->topts.notrace_funcs = o->notrace_funcs;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+e:o:fp:gh", longopts, NULL)) != -1) {
		switch (c) {
		case 'e':
			if (o->ndefs == MAX_DEFS) {
				fprintf(stderr, "dprobe: too many -e definitions "
					"(at most %d; -e @FILE takes any number)\n",
					MAX_DEFS);
				return -1;
			}
			o->defs[o->ndefs++] = optarg;
			break;
		case OPT_FILTER:
			if (o->nfilters == DP_MAX_FILTERS) {
				fprintf(stderr, "dprobe: too many --filter options "
					"(at most %d)\n", DP_MAX_FILTERS);
				return -1;
			}
			o->filters[o->nfilters++] = optarg;
			break;
		case OPT_TRIGGER:
			if (o->ntriggers == DP_CLI_MAX_TRIGGERS) {
				fprintf(stderr, "dprobe: too many --trigger "
					"options (at most %d)\n",
					DP_CLI_MAX_TRIGGERS);
				return -1;
			}
			o->triggers[o->ntriggers++] = optarg;
			break;
		case 'o': o->output = optarg; break;
		case OPT_JSON: o->format = dp_renderer_by_name("json"); break;
		case OPT_FORMAT:
			if (parse_format(optarg, o))
				goto usage;
			break;
		case 'f': o->follow = true; break;
		case OPT_PROFILE: o->profile = true; break;
		case OPT_DURATION:
			o->duration = strtod(optarg, &end);
			if (*end || o->duration <= 0) {
				fprintf(stderr, "dprobe: bad duration '%s'\n", optarg);
				goto usage;
			}
			break;
		case 'p':
			if (parse_pids(o, optarg))
				goto usage;
			break;
		case OPT_ENGINE:
			if (parse_engine(optarg, &o->engine)) {
				fprintf(stderr, "dprobe: bad engine '%s' (auto, "
					"%s)\n", optarg, dp_engine_names());
				goto usage;
			}
			break;
		case OPT_BUFFER_SIZE:
			if (parse_size(optarg, &o->buffer_size)) {
				fprintf(stderr, "dprobe: bad buffer size '%s'\n",
					optarg);
				goto usage;
			}
			break;
		case OPT_OVERWRITE: o->overwrite = true; break;
		case OPT_BLOCKING: o->blocking = true; break;
		case OPT_KERNEL: o->kernel = true; break;
		case OPT_NO_DEMANGLE: dp_demangle_on = false; break;
		case OPT_DRY_RUN: o->dry_run = true; break;
		case OPT_QUIET_TARGET: o->quiet_target = true; break;
		case OPT_TS:
			if (dp_cli_parse_ts(optarg, &o->ts))
				goto usage;
			break;
		case 'g': o->stack_all = true; break;
		case OPT_CALL_GRAPH:
			if (parse_call_graph(optarg, &o->stack_dwarf)) {
				fprintf(stderr, "dprobe: bad --call-graph '%s' "
					"(fp, dwarf or dwarf,SIZE: 8 to %u "
					"bytes)\n", optarg, DP_UNWIND_MAX_SIZE);
				goto usage;
			}
			o->call_graph = true;
			break;
		case OPT_STACK:
			if (!optarg)
				o->stack_all = true;
			else if (o->nstacks < MAX_DEFS)
				o->stacks[o->nstacks++] = optarg;
			break;
		case OPT_FLAMEGRAPH: flame = optarg; break;
		case OPT_FORCE: o->force = dp_cli_glob_force = true; break;
		case OPT_COMPRESS: o->compress = true; break;
		case OPT_RECOVER: o->recover = optarg; break;
		case OPT_TRACER:
			if (dp_tracer_by_name(optarg, &o->tracer)) {
				fprintf(stderr, "dprobe: no tracer '%s' (%s "
					"stack)\n", optarg, dp_tracer_list());
				goto usage;
			}
			break;
		case OPT_FILTER_FUNC:
			if (dp_cli_funcopt_add(&o->funcs.filter, optarg))
				goto usage;
			break;
		case OPT_NOTRACE_FUNC:
			if (dp_cli_funcopt_add(&o->funcs.notrace, optarg))
				goto usage;
			break;
		case OPT_GRAPH_FUNC:
		case OPT_GRAPH_NOTRACE:
		case OPT_MAX_DEPTH:
		case OPT_TRACE_OPTION:
			if (tracer_opt(o, c, optarg))
				goto usage;
			break;
		case 'h':
			dp_usage(stdout, cmd);
			exit(DP_EXIT_OK);
		default:
			goto usage;
		}
	}
	if (optind < argc)
		o->cmd = argv + optind;
	/* --flamegraph OUT: --format flamegraph -o OUT */
	if (flame && o->output && strcmp(flame, o->output)) {
		fprintf(stderr, "dprobe %s: --flamegraph and -o name two "
			"outputs\n", cmd);
		goto usage;
	}
	if (flame && o->format != dp_renderer_by_name("text") &&
	    o->format != dp_renderer_by_name("flamegraph")) {
		fprintf(stderr, "dprobe %s: --flamegraph writes the flamegraph "
			"format, not %s\n", cmd, o->format->name);
		goto usage;
	}
	if (flame) {
		o->format = dp_renderer_by_name("flamegraph");
		o->output = flame;
	}
	if (o->overwrite && o->blocking) {
		fprintf(stderr, "dprobe %s: --overwrite and --blocking: a "
			"full ring either overwrites or waits\n", cmd);
		goto usage;
	}
	if (o->compress && !o->record) {
		fprintf(stderr, "dprobe %s: --compress is record's (its "
			"trace.dat)\n", cmd);
		goto usage;
	}
	if (o->recover && !o->record) {
		fprintf(stderr, "dprobe %s: --recover is dprobe record's\n",
			cmd);
		goto usage;
	}
	/* a killed recording made whole: no session */
	if (o->recover)
		return 0;
	if (o->record && check_record(o))
		goto usage;
	if (o->format->binary && !o->output && isatty(STDOUT_FILENO)) {
		fprintf(stderr, "dprobe %s: --format %s writes a binary file: "
			"give -o FILE\n", cmd, o->format->name);
		goto usage;
	}
	if (o->format->dir && !o->output) {
		fprintf(stderr, "dprobe %s: --format %s writes a directory: "
			"name it with -o DIR\n", cmd, o->format->name);
		goto usage;
	}
	if ((o->funcs.filter.n || o->funcs.notrace.n || o->tracer_opts) &&
	    !o->tracer) {
		fprintf(stderr, "dprobe %s: --filter-func, --notrace-func, "
			"--graph-func, --graph-notrace, --max-depth and "
			"--trace-option are a --tracer's\n", cmd);
		goto usage;
	}
	/* text is the tracer's own lines */
	if (o->tracer && o->format == dp_renderer_by_name("text"))
		o->format = dp_renderer_tracer(dp_tracer_name(o->tracer));
	if (o->tracer && o->kernel) {
		fprintf(stderr, "dprobe %s: --tracer traces a process's "
			"functions, not the kernel's\n", cmd);
		goto usage;
	}
	if (!o->ndefs && !o->tracer) {
		fprintf(stderr, "dprobe %s: no probe given (-e DEF)\n", cmd);
		goto usage;
	}
	if (o->kernel && o->engine && !(o->engine->flags & DP_ENGINE_KERNEL)) {
		fprintf(stderr, "dprobe %s: --kernel runs on --engine kernel\n",
			cmd);
		goto usage;
	}
	/* --kernel alone: the whole system */
	if ((o->cmd && o->npids) || (!o->cmd && !o->npids && !o->kernel)) {
		fprintf(stderr, "dprobe %s: give either -p PID or -- CMD\n", cmd);
		goto usage;
	}
	if (o->quiet_target && !o->cmd) {
		fprintf(stderr, "dprobe %s: --quiet-target silences a command "
			"dprobe starts (-- CMD)\n", cmd);
		goto usage;
	}
	return 0;
usage:
	dp_usage(stderr, cmd);
	return -1;
}

/* What execvp() would run for @name; NULL if nothing. */
static char *find_in_path(const char *name)
{
	const char *path = getenv("PATH");
	char *copy, *dir, *save = NULL, buf[PATH_MAX];

	if (strchr(name, '/'))
		return access(name, X_OK) ? NULL : strdup(name);
	copy = strdup(path ? path : "/usr/local/bin:/usr/bin:/bin");
	for (dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		struct stat st;

		snprintf(buf, sizeof(buf), "%s/%s", *dir ? dir : ".", name);
		if (!stat(buf, &st) && S_ISREG(st.st_mode) && !access(buf, X_OK)) {
			free(copy);
			return strdup(buf);
		}
	}
	free(copy);
	return NULL;
}

/*
 * Named events ("app:request", "sdt_python:function__entry") are looked
 * up in the program's objects, found the first time one is named.
 */
struct named {
	const struct trace_opts *o;
	struct trace_ctx *c;
	const char *binary;
	bool loaded;
	struct dp_cli_objs objs;
	struct dp_debugdef *dbg;	/* names through the debug information */
};

/*
 * --kernel: "GROUP:NAME", a kernel tracepoint (a word of identifier
 * characters on each side; p:, r: and t: start definitions).
 */
static bool is_kernel_tracepoint(const char *line)
{
	size_t g = strspn(line, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			  "0123456789_");
	const char *name = line + g + 1;

	if (!g || line[g] != ':' || !*name)
		return false;
	if (strchr("prt", line[0]) && strspn(line + 1, "0123456789") == g - 1)
		return false;
	return strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		      "0123456789_") == strlen(name);
}

/* "syscalls:GLOB": the syscall events whose names match GLOB. */
static int apply_syscalls(struct dp_registry *reg, const char *line)
{
	const char *glob = line + sizeof(DP_SYSCALLS_GROUP);
	int n = dp_registry_syscalls_glob(reg, glob);

	if (n > 0)
		return 0;
	fprintf(stderr, "dprobe: %s: %s\n", line, n < 0 ? strerror(-n) :
		"no syscall event has that name (sys_enter_NAME or "
		"sys_exit_NAME, NAME a system call)");
	return 1;
}

/* The objects of the program, looked at once. */
static int load_objs(struct named *nm)
{
	int ret;

	if (nm->loaded)
		return 0;
	ret = nm->o->cmd ? dp_cli_objs_of_binary(&nm->objs, nm->binary) :
	      dp_cli_objs_of_pid(&nm->objs, nm->o->pids[0]);
	nm->loaded = !ret;
	return ret;
}

static int apply_line(struct dp_registry *reg, struct named *nm,
		      const char *line)
{
	struct dp_cli_lines l = { 0 };
	int bad = 0, ret = 0;

	/* on the kernel engine an application tracepoint cannot be
	 * enabled (it calls the agent), so GROUP:NAME is the kernel's;
	 * sdt_PROVIDER:NAME stays an SDT probe (uprobes) */
	if ((nm->o->kernel || (nm->o->engine &&
			       nm->o->engine->flags & DP_ENGINE_KERNEL &&
			       strncmp(line, "sdt_", 4))) &&
	    is_kernel_tracepoint(line)) {
		if (nm->c->nktps == MAX_DEFS) {
			fprintf(stderr, "dprobe: too many kernel tracepoints "
				"(at most %d)\n", MAX_DEFS);
			return 1;
		}
		/* a line of -e @FILE goes with its file: keep a copy */
		nm->c->ktps[nm->c->nktps] = strdup(line);
		return nm->c->ktps[nm->c->nktps++] ? 0 : 1;
	}
	/* without the kernel: made from the target's syscall stops */
	if (!strncmp(line, DP_SYSCALLS_GROUP ":", sizeof(DP_SYSCALLS_GROUP)))
		return apply_syscalls(reg, line);
	if (dp_cli_names_event(line) || dp_cli_names_glob(line) ||
	    dp_debugdef_needed(line))
		ret = load_objs(nm);
	if (ret || dp_cli_expand(line, &nm->objs, &l))
		return 1;
	for (size_t i = 0; i < l.n; i++) {
		struct dp_error e = { 0 };
		char **t = NULL;

		if (dp_debugdef_needed(l.v[i])) {
			if (!nm->dbg)
				nm->dbg = dp_debugdef_new(nm->binary,
							  nm->objs.paths,
							  nm->objs.n);
			ret = nm->dbg ? dp_debugdef_translate(nm->dbg, l.v[i],
							      &t, &e) : -ENOMEM;
			if (ret && ret != -ENODATA) {
				dp_error_print(&e, stderr);
				dp_error_clear(&e);
				bad++;
				continue;
			}
			if (*dp_debugdef_note(nm->dbg))
				fprintf(stderr, "dprobe: %s\n",
					dp_debugdef_note(nm->dbg));
		}
		for (size_t k = 0; t ? t[k] != NULL : k == 0; k++) {
			if (dp_registry_apply(reg, t ? t[k] : l.v[i], NULL, &e)) {
				dp_error_print(&e, stderr);
				bad++;
			}
			dp_error_clear(&e);
		}
		dp_debugdef_lines_free(t);
	}
	dp_cli_lines_free(&l);
	return bad;
}

/* --tracer: its events on every function the filters select. */
static int apply_tracer(struct dp_registry *reg, struct named *nm)
{
	struct dp_cli_lines l = { 0 };
	int bad = 0;

	if (load_objs(nm) || dp_cli_tracer_defs(nm->o->tracer, nm->binary,
						&nm->objs, &nm->o->funcs, &l)) {
		dp_cli_lines_free(&l);
		return 1;
	}
	for (size_t i = 0; i < l.n && !bad; i++) {
		struct dp_error e = { 0 };

		if (dp_registry_apply(reg, l.v[i], NULL, &e)) {
			dp_error_print(&e, stderr);
			bad++;
		}
		dp_error_clear(&e);
	}
	dp_cli_lines_free(&l);
	return bad;
}

/*
 * Lines of -e DEF, or of FILE for -e @FILE, applied in order: a DEF with
 * newlines is several definitions, as a write to kprobe_events is.
 */
static int apply_def(struct dp_registry *reg, struct named *nm,
		     const char *def)
{
	struct dp_def_opts fo = { .file = def + 1 };
	struct dp_defs d;
	int bad = 0;

	if (def[0] == '@' ? dp_defs_load(&d, &fo, 0, NULL, 0) :
	    dp_defs_from_texts(&d, &def, 1))
		return -1;
	for (int i = 0; i < d.n; i++)
		bad += apply_line(reg, nm, d.lines[i]);
	dp_defs_free(&d);
	return bad ? -1 : 0;
}

/* --filter EVENT=EXPR for a kernel tracepoint: the kernel engine sets it
 * once the tracepoint's format has given its fields. */
static bool names_kernel_tracepoint(const struct trace_ctx *c, const char *f)
{
	const char *eq = strchr(f, '=');

	for (size_t i = 0; eq && i < c->nktps; i++)
		if (dp_engine_tp_named(c->ktps[i], f, (size_t)(eq - f)))
			return true;
	return false;
}

/*
 * --stack: the events whose records carry the user stack (dp_event.stack);
 * every one with -g, --stack alone, or a format made of stacks (folded)
 * given no list.  A list is EVENT or GROUP/EVENT names, comma separated.
 */
static int setup_stacks(struct dp_registry *reg, const struct trace_opts *o)
{
	bool all = o->stack_all || (o->format->stacks && !o->nstacks) ||
		   (o->call_graph && !o->nstacks);

	/* the kernel walks its stacks itself: there is no copy to unwind */
	if (o->stack_dwarf && (o->kernel || (o->engine &&
					     o->engine->flags & DP_ENGINE_KERNEL))) {
		fprintf(stderr, "dprobe: --call-graph dwarf: the kernel engine "
			"takes no stack copies (its stacks are frame "
			"pointers)\n");
		return -1;
	}
	for (struct dp_event *ev = reg->events; ev; ev = ev->next) {
		ev->stack |= all;
		ev->stack_dwarf = o->stack_dwarf;
	}
	for (int i = 0; i < o->nstacks; i++) {
		char *list = strdup(o->stacks[i]), *save = NULL, *name;

		for (name = strtok_r(list, ",", &save); name;
		     name = strtok_r(NULL, ",", &save)) {
			char *slash = strchr(name, '/');
			bool found = false;

			for (struct dp_event *ev = reg->events; ev; ev = ev->next)
				if (slash ? !strncmp(ev->group, name,
						     (size_t)(slash - name)) &&
					    !ev->group[slash - name] &&
					    !strcmp(ev->name, slash + 1) :
				    !strcmp(ev->name, name))
					found = ev->stack = true;
			if (!found) {
				fprintf(stderr, "dprobe: --stack: no event "
					"'%s'\n", name);
				free(list);
				return -1;
			}
		}
		free(list);
	}
	return 0;
}

/* Definitions, then filters; every event enabled. */
static int setup_events(struct trace_ctx *c, const struct trace_opts *o,
			const char *binary)
{
	struct named nm = { .o = o, .c = c, .binary = binary };
	struct dp_resolver res;
	int bad = 0;

	dp_registry_init(&c->reg);
	dp_resolver_init(&res, binary, false);
	/* kernel places are the kernel's to check */
	c->reg.resolve = o->kernel ? NULL : dp_resolve_cb;
	c->reg.resolve_priv = &res;
	for (int i = 0; i < o->ndefs; i++)
		bad |= apply_def(&c->reg, &nm, o->defs[i]);
	if (o->tracer)
		bad |= apply_tracer(&c->reg, &nm);
	c->reg.resolve = NULL;
	dp_cli_objs_free(&nm.objs);
	dp_debugdef_free(nm.dbg);
	dp_resolver_free(&res);
	for (int i = 0; !bad && i < o->nfilters; i++)
		if (!names_kernel_tracepoint(c, o->filters[i]))
			bad |= dp_cli_apply_filter(&c->reg, o->filters[i], false);
	/* synthetic events the triggers' actions make are printed too */
	c->trig.emit = emit;
	c->trig.emit_priv = c;
	if (!bad && dp_cli_triggers_setup(&c->trig, &c->reg, o->triggers,
					  o->ntriggers))
		bad = 1;
	if (!bad && setup_stacks(&c->reg, o))
		bad = 1;
	/* after --stack's: the stack tracer's event walks frame pointers */
	for (struct dp_event *ev = c->reg.events; o->tracer && ev; ev = ev->next)
		dp_tracer_event_setup(ev);
	if (bad)
		return -1;
	if (!c->reg.events && !c->nktps) {
		fprintf(stderr, "dprobe: no probe left to arm\n");
		return -1;
	}
	for (struct dp_event *ev = c->reg.events; ev; ev = ev->next)
		ev->enabled = true;
	return 0;
}

/* Handlers for the stop signals, blocked for now (*@old: the mask before). */
static void install_signals(sigset_t *old)
{
	struct sigaction sa = { .sa_sigaction = on_stop_signal,
				.sa_flags = SA_SIGINFO };
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGALRM);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, dp_sup_signal());
	sigprocmask(SIG_BLOCK, &set, old);

	/* no SA_RESTART: the engine's sigsuspend() must return */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);
	sa.sa_sigaction = on_profile_signal;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_sigaction = on_forwarded_signal;
	sigaction(dp_sup_signal(), &sa, NULL);
}

/*
 * --duration counts from the moment every probe is armed, in the process
 * that runs the engine (a supervised engine's child: an interval timer
 * is not inherited), so that a slow attach under load never eats the
 * window the user asked to see.
 */
static void arm_duration(double duration)
{
	struct itimerval it = { .it_value = {
		.tv_sec = (time_t)duration,
		.tv_usec = (suseconds_t)((duration - (time_t)duration) * 1e6) } };

	if (duration > 0)
		setitimer(ITIMER_REAL, &it, NULL);
}

static void print_profile(void *priv)
{
	struct trace_ctx *c = priv;

	if (c->hooks) {
		if (c->hooks->tick)
			c->hooks->tick(c->hooks->priv);
		return;
	}
	dp_render_flush(&c->render);
	dp_cli_triggers_print(&c->trig, c->out);
	dp_registry_profile(&c->reg, DP_KIND_KPROBE, stderr);
	dp_registry_profile(&c->reg, DP_KIND_UPROBE, stderr);
	/* how the engine placed each probe (the agent: optimised, or why
	 * not) */
	dp_engine_list_probes(g_eng.e, stderr);
}

/* perf stat's layout: count, then GROUP:EVENT. */
static void print_stat(const struct trace_ctx *c, const struct trace_opts *o,
		       double secs)
{
	fprintf(stderr, "\n Performance counter stats for '");
	if (o->cmd) {
		for (char **a = o->cmd; *a; a++)
			fprintf(stderr, "%s%s", a == o->cmd ? "" : " ", *a);
	} else if (!o->npids) {
		fprintf(stderr, "system wide");
	} else {
		for (int i = 0; i < o->npids; i++)
			fprintf(stderr, "%sprocess id %d", i ? "," : "", o->pids[i]);
	}
	fprintf(stderr, "':\n\n");
	for (const struct dp_event *ev = c->reg.events; ev; ev = ev->next) {
		uint64_t n = 0;

		for (const struct dp_probe *p = ev->probes; p; p = p->next)
			n += p->nevents;
		fprintf(stderr, "%18" PRIu64 "      %s:%s\n", n, ev->group, ev->name);
	}
	fprintf(stderr, "\n%17.9f seconds time elapsed\n\n", secs);
}

/* The state letter of task @tid of @pid ('Z' a zombie), 0 if unknown. */
static char task_state(pid_t pid, const char *tid)
{
	char path[320], buf[512], *rp;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", pid, tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* the comm field may hold anything, ')' too: the last one ends it */
	rp = strrchr(buf, ')');
	return rp && rp[1] == ' ' ? rp[2] : 0;
}

/* Has every thread of @pid exited, its parent not having reaped it? */
static bool is_zombie(pid_t pid)
{
	char path[64];
	struct dirent *de;
	bool dead = true, any = false;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return false;
	while (dead && (de = readdir(d))) {
		char st;

		if (de->d_name[0] == '.')
			continue;
		st = task_state(pid, de->d_name);
		any = true;
		dead = st == 'Z' || st == 'X';
	}
	closedir(d);
	return any && dead;
}

static char *main_binary(const struct trace_opts *o)
{
	char path[64];

	if (o->cmd)
		return find_in_path(o->cmd[0]);
	for (int i = 0; i < o->npids; i++) {
		if (kill(o->pids[i], 0) && errno == ESRCH) {
			fprintf(stderr, "dprobe: no process %d\n", o->pids[i]);
			return NULL;
		}
		if (is_zombie(o->pids[i])) {
			fprintf(stderr, "dprobe: process %d is a zombie: it has "
				"exited, its parent has not reaped it yet\n",
				o->pids[i]);
			return NULL;
		}
	}
	snprintf(path, sizeof(path), "/proc/%d/exe", o->pids[0]);
	return strdup(path);
}

/*
 * An engine that looks MOD: places up itself (the kernel engine) gets the
 * program's objects.  Looked up before the engine is chosen, as such an
 * engine is only ever named: what the lookup reports comes before what
 * the engine does, as it always has.
 */
static void engine_objs(const struct trace_opts *o, const char *binary,
			struct dp_cli_objs *objs, struct dp_engine_opts *eo)
{
	if (o->kernel || !o->engine || !(o->engine->flags & DP_ENGINE_OBJS))
		return;
	if ((o->cmd ? dp_cli_objs_of_binary(objs, binary) :
	     dp_cli_objs_of_pid(objs, o->pids[0])) == 0) {
		eo->objs = objs->paths;
		eo->nobjs = objs->n;
	}
}

/* The stack tracer's event is checked in the process: an engine that
 * cannot would make no record of it.  0, or -1 said. */
static int stack_max_engine(const struct dp_engine_ops *ops,
			    const struct dp_registry *reg)
{
	for (const struct dp_event *ev = reg->events; ev; ev = ev->next)
		if (ev->stack_max && !(ops->flags & DP_ENGINE_STACK_MAX)) {
			fprintf(stderr, "dprobe: --tracer stack needs the "
				"in-process or the ptrace engine (the %s "
				"cannot keep a process's deepest stack)\n",
				ops->desc);
			return -1;
		}
	return 0;
}

/*
 * The engine dp_engine_choose() picks, started; when it fails in a way
 * the policy lets another engine take over (dp_engine_fallback()), that
 * one.  An engine that needs a supervisor (supervisor.h) runs in a
 * child: 0 is returned in the child once tracing, and in the parent,
 * which then only supervises it (g_eng.child).
 */
static int start(struct dp_engine_choice *ch, struct dp_engine_opts *eo,
		 double duration)
{
	char why[4096];
	int err = dp_engine_choose(ch, eo, NULL);

	if (err) {
		fprintf(stderr, "dprobe: %s\n", ch->why);
		return err;
	}
	for (;;) {
		dp_engine_say_choice(ch);
		if (stack_max_engine(ch->ops, eo->reg))
			return -EINVAL;
		if (ch->ops->flags & DP_ENGINE_SUPERVISED) {
			pid_t child = dp_sup_fork();

			if (child < 0) {
				fprintf(stderr, "dprobe: cannot fork: %s\n",
					strerror(-child));
				return child;
			}
			if (child > 0) {
				g_eng.child = child;
				return 0;
			}
		}
		why[0] = '\0';
		err = dp_engine_start(ch->ops, eo, &g_eng.e, why, sizeof(why));
		if (!err) {
			arm_duration(duration);
			return 0;
		}
		if (!dp_engine_fallback(ch, eo, err, why, sizeof(why)))
			break;
		fprintf(stderr, "dprobe: %s\n", why);
	}
	fprintf(stderr, "dprobe: %s\n", why);
	return err;
}

/*
 * The processes behind the events: with -f how many images were traced
 * (fork children, exec'd images); children left untraced, which explain
 * a run without events.
 */
static void print_processes(const struct trace_opts *o,
			    const struct dp_stats *st)
{
	unsigned execs = st->procs > st->forks ? st->procs - st->forks - 1 : 0;

	if (o->follow && st->procs)
		fprintf(stderr, "dprobe: traced %u process image%s (%u by fork, "
			"%u by exec)\n", st->procs, st->procs == 1 ? "" : "s",
			st->forks, execs);
	if (st->untraced)
		fprintf(stderr, "dprobe: %u process%s ran untraced%s\n",
			st->untraced, st->untraced == 1 ? "" : "es",
			o->follow ? "" : " (fork children: -f follows them)");
}

/*
 * A recording given --force over an old one: the old file is removed
 * and a new one made, not truncated (a plain file with one name; a
 * symlink or a device is opened as it is).  ext4 writes out at close
 * the data of a file that was truncated and written again
 * (auto_da_alloc), which for a trace of hundreds of megabytes is a
 * wait after the program has ended.
 */
static void replace_old(const char *path)
{
	struct stat st;

	if (path && !lstat(path, &st) && S_ISREG(st.st_mode) &&
	    st.st_nlink == 1)
		unlink(path);
}

/* --dry-run: every definition as the registry holds it (names from the
 * debug information translated, C++ places mangled), one per line. */
static void dry_run(const struct dp_registry *reg)
{
	for (const struct dp_event *ev = reg->events; ev; ev = ev->next)
		for (const struct dp_probe *p = ev->probes; p; p = p->next) {
			char *line = dp_probe_canonical(&p->def);

			if (line)
				puts(line);
			free(line);
		}
}

/* --interval (the session's hooks): SIGUSR1 every @secs from a timer of
 * the process that runs the engine, which the engine's loop takes as a
 * request for its profile (print_profile(): the tick hook). */
static int start_ticks(double secs, timer_t *t)
{
	struct sigevent sev = { .sigev_notify = SIGEV_SIGNAL,
				.sigev_signo = SIGUSR1 };
	struct itimerspec its = { 0 };

	if (timer_create(CLOCK_MONOTONIC, &sev, t)) {
		fprintf(stderr, "dprobe: no interval timer: %s\n",
			strerror(errno));
		return -1;
	}
	its.it_value.tv_sec = (time_t)secs;
	its.it_value.tv_nsec = (long)((secs - (double)(time_t)secs) * 1e9);
	its.it_interval = its.it_value;
	timer_settime(*t, 0, &its, NULL);
	return 0;
}

static int run(int argc, char **argv, bool stat, bool record,
	       const struct dp_session_hooks *hooks)
{
	struct trace_opts o = { .stat = stat, .record = record,
				.name = hooks ? hooks->cmd : stat ? "stat" :
				record ? "record" : "trace" };
	struct trace_ctx c = { .out = stdout, .stat = stat, .hooks = hooks };
	timer_t ticks;
	bool ticking = false;
	struct dp_engine_choice ch;
	struct dp_engine_opts eo;
	/* hist triggers kept in the traced processes, where they can be */
	static struct dp_agg_req aggs[DP_CLI_MAX_TRIGGERS];
	struct dp_cli_objs objs = { 0 };
	struct timespec t0, t1;
	const struct dp_stats *st;
	sigset_t blocked;
	char *binary;
	int status = 0, ret = DP_EXIT_REJECTED, rerr, err;

	if (parse_opts(argc, argv, &o))
		return DP_EXIT_USAGE;
	if (o.recover)
		return dp_cli_recover(o.recover, o.output, o.force);
	binary = o.kernel && !o.cmd && !o.npids ? strdup("") : main_binary(&o);
	if (!binary && o.cmd) {
		fprintf(stderr, "dprobe: cannot execute %s: %s\n", o.cmd[0],
			strerror(ENOENT));
		return 127;
	}
	if (!binary)
		return DP_EXIT_REJECTED;
	if (setup_events(&c, &o, binary))
		goto out;
	if (hooks && hooks->setup && hooks->setup(hooks->priv, &c.reg)) {
		ret = DP_EXIT_USAGE;
		goto out;
	}
	if (o.dry_run) {
		/* what would be armed, as perf probe -D shows it */
		dry_run(&c.reg);
		ret = DP_EXIT_OK;
		goto out;
	}
	if (o.record && !o.force && !access(o.output, F_OK)) {
		fprintf(stderr, "dprobe record: %s exists: give --force to "
			"overwrite it, or -o another name\n", o.output);
		ret = DP_EXIT_USAGE;
		goto out;
	}
	if (o.record)
		replace_old(o.output);
	if (o.format->dir ? dp_cli_out_dir(o.output) :
	    o.output && !(c.out = fopen(o.output, "w"))) {
		if (!o.format->dir)
			fprintf(stderr, "dprobe: %s: %s\n", o.output,
				strerror(errno));
		goto out;
	}
	dp_renderer_init(&c.render, o.format, c.out, get_nprocs_conf());
	if (o.format->dir)
		c.render.path = o.output;
	c.render.ts = (int)o.ts;
	c.render.compress = o.compress;
	c.render.tracer = &o.topts;
	dp_render_begin(&c.render);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/*
	 * Ctrl-C while attaching must not kill dprobe with probes armed:
	 * the signals stay blocked until the engine's loop can take them.
	 */
	install_signals(&blocked);
	eo = (struct dp_engine_opts){
		.reg = &c.reg, .argv = o.cmd, .pids = o.pids,
		.npids = o.npids, .binary = binary, .follow = o.follow,
		.quiet_target = o.quiet_target,
		/* the triggers need records: engines count without them */
		.count_only = o.stat && !c.trig.n,
		.sink = { emit, emit_lost, &c, flush_out, on_trigger, on_agg },
		.aggs = aggs,
		.naggs = hooks && hooks->aggs ?
			 hooks->aggs(hooks->priv, aggs, DP_CLI_MAX_TRIGGERS) :
			 dp_cli_triggers_aggs(&c.trig, aggs, DP_CLI_MAX_TRIGGERS),
		.child_mask = &blocked, .wake_sig = dp_sup_signal(),
		.forced = o.engine, .buffer_size = o.buffer_size,
		.overwrite = o.overwrite, .blocking = o.blocking,
		.kernel = o.kernel,
		.tracepoints = (const char *const *)c.ktps,
		.ntracepoints = c.nktps,
		.filters = o.filters, .nfilters = (size_t)o.nfilters,
		.show = hooks && hooks->show ? stdout : NULL,
	};
	engine_objs(&o, binary, &objs, &eo);
	err = start(&ch, &eo, o.duration);
	dp_cli_objs_free(&objs);
	if (err) {
		sigprocmask(SIG_SETMASK, &blocked, NULL);
		dp_render_discard(&c.render);
		/* nothing was traced: no empty recording is left behind */
		if (o.record)
			dp_tdat_remove(o.output);
		goto out;
	}
	if (g_eng.child) {
		/* the child traces and prints; its exit code is ours */
		ret = dp_sup_wait(g_eng.child, &blocked);
		sigprocmask(SIG_SETMASK, &blocked, NULL);
		g_eng.child = 0;
		dp_render_discard(&c.render);	/* the child's to end */
		goto out;
	}
	dp_engine_set_profile_cb(g_eng.e, print_profile, &c);
	if (hooks && hooks->interval > 0)
		ticking = !start_ticks(hooks->interval, &ticks);
	rerr = dp_engine_run(g_eng.e, &status);
	if (ticking)
		timer_delete(ticks);
	sigprocmask(SIG_SETMASK, &blocked, NULL);
	/* -ENOENT: no probe was ever armed, and the engine said why */
	if (rerr && rerr != -ENOENT)
		fprintf(stderr, "dprobe: tracing stopped on an error; every probe was removed\n");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	st = dp_engine_stats(g_eng.e);
	dp_render_summary(&c.render, st);
	dp_render_end(&c.render);
	dp_cli_triggers_print(&c.trig, c.out);
	if (hooks && hooks->end)
		hooks->end(hooks->priv, st);
	if (stat)
		print_stat(&c, &o, (double)(t1.tv_sec - t0.tv_sec) +
			   (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	if (o.profile)
		print_profile(&c);
	if (!eo.show) {
		fprintf(stderr, "dprobe: %" PRIu64 " events, %" PRIu64
			" filtered, %" PRIu64 " missed, %" PRIu64 " lost\n",
			st->events, st->filtered, st->missed, st->lost);
		print_processes(&o, st);
	}
	/* show kills the command it launched: its status is no answer */
	ret = rerr ? DP_EXIT_REJECTED : o.cmd && !eo.show ?
	      dp_cli_exit_code(status) : DP_EXIT_OK;
	dp_engine_free(g_eng.e);
	g_eng = (struct engine){ 0 };
out:
	if (c.out && c.out != stdout)
		fclose(c.out);
	dp_cli_triggers_free(&c.trig);
	dp_registry_free(&c.reg);
	for (size_t i = 0; i < c.nktps; i++)
		free(c.ktps[i]);
	free(binary);
	return ret;
}

int dp_cmd_trace(int argc, char **argv)
{
	return run(argc, argv, false, false, NULL);
}

int dp_cmd_stat(int argc, char **argv)
{
	return run(argc, argv, true, false, NULL);
}

int dp_cmd_record(int argc, char **argv)
{
	return run(argc, argv, false, true, NULL);
}

int dp_trace_session(int argc, char **argv, const struct dp_session_hooks *h)
{
	return run(argc, argv, false, false, h);
}
