// SPDX-License-Identifier: GPL-2.0
/*
 * engine/ptrace/inject: loading a library into a running process and
 * calling a function of it, checked on live helper processes
 * (tests/data/inject_target.c, built into $DPROBE_BUILD/tests/data/): the
 * call's return value and what the library wrote to the target's stdout,
 * and that the target goes on as before: its spinning, sleeping and
 * reading threads keep working, no system call of theirs fails oddly, no
 * register of a spin loop changes, no signal is lost, nothing stays
 * traced or mapped.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <stdbool.h>

#include "engine/ptrace/inject.h"
#include "test_data.h"

enum { C_SPINS, C_SLEEPS, C_USR1, C_RT, C_BAD, C_CHURNS, NCOUNTERS };

struct target {
	pid_t pid;
	int in, out;		/* its stdin (we write), its stdout */
	uint64_t counter[NCOUNTERS];
	int pings;
};

static struct target targets[4];
static int ntargets;

static void kill_targets(void)
{
	for (int i = 0; i < ntargets; i++) {
		kill(targets[i].pid, SIGKILL);
		waitpid(targets[i].pid, NULL, 0);
		close(targets[i].in);
		close(targets[i].out);
	}
	ntargets = 0;
}

TestSuite(inject, .fini = kill_targets, .timeout = 60);

#define LIB test_data("libinject_lib.so")

/* One line of the target's output, without '\n'; fails after 10 s. */
static void read_line(struct target *t, char *buf, size_t len)
{
	struct pollfd pfd = { .fd = t->out, .events = POLLIN };
	size_t n = 0;
	char c;

	for (;;) {
		cr_assert_gt(poll(&pfd, 1, 10000), 0, "target %d is silent",
			     t->pid);
		cr_assert_eq(read(t->out, &c, 1), 1, "target %d ended", t->pid);
		if (c == '\n')
			break;
		if (n + 1 < len)
			buf[n++] = c;
	}
	buf[n] = '\0';
}

static void expect_line(struct target *t, const char *want)
{
	char line[512];

	read_line(t, line, sizeof(line));
	cr_assert_str_eq(line, want);
}

/* Start @prog in @mode (see inject_target.c) and wait for its "ready". */
static struct target *spawn_prog(const char *prog, const char *mode)
{
	struct target *t = &targets[ntargets];
	int in[2], out[2];
	char line[512];

	cr_assert_lt(ntargets, 4);
	cr_assert_eq(pipe2(in, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(out, O_CLOEXEC), 0);
	t->pid = fork();
	cr_assert_geq(t->pid, 0);
	if (!t->pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(in[0], 0);
		dup2(out[1], 1);
		execl(prog, prog, mode, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	t->in = in[1];
	t->out = out[0];
	t->pings = 0;
	ntargets++;
	read_line(t, line, sizeof(line));
	cr_assert_eq(sscanf(line, "ready %" SCNx64 " %" SCNx64 " %" SCNx64
			    " %" SCNx64 " %" SCNx64 " %" SCNx64,
			    &t->counter[0], &t->counter[1], &t->counter[2],
			    &t->counter[3], &t->counter[4], &t->counter[5]),
		     NCOUNTERS, "target said '%s'", line);
	return t;
}

static struct target *spawn(const char *mode)
{
	return spawn_prog(test_data("inject_target"), mode);
}

static uint64_t counter(struct target *t, int which)
{
	uint64_t v;
	struct iovec l = { &v, sizeof(v) };
	struct iovec r = { (void *)(uintptr_t)t->counter[which], sizeof(v) };

	cr_assert_eq(process_vm_readv(t->pid, &l, 1, &r, 1, 0),
		     (ssize_t)sizeof(v), "read counter of %d: %s", t->pid,
		     strerror(errno));
	return v;
}

/* Wait up to 2 s for counter @which to move past @old. */
static void advances(struct target *t, int which, const char *what)
{
	uint64_t old = counter(t, which);

	for (int i = 0; i < 200 && counter(t, which) == old; i++)
		usleep(10000);
	cr_assert_neq(counter(t, which), old, "%s stopped in %d", what,
		      t->pid);
}

/* TracerPid of every thread of @t is 0. */
static void not_traced(struct target *t)
{
	char path[320], line[256];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", t->pid);
	d = opendir(path);
	cr_assert(d);
	while ((de = readdir(d))) {
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/status",
			 t->pid, de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "TracerPid:", 10))
				cr_assert_eq(atoi(line + 10), 0,
					     "thread %s still traced",
					     de->d_name);
		fclose(f);
	}
	closedir(d);
}

/* The target answers on stdin, its threads run, nothing went wrong. */
static void still_fine(struct target *t, bool threads)
{
	char msg[64], want[80];

	if (threads) {
		snprintf(msg, sizeof(msg), "ping %d\n", ++t->pings);
		cr_assert_eq(write(t->in, msg, strlen(msg)),
			     (ssize_t)strlen(msg));
		snprintf(want, sizeof(want), "got ping %d", t->pings);
		expect_line(t, want);
		advances(t, C_SLEEPS, "the nanosleep() loop");
	}
	advances(t, C_SPINS, "the spin loop");
	cr_assert_eq(counter(t, C_BAD), 0, "something went wrong in %d",
		     t->pid);
	not_traced(t);
}

static char *maps(pid_t pid)
{
	char path[64], *buf = NULL;
	size_t len = 0;
	FILE *f, *m;
	int c;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	cr_assert(f);
	m = open_memstream(&buf, &len);
	while ((c = fgetc(f)) != EOF)
		fputc(c, m);
	fclose(f);
	fclose(m);
	return buf;
}

/*
 * A glibc malloc arena of a thread (anonymous, in a 64 MiB-aligned
 * reservation: its usable start, or the PROT_NONE rest up to the next
 * 64 MiB): glibc makes one when a thread mallocs while the main arena is
 * busy, which the target's own threads may do at any time.
 */
static bool is_arena(const char *l)
{
	unsigned long lo, hi, ino;
	char perms[8];
	int n = 0;
	const unsigned long align = 64ul << 20;

	if (sscanf(l, "%lx-%lx %7s %*x %*x:%*x %lu %n", &lo, &hi, perms, &ino,
		   &n) < 4 || ino || l[n])
		return false;
	return (!strcmp(perms, "rw-p") && !(lo % align)) ||
	       (!strcmp(perms, "---p") && !(hi % align));
}

/*
 * Every mapping of @before is still in @after, except the heap (malloc
 * may grow it); every other one of @after has @allowed in its line
 * (NULL: none may be added), or is a thread's malloc arena.
 */
static void maps_kept(const char *before, const char *after,
		      const char *allowed)
{
	char *a = strdup(after), *save = NULL;

	for (char *l = strtok_r(a, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		if (strstr(l, "[heap]") || strstr(before, l) || is_arena(l))
			continue;
		cr_assert(allowed && strstr(l, allowed),
			  "mapping added: %s", l);
	}
	free(a);
	a = strdup(before);
	for (char *l = strtok_r(a, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save))
		cr_assert(strstr(l, "[heap]") || strstr(after, l),
			  "mapping gone: %s", l);
	free(a);
}

static int inject(struct target *t, const char *lib, const char *fn,
		  const char *arg, long *ret, char *why, size_t len)
{
	return dp_ptrace_inject(t->pid, lib, fn, arg, ret, why, len);
}

static void inject_ok(struct target *t, const char *arg, long want)
{
	char why[1024] = "", line[300];
	long ret = 0;
	int err = inject(t, LIB, "inject_fn", arg, &ret, why, sizeof(why));

	cr_assert_eq(err, 0, "inject into %d: %d %s", t->pid, err, why);
	cr_assert_eq(ret, want);
	snprintf(line, sizeof(line), "inject_fn %ld %s", want - 4200, arg);
	expect_line(t, line);
}

/* ---- success ------------------------------------------------------------ */

Test(inject, loads_and_calls)
{
	struct target *t = spawn("read");
	char *before = maps(t->pid), *after;

	inject_ok(t, "hello world", 4201);
	after = maps(t->pid);
	/* the library's mappings only: the stub's mapping is gone */
	maps_kept(before, after, "libinject_lib.so");
	cr_assert(strstr(after, "libinject_lib.so"));
	still_fine(t, true);
	free(before);
	free(after);
}

Test(inject, twice_same_object)
{
	struct target *t = spawn("read");

	inject_ok(t, "first", 4201);
	still_fine(t, true);
	inject_ok(t, "second", 4202);
	still_fine(t, true);
}

Test(inject, null_argument)
{
	struct target *t = spawn("read");
	char why[512];
	long ret;

	cr_assert_eq(inject(t, LIB, "inject_fn", NULL, &ret, why,
			    sizeof(why)), 0, "%s", why);
	cr_assert_eq(ret, 4201);
	expect_line(t, "inject_fn 1 (null)");
	still_fine(t, true);
}

/* The calling thread was in nanosleep(): it goes on sleeping correctly. */
Test(inject, thread_in_nanosleep)
{
	struct target *t = spawn("sleep");

	inject_ok(t, "sleeper", 4201);
	still_fine(t, true);
	inject_ok(t, "sleeper", 4202);
	still_fine(t, true);
}

/* The only thread was spinning in user code with live vector registers. */
Test(inject, thread_in_user_code_keeps_registers)
{
	struct target *t = spawn("fpspin");

	for (int i = 1; i <= 3; i++) {
		inject_ok(t, "spin", 4200 + i);
		still_fine(t, false);
	}
}

/*
 * Threads come and go while we attach: every one is stopped, or gone (one
 * exiting as it is seized is no error).  The churning thread is often
 * stopped inside pthread_create() holding the loader's TLS lock (the
 * target's TLS is large): it must be let out of it, or dlopen() waits
 * for the lock until the timeout.
 */
Test(inject, threads_churning)
{
	struct target *t = spawn("churn");

	for (int i = 1; i <= 10; i++) {
		inject_ok(t, "churn", 4200 + i);
		advances(t, C_CHURNS, "thread creation");
	}
	still_fine(t, true);
}

/* ---- signals ------------------------------------------------------------ */

struct sender {
	struct target *t;
	int rt_sent, usr1_sent;
	int stop;
	char error[128];
};

/*
 * Queue SIGRTMIN as fast as the target takes them, and a SIGUSR1 every 16
 * of them, each only once the previous one was handled (standard signals
 * sent while one is pending merge, whoever traces the process).
 */
static void *send_signals(void *arg)
{
	struct sender *s = arg;
	struct iovec l, r;
	uint64_t seen;

	while (!__atomic_load_n(&s->stop, __ATOMIC_RELAXED)) {
		union sigval v = { .sival_int = s->rt_sent };

		if (sigqueue(s->t->pid, SIGRTMIN, v)) {
			if (errno != EAGAIN) {
				snprintf(s->error, sizeof(s->error),
					 "sigqueue: %s", strerror(errno));
				return NULL;
			}
			sched_yield();
			continue;
		}
		/* in bursts, so that the target's queue is rarely empty */
		if (++s->rt_sent % 16)
			continue;
		if (kill(s->t->pid, SIGUSR1)) {
			snprintf(s->error, sizeof(s->error), "kill: %s",
				 strerror(errno));
			return NULL;
		}
		s->usr1_sent++;
		l = (struct iovec){ &seen, sizeof(seen) };
		r = (struct iovec){ (void *)(uintptr_t)s->t->counter[C_USR1],
				    sizeof(seen) };
		for (int i = 0;; i++) {
			if (process_vm_readv(s->t->pid, &l, 1, &r, 1, 0) !=
			    sizeof(seen) || i > 100000) {
				snprintf(s->error, sizeof(s->error),
					 "SIGUSR1 #%d not handled",
					 s->usr1_sent);
				return NULL;
			}
			if (seen >= (uint64_t)s->usr1_sent)
				break;
			usleep(100);
		}
	}
	return NULL;
}

/* Wait up to 10 s for counter @which to reach @want; return it. */
static uint64_t settle_at(struct target *t, int which, uint64_t want)
{
	for (int i = 0; i < 1000 && counter(t, which) < want; i++)
		usleep(10000);
	usleep(50000);
	return counter(t, which);
}

/* Wait (10 s at most) until the sender has queued @n SIGRTMIN. */
static void wait_sent(struct sender *s, int n)
{
	for (int i = 0; i < 10000 &&
	     __atomic_load_n(&s->rt_sent, __ATOMIC_RELAXED) < n &&
	     !s->error[0]; i++)
		usleep(1000);
}

static void no_signal_lost(const char *mode, bool threads)
{
	struct target *t = spawn(mode);
	struct sender s = { .t = t };
	pthread_t th;

	cr_assert_eq(pthread_create(&th, NULL, send_signals, &s), 0);
	/* the stream is flowing before the first injection and still after
	 * the last, however loaded the machine (at most 10 s each) */
	wait_sent(&s, 48);
	for (int i = 1; i <= 8; i++) {
		char arg[16];

		snprintf(arg, sizeof(arg), "sig%d", i);
		inject_ok(t, arg, 4200 + i);
	}
	wait_sent(&s, __atomic_load_n(&s.rt_sent, __ATOMIC_RELAXED) + 64);
	__atomic_store_n(&s.stop, 1, __ATOMIC_RELAXED);
	pthread_join(th, NULL);
	cr_assert_str_eq(s.error, "");
	cr_log_info("%d SIGRTMIN, %d SIGUSR1 sent", s.rt_sent, s.usr1_sent);
	cr_assert_gt(s.rt_sent, 100, "only %d signals sent", s.rt_sent);
	cr_assert_eq(settle_at(t, C_RT, s.rt_sent), (uint64_t)s.rt_sent);
	cr_assert_eq(settle_at(t, C_USR1, s.usr1_sent), (uint64_t)s.usr1_sent);
	still_fine(t, threads);
}

Test(inject, no_signal_lost)
{
	no_signal_lost("read", true);
}

/*
 * One thread only: it is often caught in a signal-delivery-stop when
 * attached, and must take that signal before it can call.
 */
Test(inject, no_signal_lost_single_thread)
{
	no_signal_lost("fpspin", false);
}

/* ---- failures ----------------------------------------------------------- */

Test(inject, missing_library)
{
	struct target *t = spawn("read");
	char why[1024] = "", *before = maps(t->pid), *after;
	long ret = 7;
	int err = inject(t, "/nonexistent/libnope.so", "inject_fn", "x", &ret,
			 why, sizeof(why));

	cr_assert_eq(err, -ELIBACC, "%d %s", err, why);
	cr_assert_eq(ret, 7, "ret written on failure");
	cr_assert(strstr(why, "dlopen(\"/nonexistent/libnope.so\") failed"),
		  "%s", why);
	/* dlerror()'s own text, read back from the target */
	cr_assert(strstr(why, "libnope.so: cannot open shared object file: "
			 "No such file or directory"), "%s", why);
	after = maps(t->pid);
	maps_kept(before, after, NULL);
	still_fine(t, true);
	/* and the loader is still usable */
	inject_ok(t, "after", 4201);
	free(before);
	free(after);
}

Test(inject, missing_function)
{
	struct target *t = spawn("read");
	char why[1024] = "", *before = maps(t->pid), *after;
	long ret;
	int err = inject(t, LIB, "no_such_fn", "x", &ret, why, sizeof(why));

	cr_assert_eq(err, -ENOENT, "%d %s", err, why);
	cr_assert(strstr(why, "has no function no_such_fn"), "%s", why);
	cr_assert(strstr(why, "undefined symbol: no_such_fn"), "%s", why);
	/* dlclose()d again */
	after = maps(t->pid);
	cr_assert_null(strstr(after, "libinject_lib.so"), "still mapped");
	maps_kept(before, after, NULL);
	still_fine(t, true);
	free(before);
	free(after);
}

Test(inject, static_refused)
{
	struct target *t = spawn_prog(test_data("inject_static"), "read");
	char why[512], want[128];
	long ret;
	int err = inject(t, LIB, "inject_fn", "x", &ret, why, sizeof(why));

	cr_assert_eq(err, -ENOEXEC, "%d %s", err, why);
	snprintf(want, sizeof(want),
		 "process %d has no dynamic loader (statically linked?)",
		 t->pid);
	cr_assert_str_eq(why, want);
	still_fine(t, true);
}

/* A fault in the called code, which the program does not catch. */
Test(inject, crash_abandoned)
{
	struct target *t = spawn("read");
	char why[1024];
	long ret;
	int err = inject(t, LIB, "inject_crash", "x", &ret, why, sizeof(why));

	cr_assert_eq(err, -EFAULT, "%d %s", err, why);
	cr_assert(strstr(why, "inject_crash crashed"), "%s", why);
	cr_assert(strstr(why, "Segmentation fault"), "%s", why);
	still_fine(t, true);
	inject_ok(t, "after", 4201);
}

/* openat() trapped by seccomp: dlopen() fails, the process lives. */
Test(inject, seccomp_refused)
{
	struct target *t = spawn("seccomp");
	char why[1024];
	long ret;
	int err = inject(t, LIB, "inject_fn", "x", &ret, why, sizeof(why));

	cr_assert_eq(err, -ELIBACC, "%d %s", err, why);
	cr_assert(strstr(why, "Operation not permitted"), "%s", why);
	cr_assert(strstr(why, "refused by seccomp"), "%s", why);
	still_fine(t, true);
}

/*
 * A call that does not return in time (a constructor sleeping 600 ms,
 * timeout 200 ms): reported, the process let go; the thread finishes the
 * call on its own and resumes where it was.
 */
static void timeout_in(const char *mode, bool threads)
{
	struct target *t = spawn(mode);
	char why[1024];
	long ret;
	int err;

	dp_ptrace_inject_timeout_ms = 200;
	err = inject(t, test_data("libinject_slow.so"), "inject_fn", "x", &ret,
		     why, sizeof(why));
	dp_ptrace_inject_timeout_ms = 5000;
	cr_assert_eq(err, -ETIMEDOUT, "%d %s", err, why);
	cr_assert(strstr(why, "dlopen() did not return within 200 ms"),
		  "%s", why);
	not_traced(t);
	expect_line(t, "slow ctor done");
	still_fine(t, threads);
	inject_ok(t, "after", 4201);
	still_fine(t, threads);
}

Test(inject, timeout_thread_in_read)
{
	timeout_in("read", true);
}

Test(inject, timeout_thread_in_nanosleep)
{
	timeout_in("sleep", true);
}

Test(inject, timeout_thread_in_user_code)
{
	timeout_in("fpspin", false);
}

Test(inject, refusals)
{
	struct target *t = spawn("read");
	char why[512];
	long ret;
	int st;

	cr_assert_eq(inject(t, "libinject_lib.so", "inject_fn", "x", &ret, why,
			    sizeof(why)), -EINVAL);
	cr_assert_eq(inject(t, LIB, "", "x", &ret, why, sizeof(why)), -EINVAL);
	cr_assert_eq(dp_ptrace_inject(INT_MAX, LIB, "inject_fn", "x", &ret,
				      why, sizeof(why)), -ESRCH);
	/* traced by someone (here: us) */
	cr_assert_eq(ptrace(PTRACE_SEIZE, t->pid, NULL, NULL), 0);
	cr_assert_eq(inject(t, LIB, "inject_fn", "x", &ret, why, sizeof(why)),
		     -EBUSY, "%s", why);
	cr_assert(strstr(why, "already traced"), "%s", why);
	cr_assert_eq(ptrace(PTRACE_INTERRUPT, t->pid, NULL, NULL), 0);
	cr_assert_eq(waitpid(t->pid, &st, __WALL), t->pid);
	cr_assert_eq(ptrace(PTRACE_DETACH, t->pid, NULL, NULL), 0);
	/* stopped by job control */
	cr_assert_eq(kill(t->pid, SIGSTOP), 0);
	for (int i = 0; i < 100; i++) {
		if (waitpid(t->pid, &st, WUNTRACED | WNOHANG) == t->pid)
			break;
		usleep(10000);
	}
	cr_assert_eq(inject(t, LIB, "inject_fn", "x", &ret, why, sizeof(why)),
		     -EAGAIN, "%s", why);
	cr_assert_eq(kill(t->pid, SIGCONT), 0);
	usleep(20000);
	still_fine(t, true);
	inject_ok(t, "after", 4201);
}
