// SPDX-License-Identifier: GPL-2.0
/*
 * A bad frame told from the end of a frame-pointer chain (fpframe.h).
 */
#include "arch/arch.h"
#include "event/record.h"
#include "sym/fpframe.h"

void dp_stack_settle(uint64_t *stack, unsigned *n, dp_keeps_fp_fn keeps,
		     void *arg)
{
	unsigned k = *n;

	if (!k || stack[k - 1] != DP_STACK_BAD_FRAME)
		return;
	/* stack[k - 2] is a return address from index 1 on: the call is
	 * the byte before it (a call to a function that never returns can
	 * be its caller's last instruction) */
	if (k >= 3 && stack[k - 2] && keeps(arg, stack[k - 2] - 1))
		return;
	*n = k - 1;
}

bool dp_proc_keeps_fp(struct dp_proc *p, uint64_t addr)
{
	struct dp_proc_sym ps;
	const uint8_t *code;
	size_t avail;
	unsigned len;

	if (!p || dp_proc_symbolize(p, addr, &ps) || !ps.name || !ps.obj ||
	    !ps.obj->elf || ps.ifunc)
		return false;
	code = dp_elf_code(ps.obj->elf, addr - ps.obj->bias - ps.off, &avail);
	if (!code)
		return false;
	len = dp_frame_prologue(code, avail);
	return len && ps.off >= len;
}

static bool proc_keeps(void *arg, uint64_t addr)
{
	return dp_proc_keeps_fp(arg, addr);
}

void dp_proc_stack_settle(struct dp_proc *p, uint64_t *stack, unsigned *n)
{
	dp_stack_settle(stack, n, proc_keeps, p);
}
