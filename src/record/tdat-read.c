// SPDX-License-Identifier: GPL-2.0
/*
 * Reading a trace.dat dprobe wrote: the header (formats, tasks, dprobe's
 * option; version 7's in tdat-read7.c), then each CPU's pages decoded as
 * the ring buffer lays records out and merged in time order.  A file cut short is read up to its last
 * whole page, and what is missing is said (dp_tdat_damage()); a page
 * whose records run past its end stops its CPU, never the read.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lang/layout.h"
#include "record/tdat-common.h"
#include "record/tdat-reader.h"
#include "record/tracedat.h"

/* ---- the header ------------------------------------------------------- */

void tdat_say(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

int tdat_rd(struct dp_tdat *t, void *p, size_t n)
{
	return fread(p, 1, n, t->f) == n ? 0 : -1;
}

int tdat_rd32(struct dp_tdat *t, uint32_t *v)
{
	return tdat_rd(t, v, 4);
}

int tdat_rd64(struct dp_tdat *t, uint64_t *v)
{
	return tdat_rd(t, v, 8);
}

/* A string up to its NUL, at most @n bytes with it. */
int tdat_rd_str(struct dp_tdat *t, char *buf, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int c = fgetc(t->f);

		if (c == EOF)
			return -1;
		buf[i] = (char)c;
		if (!c)
			return 0;
	}
	return -1;
}

/* @n bytes as a NUL-terminated malloc'd string; NULL past the file. */
static char *rd_blob(struct dp_tdat *t, uint64_t n)
{
	char *s;

	if (n > t->size)
		return NULL;
	s = malloc(n + 1);
	if (s && tdat_rd(t, s, n)) {
		free(s);
		return NULL;
	}
	if (s)
		s[n] = 0;
	return s;
}

static int skip(struct dp_tdat *t, uint64_t n)
{
	return n > t->size ? -1 : fseeko(t->f, (off_t)n, SEEK_CUR);
}

static int rd_sized_skip(struct dp_tdat *t, bool wide)
{
	uint64_t n = 0;
	uint32_t n32;

	if (wide ? tdat_rd64(t, &n) : tdat_rd32(t, &n32))
		return -1;
	return skip(t, wide ? n : n32);
}

static struct dp_tdat_event *event_by_id(struct dp_tdat *t, unsigned id)
{
	for (size_t i = 0; i < t->nevents; i++)
		if (t->events[i].id == id)
			return &t->events[i];
	return NULL;
}

static struct dp_tdat_event *event_add(struct dp_tdat *t, unsigned id)
{
	struct dp_tdat_event *e = event_by_id(t, id), *v;

	if (e)
		return e;
	v = realloc(t->events, (t->nevents + 1) * sizeof(*v));
	if (!v)
		return NULL;
	t->events = v;
	e = &v[t->nevents++];
	memset(e, 0, sizeof(*e));
	e->id = id;
	return e;
}

/* One `format` text: its name and ID. */
static int rd_format(struct dp_tdat *t, const char *system)
{
	uint64_t n;
	char *text, name[64];
	const char *idl;
	unsigned id;
	struct dp_tdat_event *e;

	if (tdat_rd64(t, &n) || !(text = rd_blob(t, n)))
		return -1;
	idl = strstr(text, "\nID: ");
	if (sscanf(text, "name: %63s", name) != 1 || !idl ||
	    sscanf(idl, "\nID: %u", &id) != 1 || !(e = event_add(t, id))) {
		free(text);
		return -1;
	}
	free(e->format);
	e->format = text;
	snprintf(e->system, sizeof(e->system), "%s", system);
	snprintf(e->name, sizeof(e->name), "%s", name);
	return 0;
}

int tdat_rd_formats(struct dp_tdat *t)
{
	uint32_t nsys, nev;
	char system[64];

	if (tdat_rd32(t, &nsys))
		return -1;
	for (uint32_t i = 0; i < nsys; i++) {
		if (tdat_rd_str(t, system, sizeof(system)) || tdat_rd32(t, &nev))
			return -1;
		for (uint32_t k = 0; k < nev; k++)
			if (rd_format(t, system))
				return -1;
	}
	return 0;
}

/* A new entry for @pid: the names and groups of one thread are merged
 * once the header is read (tdat_tasks_index()). */
static struct task *task_add(struct dp_tdat *t, int pid)
{
	struct task *v;

	if (t->ntasks == t->tasks_cap) {
		size_t cap = t->tasks_cap ? 2 * t->tasks_cap : 64;

		v = realloc(t->tasks, cap * sizeof(*v));
		if (!v)
			return NULL;
		t->tasks = v;
		t->tasks_cap = cap;
	}
	v = &t->tasks[t->ntasks++];
	memset(v, 0, sizeof(*v));
	v->pid = pid;
	return v;
}

static int task_cmp(const void *a, const void *b)
{
	const struct task *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	if (x->mm != y->mm)
		return (x->mm > y->mm) - (x->mm < y->mm);
	return (x->start > y->start) - (x->start < y->start);
}

/* Tasks sorted by thread, one entry each (a name and a group merged);
 * symbols sorted by process and start: both looked up by bisection,
 * once per record. */
void tdat_tasks_index(struct dp_tdat *t)
{
	size_t n = 0;

	if (t->ntasks)
		qsort(t->tasks, t->ntasks, sizeof(*t->tasks), task_cmp);
	for (size_t i = 0; i < t->ntasks; i++) {
		struct task *k = &t->tasks[i];

		if (n && t->tasks[n - 1].pid == k->pid) {
			struct task *m = &t->tasks[n - 1];

			if (k->tgid)
				m->tgid = k->tgid;
			if (k->comm[0])
				memcpy(m->comm, k->comm, sizeof(m->comm));
			continue;
		}
		t->tasks[n++] = *k;
	}
	t->ntasks = n;
	if (t->nsyms)
		qsort(t->syms, t->nsyms, sizeof(*t->syms), sym_cmp);
}

int tdat_rd_cmdlines(struct dp_tdat *t)
{
	uint64_t n;
	char *text, *line, *save = NULL;

	if (tdat_rd64(t, &n) || !(text = rd_blob(t, n)))
		return -1;
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		int pid, at = 0;
		struct task *k;

		if (sscanf(line, "%d %n", &pid, &at) < 1 || !at ||
		    !(k = task_add(t, pid)))
			continue;
		snprintf(k->comm, sizeof(k->comm), "%s", line + at);
	}
	free(text);
	return 0;
}

static void opt_sym(struct dp_tdat *t, const char *line)
{
	struct sym s = { 0 }, *v;
	const char *tab = strchr(line, '\t');

	if (!tab || sscanf(line, "sym %d %" SCNx64 " %" SCNx64, &s.mm,
			   &s.start, &s.size) != 3 || !(s.name = strdup(tab + 1)))
		return;
	v = realloc(t->syms, (t->nsyms + 1) * sizeof(*v));
	if (!v) {
		free(s.name);
		return;
	}
	t->syms = v;
	v[t->nsyms++] = s;
}

static void opt_def(struct dp_tdat *t, const char *line, const char *kind)
{
	const char *tab = strchr(line, '\t');
	struct dp_tdat_event *e;
	unsigned id;
	size_t old;
	char *s;

	if (!tab || sscanf(line + strlen(kind), " %u", &id) != 1 ||
	    !(e = event_add(t, id)))
		return;
	/* several probes of one event: one line each, kept in order */
	old = e->def ? strlen(e->def) : 0;
	s = realloc(e->def, old + strlen(line) + 2);
	if (!s)
		return;
	if (old)
		s[old++] = '\n';
	strcpy(s + old, tab + 1);
	e->def = s;
	snprintf(e->kind, sizeof(e->kind), "%s", kind);
}

/* dprobe's option: its version first, then one line a fact. */
int tdat_rd_dprobe_option(struct dp_tdat *t, char *text, char *err,
			    size_t errlen)
{
	char *line, *save = NULL;
	int version = 0;

	if (sscanf(text, DP_TDAT_MAGIC_WORD " %d", &version) != 1) {
		tdat_say(err, errlen, "its dprobe part is not well formed");
		return -1;
	}
	if (version > DP_TDAT_VERSION) {
		tdat_say(err, errlen, "written by a newer dprobe (recording version "
		    "%d; this dprobe reads %d): read it with that dprobe or "
		    "with trace-cmd report", version, DP_TDAT_VERSION);
		return -1;
	}
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		int pid, tgid;
		struct task *k;

		if (!strncmp(line, "def ", 4))
			opt_def(t, line, "def");
		else if (!strncmp(line, "synth ", 6))
			opt_def(t, line, "synth");
		else if (!strncmp(line, "ktp ", 4))
			opt_def(t, line, "ktp");
		else if (!strncmp(line, "sym ", 4))
			opt_sym(t, line);
		else if (sscanf(line, "task %d %d", &pid, &tgid) == 2 &&
			 (k = task_add(t, pid)))
			k->tgid = tgid;
	}
	return 0;
}

/* The options up to "flyrecord": 1 if dprobe's was there. */
static int rd_options(struct dp_tdat *t, char *err, size_t errlen)
{
	int found = 0;

	for (;;) {
		uint16_t id;
		uint32_t n;
		char *text;

		if (tdat_rd(t, &id, 2))
			return -1;
		if (!id)
			return found;
		if (tdat_rd32(t, &n))
			return -1;
		if (id != DP_TDAT_OPTION) {
			if (skip(t, n))
				return -1;
			continue;
		}
		if (!(text = rd_blob(t, n)))
			return -1;
		found = tdat_rd_dprobe_option(t, text, err, errlen) ? -2 : 1;
		free(text);
		if (found < 0)
			return found;
	}
}

void tdat_damage(struct dp_tdat *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->damage_len >= sizeof(t->damage) - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(t->damage + t->damage_len,
		      sizeof(t->damage) - t->damage_len, fmt, ap);
	va_end(ap);
	if (n > 0)
		t->damage_len = t->damage_len + (size_t)n < sizeof(t->damage) ?
				t->damage_len + (size_t)n : sizeof(t->damage) - 1;
}

/* Each CPU's data: what of it the file holds, in whole pages. */
static int rd_cpus(struct dp_tdat *t, uint32_t ncpus)
{
	t->cpu = calloc(ncpus ? ncpus : 1, sizeof(*t->cpu));
	if (!t->cpu)
		return -1;
	t->ncpus = (int)ncpus;
	for (uint32_t i = 0; i < ncpus; i++) {
		struct cursor *c = &t->cpu[i];
		uint64_t size, have;

		if (tdat_rd64(t, &c->off) || tdat_rd64(t, &size))
			return -1;
		have = c->off < t->size ? t->size - c->off : 0;
		if (have > size)
			have = size;
		c->npages = have / DP_TDAT_PAGE;
		if (c->npages * DP_TDAT_PAGE < size)
			tdat_damage(t, "CPU %u: %" PRIu64 " of its %" PRIu64 " pages "
			       "are in the file (it was cut)\n", i, c->npages,
			       size / DP_TDAT_PAGE);
	}
	return 0;
}

static int rd_head(struct dp_tdat *t, char *err, size_t errlen)
{
	uint8_t magic[10], el[2];
	char version[16], word[16];
	uint32_t page, ncpus, n32;
	int opt;

	if (tdat_rd(t, magic, 10) || memcmp(magic, "\x17\x08\x44tracing", 10)) {
		tdat_say(err, errlen, "not a trace.dat file");
		return -1;
	}
	if (tdat_rd_str(t, version, sizeof(version)))
		snprintf(version, sizeof(version), "?");
	if (strcmp(version, "6") && strcmp(version, "7")) {
		tdat_say(err, errlen, "a trace.dat of version %s: not one dprobe "
		    "wrote (dprobe writes versions 6 and 7); read it with "
		    "trace-cmd report", version);
		return -1;
	}
	if (tdat_rd(t, el, 2) || el[0] || el[1] != 8 || tdat_rd32(t, &page) ||
	    page != DP_TDAT_PAGE) {
		tdat_say(err, errlen, "not a little-endian 64-bit recording with "
		    "4 KiB pages: not one dprobe wrote");
		return -1;
	}
	if (!strcmp(version, "7"))
		return tdat_head7(t, err, errlen);
	if (tdat_rd_str(t, word, sizeof(word)) || strcmp(word, "header_page") ||
	    rd_sized_skip(t, true) || tdat_rd_str(t, word, sizeof(word)) ||
	    strcmp(word, "header_event") || rd_sized_skip(t, true) ||
	    tdat_rd32(t, &n32))
		goto cut;
	for (uint32_t i = 0; i < n32; i++)
		if (rd_sized_skip(t, true))
			goto cut;
	if (tdat_rd_formats(t) || rd_sized_skip(t, false) ||
	    rd_sized_skip(t, false) || tdat_rd_cmdlines(t) || tdat_rd32(t, &ncpus) ||
	    ncpus > DP_TDAT_MAX_CPUS || tdat_rd(t, word, 10))
		goto cut;
	opt = 0;
	if (!memcmp(word, "options  ", 10)) {
		opt = rd_options(t, err, errlen);
		if (opt == -2)
			return -1;
		if (opt < 0 || tdat_rd(t, word, 10))
			goto cut;
	}
	if (opt != 1) {
		tdat_say(err, errlen, "a trace.dat dprobe did not write (it has no "
		    "dprobe part): read it with trace-cmd report");
		return -1;
	}
	if (memcmp(word, "flyrecord", 10)) {
		tdat_say(err, errlen, "a latency-format trace.dat: not one dprobe "
		    "wrote");
		return -1;
	}
	if (rd_cpus(t, ncpus))
		goto cut;
	tdat_tasks_index(t);
	return 0;
cut:
	tdat_say(err, errlen, "the file ends inside its header (cut, or not a "
	    "trace.dat): nothing to read");
	return -1;
}

struct dp_tdat *dp_tdat_open(const char *path, char *err, size_t errlen)
{
	struct dp_tdat *t = calloc(1, sizeof(*t));
	struct stat st;

	if (!t) {
		tdat_say(err, errlen, "%s", strerror(ENOMEM));
		return NULL;
	}
	t->f = fopen(path, "rbe");
	if (!t->f || fstat(fileno(t->f), &st)) {
		tdat_say(err, errlen, "%s", strerror(errno));
		dp_tdat_close(t);
		return NULL;
	}
	t->size = (uint64_t)st.st_size;
	if (rd_head(t, err, errlen)) {
		dp_tdat_close(t);
		return NULL;
	}
	return t;
}

void dp_tdat_close(struct dp_tdat *t)
{
	if (!t)
		return;
	if (t->f)
		fclose(t->f);
	for (size_t i = 0; i < t->nevents; i++) {
		free(t->events[i].def);
		free(t->events[i].format);
	}
	for (size_t i = 0; i < t->nsyms; i++)
		free(t->syms[i].name);
	free(t->events);
	free(t->tasks);
	free(t->syms);
	for (int i = 0; t->cpu && i < t->ncpus; i++) {
		free(t->cpu[i].chunks);
		free(t->cpu[i].zbuf);
	}
	tdat_zclose(t);
	free(t->cpu);
	free(t);
}

size_t dp_tdat_nevents(const struct dp_tdat *t)
{
	return t->nevents;
}

const struct dp_tdat_event *dp_tdat_event(const struct dp_tdat *t, size_t i)
{
	return i < t->nevents ? &t->events[i] : NULL;
}

int dp_tdat_ncpus(const struct dp_tdat *t)
{
	return t->ncpus;
}

static const struct task *task_of(const struct dp_tdat *t, int pid)
{
	struct task key = { .pid = pid };

	return t->ntasks ? bsearch(&key, t->tasks, t->ntasks,
				   sizeof(*t->tasks), task_cmp) : NULL;
}

int dp_tdat_tgid(const struct dp_tdat *t, int pid)
{
	const struct task *k = task_of(t, pid);

	return k ? k->tgid : 0;
}

const char *dp_tdat_comm(const struct dp_tdat *t, int pid)
{
	const struct task *k = task_of(t, pid);

	return k && k->comm[0] ? k->comm : NULL;
}

const char *dp_tdat_damage(const struct dp_tdat *t)
{
	return t->damage;
}

/* ---- symbols ---------------------------------------------------------- */

static int sym_lookup(void *priv, uint64_t addr, const char **name,
		      uint64_t *off, uint64_t *size)
{
	const struct sym_scope *sc = priv;
	const struct dp_tdat *t = sc->t;
	size_t lo = 0, hi = t->nsyms;
	const struct sym *s;

	/* the last symbol of the process starting at or below @addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct sym *m = &t->syms[mid];

		if (m->mm < sc->mm || (m->mm == sc->mm && m->start <= addr))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -1;
	s = &t->syms[lo - 1];
	if (s->mm != sc->mm ||
	    !(addr < s->start + s->size || addr == s->start))
		return -1;
	*name = s->name;
	*off = addr - s->start;
	*size = s->size;
	return 0;
}

void dp_tdat_symbolizer(struct dp_tdat *t, int tgid, struct dp_symbolizer *s)
{
	t->scope.t = t;
	t->scope.mm = tgid;
	s->lookup = sym_lookup;
	s->priv = &t->scope;
}

/* ---- records ---------------------------------------------------------- */

/* The next page of @c: 0, or -1 at its end. */
static int page_load(struct dp_tdat *t, struct cursor *c, int cpu)
{
	uint64_t commit;

	for (;;) {
		if (c->next_page >= c->npages)
			return -1;
		if (c->chunks) {
			if (tdat_zpage_read(t, c, cpu))
				continue;
		} else if (pread(fileno(t->f), c->page, DP_TDAT_PAGE,
				 (off_t)(c->off + c->next_page++ *
					 DP_TDAT_PAGE)) != DP_TDAT_PAGE) {
			tdat_damage(t, "CPU %d: a page could not be read: %s\n", cpu,
			       strerror(errno ? errno : EIO));
			c->npages = 0;
			return -1;
		}
		commit = tdat_get64(c->page + 8);
		c->ts = tdat_get64(c->page);
		c->pos = 0;
		c->end = commit & DP_RB_COMMIT_MASK;
		if (c->end > DP_TDAT_PAGE_DATA ||
		    ((commit & DP_RB_MISSED_STORED) &&
		     c->end + 8 > DP_TDAT_PAGE_DATA)) {
			tdat_damage(t, "CPU %d: page %" PRIu64 " is not well formed: "
			       "skipped\n", cpu, c->next_page - 1);
			continue;
		}
		if (commit & DP_RB_MISSED_EVENTS) {
			unsigned long n = commit & DP_RB_MISSED_STORED ?
				tdat_get64(c->page + DP_TDAT_PAGE_HEAD + c->end) :
				DP_LOST_UNKNOWN;

			c->lost = c->lost_pending && c->lost != DP_LOST_UNKNOWN &&
				  n != DP_LOST_UNKNOWN ? c->lost + n : n;
			c->lost_pending = true;
		}
		c->loaded = true;
		return 0;
	}
}

/* Decode @c's next data record into c->rec: 0, or -1 at its end. */
static int cursor_advance(struct dp_tdat *t, struct cursor *c, int cpu)
{
	for (;;) {
		const uint8_t *d;
		uint32_t head, type, len;
		uint64_t delta;

		if ((!c->loaded || c->pos + 4 > c->end) &&
		    page_load(t, c, cpu))
			return -1;
		if (c->pos + 4 > c->end)
			continue;
		d = c->page + DP_TDAT_PAGE_HEAD + c->pos;
		head = tdat_get32(d);
		type = head & 31;
		delta = head >> 5;
		if (type == DP_RB_TYPE_PADDING || type == DP_RB_TYPE_TIME_EXTEND ||
		    type == DP_RB_TYPE_TIME_STAMP || type == 0) {
			if (c->pos + 8 > c->end)
				goto bad;
			len = tdat_get32(d + 4);
		} else {
			len = type * 4;
		}
		switch (type) {
		case DP_RB_TYPE_PADDING:
			/* the rest of the page, or a record discarded */
			c->pos = len && c->pos + 4 + len <= c->end ?
				 c->pos + 4 + len : c->end;
			c->ts += delta;
			continue;
		case DP_RB_TYPE_TIME_EXTEND:
			c->ts += delta | (uint64_t)len << DP_RB_DELTA_BITS;
			c->pos += 8;
			continue;
		case DP_RB_TYPE_TIME_STAMP:
			c->ts = delta | (uint64_t)len << DP_RB_DELTA_BITS;
			c->pos += 8;
			continue;
		case 0:
			if (len < 4 || c->pos + 4 + len > c->end)
				goto bad;
			c->rec = d + 8;
			c->rec_len = len - 4;
			c->pos += 4 + len;
			break;
		default:
			if (c->pos + 4 + len > c->end)
				goto bad;
			c->rec = d + 4;
			c->rec_len = len;
			c->pos += 4 + len;
			break;
		}
		c->ts += delta;
		c->rec_ts = c->ts;
		c->have = true;
		return 0;
bad:
		tdat_damage(t, "CPU %d: page %" PRIu64 " has a record past its end: "
		       "the rest of the page skipped\n", cpu, c->next_page - 1);
		c->pos = c->end;
	}
}

static unsigned rec_id(const uint8_t *r, size_t len)
{
	return len >= 2 ? (unsigned)(r[0] | r[1] << 8) : 0;
}

/* A stack record right after the one handed out: its frames into @r. */
static void take_stack(struct dp_tdat *t, struct cursor *c, int cpu,
		       struct dp_tdat_rec *r)
{
	uint32_t loc, off, n;

	if (!c->have && cursor_advance(t, c, cpu))
		return;
	if (rec_id(c->rec, c->rec_len) != DP_TDAT_STACK_ID || c->rec_len < 12)
		return;
	loc = tdat_get32(c->rec + 8);
	off = loc & 0xffff;
	n = (loc >> 16) / 8;
	if (n > DP_STACK_MAX)
		n = DP_STACK_MAX;
	if (off + n * 8 <= c->rec_len) {
		memcpy(t->stack, c->rec + off, n * 8);
		r->stack = t->stack;
		r->nstack = n;
	}
	c->have = false;
}

int dp_tdat_next(struct dp_tdat *t, struct dp_tdat_rec *r)
{
	struct cursor *best = NULL;
	int cpu = -1;

	memset(r, 0, sizeof(*r));
	for (int i = 0; i < t->ncpus; i++) {
		struct cursor *c = &t->cpu[i];

		if (!c->have && cursor_advance(t, c, i)) {
			if (c->lost_pending) {
				/* a loss after the CPU's last record */
				r->cpu = i;
				r->lost = c->lost;
				c->lost_pending = false;
				c->lost = 0;
				return 1;
			}
			continue;
		}
		/* a stack whose record was lost is nothing to show */
		if (rec_id(c->rec, c->rec_len) == DP_TDAT_STACK_ID) {
			c->have = false;
			i--;
			continue;
		}
		if (!best || c->rec_ts < best->rec_ts) {
			best = c;
			cpu = i;
		}
	}
	if (!best)
		return 0;
	memcpy(t->rec, best->rec, best->rec_len);
	r->data = t->rec;
	r->len = best->rec_len;
	r->id = rec_id(t->rec, r->len);
	r->ts_ns = best->rec_ts;
	r->cpu = cpu;
	if (best->lost_pending) {
		r->lost = best->lost;
		best->lost_pending = false;
		best->lost = 0;
	}
	best->have = false;
	take_stack(t, best, cpu, r);
	return 1;
}
