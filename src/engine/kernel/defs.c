// SPDX-License-Identifier: GPL-2.0
/*
 * Registry events as kernel lines: private group names, the line each
 * probe is written as (symbol places of a program become PATH:OFFSET,
 * which is all uprobe_events takes), and the check that the kernel lays
 * an event's record out as dprobe does.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch/arch.h"
#include "engine/kernel/internal.h"
#include "sym/elf.h"
#include "sym/resolve.h"
#include "util/util.h"

/* The kernel's event and group names: at most 63 characters. */
#define KNAME_MAX	(DP_MAX_EVENT_NAME_LEN - 1)

void dp_kgroup_name(pid_t pid, const char *ugroup, char *out, size_t len)
{
	char pre[32];
	uint32_t h = 2166136261u;
	int n = snprintf(pre, sizeof(pre), DP_KGROUP_PREFIX "%d_", (int)pid);
	size_t keep;

	if ((size_t)n + strlen(ugroup) <= KNAME_MAX) {
		snprintf(out, len, "%s%s", pre, ugroup);
		return;
	}
	/* too long: a prefix of the name and a hash of all of it (FNV-1a),
	 * the same for the same name in every run */
	for (const char *p = ugroup; *p; p++)
		h = (h ^ (uint8_t)*p) * 16777619u;
	keep = KNAME_MAX - (size_t)n - 9;
	snprintf(out, len, "%s%.*s_%08x", pre, (int)keep, ugroup, h);
}

static pid_t parse_pid(const char *s, const char **end)
{
	long v = 0;

	if (*s < '1' || *s > '9')
		return 0;
	while (*s >= '0' && *s <= '9' && v < 100000000)
		v = v * 10 + (*s++ - '0');
	*end = s;
	return (pid_t)v;
}

pid_t dp_kgroup_pid(const char *group)
{
	const char *end;
	pid_t pid;

	if (strncmp(group, DP_KGROUP_PREFIX, strlen(DP_KGROUP_PREFIX)))
		return 0;
	pid = parse_pid(group + strlen(DP_KGROUP_PREFIX), &end);
	return pid && *end == '_' ? pid : 0;
}

pid_t dp_kinst_pid(const char *name)
{
	const char *end;
	pid_t pid;

	if (strncmp(name, DP_KINST_PREFIX, strlen(DP_KINST_PREFIX)))
		return 0;
	pid = parse_pid(name + strlen(DP_KINST_PREFIX), &end);
	return pid && !*end ? pid : 0;
}

/*
 * File and offset of a symbol place in a program: what the registry's
 * resolver found for places in the main binary, else the same lookup in
 * the object the MOD: names.
 */
static int user_place(const struct dp_kdefs_ctx *c, const struct dp_probe *p,
		      char **path, uint64_t *off, uint64_t *vaddr, char *why,
		      size_t whylen)
{
	struct dp_probe_def *def = (struct dp_probe_def *)&p->def;
	const char *file;
	struct dp_probe tmp = { 0 };
	struct dp_resolver res;
	char *mod = def->place.module, *canon;
	int ret;

	file = dp_module_file(c->binary, c->objs, c->nobjs, mod);
	if (mod && !file) {
		snprintf(why, whylen, "%s/%s: no object named %s in the program "
			 "(give its path as MOD)", p->event->group,
			 p->event->name, mod);
		return -ENOENT;
	}
	if (!file) {
		snprintf(why, whylen, "%s/%s: no program to look %s up in",
			 p->event->group, p->event->name,
			 def->place.symbol ? def->place.symbol : "the address");
		return -ENOENT;
	}
	/* the place as if MOD: were the default binary */
	canon = dp_probe_canonical(def);
	dp_resolver_init(&res, file, false);
	def->place.module = NULL;
	ret = canon ? dp_resolve_cb(&res, canon, def, &tmp, NULL) : -ENOMEM;
	def->place.module = mod;
	dp_resolver_free(&res);
	free(canon);
	if (ret || !tmp.vaddr) {
		snprintf(why, whylen, "%s/%s: %s cannot be turned into a file "
			 "offset for uprobe_events (a run-time address in a "
			 "position-independent object): give SYM or "
			 "PATH:OFFSET", p->event->group, p->event->name,
			 def->place.symbol ? def->place.symbol : "the address");
		return ret ? ret : -EINVAL;
	}
	*path = realpath(file, NULL);
	*off = tmp.file_offset;
	*vaddr = tmp.vaddr;
	return *path ? 0 : -errno;
}

/*
 * uprobe_events has no @SYM (only @+FOFFS: the address where the probe's
 * own segment is loaded, minus the probe's file offset, plus FOFFS:
 * FETCH_OP_FOFFS in trace_uprobe.c) and no :symbol type.  So @SYM[+-N] becomes @+X with X the
 * symbol's address translated by the probe's segment, and :symbol
 * (or :symbol[N]) becomes :x64 (the record is the same 8 bytes; dprobe
 * prints it as a symbol, from its own event).
 */
struct uarg_ctx {
	const struct dp_elf *e;
	uint64_t delta;		/* probe vaddr - probe file offset */
};

static bool sym_char(char ch)
{
	return ch == '_' || ch == '.' || (ch >= 'a' && ch <= 'z') ||
	       (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
}

/* @NAME[+-N] at *@pp: print @+X and move past it; -errno when unknown. */
static int put_usym(FILE *f, const struct uarg_ctx *u, const char **pp,
		    char *why, size_t whylen)
{
	const char *p = *pp + 1, *end = p;
	struct dp_elf_sym s;
	char name[256];
	long long add = 0;
	char *numend;

	while (sym_char(*end))
		end++;
	snprintf(name, sizeof(name), "%.*s", (int)(end - p), p);
	if (*end == '+' || *end == '-') {
		add = strtoll(end, &numend, 0);
		end = numend;
	}
	if (!u->e || dp_elf_lookup(u->e, name, &s)) {
		snprintf(why, whylen, "@%s: not a symbol of the probed object "
			 "(uprobe_events takes only @+FOFFS)", name);
		return -ENOENT;
	}
	fprintf(f, "@+0x%" PRIx64, s.value + (uint64_t)add - u->delta);
	*pp = end;
	return 0;
}

static int put_uarg(FILE *f, const struct uarg_ctx *u, const char *body,
		    char *why, size_t whylen)
{
	const char *p = body, *type = strrchr(body, ':');
	int ret;

	if (type && !strncmp(type, ":symbol", 7) &&
	    (!type[7] || type[7] == '[')) {
		fprintf(f, "%.*s:x64%s", (int)(type - body), body, type + 7);
		return 0;
	}
	if (body[0] == '\\') {		/* an immediate: taken as it is */
		fputs(body, f);
		return 0;
	}
	while (*p) {
		if (*p == '@' && sym_char(p[1]) && !(p[1] >= '0' && p[1] <= '9')) {
			ret = put_usym(f, u, &p, why, whylen);
			if (ret)
				return ret;
			continue;
		}
		fputc(*p++, f);
	}
	return 0;
}

static int put_args(FILE *f, const struct dp_probe_def *def, const char *path,
		    uint64_t off, char *why, size_t whylen)
{
	struct uarg_ctx u = { 0 };
	struct dp_elf *e = NULL;
	uint64_t vaddr;
	int ret = 0;

	if (path && !dp_elf_open(path, &e) && !dp_elf_off_to_vaddr(e, off, &vaddr))
		u = (struct uarg_ctx){ e, vaddr - off };
	for (unsigned i = 0; !ret && i < def->nargs; i++) {
		fprintf(f, " %s=", def->args[i].name);
		if (path)
			ret = put_uarg(f, &u, def->args[i].body, why, whylen);
		else
			fputs(def->args[i].body, f);
	}
	if (e)
		dp_elf_close(e);
	return ret;
}

/*
 * The kernel checks a uprobe's instruction only when it installs the
 * breakpoint, and where that happens at a later mmap() (a command
 * launched after its probes are enabled) a refusal is silent: the probe
 * never fires.  So its rules are applied here, before anything is
 * written.  Bytes that cannot be read are left to the kernel to judge.
 */
static int check_insn(const struct dp_probe *p, const char *path,
		      uint64_t off, char *why, size_t whylen)
{
	uint8_t code[DP_INSN_MAX_LEN];
	char reason[512], *place;
	ssize_t n;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = pread(fd, code, sizeof(code), (off_t)off);
	close(fd);
	if (n <= 0)
		return 0;
	ret = dp_kuprobe_check(code, (size_t)n, reason, sizeof(reason));
	if (!ret)
		return 0;
	place = dp_place_canonical(&p->def);
	snprintf(why, whylen, "%s/%s: the kernel cannot probe %s (%s:0x%"
		 PRIx64 "): %s", p->event->group, p->event->name,
		 place ? place : "the place", path, off, reason);
	free(place);
	return ret;
}

int dp_kdefs_line(const struct dp_kdefs_ctx *c, const struct dp_probe *p,
		  char **line, const char **file, char **path,
		  uint64_t *vaddr, char *why, size_t whylen)
{
	const struct dp_probe_def *def = &p->def;
	char kgroup[DP_MAX_EVENT_NAME_LEN], *place = NULL;
	uint64_t off = 0;
	size_t len = 0;
	FILE *f;
	int ret = 0;

	*path = NULL;
	*vaddr = 0;
	*line = NULL;
	if (def->kind == DP_KIND_TRACEPOINT) {
		snprintf(why, whylen, "%s/%s: application tracepoints are "
			 "enabled by the in-process engine, not the kernel's",
			 p->event->group, p->event->name);
		return -ENOTSUP;
	}
	dp_kgroup_name(c->pid, p->event->group, kgroup, sizeof(kgroup));
	if (def->kind == DP_KIND_UPROBE) {
		*path = realpath(def->place.path, NULL);
		if (!*path) {
			ret = -errno;
			snprintf(why, whylen, "%s: %s", def->place.path,
				 strerror(errno));
			return ret;
		}
		off = def->place.offset;
		*vaddr = p->vaddr;
		/* the kernel finds this only when the event is enabled, with
		 * a bare EINVAL: say it now, as the other engines do */
		if (def->place.ref_ctr & 1) {
			snprintf(why, whylen, "%s/%s: %s (reference counter "
				 "offset 0x%" PRIx64 " is odd: a counter is a "
				 "2-byte aligned unsigned short)",
				 p->event->group, p->event->name,
				 dp_err_message(DP_ERR_BAD_REFCNT),
				 def->place.ref_ctr);
			ret = -EINVAL;
			goto fail;
		}
	} else if (!c->kernel) {
		ret = user_place(c, p, path, &off, vaddr, why, whylen);
		if (ret)
			return ret;
	}
	if (*path && strpbrk(*path, " \t\n")) {
		snprintf(why, whylen, "%s: uprobe_events takes no path with "
			 "blanks", *path);
		ret = -EINVAL;
		goto fail;
	}
	if (*path && (ret = check_insn(p, *path, off, why, whylen)))
		goto fail;
	f = open_memstream(line, &len);
	if (!f) {
		ret = -ENOMEM;
		goto fail;
	}
	if (*path) {
		/* the kernel's uprobe parser: no MAXACTIVE */
		fprintf(f, "%c:%s/%s %s:0x%" PRIx64, def->is_return ? 'r' : 'p',
			kgroup, def->event, *path, off);
		if (def->kind == DP_KIND_UPROBE && def->place.ref_ctr)
			fprintf(f, "(0x%" PRIx64 ")", def->place.ref_ctr);
		*file = "uprobe_events";
	} else {
		place = dp_place_canonical(def);
		fputc(def->is_return ? 'r' : 'p', f);
		if (def->is_return && def->maxactive)
			fprintf(f, "%d", def->maxactive);
		fprintf(f, ":%s/%s %s", kgroup, def->event, place ? place : "");
		*file = "kprobe_events";
	}
	ret = put_args(f, def, *path, off, why, whylen);
	fclose(f);
	free(place);
	if (ret) {
		free(*line);
		*line = NULL;
		goto fail;
	}
	return *line ? 0 : -ENOMEM;
fail:
	free(*path);
	*path = NULL;
	return ret;
}

/* ---- format files ------------------------------------------------------- */

int dp_kdefs_check_format(const struct dp_event *ev, const char *kformat,
			  char *why, size_t whylen)
{
	char *mine = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&mine, &len);
	const char *kp = kformat, *mp;
	struct dp_kfield kf, mf;
	int kn, mn, ret = 0;

	if (!f)
		return -ENOMEM;
	dp_event_format(ev, f);
	fclose(f);
	if (!mine)
		return -ENOMEM;
	mp = mine;
	for (;;) {
		/* the common fields are the kernel's business */
		do
			kn = dp_kformat_next(&kp, &kf);
		while (kn && !strncmp(kf.name, "common_", 7));
		do
			mn = dp_kformat_next(&mp, &mf);
		while (mn && !strncmp(mf.name, "common_", 7));
		if (!kn && !mn)
			break;
		if (kn != mn || strcmp(kf.name, mf.name) ||
		    kf.offset != mf.offset || kf.size != mf.size) {
			snprintf(why, whylen, "the kernel lays out %s/%s "
				 "differently from dprobe (kernel: %s offset %u "
				 "size %u; dprobe: %s offset %u size %u)",
				 ev->group, ev->name, kn ? kf.name : "-",
				 kn ? kf.offset : 0, kn ? kf.size : 0,
				 mn ? mf.name : "-", mn ? mf.offset : 0,
				 mn ? mf.size : 0);
			ret = -EPROTO;
			break;
		}
	}
	free(mine);
	return ret;
}
