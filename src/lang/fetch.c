// SPDX-License-Identifier: GPL-2.0
/*
 * The fetch-program interpreter.  A program runs in stages, as the
 * kernel's process_fetch_insn(): (1) load a value (register, stack,
 * immediate...), (2) follow dereferences, (3) store into the record,
 * (4) apply a bitfield, (5) loop for arrays.
 *
 * Faults are defined deterministically (the kernel leaves stale bytes when
 * an intermediate dereference faults): a numeric field whose read faults
 * is 0; a string whose read faults is recorded with length 0, which every
 * renderer prints as "(fault)".
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "event/event.h"
#include "lang/fetch.h"

struct rec_buf {
	uint8_t *base;		/* record start */
	size_t cap;
	size_t dyn;		/* where the next dynamic data goes */
};

unsigned dp_probe_head_size(const struct dp_probe_def *def)
{
	return def->is_return ? DP_RET_HEAD_SIZE : DP_ENTRY_HEAD_SIZE;
}

static int read_mem(const struct dp_hit_ctx *ctx, uint64_t addr, void *dst,
		    size_t len)
{
	if (!ctx->read_mem)
		return -EFAULT;
	return ctx->read_mem(ctx->priv, addr, dst, len) ? -EFAULT : 0;
}

static uint64_t read_word(const struct dp_hit_ctx *ctx, uint64_t addr, int *err)
{
	uint64_t v = 0;

	*err = read_mem(ctx, addr, &v, sizeof(v));
	return *err ? 0 : v;
}

/* A string of at most @max bytes incl. NUL; length incl. NUL or -EFAULT. */
static long read_string(const struct dp_hit_ctx *ctx, uint64_t addr,
			char *dst, size_t max)
{
	size_t n = 0;

	if (ctx->read_str)
		return ctx->read_str(ctx->priv, addr, dst, max);
	/* Byte by byte is slow but never reads past the string's page. */
	while (n < max) {
		if (read_mem(ctx, addr + n, dst + n, 1))
			return -EFAULT;
		if (dst[n++] == '\0')
			return (long)n;
	}
	return -EFAULT;
}

/* Stage 1: the value a program starts from. */
static uint64_t load(const struct dp_fetch_insn *in, const struct dp_hit_ctx *ctx)
{
	const struct dp_regs *r = ctx->regs;
	int err;

	switch (in->op) {
	case DP_FOP_REG:
		return r ? dp_reg_get(r, in->param) : 0;
	case DP_FOP_STACK:
		return r ? read_word(ctx, r->sp + (uint64_t)in->param * 8, &err) : 0;
	case DP_FOP_STACKP:
		return r ? r->sp : 0;
	case DP_FOP_RETVAL:
		return r ? r->ax : 0;
	case DP_FOP_ARG:
		if (in->param < DP_NR_REG_ARGS)
			return r ? dp_reg_get(r, dp_reg_arg(in->param)) : 0;
		/* past the return address: $stack1 is the 7th argument */
		return r ? read_word(ctx, r->sp + (uint64_t)(in->param - 5) * 8,
				     &err) : 0;
	case DP_FOP_ENTRY_ARG:
		return (unsigned)in->param < ctx->n_entry_args ?
			ctx->entry_args[in->param] : 0;
	case DP_FOP_FOFFS:
		return ctx->foffs_base + in->imm;
	case DP_FOP_IMM:
	default:
		return in->imm;
	}
}

/* Append a string to the dynamic area; store its __data_loc in @dest. */
static void put_string(struct rec_buf *rb, uint8_t *dest, const char *s,
		       long len)
{
	uint32_t loc = dp_data_loc(0, (unsigned)rb->dyn);

	if (len > 0 && rb->dyn + (size_t)len <= rb->cap &&
	    rb->dyn + (size_t)len <= 0xffff) {
		memcpy(rb->base + rb->dyn, s, (size_t)len);
		loc = dp_data_loc((unsigned)len, (unsigned)rb->dyn);
		rb->dyn += (size_t)len;
	}
	memcpy(dest, &loc, sizeof(loc));
}

static void store_string(const struct dp_fetch_insn *st, const struct dp_arg *a,
			 int first_op, uint64_t addr,
			 const struct dp_hit_ctx *ctx, struct rec_buf *rb,
			 uint8_t *dest)
{
	char buf[DP_MAX_STRING_SIZE];
	long len;

	if (first_op == DP_FOP_COMM) {
		const char *comm = ctx->comm ? ctx->comm : "";

		len = (long)strnlen(comm, DP_TASK_COMM_LEN - 1);
		memcpy(buf, comm, (size_t)len);
		buf[len++] = '\0';
	} else if (first_op == DP_FOP_DATA) {
		/* the kernel reads this as a user pointer on uprobes and
		 * faults; dprobe records the immediate string itself */
		len = snprintf(buf, sizeof(buf), "%s", a->data ? a->data : "") + 1;
	} else if (st->op == DP_FOP_ST_SYMSTR) {
		buf[0] = '\0';
		if (!ctx->symbolize ||
		    ctx->symbolize(ctx->sym_priv, addr, buf, sizeof(buf)) < 0)
			snprintf(buf, sizeof(buf), "0x%lx", (unsigned long)addr);
		len = (long)strlen(buf) + 1;
	} else {
		len = read_string(ctx, addr + (uint64_t)st->offset, buf,
				  sizeof(buf));
	}
	put_string(rb, dest, buf, len);
}

static void store_value(const struct dp_fetch_insn *st, uint64_t val,
			const struct dp_hit_ctx *ctx, uint8_t *dest)
{
	if (st->op == DP_FOP_ST_RAW) {
		/* little-endian: the low st->size bytes */
		memcpy(dest, &val, st->size);
		return;
	}
	if (read_mem(ctx, val + (uint64_t)st->offset, dest, st->size))
		memset(dest, 0, st->size);
}

static void apply_bitfield(const struct dp_fetch_insn *bf, uint8_t *dest)
{
	uint64_t v = 0;

	memcpy(&v, dest, bf->basesize);
	v <<= bf->lshift + 64 - bf->basesize * 8;
	v >>= bf->rshift + 64 - bf->basesize * 8;
	memcpy(dest, &v, bf->basesize);
}

static bool is_string_store(int op)
{
	return op == DP_FOP_ST_STRING || op == DP_FOP_ST_USTRING ||
	       op == DP_FOP_ST_SYMSTR;
}

static bool is_deref(int op)
{
	return op == DP_FOP_DEREF || op == DP_FOP_UDEREF;
}

/* Stage 2: follow dereferences from @in; returns the first other insn. */
static const struct dp_fetch_insn *
follow(const struct dp_fetch_insn *in, const struct dp_hit_ctx *ctx,
       uint64_t *val, uint64_t *lval, int *err)
{
	for (; is_deref(in->op); in++) {
		if (*err)
			continue;
		*lval = *val;
		*val = read_word(ctx, *val + (uint64_t)in->offset, err);
	}
	return in;
}

/*
 * Run one argument's program.  Numeric arrays read consecutive elements
 * after the dereferences; string arrays are arrays of pointers, so each
 * element redoes the last dereference at the next pointer slot.
 */
static void run_arg(const struct dp_arg *a, const struct dp_hit_ctx *ctx,
		    struct rec_buf *rb, uint8_t *dest)
{
	const struct dp_fetch_insn *in = a->insn, *st;
	unsigned count = a->type.count ? a->type.count : 1;
	uint64_t val, lval;
	int first_op, err = 0;

	if (in->op == DP_FOP_SYMBOL) {
		uint64_t addr;

		/* @SYM: the address in this process, where the engine knows it */
		if (ctx->sym_addr &&
		    !ctx->sym_addr(ctx->sym_priv, in->data, &addr)) {
			in += 2;
			first_op = DP_FOP_IMM;
			val = lval = addr;
			goto loaded;
		}
		in++;
	}
	first_op = in->op;
	val = lval = load(in++, ctx);
loaded:
	st = follow(in, ctx, &val, &lval, &err);

	if (is_string_store(st->op)) {
		const struct dp_fetch_insn *last = is_deref(st[-1].op) ? st - 1 : st;

		for (unsigned i = 0; i < count; i++) {
			if (i) {
				val = lval + sizeof(uint64_t);
				err = 0;
				follow(last, ctx, &val, &lval, &err);
			}
			if (err)
				put_string(rb, dest + 4 * i, NULL, 0);
			else
				store_string(st, a, first_op, val, ctx, rb,
					     dest + 4 * i);
		}
		return;
	}
	for (unsigned i = 0; i < count; i++) {
		uint8_t *d = dest + (size_t)i * st->size;

		if (!err)
			store_value(st, val, ctx, d);
		if (st[1].op == DP_FOP_MOD_BF)
			apply_bitfield(&st[1], d);
		val += st->size;
	}
}

size_t dp_fetch_record(const struct dp_probe_def *def, unsigned id,
		       const struct dp_hit_ctx *ctx, void *buf, size_t cap)
{
	unsigned head = dp_probe_head_size(def);
	struct rec_buf rb = { .base = buf, .cap = cap,
			      .dyn = head + def->args_size };
	struct dp_trace_entry ent = { .type = (uint16_t)id,
				      .pid = ctx->pid };
	uint64_t h[2];

	if (cap < rb.dyn)
		return 0;
	memset(buf, 0, rb.dyn);
	memcpy(buf, &ent, sizeof(ent));
	if (def->is_return) {
		h[0] = ctx->func;
		h[1] = ctx->ret_ip;
		memcpy(rb.base + 8, h, 16);
	} else {
		memcpy(rb.base + 8, &ctx->ip, 8);
	}
	for (unsigned i = 0; i < def->nargs; i++)
		run_arg(&def->args[i], ctx, &rb, rb.base + head +
			def->args[i].offset);
	return rb.dyn;
}
