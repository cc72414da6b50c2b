// SPDX-License-Identifier: GPL-2.0
#include <stddef.h>
#include <string.h>

#include "arch/x86_64/regs.h"

/* The kernel's regoffset_table for x86-64, in its order (arch/x86/kernel/ptrace.c). */
static const struct {
	const char *name;
	size_t off;
} reg_table[DP_NR_REG_NAMES] = {
#define R(n) { #n, offsetof(struct dp_regs, n) }
	R(r15), R(r14), R(r13), R(r12), R(r11), R(r10), R(r9), R(r8),
	R(bx), R(cx), R(dx), R(si), R(di), R(bp), R(ax), R(orig_ax),
	R(ip), R(cs), R(flags), R(sp), R(ss),
#undef R
};

int dp_reg_lookup(const char *name)
{
	for (int i = 0; i < DP_NR_REG_NAMES; i++)
		if (!strcmp(reg_table[i].name, name))
			return i;
	return -1;
}

const char *dp_reg_name(int idx)
{
	return idx >= 0 && idx < DP_NR_REG_NAMES ? reg_table[idx].name : NULL;
}

uint64_t dp_reg_get(const struct dp_regs *regs, int idx)
{
	uint64_t v;

	memcpy(&v, (const char *)regs + reg_table[idx].off, sizeof(v));
	return v;
}

int dp_reg_arg(int i)
{
	static const char *const abi[DP_NR_REG_ARGS] = {
		"di", "si", "dx", "cx", "r8", "r9",
	};

	return i >= 0 && i < DP_NR_REG_ARGS ? dp_reg_lookup(abi[i]) : -1;
}
