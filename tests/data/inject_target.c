// SPDX-License-Identifier: GPL-2.0
/*
 * A process for the inject unit tests to load a library into.  It counts
 * what its threads do, in globals the tests read through process_vm_readv:
 *   spins   a thread spinning in user code
 *   sleeps  a thread in a nanosleep() loop
 *   usr1    SIGUSR1 handler runs, rt: SIGRTMIN handler runs
 *   bad     anything wrong: a system call failing with an unexpected
 *           errno (a botched restart shows as 512..516), a register found
 *           changed by the register-checking spin loop
 * A reader thread answers each line "LINE" on stdin with "got LINE".
 * argv[1] says who the main thread is (the injector prefers it when it
 * has a choice, as the lowest thread id):
 *   read     the reader; the spinner and the sleeper are threads
 *   sleep    the sleeper; the spinner and the reader are threads
 *   seccomp  as read, under a seccomp filter that traps openat()
 *   fpspin   a spin loop keeping values in %r12, %xmm8 and %ymm8's upper
 *            half and checking them on every turn; no other thread
 *   churn    as read, plus a thread that keeps creating short-lived
 *            threads (counted in churns)
 * It prints "ready" and the counters' addresses, then never exits by
 * itself (end of stdin ends it).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

volatile unsigned long spins, sleeps, usr1, rt, bad, churns;

/*
 * A large TLS block: pthread_create() clears it for each new thread while
 * holding glibc's loader TLS lock, which dlopen() takes too, so that the
 * churning thread is often stopped holding it (the injector must let it
 * out first).  Not static, so that it is kept.
 */
__thread char tls_pad[2 << 20];

/* atomic: handlers may run on two threads at once */
static void on_usr1(int sig)
{
	(void)sig;
	__atomic_fetch_add(&usr1, 1, __ATOMIC_RELAXED);
}

static void on_rt(int sig)
{
	(void)sig;
	__atomic_fetch_add(&rt, 1, __ATOMIC_RELAXED);
}

static void say(const char *s, size_t n)
{
	if (write(1, s, n) != (ssize_t)n)
		bad++;
}

static void *reader(void *arg)
{
	char buf[256], out[300];
	size_t n = 0;

	for (;;) {
		ssize_t r = read(0, buf + n, 1);

		if (r < 0) {
			if (errno != EINTR) {
				bad++;
				say(out, snprintf(out, sizeof(out),
						  "read error %d\n", errno));
				sleep(1);
			}
			continue;
		}
		if (r == 0)
			exit(0);
		if (buf[n] != '\n') {
			n += n < sizeof(buf) - 1;
			continue;
		}
		buf[n] = '\0';
		say(out, snprintf(out, sizeof(out), "got %s\n", buf));
		n = 0;
	}
	return arg;
}

static void *sleeper(void *arg)
{
	struct timespec ts = { 0, 1000000 };

	for (;;) {
		if (nanosleep(&ts, NULL) && errno != EINTR)
			bad++;
		sleeps++;
	}
	return arg;
}

static void *spinner(void *arg)
{
	for (;;)
		spins++;
	return arg;
}

/* Never returns unless a register it keeps was changed under it. */
static void fpspin(void)
{
	if (__builtin_cpu_supports("avx2"))
		__asm__ volatile(
			"	movabs $0x1234567887654321, %%rax\n"
			"	mov %%rax, %%r12\n"
			"	vmovq %%rax, %%xmm8\n"
			"	vpbroadcastq %%xmm8, %%ymm8\n"
			"1:	incq %0\n"
			"	cmp %%rax, %%r12\n"
			"	jne 2f\n"
			"	vmovq %%xmm8, %%rdx\n"
			"	cmp %%rax, %%rdx\n"
			"	jne 2f\n"
			"	vextracti128 $1, %%ymm8, %%xmm9\n"
			"	vmovq %%xmm9, %%rdx\n"
			"	cmp %%rax, %%rdx\n"
			"	je 1b\n"
			"2:	vzeroupper\n"
			: "+m"(spins) : : "rax", "rdx", "r12", "xmm8", "xmm9",
			  "memory", "cc");
	else
		__asm__ volatile(
			"	movabs $0x1234567887654321, %%rax\n"
			"	mov %%rax, %%r12\n"
			"	movq %%rax, %%xmm8\n"
			"1:	incq %0\n"
			"	cmp %%rax, %%r12\n"
			"	jne 2f\n"
			"	movq %%xmm8, %%rdx\n"
			"	cmp %%rax, %%rdx\n"
			"	je 1b\n"
			"2:\n"
			: "+m"(spins) : : "rax", "rdx", "r12", "xmm8", "memory",
			  "cc");
	bad++;
	say("fpspin: a register changed\n", 27);
	pause();
}

static void *short_lived(void *arg)
{
	return arg;
}

static void *churner(void *arg)
{
	for (;;) {
		pthread_t t;

		if (pthread_create(&t, NULL, short_lived, NULL) ||
		    pthread_join(t, NULL))
			bad++;
		churns++;
	}
	return arg;
}

static void trap_openat(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		exit(3);
}

static void start(void *(*fn)(void *))
{
	pthread_t t;

	if (pthread_create(&t, NULL, fn, NULL))
		exit(2);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "read";
	struct sigaction sa = { .sa_flags = SA_RESTART };
	char line[256];

	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_rt;
	sigaction(SIGRTMIN, &sa, NULL);
	if (!strcmp(mode, "seccomp"))
		trap_openat();
	if (strcmp(mode, "fpspin"))
		start(spinner);
	if (!strcmp(mode, "sleep"))
		start(reader);
	else if (strcmp(mode, "fpspin"))
		start(sleeper);
	if (!strcmp(mode, "churn"))
		start(churner);
	/* every thread exists now */
	say(line, snprintf(line, sizeof(line), "ready %p %p %p %p %p %p\n",
			   (void *)&spins, (void *)&sleeps, (void *)&usr1,
			   (void *)&rt, (void *)&bad, (void *)&churns));
	if (!strcmp(mode, "fpspin"))
		fpspin();
	if (!strcmp(mode, "sleep"))
		sleeper(NULL);
	reader(NULL);
	return 0;
}
