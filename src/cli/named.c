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
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/named.h"
#include "lang/argv.h"
#include "sym/elf.h"
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
	return ret ? 0 : add_libraries(o, binary, interp);
}

int dp_cli_objs_of_pid(struct dp_cli_objs *o, pid_t pid)
{
	char path[64], line[4096];
	FILE *f;
	int ret = 0;

	memset(o, 0, sizeof(*o));
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (!ret && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/');

		/* "(deleted)" files are gone: nothing to read */
		if (p && !strstr(p, " (deleted)")) {
			p[strcspn(p, "\n")] = '\0';
			ret = objs_add(o, p);
		}
	}
	fclose(f);
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

static int lines_push(struct dp_cli_lines *l, char *line)
{
	char **tmp;

	if (!line)
		return -ENOMEM;
	tmp = realloc(l->v, (l->n + 1) * sizeof(*tmp));
	if (!tmp) {
		free(line);
		return -ENOMEM;
	}
	l->v = tmp;
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
	return lines_push(out, line);
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

/* The default arguments of an SDT probe: argN=$argN for the arguments
 * its first site can express (the others are left out, with a note). */
static int default_sdt_args(const struct dp_sdt_probe *s, char ***argv,
			    int *argc)
{
	*argv = calloc(s->nargs + 1, sizeof(**argv));
	*argc = 0;
	if (!*argv)
		return -ENOMEM;
	for (unsigned i = 0; i < s->nargs; i++) {
		if (s->args[i].error) {
			fprintf(stderr, "dprobe: %s:%s: argument %u (%s) is left "
				"out: %s\n", s->provider, s->name, i + 1,
				s->args[i].spec, s->args[i].error);
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
	char err[256], why[256] = "";
	size_t found = 0;
	int ret = 0;

	for (size_t i = 0; !ret && i < o->n; i++) {
		struct dp_sdt_probe *v;
		size_t n = 0;
		char **dargv = NULL;
		int dargc = 0;

		if (dp_sdt_read(o->paths[i], &v, &n, err, sizeof(err)) < 0)
			continue;
		for (size_t j = 0; !ret && j < n; j++) {
			if (strcmp(v[j].provider, prov) || strcmp(v[j].name, name))
				continue;
			if (v[j].error) {
				fprintf(stderr, "dprobe: %s: a site of sdt_%s:%s "
					"is left out: %s\n", o->paths[i], prov,
					name, v[j].error);
				continue;
			}
			if (!argv && !dargv)
				ret = default_sdt_args(&v[j], &dargv, &dargc);
			if (!ret)
				ret = lines_push(out, site_line(head, o->paths[i],
					&v[j], argv ? argv : dargv,
					argv ? argc : dargc, why, sizeof(why)));
			found++;
		}
		free_argv(dargv, dargc);
		free(v);
	}
	if (ret && why[0])
		fprintf(stderr, "dprobe: sdt_%s:%s: %s\n", prov, name, why);
	else if (!ret && !found) {
		fprintf(stderr, "dprobe: no SDT probe %s:%s in %s or the "
			"libraries it loads\n", prov, name,
			o->n ? o->paths[0] : "the program");
		ret = -ENOENT;
	}
	return ret;
}

/* ---- definitions ---------------------------------------------------------- */

bool dp_cli_names_event(const char *def)
{
	char grp[DP_MAX_EVENT_NAME_LEN], name[DP_MAX_EVENT_NAME_LEN];
	const char *sp = def + strcspn(def, " \t");

	if (split_name(def, grp, sizeof(grp), name, sizeof(name)))
		return true;
	sp += strspn(sp, " \t");
	return def[0] == 'p' && !strncmp(sp, "sdt_", 4);
}

int dp_cli_expand(const char *def, const struct dp_cli_objs *objs,
		  struct dp_cli_lines *out)
{
	char grp[DP_MAX_EVENT_NAME_LEN], name[DP_MAX_EVENT_NAME_LEN];
	char head[2 * DP_MAX_EVENT_NAME_LEN + 4];
	struct dp_argv a;
	int ret;

	memset(out, 0, sizeof(*out));
	/* "GROUP:NAME" alone: a tracepoint or SDT probe with every field */
	if (split_name(def, grp, sizeof(grp), name, sizeof(name))) {
		if (strncmp(grp, "sdt_", 4))
			return expand_tracepoint(objs, grp, name, out);
		snprintf(head, sizeof(head), "p:%s/%s", grp, name);
		return expand_sdt(objs, head, grp + 4, name, NULL, 0, out);
	}
	/* "p[:EVENT] sdt_PROV:NAME ARGS": an SDT probe as a place */
	if (def[0] == 'p' && !dp_argv_split(def, &a)) {
		if (a.argc >= 2 && !strncmp(a.argv[1], "sdt_", 4) &&
		    split_name(a.argv[1], grp, sizeof(grp), name, sizeof(name))) {
			if (strchr(a.argv[0], ':'))
				snprintf(head, sizeof(head), "%s", a.argv[0]);
			else
				snprintf(head, sizeof(head), "p:%s/%s", grp,
					 name);
			ret = expand_sdt(objs, head, grp + 4, name, a.argv + 2,
					 a.argc - 2, out);
			dp_argv_free(&a);
			return ret;
		}
		dp_argv_free(&a);
	}
	return lines_push(out, strdup(def));
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
