// SPDX-License-Identifier: GPL-2.0
/*
 * Analysis, out-of-line slots and emulation of the instruction a probe's
 * int3 displaces.  See insn.h for the two strategies and why each
 * instruction goes where it goes.
 *
 * What is refused, and why (the kernel's uprobes refuse much the same set):
 *  - int3: another debugger's breakpoint, or ours not recovered.
 *  - int N, int1, into: they raise a trap on purpose; ud0/ud1/ud2 likewise.
 *  - privileged instructions (hlt, cli/sti, wrmsr, ...) and port I/O: they
 *    fault in user mode, so a probe there can only be on dead code.
 *  - far branches and returns (lcall, ljmp, lret, iret), uiret: they load
 *    %rip (and %cs) from memory in ways not worth emulating.
 *  - sysenter: the kernel returns to a fixed place, not the next insn.
 *  - mov to %ss: it holds off traps for one instruction, which would be the
 *    jump back out of the slot.
 *  - a 0x66 prefix on a branch: Intel ignores it, AMD truncates %rip to 16
 *    bits; refused unless an effective REX.W makes both agree.
 *  - es/cs/ss/ds segment overrides, except where 64-bit code uses them as
 *    something else: the branch hints of jcc, notrack on indirect branches,
 *    padding in multi-byte nops.
 *  - loop with an address-size prefix (a 32-bit counter in %ecx).
 *  - VMX, SMX and SGX instructions.
 *
 * Accepted where the kernel is stricter: LOCK-prefixed instructions (the
 * copy in the slot is just as atomic; the kernel's refusal comes from its
 * single-stepping), and syscall.  syscall saves the address of the next
 * instruction in %rcx and the kernel returns there: run out of line that is
 * the slot's jump back, so the thread continues at addr+len as it should.
 * The only visible difference is the value left in %rcx, which the syscall
 * ABI defines as clobbered.  A restarted syscall re-executes the slot, which
 * is still mapped.
 *
 * Known limits of XOL, shared with the kernel's uprobes: a fault in the
 * copied instruction reports the slot's address in the signal context, and
 * x87 instructions record the slot's address as the last FPU IP.  Emulated
 * calls and returns do not update a CET shadow stack; an engine must not
 * arm probes in a process that has one enabled.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include <Zydis/Zydis.h>

#include "arch/x86_64/emit.h"
#include "arch/x86_64/insn.h"

#define RFLAGS_CF (1u << 0)
#define RFLAGS_PF (1u << 2)
#define RFLAGS_ZF (1u << 6)
#define RFLAGS_SF (1u << 7)
#define RFLAGS_OF (1u << 11)

/* Byte offsets into struct dp_regs of GPRs by hardware number. */
static const uint8_t gpr_off[16] = {
	offsetof(struct dp_regs, ax), offsetof(struct dp_regs, cx),
	offsetof(struct dp_regs, dx), offsetof(struct dp_regs, bx),
	offsetof(struct dp_regs, sp), offsetof(struct dp_regs, bp),
	offsetof(struct dp_regs, si), offsetof(struct dp_regs, di),
	offsetof(struct dp_regs, r8), offsetof(struct dp_regs, r9),
	offsetof(struct dp_regs, r10), offsetof(struct dp_regs, r11),
	offsetof(struct dp_regs, r12), offsetof(struct dp_regs, r13),
	offsetof(struct dp_regs, r14), offsetof(struct dp_regs, r15),
};

/* ---- analysis ----------------------------------------------------------- */

struct decoded {
	ZydisDecodedInstruction insn;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
};

static int decode(const uint8_t *code, size_t avail, struct decoded *d)
{
	ZydisDecoder dec;

	if (avail > DP_INSN_MAX_LEN)
		avail = DP_INSN_MAX_LEN;
	if (!ZYAN_SUCCESS(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64,
					   ZYDIS_STACK_WIDTH_64)))
		return -EILSEQ;
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, code, avail, &d->insn,
						 d->ops)))
		return -EILSEQ;
	return 0;
}

static int refuse(const char **why, const char *reason, int err)
{
	if (why)
		*why = reason;
	return err;
}

/* Reason to refuse an instruction whatever its kind, or NULL. */
static const char *refused(const ZydisDecodedInstruction *insn,
			   const ZydisDecodedOperand *ops)
{
	switch (insn->mnemonic) {
	case ZYDIS_MNEMONIC_CLI:
	case ZYDIS_MNEMONIC_STI:
	case ZYDIS_MNEMONIC_GETSEC:
		return "privileged instruction";
	case ZYDIS_MNEMONIC_UD0:
	case ZYDIS_MNEMONIC_UD1:
	case ZYDIS_MNEMONIC_UD2:
		return "undefined instruction on purpose (ud0/ud1/ud2)";
	case ZYDIS_MNEMONIC_IRET:
	case ZYDIS_MNEMONIC_IRETD:
	case ZYDIS_MNEMONIC_IRETQ:
		return "far branch or return";
	case ZYDIS_MNEMONIC_UIRET:
		return "returns through the stack (uiret)";
	case ZYDIS_MNEMONIC_SYSENTER:
		return "sysenter does not return to the next instruction";
	case ZYDIS_MNEMONIC_MOV:
		if (ops[0].type == ZYDIS_OPERAND_TYPE_REGISTER &&
		    ops[0].reg.value == ZYDIS_REGISTER_SS)
			return "mov to %ss masks traps";
		break;
	default:
		break;
	}
	if (insn->attributes & ZYDIS_ATTRIB_IS_PRIVILEGED)
		return "privileged instruction";
	switch (insn->meta.category) {
	case ZYDIS_CATEGORY_INTERRUPT:
		return "interrupt instruction";
	case ZYDIS_CATEGORY_IO:
	case ZYDIS_CATEGORY_IOSTRINGOP:
		return "port I/O instruction";
	case ZYDIS_CATEGORY_VTX:
		return "virtualization instruction";
	case ZYDIS_CATEGORY_SGX:
		return "enclave instruction";
	default:
		break;
	}
	if (insn->meta.branch_type == ZYDIS_BRANCH_TYPE_FAR)
		return "far branch or return";
	return NULL;
}

/*
 * An es/cs/ss/ds override does nothing in 64-bit mode, but the kernel refuses
 * it and so do we, except where the byte has another meaning.
 */
static const char *bad_segment(const struct decoded *d, enum dp_insn_op op)
{
	const ZydisDecodedInstruction *insn = &d->insn;
	bool excused = op == DP_OP_NOP ||
		(op == DP_OP_JCC && (insn->attributes &
				     (ZYDIS_ATTRIB_HAS_BRANCH_TAKEN |
				      ZYDIS_ATTRIB_HAS_BRANCH_NOT_TAKEN))) ||
		((op == DP_OP_CALL_IND || op == DP_OP_JMP_IND) &&
		 (insn->attributes & ZYDIS_ATTRIB_HAS_NOTRACK));

	for (int i = 0; i < insn->raw.prefix_count; i++) {
		switch (insn->raw.prefixes[i].value) {
		case 0x26: case 0x2e: case 0x36: case 0x3e:
			if (!excused)
				return "segment override other than %fs/%gs";
			break;
		default:
			break;
		}
	}
	return NULL;
}

/*
 * A 0x66 prefix on a branch, unless REX.W follows it directly (then both
 * vendors use 64-bit operands, as in the TLS `data16 rex.W call` sequence).
 */
static bool bad_opsize(const struct decoded *d, const uint8_t *bytes)
{
	const ZydisDecodedInstruction *insn = &d->insn;
	int n = insn->raw.prefix_count;

	if (!(insn->attributes & ZYDIS_ATTRIB_HAS_OPERANDSIZE))
		return false;
	return !(n > 0 && (bytes[n - 1] & 0xf8) == 0x48);
}

static bool is_jcc(const ZydisDecodedInstruction *insn)
{
	if (insn->meta.category != ZYDIS_CATEGORY_COND_BR)
		return false;
	if (insn->opcode_map == ZYDIS_OPCODE_MAP_DEFAULT)
		return insn->opcode >= 0x70 && insn->opcode <= 0x7f;
	if (insn->opcode_map == ZYDIS_OPCODE_MAP_0F)
		return insn->opcode >= 0x80 && insn->opcode <= 0x8f;
	return false;
}

/* Which emulation, DP_OP_XOL for none; *why set when refused. */
static enum dp_insn_op classify(const struct decoded *d, bool *imm_target,
				const char **why)
{
	const ZydisDecodedInstruction *insn = &d->insn;
	bool imm = d->ops[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE;

	*imm_target = false;
	switch (insn->mnemonic) {
	case ZYDIS_MNEMONIC_NOP:
	case ZYDIS_MNEMONIC_ENDBR32:
	case ZYDIS_MNEMONIC_ENDBR64:
		return DP_OP_NOP;
	case ZYDIS_MNEMONIC_JMP:
		*imm_target = imm;
		return imm ? DP_OP_JMP : DP_OP_JMP_IND;
	case ZYDIS_MNEMONIC_CALL:
		*imm_target = imm;
		return imm ? DP_OP_CALL : DP_OP_CALL_IND;
	case ZYDIS_MNEMONIC_RET:
		return DP_OP_RET;
	case ZYDIS_MNEMONIC_LOOP:
	case ZYDIS_MNEMONIC_LOOPE:
	case ZYDIS_MNEMONIC_LOOPNE:
		if (insn->address_width != 64) {
			*why = "loop with a 32-bit counter (0x67 prefix)";
			return DP_OP_XOL;
		}
		*imm_target = true;
		return insn->mnemonic == ZYDIS_MNEMONIC_LOOP ? DP_OP_LOOP :
		       insn->mnemonic == ZYDIS_MNEMONIC_LOOPE ? DP_OP_LOOPE :
		       DP_OP_LOOPNE;
	case ZYDIS_MNEMONIC_JRCXZ:
	case ZYDIS_MNEMONIC_JECXZ:
		*imm_target = true;
		return DP_OP_JRCXZ;
	default:
		break;
	}
	if (is_jcc(insn)) {
		*imm_target = true;
		return DP_OP_JCC;
	}
	return DP_OP_XOL;
}

static uint8_t gpr(ZydisRegister reg, bool *ok)
{
	ZydisRegisterClass cls = ZydisRegisterGetClass(reg);
	ZyanI8 id = ZydisRegisterGetId(reg);

	if (reg == ZYDIS_REGISTER_NONE)
		return DP_INSN_NOREG;
	if ((cls != ZYDIS_REGCLASS_GPR64 && cls != ZYDIS_REGCLASS_GPR32) ||
	    id < 0 || id > 15) {
		*ok = false;
		return DP_INSN_NOREG;
	}
	return gpr_off[id];
}

/* The r/m64 operand of an indirect call/jmp; false if not representable. */
static bool setup_rm(const struct decoded *d, struct dp_insn *in)
{
	const ZydisDecodedOperand *op = &d->ops[0];
	struct dp_insn_rm *rm = &in->rm;
	bool ok = true;

	rm->reg = rm->base = rm->index = DP_INSN_NOREG;
	rm->scale = 1;
	if (op->type == ZYDIS_OPERAND_TYPE_REGISTER) {
		rm->reg = gpr(op->reg.value, &ok);
		return ok && rm->reg != DP_INSN_NOREG &&
		       ZydisRegisterGetClass(op->reg.value) ==
		       ZYDIS_REGCLASS_GPR64;
	}
	if (op->type != ZYDIS_OPERAND_TYPE_MEMORY ||
	    op->mem.type != ZYDIS_MEMOP_TYPE_MEM)
		return false;
	rm->addr32 = d->insn.address_width == 32;
	if (op->mem.segment == ZYDIS_REGISTER_FS)
		rm->seg = DP_SEG_FS;
	else if (op->mem.segment == ZYDIS_REGISTER_GS)
		rm->seg = DP_SEG_GS;
	if (op->mem.base == ZYDIS_REGISTER_RIP ||
	    op->mem.base == ZYDIS_REGISTER_EIP) {
		rm->disp = (int64_t)in->riprel_target;
		return in->riprel_off >= 0;
	}
	rm->base = gpr(op->mem.base, &ok);
	rm->index = gpr(op->mem.index, &ok);
	if (rm->index != DP_INSN_NOREG && op->mem.scale)
		rm->scale = op->mem.scale;
	rm->disp = op->mem.disp.has_displacement ? op->mem.disp.value : 0;
	return ok;
}

/*
 * Record a %rip-relative memory operand or a relative immediate of a
 * non-branch instruction.  Returns the reason if the instruction depends on
 * %rip in a way that cannot be relocated, NULL otherwise.
 */
static const char *setup_riprel(const struct decoded *d, struct dp_insn *in,
				bool imm_target)
{
	const ZydisDecodedInstruction *insn = &d->insn;
	uint64_t next = in->addr + in->len;

	if (!(insn->attributes & ZYDIS_ATTRIB_IS_RELATIVE))
		return NULL;
	for (int i = 0; i < insn->operand_count; i++) {
		const ZydisDecodedOperand *op = &d->ops[i];

		if (op->type != ZYDIS_OPERAND_TYPE_MEMORY ||
		    (op->mem.base != ZYDIS_REGISTER_RIP &&
		     op->mem.base != ZYDIS_REGISTER_EIP))
			continue;
		if (insn->raw.disp.size != 32)
			return "uses %rip implicitly";
		in->riprel_off = (int8_t)insn->raw.disp.offset;
		in->riprel_addr32 = op->mem.base == ZYDIS_REGISTER_EIP;
		in->riprel_target = next + (uint64_t)insn->raw.disp.value;
		if (in->riprel_addr32)
			in->riprel_target = (uint32_t)in->riprel_target;
		return NULL;
	}
	if (imm_target)
		return NULL;
	/* A relative immediate outside the branches we emulate: xbegin. */
	for (int i = 0; i < 2; i++) {
		if (!insn->raw.imm[i].is_relative)
			continue;
		if (insn->raw.imm[i].size != 32)
			return "16-bit relative operand";
		in->rel_off = (int8_t)insn->raw.imm[i].offset;
		in->target = next + (uint64_t)insn->raw.imm[i].value.s;
		return NULL;
	}
	return "uses %rip implicitly";
}

/* Branch destination of an emulated relative branch, from Zydis. */
static int branch_target(const struct decoded *d, struct dp_insn *in)
{
	ZyanU64 t;

	if (!ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&d->insn, &d->ops[0],
						   in->addr, &t)))
		return -EILSEQ;
	in->target = t;
	return 0;
}

static void setup_emulation(const struct decoded *d, struct dp_insn *in)
{
	const ZydisDecodedInstruction *insn = &d->insn;

	switch (in->op) {
	case DP_OP_JCC:
		in->cond = insn->opcode & 0xf;
		break;
	case DP_OP_JRCXZ:
		in->ecx = insn->address_width == 32;
		break;
	case DP_OP_RET:
		if (d->ops[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE)
			in->pop = (uint16_t)d->ops[0].imm.value.u;
		break;
	default:
		break;
	}
}

int dp_insn_analyze(const uint8_t *code, size_t avail, uint64_t addr,
		    struct dp_insn *in, const char **why)
{
	struct decoded d;
	const char *r = NULL;
	bool imm_target;

	if (why)
		*why = NULL;
	if (!code || !in)
		return refuse(why, "no instruction", -EINVAL);
	memset(in, 0, sizeof(*in));
	in->riprel_off = in->rel_off = -1;
	in->rm.reg = in->rm.base = in->rm.index = DP_INSN_NOREG;
	in->addr = addr;
	if (!avail || decode(code, avail, &d))
		return refuse(why, "decoding failed", -EILSEQ);
	in->len = d.insn.length;
	memcpy(in->bytes, code, in->len);

	if (d.insn.mnemonic == ZYDIS_MNEMONIC_INT3)
		return refuse(why, "int3 is already there", -EEXIST);
	r = refused(&d.insn, d.ops);
	if (r)
		return refuse(why, r, -EOPNOTSUPP);

	in->op = classify(&d, &imm_target, &r);
	if (r)
		return refuse(why, r, -EOPNOTSUPP);
	in->kind = in->op == DP_OP_XOL ? DP_INSN_XOL : DP_INSN_EMULATE;
	r = bad_segment(&d, in->op);
	if (r)
		return refuse(why, r, -EOPNOTSUPP);
	if (in->op != DP_OP_XOL && in->op != DP_OP_NOP &&
	    bad_opsize(&d, in->bytes))
		return refuse(why, "0x66 prefix on a branch "
			      "(Intel and AMD disagree)", -EOPNOTSUPP);

	r = setup_riprel(&d, in, imm_target);
	if (r)
		return refuse(why, r, -EOPNOTSUPP);
	if (imm_target && branch_target(&d, in))
		return refuse(why, "decoding failed", -EILSEQ);
	if ((in->op == DP_OP_CALL_IND || in->op == DP_OP_JMP_IND) &&
	    !setup_rm(&d, in))
		return refuse(why, "unsupported branch operand", -EOPNOTSUPP);
	setup_emulation(&d, in);
	return 0;
}

/* ---- slots -------------------------------------------------------------- */

static bool fits_s32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/*
 * A jump from @buf[@pos] (at address @slot + @pos) to @to: rel32 if it
 * reaches, else the absolute jump.  The position after it, or -ENOSPC.
 */
static int put_jmp(uint8_t *buf, size_t pos, size_t cap, uint64_t slot,
		   uint64_t to)
{
	struct dp_emit e;
	int err;

	dp_emit_init(&e, buf + pos, cap - pos, slot + pos);
	err = dp_emit_jmp_far(&e, to);
	return err ? err : (int)(pos + e.len);
}

/* The instruction copied to @slot, operands relocated; its length. */
static int put_copy(const struct dp_insn *in, uint64_t slot, uint8_t *buf,
		    size_t cap)
{
	uint64_t next = slot + in->len;
	int64_t v;

	if (in->len > cap)
		return -ENOSPC;
	memcpy(buf, in->bytes, in->len);
	if (in->riprel_off >= 0) {
		v = (int64_t)(in->riprel_target - next);
		/* A 32-bit address wraps: any displacement reaches it. */
		if (!in->riprel_addr32 && !fits_s32(v))
			return -ERANGE;
		put32(buf + in->riprel_off, (uint32_t)v);
	}
	if (in->rel_off >= 0) {
		v = (int64_t)(in->target - next);
		if (!fits_s32(v))
			return -ERANGE;
		put32(buf + in->rel_off, (uint32_t)v);
	}
	return in->len;
}

/*
 * Fault slot of an emulated call rel32: `call *q(%rip)`, the jump back,
 * then q, the call's destination.  Same stack write as the original call,
 * wherever the slot is.
 */
static int put_call_fault(const struct dp_insn *in, uint64_t slot,
			  uint8_t *buf, size_t cap)
{
	static const uint8_t call_rip[] = { 0xff, 0x15 };	/* + disp32 */
	struct dp_emit e;
	size_t q;

	dp_emit_init(&e, buf, cap, slot);
	dp_emit_bytes(&e, call_rip, sizeof(call_rip));
	dp_emit_u32(&e, 0);
	dp_emit_jmp_far(&e, in->addr + in->len);
	q = e.len;
	dp_emit_u64(&e, in->target);
	if (e.overflow)
		return -ENOSPC;
	put32(buf + 2, (uint32_t)(q - 6));
	return (int)e.len;
}

bool dp_insn_has_target(const struct dp_insn *in)
{
	switch (in->op) {
	case DP_OP_JMP: case DP_OP_JCC: case DP_OP_CALL: case DP_OP_LOOP:
	case DP_OP_LOOPE: case DP_OP_LOOPNE: case DP_OP_JRCXZ:
		return true;
	default:
		return false;
	}
}

bool dp_insn_may_fault(const struct dp_insn *in)
{
	switch (in->op) {
	case DP_OP_CALL:
	case DP_OP_CALL_IND:
	case DP_OP_RET:
		return true;
	case DP_OP_JMP_IND:
		return in->rm.reg == DP_INSN_NOREG;
	default:
		return false;
	}
}

int dp_insn_make_slot(const struct dp_insn *in, uint64_t slot, uint8_t *buf,
		      size_t cap)
{
	struct dp_emit e;
	size_t fill;
	int n;

	if (!in || !buf || !in->len)
		return -EINVAL;
	if (in->kind == DP_INSN_EMULATE && !dp_insn_may_fault(in))
		return -EINVAL;
	if (in->op == DP_OP_CALL) {
		n = put_call_fault(in, slot, buf, cap);
	} else {
		n = put_copy(in, slot, buf, cap);
		if (n >= 0)
			n = put_jmp(buf, (size_t)n, cap, slot,
				    in->addr + in->len);
	}
	if (n < 0)
		return n;
	fill = cap < DP_INSN_SLOT_SIZE ? cap : DP_INSN_SLOT_SIZE;
	if ((size_t)n < fill) {
		dp_emit_init(&e, buf + n, fill - (size_t)n, slot + (size_t)n);
		dp_emit_int3(&e, e.cap);
	}
	return n;
}

int dp_insn_slot_to_orig(const struct dp_insn *in, uint64_t slot, uint64_t ip,
			 uint64_t *orig)
{
	uint64_t end = slot + (in->op == DP_OP_CALL ? 6 : in->len);

	if (in->kind == DP_INSN_EMULATE && !dp_insn_may_fault(in))
		return -ENOENT;
	if (ip == slot)
		*orig = in->addr;
	else if (ip == end)
		*orig = in->addr + in->len;
	else
		return -ENOENT;
	return 0;
}

/* ---- emulation ---------------------------------------------------------- */

/*
 * Nothing below calls a library function: it may run in a signal handler.
 * struct dp_regs is all uint64_t, so a field is read through a uint64_t
 * pointer at its offset.
 */
static uint64_t reg_at(const struct dp_regs *regs, uint8_t off)
{
	return *(const uint64_t *)((const char *)regs + off);
}

bool dp_insn_cond(unsigned int cond, uint64_t flags)
{
	bool cf = flags & RFLAGS_CF, pf = flags & RFLAGS_PF;
	bool zf = flags & RFLAGS_ZF, sf = flags & RFLAGS_SF;
	bool of = flags & RFLAGS_OF, r;

	/* Even codes test a condition, the odd one after each negates it. */
	switch ((cond >> 1) & 7) {
	case 0: r = of; break;			/* jo */
	case 1: r = cf; break;			/* jb */
	case 2: r = zf; break;			/* je */
	case 3: r = cf || zf; break;		/* jbe */
	case 4: r = sf; break;			/* js */
	case 5: r = pf; break;			/* jp */
	case 6: r = sf != of; break;		/* jl */
	default: r = zf || sf != of; break;	/* jle */
	}
	return (cond & 1) ? !r : r;
}

static uint64_t rm_address(const struct dp_insn_rm *rm,
			   const struct dp_regs *regs)
{
	uint64_t ea = (uint64_t)rm->disp;

	if (rm->base != DP_INSN_NOREG)
		ea += reg_at(regs, rm->base);
	if (rm->index != DP_INSN_NOREG)
		ea += reg_at(regs, rm->index) * rm->scale;
	if (rm->addr32)
		ea = (uint32_t)ea;
	if (rm->seg == DP_SEG_FS)
		ea += regs->fs_base;
	else if (rm->seg == DP_SEG_GS)
		ea += regs->gs_base;
	return ea;
}

/* Value of an indirect branch's operand: the destination. */
static int rm_value(const struct dp_insn *in, const struct dp_regs *regs,
		    const struct dp_insn_mem *mem, uint64_t *val)
{
	if (in->rm.reg != DP_INSN_NOREG) {
		*val = reg_at(regs, in->rm.reg);
		return 0;
	}
	if (mem->read(mem->priv, rm_address(&in->rm, regs), val, 8))
		return -EFAULT;
	return 0;
}

static int push_ret(const struct dp_insn *in, struct dp_regs *regs,
		    const struct dp_insn_mem *mem, uint64_t to)
{
	uint64_t ret = in->addr + in->len, sp = regs->sp - 8;

	if (mem->write(mem->priv, sp, &ret, 8))
		return -EFAULT;
	regs->sp = sp;
	regs->ip = to;
	return 0;
}

static int emulate_ret(const struct dp_insn *in, struct dp_regs *regs,
		       const struct dp_insn_mem *mem)
{
	uint64_t to;

	if (mem->read(mem->priv, regs->sp, &to, 8))
		return -EFAULT;
	regs->sp += 8 + in->pop;
	regs->ip = to;
	return 0;
}

static void emulate_loop(const struct dp_insn *in, struct dp_regs *regs)
{
	bool zf = regs->flags & RFLAGS_ZF, taken;
	uint64_t next = in->addr + in->len;

	regs->cx--;
	taken = regs->cx != 0;
	if (in->op == DP_OP_LOOPE)
		taken = taken && zf;
	else if (in->op == DP_OP_LOOPNE)
		taken = taken && !zf;
	regs->ip = taken ? in->target : next;
}

int dp_insn_emulate(const struct dp_insn *in, struct dp_regs *regs,
		    const struct dp_insn_mem *mem)
{
	uint64_t next = in->addr + in->len, to;
	bool zero;
	int ret;

	switch (in->op) {
	case DP_OP_NOP:
		regs->ip = next;
		return 0;
	case DP_OP_JMP:
		regs->ip = in->target;
		return 0;
	case DP_OP_JCC:
		regs->ip = dp_insn_cond(in->cond, regs->flags) ? in->target
							       : next;
		return 0;
	case DP_OP_CALL:
		return push_ret(in, regs, mem, in->target);
	case DP_OP_CALL_IND:
		ret = rm_value(in, regs, mem, &to);
		return ret ? ret : push_ret(in, regs, mem, to);
	case DP_OP_JMP_IND:
		ret = rm_value(in, regs, mem, &to);
		if (!ret)
			regs->ip = to;
		return ret;
	case DP_OP_RET:
		return emulate_ret(in, regs, mem);
	case DP_OP_LOOP:
	case DP_OP_LOOPE:
	case DP_OP_LOOPNE:
		emulate_loop(in, regs);
		return 0;
	case DP_OP_JRCXZ:
		zero = in->ecx ? (uint32_t)regs->cx == 0 : regs->cx == 0;
		regs->ip = zero ? in->target : next;
		return 0;
	default:
		return -EINVAL;
	}
}

const char *dp_insn_strategy(const struct dp_insn *in)
{
	static const char *const names[] = {
		[DP_OP_NOP] = "emulate:nop",
		[DP_OP_JMP] = "emulate:jmp",
		[DP_OP_JCC] = "emulate:jcc",
		[DP_OP_CALL] = "emulate:call",
		[DP_OP_CALL_IND] = "emulate:call-indirect",
		[DP_OP_JMP_IND] = "emulate:jmp-indirect",
		[DP_OP_RET] = "emulate:ret",
		[DP_OP_LOOP] = "emulate:loop",
		[DP_OP_LOOPE] = "emulate:loope",
		[DP_OP_LOOPNE] = "emulate:loopne",
		[DP_OP_JRCXZ] = "emulate:jrcxz",
	};

	if (in->kind == DP_INSN_XOL)
		return in->riprel_off >= 0 ? "xol:riprel" :
		       in->rel_off >= 0 ? "xol:rel32" : "xol";
	if ((size_t)in->op < sizeof(names) / sizeof(names[0]) &&
	    names[in->op])
		return names[in->op];
	return "?";
}
