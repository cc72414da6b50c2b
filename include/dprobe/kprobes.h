/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kprobes API of the Linux kernel, for a process that instruments
 * itself (link with -ldprobe, or load libdprobe.so).
 *
 * A struct kprobe names an instruction by symbol_name (+ offset) or by
 * addr; register_kprobe() plants an int3 there.  Each time a thread
 * reaches it:
 *
 *   1. pre_handler(p, regs) runs with the thread's registers; as on x86 in
 *      the kernel, regs->ip is the probed address + 1.  Returning non-zero
 *      means "I have set regs->ip myself": the probed instruction is
 *      skipped and the thread resumes at regs->ip.
 *   2. the displaced instruction takes effect: a copy runs out of line in
 *      a slot near the code, or it is emulated (branches, calls, ret);
 *   3. post_handler(p, regs, 0) runs with the registers after it, regs->ip
 *      being the next instruction.
 *
 * Handlers run inside a SIGTRAP handler: they may read and change the
 * registers (the changes take effect), should call only async-signal-safe
 * functions, and must return (no longjmp out of them).  A probe hit while
 * the same thread is already in a handler is not handled: its nmissed is
 * incremented and the instruction just takes effect.  Several kprobes may
 * share one address; their handlers run in registration order.
 *
 * A struct kretprobe also runs handler(ri, regs) when the function entered
 * at kp returns (regs_return_value(regs) is its result), and entry_handler
 * at entry; data_size bytes of ri->data carry state from one to the other.
 *
 * Errors are negative errno values, as in the kernel:
 *   -EINVAL      bad arguments, an address outside the code of any loaded
 *                object, or in libdprobe's own code or the signal return
 *                trampoline; a kretprobe not at a function entry
 *   -ENOENT      symbol_name is not found
 *   -EADDRNOTAVAIL  symbol_name names several functions in one object
 *   -EILSEQ      the address is not the start of an instruction
 *   -EEXIST      this struct kprobe is already registered
 *   -EOPNOTSUPP  the instruction cannot be probed (privileged, int3, ...)
 *   -E2BIG       kretprobe maxactive above KRETPROBE_MAXACTIVE_MAX
 *   -ENOMEM      out of memory, or no page for a slot within reach
 *   -EBUSY       called from inside a handler
 *
 * register/unregister must not be called from handlers (register and
 * enable/disable return -EBUSY there, unregister does nothing), nor from
 * signal handlers.  Unregistering waits until no thread can still be
 * running the probe's handlers, so the struct may be freed or reused as
 * soon as it returns (to register it again, set addr back to NULL when it
 * was found by symbol_name, as in the kernel).
 *
 * Limits:
 *  - libdprobe owns SIGTRAP, SIGSEGV, SIGBUS and SIGRTMAX-2 (sent to every
 *    thread before a probe is jump-optimised) and passes what is not its
 *    own on to the program's handlers: sigaction(), signal() and friends
 *    see and change the program's actions, never libdprobe's.
 *  - A probe hit while SIGTRAP is blocked kills the process (the kernel
 *    resets the action), so libdprobe removes SIGTRAP from the masks the
 *    program sets (sigprocmask, pthread_sigmask, and the sa_mask of its
 *    handlers, the latter only when libdprobe.so is linked in or
 *    preloaded rather than dlopen()ed); glibc's internal masks (thread
 *    creation, posix_spawn's child) stay out of reach: do not probe code
 *    that runs under them.
 *  - A C++ exception or thread cancellation drops the return probes of
 *    the calling thread's pending calls (counted in nmissed); calls left
 *    in flight by an exiting thread are lost with it.  Return probes on
 *    functions live on several coroutine stacks at once are unsupported.
 *  - Unregister the probes of a library before dlclose()ing it.
 *  - Processes with a CET shadow stack cannot be probed (-EOPNOTSUPP).
 */
#ifndef DPROBE_KPROBES_H
#define DPROBE_KPROBES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The registers of the probed thread: the kernel's x86-64 struct pt_regs
 * (r15 ... ss) followed by the segment bases and selectors of glibc's
 * struct user_regs_struct, in the same layout as that struct.
 * orig_ax is always -1; ds and es read as 0.
 */
struct pt_regs {
	unsigned long r15, r14, r13, r12, bp, bx, r11, r10;
	unsigned long r9, r8, ax, cx, dx, si, di, orig_ax;
	unsigned long ip, cs, flags, sp, ss;
	unsigned long fs_base, gs_base, ds, es, fs, gs;
};

typedef uint8_t kprobe_opcode_t;

struct kprobe;
struct kretprobe;
struct kretprobe_instance;

typedef int (*kprobe_pre_handler_t)(struct kprobe *, struct pt_regs *);
typedef void (*kprobe_post_handler_t)(struct kprobe *, struct pt_regs *,
				      unsigned long flags);
/* trapnr: the x86 exception vector, 14 for a page fault, 13 for #GP */
typedef int (*kprobe_fault_handler_t)(struct kprobe *, struct pt_regs *,
				      int trapnr);
typedef int (*kretprobe_handler_t)(struct kretprobe_instance *,
				   struct pt_regs *);

struct kprobe {
	/* where: symbol_name ("SYM" or "LIB:SYM") + offset, or addr + offset */
	const char *symbol_name;
	unsigned int offset;
	kprobe_opcode_t *addr;		/* set by register_kprobe() */

	kprobe_pre_handler_t pre_handler;
	kprobe_post_handler_t post_handler;
	/*
	 * Called when a pre/post handler of this probe faults (SIGSEGV or
	 * SIGBUS).  Return non-zero after fixing *regs (the faulting context,
	 * e.g. its ip) to resume there; zero passes the fault on to the
	 * program's own handler or the default action.
	 */
	kprobe_fault_handler_t fault_handler;

	unsigned long nmissed;		/* hits not handled (nested hits) */
	unsigned int flags;		/* KPROBE_FLAG_* */
	kprobe_opcode_t opcode;		/* the original first byte */

	/* private: owned by libdprobe while registered */
	struct kprobe *__next;
	void *__site;
};

#define KPROBE_FLAG_GONE	1	/* the code went away */
#define KPROBE_FLAG_DISABLED	2	/* registered but not armed */
#define KPROBE_FLAG_OPTIMIZED	4	/* jump-optimised */
#define KPROBE_FLAG_FTRACE	8	/* (unused in user space) */
#define KPROBE_FLAG_ON_FUNC_ENTRY 16	/* at a function's first byte */
/* Set before registering (kept by register_kprobe): */
#define KPROBE_FLAG_NOOPT	32	/* never jump-optimise this probe */
#define KPROBE_FLAG_NOSIMD	64	/* the handlers never touch SIMD, x87
					 * or MXCSR state (built with
					 * -mgeneral-regs-only): an optimised
					 * hit need not save it (on a
					 * kretprobe's kp: both its handlers,
					 * and the return need not either) */
/* On a kretprobe's kp, set before registering: */
#define KPROBE_FLAG_RP_THREAD	128	/* instances from the calling
					 * thread's own stack of calls in
					 * flight, as the kernel's uretprobes
					 * and function_graph keep them: no
					 * limit over all threads (maxactive
					 * is ignored), at most
					 * KRETPROBE_THREAD_DEPTH on one
					 * thread, no locked instruction per
					 * call; needs data_size <=
					 * KRETPROBE_THREAD_DATA (else, or on
					 * a kernel without membarrier(),
					 * register_kretprobe() clears it:
					 * it says what is in effect) */

/*
 * Jump optimisation (the kernel's optprobes).  A registered probe is an
 * int3 first; where it is safe, libdprobe then replaces the instructions
 * covering 5 bytes at the probe point by a jmp to a per-probe detour that
 * calls the pre handlers directly, with no signal: a hit costs tens of
 * nanoseconds instead of microseconds.  Not optimised: probes with a
 * post_handler and probes sharing their address, probes with
 * KPROBE_FLAG_NOOPT, everything when the environment has DPROBE_NOOPT=1,
 * and sites that fail the kernel's checks (see kprobe_opt_reason()).  A
 * kretprobe's entry is optimised like a kprobe's.  Return handlers see
 * regs->flags as 0x202: flags are dead after a return.
 *
 * In an optimised hit, pre_handler sees the same registers as with the
 * int3 (ip = address + 1; flags are meaningful only past a function's
 * first instruction) and its changes to the general registers take
 * effect, but changes of regs->ip and regs->sp and its return value are
 * ignored, as in the kernel: a probe that redirects execution needs
 * KPROBE_FLAG_NOOPT (or a post_handler).  dp_probe_read() in an optimised
 * hit cannot know whether the probed code blocks SIGSEGV: do not read
 * memory that may fault from probes on code that runs with it blocked.
 */
/* 1 if @p is jump-optimised now, else 0. */
int kprobe_optimized(const struct kprobe *p);
/* Why @p is not jump-optimised ("" when it is), or NULL if unregistered. */
const char *kprobe_opt_reason(const struct kprobe *p);

static inline int kprobe_gone(const struct kprobe *p)
{
	return p->flags & KPROBE_FLAG_GONE;
}

static inline int kprobe_disabled(const struct kprobe *p)
{
	return p->flags & (KPROBE_FLAG_DISABLED | KPROBE_FLAG_GONE);
}

int register_kprobe(struct kprobe *p);
void unregister_kprobe(struct kprobe *p);
/* All or nothing: on failure the ones already registered are removed. */
int register_kprobes(struct kprobe **kps, int num);
void unregister_kprobes(struct kprobe **kps, int num);
int enable_kprobe(struct kprobe *p);
int disable_kprobe(struct kprobe *p);

/* The kprobe whose handler this thread is running, or NULL. */
struct kprobe *kprobe_running(void);

/* ---- return probes ------------------------------------------------------ */

#define KRETPROBE_MAXACTIVE_MAX 4096
#define KRETPROBE_THREAD_DEPTH	4096	/* KPROBE_FLAG_RP_THREAD */
#define KRETPROBE_THREAD_DATA	80

struct kretprobe_holder;

struct kretprobe {
	struct kprobe kp;		/* symbol_name/addr: a function entry */
	kretprobe_handler_t handler;	/* at return */
	kretprobe_handler_t entry_handler; /* non-zero: skip this return */
	/*
	 * Instances in flight at once over all threads (calls entered and
	 * not yet returned); <= 0: the kernel's default, max(10, 2 * CPUs).
	 * A call entered when all are in use is counted in nmissed.
	 */
	int maxactive;
	int nmissed;
	size_t data_size;		/* bytes of kretprobe_instance.data */

	/* private */
	struct kretprobe_holder *rph;
};

/*
 * One call in flight.  ret_addr is where the function returns to; fp is the
 * address of the stack slot that held it (the stack pointer at entry).
 */
struct kretprobe_instance {
	struct kretprobe_instance *__next;
	struct kretprobe_holder *rph;
	kprobe_opcode_t *ret_addr;
	void *fp;
	uintptr_t __domain;
	union {
		uint32_t __free_next;	/* in a pool's free stack */
		uint32_t __gen;		/* KPROBE_FLAG_RP_THREAD: of rph */
	};
	uint32_t __state;
	char data[] __attribute__((aligned(16)));
};

int register_kretprobe(struct kretprobe *rp);
void unregister_kretprobe(struct kretprobe *rp);
int register_kretprobes(struct kretprobe **rps, int num);
void unregister_kretprobes(struct kretprobe **rps, int num);

static inline int enable_kretprobe(struct kretprobe *rp)
{
	return enable_kprobe(&rp->kp);
}

static inline int disable_kretprobe(struct kretprobe *rp)
{
	return disable_kprobe(&rp->kp);
}

/* The kretprobe of @ri; NULL once it has been unregistered. */
struct kretprobe *get_kretprobe(struct kretprobe_instance *ri);

static inline unsigned long get_kretprobe_retaddr(struct kretprobe_instance *ri)
{
	return (unsigned long)ri->ret_addr;
}

/* ---- registers ---------------------------------------------------------- */

static inline unsigned long regs_return_value(const struct pt_regs *regs)
{
	return regs->ax;
}

static inline void regs_set_return_value(struct pt_regs *regs,
					 unsigned long rc)
{
	regs->ax = rc;
}

static inline unsigned long instruction_pointer(const struct pt_regs *regs)
{
	return regs->ip;
}

static inline void instruction_pointer_set(struct pt_regs *regs,
					   unsigned long val)
{
	regs->ip = val;
}

static inline unsigned long user_stack_pointer(const struct pt_regs *regs)
{
	return regs->sp;
}

/* The kernel's name for the same thing. */
static inline unsigned long kernel_stack_pointer(const struct pt_regs *regs)
{
	return regs->sp;
}

/* Register at byte @offset of struct pt_regs; 0 past its end. */
static inline unsigned long regs_get_register(const struct pt_regs *regs,
					      unsigned int offset)
{
	if (offset > sizeof(*regs) - sizeof(unsigned long) ||
	    offset % sizeof(unsigned long))
		return 0;
	return *(const unsigned long *)((const char *)regs + offset);
}

/* Offset of register @name ("ax", "r12", "ip", ...), or -EINVAL. */
int regs_query_register_offset(const char *name);
/* Name of the register at @offset, or NULL. */
const char *regs_query_register_name(unsigned int offset);

/*
 * The @n-th word above the stack pointer, read without faulting; 0 if it
 * cannot be read.  At a function entry, word 0 is the return address.
 */
unsigned long regs_get_kernel_stack_nth(const struct pt_regs *regs,
					unsigned int n);

/*
 * The @n-th (0-based) argument of the function entered, by the SysV ABI:
 * di, si, dx, cx, r8, r9, then the stack.  Valid at a function's entry.
 */
unsigned long regs_get_kernel_argument(const struct pt_regs *regs,
				       unsigned int n);

/* ---- reading memory from handlers --------------------------------------- */

/*
 * Copy @len bytes from @src without crashing on a bad address: 0, or
 * -EFAULT when some byte could not be read (@dst then holds a prefix).
 * No system call: a fault is caught by libdprobe's SIGSEGV/SIGBUS handler
 * and the copy returns early.
 */
int dp_probe_read(void *dst, const void *src, size_t len);

/*
 * Copy a NUL-terminated string of at most @size bytes, the NUL included
 * (truncated strings are terminated): the length copied with the NUL, or
 * -EFAULT.  @size 0 returns 0.
 */
long dp_probe_read_str(char *dst, const void *src, size_t size);

#ifdef __cplusplus
}
#endif

#endif
