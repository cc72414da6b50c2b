// SPDX-License-Identifier: GPL-2.0
/*
 * Grace periods: unregister_kprobe() must not return while a handler of
 * the probe can still be running, whatever the hitting threads do.
 *
 * Each round registers a fresh kprobe embedded in a struct with a magic
 * word, lets threads hit it, unregisters it and poisons the magic.  The
 * handler checks the magic when it starts and again after a short spin:
 * a handler that sees the poison ran after unregister_kprobe() returned.
 * Hits come from:
 *   - threads and signal handlers nesting hits on the same threads;
 *   - threads that start and exit all the time (more threads over the
 *     run, and more alive at once, than a chunk of reader slots);
 * a fork child of threads in handlers can unregister; and a thread that
 * dies inside a handler must not block unregistering.
 *
 * AGENT_GP_ROUNDS overrides the number of rounds of each case.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <dprobe/kprobes.h>

#include "agent_test.h"

#define LIVE 0x11fe1l
#define DEAD 0xdeadl

struct wrapped {
	struct kprobe kp;
	volatile long magic;
};

static atomic_long bad, hits, sig_hits;
static atomic_int stop;
static __thread volatile int in_signal;

__attribute__((noipa)) long target(long x)
{
	return x * 3 + 1;
}

static int check_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct wrapped *w = (struct wrapped *)p;	/* kp comes first */

	(void)regs;
	if (w->magic != LIVE)
		atomic_fetch_add(&bad, 1);
	/* widen the window a late handler would be caught in */
	for (volatile int i = 0; i < 200; i++)
		;
	if (w->magic != LIVE)
		atomic_fetch_add(&bad, 1);
	atomic_fetch_add_explicit(&hits, 1, memory_order_relaxed);
	if (in_signal)
		atomic_fetch_add_explicit(&sig_hits, 1, memory_order_relaxed);
	return 0;
}

static int rounds(void)
{
	const char *env = getenv("AGENT_GP_ROUNDS");

	return env ? atoi(env) : 150;
}

static void nap_us(long us)
{
	struct timespec ts = { 0, us * 1000 };

	nanosleep(&ts, NULL);
}

/* Every struct ever registered, kept: a late handler may still read one. */
struct batch {
	struct batch *next;
	struct wrapped ws[];
};

static struct batch *kept;

/*
 * Register, let the threads hit for a moment, unregister, poison: @n
 * rounds on fresh structs.  @why: what to say about them, or NULL.
 */
static int run_rounds(int n, const char *why)
{
	struct batch *b = calloc(1, sizeof(*b) + (size_t)n * sizeof(b->ws[0]));
	struct wrapped *ws = b->ws;
	int errs = 0, optimised = 0;
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);

	for (int i = 0; i < n; i++) {
		struct wrapped *w = &ws[i];

		w->kp.symbol_name = "target";
		w->kp.pre_handler = check_pre;
		w->kp.flags = KPROBE_FLAG_NOSIMD;
		w->magic = LIVE;
		errs += register_kprobe(&w->kp) != 0;
		optimised += kprobe_optimized(&w->kp);
		nap_us(200);
		unregister_kprobe(&w->kp);
		w->magic = DEAD;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (why)
		printf("# %s: %d rounds in %.1f s, %d optimised, %ld hits (%ld "
		       "in signal handlers)\n", why, n,
		       (double)(t1.tv_sec - t0.tv_sec) +
		       (t1.tv_nsec - t0.tv_nsec) / 1e9, optimised,
		       atomic_load(&hits), atomic_load(&sig_hits));
	/* never freed: a late handler must find the poison */
	b->next = kept;
	kept = b;
	return errs;
}

/* ---- hits from threads and from signal handlers on them --------------- */

#define NWORKERS 4

static void on_usr1(int sig)
{
	(void)sig;
	in_signal = 1;
	target(5);
	in_signal = 0;
}

static void *worker(void *arg)
{
	long sum = 0;

	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		sum += target(sum & 0xff);
	return (void *)sum;
}

static void *signaller(void *arg)
{
	pthread_t *t = arg;

	for (unsigned int i = 0; !atomic_load(&stop); i++) {
		pthread_kill(t[i % NWORKERS], SIGUSR1);
		nap_us(20);
	}
	return NULL;
}

static void test_signals(void)
{
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_RESTART };
	pthread_t t[NWORKERS], sig;
	long nbad, nsig;
	int errs;

	BEGIN("unregister waits for handlers: hits from threads and nested in "
	      "their signal handlers");
	atomic_store(&bad, 0);
	atomic_store(&hits, 0);
	atomic_store(&sig_hits, 0);
	atomic_store(&stop, 0);
	sigaction(SIGUSR1, &sa, NULL);
	for (int i = 0; i < NWORKERS; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	pthread_create(&sig, NULL, signaller, t);
	errs = run_rounds(rounds(), "signals");
	atomic_store(&stop, 1);
	pthread_join(sig, NULL);
	for (int i = 0; i < NWORKERS; i++)
		pthread_join(t[i], NULL);
	nbad = atomic_load(&bad);
	nsig = atomic_load(&sig_hits);
	CHECK_EQ(errs, 0);
	CHECK_EQ(nbad, 0);
	CHECK(atomic_load(&hits) > 0, "no hits");
	CHECK(nsig > 0, "no hits from signal handlers");
	END();
}

/* ---- fork while threads are inside read sides ---------------------- */

static void child_rounds(void)
{
	alarm(20);
	/* the parent's threads held read sides at the fork: not here */
	if (run_rounds(20, "in a fork child"))
		_exit(2);
	_exit(target(1) == 4 && !atomic_load(&bad) ? 0 : 3);
}

static void test_fork(void)
{
	struct wrapped w = { .kp = { .symbol_name = "target",
				     .pre_handler = check_pre,
				     .flags = KPROBE_FLAG_NOSIMD },
			     .magic = LIVE };
	pthread_t t[NWORKERS];
	int st = -1, errs = 0;
	pid_t pid;

	BEGIN("fork while threads hit a probe: the child can unregister");
	atomic_store(&bad, 0);
	atomic_store(&stop, 0);
	CHECK_EQ(register_kprobe(&w.kp), 0);
	for (int i = 0; i < NWORKERS; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < 10; i++) {
		nap_us(1000);
		fflush(stdout);
		pid = fork();
		if (pid == 0)
			child_rounds();
		if (pid < 0 || waitpid(pid, &st, 0) != pid ||
		    !WIFEXITED(st) || WEXITSTATUS(st)) {
			printf("# child %d: status %#x\n", i, st);
			errs++;
		}
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < NWORKERS; i++)
		pthread_join(t[i], NULL);
	unregister_kprobe(&w.kp);
	CHECK_EQ(errs, 0);
	END();
}

/* ---- threads that come and go ----------------------------------------- */

#define ALIVE 100	/* more than a chunk of reader slots (64) */

static atomic_long started;

static void *short_lived(void *arg)
{
	long sum = 0;

	for (long i = 0; i < 50; i++)
		sum += target(i + (long)(uintptr_t)arg);
	return (void *)sum;
}

static void *spawner(void *arg)
{
	pthread_t t[ALIVE];
	unsigned int k = 0;

	(void)arg;
	for (int i = 0; i < ALIVE; i++)
		pthread_create(&t[i], NULL, short_lived, NULL);
	while (!atomic_load(&stop)) {
		/* the oldest goes, a new one comes: ALIVE threads at a time */
		pthread_join(t[k], NULL);
		if (pthread_create(&t[k], NULL, short_lived, NULL) == 0)
			atomic_fetch_add(&started, 1);
		k = (k + 1) % ALIVE;
	}
	for (int i = 0; i < ALIVE; i++)
		pthread_join(t[(k + (unsigned int)i) % ALIVE], NULL);
	return NULL;
}

static void test_threads(void)
{
	long nbad, nstarted;
	pthread_t sp;
	int errs;

	BEGIN("unregister waits for handlers: threads starting and exiting, "
	      "100 at a time");
	atomic_store(&bad, 0);
	atomic_store(&hits, 0);
	atomic_store(&sig_hits, 0);
	atomic_store(&stop, 0);
	pthread_create(&sp, NULL, spawner, NULL);
	errs = run_rounds(rounds() / 2, "threads");
	/* thread creation may be slow (sanitizers): go on until enough came */
	for (int i = 0; i < 1000 && atomic_load(&started) <= 2 * ALIVE; i++)
		errs += run_rounds(5, NULL);
	atomic_store(&stop, 1);
	pthread_join(sp, NULL);
	printf("# %ld threads started\n", atomic_load(&started));
	nbad = atomic_load(&bad);
	nstarted = atomic_load(&started);
	CHECK_EQ(errs, 0);
	CHECK_EQ(nbad, 0);
	CHECK(atomic_load(&hits) > 0, "no hits");
	CHECK(nstarted > 2 * ALIVE, "only %ld threads", nstarted);
	END();
}

/* ---- a thread that dies inside a handler ------------------------------ */

__attribute__((noipa)) long fatal(long x)
{
	return x + 2;
}

static int die_pre(struct kprobe *p, struct pt_regs *regs)
{
	(void)p;
	(void)regs;
	/* gone at once, its read side still held (no unwinding) */
	syscall(SYS_exit, 0);
	return 0;
}

static void *dier(void *arg)
{
	(void)arg;
	return (void *)fatal(1);
}

static void test_dead_reader(void)
{
	struct kprobe kp = { .symbol_name = "fatal", .pre_handler = die_pre,
			     .flags = KPROBE_FLAG_NOSIMD };
	struct timespec t0, t1;
	pthread_t t;

	BEGIN("a thread that died inside a handler does not block unregister");
	CHECK_EQ(register_kprobe(&kp), 0);
	pthread_create(&t, NULL, dier, NULL);
	/* the kernel clears the thread's tid at exit: join returns */
	pthread_join(t, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	unregister_kprobe(&kp);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CHECK(t1.tv_sec - t0.tv_sec < 5, "unregister took %ld s",
	      (long)(t1.tv_sec - t0.tv_sec));
	CHECK_EQ(fatal(1), 3);
	END();
}

int main(void)
{
	alarm(240);
	test_signals();
	test_fork();
	test_threads();
	test_dead_reader();
	return t_exit();
}
