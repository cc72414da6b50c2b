// SPDX-License-Identifier: GPL-2.0
/*
 * Processes and threads under ptrace: launch or attach, the stop loop,
 * clone/fork/vfork/exec, and a detach that gives every byte back.
 *
 * Every tracee is attached with PTRACE_SEIZE, so any thread can be stopped
 * with PTRACE_INTERRUPT for a detach.  The loop never blocks in waitpid():
 * it reaps every pending stop with WNOHANG, then sleeps in sigsuspend()
 * with SIGCHLD and the stop signals unblocked, so a Ctrl-C can never fall
 * between a check and a wait.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/ptrace/internal.h"
#include "util/util.h"

/* TRACESYSGOOD: a syscall stop (syscall.c) is never taken for a SIGTRAP */
#define TRACE_OPTS (PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK |		\
		    PTRACE_O_TRACEVFORK | PTRACE_O_TRACEEXEC |		\
		    PTRACE_O_TRACESYSGOOD)
#define SYSCALL_STOP (SIGTRAP | 0x80)

void tracer_log(struct dp_tracer *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(t->o.log ? t->o.log : stderr, fmt, ap);
	va_end(ap);
}

/* ---- bookkeeping -------------------------------------------------------- */

struct thread *thread_find(struct dp_tracer *tr, pid_t tid)
{
	for (struct proc *p = tr->procs; p; p = p->next)
		for (struct thread *t = p->threads; t; t = t->next)
			if (t->tid == tid)
				return t;
	return NULL;
}

static struct thread *thread_add(struct proc *p, pid_t tid)
{
	struct thread *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->tid = tid;
	t->proc = p;
	t->stat_fd = -1;
	t->sys_nr = -1;
	t->next = p->threads;
	p->threads = t;
	return t;
}

static void thread_del(struct thread *t)
{
	struct thread **tp = &t->proc->threads;

	while (*tp && *tp != t)
		tp = &(*tp)->next;
	if (*tp)
		*tp = t->next;
	if (t->stat_fd >= 0)
		close(t->stat_fd);
	free(t->rets);
	free(t);
}

static struct proc *proc_new(struct dp_tracer *tr, pid_t pid, char *why,
			     size_t whylen)
{
	struct proc *p = calloc(1, sizeof(*p));
	int err;

	if (!p)
		return NULL;
	p->pid = pid;
	p->tracer = tr;
	p->mm.mem_fd = -1;
	err = dp_mm_open(&p->mm, pid);
	if (!err)
		err = dp_proc_open(pid, &p->sym, why, whylen);
	else
		snprintf(why, whylen, "cannot open /proc/%d/mem: %s", pid,
			 strerror(-err));
	if (err) {
		dp_mm_close(&p->mm);
		free(p);
		return NULL;
	}
	dp_proc_symbolizer(p->sym, &p->symbolizer);
	p->next = tr->procs;
	tr->procs = p;
	return p;
}

static void proc_del(struct proc *p)
{
	struct proc **pp = &p->tracer->procs;

	while (p->threads)
		thread_del(p->threads);
	while (*pp && *pp != p)
		pp = &(*pp)->next;
	if (*pp)
		*pp = p->next;
	sites_forget(p);
	dp_unwinder_free(p->unw);
	dp_proc_close(p->sym);
	dp_mm_close(&p->mm);
	free(p);
}

/* With syscall events, to the next system call's entry or exit too. */
static void resume(struct thread *t, int sig)
{
	int req = t->proc->tracer->sys_on ? PTRACE_SYSCALL : PTRACE_CONT;

	/* a signal that arrived while the tracer ran code in the thread */
	if (!sig)
		sig = t->pending_sig;
	if (sig == t->pending_sig)
		t->pending_sig = 0;
	if (ptrace(req, t->tid, NULL, (void *)(long)sig) == 0 ||
	    errno == ESRCH)
		t->stopped = false;
}

/* From a syscall stop, where no signal can be given: one kept for later
 * stays kept. */
static void resume_syscall(struct thread *t)
{
	if (ptrace(PTRACE_SYSCALL, t->tid, NULL, NULL) == 0 || errno == ESRCH)
		t->stopped = false;
}

/* ---- clone, fork, exec ------------------------------------------------- */

/* Was @tid's first stop already reaped (before its creator's event)? */
static bool take_early(struct dp_tracer *tr, pid_t tid)
{
	for (int i = 0; i < tr->nearly; i++) {
		if (tr->early[i] == tid) {
			tr->early[i] = tr->early[--tr->nearly];
			return true;
		}
	}
	return false;
}

static void add_early(struct dp_tracer *tr, pid_t tid)
{
	if (tr->nearly < (int)(sizeof(tr->early) / sizeof(tr->early[0])))
		tr->early[tr->nearly++] = tid;
	else
		ptrace(PTRACE_CONT, tid, NULL, NULL);
}

/* Copy the parent's sites into a fork child (its memory is a copy). */
static int copy_sites(struct proc *dst, const struct proc *src)
{
	for (unsigned h = 0; h < SITE_HASH; h++) {
		for (const struct site *s = src->sites[h]; s; s = s->next) {
			struct site *c = malloc(sizeof(*c));

			if (!c)
				return -ENOMEM;
			*c = *s;
			c->probes = malloc(s->nprobes * sizeof(*c->probes) + 1);
			if (!c->probes) {
				free(c);
				return -ENOMEM;
			}
			/* a site of the tracer's own has no probe array */
			if (s->nprobes)
				memcpy(c->probes, s->probes,
				       s->nprobes * sizeof(*c->probes));
			c->next = dst->sites[h];
			dst->sites[h] = c;
		}
	}
	for (const struct xol_page *pg = src->pages; pg; pg = pg->next) {
		struct xol_page *c = malloc(sizeof(*c));

		if (!c)
			return -ENOMEM;
		*c = *pg;
		c->next = dst->pages;
		dst->pages = c;
	}
	dst->tramp = src->tramp;
	dst->armed_libs = src->armed_libs;
	dst->started = src->started;
	/* fork keeps the SIGTRAP action and our scratch page */
	dst->scratch = src->scratch;
	dst->trap_watch = src->trap_watch;
	dst->trap_act = src->trap_act;
	return 0;
}

/* Wait for the first stop of a new tracee (it may have come already). */
static int wait_first_stop(pid_t tid)
{
	int status;

	for (;;) {
		if (waitpid(tid, &status, __WALL) < 0)
			return -errno;
		if (!WIFSTOPPED(status))
			return -ESRCH;
		if (status >> 16 == PTRACE_EVENT_STOP)
			return 0;
		/* anything else first: keep the signal for later */
		if (ptrace(PTRACE_CONT, tid, NULL,
			   (void *)(long)(status >> 16 ? 0 : WSTOPSIG(status))))
			return -errno;
	}
}

/* An unfollowed fork child: take our bytes out of its copy (and the counts
 * the copy inherited from its reference counters) and let go. */
static void release_child(struct proc *c, struct thread *ct)
{
	if (ct->stopped || wait_first_stop(ct->tid) == 0) {
		ct->stopped = true;
		c->silent = true;	/* its returns are not events */
		sites_disarm_all(c);
		pages_evacuate(c);
		rets_restore(ct, false);
		/* the fork copied our pages into it too */
		pages_release(c);
		ptrace(PTRACE_DETACH, ct->tid, NULL, NULL);
	}
	proc_del(c);
}

static void on_fork(struct thread *t, pid_t child, bool vfork, bool follow)
{
	struct dp_tracer *tr = t->proc->tracer;
	char why[256];
	struct proc *c = proc_new(tr, child, why, sizeof(why));
	struct thread *ct = c ? thread_add(c, child) : NULL;

	if (!ct || copy_sites(c, t->proc) || rets_copy(ct, t)) {
		tracer_log(tr, "dprobe: cannot follow child %d: %s\n", child,
			   c ? "out of memory" : why);
		if (c)
			proc_del(c);
		ptrace(PTRACE_DETACH, child, NULL, NULL);
		return;
	}
	/* a vfork child runs in its parent's memory: the reference counters
	 * there count the parent's probes, once */
	if (vfork) {
		sites_drop_ref_ctrs(c);
		c->vfork_parent = t->proc->pid;
	}
	ct->stopped = take_early(tr, child);
	if (!follow && !vfork) {
		release_child(c, ct);
		return;
	}
	if (!follow) {
		/* a vfork child shares our memory: serve its hits until it
		 * execs, then let it go */
		c->silent = true;
		c->detach_after_exec = true;
	}
	if (ct->stopped)
		resume(ct, 0);
}

static void on_exec(struct thread *t, bool initial, char *why, size_t whylen,
		    int *err)
{
	struct proc *p = t->proc;
	struct dp_tracer *tr = p->tracer;

	/* the exec'ing thread now has the pid; the others are gone */
	while (p->threads != t || t->next) {
		struct thread *o = p->threads != t ? p->threads : t->next;

		thread_del(o);
	}
	t->tid = p->pid;
	if (t->stat_fd >= 0)
		close(t->stat_fd);
	t->stat_fd = -1;
	t->nrets = 0;
	sites_forget(p);
	p->armed_libs = false;
	p->execd = !initial;
	/* the new image has its own (no) SIGTRAP action and no page of ours */
	p->scratch = 0;
	p->vfork_parent = 0;
	p->trap_watch = false;
	dp_mm_close(&p->mm);
	dp_unwinder_free(p->unw);
	p->unw = NULL;
	dp_proc_close(p->sym);
	p->sym = NULL;
	if (p->detach_after_exec) {
		ptrace(PTRACE_DETACH, t->tid, NULL, NULL);
		t->stopped = false;
		p->mm.mem_fd = -1;
		proc_del(p);
		return;
	}
	*err = dp_mm_open(&p->mm, p->pid);
	if (!*err)
		*err = dp_proc_open(p->pid, &p->sym, why, whylen);
	if (*err)
		return;
	dp_proc_symbolizer(p->sym, &p->symbolizer);
	*err = proc_arm_probes(p, initial && !p->silent && tr->o.reg,
			       why, whylen);
	if (!*err)
		proc_arm_internal(p);
	if (!*err)
		sigtrap_snapshot(t);	/* an ignored SIGTRAP survives exec */
}

/* ---- the stop loop ------------------------------------------------------ */

static int on_trap(struct thread *t)
{
	struct dp_regs regs;
	siginfo_t si;
	int r;

	if (ptrace(PTRACE_GETSIGINFO, t->tid, NULL, &si))
		return 0;
	if (si.si_code != SI_KERNEL)
		goto theirs;
	if (dp_get_regs(t->tid, &regs))
		return 0;
	r = hit_handle(t, &regs);
	if (r == 0)
		goto theirs;
	if (r == 1)
		sigtrap_fixup(t);
	if (r < 0) {
		/* the tracer gives up: the thread re-runs the original
		 * instruction once the bytes are back */
		regs.ip--;
		dp_set_regs(t->tid, &regs);
		return r;
	}
	if (r == 1 && dp_set_regs(t->tid, &regs))
		return -ESRCH;
	return r;
theirs:
	/* the program's own SIGTRAP: keep a copy of its action first */
	sigtrap_snapshot(t);
	return 0;
}

static int on_event(struct thread *t, int event)
{
	struct dp_tracer *tr = t->proc->tracer;
	unsigned long msg = 0;
	char why[256];
	int err = 0;

	ptrace(PTRACE_GETEVENTMSG, t->tid, NULL, &msg);
	switch (event) {
	case PTRACE_EVENT_CLONE:
		if (!thread_find(tr, (pid_t)msg)) {
			struct thread *n = thread_add(t->proc, (pid_t)msg);

			if (n && take_early(tr, n->tid)) {
				n->stopped = true;
				resume(n, 0);
			}
		}
		break;
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
		on_fork(t, (pid_t)msg, event == PTRACE_EVENT_VFORK,
			tr->o.follow && !t->proc->silent && !tr->stop_req);
		break;
	case PTRACE_EVENT_EXEC:
		on_exec(t, false, why, sizeof(why), &err);
		if (err)
			tracer_log(tr, "dprobe: after exec in %d: %s\n",
				   t->proc->pid, why);
		return 0;
	}
	return 0;
}

static bool is_group_stop_sig(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN ||
	       sig == SIGTTOU;
}

static void on_exit_status(struct dp_tracer *tr, pid_t tid, int status)
{
	struct thread *t = thread_find(tr, tid);

	if (tid == tr->root) {
		tr->root_status = status;
		tr->root_done = true;
	}
	if (!t)
		return;
	rets_discard(t);
	if (t->tid == t->proc->pid || !t->proc->threads->next) {
		/* the leader's exit ends the process for us */
		struct proc *p = t->proc;

		thread_del(t);
		if (!p->threads)
			proc_del(p);
		return;
	}
	thread_del(t);
}

/* One wait status; returns <0 on a fatal tracer error. */
static int handle_status(struct dp_tracer *tr, pid_t tid, int status)
{
	struct thread *t;
	int sig, event, r;

	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		on_exit_status(tr, tid, status);
		return 0;
	}
	t = thread_find(tr, tid);
	if (!t) {
		/* a new tracee reporting before its creator's event: keep
		 * it stopped until the event registers it */
		add_early(tr, tid);
		return 0;
	}
	t->stopped = true;
	sig = WSTOPSIG(status);
	event = status >> 16;
	if (event == PTRACE_EVENT_STOP) {
		if (is_group_stop_sig(sig)) {
			ptrace(PTRACE_LISTEN, tid, NULL, NULL);
			t->stopped = false;
		} else {
			resume(t, 0);
		}
		return 0;
	}
	if (event) {
		/* after an exec the thread carries the process id */
		pid_t now = event == PTRACE_EVENT_EXEC ? t->proc->pid : tid;

		r = on_event(t, event);
		t = thread_find(tr, now);
		if (t && t->stopped)
			resume(t, 0);
		return r;
	}
	if (sig == SYSCALL_STOP) {
		sys_stop(t);
		resume_syscall(t);
		return 0;
	}
	if (sig == SIGTRAP) {
		r = on_trap(t);
		if (r < 0)
			return r;
		/* held at the entry point, where every probe is in */
		if (tr->o.show && !tr->shown && t->proc == tr->procs &&
		    t->proc->started)
			show_and_end(tr);
		resume(t, r ? 0 : SIGTRAP);
		return 0;
	}
	resume(t, sig);
	return 0;
}

static void on_sigchld(int sig)
{
	(void)sig;
}

/*
 * Block the signals the loop waits for; *@wait is the mask to sleep with
 * (them unblocked, whatever the caller had blocked: a signal that came
 * while the caller was still attaching is taken at the first sleep).
 */
static void block_signals(const struct dp_tracer *tr, sigset_t *old,
			  sigset_t *wait)
{
	struct sigaction sa = { .sa_handler = on_sigchld };
	const int sigs[] = { SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGUSR1,
			     SIGALRM, tr->o.wake_sig };
	sigset_t set;

	sigaction(SIGCHLD, &sa, NULL);
	sigemptyset(&set);
	for (unsigned i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigs[i])
			sigaddset(&set, sigs[i]);
	sigprocmask(SIG_BLOCK, &set, old);
	*wait = *old;
	for (unsigned i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigs[i])
			sigdelset(wait, sigs[i]);
}

/* ---- detach ------------------------------------------------------------- */

/*
 * Bring @t to a stop we can detach from.  What arrives first is handled:
 * our own traps (the thread then resumes past them once detached), other
 * signals (kept for the detach), new threads and children (registered, so
 * they are detached too).  Returns false if the thread is gone.
 */
static bool stop_for_detach(struct thread *t)
{
	struct dp_tracer *tr = t->proc->tracer;
	pid_t tid = t->tid;
	int status;

	if (t->stopped)
		return true;
	if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL))
		return false;
	for (;;) {
		if (waitpid(tid, &status, __WALL) < 0)
			return false;
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			if (tid == tr->root) {
				tr->root_status = status;
				tr->root_done = true;
			}
			return false;
		}
		t->stopped = true;
		switch (status >> 16) {
		case PTRACE_EVENT_STOP:
			return true;
		case PTRACE_EVENT_CLONE:
		case PTRACE_EVENT_FORK:
		case PTRACE_EVENT_VFORK:
			on_event(t, status >> 16);
			return true;
		case PTRACE_EVENT_EXEC:
			/* a new image: none of our bytes are left in it */
			sites_forget(t->proc);
			t->nrets = 0;
			t->proc->scratch = 0;
			t->proc->vfork_parent = 0;
			t->proc->trap_watch = false;
			return true;
		case 0:
			if (WSTOPSIG(status) == SYSCALL_STOP)
				return true;	/* its call goes on after the detach */
			if (WSTOPSIG(status) != SIGTRAP || on_trap(t) == 0)
				t->pending_sig = WSTOPSIG(status);
			return true;
		default:
			return true;
		}
	}
}

/* A SIGTRAP generated but not yet reported (SigPnd of the thread)? */
static bool sigtrap_pending(const struct thread *t)
{
	char path[64], line[256];
	unsigned long long pnd = 0, v;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", t->proc->pid,
		 t->tid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "SigPnd: %llx", &v) == 1)
			pnd |= v;
		/* a blocked SIGTRAP is the program's own: it stays queued */
		if (sscanf(line, "SigBlk: %llx", &v) == 1 &&
		    (v & (1ull << (SIGTRAP - 1)))) {
			fclose(f);
			return false;
		}
	}
	fclose(f);
	return pnd & (1ull << (SIGTRAP - 1));
}

/*
 * A thread interrupted just after executing one of our int3s has the
 * SIGTRAP queued: detached like that, it would die of it.  Let it report
 * the trap (handled as any hit) and stop there instead.
 */
static void drain_traps(struct thread *t)
{
	int status;

	for (int i = 0; i < 4 && t->stopped && !t->pending_sig &&
			sigtrap_pending(t); i++) {
		if (ptrace(PTRACE_CONT, t->tid, NULL, NULL) ||
		    waitpid(t->tid, &status, __WALL) != t->tid ||
		    !WIFSTOPPED(status))
			return;
		if (status >> 16)
			continue;
		if (WSTOPSIG(status) != SIGTRAP || on_trap(t) == 0)
			t->pending_sig = WSTOPSIG(status);
	}
}

static void detach_proc(struct proc *p)
{
	struct thread *t, *n;

	/* new threads may be registered meanwhile: loop until all stop */
	for (bool again = true; again;) {
		again = false;
		for (t = p->threads; t; t = n) {
			n = t->next;
			if (t->stopped)
				continue;
			again = true;
			if (!stop_for_detach(t))
				thread_del(t);
		}
	}
	for (t = p->threads; t; t = t->next)
		drain_traps(t);
	sites_disarm_all(p);
	/* out of slots and the trampoline while the returns are known */
	pages_evacuate(p);
	for (t = p->threads; t; t = t->next)
		rets_restore(t, true);
	pages_release(p);
	for (t = p->threads; t; t = t->next)
		ptrace(PTRACE_DETACH, t->tid, NULL, (void *)(long)t->pending_sig);
}

/* A parent whose vfork child still runs in its memory keeps its pages:
 * marked before either is detached (the child may go first). */
static void mark_shared_mm(struct dp_tracer *tr)
{
	for (struct proc *c = tr->procs; c; c = c->next) {
		if (!c->vfork_parent)
			continue;
		for (struct proc *p = tr->procs; p; p = p->next)
			if (p->pid == c->vfork_parent)
				p->shared_mm = true;
	}
}

static void detach_all(struct dp_tracer *tr)
{
	mark_shared_mm(tr);
	while (tr->procs) {
		struct proc *p = tr->procs;

		detach_proc(p);
		proc_del(p);
	}
}

/*
 * A launched command keeps running after a detach: wait for it, with the
 * stop signals taken (sleeping with @wait), so that dp_ptrace_abandon()
 * can still end the wait.
 */
static void wait_root(struct dp_tracer *tr, const sigset_t *wait)
{
	int st;
	pid_t r;

	while (tr->root && !tr->root_done && !tr->no_wait) {
		r = waitpid(tr->root, &st, WNOHANG);
		if (r == tr->root) {
			tr->root_status = st;
			tr->root_done = true;
		} else if (r < 0 && errno != EINTR) {
			break;
		} else if (!r) {
			sigsuspend(wait);
		}
	}
}

/* ---- public ------------------------------------------------------------- */

int dp_ptrace_run(struct dp_tracer *tr, int *status)
{
	sigset_t old, wait;
	int st, err = 0;
	pid_t pid;

	block_signals(tr, &old, &wait);
	if (tr->o.show && tr->procs && tr->procs->started)
		show_and_end(tr);	/* attached: every probe is in */
	/* launch and attach leave every thread stopped */
	for (struct proc *p = tr->procs; p; p = p->next)
		for (struct thread *t = p->threads; t; t = t->next)
			if (t->stopped)
				resume(t, t->pending_sig);
	while (tr->procs && !tr->stop_req) {
		pid = waitpid(-1, &st, __WALL | WNOHANG);
		if (pid > 0) {
			err = handle_status(tr, pid, st);
			if (err < 0)
				break;
			continue;
		}
		if (pid < 0 && errno == ECHILD)
			break;
		if (tr->profile_req) {
			tr->profile_req = 0;
			if (tr->profile_cb)
				tr->profile_cb(tr->profile_priv);
		}
		if (tr->o.sink.idle)
			tr->o.sink.idle(tr->o.sink.priv);
		if (!tr->stop_req)
			sigsuspend(&wait);
	}
	/* a launched command whose probes cannot all be armed by its entry
	 * point has not run any of its own code yet: it is not run at all */
	if (err < 0 && tr->root && !tr->root_done && thread_find(tr, tr->root) &&
	    !thread_find(tr, tr->root)->proc->started)
		kill(tr->root, SIGKILL);
	if (tr->procs)
		detach_all(tr);
	wait_root(tr, &wait);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (status)
		*status = tr->root_status;
	return err < 0 ? err : 0;
}

void dp_ptrace_stop(struct dp_tracer *t)
{
	t->stop_req = 1;
}

void dp_ptrace_abandon(struct dp_tracer *t)
{
	t->no_wait = 1;
	t->stop_req = 1;
}

void dp_ptrace_request_profile(struct dp_tracer *t)
{
	t->profile_req = 1;
}

void dp_ptrace_set_profile_cb(struct dp_tracer *t, void (*cb)(void *),
			      void *priv)
{
	t->profile_cb = cb;
	t->profile_priv = priv;
}

const struct dp_stats *dp_ptrace_stats(const struct dp_tracer *t)
{
	return &t->stats;
}

void dp_ptrace_free(struct dp_tracer *t)
{
	while (t->procs)
		proc_del(t->procs);
	free(t);
}

static struct dp_tracer *tracer_new(const struct dp_ptrace_opts *o)
{
	struct dp_tracer *tr = calloc(1, sizeof(*tr));

	if (tr) {
		tr->o = *o;
		sys_events_init(tr);
	}
	return tr;
}

/* Child side of a launch: stop so the tracer can seize us, then exec. */
static void launch_child(char *const argv[], int errfd, const sigset_t *mask,
			 bool quiet)
{
	int err;

	if (mask)
		sigprocmask(SIG_SETMASK, mask, NULL);
	if (quiet)
		dp_child_quiet();	/* the errno goes through errfd */

	raise(SIGSTOP);
	execvp(argv[0], argv);
	err = errno;
	if (write(errfd, &err, sizeof(err)) < 0)
		_exit(127);
	_exit(127);
}

/* Run the launched child up to its exec, with every stop serviced. */
static int launch_until_exec(struct dp_tracer *tr, struct thread *t,
			     char *why, size_t whylen)
{
	int status, err = 0;

	for (;;) {
		if (waitpid(t->tid, &status, __WALL) < 0)
			return -errno;
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			tr->root_status = status;
			tr->root_done = true;
			return -ENOEXEC;
		}
		if (status >> 16 == PTRACE_EVENT_EXEC)
			break;
		if (status >> 16 == PTRACE_EVENT_STOP || WSTOPSIG(status) == SIGCONT)
			ptrace(PTRACE_CONT, t->tid, NULL, NULL);
		else
			ptrace(PTRACE_CONT, t->tid, NULL,
			       (void *)(long)WSTOPSIG(status));
	}
	t->stopped = true;
	on_exec(t, true, why, whylen, &err);
	return err;
}

int dp_ptrace_launch(const struct dp_ptrace_opts *o, char *const argv[],
		     struct dp_tracer **out, char *why, size_t whylen)
{
	struct dp_tracer *tr = tracer_new(o);
	struct proc *p;
	struct thread *t;
	int pipefd[2], status, err, cerr;
	pid_t pid;

	if (!tr || pipe2(pipefd, O_CLOEXEC)) {
		free(tr);
		return -ENOMEM;
	}
	pid = fork();
	if (pid < 0) {
		err = -errno;
		goto fail_pipe;
	}
	if (pid == 0) {
		close(pipefd[0]);
		launch_child(argv, pipefd[1], o->child_mask, o->quiet_target);
	}
	close(pipefd[1]);
	tr->root = pid;
	if (waitpid(pid, &status, WUNTRACED) != pid || !WIFSTOPPED(status) ||
	    ptrace(PTRACE_SEIZE, pid, NULL, (void *)(long)TRACE_OPTS)) {
		err = -ECHILD;
		snprintf(why, whylen, "cannot trace the command: %s", strerror(errno));
		goto fail_kill;
	}
	kill(pid, SIGCONT);
	p = proc_new(tr, pid, why, whylen);
	t = p ? thread_add(p, pid) : NULL;
	if (!t) {
		err = -ENOMEM;
		goto fail_kill;
	}
	err = launch_until_exec(tr, t, why, whylen);
	if (err == -ENOEXEC) {
		if (read(pipefd[0], &cerr, sizeof(cerr)) == sizeof(cerr))
			snprintf(why, whylen, "cannot execute %s: %s", argv[0],
				 strerror(cerr));
		else
			snprintf(why, whylen, "%s exited before its exec", argv[0]);
		goto fail_pipe;
	}
	if (err)
		goto fail_kill;
	close(pipefd[0]);
	*out = tr;
	return 0;
fail_kill:
	kill(pid, SIGKILL);
	waitpid(pid, &status, __WALL);
fail_pipe:
	close(pipefd[0]);
	dp_ptrace_free(tr);
	return err;
}

/* Is @tid already traced by us (attached automatically at a clone)? */
static bool traced_by_us(pid_t tid)
{
	char path[64], line[128];
	int tracer = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "TracerPid: %d", &tracer) == 1)
			break;
	fclose(f);
	return tracer == getpid();
}

/*
 * Is @tid gone, or dead and not yet reaped (a zombie leader stays an
 * error)?  The kernel refuses to attach to a thread that has an exit
 * state with EPERM, not ESRCH: a thread of a program that creates and
 * ends threads all the time can be listed, then exit before it is seized
 * (the injector met it in about one run in 20 of its unit test
 * threads_churning).
 */
static bool thread_dying(pid_t tid)
{
	char path[64], line[128], state = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	f = fopen(path, "re");
	if (!f)
		return true;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "State: %c", &state) == 1)
			break;
	fclose(f);
	return !state || state == 'X';
}

/*
 * Seize one thread found in /proc/PID/task, and stop it (@interrupt);
 * 0, or -errno with @why.
 */
static int seize_thread(struct proc *p, pid_t tid, bool interrupt, char *why,
			size_t whylen)
{
	int e;

	if (!ptrace(PTRACE_SEIZE, tid, NULL, (void *)(long)TRACE_OPTS)) {
		if (interrupt)
			ptrace(PTRACE_INTERRUPT, tid, NULL, NULL);
		return thread_add(p, tid) ? 0 : -ENOMEM;
	}
	e = errno;
	if (e == ESRCH)
		return 0;	/* it exited since it was listed */
	if (e == EPERM && traced_by_us(tid))
		return thread_add(p, tid) ? 0 : -ENOMEM;	/* a clone of ours */
	if (e == EPERM && thread_dying(tid))
		return 0;	/* it is exiting: nothing to stop */
	snprintf(why, whylen, "cannot trace %d: %s%s", tid, strerror(e),
		 e == EPERM ? " (already traced, or not allowed: see "
		 "/proc/sys/kernel/yama/ptrace_scope)" : "");
	return -e;
}

/* Seize every thread listed in /proc/PID/task, again until the list
 * stops growing.  0, or -errno with @why. */
static int seize_all(struct proc *p, bool interrupt, char *why, size_t whylen)
{
	char path[64];
	bool again = true;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/task", p->pid);
	while (again) {
		DIR *d = opendir(path);
		struct dirent *de;

		if (!d) {
			snprintf(why, whylen, "no process %d", p->pid);
			return -ESRCH;
		}
		again = false;
		while ((de = readdir(d))) {
			pid_t tid = atoi(de->d_name);

			if (tid <= 0 || thread_find(p->tracer, tid))
				continue;
			err = seize_thread(p, tid, interrupt, why, whylen);
			if (err) {
				closedir(d);
				return err;
			}
			again = true;
		}
		closedir(d);
	}
	return 0;
}

/* Wait until @t is stopped, registering what it creates meanwhile. */
static void wait_attach_stop(struct thread *t)
{
	int status;

	for (;;) {
		if (waitpid(t->tid, &status, __WALL) != t->tid)
			return;
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			thread_del(t);
			return;
		}
		if (status >> 16 == PTRACE_EVENT_STOP) {
			t->stopped = true;
			return;
		}
		if (status >> 16) {
			unsigned long msg = 0;

			ptrace(PTRACE_GETEVENTMSG, t->tid, NULL, &msg);
			if (status >> 16 == PTRACE_EVENT_CLONE)
				thread_add(t->proc, (pid_t)msg);
			else if (status >> 16 != PTRACE_EVENT_EXEC)
				on_fork(t, (pid_t)msg, status >> 16 ==
					PTRACE_EVENT_VFORK, false);
			ptrace(PTRACE_CONT, t->tid, NULL, NULL);
			continue;
		}
		t->stopped = true;
		t->pending_sig = WSTOPSIG(status);
		return;
	}
}

/*
 * Attach every thread of @p: seize and interrupt each one listed in
 * /proc/PID/task, again until the list stops growing, then wait until all
 * of them (and threads they created meanwhile) are stopped.
 */
static int attach_threads(struct proc *p, char *why, size_t whylen)
{
	int err = seize_all(p, true, why, whylen);

	if (err)
		return err;
	for (bool waiting = true; waiting;) {
		struct thread *t, *n;

		waiting = false;
		for (t = p->threads; t; t = n) {
			n = t->next;
			if (!t->stopped) {
				waiting = true;
				wait_attach_stop(t);
			}
		}
	}
	if (!p->threads) {
		snprintf(why, whylen, "process %d exited", p->pid);
		return -ESRCH;
	}
	return 0;
}

/*
 * A process about to exec: every thread taken without a stop, so that
 * the exec stops the one that runs it (PTRACE_EVENT_EXEC: on_exec()
 * places the probes in the new image before its first instruction).
 * The others end at the exec.
 */
static int seize_for_exec(struct proc *p, char *why, size_t whylen)
{
	int err = seize_all(p, false, why, whylen);

	return err ? err : p->threads ? 0 : -ESRCH;
}

int dp_ptrace_attach(const struct dp_ptrace_opts *o, const pid_t *pids,
		     int npids, struct dp_tracer **out, char *why,
		     size_t whylen)
{
	struct dp_tracer *tr = tracer_new(o);
	int err = 0;

	if (!tr)
		return -ENOMEM;
	for (int i = 0; !err && i < npids; i++) {
		struct proc *p;

		if (kill(pids[i], 0) && errno == ESRCH) {
			snprintf(why, whylen, "no process %d", pids[i]);
			err = -ESRCH;
			break;
		}
		p = proc_new(tr, pids[i], why, whylen);
		if (!p) {
			err = -EPERM;
			break;
		}
		if (o->at_exec) {
			err = seize_for_exec(p, why, whylen);
			continue;
		}
		err = attach_threads(p, why, whylen);
		if (!err) {
			p->armed_libs = p->started = true;	/* all mapped */
			err = proc_arm_probes(p, true, why, whylen);
		}
		if (!err)
			sigtrap_snapshot(p->threads);
		if (!err)
			proc_arm_internal(p);
	}
	if (err) {
		detach_all(tr);
		dp_ptrace_free(tr);
		return err;
	}
	*out = tr;
	return 0;
}
