// SPDX-License-Identifier: GPL-2.0
/*
 * The program's own calls that take memory away: munmap(), mremap() and
 * mmap(MAP_FIXED) over the agent's ring set.  A program that unmaps what
 * it does not own (a sandbox closing every mapping it did not make, a
 * fuzzer) would make the next hit write into nothing and fault.  Before
 * such a call takes the rings, the agent stops recording into them
 * (events.c: hits record nothing from then on, once every hit in flight
 * has ended) and tells dprobe, which names the process in its summary;
 * then the call goes through as the program asked.
 *
 * Only calls through the C library's symbols are seen (a raw system call
 * is not); the check is two comparisons before a system call.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "engine/agent/agent.h"
#include "engine/agent/events.h"

static void guard(void *addr, size_t len)
{
	if (dp_ev_rings_meet((uintptr_t)addr, len))
		dp_ev_rings_taken();
}

DP_EXPORT int munmap(void *addr, size_t len)
{
	guard(addr, len);
	return (int)syscall(SYS_munmap, addr, len);
}

DP_EXPORT void *mremap(void *old, size_t old_len, size_t new_len, int flags,
		       ...)
{
	void *new_addr = NULL;
	va_list ap;

	if (flags & MREMAP_FIXED) {
		va_start(ap, flags);
		new_addr = va_arg(ap, void *);
		va_end(ap);
		guard(new_addr, new_len);
	}
	guard(old, old_len);
	return (void *)syscall(SYS_mremap, old, old_len, new_len, flags,
			       new_addr);
}

DP_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd,
		     off_t off)
{
	if (flags & MAP_FIXED)
		guard(addr, len);
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}
