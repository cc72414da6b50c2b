/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Loading a shared library into a running process from outside, the way
 * the in-process engine (libdprobe.so) gets into a process dprobe attaches
 * to: every thread is stopped with ptrace, one of them calls the dynamic
 * loader's dlopen() and then a function of the loaded library, and the
 * process is let go exactly where it was.
 *
 * How a call is run.  The calling thread gets its registers set to enter
 * the function (orig_ax = -1, so a system call it was interrupted in is
 * not restarted into the call) on a private stack in an anonymous mapping
 * made for the occasion, with a return address pointing at a stub in the
 * same mapping.  The stub makes a getpid() system call, where the tracer
 * (running the thread with PTRACE_SYSCALL) takes the return value.  No
 * signal is generated for the purpose: while it calls, the thread has
 * every signal blocked except the synchronous ones (SIGSEGV, SIGBUS,
 * SIGILL, SIGFPE, SIGTRAP, SIGSYS), even those the thread had blocked
 * (one raised while blocked would have its action reset by the kernel),
 * so signals sent meanwhile stay queued in the kernel, siginfo and all,
 * and are delivered once the original mask is back.  Threads the called code
 * creates start with that mask too (set their own if they want signals).
 * Other threads stay stopped: a call must not wait for them, but may
 * create threads and wait for those (they run untraced).  Nothing is
 * written to the thread's own stack.  Afterwards its general registers (orig_ax too:
 * an interrupted system call restarts as it would have), its FPU/SSE/AVX
 * state and its signal mask are restored and the mapping is removed.
 *
 * Which thread calls.  One blocked in a system call other than a futex
 * wait if there is one (it holds no loader or malloc lock), then one in a
 * futex wait, then one running its own code, then one running inside libc
 * or the dynamic linker; one that blocks SIGTRAP (glibc blocks every
 * signal while it creates or ends a thread) only when no other can; never
 * a zombie.  A process stopped by job control is refused.
 *
 * Deadlock risk.  Every other thread is stopped during the calls: if one
 * of them was stopped while holding a lock dlopen() or the library's code
 * needs (the loader's lock, a malloc arena, stdio), or the calling thread
 * itself was interrupted inside such a section (only possible when no
 * thread was in a system call), the call cannot finish.  So before the
 * calls, threads stopped running C library or loader code, or in a system
 * call of the loader's (where such locks are held: glibc's pthread_create()
 * holds the loader's TLS lock, which dlopen() takes, while it sets up the
 * new thread's TLS), are let run a little and stopped again, until none
 * is (300 ms at most).  A lock held in the program's own code (a callback
 * of dl_iterate_phdr(), its own locks) is not seen.  Each call has a
 * timeout (dp_ptrace_inject_timeout_ms, 5 s): then every thread is let go
 * and the calling thread finishes the call on its own; the stub then puts
 * it back as it was (rt_sigreturn from a frame holding its original
 * registers, FPU state and signal mask; an interrupted system call is
 * re-executed from the start, where the kernel would have resumed a
 * nanosleep() with the remaining time).  The mapping (about 270 KiB) stays.
 * If dprobe itself dies during a call the same happens.
 *
 * A program's own handling of synchronous signals is respected: a fault
 * raised by the call (a crashing library constructor, an int3 of the
 * library) is delivered if the program catches that signal at that
 * moment (a JIT's SIGSEGV handler, the agent's own SIGTRAP handler);
 * otherwise the call is abandoned and the thread put back, so that the
 * process survives, where the fault would have killed it.  What the call
 * left half-done stays so (a loader lock held by a crashed constructor).  A system call refused by a seccomp filter
 * with SECCOMP_RET_TRAP fails with EPERM inside the call when the program
 * has no SIGSYS handler, so dlopen() fails cleanly.  A filter that kills
 * kills (the process exited: -ESRCH).
 *
 * Signals: the kernel keeps those sent to the calling thread or the
 * process during the calls.  Only signals that cannot be blocked or are
 * left unblocked (a SIGSTOP, a kill(SIGSEGV)) are taken off the thread by
 * ptrace; they are sent again to it after the detach (with their original
 * siginfo for sigqueue()d ones, as tgkill() from dprobe otherwise).
 */
#ifndef DPROBE_PTRACE_INJECT_H
#define DPROBE_PTRACE_INJECT_H

#include <stddef.h>
#include <sys/types.h>

/* Time each remote call may take, in milliseconds (default 5000). */
extern unsigned int dp_ptrace_inject_timeout_ms;

/*
 * Load @lib (an absolute path, as the target sees its file system) into
 * running process @pid with dlopen(lib, RTLD_NOW) and call
 * int @fn(const char *@arg) in it (@arg may be NULL); *@ret gets its return
 * value.  dlopen() and dlerror()/dlsym()/dlclose() are taken from the
 * target's libc (glibc >= 2.34, musl), else from libdl, else glibc's
 * __libc_dlopen_mode()/__libc_dlsym() (no error text then).  Calling it
 * again for the same library calls @fn again (dlopen() counts references).
 *
 * The process must not be traced by anyone: every thread is attached with
 * PTRACE_SEIZE and stopped, the calls are run on one thread, and all are
 * detached before returning (any thread may call this; nothing is left
 * attached, except a thread that never stopped, e.g. the parent of a
 * vfork() child that does not exec: it is let go when dprobe exits).
 *
 * Returns 0, or -errno with @why filled:
 *   -EINVAL     @lib not absolute, @fn empty
 *   -E2BIG      @lib, @fn and @arg longer than 64 KiB together
 *   -ESRCH      no such process, or it exited (or was killed) meanwhile
 *   -EBUSY      already traced (TracerPid named)
 *   -EPERM      not allowed to trace it
 *   -EAGAIN     stopped by job control (SIGSTOP, ^Z)
 *   -ENOEXEC    no dynamic loader (statically linked), or no dlopen in it
 *   -ELIBACC    dlopen() failed: dlerror()'s text, read from the target
 *   -ENOENT     the library has no @fn (the library is dlclose()d again)
 *   -EFAULT     the call crashed and the program does not catch the signal
 *   -ETIMEDOUT  a call did not return in time (see above)
 *   -ENOMEM     no memory here or in the target
 * On every failure but -ETIMEDOUT (and an exit) the process is left
 * running with its threads as they were.
 */
int dp_ptrace_inject(pid_t pid, const char *lib, const char *fn,
		     const char *arg, long *ret, char *why, size_t whylen);

/*
 * The same, with @flags:
 *   DP_INJECT_AGENT_SIGNALS  the library (libdprobe.so) owns SIGTRAP and,
 *       from the call on, guards the C library's sigaction(),
 *       sigprocmask() and pthread_sigmask() with int3s, which kill a
 *       thread that executes one with SIGTRAP blocked.  So before the
 *       calls a thread stopped inside one of those functions is single-
 *       stepped until it has returned (it would finish the call unguarded),
 *       and once the function has returned SIGTRAP is unblocked in every
 *       thread (the calling thread's restored mask too).  A thread inside
 *       sigsuspend(), sigtimedwait(), ppoll() and the like gets its own
 *       mask back from the kernel when that call ends, SIGTRAP as it was.
 */
#define DP_INJECT_AGENT_SIGNALS	1u
int dp_ptrace_inject_flags(pid_t pid, const char *lib, const char *fn,
			   const char *arg, unsigned int flags, long *ret,
			   char *why, size_t whylen);

#endif
