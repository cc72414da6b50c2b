// SPDX-License-Identifier: GPL-2.0
/*
 * dprobe report [FILE]: a recording (dprobe record's trace.dat) shown
 * afterwards, as `dprobe trace` would have shown it: its events are made
 * again from the definitions the file holds, and each record goes
 * through the same filters, hist triggers and renderer (--format) as a
 * live one, named with the symbols recorded beside it.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "cli/cli.h"
#include "output/tracer.h"
#include "sym/tracer.h"
#include "cli/triggers.h"
#include "event/filter.h"
#include "lang/errors.h"
#include "lang/layout.h"
#include "output/output.h"
#include "output/renderer.h"
#include "record/tracedat.h"

#define MAX_FILTERS 64

struct report_opts {
	const char *file;
	const char *output;
	const struct dp_renderer_ops *format;
	enum dp_ts_mode ts;
	const char *filters[MAX_FILTERS];
	int nfilters;
	const char *triggers[DP_CLI_MAX_TRIGGERS];
	int ntriggers;
	const char *synths[MAX_FILTERS];	/* -e s:... */
	int nsynths;
};

struct report {
	struct dp_tdat *t;
	struct dp_registry reg;
	struct dp_cli_triggers trig;
	struct dp_renderer render;
	FILE *out;
	struct dp_stats st;
	uint64_t unknown;		/* records of no event the file defines */
	/* the events by the id their records carry (a u16) */
	struct dp_event *by_id[1u << 16];
};

enum { OPT_FILTER = 256, OPT_TRIGGER, OPT_FORMAT, OPT_TS };

static int parse_opts(int argc, char **argv, struct report_opts *o)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "filter", required_argument, NULL, OPT_FILTER },
		{ "trigger", required_argument, NULL, OPT_TRIGGER },
		{ "event", required_argument, NULL, 'e' },
		{ "ts", required_argument, NULL, OPT_TS },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	char names[160];
	int c;

	o->format = dp_renderer_by_name("text");
	optind = 1;
	while ((c = getopt_long(argc, argv, "e:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'e':
			if (strncmp(optarg, "s:", 2)) {
				fprintf(stderr, "dprobe report: -e takes synthetic "
					"events (s:NAME FIELDS) only: the other "
					"events are the recording's\n");
				return -1;
			}
			if (o->nsynths == MAX_FILTERS)
				return -1;
			o->synths[o->nsynths++] = optarg;
			break;
		case 'o': o->output = optarg; break;
		case OPT_FORMAT:
			o->format = dp_renderer_by_name(optarg);
			if (!o->format) {
				fprintf(stderr, "dprobe report: bad format "
					"'%s' (%s)\n", optarg,
					dp_renderer_names(names, sizeof(names)));
				return -1;
			}
			break;
		case OPT_FILTER:
			if (o->nfilters == MAX_FILTERS)
				return -1;
			o->filters[o->nfilters++] = optarg;
			break;
		case OPT_TRIGGER:
			if (o->ntriggers == DP_CLI_MAX_TRIGGERS)
				return -1;
			o->triggers[o->ntriggers++] = optarg;
			break;
		case OPT_TS:
			if (dp_cli_parse_ts(optarg, &o->ts))
				return -1;
			break;
		case 'h':
			dp_usage(stdout, "report");
			exit(DP_EXIT_OK);
		default:
			return -1;
		}
	}
	/* tracedat: the records that pass, as a recording of their own */
	if (o->format->binary && !o->output && isatty(STDOUT_FILENO)) {
		fprintf(stderr, "dprobe report: --format %s writes a binary "
			"file: give -o FILE\n", o->format->name);
		return -1;
	}
	if (o->format->dir && !o->output) {
		fprintf(stderr, "dprobe report: --format %s writes a "
			"directory: name it with -o DIR\n", o->format->name);
		return -1;
	}
	o->file = optind < argc ? argv[optind++] : "trace.dat";
	if (optind < argc) {
		fprintf(stderr, "dprobe report: one file at a time\n");
		return -1;
	}
	return 0;
}

/* The newest event of the registry: the one a definition just made. */
static struct dp_event *last_event(const struct dp_registry *reg)
{
	struct dp_event *ev = reg->events;

	while (ev && ev->next)
		ev = ev->next;
	return ev;
}

/* One line of a "def" event: its probes, as `dprobe trace -e` makes them. */
static int apply_defs(struct dp_registry *reg, const char *defs)
{
	char *copy = strdup(defs), *line, *save = NULL;
	struct dp_error err = { 0 };
	int ret = copy ? 0 : -ENOMEM;

	for (line = copy ? strtok_r(copy, "\n", &save) : NULL; line && !ret;
	     line = strtok_r(NULL, "\n", &save)) {
		ret = dp_registry_apply(reg, line, NULL, &err);
		if (ret)
			fprintf(stderr, "dprobe report: the recording's "
				"definition '%s': %s\n", line,
				err.code ? dp_err_message(err.code) :
				strerror(-ret));
		dp_error_clear(&err);
	}
	free(copy);
	return ret;
}

/* The file's events made again, each with the id its records carry. */
static int make_events(struct report *rp)
{
	for (size_t i = 0; i < dp_tdat_nevents(rp->t); i++) {
		const struct dp_tdat_event *e = dp_tdat_event(rp->t, i);
		struct dp_event *before = last_event(&rp->reg), *ev = NULL;
		int ret = 0;

		if (!strcmp(e->kind, "def"))
			ret = apply_defs(&rp->reg, e->def);
		else if (!strcmp(e->kind, "synth"))
			ret = dp_registry_synth(&rp->reg, e->def, false, NULL);
		else if (!strcmp(e->kind, "ktp") && e->format)
			ev = dp_registry_kernel_tp(&rp->reg, e->system, e->name,
						   e->format);
		else
			continue;
		if (!ev && !ret)
			ev = last_event(&rp->reg);
		if (ret || !ev || ev == before) {
			fprintf(stderr, "dprobe report: event %u of the "
				"recording cannot be made again\n", e->id);
			return -1;
		}
		ev->id = e->id;
		ev->enabled = true;
		if (e->id < 1u << 16)
			rp->by_id[e->id] = ev;
	}
	return 0;
}

static struct dp_event *event_of(const struct report *rp, unsigned id)
{
	return id < 1u << 16 ? rp->by_id[id] : NULL;
}

static void one_record(struct report *rp, const struct dp_tdat_rec *r)
{
	struct dp_event *ev = event_of(rp, r->id);
	struct dp_symbolizer sym;
	struct dp_rec_meta m = {
		.ts_ns = r->ts_ns, .cpu = r->cpu,
		.stack = r->stack, .nstack = r->nstack,
	};

	if (!ev || r->len < DP_TP_HEAD_SIZE) {
		rp->unknown++;
		return;
	}
	m.pid = (int)dp_rec_load(r->data + DP_REC_PID_OFF, 4);
	m.tgid = dp_tdat_tgid(rp->t, m.pid);
	if (!m.tgid)
		m.tgid = m.pid;
	m.mm_pid = m.tgid;
	m.comm = dp_tdat_comm(rp->t, m.pid);
	dp_tdat_symbolizer(rp->t, m.tgid, &sym);
	if (ev->filter && !dp_filter_match(ev->filter, ev, r->data, r->len,
					   &m)) {
		rp->st.filtered++;
		return;
	}
	if (ev->triggered) {
		dp_cli_triggers_add(&rp->trig, ev, r->data, r->len, &m, &sym);
		return;
	}
	if (!dp_render_event(&rp->render, ev, r->data, r->len, &m, &sym))
		rp->st.events++;
}

static void read_all(struct report *rp)
{
	struct dp_tdat_rec r;
	int ret;

	while ((ret = dp_tdat_next(rp->t, &r)) > 0) {
		if (r.lost) {
			if (r.lost != DP_LOST_UNKNOWN)
				rp->st.lost += r.lost;
			dp_render_lost(&rp->render, r.cpu, r.lost);
		}
		if (r.data)
			one_record(rp, &r);
	}
}

/* A synthetic event a trigger's action made: printed as trace prints it. */
static void emit_synth(void *priv, const struct dp_event *ev, const void *rec,
		       size_t len, const struct dp_rec_meta *meta,
		       const struct dp_symbolizer *sym)
{
	struct report *rp = priv;

	/* one with a trigger of its own is aggregated there, as in trace */
	if (!ev->triggered &&
	    !dp_render_event(&rp->render, ev, rec, len, meta, sym))
		rp->st.events++;
}

static int setup(struct report *rp, const struct report_opts *o)
{
	struct dp_error err = { 0 };

	if (make_events(rp))
		return DP_EXIT_REJECTED;
	for (int i = 0; i < o->nsynths; i++) {
		if (dp_registry_synth(&rp->reg, o->synths[i], true, &err)) {
			fprintf(stderr, "dprobe report: '%s': %s\n",
				o->synths[i], dp_err_message(err.code));
			dp_error_clear(&err);
			return DP_EXIT_REJECTED;
		}
		last_event(&rp->reg)->enabled = true;
	}
	for (int i = 0; i < o->nfilters; i++)
		if (dp_cli_apply_filter(&rp->reg, o->filters[i], false))
			return DP_EXIT_REJECTED;
	rp->trig.emit = emit_synth;
	rp->trig.emit_priv = rp;
	rp->trig.stats = &rp->st;
	if (o->ntriggers && dp_cli_triggers_setup(&rp->trig, &rp->reg,
						  o->triggers, o->ntriggers))
		return DP_EXIT_REJECTED;
	return 0;
}

/* The records of the open file through the renderer; what was cut said. */
/*
 * The format of the text: a recording of --tracer function_graph or
 * function prints as that tracer does (the recording holds its events),
 * any other as trace lines.
 */
static const struct dp_renderer_ops *text_of(const struct report *rp,
					     const struct report_opts *o)
{
	static const char *const tracers[] = { "function_graph", "function" };
	static const char *const events[] = { "funcgraph_entry", "function" };

	if (o->format != dp_renderer_by_name("text"))
		return o->format;
	for (size_t i = 0; i < 2; i++)
		if (dp_registry_find(&rp->reg, DP_TRACER_GROUP, events[i]))
			return dp_renderer_tracer(tracers[i]);
	return o->format;
}

static void show(struct report *rp, const struct report_opts *o)
{
	static struct dp_tracer_opts topts;

	dp_tracer_opts_init(&topts);
	dp_renderer_init(&rp->render, text_of(rp, o), rp->out,
			 dp_tdat_ncpus(rp->t));
	rp->render.tracer = &topts;
	if (o->format->dir)
		rp->render.path = o->output;
	rp->render.ts = (int)o->ts;
	dp_render_begin(&rp->render);
	read_all(rp);
	dp_render_summary(&rp->render, &rp->st);
	dp_render_end(&rp->render);
	dp_cli_triggers_print(&rp->trig, rp->out);
	if (*dp_tdat_damage(rp->t))
		fprintf(stderr, "dprobe report: %s: %s", o->file,
			dp_tdat_damage(rp->t));
	if (rp->unknown)
		fprintf(stderr, "dprobe report: %" PRIu64 " records of events "
			"the file does not define\n", rp->unknown);
	fprintf(stderr, "dprobe: %" PRIu64 " events, %" PRIu64 " filtered, %"
		PRIu64 " lost\n", rp->st.events, rp->st.filtered, rp->st.lost);
}

static int report(struct report *rp, const struct report_opts *o)
{
	char err[256];
	int ret;

	rp->out = stdout;
	rp->t = dp_tdat_open(o->file, err, sizeof(err));
	if (!rp->t) {
		fprintf(stderr, "dprobe report: %s: %s\n", o->file, err);
		return DP_EXIT_REJECTED;
	}
	dp_registry_init(&rp->reg);
	ret = setup(rp, o);
	if (!ret && (o->format->dir ? dp_cli_out_dir(o->output) :
		     o->output && !(rp->out = fopen(o->output, "w")))) {
		if (!o->format->dir)
			fprintf(stderr, "dprobe report: %s: %s\n", o->output,
				strerror(errno));
		ret = DP_EXIT_REJECTED;
	}
	if (!ret)
		show(rp, o);
	if (rp->out && rp->out != stdout)
		fclose(rp->out);
	dp_cli_triggers_free(&rp->trig);
	dp_registry_free(&rp->reg);
	dp_tdat_close(rp->t);
	return ret;
}

int dp_cmd_report(int argc, char **argv)
{
	struct report_opts o = { 0 };
	struct report *rp;
	int ret;

	if (parse_opts(argc, argv, &o)) {
		dp_usage(stderr, "report");
		return DP_EXIT_USAGE;
	}
	/* the table of events by id is large: not on the stack */
	rp = calloc(1, sizeof(*rp));
	if (!rp) {
		fprintf(stderr, "dprobe report: %s\n", strerror(ENOMEM));
		return DP_EXIT_REJECTED;
	}
	ret = report(rp, &o);
	free(rp);
	return ret;
}

/* OUT for PART: PART without its ".part" (malloc'd). */
static char *recovered_name(const char *part, const char *out)
{
	size_t n = strlen(part);

	if (out)
		return strdup(out);
	if (n > 5 && !strcmp(part + n - 5, ".part"))
		return strndup(part, n - 5);
	return NULL;
}

int dp_cli_recover(const char *part, const char *out, bool force)
{
	char *name = recovered_name(part, out), err[256];
	struct stat st;
	uint64_t pages;
	int ret = DP_EXIT_REJECTED;
	FILE *f;

	if (!name) {
		fprintf(stderr, "dprobe record: --recover %s: name the "
			"recording with -o FILE\n", part);
		return DP_EXIT_USAGE;
	}
	/* the empty file a killed recorder opened is its to replace */
	if (!force && !stat(name, &st) && st.st_size) {
		fprintf(stderr, "dprobe record: %s exists: give --force to "
			"overwrite it, or -o another name\n", name);
		free(name);
		return DP_EXIT_USAGE;
	}
	f = fopen(name, "w");
	if (!f) {
		fprintf(stderr, "dprobe record: %s: %s\n", name, strerror(errno));
	} else if (dp_tdat_recover(part, f, &pages, err, sizeof(err))) {
		fprintf(stderr, "dprobe record: --recover %s: %s\n", part, err);
		fclose(f);
		unlink(name);
	} else {
		fclose(f);
		unlink(part);
		fprintf(stderr, "dprobe record: %s: %" PRIu64 " pages "
			"recovered from %s\n", name, pages, part);
		ret = DP_EXIT_OK;
	}
	free(name);
	return ret;
}
