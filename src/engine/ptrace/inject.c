// SPDX-License-Identifier: GPL-2.0
/*
 * dlopen() in a running process from outside (see inject.h for the
 * protocol and its limits).
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/ucontext.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/ptrace/inject.h"
#include "engine/ptrace/remote.h"
#include "sym/proc.h"
#include "util/util.h"

unsigned int dp_ptrace_inject_timeout_ms = 5000;

/* How long attaching (every thread reaching a stop) may take. */
#define ATTACH_TIMEOUT_MS	5000

/*
 * How long threads stopped inside the C library or the dynamic loader
 * are given, in all, to get out of it before the calls (in_loader_code()):
 * at most OUT_ROUNDS rounds, OUT_BUDGET_MS in all.
 */
#define OUT_ROUNDS		40
#define OUT_BUDGET_MS		300

/*
 * The mapping made in the target:
 *   [0, INJ_CODE)                 the stub, read+exec (a stack overflow
 *                                 runs into it and faults)
 *   [INJ_CODE, INJ_DATA)          the private stack the calls run on
 *   INJ_DATA + INJ_UC             the restore frame's ucontext
 *   INJ_DATA + INJ_FP             its FPU state, then the strings
 */
#define INJ_CODE	0x1000
#define INJ_STACK	0x40000
#define INJ_DATA	(INJ_CODE + INJ_STACK)
#define INJ_UC		0x40
#define INJ_FP		0x800
#define INJ_MAX_STR	0x10000

#define STR_(x) #x
#define STR(x) STR_(x)

/* The kernel's internal restart codes, seen in %rax of a stopped thread. */
#define ERESTARTSYS		512
#define ERESTARTNOINTR		513
#define ERESTARTNOHAND		514
#define ERESTART_RESTARTBLOCK	516

#ifndef UC_FP_XSTATE
#define UC_FP_XSTATE		0x1
#endif
#ifndef UC_SIGCONTEXT_SS
#define UC_SIGCONTEXT_SS	0x2
#endif
#ifndef UC_STRICT_RESTORE_SS
#define UC_STRICT_RESTORE_SS	0x4
#endif
#ifndef FP_XSTATE_MAGIC1
#define FP_XSTATE_MAGIC1	0x46505853u
#define FP_XSTATE_MAGIC2	0x46505845u
#endif
#define FX_SW_OFF		464	/* software bytes in the fxsave area */
#define RTLD_DLOPEN_PRIVATE	0x80000000	/* glibc's __RTLD_DLOPEN */

#define SIGBIT(s)	(1ull << ((s) - 1))
/* Raised by an instruction: blocking them would reset their handler. */
#define SYNC_SIGS	(SIGBIT(SIGSEGV) | SIGBIT(SIGBUS) | SIGBIT(SIGILL) | \
			 SIGBIT(SIGFPE) | SIGBIT(SIGTRAP) | SIGBIT(SIGSYS))

_Static_assert(INJ_UC + sizeof(ucontext_t) <= INJ_FP, "frame overlaps");
_Static_assert(offsetof(ucontext_t, uc_stack) == 16, "uc_stack moved");

/*
 * The stub the called function returns to.  Traced, the thread stops at
 * the getpid() entry (the value is in %rdi) and never gets further.  If
 * the tracer is gone (a call that timed out, or dprobe killed), it goes
 * on: the current sigaltstack settings go into the prepared frame (so
 * rt_sigreturn keeps them) and rt_sigreturn loads the thread's original
 * registers, FPU state and signal mask in one step.  Only local labels
 * are used for addressing, so the bytes are position-independent.
 */
__asm__(
	"	.pushsection .rodata.dp_inject_stub, \"a\"\n"
	"	.globl dp_inject_stub, dp_inject_stub_mark, dp_inject_stub_end\n"
	"	.hidden dp_inject_stub, dp_inject_stub_mark, dp_inject_stub_end\n"
	"dp_inject_stub:\n"
	".Ldp_stub:\n"
	"	mov %rax, %rdi\n"
	"	mov $" STR(SYS_getpid) ", %eax\n"
	"	syscall\n"
	"dp_inject_stub_mark:\n"
	"	xor %edi, %edi\n"
	"	lea .Ldp_stub + " STR(INJ_DATA + INJ_UC + 16) "(%rip), %rsi\n"
	"	mov $" STR(SYS_sigaltstack) ", %eax\n"
	"	syscall\n"
	"	lea .Ldp_stub + " STR(INJ_DATA + INJ_UC) "(%rip), %rsp\n"
	"	mov $" STR(SYS_rt_sigreturn) ", %eax\n"
	"	syscall\n"
	"	ud2\n"
	"dp_inject_stub_end:\n"
	"	.popsection\n");

extern const unsigned char dp_inject_stub[], dp_inject_stub_mark[],
	dp_inject_stub_end[];

struct ithread {
	pid_t tid;
	bool stopped;		/* in a ptrace-stop */
	bool gone;		/* exited */
	bool group_stop;	/* the stop is job control's */
	int sig;		/* signal-delivery-stop: its signal, passed on */
};

/* Functions of the target's dynamic loader interface. */
struct dl_fns {
	uint64_t open, error, sym, close;
	int mode;		/* dlopen()'s flags */
};

#define MAX_HELD 16

struct inj {
	pid_t pid;
	struct ithread *t;
	size_t n, cap;
	struct ithread *call;	/* the thread the calls run on */
	struct dp_mm mm;
	bool saved;		/* regs0, fp0, mask0 hold its state */
	struct dp_regs regs0;
	uint8_t *fp0;
	size_t fplen;
	int fpkind;		/* NT_X86_XSTATE or NT_PRFPREG */
	uint64_t mask0;
	uint64_t region;	/* the mapping in the target, 0 if none */
	size_t region_len;
	uint64_t s_lib, s_fn, s_arg;	/* the strings in it */
	struct dp_proc *proc;	/* its objects, from before the attach */
	int seccomp_nr;		/* a system call we failed with EPERM, or -1 */
	const char *cur;	/* the call running */
	unsigned int flags;	/* DP_INJECT_* */
	siginfo_t held[MAX_HELD];	/* signals ptrace took off the thread */
	int nheld;
	char *why;
	size_t whylen;
};

/* ---- small helpers ------------------------------------------------------ */

static void say(struct inj *in, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	dp_vsay(in->why, in->whylen, fmt, ap);
	va_end(ap);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t deadline_ms(unsigned int ms)
{
	return now_ns() + (uint64_t)ms * 1000000ull;
}

/*
 * waitpid() for @tid, polled until @deadline so that a thread that never
 * stops cannot hang dprobe.  1 with *@status, 0 on timeout, or -errno.
 */
static int wait_tid(pid_t tid, int *status, uint64_t deadline)
{
	long nap = 2000;

	for (;;) {
		pid_t r = waitpid(tid, status, __WALL | WNOHANG);
		struct timespec ts = { 0, nap };

		if (r == tid)
			return 1;
		if (r < 0 && errno != EINTR)
			return -errno;
		if (now_ns() >= deadline)
			return 0;
		if (r == 0) {
			nanosleep(&ts, NULL);
			if (nap < 1000000)
				nap *= 2;
		}
	}
}

/* The value of "@key:" in /proc/@pid/status, or -1 if absent. */
static long long proc_status(pid_t pid, const char *key, bool hex,
			     char *text, size_t textlen)
{
	char path[64], line[256];
	size_t klen = strlen(key);
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, klen) || line[klen] != ':')
			continue;
		if (text) {
			snprintf(text, textlen, "%s", line + klen + 1 +
				 strspn(line + klen + 1, " \t"));
			text[strcspn(text, "\n")] = '\0';
			v = 0;
		} else {
			v = strtoll(line + klen + 1, NULL, hex ? 16 : 10);
		}
		break;
	}
	fclose(f);
	return v;
}

/* Does the program have a handler for @sig (SigCgt)? */
static bool catches(pid_t pid, int sig)
{
	long long cgt = proc_status(pid, "SigCgt", true, NULL, 0);

	return cgt > 0 && ((unsigned long long)cgt & SIGBIT(sig));
}

/* State letter of thread @tid from its stat file, 0 if gone. */
static char task_state(pid_t pid, pid_t tid)
{
	char path[64], buf[512], *rp;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* the name in parentheses may itself hold ") " */
	rp = strrchr(buf, ')');
	return rp && rp[1] == ' ' ? rp[2] : 0;
}

/* ---- finding dlopen ----------------------------------------------------- */

/* 0: the C library (or musl's loader, which is it), 1: libdl, 2: other. */
static int obj_rank(const struct dp_proc_obj *o)
{
	const char *b = o->soname ? o->soname : dp_base_name(o->path);

	if (!strncmp(b, "libc.", 5) || !strncmp(b, "libc-", 5) ||
	    !strncmp(b, "ld-musl", 7))
		return 0;
	if (!strncmp(b, "libdl.", 6) || !strncmp(b, "libdl-", 6))
		return 1;
	return 2;
}

static uint64_t func_addr(const struct dp_proc_obj *o, const char *name)
{
	struct dp_elf_sym s;

	if (!o->elf || dp_elf_lookup(o->elf, name, &s) || s.type != STT_FUNC)
		return 0;
	return s.value + o->bias;
}

/*
 * dlopen & co in @s: the C library's if it has them (glibc >= 2.34,
 * musl), else libdl's, else another library's (an interposer); else
 * glibc's private __libc_dlopen_mode().
 */
static int find_dl(struct inj *in, const struct dp_proc_objs *s,
		   struct dl_fns *dl)
{
	const struct dp_proc_obj *from = NULL;
	bool interp = false;

	memset(dl, 0, sizeof(*dl));
	for (int rank = 0; rank <= 2 && !from; rank++)
		for (size_t i = 0; i < s->n && !from; i++)
			if (!s->v[i].main && obj_rank(&s->v[i]) == rank &&
			    func_addr(&s->v[i], "dlopen"))
				from = &s->v[i];
	if (from) {
		dl->open = func_addr(from, "dlopen");
		dl->error = func_addr(from, "dlerror");
		dl->sym = func_addr(from, "dlsym");
		dl->close = func_addr(from, "dlclose");
		dl->mode = RTLD_NOW;
	} else {
		for (size_t i = 0; i < s->n && !dl->open; i++) {
			if (s->v[i].main || obj_rank(&s->v[i]))
				continue;
			dl->open = func_addr(&s->v[i], "__libc_dlopen_mode");
			dl->sym = func_addr(&s->v[i], "__libc_dlsym");
			dl->close = func_addr(&s->v[i], "__libc_dlclose");
			dl->mode = RTLD_NOW | RTLD_DLOPEN_PRIVATE;
		}
	}
	for (size_t i = 0; i < s->n; i++)
		interp |= s->v[i].interp;
	if (!dl->open && !interp) {
		say(in, "process %d has no dynamic loader (statically linked?)",
		    in->pid);
		return -ENOEXEC;
	}
	if (!dl->open || !dl->sym || !dl->close) {
		say(in, "process %d has no dlopen()/dlsym()/dlclose() in its "
		    "C library or libdl", in->pid);
		return -ENOEXEC;
	}
	return 0;
}

static int lookup_dl(struct inj *in, struct dl_fns *dl)
{
	char why[256] = "";
	int err = dp_proc_open(in->pid, &in->proc, why, sizeof(why));

	if (err) {
		say(in, "%s", why);
		return err;
	}
	return find_dl(in, dp_proc_objs(in->proc), dl);
}

/* ---- attaching and detaching -------------------------------------------- */

static int check_process(struct inj *in)
{
	char state[64] = "", tracer_comm[64] = "?", path[64];
	long long tracer;
	FILE *f;

	if (in->pid <= 0 || in->pid == getpid()) {
		say(in, "cannot inject into process %d", in->pid);
		return -EINVAL;
	}
	tracer = proc_status(in->pid, "TracerPid", false, NULL, 0);
	if (tracer < 0) {
		say(in, "no process %d", in->pid);
		return -ESRCH;
	}
	if (tracer > 0) {
		snprintf(path, sizeof(path), "/proc/%lld/comm", tracer);
		f = fopen(path, "re");
		if (f) {
			if (fgets(tracer_comm, sizeof(tracer_comm), f))
				tracer_comm[strcspn(tracer_comm, "\n")] = '\0';
			fclose(f);
		}
		say(in, "process %d is already traced by process %lld (%s)",
		    in->pid, tracer, tracer_comm);
		return -EBUSY;
	}
	proc_status(in->pid, "State", false, state, sizeof(state));
	if (state[0] == 'T') {
		say(in, "process %d is stopped (job control): continue it "
		    "first", in->pid);
		return -EAGAIN;
	}
	return 0;
}

static struct ithread *thread_find(struct inj *in, pid_t tid)
{
	for (size_t i = 0; i < in->n; i++)
		if (in->t[i].tid == tid)
			return &in->t[i];
	return NULL;
}

/*
 * A thread this process traces already: one an earlier injection let go
 * of while it was being created or exiting.  It is simply taken over
 * (interrupted and, in the end, detached with the others).
 */
static bool still_ours(struct inj *in, pid_t tid, int e)
{
	char path[64], line[256];
	bool ours = false;
	FILE *f;

	if (e != EPERM)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", in->pid, tid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "TracerPid:", 10))
			ours = atoll(line + 10) == (long long)getpid();
	fclose(f);
	errno = e;
	return ours;
}

static int seize_error(struct inj *in, pid_t tid, int e)
{
	long long tracer = proc_status(in->pid, "TracerPid", false, NULL, 0);

	if (e == EPERM && tracer > 0) {
		say(in, "process %d is already traced by process %lld",
		    in->pid, tracer);
		return -EBUSY;
	}
	say(in, "cannot trace thread %d of process %d: %s%s", tid, in->pid,
	    strerror(e), e == EPERM ? " (not allowed: see "
	    "/proc/sys/kernel/yama/ptrace_scope)" : "");
	return -e;
}

/*
 * Wait until @t reports a stop (or its exit): 0, or -ETIMEDOUT.  A
 * signal that stops it first is kept in t->sig for its detach.
 */
static int wait_stopped(struct ithread *t, uint64_t deadline)
{
	int status, r;

	for (;;) {
		r = wait_tid(t->tid, &status, deadline);
		if (r == 0)
			return -ETIMEDOUT;
		if (r < 0 || WIFEXITED(status) || WIFSIGNALED(status)) {
			t->gone = true;
			return 0;
		}
		if (!WIFSTOPPED(status))
			continue;
		t->stopped = true;
		if (status >> 16 == PTRACE_EVENT_STOP)
			t->group_stop = WSTOPSIG(status) != SIGTRAP;
		else if (!(status >> 16))
			t->sig = WSTOPSIG(status);
		return 0;
	}
}

/*
 * Is thread @tid stopped where it may hold a lock of the dynamic loader or
 * the C library that dlopen() takes?  That is: running the C library's or the
 * loader's own code (not in a system call), or in a system call made by
 * the loader's own code (a dlopen() of the program's reading its file).
 * The call would wait for that lock forever, as the thread stays stopped:
 * glibc's pthread_create() holds the loader's TLS lock
 * (GL(dl_load_tls_lock), which dlopen() takes too) while it copies the
 * new thread's TLS, so a thread stopped there deadlocked the dlopen() of
 * the threads_churning test until the timeout.  A thread in the
 * program's own code, or in a system call of the C library's (where
 * threads spend their time waiting), is taken as holding none.
 */
static bool in_loader_code(pid_t tid, const struct dp_proc_objs *s)
{
	const struct dp_proc_obj *o;
	struct dp_regs r;

	if (!s || dp_get_regs(tid, &r) || !(o = dp_proc_obj_at(s, r.ip)))
		return false;
	if ((int64_t)r.orig_ax >= 0)
		return o->interp && obj_rank(o);	/* musl's is libc */
	return o->interp || !obj_rank(o);
}

/*
 * Every thread is stopped: let those stopped inside the loader or the C
 * library (in_loader_code()) run a little longer and stop them again, so
 * that they leave the section, and the lock, they were in.  Round @round
 * of them (the pause doubles each round, from 50 us to 3.2 ms, as a
 * loaded machine may not run them at once).  Returns how many threads
 * ran, 0 when none was in such code or the rounds are spent (then the
 * calls go ahead, with their timeout as the last resort).  Threads they
 * create meanwhile are found by attach_all()'s next listing.
 */
static int out_of_loader(struct inj *in, int round, uint64_t until)
{
	const struct dp_proc_objs *s = dp_proc_objs(in->proc);
	struct timespec pause = { 0, 50000L << (round < 6 ? round : 6) };
	uint64_t deadline = deadline_ms(ATTACH_TIMEOUT_MS);
	int ran = 0;

	if (round >= OUT_ROUNDS || now_ns() >= until)
		return 0;
	for (size_t i = 0; i < in->n; i++) {
		struct ithread *t = &in->t[i];

		if (!t->stopped || t->gone || t->group_stop ||
		    !in_loader_code(t->tid, s))
			continue;
		/* a signal it stopped for is delivered now, as at a detach;
		 * one that cannot go on died: detach_others() reaps it */
		if (ptrace(PTRACE_CONT, t->tid, NULL, (void *)(long)t->sig))
			continue;
		t->stopped = false;
		t->sig = 0;
		ran++;
	}
	if (!ran)
		return 0;
	nanosleep(&pause, NULL);
	for (size_t i = 0; i < in->n; i++)
		if (!in->t[i].stopped && !in->t[i].gone)
			ptrace(PTRACE_INTERRUPT, in->t[i].tid, NULL, NULL);
	for (size_t i = 0; i < in->n; i++) {
		struct ithread *t = &in->t[i];

		if (!t->stopped && !t->gone && wait_stopped(t, deadline)) {
			say(in, "thread %d of process %d did not stop within "
			    "%d ms", t->tid, in->pid, ATTACH_TIMEOUT_MS);
			return -ETIMEDOUT;
		}
	}
	return ran;
}

/*
 * Seize and interrupt every thread in /proc/PID/task, wait until they
 * are all stopped, and list the threads again until no new one shows up
 * (a thread not yet stopped may have created one).  Then get the threads
 * stopped inside the loader or the C library out of it (out_of_loader()),
 * and list them again.
 */
static int attach_all(struct inj *in)
{
	uint64_t deadline = deadline_ms(ATTACH_TIMEOUT_MS);
	uint64_t out_until = 0;
	char path[64];
	int err, round = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", in->pid);
	for (;;) {
		size_t before = in->n;
		struct dirent *de;
		DIR *d = opendir(path);

		if (!d) {
			say(in, "no process %d", in->pid);
			return -ESRCH;
		}
		while ((de = readdir(d))) {
			pid_t tid = atoi(de->d_name);
			char st;
			int e;

			if (tid <= 0 || thread_find(in, tid))
				continue;
			st = task_state(in->pid, tid);
			if (!st || st == 'Z' || st == 'X')
				continue;
			if (in->n == in->cap) {
				size_t cap = in->cap ? 2 * in->cap : 16;
				void *v = realloc(in->t, cap * sizeof(*in->t));

				if (!v) {
					closedir(d);
					return -ENOMEM;
				}
				in->t = v;
				in->cap = cap;
			}
			e = ptrace(PTRACE_SEIZE, tid, NULL,
				   (void *)(long)PTRACE_O_TRACESYSGOOD) ?
			    errno : 0;
			if (e && !still_ours(in, tid, e)) {
				/*
				 * A thread that exited since it was listed:
				 * ESRCH once reaped, but EPERM while the
				 * kernel is still taking it down (it refuses
				 * to attach to a task with an exit state),
				 * when its status may already be gone or read
				 * Z/X.  Not an error: there is nothing to stop
				 * (the threads_churning test met it in about
				 * one run in 20, reported as "No such file or
				 * directory": errno was then still_ours()'s
				 * failed fopen(), hence @e).
				 */
				st = task_state(in->pid, tid);
				if (e == ESRCH || (e == EPERM && (!st ||
				    st == 'Z' || st == 'X')))
					continue;
				err = seize_error(in, tid, e);
				closedir(d);
				return err;
			}
			in->t[in->n++] = (struct ithread){ .tid = tid };
			ptrace(PTRACE_INTERRUPT, tid, NULL, NULL);
		}
		closedir(d);
		if (in->n == before) {
			if (!out_until)
				out_until = deadline_ms(OUT_BUDGET_MS);
			err = out_of_loader(in, round++, out_until);
			if (err < 0)
				return err;
			if (!err)
				break;
			continue;
		}
		for (size_t i = before; i < in->n; i++) {
			if (wait_stopped(&in->t[i], deadline)) {
				say(in, "thread %d of process %d did not stop "
				    "within %d ms", in->t[i].tid, in->pid,
				    ATTACH_TIMEOUT_MS);
				return -ETIMEDOUT;
			}
		}
	}
	for (size_t i = 0; i < in->n; i++) {
		if (in->t[i].group_stop) {
			say(in, "process %d was stopped (job control) while "
			    "attaching", in->pid);
			return -EAGAIN;
		}
	}
	return 0;
}

/* Let every stopped thread but @except go, with the signal it stopped for. */
static void detach_others(struct inj *in, const struct ithread *except)
{
	int status;

	for (size_t i = 0; i < in->n; i++) {
		struct ithread *t = &in->t[i];

		if (t == except || t->gone)
			continue;
		/* one that has not stopped yet gets a last chance */
		if (!t->stopped && wait_stopped(t, deadline_ms(1000)))
			continue;
		/* a thread that died (the process was killed): reap it */
		if (t->stopped && !t->gone &&
		    ptrace(PTRACE_DETACH, t->tid, NULL, (void *)(long)t->sig) &&
		    errno == ESRCH)
			wait_tid(t->tid, &status, deadline_ms(100));
		t->stopped = false;
	}
}

/*
 * Send the signals ptrace took off the calling thread again, after the
 * detach.  A sigqueue()d one keeps its siginfo; kill()/tgkill() senders
 * cannot be impersonated, so those come from dprobe's tgkill().
 */
static void requeue_held(struct inj *in)
{
	pid_t tid = in->call ? in->call->tid : in->pid;

	for (int i = 0; i < in->nheld; i++) {
		siginfo_t *si = &in->held[i];
		long r;

		if (si->si_code < 0 && si->si_code != SI_TKILL)
			r = syscall(SYS_rt_tgsigqueueinfo, in->pid, tid,
				    si->si_signo, si);
		else
			r = syscall(SYS_tgkill, in->pid, tid, si->si_signo);
		if (r)
			kill(in->pid, si->si_signo);
	}
	in->nheld = 0;
}

static void hold_signal(struct inj *in, const siginfo_t *si)
{
	if (in->nheld < MAX_HELD)
		in->held[in->nheld++] = *si;
}

static void hold_signo(struct inj *in, int sig)
{
	siginfo_t si = { .si_signo = sig, .si_code = SI_TKILL };

	if (sig)
		hold_signal(in, &si);
}

/* ---- the calling thread -------------------------------------------------- */

/*
 * Lower is better: blocked in a system call (not a futex wait), in a
 * futex wait, in the program's own code, in libc or the dynamic linker;
 * one that stopped for a signal comes after all of those, and one that
 * blocks SIGTRAP after that.  -1: unusable.
 *
 * A thread with SIGTRAP blocked is most likely inside glibc's own
 * sections with every signal blocked: creating a thread, or ending one
 * (its thread-specific data and TLS destructors already run).  The
 * lowest thread id is no sign of the main thread once thread ids wrap
 * around pid_max, which a program creating threads all the time makes
 * happen quickly: attached every 0.1 s, such a program had such a thread
 * chosen every few dozen attaches.
 */
static int thread_rank(const struct ithread *t, const struct dp_proc_objs *s)
{
	const struct dp_proc_obj *o;
	struct dp_regs r;
	uint64_t mask = 0;
	int rank;

	if (!t->stopped || t->gone || t->group_stop || dp_get_regs(t->tid, &r))
		return -1;
	if (ptrace(PTRACE_GETSIGMASK, t->tid, (void *)sizeof(mask), &mask))
		mask = 0;
	if ((int64_t)r.orig_ax >= 0) {
		rank = r.orig_ax == SYS_futex;
#ifdef SYS_futex_waitv
		rank |= r.orig_ax == SYS_futex_waitv;
#endif
	} else {
		o = s ? dp_proc_obj_at(s, r.ip) : NULL;
		rank = o && (o->interp || !obj_rank(o)) ? 3 : 2;
	}
	return rank + (t->sig ? 4 : 0) + (mask & SIGBIT(SIGTRAP) ? 8 : 0);
}

static int choose_thread(struct inj *in)
{
	const struct dp_proc_objs *s = dp_proc_objs(in->proc);
	int best = -1;

	for (size_t i = 0; i < in->n; i++) {
		int r = thread_rank(&in->t[i], s);

		if (r >= 0 && (best < 0 || r < best ||
			       (r == best && in->t[i].tid < in->call->tid))) {
			best = r;
			in->call = &in->t[i];
		}
	}
	if (!in->call) {
		say(in, "process %d has no thread that can run a call",
		    in->pid);
		return -ESRCH;
	}
	return 0;
}

/*
 * Bring the calling thread from a signal-delivery-stop to a ptrace
 * interrupt stop: the signal is delivered (its handler frame set up, or
 * its default action taken) and the thread stops at once after that.
 */
static int settle(struct inj *in)
{
	struct ithread *t = in->call;
	uint64_t deadline = deadline_ms(ATTACH_TIMEOUT_MS);

	for (int i = 0; t->sig && i < 16; i++) {
		int sig = t->sig;

		t->sig = 0;
		/* the signal-delivery-stop consumed the first interrupt */
		ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL);
		if (ptrace(PTRACE_CONT, t->tid, NULL, (void *)(long)sig)) {
			t->gone = true;
			break;
		}
		t->stopped = false;
		if (wait_stopped(t, deadline)) {
			say(in, "thread %d of process %d did not stop within "
			    "%d ms", t->tid, in->pid, ATTACH_TIMEOUT_MS);
			return -ETIMEDOUT;
		}
		if (t->group_stop) {
			say(in, "process %d was stopped (job control) while "
			    "attaching", in->pid);
			return -EAGAIN;
		}
	}
	if (t->gone) {
		say(in, "process %d exited", in->pid);
		return -ESRCH;
	}
	if (t->sig) {
		say(in, "thread %d of process %d keeps receiving signals",
		    t->tid, in->pid);
		return -EAGAIN;
	}
	return 0;
}

/* ---- the calling thread's state ----------------------------------------- */

static int save_state(struct inj *in)
{
	pid_t tid = in->call->tid;
	struct iovec iov;
	int err;

	if ((err = dp_get_regs(tid, &in->regs0)))
		return err;
	if (ptrace(PTRACE_GETSIGMASK, tid, (void *)sizeof(in->mask0),
		   &in->mask0))
		return -errno;
	in->fp0 = malloc(65536);
	if (!in->fp0)
		return -ENOMEM;
	iov = (struct iovec){ in->fp0, 65536 };
	in->fpkind = NT_X86_XSTATE;
	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_X86_XSTATE, &iov)) {
		iov = (struct iovec){ in->fp0, sizeof(struct user_fpregs_struct) };
		in->fpkind = NT_PRFPREG;
		if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRFPREG, &iov))
			return -errno;
	}
	in->fplen = iov.iov_len;
	in->saved = true;
	return 0;
}

/*
 * The state for the calls: every signal blocked but the synchronous ones,
 * and a clean x87/SSE control state as the ABI expects at a call (the
 * program may have been stopped mid-way through x87 code).
 *
 * The synchronous signals are unblocked even when the thread had them
 * blocked: one raised by an instruction while blocked makes the kernel
 * reset its action to SIG_DFL (force_sig) before we see it, for good.
 * The calling thread may well block them all: glibc blocks every signal
 * while it creates a thread and while a thread ends, and a churning
 * program has threads there at any moment.  The agent's int3s (its
 * guards on libc's sigaction() and mask functions, armed while it has
 * probes) are met by dprobe_agent_attach() itself; with SIGTRAP blocked
 * the first one reset the agent's SIGTRAP action, the call was abandoned
 * half-way and every later int3 of the agent killed the process.
 * Unblocked, the trap goes to the handler the process has (on_signal()).
 * The thread's own mask is back after the calls (restore_state()).
 */
static int enter_call_state(struct inj *in)
{
	pid_t tid = in->call->tid;
	uint64_t mask = ~0ull & ~SYNC_SIGS;
	struct user_fpregs_struct fp;

	if (ptrace(PTRACE_SETSIGMASK, tid, (void *)sizeof(mask), &mask))
		return -errno;
	memcpy(&fp, in->fp0, sizeof(fp));
	fp.cwd = 0x37f;
	fp.swd = fp.ftw = fp.fop = 0;
	fp.rip = fp.rdp = 0;
	fp.mxcsr = 0x1f80;
	memset(fp.st_space, 0, sizeof(fp.st_space));
	memset(fp.xmm_space, 0, sizeof(fp.xmm_space));
	ptrace(PTRACE_SETFPREGS, tid, NULL, &fp);
	return 0;
}

static struct dp_regs resume_regs(const struct dp_regs *r0);

/*
 * A thread stopped in a sleep (-ERESTART_RESTARTBLOCK) would resume it
 * through its restart block, which the code run in it meanwhile may have
 * reset (an rt_sigreturn does: the agent's constructor takes a SIGTRAP),
 * and the sleep would end at once with EINTR: the program would see it
 * cut short.  The system call is made again instead, from its start, as
 * the stub does when the tracer is gone: a sleep lasts longer rather
 * than ending early.
 */
static void restart_interrupted(struct inj *in)
{
	struct dp_regs r;

	if ((int64_t)in->regs0.orig_ax < 0 ||
	    (int64_t)in->regs0.ax != -ERESTART_RESTARTBLOCK)
		return;
	r = resume_regs(&in->regs0);
	r.orig_ax = (uint64_t)-1;	/* no restart of the kernel's on top */
	dp_set_regs(in->call->tid, &r);
}

/* Put the calling thread back: mapping, FPU state, mask, registers. */
static void restore_state(struct inj *in)
{
	pid_t tid = in->call->tid;
	struct iovec iov = { in->fp0, in->fplen };
	uint64_t args[6] = { in->region, in->region_len };
	int64_t ret;
	int sig = 0;

	if (in->region) {
		dp_remote_syscall(&in->mm, tid, SYS_munmap, args, &ret, &sig);
		hold_signo(in, sig);
		in->region = 0;
	}
	if (!in->saved)
		return;
	ptrace(PTRACE_SETREGSET, tid, (void *)(long)in->fpkind, &iov);
	ptrace(PTRACE_SETSIGMASK, tid, (void *)sizeof(in->mask0), &in->mask0);
	dp_set_regs(tid, &in->regs0);
	restart_interrupted(in);
}

/*
 * The registers the thread resumes with if the stub restores it: an
 * interrupted system call is re-executed (there is no restart block to
 * continue a sleep with after rt_sigreturn).
 */
static struct dp_regs resume_regs(const struct dp_regs *r0)
{
	struct dp_regs r = *r0;

	if ((int64_t)r.orig_ax < 0)
		return r;
	switch ((int64_t)r.ax) {
	case -ERESTARTSYS:
	case -ERESTARTNOINTR:
	case -ERESTARTNOHAND:
	case -ERESTART_RESTARTBLOCK:
		r.ax = r.orig_ax;
		r.ip -= 2;
		break;
	}
	return r;
}

/* The rt_sigreturn frame the stub uses when the tracer is gone. */
static void build_frame(const struct inj *in, uint8_t *data)
{
	ucontext_t *uc = (ucontext_t *)(data + INJ_UC);
	struct dp_regs r = resume_regs(&in->regs0);
	greg_t *g = uc->uc_mcontext.gregs;
	uint32_t magic2 = FP_XSTATE_MAGIC2;
	struct _fpx_sw_bytes sw = { 0 };

	uc->uc_flags = UC_FP_XSTATE | UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS;
	g[REG_R8] = r.r8;
	g[REG_R9] = r.r9;
	g[REG_R10] = r.r10;
	g[REG_R11] = r.r11;
	g[REG_R12] = r.r12;
	g[REG_R13] = r.r13;
	g[REG_R14] = r.r14;
	g[REG_R15] = r.r15;
	g[REG_RDI] = r.di;
	g[REG_RSI] = r.si;
	g[REG_RBP] = r.bp;
	g[REG_RBX] = r.bx;
	g[REG_RDX] = r.dx;
	g[REG_RAX] = r.ax;
	g[REG_RCX] = r.cx;
	g[REG_RSP] = r.sp;
	g[REG_RIP] = r.ip;
	g[REG_EFL] = r.flags;
	/* cs, gs, fs, ss as 16-bit fields */
	g[REG_CSGSFS] = (greg_t)((r.cs & 0xffff) | (r.ss & 0xffff) << 48);
	uc->uc_mcontext.fpregs = (fpregset_t)(uintptr_t)
		(in->region + INJ_DATA + INJ_FP);
	memcpy(&uc->uc_sigmask, &in->mask0, sizeof(in->mask0));
	memcpy(data + INJ_FP, in->fp0, in->fplen);
	if (in->fpkind != NT_X86_XSTATE)
		return;
	/*
	 * A signal frame's extended state is described by software bytes in
	 * the fxsave area's reserved part (where ptrace puts XCR0 instead)
	 * and ends with a second magic; without them the kernel restores the
	 * legacy x87/SSE part only.
	 */
	memcpy(&sw.xstate_bv, in->fp0 + FX_SW_OFF, sizeof(sw.xstate_bv));
	sw.magic1 = FP_XSTATE_MAGIC1;
	sw.xstate_size = (uint32_t)in->fplen;
	sw.extended_size = sw.xstate_size + sizeof(magic2);
	memcpy(data + INJ_FP + FX_SW_OFF, &sw, sizeof(sw));
	memcpy(data + INJ_FP + in->fplen, &magic2, sizeof(magic2));
}

/*
 * Map the stub, stack and data into the target, with the strings the
 * calls take.
 */
static int map_region(struct inj *in, const char *lib, const char *fn,
		      const char *arg)
{
	size_t l1 = strlen(lib) + 1, l2 = strlen(fn) + 1;
	size_t l3 = arg ? strlen(arg) + 1 : 0;
	size_t fpsz = (in->fplen + 4 + 63) & ~(size_t)63;
	size_t dlen = (INJ_FP + fpsz + l1 + l2 + l3 + 4095) & ~(size_t)4095;
	uint64_t args[6] = { 0, INJ_CODE, PROT_READ | PROT_EXEC };
	uint8_t *data;
	int64_t ret;
	int sig = 0, err;

	in->region_len = INJ_DATA + dlen;
	in->region = dp_remote_mmap_near(&in->mm, in->call->tid, 0,
					 in->region_len,
					 PROT_READ | PROT_WRITE, &sig);
	hold_signo(in, sig);
	if (!in->region) {
		say(in, "cannot map %zu bytes in process %d", in->region_len,
		    in->pid);
		return -ENOMEM;
	}
	data = calloc(1, dlen);
	if (!data)
		return -ENOMEM;
	in->s_lib = in->region + INJ_DATA + INJ_FP + fpsz;
	in->s_fn = in->s_lib + l1;
	in->s_arg = arg ? in->s_fn + l2 : 0;
	build_frame(in, data);
	memcpy(data + INJ_FP + fpsz, lib, l1);
	memcpy(data + INJ_FP + fpsz + l1, fn, l2);
	if (arg)
		memcpy(data + INJ_FP + fpsz + l1 + l2, arg, l3);
	err = dp_mm_write(&in->mm, in->region, dp_inject_stub,
			  (size_t)(dp_inject_stub_end - dp_inject_stub));
	if (!err)
		err = dp_mm_write(&in->mm, in->region + INJ_DATA, data, dlen);
	free(data);
	if (err) {
		say(in, "cannot write to process %d's memory", in->pid);
		return err;
	}
	args[0] = in->region;
	err = dp_remote_syscall(&in->mm, in->call->tid, SYS_mprotect, args,
				&ret, &sig);
	hold_signo(in, sig);
	if (!err && ret)
		err = (int)ret;
	if (err)
		say(in, "cannot make the stub executable in process %d: %s",
		    in->pid, strerror(-err));
	return err;
}

/* ---- remote calls -------------------------------------------------------- */

/*
 * The calling thread stopped for @sig during a call.  Returns 0 with the
 * signal to resume with in *@deliver, or -EFAULT when the call raised a
 * fault the program does not handle (then abandoned).
 */
static int on_signal(struct inj *in, const char *name, int sig, int *deliver)
{
	pid_t tid = in->call->tid;
	siginfo_t si;
	struct dp_regs r;

	*deliver = 0;
	if (ptrace(PTRACE_GETSIGINFO, tid, NULL, &si)) {
		hold_signo(in, sig);
		return 0;
	}
	if (sig == SIGSYS && si.si_code == 1 /* SYS_SECCOMP */) {
		if (catches(in->pid, SIGSYS)) {
			*deliver = sig;
			return 0;
		}
		/* no handler: SIGSYS would kill it; fail the call instead */
		if (!dp_get_regs(tid, &r)) {
			r.ax = (uint64_t)-EPERM;
			dp_set_regs(tid, &r);
		}
		in->seccomp_nr = si.si_syscall;
		return 0;
	}
	if (si.si_code > 0 && (SYNC_SIGS & SIGBIT(sig))) {
		if (catches(in->pid, sig)) {
			*deliver = sig;
			return 0;
		}
		if (dp_get_regs(tid, &r))
			r.ip = 0;
		say(in, "%s crashed in process %d: %s (code %d) at ip 0x%llx "
		    "(address %p), which the program does not catch; the call "
		    "was abandoned", name, in->pid, strsignal(sig), si.si_code,
		    (unsigned long long)r.ip, si.si_addr);
		return -EFAULT;
	}
	hold_signal(in, &si);
	return 0;
}

/* Which stop, for the call loop. */
enum { ST_GONE, ST_EVENT, ST_SYSCALL, ST_SIGNAL, ST_OTHER };

static int classify(int status)
{
	if (WIFEXITED(status) || WIFSIGNALED(status))
		return ST_GONE;
	if (!WIFSTOPPED(status))
		return ST_OTHER;
	if (status >> 16 == PTRACE_EVENT_STOP)
		return ST_EVENT;
	if (status >> 16)
		return ST_OTHER;
	return WSTOPSIG(status) == (SIGTRAP | 0x80) ? ST_SYSCALL : ST_SIGNAL;
}

static int report_gone(struct inj *in, const char *name, int status)
{
	in->call->gone = true;
	if (WIFSIGNALED(status))
		say(in, "process %d was killed by %s during %s%s", in->pid,
		    strsignal(WTERMSIG(status)), name,
		    WTERMSIG(status) == SIGSYS ? " (seccomp?)" : "");
	else
		say(in, "process %d exited during %s", in->pid, name);
	return -ESRCH;
}

/*
 * Call @fn(@a0, @a1) on the calling thread; *@val gets its %rax.  The
 * thread must be in a stop inside the kernel's signal handling (the
 * attach interrupt, a previous call's end, dp_remote_syscall()'s trap),
 * where registers set with orig_ax = -1 start cleanly; it ends in one.
 */
static int remote_call(struct inj *in, const char *name, uint64_t fn,
		       uint64_t a0, uint64_t a1, uint64_t *val)
{
	pid_t tid = in->call->tid;
	uint64_t deadline = deadline_ms(dp_ptrace_inject_timeout_ms);
	uint64_t stub = in->region, top = in->region + INJ_DATA;
	uint64_t mark = stub + (uint64_t)(dp_inject_stub_mark - dp_inject_stub);
	struct dp_regs r = in->regs0;
	bool finishing = false;
	int status, n, err, deliver;

	in->cur = name;
	r.ip = fn;
	r.di = a0;
	r.si = a1;
	r.ax = 0;
	r.orig_ax = (uint64_t)-1;
	r.sp = top - 8;				/* 16-byte aligned at the call */
	r.flags &= ~(0x100ull | 0x400ull);	/* TF, DF */
	if (dp_mm_write(&in->mm, r.sp, &stub, sizeof(stub)) ||
	    dp_set_regs(tid, &r) || ptrace(PTRACE_SYSCALL, tid, NULL, NULL)) {
		say(in, "cannot start %s in process %d", name, in->pid);
		return -ESRCH;
	}
	for (;;) {
		long req = finishing ? PTRACE_CONT : PTRACE_SYSCALL;

		n = wait_tid(tid, &status, deadline);
		if (n == 0)
			return -ETIMEDOUT;
		if (n < 0)
			return report_gone(in, name, 0);
		deliver = 0;
		switch (classify(status)) {
		case ST_GONE:
			return report_gone(in, name, status);
		case ST_EVENT:
			if (finishing)
				return 0;
			break;
		case ST_SYSCALL:
			if (finishing || dp_get_regs(tid, &r) || r.ip != mark ||
			    r.orig_ax != SYS_getpid)
				break;
			/*
			 * Back in the stub.  Let the getpid() run and stop the
			 * thread in the signal handling on its way out: there
			 * the original registers can be put back.
			 */
			*val = r.di;
			finishing = true;
			req = PTRACE_CONT;
			break;
		case ST_SIGNAL:
			if ((err = on_signal(in, name, WSTOPSIG(status),
					     &deliver)))
				return err;
			break;
		default:
			break;
		}
		/* any stop clears a pending interrupt: ask again */
		if (finishing)
			ptrace(PTRACE_INTERRUPT, tid, NULL, NULL);
		if (ptrace(req, tid, NULL, (void *)(long)deliver))
			return report_gone(in, name, 0);
	}
}

/*
 * A call did not return in time: let every thread go.  The calling thread
 * is stopped wherever it is and detached; it finishes the call, and the
 * stub restores it.
 */
static void let_go(struct inj *in)
{
	struct ithread *t = in->call;
	int status, deliver = 0;

	detach_others(in, t);
	ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL);
	for (;;) {
		if (wait_tid(t->tid, &status, deadline_ms(1000)) != 1)
			return;		/* stays attached until we exit */
		if (classify(status) == ST_GONE) {
			t->gone = true;
			return;
		}
		/* a fault nobody handles is the program's again */
		if (classify(status) == ST_SIGNAL &&
		    on_signal(in, in->cur, WSTOPSIG(status), &deliver))
			deliver = WSTOPSIG(status);
		ptrace(PTRACE_DETACH, t->tid, NULL, (void *)(long)deliver);
		t->stopped = false;
		return;
	}
}

/* The text of dlerror() in the target, into @buf. */
static int remote_dlerror(struct inj *in, const struct dl_fns *dl,
			  char *buf, size_t len)
{
	uint64_t msg = 0;
	int err;

	snprintf(buf, len, "no error text (the target has no dlerror())");
	if (!dl->error)
		return 0;
	if ((err = remote_call(in, "dlerror", dl->error, 0, 0, &msg)))
		return err;
	if (!msg || dp_mm_read_str(&in->mm, msg, buf, len) < 0)
		snprintf(buf, len, "no error text");
	buf[len - 1] = '\0';
	return 0;
}

static const char *seccomp_note(const struct inj *in, char *buf, size_t len)
{
	if (in->seccomp_nr < 0)
		return "";
	snprintf(buf, len, " (system call %d refused by seccomp)",
		 in->seccomp_nr);
	return buf;
}

static int run_calls(struct inj *in, const struct dl_fns *dl,
		     const char *lib, const char *fn, long *ret)
{
	uint64_t handle, addr, v;
	char text[1024], note[64];
	int err;

	err = remote_call(in, "dlopen", dl->open, in->s_lib,
			  (uint64_t)dl->mode, &handle);
	if (err)
		return err;
	if (!handle) {
		if ((err = remote_dlerror(in, dl, text, sizeof(text))))
			return err;
		say(in, "dlopen(\"%s\") failed in process %d: %s%s", lib,
		    in->pid, text, seccomp_note(in, note, sizeof(note)));
		return -ELIBACC;
	}
	err = remote_call(in, "dlsym", dl->sym, handle, in->s_fn, &addr);
	if (err)
		return err;
	if (!addr) {
		/* the text first: dlclose() may replace it */
		if ((err = remote_dlerror(in, dl, text, sizeof(text))) ||
		    (err = remote_call(in, "dlclose", dl->close, handle, 0,
				       &v)))
			return err;
		say(in, "%s has no function %s: %s", lib, fn, text);
		return -ENOENT;
	}
	err = remote_call(in, fn, addr, in->s_arg, 0, &v);
	if (!err)
		*ret = (long)(int)v;
	return err;
}

/* ---- public ------------------------------------------------------------- */

static int check_args(struct inj *in, const char *lib, const char *fn,
		      const char *arg)
{
	if (!lib || lib[0] != '/' || !fn || !fn[0]) {
		say(in, "the library must be an absolute path and the "
		    "function a name");
		return -EINVAL;
	}
	if (strlen(lib) + strlen(fn) + (arg ? strlen(arg) : 0) + 3 >
	    INJ_MAX_STR) {
		say(in, "library path, function name and argument are longer "
		    "than %d bytes", INJ_MAX_STR);
		return -E2BIG;
	}
	return 0;
}

/* ---- DP_INJECT_AGENT_SIGNALS ------------------------------------------- */

/* The functions the agent guards, and what sigaction() jumps to in glibc. */
static const char *const guarded_fns[] = {
	"sigaction", "__libc_sigaction", "sigprocmask", "pthread_sigmask",
};

#define MAX_GUARDED	8
#define STEP_OUT_MAX	10000	/* instructions, at most, per thread */

struct fn_range {
	uint64_t lo, hi;
};

/* Where the guarded functions are in the C library: the number found. */
static int guarded_ranges(struct inj *in, struct fn_range *v)
{
	const struct dp_proc_objs *s = dp_proc_objs(in->proc);
	int n = 0;

	for (size_t i = 0; s && i < s->n; i++) {
		const struct dp_proc_obj *o = &s->v[i];

		if (o->main || obj_rank(o) || !o->elf)
			continue;
		for (size_t k = 0; k < sizeof(guarded_fns) /
			sizeof(guarded_fns[0]) && n < MAX_GUARDED; k++) {
			struct dp_elf_sym sym;

			if (dp_elf_lookup(o->elf, guarded_fns[k], &sym) ||
			    sym.type != STT_FUNC || !sym.size)
				continue;
			v[n].lo = sym.value + o->bias;
			v[n++].hi = sym.value + o->bias + sym.size;
		}
	}
	return n;
}

/* Past the first instruction of one of them (at it, the guard catches). */
static bool in_guarded(const struct fn_range *v, int n, uint64_t ip,
		       bool past_entry)
{
	for (int i = 0; i < n; i++)
		if (ip >= v[i].lo + past_entry && ip < v[i].hi)
			return true;
	return false;
}

/*
 * No thread may be inside those functions when the agent arms its int3
 * guards on them: it would finish the call unguarded, so a thread that
 * had passed the int3 of pthread_sigmask(SIG_BLOCK, every signal) blocks
 * SIGTRAP after all (and its next pthread_sigmask() meets the int3 with
 * it blocked: the kernel kills), and one inside sigaction() may put its
 * own action over the agent's.  Such a thread (out_of_loader() lets
 * threads in the C library leave it, but only for so long) is single-
 * stepped until it has returned to its caller: out of them all, its
 * stack pointer above where it was.  SIGTRAP is unblocked first: a step's
 * trap with SIGTRAP blocked would reset the program's action.
 */
static void step_out(struct inj *in)
{
	struct fn_range v[MAX_GUARDED];
	int n = guarded_ranges(in, v);

	for (size_t i = 0; n && i < in->n; i++) {
		struct ithread *t = &in->t[i];
		uint64_t sp0, mask;
		struct dp_regs r;
		int status;

		if (!t->stopped || t->gone || t->group_stop || t->sig ||
		    dp_get_regs(t->tid, &r) || (int64_t)r.orig_ax >= 0 ||
		    !in_guarded(v, n, r.ip, true))
			continue;
		if (!ptrace(PTRACE_GETSIGMASK, t->tid, (void *)sizeof(mask),
			    &mask) && (mask & SIGBIT(SIGTRAP))) {
			mask &= ~SIGBIT(SIGTRAP);
			ptrace(PTRACE_SETSIGMASK, t->tid, (void *)sizeof(mask),
			       &mask);
		}
		sp0 = r.sp;
		for (int k = 0; k < STEP_OUT_MAX; k++) {
			if (ptrace(PTRACE_SINGLESTEP, t->tid, NULL, NULL) ||
			    wait_tid(t->tid, &status, deadline_ms(1000)) != 1) {
				t->stopped = false;	/* detach_others() waits */
				break;
			}
			if (classify(status) == ST_GONE) {
				t->gone = true;
				break;
			}
			/* a signal that came first: kept for the detach */
			if (WIFSTOPPED(status) && WSTOPSIG(status) != SIGTRAP &&
			    !(status >> 16))
				t->sig = WSTOPSIG(status);
			if (t->sig || dp_get_regs(t->tid, &r) ||
			    (!in_guarded(v, n, r.ip, false) && r.sp > sp0))
				break;
		}
	}
}

/* Attach, pick and prepare the calling thread, map the stub. */
static int prepare(struct inj *in, const char *lib, const char *fn,
		   const char *arg)
{
	int err;

	if ((err = attach_all(in)))
		return err;
	if (in->flags & DP_INJECT_AGENT_SIGNALS)
		step_out(in);
	if ((err = choose_thread(in)) || (err = settle(in)))
		return err;
	if ((err = dp_mm_open(&in->mm, in->pid))) {
		say(in, "cannot open the memory of process %d: %s", in->pid,
		    strerror(-err));
		return err;
	}
	if ((err = save_state(in))) {
		say(in, "cannot read the state of thread %d: %s",
		    in->call->tid, strerror(-err));
		return err;
	}
	if ((err = enter_call_state(in))) {
		say(in, "cannot set the signal mask of thread %d: %s",
		    in->call->tid, strerror(-err));
		return err;
	}
	return map_region(in, lib, fn, arg);
}

/*
 * DP_INJECT_AGENT_SIGNALS, after the calls: every stopped thread's mask
 * without SIGTRAP, the calling thread's in the mask restore_state() puts
 * back.
 */
static void unblock_trap(struct inj *in)
{
	for (size_t i = 0; i < in->n; i++) {
		struct ithread *t = &in->t[i];
		uint64_t mask;

		if (t == in->call || !t->stopped || t->gone ||
		    ptrace(PTRACE_GETSIGMASK, t->tid, (void *)sizeof(mask),
			   &mask) || !(mask & SIGBIT(SIGTRAP)))
			continue;
		mask &= ~SIGBIT(SIGTRAP);
		ptrace(PTRACE_SETSIGMASK, t->tid, (void *)sizeof(mask), &mask);
	}
	in->mask0 &= ~SIGBIT(SIGTRAP);
}

int dp_ptrace_inject(pid_t pid, const char *lib, const char *fn,
		     const char *arg, long *ret, char *why, size_t whylen)
{
	return dp_ptrace_inject_flags(pid, lib, fn, arg, 0, ret, why, whylen);
}

int dp_ptrace_inject_flags(pid_t pid, const char *lib, const char *fn,
			   const char *arg, unsigned int flags, long *ret,
			   char *why, size_t whylen)
{
	struct inj in = { .pid = pid, .why = why, .whylen = whylen,
			  .mm = { .mem_fd = -1 }, .seccomp_nr = -1,
			  .flags = flags };
	struct dl_fns dl;
	long v = 0;
	int err;

	if (why && whylen)
		why[0] = '\0';
	if ((err = check_args(&in, lib, fn, arg)) ||
	    (err = check_process(&in)))
		return err;
	err = lookup_dl(&in, &dl);
	if (!err)
		err = prepare(&in, lib, fn, arg);
	if (!err)
		err = run_calls(&in, &dl, lib, fn, &v);
	if (!err && (flags & DP_INJECT_AGENT_SIGNALS))
		unblock_trap(&in);
	if (err == -ETIMEDOUT && in.region) {
		let_go(&in);
		say(&in, "%s() did not return within %u ms in thread %d of "
		    "process %d (a stopped thread may hold a lock it needs); "
		    "the process was let go: the thread finishes the call on "
		    "its own, then resumes where it was (%zu KiB stay mapped "
		    "at 0x%llx)", in.cur, dp_ptrace_inject_timeout_ms,
		    in.call->tid, pid, in.region_len >> 10,
		    (unsigned long long)in.region);
	} else {
		if (in.call && !in.call->gone)
			restore_state(&in);
		detach_others(&in, NULL);
	}
	requeue_held(&in);
	if (in.mm.mem_fd >= 0)
		dp_mm_close(&in.mm);
	if (in.proc)
		dp_proc_close(in.proc);
	free(in.fp0);
	free(in.t);
	if (!err && ret)
		*ret = v;
	return err;
}
