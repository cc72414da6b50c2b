// SPDX-License-Identifier: GPL-2.0
/*
 * C++ and Rust names (see demangle.h).  The demangler is the C++
 * runtime's own, __cxa_demangle() of libstdc++ (installed with g++),
 * loaded when first needed: dprobe does not link the C++ runtime, and
 * without it names stay mangled.  Rust's legacy mangling is C++'s.
 */
#include <ctype.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sym/demangle.h"
#include "sym/elf.h"

bool dp_demangle_on = true;

typedef char *(*cxa_demangle_fn)(const char *, char *, size_t *, int *);
static cxa_demangle_fn cxa_demangle;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void load(void)
{
	void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);

	if (h)
		cxa_demangle = (cxa_demangle_fn)dlsym(h, "__cxa_demangle");
}

/* Cut @s at its top-level parameter list: "a::b<c(d)>::f(int) const"
 * becomes "a::b<c(d)>::f". */
static void strip_params(char *s)
{
	int angle = 0;

	for (char *p = s; *p; p++) {
		if (*p == '<')
			angle++;
		else if (*p == '>' && angle)
			angle--;
		else if (*p == '(' && !angle && p != s) {
			/* "operator()" keeps its own parentheses */
			if (p - s >= 8 && !strncmp(p - 8, "operator", 8) &&
			    p[1] == ')') {
				p++;
				continue;
			}
			*p = '\0';
			return;
		}
	}
}

/*
 * Take off a template function's return type: "int ns::twice<int>(int)"
 * becomes "ns::twice<int>(int)" (the last blank before the name's
 * parameters, outside template arguments; not operator's own).
 */
static void strip_return(char *s)
{
	char *cut = NULL;
	int angle = 0;

	for (char *p = s; *p; p++) {
		if (*p == '<')
			angle++;
		else if (*p == '>' && angle)
			angle--;
		else if (*p == '(' && !angle)
			break;
		else if (*p == ' ' && !angle &&
			 !(p - s >= 8 && !strncmp(p - 8, "operator", 8)))
			cut = p + 1;
	}
	if (cut)
		memmove(s, cut, strlen(cut) + 1);
}

char *dp_demangle(const char *name, bool params)
{
	char *out;
	int st = -1;

	if (strncmp(name, "_Z", 2))
		return NULL;
	pthread_once(&load_once, load);
	if (!cxa_demangle)
		return NULL;
	out = cxa_demangle(name, NULL, NULL, &st);
	if (st || !out) {
		free(out);
		return NULL;
	}
	strip_return(out);
	if (!params)
		strip_params(out);
	return out;
}

/* A C++ name: "::" in it, or a parameter list after a name (a uprobe's
 * PATH:0xOFFSET(0xREF) is not one). */
bool dp_cxx_place(const char *place)
{
	const char *par = strchr(place, '(');

	if (strstr(place, "::"))
		return true;
	/* f(int), f(), not a uprobe's OFFSET(REF_CTR_OFFSET) */
	return par && (isalpha((unsigned char)place[0]) || place[0] == '_') &&
	       (isalpha((unsigned char)par[1]) || par[1] == '_' ||
		par[1] == ')');
}


/* @s without blanks, into @out: "f(int, char)" and "f(int,char)" match. */
static void squeeze(const char *s, char *out, size_t len)
{
	size_t k = 0;

	for (; *s && k + 1 < len; s++)
		if (!isspace((unsigned char)*s))
			out[k++] = *s;
	out[k] = '\0';
}

/* Whether @a and @b are at most 2 edits apart (a misspelt name). */
static bool near_name(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned row[128], prev, tmp;

	if (la >= 128 || lb >= 128 || (la > lb ? la - lb : lb - la) > 2)
		return false;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned best = prev + (a[i - 1] != b[j - 1]);

			tmp = row[j];
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			prev = tmp;
		}
	}
	return row[lb] <= 2;
}

static const char *last_part(const char *s)
{
	const char *p = s, *q;

	while ((q = strstr(p, "::")))
		p = q + 2;
	return p;
}

size_t dp_cxx_suggest(const struct dp_elf *elf, const char *name,
		      char **out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < dp_elf_nsyms(elf) && n < max; i++) {
		const struct dp_elf_sym *s = dp_elf_sym(elf, i);
		char *d;

		if (s->type != STT_FUNC || strncmp(s->name, "_Z", 2))
			continue;
		d = dp_demangle(s->name, false);
		if (d && (!strcmp(last_part(d), name) ||
			  near_name(last_part(d), name))) {
			bool dup = false;

			for (size_t k = 0; k < n; k++)
				dup |= !strcmp(out[k], d);
			if (!dup) {
				out[n++] = d;
				continue;
			}
		}
		free(d);
	}
	return n;
}

int dp_cxx_lookup(const struct dp_elf *elf, const char *name, char *sym,
		  size_t symlen, char *why, size_t whylen)
{
	bool full = strchr(name, '(') != NULL;
	char want[1024], got[1024], last[1024];
	const struct dp_elf_sym *hit[8];
	char *readable[8] = { 0 }, *near[3] = { 0 };
	size_t nhit = 0, nnear = 0, k;
	int ret;

	pthread_once(&load_once, load);
	squeeze(name, want, sizeof(want));
	snprintf(last, sizeof(last), "%s", last_part(want));
	strip_params(last);
	for (size_t i = 0; i < dp_elf_nsyms(elf); i++) {
		const struct dp_elf_sym *s = dp_elf_sym(elf, i);
		char *d;

		if (s->type != STT_FUNC && s->type != STT_GNU_IFUNC)
			continue;
		d = dp_demangle(s->name, full);
		if (!d)
			continue;
		squeeze(d, got, sizeof(got));
		if (!full)
			strip_params(got);
		if (!strcmp(got, want)) {
			bool dup = false;

			for (k = 0; k < nhit; k++)
				dup |= hit[k]->value == s->value;
			if (!dup && nhit < 8) {
				hit[nhit] = s;
				readable[nhit++] = dp_demangle(s->name, true);
			}
		} else if (nnear < 3 && (!strcmp(last_part(got), last) ||
					 near_name(got, want))) {
			near[nnear++] = dp_demangle(s->name, true);
		}
		free(d);
	}
	if (nhit == 1) {
		snprintf(sym, symlen, "%.*s", (int)hit[0]->base_len,
			 hit[0]->name);
		ret = 0;
	} else if (nhit > 1) {
		k = (size_t)snprintf(why, whylen, "%s is overloaded:", name);
		for (size_t i = 0; i < nhit && k < whylen; i++)
			k += (size_t)snprintf(why + k, whylen - k, "%s %s",
					      i ? "," : "", readable[i]);
		if (k < whylen)
			snprintf(why + k, whylen - k, "; name one with its "
				 "parameters");
		ret = -ENOTUNIQ;
	} else {
		k = (size_t)snprintf(why, whylen, "no function %s in %s%s",
				     name, dp_elf_path(elf), cxa_demangle ? "" :
				     " (libstdc++ is not installed: C++ names "
				     "cannot be read)");
		for (size_t i = 0; i < nnear && k < whylen; i++)
			k += (size_t)snprintf(why + k, whylen - k, "%s%s",
					      i ? ", " : "; did you mean: ",
					      near[i]);
		if (nnear && k < whylen)
			snprintf(why + k, whylen - k, "?");
		ret = -ENOENT;
	}
	for (k = 0; k < 8; k++) {
		free(readable[k]);
		if (k < 3)
			free(near[k]);
	}
	return ret;
}
