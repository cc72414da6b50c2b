// SPDX-License-Identifier: GPL-2.0
/*
 * The target of tests/agent/hit_syscalls.sh: counts the system calls its
 * main thread makes while it calls work() N times, under whatever probes
 * dprobe put on work().
 *
 *   hit_syscalls N
 *
 * A seccomp filter on the main thread alone hands each of its system
 * calls to a supervisor thread (SECCOMP_RET_USER_NOTIF), which counts it
 * and lets it run (SECCOMP_USER_NOTIF_FLAG_CONTINUE): the program behaves
 * as without the filter, and nothing but the main thread is counted.
 * getppid() marks the end of a phase.  Phase 1 is the hit loop; phase 2
 * reads CLOCK_MONOTONIC through libc ten times, to tell whether the
 * vDSO's clock itself enters the kernel here.  Prints:
 *
 *   mono T0 T1                 CLOCK_MONOTONIC (s.ns) around phase 1
 *   loop <count> [nr:count]... phase 1's calls, rt_sigreturn apart (an
 *                              int3 probe's signal returns with it)
 *   vdso <count>               phase 2's calls
 *   clock <line>               dprobe_agent_clock(): the path the agent chose
 *
 * With HIT_SYSCALLS_NOTSC=1 in its environment it makes rdtsc fault,
 * prctl(PR_SET_TSC, PR_TSC_SIGSEGV) as rr does, before any library's
 * constructor runs (a preinit function), so before the agent chooses its
 * clock.
 *
 * Exit 77 (with a reason on stderr) where seccomp cannot do this.
 */
#include <dlfcn.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_NR 512

/* set by the filtered thread without a system call (any call it makes
 * once filtered waits for the supervisor): polled */
static int listener = -1;
static unsigned long counts[2][MAX_NR];
static int phase;

/* Run by the loader before the constructors of every library, the
 * preloaded agent's too. */
static void notsc(int argc, char **argv, char **envp)
{
	(void)argc;
	(void)argv;
	for (char **e = envp; e && *e; e++)
		if (!strcmp(*e, "HIT_SYSCALLS_NOTSC=1") &&
		    prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0))
			perror("prctl(PR_SET_TSC)");
}
__attribute__((section(".preinit_array"), used))
static void (*const preinit)(int, char **, char **) = notsc;

__attribute__((noipa)) long work(int a, long b)
{
	return a * 3 + b;
}

/* Count each notified call in its phase, then let it run. */
static void *supervise(void *arg)
{
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;

	int fd;

	(void)arg;
	while ((fd = __atomic_load_n(&listener, __ATOMIC_ACQUIRE)) < 0)
		usleep(1000);
	for (;;) {
		memset(&req, 0, sizeof(req));
		if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0) {
			if (errno == EINTR || errno == ENOENT)
				continue;
			return NULL;
		}
		if (req.data.nr == SYS_getppid)
			phase++;
		else if (phase < 2 && req.data.nr < MAX_NR)
			counts[phase][req.data.nr]++;
		memset(&resp, 0, sizeof(resp));
		resp.id = req.id;
		resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		/* a kernel without CONTINUE (before 5.5) leaves the call
		 * waiting for ever: give up on the test instead */
		if (ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 &&
		    errno != ENOENT) {
			fprintf(stderr, "seccomp user notification: %s\n",
				strerror(errno));
			_exit(77);
		}
	}
}

/* Every system call of this thread to the supervisor. */
static int filter_me(void)
{
	struct sock_filter insns[] = {
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
	};
	struct sock_fprog prog = { 1, insns };
	long fd;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
		     SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	if (fd < 0)
		return -errno;
	__atomic_store_n(&listener, (int)fd, __ATOMIC_RELEASE);
	return 0;
}

static void print_mono(const char *label, const struct timespec *a,
		       const struct timespec *b)
{
	printf("%s %lld.%09ld %lld.%09ld\n", label, (long long)a->tv_sec,
	       a->tv_nsec, (long long)b->tv_sec, b->tv_nsec);
}

static void print_counts(void)
{
	unsigned long n = 0, v = 0;

	for (int i = 0; i < MAX_NR; i++)
		if (i != SYS_rt_sigreturn)
			n += counts[0][i];
	printf("loop %lu", n);
	for (int i = 0; i < MAX_NR; i++)
		if (counts[0][i] && i != SYS_rt_sigreturn)
			printf(" %d:%lu", i, counts[0][i]);
	for (int i = 0; i < MAX_NR; i++)
		v += counts[1][i];
	printf("\nvdso %lu\n", v);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000, sum = 0;
	struct timespec t0, t1, t;
	const char *(*clock_line)(void);
	pthread_t sup;
	int err;

	sum += work(1, 2);		/* the thread's first hit: its ring */
	if ((err = pthread_create(&sup, NULL, supervise, NULL))) {
		fprintf(stderr, "pthread_create: %s\n", strerror(err));
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if ((err = filter_me())) {
		fprintf(stderr, "seccomp user notification: %s\n", strerror(-err));
		return 77;
	}
	for (long i = 0; i < n; i++)
		sum += work((int)i, i);
	syscall(SYS_getppid);		/* end of phase 1 */
	clock_gettime(CLOCK_MONOTONIC, &t1);
	for (int i = 0; i < 10; i++)
		clock_gettime(CLOCK_MONOTONIC, &t);
	syscall(SYS_getppid);		/* end of phase 2 */
	print_mono("mono", &t0, &t1);
	print_counts();
	*(void **)&clock_line = dlsym(RTLD_DEFAULT, "dprobe_agent_clock");
	printf("clock %s\n", clock_line ? clock_line() : "(no agent)");
	return sum == 42;		/* keeps the calls */
}
