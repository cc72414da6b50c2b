// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/ptrace/remote.h"

#define TRAP_MASK (1ull << (SIGTRAP - 1))

_Static_assert(sizeof(struct dp_regs) == sizeof(struct user_regs_struct),
	       "dp_regs must have the user_regs_struct layout");

int dp_mm_open(struct dp_mm *mm, pid_t pid)
{
	char path[64];

	memset(mm, 0, sizeof(*mm));
	mm->pid = pid;
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	mm->mem_fd = open(path, O_RDWR | O_CLOEXEC);
	return mm->mem_fd < 0 ? -errno : 0;
}

void dp_mm_close(struct dp_mm *mm)
{
	if (mm->mem_fd >= 0)
		close(mm->mem_fd);
	mm->mem_fd = -1;
}

int dp_mm_read(const struct dp_mm *mm, uint64_t addr, void *dst, size_t len)
{
	struct iovec local = { dst, len }, remote = { (void *)addr, len };

	/* process_vm_readv is one syscall and needs no stop */
	if (process_vm_readv(mm->pid, &local, 1, &remote, 1, 0) == (ssize_t)len)
		return 0;
	/* unreadable-by-vm_readv but present (e.g. PROT_NONE for us) */
	if (pread(mm->mem_fd, dst, len, (off_t)addr) == (ssize_t)len)
		return 0;
	return -EFAULT;
}

int dp_mm_write(const struct dp_mm *mm, uint64_t addr, const void *src,
		size_t len)
{
	/* /proc/PID/mem writes through read-only text, as ptrace pokes do */
	if (pwrite(mm->mem_fd, src, len, (off_t)addr) == (ssize_t)len)
		return 0;
	return -EFAULT;
}

int dp_mm_ref_ctr_add(const struct dp_mm *mm, uint64_t addr, int delta,
		      int *val)
{
	uint16_t raw;
	struct iovec local = { &raw, sizeof(raw) };
	struct iovec remote = { (void *)addr, sizeof(raw) };
	int16_t cur;

	*val = 0;
	/* the kernel updates it within one page; across two, a failed
	 * write could leave half of it changed */
	if ((addr & 4095) == 4095)
		return -EFAULT;
	if (process_vm_readv(mm->pid, &local, 1, &remote, 1, 0) != sizeof(raw))
		return -EFAULT;
	/* the kernel reads it as a short: 0x8000 and up are negative */
	cur = (int16_t)raw;
	*val = cur;
	if (cur + delta < 0)
		return -EINVAL;
	/* and adds in 16 bits: 0x7fff + 1 wraps, as there */
	raw = (uint16_t)(raw + delta);
	/* process_vm_writev honours page protections, as the kernel's
	 * FOLL_WRITE without FOLL_FORCE does for this write */
	if (process_vm_writev(mm->pid, &local, 1, &remote, 1, 0) != sizeof(raw))
		return -EFAULT;
	return 0;
}

long dp_mm_read_str(const struct dp_mm *mm, uint64_t addr, char *dst,
		    size_t max)
{
	size_t done = 0;

	/*
	 * Read up to the next page boundary at a time, so a string that
	 * ends just before an unmapped page is still read.
	 */
	while (done < max) {
		uint64_t a = addr + done;
		size_t chunk = 4096 - (a & 4095);
		char *nul;

		if (chunk > max - done)
			chunk = max - done;
		if (dp_mm_read(mm, a, dst + done, chunk))
			return -EFAULT;
		nul = memchr(dst + done, '\0', chunk);
		if (nul)
			return (long)(nul - dst) + 1;
		done += chunk;
	}
	return -EFAULT;
}

int dp_get_regs(pid_t tid, struct dp_regs *regs)
{
	return ptrace(PTRACE_GETREGS, tid, NULL, regs) ? -errno : 0;
}

int dp_set_regs(pid_t tid, const struct dp_regs *regs)
{
	return ptrace(PTRACE_SETREGS, tid, NULL, regs) ? -errno : 0;
}

/* A `syscall` instruction in the vDSO: present in every process, never
 * written by us, so running one there changes no code. */
static uint64_t find_syscall_insn(struct dp_mm *mm)
{
	char path[64], line[512];
	uint64_t start = 0, end = 0;
	uint8_t buf[8192];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", mm->pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "[vdso]")) {
			sscanf(line, "%lx-%lx", &start, &end);
			break;
		}
	}
	fclose(f);
	if (!start || end - start > sizeof(buf))
		return 0;
	if (dp_mm_read(mm, start, buf, end - start))
		return 0;
	for (uint64_t i = 0; i + 1 < end - start; i++)
		if (buf[i] == 0x0f && buf[i + 1] == 0x05)
			return start + i;
	return 0;
}

/*
 * Single-step @tid once from the registers @r; signals that stop it
 * meanwhile are kept.  A thread resumed from a syscall-exit stop (the exec
 * event of a launch) finishes that syscall first (which overwrites %rax)
 * and reports the step before executing anything: the registers are then
 * set again and the step repeated until ip has moved.
 */
static int step_once(pid_t tid, const struct dp_regs *r, int *pending_sig)
{
	struct dp_regs now;
	int status, err;

	for (int tries = 0; tries < 4;) {
		if ((err = dp_set_regs(tid, r)))
			return err;
		if (ptrace(PTRACE_SINGLESTEP, tid, NULL, NULL))
			return -errno;
		if (waitpid(tid, &status, __WALL) < 0)
			return -errno;
		if (WIFEXITED(status) || WIFSIGNALED(status))
			return -ESRCH;
		if (WIFSTOPPED(status) && WSTOPSIG(status) == SIGTRAP &&
		    status >> 16 == 0) {
			if (dp_get_regs(tid, &now))
				return -ESRCH;
			if (now.ip != r->ip)
				return 0;
			tries++;
			continue;
		}
		/* a signal arrived before the step: deliver it later */
		if (WIFSTOPPED(status) && WSTOPSIG(status) != SIGTRAP &&
		    pending_sig && !*pending_sig)
			*pending_sig = WSTOPSIG(status);
	}
	return -EIO;
}

int dp_remote_syscall(struct dp_mm *mm, pid_t tid, long nr,
		      const uint64_t args[6], int64_t *ret, int *pending_sig)
{
	struct dp_regs saved, r;
	siginfo_t si;
	uint64_t mask;
	bool have_si, have_mask;
	int err;

	if (!mm->syscall_insn)
		mm->syscall_insn = find_syscall_insn(mm);
	if (!mm->syscall_insn)
		return -ENOEXEC;
	if ((err = dp_get_regs(tid, &saved)))
		return err;
	/* in a signal-delivery-stop the signal's siginfo must survive */
	have_si = !ptrace(PTRACE_GETSIGINFO, tid, NULL, &si);
	/*
	 * The step's trap is a forced SIGTRAP: with SIGTRAP blocked (inside
	 * the program's own SIGTRAP handler) it would reset the program's
	 * action to SIG_DFL.  Unblock it for the step.
	 */
	have_mask = !ptrace(PTRACE_GETSIGMASK, tid, (void *)sizeof(mask), &mask);
	if (have_mask && (mask & TRAP_MASK)) {
		uint64_t m = mask & ~TRAP_MASK;

		ptrace(PTRACE_SETSIGMASK, tid, (void *)sizeof(m), &m);
	}
	r = saved;
	r.ip = mm->syscall_insn;
	r.ax = (uint64_t)nr;
	/* not a restartable syscall: the kernel must not rewind ip */
	r.orig_ax = (uint64_t)-1;
	r.di = args[0];
	r.si = args[1];
	r.dx = args[2];
	r.r10 = args[3];
	r.r8 = args[4];
	r.r9 = args[5];
	err = step_once(tid, &r, pending_sig);
	if (!err)
		err = dp_get_regs(tid, &r);
	if (!err)
		*ret = (int64_t)r.ax;
	/* the registers go back whatever happened */
	if (dp_set_regs(tid, &saved) && !err)
		err = -ESRCH;
	if (have_si)
		ptrace(PTRACE_SETSIGINFO, tid, NULL, &si);
	if (have_mask && (mask & TRAP_MASK))
		ptrace(PTRACE_SETSIGMASK, tid, (void *)sizeof(mask), &mask);
	return err;
}

uint64_t dp_remote_mmap_near(struct dp_mm *mm, pid_t tid, uint64_t near,
			     size_t len, int prot, int *pending_sig)
{
	const uint64_t step = 1 << 20;
	uint64_t args[6] = { 0, len, (uint64_t)prot,
			     MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t)-1, 0 };
	int64_t ret;

	if (!near) {
		if (dp_remote_syscall(mm, tid, SYS_mmap, args, &ret, pending_sig) ||
		    (ret < 0 && ret > -4096))
			return 0;
		return (uint64_t)ret;
	}
	/*
	 * Walk down from just below @near, then up from it, in 1 MiB steps
	 * within 1.5 GB: anything there is in rel32 reach of the code.  The
	 * walk down stops above page 0: a target with CAP_SYS_RAWIO (root)
	 * may map it despite vm.mmap_min_addr, and a page at NULL would both
	 * read as failure here and make the program's NULL pointers valid.
	 */
	args[3] |= MAP_FIXED_NOREPLACE;
	for (int dir = -1; dir <= 1; dir += 2) {
		for (uint64_t d = step; d < (3ull << 29); d += step) {
			uint64_t hint = dir < 0 ? (near & ~(step - 1)) - d
						: (near & ~(step - 1)) + d;

			if (dir < 0 && (near & ~(step - 1)) <= d)
				break;
			args[0] = hint;
			if (dp_remote_syscall(mm, tid, SYS_mmap, args, &ret,
					      pending_sig))
				return 0;
			if ((uint64_t)ret == hint)
				return hint;
		}
	}
	return 0;
}
