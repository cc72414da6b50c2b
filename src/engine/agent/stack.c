// SPDX-License-Identifier: GPL-2.0
/*
 * The user stack at a hit (dprobe trace --stack), for the probes of the
 * events that ask for it: the frame-pointer chain from the probe's saved
 * registers, as the kernel's arch_stack_walk_user() walks it, read with
 * dp_probe_read() so that a bad frame pointer never faults the program.
 *
 * Part of the hit path: no lock, no allocation, no library call.
 */
#include "engine/agent/agent.h"

/*
 * How far above the stack pointer a frame may be: a thread's stack is
 * 8 MiB by default; what lies further is not a frame of it.  A garbage
 * %rbp (code built without frame pointers) is mostly caught here, before
 * any read: a read that faults is recovered, except in an optimised
 * probe's code that blocks SIGSEGV (nofault.c), where it would kill.
 */
#define STACK_SPAN (16ull << 20)

/* A frame as the frame-pointer convention lays it out at [fp]. */
struct fp_frame {
	uint64_t next_fp;
	uint64_t ret;
};

/*
 * One frame, 0 or -EFAULT.  Two plain loads that a fault turns into
 * -EFAULT (dp_load_nofault(), trampoline.S): a rep movsb costs more to
 * start than the 16 bytes take.  Where our fault handler cannot run (the
 * probed code blocks SIGSEGV, or it is the program's fault handler),
 * dp_probe_read() knows the way that does not fault at all.
 */
static int read_frame(uint64_t fp, struct fp_frame *f)
{
	const uint64_t *p = (const uint64_t *)(uintptr_t)fp;

	if (dp_tls.segv_blocked || dp_tls.prog_fault)
		return dp_probe_read(f, p, sizeof(*f));
	return dp_load_nofault(p, &f->next_fp) ||
	       dp_load_nofault(p + 1, &f->ret) ? -1 : 0;
}

unsigned dp_user_stack(const struct pt_regs *regs, uint64_t first,
		       uint64_t ret_ip, bool at_entry, uint64_t *out,
		       unsigned max)
{
	uint64_t fp = regs->bp, lo = regs->sp, ret;
	unsigned n = 0;

	if (!max)
		return 0;
	out[n++] = first;
	if (ret_ip && n < max)
		out[n++] = ret_ip;
	/* at a function's first instruction the frame is not made yet: the
	 * caller is only in the return address at [sp] (the kernel's walk
	 * misses it; perf's reads it too) */
	if (at_entry && n < max &&
	    !dp_probe_read(&ret, (const void *)(uintptr_t)regs->sp, 8) && ret)
		out[n++] = dp_kretprobe_real_ret(ret, regs->sp);
	while (n < max) {
		struct fp_frame f;

		/* a frame lies above the stack pointer and above the frame
		 * before it, 8-byte aligned: anything else is not a frame
		 * pointer (a program built without them uses %rbp freely) */
		if ((fp & 7) || fp < lo || fp - regs->sp > STACK_SPAN)
			break;
		if (read_frame(fp, &f) || !f.ret)
			break;
		out[n++] = dp_kretprobe_real_ret(f.ret, fp + 8);
		lo = fp + sizeof(f);
		fp = f.next_fp;
	}
	return n;
}
