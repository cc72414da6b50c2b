// SPDX-License-Identifier: GPL-2.0
/*
 * Fetch arguments: "NAME=EXPR[:TYPE]" compiled into a fetch program.
 *
 * The order of checks, and the caret offset each error reports, follow the
 * kernel's traceprobe_parse_probe_arg() exactly, including its quirks: a
 * dereference moves the caret base to its inner expression and leaves it
 * there, so type errors after "+0(%di)" point into the expression, and the
 * "+u" form points one column early.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "lang/fetcharg.h"
#include "lang/types.h"

#define END_SLOT (DP_FETCH_INSN_MAX - 1)

struct arg_ctx {
	const struct dp_parse_ctx *pc;
	int offset;		/* caret base within the token */
	struct dp_arg *arg;
};

static int fail(struct arg_ctx *c, int offset, enum dp_err_code code, int err)
{
	dp_error_at(c->pc->err, c->pc->line, code, err, c->pc->index, offset);
	return -err;
}

static bool is_good_name(const char *s)
{
	if (!isalpha((unsigned char)*s) && *s != '_')
		return false;
	while (*++s)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return false;
	return true;
}

bool dp_is_good_name(const char *s)
{
	return is_good_name(s);
}

/*
 * $NAME on an e: line: a field of the attached event, or $comm; nothing
 * else (the kernel's parse_probe_vars() with TPARG_FL_TEVENT).
 */
static int parse_field_var(struct arg_ctx *c, const char *v,
			   struct dp_fetch_insn *code)
{
	const struct dp_parse_ctx *pc = c->pc;
	struct dp_tfield f;

	if (!pc->tevent->field(pc->tevent->priv, pc->att_group, pc->att_event,
			       v, &f)) {
		code->op = DP_FOP_FIELD;
		code->offset = f.offset;
		code->basesize = (uint8_t)f.size;
		code->lshift = f.is_signed;
		code->param = f.kind;
		return 0;
	}
	if (!strcmp(v, "comm") || !strcmp(v, "COMM")) {
		code->op = DP_FOP_COMM;
		return 0;
	}
	return fail(c, c->offset, DP_ERR_BAD_VAR, EINVAL);
}

static int parse_args_var(struct arg_ctx *c, const char *arg,
			  struct dp_fetch_insn *code)
{
	const char *v = arg + 1;
	const struct dp_parse_ctx *pc = c->pc;
	enum dp_err_code ecode = DP_ERR_BAD_VAR;
	uint64_t param;
	size_t len;

	if (pc->tevent)
		return parse_field_var(c, v, code);
	if (!strncmp(v, "retval", 6)) {
		if (!pc->is_return) {
			ecode = DP_ERR_RETVAL_ON_PROBE;
			goto inval;
		}
		/* "$retval->m" and the like: the kernel's BTF parser's
		 * (a uprobe takes any "$retval..." as $retval) */
		if (pc->kernel && v[6])
			return fail(c, c->offset, DP_ERR_NOSUP_BTFARG, EINVAL);
		code->op = DP_FOP_RETVAL;
		return 0;
	}
	if (!strncmp(v, "stack", 5)) {
		len = 5;
		if (v[len] == '\0') {
			code->op = DP_FOP_STACKP;
			return 0;
		}
		if (!isdigit((unsigned char)v[len]) ||
		    dp_kstrtoull(v + len, 10, &param))
			goto inval;
		if (pc->kernel && param > DP_MAX_STACK_NUM) {
			ecode = DP_ERR_BAD_STACK_NUM;
			goto inval;
		}
		code->op = DP_FOP_STACK;
		code->param = (int)param;
		return 0;
	}
	if (!strcmp(v, "comm") || !strcmp(v, "COMM")) {
		code->op = DP_FOP_COMM;
		return 0;
	}
	if (!strncmp(v, "arg", 3)) {
		if (dp_kstrtoull(v + 3, 10, &param))
			goto inval;
		if (!param || param > DP_MAX_ARG_NUM) {
			ecode = DP_ERR_BAD_ARG_NUM;
			goto inval;
		}
		if (pc->kernel && pc->fentry) {
			code->op = DP_FOP_ARG;
		} else if (pc->kernel && pc->is_return) {
			/* the engine saves entry arguments for the return */
			code->op = DP_FOP_ENTRY_ARG;
		} else {
			ecode = DP_ERR_NOFENTRY_ARGS;
			goto inval;
		}
		code->param = (int)param - 1;
		return 0;
	}
inval:
	return fail(c, c->offset, ecode, EINVAL);
}

static int parse_fetch(struct arg_ctx *c, char *arg, int *pci,
		       struct dp_fetch_insn *code);

/* "@ADDR", "@+FOFFS", "@SYM[+|-offs]": an address, then one dereference. */
static int parse_at(struct arg_ctx *c, char *arg, int *pci,
		    struct dp_fetch_insn *code)
{
	struct dp_fetch_insn *in = &code[*pci];
	int ret;

	if (isdigit((unsigned char)arg[1])) {
		ret = dp_kstrtoull(arg + 1, 0, &in->imm);
		if (ret)
			return fail(c, c->offset, DP_ERR_BAD_MEM_ADDR, -ret);
		in->op = DP_FOP_IMM;
	} else if (arg[1] == '+') {
		int64_t off;

		if (c->pc->kernel)
			return fail(c, c->offset, DP_ERR_FILE_ON_KPROBE, EINVAL);
		ret = dp_kstrtoll(arg + 2, 0, &off);
		if (ret)
			return fail(c, c->offset, DP_ERR_BAD_FILE_OFFS, -ret);
		in->op = DP_FOP_FOFFS;
		in->imm = (uint64_t)off;
	} else {
		if (!c->pc->kernel)
			return fail(c, c->offset, DP_ERR_SYM_ON_UPROBE, EINVAL);
		/* a placeholder the resolver turns into the address */
		in->op = DP_FOP_SYMBOL;
		free(c->arg->data);
		c->arg->data = strdup(arg + 1);
		if (!c->arg->data)
			return -ENOMEM;
		in->data = c->arg->data;
		if (++*pci == END_SLOT)
			return fail(c, c->offset, DP_ERR_TOO_MANY_OPS, EINVAL);
		in = &code[*pci];
		in->op = DP_FOP_IMM;
		in->imm = 0;
	}
	if (++*pci == END_SLOT)
		return fail(c, c->offset, DP_ERR_TOO_MANY_OPS, EINVAL);
	in = &code[*pci];
	in->op = DP_FOP_DEREF;
	in->offset = 0;
	return 0;
}

/* "+|-[u]OFFS(EXPR)" */
static int parse_deref(struct arg_ctx *c, char *arg, int *pci,
		       struct dp_fetch_insn *code)
{
	enum dp_fetch_op op = DP_FOP_DEREF;
	char *open, *close;
	int64_t off;
	int ret, inner;

	if (arg[1] == 'u') {
		op = DP_FOP_UDEREF;
		arg[1] = arg[0];
		arg++;
	}
	if (arg[0] == '+')
		arg++;
	open = strchr(arg, '(');
	if (!open)
		return fail(c, c->offset, DP_ERR_DEREF_NEED_BRACE, EINVAL);
	*open = '\0';
	ret = dp_kstrtoll(arg, 0, &off);
	if (ret)
		return fail(c, c->offset, DP_ERR_BAD_DEREF_OFFS, -ret);
	c->offset += (int)(open + 1 - arg) + (arg[0] != '-' ? 1 : 0);
	arg = open + 1;
	close = strrchr(arg, ')');
	if (!close)
		return fail(c, c->offset + (int)strlen(arg),
			    DP_ERR_DEREF_OPEN_BRACE, EINVAL);
	*close = '\0';
	inner = c->offset;
	ret = parse_fetch(c, arg, pci, code);
	if (ret)
		return ret;
	c->offset = inner;
	if (code[*pci].op == DP_FOP_COMM || code[*pci].op == DP_FOP_DATA)
		return fail(c, c->offset, DP_ERR_COMM_CANT_DEREF, EINVAL);
	if (++*pci == END_SLOT)
		return fail(c, c->offset, DP_ERR_TOO_MANY_OPS, EINVAL);
	code[*pci].op = op;
	code[*pci].offset = off;
	return 0;
}

/* "\IMM" or "\"STR"" */
static int parse_imm(struct arg_ctx *c, char *arg, struct dp_fetch_insn *in)
{
	int64_t sv;
	int ret;

	if (arg[1] == '"') {
		const char *s = arg + 2;
		size_t len = strlen(s);

		if (len == 0 || s[len - 1] != '"')
			return fail(c, c->offset + 2 + (int)len,
				    DP_ERR_IMMSTR_NO_CLOSE, EINVAL);
		free(c->arg->data);
		c->arg->data = strndup(s, len - 1);
		if (!c->arg->data)
			return -ENOMEM;
		in->op = DP_FOP_DATA;
		in->data = c->arg->data;
		return 0;
	}
	if (isdigit((unsigned char)arg[1])) {
		ret = dp_kstrtoull(arg + 1, 0, &in->imm);
	} else if (arg[1] == '-' || arg[1] == '+') {
		ret = dp_kstrtoll(arg + 1 + (arg[1] == '+'), 0, &sv);
		in->imm = (uint64_t)sv;
	} else {
		ret = -EINVAL;
	}
	if (ret)
		return fail(c, c->offset + 1, DP_ERR_BAD_IMM, -ret);
	in->op = DP_FOP_IMM;
	return 0;
}

/* The kernel's parse_probe_arg(): one expression into code[*pci...]. */
static int parse_fetch(struct arg_ctx *c, char *arg, int *pci,
		       struct dp_fetch_insn *code)
{
	struct dp_fetch_insn *in = &code[*pci];
	int ret = 0, reg;

	switch (arg[0]) {
	case '$':
		ret = parse_args_var(c, arg, in);
		break;
	case '%':
		/* an fprobe or tprobe reads arguments, not registers */
		if (c->pc->fprobe)
			return fail(c, c->offset, DP_ERR_BAD_VAR, EINVAL);
		reg = dp_reg_lookup(arg + 1);
		if (reg < 0)
			return fail(c, c->offset, DP_ERR_BAD_REG_NAME, EINVAL);
		in->op = DP_FOP_REG;
		in->param = reg;
		break;
	case '@':
		ret = parse_at(c, arg, pci, code);
		in = &code[*pci];
		break;
	case '+':
	case '-':
		ret = parse_deref(c, arg, pci, code);
		in = &code[*pci];
		break;
	case '\\':
		ret = parse_imm(c, arg, in);
		break;
	case '(':
		/* the kernel hands these to its BTF parser, which says so */
		return fail(c, c->offset, DP_ERR_NOSUP_BTFARG, EOPNOTSUPP);
	default:
		if (isalpha((unsigned char)arg[0]) || arg[0] == '_')
			return fail(c, c->offset, DP_ERR_NOSUP_BTFARG, EINVAL);
		break;
	}
	if (!ret && in->op == DP_FOP_NOP)
		return fail(c, c->offset, DP_ERR_BAD_FETCH_ARG, EINVAL);
	return ret;
}

/*
 * Split ":TYPE[N]" off @arg (in place) and find the type.  Returns the
 * offset of TYPE in @arg (0 if none), or a negative errno.
 */
static int parse_type(struct arg_ctx *c, char *arg, char **type)
{
	struct dp_arg *pa = c->arg;
	char *t = strchr(arg, ':'), *open, *close;
	unsigned count = 0;
	int offs;

	*type = NULL;
	if (t) {
		*t++ = '\0';
		open = strchr(t, '[');
		if (open) {
			*open++ = '\0';
			close = strchr(open, ']');
			if (!close)
				return fail(c, c->offset + (int)(open + strlen(open) - arg),
					    DP_ERR_ARRAY_NO_CLOSE, EINVAL);
			if (close[1])
				return fail(c, c->offset + (int)(close + 1 - arg),
					    DP_ERR_BAD_ARRAY_SUFFIX, EINVAL);
			*close = '\0';
			if (dp_kstrtouint(open, 0, &count) || !count)
				return fail(c, c->offset + (int)(open - arg),
					    DP_ERR_BAD_ARRAY_NUM, EINVAL);
			if (count > DP_MAX_ARRAY_LEN)
				return fail(c, c->offset + (int)(open - arg),
					    DP_ERR_ARRAY_TOO_BIG, EINVAL);
		}
	}
	offs = t ? (int)(t - arg) : 0;
	/* $comm and immediate strings can only be strings */
	if (!c->pc->tevent && (!strcmp(arg, "$comm") || !strcmp(arg, "$COMM") ||
			       !strncmp(arg, "\\\"", 2))) {
		if (count || (t && strcmp(t, "string")))
			return fail(c, c->offset + offs, DP_ERR_NEED_STRING_TYPE,
				    EINVAL);
		dp_find_type("string", c->pc->kernel, &pa->type);
	} else if ((c->pc->tracepoint ? dp_find_tp_type : dp_find_type)(
			   t, c->pc->kernel, &pa->type)) {
		return fail(c, c->offset + offs, DP_ERR_BAD_TYPE, EINVAL);
	}
	pa->type.count = (uint16_t)count;
	*type = t;
	return offs;
}

/* b<W>@<O>/<C>: append a MOD_BF; -EINVAL if malformed or too wide. */
static int parse_bitfield(const char *bf, struct dp_type *t, int *pci,
			  struct dp_fetch_insn *code)
{
	const char *tail, *p;
	uint64_t bw, bo, bits = t->size * 8u;

	if (*bf != 'b')
		return 0;
	bw = dp_simple_strtoul(bf + 1, &tail, 0);
	if (bw == 0 || *tail != '@')
		return -EINVAL;
	p = tail + 1;
	bo = dp_simple_strtoul(p, &tail, 0);
	if (tail == p || *tail != '/')
		return -EINVAL;
	if (code[*pci + 1].op != DP_FOP_NOP)
		return -EINVAL;
	++*pci;
	if (bits < bw + bo)
		return -EINVAL;
	code[*pci].op = DP_FOP_MOD_BF;
	code[*pci].basesize = t->size;
	code[*pci].lshift = (uint8_t)(bits - (bw + bo));
	code[*pci].rshift = (uint8_t)(bits - bw);
	t->bf_width = (uint8_t)bw;
	t->bf_offset = (uint8_t)bo;
	return 0;
}

static bool is_mem_op(int op)
{
	return op == DP_FOP_DEREF || op == DP_FOP_UDEREF;
}

/* The string store replaces or follows the last fetch (finalize_fetch_insn). */
static int finalize_string(struct arg_ctx *c, int *pci,
			   struct dp_fetch_insn *code, int type_offs)
{
	struct dp_type *t = &c->arg->type;
	int op = code[*pci].op;

	if (t->kind == DP_T_SYMSTR) {
		if (op != DP_FOP_REG && op != DP_FOP_STACK &&
		    op != DP_FOP_RETVAL && op != DP_FOP_ARG &&
		    op != DP_FOP_DEREF && op != DP_FOP_FIELD)
			return fail(c, c->offset + type_offs,
				    DP_ERR_BAD_SYMSTRING, EINVAL);
	} else if (!is_mem_op(op) && op != DP_FOP_IMM &&
		   op != DP_FOP_COMM && op != DP_FOP_DATA && op != DP_FOP_FIELD) {
		return fail(c, c->offset + type_offs, DP_ERR_BAD_STRING, EINVAL);
	}
	/*
	 * An address from IMM/DATA/COMM must be kept, and a string array
	 * keeps the pointer load: the string store is then a new insn.
	 * Otherwise the last dereference becomes "read the string there".
	 */
	if (t->kind == DP_T_SYMSTR || op == DP_FOP_IMM || op == DP_FOP_COMM ||
	    op == DP_FOP_DATA || op == DP_FOP_FIELD || t->count) {
		if (code[++*pci].op != DP_FOP_NOP)
			return fail(c, c->offset, DP_ERR_TOO_MANY_OPS, EINVAL);
	}
	if (t->kind == DP_T_USTRING || code[*pci].op == DP_FOP_UDEREF)
		code[*pci].op = DP_FOP_ST_USTRING;
	else if (t->kind == DP_T_SYMSTR)
		code[*pci].op = DP_FOP_ST_SYMSTR;
	else
		code[*pci].op = DP_FOP_ST_STRING;
	code[*pci].size = t->size;
	return 0;
}

static int finalize(struct arg_ctx *c, int *pci, struct dp_fetch_insn *code,
		    const char *type, int type_offs)
{
	struct dp_type *t = &c->arg->type;
	int store, ret;

	if (dp_type_is_string(t)) {
		ret = finalize_string(c, pci, code, type_offs);
		if (ret)
			return ret;
	} else if (code[*pci].op == DP_FOP_DEREF) {
		code[*pci].op = DP_FOP_ST_MEM;
		code[*pci].size = t->size;
	} else if (code[*pci].op == DP_FOP_UDEREF) {
		code[*pci].op = DP_FOP_ST_UMEM;
		code[*pci].size = t->size;
	} else {
		if (code[++*pci].op != DP_FOP_NOP)
			return fail(c, c->offset, DP_ERR_TOO_MANY_OPS, E2BIG);
		code[*pci].op = DP_FOP_ST_RAW;
		code[*pci].size = t->size;
	}
	store = *pci;
	if (type && parse_bitfield(type, t, pci, code))
		return fail(c, c->offset + type_offs, DP_ERR_BAD_BITFIELD, EINVAL);
	if (t->count) {
		int sop = code[store].op;

		if (sop != DP_FOP_ST_MEM && sop != DP_FOP_ST_STRING &&
		    sop != DP_FOP_ST_USTRING)
			return fail(c, c->offset + type_offs, DP_ERR_BAD_STRING,
				    EINVAL);
		if (code[++*pci].op != DP_FOP_NOP)
			return fail(c, c->offset, DP_ERR_TOO_MANY_OPS, E2BIG);
		code[*pci].op = DP_FOP_LP_ARRAY;
		code[*pci].param = t->count;
	}
	code[++*pci].op = DP_FOP_END;
	return 0;
}

/* traceprobe_parse_probe_arg_body(): EXPR[:TYPE] at token offset @offset. */
static int parse_body(struct arg_ctx *c, const char *body, unsigned *size)
{
	struct dp_fetch_insn code[DP_FETCH_INSN_MAX];
	size_t len = strlen(body);
	char *arg, *type;
	int pci = 0, type_offs, ret;

	if (len > DP_MAX_ARGSTR_LEN)
		return fail(c, c->offset, DP_ERR_ARG_TOO_LONG, E2BIG);
	if (len == 0)
		return fail(c, c->offset, DP_ERR_NO_ARG_BODY, EINVAL);
	arg = strdup(body);
	c->arg->body = strdup(body);
	if (!arg || !c->arg->body) {
		free(arg);
		return -ENOMEM;
	}
	memset(code, 0, sizeof(code));
	code[END_SLOT].op = DP_FOP_END;

	type_offs = parse_type(c, arg, &type);
	ret = type_offs < 0 ? type_offs : parse_fetch(c, arg, &pci, code);
	if (ret < 0)
		goto out;
	c->arg->offset = *size;
	*size += dp_type_fixed_size(&c->arg->type);
	if (*size > DP_MAX_PROBE_EVENT_SIZE) {
		ret = fail(c, c->offset, DP_ERR_EVENT_TOO_BIG, E2BIG);
		goto out;
	}
	ret = finalize(c, &pci, code, type, type ? type_offs : 0);
	if (ret < 0)
		goto out;
	c->arg->n_insn = (unsigned)pci + 1;
	memcpy(c->arg->insn, code, sizeof(code));
out:
	free(arg);
	return ret;
}

static const char *const reserved_names[] = {
	"common_type", "common_flags", "common_preempt_count", "common_pid",
	"common_tgid", "__probe_ip", "__probe_ret_ip", "__probe_func",
};

static bool name_conflicts(const char *name, const struct dp_arg *args, int n)
{
	for (size_t i = 0; i < sizeof(reserved_names) / sizeof(*reserved_names); i++)
		if (!strcmp(reserved_names[i], name))
			return true;
	for (int i = 0; i < n; i++)
		if (!strcmp(args[i].name, name))
			return true;
	return false;
}

int dp_parse_fetcharg(const struct dp_parse_ctx *pc, struct dp_arg *args,
		      int i, const char *tok, unsigned *size)
{
	struct arg_ctx c = { .pc = pc, .arg = &args[i] };
	const char *eq = strchr(tok, '=');
	const char *body = tok;

	if (eq) {
		if (eq - tok > DP_MAX_ARG_NAME_LEN)
			return fail(&c, 0, DP_ERR_ARG_NAME_TOO_LONG, EINVAL);
		if (eq == tok)
			return fail(&c, 0, DP_ERR_NO_ARG_NAME, EINVAL);
		memcpy(c.arg->name, tok, (size_t)(eq - tok));
		c.arg->name[eq - tok] = '\0';
		body = eq + 1;
	} else {
		snprintf(c.arg->name, sizeof(c.arg->name), "arg%d", i + 1);
	}
	if (!is_good_name(c.arg->name))
		return fail(&c, 0, DP_ERR_BAD_ARG_NAME, EINVAL);
	if (name_conflicts(c.arg->name, args, i))
		return fail(&c, 0, DP_ERR_USED_ARG_NAME, EINVAL);
	c.offset = (int)(body - tok);
	return parse_body(&c, body, size);
}

void dp_arg_free(struct dp_arg *a)
{
	free(a->body);
	free(a->data);
	free(a->shown);
	a->body = a->data = a->shown = NULL;
}
