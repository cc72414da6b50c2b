// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel tracepoints (--kernel -e GROUP:NAME): enabled in the private
 * instance, their fields taken from the kernel's `format` file, each
 * record turned into dprobe's layout of it (event/kformat.h).
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/kernel/session.h"
#include "event/filter.h"
#include "event/kformat.h"

static int add_tracepoint(struct dp_kernel *k, const char *spec, char *why,
			  size_t whylen)
{
	char group[DP_MAX_EVENT_NAME_LEN], name[DP_MAX_EVENT_NAME_LEN];
	char rel[3 * DP_MAX_EVENT_NAME_LEN], *format;
	const char *colon = strchr(spec, ':');
	struct kev *e, *v;
	if (!colon || colon == spec || (size_t)(colon - spec) >= sizeof(group) ||
	    strlen(colon + 1) >= sizeof(name) || strchr(colon + 1, '/')) {
		snprintf(why, whylen, "'%s' is not GROUP:NAME", spec);
		return -EINVAL;
	}
	snprintf(group, sizeof(group), "%.*s", (int)(colon - spec), spec);
	snprintf(name, sizeof(name), "%s", colon + 1);
	snprintf(rel, sizeof(rel), "events/%s/%s/format", group, name);
	if (dp_tfs_read(&k->tfs, rel, &format, NULL)) {
		snprintf(why, whylen, "no kernel tracepoint %s:%s (see `dprobe "
			 "list --kernel`)", group, name);
		return -ENOENT;
	}
	v = realloc(k->kevs, (k->nkevs + 1) * sizeof(*v));
	if (!v) {
		free(format);
		return -ENOMEM;
	}
	k->kevs = v;
	e = memset(&v[k->nkevs++], 0, sizeof(*e));
	snprintf(e->kgroup, sizeof(e->kgroup), "%s", group);
	snprintf(e->kname, sizeof(e->kname), "%s", name);
	/* the registry's event for it, made from the same format (a dprobe
	 * mount made it before: its id and layout are kept) */
	e->tp = dp_ktp_parse(format);
	e->ev = e->tp ? dp_registry_kernel_tp(k->o.reg, group, name, format) :
		NULL;
	free(format);
	if (!e->ev) {
		snprintf(why, whylen, "%s:%s: out of memory, or an event of "
			 "that name that is not the kernel's", group, name);
		return -ENOMEM;
	}
	e->ev->enabled = true;
	return 0;
}

int dp_ktp_translate(struct dp_kernel *k, char *why, size_t whylen)
{
	int ret;

	for (size_t i = 0; i < k->o.ntracepoints; i++) {
		ret = add_tracepoint(k, k->o.tracepoints[i], why, whylen);
		if (ret)
			return ret;
	}
	return 0;
}

bool dp_kernel_tp_named(const char *tp, const char *event, size_t len)
{
	const char *colon = strchr(tp, ':');
	size_t glen;

	if (!colon)
		return false;
	glen = (size_t)(colon - tp);
	if (len == strlen(colon + 1) && !strncmp(event, colon + 1, len))
		return true;			/* NAME */
	return len == strlen(tp) && !strncmp(event, tp, glen) &&
	       (event[glen] == ':' || event[glen] == '/') &&
	       !strncmp(event + glen + 1, colon + 1, len - glen - 1);
}

/*
 * The --filter expressions of the session's tracepoints, compiled against
 * the fields their format gave, and run in user space as the other
 * events' are.  A bad one is reported as the kernel's filter error_log.
 */
int dp_ktp_filters(struct dp_kernel *k, char *why, size_t whylen)
{
	for (size_t i = 0; i < k->o.nfilters; i++) {
		const char *f = k->o.filters[i], *eq = strchr(f, '=');
		struct dp_filter_error fe = { 0 };

		for (size_t j = 0; eq && j < k->nkevs; j++) {
			struct kev *e = &k->kevs[j];
			char tp[2 * DP_MAX_EVENT_NAME_LEN + 1];

			if (e->file)
				continue;	/* a probe: trace.c set it */
			snprintf(tp, sizeof(tp), "%s:%s", e->ev->group,
				 e->ev->name);
			if (!dp_kernel_tp_named(tp, f, (size_t)(eq - f)))
				continue;
			if (dp_event_set_filter(e->ev, eq + 1, &fe)) {
				dp_filter_error_log_print(eq + 1, &fe, stderr);
				snprintf(why, whylen, "--filter: a bad filter for "
					 "%s", tp);
				return -EINVAL;
			}
		}
	}
	return 0;
}

int dp_ktp_enable(struct dp_kernel *k, struct kev *e, char *why,
		  size_t whylen)
{
	char rel[PATH_MAX], *id;
	int ret;

	snprintf(rel, sizeof(rel), "%s/events/%s/%s/id", k->inst, e->kgroup,
		 e->kname);
	ret = dp_tfs_read(&k->tfs, rel, &id, NULL);
	if (!ret) {
		e->kid = (unsigned)strtoul(id, NULL, 10);
		free(id);
		snprintf(rel, sizeof(rel), "%s/events/%s/%s/enable", k->inst,
			 e->kgroup, e->kname);
		ret = dp_tfs_write(&k->tfs, rel, "1");
	}
	if (ret)
		snprintf(why, whylen, "cannot enable %s:%s in %s: %s",
			 e->kgroup, e->kname, k->inst, dp_kstrerror(ret));
	return ret;
}

const uint8_t *dp_ktp_convert(struct dp_kernel *k, const struct kev *e,
			      const uint8_t *rec, size_t len, size_t *out_len)
{
	return dp_ktp_convert_rec(e->tp, (uint16_t)e->ev->id, rec, len,
				  &k->conv, &k->conv_cap, out_len);
}

void dp_kev_tp_free(struct kev *e)
{
	dp_ktp_free(e->tp);
	e->tp = NULL;
}

/* ---- dprobe list --kernel ------------------------------------------------ */

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int dp_kernel_list_tracepoints(const char *glob, FILE *out)
{
	char *text, *line, *save = NULL, **v = NULL, **nv, why[512];
	size_t n = 0, cap = 0;
	struct dp_tfs t;
	int ret = dp_tfs_find(&t, why, sizeof(why));

	if (ret) {
		fprintf(stderr, "dprobe: %s\n", why);
		return ret;
	}
	ret = dp_tfs_read(&t, "available_events", &text, NULL);
	if (ret) {
		fprintf(stderr, "dprobe: cannot read %s/available_events: %s\n",
			t.root, dp_kstrerror(ret));
		return ret;
	}
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (glob && fnmatch(glob, line, 0))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 1024;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				ret = -ENOMEM;
				break;
			}
			v = nv;
		}
		v[n++] = line;
	}
	if (!ret) {
		if (n)
			qsort(v, n, sizeof(*v), str_cmp);
		for (size_t i = 0; i < n; i++)
			fprintf(out, "%-46s [Tracepoint event]\n", v[i]);
	} else {
		fprintf(stderr, "dprobe: out of memory\n");
	}
	free(v);
	free(text);
	return ret;
}

/* ---- formats (a dprobe mount's events/syscalls/) -------------------------- */

int dp_kernel_tracepoint_formats(const char *glob,
				 int (*cb)(void *priv, const char *group,
					   const char *name, const char *format),
				 void *priv, char *why, size_t whylen)
{
	char *text, *line, *save = NULL, *format, rel[3 * DP_MAX_EVENT_NAME_LEN];
	struct dp_tfs t;
	int ret = dp_tfs_find(&t, why, whylen);

	if (ret)
		return ret;
	ret = dp_tfs_read(&t, "available_events", &text, NULL);
	if (ret) {
		snprintf(why, whylen, "cannot read %s/available_events: %s",
			 t.root, dp_kstrerror(ret));
		return ret;
	}
	for (line = strtok_r(text, "\n", &save); line && !ret;
	     line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':');

		if (!colon || fnmatch(glob, line, 0) ||
		    strlen(line) >= sizeof(rel) - 16)
			continue;
		*colon = '\0';
		snprintf(rel, sizeof(rel), "events/%s/%s/format", line,
			 colon + 1);
		if (dp_tfs_read(&t, rel, &format, NULL))
			continue;	/* gone since, or not readable */
		ret = cb(priv, line, colon + 1, format);
		free(format);
	}
	free(text);
	return ret;
}
