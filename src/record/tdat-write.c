// SPDX-License-Identifier: GPL-2.0
/*
 * Writing a trace.dat: records into per-CPU ring buffer pages as the
 * kernel lays them out, full pages spilled to an unlinked file, and at
 * the end the header, the formats, the tasks, dprobe's option and each
 * CPU's pages in a row (tracedat.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "lang/layout.h"
#include "record/tdat-common.h"
#include "record/tdat-writer.h"
#include "record/tracedat.h"

/*
 * The spill file is a run of frames, each a header and its bytes: pages
 * (u32 SPILL_BATCH_MAGIC, u32 N, N u32 CPUs, the N pages one after the
 * other, so that a CPU's pages in a row are copied out in one go), or
 * what describes the pages after it (u32 SPILL_META_MAGIC, u32 what, u32
 * bytes, the bytes: SPILL_OPTION, more of dprobe's option text;
 * SPILL_CMDLINES, more "PID COMM" lines; SPILL_FORMAT, a system's name,
 * a NUL, a format).  So a recorder killed before it wrote the trace.dat
 * leaves a file that dp_tdat_recover() makes one from.  Recorders before
 * the batch frame wrote a page a frame (u32 SPILL_PAGE_MAGIC, u32 its
 * CPU, the page): still read.
 */
#define SPILL_BATCH_MAGIC	0x42535044u	/* "DPSB" */
#define SPILL_PAGE_MAGIC	0x50535044u	/* "DPSP" */
#define SPILL_META_MAGIC	0x4d535044u	/* "DPSM" */
#define SPILL_PAGE_HEAD		8u
#define SPILL_PAGE_FRAME	(SPILL_PAGE_HEAD + DP_TDAT_PAGE)
/* the most pages a batch frame read back may say it holds */
#define SPILL_BATCH_MAX		65536u
enum { SPILL_OPTION = 1, SPILL_CMDLINES, SPILL_FORMAT };

/* ---- setup ----------------------------------------------------------- */

/* The spill file: OUT.part beside the output (a new file, never one a
 * killed recording left), else an unnamed one in $TMPDIR. */
static int spill_open(struct dp_tdat_writer *w, const char *out)
{
	const char *tmp = getenv("TMPDIR");
	int fd;

	if (out && asprintf(&w->spill_path, "%s.part", out) > 0) {
		fd = open(w->spill_path, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC,
			  0600);
		if (fd >= 0)
			return fd;
		if (errno == EEXIST)
			fprintf(stderr, "dprobe: %s exists (a recording whose "
				"recorder was killed: dprobe record --recover "
				"%s): this one's pages go to an unnamed file\n",
				w->spill_path, w->spill_path);
		free(w->spill_path);
		w->spill_path = NULL;
	}
	return open(tmp && *tmp ? tmp : "/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC,
		    0600);
}

static struct dp_tdat_writer *writer_alloc(int ncpus)
{
	struct dp_tdat_writer *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->spill_fd = -1;
	w->ncpus = ncpus > 0 ? ncpus : 1;
	w->cpu = calloc((size_t)w->ncpus, sizeof(*w->cpu));
	w->opt = open_memstream(&w->optbuf, &w->optlen);
	w->cmd = open_memstream(&w->cmdlines, &w->cmdlen);
	w->batch = malloc(BATCH_PAGES * DP_TDAT_PAGE);
	w->last_pid = -1;
	if (!w->cpu || !w->opt || !w->cmd || !w->batch) {
		dp_tdat_writer_free(w);
		errno = ENOMEM;
		return NULL;
	}
	return w;
}

struct dp_tdat_writer *dp_tdat_writer_new(const char *out, int ncpus)
{
	struct dp_tdat_writer *w = writer_alloc(ncpus);

	if (!w)
		return NULL;
	w->spill_fd = spill_open(w, out);
	if (w->spill_fd < 0) {
		int e = errno;

		dp_tdat_writer_free(w);
		errno = e;
		return NULL;
	}
	fprintf(w->opt, "%s %d\n", DP_TDAT_MAGIC_WORD, DP_TDAT_VERSION);
	return w;
}

void dp_tdat_writer_free(struct dp_tdat_writer *w)
{
	if (!w)
		return;
	for (int i = 0; w->cpu && i < w->ncpus; i++) {
		if (w->cpu[i]) {
			free(w->cpu[i]->spilled);
			free(w->cpu[i]->chunk);
			free(w->cpu[i]->chunks);
		}
		free(w->cpu[i]);
	}
	free(w->cpu);
	if (w->spill_fd >= 0)
		close(w->spill_fd);
	if (w->opt)
		fclose(w->opt);
	if (w->cmd)
		fclose(w->cmd);
	free(w->optbuf);
	free(w->cmdlines);
	free(w->batch);
	tdat_zfree(w);
	free(w->spill_path);
	for (size_t i = 0; i < w->nfmts; i++)
		free(w->fmts[i].text);
	free(w->fmts);
	dp_pairset_free(&w->events_seen);
	dp_pairset_free(&w->tasks);
	dp_pairset_free(&w->comms);
	dp_pairset_free(&w->addrs);
	dp_pairset_free(&w->syms);
	free(w);
}

/* ---- pages ----------------------------------------------------------- */

struct cpu_pages *tdat_cpu_of(struct dp_tdat_writer *w, int cpu)
{
	if (cpu < 0)
		cpu = 0;
	/* a CPU number the traced process wrote into its ring: no more
	 * than a reader takes */
	if (cpu >= DP_TDAT_MAX_CPUS)
		return NULL;
	if (cpu >= w->ncpus) {
		struct cpu_pages **v = realloc(w->cpu, (size_t)(cpu + 1) *
					       sizeof(*v));

		if (!v)
			return NULL;
		memset(v + w->ncpus, 0, (size_t)(cpu + 1 - w->ncpus) *
		       sizeof(*v));
		w->cpu = v;
		w->ncpus = cpu + 1;
	}
	if (!w->cpu[cpu]) {
		w->cpu[cpu] = calloc(1, sizeof(*w->cpu[cpu]));
		if (w->cpu[cpu])
			w->cpu[cpu]->index = cpu;
	}
	return w->cpu[cpu];
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* One metadata frame: its header, then @n bytes of @p. */
static void spill_meta(struct dp_tdat_writer *w, uint32_t kind,
		       const void *p, size_t n)
{
	uint32_t head[3] = { SPILL_META_MAGIC, kind, (uint32_t)n };
	struct iovec iov[2] = { { head, sizeof(head) }, { (void *)p, n } };
	ssize_t got;

	if (w->err)
		return;
	got = pwritev(w->spill_fd, iov, 2, (off_t)w->spill_off);
	if (got != (ssize_t)(sizeof(head) + n))
		w->err = got < 0 && errno ? errno : ENOSPC;
	else
		w->spill_off += (uint64_t)got;
}

/*
 * What a reader needs of the pages that follow and the spill file does
 * not hold yet: the option's and the names' new lines, the new formats.
 * Written before the pages, so a killed recording's file always
 * describes the pages it holds.
 */
void tdat_spill_meta_new(struct dp_tdat_writer *w)
{
	fflush(w->opt);
	fflush(w->cmd);
	if (w->optlen > w->opt_sent)
		spill_meta(w, SPILL_OPTION, w->optbuf + w->opt_sent,
			   w->optlen - w->opt_sent);
	w->opt_sent = w->optlen;
	if (w->cmdlen > w->cmd_sent)
		spill_meta(w, SPILL_CMDLINES, w->cmdlines + w->cmd_sent,
			   w->cmdlen - w->cmd_sent);
	w->cmd_sent = w->cmdlen;
	for (; w->fmts_sent < w->nfmts; w->fmts_sent++) {
		const struct fmt *f = &w->fmts[w->fmts_sent];
		size_t ls = strlen(f->system) + 1, lt = strlen(f->text);
		char *b = malloc(ls + lt);

		if (!b)
			continue;
		memcpy(b, f->system, ls);
		memcpy(b + ls, f->text, lt);
		spill_meta(w, SPILL_FORMAT, b, ls + lt);
		free(b);
	}
}

/* The pages batched so far, out to the spill file in one frame, after
 * what describes them. */
static void batch_write(struct dp_tdat_writer *w)
{
	uint32_t head[2 + BATCH_PAGES] = { SPILL_BATCH_MAGIC,
					   (uint32_t)w->nbatch };
	size_t hn = 8 + 4 * w->nbatch, n = hn + w->nbatch * DP_TDAT_PAGE;
	struct iovec iov[2] = { { head, hn },
				{ w->batch, w->nbatch * DP_TDAT_PAGE } };
	uint64_t at;
	ssize_t got = 0;

	if (!w->nbatch)
		return;
	for (size_t i = 0; i < w->nbatch; i++)
		head[2 + i] = (uint32_t)w->batch_cpu[i];
	tdat_spill_meta_new(w);
	at = w->spill_off;
	if (!w->err) {
		got = pwritev(w->spill_fd, iov, 2, (off_t)at);
		if (got != (ssize_t)n)
			w->err = got < 0 && errno ? errno : ENOSPC;
		/* a short write: the whole pages it wrote are kept */
		if (got > (ssize_t)hn)
			w->spill_ok = at + hn + ((size_t)got - hn) /
				      DP_TDAT_PAGE * DP_TDAT_PAGE;
	}
	/* the pages' places in the file, now that they are known */
	for (size_t i = 0; i < w->nbatch; i++) {
		struct cpu_pages *c = w->cpu[w->batch_cpu[i]];

		c->spilled[c->nspilled++] = at + hn + i * DP_TDAT_PAGE;
	}
	w->spill_off += n;
	w->nbatch = 0;
}

/* The pages of @c written whole to the spill file: those before the
 * first write that failed (a full disk), a prefix of its list. */
static size_t pages_kept(const struct dp_tdat_writer *w,
			 const struct cpu_pages *c)
{
	size_t n = c ? c->nspilled : 0;

	while (n && c->spilled[n - 1] + DP_TDAT_PAGE > w->spill_ok)
		n--;
	return n;
}

/* The page out to the spill file (through the batch), with its commit
 * word and lost count. */
void tdat_page_close(struct dp_tdat_writer *w, struct cpu_pages *c)
{
	uint64_t commit = c->used;
	uint64_t *v;

	if (!c->open)
		return;
	if (c->lost_pending) {
		commit |= DP_RB_MISSED_EVENTS;
		if (c->lost != DP_LOST_UNKNOWN) {
			commit |= DP_RB_MISSED_STORED;
			put64(c->page + DP_TDAT_PAGE_HEAD + c->used, c->lost);
		}
		c->lost_pending = false;
		c->lost = 0;
	}
	put64(c->page + 8, commit);
	c->open = false;
	if (w->zc) {
		tdat_zpage(w, c);
		return;
	}
	/* room for its offset, and for those of its pages in the batch */
	if (c->nspilled + BATCH_PAGES >= c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 2 * BATCH_PAGES;

		v = realloc(c->spilled, cap * sizeof(*v));
		if (!v) {
			w->err = w->err ? w->err : ENOMEM;
			return;
		}
		c->spilled = v;
		c->cap = cap;
	}
	memcpy(w->batch + w->nbatch * DP_TDAT_PAGE, c->page, DP_TDAT_PAGE);
	w->batch_cpu[w->nbatch] = c->index;
	if (++w->nbatch == BATCH_PAGES)
		batch_write(w);
}

void tdat_page_open(struct cpu_pages *c, uint64_t ts)
{
	memset(c->page, 0, DP_TDAT_PAGE);
	put64(c->page, ts);
	c->used = 0;
	c->last_ts = ts;
	c->open = true;
}

/* Bytes of data a page has room for (the lost count takes 8). */
static size_t page_room(const struct cpu_pages *c)
{
	return DP_TDAT_PAGE_DATA - (c->lost_pending ? 8 : 0) - c->used;
}

/*
 * @len bytes of @data as one ring buffer event at @ts on @c: a time
 * extend first when the delta needs more than 27 bits, a new page when
 * this one is full or @ts is older than its last record (a delta is
 * never negative).  -1 if it can never fit a page.
 */
static int page_put(struct dp_tdat_writer *w, struct cpu_pages *c, uint64_t ts,
		    const void *data, size_t len)
{
	size_t len4 = len ? (len + 3) & ~(size_t)3 : 4;
	bool small = len4 <= DP_RB_MAX_SMALL;
	size_t need = (small ? 4 : 8) + len4;
	uint64_t delta;
	uint8_t *p;

	if (need + 8 + 8 > DP_TDAT_PAGE_DATA)
		return -1;
	if (c->open && (ts < c->last_ts ||
			need + ((ts - c->last_ts) >> DP_RB_DELTA_BITS ? 8 : 0) >
			page_room(c)))
		tdat_page_close(w, c);
	if (!c->open)
		tdat_page_open(c, ts);
	delta = ts - c->last_ts;
	p = c->page + DP_TDAT_PAGE_HEAD + c->used;
	if (delta >> DP_RB_DELTA_BITS) {
		put32(p, DP_RB_TYPE_TIME_EXTEND |
			 (uint32_t)(delta & ((1u << DP_RB_DELTA_BITS) - 1)) << 5);
		put32(p + 4, (uint32_t)(delta >> DP_RB_DELTA_BITS));
		p += 8;
		c->used += 8;
		delta = 0;
	}
	if (small) {
		put32(p, (uint32_t)(len4 / 4) | (uint32_t)delta << 5);
		p += 4;
	} else {
		put32(p, (uint32_t)delta << 5);
		put32(p + 4, (uint32_t)len4 + 4);
		p += 8;
	}
	memcpy(p, data, len);
	c->used += need;
	c->last_ts = ts;
	return 0;
}

void dp_tdat_lost(struct dp_tdat_writer *w, int cpu, unsigned long n)
{
	struct cpu_pages *c = tdat_cpu_of(w, cpu);

	if (!c || !n)
		return;
	/* the loss is marked on the page after it */
	tdat_page_close(w, c);
	if (n == DP_LOST_UNKNOWN || c->lost == DP_LOST_UNKNOWN)
		c->lost = DP_LOST_UNKNOWN;
	else
		c->lost += n;
	c->lost_pending = true;
}

/* ---- what a reader needs besides the records --------------------------- */

static void add_format(struct dp_tdat_writer *w, const char *system,
		       char *text)
{
	struct fmt *v = realloc(w->fmts, (w->nfmts + 1) * sizeof(*v));

	if (!v || !text) {
		free(text);
		return;
	}
	w->fmts = v;
	snprintf(v[w->nfmts].system, sizeof(v->system), "%s", system);
	v[w->nfmts++].text = text;
}

static char *format_text(const struct dp_event *ev)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	dp_event_format(ev, f);
	fclose(f);
	return buf;
}

/* One "KIND ID\tTEXT" line; TEXT never holds a newline. */
static void def_line(struct dp_tdat_writer *w, const char *kind, unsigned id,
		     const char *text)
{
	if (text && !strchr(text, '\n'))
		fprintf(w->opt, "%s %u\t%s\n", kind, id, text);
}

/*
 * @ev's definition, and its format the first time it is seen: what it
 * was made from (each probe's canonical line, a synthetic event's
 * listing, a kernel tracepoint's name), after the event an event probe
 * is on, which `report` must make first.
 */
static void note_event(struct dp_tdat_writer *w, const struct dp_event *ev)
{
	char *s;

	if (!dp_pairset_add(&w->events_seen, ev->id, ev->serial, NULL))
		return;
	if (ev->attached)
		note_event(w, ev->attached);
	if (ev->synth) {
		s = dp_synth_listing(ev->synth);
		def_line(w, "synth", ev->id, s);
		free(s);
	} else if (ev->kernel) {
		fprintf(w->opt, "ktp %u\t%s/%s\n", ev->id, ev->group, ev->name);
	} else {
		for (const struct dp_probe *p = ev->probes; p; p = p->next) {
			s = dp_probe_canonical(&p->def);
			def_line(w, "def", ev->id, s);
			free(s);
		}
	}
	s = format_text(ev);
	if (s)
		add_format(w, ev->group, s);
}

/* @comm (NULL: "") is @last (up to its size). */
static inline bool same_comm(const char *comm, const char *last, size_t n)
{
	if (!comm)
		comm = "";
	for (size_t i = 0; i < n; i++) {
		if (comm[i] != last[i])
			return false;
		if (!comm[i])
			return true;
	}
	return true;
}

/* The thread and its name, unless they are the last record's (noted). */
static void note_task(struct dp_tdat_writer *w, const struct dp_rec_meta *m)
{
	const char *comm = m->comm ? m->comm : "<...>";
	uint64_t h = 1469598103934665603ull;

	w->last_pid = m->pid;
	w->last_tgid = m->tgid;
	snprintf(w->last_comm, sizeof(w->last_comm), "%s",
		 m->comm ? m->comm : "");
	if (dp_pairset_add(&w->tasks, (uint64_t)m->pid, (uint64_t)m->tgid,
			   NULL))
		fprintf(w->opt, "task %d %d\n", m->pid, m->tgid);
	for (const char *c = comm; *c; c++)
		h = (h ^ (uint8_t)*c) * 1099511628211ull;
	if (!strchr(comm, '\n') &&
	    dp_pairset_add(&w->comms, (uint64_t)m->pid, h, NULL))
		fprintf(w->cmd, "%d %s\n", m->pid, comm);
}

/* Where (@mm, @addr) is in the cache of addresses noted. */
static inline struct addr_note *addr_slot(struct dp_tdat_writer *w, int mm,
					  uint64_t addr)
{
	uint64_t h = (addr ^ addr >> 9 ^ (uint64_t)mm * 0x9e3779b97f4a7c15ull) *
		     0xff51afd7ed558ccdull;

	return &w->addrc[h >> 40 & (ADDR_CACHE - 1)];
}

/* The address was noted, as the cache says (inline: most are). */
static inline bool addr_cached(struct dp_tdat_writer *w, int mm, uint64_t addr)
{
	const struct addr_note *a = addr_slot(w, mm, addr);

	return a->addr == addr && a->mm == mm;
}

/* The symbol covering @addr in @mm, once per address and per symbol. */
static void note_addr(struct dp_tdat_writer *w, int mm, uint64_t addr,
		      const struct dp_symbolizer *sym)
{
	const char *name = NULL;
	uint64_t off, size;
	struct addr_note *a = addr_slot(w, mm, addr);

	if (!sym || !sym->lookup || !addr || addr == DP_STACK_BAD_FRAME ||
	    (a->addr == addr && a->mm == mm))
		return;
	a->addr = addr;
	a->mm = mm;
	if (!dp_pairset_add(&w->addrs, (uint64_t)mm, addr, NULL))
		return;
	if (sym->lookup(sym->priv, addr, &name, &off, &size) || !name ||
	    !*name || strpbrk(name, "\n\t") || off > addr)
		return;
	if (dp_pairset_add(&w->syms, (uint64_t)mm, addr - off, NULL))
		fprintf(w->opt, "sym %d %" PRIx64 " %" PRIx64 "\t%s\n", mm,
			addr - off, size, name);
}

static bool has_symbols(const struct dp_event *ev)
{
	for (unsigned i = 0; i < ev->nfields; i++)
		if (ev->fields[i].ptype &&
		    ev->fields[i].ptype->kind == DP_T_SYMBOL)
			return true;
	return false;
}

/* The addresses a renderer names: a kprobe-style head's, symbol
 * arguments', the stack's frames. */
static void note_addrs(struct dp_tdat_writer *w, const struct ev_note *n,
		       const uint8_t *r, const struct dp_rec_meta *m,
		       const struct dp_symbolizer *sym)
{
	const struct dp_event *ev = n->ev;
	int mm = m->mm_pid ? m->mm_pid : m->tgid;
	struct dp_rec_geom g;

	if (!sym)
		return;
	if (!ev->synth && !ev->kernel && ev->kind == DP_KIND_KPROBE) {
		uint64_t a = dp_rec_load(r + (ev->is_return ? DP_REC_FUNC_OFF :
					      DP_REC_IP_OFF), 8);

		if (!addr_cached(w, mm, a))
			note_addr(w, mm, a, sym);
		if (ev->is_return) {
			a = dp_rec_load(r + DP_REC_RET_IP_OFF, 8);
			if (!addr_cached(w, mm, a))
				note_addr(w, mm, a, sym);
		}
	}
	for (unsigned i = 0; n->syms && i < ev->nfields; i++) {
		const struct dp_field *f = &ev->fields[i];

		if (!f->ptype || f->ptype->kind != DP_T_SYMBOL ||
		    dp_rec_geom(f, &g))
			continue;
		for (unsigned k = 0; k < g.n; k++)
			note_addr(w, mm, dp_rec_load(dp_rec_elem(r, &g, k),
						     g.esz), sym);
	}
	for (unsigned i = 0; m->stack && i < m->nstack; i++)
		note_addr(w, mm, m->stack[i], sym);
}

/* ---- records --------------------------------------------------------- */

/* The format of the event a stack is written as: the frames as a
 * dynamic array, printed as one. */
static const char stack_format[] =
	"name: user_stack\n"
	"ID: 999\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:__data_loc unsigned long[] caller;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\n"
	"print fmt: \"%s\", __print_array(__get_dynamic_array(caller), "
	"__get_dynamic_array_len(caller) / 8, 8)\n";

static void put_stack(struct dp_tdat_writer *w, struct cpu_pages *c,
		      const struct dp_rec_meta *m)
{
	uint8_t rec[12 + DP_STACK_MAX * 8] = { 0 };
	unsigned n = m->nstack < DP_STACK_MAX ? m->nstack : DP_STACK_MAX;
	struct dp_event fake = { .id = DP_TDAT_STACK_ID };

	if (!w->stack_format) {
		w->stack_format = true;
		snprintf(fake.group, sizeof(fake.group), "dprobe");
		add_format(w, fake.group, strdup(stack_format));
	}
	rec[0] = DP_TDAT_STACK_ID & 0xff;
	rec[1] = DP_TDAT_STACK_ID >> 8;
	put32(rec + DP_REC_PID_OFF, (uint32_t)m->pid);
	put32(rec + 8, (uint32_t)(12 | n * 8 << 16));
	memcpy(rec + 12, m->stack, n * 8);
	/* the same time as its record: never a page of its own */
	page_put(w, c, m->ts_ns, rec, 12 + n * 8);
}

/* @ev's entry in the cache, NULL if it has none. */
static const struct ev_note *ev_cached(const struct dp_tdat_writer *w,
				       const struct dp_event *ev)
{
	const struct ev_note *n = &w->evc[ev->serial % EV_CACHE];

	return n->ev == ev && n->serial == ev->serial ? n : NULL;
}

/* @ev noted (its definition and format, once) at its first good record
 * since it left the cache, and what its records need checked. */
static const struct ev_note *ev_note(struct dp_tdat_writer *w,
				     const struct dp_event *ev)
{
	struct ev_note *n = &w->evc[ev->serial % EV_CACHE];

	note_event(w, ev);
	n->ev = ev;
	n->serial = ev->serial;
	n->syms = has_symbols(ev);
	n->min_ok = !dp_rec_check_min(ev, &n->min);
	return n;
}

static bool rec_ok(const struct ev_note *n, const void *rec, size_t len)
{
	if (n->min_ok)
		return rec && len >= n->min;
	return !dp_rec_check(n->ev, rec, len);
}

int dp_tdat_record(struct dp_tdat_writer *w, const struct dp_event *ev,
		   const void *rec, size_t len, const struct dp_rec_meta *meta,
		   const struct dp_symbolizer *sym)
{
	struct cpu_pages *c = meta->cpu >= 0 && meta->cpu < w->ncpus &&
			      w->cpu[meta->cpu] ? w->cpu[meta->cpu] :
			      tdat_cpu_of(w, meta->cpu);
	const struct ev_note *n;
	uint8_t *p;

	/* after a spill error (a full disk) nothing more is kept */
	if (!c || w->err) {
		w->dropped++;
		return -1;
	}
	n = ev_cached(w, ev);
	if (n ? !rec_ok(n, rec, len) : dp_rec_check(ev, rec, len)) {
		w->dropped++;
		return -1;
	}
	if (!n)
		n = ev_note(w, ev);
	if (meta->pid != w->last_pid || meta->tgid != w->last_tgid ||
	    !same_comm(meta->comm, w->last_comm, sizeof(w->last_comm)))
		note_task(w, meta);
	note_addrs(w, n, rec, meta, sym);
	if (page_put(w, c, meta->ts_ns, rec, len)) {
		w->dropped++;
		return -1;
	}
	/* what the engine knows, not what the record says: its event and
	 * thread (a traced program can write its own rings) */
	p = c->page + DP_TDAT_PAGE_HEAD + c->used - ((len + 3) & ~(size_t)3);
	p[0] = ev->id & 0xff;
	p[1] = ev->id >> 8 & 0xff;
	put32(p + DP_REC_PID_OFF, (uint32_t)meta->pid);
	if (meta->stack && meta->nstack)
		put_stack(w, c, meta);
	w->events++;
	return 0;
}

void dp_tdat_counts(const struct dp_tdat_writer *w, uint64_t *events,
		    uint64_t *lost, uint64_t *bytes)
{
	*events = w->events;
	*lost = w->dropped;
	*bytes = w->spill_off;
}

/* ---- the file -------------------------------------------------------- */

void tdat_out_bytes(struct dp_tdat_writer *w, FILE *out, const void *p,
		      size_t n)
{
	if (n && fwrite(p, 1, n, out) != n && !w->err)
		w->err = errno ? errno : EIO;
	w->pos += n;
}

void tdat_out32(struct dp_tdat_writer *w, FILE *out, uint32_t v)
{
	tdat_out_bytes(w, out, &v, 4);
}

void tdat_out64(struct dp_tdat_writer *w, FILE *out, uint64_t v)
{
	tdat_out_bytes(w, out, &v, 8);
}

void tdat_out_str(struct dp_tdat_writer *w, FILE *out, const char *s)
{
	tdat_out_bytes(w, out, s, strlen(s) + 1);
}

void tdat_out_sized(struct dp_tdat_writer *w, FILE *out, const char *s,
		      bool wide)
{
	size_t n = strlen(s);

	if (wide)
		tdat_out64(w, out, n);
	else
		tdat_out32(w, out, (uint32_t)n);
	tdat_out_bytes(w, out, s, n);
}

void tdat_out_magic(struct dp_tdat_writer *w, FILE *out, const char *version)
{
	static const uint8_t magic[] = { 0x17, 0x08, 0x44 };

	tdat_out_bytes(w, out, magic, 3);
	tdat_out_bytes(w, out, "tracing", 7);
	tdat_out_str(w, out, version);
	tdat_out_bytes(w, out, "\0\x08", 2);		/* little endian, 8-byte long */
	tdat_out32(w, out, DP_TDAT_PAGE);
}

static void out_head(struct dp_tdat_writer *w, FILE *out)
{
	tdat_out_magic(w, out, "6");
	tdat_out_str(w, out, "header_page");
	tdat_out_sized(w, out, dp_tdat_header_page(), true);
	tdat_out_str(w, out, "header_event");
	tdat_out_sized(w, out, dp_tdat_header_event, true);
	tdat_out32(w, out, 0);				/* ftrace's own events */
}

/* The formats, grouped by system in the order systems were first seen. */
void tdat_out_formats(struct dp_tdat_writer *w, FILE *out)
{
	uint32_t nsys = 0;

	for (size_t i = 0; i < w->nfmts; i++) {
		size_t j = 0;

		while (j < i && strcmp(w->fmts[j].system, w->fmts[i].system))
			j++;
		nsys += j == i;
	}
	tdat_out32(w, out, nsys);
	for (size_t i = 0; i < w->nfmts; i++) {
		uint32_t n = 0;
		size_t j = 0;

		while (j < i && strcmp(w->fmts[j].system, w->fmts[i].system))
			j++;
		if (j < i)
			continue;
		for (j = i; j < w->nfmts; j++)
			n += !strcmp(w->fmts[j].system, w->fmts[i].system);
		tdat_out_str(w, out, w->fmts[i].system);
		tdat_out32(w, out, n);
		for (j = i; j < w->nfmts; j++)
			if (!strcmp(w->fmts[j].system, w->fmts[i].system))
				tdat_out_sized(w, out, w->fmts[j].text, true);
	}
}

/* Did a copy between files fail for want of support (the files' kinds,
 * the kernel), not for an error of either file? */
static bool copy_unsupported(int e)
{
	return e == EXDEV || e == EINVAL || e == ENOSYS || e == EOPNOTSUPP ||
	       e == EBADF;
}

/*
 * @len bytes at @off of the spill file onto @fd, copied by the kernel
 * (copy_file_range(), else sendfile() for a pipe): no trip through the
 * recorder's memory, and one call for many pages.  -1 if neither can do
 * it and nothing was written; else 0, w->err set on an error.
 */
static int copy_run(struct dp_tdat_writer *w, int fd, uint64_t off,
		    size_t len)
{
	loff_t in = (loff_t)off;
	size_t left = len;

	while (left && w->copy < COPY_USER) {
		ssize_t got = w->copy == COPY_RANGE ?
			copy_file_range(w->spill_fd, &in, fd, NULL, left, 0) :
			sendfile(fd, w->spill_fd, &in, left);

		if (got > 0) {
			left -= (size_t)got;
			continue;
		}
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0 && left == len && copy_unsupported(errno)) {
			w->copy++;
			continue;
		}
		/* the spill file ended early (0), or a file's error */
		w->err = w->err ? w->err : (got < 0 && errno ? errno : EIO);
		return 0;
	}
	return left ? -1 : 0;
}

static void write_all(struct dp_tdat_writer *w, int fd, const uint8_t *p,
		      size_t n)
{
	while (n) {
		ssize_t got = write(fd, p, n);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			w->err = w->err ? w->err : (got < 0 ? errno : EIO);
			return;
		}
		p += got;
		n -= (size_t)got;
	}
}

/* The pages @c->spilled[@i..@n) through the recorder's memory, onto
 * @fd, or @out when it has none (a memory stream). */
static void out_pages_user(struct dp_tdat_writer *w, FILE *out, int fd,
			   const struct cpu_pages *c, size_t i, size_t n)
{
	uint8_t page[DP_TDAT_PAGE];

	for (; i < n; i++) {
		if (pread(w->spill_fd, page, DP_TDAT_PAGE,
			  (off_t)c->spilled[i]) != DP_TDAT_PAGE) {
			w->err = w->err ? w->err : (errno ? errno : EIO);
			memset(page, 0, sizeof(page));
		}
		if (fd >= 0)
			write_all(w, fd, page, DP_TDAT_PAGE);
		else if (fwrite(page, 1, DP_TDAT_PAGE, out) != DP_TDAT_PAGE &&
			 !w->err)
			w->err = errno ? errno : EIO;
	}
}

/* The pages of one CPU, from the spill file, onto @fd (@out flushed):
 * each run of them that lies in a row there, in one copy. */
static void out_pages(struct dp_tdat_writer *w, FILE *out,
		      const struct cpu_pages *c)
{
	size_t n = pages_kept(w, c);
	int fd = fileno(out);

	for (size_t i = 0, k; i < n; i = k) {
		for (k = i + 1; k < n && c->spilled[k] ==
			     c->spilled[k - 1] + DP_TDAT_PAGE; k++)
			;
		w->pos += (k - i) * DP_TDAT_PAGE;
		if (fd < 0 ||
		    copy_run(w, fd, c->spilled[i], (k - i) * DP_TDAT_PAGE))
			out_pages_user(w, out, fd, c, i, k);
	}
}

/* The file, version 6, once every page is spilled. */
static int finish6(struct dp_tdat_writer *w, FILE *out)
{
	static const uint8_t zero[DP_TDAT_PAGE];
	uint64_t off;
	uint16_t id = DP_TDAT_OPTION;

	out_head(w, out);
	tdat_out_formats(w, out);
	tdat_out32(w, out, 0);				/* kallsyms */
	tdat_out32(w, out, 0);				/* printk formats */
	tdat_out_sized(w, out, w->cmdlines ? w->cmdlines : "", true);
	tdat_out32(w, out, (uint32_t)w->ncpus);
	tdat_out_bytes(w, out, "options  ", 10);
	tdat_out_bytes(w, out, &id, 2);
	tdat_out32(w, out, (uint32_t)w->optlen + 1);
	tdat_out_bytes(w, out, w->optbuf, w->optlen + 1);
	tdat_out_bytes(w, out, "\0\0", 2);			/* the last option */
	tdat_out_bytes(w, out, "flyrecord", 10);
	off = (w->pos + 16 * (uint64_t)w->ncpus + DP_TDAT_PAGE - 1) &
	      ~(uint64_t)(DP_TDAT_PAGE - 1);
	for (int i = 0; i < w->ncpus; i++) {
		uint64_t size = pages_kept(w, w->cpu[i]) * (uint64_t)DP_TDAT_PAGE;

		tdat_out64(w, out, off);
		tdat_out64(w, out, size);
		off += size;
	}
	tdat_out_bytes(w, out, zero, (size_t)(-w->pos & (DP_TDAT_PAGE - 1)));
	/* the pages go to the file's descriptor, after what is buffered */
	if (fflush(out) && !w->err)
		w->err = errno ? errno : EIO;
	for (int i = 0; i < w->ncpus; i++)
		out_pages(w, out, w->cpu[i]);
	if (w->err) {
		errno = w->err;
		return -1;
	}
	return 0;
}

int dp_tdat_finish(struct dp_tdat_writer *w, FILE *out)
{
	int ret;

	for (int i = 0; i < w->ncpus; i++) {
		struct cpu_pages *c = w->cpu[i];

		/* a loss after the last record: an empty page that says so */
		if (c && c->lost_pending && !c->open)
			tdat_page_open(c, c->last_ts);
		if (c)
			tdat_page_close(w, c);
	}
	batch_write(w);
	fflush(w->opt);
	fflush(w->cmd);
	w->pos = 0;
	ret = w->zc ? tdat_finish7(w, out) : finish6(w, out);
	/* the recording is whole: its pages are no longer needed apart */
	if (!ret && w->spill_path)
		unlink(w->spill_path);
	return ret;
}

void dp_tdat_remove(const char *out)
{
	char *part;

	unlink(out);
	if (asprintf(&part, "%s.part", out) > 0) {
		unlink(part);
		free(part);
	}
}

/* ---- a killed recorder's pages ------------------------------------------ */

/* One metadata frame of @len bytes at @off, into @w. */
static int recover_meta(struct dp_tdat_writer *w, uint32_t kind,
			uint64_t off, uint32_t len)
{
	char *b = malloc((size_t)len + 1);
	size_t ls;

	if (!b || pread(w->spill_fd, b, len, (off_t)off) != (ssize_t)len) {
		free(b);
		return -1;
	}
	b[len] = 0;
	if (kind == SPILL_OPTION)
		fwrite(b, 1, len, w->opt);
	else if (kind == SPILL_CMDLINES)
		fwrite(b, 1, len, w->cmd);
	else if (kind == SPILL_FORMAT && (ls = strlen(b)) < len)
		add_format(w, b, strdup(b + ls + 1));
	free(b);
	return 0;
}

/* A page at @off: its place under its CPU. */
static int recover_page(struct dp_tdat_writer *w, uint32_t cpu, uint64_t off)
{
	struct cpu_pages *c = cpu < DP_TDAT_MAX_CPUS ?
			      tdat_cpu_of(w, (int)cpu) : NULL;
	uint64_t *v;

	if (!c)
		return -1;
	if (c->nspilled == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 64;
		v = realloc(c->spilled, c->cap * sizeof(*v));
		if (!v)
			return -1;
		c->spilled = v;
	}
	c->spilled[c->nspilled++] = off;
	return 0;
}

/* The batch frame of @n pages at @off, in a file of @size bytes: its
 * whole pages kept; the next frame's offset, 0 if it is torn. */
static uint64_t recover_batch(struct dp_tdat_writer *w, uint64_t off,
			      uint32_t n, uint64_t size)
{
	uint64_t hn = 8 + 4 * (uint64_t)n, at = off + hn;
	uint32_t *cpus;
	uint64_t next = 0;

	if (!n || n > SPILL_BATCH_MAX || hn > size - off)
		return 0;
	cpus = malloc(4 * (size_t)n);
	if (!cpus || pread(w->spill_fd, cpus, 4 * (size_t)n,
			   (off_t)(off + 8)) != 4 * (ssize_t)n) {
		free(cpus);
		return 0;
	}
	for (uint32_t i = 0; i < n && at + DP_TDAT_PAGE <= size;
	     i++, at += DP_TDAT_PAGE)
		if (recover_page(w, cpus[i], at))
			break;
	if (at == off + hn + (uint64_t)n * DP_TDAT_PAGE)
		next = at;
	free(cpus);
	return next;
}

/* Every whole frame of the file, in order; where the first torn or
 * foreign one begins. */
static uint64_t recover_frames(struct dp_tdat_writer *w, uint64_t size,
			       bool *described)
{
	uint64_t off = 0;
	uint32_t head[3];

	while (off + 8 <= size &&
	       pread(w->spill_fd, head, sizeof(head), (off_t)off) >= 8) {
		if (head[0] == SPILL_BATCH_MAGIC && *described) {
			uint64_t next = recover_batch(w, off, head[1], size);

			if (!next)
				break;
			off = next;
		} else if (head[0] == SPILL_PAGE_MAGIC && *described &&
		    off + SPILL_PAGE_FRAME <= size) {
			if (recover_page(w, head[1], off + SPILL_PAGE_HEAD))
				break;
			off += SPILL_PAGE_FRAME;
		} else if (head[0] == SPILL_CHUNK_MAGIC && *described) {
			uint64_t next = tdat_recover_chunk(w, off, size);

			if (!next)
				break;
			off = next;
		} else if (head[0] == SPILL_META_MAGIC && off + 12 <= size &&
			   head[2] <= size - off - 12) {
			if (recover_meta(w, head[1], off + 12, head[2]))
				break;
			*described |= head[1] == SPILL_OPTION;
			off += 12 + (uint64_t)head[2];
		} else {
			break;
		}
	}
	return off;
}

int dp_tdat_recover(const char *part, FILE *out, uint64_t *pages,
		    char *err, size_t errlen)
{
	struct dp_tdat_writer *w = writer_alloc(1);
	bool described = false;
	struct stat st;
	int ret = -1;

	*pages = 0;
	if (!w || (w->spill_fd = open(part, O_RDONLY | O_CLOEXEC)) < 0 ||
	    fstat(w->spill_fd, &st)) {
		snprintf(err, errlen, "%s", strerror(w ? errno : ENOMEM));
		goto out;
	}
	w->spill_ok = recover_frames(w, (uint64_t)st.st_size, &described);
	fflush(w->opt);
	if (!described || strncmp(w->optbuf, DP_TDAT_MAGIC_WORD " ",
				  sizeof(DP_TDAT_MAGIC_WORD))) {
		snprintf(err, errlen, "not the pages of a dprobe recording "
			 "(or one killed before it wrote any)");
		goto out;
	}
	for (int i = 0; i < w->ncpus; i++) {
		const struct cpu_pages *c = w->cpu[i];

		*pages += c ? c->nspilled : 0;
		for (size_t k = 0; c && k < c->nchunks; k++)
			*pages += c->chunks[k].usize / DP_TDAT_PAGE;
	}
	ret = dp_tdat_finish(w, out);
	if (ret)
		snprintf(err, errlen, "%s", strerror(errno));
out:
	dp_tdat_writer_free(w);
	return ret;
}
