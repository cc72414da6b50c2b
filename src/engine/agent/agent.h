/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libdprobe.so internals: the in-process probe engine behind
 * include/dprobe/kprobes.h.
 *
 *   core.c      initialisation, the registration mutex, the grace period
 *               that lets unregister return only when no handler can still
 *               use a probe, and writes to our own text
 *   sym.c       loaded objects (dl_iterate_phdr) and their ELF symbols
 *   slots.c     pages of out-of-line slots within rel32 reach of the code
 *   site.c      probed addresses: a lock-free table, arming and disarming
 *   hit.c       the SIGTRAP handler's work: handlers, then the displaced
 *               instruction (the hit path)
 *   signal.c    our SIGTRAP/SIGSEGV/SIGBUS actions, the program's actions
 *               kept behind them (sigaction and friends are interposed)
 *   kprobes.c   the kprobes API
 *   kretprobe.c return probes: registration, pools, unwinder hooks
 *   rethook.c   return probes on the hit path: the entry handler and the
 *               C half of the return trampoline (trampoline.S)
 *   nofault.c   dp_probe_read(), over the copies of nofault_copy.S that
 *               return -EFAULT instead of crashing
 *   stack.c     the user stack at a hit (frame pointers, or a snapshot
 *               for DWARF unwinding), for the probe events that ask for it
 *   opt.c       jump optimisation of armed sites (the kernel's optprobes):
 *               analysis, detours, the live patching protocol
 *   opt_hit.c   the hit path of optimised sites, and the handler of the
 *               signal that asks each thread where it is
 *   opt_entry.S what a detour calls: saves the extended state if needed
 *   xstate.h    the extended-state save and restore of the .S files
 *   maskguard.c jump guards on libc's mask functions, where the int3
 *               guards of signal.c would kill a thread (a posix_spawn
 *               child) that meets them with SIGTRAP blocked
 *   maskguard_entry.S where their jumps lead
 *   tracepoint.c application tracepoints (include/dprobe/tracepoint.h):
 *               probe arrays, static keys, the objects' jump tables
 *
 * The hit path (hit.c, rethook.c, nofault.c, opt_hit.c, the .S files, the emulation
 * in arch/x86_64/insn.c, and the few helpers of core.c, site.c and slots.c
 * they call) takes no lock, allocates nothing and calls no library
 * function, and like the whole library is built with -mgeneral-regs-only:
 * it never touches SIMD or x87 state.
 */
#ifndef DPROBE_ENGINE_AGENT_H
#define DPROBE_ENGINE_AGENT_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <ucontext.h>

#include "arch/arch.h"
#include "dprobe/kprobes.h"

#define DP_HIDDEN __attribute__((visibility("hidden")))
#define DP_EXPORT __attribute__((visibility("default")))
#define DP_PAGE_SIZE 4096ul

/* ---- per-thread state (initial-exec TLS: no allocation, no call) -------- */

struct dp_gp_reader;

struct dp_tls {
	int depth;			/* > 0: inside a handler of ours */
	struct dp_gp_reader *gp;	/* this thread's reader slot (core.c) */
	unsigned int shared[2];		/* read sides held on the shared
					 * counters, by epoch parity */
	bool gp_claiming;		/* claiming a reader slot */
	int tid;			/* gettid(), once known */
	struct kprobe *cur;		/* kprobe_running() */
	struct kretprobe_instance *ri;	/* calls in flight, newest first */
	/* calls in flight when an exception started unwinding, their
	 * return addresses put back, newest first: hijacked again at the
	 * catch for those whose frames it did not unwind (rethook.c) */
	struct kretprobe_instance *suspended;
	bool segv_blocked;		/* the probed code blocks SIGSEGV/BUS */
	int prog_fault;			/* in the program's SIGSEGV/BUS handler */
	ucontext_t *uc;			/* the trap's context, in pre handlers */
	uint64_t stack_end;		/* where a stack snapshot last found
					 * its end (stack.c) */
};

extern __thread struct dp_tls dp_tls
	__attribute__((tls_model("initial-exec"))) DP_HIDDEN;

/* ---- core.c -------------------------------------------------------------- */

extern bool dp_have_fsgsbase DP_HIDDEN;

DP_HIDDEN int dp_agent_init(void);
/* @fd moved above the numbers the program uses (the new number). */
DP_HIDDEN int dp_fd_high(int fd, bool cloexec);
/* A descriptor table of the calling thread's own, holding only @keep. */
DP_HIDDEN int dp_own_files(const int *keep, int n);
DP_HIDDEN bool dp_own_files_now(void);
DP_HIDDEN void dp_lock(void);
DP_HIDDEN void dp_unlock(void);

/*
 * Grace periods (core.c).  A hit holds a read side while it looks at a
 * site's probes and runs their handlers; dp_synchronize() returns once
 * every read side that could have seen a removed kprobe has ended.
 *
 * Each thread that hits a probe takes a reader slot (struct dp_gp_reader,
 * global memory that is never freed) the first time, and from then on a
 * read side is a plain increment of the slot's counter for the current
 * epoch parity and a plain decrement at the end: no atomic instruction,
 * no fence.  The writer makes up for the missing reader barriers with
 * membarrier(PRIVATE_EXPEDITED).  A thread that finds no free slot, or a
 * kernel without that membarrier, uses two shared counters with atomic
 * read-modify-writes instead (as SRCU).  See core.c for why it is correct.
 *
 * The caller's own read sides (a handler that unregisters) are not
 * waited for.
 */
#define DP_GP_SPARES	8	/* a power of two */
struct dp_gp_reader {
	unsigned int lease[2];		/* read sides held, by epoch parity */
	int tid;			/* the owner; 0: free */
	/* instances kept for the owner's next entries of their kretprobes
	 * (rethook.c), by a hash of the kretprobe's holder */
	struct kretprobe_instance *spare[DP_GP_SPARES];
	struct dp_rstack *rstack;	/* the owner's return stack (rethook.c) */
} __attribute__((aligned(64)));		/* two cache lines per thread */

typedef unsigned int *dp_gp_t;		/* the counter a read side holds */

extern unsigned int dp_gp_epoch DP_HIDDEN;
extern unsigned int dp_gp_shared[2] DP_HIDDEN;

DP_HIDDEN dp_gp_t dp_gp_enter_slow(void);
DP_HIDDEN void dp_gp_leave_shared(dp_gp_t c);
DP_HIDDEN void dp_synchronize(void);
/* Every thread gets a reader slot (membarrier() works). */
DP_HIDDEN bool dp_gp_slots(void);
/* @fn on every reader slot, owned or not, until it returns true (then
 * true); no lock, no call: usable on the hit path. */
DP_HIDDEN bool dp_gp_for_each(bool (*fn)(struct dp_gp_reader *, void *),
			      void *arg);

/*
 * The signal fences only keep the compiler from moving the read side's
 * accesses out of it; a signal handler that nests a hit on this thread
 * between the load and the store of an increment restores the counter
 * before the interrupted code resumes, so the plain update is safe.
 */
static inline dp_gp_t dp_gp_enter(void)
{
	struct dp_gp_reader *r = dp_tls.gp;
	unsigned int *c;

	if (__builtin_expect(!r, 0))
		return dp_gp_enter_slow();
	c = &r->lease[__atomic_load_n(&dp_gp_epoch, __ATOMIC_RELAXED) & 1];
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + 1,
			 __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return c;
}

static inline void dp_gp_leave(dp_gp_t c)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (__builtin_expect((uintptr_t)c - (uintptr_t)dp_gp_shared <
			     sizeof(dp_gp_shared), 0)) {
		dp_gp_leave_shared(c);
		return;
	}
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) - 1,
			 __ATOMIC_RELAXED);
}

/* /proc/self/mem opened in this thread's table now (0 or -errno). */
DP_HIDDEN int dp_text_prepare(void);
/*
 * The program-table /proc/self/mem descriptor, forgotten here (a later
 * write opens it again), and the file it was opened on (*@dev, *@ino):
 * the caller closes it if the number still names that file.  -1: none.
 */
DP_HIDDEN int dp_text_take_fd(dev_t *dev, ino_t *ino);
/*
 * Write @len bytes of our own code at @addr through /proc/self/mem, which
 * writes through read-only mappings as ptrace does, without changing page
 * protections under running threads.  With @expect, the current bytes are
 * read first and must equal it (-EBUSY otherwise).  Then every CPU running
 * one of our threads is made to serialise (membarrier SYNC_CORE).
 */
DP_HIDDEN int dp_text_write(uint64_t addr, const void *src, size_t len,
			    const void *expect);
/*
 * The same without the serialisation, which the caller makes later with
 * dp_text_sync() (one for a whole batch of writes): for bytes no thread
 * can reach yet (a new slot or detour), for int3s (a thread sees the old
 * byte or the int3, and a trap is serialising), and for the phases of a
 * batch of sites patched together (opt.c), each ended by one sync.
 */
DP_HIDDEN int dp_text_write_lazy(uint64_t addr, const void *src, size_t len,
				 const void *expect);
DP_HIDDEN void dp_text_sync(void);
/* An in-place sort that calls no library function (heapsort). */
DP_HIDDEN void dp_sort(void *base, size_t n, size_t size,
		       int (*cmp)(const void *, const void *));
/*
 * Queued: checked against @expect now (-EBUSY), written by the next
 * dp_text_flush() or dp_text_write_lazy(), joined with the other queued
 * writes near it into one write per span of a page (the bytes between
 * them rewritten as they are: only we change code, under the mutex).
 * Queued writes must not overlap; a thread must not depend on one before
 * the flush (an int3 queued after its site is marked armed is fine).
 */
DP_HIDDEN int dp_text_queue(uint64_t addr, const void *src, size_t len,
			    const void *expect);
DP_HIDDEN void dp_text_flush(void);
/* Bytes of a new slot or detour page: nothing queued can overlap them. */
DP_HIDDEN int dp_text_write_fresh(uint64_t addr, const void *src, size_t len);

/*
 * Replace the single instruction @old at @addr by @insn, of the same
 * length, while other threads may be executing it (the kernel's
 * text_poke_bp()): an int3 on the first byte, the other bytes, then the
 * first byte, each write followed by a core sync.  A thread that meets
 * the int3 meanwhile resumes at @dest (where @insn or @old would take it:
 * the caller chooses), see dp_hit_trap().  Under the mutex; -EBUSY if
 * the bytes are not @old.
 */
DP_HIDDEN int dp_text_poke(uint64_t addr, const uint8_t *insn,
			   const uint8_t *old, size_t len, uint64_t dest);

/*
 * What the SIGTRAP handler knows of an address dp_text_poke() patched:
 * kept for good (a thread may trap on the int3 an instant before it goes
 * and reach the handler after), in a hash that is read with no lock.
 */
struct dp_poke {
	struct dp_poke *hnext;		/* chain, never unlinked */
	uint64_t addr;
	uint64_t dest;			/* where the int3 resumes */
	unsigned int seq;		/* odd while the int3 may be there */
};

DP_HIDDEN struct dp_poke *dp_poke_lookup(uint64_t addr);

/* The address range of libdprobe.so itself, never probed. */
DP_HIDDEN bool dp_in_self(uint64_t addr);

/* A message on stderr with a raw write (usable anywhere). */
DP_HIDDEN void dp_warn(const char *msg);

/* System calls without libc, which the hit path may not call. */
static inline long dp_raw_syscall6(long nr, long a, long b, long c, long d,
				   long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8),
			   "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

static inline long dp_raw_syscall(long nr, long a, long b, long c)
{
	return dp_raw_syscall6(nr, a, b, c, 0, 0, 0);
}

/* ---- sym.c --------------------------------------------------------------- */

/* A known instruction start to decode from, and how far code goes. */
struct dp_code_range {
	uint64_t start;		/* function (or known instruction) start */
	uint64_t end;		/* end of the executable mapping */
	bool func_entry;	/* the address is a function symbol's start */
};

/* "SYM" or "LIB:SYM": 0 with *@addr, or -ENOENT / -EADDRNOTAVAIL. */
DP_HIDDEN int dp_sym_lookup(const char *name, uint64_t *addr);
/* Every definition of @name in any loaded object; returns the count. */
DP_HIDDEN int dp_sym_lookup_all(const char *name, uint64_t *addrs, int max);
/* Where to decode @addr from: 0, or -EINVAL (not in loaded code). */
DP_HIDDEN int dp_sym_code_range(uint64_t addr, struct dp_code_range *r);
/* The function symbol with a size that contains @addr: 0, or -ENOENT. */
DP_HIDDEN int dp_sym_func_bounds(uint64_t addr, uint64_t *start,
				 uint64_t *size);
/* How many bytes from @end (a function's end), up to @max, no symbol
 * covers and the same executable mapping holds: its padding. */
DP_HIDDEN size_t dp_sym_func_pad(uint64_t end, size_t max);
/* [@lo, @hi) is in one object's executable mapping and no symbol of it
 * (sized or not) covers a byte of it: the nops before a function. */
DP_HIDDEN bool dp_sym_uncovered(uint64_t lo, uint64_t hi);

/* ---- slots.c ------------------------------------------------------------- */

/*
 * A site's slots: 64 bytes in an executable page near the code.
 *   [0, 32)   the copy and a jump back (or an emulated instruction's
 *             fault slot)
 *   [32, 64)  the copy, an int3, and the jump back: used when a post
 *             handler must run after the instruction
 */
#define DP_SLOT_BYTES 64
#define DP_SLOT_POST 32

struct dp_site;

DP_HIDDEN int dp_slots_build(struct dp_site *s);
/* The site whose slots contain @addr (any slot page), or NULL. */
DP_HIDDEN struct dp_site *dp_slot_site(uint64_t addr, uint64_t *slot);
/*
 * @size bytes (<= a page) of executable memory within rel32 reach of
 * @near, filled with int3, never freed (detours); 0 if there is none.
 */
DP_HIDDEN uint64_t dp_slots_alloc_near(uint64_t near, size_t size);
DP_HIDDEN size_t dp_slots_mapped(void);
DP_HIDDEN void dp_slots_trim(uint64_t at, size_t size, size_t used);

/* ---- site.c -------------------------------------------------------------- */

struct dp_site {
	struct dp_site *hnext;		/* hash chain, never unlinked */
	bool nosimd;			/* (opt_entry.S reads it at offset 8)
					 * every probe has KPROBE_FLAG_NOSIMD */
	struct dp_site *all_next;	/* every site (under the mutex) */
	uint64_t addr;
	struct dp_insn insn;
	uint64_t slot;			/* 0 when the instruction needs none */
	struct kprobe *probes;		/* linked by __next, RCU-style */
	int armed;			/* our int3 is in the code */
	bool counted;			/* armed for a probe that is not a
					 * guard of signal.c (site.c) */

	/* jump optimisation (opt.c), under the mutex unless said */
	uint64_t step;			/* read by the trap: when non-zero, the
					 * int3 resumes here (the detour's
					 * tail), skipping the replaced bytes;
					 * or, while tracepoint.c changes the
					 * insn of a jump site, where the new
					 * one goes */
	bool optimized;			/* the jmp is in the code */
	bool opt_tried;			/* analysed (the results below hold) */
	const char *why;		/* why it is not optimised, or NULL */
	uint64_t patch;			/* where the jmp goes */
	unsigned int nbytes;		/* bytes replaced from there */
	uint64_t detour, tail;		/* 0 until built, never freed */
	uint8_t orig[24];		/* the replaced bytes */
	uint8_t jmp[24];		/* what replaces them */
	bool flags_live;		/* the detour saves the flags */
	unsigned int detour_len;	/* bytes of code at @detour (SHOW) */
	bool queued;			/* in a batch's queue (opt.c) */
	/* a -fpatchable-function-entry=N,M short site (entrysite.h): the
	 * jmp at @patch is a jmp short to @prejmp, written at @pre (0: none)
	 * over the nops before the symbol; @pre_in: it is in the code (it
	 * stays there when a thread kept it from going back, unreachable) */
	uint64_t pre;
	uint8_t prejmp[DP_ENTRY_PRE_LEN];
	bool pre_in;
};

DP_HIDDEN struct dp_site *dp_site_lookup(uint64_t addr);
/* The site for @addr, made (and checked) if needed; -errno. */
DP_HIDDEN int dp_site_get(uint64_t addr, struct dp_site **out);
/* Arm when some probe on it is enabled, disarm otherwise. */
DP_HIDDEN int dp_site_update(struct dp_site *s);
/* Copy the code at @addr as it is without our int3s. */
DP_HIDDEN void dp_site_recover(uint64_t addr, uint8_t *buf, size_t len);
DP_HIDDEN void dp_sites_disarm_all(void);
/* The site's probes, all of them (not only the enabled ones). */
#define dp_site_for_each(s, p) \
	for (struct kprobe *p = (s)->probes; p; p = p->__next)
DP_HIDDEN struct dp_site *dp_sites_first(void);
/* @s is a site (registering checks a kprobe's own pointer to it). */
DP_HIDDEN bool dp_site_known(const struct dp_site *s);
/* @fn on each site at an address in [@lo, @hi) until it returns true. */
DP_HIDDEN bool dp_sites_in(uint64_t lo, uint64_t hi,
			   bool (*fn)(struct dp_site *s, void *arg), void *arg);

/* ---- hit.c --------------------------------------------------------------- */

/* An int3 trap at ip-1 in @uc: true if it was ours and is dealt with. */
DP_HIDDEN bool dp_hit_trap(ucontext_t *uc);
DP_HIDDEN void dp_regs_from_uc(const ucontext_t *uc, struct pt_regs *regs);
DP_HIDDEN void dp_regs_to_uc(const struct pt_regs *regs, ucontext_t *uc);
DP_HIDDEN void dp_regs_bases(struct pt_regs *regs);

/* ---- opt.c, opt_hit.c, opt_entry.S ---------------------------------------- */

/*
 * The signal opt.c sends to every thread to learn where it is (see
 * opt.c): libdprobe owns it as it owns SIGTRAP.
 */
#define DP_SIG_WHERE (SIGRTMAX - 2)
/* The high half of its si_value (the low half is the round). */
#define DP_WHERE_MAGIC 0x64707277u

/*
 * Optimise @s if it can and should be, unoptimise it if it should not.
 * A region that would hold a tracepoint's jump site or target (see
 * dp_jump_hits()) is not optimised.
 */
DP_HIDDEN void dp_opt_update(struct dp_site *s);
/*
 * Between dp_opt_batch_begin() and dp_opt_batch_end() (they take the
 * mutex; batches nest), the sites dp_opt_update() would optimise are queued, and the
 * end patches them all with one grace period, one round asking where the
 * threads are, and one core sync per phase of the protocol; a site whose
 * region a thread is in is then tried alone, as outside a batch.
 */
DP_HIDDEN void dp_opt_batch_begin(void);
DP_HIDDEN void dp_opt_batch_end(void);
/* Inside a batch: int3s written now are synced at its end. */
DP_HIDDEN bool dp_opt_batching(void);
/* Unoptimise @n sites together (the int3s, one sync, the bytes, one sync). */
DP_HIDDEN void dp_opt_unoptimize_many(struct dp_site **v, size_t n);
/* Unoptimise the sites whose replaced bytes hold @addr (about to be
 * armed), as the kernel does for a probe inside an optimised one. */
DP_HIDDEN void dp_opt_make_room(uint64_t addr);
/*
 * The same for a tracepoint's jump entry: unoptimise every site whose
 * region it hits.  0, or -EBUSY if one of them could not be (its jmp
 * stays, and the entry's site must then not be patched).
 */
DP_HIDDEN int dp_opt_clear_jump(uint64_t site, uint64_t target);
/* Put the int3 back in place of the jmp (before disarming): 0, or
 * -EBUSY when a thread kept it from going (the jmp stays). */
DP_HIDDEN int dp_opt_unoptimize(struct dp_site *s);
DP_HIDDEN extern const char dp_opt_entry[];
DP_HIDDEN void dp_opt_hit(struct pt_regs *regs, struct dp_site *s);
/*
 * The selectors and bases, for frames that were not made from a
 * ucontext: the selectors as read at initialisation (dp_regs_init();
 * reading a segment register costs more than the rest of the frame),
 * fs_base from %fs:0 (see dp_regs_bases()), gs_base with rdgsbase.
 */
DP_HIDDEN void dp_regs_init(void);
extern unsigned long dp_sel_cs, dp_sel_ss, dp_sel_fs, dp_sel_gs DP_HIDDEN;

static inline void dp_regs_segments(struct pt_regs *regs)
{
	unsigned long v;

	regs->cs = dp_sel_cs;
	regs->ss = dp_sel_ss;
	regs->fs = dp_sel_fs;
	regs->gs = dp_sel_gs;
	regs->ds = regs->es = 0;
	__asm__("mov %%fs:0, %0" : "=r"(v));
	regs->fs_base = v;
	v = 0;
	if (dp_have_fsgsbase)
		__asm__ volatile("rdgsbase %0" : "=r"(v));
	regs->gs_base = v;
}
/* DP_SIG_WHERE from us (true), noted; false: the program's. */
/* Whether a thread not running, at @sp/@ip, is inside the bytes
 * dp_where names (read from another thread: it is blocked). */
DP_HIDDEN bool dp_opt_where_blocked(uint64_t sp, uint64_t ip);
DP_HIDDEN bool dp_opt_where(siginfo_t *si, ucontext_t *uc);
/* The question DP_SIG_WHERE asks: is anything in one of the ranges? */
struct dp_where_range {
	uint64_t start, end;		/* [start, end) is inside */
	uint64_t trap;			/* a trap on its int3 here is not */
	uint64_t maxend;		/* the largest end up to this one */
};
struct dp_where {
	/* sorted by start: a site's replaced bytes (open at the int3) and
	 * its slot pair, for every site of the round */
	const struct dp_where_range *r;
	size_t n;
	uint64_t restorer;		/* the signal return trampoline */
	int gen;			/* the round; older answers are ignored */
	int pid;			/* ours: answers come from no one else */
	int answers;			/* threads that answered */
	int inside;			/* of them, inside */
};
DP_HIDDEN extern struct dp_where dp_where;

/* ---- signal.c ------------------------------------------------------------ */

DP_HIDDEN int dp_signals_install(void);
/* Guard libc's own sigaction() and mask functions when ours do not
 * interpose (libdprobe.so was dlopen()ed): registered, not armed. */
DP_HIDDEN void dp_signals_guard(void);
/* @p is one of those guards (armed only while another probe is). */
DP_HIDDEN bool dp_signals_is_guard(const struct kprobe *p);
/* ...and whether their int3s are to be in the code now (the mutex). */
DP_HIDDEN bool dp_signals_guard_armed(void);
/*
 * The guards are armed while some site other than theirs is armed (@on,
 * from site.c, under the mutex) or a session of dprobe's is on (@on,
 * from channel.c; takes the mutex).  Armed, our actions the program
 * replaced while none was armed are taken back; disarmed, once every
 * trap taken on an int3 of ours has reached our handler.
 */
DP_HIDDEN void dp_signals_guard_set(bool on);
DP_HIDDEN void dp_signals_guard_session(bool on);
/* Every byte was put back (dp_sites_disarm_all()): not wanted by anyone. */
DP_HIDDEN void dp_signals_guard_forget(void);
/* The signal return trampoline our actions use (never probed). */
DP_HIDDEN uint64_t dp_sigreturn_addr(void);
DP_HIDDEN void dp_chain(int sig, siginfo_t *si, ucontext_t *uc);

/* ---- maskguard.c, maskguard_entry.S -------------------------------------- */

/*
 * Jump guards on libc's mask functions (no int3: a thread may meet them
 * with SIGTRAP blocked).  Built at load for the function at @fn (0 or
 * -errno: then the int3 guard does it), armed with the other guards.
 */
DP_HIDDEN int dp_maskguard_build(uint64_t fn);
/* ...or none for @fn, which only calls @to, guarded by a jump. */
DP_HIDDEN int dp_maskguard_cover(uint64_t fn, uint64_t to);
DP_HIDDEN bool dp_maskguard_has(uint64_t fn);
DP_HIDDEN void dp_maskguard_arm(bool on);
DP_HIDDEN void dp_maskguard_forked(void);
/* The jump's byte at @addr when armed (what a site's disarm puts back). */
DP_HIDDEN bool dp_maskguard_resting(uint64_t addr, uint8_t *b);
/* @buf (the code at @addr) with the functions' own first bytes. */
DP_HIDDEN void dp_maskguard_recover(uint64_t addr, uint8_t *buf, size_t len);
DP_HIDDEN const sigset_t *dp_maskguard_set(int how, const sigset_t *set,
					   sigset_t *copy);
DP_HIDDEN extern const char dp_maskguard_entry[];

/* ---- nofault.c, nofault_copy.S ------------------------------------------- */

/* 0 or -EFAULT; see dp_probe_read(). */
DP_HIDDEN long dp_copy_nofault(void *dst, const void *src, size_t len);
DP_HIDDEN long dp_strncpy_nofault(char *dst, const void *src, size_t size);
/* The fixup for a fault at @ip in one of the copies above, or 0. */
DP_HIDDEN uint64_t dp_nofault_fixup(uint64_t ip);

/* ---- tracepoint.c -------------------------------------------------------- */

#define DP_JUMP_LEN 5		/* a jump site: a 5-byte nop or jmp rel32 */

/*
 * Whether a jump entry (@site, its 5 bytes, and @target, where its jmp
 * goes) hits the bytes [@lo, @hi) that a jmp of ours replaces, entered
 * at @lo: the site's bytes change under it, or the jmp lands inside it
 * (as a branch into an optimised region would).  A target at @lo is an
 * entry like any other.
 */
static inline bool dp_jump_hits(uint64_t site, uint64_t target, uint64_t lo,
				uint64_t hi)
{
	return (site < hi && site + DP_JUMP_LEN > lo) ||
	       (target > lo && target < hi);
}

/* Some registered jump entry hits [@lo, @hi) (under the mutex). */
DP_HIDDEN bool dp_tp_jumps_hit(uint64_t lo, uint64_t hi);

/* ---- rethook.c, kretprobe.c, trampoline.S -------------------------------- */

struct kretprobe_holder {
	struct kretprobe *rp;		/* NULL once unregistered */
	char *inst;
	size_t isize;
	uint32_t n;
	/*
	 * KPROBE_FLAG_RP_THREAD: no pool (inst is NULL); the instances are
	 * on the threads' return stacks and name their holder's gen, which
	 * moves on when it is unregistered: a holder is never freed, but
	 * taken again by a later registration (next_dead links the free
	 * ones), and a call entered before that reads no kretprobe.
	 */
	bool per_thread;
	uint32_t gen;
	uint64_t free_head;		/* tag << 32 | (index + 1), 0: empty */
	struct kretprobe_holder *next_dead;
};

/* The kretprobe of @ri's call, NULL once it was unregistered. */
static inline struct kretprobe *
dp_rp_of(const struct kretprobe_instance *ri)
{
	const struct kretprobe_holder *h = ri->rph;
	struct kretprobe *rp = __atomic_load_n(&h->rp, __ATOMIC_ACQUIRE);

	/* after rp: a holder taken again sets its new rp after the gen */
	if (h->per_thread && __atomic_load_n(&h->gen, __ATOMIC_RELAXED) !=
			     ri->__gen)
		return NULL;
	return rp;
}

/*
 * A thread's return stack (KPROBE_FLAG_RP_THREAD): the instances of its
 * calls in flight, in the order they were entered, each marked in use
 * (__state) until its call is done with; the top comes down over those
 * done.  Mapped the first time the reader slot's thread needs it, and
 * kept with the slot for the threads that take it after.
 */
#define DP_RSTACK_SLOT	128u
_Static_assert(sizeof(struct kretprobe_instance) + KRETPROBE_THREAD_DATA <=
	       DP_RSTACK_SLOT, "a return stack slot holds an instance");

struct dp_rstack {
	uint32_t top;			/* slots below are or were in use */
	uint32_t pad[15];
	char slot[KRETPROBE_THREAD_DEPTH][DP_RSTACK_SLOT];
};

static inline struct kretprobe_instance *
dp_rp_instance(struct kretprobe_holder *h, uint32_t i)
{
	return (struct kretprobe_instance *)(h->inst + (size_t)i * h->isize);
}

DP_HIDDEN extern const char dp_kretprobe_trampoline[];
/* Where the detours of optimised function entries go (trampoline.S), and
 * the return address it gives the calls it hijacks. */
DP_HIDDEN extern const char dp_kretprobe_call[];
DP_HIDDEN extern const char dp_kretprobe_trampoline_call[];
DP_HIDDEN extern uint64_t dp_xsave_size;
/* 0: fxsave, 1: xsave, 2: xsavec (only the components in use) */
DP_HIDDEN extern uint8_t dp_xsave_mode;
/* fn(a, b) with the extended state saved around it (trampoline.S). */
DP_HIDDEN int dp_call_xsave(void *fn, void *a, void *b);
/* A word of the stack, 0 or -EFAULT without crashing (trampoline.S)... */
DP_HIDDEN long dp_load_nofault(const uint64_t *src, uint64_t *dst);
DP_HIDDEN long dp_store_nofault(uint64_t *dst, uint64_t val);
/* ...and, for a fault at @ip in them, where to resume, or 0. */
DP_HIDDEN uint64_t dp_word_nofault_fixup(uint64_t ip);
/* Size the extended-state save of trampoline.S and opt_entry.S (mutex). */
DP_HIDDEN void dp_xsave_setup(void);
/* rp->kp's pre handler: hijack the return address. */
DP_HIDDEN int dp_kretprobe_pre(struct kprobe *kp, struct pt_regs *regs);
/* Called by the trampoline; returns the real return address. */
DP_HIDDEN uint64_t dp_kretprobe_handler(struct pt_regs *regs);
/* Put back every hijacked return address of this thread (unwinding). */
DP_HIDDEN void dp_kretprobe_unhijack_thread(bool forced);
/* A catch handler begins (__cxa_begin_catch) with the stack at @sp. */
DP_HIDDEN void dp_kretprobe_rehijack_thread(uint64_t sp);
/* @ret read from the return-address slot at @slot: the real return
 * address if it is our trampoline and this thread has that call in
 * flight, else @ret (the hit path: no call, no lock). */
DP_HIDDEN uint64_t dp_kretprobe_real_ret(uint64_t ret, uint64_t slot);
/* The same for a copy of the @len stack bytes at @from: every slot of
 * this thread's calls in flight inside it gets its real return address. */
DP_HIDDEN void dp_kretprobe_real_rets(uint8_t *copy, uint64_t from,
				      size_t len);

/* ---- stack.c --------------------------------------------------------------- */

/*
 * The user stack at a hit into @out (at most @max, innermost first):
 * @first, then @ret_ip if not 0 (a return probe: where the function
 * returned to), then with @at_entry (the probe is at a function's first
 * instruction) the return address at [sp], then the frame-pointer chain
 * from @regs->bp.  It ends at a frame pointer 0 (the chain's end), or
 * with DP_STACK_BAD_FRAME (event/record.h) if there is room at one below
 * the stack pointer or the frame before, unaligned, unreadable, or with
 * a 0 return address.  Returns the number of entries (at least 1 when
 * @max is).
 */
DP_HIDDEN unsigned dp_user_stack(const struct pt_regs *regs, uint64_t first,
				 uint64_t ret_ip, bool at_entry,
				 uint64_t *out, unsigned max);
/*
 * The stack tracer's walk: as dp_user_stack() at a function's entry
 * (@first the function), with each entry's depth into @depth: @top less
 * the entry's lowest stack byte (for @first the stack pointer, for a
 * caller the byte above the slot its return address was read from), 0
 * where that is not known.
 */
DP_HIDDEN unsigned dp_user_stack_depths(const struct pt_regs *regs,
					uint64_t first, uint64_t top,
					uint64_t *out, uint64_t *depth,
					unsigned max);
/* The mapping [*@lo, *@hi) that holds @sp (raw calls: usable on the hit
 * path, cold); 0 or -1. */
DP_HIDDEN int dp_stack_mapping(uint64_t sp, uint64_t *lo, uint64_t *hi);
/*
 * A snapshot for DWARF unwinding into @dst, as protocol.h lays it out
 * (DP_AGENT_F_DWARF): struct dp_agent_snap_head with @first, @ret_ip and
 * the registers, up to @size bytes of the stack from @regs->sp (fewer
 * where it is not mapped; fault-safe), the word.  @dst has room for
 * DP_AGENT_SNAP_BYTES(@size) - 7 bytes.  Returns the bytes written.
 */
DP_HIDDEN size_t dp_user_stack_snap(const struct pt_regs *regs,
				    uint64_t first, uint64_t ret_ip,
				    uint8_t *dst, size_t size);
/* Every thread's spare instance back to its pool (after a grace period
 * that follows the unregistering of kretprobes: under the mutex). */
DP_HIDDEN void dp_kretprobe_spares_return(void);

/* ---- kprobes.c ----------------------------------------------------------- */

/* Register @p; @func_entry: it must be at a function's first byte. */
DP_HIDDEN int dp_register(struct kprobe *p, bool func_entry);
/* Unlink @p and disarm its site if it was the last (caller holds the
 * mutex, waits for the grace period, then calls the bottom half). */
DP_HIDDEN bool dp_unregister_top(struct kprobe *p);
DP_HIDDEN void dp_unregister_bottom(struct kprobe *p);
DP_HIDDEN bool dp_kprobe_registered(const struct kprobe *p);
/* True (with a message) when called from a handler: refuse. */
DP_HIDDEN bool dp_in_handler(const char *what);

/* ---- for the agent's other layers ---------------------------------------- */

/* How the instruction under @p is handled: "xol", "emulate:call", ...,
 * or "optimized" when its site is jump-optimised. */
const char *dp_kprobe_strategy(const struct kprobe *p) DP_HIDDEN;
/* What a probe's site did to the code, for dprobe show (SHOW). */
struct dp_site_view {
	uint64_t addr, patch, detour, tail, slot;
	unsigned int nbytes, detour_len, orig_len;
	bool armed, optimized, emulated;
	uint8_t orig[40];		/* the code from @addr, without ours */
};
/* 0, or -ENOENT when @p is not registered. */
int dp_kprobe_view(const struct kprobe *p, struct dp_site_view *v) DP_HIDDEN;
/*
 * Restore every probed byte (the agent's controller went away): probes
 * stay registered and silent until one at the same address is enabled or
 * registered again.
 */
void dp_agent_disarm_all(void) DP_HIDDEN;

#endif
