// SPDX-License-Identifier: GPL-2.0
/*
 * CTF 1.8 (the Common Trace Format that babeltrace2 reads and Trace
 * Compass opens): a directory, given with -o, holding
 *
 *   metadata    the TSDL text describing everything below: the trace
 *               (little-endian, a packet header with magic, uuid and
 *               stream id), its environment (hostname, domain "ust" and
 *               tracer "dprobe", as a user-space tracer's trace), a
 *               clock (CLOCK_MONOTONIC in ns, offset to the wall clock
 *               so that readers print dates), one stream and one event
 *               class per dprobe event, "GROUP:NAME", with the event's
 *               fields and their types;
 *   stream_N    the records that came from CPU N, in packets.
 *
 * A packet is a header, a context (the times of its first and last
 * events, its content and padded sizes in bits, the events lost on that
 * CPU since the trace began, the CPU), then events, then zeros up to its
 * size (PACKET_SIZE, or more for an event that would not fit in one).
 * An event is its header (the event's id, the time in ns), the context
 * LTTng-UST gives its events (vpid, vtid, procname: what Trace Compass
 * draws threads from; so the common fields are not repeated), then the
 * event's fields in their record order: integers as the record holds
 * them (x-types and addresses in base 16, signed ones signed), fixed
 * arrays as arrays, strings as NUL-terminated strings ("(fault)" where
 * the read faulted, as the text format prints it), a synthetic event's
 * stack as a counted sequence, and last, for an event traced with
 * --stack, its user stack, innermost first, as the sequence "__stack"
 * (a walk stopped by a bad frame ends with DP_STACK_BAD_FRAME, as the
 * engines hand it on).  Every declaration is byte-aligned, so
 * an event's bytes follow one another with no padding.
 *
 * Events are known from their first record, so the metadata is written
 * again whenever a new one appears and at the end: a killed dprobe leaves
 * a readable trace of the packets it had finished.  Packets are written
 * when full and at the end.  Times go forward in a stream: a record older
 * than the one before it on its CPU (engines that merge several rings)
 * is given that one's time.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "output/renderer.h"

#define CTF_MAGIC	0xc1fc1fc1u
#define PACKET_SIZE	(64 * 1024)
/* header: magic, uuid, stream_id; context: timestamp_begin,
 * timestamp_end, content_size, packet_size, events_discarded, cpu_id */
#define PACKET_HEAD	(4 + 16 + 4 + 5 * 8 + 4)
#define FAULT_TEXT	"(fault)"

struct bytes {
	uint8_t *p;
	size_t n, cap;
	bool oom;
};

struct stream {
	int fd;			/* -1: not opened yet */
	struct bytes pkt;	/* the packet being filled, head included */
	size_t size;		/* its size once padded */
	uint64_t first_ts, last_ts;
	uint64_t discarded;	/* lost on this CPU so far */
	uint64_t told;		/* of them, in the packets written */
	bool used;		/* a packet is open */
};

struct ctf {
	uint8_t uuid[16];
	int64_t offset_ns;	/* CLOCK_REALTIME - CLOCK_MONOTONIC */
	struct stream *s;	/* by CPU */
	int ns;
	const struct dp_event **evs;	/* in the metadata, by first record */
	size_t nevs;
	/* the ids of those (16 bits: common_type's), so that a record of a
	 * known event costs no search */
	uint8_t known[65536 / 8];
	struct bytes ev;	/* the event being made */
	uint64_t last_ts;	/* the newest record's time */
	bool failed;		/* a write failed: said once, nothing more */
};

/* ---- bytes ------------------------------------------------------------- */

static bool reserve(struct bytes *b, size_t more)
{
	size_t cap = b->cap ? b->cap : 256;
	uint8_t *p;

	if (b->n + more <= b->cap)
		return true;
	while (cap < b->n + more)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

static void put(struct bytes *b, const void *p, size_t n)
{
	if (!n || !reserve(b, n))
		return;
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

/* Little-endian, the trace's byte order (and the host's: x86-64). */
static void put_int(struct bytes *b, uint64_t v, unsigned size)
{
	put(b, &v, size);
}

static void put_cstr(struct bytes *b, const char *s, size_t n)
{
	put(b, s, n);
	put_int(b, 0, 1);
}

/* ---- the shape of a field ---------------------------------------------- */

enum shape_kind { SH_INT, SH_STR, SH_STACK };

/* What a field is in the trace: @n elements of @esz bytes (strings: the
 * __data_loc words) from @off of the record. */
struct shape {
	enum shape_kind kind;
	unsigned off, n, esz;
	bool array, sign, hex, text;
};

static bool int_size(unsigned esz)
{
	return esz == 1 || esz == 2 || esz == 4 || esz == 8;
}

/* A probe argument or a tracepoint's field: its dp_type says. */
static int arg_shape(const struct dp_field *f, struct shape *s)
{
	enum dp_type_kind k = f->ptype->kind;
	struct dp_rec_geom g;

	if (dp_rec_geom(f, &g))
		return -1;
	*s = (struct shape){
		.kind = g.string ? SH_STR : SH_INT, .off = g.off, .n = g.n,
		.esz = g.esz, .array = g.array, .sign = k == DP_T_S,
		.hex = k == DP_T_X || k == DP_T_SYMBOL, .text = k == DP_T_CHAR,
	};
	/* a char alone is a one-char text, which readers print as one */
	if (s->text)
		s->array = true;
	return 0;
}

/* A field with no dp_type: a probe's header word (an address), or a
 * synthetic event's number, string, char[N] or stack. */
static int plain_shape(const struct dp_event *ev, const struct dp_field *f,
		       struct shape *s)
{
	*s = (struct shape){ .kind = SH_INT, .off = f->offset, .n = 1,
			     .esz = f->size, .sign = f->is_signed,
			     .hex = !ev->synth };
	switch (f->fclass) {
	case DP_FC_STACK:
		s->kind = SH_STACK;
		s->esz = 4;
		return 0;
	case DP_FC_STRING:
		s->kind = SH_STR;
		s->esz = 4;
		return 0;
	case DP_FC_ARRAY:
		s->array = true;
		s->n = f->count;
		s->esz = f->elem_size;
		s->text = s->esz == 1 && f->type && strstr(f->type, "char");
		break;
	default:
		break;
	}
	return int_size(s->esz) ? 0 : -1;
}

static int shape_of(const struct dp_event *ev, const struct dp_field *f,
		    struct shape *s)
{
	return f->ptype ? arg_shape(f, s) : plain_shape(ev, f, s);
}

/* ---- metadata ---------------------------------------------------------- */

/* A TSDL string literal's inside. */
static void put_lit(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', out);
		if ((unsigned char)*s >= 0x20)
			fputc(*s, out);
	}
}

/* A field's name as an identifier: readers drop the leading '_', which
 * keeps names such as "string" or "align" from being keywords. */
static void put_ident(FILE *out, const char *name, const char *suffix)
{
	fputc('_', out);
	for (const char *p = name; *p; p++)
		fputc((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') ? *p : '_', out);
	fputs(suffix, out);
}

static void put_int_type(FILE *out, unsigned bits, bool sign, bool hex,
			 bool text)
{
	fprintf(out, "integer { size = %u; align = 8; signed = %d; "
		"encoding = %s; base = %u; }", bits, sign,
		text ? "UTF8" : "none", hex ? 16 : 10);
}

static void put_field_decl(FILE *out, const struct dp_event *ev,
			   const struct dp_field *f)
{
	struct shape s;

	if (shape_of(ev, f, &s))
		return;
	fputs("\t\t", out);
	if (s.kind == SH_STACK) {
		fputs("uint32_t ", out);
		put_ident(out, f->name, "_len;\n\t\t");
		put_int_type(out, 64, false, true, false);
		fputc(' ', out);
		put_ident(out, f->name, "[");
		put_ident(out, f->name, "_len];\n");
		return;
	}
	if (s.kind == SH_STR)
		fputs("string", out);
	else
		put_int_type(out, s.esz * 8, s.sign, s.hex, s.text);
	fputc(' ', out);
	put_ident(out, f->name, "");
	if (s.array)
		fprintf(out, "[%u]", s.n);
	fputs(";\n", out);
}

static void put_event_decl(FILE *out, const struct dp_event *ev)
{
	fputs("event {\n\tname = \"", out);
	put_lit(out, ev->group);
	fputc(':', out);
	put_lit(out, ev->name);
	fprintf(out, "\";\n\tid = %u;\n\tstream_id = 0;\n"
		"\tfields := struct {\n", ev->id);
	for (unsigned i = 0; i < ev->nfields; i++)
		put_field_decl(out, ev, &ev->fields[i]);
	if (ev->stack) {
		fputs("\t\tuint32_t ___stack_len;\n\t\t", out);
		put_int_type(out, 64, false, true, false);
		fputs(" ___stack[___stack_len];\n", out);
	}
	fputs("\t};\n};\n\n", out);
}

static void put_uuid(FILE *out, const uint8_t *u)
{
	for (int i = 0; i < 16; i++)
		fprintf(out, "%s%02x", i == 4 || i == 6 || i == 8 || i == 10 ?
			"-" : "", u[i]);
}

static void put_env(FILE *out, const struct dp_renderer *r)
{
	char host[256] = "";
	struct utsname u;
	const char *base = strrchr(r->path, '/');

	gethostname(host, sizeof(host) - 1);
	fputs("env {\n\thostname = \"", out);
	put_lit(out, host);
	fputs("\";\n\tdomain = \"ust\";\n\ttracer_name = \"dprobe\";\n"
	      "\ttrace_name = \"", out);
	put_lit(out, base && base[1] ? base + 1 : r->path);
	fputs("\";\n", out);
	if (!uname(&u)) {
		fputs("\tsysname = \"", out);
		put_lit(out, u.sysname);
		fputs("\";\n\tkernel_release = \"", out);
		put_lit(out, u.release);
		fputs("\";\n", out);
	}
	fputs("};\n\n", out);
}

static void put_clock(FILE *out, const struct ctf *c)
{
	int64_t s = c->offset_ns / 1000000000, ns = c->offset_ns % 1000000000;

	if (ns < 0) {
		s--;
		ns += 1000000000;
	}
	fputs("clock {\n\tname = \"monotonic\";\n\tuuid = \"", out);
	put_uuid(out, c->uuid);
	fprintf(out, "\";\n\tdescription = \"CLOCK_MONOTONIC\";\n"
		"\tfreq = 1000000000;\n\tprecision = 1;\n"
		"\toffset_s = %" PRId64 ";\n\toffset = %" PRId64 ";\n};\n\n"
		"typealias integer { size = 64; align = 8; signed = 0; "
		"map = clock.monotonic.value; } := uint64_clock_monotonic_t;\n\n",
		s, ns);
}

static const char tsdl_head[] =
	"/* CTF 1.8 */\n\n"
	"typealias integer { size = 8; align = 8; signed = 0; } := uint8_t;\n"
	"typealias integer { size = 32; align = 8; signed = 0; } := uint32_t;\n"
	"typealias integer { size = 32; align = 8; signed = 1; } := int32_t;\n"
	"typealias integer { size = 64; align = 8; signed = 0; } := uint64_t;\n\n";

static const char tsdl_stream[] =
	"stream {\n"
	"\tid = 0;\n"
	"\tpacket.context := struct {\n"
	"\t\tuint64_clock_monotonic_t timestamp_begin;\n"
	"\t\tuint64_clock_monotonic_t timestamp_end;\n"
	"\t\tuint64_t content_size;\n"
	"\t\tuint64_t packet_size;\n"
	"\t\tuint64_t events_discarded;\n"
	"\t\tuint32_t cpu_id;\n"
	"\t};\n"
	"\tevent.header := struct {\n"
	"\t\tuint32_t id;\n"
	"\t\tuint64_clock_monotonic_t timestamp;\n"
	"\t};\n"
	"\tevent.context := struct {\n"
	"\t\tint32_t _vpid;\n"
	"\t\tint32_t _vtid;\n"
	"\t\tstring _procname;\n"
	"\t};\n"
	"};\n\n";

static void put_metadata(FILE *out, const struct dp_renderer *r)
{
	const struct ctf *c = r->priv;

	fputs(tsdl_head, out);
	fputs("trace {\n\tmajor = 1;\n\tminor = 8;\n\tuuid = \"", out);
	put_uuid(out, c->uuid);
	fputs("\";\n\tbyte_order = le;\n\tpacket.header := struct {\n"
	      "\t\tuint32_t magic;\n\t\tuint8_t uuid[16];\n"
	      "\t\tuint32_t stream_id;\n\t};\n};\n\n", out);
	put_env(out, r);
	put_clock(out, c);
	fputs(tsdl_stream, out);
	for (size_t i = 0; i < c->nevs; i++)
		put_event_decl(out, c->evs[i]);
}

static void fail(struct dp_renderer *r, const char *what, int err)
{
	struct ctf *c = r->priv;

	if (!c->failed)
		fprintf(stderr, "dprobe: %s/%s: %s\n", r->path, what,
			strerror(err));
	c->failed = true;
}

/* DIR/metadata, whole or not at all: written aside, then renamed. */
static void write_metadata(struct dp_renderer *r)
{
	char tmp[4096], path[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s/.metadata.tmp", r->path);
	snprintf(path, sizeof(path), "%s/metadata", r->path);
	f = fopen(tmp, "we");
	if (!f) {
		fail(r, "metadata", errno);
		return;
	}
	put_metadata(f, r);
	if (ferror(f) | fclose(f) || rename(tmp, path)) {
		fail(r, "metadata", errno ? errno : EIO);
		unlink(tmp);
	}
}

/* ---- streams ----------------------------------------------------------- */

static struct stream *stream_of(struct dp_renderer *r, int cpu)
{
	struct ctf *c = r->priv;
	struct stream *s;

	if (cpu < 0)
		cpu = 0;
	if (cpu >= c->ns) {
		s = realloc(c->s, (size_t)(cpu + 1) * sizeof(*s));
		if (!s)
			return NULL;
		for (int i = c->ns; i <= cpu; i++)
			s[i] = (struct stream){ .fd = -1 };
		c->s = s;
		c->ns = cpu + 1;
	}
	return &c->s[cpu];
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? errno : EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static void put_at(uint8_t *p, uint64_t v, unsigned size)
{
	memcpy(p, &v, size);
}

/* A packet's head: @size bytes, @content of them used, from @t0 to @t1,
 * @discarded events lost on the CPU up to its end. */
static void put_head(const struct ctf *c, uint8_t *h, int cpu, size_t size,
		     size_t content, uint64_t t0, uint64_t t1,
		     uint64_t discarded)
{
	put_at(h, CTF_MAGIC, 4);
	memcpy(h + 4, c->uuid, 16);
	put_at(h + 20, 0, 4);
	put_at(h + 24, t0, 8);
	put_at(h + 32, t1, 8);
	put_at(h + 40, (uint64_t)content * 8, 8);
	put_at(h + 48, (uint64_t)size * 8, 8);
	put_at(h + 56, discarded, 8);
	put_at(h + 64, (uint64_t)cpu, 4);
}

/* @n bytes to DIR/stream_CPU, opened the first time. */
static void stream_write(struct dp_renderer *r, int cpu, const uint8_t *p,
			 size_t n)
{
	struct ctf *c = r->priv;
	struct stream *s = &c->s[cpu];
	char name[32], path[4096];
	int err;

	snprintf(name, sizeof(name), "stream_%d", cpu);
	if (s->fd < 0) {
		snprintf(path, sizeof(path), "%s/%s", r->path, name);
		s->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			     0666);
		if (s->fd < 0) {
			fail(r, name, errno);
			return;
		}
	}
	err = write_all(s->fd, p, n);
	if (err)
		fail(r, name, err);
}

/* The open packet of CPU @cpu, its head filled and its padding added,
 * to the stream.  Readers count the events lost in a packet from the
 * packet before it: a stream's first packet with losses comes after an
 * empty one that has none. */
static void close_packet(struct dp_renderer *r, int cpu)
{
	struct ctf *c = r->priv;
	struct stream *s = &c->s[cpu];
	uint8_t empty[PACKET_HEAD];

	if (!s->used)
		return;
	s->used = false;
	if (c->failed || !reserve(&s->pkt, s->size - s->pkt.n))
		return;
	if (s->fd < 0 && s->discarded) {
		put_head(c, empty, cpu, PACKET_HEAD, PACKET_HEAD, s->first_ts,
			 s->first_ts, 0);
		stream_write(r, cpu, empty, PACKET_HEAD);
	}
	put_head(c, s->pkt.p, cpu, s->size, s->pkt.n, s->first_ts,
		 s->last_ts, s->discarded);
	s->told = s->discarded;
	memset(s->pkt.p + s->pkt.n, 0, s->size - s->pkt.n);
	stream_write(r, cpu, s->pkt.p, s->size);
}

/* A packet opened on @s at @ts with room for @need bytes of events. */
static void open_packet(struct stream *s, size_t need, uint64_t ts)
{
	s->size = PACKET_SIZE;
	while (s->size < PACKET_HEAD + need)
		s->size *= 2;
	s->pkt.n = 0;
	put(&s->pkt, (uint8_t[PACKET_HEAD]){ 0 }, PACKET_HEAD);
	s->first_ts = s->last_ts = ts;
	s->used = true;
}

/* ---- events ------------------------------------------------------------ */

/* The string of the __data_loc word at @slot, checked against @len (a
 * synthetic event's fields are not among those dp_rec_check() checks). */
static int put_loc_str(struct bytes *b, const uint8_t *rec, size_t len,
		       const uint8_t *slot)
{
	uint32_t loc = (uint32_t)dp_rec_load(slot, 4);
	const char *s;
	size_t n;

	if ((size_t)dp_data_loc_off(loc) + dp_data_loc_len(loc) > len)
		return -1;
	if (dp_rec_str(rec, slot, &s, &n))
		put_cstr(b, s, n);
	else
		put_cstr(b, FAULT_TEXT, sizeof(FAULT_TEXT) - 1);
	return 0;
}

/* A synthetic event's stack: the frame count first, then the frames. */
static int put_stack(struct bytes *b, const uint8_t *rec, size_t len,
		     const uint8_t *slot)
{
	uint32_t loc = (uint32_t)dp_rec_load(slot, 4);
	size_t off = dp_data_loc_off(loc), n = dp_data_loc_len(loc) / 8;
	uint64_t count;

	if (off + n * 8 > len)
		return -1;
	count = n ? dp_rec_load(rec + off, 8) : 0;
	if (count > n - !!n)
		count = n - !!n;
	put_int(b, count, 4);
	put(b, rec + off + 8, (size_t)count * 8);
	return 0;
}

static int put_field(struct bytes *b, const struct dp_event *ev,
		     const struct dp_field *f, const uint8_t *rec, size_t len)
{
	struct shape s;

	if (shape_of(ev, f, &s))
		return 0;	/* left out of the metadata too */
	if ((uint64_t)s.off + (uint64_t)s.n * s.esz > len)
		return -1;
	if (s.kind == SH_STACK)
		return put_stack(b, rec, len, rec + s.off);
	if (s.kind == SH_INT) {
		put(b, rec + s.off, (size_t)s.n * s.esz);
		return 0;
	}
	for (unsigned i = 0; i < s.n; i++)
		if (put_loc_str(b, rec, len, rec + s.off + i * s.esz))
			return -1;
	return 0;
}

/* @ev's bytes for the trace (header, context, fields) in c->ev. */
static int make_event(struct ctf *c, const struct dp_event *ev,
		      const uint8_t *rec, size_t len,
		      const struct dp_rec_meta *meta, uint64_t ts)
{
	const char *comm = meta->comm ? meta->comm : "<...>";
	struct bytes *b = &c->ev;

	b->n = 0;
	b->oom = false;
	put_int(b, ev->id, 4);
	put_int(b, ts, 8);
	put_int(b, (uint32_t)meta->tgid, 4);
	put_int(b, (uint32_t)meta->pid, 4);
	put_cstr(b, comm, strlen(comm));
	for (unsigned i = 0; i < ev->nfields; i++)
		if (put_field(b, ev, &ev->fields[i], rec, len))
			return -1;
	if (ev->stack) {
		unsigned n = meta->stack ? meta->nstack : 0;

		put_int(b, n, 4);
		put(b, meta->stack, (size_t)n * 8);
	}
	return b->oom ? -1 : 0;
}

/* @ev in the metadata, written again the first time it is seen. */
static void know_event(struct dp_renderer *r, const struct dp_event *ev)
{
	struct ctf *c = r->priv;
	const struct dp_event **v;
	unsigned id = ev->id & 0xffff;

	if (ev->id == id && c->known[id / 8] & 1u << id % 8)
		return;
	for (size_t i = 0; i < c->nevs; i++)
		if (c->evs[i] == ev)
			return;
	v = realloc(c->evs, (c->nevs + 1) * sizeof(*v));
	if (!v)
		return;
	c->evs = v;
	c->evs[c->nevs++] = ev;
	c->known[id / 8] |= (uint8_t)(1u << id % 8);
	write_metadata(r);
}

static int ctf_event(struct dp_renderer *r, const struct dp_event *ev,
		     const void *rec, size_t len,
		     const struct dp_rec_meta *meta,
		     const struct dp_symbolizer *sym)
{
	struct ctf *c = r->priv;
	struct stream *s;
	uint64_t ts;
	int cpu;

	(void)sym;
	if (!c || !ev || !meta || dp_rec_check(ev, rec, len))
		return -1;
	cpu = meta->cpu < 0 ? 0 : meta->cpu;
	s = stream_of(r, cpu);
	if (!s)
		return -1;
	ts = s->used && meta->ts_ns < s->last_ts ? s->last_ts : meta->ts_ns;
	if (make_event(c, ev, rec, len, meta, ts))
		return -1;
	know_event(r, ev);
	if (s->used && s->pkt.n + c->ev.n > s->size)
		close_packet(r, cpu);
	if (!s->used)
		open_packet(s, c->ev.n, ts);
	put(&s->pkt, c->ev.p, c->ev.n);
	s->last_ts = ts;
	if (ts > c->last_ts)
		c->last_ts = ts;
	return 0;
}

/* Lost events count in the packet context of their CPU's stream (the
 * packet open, the next one, or an empty one at the end); a number not
 * known counts as one (at least one was lost). */
static void ctf_lost(struct dp_renderer *r, int cpu, unsigned long n)
{
	struct ctf *c = r->priv;
	struct stream *s;

	if (!c)
		return;
	s = stream_of(r, cpu);
	if (s)
		s->discarded += n == DP_LOST_UNKNOWN ? 1 : n;
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void ctf_begin(struct dp_renderer *r)
{
	struct ctf *c = r->path ? calloc(1, sizeof(*c)) : NULL;

	/* no directory (the CLI always gives one): nothing is written */
	r->priv = c;
	if (!c)
		return;
	if (getrandom(c->uuid, sizeof(c->uuid), 0) != sizeof(c->uuid))
		for (int i = 0; i < 16; i++)
			c->uuid[i] = (uint8_t)(clock_ns(CLOCK_MONOTONIC) >> i);
	c->uuid[6] = (uint8_t)((c->uuid[6] & 0x0f) | 0x40);	/* v4 */
	c->uuid[8] = (uint8_t)((c->uuid[8] & 0x3f) | 0x80);
	/* once: the wall clock moving later must not move the trace */
	c->offset_ns = (int64_t)(clock_ns(CLOCK_REALTIME) -
				 clock_ns(CLOCK_MONOTONIC));
	c->last_ts = clock_ns(CLOCK_MONOTONIC);
}

static void ctf_end(struct dp_renderer *r)
{
	struct ctf *c = r->priv;

	if (!c)
		return;
	/* a trace with no stream is one that readers refuse */
	if (!c->ns && stream_of(r, 0))
		open_packet(&c->s[0], 0, c->last_ts);
	for (int i = 0; i < c->ns; i++) {
		struct stream *s = &c->s[i];

		/* losses that no packet has told yet: an empty one tells them */
		if (!s->used && s->discarded != s->told)
			open_packet(s, 0, s->fd < 0 ? c->last_ts : s->last_ts);
		close_packet(r, i);
		if (s->fd >= 0)
			close(s->fd);
		free(s->pkt.p);
	}
	write_metadata(r);
	free(c->s);
	free(c->evs);
	free(c->ev.p);
	free(c);
	r->priv = NULL;
}

/* Another process ends the trace: its files are left as they are. */
static void ctf_discard(struct dp_renderer *r)
{
	struct ctf *c = r->priv;

	if (!c)
		return;
	for (int i = 0; i < c->ns; i++) {
		if (c->s[i].fd >= 0)
			close(c->s[i].fd);
		free(c->s[i].pkt.p);
	}
	free(c->s);
	free(c->evs);
	free(c->ev.p);
	free(c);
	r->priv = NULL;
}

const struct dp_renderer_ops dp_render_ctf = {
	.discard = ctf_discard,
	.name = "ctf",
	.begin = ctf_begin,
	.event = ctf_event,
	.lost = ctf_lost,
	.end = ctf_end,
	.dir = true,
};
