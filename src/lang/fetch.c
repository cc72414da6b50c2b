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

#include "lang/fetch.h"
#include "lang/layout.h"

/* "sym+0xoff/0xsize" of a symstr: the kernel's KSYM_SYMBOL_LEN is ~600 */
#define SYMSTR_MAX 1024

struct rec_buf {
	uint8_t *base;		/* record start */
	size_t cap;
	size_t dyn;		/* where the next dynamic data goes */
};

unsigned dp_probe_head_size(const struct dp_probe_def *def)
{
	return dp_layout_head_size(def->kind, def->is_return);
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

static void copy_bytes(void *dst, const void *src, size_t n);

/*
 * $FIELD of an event probe, as the kernel's get_event_field(): a number
 * (sign-extended as the field is), or for a string held in the record
 * the offset of its first byte there (store_string() copies from it).
 */
static uint64_t load_field(const struct dp_fetch_insn *in,
			   const struct dp_hit_ctx *ctx)
{
	uint64_t off = (uint64_t)in->offset, v = 0;
	uint32_t loc;

	if (!ctx->rec || off + in->basesize > ctx->rec_len)
		return 0;
	switch (in->param) {
	case DP_TF_DYN_STR:
	case DP_TF_REL_STR:
		copy_bytes(&loc, ctx->rec + off, 4);
		/* __rel_loc counts from the end of its own word */
		return (in->param == DP_TF_REL_STR ? off + 4 : 0) + (loc & 0xffff);
	case DP_TF_STATIC_STR:
		return off;
	default:
		break;
	}
	copy_bytes(&v, ctx->rec + off, in->basesize <= 8 ? in->basesize : 8);
	if (in->lshift && in->basesize < 8) {
		unsigned sh = 64 - in->basesize * 8u;

		v = (uint64_t)((int64_t)(v << sh) >> sh);
	}
	return v;
}

static bool field_in_record(const struct dp_fetch_insn *in)
{
	return in->op == DP_FOP_FIELD && in->param != DP_TF_NUM &&
	       in->param != DP_TF_PTR_STR;
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
	case DP_FOP_FIELD:
		return load_field(in, ctx);
	case DP_FOP_IMM:
	default:
		return in->imm;
	}
}

/*
 * The interpreter also runs inside traced programs (libdprobe.so), on the
 * hit path, where it may call no library function: the few string and
 * byte helpers it needs are here.
 */
static void copy_bytes(void *dst, const void *src, size_t n)
{
	uint8_t *d = dst;
	const uint8_t *s = src;

	while (n--) {
		*d++ = *s++;
		__asm__("" : "+r"(d));	/* not a memcpy call */
	}
}

static void zero_bytes(void *dst, size_t n)
{
	uint8_t *d = dst;

	while (n--) {
		*d++ = 0;
		__asm__("" : "+r"(d));	/* not a memset call */
	}
}

/*
 * Copy @s, cut at @limit bytes, with a NUL, into @room bytes at @dst:
 * the length incl. NUL, or -EFAULT if that does not fit.
 */
static long copy_str(char *dst, const char *s, size_t limit, size_t room)
{
	size_t n = 0;

	while (n < limit && s[n])
		n++;
	if (n + 1 > room)
		return -EFAULT;
	copy_bytes(dst, s, n);
	dst[n] = '\0';
	return (long)n + 1;
}

/* "0x%lx" of @v; length incl. NUL. */
static long hex_str(char *dst, uint64_t v)
{
	char tmp[16];
	int n = 0;
	long len = 0;

	do {
		tmp[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	dst[len++] = '0';
	dst[len++] = 'x';
	while (n)
		dst[len++] = tmp[--n];
	dst[len++] = '\0';
	return len;
}

/* Room for a string in the dynamic area: at most DP_MAX_STRING_SIZE. */
static size_t string_room(const struct rec_buf *rb)
{
	size_t room = rb->dyn < rb->cap ? rb->cap - rb->dyn : 0;

	if (room > 0xffff - rb->dyn)
		room = rb->dyn < 0xffff ? 0xffff - rb->dyn : 0;
	return room < DP_MAX_STRING_SIZE ? room : DP_MAX_STRING_SIZE;
}

/*
 * The string of @len bytes (incl. NUL) now at the start of the dynamic
 * area becomes the field at @dest; @len <= 0 records a fault (length 0).
 */
static void put_string(struct rec_buf *rb, uint8_t *dest, long len)
{
	uint32_t loc = dp_data_loc(0, (unsigned)rb->dyn);

	if (len > 0) {
		loc = dp_data_loc((unsigned)len, (unsigned)rb->dyn);
		rb->dyn += (size_t)len;
	}
	copy_bytes(dest, &loc, sizeof(loc));
}

/*
 * A string value, written straight into the dynamic area (no copy on the
 * stack: the hit path may run on a small stack).  One that does not fit
 * in the room left is a fault, as the kernel records it.
 */
static void store_string(const struct dp_fetch_insn *st, const struct dp_arg *a,
			 int first_op, uint64_t addr,
			 const struct dp_hit_ctx *ctx, struct rec_buf *rb,
			 uint8_t *dest)
{
	size_t room = string_room(rb);
	char *buf = (char *)rb->base + rb->dyn;
	long len = -EFAULT;

	if (!room) {
		put_string(rb, dest, 0);
		return;
	}
	if (first_op == DP_FOP_FIELD) {
		/* a string of the attached event's record, at @addr in it */
		len = addr < ctx->rec_len ?
		      copy_str(buf, (const char *)ctx->rec + addr,
			       ctx->rec_len - addr, room) : -EFAULT;
	} else if (first_op == DP_FOP_COMM) {
		len = copy_str(buf, ctx->comm ? ctx->comm : "",
			       DP_TASK_COMM_LEN - 1, room);
	} else if (first_op == DP_FOP_DATA) {
		/* the kernel reads this as a user pointer on uprobes and
		 * faults; dprobe records the immediate string itself */
		len = copy_str(buf, a->data ? a->data : "", (size_t)-1, room);
	} else if (st->op == DP_FOP_ST_SYMSTR) {
		char sym[SYMSTR_MAX];

		if (!ctx->symbolize ||
		    ctx->symbolize(ctx->sym_priv, addr, sym, sizeof(sym)) < 0)
			hex_str(sym, addr);
		len = copy_str(buf, sym, (size_t)-1, room);
	} else {
		len = read_string(ctx, addr + (uint64_t)st->offset, buf, room);
	}
	put_string(rb, dest, len);
}

static void store_value(const struct dp_fetch_insn *st, uint64_t val,
			const struct dp_hit_ctx *ctx, uint8_t *dest)
{
	if (st->op == DP_FOP_ST_RAW) {
		/* little-endian: the low st->size bytes */
		copy_bytes(dest, &val, st->size);
		return;
	}
	if (read_mem(ctx, val + (uint64_t)st->offset, dest, st->size))
		zero_bytes(dest, st->size);
}

static void apply_bitfield(const struct dp_fetch_insn *bf, uint8_t *dest)
{
	uint64_t v = 0;

	copy_bytes(&v, dest, bf->basesize);
	v <<= bf->lshift + 64 - bf->basesize * 8;
	v >>= bf->rshift + 64 - bf->basesize * 8;
	copy_bytes(dest, &v, bf->basesize);
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
	/* a string in the record is no address in the process: only a
	 * string store reads it */
	if (field_in_record(&in[-1]) && !is_string_store(in->op))
		err = -EFAULT;
	else if (first_op == DP_FOP_FIELD && !field_in_record(&in[-1]))
		first_op = DP_FOP_IMM;	/* a number, used as any other */
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
				put_string(rb, dest + 4 * i, 0);
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
	zero_bytes(buf, rb.dyn);
	copy_bytes(buf, &ent, sizeof(ent));
	if (def->kind == DP_KIND_TRACEPOINT || def->kind == DP_KIND_EPROBE) {
		/* a tracepoint names itself: no place in the record */
	} else if (def->is_return) {
		h[0] = ctx->func;
		h[1] = ctx->ret_ip;
		copy_bytes(rb.base + DP_REC_FUNC_OFF, h, 16);
	} else {
		copy_bytes(rb.base + DP_REC_IP_OFF, &ctx->ip, 8);
	}
	for (unsigned i = 0; i < def->nargs; i++)
		run_arg(&def->args[i], ctx, &rb, rb.base + head +
			def->args[i].offset);
	return rb.dyn;
}
