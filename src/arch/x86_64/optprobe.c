// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86_64/emit.h"
#include "arch/x86_64/optprobe.h"

static bool is_endbr64(const struct dp_insn *in)
{
	static const uint8_t endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };

	return in->len == 4 && !memcmp(in->bytes, endbr64, 4);
}

static const uint8_t fentry_nop[] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

enum dp_entry_site dp_entry_site(const uint8_t *code, size_t len,
				 uint64_t fstart, uint64_t *at)
{
	static const uint8_t endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	size_t k = 0, n = 0;

	if (len >= 4 && !memcmp(code, endbr64, 4))
		k = 4;
	if (at)
		*at = fstart + k;
	if (len - k >= DP_OPT_JMP_LEN && !memcmp(code + k, fentry_nop, 5))
		return DP_ENTRY_FENTRY;
	while (k + n < len && code[k + n] == 0x90)
		n++;
	return n >= DP_OPT_JMP_LEN ? DP_ENTRY_PATCHABLE : DP_ENTRY_NONE;
}

const char *dp_entry_site_name(enum dp_entry_site e)
{
	switch (e) {
	case DP_ENTRY_FENTRY:
		return "fentry nop (-pg -mfentry -mnop-mcount)";
	case DP_ENTRY_PATCHABLE:
		return "patchable function entry (-fpatchable-function-entry)";
	case DP_ENTRY_PATCHABLE_SHORT:
		return "patchable function entry with nops before the symbol "
		       "(-fpatchable-function-entry=N,M): a short jmp to a jmp "
		       "in the nops before";
	case DP_ENTRY_PATCHABLE_UNUSED:
		return "patchable function entry, not used "
		       "(-fpatchable-function-entry=N,M: no jump fits in its "
		       "nops, the probe is placed as on any function)";
	default:
		return NULL;
	}
}

/* `jmp/call *disp(%rip)`: the target's address is read from a fixed place. */
static bool riprel_pointer(const struct dp_insn *in)
{
	const struct dp_insn_rm *rm = &in->rm;

	return rm->reg == DP_INSN_NOREG && rm->base == DP_INSN_NOREG &&
	       rm->index == DP_INSN_NOREG && rm->seg == DP_SEG_NONE &&
	       !rm->addr32 && in->riprel_off >= 0;
}

/* The address a %rip-relative operand of @in names. */
static uint64_t riprel_addr(const struct dp_insn *in)
{
	int32_t disp;

	memcpy(&disp, in->bytes + in->riprel_off, sizeof(disp));
	return in->addr + in->len + (uint64_t)(int64_t)disp;
}

/* The region's bytes after its first: where no branch may land. */
struct region {
	uint64_t lo, hi;	/* (lo, hi) */
};

static bool inside(const struct region *r, uint64_t a)
{
	return a > r->lo && a < r->hi;
}

#define TABLE_MAX	4096	/* entries read of one jump table */

/*
 * Does a jump table at @a hold a target in @r?  Its entries are read
 * while they land in the function: a table's entries are contiguous and
 * all land there, so the first that does not ends it.  Both layouts are
 * read: 32-bit offsets from the table (position-independent code, GCC
 * and Clang alike) and 64-bit addresses (-fno-pic).
 */
static bool table_hits(const struct dp_opt_ctx *c, uint64_t a,
		       const struct region *r)
{
	uint64_t fend = c->fstart + c->fsize, t;
	int32_t rel;

	for (unsigned int i = 0; i < TABLE_MAX; i++) {
		if (c->read(c->priv, a + 4 * i, &rel, sizeof(rel)))
			break;
		t = a + (uint64_t)(int64_t)rel;
		if (t < c->fstart || t >= fend)
			break;
		if (inside(r, t))
			return true;
	}
	for (unsigned int i = 0; i < TABLE_MAX; i++) {
		if (c->read(c->priv, a + 8 * i, &t, sizeof(t)) ||
		    t < c->fstart || t >= fend)
			break;
		if (inside(r, t))
			return true;
	}
	return false;
}

/*
 * Can an indirect jump of the function land in @r?  Its targets come
 * from the tables the function's code points at: every %rip-relative
 * address it forms (lea table(%rip): GCC's and Clang's switch tables and
 * the label tables of a computed goto, all local to the file) and the
 * absolute table of `jmp *table(,%reg,8)`.
 * The other ways to land there (a code address taken elsewhere, a
 * computed jump of another function) are the ways a direct branch from
 * another function could: nothing can tell them, for any probe.
 */
static bool tables_hit(const struct dp_opt_ctx *c, const uint64_t *addrs,
		       size_t n, const struct region *r)
{
	for (size_t i = 0; i < n; i++)
		if (table_hits(c, addrs[i], r))
			return true;
	return false;
}

#define ADDRS_MAX	1024	/* table candidates kept of one function */

/* What a walk of the function found. */
struct walk {
	uint64_t addrs[ADDRS_MAX];	/* addresses formed: tables? */
	size_t naddrs;
	bool indirect;			/* an indirect jmp */
	bool overflow;			/* more addresses than kept */
};

static void note_insn(struct walk *w, const struct dp_insn *in)
{
	uint64_t a = 0;

	if (in->op == DP_OP_JMP_IND) {
		w->indirect = true;
		if (in->rm.reg == DP_INSN_NOREG &&
		    in->rm.base == DP_INSN_NOREG && in->riprel_off < 0)
			a = (uint64_t)in->rm.disp;	/* *table(,%reg,8) */
	}
	if (in->riprel_off >= 0)
		a = riprel_addr(in);
	if (!a)
		return;
	if (w->naddrs < ADDRS_MAX)
		w->addrs[w->naddrs++] = a;
	else
		w->overflow = true;
}

/*
 * Walk the function: no relative branch into the region's bytes after
 * its first, no address of them taken, and no jump table holding one
 * (unless the region is a compiler's entry site, @entry: nothing jumps
 * into those nops).
 */
static int check_branches(const struct dp_opt_ctx *c, uint64_t patch,
			  unsigned nbytes, bool entry, const char **why)
{
	const struct region r = { patch, patch + nbytes };
	struct walk *w = calloc(1, sizeof(*w));
	int err = 0;

	if (!w) {
		*why = "out of memory";
		return -ENOMEM;
	}
	for (size_t off = 0; off < c->fsize && !err;) {
		struct dp_insn in;
		int len;

		if (dp_insn_analyze(c->fcode + off, c->fsize - off,
				    c->fstart + off, &in, NULL) == 0) {
			len = in.len;
			note_insn(w, &in);
			if (dp_insn_has_target(&in) && inside(&r, in.target)) {
				*why = "a branch targets the replaced bytes";
				err = -EOPNOTSUPP;
			}
		} else {
			/* ud2, hlt...: skip it, it jumps nowhere */
			len = dp_insn_length(c->fcode + off, c->fsize - off);
			if (len <= 0) {
				*why = "the function does not decode";
				err = -EILSEQ;
			}
		}
		off += (size_t)(len > 0 ? len : 1);
	}
	for (size_t i = 0; i < w->naddrs && !err; i++) {
		if (inside(&r, w->addrs[i])) {
			*why = "the address of a replaced byte is taken";
			err = -EOPNOTSUPP;
		}
	}
	if (!err && w->indirect && !entry) {
		if (!c->read || w->overflow) {
			*why = "the function has an indirect jump";
			err = -EOPNOTSUPP;
		} else if (tables_hit(c, w->addrs, w->naddrs, &r)) {
			*why = "a jump table targets the replaced bytes";
			err = -EOPNOTSUPP;
		}
	}
	free(w);
	return err;
}

/*
 * May @in run in the detour (see relocate_one())?  @end is the region's
 * length up to its end.  A call pushes the address after it at the site,
 * so its callee returns to the original code: that must be the region's
 * end, past the jmp (a call rel32 or through a %rip-relative pointer is
 * 5 or 6 bytes, so it always is).  An indirect call through a register
 * or other memory keeps the int3.
 */
static bool displaceable(const struct dp_insn *in, unsigned int end,
			 const char **why)
{
	switch (in->op) {
	case DP_OP_XOL:
	case DP_OP_NOP:
	case DP_OP_JMP:
	case DP_OP_JCC:
	case DP_OP_RET:
	case DP_OP_LOOP:
	case DP_OP_LOOPE:
	case DP_OP_LOOPNE:
	case DP_OP_JRCXZ:
		return true;
	case DP_OP_JMP_IND:
		if (in->riprel_off < 0 || riprel_pointer(in))
			return true;
		*why = "an indirect jmp in the replaced bytes";
		return false;
	case DP_OP_CALL:
		break;
	case DP_OP_CALL_IND:
		if (riprel_pointer(in))
			break;
		*why = "an indirect call in the replaced bytes";
		return false;
	default:
		*why = "an instruction in the replaced bytes cannot move";
		return false;
	}
	if (end < DP_OPT_JMP_LEN) {
		*why = "a call returns into the replaced bytes";
		return false;
	}
	return true;
}

/* Execution does not go on to the next instruction. */
static bool terminal(const struct dp_insn *in)
{
	return in->op == DP_OP_RET || in->op == DP_OP_JMP ||
	       in->op == DP_OP_JMP_IND;
}

/* The padding after the function has @need bytes of int3s and nops. */
static bool pad_covers(const struct dp_opt_ctx *c, size_t need)
{
	size_t off = 0;

	while (off < need) {
		struct dp_insn in;

		if (!c->pad || off >= c->npad)
			return false;
		if (c->pad[off] == DP_INT3) {
			off++;
			continue;
		}
		if (dp_insn_analyze(c->pad + off, c->npad - off,
				    c->fstart + c->fsize + off, &in, NULL) ||
		    in.op != DP_OP_NOP)
			return false;
		off += in.len;
	}
	return true;
}

/*
 * The instructions from the probe point covering 5 bytes, into @op.  A
 * function that ends first may still be replaced into its padding, if
 * its last instruction does not go on into it.
 */
static int cover(const struct dp_opt_ctx *c, uint64_t addr,
		 struct dp_optprobe *op, const char **why)
{
	uint64_t end = c->fstart + c->fsize, at;
	bool last_terminal = false;

	for (at = addr; op->nbytes < DP_OPT_JMP_LEN;) {
		struct dp_insn *in = &op->insn[op->ninsn];
		int err;

		if (at >= end) {
			if (last_terminal &&
			    pad_covers(c, DP_OPT_JMP_LEN - op->nbytes)) {
				op->npad = DP_OPT_JMP_LEN - op->nbytes;
				op->nbytes = DP_OPT_JMP_LEN;
				return 0;
			}
			*why = "fewer than 5 bytes to the end of the function";
			return -EOPNOTSUPP;
		}
		err = dp_insn_analyze(c->fcode + (at - c->fstart),
				      (size_t)(end - at), at, in, why);
		if (err)
			return err;
		/* an endbr64 where the probe is stays: indirect calls land on it */
		if (at == addr && is_endbr64(in)) {
			at += in->len;
			op->patch = at;
			continue;
		}
		if (!displaceable(in, op->nbytes + in->len, why))
			return -EOPNOTSUPP;
		last_terminal = terminal(in);
		op->nbytes += in->len;
		op->ninsn++;
		at += in->len;
	}
	return 0;
}

int dp_opt_analyze_in(const struct dp_opt_ctx *c, uint64_t addr,
		      struct dp_optprobe *op, const char **why)
{
	const char *dummy;
	int err;

	if (!why)
		why = &dummy;
	*why = NULL;
	memset(op, 0, sizeof(*op));
	if (addr < c->fstart || addr >= c->fstart + c->fsize) {
		*why = "the probe is outside the function";
		return -EINVAL;
	}
	op->addr = op->patch = addr;
	op->save_flags = addr != c->fstart;
	if (addr == c->fstart)
		op->entry_site = dp_entry_site(c->fcode, c->fsize, c->fstart,
					       NULL);
	err = cover(c, addr, op, why);
	if (err)
		return err;
	return check_branches(c, op->patch, op->nbytes,
			      op->entry_site != DP_ENTRY_NONE, why);
}

int dp_opt_analyze(const uint8_t *fcode, uint64_t fstart, size_t fsize,
		   uint64_t addr, struct dp_optprobe *op, const char **why)
{
	const struct dp_opt_ctx c = {
		.fcode = fcode, .fstart = fstart, .fsize = fsize,
	};

	return dp_opt_analyze_in(&c, addr, op, why);
}

/* ---- the detour's instructions ----------------------------------------- */

static void put(struct dp_emit *e, const void *p, size_t len)
{
	dp_emit_bytes(e, p, len);
}

static void b(struct dp_emit *e, uint8_t v)
{
	put(e, &v, 1);
}

enum { RAX, RCX, RDX, RBX, RSP, RBP, RSI, RDI, R8, R9, R10, R11, R12, R13,
       R14, R15 };

/* mov %reg, disp(%rsp) (store) or mov disp(%rsp), %reg (load) */
static void mov_rsp(struct dp_emit *e, bool load, int reg, int32_t disp)
{
	bool d8 = disp >= -128 && disp <= 127;

	b(e, 0x48 | (reg >= 8 ? 0x04 : 0));
	b(e, load ? 0x8b : 0x89);
	b(e, (d8 ? 0x40 : 0x80) | (reg & 7) << 3 | 0x04);
	b(e, 0x24);
	if (d8)
		b(e, (uint8_t)disp);
	else
		dp_emit_u32(e, (uint32_t)disp);
}

/* lea disp(%rsp),%rsp or lea disp(%rsp),%rax */
static void lea_rsp(struct dp_emit *e, int dst, int32_t disp)
{
	b(e, 0x48);
	b(e, 0x8d);
	b(e, 0x84 | (dst & 7) << 3);
	b(e, 0x24);
	dp_emit_u32(e, (uint32_t)disp);
}

static void movabs(struct dp_emit *e, int reg, uint64_t v)
{
	b(e, 0x48 | (reg >= 8 ? 0x01 : 0));
	b(e, 0xb8 + (reg & 7));
	dp_emit_u64(e, v);
}

/* The struct dp_regs slot of each register we save, in save order. */
static const struct { int reg; int off; } saved[] = {
	{ R15, 0 }, { R14, 8 }, { R13, 16 }, { R12, 24 }, { RBP, 32 },
	{ RBX, 40 }, { R11, 48 }, { R10, 56 }, { R9, 64 }, { R8, 72 },
	{ RAX, 80 }, { RCX, 88 }, { RDX, 96 }, { RSI, 104 }, { RDI, 112 },
};

#define OFF_ORIG_AX	120
#define OFF_IP		128
#define OFF_FLAGS	144
#define OFF_SP		152
#define ABOVE		(DP_OPT_FRAME + DP_OPT_RED_ZONE)

static void save_frame(struct dp_emit *e, const struct dp_optprobe *op)
{
	lea_rsp(e, RSP, -DP_OPT_RED_ZONE);
	lea_rsp(e, RSP, -DP_OPT_FRAME);
	for (size_t i = 0; i < sizeof(saved) / sizeof(saved[0]); i++)
		mov_rsp(e, false, saved[i].reg, saved[i].off);
	if (op->save_flags) {
		b(e, 0x9c);			/* pushfq */
		b(e, 0x58);			/* pop %rax */
		mov_rsp(e, false, RAX, OFF_FLAGS);
	}
	lea_rsp(e, RAX, ABOVE);			/* the probed code's %rsp */
	mov_rsp(e, false, RAX, OFF_SP);
	movabs(e, RAX, op->addr);
	mov_rsp(e, false, RAX, OFF_IP);
	movabs(e, RAX, (uint64_t)-1);
	mov_rsp(e, false, RAX, OFF_ORIG_AX);
}

static void call_handler(struct dp_emit *e, uint64_t handler, uint64_t arg)
{
	static const uint8_t mov_rdi_rsp[] = { 0x48, 0x89, 0xe7 };
	static const uint8_t mov_rbx_rsp[] = { 0x48, 0x89, 0xe3 };
	static const uint8_t and_rsp[] = { 0x48, 0x83, 0xe4, 0xf0 };
	static const uint8_t call_rax[] = { 0xff, 0xd0 };
	static const uint8_t mov_rsp_rbx[] = { 0x48, 0x89, 0xdc };

	put(e, mov_rdi_rsp, sizeof(mov_rdi_rsp));	/* regs = frame */
	movabs(e, RSI, arg);
	put(e, mov_rbx_rsp, sizeof(mov_rbx_rsp));	/* %rbx keeps the frame */
	put(e, and_rsp, sizeof(and_rsp));		/* ABI: 16-byte aligned */
	movabs(e, RAX, handler);
	put(e, call_rax, sizeof(call_rax));
	put(e, mov_rsp_rbx, sizeof(mov_rsp_rbx));
}

static void restore_frame(struct dp_emit *e, const struct dp_optprobe *op)
{
	if (op->save_flags) {
		mov_rsp(e, true, RAX, OFF_FLAGS);
		b(e, 0x50);			/* push %rax */
		b(e, 0x9d);			/* popfq */
	}
	for (size_t i = 0; i < sizeof(saved) / sizeof(saved[0]); i++)
		mov_rsp(e, true, saved[i].reg, saved[i].off);
	lea_rsp(e, RSP, ABOVE);			/* lea: flags stay */
}

/*
 * One displaced instruction, to run at dp_emit_here(@e).  A branch goes
 * to the same absolute target with a rel32 (-ERANGE if the detour is too
 * far from it: the probe stays an int3).  A call becomes a push of the
 * address after the call at the site, then a jump to the callee: the
 * stack holds exactly what the call would have put there, so unwinders,
 * backtraces and C++ exceptions see the untraced program, and the callee
 * returns straight into the original code.  The push writes only the
 * slot the call writes (no red zone is touched, at an entry or in the
 * middle of a function) and neither it nor the jump changes a register
 * or the flags.  One difference remains for `call *disp(%rip)`: the push
 * comes before the pointer is read, so if that read faulted the signal
 * would see %rsp 8 lower and %rip in the detour (a GOT entry does not
 * fault).
 */
/*
 * loop, loope, loopne and jrcxz have only a rel8: the copy branches over
 * a short jmp to a jmp rel32 to the target, the flags and %rcx as the
 * original leaves them.  `jrcxz 1f; jmp 2f; 1: jmp target; 2:`
 */
static int relocate_rel8(struct dp_emit *e, const struct dp_insn *in)
{
	static const uint8_t skip[] = { 0xeb, 0x05 };
	uint8_t op[DP_INSN_MAX_LEN];
	int err;

	memcpy(op, in->bytes, in->len);
	op[in->len - 1] = sizeof(skip);		/* the rel8: over the skip */
	err = dp_emit_bytes(e, op, in->len);
	if (!err)
		err = dp_emit_bytes(e, skip, sizeof(skip));
	return err ? err : dp_emit_jmp(e, in->target);
}

static int relocate_one(struct dp_emit *e, const struct dp_insn *in)
{
	uint8_t slot[DP_INSN_SLOT_SIZE];
	int n;

	switch (in->op) {
	case DP_OP_NOP:
		return 0;	/* a nop does nothing: leave it out */
	case DP_OP_JMP:
		return dp_emit_jmp(e, in->target);
	case DP_OP_JCC:
		return dp_emit_jcc(e, in->cond, in->target);
	case DP_OP_CALL:
		n = dp_emit_push_u64(e, in->addr + in->len);
		return n ? n : dp_emit_jmp(e, in->target);
	case DP_OP_CALL_IND:
		n = dp_emit_push_u64(e, in->addr + in->len);
		return n ? n : dp_emit_jmp_mem(e, (uint64_t)in->rm.disp);
	case DP_OP_JMP_IND:
		if (riprel_pointer(in))
			return dp_emit_jmp_mem(e, (uint64_t)in->rm.disp);
		return dp_emit_bytes(e, in->bytes, in->len);
	case DP_OP_RET:
		return dp_emit_bytes(e, in->bytes, in->len);
	case DP_OP_LOOP:
	case DP_OP_LOOPE:
	case DP_OP_LOOPNE:
	case DP_OP_JRCXZ:
		return relocate_rel8(e, in);
	default:
		break;
	}
	n = dp_insn_make_slot(in, dp_emit_here(e), slot, sizeof(slot));
	if (n < 0)
		return n;
	/* the slot is the relocated instruction + a jump back */
	return dp_emit_bytes(e, slot, in->len);
}

int dp_opt_relocate(struct dp_emit *e, const struct dp_optprobe *op)
{
	for (unsigned int i = 0; i < op->ninsn; i++) {
		int err = relocate_one(e, &op->insn[i]);

		if (err)
			return err;
	}
	return e->overflow ? -ENOSPC : 0;
}

int dp_opt_make_detour(const struct dp_optprobe *op, uint64_t detour,
		       uint64_t handler, uint64_t arg, uint8_t *buf,
		       size_t cap)
{
	struct dp_emit e;
	int err;

	dp_emit_init(&e, buf, cap, detour);
	save_frame(&e, op);
	call_handler(&e, handler, arg);
	restore_frame(&e, op);
	err = dp_opt_relocate(&e, op);
	if (err)
		return err;
	dp_emit_jmp_far(&e, op->patch + op->nbytes);	/* back */
	return e.overflow ? -ENOSPC : (int)e.len;
}

int dp_opt_make_jump(const struct dp_optprobe *op, uint64_t detour,
		     uint8_t out[DP_OPT_JMP_LEN])
{
	struct dp_emit e;

	dp_emit_init(&e, out, DP_OPT_JMP_LEN, op->patch);
	return dp_emit_jmp(&e, detour);
}
