/* SPDX-License-Identifier: GPL-2.0 */
/*
 * -fpatchable-function-entry=N,M with M > 0: the compiler leaves M
 * one-byte nops before the function's symbol and N-M bytes of nops at it
 * (after the endbr64 of -fcf-protection).  With N-M >= 5 the jmp replaces
 * the nops at the symbol as for M = 0 (optprobe.h's DP_ENTRY_PATCHABLE).
 * With N-M from 2 to 4 and M >= 5 nothing needs relocating either: a
 * `jmp rel32` to the detour goes into the last 5 nops before the symbol,
 * and a `jmp short` to it over the first two nops at the symbol:
 *
 *   sym-5:  e9 REL32           was 90 90 90 90 90
 *   sym:    [endbr64] eb REL8  was 2 to 4 bytes of nops (the rest: int3)
 *
 * and the detour jumps back to the first instruction after the nops at
 * the symbol.  No thread runs the nops before the symbol until the jmp
 * short sends it there: the engine checks that no symbol covers them, and
 * writes that jmp (then syncs the cores) before the jmp short, which it
 * writes as any region's jmp (the int3 first).  With fewer nops at the
 * symbol (N = M, or N-M = 1) a jump would need the instructions after
 * them: the probe is placed as on any function (DP_ENTRY_PATCHABLE_UNUSED,
 * for dprobe show).
 *
 * Everything here works on byte arrays, as optprobe.h.
 */
#ifndef DPROBE_ARCH_ENTRYSITE_H
#define DPROBE_ARCH_ENTRYSITE_H

#include <stddef.h>
#include <stdint.h>

#include "arch/x86_64/optprobe.h"

/* The bytes before the symbol the short form writes its jmp rel32 into. */
#define DP_ENTRY_PRE_LEN	DP_OPT_JMP_LEN

/* Bytes of whole nop instructions in a row at @code (not an endbr64). */
size_t dp_entry_nop_bytes(const uint8_t *code, size_t len);

/*
 * The entry site at @fstart, as dp_entry_site() (@code: @len bytes of
 * original code from @fstart, *@at: after an endbr64), telling the
 * -fpatchable-function-entry=N,M kinds too from @pre, the @npre bytes of
 * original code that end at @fstart (none: 0).  The caller has checked
 * that no other symbol covers them.
 */
enum dp_entry_site dp_entry_site_around(const uint8_t *pre, size_t npre,
					const uint8_t *code, size_t len,
					uint64_t fstart, uint64_t *at);

/*
 * A probe at @fstart as a DP_ENTRY_PATCHABLE_SHORT site: @op as
 * dp_opt_analyze() fills it, with the nops at the symbol as the region
 * (op->nbytes from 2 to 4), @pre the DP_ENTRY_PRE_LEN original bytes
 * before @fstart (no other symbol covering them: the caller checks).
 * Refused (-EOPNOTSUPP, *@why) when the bytes are not that layout or a
 * branch of the function targets the nops either side.
 */
int dp_opt_analyze_short(const uint8_t *fcode, uint64_t fstart, size_t fsize,
			 const uint8_t *pre, struct dp_optprobe *op,
			 const char **why);

/* Where the jmp rel32 of a short site goes: DP_ENTRY_PRE_LEN before it. */
static inline uint64_t dp_opt_pre_addr(const struct dp_optprobe *op)
{
	return op->addr - DP_ENTRY_PRE_LEN;
}

/* The jmp rel32 before the symbol to @detour; -ERANGE if out of reach. */
int dp_opt_make_pre_jump(const struct dp_optprobe *op, uint64_t detour,
			 uint8_t out[DP_ENTRY_PRE_LEN]);

/* The jmp short at op->patch to the jmp before the symbol, int3 up to
 * op->nbytes (@out holds them); 0, or -ERANGE. */
int dp_opt_make_jump_short(const struct dp_optprobe *op, uint8_t *out);

#endif
