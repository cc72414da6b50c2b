// SPDX-License-Identifier: GPL-2.0
/*
 * Our SIGTRAP, SIGSEGV and SIGBUS actions, and the program's behind them;
 * likewise DP_SIG_WHERE (a real-time signal opt.c sends to every thread
 * before patching a jump), whose other senders reach the program's action.
 *
 * When the library loads, it takes those three actions (SA_SIGINFO |
 * SA_ONSTACK | SA_NODEFER, nothing blocked) and keeps the program's
 * previous ones.  From then on sigaction(), signal() and their variants,
 * interposed here, read and write the program's copy for those signals
 * and never reach the kernel, so the program can neither see nor remove
 * ours.  A signal that is not ours (an int3 of the program, a fault
 * outside our copy routines, a SIGTRAP sent with kill) is passed on as
 * the kernel would have delivered it: with the program's mask and flags,
 * or with the default action.
 *
 * A thread that executes an int3 while it blocks SIGTRAP is killed by the
 * kernel (a forced signal resets the action to SIG_DFL), so SIGTRAP is
 * also removed from every mask the program sets through sigprocmask(),
 * pthread_sigmask() and the sa_mask of sigaction().  Masks glibc sets
 * internally (while it creates a thread, in posix_spawn's child) are out
 * of reach; a probe hit there kills the process.
 *
 * These wrappers interpose only when libdprobe.so comes before libc in
 * the symbol search order (linked as a dependency, or LD_PRELOAD).  When
 * it was dlopen()ed instead (injected into a running process), the
 * program's calls go straight to libc, so libdprobe probes libc's own
 * sigaction(), sigprocmask() and pthread_sigmask() (every other libc
 * entry, signal(), sysv_signal(), sigset()..., goes through one of them)
 * and does their work from the pre handler: the "interposition" then
 * happens at the instruction level, with a trap per call.
 *
 * On sigprocmask() and pthread_sigmask() the guards are jumps where the
 * code allows (maskguard.c): glibc's posix_spawn() child calls them with
 * every signal blocked, and an int3 there kills it.  guard_sigmask()
 * works only where a jump cannot go, or a probe's int3 covers it.
 *
 * Those guards are int3s in libc, there only while some other probe is
 * armed (site.c counts them) or a session of dprobe's is on (channel.c):
 * every byte of the process is its own again once dprobe detaches, and a
 * thread that blocks SIGTRAP (which an int3 then kills) meets none of
 * them between sessions.  Our actions stay installed for good, whatever
 * is armed: a thread that trapped on an int3 of ours an instant before
 * it went may take the signal later, and must find our handler then.
 * While no guard is armed the program's sigaction() reaches the kernel,
 * so when the guards come back, any of our actions the program replaced
 * meanwhile is taken back, what it put there kept as its own (retake()).
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "engine/agent/agent.h"

/* glibc's own name for sigaction(), which nobody interposes */
extern int __sigaction(int sig, const struct sigaction *act,
		       struct sigaction *oact);

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef int (*sigmask_fn)(int, const sigset_t *, sigset_t *);

static sigaction_fn real_sigaction;
static sigmask_fn real_sigprocmask, real_pthread_sigmask;
static bool installed;
static uint64_t restorer;

/* the flags of our actions */
#define OUR_FLAGS (SA_SIGINFO | SA_ONSTACK | SA_NODEFER | SA_RESTART)

static void trap_handler(int sig, siginfo_t *si, void *ctx);
static void where_handler(int sig, siginfo_t *si, void *ctx);
static void fault_handler(int sig, siginfo_t *si, void *ctx);

static bool is_ours(void *handler)
{
	return handler == (void *)trap_handler ||
	       handler == (void *)where_handler ||
	       handler == (void *)fault_handler;
}

/*
 * The program's actions for our four signals.  Two copies and a
 * generation count: a writer fills the copy not in use, then bumps the
 * count; a reader (maybe a signal handler) retries if two writes passed
 * while it copied.  Writers are serialised by prog_lock.
 */
struct prog_action {
	struct sigaction act[2];
	unsigned long gen;
};

static struct prog_action prog[4];
static pthread_mutex_t prog_lock = PTHREAD_MUTEX_INITIALIZER;

static int slot_of(int sig)
{
	switch (sig) {
	case SIGTRAP: return 0;
	case SIGSEGV: return 1;
	case SIGBUS: return 2;
	default: return sig == DP_SIG_WHERE ? 3 : -1;
	}
}

static void prog_read(int sig, struct sigaction *out)
{
	struct prog_action *p = &prog[slot_of(sig)];

	for (int tries = 0; tries < 100; tries++) {
		unsigned long g = __atomic_load_n(&p->gen, __ATOMIC_ACQUIRE);
		const char *src = (const char *)&p->act[g & 1];
		char *dst = (char *)out;

		for (size_t i = 0; i < sizeof(*out); i++)
			dst[i] = src[i];
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&p->gen, __ATOMIC_RELAXED) - g < 2)
			return;
	}
}

static void prog_write(int sig, const struct sigaction *act)
{
	struct prog_action *p = &prog[slot_of(sig)];

	/*
	 * One of our handlers, which the program read while no guard was
	 * armed and now puts back: the action it had before stays its own
	 * (chaining to our own handler would loop).
	 */
	if (is_ours((void *)act->sa_sigaction))
		return;
	pthread_mutex_lock(&prog_lock);
	p->act[(p->gen + 1) & 1] = *act;
	__atomic_store_n(&p->gen, p->gen + 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&prog_lock);
}

static bool is_installed(void)
{
	return __atomic_load_n(&installed, __ATOMIC_ACQUIRE);
}

/* ---- passing a signal on --------------------------------------------- */

static long raw_tgkill(int sig)
{
	return syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), sig);
}

/* The default action of our signals: dump core, here and now. */
static void default_action(int sig)
{
	struct sigaction dfl;
	sigset_t set;

	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	real_sigaction(sig, &dfl, NULL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	real_pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	raw_tgkill(sig);
}

static void call_program(int sig, siginfo_t *si, ucontext_t *uc,
			 struct sigaction *act)
{
	sigset_t mask = uc->uc_sigmask, old;

	/* what the kernel would block while the program's handler runs */
	for (int s = 1; s < NSIG; s++)
		if (sigismember(&act->sa_mask, s))
			sigaddset(&mask, s);
	if (!(act->sa_flags & SA_NODEFER))
		sigaddset(&mask, sig);
	sigdelset(&mask, SIGTRAP);
	if (act->sa_flags & SA_RESETHAND) {
		struct sigaction dfl;

		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		prog_write(sig, &dfl);
	}
	real_pthread_sigmask(SIG_SETMASK, &mask, &old);
	if (sig != SIGTRAP)
		dp_tls.prog_fault++;
	if (act->sa_flags & SA_SIGINFO)
		act->sa_sigaction(sig, si, uc);
	else
		act->sa_handler(sig);
	if (sig != SIGTRAP)
		dp_tls.prog_fault--;
	real_pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void dp_chain(int sig, siginfo_t *si, ucontext_t *uc)
{
	int saved = errno;
	struct sigaction act;

	prog_read(sig, &act);
	if (act.sa_handler == SIG_DFL) {
		default_action(sig);
	} else if (act.sa_handler == SIG_IGN) {
		/* a trap or fault cannot be ignored: the kernel would kill */
		if (si->si_code > 0)
			default_action(sig);
	} else {
		call_program(sig, si, uc, &act);
	}
	errno = saved;
}

/* ---- our handlers -------------------------------------------------------- */

static void trap_handler(int sig, siginfo_t *si, void *ctx)
{
	/* int3 is reported as SI_KERNEL; kill/raise are not ours */
	if (si->si_code == SI_KERNEL && dp_hit_trap(ctx))
		return;
	dp_chain(sig, si, ctx);
}

/* opt.c asks where this thread is; anything else is the program's */
static void where_handler(int sig, siginfo_t *si, void *ctx)
{
	if (!dp_opt_where(si, ctx))
		dp_chain(sig, si, ctx);
}

static void fault_handler(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	greg_t *g = uc->uc_mcontext.gregs;
	struct kprobe *cur = dp_tls.cur;
	uint64_t ip = (uint64_t)g[REG_RIP], fix, pair;
	struct dp_site *s;

	if (si->si_code > 0 && ((fix = dp_nofault_fixup(ip)) ||
				(fix = dp_word_nofault_fixup(ip)))) {
		g[REG_RIP] = (greg_t)fix;
		return;
	}
	if (cur && cur->fault_handler) {
		struct pt_regs regs;

		dp_regs_from_uc(uc, &regs);
		if (cur->fault_handler(cur, &regs, (int)g[REG_TRAPNO])) {
			dp_regs_to_uc(&regs, uc);
			return;
		}
	}
	/*
	 * A fault of a displaced instruction in its slot is reported at the
	 * probed address, as the kernel's kprobe_fault_handler() does; if the
	 * program's handler returns, the probe is hit again.
	 */
	s = dp_slot_site(ip, &pair);
	if (s && s->slot == pair && (ip == pair || ip == pair + DP_SLOT_POST))
		g[REG_RIP] = (greg_t)s->addr;
	dp_chain(sig, si, uc);
}

/* ---- installing them --------------------------------------------------- */

/* Without a next definition (no libc?), the system call itself. */
static int sys_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	if (syscall(SYS_rt_sigprocmask, how, set, old, _NSIG / 8))
		return -1;
	return 0;
}

static void find_real(void)
{
	real_sigaction = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
	if (!real_sigaction)
		real_sigaction = __sigaction;
	real_sigprocmask = (sigmask_fn)dlsym(RTLD_NEXT, "sigprocmask");
	if (!real_sigprocmask)
		real_sigprocmask = sys_sigmask;
	real_pthread_sigmask = (sigmask_fn)dlsym(RTLD_NEXT, "pthread_sigmask");
	if (!real_pthread_sigmask)
		real_pthread_sigmask = sys_sigmask;
}

int dp_signals_install(void)
{
	const int sigs[] = { SIGTRAP, SIGSEGV, SIGBUS, DP_SIG_WHERE };
	struct sigaction ours, old;

	find_real();
	memset(&ours, 0, sizeof(ours));
	sigemptyset(&ours.sa_mask);
	ours.sa_flags = OUR_FLAGS;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		ours.sa_sigaction = sigs[i] == SIGTRAP ? trap_handler :
				    sigs[i] == DP_SIG_WHERE ? where_handler :
				    fault_handler;
		if (real_sigaction(sigs[i], &ours, &old))
			return -errno;
		prog_write(sigs[i], &old);
	}
	if (!real_sigaction(SIGTRAP, NULL, &old))
		restorer = (uint64_t)(uintptr_t)old.sa_restorer;
	__atomic_store_n(&installed, true, __ATOMIC_RELEASE);
	return 0;
}

uint64_t dp_sigreturn_addr(void)
{
	return restorer;
}

/* ---- guards on libc's own functions (when not interposing) -------------- */

#define SIGBIT(s) (1ul << ((s) - 1))

/* Return from the probed function with @ret, as if it had run. */
static int guard_return(struct pt_regs *regs, uint64_t caller, long ret)
{
	regs->ax = (unsigned long)ret;
	regs->ip = caller;
	regs->sp += 8;
	return 1;
}

/* The caller of the function entered at @regs, unless it is us. */
static bool foreign_caller(const struct pt_regs *regs, uint64_t *caller)
{
	return !dp_copy_nofault(caller, (const void *)regs->sp, 8) &&
	       !dp_in_self(*caller);
}

/* sigaction(sig, act, oact) on one of our signals: the program's copy. */
static int guard_sigaction(struct kprobe *p, struct pt_regs *regs)
{
	const void *uact = (const void *)regs->si;
	void *uoact = (void *)regs->dx;
	struct sigaction act, old;
	uint64_t caller;
	int sig = (int)regs->di;

	(void)p;
	if (slot_of(sig) < 0 || !foreign_caller(regs, &caller))
		return 0;
	/* bad pointers: libc's own code reports EFAULT */
	if (uact && dp_copy_nofault(&act, uact, sizeof(act)))
		return 0;
	if (uoact) {
		prog_read(sig, &old);
		if (dp_copy_nofault(uoact, &old, sizeof(old)))
			return 0;
	}
	if (uact)
		prog_write(sig, &act);
	return guard_return(regs, caller, 0);
}

/*
 * sigprocmask()/pthread_sigmask() blocking SIGTRAP: done here without it
 * (and without glibc's internal SIGCANCEL/SIGSETXID, as glibc does).  A
 * mask changed by a system call from here would be undone by sigreturn:
 * the new mask goes into the trap's context instead, which sigreturn
 * then installs.  As the kernel does, 8 bytes of *oset are written.
 */
static int guard_sigmask(struct kprobe *p, struct pt_regs *regs)
{
	const unsigned long strip = SIGBIT(SIGTRAP) | SIGBIT(SIGKILL) |
				    SIGBIT(SIGSTOP) | SIGBIT(32) | SIGBIT(33);
	const void *uset = (const void *)regs->si;
	void *uoset = (void *)regs->dx;
	ucontext_t *uc = dp_tls.uc;
	unsigned long set, cur;
	int how = (int)regs->di;
	uint64_t caller;

	(void)p;
	if (!uc || !uset || (how != SIG_BLOCK && how != SIG_SETMASK) ||
	    !foreign_caller(regs, &caller) ||
	    dp_copy_nofault(&set, uset, sizeof(set)) ||
	    !(set & SIGBIT(SIGTRAP)))
		return 0;
	cur = uc->uc_sigmask.__val[0];
	if (uoset && dp_copy_nofault(uoset, &cur, sizeof(cur)))
		return 0;	/* let libc report EFAULT */
	set &= ~strip;
	uc->uc_sigmask.__val[0] = how == SIG_BLOCK ? cur | set : set;
	return guard_return(regs, caller, 0);
}

/*
 * Registered at load, and enabled for good: their int3s are written and
 * removed by site.c as guards_on says (dp_signals_guard_armed()), never
 * by disabling them.  A disabled guard whose int3 is still there would
 * let a thread through unguarded: pthread_sigmask(SIG_BLOCK, every
 * signal) blocking SIGTRAP, and its next pthread_sigmask() an instant
 * later meeting the int3 not yet removed, with SIGTRAP blocked.
 */
static struct kprobe guards[] = {
	/* they change regs->ip: never optimised */
	{ .symbol_name = "libc.so.6:sigaction", .pre_handler = guard_sigaction,
	  .flags = KPROBE_FLAG_NOOPT },
	{ .symbol_name = "libc.so.6:sigprocmask", .pre_handler = guard_sigmask,
	  .flags = KPROBE_FLAG_NOOPT },
	{ .symbol_name = "libc.so.6:pthread_sigmask",
	  .pre_handler = guard_sigmask, .flags = KPROBE_FLAG_NOOPT },
};
#define NGUARDS (sizeof(guards) / sizeof(guards[0]))
static bool guarding;		/* some guard is registered (->__site set) */

/*
 * A jump where it can be: no int3 on the mask functions (maskguard.c).
 * Where it cannot, a function that only calls one that has a jump needs
 * no guard.
 */
static void mask_jumps(void)
{
	uint64_t fn[NGUARDS];
	bool jump[NGUARDS];
	size_t n = 0;

	for (size_t i = 0; i < NGUARDS; i++)
		if (guards[i].__site && guards[i].pre_handler == guard_sigmask)
			fn[n++] = (uint64_t)(uintptr_t)guards[i].addr;
	for (size_t i = 0; i < n; i++)
		jump[i] = !dp_maskguard_build(fn[i]);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n && !jump[i]; j++)
			if (jump[j] && !dp_maskguard_cover(fn[i], fn[j]))
				break;
}

void dp_signals_guard(void)
{
	void *next = dlsym(RTLD_DEFAULT, "sigaction");

	if (!is_installed() || !next || dp_in_self((uint64_t)(uintptr_t)next))
		return;
	for (size_t i = 0; i < NGUARDS; i++) {
		if (register_kprobe(&guards[i])) {
			dp_warn("libdprobe: cannot guard libc's signal functions; "
				"the program may remove libdprobe's handlers\n");
			continue;
		}
		guarding = true;
	}
	mask_jumps();
	pthread_atfork(NULL, NULL, dp_maskguard_forked);
}

bool dp_signals_is_guard(const struct kprobe *p)
{
	return p >= guards && p < guards + NGUARDS;
}

/* The kernel's struct sigaction (rt_sigaction(2) with an 8-byte mask). */
struct ksigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	uint64_t mask;
};
#define KSA_RESTORER 0x04000000ul

/*
 * Our action for @sig back in the kernel if the program replaced it while
 * no guard was armed; what it had put there becomes its own action, as
 * if the guard had caught its call.  With raw system calls: libc's
 * sigaction() has the guard's int3 on it now, which this thread (the
 * program's, with the kprobes API) may meet with SIGTRAP blocked.
 */
static void retake(int sig, void *ours)
{
	struct ksigaction want = { ours, OUR_FLAGS | KSA_RESTORER,
				   (void *)(uintptr_t)restorer, 0 }, old;
	struct sigaction act;

	if (dp_raw_syscall6(SYS_rt_sigaction, sig, 0, (long)&old, 8, 0, 0) ||
	    old.handler == ours)
		return;
	/* (without a restorer from libc, ours cannot be made by hand) */
	if (!restorer ||
	    dp_raw_syscall6(SYS_rt_sigaction, sig, (long)&want, (long)&old, 8,
			    0, 0) || old.handler == ours)
		return;
	memset(&act, 0, sizeof(act));
	act.sa_handler = (sighandler_t)old.handler;
	act.sa_flags = (int)old.flags;
	act.sa_restorer = (void (*)(void))old.restorer;
	act.sa_mask.__val[0] = old.mask;
	prog_write(sig, &act);
}

/*
 * Until no thread has a SIGTRAP pending that it does not block (1 s at
 * most): a trap on an int3 of ours is queued when the int3 runs and
 * delivered, with the action of that moment, when the thread next
 * returns to user space.  Once none is pending every such trap is in our
 * handler, and the program may change the action from then on.
 */
static void wait_traps_delivered(void)
{
	const unsigned long long bit = 1ull << (SIGTRAP - 1);
	const struct timespec nap = { 0, 1000000 };

	for (int round = 0; round < 1000; round++) {
		DIR *d = opendir("/proc/self/task");
		struct dirent *de;
		bool pending = false;

		if (!d)
			return;
		while (!pending && (de = readdir(d))) {
			char path[300], buf[2048], *l;
			unsigned long long pnd = 0, blk = 0;
			ssize_t n;
			int fd;

			if (de->d_name[0] < '0' || de->d_name[0] > '9')
				continue;
			snprintf(path, sizeof(path), "/proc/self/task/%s/status",
				 de->d_name);
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				continue;
			n = read(fd, buf, sizeof(buf) - 1);
			close(fd);
			if (n <= 0)
				continue;
			buf[n] = '\0';
			if ((l = strstr(buf, "\nSigPnd:")))
				pnd = strtoull(l + 8, NULL, 16);
			if ((l = strstr(buf, "\nSigBlk:")))
				blk = strtoull(l + 8, NULL, 16);
			pending = pnd & ~blk & bit;
		}
		closedir(d);
		if (!pending)
			return;
		nanosleep(&nap, NULL);
	}
}

/*
 * The guards are wanted by armed sites (site.c) and by a session of
 * dprobe's that injected us (channel.c): the session takes them while
 * dprobe has every thread stopped, having stepped any thread inside those
 * functions out of them, and dprobe then unblocks SIGTRAP in each
 * (DP_INJECT_AGENT_SIGNALS): no thread can be inside its own "block
 * every signal ... restore the mask" when they come (the restore would
 * meet the int3 with SIGTRAP blocked, which kills), nor replace our
 * actions between our look at them and the guard.  Under the
 * registration mutex.
 */
static bool guards_on, sites_want, session_wants;

static void guards_apply(void)
{
	bool on = sites_want || session_wants;

	if (!guarding || on == guards_on)
		return;
	if (!on)
		wait_traps_delivered();
	guards_on = on;
	dp_maskguard_arm(on);
	for (size_t i = 0; i < NGUARDS; i++)
		if (guards[i].__site)
			dp_site_update(guards[i].__site);
	if (on) {
		/* after the guard on sigaction(): the program's next call
		 * reaches its own copy, not the kernel */
		retake(SIGTRAP, (void *)trap_handler);
		retake(SIGSEGV, (void *)fault_handler);
		retake(SIGBUS, (void *)fault_handler);
		retake(DP_SIG_WHERE, (void *)where_handler);
	} else {
		/* a trap on a guard an instant before it went */
		wait_traps_delivered();
	}
}

void dp_signals_guard_set(bool on)
{
	sites_want = on;
	guards_apply();
}

void dp_signals_guard_session(bool on)
{
	dp_lock();
	session_wants = on;
	guards_apply();
	dp_unlock();
}

void dp_signals_guard_forget(void)
{
	sites_want = session_wants = guards_on = false;
	dp_maskguard_arm(false);
}

bool dp_signals_guard_armed(void)
{
	return guards_on;
}

/* ---- the program's side ------------------------------------------------ */

DP_EXPORT int sigaction(int sig, const struct sigaction *act,
			struct sigaction *oact)
{
	struct sigaction copy;

	if (!real_sigaction)
		find_real();
	if (is_installed() && slot_of(sig) >= 0) {
		if (oact)
			prog_read(sig, oact);
		if (act)
			prog_write(sig, act);
		return 0;
	}
	if (is_installed() && act && sigismember(&act->sa_mask, SIGTRAP)) {
		copy = *act;
		sigdelset(&copy.sa_mask, SIGTRAP);
		act = &copy;
	}
	return real_sigaction(sig, act, oact);
}

static sighandler_t set_handler(int sig, sighandler_t h, int flags,
				bool mask_self)
{
	struct sigaction act, old;

	if (sig <= 0 || sig >= NSIG) {
		errno = EINVAL;
		return SIG_ERR;
	}
	memset(&act, 0, sizeof(act));
	act.sa_handler = h;
	act.sa_flags = flags;
	sigemptyset(&act.sa_mask);
	if (mask_self)
		sigaddset(&act.sa_mask, sig);
	if (sigaction(sig, &act, &old))
		return SIG_ERR;
	return old.sa_handler;
}

/* glibc's signal() has BSD semantics */
DP_EXPORT sighandler_t signal(int sig, sighandler_t h)
{
	return set_handler(sig, h, SA_RESTART, true);
}

DP_EXPORT sighandler_t bsd_signal(int sig, sighandler_t h)
{
	return set_handler(sig, h, SA_RESTART, true);
}

DP_EXPORT sighandler_t __sysv_signal(int sig, sighandler_t h)
{
	return set_handler(sig, h, SA_RESETHAND | SA_NODEFER, false);
}

DP_EXPORT sighandler_t sysv_signal(int sig, sighandler_t h)
{
	return __sysv_signal(sig, h);
}

/* @set without SIGTRAP in @copy when it would block it. */
static const sigset_t *strip_trap(int how, const sigset_t *set,
				  sigset_t *copy)
{
	if (!set || how == SIG_UNBLOCK || !is_installed() ||
	    !sigismember(set, SIGTRAP))
		return set;
	*copy = *set;
	sigdelset(copy, SIGTRAP);
	return copy;
}

DP_EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	sigset_t copy;

	if (!real_sigprocmask)
		find_real();
	return real_sigprocmask(how, strip_trap(how, set, &copy), old);
}

DP_EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	sigset_t copy;

	if (!real_pthread_sigmask)
		find_real();
	return real_pthread_sigmask(how, strip_trap(how, set, &copy), old);
}
