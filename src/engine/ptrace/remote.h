/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Acting on a ptrace-stopped target: reading and writing its memory
 * (including read-only text, through /proc/PID/mem) and running a system
 * call in it, as a debugger does.
 */
#ifndef DPROBE_PTRACE_REMOTE_H
#define DPROBE_PTRACE_REMOTE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "arch/arch.h"

/* One address space (a process and its threads). */
struct dp_mm {
	pid_t pid;
	int mem_fd;		/* /proc/PID/mem, read-write */
	uint64_t syscall_insn;	/* address of a `syscall` instruction */
};

int dp_mm_open(struct dp_mm *mm, pid_t pid);
void dp_mm_close(struct dp_mm *mm);

/* 0 or -EFAULT.  Writes work on read-only mappings (ptrace access). */
int dp_mm_read(const struct dp_mm *mm, uint64_t addr, void *dst, size_t len);
int dp_mm_write(const struct dp_mm *mm, uint64_t addr, const void *src,
		size_t len);
/* A NUL-terminated string of at most @max bytes; length incl. NUL. */
long dp_mm_read_str(const struct dp_mm *mm, uint64_t addr, char *dst,
		    size_t max);

/*
 * Add @delta to the 16-bit uprobe reference counter (an SDT semaphore) at
 * @addr, as the kernel's __update_ref_ctr() does: the value is a signed
 * short that must not go below 0, and only a mapping the target itself
 * may write is written (not through read-only pages, as dp_mm_write()
 * can).  Only those two bytes change.  *@val gets the value found.
 * Returns 0, -EINVAL (it would go negative: left as it is) or -EFAULT
 * (not mapped, not writable, or across a page boundary).
 */
int dp_mm_ref_ctr_add(const struct dp_mm *mm, uint64_t addr, int delta,
		      int *val);

int dp_get_regs(pid_t tid, struct dp_regs *regs);
int dp_set_regs(pid_t tid, const struct dp_regs *regs);

/*
 * Run system call @nr with up to 6 arguments in stopped thread @tid of
 * @mm, which must be in a ptrace-stop the caller will resume.  The
 * thread's registers are restored afterwards.  Signals that arrive while
 * it runs are recorded in *@pending_sig (0 if none) for the caller to
 * deliver when it resumes the thread.  Returns 0 with the syscall's
 * return value in *@ret, or -errno if the call could not be run.
 */
int dp_remote_syscall(struct dp_mm *mm, pid_t tid, long nr,
		      const uint64_t args[6], int64_t *ret, int *pending_sig);

/*
 * Map @len bytes of anonymous memory with protection @prot in the target,
 * within rel32 reach of @near when @near is not 0 (below it first).
 * Returns the address or 0 on failure.
 */
uint64_t dp_remote_mmap_near(struct dp_mm *mm, pid_t tid, uint64_t near,
			     size_t len, int prot, int *pending_sig);

#endif
