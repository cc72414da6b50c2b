// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stddef.h>
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
	default:
		return NULL;
	}
}

/*
 * Walk the function: no indirect jump (a jump table may land anywhere,
 * but not inside a compiler's entry site: @entry), no relative branch
 * into (patch, patch + nbytes).
 */
static int check_branches(const uint8_t *fcode, uint64_t fstart, size_t fsize,
			  uint64_t patch, unsigned nbytes, bool entry,
			  const char **why)
{
	for (size_t off = 0; off < fsize;) {
		struct dp_insn in;
		int len;

		if (dp_insn_analyze(fcode + off, fsize - off, fstart + off, &in,
				    NULL) == 0) {
			len = in.len;
			if (in.op == DP_OP_JMP_IND && !entry) {
				*why = "the function has an indirect jump";
				return -EOPNOTSUPP;
			}
			if (dp_insn_has_target(&in) && in.target > patch &&
			    in.target < patch + nbytes) {
				*why = "a branch targets the replaced bytes";
				return -EOPNOTSUPP;
			}
		} else {
			/* ud2, hlt...: skip it, it jumps nowhere */
			len = dp_insn_length(fcode + off, fsize - off);
			if (len <= 0) {
				*why = "the function does not decode";
				return -EILSEQ;
			}
		}
		off += (size_t)len;
	}
	return 0;
}

/* `call *disp(%rip)`: the callee's address is read from a fixed place. */
static bool riprel_pointer(const struct dp_insn *in)
{
	const struct dp_insn_rm *rm = &in->rm;

	return rm->reg == DP_INSN_NOREG && rm->base == DP_INSN_NOREG &&
	       rm->index == DP_INSN_NOREG && rm->seg == DP_SEG_NONE &&
	       !rm->addr32 && in->riprel_off >= 0;
}

/*
 * May @in run in the detour (see relocate_one())?  @end is the region's
 * length up to its end.  A call pushes the address after it at the site,
 * so its callee returns to the original code: that must be the region's
 * end, past the jmp (a call rel32 or through a %rip-relative pointer is
 * 5 or 6 bytes, so it always is).  A ret, an indirect call through a
 * register or other memory, loop and jrcxz keep the int3.
 */
static bool displaceable(const struct dp_insn *in, unsigned int end,
			 const char **why)
{
	switch (in->op) {
	case DP_OP_XOL:
	case DP_OP_NOP:
	case DP_OP_JMP:
	case DP_OP_JCC:
		return true;
	case DP_OP_CALL:
		break;
	case DP_OP_CALL_IND:
		if (riprel_pointer(in))
			break;
		*why = "an indirect call in the replaced bytes";
		return false;
	case DP_OP_RET:
		*why = "a return in the replaced bytes";
		return false;
	default:
		*why = "a loop or jrcxz in the replaced bytes";
		return false;
	}
	if (end < DP_OPT_JMP_LEN) {
		*why = "a call returns into the replaced bytes";
		return false;
	}
	return true;
}

int dp_opt_analyze(const uint8_t *fcode, uint64_t fstart, size_t fsize,
		   uint64_t addr, struct dp_optprobe *op, const char **why)
{
	const char *dummy;
	uint64_t end = fstart + fsize, at;

	if (!why)
		why = &dummy;
	*why = NULL;
	memset(op, 0, sizeof(*op));
	if (addr < fstart || addr >= end) {
		*why = "the probe is outside the function";
		return -EINVAL;
	}
	op->addr = op->patch = addr;
	op->save_flags = addr != fstart;
	if (addr == fstart)
		op->entry_site = dp_entry_site(fcode, fsize, fstart, NULL);
	for (at = addr; op->nbytes < DP_OPT_JMP_LEN;) {
		struct dp_insn *in = &op->insn[op->ninsn];
		int err;

		if (at >= end) {
			*why = "fewer than 5 bytes to the end of the function";
			return -EOPNOTSUPP;
		}
		err = dp_insn_analyze(fcode + (at - fstart), (size_t)(end - at), at,
				      in, why);
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
		op->nbytes += in->len;
		op->ninsn++;
		at += in->len;
	}
	return check_branches(fcode, fstart, fsize, op->patch, op->nbytes,
			      op->entry_site != DP_ENTRY_NONE, why);
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
