// SPDX-License-Identifier: GPL-2.0
/*
 * SDT/USDT probes: .note.stapsdt read through libelf, each site's address
 * and semaphore turned into file offsets, and each argument's assembler
 * operand (what GCC printed for the "nor" constraint of sdt.h's asm)
 * rewritten in the fetch-argument language of uprobe_events.
 *
 * The operand grammar is AT&T's as GCC prints it for x86-64:
 *   %REG  $IMM  DISP(%BASE)  DISP(%BASE,%INDEX,SCALE)  SYM+N(%rip)  %SEG:...
 * with DISP a sum of numbers and at most one symbol ("8+g_pair" is how
 * GCC writes a member of a global).  The fetch language has registers by
 * their 64-bit names, one base register plus a displacement, file-offset
 * memory (@+FOFFS) and immediates: everything else is refused per operand
 * with a reason, so one odd argument never hides a probe.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lang/fetcharg.h"
#include "sym/sdt.h"

#define NT_STAPSDT	3
#define SDT_OWNER	"stapsdt"
#define SDT_DESC_HDR	24	/* pc, base, semaphore: 8 bytes each */

static void err_set(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!err || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

/* ---- registers ---------------------------------------------------------- */

enum { REG_HIGH_BYTE = 0 };	/* width of %ah %bh %ch %dh */

struct gpr {
	const char *reg;	/* dprobe's name: the 64-bit register */
	unsigned width;		/* bytes the name covers; 0: bits 8..15 */
};

/* The legacy registers by every AT&T name; r8..r15 are decoded apart. */
static const struct {
	const char *name;
	struct gpr gpr;
} legacy_regs[] = {
	{ "rax", { "ax", 8 } }, { "eax", { "ax", 4 } }, { "ax", { "ax", 2 } },
	{ "al", { "ax", 1 } }, { "ah", { "ax", REG_HIGH_BYTE } },
	{ "rbx", { "bx", 8 } }, { "ebx", { "bx", 4 } }, { "bx", { "bx", 2 } },
	{ "bl", { "bx", 1 } }, { "bh", { "bx", REG_HIGH_BYTE } },
	{ "rcx", { "cx", 8 } }, { "ecx", { "cx", 4 } }, { "cx", { "cx", 2 } },
	{ "cl", { "cx", 1 } }, { "ch", { "cx", REG_HIGH_BYTE } },
	{ "rdx", { "dx", 8 } }, { "edx", { "dx", 4 } }, { "dx", { "dx", 2 } },
	{ "dl", { "dx", 1 } }, { "dh", { "dx", REG_HIGH_BYTE } },
	{ "rsi", { "si", 8 } }, { "esi", { "si", 4 } }, { "si", { "si", 2 } },
	{ "sil", { "si", 1 } },
	{ "rdi", { "di", 8 } }, { "edi", { "di", 4 } }, { "di", { "di", 2 } },
	{ "dil", { "di", 1 } },
	{ "rbp", { "bp", 8 } }, { "ebp", { "bp", 4 } }, { "bp", { "bp", 2 } },
	{ "bpl", { "bp", 1 } },
	{ "rsp", { "sp", 8 } }, { "esp", { "sp", 4 } }, { "sp", { "sp", 2 } },
	{ "spl", { "sp", 1 } },
	{ "rip", { "ip", 8 } }, { "eip", { "ip", 4 } },
};

static const char *const ext_names[] = {
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
};

/* "r8".."r15" with no suffix (64), "d" (32), "w" (16) or "b" (8 bits). */
static bool ext_reg(const char *name, struct gpr *g)
{
	static const char suffix[] = "\0dwb";
	static const unsigned widths[] = { 8, 4, 2, 1 };
	size_t len = strlen(name);

	for (unsigned i = 0; i < sizeof(ext_names) / sizeof(ext_names[0]); i++) {
		size_t n = strlen(ext_names[i]);

		if (len < n || len > n + 1 || strncmp(name, ext_names[i], n))
			continue;
		for (unsigned k = 0; k < 4; k++) {
			if (name[n] == suffix[k]) {
				g->reg = ext_names[i];
				g->width = widths[k];
				return true;
			}
		}
	}
	return false;
}

/* Registers the fetch language has no way to read. */
static bool is_vector_reg(const char *name)
{
	return !strncmp(name, "xmm", 3) || !strncmp(name, "ymm", 3) ||
	       !strncmp(name, "zmm", 3) || !strncmp(name, "st", 2) ||
	       !strncmp(name, "mm", 2) || !strncmp(name, "k", 1);
}

static bool is_seg_reg(const char *name)
{
	static const char *const segs[] = { "cs", "ds", "es", "fs", "gs", "ss" };

	for (unsigned i = 0; i < sizeof(segs) / sizeof(segs[0]); i++)
		if (!strcmp(name, segs[i]))
			return true;
	return false;
}

/* ---- operands ----------------------------------------------------------- */

enum op_kind { OP_REG, OP_IMM, OP_MEM };

struct operand {
	enum op_kind kind;
	struct gpr reg;		/* OP_REG */
	int64_t num;		/* OP_IMM value; OP_MEM displacement addend */
	char sym[DP_SDT_SPEC_LEN];	/* OP_IMM/OP_MEM symbol, "" if none */
	bool has_base;
	struct gpr base;
};

struct cursor {
	const char *s;
	struct dp_sdt_arg *out;
};

static int bad(struct cursor *c, int ret, const char *why)
{
	c->out->error = why;
	return ret;
}

/*
 * A number as the assembler reads it: 0x hex, 0b binary, a leading 0
 * octal, else decimal.  Only digits are consumed; the sign is the caller's.
 */
static int parse_number(struct cursor *c, uint64_t *v)
{
	const char *s = c->s;
	unsigned base = 10, d;
	uint64_t acc = 0;

	if (!isdigit((unsigned char)*s))
		return bad(c, -EINVAL, "number expected");
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X') &&
	    isxdigit((unsigned char)s[2])) {
		base = 16;
		s += 2;
	} else if (s[0] == '0' && (s[1] == 'b' || s[1] == 'B') &&
		   (s[2] == '0' || s[2] == '1')) {
		base = 2;
		s += 2;
	} else if (s[0] == '0') {
		base = 8;
	}
	for (;; s++) {
		if (isdigit((unsigned char)*s))
			d = *s - '0';
		else if (isxdigit((unsigned char)*s))
			d = tolower((unsigned char)*s) - 'a' + 10;
		else
			break;
		if (d >= base)
			return bad(c, -EINVAL, "bad digit in number");
		if (__builtin_mul_overflow(acc, base, &acc) ||
		    __builtin_add_overflow(acc, d, &acc))
			return bad(c, -EINVAL, "number out of range");
	}
	c->s = s;
	*v = acc;
	return 0;
}

static bool sym_start(char ch)
{
	return isalpha((unsigned char)ch) || ch == '_' || ch == '.' || ch == '$';
}

static bool sym_char(char ch)
{
	return sym_start(ch) || isdigit((unsigned char)ch);
}

/* "%NAME" at the cursor, as a register to read (not a segment). */
static int parse_reg(struct cursor *c, struct gpr *g)
{
	char name[8];
	size_t n = 0;

	if (*c->s != '%')
		return bad(c, -EINVAL, "register expected");
	c->s++;
	while (isalnum((unsigned char)c->s[n]) && n < sizeof(name) - 1) {
		name[n] = c->s[n];
		n++;
	}
	name[n] = '\0';
	if (isalnum((unsigned char)c->s[n]) || !n)
		return bad(c, -EINVAL, "unknown register");
	c->s += n;
	for (unsigned i = 0; i < sizeof(legacy_regs) / sizeof(legacy_regs[0]); i++) {
		if (!strcmp(name, legacy_regs[i].name)) {
			*g = legacy_regs[i].gpr;
			return 0;
		}
	}
	if (ext_reg(name, g))
		return 0;
	if (is_seg_reg(name) && *c->s == ':')
		return bad(c, -EOPNOTSUPP,
			   "segment-relative (TLS) address not supported");
	if (is_vector_reg(name))
		return bad(c, -EOPNOTSUPP,
			   "SSE/x87/mask register not supported");
	return bad(c, -EINVAL, "unknown register");
}

/*
 * A displacement or immediate: [-]TERM {+|- TERM} with TERM a number or a
 * symbol, at most one symbol and never subtracted.  Numbers are summed
 * into @num, the symbol copied into @sym.
 */
static int parse_sum(struct cursor *c, int64_t *num, char *sym, size_t symlen)
{
	bool neg = false, first = true;
	uint64_t v;
	int64_t term;
	size_t n;
	int ret;

	*num = 0;
	sym[0] = '\0';
	for (;;) {
		if (*c->s == '-' || *c->s == '+') {
			neg = *c->s == '-';
			c->s++;
		} else if (!first) {
			return 0;
		}
		first = false;
		if (sym_start(*c->s)) {
			if (neg || sym[0])
				return bad(c, -EOPNOTSUPP,
					   "symbol arithmetic not supported");
			for (n = 0; sym_char(c->s[n]); n++)
				;
			if (n >= symlen)
				return bad(c, -EINVAL, "symbol name too long");
			memcpy(sym, c->s, n);
			sym[n] = '\0';
			c->s += n;
			if (*c->s == '@')
				return bad(c, -EOPNOTSUPP,
					   "relocation operator not supported");
			continue;
		}
		ret = parse_number(c, &v);
		if (ret)
			return ret;
		if (v > (uint64_t)INT64_MAX + neg)
			return bad(c, -EINVAL, "number out of range");
		term = neg ? (int64_t)(0 - v) : (int64_t)v;
		if (__builtin_add_overflow(*num, term, num))
			return bad(c, -EINVAL, "number out of range");
	}
}

/* "(%BASE[,%INDEX[,SCALE]])" after a displacement. */
static int parse_mem_regs(struct cursor *c, struct operand *op)
{
	int ret;

	c->s++;			/* '(' */
	if (*c->s != ',') {
		ret = parse_reg(c, &op->base);
		if (ret)
			return ret;
		op->has_base = true;
	}
	if (*c->s == ',')
		return bad(c, -EOPNOTSUPP, "indexed address not supported");
	if (*c->s != ')')
		return bad(c, -EINVAL, "')' expected");
	c->s++;
	if (op->base.width != 8)	/* (%eax): an addr32 form */
		return bad(c, -EOPNOTSUPP,
			   "address register narrower than 64 bits not supported");
	return 0;
}

static int parse_operand(struct cursor *c, struct operand *op)
{
	int ret;

	memset(op, 0, sizeof(*op));
	if (*c->s == '$') {
		c->s++;
		op->kind = OP_IMM;
		ret = parse_sum(c, &op->num, op->sym, sizeof(op->sym));
	} else if (*c->s == '%') {
		op->kind = OP_REG;
		ret = parse_reg(c, &op->reg);
	} else {
		op->kind = OP_MEM;
		ret = 0;
		if (*c->s != '(')
			ret = parse_sum(c, &op->num, op->sym, sizeof(op->sym));
		if (!ret && *c->s == '(')
			ret = parse_mem_regs(c, op);
	}
	if (ret)
		return ret;
	if (*c->s)
		return bad(c, -EINVAL, "junk after the operand");
	return 0;
}

/* ---- translation -------------------------------------------------------- */

/* "[-]N[f]@" at the start of the spec: sign, size in bytes, float. */
static int parse_size(struct cursor *c)
{
	struct dp_sdt_arg *a = c->out;
	const char *s = c->s, *digits;
	unsigned n = 0;
	bool is_float = false;

	if (*s == '-')
		s++;
	for (digits = s; isdigit((unsigned char)*s); s++)
		;
	if (s > digits && *s == 'f') {
		is_float = true;
		s++;
	}
	if (s == digits || *s != '@') {
		/*
		 * No "N@": notes of sdt.h before version 3, and hand-made
		 * ones.  The size is unknown, so the whole register or an
		 * 8-byte word is read, unsigned, as gdb reads such operands.
		 */
		a->size = 8;
		return 0;
	}
	a->is_signed = *c->s == '-';
	a->is_float = is_float;
	c->s = s + 1;
	if (s - digits - is_float > 3)
		return bad(c, -EINVAL, "bad argument size");
	for (; isdigit((unsigned char)*digits); digits++)
		n = n * 10 + (unsigned)(*digits - '0');
	if (n == 0)
		return bad(c, -EINVAL, "bad argument size");
	if ((n != 1 && n != 2 && n != 4 && n != 8) || (is_float && n < 4))
		return bad(c, -EOPNOTSUPP, "argument size not supported");
	a->size = (int)n;
	return 0;
}

static void set_type(struct dp_sdt_arg *a)
{
	char kind = a->is_float ? 'x' : a->is_signed ? 's' : 'u';

	snprintf(a->type, sizeof(a->type), "%c%d", kind, a->size * 8);
}

static int emit(struct cursor *c, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(c->out->expr, sizeof(c->out->expr), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(c->out->expr))
		return bad(c, -EINVAL, "translated operand too long");
	return 0;
}

static int reg_expr(struct cursor *c, const struct operand *op)
{
	struct dp_sdt_arg *a = c->out;

	if (op->reg.width == REG_HIGH_BYTE) {
		/* bits 8..15 of the 64-bit register; bitfields are unsigned */
		if (a->is_signed || a->is_float || a->size != 1)
			return bad(c, -EOPNOTSUPP,
				   "high-byte register only as an unsigned byte");
		snprintf(a->type, sizeof(a->type), "b8@8/64");
	}
	/* A narrower name reads the whole register: the type keeps its low bytes. */
	return emit(c, "%%%s", op->reg.reg);
}

/* The value an immediate has once stored with the argument's type. */
static int imm_expr(struct cursor *c, const struct operand *op)
{
	struct dp_sdt_arg *a = c->out;
	unsigned bits = (unsigned)a->size * 8;
	uint64_t v = (uint64_t)op->num;

	if (op->sym[0])
		return bad(c, -EOPNOTSUPP, "symbol address immediate not supported");
	if (bits < 64)
		v &= (UINT64_C(1) << bits) - 1;
	if (a->is_signed && bits < 64 && (v >> (bits - 1)))
		v |= ~((UINT64_C(1) << bits) - 1);
	if (a->is_signed)
		return emit(c, "\\%" PRId64, (int64_t)v);
	return emit(c, "\\%" PRIu64, v);
}

static int mem_expr(struct cursor *c, const struct operand *op,
		    int (*sym_foff)(void *, const char *, uint64_t *),
		    void *ctx)
{
	uint64_t foff;
	int64_t at;
	int ret;

	if (!op->sym[0] && op->has_base)
		return emit(c, "%s%" PRId64 "(%%%s)", op->num < 0 ? "" : "+",
			    op->num, op->base.reg);
	if (!op->sym[0])	/* an absolute address: only in non-PIE code */
		return emit(c, "@0x%" PRIx64, (uint64_t)op->num);
	if (op->has_base && strcmp(op->base.reg, "ip"))
		return bad(c, -EOPNOTSUPP,
			   "symbol plus a base register not supported");
	/* SYM(%rip) and a bare SYM are the same memory: SYM's */
	if (!sym_foff)
		return bad(c, -EOPNOTSUPP, "symbol not resolved (no site offset)");
	ret = sym_foff(ctx, op->sym, &foff);
	if (ret == -ENOENT)
		return bad(c, ret, "symbol not found");
	if (ret == -ENOTUNIQ)
		return bad(c, ret, "symbol not unique");
	if (ret)
		return bad(c, ret, "symbol not resolved");
	if (__builtin_add_overflow((int64_t)foff, op->num, &at) || at < 0)
		return bad(c, -ERANGE, "symbol address out of range");
	return emit(c, "@+0x%" PRIx64, (uint64_t)at);
}

int dp_sdt_parse_arg(const char *spec, struct dp_sdt_arg *out,
		     int (*sym_foff)(void *ctx, const char *sym, uint64_t *foff),
		     void *ctx)
{
	struct cursor c = { spec, out };
	struct operand op;
	int ret;

	memset(out, 0, sizeof(*out));
	if (strlen(spec) >= sizeof(out->spec)) {
		memcpy(out->spec, spec, sizeof(out->spec) - 1);
		return bad(&c, -EINVAL, "argument spec too long");
	}
	strcpy(out->spec, spec);
	ret = parse_size(&c);
	if (!ret)
		ret = parse_operand(&c, &op);
	if (ret)
		goto fail;
	set_type(out);
	if (op.kind == OP_REG)
		ret = reg_expr(&c, &op);
	else if (op.kind == OP_IMM)
		ret = imm_expr(&c, &op);
	else
		ret = mem_expr(&c, &op, sym_foff, ctx);
	if (!ret)
		return 0;
fail:
	out->expr[0] = '\0';
	out->type[0] = '\0';
	return ret;
}

/* ---- notes -------------------------------------------------------------- */

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));	/* x86-64 notes are little-endian */
	return v;
}

/* The NUL-terminated string at @*pos in @d[0..len), or NULL. */
static const char *take_string(const uint8_t *d, size_t len, size_t *pos)
{
	const char *s;
	const uint8_t *nul;

	if (*pos >= len)
		return NULL;
	s = (const char *)d + *pos;
	nul = memchr(s, '\0', len - *pos);
	if (!nul)
		return NULL;
	*pos = (size_t)(nul - d) + 1;
	return s;
}

static void copy_name(struct dp_sdt_probe *p, char *dst, const char *src)
{
	size_t n = strlen(src);

	if (n >= DP_SDT_NAME_LEN) {
		n = DP_SDT_NAME_LEN - 1;
		p->error = "provider or probe name too long";
	} else if (!dp_is_good_name(src)) {
		p->error = "provider or probe name is not an identifier";
	}
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* Split the argument string on blanks into p->args[].spec. */
static void split_args(struct dp_sdt_probe *p, const char *s)
{
	struct dp_sdt_arg *a;
	size_t n;

	for (;;) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s)
			return;
		for (n = 0; s[n] && s[n] != ' ' && s[n] != '\t'; n++)
			;
		if (p->nargs == DP_SDT_MAX_ARGS) {
			p->error = "more than 12 arguments";
			return;
		}
		a = &p->args[p->nargs++];

		if (n >= sizeof(a->spec)) {
			memcpy(a->spec, s, sizeof(a->spec) - 1);
			a->error = "argument spec too long";
		} else {
			memcpy(a->spec, s, n);
		}
		s += n;
	}
}

int dp_sdt_parse_note(const void *desc, size_t len, struct dp_sdt_probe *p,
		      uint64_t *base, char *err, size_t errlen)
{
	const uint8_t *d = desc;
	const char *prov, *name, *args = "";
	size_t pos = SDT_DESC_HDR;

	memset(p, 0, sizeof(*p));
	*base = 0;
	if (len < SDT_DESC_HDR) {
		err_set(err, errlen, "description too short (%zu bytes)", len);
		return -ENOEXEC;
	}
	p->pc = get64(d);
	*base = get64(d + 8);
	p->sem = get64(d + 16);
	prov = take_string(d, len, &pos);
	name = prov ? take_string(d, len, &pos) : NULL;
	if (!name) {
		err_set(err, errlen, "provider and name not NUL-terminated");
		return -ENOEXEC;
	}
	/* the argument string may be absent in notes without arguments */
	if (pos < len) {
		args = take_string(d, len, &pos);
		if (!args) {
			err_set(err, errlen, "arguments not NUL-terminated");
			return -ENOEXEC;
		}
	}
	copy_name(p, p->provider, prov);
	copy_name(p, p->name, name);
	split_args(p, args);
	return 0;
}

/* ---- files -------------------------------------------------------------- */

struct probe_vec {
	struct dp_sdt_probe *v;
	size_t n, cap;
};

static struct dp_sdt_probe *vec_add(struct probe_vec *pv)
{
	struct dp_sdt_probe *tmp;

	if (pv->n == pv->cap) {
		pv->cap = pv->cap ? 2 * pv->cap : 16;
		tmp = realloc(pv->v, pv->cap * sizeof(*tmp));
		if (!tmp)
			return NULL;
		pv->v = tmp;
	}
	return &pv->v[pv->n++];
}

struct site_ctx {
	const struct dp_elf *e;
	uint64_t delta;		/* pc - pc_foff: the site segment's bias */
};

/*
 * uprobe_events reads "@+X" at (where the probe's own segment is loaded -
 * the probe's file offset) + X, not through the segment that holds X
 * (FETCH_OP_FOFFS in trace_uprobe.c): so a symbol's X is its address translated by the site's
 * segment, whichever segment the symbol lives in (.data, .bss...).
 */
static int site_sym_foff(void *priv, const char *sym, uint64_t *foff)
{
	const struct site_ctx *sc = priv;
	struct dp_elf_sym s;
	int ret = dp_elf_lookup(sc->e, sym, &s);

	if (ret)
		return ret;
	*foff = s.value - sc->delta;
	return 0;
}

static void site_error(struct dp_sdt_probe *p, const char *why)
{
	if (!p->error)
		p->error = why;
}

/*
 * Prelink moves an object's sections but not its (unallocated) notes:
 * .stapsdt.base moved with the code, the note kept the old address of it,
 * and the difference applies to the site and its semaphore alike.
 */
static void place_site(const struct dp_elf *e, struct dp_sdt_probe *p,
		       uint64_t note_base, bool has_base, uint64_t base_addr)
{
	uint64_t delta = base_addr - note_base;

	if (has_base && note_base) {
		p->pc += delta;
		if (p->sem)
			p->sem += delta;
	}
	if (!dp_elf_vaddr_is_exec(e, p->pc) ||
	    dp_elf_vaddr_to_off(e, p->pc, &p->pc_foff)) {
		p->pc_foff = 0;
		site_error(p, "probe address not in an executable segment");
	}
	/* the semaphore is an unsigned short the kernel/agent count in */
	if (p->sem && (dp_elf_vaddr_to_off(e, p->sem, &p->sem_foff) ||
		       dp_elf_vaddr_to_off(e, p->sem + 1, &(uint64_t){ 0 }))) {
		p->sem_foff = 0;
		site_error(p, "semaphore not in the file's data");
	}
}

static void translate_args(const struct dp_elf *e, struct dp_sdt_probe *p)
{
	struct site_ctx sc = { e, p->pc - p->pc_foff };
	char spec[DP_SDT_SPEC_LEN];

	for (unsigned i = 0; i < p->nargs; i++) {
		if (p->args[i].error)	/* too long to be kept whole */
			continue;
		memcpy(spec, p->args[i].spec, sizeof(spec));
		/* no file offset for the site (0): no "@+" for its symbols */
		dp_sdt_parse_arg(spec, &p->args[i],
				 p->pc_foff ? site_sym_foff : NULL, &sc);
	}
}

static bool is_sdt_note(const GElf_Nhdr *nh, const char *name)
{
	return nh->n_type == NT_STAPSDT && nh->n_namesz == sizeof(SDT_OWNER) &&
	       !memcmp(name, SDT_OWNER, sizeof(SDT_OWNER));
}

struct read_ctx {
	const struct dp_elf *e;
	bool has_base;
	uint64_t base_addr;	/* .stapsdt.base's address */
	struct probe_vec pv;
	char *err;
	size_t errlen;
};

static int read_notes(struct read_ctx *rc, Elf_Scn *scn)
{
	const char *path = dp_elf_path(rc->e);
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t off = 0, next, name_off, desc_off;
	struct dp_sdt_probe *p;
	char why[128];
	uint64_t base;
	GElf_Nhdr nh;

	if (!d) {
		err_set(rc->err, rc->errlen, "%s: .note.stapsdt: %s", path,
			elf_errmsg(-1));
		return -ENOEXEC;
	}
	while (off < d->d_size) {
		next = gelf_getnote(d, off, &nh, &name_off, &desc_off);
		if (!next) {
			err_set(rc->err, rc->errlen,
				"%s: .note.stapsdt: malformed note at offset 0x%zx",
				path, off);
			return -ENOEXEC;
		}
		if (is_sdt_note(&nh, (const char *)d->d_buf + name_off)) {
			p = vec_add(&rc->pv);
			if (!p) {
				err_set(rc->err, rc->errlen, "out of memory");
				return -ENOMEM;
			}
			if (dp_sdt_parse_note((const uint8_t *)d->d_buf + desc_off,
					      nh.n_descsz, p, &base, why,
					      sizeof(why))) {
				err_set(rc->err, rc->errlen,
					"%s: .note.stapsdt: note at offset 0x%zx: %s",
					path, off, why);
				return -ENOEXEC;
			}
			place_site(rc->e, p, base, rc->has_base, rc->base_addr);
			translate_args(rc->e, p);
		}
		off = next;
	}
	return 0;
}

/*
 * libelf shows a file whose section headers lie past its end as a file
 * without sections: say it is cut rather than that it has no notes.
 */
static int check_shdrs(struct read_ctx *rc, Elf *elf)
{
	uint64_t size = dp_elf_file_size(rc->e);
	GElf_Ehdr eh;

	if (!gelf_getehdr(elf, &eh) ||
	    (eh.e_shoff && (eh.e_shoff > size ||
			    (uint64_t)eh.e_shnum * eh.e_shentsize >
			    size - eh.e_shoff))) {
		err_set(rc->err, rc->errlen,
			"%s: section headers past the end of the file",
			dp_elf_path(rc->e));
		return -ENOEXEC;
	}
	return 0;
}

static int read_sections(struct read_ctx *rc, Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	const char *name;
	GElf_Shdr sh;
	int ret;

	ret = check_shdrs(rc, elf);
	if (ret)
		return ret;
	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0;	/* no section names: no SDT notes to find */
	while ((scn = elf_nextscn(elf, scn))) {
		name = gelf_getshdr(scn, &sh) ?
			elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
		if (name && !strcmp(name, ".stapsdt.base")) {
			rc->has_base = true;
			rc->base_addr = sh.sh_addr;
		}
	}
	while ((scn = elf_nextscn(elf, scn))) {
		name = gelf_getshdr(scn, &sh) ?
			elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
		if (!name || sh.sh_type != SHT_NOTE ||
		    strcmp(name, ".note.stapsdt"))
			continue;
		ret = read_notes(rc, scn);
		if (ret)
			return ret;
	}
	return 0;
}

int dp_sdt_read_elf(const struct dp_elf *e, struct dp_sdt_probe **out,
		    size_t *n, char *err, size_t errlen)
{
	struct read_ctx rc = { .e = e, .err = err, .errlen = errlen };
	const char *path = dp_elf_path(e);
	Elf *elf = NULL;
	int fd, ret;

	*out = NULL;
	*n = 0;
	err_set(err, errlen, "%s", "");
	/* sections other than code are not kept by dp_elf: read them here */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		err_set(err, errlen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		err_set(err, errlen, "%s: malformed ELF: %s", path,
			elf_errmsg(-1));
		ret = -ENOEXEC;
		goto out;
	}
	ret = read_sections(&rc, elf);
	if (!ret && rc.pv.n) {
		*out = rc.pv.v;
		*n = rc.pv.n;
		rc.pv.v = NULL;
	}
out:
	free(rc.pv.v);
	elf_end(elf);
	close(fd);
	return ret;
}

int dp_sdt_read(const char *path, struct dp_sdt_probe **out, size_t *n,
		char *err, size_t errlen)
{
	struct dp_elf *e;
	char why[160];
	int ret;

	*out = NULL;
	*n = 0;
	ret = dp_elf_open_why(path, &e, why, sizeof(why));
	if (ret) {
		err_set(err, errlen, "%s: %s", path, why);
		return ret;
	}
	ret = dp_sdt_read_elf(e, out, n, err, errlen);
	dp_elf_close(e);
	return ret;
}
