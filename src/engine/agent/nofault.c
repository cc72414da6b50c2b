// SPDX-License-Identifier: GPL-2.0
/*
 * dp_probe_read(): reads for handlers that must not crash the program.
 *
 * The copy itself is in nofault_copy.S.  It relies on our SIGSEGV/SIGBUS
 * handler, which the kernel cannot run while the thread blocks those
 * signals: a fault then kills the process (the kernel resets the action).
 * So when the probed code had them blocked (told by the ucontext of the
 * trap) or the thread is inside the program's own fault handler, the read
 * is made with process_vm_readv(2) on ourselves, a system call that
 * reports EFAULT instead of faulting.
 */
#include <errno.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "engine/agent/agent.h"

extern const char dp_nofault_begin[], dp_nofault_end[], dp_nofault_efault[]
	DP_HIDDEN;

uint64_t dp_nofault_fixup(uint64_t ip)
{
	if (ip >= (uint64_t)(uintptr_t)dp_nofault_begin &&
	    ip < (uint64_t)(uintptr_t)dp_nofault_end)
		return (uint64_t)(uintptr_t)dp_nofault_efault;
	return 0;
}

static bool must_use_syscall(void)
{
	return dp_tls.segv_blocked || dp_tls.prog_fault;
}

/* process_vm_readv on ourselves: the byte count read, or -errno. */
static long self_read(void *dst, const void *src, size_t len)
{
	struct iovec local = { dst, len };
	struct iovec remote = { (void *)(uintptr_t)src, len };
	long pid = dp_raw_syscall(SYS_getpid, 0, 0, 0);

	return dp_raw_syscall6(SYS_process_vm_readv, pid, (long)&local, 1,
			    (long)&remote, 1, 0);
}

DP_EXPORT int dp_probe_read(void *dst, const void *src, size_t len)
{
	if (!len)
		return 0;
	if (must_use_syscall())
		return self_read(dst, src, len) == (long)len ? 0 : -EFAULT;
	return (int)dp_copy_nofault(dst, src, len);
}

DP_EXPORT long dp_probe_read_str(char *dst, const void *src, size_t size)
{
	const char *s = src;
	size_t n = 0;

	if (!size)
		return 0;
	if (!must_use_syscall())
		return dp_strncpy_nofault(dst, src, size);
	/* byte by byte: the string may end just before an unmapped page */
	for (; n < size; n++) {
		if (self_read(dst + n, s + n, 1) != 1)
			return -EFAULT;
		if (!dst[n])
			return (long)n + 1;
	}
	dst[size - 1] = '\0';
	return (long)size;
}
