// SPDX-License-Identifier: GPL-2.0
/*
 * JSON lines: one object per record, for programs rather than people.
 *
 *   {"event":"t1","group":"grp","id":1000,"ts":5592.123457,"cpu":1,
 *    "pid":21548,"tgid":21548,"comm":"target","ip":"0x401146",
 *    "args":{"x":"0x28","s":"hello world"}}
 *
 * Header keys, in this order:
 *   event, group   strings
 *   id             the event id (number)
 *   ts             seconds since boot as a number with exactly 6 decimals,
 *                  rounded to the microsecond like the `trace` timestamp
 *                  (printed from integers, so it is never a float artefact);
 *                  9 decimals, the nanoseconds, with dprobe trace --ts ns
 *   cpu, pid, tgid numbers
 *   comm           string, or null when the task name is unknown
 *   ip             entry probes: "0x..." (hex string: addresses can exceed
 *                  2^53, which JSON readers commonly cannot hold)
 *   func, ret_ip   return probes, instead of ip, as hex strings
 *   sym            kprobe-kind (symbol place) events whose address a
 *                  symbolizer knows: entry "sym+0xoff/0xsize" of ip;
 *                  return the bare function name of func
 *   ret_sym        kprobe-kind return events: "sym+0xoff/0xsize" of ret_ip
 *   args           object: argument name -> typed value
 *   faults         only when a string argument faulted: array of the names
 *                  of those arguments (in argument order)
 *   stack          only for events traced with --stack: the user stack at
 *                  the hit, innermost first, each frame {"ip":"0x...",
 *                  "sym":"sym+0xoff/0xsize"} ("sym" where a symbol covers it);
 *                  a walk that stopped at a bad frame ends with
 *                  {"bad_frame":true}; the stack tracer's (ftrace/stack)
 *                  frames have "depth" too: bytes from the top of the
 *                  thread's stack to the frame (where known)
 *
 * Argument values by type:
 *   u*, bitfield   JSON number, unsigned decimal (exact, also above 2^53)
 *   s*             JSON number, signed decimal
 *   x*             string "0x..." lowercase, no padding (as in `trace`)
 *   char           one-character string (escaped as below)
 *   string, ustring, symstr
 *                  string, cut at the first NUL, or null if it faulted
 *   symbol         string "sym+0xoff/0xsize", or "0x..." with no symbol
 *   T[N]           array of the element values (string arrays may hold
 *                  null for faulted elements)
 *
 * Strings are escaped so every line is valid JSON whatever the traced
 * program put in memory: '"' and '\\' get a backslash; \b \f \n \r \t
 * their short forms; other bytes below 0x20 and DEL as \u00XX.  Valid
 * UTF-8 sequences are copied through; every byte that is not part of a
 * valid sequence becomes \u00XX (so the byte value survives, read as
 * Latin-1, instead of the line being rejected by a strict parser).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "output/output.h"
#include "output/render.h"

/* ---- escaping ---------------------------------------------------------- */

static bool cont(uint8_t c)
{
	return (c & 0xc0) == 0x80;
}

/*
 * Length of the well-formed UTF-8 sequence at @s (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF), or 0 if there is none.
 */
static size_t utf8_len(const uint8_t *s, size_t n)
{
	uint8_t c = s[0];

	if (c >= 0xc2 && c <= 0xdf)
		return n >= 2 && cont(s[1]) ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		uint8_t lo = c == 0xe0 ? 0xa0 : 0x80;
		uint8_t hi = c == 0xed ? 0x9f : 0xbf;

		return n >= 3 && s[1] >= lo && s[1] <= hi && cont(s[2]) ? 3 : 0;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		uint8_t lo = c == 0xf0 ? 0x90 : 0x80;
		uint8_t hi = c == 0xf4 ? 0x8f : 0xbf;

		return n >= 4 && s[1] >= lo && s[1] <= hi && cont(s[2]) &&
		       cont(s[3]) ? 4 : 0;
	}
	return 0;
}

static void put_u00(FILE *out, uint8_t c)
{
	static const char digits[] = "0123456789abcdef";
	char buf[6] = { '\\', 'u', '0', '0', digits[c >> 4], digits[c & 0xf] };

	fwrite_unlocked(buf, 1, sizeof(buf), out);
}

static void put_ascii(FILE *out, uint8_t c)
{
	switch (c) {
	case '"':  fputs_unlocked("\\\"", out); return;
	case '\\': fputs_unlocked("\\\\", out); return;
	case '\b': fputs_unlocked("\\b", out); return;
	case '\f': fputs_unlocked("\\f", out); return;
	case '\n': fputs_unlocked("\\n", out); return;
	case '\r': fputs_unlocked("\\r", out); return;
	case '\t': fputs_unlocked("\\t", out); return;
	}
	if (c < 0x20 || c == 0x7f)
		put_u00(out, c);
	else
		fputc_unlocked(c, out);
}

/* The inside of a JSON string (no quotes) for @n bytes at @s. */
static void put_chars(FILE *out, const void *s, size_t n)
{
	const uint8_t *p = s;
	size_t i = 0, k;

	while (i < n) {
		if (p[i] < 0x80) {
			put_ascii(out, p[i++]);
			continue;
		}
		k = utf8_len(p + i, n - i);
		if (k) {
			fwrite_unlocked(p + i, 1, k, out);
			i += k;
		} else {
			put_u00(out, p[i++]);
		}
	}
}

static void put_str(FILE *out, const void *s, size_t n)
{
	fputc_unlocked('"', out);
	put_chars(out, s, n);
	fputc_unlocked('"', out);
}

static void put_cstr(FILE *out, const char *s)
{
	put_str(out, s, strlen(s));
}

static void put_hexstr(FILE *out, uint64_t v)
{
	fputc_unlocked('"', out);
	dp_out_hex(out, v);
	fputc_unlocked('"', out);
}

/* ",\"key\":" for keys known to need no escaping. */
static void put_key(FILE *out, const char *key)
{
	fputs_unlocked(",\"", out);
	fputs_unlocked(key, out);
	fputs_unlocked("\":", out);
}

/* ---- values ------------------------------------------------------------ */

/* "sym+0xoff/0xsize" (or the bare name) as a JSON string. */
static void put_symval(FILE *out, const char *name, uint64_t off,
		       uint64_t size, bool offset)
{
	fputc_unlocked('"', out);
	put_chars(out, name, strlen(name));
	if (offset)
		fprintf(out, "+0x%" PRIx64 "/0x%" PRIx64, off, size);
	fputc_unlocked('"', out);
}

/* %pS as a string: the symbol form, or the bare address. */
static void put_symbol(FILE *out, const struct dp_trace_opts *opts,
		       uint64_t addr)
{
	const char *name;
	uint64_t off, size;

	if (dp_out_lookup(opts, addr, &name, &off, &size))
		put_symval(out, name, off, size, true);
	else
		put_hexstr(out, addr);
}

/* A header key holding the symbol of @addr, left out when there is none. */
static void put_symkey(FILE *out, const struct dp_trace_opts *opts,
		       const char *key, uint64_t addr, bool offset)
{
	const char *name;
	uint64_t off, size;

	if (!addr || !dp_out_lookup(opts, addr, &name, &off, &size))
		return;
	put_key(out, key);
	put_symval(out, name, off, size, offset);
}

static void put_elem(FILE *out, const struct dp_type *t, const uint8_t *r,
		     const uint8_t *p, unsigned esz,
		     const struct dp_trace_opts *opts)
{
	const char *s;
	size_t n;

	switch (t->kind) {
	case DP_T_U:
	case DP_T_BITFIELD:
		dp_out_udec(out, dp_rec_load(p, esz));
		break;
	case DP_T_S:
		dp_out_sdec(out, dp_rec_sload(p, esz));
		break;
	case DP_T_CHAR:
		put_str(out, p, 1);
		break;
	case DP_T_STRING:
	case DP_T_USTRING:
	case DP_T_SYMSTR:
		if (dp_rec_str(r, p, &s, &n))
			put_str(out, s, n);
		else
			fputs_unlocked("null", out);
		break;
	case DP_T_SYMBOL:
		put_symbol(out, opts, dp_rec_load(p, esz));
		break;
	case DP_T_X:
	default:
		put_hexstr(out, dp_rec_load(p, esz));
		break;
	}
}

static void put_arg(FILE *out, const struct dp_field *f, const uint8_t *r,
		    const struct dp_trace_opts *opts)
{
	struct dp_rec_geom g;
	unsigned i;

	dp_rec_geom(f, &g);	/* cannot fail: dp_rec_check() passed */
	put_cstr(out, f->name);
	fputc_unlocked(':', out);
	if (!g.array) {
		put_elem(out, f->ptype, r, dp_rec_elem(r, &g, 0), g.esz,
			 opts);
		return;
	}
	fputc_unlocked('[', out);
	for (i = 0; i < g.n; i++) {
		if (i)
			fputc_unlocked(',', out);
		put_elem(out, f->ptype, r, dp_rec_elem(r, &g, i), g.esz,
			 opts);
	}
	fputc_unlocked(']', out);
}

/* True if a string argument has a faulted (length 0) element. */
static bool faulted(const struct dp_field *f, const uint8_t *r)
{
	struct dp_rec_geom g;
	unsigned i;

	if (!f->ptype || dp_rec_geom(f, &g) || !g.string)
		return false;
	for (i = 0; i < g.n; i++)
		if (dp_rec_str_faulted(dp_rec_elem(r, &g, i)))
			return true;
	return false;
}

/* ---- one line ---------------------------------------------------------- */

static void put_meta(FILE *out, const struct dp_event *ev,
		     const struct dp_rec_meta *meta, enum dp_ts_mode ts)
{
	fputs_unlocked("{\"event\":", out);
	put_cstr(out, ev->name);
	put_key(out, "group");
	put_cstr(out, ev->group);
	put_key(out, "id");
	dp_out_udec(out, ev->id);
	put_key(out, "ts");
	dp_put_ts(out, meta->ts_ns, ts, 0);
	put_key(out, "cpu");
	dp_out_sdec(out, meta->cpu);
	put_key(out, "pid");
	dp_out_sdec(out, meta->pid);
	put_key(out, "tgid");
	dp_out_sdec(out, meta->tgid);
	put_key(out, "comm");
	if (meta->comm)
		put_cstr(out, meta->comm);
	else
		fputs_unlocked("null", out);
}

static void put_place(FILE *out, const struct dp_event *ev, const uint8_t *r,
		      const struct dp_trace_opts *opts)
{
	bool ksym = ev->kind == DP_KIND_KPROBE;
	uint64_t ip, func, ret_ip;

	if (ev->kind == DP_KIND_TRACEPOINT || ev->synth)
		return;
	if (!ev->is_return) {
		ip = dp_rec_load(r + DP_REC_IP_OFF, 8);
		put_key(out, "ip");
		put_hexstr(out, ip);
		if (ksym)
			put_symkey(out, opts, "sym", ip, true);
		return;
	}
	func = dp_rec_load(r + DP_REC_FUNC_OFF, 8);
	ret_ip = dp_rec_load(r + DP_REC_RET_IP_OFF, 8);
	put_key(out, "func");
	put_hexstr(out, func);
	put_key(out, "ret_ip");
	put_hexstr(out, ret_ip);
	if (ksym) {
		put_symkey(out, opts, "sym", func, false);
		put_symkey(out, opts, "ret_sym", ret_ip, true);
	}
}

static void put_faults(FILE *out, const struct dp_event *ev, const uint8_t *r)
{
	bool any = false;
	unsigned i;

	for (i = 0; i < ev->nfields; i++) {
		if (!faulted(&ev->fields[i], r))
			continue;
		fputs_unlocked(any ? "," : ",\"faults\":[", out);
		put_cstr(out, ev->fields[i].name);
		any = true;
	}
	if (any)
		fputc_unlocked(']', out);
}

/* --stack: "stack":[{"ip":"0x...","sym":"sym+0xoff/0xsize"}...],
 * innermost first, "sym" only where a symbol covers the frame; a walk
 * that stopped at a bad frame ends with {"bad_frame":true}. */
static void put_stack(FILE *out, const struct dp_rec_meta *meta,
		      const struct dp_trace_opts *opts)
{
	if (!meta->stack)
		return;
	put_key(out, "stack");
	fputc_unlocked('[', out);
	for (unsigned i = 0; i < meta->nstack; i++) {
		if (i)
			fputc_unlocked(',', out);
		if (meta->stack[i] == DP_STACK_BAD_FRAME) {
			fputs_unlocked("{\"bad_frame\":true}", out);
			continue;
		}
		fputs_unlocked("{\"ip\":", out);
		put_hexstr(out, meta->stack[i]);
		put_symkey(out, opts, "sym", meta->stack[i], true);
		if (meta->stack_depth && meta->stack_depth[i]) {
			fputs_unlocked(",\"depth\":", out);
			dp_out_udec(out, meta->stack_depth[i]);
		}
		fputc_unlocked('}', out);
	}
	fputc_unlocked(']', out);
}

void dp_json_args(FILE *out, const struct dp_event *ev, const void *rec,
		  const struct dp_trace_opts *opts)
{
	const uint8_t *r = rec;
	bool first = true;

	fputc_unlocked('{', out);
	for (unsigned i = 0; i < ev->nfields; i++) {
		const struct dp_field *f = &ev->fields[i];

		if (ev->synth && f->fclass == DP_FC_NUM) {
			/* a synthetic event's numbers (hist actions) */
			if (!first)
				fputc_unlocked(',', out);
			put_cstr(out, f->name);
			fputc_unlocked(':', out);
			if (f->is_signed)
				dp_out_sdec(out, dp_rec_sload(r + f->offset,
							      f->size));
			else
				dp_out_udec(out, dp_rec_load(r + f->offset,
							     f->size));
			first = false;
			continue;
		}
		if (!f->ptype)
			continue;
		if (!first)
			fputc_unlocked(',', out);
		put_arg(out, f, r, opts);
		first = false;
	}
	fputc_unlocked('}', out);
}

int dp_json_line(FILE *out, const struct dp_event *ev, const void *rec,
		 size_t len, const struct dp_rec_meta *meta,
		 const struct dp_trace_opts *opts)
{
	const uint8_t *r = rec;

	if (!ev || !meta || dp_rec_check(ev, rec, len))
		return -1;
	flockfile(out);
	put_meta(out, ev, meta, opts ? opts->ts : DP_TS_US);
	put_place(out, ev, r, opts);
	put_key(out, "args");
	dp_json_args(out, ev, rec, opts);
	put_faults(out, ev, r);
	put_stack(out, meta, opts);
	fputs_unlocked("}\n", out);
	funlockfile(out);
	return 0;
}

void dp_json_strn(FILE *out, const void *s, size_t n)
{
	put_str(out, s, n);
}

void dp_json_string(FILE *out, const char *s)
{
	if (s)
		put_cstr(out, s);
	else
		fputs("null", out);
}
