/* SPDX-License-Identifier: GPL-2.0 */
/*
 * x86-64 register frame of a probe hit.  The layout is the kernel's
 * struct pt_regs / glibc's struct user_regs_struct, so a PTRACE_GETREGS
 * buffer or a trampoline's saved frame can be used directly.
 */
#ifndef DPROBE_ARCH_REGS_H
#define DPROBE_ARCH_REGS_H

#include <stdint.h>

struct dp_regs {
	uint64_t r15, r14, r13, r12, bp, bx, r11, r10;
	uint64_t r9, r8, ax, cx, dx, si, di, orig_ax;
	uint64_t ip, cs, flags, sp, ss;
	uint64_t fs_base, gs_base, ds, es, fs, gs;
};

/* Number of names the kernel's regoffset_table accepts on x86-64. */
#define DP_NR_REG_NAMES 21

/* Index of a register name as written after '%' ("di", "r12"), or -1. */
int dp_reg_lookup(const char *name);
/* Name for an index returned by dp_reg_lookup(). */
const char *dp_reg_name(int idx);
/* Value of register @idx in @regs. */
uint64_t dp_reg_get(const struct dp_regs *regs, int idx);

/* The i-th (0-based) integer argument register of the SysV ABI, or -1. */
int dp_reg_arg(int i);
#define DP_NR_REG_ARGS 6

#endif
