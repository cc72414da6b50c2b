/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What to do with the instruction a breakpoint displaces.
 *
 * A probe writes int3 over the first byte of the instruction at ADDR.  On a
 * hit the displaced instruction must take effect without the original byte
 * going back (that would let other threads run past the probe unseen).  As
 * the kernel's uprobes do, the choice is made once, when the probe is armed:
 *
 *  - XOL (execute out of line): a copy of the instruction runs in a slot of
 *    an executable page mapped into the target, followed by a jump back to
 *    ADDR+len.  The engine only sets RIP to the slot: no single-step, no
 *    second trap.  A %rip-relative operand is rewritten so that it still
 *    names the same address from the slot, which must therefore lie within
 *    +-2 GB of that address; the jump back is a rel32 when it reaches and an
 *    absolute `jmp *0(%rip)` otherwise, so other instructions can use a slot
 *    anywhere.  The slot page must be readable as well as executable.
 *  - EMULATE: instructions whose effect depends on where they run (relative
 *    branches, calls, which push a return address, ret, loop, jrcxz) or that
 *    do nothing (nop forms, endbr64) are applied to the saved registers here
 *    and never run.  Calls and ret are emulated rather than run in a slot
 *    because a return address inside a slot would break unwinders (C++
 *    exceptions, backtraces) until the callee returns.
 *
 * push %reg / push $imm are run out of line: unlike the kernel, which
 * single-steps XOL instructions and so emulates the common push, a slot here
 * costs nothing after the hit, while emulating a push would add a memory
 * write through the engine (a syscall for the ptrace engine).
 *
 * Everything here works on byte arrays and register structs; target memory
 * is reached only through struct dp_insn_mem.  dp_insn_emulate() allocates
 * nothing, takes no lock and calls no library function, so an engine may call
 * it from a SIGTRAP handler.  dp_insn_analyze() and dp_insn_make_slot() use
 * Zydis with a decoder on the stack, also without allocation.
 */
#ifndef DPROBE_ARCH_INSN_H
#define DPROBE_ARCH_INSN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86_64/decode.h"
#include "arch/x86_64/regs.h"

/*
 * Bytes reserved per slot: the longest instruction (15) plus the absolute
 * jump back (14), rounded up.  The fault slot of an emulated call (see
 * dp_insn_make_slot()) needs at most 28.
 */
#define DP_INSN_SLOT_SIZE 32

enum dp_insn_kind {
	DP_INSN_XOL,
	DP_INSN_EMULATE,
};

/* What the emulation does; DP_OP_XOL for instructions run out of line. */
enum dp_insn_op {
	DP_OP_XOL,
	DP_OP_NOP,		/* nop, nopw/nopl, 66 90, endbr64: skip */
	DP_OP_JMP,		/* jmp rel8/rel32 */
	DP_OP_JCC,		/* jcc rel8/rel32 */
	DP_OP_CALL,		/* call rel32 */
	DP_OP_CALL_IND,		/* call r/m64 (ff /2) */
	DP_OP_JMP_IND,		/* jmp r/m64 (ff /4) */
	DP_OP_RET,		/* ret, ret $imm16 */
	DP_OP_LOOP,		/* loop rel8 (%rcx) */
	DP_OP_LOOPE,		/* loope rel8 */
	DP_OP_LOOPNE,		/* loopne rel8 */
	DP_OP_JRCXZ,		/* jrcxz / jecxz rel8 */
};

/* "No register" in struct dp_insn_rm. */
#define DP_INSN_NOREG 0xff

enum dp_insn_seg {
	DP_SEG_NONE,
	DP_SEG_FS,
	DP_SEG_GS,
};

/*
 * The r/m64 operand of an indirect call or jump, resolved at hit time.
 * Registers are byte offsets into struct dp_regs.  A %rip-relative operand
 * is constant, so it is stored with no base and the absolute address in
 * @disp.
 */
struct dp_insn_rm {
	uint8_t reg;		/* register operand, or DP_INSN_NOREG: memory */
	uint8_t base, index;	/* memory operand, DP_INSN_NOREG if absent */
	uint8_t scale;		/* 1, 2, 4, 8 */
	uint8_t seg;		/* enum dp_insn_seg; fs/gs add fs_base/gs_base */
	bool addr32;		/* 0x67: the address is truncated to 32 bits */
	int64_t disp;
};

/* Result of dp_insn_analyze(): plain data, copyable, no pointers. */
struct dp_insn {
	uint64_t addr;			/* where the instruction lives */
	uint8_t len;
	uint8_t bytes[DP_INSN_MAX_LEN];	/* the original bytes (no int3) */
	enum dp_insn_kind kind;
	enum dp_insn_op op;
	uint64_t target;	/* relative branches, xbegin: destination */
	uint8_t cond;		/* DP_OP_JCC: condition code, opcode & 0xf */
	bool ecx;		/* DP_OP_JRCXZ: jecxz tests only %ecx */
	uint16_t pop;		/* DP_OP_RET: extra bytes popped (ret $imm16) */
	int8_t riprel_off;	/* offset of a %rip-relative disp32, or -1 */
	int8_t rel_off;		/* offset of xbegin's rel32 (target), or -1 */
	bool riprel_addr32;	/* 0x67 with %rip: the address wraps at 4 GB */
	uint64_t riprel_target;	/* the address that operand names */
	struct dp_insn_rm rm;	/* DP_OP_CALL_IND, DP_OP_JMP_IND */
};

/*
 * Target memory during emulation.  Both return 0, or -EFAULT when the whole
 * range could not be accessed.
 */
struct dp_insn_mem {
	int (*read)(void *priv, uint64_t addr, void *dst, size_t len);
	int (*write)(void *priv, uint64_t addr, const void *src, size_t len);
	void *priv;
};

/*
 * Decode the instruction at @addr from @code (@avail bytes, which must be
 * the original bytes: an engine recovers its own int3 first) and decide how
 * to handle it.  Returns 0, or -errno with a short static reason in *@why
 * (if @why is not NULL):
 *   -EILSEQ      the bytes do not decode ("decoding failed")
 *   -EEXIST      there is an int3 already ("int3 is already there")
 *   -EOPNOTSUPP  refused: privileged, interrupt, port I/O, far branch,
 *                0x66 on a branch, sysenter, mov to %ss, ...
 *   -EINVAL      bad arguments
 * XOL is the default; only the instructions that must be emulated are.
 */
int dp_insn_analyze(const uint8_t *code, size_t avail, uint64_t addr,
		    struct dp_insn *in, const char **why);

/*
 * Build the bytes of the slot at address @slot into @buf (@cap bytes).
 *
 * For DP_INSN_XOL: the instruction (a %rip-relative disp32 or a rel32
 * immediate rewritten for @slot) then a jump back to addr+len.
 *
 * For an emulated instruction that accesses memory (dp_insn_may_fault()):
 * the *fault slot*, code that performs the same memory accesses and so
 * raises the same fault as the instruction would have.  See
 * dp_insn_emulate() for its use.  A call rel32 becomes an indirect call
 * through a pointer stored in the slot; indirect branches and ret are copied.
 *
 * Returns the number of code bytes; from there up to DP_INSN_SLOT_SIZE (as
 * far as @cap allows) @buf is filled with int3.  Errors: -ERANGE when a
 * %rip-relative operand cannot reach from @slot (the probe must then be
 * refused, or the slot placed nearer), -ENOSPC when @cap is too small,
 * -EINVAL for an emulated instruction that cannot fault.
 */
int dp_insn_make_slot(const struct dp_insn *in, uint64_t slot, uint8_t *buf,
		      size_t cap);

/* True if the instruction must run in a slot; false if emulated. */
static inline bool dp_insn_needs_slot(const struct dp_insn *in)
{
	return in->kind == DP_INSN_XOL;
}

/* True if dp_insn_emulate() may return -EFAULT for this instruction. */
bool dp_insn_may_fault(const struct dp_insn *in);

/*
 * Apply an emulated instruction to @regs.  @regs->ip is ignored on entry
 * (it usually still points after the int3) and is the next instruction on
 * return.  Memory (the stack, an indirect operand) is accessed through @mem.
 * For operands with %fs/%gs, @regs->fs_base/gs_base must be valid: an
 * in-process engine fills them, a ucontext does not carry them.
 *
 * A pushed return address goes to @regs->sp - 8, inside the red zone of the
 * interrupted code, which the kernel skips when it builds a signal frame:
 * an in-process engine can write it from its SIGTRAP handler.
 *
 * Returns 0, -EINVAL for an XOL instruction, or -EFAULT when a memory access
 * failed; then @regs is left exactly as it was.  The caller should let the
 * instruction fault for real so the target sees the genuine signal (with
 * the right si_addr, on its alternate stack if it has one): build the fault
 * slot with dp_insn_make_slot() (once, lazily: faults are rare), set
 * @regs->ip to it and resume.  The access faults there; if a handler fixes
 * the memory and returns, the slot completes the instruction and jumps back.
 * The only difference a program can see is an IP inside the slot in its
 * signal context.
 */
int dp_insn_emulate(const struct dp_insn *in, struct dp_regs *regs,
		    const struct dp_insn_mem *mem);

/*
 * A thread stopped at @ip in the slot at @slot (for detach, or to report a
 * fault): the equivalent address in the original code.  The slot's start
 * maps to addr (nothing executed yet), the end of the copied instruction to
 * addr+len.  Returns 0 with *@orig set, or -ENOENT if @ip is not one of
 * those two points.  A thread blocked in a syscall run from a slot is at
 * the end of the copy; moving it to addr+len is right even if the kernel
 * then restarts the syscall, since it backs %rip up by the 2 bytes of
 * `syscall`, to addr.
 */
int dp_insn_slot_to_orig(const struct dp_insn *in, uint64_t slot, uint64_t ip,
			 uint64_t *orig);

/* Strategy name for listings: "xol", "xol:riprel", "emulate:call", ... */
const char *dp_insn_strategy(const struct dp_insn *in);

/* True if the condition @cond (0-15, as in jcc opcodes) holds for @flags. */
bool dp_insn_cond(unsigned int cond, uint64_t flags);

/* Whether @in is a relative branch: in->target is where it may go. */
bool dp_insn_has_target(const struct dp_insn *in);

#endif
