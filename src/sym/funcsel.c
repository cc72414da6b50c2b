// SPDX-License-Identifier: GPL-2.0
/*
 * Functions by pattern (funcsel.h).  A file's function symbols are
 * walked once in address order; each address is taken at most once
 * (aliases such as memcpy and __memcpy are one function), under the
 * first of its names a rule matches.
 */
#include <elf.h>
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sym/demangle.h"
#include "sym/elf.h"
#include "sym/funcsel.h"
#include "util/util.h"

static const char *const skip_names[DP_SKIP_N] = {
	[DP_SKIP_NOTRACE] = "notrace",
	[DP_SKIP_NOSIZE] = "no size",
	[DP_SKIP_IFUNC] = "IFUNC resolver",
	[DP_SKIP_RUNTIME] = "dprobe's runtime or the loader",
	[DP_SKIP_TRAMPOLINE] = "entry or signal trampoline",
	[DP_SKIP_NOTEXT] = "not in executable code",
	[DP_SKIP_NOTENTRY] = "not a function entry (.cold part)",
	[DP_SKIP_AMBIGUOUS] = "name not unique in its file",
};

const char *dp_func_skip_name(enum dp_func_skip why)
{
	return why < DP_SKIP_N ? skip_names[why] : "?";
}

bool dp_is_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

bool dp_funcsel_mod_is(const char *module, const char *path)
{
	const char *b = dp_base_name(path);
	size_t n = strlen(module);

	if (!strcmp(module, path) || !strcmp(module, b))
		return true;
	/* "libc" for libc.so.6, "libsqlite3" for libsqlite3.so.0.8.6 */
	return !strncmp(b, module, n) && !strncmp(b + n, ".so", 3);
}

/* One `[!]GLOB[:mod:MODULE]` word. */
static int add_rule(struct dp_funcsel *s, const char *w, size_t len,
		    char *err, size_t errlen)
{
	struct dp_funcrule r = { 0 }, *v;
	const char *mod;
	size_t glen;

	if (*w == '!') {
		r.neg = true;
		w++;
		len--;
	}
	mod = memmem(w, len, ":mod:", 5);
	glen = mod ? (size_t)(mod - w) : len;
	if (mod && mod + 5 == w + len) {
		snprintf(err, errlen, "%.*s: no module after :mod:", (int)len, w);
		return -EINVAL;
	}
	r.glob = glen ? strndup(w, glen) : strdup("*");
	r.mod = mod ? strndup(mod + 5, (size_t)(w + len - mod - 5)) : NULL;
	v = realloc(s->v, (s->n + 1) * sizeof(*v));
	if (!r.glob || (mod && !r.mod) || !v) {
		free(r.glob);
		free(r.mod);
		if (v)
			s->v = v;
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	s->v = v;
	s->v[s->n++] = r;
	return 0;
}

int dp_funcsel_add(struct dp_funcsel *s, const char *line, char *err,
		   size_t errlen)
{
	const char *sep = " \t\n,";

	for (const char *p = line + strspn(line, sep); *p;
	     p += strspn(p, sep)) {
		size_t len = strcspn(p, sep);
		int ret;

		if (len == 1 && *p == '!') {
			snprintf(err, errlen, "'!' without a function");
			return -EINVAL;
		}
		ret = add_rule(s, p, len, err, errlen);
		if (ret)
			return ret;
		p += len;
	}
	return 0;
}

void dp_funcsel_truncate(struct dp_funcsel *s, size_t n)
{
	while (s->n > n) {
		s->n--;
		free(s->v[s->n].glob);
		free(s->v[s->n].mod);
	}
}

void dp_funcsel_free(struct dp_funcsel *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].glob);
		free(s->v[i].mod);
	}
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* Whether rule @r is about file @path: a rule without :mod: is about
 * every file, as the kernel's is about the kernel and every module. */
static bool rule_covers(const struct dp_funcrule *r, const char *path)
{
	return !r->mod || dp_funcsel_mod_is(r->mod, path);
}

/* @name (length @len, no version) against @glob, and a C++ name's
 * demangled form without its parameters ("ns::cls::*"). */
static bool name_matches(const char *glob, const char *name, size_t len)
{
	char buf[512];
	char *dm;
	bool hit;

	if (len >= sizeof(buf))
		return false;
	memcpy(buf, name, len);
	buf[len] = '\0';
	if (!fnmatch(glob, buf, 0))
		return true;
	if (strncmp(buf, "_Z", 2) || !strstr(glob, "::"))
		return false;
	dm = dp_demangle(buf, false);
	hit = dm && !fnmatch(glob, dm, 0);
	free(dm);
	return hit;
}

/* The verdict of @s's rules on one name: +1 in, -1 out, 0 not named. */
static int verdict(const struct dp_funcsel *s, const char *path,
		   const char *name, size_t len)
{
	int v = 0;

	for (size_t i = 0; i < s->n; i++) {
		const struct dp_funcrule *r = &s->v[i];

		if (!rule_covers(r, path) || (r->neg ? v < 0 : v > 0))
			continue;
		if (name_matches(r->glob, name, len))
			v = r->neg ? -1 : 1;
	}
	return v;
}

static bool has_positive_rule(const struct dp_funcsel *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (!s->v[i].neg)
			return true;
	return false;
}

/* Code that must not be probed whatever the rules say. */
static int unsafe(const struct dp_elf *e, const struct dp_elf_sym *s,
		  bool runtime)
{
	static const char *const stubs[] = { "_start", "__restore_rt",
					     "_dl_start", "_dl_start_user" };

	if (runtime)
		return DP_SKIP_RUNTIME;
	if (s->type == STT_GNU_IFUNC)
		return DP_SKIP_IFUNC;
	for (size_t i = 0; i < sizeof(stubs) / sizeof(stubs[0]); i++)
		if (s->base_len == strlen(stubs[i]) &&
		    !strncmp(s->name, stubs[i], s->base_len))
			return DP_SKIP_TRAMPOLINE;
	if (!s->size)
		return DP_SKIP_NOSIZE;
	/* jumped to from its function's body: a return probe there would
	 * take whatever is on the stack for a return address */
	if (memmem(s->name, s->base_len, ".cold", 5))
		return DP_SKIP_NOTENTRY;
	if (!dp_elf_vaddr_is_exec(e, s->value) ||
	    !dp_elf_vaddr_is_exec(e, s->value + s->size - 1))
		return DP_SKIP_NOTEXT;
	return -1;
}

/* dprobe's agent and the dynamic loader run the probes: never probed. */
static bool is_runtime(const char *path)
{
	const char *b = dp_base_name(path);

	return !strncmp(b, "libdprobe.so", 12) || !strncmp(b, "ld-linux", 8);
}

static int push(struct dp_funclist *l, size_t *cap, const char *path,
		const struct dp_elf *e, const struct dp_elf_sym *s)
{
	struct dp_elf_sym one;
	struct dp_func *f;
	char *name;

	if (l->n == *cap) {
		size_t c = *cap ? *cap * 2 : 256;
		struct dp_func *v = realloc(l->v, c * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		*cap = c;
	}
	name = strndup(s->name, s->base_len);
	if (!name)
		return -ENOMEM;
	f = &l->v[l->n++];
	f->path = path;
	f->name = name;
	f->vaddr = s->value;
	f->size = s->size;
	f->unique = !dp_elf_lookup(e, name, &one) && one.value == s->value;
	return 0;
}

/* What a selection is asked for. */
struct sel {
	const struct dp_funcsel *filter, *notrace;
	bool all;		/* no rule puts functions in: the program's */
	bool aliases;		/* every name of a function, for a listing */
};

/* The functions of one file. */
static int select_file(struct dp_funclist *l, size_t *cap, const char *path,
		       bool main, const struct sel *q)
{
	bool runtime = is_runtime(path);
	uint64_t last = UINT64_MAX;
	struct dp_elf *e;
	int ret = dp_elf_open(path, &e);

	if (ret)
		return ret;
	for (size_t i = 0; !ret && i < dp_elf_nsyms(e); i++) {
		const struct dp_elf_sym *s = dp_elf_sym(e, i);
		int v, why;

		if ((s->type != STT_FUNC && s->type != STT_GNU_IFUNC) ||
		    (s->value == last && !q->aliases))
			continue;
		v = verdict(q->filter, path, s->name, s->base_len);
		if (v < 0 || (v == 0 && !(q->all && main)))
			continue;
		last = s->value;
		l->matched++;
		why = unsafe(e, s, runtime);
		if (why < 0 &&
		    verdict(q->notrace, path, s->name, s->base_len) > 0)
			why = DP_SKIP_NOTRACE;
		if (why >= 0)
			l->skipped[why]++;
		else
			ret = push(l, cap, path, e, s);
	}
	dp_elf_close(e);
	return ret;
}

/* Whether a rule of @s puts functions of file @path in. */
static bool names_file(const struct dp_funcsel *s, const char *path)
{
	for (size_t i = 0; i < s->n; i++)
		if (!s->v[i].neg && rule_covers(&s->v[i], path))
			return true;
	return false;
}

static int select_all(const char *const *paths, size_t npaths,
		      const struct sel *q, struct dp_funclist *out, char *err,
		      size_t errlen)
{
	size_t cap = 0;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < npaths; i++) {
		bool main = i == 0;
		int ret;

		if (!(q->all && main) && !names_file(q->filter, paths[i]))
			continue;
		ret = select_file(out, &cap, paths[i], main, q);
		if (ret) {
			snprintf(err, errlen, "%s: %s", paths[i],
				 ret == -ENOMEM ? strerror(ENOMEM) :
				 dp_elf_strerror());
			dp_funclist_free(out);
			return ret;
		}
	}
	return 0;
}

int dp_funcs_select(const char *const *paths, size_t npaths,
		    const struct dp_funcsel *filter,
		    const struct dp_funcsel *notrace,
		    struct dp_funclist *out, char *err, size_t errlen)
{
	struct sel q = { filter, notrace, !has_positive_rule(filter), false };

	return select_all(paths, npaths, &q, out, err, errlen);
}

int dp_funcs_names(const char *const *paths, size_t npaths,
		   const struct dp_funcsel *filter, struct dp_funclist *out,
		   char *err, size_t errlen)
{
	static const struct dp_funcsel none;
	struct sel q = { filter, &none, !has_positive_rule(filter), true };

	return select_all(paths, npaths, &q, out, err, errlen);
}

void dp_funclist_free(struct dp_funclist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].name);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/*
 * The place of @f as a definition names it: its name where that is one
 * address, else its file offset (two static functions of one name).
 */
int dp_func_place(const struct dp_func *f, const char *mod, size_t modlen,
		  char *buf, size_t len)
{
	struct dp_elf *e;
	uint64_t off;
	int ret;

	if (f->unique) {
		snprintf(buf, len, "%.*s%s%s", (int)modlen, mod ? mod : "",
			 mod ? ":" : "", f->name);
		return 0;
	}
	ret = dp_elf_open(f->path, &e);
	if (ret)
		return ret;
	ret = dp_elf_vaddr_to_off(e, f->vaddr, &off);
	dp_elf_close(e);
	if (!ret)
		snprintf(buf, len, "%s:0x%" PRIx64, f->path, off);
	return ret;
}
