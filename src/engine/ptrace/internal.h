/* SPDX-License-Identifier: GPL-2.0 */
/* Private to src/engine/ptrace/: the tracer's view of its targets. */
#ifndef DPROBE_PTRACE_INTERNAL_H
#define DPROBE_PTRACE_INTERNAL_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "arch/arch.h"
#include "engine/ptrace/ptrace.h"
#include "engine/ptrace/remote.h"
#include "sym/proc.h"
#include "sym/unwind.h"

#define SITE_HASH 256

/* Internal breakpoints the tracer sets for itself. */
enum site_role {
	ROLE_PROBE,		/* user probes only */
	ROLE_ENTRY = 1,		/* program entry: initial libraries are mapped */
	ROLE_DLBRK = 2,		/* the dynamic linker's r_brk: dlopen/dlclose */
	ROLE_UNWIND = 4,	/* _Unwind_RaiseException & co: give back returns */
};

/* One breakpoint address in one address space. */
struct site {
	uint64_t addr;
	uint8_t orig;			/* the byte under the int3 */
	bool armed;
	unsigned roles;			/* enum site_role bits */
	struct dp_insn insn;
	uint64_t slot;			/* XOL copy, or a lazily built fault slot */
	uint64_t foffs_base;		/* run-time address of file offset 0 */
	uint64_t ref_ctr;		/* the reference counter this site
					 * added 1 to (a probe's (REF)), 0 */
	unsigned nprobes;
	struct dp_probe **probes;	/* in arming order */
	struct site *next;		/* hash chain */
};

/* A page of slots near the code it serves (rel32 reach). */
struct xol_page {
	uint64_t base;
	unsigned used;			/* slots handed out */
	struct xol_page *next;
};

/* A pending return: the return address at @sp was replaced. */
struct ret_inst {
	uint64_t sp;			/* where the return address lives */
	uint64_t orig_ret;
	struct site *site;		/* the function entry */
	bool chained;			/* orig_ret came from an earlier instance */
	uint64_t args[DP_NR_REG_ARGS];	/* entry values for $argN */
};

struct proc;

struct thread {
	pid_t tid;
	struct proc *proc;
	bool stopped;			/* in a ptrace-stop we have not resumed */
	int pending_sig;		/* to deliver when resumed */
	int stat_fd;			/* /proc/PID/task/TID/stat */
	long sys_nr;			/* the system call it is in, or -1 */
	struct ret_inst *rets;
	unsigned nrets, cap;
	/* the stack tracer: the mapping its stack pointer was last in (the
	 * end is the top of its stack); 0s: not looked up yet */
	uint64_t stk_lo, stk_hi;
	struct thread *next;
};

struct proc {
	pid_t pid;
	struct dp_tracer *tracer;
	bool silent;			/* not followed: service hits, no events */
	bool detach_after_exec;		/* an unfollowed vfork child */
	bool armed_libs;		/* probes in libraries resolved (entry seen) */
	bool execd;			/* an image exec'd after the start: a
					 * place not in it is pending, not an
					 * error */
	bool started;			/* every probe armed; its code is running */
	/* a vfork child still in its parent's memory: the parent's pid */
	pid_t vfork_parent;
	/* another process runs in this memory: our pages stay mapped */
	bool shared_mm;
	struct dp_mm mm;
	struct dp_proc *sym;		/* maps, objects, symbols */
	/* the stack tracer: the deepest stack recorded for the event of
	 * serial @stack_max_serial (another event starts from 0) */
	uint64_t stack_max;
	unsigned stack_max_serial;
	struct dp_unwinder *unw;	/* over @sym: --call-graph dwarf */
	struct dp_symbolizer symbolizer;
	struct site *sites[SITE_HASH];
	struct xol_page *pages;
	uint64_t tramp;			/* return trampoline (an int3) */
	uint64_t scratch;		/* a read-write page for syscall args */
	bool trap_watch;		/* the program has a SIGTRAP action */
	struct {			/* the kernel's struct sigaction */
		uint64_t handler, flags, restorer, mask;
	} trap_act;
	struct thread *threads;
	struct proc *next;
};

struct dp_tracer {
	struct dp_ptrace_opts o;
	struct dp_stats stats;
	struct proc *procs;
	pid_t root;			/* the launched command, 0 on attach */
	int root_status;
	bool root_done;
	volatile sig_atomic_t stop_req, profile_req;
	volatile sig_atomic_t no_wait;	/* dp_ptrace_abandon() */
	pid_t early[64];		/* new tracees that stopped before their
					 * creator's clone/fork event arrived */
	int nearly;
	void (*profile_cb)(void *);
	void *profile_priv;
	/* the syscall events: [exit][nr], NULL where none is wanted */
	bool sys_on;
	struct dp_event *sys_ev[2][DP_SYSCALL_NR_MAX];
	bool shown;			/* o.show: done */
	uint8_t rec[65536];		/* record scratch */
};

/* ---- site.c: breakpoints, slots, arming -------------------------------- */
struct site *site_find(struct proc *p, uint64_t addr);
/* @ref_ctr: run-time address of the probe's reference counter, or 0. */
int site_add_probe(struct proc *p, uint64_t addr, struct dp_probe *probe,
		   uint64_t foffs_base, uint64_t ref_ctr, char *why,
		   size_t whylen);
int site_add_role(struct proc *p, uint64_t addr, enum site_role role);
int site_build_fault_slot(struct proc *p, struct site *s);
/* Take every int3 out (original bytes back) and give back the reference
 * counters; the sites stay known. */
void sites_disarm_all(struct proc *p);
/* Forget that the sites hold reference counters, without writing them
 * (a vfork child: the memory, and so the counts, are its parent's). */
void sites_drop_ref_ctrs(struct proc *p);
/* Forget sites and pages (after exec: the address space is new). */
void sites_forget(struct proc *p);
/* Forget sites whose code is no longer mapped (after dlclose). */
void sites_prune_unmapped(struct proc *p);
int proc_trampoline(struct proc *p);
/* Resolve and arm every probe of the registry in @p; @initial makes a
 * resolution error fatal.  Returns 0 or -errno with @why. */
int proc_arm_probes(struct proc *p, bool initial, char *why, size_t whylen);
/* Set the tracer's own breakpoints (entry, r_brk, unwinder). */
void proc_arm_internal(struct proc *p);

/* ---- hit.c: what happens at a breakpoint -------------------------------- */
/* A SIGTRAP stop of @t: 1 if it was ours (handled, regs updated), 0 if
 * the signal belongs to the target, -errno on error. */
int hit_handle(struct thread *t, struct dp_regs *regs);
/* Give every pending return of @t back (detach, unwinding). */
void rets_restore(struct thread *t, bool count_dropped);
int rets_copy(struct thread *dst, const struct thread *src);
/* @t returned into the trampoline (@regs->sp just above the return
 * address it popped): record the return and set @regs->ip to the real
 * return address.  0, or -ENOENT if no pending return is for this frame. */
int rets_complete(struct thread *t, struct dp_regs *regs);
/* The thread is gone: its pending returns are misses. */
void rets_discard(struct thread *t);
/* A record's metadata for thread @t, now (@comm: DP_TASK_COMM_LEN bytes,
 * what m->comm points to). */
void thread_meta(struct thread *t, struct dp_rec_meta *m, char *comm);

/* ---- syscall.c: the syscall events, from syscall stops ------------------ */
/* Which syscall events the registry holds; true if there are any (the
 * tracees then run with PTRACE_SYSCALL). */
bool sys_events_init(struct dp_tracer *tr);
/* A syscall stop of @t (SIGTRAP | 0x80): the record of its event. */
void sys_stop(struct thread *t);

/* ---- sigtrap.c: the program's own SIGTRAP action ---------------------- */
/* Copy the SIGTRAP action (thread @t stopped, about to get a SIGTRAP). */
void sigtrap_snapshot(struct thread *t);
/* After one of our traps in @t: undo the kernel's reset of the action. */
void sigtrap_fixup(struct thread *t);

/* ---- release.c: giving our pages back on detach ----------------------- */
/*
 * Every thread of @p stopped and the int3s out: a thread stopped in a slot
 * or on the trampoline is moved to the equivalent place in its own code.
 * Call before rets_restore() (the trampoline needs the pending returns).
 */
void pages_evacuate(struct proc *p);
/*
 * After rets_restore(): unmap the slot pages and the scratch page, but
 * keep (and say why) a page some thread may still reach.
 */
void pages_release(struct proc *p);

/* ---- show.c: dprobe show ---------------------------------------------- */
/* The sites printed to o.show; the launched command killed, or the
 * session stopped. */
void show_and_end(struct dp_tracer *tr);

/* ---- tracer.c ----------------------------------------------------------- */
struct thread *thread_find(struct dp_tracer *t, pid_t tid);
void tracer_log(struct dp_tracer *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
