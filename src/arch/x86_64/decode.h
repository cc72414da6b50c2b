/* SPDX-License-Identifier: GPL-2.0 */
/*
 * x86-64 instruction lengths and instruction-boundary checks, on plain byte
 * arrays (no process access), so a probe point can be proven to sit on the
 * first byte of an instruction before a breakpoint is ever written there.
 */
#ifndef DPROBE_ARCH_DECODE_H
#define DPROBE_ARCH_DECODE_H

#include <stddef.h>
#include <stdint.h>

/* The longest legal x86 instruction. */
#define DP_INSN_MAX_LEN 15

/*
 * Length of the instruction at @code (at most @len bytes available), or
 * -EILSEQ if the bytes do not decode in 64-bit mode.
 */
int dp_insn_length(const uint8_t *code, size_t len);

/*
 * @code holds the bytes from address @start on (@len of them); @start must
 * be a known instruction start, normally the start of the function that
 * contains @target.  Decodes linearly from @start and returns 0 if @target
 * is the first byte of an instruction, -EILSEQ if it falls inside one or if
 * decoding fails (or the bytes run out) before reaching it, -EINVAL if
 * @target < @start.
 */
int dp_insn_boundary(const uint8_t *code, size_t len, uint64_t start,
		     uint64_t target);

/*
 * The same; on -EILSEQ *@insn_start (if not NULL) is the address of the
 * instruction that covers @target, or of the first byte that could not be
 * decoded.  On 0 it is @target.
 */
int dp_insn_boundary_at(const uint8_t *code, size_t len, uint64_t start,
			uint64_t target, uint64_t *insn_start);

#endif
