// SPDX-License-Identifier: GPL-2.0
/*
 * dprobe show's text: what a probe location did to the code (engine.h's
 * struct dp_show_site), read back from the process's memory and
 * disassembled, so that what is printed is what runs, not what dprobe
 * meant to write.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "arch/arch.h"
#include "engine/engine.h"

#define SHOW_MAX	1024	/* bytes of a detour shown at most */
#define SLOT_MAX	64	/* a slot or tail: a copy and a jmp back */

/* Code of ours that no symbol names: the detour, its tail, the slot. */
struct show_area {
	const char *label;
	uint64_t start, len;
};

struct show_ctx {
	FILE *out;
	const struct dp_symbolizer *sym;
	int mem;		/* /proc/PID/mem, -1: unreadable */
	uint64_t back;		/* the last jmp's destination */
	struct show_area area[3];
	enum dp_entry_site entry;	/* the compiler's site at the probe */
};

static int mem_read(const struct show_ctx *c, uint64_t addr, uint8_t *buf,
		    size_t len)
{
	ssize_t n = c->mem < 0 ? -1 : pread(c->mem, buf, len, (off_t)addr);

	return n == (ssize_t)len ? 0 : -EFAULT;
}

/* "work+0x4", "detour+0x1a", or "" where nothing names @addr. */
static bool name_of(const struct show_ctx *c, uint64_t addr, char *buf,
		    size_t len)
{
	const char *s;
	uint64_t off, size;

	for (size_t i = 0; i < sizeof(c->area) / sizeof(c->area[0]); i++)
		if (c->area[i].label && addr - c->area[i].start < c->area[i].len) {
			snprintf(buf, len, "%s+0x%" PRIx64, c->area[i].label,
				 addr - c->area[i].start);
			return true;
		}
	if (c->sym && c->sym->lookup &&
	    !c->sym->lookup(c->sym->priv, addr, &s, &off, &size) && s) {
		snprintf(buf, len, "%s+0x%" PRIx64, s, off);
		return true;
	}
	/* the nops before a function (its -fpatchable-function-entry=N,M
	 * site): "pick-0x5" */
	for (unsigned k = 1; c->sym && c->sym->lookup && k <= DP_ENTRY_PRE_LEN;
	     k++)
		if (!c->sym->lookup(c->sym->priv, addr + k, &s, &off, &size) &&
		    s && !off) {
			snprintf(buf, len, "%s-0x%x", s, k);
			return true;
		}
	snprintf(buf, len, "0x%" PRIx64, addr);
	return false;
}

static void name(const struct show_ctx *c, uint64_t addr, char *buf,
		 size_t len)
{
	name_of(c, addr, buf, len);
}

static void hex(const uint8_t *b, size_t n, char *buf, size_t len)
{
	size_t k = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && k + 4 <= len; i++)
		k += (size_t)snprintf(buf + k, len - k, "%s%02x", i ? " " : "",
				      b[i]);
}

static void line(struct show_ctx *c, const char *where, const uint8_t *b,
		 size_t n, const char *text)
{
	char h[3 * DP_INSN_MAX_LEN + 1];

	hex(b, n, h, sizeof(h));
	fprintf(c->out, "    %-22s %-30s %s\n", where, h, text);
}

/* The 8-byte address after `jmp *0(%rip)` (the emitter's far jump). */
static bool far_jump(const uint8_t *b, size_t avail, uint64_t *to)
{
	static const uint8_t jmp_abs[] = { 0xff, 0x25, 0, 0, 0, 0 };

	if (avail < sizeof(jmp_abs) + 8 || memcmp(b, jmp_abs, sizeof(jmp_abs)))
		return false;
	memcpy(to, b + sizeof(jmp_abs), 8);
	return true;
}

/* An immediate that may be an address ("mov $0x7f12..., %rax": the
 * handler, the probe address, the trampoline the detour compares with),
 * or 0. */
static uint64_t address_imm(const char *text)
{
	const char *d = strstr(text, "$0x");
	unsigned long long v;

	if (!d || sscanf(d + 1, "%llx", &v) != 1 || v < 0x10000)
		return 0;
	return v;
}

/*
 * Disassemble @len bytes of @code at @addr, each line named by what
 * holds it; with @to_jmp stop after the first unconditional jmp.
 * Returns the bytes shown.
 */
static size_t listing(struct show_ctx *c, uint64_t addr, const uint8_t *code,
		      size_t len, bool to_jmp)
{
	size_t off = 0;

	while (off < len) {
		char where[96], text[160], dst[96];
		uint64_t target = 0;
		int n = dp_disasm(code + off, len - off, addr + off, text,
				  sizeof(text), &target);

		name(c, addr + off, where, sizeof(where));
		if (n <= 0) {
			line(c, where, code + off, 1, "(bad)");
			off++;
			continue;
		}
		if (far_jump(code + off, len - off, &target))
			n += 8;
		if (!target)
			target = address_imm(text);
		if (target && name_of(c, target, dst, sizeof(dst))) {
			snprintf(text + strlen(text), sizeof(text) - strlen(text),
				 " <%s>", dst);
		}
		line(c, where, code + off, (size_t)n > DP_INSN_MAX_LEN ?
		     DP_INSN_MAX_LEN : (size_t)n, text);
		off += (size_t)n;
		if ((code[off - (size_t)n] == 0xe9 || code[off - (size_t)n] == 0xff ||
		     code[off - (size_t)n] == 0xeb) && target) {
			c->back = target;
			if (to_jmp)
				break;
		}
	}
	return off;
}

/* Code read from the process at @addr and listed; "" when unreadable. */
static void listing_at(struct show_ctx *c, const char *title, uint64_t addr,
		       size_t len, bool to_jmp)
{
	uint8_t buf[SHOW_MAX];

	if (len > sizeof(buf))
		len = sizeof(buf);
	fprintf(c->out, "  %s at 0x%" PRIx64 ":\n", title, addr);
	if (mem_read(c, addr, buf, len)) {
		fprintf(c->out, "    (cannot read the process's memory)\n");
		return;
	}
	listing(c, addr, buf, len, to_jmp);
}

/*
 * The bytes before the function at @s->addr that no symbol covers (the
 * nops of -fpatchable-function-entry=N,M), up to @cap of them, in @pre:
 * how many.  A short site's jmp there reads as the nops it replaced.
 */
static size_t before_symbol(const struct show_ctx *c,
			    const struct dp_show_site *s, uint8_t *pre,
			    size_t cap)
{
	const char *fn;
	uint64_t off, size, to;
	size_t n = 0;
	int32_t rel;

	while (n < cap && s->addr > n + 1 &&
	       c->sym->lookup(c->sym->priv, s->addr - n - 1, &fn, &off, &size))
		n++;
	if (!n || mem_read(c, s->addr - n, pre, n))
		return 0;
	if (n < DP_ENTRY_PRE_LEN || !s->detour ||
	    pre[n - DP_ENTRY_PRE_LEN] != 0xe9)
		return n;
	memcpy(&rel, pre + n - DP_ENTRY_PRE_LEN + 1, 4);
	to = s->addr + (uint64_t)(int64_t)rel;
	if (to == s->detour)
		memset(pre + n - DP_ENTRY_PRE_LEN, 0x90, DP_ENTRY_PRE_LEN);
	return n;
}

/* A compiler's entry site, when the probe is at a function's start. */
static void entry_site(struct show_ctx *c, const struct dp_show_site *s)
{
	uint8_t code[16], pre[16];
	const char *fn, *what;
	uint64_t off, size, at;
	size_t n = s->orig_len < sizeof(code) ? s->orig_len : sizeof(code);
	size_t npre;

	if (!c->sym || !c->sym->lookup ||
	    c->sym->lookup(c->sym->priv, s->addr, &fn, &off, &size) || off)
		return;
	memcpy(code, s->orig, n);
	if (n < sizeof(code) &&
	    mem_read(c, s->addr + n, code + n, sizeof(code) - n))
		return;
	npre = before_symbol(c, s, pre, sizeof(pre));
	c->entry = dp_entry_site_around(pre, npre, code, sizeof(code), s->addr,
					&at);
	what = dp_entry_site_name(c->entry);
	if (what)
		fprintf(c->out, "  entry site: %s\n", what);
}

/* A short site's jmp rel32 in the nops before the symbol, where its jmp
 * short goes. */
static void pre_jump(struct show_ctx *c, const struct dp_show_site *s)
{
	if (c->entry == DP_ENTRY_PATCHABLE_SHORT && s->optimized)
		listing_at(c, "before the symbol", s->addr - DP_ENTRY_PRE_LEN,
			   DP_ENTRY_PRE_LEN, false);
}

/* The bytes the probe displaced: the region of the jmp, or the one
 * instruction of the int3 (a detour built but not in use aside). */
static size_t displaced(const struct dp_show_site *s)
{
	int n = s->optimized ? -1 : dp_insn_length(s->orig, s->orig_len);

	return n > 0 ? (size_t)n : s->orig_len;
}

/* The bytes there now: the int3 (and the rest of the instruction it
 * covers), or the jmp and what pads the region. */
static void now(struct show_ctx *c, const struct dp_show_site *s)
{
	uint8_t code[64];
	size_t len = displaced(s) < sizeof(code) ? displaced(s) : sizeof(code);
	char where[96];

	fprintf(c->out, "  now:\n");
	if (mem_read(c, s->addr, code, len)) {
		fprintf(c->out, "    (cannot read the process's memory)\n");
		return;
	}
	if (s->optimized || code[0] != DP_INT3) {
		listing(c, s->addr, code, len, false);
		return;
	}
	name(c, s->addr, where, sizeof(where));
	line(c, where, code, 1, "int3");
	if (len > 1) {
		name(c, s->addr + 1, where, sizeof(where));
		line(c, where, code + 1, len - 1 > DP_INSN_MAX_LEN ?
		     DP_INSN_MAX_LEN : len - 1, "(the rest of the original "
		     "instruction)");
	}
}

/* How the thread comes back: through the detour, or the int3's slot. */
static void way_back(struct show_ctx *c, const struct dp_show_site *s)
{
	char dst[96];

	c->back = 0;
	if (s->detour && !s->optimized)
		fprintf(c->out, "  detour at 0x%" PRIx64 ": built, not in use "
			"(the int3 is)\n", s->detour);
	if (s->detour && s->optimized) {
		listing_at(c, "detour", s->detour, s->detour_len, false);
		if (s->tail)
			listing_at(c, "tail (the relocated region)", s->tail,
				   SLOT_MAX, true);
	} else if (s->xol && s->armed) {
		listing_at(c, "out-of-line slot", s->xol, SLOT_MAX, true);
	} else if (s->armed) {
		fprintf(c->out, "  emulated: the instruction is not run out "
			"of line, its effect is computed at the trap\n");
	}
	if (!c->back)
		return;
	name(c, c->back, dst, sizeof(dst));
	fprintf(c->out, "  jumps back to %s\n", dst);
}

void dp_show_site(FILE *out, const struct dp_show_site *s,
		  const struct dp_symbolizer *sym)
{
	struct show_ctx c = { .out = out, .sym = sym, .mem = -1, .area = {
		{ s->detour ? "detour" : NULL, s->detour, s->detour_len },
		{ s->tail ? "tail" : NULL, s->tail, SLOT_MAX },
		{ s->xol ? "slot" : NULL, s->xol, SLOT_MAX } } };
	char path[64], where[96];

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)s->pid);
	c.mem = open(path, O_RDONLY | O_CLOEXEC);
	name(&c, s->addr, where, sizeof(where));
	fprintf(out, "%s/%s: %s (%s engine)\n", s->ev->group, s->ev->name,
		where, s->engine);
	fprintf(out, "  strategy: %s%s\n", s->how ? s->how : "?",
		s->armed ? "" : " (not armed now)");
	entry_site(&c, s);
	fprintf(out, "  original:\n");
	listing(&c, s->addr, s->orig, displaced(s), false);
	now(&c, s);
	pre_jump(&c, s);
	way_back(&c, s);
	if (c.mem >= 0)
		close(c.mem);
}
