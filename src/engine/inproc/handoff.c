// SPDX-License-Identifier: GPL-2.0
/*
 * Processes of a session (-f) that the agent cannot be in: an exec of a
 * statically linked program (no loader to preload it), of a set-ID one
 * in secure mode, or with an environment that dropped the preload.  The
 * ptrace engine traces each of them for the session, in a helper process
 * of dprobe's (a tracer is the process that attached), and its records
 * join the others' in time order.
 *
 * Before such an exec the agent says EXEC (agent/exec.c): the helper
 * takes every thread of the process without stopping it, the agent is
 * told to go on (EXECGO), and the exec stops the process for the helper,
 * which places the probes in the new image before its first instruction.
 * An exec the agent did not see (a raw system call, posix_spawn()'s
 * child) is found when the process's image closed and no new one joined:
 * the helper then attaches to the running program, whose start was not
 * seen, and says so.
 *
 * The helper sends, on a seqpacket pair: 'A' whether it attached, then
 * one 'R' per record that passed its filter, each after a 'Y' for every
 * place in its head (ip, or func and ret_ip) not named before (the
 * program may be gone when dprobe prints: its symbols come with the
 * records), then at its end 'H' per probe that was hit (the hit and
 * miss counts of kprobe_profile) and 'S' its counts.  dprobe delivers each record again (same filter, same
 * result), which keeps the session's counts and output in one place.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/engine.h"
#include "engine/inproc/internal.h"
#include "event/deliver.h"
#include "lang/layout.h"

/* How long dprobe waits for a helper to attach, or for its next message
 * once it was told to end. */
#define HELPER_WAIT_MS	10000

enum { HO_ATTACHED = 'A', HO_RECORD = 'R', HO_SYM = 'Y', HO_HITS = 'H',
       HO_STATS = 'S' };

struct ho_attached {
	uint32_t kind;
	int32_t err;
	char why[512];
};

struct ho_rec {
	uint32_t kind;
	uint32_t event;		/* dp_event id */
	uint64_t ts_ns;
	int32_t cpu, pid, tgid;
	uint32_t len;		/* bytes of record after this header */
	char comm[16];
};

struct ho_sym {
	uint32_t kind;
	uint32_t pad;
	uint64_t addr, off, size;
	char name[256];		/* "": no symbol there */
};

struct ho_hits {
	uint32_t kind;
	uint32_t event, probe;	/* the probe's place in its event */
	uint32_t pad;
	uint64_t nhit, nmiss;
};

struct ho_stats {
	uint32_t kind;
	uint32_t pad;
	struct dp_stats st;
};

#define HO_MSG_MAX	(sizeof(struct ho_rec) + DP_RING_MAX_RECORD)

/* ---- places named: an open-addressing set by address ---------------------- */

#define SYMC_MAX	(1u << 16)	/* places remembered per image */

struct symc_ent {
	uint64_t addr, off, size;
	char *name;		/* NULL: no symbol there */
	bool used;
};

struct symc {
	struct symc_ent *e;
	unsigned cap, n;
};

static struct symc_ent *symc_slot(const struct symc *c, uint64_t addr)
{
	unsigned i = (unsigned)((addr * 0x9e3779b97f4a7c15ull) >> 40);

	for (unsigned k = 0; c->cap && k < c->cap; k++) {
		struct symc_ent *e = &c->e[(i + k) & (c->cap - 1)];

		if (!e->used || e->addr == addr)
			return e;
	}
	return NULL;
}

/* @addr's entry to fill (NULL: known already, or the set is full). */
static struct symc_ent *symc_add(struct symc *c, uint64_t addr)
{
	struct symc_ent *e;

	if (c->n * 2 >= c->cap) {
		struct symc old = *c;
		unsigned cap = c->cap ? c->cap * 2 : 64;

		if (c->n >= SYMC_MAX || !(c->e = calloc(cap, sizeof(*c->e)))) {
			*c = old;
			return NULL;
		}
		c->cap = cap;
		c->n = 0;
		for (unsigned i = 0; i < old.cap; i++)
			if (old.e[i].used) {
				*symc_slot(c, old.e[i].addr) = old.e[i];
				c->n++;
			}
		free(old.e);
	}
	e = symc_slot(c, addr);
	if (!e || e->used)
		return NULL;
	*e = (struct symc_ent){ .addr = addr, .used = true };
	c->n++;
	return e;
}

static void symc_free(struct symc *c)
{
	for (unsigned i = 0; i < c->cap; i++)
		free(c->e[i].name);
	free(c->e);
	*c = (struct symc){ 0 };
}

/* ---- the helper process ------------------------------------------------- */

static const struct dp_engine_ops *helper_ops;
static void *helper_state;
static int helper_sock = -1;
static struct symc helper_named;

/* A 'Y' for @addr, the first time only. */
static void helper_name(const struct dp_symbolizer *sym, uint64_t addr)
{
	struct ho_sym y = { .kind = HO_SYM, .addr = addr };
	const char *name;

	if (!addr || !symc_add(&helper_named, addr))
		return;
	if (sym && sym->lookup &&
	    !sym->lookup(sym->priv, addr, &name, &y.off, &y.size) && name)
		snprintf(y.name, sizeof(y.name), "%s", name);
	send(helper_sock, &y, sizeof(y), MSG_NOSIGNAL);
}

static volatile sig_atomic_t helper_stop_early;

static void helper_on_signal(int sig)
{
	(void)sig;
	if (helper_state)
		helper_ops->stop(helper_state);
	else
		helper_stop_early = 1;	/* still attaching: stop at once after */
}

static void helper_emit(void *priv, const struct dp_event *ev, const void *rec,
			size_t len, const struct dp_rec_meta *meta,
			const struct dp_symbolizer *sym)
{
	struct ho_rec h = {
		.kind = HO_RECORD, .event = ev->id, .ts_ns = meta->ts_ns,
		.cpu = meta->cpu, .pid = meta->pid, .tgid = meta->tgid,
		.len = (uint32_t)len,
	};
	struct iovec iov[2] = { { &h, sizeof(h) }, { (void *)rec, len } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };

	(void)priv;
	if (len > DP_RING_MAX_RECORD)
		return;
	if (ev->is_return && len >= DP_REC_RET_IP_OFF + 8) {
		helper_name(sym, dp_rec_load((const uint8_t *)rec +
					     DP_REC_FUNC_OFF, 8));
		helper_name(sym, dp_rec_load((const uint8_t *)rec +
					     DP_REC_RET_IP_OFF, 8));
	} else if (!ev->is_return && len >= DP_REC_IP_OFF + 8) {
		helper_name(sym, dp_rec_load((const uint8_t *)rec +
					     DP_REC_IP_OFF, 8));
	}
	if (meta->comm)
		strncpy(h.comm, meta->comm, sizeof(h.comm) - 1);
	if (sendmsg(helper_sock, &mh, MSG_NOSIGNAL) < 0 && errno == EPIPE &&
	    helper_state)
		helper_ops->stop(helper_state);	/* dprobe is gone */
}

static void helper_counts(const struct dp_registry *reg, const void *state)
{
	const struct dp_stats *st = helper_ops->stats(state);
	struct ho_stats s = { .kind = HO_STATS };

	for (const struct dp_event *ev = reg->events; ev; ev = ev->next) {
		uint32_t k = 0;

		for (const struct dp_probe *pr = ev->probes; pr; pr = pr->next, k++) {
			struct ho_hits h = { HO_HITS, ev->id, k, 0, pr->nhit,
					     pr->nmiss };

			if (pr->nhit || pr->nmiss)
				send(helper_sock, &h, sizeof(h), MSG_NOSIGNAL);
		}
	}
	if (st)
		s.st = *st;
	send(helper_sock, &s, sizeof(s), MSG_NOSIGNAL);
}

/* Every descriptor but @keep and the log's goes: the helper must not
 * hold the agents' channels open (their end is how they see dprobe
 * go). */
static void helper_close_fds(int keep, FILE *log)
{
	int a = keep, b = log ? fileno(log) : -1;

	if (b < a) {
		int x = a;

		a = b;
		b = x;
	}
	/* [3, a) (a, b) (b, ...]: a or b may be -1, 0, 1 or 2 */
	if (a > 3)
		syscall(SYS_close_range, 3u, (unsigned)a - 1, 0u);
	if (b > a + 1 && b > 3)
		syscall(SYS_close_range, (unsigned)(a + 1 > 3 ? a + 1 : 3),
			(unsigned)b - 1, 0u);
	if (syscall(SYS_close_range, (unsigned)(b + 1 > 3 ? b + 1 : 3), ~0u,
		    0u)) {
		/* no close_range (before 5.9, or filtered): one by one */
		for (int fd = 3; fd < 65536; fd++)
			if (fd != keep && fd != (log ? fileno(log) : -1))
				close(fd);
	}
}

static void helper_signals(void)
{
	struct sigaction sa = { .sa_handler = helper_on_signal };
	const int stops[] = { SIGINT, SIGTERM, SIGHUP };

	for (unsigned i = 0; i < sizeof(stops) / sizeof(stops[0]); i++)
		sigaction(stops[i], &sa, NULL);
	signal(SIGUSR1, SIG_IGN);
	signal(SIGUSR2, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
}

static __attribute__((noreturn)) void
helper_main(struct dp_inproc *t, pid_t pid, bool at_exec, int sock,
	    pid_t dprobe)
{
	struct ho_attached a = { .kind = HO_ATTACHED };
	struct dp_engine_opts eo = {
		.reg = t->o.reg, .pids = &pid, .npids = 1,
		.follow = t->o.follow, .log = t->o.log, .at_exec = at_exec,
		.sink = { .emit = helper_emit },
	};
	void *state = NULL;

	/* a helper whose dprobe died detaches (the target runs on) */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != dprobe)
		_exit(1);
	helper_sock = sock;
	helper_close_fds(sock, t->o.log);
	helper_signals();
	helper_ops = dp_engine_with(DP_ENGINE_AT_EXEC);
	/* the probes' counts are this process's from here: the fork copied
	 * the session's, which dprobe keeps itself */
	for (struct dp_event *ev = t->o.reg->events; ev; ev = ev->next)
		for (struct dp_probe *pr = ev->probes; pr; pr = pr->next)
			pr->nhit = pr->nmiss = 0;
	a.err = helper_ops ? -EAGAIN : -ENOSYS;
	/* a process seen right after its exec (posix_spawn's child) may
	 * still be finishing it: ESRCH while it lives is tried again */
	for (int i = 0; helper_ops && a.err && i < 50; i++) {
		a.err = helper_ops->attach(&eo, &state, a.why, sizeof(a.why));
		if (a.err != -ESRCH || at_exec || kill(pid, 0))
			break;
		usleep(10000);
	}
	if (!helper_ops)
		snprintf(a.why, sizeof(a.why), "no engine attaches at an exec");
	send(sock, &a, sizeof(a), MSG_NOSIGNAL);
	if (a.err)
		_exit(1);
	helper_state = state;
	if (helper_stop_early)
		helper_ops->stop(state);
	helper_ops->run(state, NULL);
	helper_counts(t->o.reg, state);
	_exit(0);
}

/* ---- dprobe's side -------------------------------------------------------- */

static const char *why_text(const char *why)
{
	if (!strcmp(why, "static"))
		return "a statically linked program";
	if (!strcmp(why, "setid"))
		return "a set-ID program (it ignores LD_PRELOAD)";
	if (!strcmp(why, "nopreload"))
		return "an environment without the agent's LD_PRELOAD";
	return "a program without the agent";
}

/*
 * A helper ends by detaching (SIGTERM: every byte back, the process runs
 * on); only one that does not within 5 s is killed (its process may then
 * meet a probe with no tracer).  Its wait status, or -1.
 */
static int helper_stop(pid_t h)
{
	int st = 0;

	kill(h, SIGTERM);
	for (int i = 0; i < 500; i++) {
		pid_t r = waitpid(h, &st, WNOHANG);

		if (r == h)
			return st;
		if (r < 0 && errno != EINTR)
			return -1;
		usleep(10000);
	}
	kill(h, SIGKILL);
	while (waitpid(h, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return st;
}

static void reap(struct ip_proc *p)
{
	int st = 0;
	pid_t r;

	if (!p->helper)
		return;
	do
		r = waitpid(p->helper, &st, WNOHANG);
	while (r < 0 && errno == EINTR);
	if (!r) {		/* not gone by itself: told to, within bounds */
		st = helper_stop(p->helper);
		r = p->helper;
	}
	if (r == p->helper && (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st)))
		inproc_log(p->tree, "dprobe: the ptrace engine's helper for "
			   "process %d ended abnormally\n", (int)p->pid);
	p->helper = 0;
}

/* The helper's answer to its attach: 0, or -errno with @why. */
static int helper_attached(struct dp_inproc *t, int sock, char *why,
			   size_t whylen)
{
	struct ho_attached a;
	ssize_t n;

	if (inproc_wait_fd(t, sock, POLLIN, inproc_now_ms() + HELPER_WAIT_MS)
	    <= 0) {
		snprintf(why, whylen, "the ptrace engine did not answer");
		return -ETIMEDOUT;
	}
	n = recv(sock, &a, sizeof(a), MSG_DONTWAIT);
	if (n != (ssize_t)sizeof(a) || a.kind != HO_ATTACHED) {
		snprintf(why, whylen, "the ptrace engine's helper failed");
		return -EPIPE;
	}
	a.why[sizeof(a.why) - 1] = '\0';
	snprintf(why, whylen, "%s", a.why);
	return a.err;
}

/* The places the helper named, then the live process's symbols (a %pS
 * argument, or a helper whose records came before its names). */
static int helper_lookup(void *priv, uint64_t addr, const char **sym,
			 uint64_t *off, uint64_t *size)
{
	struct ip_proc *p = priv;
	const struct symc_ent *e = p->named ? symc_slot(p->named, addr) : NULL;
	struct dp_symbolizer live;

	if (e && e->used) {
		if (!e->name)
			return -1;
		*sym = e->name;
		*off = e->off;
		*size = e->size;
		return 0;
	}
	if (!p->proc && dp_proc_open(p->pid, &p->proc, NULL, 0))
		return -1;
	dp_proc_symbolizer(p->proc, &live);
	return live.lookup(live.priv, addr, sym, off, size);
}

static void add_name(struct ip_proc *p, const struct ho_sym *y)
{
	struct symc_ent *e;

	if (!p->named && !(p->named = calloc(1, sizeof(*p->named))))
		return;
	e = symc_add(p->named, y->addr);
	if (!e || !y->name[0])
		return;
	e->off = y->off;
	e->size = y->size;
	e->name = strndup(y->name, sizeof(y->name) - 1);
}

/* A helper tracing @pid, its image in the session; NULL (logged) if the
 * ptrace engine could not take it. */
static struct ip_proc *helper_start(struct dp_inproc *t, pid_t pid,
				    bool at_exec, const char *what, bool last)
{
	char why[512] = "";
	struct ip_proc *p;
	int sv[2], err;
	pid_t h, self = getpid();

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return NULL;
	fflush(NULL);	/* nothing buffered is written twice */
	h = fork();
	if (!h) {
		close(sv[0]);
		helper_main(t, pid, at_exec, sv[1], self);
	}
	close(sv[1]);
	if (h < 0) {
		close(sv[0]);
		return NULL;
	}
	err = helper_attached(t, sv[0], why, sizeof(why));
	p = err ? NULL : proc_new(t, pid, -1);
	if (!p) {
		if (last) {
			inproc_log(t, "dprobe: process %d runs %s; the ptrace "
				   "engine cannot trace it: %s\n", (int)pid, what,
				   why[0] ? why : strerror(-err));
			t->nlost_images++;
		}
		helper_stop(h);
		close(sv[0]);
		return NULL;
	}
	p->helper = h;
	p->hsock = sv[0];
	p->symbolizer = (struct dp_symbolizer){ helper_lookup, p };
	t->nprocs++;
	return p;
}

/* Text a traced process sent, shown on dprobe's terminal: control bytes
 * (escape sequences) become '?'. */
static void printable(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

/* Whether @pid is @p's process, or a child of it (a vfork child execs on
 * its parent's memory, with its parent's agent). */
static bool asks_for(const struct ip_proc *p, pid_t pid)
{
	char path[64], buf[512];
	const char *rp;
	int ppid = 0;
	FILE *f;

	if (pid == p->pid)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (fgets(buf, sizeof(buf), f) && (rp = strrchr(buf, ')')))
		sscanf(rp + 1, " %*c %d", &ppid);
	fclose(f);
	return ppid == p->pid;
}

void handoff_exec(struct ip_proc *p, const char *args)
{
	struct dp_inproc *t = p->tree;
	char why[16], path[4096], what[4400];
	struct ip_proc *h = NULL;
	unsigned ticket;
	int pid;

	if (sscanf(args, "%u %d %15s %4095[^\n]", &ticket, &pid, why,
		   path) != 4)
		return;
	printable(path);
	if (pid > 0 && t->o.follow && asks_for(p, pid) && !t->stop_req &&
	    !handoff_owns(t, pid)) {
		snprintf(what, sizeof(what), "%s, %s", path, why_text(why));
		h = helper_start(t, pid, true, what, true);
	}
	if (h) {
		h->ticket = ticket;
		h->asker = p->pid;
		inproc_log(t, "dprobe: process %d execs %s: traced by the "
			   "ptrace engine\n", pid, what);
	}
	chan_send(p, -1, "EXECGO %u %d", ticket, h != NULL);
}

void handoff_exec_late(struct ip_proc *p, const char *args)
{
	char why[16], path[4096], what[4400];
	int pid;

	if (sscanf(args, "%d %15s %4095[^\n]", &pid, why, path) == 3)
		printable(path);
	if (sscanf(args, "%d %15s %4095[^\n]", &pid, why, path) != 3 ||
	    pid <= 0 || pid == p->pid || !p->tree->o.follow ||
	    !asks_for(p, pid))
		return;
	snprintf(what, sizeof(what), "%s, %s", path, why_text(why));
	handoff_late(p->tree, pid, what);
}

void handoff_exec_failed(struct ip_proc *p, const char *args)
{
	unsigned ticket;

	if (sscanf(args, "%u", &ticket) != 1 || !ticket)
		return;
	for (struct ip_proc *h = p->tree->procs; h; h = h->next)
		if (h->helper && h->ticket == ticket && h->asker == p->pid) {
			kill(h->helper, SIGTERM);	/* it detaches */
			h->ticket = 0;
		}
}

bool handoff_late(struct dp_inproc *t, pid_t pid, const char *what)
{
	struct ip_proc *h;

	if (t->stop_req || handoff_owns(t, pid))
		return false;
	/* an agent of its own traces it already: two engines never patch
	 * the same process */
	for (const struct ip_proc *p = t->procs; p; p = p->next)
		if (p->pid == pid && p->sock >= 0 && !p->closed)
			return false;
	/* a process just out of its exec may not be there for a moment
	 * yet (seen in a time namespace): tried again for ~200 ms */
	for (int i = 0; i < 10; i++) {
		char proc[32];

		snprintf(proc, sizeof(proc), "/proc/%d", (int)pid);
		h = helper_start(t, pid, false, what,
				 i == 9 || access(proc, F_OK));
		if (h || access(proc, F_OK))
			break;
		usleep(20000);
	}
	if (h)
		inproc_log(t, "dprobe: process %d runs %s: traced by the ptrace "
			   "engine from now on (its start was not seen)\n",
			   (int)pid, what);
	return h != NULL;
}

bool handoff_owns(const struct dp_inproc *t, pid_t pid)
{
	for (const struct ip_proc *p = t->procs; p; p = p->next)
		if (p->helper && p->hsock >= 0 && p->pid == pid)
			return true;
	return false;
}

/* ---- the helper's messages ------------------------------------------------ */

static void helper_ended(struct ip_proc *p)
{
	close(p->hsock);
	p->hsock = -1;
	reap(p);
	p->closed = p->done = true;
}

static void add_hits(struct ip_proc *p, const struct ho_hits *h)
{
	struct dp_event *ev = dp_registry_find_id(p->tree->o.reg, h->event);
	struct dp_probe *pr = ev ? ev->probes : NULL;
	struct slot *s;

	for (uint32_t k = 0; pr && k < h->probe; k++)
		pr = pr->next;
	if (!pr)
		return;
	pr->nhit += h->nhit;
	/* a slot for it: the probe was armed, and its misses are summed
	 * with every image's (tree_sum_missed()) */
	s = realloc(p->slots, (p->nslots + 1) * sizeof(*s));
	if (!s)
		return;
	p->slots = s;
	p->slots[p->nslots++] = (struct slot){ .pr = pr, .missed = h->nmiss };
}

static void add_stats(struct ip_proc *p, const struct ho_stats *s)
{
	p->stats.filtered += s->st.filtered;
	p->stats.dropped += s->st.dropped;
	p->stats.lost += s->st.lost;
}

bool handoff_peek(struct ip_proc *p, bool final)
{
	ssize_t n;

	while (!p->have_head && p->hsock >= 0) {
		if (!p->hbuf && !(p->hbuf = malloc(HO_MSG_MAX)))
			return false;
		if (final && inproc_wait_fd(p->tree, p->hsock, POLLIN,
					    inproc_now_ms() + HELPER_WAIT_MS) <= 0) {
			helper_ended(p);	/* told to stop, within bounds */
			break;
		}
		n = recv(p->hsock, p->hbuf, HO_MSG_MAX, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		if (n <= 0) {
			helper_ended(p);
			break;
		}
		p->hlen = (size_t)n;
		switch (*(uint32_t *)p->hbuf) {
		case HO_RECORD: {
			const struct ho_rec *r = (const void *)p->hbuf;

			if (p->hlen >= sizeof(*r) &&
			    r->len == p->hlen - sizeof(*r)) {
				p->head.ts = r->ts_ns;
				p->have_head = true;
			}
			break;
		}
		case HO_SYM:
			if (p->hlen == sizeof(struct ho_sym))
				add_name(p, (const void *)p->hbuf);
			break;
		case HO_HITS:
			if (p->hlen == sizeof(struct ho_hits))
				add_hits(p, (const void *)p->hbuf);
			break;
		case HO_STATS:
			if (p->hlen == sizeof(struct ho_stats))
				add_stats(p, (const void *)p->hbuf);
			break;
		}
	}
	return p->have_head;
}

void handoff_take(struct ip_proc *p)
{
	const struct ho_rec *r = (const void *)p->hbuf;
	struct dp_deliver d = { &p->tree->o.sink, &p->stats,
				p->tree->o.count_only };
	struct dp_event *ev = dp_registry_find_id(p->tree->o.reg, r->event);
	char comm[sizeof(r->comm) + 1];
	struct dp_rec_meta meta = {
		.ts_ns = r->ts_ns, .cpu = r->cpu, .pid = r->pid,
		.tgid = r->tgid, .comm = comm,
		.mm_pid = r->tgid,	/* the helper's tracee, from ptrace */
	};

	p->have_head = false;
	if (!ev || !ev->probes)
		return;
	memcpy(comm, r->comm, sizeof(r->comm));
	comm[sizeof(r->comm)] = '\0';
	if (!comm[0])
		meta.comm = NULL;
	if (!dp_event_deliver_counted(&d, ev->probes))
		dp_event_deliver(&d, ev->probes, r + 1, r->len, &meta,
				 &p->symbolizer);
}

void handoff_stop_all(struct dp_inproc *t)
{
	for (struct ip_proc *p = t->procs; p; p = p->next)
		if (p->helper && p->hsock >= 0)
			kill(p->helper, SIGTERM);
}

void handoff_free(struct ip_proc *p)
{
	if (p->hsock >= 0)
		close(p->hsock);
	p->hsock = -1;
	if (p->helper)
		kill(p->helper, SIGTERM);
	reap(p);
	free(p->hbuf);
	p->hbuf = NULL;
	if (p->named)
		symc_free(p->named);
	free(p->named);
	p->named = NULL;
}
