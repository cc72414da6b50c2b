// SPDX-License-Identifier: GPL-2.0
/*
 * libdprobe.so loaded with dlopen() (as when injected), a probe armed, so
 * that its guards are on libc's signal functions: children started by
 * posix_spawn(), system() and popen() live.  glibc runs such a child on
 * the parent's memory with every signal blocked until it execs, and the
 * child calls sigprocmask(): an int3 guard there killed it with SIGTRAP.
 * The guards on the mask functions are a jump (one byte of libc's
 * changed) that strips SIGTRAP from the program's masks, but not in that
 * child: the program it execs has the mask it asked for.  Where
 * sigprocmask()'s jump cannot go, it needs none: it calls pthread_sigmask().
 * Usage: dl_spawn PATH/libdprobe.so
 */
#include <dlfcn.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dprobe/kprobes.h>

#include "agent_test.h"

#define CHILDREN 100

extern char **environ;

__attribute__((noipa)) long probed(long x)
{
	return x + 1;
}

static int count_pre(struct kprobe *p, struct pt_regs *regs)
{
	(void)p;
	(void)regs;
	return 0;
}

static volatile int mask_hits;

static int count_mask(struct kprobe *p, struct pt_regs *regs)
{
	(void)p;
	(void)regs;
	mask_hits++;
	return 0;
}

static int spawn_true(const posix_spawnattr_t *attr)
{
	char *argv[] = { "true", NULL };
	pid_t pid;
	int st;

	if (posix_spawn(&pid, "/bin/true", NULL, attr, argv, environ) ||
	    waitpid(pid, &st, 0) != pid)
		return -1;
	return st;
}

/* How many of @n children of each way did not exit 0. */
static int failed_children(int n)
{
	posix_spawnattr_t a;
	sigset_t none;
	int bad = 0;

	sigemptyset(&none);
	posix_spawnattr_init(&a);
	posix_spawnattr_setsigmask(&a, &none);
	posix_spawnattr_setflags(&a, POSIX_SPAWN_SETSIGMASK);
	for (int i = 0; i < n; i++) {
		FILE *f = popen("exec /bin/true", "r");

		bad += spawn_true(NULL) != 0;
		bad += spawn_true(&a) != 0;
		bad += system("exec /bin/true") != 0;
		bad += !f || pclose(f) != 0;
	}
	posix_spawnattr_destroy(&a);
	return bad;
}

/* The SigBlk of a program posix_spawn()ed with every signal blocked. */
static unsigned long long child_sigblk(void)
{
	char *argv[] = { "grep", "^SigBlk:", "/proc/self/status", NULL };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t a;
	unsigned long long blk = 0;
	char line[128];
	sigset_t all;
	int fd[2], st;
	FILE *f;
	pid_t pid;

	if (pipe(fd))
		return 0;
	sigfillset(&all);
	posix_spawnattr_init(&a);
	posix_spawnattr_setsigmask(&a, &all);
	posix_spawnattr_setflags(&a, POSIX_SPAWN_SETSIGMASK);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
	posix_spawn_file_actions_addclose(&fa, fd[0]);
	if (posix_spawnp(&pid, "grep", &fa, &a, argv, environ))
		pid = -1;
	close(fd[1]);
	f = fdopen(fd[0], "r");
	if (f && fgets(line, sizeof(line), f))
		sscanf(line, "SigBlk: %llx", &blk);
	if (f)
		fclose(f);
	if (pid > 0)
		waitpid(pid, &st, 0);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&a);
	return blk;
}

static const unsigned char *fns[3];
static unsigned char code[3][16];

/*
 * In a child process: where sigprocmask()'s jump would lead is taken
 * before libdprobe loads.  It only calls pthread_sigmask() (glibc 2.36),
 * whose jump then guards it: its code stays libc's, no int3.  The number
 * of the first check that failed, or 0.
 */
static int taken_jump(const char *lib)
{
	const unsigned char *fn = (const unsigned char *)(uintptr_t)sigprocmask;
	int (*reg)(struct kprobe *);
	struct kprobe kp = { .symbol_name = "probed", .pre_handler = count_pre };
	uint64_t at, page;
	sigset_t all, now;
	int32_t rel;
	void *h;

	memcpy(&rel, fn + 1, sizeof(rel));
	at = (uint64_t)(uintptr_t)fn + 5 + (uint64_t)(int64_t)rel;
	page = at & ~4095ull;
	if (mmap((void *)(uintptr_t)page, 8192, PROT_READ,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) !=
	    (void *)(uintptr_t)page)
		return 1;
	h = dlopen(lib, RTLD_NOW);
	reg = h ? (int (*)(struct kprobe *))dlsym(h, "register_kprobe") : NULL;
	if (!reg || reg(&kp))
		return 2;
	if (memcmp(fn, code[1], 16))
		return 3;
	if (fns[2][0] != 0xe9)
		return 4;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	sigprocmask(SIG_SETMASK, NULL, &now);
	if (sigismember(&now, SIGTRAP) || !sigismember(&now, SIGUSR1))
		return 5;
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	return failed_children(CHILDREN / 10) ? 6 : 0;
}

int main(int argc, char **argv)
{
	int (*reg)(struct kprobe *);
	void (*unreg)(struct kprobe *);
	struct kprobe kp = { .symbol_name = "probed", .pre_handler = count_pre };
	const unsigned long long trap = 1ull << (SIGTRAP - 1);
	int taken_st = -1;
	pid_t taken = -1;
	void *h;

	BEGIN("guards on: the mask functions' first byte is a jump, the rest libc's");
	fns[0] = (const unsigned char *)(uintptr_t)sigaction;
	fns[1] = (const unsigned char *)(uintptr_t)sigprocmask;
	fns[2] = (const unsigned char *)(uintptr_t)pthread_sigmask;
	for (int i = 0; i < 3; i++)
		memcpy(code[i], fns[i], 16);
	/* (before libdprobe is loaded here) */
	if (argc > 1 && !(taken = fork()))
		_exit(taken_jump(argv[1]));
	if (taken < 0 || waitpid(taken, &taken_st, 0) != taken)
		taken_st = -1;
	h = argc > 1 ? dlopen(argv[1], RTLD_NOW) : NULL;
	CHECK(h != NULL, "dlopen: %s", dlerror());
	if (!h) {
		END();
		return t_exit();
	}
	reg = (int (*)(struct kprobe *))dlsym(h, "register_kprobe");
	unreg = (void (*)(struct kprobe *))dlsym(h, "unregister_kprobe");
	CHECK(reg && unreg, "dlsym");
	CHECK_EQ(reg(&kp), 0);
	CHECK_EQ(probed(1), 2);
	CHECK_EQ(fns[0][0], 0xcc);		/* sigaction: an int3 */
	for (int i = 1; i < 3; i++) {
		CHECK_EQ(fns[i][0], 0xe9);
		CHECK(!memcmp(fns[i] + 1, code[i] + 1, 15),
		      "function %d: more than its first byte changed", i);
	}
	END();

	BEGIN("the program's masks never block SIGTRAP");
	{
		sigset_t all, old, now;

		sigfillset(&all);
		CHECK_EQ(pthread_sigmask(SIG_BLOCK, &all, &old), 0);
		pthread_sigmask(SIG_SETMASK, NULL, &now);
		CHECK(!sigismember(&now, SIGTRAP), "SIGTRAP blocked");
		CHECK(sigismember(&now, SIGUSR1), "SIGUSR1 not blocked");
		CHECK_EQ(sigprocmask(SIG_SETMASK, &all, NULL), 0);
		sigprocmask(SIG_SETMASK, NULL, &now);
		CHECK(!sigismember(&now, SIGTRAP), "SIGTRAP blocked");
		CHECK_EQ(probed(2), 3);
		CHECK_EQ(pthread_sigmask(SIG_SETMASK, &old, NULL), 0);
		pthread_sigmask(SIG_SETMASK, NULL, &now);
		CHECK(!sigismember(&now, SIGUSR1), "SIGUSR1 still blocked");
	}
	END();

	BEGIN("posix_spawn, system and popen children live");
	CHECK_EQ(failed_children(CHILDREN), 0);
	END();

	BEGIN("a posix_spawn child's program has the mask it asked for, SIGTRAP too");
	{
		unsigned long long blk = child_sigblk();

		CHECK(blk & trap, "SigBlk %llx", blk);
		CHECK(blk & (1ull << (SIGUSR1 - 1)), "SigBlk %llx", blk);
	}
	END();

	BEGIN("sigprocmask()'s jump cannot go: pthread_sigmask()'s guards it");
	CHECK_EQ(taken_st, 0);
	END();

	BEGIN("no probe left: every byte of libc's is its own");
	unreg(&kp);
	for (int i = 0; i < 3; i++)
		CHECK(!memcmp(fns[i], code[i], 16), "function %d changed", i);
	CHECK_EQ(failed_children(CHILDREN / 10), 0);
	END();

	BEGIN("a probe on pthread_sigmask() itself: its int3 over the jump, "
	      "the guard working from it; the jump back after, then nothing");
	{
		struct kprobe mp = { .symbol_name = "libc.so.6:pthread_sigmask",
				     .pre_handler = count_mask };
		sigset_t all, old, now;

		/* the first probe: the guards come with it */
		CHECK_EQ(reg(&mp), 0);
		CHECK_EQ(fns[2][0], 0xcc);
		CHECK_EQ(fns[1][0], 0xe9);
		sigfillset(&all);
		mask_hits = 0;
		CHECK_EQ(pthread_sigmask(SIG_BLOCK, &all, &old), 0);
		pthread_sigmask(SIG_SETMASK, NULL, &now);
		CHECK(!sigismember(&now, SIGTRAP), "SIGTRAP blocked");
		CHECK(sigismember(&now, SIGUSR1), "SIGUSR1 not blocked");
		CHECK_EQ(pthread_sigmask(SIG_SETMASK, &old, NULL), 0);
		/* (the guard's handler may end the SIG_BLOCK call before it) */
		CHECK(mask_hits >= 2, "%d hits", mask_hits);
		/* (a kprobe registered again must be reset, as the kernel's) */
		kp = (struct kprobe){ .symbol_name = "probed",
				      .pre_handler = count_pre };
		CHECK_EQ(reg(&kp), 0);
		unreg(&mp);
		CHECK_EQ(fns[2][0], 0xe9);
		CHECK(!memcmp(fns[2] + 1, code[2] + 1, 15), "bytes after the first");
		unreg(&kp);
		for (int i = 0; i < 3; i++)
			CHECK(!memcmp(fns[i], code[i], 16), "function %d changed", i);
	}
	END();
	return t_exit();
}
