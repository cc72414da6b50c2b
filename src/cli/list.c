// SPDX-License-Identifier: GPL-2.0
/*
 * dprobe list: the functions a probe can be placed on, in one binary
 * (link-time addresses) or in every object a process has mapped (run-time
 * addresses), as ftrace's available_filter_functions lists the kernel's.
 */
#include <elf.h>
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/named.h"
#include "engine/engine.h"
#include "sym/debuginfo.h"
#include "sym/elf.h"
#include "sym/proc.h"
#include "util/util.h"

struct row {
	const struct dp_elf_sym *sym;
	const char *module;
	uint64_t addr;
};

struct rows {
	struct row *v;
	size_t n, cap;
};

/*
 * The name a user writes to probe @s: "name", or "name@VER" for a
 * non-default version (libc's older memcpy@GLIBC_2.2.5).
 */
static void display_name(const struct dp_elf_sym *s, char *buf, size_t len)
{
	if (s->hidden && s->version)
		snprintf(buf, len, "%.*s@%s", (int)s->base_len, s->name,
			 s->version);
	else
		snprintf(buf, len, "%.*s", (int)s->base_len, s->name);
}

static bool probeable(const struct dp_elf_sym *s)
{
	return (s->type == STT_FUNC || s->type == STT_GNU_IFUNC) && s->size;
}

/* Add @elf's functions matching @glob, moved by @bias. */
static int add_object(struct rows *r, const struct dp_elf *elf,
		      const char *module, uint64_t bias, const char *glob)
{
	char name[512];
	struct row *tmp;

	for (size_t i = 0; i < dp_elf_nsyms(elf); i++) {
		const struct dp_elf_sym *s = dp_elf_sym(elf, i);

		if (!probeable(s))
			continue;
		display_name(s, name, sizeof(name));
		if (glob && fnmatch(glob, name, 0))
			continue;
		if (r->n == r->cap) {
			r->cap = r->cap ? 2 * r->cap : 1024;
			tmp = realloc(r->v, r->cap * sizeof(*tmp));
			if (!tmp)
				return -ENOMEM;
			r->v = tmp;
		}
		r->v[r->n++] = (struct row){ s, module, s->value + bias };
	}
	return 0;
}

static int row_cmp(const void *pa, const void *pb)
{
	const struct row *a = pa, *b = pb;
	int c = strcmp(a->module, b->module);

	if (c)
		return c;
	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return strcmp(a->sym->name, b->sym->name);
}

static void print_rows(struct rows *r)
{
	char name[512];

	if (!r->n)
		return;		/* only events matched, or nothing */
	qsort(r->v, r->n, sizeof(*r->v), row_cmp);
	printf("%-40s %-24s %-14s %6s\n", "SYMBOL", "MODULE", "ADDRESS",
	       "SIZE");
	for (size_t i = 0; i < r->n; i++) {
		display_name(r->v[i].sym, name, sizeof(name));
		printf("%-40s %-24s 0x%012" PRIx64 " %6" PRIu64 "\n", name,
		       r->v[i].module, r->v[i].addr, r->v[i].sym->size);
	}
}

/*
 * The tracepoints and SDT probes of @paths, as perf list shows events,
 * under their own heading when there are any.
 */
static void list_named(const char *const *paths, size_t n, const char *glob,
		       bool after_rows)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return;
	for (size_t i = 0; i < n; i++)
		dp_cli_list_named(paths[i], glob, f);
	if (!fclose(f) && len)
		printf("%s%-46s %s\n%s", after_rows ? "\n" : "", "EVENT",
		       "KIND", buf);
	free(buf);
}

static int list_binary(const char *path, const char *glob)
{
	struct rows r = { 0 };
	struct dp_elf *elf;
	char why[192];
	int ret;

	ret = dp_elf_open_why(path, &elf, why, sizeof(why));
	if (ret) {
		fprintf(stderr, "dprobe list: %s: %s\n", path, why);
		return DP_EXIT_REJECTED;
	}
	ret = add_object(&r, elf, dp_base_name(path), 0, glob);
	if (!ret) {
		print_rows(&r);
		list_named(&path, 1, glob, r.n > 0);
	}
	else
		fprintf(stderr, "dprobe list: out of memory\n");
	free(r.v);
	dp_elf_close(elf);
	return ret ? DP_EXIT_REJECTED : DP_EXIT_OK;
}

static int list_process(pid_t pid, const char *glob)
{
	const struct dp_proc_objs *s;
	struct rows r = { 0 };
	struct dp_proc *p;
	char why[256];
	int ret = 0;

	if (dp_proc_open(pid, &p, why, sizeof(why))) {
		fprintf(stderr, "dprobe list: %s\n", why);
		return DP_EXIT_REJECTED;
	}
	s = dp_proc_objs(p);
	if (!s->n) {
		fprintf(stderr, "dprobe list: process %d has no ELF object "
			"mapped (a kernel thread, or exiting)\n", (int)pid);
		dp_proc_close(p);
		return DP_EXIT_REJECTED;
	}
	for (size_t i = 0; i < s->n && !ret; i++) {
		const struct dp_proc_obj *o = &s->v[i];

		if (!o->elf) {
			fprintf(stderr, "dprobe list: skipping %s: %s\n",
				o->path, o->why);
			continue;
		}
		ret = add_object(&r, o->elf, dp_base_name(o->path), o->bias, glob);
	}
	if (!ret) {
		const char **paths = calloc(s->n, sizeof(*paths));
		size_t n = 0;

		print_rows(&r);
		for (size_t i = 0; paths && i < s->n; i++)
			if (s->v[i].elf)
				paths[n++] = s->v[i].open_path;
		list_named(paths, n, glob, r.n > 0);
		free(paths);
	} else {
		fprintf(stderr, "dprobe list: out of memory\n");
	}
	free(r.v);
	dp_proc_close(p);
	return ret ? DP_EXIT_REJECTED : DP_EXIT_OK;
}

/* --kernel: the kernel's tracepoints, as perf list shows them. */
static int list_kernel(const char *glob)
{
	return dp_engine_list_tracepoints(glob, stdout) ? DP_EXIT_REJECTED :
	       DP_EXIT_OK;
}

/* A whole positive decimal number that fits a pid_t, or -1. */
static pid_t parse_pid(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v <= 0 || v > INT_MAX)
		return -1;
	return v;
}

/* ---- with the debug information: -L, -V, -v ----------------------------- */

struct lines_ctx {
	const char *func;
	const char *file;	/* filled before the first line */
	bool header;
};

/* perf probe -L's layout: "<FUNC@FILE:0>", then each line, numbered
 * where a FUNC:N place can go. */
static void print_line(void *priv, int rel, const char *text)
{
	struct lines_ctx *c = priv;

	if (!c->header) {
		printf("<%s@%s:0>\n", c->func, c->file);
		c->header = true;
	}
	if (rel >= 0)
		printf("%7d  %s\n", rel, text);
	else
		printf("         %s\n", text);
}

struct vars_ctx {
	char **v;
	size_t n;
};

static void add_var(void *priv, const char *type, const char *name,
		    bool located)
{
	struct vars_ctx *c = priv;
	char **t, *line;

	if (!located || asprintf(&line, "\t\t%s\t%s", type, name) < 0)
		return;
	t = realloc(c->v, (c->n + 1) * sizeof(*t));
	if (!t) {
		free(line);
		return;
	}
	c->v = t;
	c->v[c->n++] = line;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* perf probe -V's layout: the variables located there, sorted, each
 * once, their types without qualifiers. */
static void print_vars(struct dp_dbg *d, const struct dp_dbg_place *pl)
{
	struct vars_ctx c = { 0 };

	printf("\t@<%s+%llu>\n", pl->sym,
	       (unsigned long long)(pl->addr - pl->func));
	dp_dbg_vars(d, pl, add_var, &c);
	if (c.n)
		qsort(c.v, c.n, sizeof(*c.v), str_cmp);
	for (size_t i = 0; i < c.n; i++) {
		if (!i || strcmp(c.v[i], c.v[i - 1]))
			puts(c.v[i]);
		free(c.v[i]);
	}
	free(c.v);
}

struct proto_ctx {
	const char *glob;
	unsigned n;
};

static void print_proto(void *priv, const char *name, const char *proto)
{
	struct proto_ctx *c = priv;

	if (c->glob && fnmatch(c->glob, name, 0))
		return;
	puts(proto);
	c->n++;
}

/* FUNC, FUNC:N or FILE.c:N of -V into places; how many, or -errno. */
static int vars_places(struct dp_dbg *d, const char *what,
		       struct dp_dbg_place *pl, int max, char *why, size_t len)
{
	char buf[512], *colon;
	long line;

	snprintf(buf, sizeof(buf), "%s", what);
	colon = strrchr(buf, ':');
	if (!colon)
		return dp_dbg_func(d, buf, pl, why, len) ? -ENOENT : 1;
	*colon = '\0';
	line = strtol(colon + 1, NULL, 10);
	return dp_dbg_lines(d, buf, !strchr(buf, '.'), (int)line, pl, max, why,
			    len);
}

static int list_debug(const char *binary, char what, const char *arg,
		      const char *glob)
{
	struct dp_dbg_place pl[16];
	struct proto_ctx pc = { glob, 0 };
	struct lines_ctx lc;
	char why[1024], file[4096] = "";
	struct dp_dbg *d;
	int n, ret = 0;

	if (dp_dbg_open(binary, &d, why, sizeof(why))) {
		fprintf(stderr, "dprobe list: %s\n", why);
		return DP_EXIT_REJECTED;
	}
	switch (what) {
	case 'L':
		lc = (struct lines_ctx){ .func = arg, .file = file };
		ret = dp_dbg_func_lines(d, arg, file, sizeof(file), print_line,
					&lc, why, sizeof(why));
		break;
	case 'V':
		n = vars_places(d, arg, pl, 16, why, sizeof(why));
		ret = n < 0 ? n : 0;
		/* FUNC:0 is FUNC, and named so */
		if (n > 0)
			printf("Available variables at %.*s\n",
			       (int)(strlen(arg) - (strlen(arg) > 2 &&
					       !strcmp(arg + strlen(arg) - 2, ":0") ?
					       2 : 0)), arg);
		for (int i = 0; i < n; i++)
			print_vars(d, &pl[i]);
		break;
	default:
		dp_dbg_prototypes(d, print_proto, &pc);
		break;
	}
	if (ret)
		fprintf(stderr, "dprobe list: %s\n", why);
	dp_dbg_close(d);
	return ret ? DP_EXIT_REJECTED : DP_EXIT_OK;
}

int dp_cmd_list(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "binary", required_argument, NULL, 'x' },
		{ "pid", required_argument, NULL, 'p' },
		{ "kernel", no_argument, NULL, 'K' },
		{ "lines", required_argument, NULL, 'L' },
		{ "vars", required_argument, NULL, 'V' },
		{ "protos", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *binary = NULL, *pidarg = NULL, *glob, *darg = NULL;
	bool kernel = false;
	char dbg = 0;
	pid_t pid = -1;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+x:p:L:V:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'L':
		case 'V':
		case 'v':
			if (dbg) {
				fprintf(stderr, "dprobe list: one of -L, -V and "
					"-v\n");
				goto usage;
			}
			dbg = (char)c;
			darg = optarg;
			break;
		case 'x': binary = optarg; break;
		case 'p': pidarg = optarg; break;
		case 'K': kernel = true; break;
		case 'h':
			dp_usage(stdout, "list");
			return DP_EXIT_OK;
		default:
			goto usage;
		}
	}
	if ((binary != NULL) + (pidarg != NULL) + kernel != 1) {
		fprintf(stderr, "dprobe list: give one of -x BINARY, -p PID or "
			"--kernel\n");
		goto usage;
	}
	if (argc - optind > 1) {
		fprintf(stderr, "dprobe list: one GLOB at most\n");
		goto usage;
	}
	glob = optind < argc ? argv[optind] : NULL;
	if (dbg && !binary) {
		fprintf(stderr, "dprobe list: -%c reads the debug information "
			"of -x BINARY\n", dbg);
		goto usage;
	}
	if (dbg)
		return list_debug(binary, dbg, darg, glob);
	if (kernel)
		return list_kernel(glob);
	if (binary)
		return list_binary(binary, glob);
	pid = parse_pid(pidarg);
	if (pid < 0) {
		fprintf(stderr, "dprobe list: invalid process id '%s'\n", pidarg);
		goto usage;
	}
	return list_process(pid, glob);
usage:
	dp_usage(stderr, "list");
	return DP_EXIT_USAGE;
}
