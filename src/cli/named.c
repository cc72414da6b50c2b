// SPDX-License-Identifier: GPL-2.0
/*
 * Events by name, as perf's -e takes them: "GROUP:NAME" for an
 * application tracepoint (tracepoint.h) and "sdt_PROVIDER:NAME" for the
 * SDT probes programs carry (.note.stapsdt).  Each is turned into
 * ordinary definitions before the registry sees them:
 *
 *   app:request                 t:app/request app:request id=$arg1:s32 ...
 *   sdt_python:function__entry  p:sdt_python/function__entry
 *                                   /usr/bin/python3.11:0x4f20a1(0xa84260)
 *                                   arg1=%bp:u64 arg2=%r12:u64 arg3=%ax:s32
 *                               one such line per site of the probe
 *
 * A definition may also name an SDT probe as its place and use the
 * probe's arguments as $argN in its own fetch arguments:
 *
 *   p:pycall sdt_python:function__entry file=+0($arg1):string line=$arg3
 *
 * Where to look: the program's file and the libraries the dynamic loader
 * maps for it, or the files a running process maps.
 */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/named.h"
#include "lang/argv.h"
#include "sym/elf.h"
#include "sym/proc.h"
#include "sym/sdt.h"
#include "sym/tracepoint.h"

/* ---- the objects of a session -------------------------------------------- */

static int objs_add(struct dp_cli_objs *o, const char *path)
{
	char **tmp;

	for (size_t i = 0; i < o->n; i++)
		if (!strcmp(o->paths[i], path))
			return 0;
	tmp = realloc(o->paths, (o->n + 1) * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	o->paths = tmp;
	o->paths[o->n] = strdup(path);
	return o->paths[o->n] ? (o->n++, 0) : -ENOMEM;
}

/* "\tlibc.so.6 => /lib/.../libc.so.6 (0x...)" or "\t/lib64/ld... (0x...)" */
static int add_list_line(struct dp_cli_objs *o, char *line)
{
	char *arrow = strstr(line, "=> "), *p = arrow ? arrow + 3 : line;

	while (isspace((unsigned char)*p))
		p++;
	if (*p != '/')
		return 0;
	p[strcspn(p, " \t\n")] = '\0';
	return objs_add(o, p);
}

/*
 * The libraries the dynamic loader maps for @binary, from the loader's
 * own --list (which loads nothing but the objects; the program's code
 * does not run).  A static binary has none.
 */
static int add_libraries(struct dp_cli_objs *o, const char *binary,
			 const char *interp)
{
	char line[4096];
	int fds[2], status, ret = 0;
	FILE *f;
	pid_t pid;

	if (pipe(fds))
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -errno;
	}
	if (!pid) {
		dup2(fds[1], STDOUT_FILENO);
		close(fds[0]);
		close(fds[1]);
		execl(interp, interp, "--list", binary, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	while (f && fgets(line, sizeof(line), f))
		if (!ret)
			ret = add_list_line(o, line);
	if (f)
		fclose(f);
	else
		close(fds[0]);
	waitpid(pid, &status, 0);
	return ret;
}

/*
 * The loader a file names is run only if it is a system one: a file
 * owned by root, writable by no one else, under /lib or /usr/lib.  Any
 * PT_INTERP would otherwise be a program `dprobe check -x` runs.
 */
static bool trusted_loader(const char *interp)
{
	static const char *const dirs[] = { "/lib/", "/lib64/", "/usr/lib/",
					    "/usr/lib64/" };
	char *real = realpath(interp, NULL);
	struct stat st;
	bool ok = false;

	if (!real)
		return false;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]) && !ok; i++)
		ok = !strncmp(real, dirs[i], strlen(dirs[i]));
	ok = ok && !stat(real, &st) && S_ISREG(st.st_mode) && st.st_uid == 0 &&
	     !(st.st_mode & (S_IWGRP | S_IWOTH));
	free(real);
	return ok;
}

int dp_cli_objs_of_binary(struct dp_cli_objs *o, const char *binary)
{
	char interp[256];
	struct dp_elf *elf;
	int ret;

	memset(o, 0, sizeof(*o));
	ret = objs_add(o, binary);
	if (ret || dp_elf_open(binary, &elf))
		return ret;
	ret = dp_elf_interp(elf, interp, sizeof(interp));
	dp_elf_close(elf);
	if (ret)
		return 0;	/* static: no libraries */
	if (!trusted_loader(interp)) {
		fprintf(stderr, "dprobe: %s names %s as its loader, not a system "
			"one: only the file itself is searched\n", binary,
			interp);
		return 0;
	}
	return add_libraries(o, binary, interp);
}

/*
 * The files process @pid maps, as it sees them (through its root, or
 * map_files for a replaced file): what sym/proc.c opens.
 */
int dp_cli_objs_of_pid(struct dp_cli_objs *o, pid_t pid)
{
	const struct dp_proc_objs *s;
	struct dp_proc *p;
	char why[256];
	int ret = 0;

	memset(o, 0, sizeof(*o));
	if (dp_proc_open(pid, &p, why, sizeof(why))) {
		fprintf(stderr, "dprobe: %s\n", why);
		return -ESRCH;
	}
	s = dp_proc_objs(p);
	for (size_t i = 0; !ret && i < s->n; i++)
		if (s->v[i].elf)
			ret = objs_add(o, s->v[i].open_path);
	dp_proc_close(p);
	return ret;
}

void dp_cli_objs_free(struct dp_cli_objs *o)
{
	for (size_t i = 0; i < o->n; i++)
		free(o->paths[i]);
	free(o->paths);
	memset(o, 0, sizeof(*o));
}

/* ---- names ----------------------------------------------------------------- */

static bool is_ident(const char *s, size_t n)
{
	if (!n || (!isalpha((unsigned char)*s) && *s != '_'))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-')
			return false;
	return true;
}

/* "GROUP:NAME" with C-identifier-like parts: split into @grp and @name. */
static bool split_name(const char *s, char *grp, size_t glen, char *name,
		       size_t nlen)
{
	const char *colon = strchr(s, ':');

	if (!colon || !is_ident(s, (size_t)(colon - s)) ||
	    !is_ident(colon + 1, strlen(colon + 1)) ||
	    (size_t)(colon - s) >= glen || strlen(colon + 1) >= nlen)
		return false;
	snprintf(grp, glen, "%.*s", (int)(colon - s), s);
	snprintf(name, nlen, "%s", colon + 1);
	return true;
}

/* ---- the output list ------------------------------------------------------- */

int dp_cli_lines_push(struct dp_cli_lines *l, char *line)
{
	char **tmp;

	if (!line)
		return -ENOMEM;
	/* the array doubles when n reaches a power of two: a glob's
	 * thousands of lines are not copied once per line */
	if (l->n & (l->n - 1))
		goto room;
	tmp = realloc(l->v, (l->n ? 2 * l->n : 1) * sizeof(*tmp));
	if (!tmp) {
		free(line);
		return -ENOMEM;
	}
	l->v = tmp;
room:
	l->v[l->n++] = line;
	return 0;
}

void dp_cli_lines_free(struct dp_cli_lines *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* ---- tracepoints ------------------------------------------------------------ */

static int find_tracepoint(const struct dp_cli_objs *o, const char *grp,
			   const char *name, struct dp_tp_desc *d)
{
	for (size_t i = 0; i < o->n; i++) {
		struct dp_elf *elf;
		int ret;

		if (dp_elf_open(o->paths[i], &elf))
			continue;
		ret = dp_elf_tracepoint(elf, grp, name, d);
		dp_elf_close(elf);
		if (!ret)
			return 0;
	}
	return -ENOENT;
}

static int expand_tracepoint(const struct dp_cli_objs *o, const char *grp,
			     const char *name, struct dp_cli_lines *out)
{
	struct dp_tp_desc d;
	char *args, *line;

	if (find_tracepoint(o, grp, name, &d)) {
		fprintf(stderr, "dprobe: no tracepoint %s:%s in %s or the "
			"libraries it loads\n", grp, name,
			o->n ? o->paths[0] : "the program");
		return -ENOENT;
	}
	args = dp_tp_default_args(&d);
	if (!args || asprintf(&line, "t:%s/%s %s:%s%s%s", grp, name, grp, name,
			      *args ? " " : "", args) < 0)
		line = NULL;
	free(args);
	return dp_cli_lines_push(out, line);
}

/* ---- SDT probes ----------------------------------------------------------- */

/*
 * @body with every "$argN" replaced by site argument N's expression; a
 * body that is "$argN" alone also takes the argument's type.
 */
static char *subst_args(const char *body, const struct dp_sdt_probe *s,
			char *why, size_t whylen)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	const char *p = body;
	unsigned long n;
	char *end;

	if (!f)
		return NULL;
	while (*p) {
		if (strncmp(p, "$arg", 4) || !isdigit((unsigned char)p[4])) {
			fputc(*p++, f);
			continue;
		}
		n = strtoul(p + 4, &end, 10);
		if (!n || n > s->nargs) {
			snprintf(why, whylen, "%s has %u arguments, not $arg%lu",
				 s->name, s->nargs, n);
			goto fail;
		}
		if (s->args[n - 1].error) {
			snprintf(why, whylen, "argument %lu of %s (%s): %s", n,
				 s->name, s->args[n - 1].spec,
				 s->args[n - 1].error);
			goto fail;
		}
		fputs(s->args[n - 1].expr, f);
		if (p == body && !*end)
			fprintf(f, ":%s", s->args[n - 1].type);
		p = end;
	}
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
fail:
	fclose(f);
	free(buf);
	return NULL;
}

/* One site's definition: @head (the "p:GRP/EVENT" token), its place, the
 * fetch arguments with $argN made the site's operands. */
static char *site_line(const char *head, const char *path,
		       const struct dp_sdt_probe *s, char **argv, int argc,
		       char *why, size_t whylen)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	bool ok = true;

	if (!f)
		return NULL;
	fprintf(f, "%s %s:0x%" PRIx64, head, path, s->pc_foff);
	if (s->sem)
		fprintf(f, "(0x%" PRIx64 ")", s->sem_foff);
	for (int i = 0; ok && i < argc; i++) {
		char *eq = strchr(argv[i], '='), *body;

		body = subst_args(eq ? eq + 1 : argv[i], s, why, whylen);
		if (!body) {
			ok = false;
			break;
		}
		fprintf(f, " %.*s%s", eq ? (int)(eq - argv[i] + 1) : 0,
			argv[i], body);
		free(body);
	}
	if (fclose(f) || !ok) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* The sites of one SDT probe, from every object. */
struct sdt_sites {
	struct sdt_site {
		const char *path;
		struct dp_sdt_probe p;
	} *v;
	size_t n;
};

static int sites_collect(const struct dp_cli_objs *o, const char *prov,
			 const char *name, struct sdt_sites *ss)
{
	char err[256];

	for (size_t i = 0; i < o->n; i++) {
		struct dp_sdt_probe *v;
		struct sdt_site *tmp;
		size_t n = 0;

		if (dp_sdt_read(o->paths[i], &v, &n, err, sizeof(err)) < 0)
			continue;
		for (size_t j = 0; j < n; j++) {
			if (strcmp(v[j].provider, prov) || strcmp(v[j].name, name))
				continue;
			if (v[j].error) {
				fprintf(stderr, "dprobe: %s: a site of sdt_%s:%s "
					"is left out: %s\n", o->paths[i], prov,
					name, v[j].error);
				continue;
			}
			tmp = realloc(ss->v, (ss->n + 1) * sizeof(*tmp));
			if (!tmp) {
				free(v);
				return -ENOMEM;
			}
			ss->v = tmp;
			ss->v[ss->n++] = (struct sdt_site){ o->paths[i], v[j] };
		}
		free(v);
	}
	return 0;
}

/*
 * The default arguments of an SDT probe: argN=$argN for each argument
 * every site can express (one that some site cannot is left out, with
 * a note), so that all the sites make one event.
 */
static int default_sdt_args(const struct sdt_sites *ss, char ***argv,
			    int *argc)
{
	unsigned nargs = ss->v[0].p.nargs;

	for (size_t j = 1; j < ss->n; j++)
		if (ss->v[j].p.nargs < nargs)
			nargs = ss->v[j].p.nargs;
	*argv = calloc(nargs + 1, sizeof(**argv));
	*argc = 0;
	if (!*argv)
		return -ENOMEM;
	for (unsigned i = 0; i < nargs; i++) {
		const struct dp_sdt_probe *bad = NULL;

		for (size_t j = 0; j < ss->n && !bad; j++)
			if (ss->v[j].p.args[i].error)
				bad = &ss->v[j].p;
		if (bad) {
			fprintf(stderr, "dprobe: %s:%s: argument %u (%s) is left "
				"out: %s\n", bad->provider, bad->name, i + 1,
				bad->args[i].spec, bad->args[i].error);
			continue;
		}
		if (asprintf(&(*argv)[(*argc)++], "arg%u=$arg%u", i + 1,
			     i + 1) < 0)
			return -ENOMEM;
	}
	return 0;
}

static void free_argv(char **argv, int argc)
{
	for (int i = 0; i < argc; i++)
		free(argv[i]);
	free(argv);
}

/* Every site of @prov:@name in @o's objects, as definitions. */
static int expand_sdt(const struct dp_cli_objs *o, const char *head,
		      const char *prov, const char *name, char **argv,
		      int argc, struct dp_cli_lines *out)
{
	struct sdt_sites ss = { 0 };
	char why[256] = "";
	char **dargv = NULL;
	int dargc = 0, ret;

	ret = sites_collect(o, prov, name, &ss);
	if (!ret && !ss.n) {
		fprintf(stderr, "dprobe: no SDT probe %s:%s in %s or the "
			"libraries it loads\n", prov, name,
			o->n ? o->paths[0] : "the program");
		ret = -ENOENT;
	}
	if (!ret && !argv) {
		ret = default_sdt_args(&ss, &dargv, &dargc);
		argv = dargv;
		argc = dargc;
	}
	for (size_t j = 0; !ret && j < ss.n; j++)
		ret = dp_cli_lines_push(out, site_line(head, ss.v[j].path, &ss.v[j].p,
						argv, argc, why, sizeof(why)));
	if (ret && why[0])
		fprintf(stderr, "dprobe: sdt_%s:%s: %s\n", prov, name, why);
	free_argv(dargv, dargc);
	free(ss.v);
	return ret;
}

/* ---- definitions ---------------------------------------------------------- */

enum named { NOT_NAMED, NAMED_EVENT, NAMED_SDT_PLACE };

/* "p", "r5", "t", "-": the head of a definition, never a group name. */
static bool is_def_head(const char *s, size_t n)
{
	size_t i = 1;

	if (!n || s[0] == '-' || s[0] == '!')
		return true;
	if (!strchr("prt", s[0]))
		return false;
	while (i < n && isdigit((unsigned char)s[i]))
		i++;
	return i == n;
}

/*
 * What @def names: "GROUP:NAME" alone (a tracepoint, or an SDT probe
 * when GROUP is sdt_PROVIDER), or "p[:[GRP/]EVENT] sdt_PROVIDER:NAME ..."
 * (an SDT probe as a place; @a then holds the split line).
 */
static enum named classify(const char *def, char *grp, char *name,
			   struct dp_argv *a)
{
	const size_t len = DP_MAX_EVENT_NAME_LEN;

	if (!strpbrk(def, " \t") && !is_def_head(def, strcspn(def, ":")))
		return split_name(def, grp, len, name, len) ? NAMED_EVENT :
		       NOT_NAMED;
	if (def[0] != 'p' || (def[1] != ':' && def[1] != ' ' && def[1] != '\t'))
		return NOT_NAMED;
	if (dp_argv_split(def, a))
		return NOT_NAMED;
	if (a->argc >= 2 && !strncmp(a->argv[1], "sdt_", 4) &&
	    split_name(a->argv[1], grp, len, name, len))
		return NAMED_SDT_PLACE;
	dp_argv_free(a);
	return NOT_NAMED;
}

bool dp_cli_names_event(const char *def)
{
	char grp[DP_MAX_EVENT_NAME_LEN], name[DP_MAX_EVENT_NAME_LEN];
	struct dp_argv a;
	enum named k = classify(def, grp, name, &a);

	if (k == NAMED_SDT_PLACE)
		dp_argv_free(&a);
	return k != NOT_NAMED;
}

int dp_cli_expand(const char *def, const struct dp_cli_objs *objs,
		  struct dp_cli_lines *out)
{
	char grp[DP_MAX_EVENT_NAME_LEN], name[DP_MAX_EVENT_NAME_LEN];
	char head[2 * DP_MAX_EVENT_NAME_LEN + 4];
	struct dp_argv a;
	int ret;

	memset(out, 0, sizeof(*out));
	switch (classify(def, grp, name, &a)) {
	case NAMED_EVENT:
		/* every field of a tracepoint, every argument of a probe */
		if (strncmp(grp, "sdt_", 4))
			return expand_tracepoint(objs, grp, name, out);
		snprintf(head, sizeof(head), "p:%s/%s", grp, name);
		return expand_sdt(objs, head, grp + 4, name, NULL, 0, out);
	case NAMED_SDT_PLACE:
		if (strchr(a.argv[0], ':'))
			snprintf(head, sizeof(head), "%s", a.argv[0]);
		else
			snprintf(head, sizeof(head), "p:%s/%s", grp, name);
		ret = expand_sdt(objs, head, grp + 4, name, a.argv + 2,
				 a.argc - 2, out);
		dp_argv_free(&a);
		return ret;
	default:
		if (dp_cli_names_glob(def))
			return dp_cli_expand_glob(def, objs, out);
		return dp_cli_lines_push(out, strdup(def));
	}
}

/* ---- dprobe list ---------------------------------------------------------- */

void dp_cli_list_named(const char *path, const char *glob, FILE *out)
{
	char ev[2 * DP_MAX_EVENT_NAME_LEN + 8], err[256];
	struct dp_tp_desc *tp;
	struct dp_sdt_probe *sdt;
	struct dp_elf *elf;
	size_t n = 0;
	ssize_t ntp;

	if (!dp_elf_open(path, &elf)) {
		ntp = dp_elf_tracepoints(elf, &tp);
		for (ssize_t i = 0; i < ntp; i++) {
			snprintf(ev, sizeof(ev), "%s:%s", tp[i].group, tp[i].name);
			if (!glob || !fnmatch(glob, ev, 0))
				fprintf(out, "%-46s [Tracepoint event]\n", ev);
		}
		if (ntp > 0)
			free(tp);
		dp_elf_close(elf);
	}
	if (dp_sdt_read(path, &sdt, &n, err, sizeof(err)) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		bool dup = false;

		/* one line per probe, however many sites it has */
		for (size_t j = 0; j < i && !dup; j++)
			dup = !strcmp(sdt[j].provider, sdt[i].provider) &&
			      !strcmp(sdt[j].name, sdt[i].name);
		snprintf(ev, sizeof(ev), "sdt_%s:%s", sdt[i].provider,
			 sdt[i].name);
		if (!dup && (!glob || !fnmatch(glob, ev, 0)))
			fprintf(out, "%-46s [SDT event]\n", ev);
	}
	free(sdt);
}
