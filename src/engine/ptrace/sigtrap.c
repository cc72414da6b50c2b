// SPDX-License-Identifier: GPL-2.0
/*
 * Keeping a program's own SIGTRAP handler alive.
 *
 * An int3 raises SIGTRAP with force_sig(): if the thread has SIGTRAP
 * blocked (it is inside its own SIGTRAP handler) or ignored, the kernel
 * resets the action to SIG_DFL and unblocks the signal *before* the tracer
 * sees the trap.  The tracer discards the trap, but the reset stays, and
 * the program's next SIGTRAP would kill it.  So for a process that has a
 * SIGTRAP action, the tracer keeps a copy of it (read with a remote
 * rt_sigaction() whenever the program's own SIGTRAP is delivered, and when
 * probes are first armed), and after each of its own traps checks whether
 * the action was reset; if so it puts the action and the blocked bit back
 * with remote syscalls in the stopped thread.
 *
 * Known gap: a program that installs a SIGTRAP handler and then hits a
 * probe with SIGTRAP blocked before any SIGTRAP was delivered to it is not
 * repaired (the copy is taken too late).  docs/dprobe-trace.md says so.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "engine/ptrace/internal.h"

#define TRAP_BIT (1ull << (SIGTRAP - 1))

/* SigIgn and SigCgt of /proc/PID/status have SIGTRAP's bit? */
static bool has_trap_action(pid_t pid)
{
	char path[64], line[256];
	unsigned long long ign = 0, cgt = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "SigIgn: %llx", &ign);
		sscanf(line, "SigCgt: %llx", &cgt);
	}
	fclose(f);
	return (ign | cgt) & TRAP_BIT;
}

/* A read-write page of ours in the target, for syscall arguments. */
static uint64_t scratch(struct thread *t)
{
	struct proc *p = t->proc;

	if (!p->scratch)
		p->scratch = dp_remote_mmap_near(&p->mm, t->tid, 0, 4096,
						 PROT_READ | PROT_WRITE,
						 &t->pending_sig);
	return p->scratch;
}

static int remote(struct thread *t, long nr, uint64_t a0, uint64_t a1,
		  uint64_t a2, uint64_t a3)
{
	uint64_t args[6] = { a0, a1, a2, a3, 0, 0 };
	int64_t ret;
	int err = dp_remote_syscall(&t->proc->mm, t->tid, nr, args, &ret,
				    &t->pending_sig);

	return err ? err : ret < 0 ? (int)ret : 0;
}

void sigtrap_snapshot(struct thread *t)
{
	struct proc *p = t->proc;
	uint64_t s;

	p->trap_watch = has_trap_action(p->pid);
	if (!p->trap_watch)
		return;
	s = scratch(t);
	if (!s || remote(t, SYS_rt_sigaction, SIGTRAP, 0, s, 8) ||
	    dp_mm_read(&p->mm, s, &p->trap_act, sizeof(p->trap_act)))
		p->trap_watch = false;
}

void sigtrap_fixup(struct thread *t)
{
	struct proc *p = t->proc;
	uint64_t s, mask;
	bool ignored;

	if (!p->trap_watch || has_trap_action(p->pid))
		return;
	/* our trap reset the action: put it back, and the blocked bit the
	 * kernel cleared with it (it is only cleared when it was set) */
	s = scratch(t);
	if (!s || dp_mm_write(&p->mm, s, &p->trap_act, sizeof(p->trap_act)) ||
	    remote(t, SYS_rt_sigaction, SIGTRAP, s, 0, 8))
		return;
	/* the mask directly: a syscall's step trap would reset it again */
	ignored = p->trap_act.handler == (uint64_t)SIG_IGN;
	if (!ignored && !ptrace(PTRACE_GETSIGMASK, t->tid, (void *)sizeof(mask),
				&mask)) {
		mask |= TRAP_BIT;
		ptrace(PTRACE_SETSIGMASK, t->tid, (void *)sizeof(mask), &mask);
	}
}
