// SPDX-License-Identifier: GPL-2.0
/*
 * The user stack at a hit (dprobe trace --stack), for the probes of the
 * events that ask for it: the frame-pointer chain from the probe's saved
 * registers, as the kernel's arch_stack_walk_user() walks it, read with
 * dp_probe_read() so that a bad frame pointer never faults the program;
 * or, for --call-graph dwarf, a snapshot of the registers and the stack
 * above the stack pointer that dprobe unwinds later (sym/unwind.h).
 *
 * Part of the hit path: no lock, no allocation, no library call.
 */
#include <fcntl.h>
#include <sys/syscall.h>

#include "engine/agent/agent.h"
#include "engine/agent/protocol.h"
#include "event/record.h"

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

/*
 * The walk of dp_user_stack(); with @low, each entry's lowest stack byte
 * too (the stack pointer at the hit for @first, the byte above the slot
 * the return address was read from for the others; 0 for @ret_ip, whose
 * slot is gone).
 */
static unsigned walk(const struct pt_regs *regs, uint64_t first,
		     uint64_t ret_ip, bool at_entry, uint64_t *out,
		     uint64_t *low, unsigned max)
{
	uint64_t fp = regs->bp, lo = regs->sp, ret;
	unsigned n = 0;

	if (!max)
		return 0;
	if (low)
		low[n] = regs->sp;
	out[n++] = first;
	if (ret_ip && n < max) {
		if (low)
			low[n] = 0;
		out[n++] = ret_ip;
	}
	/* at a function's first instruction the frame is not made yet: the
	 * caller is only in the return address at [sp] (the kernel's walk
	 * misses it; perf's reads it too) */
	if (at_entry && n < max &&
	    !dp_probe_read(&ret, (const void *)(uintptr_t)regs->sp, 8) && ret) {
		if (low)
			low[n] = regs->sp + 8;
		out[n++] = dp_kretprobe_real_ret(ret, regs->sp);
	}
	while (n < max) {
		struct fp_frame f;
		enum dp_frame_step st = dp_frame_check(fp, lo, regs->sp);

		/* a read that faults is recovered, except in an optimised
		 * probe's code that blocks SIGSEGV (nofault.c), where it
		 * would kill: dp_frame_check() refuses most garbage first */
		if (st == DP_FRAME_NEXT && (read_frame(fp, &f) || !f.ret))
			st = DP_FRAME_BAD;
		if (st == DP_FRAME_BAD) {
			if (low)
				low[n] = 0;
			out[n++] = DP_STACK_BAD_FRAME;
		}
		if (st != DP_FRAME_NEXT)
			break;
		if (low)
			low[n] = fp + sizeof(f);
		out[n++] = dp_kretprobe_real_ret(f.ret, fp + 8);
		lo = fp + sizeof(f);
		fp = f.next_fp;
	}
	return n;
}

unsigned dp_user_stack(const struct pt_regs *regs, uint64_t first,
		       uint64_t ret_ip, bool at_entry, uint64_t *out,
		       unsigned max)
{
	return walk(regs, first, ret_ip, at_entry, out, NULL, max);
}

unsigned dp_user_stack_depths(const struct pt_regs *regs, uint64_t first,
			      uint64_t top, uint64_t *out, uint64_t *depth,
			      unsigned max)
{
	unsigned n = walk(regs, first, 0, true, out, depth, max);

	for (unsigned i = 0; i < n; i++)
		depth[i] = depth[i] && depth[i] <= top ? top - depth[i] : 0;
	return n;
}

/* ---- the top of a thread's stack (the stack tracer) ---------------------- */

/* A hex number at *@p, *@p moved past it. */
static uint64_t hex(const char **p, const char *end)
{
	uint64_t v = 0;

	for (; *p < end; (*p)++) {
		char c = **p;
		unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0') :
			     c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10) :
			     16;

		if (d == 16)
			break;
		v = v << 4 | d;
	}
	return v;
}

/* One "START-END ..." line of the maps: whether it holds @sp. */
static bool line_holds(const char *l, const char *end, uint64_t sp,
		       uint64_t *lo, uint64_t *hi)
{
	uint64_t a = hex(&l, end), b;

	if (l >= end || *l != '-')
		return false;
	l++;
	b = hex(&l, end);
	if (sp < a || sp >= b)
		return false;
	*lo = a;
	*hi = b;
	return true;
}

/* The first '\n' in [@p, @end), or NULL (no library call). */
static char *find_nl(char *p, const char *end)
{
	for (; p < end; p++)
		if (*p == '\n')
			return p;
	return NULL;
}

/*
 * The mapping that holds @sp, from /proc/self/maps read with raw calls
 * (the hit path may be in a signal handler: no stdio, no allocation):
 * for the main thread the [stack] mapping, for a thread of the pthread
 * library the block its stack was carved from, whose end is the stack's
 * top.  0, or -1 if no mapping holds it.
 */
int dp_stack_mapping(uint64_t sp, uint64_t *lo, uint64_t *hi)
{
	char buf[512];
	size_t have = 0;
	long fd = dp_raw_syscall6(SYS_openat, AT_FDCWD,
				  (long)"/proc/self/maps",
				  O_RDONLY | O_CLOEXEC, 0, 0, 0);
	int ret = -1;

	if (fd < 0)
		return -1;
	for (;;) {
		long got = dp_raw_syscall(SYS_read, fd, (long)(buf + have),
					  (long)(sizeof(buf) - have));
		char *nl, *at = buf;

		if (got <= 0)
			break;
		have += (size_t)got;
		while ((nl = find_nl(at, buf + have))) {
			if (line_holds(at, nl, sp, lo, hi)) {
				ret = 0;
				goto out;
			}
			at = nl + 1;
		}
		/* a line longer than the buffer: its head was enough */
		if (at == buf)
			at = buf + have;
		have = (size_t)(buf + have - at);
		for (size_t i = 0; i < have; i++)
			buf[i] = at[i];
	}
out:
	dp_raw_syscall(SYS_close, fd, 0, 0);
	return ret;
}

/*
 * The stack above @sp into @dst, at most @size bytes: up to the end of
 * its page, then page by page, so that a stack ending sooner (the main
 * thread's, near its top) gives what there is.  The bytes copied.
 *
 * Where the copy stopped is kept for the thread: a fault costs a signal,
 * tens of microseconds, and a thread near the top of its stack would
 * pay it at every hit.  A stack's top does not move; a thread on
 * another stack (a coroutine's, a sigaltstack) is below or far from the
 * end kept and copies as far as it can again.
 */
static size_t copy_stack(uint8_t *dst, uint64_t sp, size_t size)
{
	uint64_t end = dp_tls.stack_end;
	size_t done = 0;

	if (end > sp && end - sp < size)
		size = (size_t)(end - sp);

	while (done < size) {
		uint64_t at = sp + done;
		size_t chunk = DP_PAGE_SIZE - (at & (DP_PAGE_SIZE - 1));

		if (at < sp)
			break;			/* wrapped: not a stack */
		if (chunk > size - done)
			chunk = size - done;
		if (dp_probe_read(dst + done, (const void *)(uintptr_t)at,
				  chunk)) {
			dp_tls.stack_end = at;
			break;
		}
		done += chunk;
	}
	return done;
}

size_t dp_user_stack_snap(const struct pt_regs *regs, uint64_t first,
			  uint64_t ret_ip, uint8_t *dst, size_t size)
{
	struct dp_agent_snap_head h = {
		.first = first,
		.ret_ip = ret_ip,
		.regs = {
			regs->ax, regs->dx, regs->cx, regs->bx, regs->si,
			regs->di, regs->bp, regs->sp, regs->r8, regs->r9,
			regs->r10, regs->r11, regs->r12, regs->r13, regs->r14,
			regs->r15,
			/* a return probe: the caller, just returned to */
			ret_ip ? ret_ip : first,
		},
	};
	uint8_t *stk = dst + sizeof(h);
	size_t n = copy_stack(stk, regs->sp, size), pad = (n + 7) & ~(size_t)7;
	uint64_t w = DP_AGENT_SNAP_WORD(n);

	__builtin_memcpy(dst, &h, sizeof(h));
	for (size_t i = n; i < pad; i++)
		stk[i] = 0;
	/* a call under a pending return probe returns to our trampoline:
	 * the copy gets the real address, as the walk above does */
	dp_kretprobe_real_rets(stk, regs->sp, n);
	__builtin_memcpy(stk + pad, &w, 8);
	return sizeof(h) + pad + 8;
}
