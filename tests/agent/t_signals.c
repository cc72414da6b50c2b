// SPDX-License-Identifier: GPL-2.0
/*
 * A program with its own SIGTRAP and SIGSEGV handlers, installed before
 * and after probes are registered: its handlers still get its own traps
 * and faults (with its mask, flags and the right context), sigaction()
 * reports its own actions, the default actions still kill, and probes keep
 * working throughout.  Also: a fault of an instruction run out of line is
 * reported at the probed address, SIGTRAP cannot be blocked, and
 * dp_probe_read() works where SIGSEGV is blocked.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include <dprobe/kprobes.h>

#include "agent_test.h"

__attribute__((noipa)) long probed(long x)
{
	return x + 3;
}

__attribute__((noipa)) long probed2(long x)
{
	return x + 4;
}

/* mov (%rdi), %rax as a function's first instruction: run out of line */
__asm__("\t.text\n\t.globl load_at\n\t.type load_at, @function\nload_at:\n"
	"\tmov (%rdi), %rax\n\tret\n\t.size load_at, . - load_at\n");
extern long load_at(const long *p);

/* call *(%rdi): emulated; through a bad pointer its fault slot faults */
__asm__("\t.text\n\t.globl call_via\n\t.type call_via, @function\ncall_via:\n"
	"\tcall *(%rdi)\n\tret\n\t.size call_via, . - call_via\n");
extern long call_via(long (**fn)(long));

static volatile int hits;

/* A load from @a, which the compiler cannot see through. */
__attribute__((noipa)) static long deref(uintptr_t a)
{
	return *(volatile long *)a;
}

static int count_pre(struct kprobe *p, struct pt_regs *regs)
{
	(void)p;
	(void)regs;
	hits++;
	return 0;
}

static struct kprobe kp = { .symbol_name = "probed", .pre_handler = count_pre };
static struct kprobe kload = { .symbol_name = "load_at",
			       .pre_handler = count_pre };

static volatile int traps, trap_code;
static volatile unsigned long trap_ip;
static volatile int trap_masked;		/* SIGTRAP blocked in the handler? */

static void on_trap(int sig, siginfo_t *si, void *ctx)
{
	sigset_t cur;

	(void)sig;
	traps++;
	trap_code = si->si_code;
	trap_ip = (unsigned long)((ucontext_t *)ctx)->uc_mcontext.gregs[REG_RIP];
	sigprocmask(SIG_BLOCK, NULL, &cur);
	trap_masked = sigismember(&cur, SIGUSR2);
	/* a probe hit inside the program's own SIGTRAP handler */
	probed(1);
}

static void on_trap2(int sig)
{
	(void)sig;
	traps += 100;
}

static sigjmp_buf segv_jb;
static volatile int segvs;
static void *volatile segv_addr;
static volatile unsigned long segv_ip;
static volatile long read_in_segv = 1;

static int pre_reads_bad(struct kprobe *p, struct pt_regs *regs)
{
	long v;

	(void)p;
	(void)regs;
	read_in_segv = dp_probe_read(&v, (void *)16, sizeof(v));
	return 0;
}

static void on_segv(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	segvs++;
	segv_addr = si->si_addr;
	segv_ip = (unsigned long)((ucontext_t *)ctx)->uc_mcontext.gregs[REG_RIP];
	/* SIGSEGV is blocked here: a probe reading bad memory must survive */
	probed(2);
	siglongjmp(segv_jb, 1);
}

static void install(int sig, void (*fn)(int, siginfo_t *, void *), int flags)
{
	struct sigaction sa = { 0 };

	sa.sa_sigaction = fn;
	sa.sa_flags = SA_SIGINFO | flags;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGUSR2);
	sigaction(sig, &sa, NULL);
}

__attribute__((noipa)) static void do_int3(void)
{
	__asm__ volatile("int3" ::: "memory");
}

static void test_trap_before(void)
{
	struct sigaction old;

	BEGIN("SIGTRAP handler installed before registering");
	install(SIGTRAP, on_trap, 0);
	CHECK_EQ(register_kprobe(&kp), 0);
	hits = traps = 0;
	CHECK_EQ(probed(1), 4);
	CHECK_EQ(hits, 1);
	do_int3();
	CHECK_EQ(traps, 1);
	CHECK_EQ(trap_code, SI_KERNEL);
	CHECK(trap_ip > (unsigned long)do_int3 &&
	      trap_ip < (unsigned long)do_int3 + 16, "ip %#lx", trap_ip);
	CHECK_EQ(trap_masked, 1);
	/* the probe inside the handler fired too */
	CHECK_EQ(hits, 2);
	raise(SIGTRAP);
	CHECK_EQ(traps, 2);
	CHECK_EQ(trap_code, SI_TKILL);
	CHECK_EQ(sigaction(SIGTRAP, NULL, &old), 0);
	CHECK(old.sa_sigaction == on_trap, "sigaction reports %p",
	      (void *)old.sa_sigaction);
	END();
}

static void test_trap_after(void)
{
	BEGIN("SIGTRAP handler replaced after registering, with signal()");
	CHECK((void *)signal(SIGTRAP, on_trap2) == (void *)on_trap, "old handler");
	traps = hits = 0;
	do_int3();
	CHECK_EQ(traps, 100);
	CHECK_EQ(probed(1), 4);
	CHECK_EQ(hits, 1);
	END();
}

static void test_segv(void)
{
	BEGIN("SIGSEGV handler before and after registering");
	install(SIGSEGV, on_segv, 0);
	segvs = 0;
	if (!sigsetjmp(segv_jb, 1))
		deref(24);
	CHECK_EQ(segvs, 1);
	CHECK(segv_addr == (void *)24, "si_addr %p", segv_addr);
	unregister_kprobe(&kp);
	kp.addr = NULL;
	kp.pre_handler = pre_reads_bad;
	CHECK_EQ(register_kprobe(&kp), 0);
	install(SIGSEGV, on_segv, SA_NODEFER);
	if (!sigsetjmp(segv_jb, 1))
		deref(24);
	CHECK_EQ(segvs, 2);
	/* the probe ran in on_segv, where SIGSEGV was blocked (first round:
	 * not any more here, SA_NODEFER) and its read failed cleanly */
	CHECK_EQ(read_in_segv, -EFAULT);
	END();
}

static void test_segv_blocked(void)
{
	BEGIN("dp_probe_read from a probe hit while SIGSEGV is blocked");
	install(SIGSEGV, on_segv, 0);
	segvs = 0;
	read_in_segv = 1;
	if (!sigsetjmp(segv_jb, 1))
		deref(32);
	CHECK_EQ(segvs, 1);
	CHECK_EQ(read_in_segv, -EFAULT);
	END();
}

static void test_xol_fault(void)
{
	BEGIN("a fault of an instruction run out of line is at the probe");
	CHECK_EQ(register_kprobe(&kload), 0);
	hits = segvs = 0;
	if (!sigsetjmp(segv_jb, 1))
		load_at((const long *)40);
	CHECK_EQ(segvs, 1);
	CHECK(segv_addr == (void *)40, "si_addr %p", segv_addr);
	CHECK(segv_ip == (unsigned long)load_at, "ip %#lx, probe at %p",
	      segv_ip, (void *)load_at);
	CHECK(hits >= 1, "hits %d", hits);
	long v = 5;
	CHECK_EQ(load_at(&v), 5);
	unregister_kprobe(&kload);
	END();
}

static long seven(long x)
{
	(void)x;
	return 7;
}

static void test_emulated_fault(void)
{
	struct kprobe kc = { .symbol_name = "call_via", .pre_handler = count_pre };
	long (*fn)(long) = seven;

	BEGIN("an emulated call through a bad pointer faults at the probe");
	CHECK_EQ(register_kprobe(&kc), 0);
	CHECK_EQ(call_via(&fn), 7);
	hits = segvs = 0;
	if (!sigsetjmp(segv_jb, 1))
		call_via((long (**)(long))72);
	CHECK_EQ(segvs, 1);
	CHECK(segv_addr == (void *)72, "si_addr %p", segv_addr);
	CHECK(segv_ip == (unsigned long)call_via, "ip %#lx, probe at %p",
	      segv_ip, (void *)call_via);
	CHECK_EQ(call_via(&fn), 7);
	unregister_kprobe(&kc);
	END();
}

static void test_block_trap(void)
{
	sigset_t set, old;

	BEGIN("SIGTRAP cannot be blocked, so a probe hit does not kill");
	kp.pre_handler = count_pre;
	sigemptyset(&set);
	sigaddset(&set, SIGTRAP);
	sigaddset(&set, SIGUSR1);
	CHECK_EQ(sigprocmask(SIG_BLOCK, &set, &old), 0);
	CHECK_EQ(pthread_sigmask(SIG_BLOCK, &set, NULL), 0);
	sigprocmask(SIG_BLOCK, NULL, &set);
	CHECK(!sigismember(&set, SIGTRAP), "SIGTRAP blocked");
	CHECK(sigismember(&set, SIGUSR1), "SIGUSR1 not blocked");
	hits = 0;
	CHECK_EQ(probed(5), 8);
	CHECK_EQ(hits, 1);
	sigprocmask(SIG_SETMASK, &old, NULL);
	END();
}

static volatile long usr1_result;

static void on_usr1(int sig)
{
	(void)sig;
	usr1_result = probed(10);
}

static void test_full_mask_handler(void)
{
	struct sigaction sa = { 0 };

	BEGIN("a probe hit in a handler installed with every signal masked");
	sa.sa_handler = on_usr1;
	sigfillset(&sa.sa_mask);
	CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
	kp.pre_handler = count_pre;
	hits = 0;
	raise(SIGUSR1);
	CHECK_EQ(usr1_result, 13);
	CHECK_EQ(hits, 1);
	END();
}

/* Exit status of a child that runs @fn. */
static int in_child(void (*fn)(void))
{
	int st = 0;
	pid_t pid = fork();

	if (!pid) {
		fn();
		_exit(0);
	}
	waitpid(pid, &st, 0);
	return st;
}

static void child_int3_default(void)
{
	signal(SIGTRAP, SIG_DFL);
	probed(1);
	do_int3();
}

static void child_segv_default(void)
{
	signal(SIGSEGV, SIG_DFL);
	probed(1);
	deref(48);
}

static void child_segv_ignored(void)
{
	signal(SIGSEGV, SIG_IGN);
	deref(56);
}

static volatile int oneshot;

static void on_trap_once(int sig)
{
	(void)sig;
	oneshot++;
}

static void child_resethand(void)
{
	struct sigaction sa = { 0 };

	sa.sa_handler = on_trap_once;
	sa.sa_flags = SA_RESETHAND;
	sigaction(SIGTRAP, &sa, NULL);
	do_int3();
	if (oneshot != 1)
		_exit(3);
	do_int3();
}

static void child_probe_hit(void)
{
	_exit(probed(1) == 4 && hits == 1 ? 0 : 4);
}

/* An int3, or the jmp of a jump-optimised probe, at @fn. */
static bool patched(const void *fn)
{
	uint8_t b = *(volatile const uint8_t *)fn;

	return b == 0xcc || b == 0xe9;
}

/* A child registers its own probe: its text, not the parent's, changes. */
static void child_registers(void)
{
	struct kprobe k2 = { .symbol_name = "probed2", .pre_handler = count_pre };

	hits = 0;
	if (register_kprobe(&k2) || !patched((const void *)probed2))
		_exit(5);
	if (probed2(1) != 5 || hits != 1)
		_exit(6);
	unregister_kprobe(&k2);
	_exit(patched((const void *)probed2) ? 7 : 0);
}

static void test_default_actions(void)
{
	int st;

	BEGIN("default and ignored actions kill as the kernel's would");
	st = in_child(child_int3_default);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGTRAP, "status %#x", st);
	st = in_child(child_segv_default);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV, "status %#x", st);
	st = in_child(child_segv_ignored);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV, "status %#x", st);
	st = in_child(child_resethand);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGTRAP, "status %#x", st);
	hits = 0;
	kp.pre_handler = count_pre;
	st = in_child(child_probe_hit);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "probe in a child: %#x", st);
	st = in_child(child_registers);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "register in a child: %#x", st);
	CHECK(!patched((const void *)probed2), "the child wrote our text");
	END();
}

/* ---- fork while another thread is inside a handler ------------------- */

static int block_pipe[2];

__attribute__((noipa)) long blocked_fn(long x)
{
	return x - 1;
}

static int pre_blocks(struct kprobe *p, struct pt_regs *regs)
{
	char c;

	(void)p;
	(void)regs;
	return read(block_pipe[0], &c, 1) == 1 ? 0 : 0;
}

static void *blocker(void *arg)
{
	(void)arg;
	return (void *)blocked_fn(10);
}

static void child_unregisters(void)
{
	struct kprobe k2 = { .symbol_name = "probed2", .pre_handler = count_pre };

	alarm(10);
	if (register_kprobe(&k2))
		_exit(5);
	/* waits for a grace period: the parent's blocked thread is not here */
	unregister_kprobe(&k2);
	_exit(0);
}

static void test_fork_in_handler(void)
{
	struct kprobe kb = { .symbol_name = "blocked_fn",
			     .pre_handler = pre_blocks };
	pthread_t t;
	void *r;
	int st;

	BEGIN("fork while a thread is inside a handler: the child can unregister");
	CHECK_EQ(pipe(block_pipe), 0);
	CHECK_EQ(register_kprobe(&kb), 0);
	pthread_create(&t, NULL, blocker, NULL);
	usleep(50000);
	st = in_child(child_unregisters);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child: %#x", st);
	CHECK(write(block_pipe[1], "x", 1) == 1, "write");
	pthread_join(t, &r);
	CHECK_EQ((long)r, 9);
	unregister_kprobe(&kb);
	close(block_pipe[0]);
	close(block_pipe[1]);
	END();
}

int main(void)
{
	test_trap_before();
	test_trap_after();
	test_segv();
	test_segv_blocked();
	test_xol_fault();
	test_emulated_fault();
	test_block_trap();
	test_full_mask_handler();
	test_default_actions();
	test_fork_in_handler();
	unregister_kprobe(&kp);
	return t_exit();
}
