/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Jump-optimised probes, as the kernel's optprobes: the instructions
 * covering at least 5 bytes at the probe point are replaced by a
 * `jmp rel32` to a per-probe detour that saves the registers as a
 * struct dp_regs frame, calls the handler, restores them, runs the
 * displaced instructions (relocated) and jumps back.
 *
 * Detour layout (addresses grow down the page):
 *
 *   lea  -128(%rsp),%rsp          skip the red zone the probed code may use
 *   sub  $216,%rsp                a struct dp_regs frame
 *   mov  %r15..%rdi -> frame      every general register
 *   [pushf; pop; -> frame.flags]  only where flags may be live (not at entry)
 *   frame.sp = %rsp+344, frame.ip = probe address, frame.orig_ax = -1
 *   mov  %rsp,%rbx; and $-16,%rsp  align for the call (%rbx is saved)
 *   call handler(frame, arg)
 *   mov  %rbx,%rsp
 *   [flags back]; registers back; lea 344(%rsp),%rsp (lea keeps flags)
 *   <displaced instructions, relocated: dp_opt_relocate()>
 *   jmp  probe+N
 *
 * Everything here works on byte arrays: patching live code and deciding
 * when no thread can be inside the replaced bytes belong to the engine.
 */
#ifndef DPROBE_ARCH_OPTPROBE_H
#define DPROBE_ARCH_OPTPROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86_64/emit.h"
#include "arch/x86_64/insn.h"

#define DP_OPT_JMP_LEN		5
#define DP_OPT_MAX_INSNS	5	/* 5 bytes are covered by at most 5 */
#define DP_OPT_DETOUR_SIZE	512	/* upper bound of a detour's bytes */
#define DP_OPT_RED_ZONE		128
#define DP_OPT_FRAME		216	/* sizeof(struct dp_regs) */

/*
 * A compiler's entry site: nops at a function's start (after an endbr64)
 * left there to be patched.  The jmp replaces them and nothing is
 * relocated; no branch lands inside them, so a function's indirect jumps
 * (jump tables) do not keep such a probe from being optimised.
 */
enum dp_entry_site {
	DP_ENTRY_NONE,
	DP_ENTRY_FENTRY,	/* -pg -mfentry -mnop-mcount: one 5-byte nop */
	DP_ENTRY_PATCHABLE,	/* -fpatchable-function-entry=N: N >= 5
				 * one-byte nops */
	/* the kinds only entrysite.h's dp_entry_site_around() tells, from
	 * the bytes before the symbol too: */
	DP_ENTRY_PATCHABLE_SHORT,	/* =N,M: 2 to 4 bytes of nops at the
					 * symbol, 5 or more one-byte nops
					 * before it */
	DP_ENTRY_PATCHABLE_UNUSED,	/* =N,N or too few nops either side:
					 * no jump fits without relocating */
};

/*
 * The entry site at @fstart (@len bytes of original code there), and
 * where it starts (*@at: after an endbr64) if there is one.
 */
enum dp_entry_site dp_entry_site(const uint8_t *code, size_t len,
				 uint64_t fstart, uint64_t *at);
/* "fentry nop (-pg -mfentry -mnop-mcount)", ..., or NULL for none. */
const char *dp_entry_site_name(enum dp_entry_site e);

struct dp_optprobe {
	uint64_t addr;		/* the probe point (reported as %ip) */
	uint64_t patch;		/* where the jmp goes (after an endbr64) */
	unsigned nbytes;	/* bytes replaced at @patch, >= 5 */
	unsigned ninsn;
	struct dp_insn insn[DP_OPT_MAX_INSNS];
	unsigned npad;		/* of nbytes, padding after the function */
	bool save_flags;	/* flags may be live at the probe point */
	enum dp_entry_site entry_site;	/* the region is a compiler's site */
};

/*
 * What an analysis may know beyond the function's own bytes.  @pad: the
 * bytes after the function's end that no symbol covers (its alignment
 * padding), as many as are known; a function whose last instruction is
 * a ret or a jmp may be replaced into them (execution never falls
 * through into them).  @read: the process's memory, to follow jump
 * tables; without it an indirect jump anywhere in the function refuses.
 */
struct dp_opt_ctx {
	const uint8_t *fcode;	/* the whole function, as compiled */
	uint64_t fstart;
	size_t fsize;
	const uint8_t *pad;
	size_t npad;
	int (*read)(void *priv, uint64_t addr, void *dst, size_t len);
	void *priv;
};

/*
 * Can the probe at @addr be optimised?  c->fcode holds the whole
 * function (c->fsize bytes from c->fstart), as originally compiled (no
 * int3 of ours).  Refused, with a reason in *@why: a branch targets the
 * replaced bytes, an address inside them is taken, a jump table holds
 * one of them (or, without c->read, the function has an indirect jump
 * at all), the function ends before 5 bytes (and not with a ret or jmp
 * followed by padding), or an instruction in them cannot be relocated.
 * Relative jmp, jcc, loop and jrcxz, `call rel32`, `call *disp(%rip)`,
 * ret and indirect jmps are (see dp_opt_relocate()); other indirect
 * calls are not.  Returns 0, or -EOPNOTSUPP / -EINVAL / -EILSEQ.
 */
int dp_opt_analyze_in(const struct dp_opt_ctx *c, uint64_t addr,
		      struct dp_optprobe *op, const char **why);

/* dp_opt_analyze_in() knowing only the function's bytes. */
int dp_opt_analyze(const uint8_t *fcode, uint64_t fstart, size_t fsize,
		   uint64_t addr, struct dp_optprobe *op, const char **why);

/*
 * Build the detour at run-time address @detour into @buf (@cap bytes):
 * @handler(struct dp_regs *regs, void *@arg) is called with the frame.
 * Returns the number of bytes, or -ERANGE (a %rip-relative operand of a
 * displaced instruction cannot reach from @detour), -ENOSPC.
 */
int dp_opt_make_detour(const struct dp_optprobe *op, uint64_t detour,
		       uint64_t handler, uint64_t arg, uint8_t *buf,
		       size_t cap);

/*
 * The displaced instructions as they run at dp_emit_here(@e): most are
 * copied (a %rip-relative operand rewritten), nops left out, jmp and jcc
 * re-emitted with a rel32 to the same target, and a call becomes a push
 * of its original return address (the address after it at the site) and
 * a jump to its callee.  0, -ERANGE (out of a rel32's reach from here) or
 * -ENOSPC.
 */
int dp_opt_relocate(struct dp_emit *e, const struct dp_optprobe *op);

/* The `jmp rel32` from op->patch to @detour; -ERANGE if out of reach. */
int dp_opt_make_jump(const struct dp_optprobe *op, uint64_t detour,
		     uint8_t out[DP_OPT_JMP_LEN]);

#endif
