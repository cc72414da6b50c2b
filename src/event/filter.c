// SPDX-License-Identifier: GPL-2.0
/*
 * Event filters: the kernel's filter language (trace_events_filter.c) with its grammar, operand rules, error codes, caret positions
 * and errnos, and its evaluation.
 *
 * What the kernel accepts, and where it puts the caret, follows from how
 * its parser works rather than from a tidy grammar (a trailing "&&" is
 * fine, "&& a" fails with no message, "a & b" is a bad value but
 * "a == 1 & b == 1" a surplus term, a '(' inside a quoted operand does
 * not count).  So compilation mirrors the kernel's
 * passes: a counting scan of the text (parentheses, quotes, an upper
 * bound on the predicates), then one left-to-right parse that links the
 * predicates into a branch program, then two passes that shorten the
 * branches and fold the '!'s in.  The result is a flat array of
 * predicates, each with "if the result is <when>, continue after entry
 * <target>", followed by a TRUE and a FALSE entry; matching a record
 * walks it with no allocation and no parsing.
 *
 * Where the kernel's behaviour is an accident, dprobe does the sensible
 * thing (each place says so): string suffix matches use the string's real
 * length (the kernel matches the end of comm's 16-byte buffer, so
 * `comm ~ "*sh"` only works for 15-character names), a faulted string
 * (__data_loc length 0) is the empty string (the kernel reads stale
 * bytes), a character class never matches the end of a string, a
 * trailing "&&" after an "||" is ignored like any trailing connector (the
 * kernel reads before its program array there and its answer varies),
 * and FIELD.function resolves through dp_filter_set_func_lookup()
 * instead of kernel symbols.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/sysinfo.h>

#include "event/filter.h"
#include "event/record.h"
#include "lang/kstrto.h"

/* Operators, in the order the kernel tries them ("<=" before "<"). */
enum filter_op {
	OP_GLOB,
	OP_NE,
	OP_EQ,
	OP_LE,
	OP_LT,
	OP_GE,
	OP_GT,
	OP_BAND,
	OP_NR,
};

static const char *const op_text[OP_NR] = {
	"~", "!=", "==", "<=", "<", ">=", ">", "&",
};

#define NUM_BUF_LEN	24	/* numeric operands of 24+ chars are too long */
#define MAX_STR_VAL	256	/* string operands of 256+ chars are too long */
#define WRITE_MAX	4096	/* a `filter` write of PAGE_SIZE+ is refused */
#define COMM_MAX	15	/* TASK_COMM_LEN - 1 */
#define MAX_CPUS	8192	/* the kernel's largest NR_CPUS */

/*
 * The kernel returns these raw negative values from its parser, and they
 * reach the writer as errnos: -1 (EPERM), -2 (ENOENT), -3 (ESRCH).
 */
#define RET_TOO_FEW_OPEN	(-1)	/* also: bad connector, empty term */
#define RET_TOO_MANY_OPEN	(-2)
#define RET_MISSING_QUOTE	(-3)

/* How the kernel's filter sees a field (its filter_type). */
enum field_class {
	FT_OTHER,		/* numbers and arrays */
	FT_DYN_STRING,		/* __data_loc char[] */
	FT_RDYN_STRING,		/* __rel_loc char[] */
	FT_STATIC_STRING,	/* char[N] */
	FT_PTR_STRING,		/* char * */
	FT_CPU,			/* generic CPU, cpu, common_cpu */
	FT_COMM,		/* generic COMM, comm */
	FT_STACKTRACE,		/* generic stacktrace, STACKTRACE */
};

struct field_ref {
	unsigned offset;
	unsigned size;
	bool is_signed;
	enum field_class cls;
};

/*
 * The kernel's generic fields, found after the event's own fields.  They
 * are declared with offset 0 and size 0, so .function refuses them and a
 * numeric test on `stacktrace` never matches.
 */
static const struct {
	const char *name;
	struct field_ref ref;
} generic_fields[] = {
	{ "CPU", { 0, 0, true, FT_CPU } },
	{ "cpu", { 0, 0, true, FT_CPU } },
	{ "common_cpu", { 0, 0, true, FT_CPU } },
	{ "COMM", { 0, 0, false, FT_COMM } },
	{ "comm", { 0, 0, false, FT_COMM } },
	{ "stacktrace", { 0, 0, false, FT_STACKTRACE } },
	{ "STACKTRACE", { 0, 0, false, FT_STACKTRACE } },
};

/* What a compiled predicate does at match time. */
enum pred_kind {
	PK_NEVER,	/* the kernel selects no function: never matches */
	PK_EQ,		/* (field == val) ^ not, over the field's bytes */
	PK_CMP_S,	/* < <= > >= & on a signed field */
	PK_CMP_U,	/* the same, unsigned */
	PK_CPUMASK_NUM,	/* numeric field, read as a CPU id, vs a CPU list */
	PK_CPU,		/* current CPU vs a number */
	PK_CPU_MASK,	/* current CPU vs a CPU list */
	PK_STR,		/* string field vs a pattern */
	PK_FUNC,	/* address field inside [val, val2) */
};

enum str_match {
	SM_FULL,
	SM_FRONT,	/* "x*" */
	SM_MIDDLE,	/* "*x*" */
	SM_END,		/* "*x" */
	SM_GLOB,
};

struct pred {
	uint8_t kind;		/* enum pred_kind */
	uint8_t op;		/* enum filter_op */
	uint8_t cls;		/* PK_STR: enum field_class of the source */
	uint8_t match;		/* PK_STR: enum str_match */
	bool not;
	unsigned offset;
	unsigned size;		/* field bytes */
	uint64_t val, val2;
	char *pat;		/* PK_STR */
	unsigned plen;
	uint64_t *mask;		/* CPU lists of weight != 1 */
	unsigned nbits;
};

struct step {
	struct pred pred;
	int target;		/* on a branch, continue after this entry */
	bool when;		/* branch when the predicate gives this */
};

struct dp_filter {
	int n;			/* predicates */
	struct step step[];	/* n predicates, then TRUE, then FALSE */
};

static dp_filter_func_lookup_t func_lookup;
static void *func_lookup_priv;

void dp_filter_set_func_lookup(dp_filter_func_lookup_t fn, void *priv)
{
	func_lookup = fn;
	func_lookup_priv = priv;
}

/* ---- the kernel's character classes (lib/ctype.c is Latin-1) ---------- */

static bool k_isspace(unsigned char c)
{
	return (c >= '\t' && c <= '\r') || c == ' ' || c == 0xa0;
}

static bool k_isdigit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static bool k_isalnum(unsigned char c)
{
	if (c >= 0x80)
		return c >= 0xc0 && c != 0xd7 && c != 0xf7;
	return k_isdigit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
}

/* ---- CPU lists: the kernel's bitmap_parselist() ----------------------- */

/* nr_cpu_ids: one past the highest possible CPU ("0-3,8-11" -> 12). */
static unsigned possible_cpus(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "re");
	unsigned long v, max = 0;
	char buf[256], *p, *end;

	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	for (p = buf; *p; p = end) {
		end = p + 1;
		if (!k_isdigit(*p))
			continue;
		v = strtoul(p, &end, 10);
		if (v >= MAX_CPUS)
			return MAX_CPUS;
		if (v + 1 > max)
			max = v + 1;
	}
	return max;
}

unsigned dp_filter_nr_cpus(void)
{
	static unsigned cached;
	unsigned n = __atomic_load_n(&cached, __ATOMIC_RELAXED);

	if (n)
		return n;
	n = possible_cpus();
	if (!n)
		n = get_nprocs_conf();
	if (n < 1)
		n = 1;
	if (n > MAX_CPUS)
		n = MAX_CPUS;
	__atomic_store_n(&cached, n, __ATOMIC_RELAXED);
	return n;
}

struct cpu_region {
	unsigned start, end, off, group;
};

static bool cl_sep(char c)
{
	return k_isspace(c) || c == ',';
}

static bool cl_end(char c)
{
	return c == '\0' || c == '\n';
}

/* A region bound: decimal, or 'N' for the last CPU. */
static const char *cl_num(const char *s, unsigned *num, unsigned last,
			  int *err)
{
	uint64_t v;
	bool ovf;
	size_t n;

	if (*s == 'N') {
		*num = last;
		return s + 1;
	}
	n = dp_parse_digits(s, 10, &v, &ovf);
	if (!n) {
		*err = -EINVAL;
		return NULL;
	}
	if (ovf || v > UINT_MAX) {
		*err = -EOVERFLOW;
		return NULL;
	}
	*num = v;
	return s + n;
}

/*
 * One region: "A", "A-B", "all", each optionally ":USED/GROUP".  Leaves
 * *@sp after it, or NULL when the list ended with it.
 */
static int cl_region(const char **sp, struct cpu_region *r, unsigned nbits)
{
	unsigned last = nbits - 1;
	const char *s = *sp;
	int err = 0;

	if (!strncasecmp(s, "all", 3)) {
		r->start = 0;
		r->end = last;
		s += 3;
	} else {
		s = cl_num(s, &r->start, last, &err);
		if (!s)
			return err;
		r->end = r->start;
		if (*s == '-') {
			s = cl_num(s + 1, &r->end, last, &err);
			if (!s)
				return err;
		} else if (!cl_sep(*s) && !cl_end(*s)) {
			return -EINVAL;
		}
	}
	if (cl_sep(*s) || cl_end(*s)) {
		r->off = r->end + 1;
		r->group = r->end + 1;
		*sp = cl_end(*s) ? NULL : s;
		return 0;
	}
	if (*s != ':')
		return -EINVAL;
	s = cl_num(s + 1, &r->off, last, &err);
	if (!s)
		return err;
	if (*s != '/')
		return -EINVAL;
	s = cl_num(s + 1, &r->group, last, &err);
	if (!s)
		return err;
	*sp = s;
	return 0;
}

static void mask_set(uint64_t *mask, unsigned bit)
{
	mask[bit / 64] |= 1ULL << (bit % 64);
}

static bool mask_test(const uint64_t *mask, unsigned nbits, long bit)
{
	if (bit < 0 || bit >= nbits)
		return false;
	return mask[bit / 64] >> (bit % 64) & 1;
}

static int parse_cpulist(const char *s, uint64_t *mask, unsigned nbits)
{
	struct cpu_region r;
	unsigned start, k, n;
	int err;

	while (s) {
		while (cl_sep(*s))
			s++;
		if (cl_end(*s))
			return 0;
		err = cl_region(&s, &r, nbits);
		if (err)
			return err;
		if (r.start > r.end || !r.group || r.off > r.group)
			return -EINVAL;
		if (r.end >= nbits)
			return -ERANGE;
		/* unsigned arithmetic, wrapping as the kernel's does */
		for (start = r.start; start <= r.end; start += r.group) {
			n = r.end - start + 1;
			if (n > r.off)
				n = r.off;
			for (k = 0; k < n; k++)
				mask_set(mask, start + k);
		}
	}
	return 0;
}

/* ---- fields ------------------------------------------------------------ */

/* The kernel's filter_assign_type(), from the format-file type. */
static enum field_class type_class(const char *type)
{
	if (strstr(type, "__data_loc") && strstr(type, "char"))
		return FT_DYN_STRING;
	/* __data_loc cpumask_t is never a probe-event field */
	if (strstr(type, "__rel_loc") && strstr(type, "char"))
		return FT_RDYN_STRING;
	if (strchr(type, '[') && strstr(type, "char"))
		return FT_STATIC_STRING;
	if (!strcmp(type, "char *") || !strcmp(type, "const char *"))
		return FT_PTR_STRING;
	return FT_OTHER;
}

static bool class_is_string(enum field_class cls)
{
	switch (cls) {
	case FT_DYN_STRING:
	case FT_RDYN_STRING:
	case FT_STATIC_STRING:
	case FT_PTR_STRING:
	case FT_COMM:
		return true;
	default:
		return false;
	}
}

/* Lookup order: the event's fields, the generic ones, the common ones. */
static bool find_field(const struct dp_event *ev, const char *name,
		       struct field_ref *ref)
{
	const struct dp_field *f;
	size_t k;

	/*
	 * dp_event_field() also returns the common fields; no generic name
	 * is a common one, so asking it first keeps the kernel's order.
	 */
	f = dp_event_field(ev, name);
	if (f) {
		ref->offset = f->offset;
		ref->size = f->size;
		ref->is_signed = f->is_signed;
		if (f->fclass == DP_FC_STRING || f->fclass == DP_FC_STRING_ARRAY)
			ref->cls = FT_DYN_STRING;
		else
			ref->cls = f->type ? type_class(f->type) : FT_OTHER;
		return true;
	}
	for (k = 0; k < sizeof(generic_fields) / sizeof(generic_fields[0]); k++) {
		if (!strcmp(generic_fields[k].name, name)) {
			*ref = generic_fields[k].ref;
			return true;
		}
	}
	return false;
}

/* ---- parsing one predicate (the kernel's parse_pred) -------------------- */

struct parse {
	const struct dp_event *ev;
	const char *text;
	int code;		/* enum dp_filter_err_code, or -ENOMEM, or 0 */
	int pos;
};

/* The predicate being parsed: text from @s, cursor @i relative to it. */
struct pcur {
	struct parse *ps;
	const char *s;
	int pos;		/* index of s in the text, plus one */
	int i;
	struct field_ref fld;
	int op;
	struct pred *pred;
};

static int perr(struct pcur *c, enum dp_filter_err_code code, int at)
{
	c->ps->code = code;
	c->ps->pos = c->pos + at;
	return -EINVAL;
}

static void pred_release(struct pred *p)
{
	free(p->pat);
	free(p->mask);
	memset(p, 0, sizeof(*p));
}

static uint64_t size_mask(unsigned size)
{
	return size >= 8 ? UINT64_MAX : (1ULL << (size * 8)) - 1;
}

static int64_t sign_extend(uint64_t v, unsigned size)
{
	unsigned shift = 64 - size * 8;

	return (int64_t)(v << shift) >> shift;
}

/*
 * The kernel's select_comparison_fn(): == and != compare the field's
 * bytes, the others its value with its signedness; fields that are not
 * 1, 2, 4 or 8 bytes (odd-sized arrays) never match.
 */
static void set_compare(struct pred *p, const struct field_ref *f, int op,
			bool is_signed, uint64_t val)
{
	p->offset = f->offset;
	p->size = f->size;
	p->op = op;
	if (f->size != 1 && f->size != 2 && f->size != 4 && f->size != 8) {
		p->kind = PK_NEVER;
		return;
	}
	if (op == OP_EQ || op == OP_NE) {
		p->kind = PK_EQ;
		p->val = val & size_mask(f->size);
		p->not = op == OP_NE;
	} else if (is_signed) {
		p->kind = PK_CMP_S;
		p->val = (uint64_t)sign_extend(val, f->size);
	} else {
		p->kind = PK_CMP_U;
		p->val = val & size_mask(f->size);
	}
}

/* FIELD.function == NAME | ADDRESS */
static int pred_function(struct pcur *c)
{
	const char *s = c->s;
	int i = c->i, start = i;
	uint64_t addr = 0, fstart, fsize;
	char num[NUM_BUF_LEN];
	char *name = NULL;
	bool found;

	if (c->fld.size != sizeof(long))
		return perr(c, DP_FERR_ILLEGAL_FIELD_OP, i);
	if (c->op != OP_EQ && c->op != OP_NE)
		return perr(c, DP_FERR_INVALID_OP, i);
	if (k_isdigit(s[i])) {
		while (k_isalnum(s[i]))
			i++;
		if (i - start >= NUM_BUF_LEN)
			return perr(c, DP_FERR_OPERAND_TOO_LONG, i);
		memcpy(num, s + start, i - start);
		num[i - start] = '\0';
		if (dp_kstrtoull(num, 0, &addr))
			return perr(c, DP_FERR_INVALID_VALUE, i);
	} else {
		/* a name runs to the next space, quotes and "&&" included */
		while (s[i] && !k_isspace(s[i]))
			i++;
		name = strndup(s + start, i - start);
		if (!name) {
			c->ps->code = -ENOMEM;
			return -ENOMEM;
		}
	}
	found = func_lookup &&
		func_lookup(func_lookup_priv, name, addr, &fstart, &fsize);
	free(name);
	if (!found)
		return perr(c, DP_FERR_NO_FUNCTION, i);
	c->pred->kind = PK_FUNC;
	c->pred->op = c->op;
	c->pred->offset = c->fld.offset;
	c->pred->size = 8;
	c->pred->val = fstart;
	c->pred->val2 = fstart + fsize;
	c->i = i;
	return 0;
}

/* FIELD ==|!=|& CPUS{list} */
static int pred_cpus(struct pcur *c)
{
	const char *s = c->s;
	struct pred *p = c->pred;
	unsigned nbits = dp_filter_nr_cpus(), weight = 0, first = 0, k;
	int i = c->i, start, op = c->op;
	char *list;
	int ret;

	if (c->fld.cls != FT_CPU && c->fld.cls != FT_OTHER)
		return perr(c, DP_FERR_ILLEGAL_FIELD_OP, i);
	if (op != OP_EQ && op != OP_NE && op != OP_BAND)
		return perr(c, DP_FERR_ILLEGAL_FIELD_OP, i);
	i += 4;
	if (s[i++] != '{')
		return perr(c, DP_FERR_MISSING_BRACE_OPEN, i);
	start = i;
	while (s[i] && s[i] != '}')
		i++;
	if (s[i] != '}')
		return perr(c, DP_FERR_MISSING_BRACE_CLOSE, i);
	if (start == i)
		return perr(c, DP_FERR_INVALID_CPULIST, i);

	list = strndup(s + start, i - start);
	p->mask = calloc((nbits + 63) / 64, sizeof(uint64_t));
	if (!list || !p->mask) {
		free(list);
		c->ps->code = -ENOMEM;
		return -ENOMEM;
	}
	p->nbits = nbits;
	ret = parse_cpulist(list, p->mask, nbits);
	free(list);
	if (ret)
		return perr(c, DP_FERR_INVALID_CPULIST, i);
	i++;

	for (k = nbits; k--; ) {
		if (mask_test(p->mask, nbits, k)) {
			weight++;
			first = k;
		}
	}
	/* A list of one CPU is a plain number, and then '&' means '=='. */
	if (weight == 1) {
		free(p->mask);
		p->mask = NULL;
		if (op == OP_BAND)
			op = OP_EQ;
	}
	if (c->fld.cls == FT_CPU) {
		p->kind = weight == 1 ? PK_CPU : PK_CPU_MASK;
		p->op = op;
		p->val = first;
	} else if (weight == 1) {
		set_compare(p, &c->fld, op, false, first);
	} else {
		set_compare(p, &c->fld, op, false, 0);
		if (p->kind != PK_NEVER)
			p->kind = PK_CPUMASK_NUM;
	}
	c->i = i;
	return 0;
}

/*
 * The kernel's filter_parse_regex() for '~': a leading '!' negates, then
 * "*x", "x*", "*x*" are suffix/prefix/substring tests and any other '*',
 * '?', '[' or '\' a full glob.  A pattern starting with a digit is
 * always matched whole (ftrace's "function index" rule leaks in here).
 */
static enum str_match glob_kind(const char *p, size_t len, size_t *from,
				size_t *n, bool *not)
{
	enum str_match type = SM_FULL;
	size_t base = 0, k;

	*not = false;
	if (p[0] == '!') {
		*not = true;
		base = 1;
		len--;
	}
	p += base;
	*from = base;
	*n = len;
	if (k_isdigit(p[0]))
		return SM_FULL;
	for (k = 0; k < len; k++) {
		if (p[k] == '*') {
			if (k == 0) {
				type = SM_END;
			} else if (k == len - 1) {
				type = type == SM_END ? SM_MIDDLE : SM_FRONT;
				*n = k;
				break;
			} else {
				return SM_GLOB;
			}
		} else if (p[k] == '[' || p[k] == '?' || p[k] == '\\') {
			return SM_GLOB;
		}
	}
	if (p[0] == '*') {
		(*from)++;
		(*n)--;
	}
	return type;
}

/* FIELD ==|!=|~ 'string' or "string" (no escapes) */
static int pred_string(struct pcur *c)
{
	const char *s = c->s;
	struct pred *p = c->pred;
	int i = c->i, start;
	size_t from = 0, n;
	char q = s[i];

	switch (c->op) {
	case OP_NE:
		p->not = true;
		break;
	case OP_EQ:
	case OP_GLOB:
		break;
	default:
		return perr(c, DP_FERR_ILLEGAL_FIELD_OP, i);
	}
	if (!class_is_string(c->fld.cls))
		return perr(c, DP_FERR_EXPECT_DIGIT, i);
	for (i++; s[i] && s[i] != q; i++)
		;
	if (!s[i])
		return perr(c, DP_FERR_MISSING_QUOTE, i);
	start = c->i + 1;
	if (i - start >= MAX_STR_VAL)
		return perr(c, DP_FERR_OPERAND_TOO_LONG, i);

	n = i - start;
	p->match = SM_FULL;
	if (c->op == OP_GLOB) {
		char tmp[MAX_STR_VAL];

		memcpy(tmp, s + start, n);
		tmp[n] = '\0';
		p->match = glob_kind(tmp, n, &from, &n, &p->not);
	}
	p->pat = strndup(s + start + from, n);
	if (!p->pat) {
		c->ps->code = -ENOMEM;
		return -ENOMEM;
	}
	p->plen = n;
	p->kind = PK_STR;
	p->op = c->op;
	p->cls = c->fld.cls;
	p->offset = c->fld.offset;
	p->size = c->fld.size;
	c->i = i + 1;
	return 0;
}

/* FIELD OP number: kstrtoll/kstrtoull base 0, by the field's sign */
static int pred_number(struct pcur *c)
{
	const char *s = c->s;
	int i = c->i, start = i;
	char num[NUM_BUF_LEN];
	uint64_t val;
	int64_t sval;
	int ret;

	if (class_is_string(c->fld.cls))
		return perr(c, DP_FERR_EXPECT_STRING, i);
	if (c->op == OP_GLOB)
		return perr(c, DP_FERR_ILLEGAL_FIELD_OP, i);
	if (s[i] == '-')
		i++;
	while (k_isalnum(s[i]))
		i++;
	if (i - start >= NUM_BUF_LEN)
		return perr(c, DP_FERR_OPERAND_TOO_LONG, i);
	memcpy(num, s + start, i - start);
	num[i - start] = '\0';
	if (c->fld.is_signed) {
		ret = dp_kstrtoll(num, 0, &sval);
		val = (uint64_t)sval;
	} else {
		ret = dp_kstrtoull(num, 0, &val);
	}
	if (ret)
		return perr(c, DP_FERR_ILLEGAL_INTVAL, start);

	if (c->fld.cls == FT_CPU) {
		c->pred->kind = PK_CPU;
		c->pred->op = c->op;
		c->pred->val = val;
	} else {
		set_compare(c->pred, &c->fld, c->op, c->fld.is_signed, val);
	}
	c->i = i;
	return 0;
}

/* FIELD[.ustring][.function] OP */
static int parse_lhs(struct pcur *c, bool *function)
{
	const char *s = c->s;
	int i = c->i, start, op;
	char *name;
	bool found;

	while (k_isspace(s[i]))
		i++;
	start = i;
	while (k_isalnum(s[i]) || s[i] == '_')
		i++;
	if (i == start)
		return RET_TOO_FEW_OPEN;	/* no message, EPERM */
	name = strndup(s + start, i - start);
	if (!name) {
		c->ps->code = -ENOMEM;
		return -ENOMEM;
	}
	found = find_field(c->ps->ev, name, &c->fld);
	free(name);
	if (!found)
		return perr(c, DP_FERR_FIELD_NOT_FOUND, i);

	/* .ustring only matters for char * fields, which records never hold */
	if (!strncmp(s + i, ".ustring", 8))
		i += 8;
	*function = !strncmp(s + i, ".function", 9);
	if (*function)
		i += 9;
	while (k_isspace(s[i]))
		i++;
	for (op = 0; op < OP_NR; op++)
		if (!strncmp(s + i, op_text[op], strlen(op_text[op])))
			break;
	if (op == OP_NR)
		return perr(c, DP_FERR_INVALID_OP, i);
	i += strlen(op_text[op]);
	while (k_isspace(s[i]))
		i++;
	c->op = op;
	c->i = i;
	return 0;
}

/* Returns the length of the predicate at @s, or a negative kernel value. */
static int parse_pred(struct parse *ps, const char *s, int pos,
		      struct pred *pred)
{
	struct pcur c = { .ps = ps, .s = s, .pos = pos, .pred = pred };
	bool function;
	int ret;

	memset(pred, 0, sizeof(*pred));
	ret = parse_lhs(&c, &function);
	if (ret)
		return ret;
	if (function)
		ret = pred_function(&c);
	else if (!strncmp(s + c.i, "CPUS", 4))
		ret = pred_cpus(&c);
	else if (s[c.i] == '\'' || s[c.i] == '"')
		ret = pred_string(&c);
	else if (k_isdigit(s[c.i]) || s[c.i] == '-')
		ret = pred_number(&c);
	else
		ret = perr(&c, DP_FERR_INVALID_VALUE, c.i);
	if (ret) {
		pred_release(pred);
		return ret;
	}
	return c.i;
}

/* ---- the whole expression --------------------------------------------- */

/*
 * The kernel's calc_stack(): the deepest parenthesis nesting (counting the
 * whole text as one level) and an upper bound on the predicates, or where
 * a parenthesis or quote is unbalanced.
 */
static int count_terms(const char *s, int *nparens, int *npreds, int *where)
{
	int preds = 0, open = 1, max_open = 1, last_quote = 0, level, i;
	bool in_pred = false;
	char quote = 0;

	for (i = 0; s[i]; i++) {
		if (k_isspace(s[i]))
			continue;
		if (quote) {
			if (s[i] == quote)
				quote = 0;
			continue;
		}
		switch (s[i]) {
		case '\'':
		case '"':
			quote = s[i];
			last_quote = i;
			break;
		case '&':
		case '|':
			/* the second char of "&&" counts as a term: harmless */
			if (s[i + 1] != s[i])
				break;
			in_pred = false;
			continue;
		case '(':
			in_pred = false;
			if (++open > max_open)
				max_open = open;
			continue;
		case ')':
			in_pred = false;
			if (open == 1) {
				*where = i;
				return RET_TOO_FEW_OPEN;
			}
			open--;
			continue;
		}
		if (!in_pred) {
			preds++;
			in_pred = true;
		}
	}
	if (quote) {
		*where = last_quote;
		return RET_MISSING_QUOTE;
	}
	if (open != 1) {
		/* the last '(' left open; index 0 is never looked at */
		level = open;
		for (i--; i > 0; i--) {
			if (quote) {
				if (s[i] == quote)
					quote = 0;
				continue;
			}
			if (s[i] == '(') {
				if (level == open) {
					*where = i;
					return RET_TOO_MANY_OPEN;
				}
				level--;
			} else if (s[i] == ')') {
				level++;
			} else if (s[i] == '\'' || s[i] == '"') {
				quote = s[i];
			}
		}
		*where = 0;
		return RET_TOO_MANY_OPEN;
	}
	*nparens = max_open;
	*npreds = preds;
	return 0;
}

/* Per-parenthesis state: the '!' in force, and connectors not yet linked. */
#define LV_INVERT	1
#define LV_AND		2
#define LV_OR		4

/*
 * Link predicate @n with the one its target names: that one branches to
 * @n's label when its result is @when; @n inherits its old target.
 */
static bool link_step(struct step *st, int n, bool when)
{
	int t = st[n].target;

	if (t < 0)
		return false;	/* the kernel would index prog[-1] */
	st[n].target = st[t].target;
	st[t].when = when;
	st[t].target = n;
	return true;
}

/*
 * After a predicate: spaces, then ')', "&&", "||" or the end.  Returns 1 at
 * the end of the text, 0 to parse the next term, or a negative error.
 */
static int after_pred(struct parse *ps, struct step *st, int n, int *lv,
		      int *depth, bool *inv, const char **pp)
{
	const char *p = *pp, *tok;

	for (;;) {
		tok = p++;
		if (k_isspace(*tok))
			continue;
		if (*tok == '&' || *tok == '|') {
			if (tok[1] != *tok)
				goto bad;
			p++;
		} else if (*tok != ')' && *tok != '\0') {
			goto bad;
		}
		*inv = lv[*depth] & LV_INVERT;
		if (lv[*depth] & LV_AND) {
			if (!link_step(st, n - 1, *inv))
				return -EINVAL;
			lv[*depth] &= ~LV_AND;
		}
		if (*tok == '&') {
			lv[*depth] |= LV_AND;
			break;
		}
		if (lv[*depth] & LV_OR) {
			if (!link_step(st, n - 1, !*inv))
				return -EINVAL;
			lv[*depth] &= ~LV_OR;
		}
		if (*tok == '|') {
			lv[*depth] |= LV_OR;
			break;
		}
		if (!*tok) {
			*pp = p;
			return 1;
		}
		if (*depth == 0) {
			ps->code = DP_FERR_TOO_MANY_CLOSE;
			ps->pos = p - ps->text;
			return RET_TOO_FEW_OPEN;
		}
		(*depth)--;
	}
	*pp = p;
	return 0;
bad:
	ps->code = DP_FERR_TOO_MANY_PREDS;
	ps->pos = tok - ps->text;
	return RET_TOO_FEW_OPEN;
}

/*
 * Shorten branches (a branch to a label that branches the same way goes
 * to that label's target), fold in the '!'s, and check that every branch
 * goes forward, as the kernel's second and third passes do.
 */
static int finish_program(struct step *st, int n, const bool *inverts)
{
	int i, t;

	st[n].target = 1;		/* TRUE */
	st[n + 1].target = 0;		/* FALSE */
	st[n - 1].target = n;
	st[n - 1].when = false;
	for (i = n - 2; i >= 0; i--) {
		t = st[i].target;
		/*
		 * A connector left unlinked ("a || b &&") leaves -1 here: the
		 * kernel reads prog[-1] and then, in practice, warns and fails.
		 */
		if (t < 0)
			return -EINVAL;
		if (st[i].when == st[t].when)
			st[i].target = st[t].target;
	}
	for (i = 0; i < n; i++) {
		st[i].when ^= inverts[i];
		if (st[i].target <= i || st[i].target > n)
			return -EINVAL;
	}
	return 0;
}

/* The kernel's predicate_parse(): fills @f->step, returns 0 or an error. */
static int build_program(struct parse *ps, struct dp_filter *f, int cap,
			 int nparens)
{
	const char *p = ps->text, *tok;
	struct step *st = f->step;
	int *lv = calloc(nparens + 2, sizeof(*lv));
	bool *inverts = calloc(cap + 1, sizeof(*inverts));
	bool inv = false;
	int depth = 0, n = 0, len, ret = -ENOMEM;

	if (!lv || !inverts) {
		ps->code = -ENOMEM;
		goto out;
	}
	while (*p) {
		tok = p++;
		if (k_isspace(*tok))
			continue;
		if (*tok == '(') {
			ret = -EINVAL;
			if (depth > nparens)
				goto out;
			lv[++depth] = inv;
			continue;
		}
		if (*tok == '!' && tok[1] != '=' && tok[1] != '~') {
			inv = !inv;
			continue;
		}
		if (n >= cap) {
			ps->code = DP_FERR_TOO_MANY_PREDS;
			ps->pos = tok - ps->text;
			ret = RET_TOO_FEW_OPEN;
			goto out;
		}
		inverts[n] = inv;
		st[n].target = n - 1;
		len = parse_pred(ps, tok, tok - ps->text + 1, &st[n].pred);
		if (len < 0) {
			ret = len;
			goto out;
		}
		p = tok + len;
		f->n = ++n;
		ret = after_pred(ps, st, n, lv, &depth, &inv, &p);
		if (ret < 0)
			goto out;
		if (ret > 0)
			break;
	}
	/*
	 * The text ended after a connector.  A trailing "&&" leaves an
	 * earlier "||" of the same level unlinked: the kernel then reads
	 * prog[-1] and accepts or refuses depending on the memory before its
	 * array.  dprobe links it, so "a || b &&" means "a || b", as
	 * "a || b ||" and "a && b &&" do for the kernel too.
	 */
	if (ret == 0 && (lv[depth] & LV_AND) && (lv[depth] & LV_OR) &&
	    !link_step(st, n - 1, !(lv[depth] & LV_INVERT))) {
		ret = -EINVAL;
		goto out;
	}
	if (depth) {
		/* count_terms() already caught this */
		ps->code = DP_FERR_TOO_MANY_OPEN;
		ps->pos = p - ps->text;
		ret = RET_TOO_FEW_OPEN;
		goto out;
	}
	if (!n) {
		ps->code = DP_FERR_NO_FILTER;
		ps->pos = p - ps->text;
		ret = -EINVAL;
		goto out;
	}
	ret = finish_program(st, n, inverts);
out:
	free(lv);
	free(inverts);
	return ret;
}

void dp_filter_free(struct dp_filter *f)
{
	int i;

	if (!f)
		return;
	for (i = 0; i < f->n; i++)
		pred_release(&f->step[i].pred);
	free(f);
}

static void set_error(struct dp_filter_error *err, int ret,
		      const struct parse *ps)
{
	err->err = -ret;
	err->has_code = ps->code > 0;
	err->code = err->has_code ? (enum dp_filter_err_code)ps->code :
				    DP_FERR_NONE;
	err->pos = err->has_code ? ps->pos : 0;
	err->raw = ps->code;
}

struct dp_filter *dp_filter_compile(const struct dp_event *ev,
				    const char *text,
				    struct dp_filter_error *err)
{
	struct parse ps = { .ev = ev, .text = text };
	struct dp_filter_error dummy;
	struct dp_filter *f = NULL;
	int nparens = 0, npreds = 0, where = 0, ret;

	if (!err)
		err = &dummy;
	memset(err, 0, sizeof(*err));

	ret = count_terms(text, &nparens, &npreds, &where);
	if (ret) {
		ps.pos = where;
		ps.code = ret == RET_MISSING_QUOTE ? DP_FERR_MISSING_QUOTE :
			  ret == RET_TOO_MANY_OPEN ? DP_FERR_TOO_MANY_OPEN :
						     DP_FERR_TOO_MANY_CLOSE;
		goto fail;
	}
	if (!npreds) {
		ret = -EINVAL;		/* no message: "Error: (0)" */
		goto fail;
	}
	/*
	 * Room for the kernel's bound (npreds + 2 predicates) plus TRUE and
	 * FALSE, so even a parse that outruns the bound stays in bounds.
	 */
	f = calloc(1, sizeof(*f) + (npreds + 4) * sizeof(f->step[0]));
	if (!f) {
		ps.code = -ENOMEM;
		ret = -ENOMEM;
		goto fail;
	}
	ret = build_program(&ps, f, npreds + 2, nparens);
	if (ret)
		goto fail;
	return f;
fail:
	dp_filter_free(f);
	set_error(err, ret, &ps);
	return NULL;
}

/* ---- matching ----------------------------------------------------------- */

static bool in_record(const struct pred *p, unsigned size, size_t rec_len)
{
	return p->offset <= rec_len && size <= rec_len - p->offset;
}

struct str_view {
	const char *s;
	size_t n;		/* bytes before the NUL */
	bool term;		/* a NUL ends it inside its buffer */
};

/* The string a predicate tests; false if the record cannot hold it. */
static bool get_string(const struct pred *p, const uint8_t *rec,
		       size_t rec_len, const struct dp_rec_meta *meta,
		       struct str_view *v)
{
	size_t loc, len;
	uint32_t word;

	v->term = true;
	switch (p->cls) {
	case FT_COMM:
		v->s = meta->comm ? meta->comm : "";
		v->n = strnlen(v->s, COMM_MAX);
		return true;
	case FT_STATIC_STRING:
		if (!in_record(p, p->size, rec_len))
			return false;
		v->s = (const char *)rec + p->offset;
		v->n = strnlen(v->s, p->size);
		v->term = v->n < p->size;
		return true;
	case FT_DYN_STRING:
	case FT_RDYN_STRING:
		if (!in_record(p, 4, rec_len))
			return false;
		word = dp_rec_load(rec + p->offset, 4);
		loc = dp_data_loc_off(word);
		len = dp_data_loc_len(word);
		if (p->cls == FT_RDYN_STRING)
			loc += p->offset + 4;
		/* a fault (length 0) or a bad location: the empty string */
		if (!len || loc >= rec_len) {
			v->s = "";
			v->n = 0;
			return true;
		}
		if (len > rec_len - loc)
			len = rec_len - loc;
		v->s = (const char *)rec + loc;
		v->n = strnlen(v->s, len);
		v->term = v->n < len;
		return true;
	default:
		/* char * fields point into another address space */
		return false;
	}
}

/*
 * A [...] class at @pat (after the '['): 1 if @c is in it, 0 if not, -1
 * if the class is malformed (then '[' is an ordinary character).  *@next
 * is set after the ']'.
 */
static int glob_class(const char *pat, unsigned char c, const char **next)
{
	bool inverted = *pat == '!', match = false;
	const char *cl = pat + inverted;
	unsigned char lo = *cl++, hi;

	do {
		hi = lo;
		if (!lo)
			return -1;
		if (cl[0] == '-' && cl[1] != ']') {
			hi = cl[1];
			if (!hi)
				return -1;
			cl += 2;
		}
		if (lo <= c && c <= hi)
			match = true;
		lo = *cl++;
	} while (lo != ']');
	*next = cl;
	return match != inverted;
}

/*
 * The kernel's glob_match() over @n bytes of @s: '?' one character, '*'
 * any run, [...] a class ('!' negates, a-b ranges, ']' first is literal),
 * '\' quotes the next character.  One backtrack point, as the kernel's.
 */
static bool glob_match(const char *pat, const char *s, size_t n)
{
	const char *back_pat = NULL, *next;
	size_t i = 0, back_i = 0;
	unsigned char c, d;
	int r;

	for (;;) {
		c = i < n ? s[i] : '\0';
		i++;
		d = *pat++;
		if (d == '?') {
			if (!c)
				return false;
			continue;
		}
		if (d == '*') {
			if (!*pat)
				return true;
			back_pat = pat;
			back_i = --i;
			continue;
		}
		if (d == '[') {
			/* a class never matches the end of the string */
			if (!c)
				return false;
			r = glob_class(pat, c, &next);
			if (r > 0) {
				pat = next;
				continue;
			}
			if (r == 0)
				goto backtrack;
		} else if (d == '\\') {
			d = *pat++;
		}
		if (c == d) {
			if (!d)
				return true;
			continue;
		}
backtrack:
		if (!c || !back_pat)
			return false;
		pat = back_pat;
		i = ++back_i;
	}
}

static bool str_match(const struct pred *p, const struct str_view *v)
{
	size_t pl = p->plen;

	switch (p->match) {
	case SM_FULL:
		/* strncmp over the buffer: an unended one may be a prefix */
		if (v->n == pl)
			return !memcmp(v->s, p->pat, pl);
		return !v->term && pl > v->n && !memcmp(v->s, p->pat, v->n);
	case SM_FRONT:
		return v->n >= pl && !memcmp(v->s, p->pat, pl);
	case SM_MIDDLE:
		return !pl || memmem(v->s, v->n, p->pat, pl);
	case SM_END:
		return v->n >= pl && !memcmp(v->s + v->n - pl, p->pat, pl);
	default:
		return glob_match(p->pat, v->s, v->n);
	}
}

static bool cmp_signed(int op, int64_t x, int64_t v)
{
	switch (op) {
	case OP_LT:
		return x < v;
	case OP_LE:
		return x <= v;
	case OP_GT:
		return x > v;
	case OP_GE:
		return x >= v;
	case OP_BAND:
		return x & v;
	default:
		return false;
	}
}

static bool cmp_unsigned(int op, uint64_t x, uint64_t v)
{
	switch (op) {
	case OP_LT:
		return x < v;
	case OP_LE:
		return x <= v;
	case OP_GT:
		return x > v;
	case OP_GE:
		return x >= v;
	case OP_BAND:
		return x & v;
	default:
		return false;
	}
}

/* The current CPU against a number: the kernel compares them as ints. */
static bool cmp_cpu(int op, int cpu, int v)
{
	switch (op) {
	case OP_EQ:
		return cpu == v;
	case OP_NE:
		return cpu != v;
	case OP_BAND:
		return false;
	default:
		return cmp_signed(op, cpu, v);
	}
}

/* A CPU against a list of 0 or 2+ CPUs: never equal, never unequal. */
static bool cpu_in_list(const struct pred *p, long cpu)
{
	switch (p->op) {
	case OP_EQ:
		return false;
	case OP_NE:
		return true;
	default:
		return mask_test(p->mask, p->nbits, cpu);
	}
}

static bool eval_pred(const struct pred *p, const uint8_t *rec,
		      size_t rec_len, const struct dp_rec_meta *meta)
{
	struct str_view v;
	uint64_t x;

	switch (p->kind) {
	case PK_EQ:
		if (!in_record(p, p->size, rec_len))
			return false;
		x = dp_rec_load(rec + p->offset, p->size);
		return (x == p->val) ^ p->not;
	case PK_CMP_S:
		if (!in_record(p, p->size, rec_len))
			return false;
		x = dp_rec_load(rec + p->offset, p->size);
		return cmp_signed(p->op, sign_extend(x, p->size),
				  (int64_t)p->val);
	case PK_CMP_U:
		if (!in_record(p, p->size, rec_len))
			return false;
		return cmp_unsigned(p->op, dp_rec_load(rec + p->offset, p->size),
				    p->val);
	case PK_CPUMASK_NUM:
		if (!in_record(p, p->size, rec_len))
			return false;
		/* the kernel reads the field into an unsigned int */
		x = (uint32_t)dp_rec_load(rec + p->offset, p->size);
		return x < p->nbits && cpu_in_list(p, x);
	case PK_CPU:
		return cmp_cpu(p->op, meta->cpu, (int)(uint32_t)p->val);
	case PK_CPU_MASK:
		return cpu_in_list(p, meta->cpu);
	case PK_STR:
		if (!get_string(p, rec, rec_len, meta, &v))
			return false;
		return str_match(p, &v) ^ p->not;
	case PK_FUNC:
		if (!in_record(p, 8, rec_len))
			return false;
		x = dp_rec_load(rec + p->offset, 8);
		return (x >= p->val && x < p->val2) == (p->op == OP_EQ);
	default:
		return false;
	}
}

bool dp_filter_match(const struct dp_filter *f, const struct dp_event *ev,
		     const void *rec, size_t rec_len,
		     const struct dp_rec_meta *meta)
{
	static const struct dp_rec_meta no_meta = { .cpu = -1 };
	int i;

	(void)ev;
	if (!f)
		return true;
	if (!meta)
		meta = &no_meta;
	for (i = 0; i < f->n; i++) {
		const struct step *st = &f->step[i];

		if (eval_pred(&st->pred, rec, rec_len, meta) == st->when)
			i = st->target;
	}
	return f->step[i].target;
}

/* ---- errors and the `filter` file ------------------------------------- */

const char *dp_filter_err_message(enum dp_filter_err_code code)
{
	static const char *const text[] = {
#define DP_FERR_TEXT(id, msg) msg,
		DP_FILTER_ERRORS(DP_FERR_TEXT)
#undef DP_FERR_TEXT
	};

	if ((unsigned)code >= sizeof(text) / sizeof(text[0]))
		return "Error";
	return text[code];
}

void dp_filter_error_print(const char *text, const struct dp_filter_error *e,
			   FILE *out)
{
	int len = strlen(text), pos = e->pos;

	fputs(text, out);
	if (!e->has_code) {
		fprintf(out, "\nError: (%d)\n", e->raw);
		return;
	}
	/* the kernel clamps the caret to the text and is off by one after 0 */
	if (pos > len)
		pos = len;
	if (pos)
		pos++;
	fprintf(out, "\n%*s\nparse_error: %s\n", pos, "^",
		dp_filter_err_message(e->code));
}

void dp_filter_error_log_print(const char *text,
			       const struct dp_filter_error *e, FILE *out)
{
	enum dp_filter_err_code code = e->has_code ? e->code : DP_FERR_ERRNO;
	int pos = e->has_code ? e->pos : 0;

	fprintf(out, "event filter parse error: error: %s\n  Command: %s\n",
		dp_filter_err_message(code), text);
	fprintf(out, "%*s^\n", 11 + pos, "");
}

/* What the kernel's filter_string becomes after a failed write. */
static char *error_text(const char *text, const struct dp_filter_error *e)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	if (!f)
		return NULL;
	dp_filter_error_print(text, e, f);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/*
 * A write to the event's `filter` file.  As the kernel does, trailing
 * whitespace is cut (leading whitespace stays in the text), "0" clears,
 * and anything else replaces the filter even when it does not compile: the
 * event is then unfiltered and its `filter` file shows the error.  dprobe
 * keeps that shown text in ev->filter_text (the kernel's filter_string
 * after append_filter_err()) with ev->filter NULL, so a later reader
 * prints it with dp_event_filter_print() without compiling again.  A
 * write of 4096 bytes or more is refused with EINVAL and changes nothing.
 */
int dp_event_set_filter(struct dp_event *ev, const char *text,
			struct dp_filter_error *err)
{
	struct dp_filter_error dummy;
	struct dp_filter *f;
	size_t len = strlen(text);
	char *buf, *shown, *start;

	if (!err)
		err = &dummy;
	memset(err, 0, sizeof(*err));
	if (len >= WRITE_MAX) {
		err->err = EINVAL;
		return -EINVAL;
	}
	buf = strndup(text, len);
	if (!buf) {
		err->err = ENOMEM;
		err->raw = -ENOMEM;
		return -ENOMEM;
	}
	while (len && k_isspace(buf[len - 1]))
		buf[--len] = '\0';
	for (start = buf; k_isspace(*start); start++)
		;

	if (!strcmp(start, "0")) {
		free(buf);
		shown = NULL;
		f = NULL;
	} else {
		f = dp_filter_compile(ev, buf, err);
		shown = f ? buf : error_text(buf, err);
		if (!f)
			free(buf);
	}
	dp_filter_free(ev->filter);
	free(ev->filter_text);
	ev->filter = f;
	ev->filter_text = shown;
	return err->err ? -err->err : 0;
}

void dp_event_filter_print(const struct dp_event *ev, FILE *out)
{
	if (ev->filter_text)
		fprintf(out, "%s\n", ev->filter_text);
	else
		fputs("none\n", out);
}
