// SPDX-License-Identifier: GPL-2.0
/*
 * dprobe check: apply definitions in order, as successive writes to
 * kprobe_events/uprobe_events would, and say what the kernel would say.
 * dprobe format: the `format` file of the event a definition makes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/named.h"
#include "output/output.h"
#include "sym/debugdef.h"

static void json_line(const char *input, int ret, const struct dp_probe *p,
		      const struct dp_error *e)
{
	char *canon = p ? dp_probe_canonical(&p->def) : NULL;

	fputs("{\"input\":", stdout);
	dp_json_string(stdout, input);
	printf(",\"accepted\":%s,\"canonical\":", ret ? "false" : "true");
	dp_json_string(stdout, canon);
	if (!ret) {
		fputs(",\"errno\":null,\"error\":null,\"caret_col\":null}\n",
		      stdout);
		free(canon);
		return;
	}
	printf(",\"errno\":\"%s\",\"error\":", dp_errno_name(e->err));
	dp_json_string(stdout, dp_err_message(e->code));
	printf(",\"caret_col\":%d,\"command\":", e->pos);
	dp_json_string(stdout, e->command);
	printf(",\"logged\":%s", e->logged ? "true" : "false");
	if (e->detail[0]) {
		fputs(",\"detail\":", stdout);
		dp_json_string(stdout, e->detail);
	}
	fputs("}\n", stdout);
	free(canon);
}

static void text_line(int ret, const struct dp_probe *p,
		      const struct dp_error *e)
{
	char *canon;

	if (ret) {
		dp_error_print(e, stdout);
		return;
	}
	if (!p)
		return;
	canon = dp_probe_canonical(&p->def);
	if (canon)
		puts(canon);
	free(canon);
}

/* A synthetic event defined by @line: its dynamic_events line. */
static void synth_text(const struct dp_registry *reg, const char *line)
{
	struct dp_synth_def d;
	const struct dp_event *ev;
	char *l;

	if (dp_parse_synth(line, true, &d, NULL))
		return;
	ev = dp_registry_find(reg, DP_SYNTH_GROUP, d.name);
	dp_synth_def_free(&d);
	l = ev && ev->synth ? dp_synth_listing(ev->synth) : NULL;
	if (l)
		printf("s:%s/%s\n", DP_SYNTH_GROUP, l);
	free(l);
}

static int apply_one(struct dp_registry *reg, const char *line, bool json,
		     bool quiet, char last[2][DP_MAX_EVENT_NAME_LEN])
{
	struct dp_error e = { 0 };
	struct dp_probe *p = NULL;
	int ret = dp_registry_apply(reg, line, &p, &e);

	if (p) {
		memcpy(last[0], p->event->group, DP_MAX_EVENT_NAME_LEN);
		memcpy(last[1], p->event->name, DP_MAX_EVENT_NAME_LEN);
	}
	if (json)
		json_line(line, ret, p, &e);
	else if (!quiet || ret)
		text_line(ret, quiet ? NULL : p, &e);
	if (!json && !quiet && !ret && !p && line[0] == 's' && line[1] == ':')
		synth_text(reg, line);
	dp_error_clear(&e);
	return ret != 0;
}

/*
 * A named event that could not be looked up (why: on stderr already):
 * under --json its line still gets its object, with the kernel's
 * NO_TRACEPOINT.
 */
static int named_rejected(const char *line, int ret, bool json,
			  const char *where)
{
	struct dp_error e = { 0 };

	if (json) {
		dp_error_detail(&e, line, DP_ERR_NO_TRACEPOINT, -ret, 0, 0,
				"%s", where);
		json_line(line, -1, NULL, &e);
		dp_error_clear(&e);
	}
	return 1;
}

/*
 * A tracepoint or SDT probe named by the definition is looked up in
 * -x BINARY and the libraries it loads; 1 if it cannot be.
 */
static int apply_named(struct dp_registry *reg, const char *line,
		       const char *binary, bool json, bool quiet,
		       char last[2][DP_MAX_EVENT_NAME_LEN])
{
	struct dp_cli_objs objs;
	struct dp_cli_lines l;
	int rejected = 0, ret;

	if (!binary) {
		fprintf(stderr, "dprobe: '%s' names an event of a program: give "
			"-x BINARY\n", line);
		return named_rejected(line, -ENOENT, json, "no -x BINARY to look "
				      "it up in");
	}
	ret = dp_cli_objs_of_binary(&objs, binary);
	if (!ret) {
		ret = dp_cli_expand(line, &objs, &l);
		dp_cli_objs_free(&objs);
	}
	if (ret)
		return named_rejected(line, ret, json, binary);
	for (size_t i = 0; i < l.n; i++)
		rejected += apply_one(reg, l.v[i], json, quiet, last);
	dp_cli_lines_free(&l);
	return rejected;
}

/*
 * A definition that names variables, members or source lines: the
 * definitions it stands for, through the debug information of -x BINARY
 * and the libraries it loads (what `dprobe check` prints is the
 * translation, as perf probe -D shows its).
 */
static int apply_debug(struct dp_registry *reg, const char *line,
		       const char *binary, struct dp_debugdef **dbg, bool json,
		       bool quiet, char last[2][DP_MAX_EVENT_NAME_LEN])
{
	struct dp_cli_objs objs = { 0 };
	struct dp_error e = { 0 };
	char **t = NULL;
	int rejected = 0, ret;

	if (!*dbg) {
		if (binary && dp_cli_objs_of_binary(&objs, binary))
			objs = (struct dp_cli_objs){ 0 };
		*dbg = dp_debugdef_new(binary, objs.paths, objs.n);
		dp_cli_objs_free(&objs);
	}
	ret = *dbg ? dp_debugdef_translate(*dbg, line, &t, &e) : -ENOMEM;
	if (ret == -ENODATA)	/* no debug information: the kernel's say */
		return apply_one(reg, line, json, quiet, last);
	if (ret) {
		if (json)
			json_line(line, -1, NULL, &e);
		else
			dp_error_print(&e, stdout);
		dp_error_clear(&e);
		return 1;
	}
	for (size_t k = 0; t[k]; k++)
		rejected += apply_one(reg, t[k], json, quiet, last);
	dp_debugdef_lines_free(t);
	return rejected;
}

/* Apply every definition; returns the number rejected, or -1. */
static int apply_all(struct dp_registry *reg, const struct dp_defs *d,
		     const char *binary, bool json, bool quiet,
		     char last[2][DP_MAX_EVENT_NAME_LEN])
{
	struct dp_debugdef *dbg = NULL;	/* opened at the first use */
	int rejected = 0;

	for (int i = 0; i < d->n; i++) {
		if (dp_cli_names_event(d->lines[i]))
			rejected += apply_named(reg, d->lines[i], binary, json,
						quiet, last);
		else if (dp_debugdef_needed(d->lines[i]))
			rejected += apply_debug(reg, d->lines[i], binary, &dbg,
						json, quiet, last);
		else
			rejected += apply_one(reg, d->lines[i], json, quiet,
					      last);
	}
	dp_debugdef_free(dbg);
	return rejected;
}

static int run(int argc, char **argv, const char *cmd, bool format)
{
	struct dp_def_opts o;
	struct dp_defs d;
	struct dp_registry reg;
	struct dp_resolver res;
	char names[2][DP_MAX_EVENT_NAME_LEN] = { "", "" };
	struct dp_event *last;
	int first, rejected;

	first = dp_parse_def_opts(argc, argv, cmd, &o, !format);
	if (first < 0)
		return DP_EXIT_USAGE;
	if (dp_defs_load(&d, &o, argc, argv, first))
		return DP_EXIT_USAGE;
	dp_registry_init(&reg);
	dp_resolver_init(&res, o.binary, o.no_elf);
	reg.resolve = dp_resolve_cb;
	reg.resolve_priv = &res;
	/* without the ELF, PATH:SYM cannot be resolved: refuse it as the
	 * kernel does */
	if (o.no_elf)
		reg.parse_flags = DP_PARSE_KERNEL_PLACES;

	rejected = apply_all(&reg, &d, o.no_elf ? NULL : o.binary, o.json,
			     format, names);
	for (int i = 0; i < o.nfilters; i++)
		rejected += dp_cli_apply_filter(&reg, o.filters[i], o.json) != 0;
	/* the event may have been deleted by a later line */
	last = dp_registry_find(&reg, names[0], names[1]);
	if (format && !rejected && !last)
		fprintf(stderr, "dprobe format: no event was defined\n");
	if (format && !rejected && last)
		dp_event_format(last, stdout);

	dp_registry_free(&reg);
	dp_resolver_free(&res);
	dp_defs_free(&d);
	if (rejected || (format && !last))
		return DP_EXIT_REJECTED;
	return DP_EXIT_OK;
}

int dp_cmd_check(int argc, char **argv)
{
	return run(argc, argv, "check", false);
}

int dp_cmd_format(int argc, char **argv)
{
	return run(argc, argv, "format", true);
}
