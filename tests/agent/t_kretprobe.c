// SPDX-License-Identifier: GPL-2.0
/*
 * kretprobes: return values and per-instance data, changing the return
 * value, recursion against maxactive, entry handlers that skip, longjmp
 * out of probed frames, tail calls, floating-point returns, backtraces
 * from a handler, threads, unregistering with calls in flight, and a
 * signal handler on a sigaltstack above the thread's stack.  Entries are
 * jump-optimised (unless DPROBE_NOOPT=1): a kprobe sharing the entry, a
 * hit nested in an entry handler, instances left by exited threads, and
 * threads calling while the kretprobe comes and goes.
 */
#include <errno.h>
#include <stdbool.h>
#include <execinfo.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dprobe/kprobes.h>

#include "agent_test.h"

/*
 * The whole file runs twice: with the kretprobes' pools, then with the
 * threads' return stacks (KPROBE_FLAG_RP_THREAD on every kretprobe it
 * registers), where maxactive sets no limit.
 */
static unsigned int rp_flags;

static int register_rp(struct kretprobe *rp)
{
	rp->kp.flags |= rp_flags;
	return register_kretprobe(rp);
}
#define register_kretprobe(rp) register_rp(rp)

__attribute__((noipa)) long square(long x)
{
	return x * x;
}

struct sq_data {
	long arg;
	char pad[56];
};

static int sq_rets, sq_bad;

static int sq_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct sq_data *d = (struct sq_data *)ri->data;

	d->arg = (long)regs->di;
	memset(d->pad, 0x5a, sizeof(d->pad));
	return 0;
}

static struct kretprobe sq_rp;

static int sq_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct sq_data *d = (struct sq_data *)ri->data;

	__atomic_fetch_add(&sq_rets, 1, __ATOMIC_RELAXED);
	if ((long)regs_return_value(regs) != d->arg * d->arg ||
	    get_kretprobe(ri) != &sq_rp || regs->ip != get_kretprobe_retaddr(ri) ||
	    regs->sp != (unsigned long)ri->fp + 8 || d->pad[55] != 0x5a)
		__atomic_fetch_add(&sq_bad, 1, __ATOMIC_RELAXED);
	return 0;
}

static struct kretprobe sq_rp = {
	.kp.symbol_name = "square",
	.handler = sq_ret,
	.entry_handler = sq_entry,
	.data_size = sizeof(struct sq_data),
	.maxactive = 64,
};

/* The counts of sq_rp's calls back to nothing. */
static void sq_reset(void)
{
	sq_rets = sq_bad = 0;
	sq_rp.nmissed = 0;
}

static void test_values(void)
{
	long sum = 0;

	BEGIN("return value, data, retaddr and sp seen by the handlers");
	CHECK_EQ(register_kretprobe(&sq_rp), 0);
	sq_rets = sq_bad = 0;
	for (long i = 0; i < 10; i++)
		sum += square(i);
	CHECK_EQ(sum, 285);
	CHECK_EQ(sq_rets, 10);
	CHECK_EQ(sq_bad, 0);
	CHECK_EQ(sq_rp.nmissed, 0);
	END();
}

static int set_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	(void)ri;
	regs_set_return_value(regs, 99);
	return 0;
}

static int skip_odd(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	(void)ri;
	return regs->di & 1;
}

static void test_change_and_skip(void)
{
	struct kretprobe rp = { .kp.symbol_name = "square", .handler = set_ret,
				.entry_handler = skip_odd };

	BEGIN("a handler changes the return value; entry_handler skips calls");
	unregister_kretprobe(&sq_rp);
	CHECK_EQ(register_kretprobe(&rp), 0);
	CHECK_EQ(square(4), 99);
	CHECK_EQ(square(3), 9);
	unregister_kretprobe(&rp);
	CHECK_EQ(square(4), 16);
	sq_rp.kp.addr = NULL;
	CHECK_EQ(register_kretprobe(&sq_rp), 0);
	END();
}

/* ---- recursion ------------------------------------------------------------ */

static int depth, calls_deeper_than;
static int fib_rets;

/* The asm keeps GCC from turning the recursion into a loop. */
__attribute__((noipa)) long fib(long n)
{
	long a, b;

	if (n < 2)
		return n;
	a = fib(n - 1);
	__asm__ volatile("" : "+r"(a));
	b = fib(n - 2);
	__asm__ volatile("" : "+r"(b));
	return a + b;
}

/* The same recursion, counting calls made deeper than @limit. */
static long fib_count(long n, int limit)
{
	long r;

	if (++depth > limit)
		calls_deeper_than++;
	r = n < 2 ? n : fib_count(n - 1, limit) + fib_count(n - 2, limit);
	depth--;
	return r;
}

static int fib_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	(void)ri;
	(void)regs;
	fib_rets++;
	return 0;
}

static void test_recursion(void)
{
	struct kretprobe rp = { .kp.symbol_name = "fib", .handler = fib_ret,
				.maxactive = 100 };
	long calls;

	BEGIN("recursion: every call traced when maxactive suffices, else missed");
	calls_deeper_than = 0;
	CHECK_EQ(fib_count(15, 1000), 610);
	calls = 1973;		/* calls of fib(15) */
	CHECK_EQ(register_kretprobe(&rp), 0);
	fib_rets = 0;
	CHECK_EQ(fib(15), 610);
	CHECK_EQ(fib_rets, calls);
	CHECK_EQ(rp.nmissed, 0);
	unregister_kretprobe(&rp);

	rp.kp.addr = NULL;
	rp.maxactive = 5;
	CHECK_EQ(register_kretprobe(&rp), 0);
	fib_rets = 0;
	calls_deeper_than = 0;
	/* a return stack has no maxactive: its limit is its depth */
	fib_count(15, rp_flags ? KRETPROBE_THREAD_DEPTH : 5);
	CHECK_EQ(fib(15), 610);
	CHECK_EQ(rp.nmissed, calls_deeper_than);
	CHECK_EQ(fib_rets, calls - calls_deeper_than);
	unregister_kretprobe(&rp);
	END();
}



/* ---- longjmp -------------------------------------------------------------- */

static jmp_buf jb;
static int deep_rets;

__attribute__((noipa)) long deep(long n, int jump)
{
	long r;

	if (n == 0) {
		if (jump)
			longjmp(jb, 1);
		return 0;
	}
	r = deep(n - 1, jump);
	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

static int deep_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	(void)ri;
	(void)regs;
	deep_rets++;
	return 0;
}

static void test_longjmp(void)
{
	struct kretprobe rp = { .kp.symbol_name = "deep", .handler = deep_ret,
				.maxactive = 8 };

	BEGIN("longjmp out of probed frames: stale instances dropped, counted");
	CHECK_EQ(register_kretprobe(&rp), 0);
	deep_rets = 0;
	for (int i = 0; i < 50; i++)
		if (!setjmp(jb))
			deep(3, 1);
	CHECK_EQ(deep_rets, 0);
	/* each round's 4 instances are dropped by the next round's calls */
	CHECK_EQ(rp.nmissed, 4 * 49);
	CHECK_EQ(deep(3, 0), 3);
	CHECK_EQ(deep_rets, 4);
	CHECK_EQ(rp.nmissed, 4 * 50);
	unregister_kretprobe(&rp);
	END();
}

/* A return stack's depth: the calls deeper than it are missed. */
static void test_stack_depth(void)
{
	struct kretprobe rp = { .kp.symbol_name = "deep", .handler = deep_ret };
	const long n = KRETPROBE_THREAD_DEPTH + 900;

	BEGIN("calls deeper than a thread's return stack are missed");
	CHECK_EQ(register_kretprobe(&rp), 0);
	CHECK(rp.kp.flags & KPROBE_FLAG_RP_THREAD, "flag cleared");
	deep_rets = 0;
	CHECK_EQ(deep(n, 0), n);
	CHECK_EQ(deep_rets, KRETPROBE_THREAD_DEPTH);
	CHECK_EQ(rp.nmissed, n + 1 - KRETPROBE_THREAD_DEPTH);
	deep_rets = 0;
	CHECK_EQ(deep(10, 0), 10);
	CHECK_EQ(deep_rets, 11);
	unregister_kretprobe(&rp);
	/* registered again as it is (the flag kept): a return stack again,
	 * not a pool of max(10, 2 x CPUs) */
	rp.kp.addr = NULL;
	CHECK_EQ((register_kretprobe)(&rp), 0);
	CHECK(rp.kp.flags & KPROBE_FLAG_RP_THREAD, "flag not kept");
	deep_rets = 0;
	CHECK_EQ(deep(300, 0), 300);
	CHECK_EQ(deep_rets, 301);
	CHECK_EQ(rp.nmissed, 0);
	unregister_kretprobe(&rp);
	END();
}

/* ---- tail calls ----------------------------------------------------------- */

__asm__("\t.text\n"
	"\t.globl tail_outer\n\t.type tail_outer, @function\ntail_outer:\n"
	"\tjmp tail_inner\n"
	"\t.size tail_outer, . - tail_outer\n"
	"\t.globl tail_inner\n\t.type tail_inner, @function\ntail_inner:\n"
	"\tlea 3(%rdi), %rax\n"
	"\tret\n"
	"\t.size tail_inner, . - tail_inner\n");
extern long tail_outer(long), tail_inner(long);

static char tail_order[8];
static int ntail;

static int tail_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct kretprobe *rp = get_kretprobe(ri);

	if (ntail < 6 && regs_return_value(regs) == 7)
		tail_order[ntail++] = rp->kp.symbol_name[5];	/* o / i */
	return 0;
}

static void test_tail_call(void)
{
	struct kretprobe o = { .kp.symbol_name = "tail_outer", .handler = tail_ret };
	struct kretprobe i = { .kp.symbol_name = "tail_inner", .handler = tail_ret };

	BEGIN("a tail call between two probed functions: both returns seen");
	CHECK_EQ(register_kretprobe(&o), 0);
	CHECK_EQ(register_kretprobe(&i), 0);
	ntail = 0;
	CHECK_EQ(tail_outer(4), 7);
	tail_order[ntail] = '\0';
	CHECK(!strcmp(tail_order, "io"), "order %s", tail_order);
	CHECK_EQ(o.nmissed + i.nmissed, 0);
	unregister_kretprobe(&o);
	unregister_kretprobe(&i);
	END();
}

/* ---- floating point ------------------------------------------------------- */

__attribute__((noipa)) double fdiv(double a, double b)
{
	return a / b;
}

__attribute__((noipa)) long double ldiv_(long double a, long double b)
{
	return a / b;
}

static volatile double fp_junk;
static volatile long double ld_junk;

static int fp_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	(void)ri;
	/* clobber SSE and x87 registers the return values live in */
	fp_junk = (double)regs->sp * 1.25 + fp_junk / 3.0;
	ld_junk = (long double)regs->sp / 7.0L + ld_junk * 1.5L;
	return 0;
}

static void test_float(void)
{
	struct kretprobe a = { .kp.symbol_name = "fdiv", .handler = fp_ret };
	struct kretprobe b = { .kp.symbol_name = "ldiv_", .handler = fp_ret };

	BEGIN("double and long double return values survive the handler");
	CHECK_EQ(register_kretprobe(&a), 0);
	CHECK_EQ(register_kretprobe(&b), 0);
	CHECK(fdiv(1.0, 4.0) == 0.25, "fdiv %g", fdiv(1.0, 4.0));
	CHECK(ldiv_(3.0L, 4.0L) == 0.75L, "ldiv %Lg", ldiv_(3.0L, 4.0L));
	CHECK(fdiv(1.0, 8.0) + (double)ldiv_(1.0L, 2.0L) == 0.625, "sum");
	unregister_kretprobe(&a);
	unregister_kretprobe(&b);
	END();
}

/* ---- backtrace ------------------------------------------------------------ */

static int bt_found, bt_frames;

static int bt_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	void *frames[32];
	int n = backtrace(frames, 32);

	(void)regs;
	bt_frames = n;
	for (int i = 0; i < n; i++)
		if ((unsigned long)frames[i] == get_kretprobe_retaddr(ri))
			bt_found = 1;
	return 0;
}

__attribute__((noipa)) long bt_target(long x)
{
	return x + 1;
}

static void test_backtrace(void)
{
	struct kretprobe rp = { .kp.symbol_name = "bt_target", .handler = bt_ret };

	BEGIN("backtrace() in a return handler unwinds into the real caller");
	CHECK_EQ(register_kretprobe(&rp), 0);
	bt_found = 0;
	CHECK_EQ(bt_target(1), 2);
	CHECK(bt_found, "caller not in a %d-frame backtrace", bt_frames);
	unregister_kretprobe(&rp);
	END();
}

/* ---- threads -------------------------------------------------------------- */

#define NTHREADS 4
#define NCALLS 20000

static void *sq_thread(void *arg)
{
	long bad = 0;

	for (long i = 0; i < NCALLS; i++)
		if (square(i & 255) != (i & 255) * (i & 255))
			bad++;
	(void)arg;
	return (void *)bad;
}

static void test_threads(void)
{
	pthread_t t[NTHREADS];
	long bad = 0;
	void *r;

	BEGIN("threads: every call traced or counted missed");
	sq_reset();
	for (int i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, sq_thread, NULL);
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(t[i], &r);
		bad += (long)r;
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(sq_bad, 0);
	CHECK_EQ(sq_rets + sq_rp.nmissed, NTHREADS * NCALLS);
	CHECK(sq_rets > 0, "no return traced");
	END();
}

/* ---- unregister with a call in flight ------------------------------------ */

static int pipefd[2];

static volatile int waiting;	/* a call of waiter() is in flight */

__attribute__((noipa)) long waiter(long x)
{
	char c;

	waiting = 1;
	if (read(pipefd[0], &c, 1) != 1)
		return -1;
	return x + c;
}

static void *waiter_thread(void *arg)
{
	(void)arg;
	return (void *)waiter(100);
}

/* A thread in waiter(), its entry seen: the call is in flight. */
static void start_waiter(pthread_t *t)
{
	waiting = 0;
	pthread_create(t, NULL, waiter_thread, NULL);
	while (!waiting)
		usleep(1000);
}

static int waiter_rets;

static int waiter_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	(void)ri;
	(void)regs;
	waiter_rets++;
	return 0;
}

static void test_unregister_in_flight(void)
{
	struct kretprobe rp = { .kp.symbol_name = "waiter", .handler = waiter_ret };
	pthread_t t;
	void *r;

	BEGIN("unregister while a call is in flight: it returns home, untraced");
	CHECK_EQ(pipe(pipefd), 0);
	CHECK_EQ(register_kretprobe(&rp), 0);
	start_waiter(&t);
	unregister_kretprobe(&rp);
	CHECK(write(pipefd[1], "\5", 1) == 1, "write");
	pthread_join(t, &r);
	CHECK_EQ((long)r, 105);
	CHECK_EQ(waiter_rets, 0);
	close(pipefd[0]);
	close(pipefd[1]);
	END();
}

/* A return stack's holder is taken again by the next registration. */
static void test_registered_again_in_flight(void)
{
	struct kretprobe rp = { .kp.symbol_name = "waiter", .handler = waiter_ret };
	struct kretprobe rp2 = { .kp.symbol_name = "waiter",
				 .handler = waiter_ret };
	pthread_t t;
	void *r;

	BEGIN("a call in flight across unregister and a new kretprobe: untraced");
	CHECK_EQ(pipe(pipefd), 0);
	waiter_rets = 0;
	CHECK_EQ(register_kretprobe(&rp), 0);
	start_waiter(&t);
	unregister_kretprobe(&rp);
	CHECK_EQ(register_kretprobe(&rp2), 0);
	CHECK(write(pipefd[1], "\5", 1) == 1, "write");
	pthread_join(t, &r);
	CHECK_EQ((long)r, 105);
	CHECK_EQ(waiter_rets, 0);	/* neither kretprobe's handler */
	CHECK(write(pipefd[1], "\6", 1) == 1, "write");
	CHECK_EQ(waiter(1), 7);
	CHECK_EQ(waiter_rets, 1);	/* rp2's */
	unregister_kretprobe(&rp2);
	close(pipefd[0]);
	close(pipefd[1]);
	END();
}

/* ---- more threads than a chunk of reader slots ---------------------------- */

#define NMANY 150
static pthread_barrier_t many_bar;

static void *sq_many(void *arg)
{
	long r;

	pthread_barrier_wait(&many_bar);
	r = square((long)(uintptr_t)arg);
	pthread_barrier_wait(&many_bar);	/* all alive meanwhile */
	return (void *)r;
}

static void test_many_threads(void)
{
	pthread_t t[NMANY];
	long bad = 0;
	void *r;

	BEGIN("150 threads at once each have a return stack");
	sq_reset();
	pthread_barrier_init(&many_bar, NULL, NMANY);
	for (long i = 0; i < NMANY; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, sq_many,
					(void *)(uintptr_t)i), 0);
	for (long i = 0; i < NMANY; i++) {
		pthread_join(t[i], &r);
		bad += (long)r != i * i;
	}
	pthread_barrier_destroy(&many_bar);
	CHECK_EQ(bad, 0);
	CHECK_EQ(sq_bad, 0);
	CHECK_EQ(sq_rets, NMANY);
	CHECK_EQ(sq_rp.nmissed, 0);
	END();
}

/* ---- a sigaltstack above the thread's stack ------------------------------ */

static long alt_result;

static void on_usr1(int sig)
{
	(void)sig;
	alt_result = square(12);
}

__attribute__((noipa)) long raiser(long x)
{
	raise(SIGUSR1);
	return x + 1;
}

static int raiser_rets;

static int raiser_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	(void)ri;
	raiser_rets += regs_return_value(regs) == 8;
	return 0;
}

static void *alt_thread(void *arg)
{
	stack_t ss = { .ss_sp = arg, .ss_size = 1 << 16 };
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_ONSTACK };

	sigaltstack(&ss, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	return (void *)raiser(7);
}

static void test_altstack(void)
{
	struct kretprobe rp = { .kp.symbol_name = "raiser", .handler = raiser_ret };
	pthread_attr_t attr;
	size_t stack_size = 1 << 20;
	void *stack, *alt;
	pthread_t t;
	void *r = NULL;

	BEGIN("a probed call on a sigaltstack above the stack drops nothing");
	/* thread stack low, alternate stack high in the address space */
	stack = mmap((void *)0x20000000, stack_size, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	alt = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(stack != MAP_FAILED && alt != MAP_FAILED && alt > stack, "mmap");
	CHECK_EQ(register_kretprobe(&rp), 0);
	sq_rets = raiser_rets = 0;
	alt_result = 0;
	pthread_attr_init(&attr);
	pthread_attr_setstack(&attr, stack, stack_size);
	pthread_create(&t, &attr, alt_thread, alt);
	pthread_join(t, &r);
	CHECK_EQ((long)r, 8);
	CHECK_EQ(alt_result, 144);
	CHECK_EQ(raiser_rets, 1);
	CHECK_EQ(sq_rets, 1);
	CHECK_EQ(rp.nmissed, 0);
	unregister_kretprobe(&rp);
	munmap(stack, stack_size);
	munmap(alt, 1 << 16);
	END();
}

/* ---- jump-optimised entries ---------------------------------------------- */

__attribute__((noipa)) long cube(long x)
{
	return x * x * x;
}

static int cube_rets, cube_bad, cube_pre_hits;

static int cube_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	(void)ri;
	__atomic_fetch_add(&cube_rets, 1, __ATOMIC_RELAXED);
	if ((long)regs_return_value(regs) != (long)*(long *)ri->data *
	    (long)*(long *)ri->data * (long)*(long *)ri->data)
		__atomic_fetch_add(&cube_bad, 1, __ATOMIC_RELAXED);
	return 0;
}

static int cube_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	*(long *)ri->data = (long)regs->di;
	return 0;
}

static int cube_pre(struct kprobe *p, struct pt_regs *regs)
{
	(void)p;
	(void)regs;
	cube_pre_hits++;
	return 0;
}

static void test_optimised(void)
{
	struct kprobe kp = { .symbol_name = "cube", .pre_handler = cube_pre };
	struct kretprobe rp = { .kp.symbol_name = "cube", .handler = cube_ret,
				.entry_handler = cube_entry,
				.data_size = sizeof(long) };
	bool noopt = getenv("DPROBE_NOOPT") != NULL;

	BEGIN("an optimised entry: a kretprobe and a kprobe share it");
	CHECK_EQ(register_kretprobe(&rp), 0);
	CHECK_EQ(kprobe_optimized(&rp.kp), !noopt);
	CHECK_EQ(register_kprobe(&kp), 0);
	CHECK_EQ(kprobe_optimized(&kp), !noopt);
	cube_rets = cube_bad = cube_pre_hits = 0;
	for (long i = 0; i < 10; i++)
		CHECK_EQ(cube(i), i * i * i);
	CHECK_EQ(cube_rets, 10);
	CHECK_EQ(cube_pre_hits, 10);
	unregister_kprobe(&kp);
	CHECK_EQ(cube(3), 27);
	CHECK_EQ(cube_rets, 11);
	CHECK_EQ(cube_bad, 0);
	CHECK_EQ(rp.nmissed, 0);
	unregister_kretprobe(&rp);
	CHECK_EQ(cube(4), 64);
	CHECK_EQ(cube_rets, 11);
	/* the other way round: the kretprobe joins an optimised kprobe */
	kp.addr = NULL;
	rp.kp.addr = NULL;
	CHECK_EQ(register_kprobe(&kp), 0);
	CHECK_EQ(register_kretprobe(&rp), 0);
	CHECK_EQ(kprobe_optimized(&rp.kp), !noopt);
	CHECK_EQ(cube(5), 125);
	CHECK_EQ(cube_rets, 12);
	CHECK_EQ(cube_pre_hits, 11);
	unregister_kretprobe(&rp);
	unregister_kprobe(&kp);
	END();
}

static int nest_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	*(long *)ri->data = (long)regs->di;
	/* a hit from inside a handler: counted as missed, not traced */
	if (cube(2) != 8)
		__atomic_fetch_add(&cube_bad, 1, __ATOMIC_RELAXED);
	return 0;
}

static void test_nested(void)
{
	struct kretprobe rp = { .kp.symbol_name = "cube", .handler = cube_ret,
				.entry_handler = nest_entry,
				.data_size = sizeof(long) };

	BEGIN("a call of the probed function from its entry handler is missed");
	CHECK_EQ(register_kretprobe(&rp), 0);
	cube_rets = cube_bad = 0;
	for (long i = 0; i < 5; i++)
		CHECK_EQ(cube(i + 1), (i + 1) * (i + 1) * (i + 1));
	CHECK_EQ(cube_rets, 5);
	CHECK_EQ(cube_bad, 0);
	/* as in the kernel: a reentered kprobe's miss, not an instance's */
	CHECK_EQ(rp.kp.nmissed, 5);
	CHECK_EQ(rp.nmissed, 0);
	unregister_kretprobe(&rp);
	END();
}

static void *cube_once(void *arg)
{
	return (void *)cube((long)(uintptr_t)arg);
}

static void test_exited_threads(void)
{
	struct kretprobe rp = { .kp.symbol_name = "cube", .handler = cube_ret,
				.entry_handler = cube_entry,
				.data_size = sizeof(long), .maxactive = 2 };
	pthread_t t;
	void *r;

	BEGIN("instances kept by threads that exited are used again");
	CHECK_EQ(register_kretprobe(&rp), 0);
	cube_rets = cube_bad = 0;
	for (long i = 0; i < 8; i++) {
		pthread_create(&t, NULL, cube_once, (void *)(uintptr_t)i);
		pthread_join(t, &r);
		CHECK_EQ((long)r, i * i * i);
	}
	for (long i = 0; i < 10; i++)
		CHECK_EQ(cube(i), i * i * i);
	CHECK_EQ(cube_rets, 18);
	CHECK_EQ(rp.nmissed, 0);
	CHECK_EQ(cube_bad, 0);
	unregister_kretprobe(&rp);
	END();
}

static volatile int churn_stop;

static void *cube_loop(void *arg)
{
	long bad = 0;

	(void)arg;
	for (long i = 0; !churn_stop; i++)
		if (cube(i & 1023) != (i & 1023) * (i & 1023) * (i & 1023))
			bad++;
	return (void *)bad;
}

static void test_churn(void)
{
	struct kretprobe rp = { .kp.symbol_name = "cube", .handler = cube_ret,
				.entry_handler = cube_entry,
				.data_size = sizeof(long), .maxactive = 3 };
	pthread_t t[NTHREADS];
	int errs = 0, opt = 0;
	long bad = 0;
	void *r;

	BEGIN("threads call while the kretprobe comes and goes 200 times");
	cube_rets = cube_bad = 0;
	churn_stop = 0;
	for (int i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, cube_loop, NULL);
	for (int i = 0; i < 200; i++) {
		rp.kp.addr = NULL;
		errs += register_kretprobe(&rp) != 0;
		opt += kprobe_optimized(&rp.kp);
		usleep(200);
		unregister_kretprobe(&rp);
	}
	churn_stop = 1;
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(t[i], &r);
		bad += (long)r;
	}
	printf("# %d rounds optimised, %d returns traced\n", opt, cube_rets);
	CHECK_EQ(errs, 0);
	CHECK_EQ(bad, 0);
	CHECK_EQ(cube_bad, 0);
	CHECK(cube_rets > 0, "no return traced");
	END();
}

static void run_all(void)
{
	test_values();
	test_change_and_skip();
	test_recursion();
	test_longjmp();
	test_tail_call();
	test_float();
	test_backtrace();
	test_threads();
	test_unregister_in_flight();
	test_altstack();
	test_optimised();
	test_nested();
	test_exited_threads();
	test_churn();
	unregister_kretprobe(&sq_rp);
}

/* ---- threads one after another -------------------------------------------- */

static void *sq_once(void *arg)
{
	return (void *)square((long)(uintptr_t)arg);
}

static long vm_size_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmSize: %ld", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

static long sq_threads(long n)
{
	long bad = 0;
	pthread_t t;
	void *r;

	for (long i = 0; i < n; i++) {
		pthread_create(&t, NULL, sq_once, (void *)(uintptr_t)i);
		pthread_join(t, &r);
		bad += (long)r != i * i;
	}
	return bad;
}

/*
 * Each thread takes a reader slot (and its return stack) at its first
 * hit; with none free, the slot of a thread that has exited: the
 * process's memory does not grow with the threads it has had.
 */
static void test_slots_taken_over(void)
{
	long before, after, bad;

	BEGIN("2000 threads one after another: exited threads' slots reused");
	sq_reset();
	bad = sq_threads(200);
	before = vm_size_kb();
	bad += sq_threads(2000);
	after = vm_size_kb();
	CHECK_EQ(bad, 0);
	CHECK_EQ(sq_rets, 2200);
	CHECK_EQ(sq_rp.nmissed, 0);
	CHECK(before > 0 && after - before < 64 * 1024,
	      "VmSize grew by %ld kB", after - before);
	END();
}

/* ---- a vfork child of a thread that never hit a probe --------------------- */

static void *vfork_thread(void *arg)
{
	long child;
	pid_t pid;
	int st;

	(void)arg;
	pid = vfork();
	if (pid == 0) {
		child = square(3);	/* on the parent thread's TLS */
		_exit(child == 9 ? 0 : 1);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st))
		return (void *)-1L;
	return (void *)square(4);
}

/*
 * The child shares the thread's memory and TLS: it takes no reader slot
 * in the thread's name (the slot would be freed once the child is gone,
 * while the thread uses it), so its call has no return stack and is
 * missed; the thread's own calls are traced as usual.
 */
static void test_vfork_child(void)
{
	pthread_t t;
	void *r;

	BEGIN("a vfork child of a thread with no slot: missed, the thread traced");
	sq_reset();
	pthread_create(&t, NULL, vfork_thread, NULL);
	pthread_join(t, &r);
	CHECK_EQ((long)r, 16);
	CHECK_EQ(sq_rets, 1);
	CHECK_EQ(sq_rp.nmissed, 1);
	CHECK_EQ(sq_bad, 0);
	END();
}

int main(void)
{
	run_all();
	t_prefix = "return stacks: ";
	rp_flags = KPROBE_FLAG_RP_THREAD;
	sq_rp.kp.addr = NULL;
	sq_rp.kp.flags = 0;
	run_all();
	/* what only a return stack does */
	sq_rp.kp.addr = NULL;
	CHECK_EQ(register_kretprobe(&sq_rp), 0);
	test_stack_depth();
	test_registered_again_in_flight();
	test_many_threads();
	test_slots_taken_over();
	test_vfork_child();
	unregister_kretprobe(&sq_rp);
	return t_exit();
}
