// SPDX-License-Identifier: GPL-2.0
/*
 * The in-process engine's session over every process image it traces
 * (see inproc.h and internal.h): the hub where new agents join, the
 * loop that reads every image's channel and rings, and the end.
 *
 * Images join over the hub, each with a channel of its own: the launched
 * command's first agent, and with -f every fork child (which keeps its
 * parent's probes and gets rings of its own) and every image an exec
 * starts (whose probes are resolved anew; a place that is not in that
 * image is pending there).  An image ends when its channel does: the
 * process exited or exec'd.  Records are read in timestamp order across
 * every image.
 *
 * Without -f the session is the first image's: it ends with it.  With
 * -f it ends when no image is left and no process holds the hub any
 * more (every process of the tree inherits it, traced or not, so a
 * fork child whose agent has not joined yet keeps the session open).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "engine/agent/protocol.h"
#include "engine/engine.h"
#include "engine/inproc/internal.h"

/* New images set up per look at the hub, between reads of the rings. */
#define JOINS_PER_PASS	16

/* "NEW <pid>": the only message on the hub. */
#define JOIN_MSG_MAX	64

/* ---- joining ---------------------------------------------------------------- */

static void close_hub(struct dp_inproc *t)
{
	if (t->hub >= 0)
		close(t->hub);
	t->hub = -1;
}

/* One NEW message and the descriptor it carried: 1, 0 if none now, -1
 * at the hub's end. */
static int hub_recv(struct dp_inproc *t, pid_t *pid, int *fd)
{
	char buf[JOIN_MSG_MAX], cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { buf, sizeof(buf) - 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	ssize_t n;
	int num;

	*fd = -1;
	do
		n = recvmsg(t->hub, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN ? 0 : -1;
	if (!n)
		return -1;
	buf[n] = '\0';
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
		    c->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(fd, CMSG_DATA(c), sizeof(int));
	if (sscanf(buf, "NEW %d", &num) != 1 || num <= 0) {
		num = 0;
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
	}
	*pid = num;
	return 1;
}

/*
 * The channel end must be a pair the process named made (a process of
 * the tree may be hostile: it can only hand over a pair of its own, so
 * it can only speak for itself).
 */
struct ip_proc *tree_accept(struct dp_inproc *t, int timeout_ms)
{
	pid_t pid;
	int fd, r, ev;

	if (t->hub < 0)
		return NULL;
	ev = inproc_wait_fd(t, t->hub, POLLIN, inproc_now_ms() + timeout_ms);
	if (ev <= 0)
		return NULL;
	r = hub_recv(t, &pid, &fd);
	if (r < 0)
		close_hub(t);
	if (r <= 0)
		return NULL;
	if (fd >= 0 && handoff_owns(t, pid)) {
		close(fd);	/* the ptrace engine has it (a late join) */
		return NULL;
	}
	if (fd < 0 || inproc_check_end(fd, pid)) {
		if (fd >= 0)
			close(fd);
		t->nlost_images++;
		inproc_log(t, "dprobe: a process of the session sent a channel "
			   "that is not its own; ignored\n");
		return NULL;
	}
	return proc_new(t, pid, fd);
}

/* An image that could not be set up: closing its channel makes its
 * agent take everything out, and the process runs on untraced. */
static void image_lost(struct dp_inproc *t, struct ip_proc *p,
		       const char *why)
{
	inproc_log(t, "dprobe: process %d is not traced: %s\n", (int)p->pid,
		   why);
	t->nlost_images++;
	chan_free(p);
	reader_free(p);
	p->closed = p->done = true;
}

static void join(struct dp_inproc *t, struct ip_proc *p)
{
	char why[512] = "";

	if (proc_handshake(p, why, sizeof(why)))
		image_lost(t, p, why[0] ? why : "the handshake failed");
}

/* ---- processes that exec'd out of reach ---------------------------------- */

#define EXEC_JOIN_MS	500

/*
 * Whether @pid lives on and is not exiting (PF_EXITING in the flags of
 * /proc/PID/stat): its image's channel closed, so it ran exec (or closed
 * the channel itself).
 */
static bool lives_on(pid_t pid)
{
	char path[64], buf[512], state;
	unsigned long flags;
	const char *rp;
	FILE *f;
	bool ok = false;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (fgets(buf, sizeof(buf), f) && (rp = strrchr(buf, ')')) &&
	    sscanf(rp + 1, " %c %*d %*d %*d %*d %*d %lu", &state, &flags) == 2)
		ok = state != 'Z' && state != 'X' && !(flags & 0x4);
	fclose(f);
	return ok;
}

static const char *late_what(const struct exec_watch *w)
{
	static char what[320];

	snprintf(what, sizeof(what), "%s, whose agent did not join",
		 w->exe[0] ? w->exe : "a program");
	return what;
}

static void watch_exec(struct dp_inproc *t, pid_t pid)
{
	struct exec_watch *v;
	char path[64];
	ssize_t n;

	if (!t->o.follow || handoff_owns(t, pid) || !lives_on(pid))
		return;
	v = realloc(t->watch, (t->nwatch + 1) * sizeof(*v));
	if (!v)
		return;
	t->watch = v;
	v = &v[t->nwatch++];
	*v = (struct exec_watch){ pid, inproc_now_ms() + EXEC_JOIN_MS, "" };
	/* the new program's already (exec closed the channel) */
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, v->exe, sizeof(v->exe) - 1);
	v->exe[n > 0 ? n : 0] = '\0';
	/* an exec the agent did not see (a raw system call, the child of
	 * posix_spawn()) of a static program: no agent will come */
	if (v->exe[0] && dp_inproc_program(v->exe) == 0 &&
	    handoff_late(t, pid, late_what(v)))
		t->nwatch--;
}

static bool joined_again(const struct dp_inproc *t, pid_t pid)
{
	for (const struct ip_proc *p = t->procs; p; p = p->next)
		if (p->pid == pid && !p->closed)
			return true;
	return false;
}

/*
 * A process whose new image never joined runs on untraced: a set-user-ID
 * or static program, or an environment without the preload (env -i).
 * It is named, once.
 */
static void check_execs(struct dp_inproc *t, bool all)
{
	int64_t now = all ? INT64_MAX : inproc_now_ms();
	unsigned k = 0;

	for (unsigned i = 0; i < t->nwatch; i++) {
		struct exec_watch w = t->watch[i];

		if (joined_again(t, w.pid))
			continue;
		if (now < w.deadline_ms && lives_on(w.pid)) {
			t->watch[k++] = w;
			continue;
		}
		if (!all && lives_on(w.pid) && handoff_late(t, w.pid, late_what(&w)))
			continue;
		t->nlost_images++;
		inproc_log(t, "dprobe: process %d%s%s%s ran on untraced: "
			   "after exec its program had no agent (statically "
			   "linked, set-user-ID, started without LD_PRELOAD), "
			   "or it closed the agent's channel\n",
			   (int)w.pid, w.exe[0] ? " (" : "", w.exe,
			   w.exe[0] ? ")" : "");
	}
	t->nwatch = k;
}

/* ---- the loop ---------------------------------------------------------------- */

/*
 * The image's process exited or exec'd (its threads are gone when its
 * channel closes): what the others hold first, in order, then all of
 * its own.
 */
static void image_closed(struct dp_inproc *t, struct ip_proc *p)
{
	p->closed = true;
	chan_free(p);
	reader_drain(t, NULL, false);
	reader_drain(t, p, true);
	reader_free(p);
	p->done = true;
	watch_exec(t, p->pid);
}

static unsigned nopen(const struct dp_inproc *t)
{
	unsigned n = 0;

	for (const struct ip_proc *p = t->procs; p; p = p->next)
		n += p->sock >= 0 || p->hsock >= 0;
	return n;
}

/* Whether the session is over (see the top of the file). */
static bool over(struct dp_inproc *t)
{
	if (t->o.follow)
		return t->hub < 0 && !nopen(t);
	return !t->procs || t->procs->closed || inproc_root_gone(t);
}

/* Whether the process is gone within about 200 ms. */
static bool gone_soon(struct dp_inproc *t)
{
	for (int i = 0; i < 200 && !inproc_root_gone(t); i++)
		usleep(1000);
	return inproc_root_gone(t);
}

/* About a millisecond for every channel and the hub (no wait when the
 * rings have more to read: @busy): what came. */
static void serve(struct dp_inproc *t, bool busy)
{
	unsigned n = nopen(t) + 1, i = 0;
	struct pollfd *pf = calloc(n, sizeof(*pf));
	struct ip_proc **who = calloc(n, sizeof(*who));
	/* no wait with entries left; a tenth of the idle one while the
	 * producers keep filling the rings */
	const struct timespec ms = { 0, busy ? 0 : t->lively ? 100000 :
				     1000000 };
	struct ip_proc *p;

	if (!pf || !who)
		goto out;
	for (p = t->procs; p; p = p->next)
		if (p->sock >= 0 || p->hsock >= 0) {
			/* a helper's records are read by the drain */
			pf[i] = (struct pollfd){ .fd = p->sock >= 0 ? p->sock :
						 p->hsock, .events = POLLIN };
			who[i++] = p;
		}
	pf[i] = (struct pollfd){ .fd = t->hub, .events = POLLIN };
	if (ppoll(pf, i + 1, &ms, t->waitmask) <= 0)
		goto out;
	for (unsigned k = 0; k < i; k++) {
		if (who[k]->sock < 0)
			continue;
		if (pf[k].revents && !chan_serve(who[k]))
			image_closed(t, who[k]);
		else if (who[k]->maps_req && proc_refresh(who[k]) == -EPIPE)
			image_closed(t, who[k]);
	}
	/* a few at a time: a fork bomb must not keep the rings unread */
	for (int j = 0; pf[i].revents && j < JOINS_PER_PASS && !t->stop_req &&
			(p = tree_accept(t, 0)); j++)
		join(t, p);
out:
	free(pf);
	free(who);
}

/* The counts, after the records: a hit written to a ring before the
 * request reaches the reader first (the mount's `trace` reads rely on
 * it). */
static void profile(struct dp_inproc *t)
{
	t->profile_req = 0;
	reader_drain(t, NULL, false);
	inproc_agg_drain(t);
	for (struct ip_proc *p = t->procs; p; p = p->next)
		inproc_update_missed(p);
	if (t->profile_cb)
		t->profile_cb(t->profile_priv);
}

/* -f: the rings of the next image to join, made ahead. */
static void make_spare(struct dp_inproc *t)
{
	if (t->o.follow && !t->have_spare && t->hub >= 0)
		t->have_spare = !inproc_ring_set(t, &t->spare);
}

/* Read and print until a stop or the session's end. */
static void trace_loop(struct dp_inproc *t)
{
	while (!t->stop_req) {
		bool busy = reader_drain(t, NULL, false);

		if (t->profile_req)
			profile(t);
		if (over(t))
			break;
		make_spare(t);
		serve(t, busy);
		check_execs(t, false);
	}
	if (!t->o.follow && t->procs && t->procs->closed && !gone_soon(t))
		inproc_log(t, "dprobe: process %d ran exec or closed the agent's "
			   "channel; without -f the in-process engine traces "
			   "it no more\n", (int)t->pid);
}

/* A launched command runs on after a detach: wait for it, unless told
 * to stop waiting (Ctrl-C again). */
static void wait_launched(struct dp_inproc *t)
{
	const struct timespec ms10 = { 0, 10000000 };

	while (t->launched && !inproc_root_gone(t) && !inproc_must_quit(t))
		ppoll(NULL, 0, &ms10, t->waitmask);
	if (t->launched && !t->exited)
		inproc_log(t, "dprobe: process %d runs on without probes\n",
			   (int)t->pid);
}

/* Every image still there: its last miss counts, then the detach. */
static void detach_all(struct dp_inproc *t)
{
	for (struct ip_proc *p = t->procs; p; p = p->next) {
		if (p->sock < 0)
			continue;
		/* what the agent said at exit, if it exited (or is exiting) */
		chan_read_stats(p, 0);
		if (p != t->procs || !inproc_root_gone(t))
			proc_detach(p);
		chan_free(p);
	}
	close_hub(t);
	handoff_stop_all(t);
}

static bool has_location(const struct dp_inproc *t, const struct dp_probe *pr)
{
	for (const struct ip_proc *p = t->procs; p; p = p->next)
		for (unsigned i = 0; i < p->nslots; i++)
			if (p->slots[i].pr == pr)
				return true;
	return false;
}

/*
 * The probes whose place never was in any image, and why: -ENOENT if no
 * probe was armed anywhere (the run traced nothing it was asked to).
 */
static int report_pending(struct dp_inproc *t)
{
	bool any = false;

	for (const struct ip_proc *p = t->procs; p; p = p->next)
		any |= p->nslots > 0;
	for (const struct pend *q = t->pend; q; q = q->next)
		if (!has_location(t, q->pr))
			inproc_log(t, "dprobe: %s/%s: not armed: %s (in %u "
				   "process image%s)\n", q->pr->event->group,
				   q->pr->event->name, q->why, q->n,
				   q->n == 1 ? "" : "s");
	return any || !t->nprocs ? 0 : -ENOENT;
}

static void show_and_end(struct dp_inproc *t);

int dp_inproc_run(struct dp_inproc *t, int *status)
{
	/* the caller blocked its stop signals: they interrupt the waits */
	sigemptyset(&t->unblocked);
	t->waitmask = &t->unblocked;
	if (t->o.show)
		show_and_end(t);
	trace_loop(t);
	check_execs(t, true);	/* the session ended before they could join */
	detach_all(t);
	reader_drain(t, NULL, true);
	inproc_agg_drain(t);	/* every agent is done with the tables */
	wait_launched(t);
	if (status)
		*status = t->status;
	return report_pending(t);
}

/* ---- the rest of inproc.h --------------------------------------------------- */

void tree_sum_missed(struct dp_inproc *t)
{
	for (struct ip_proc *p = t->procs; p; p = p->next)
		for (unsigned i = 0; i < p->nslots; i++)
			p->slots[i].pr->nmiss = 0;
	t->stats.missed = 0;
	for (struct ip_proc *p = t->procs; p; p = p->next)
		for (unsigned i = 0; i < p->nslots; i++) {
			p->slots[i].pr->nmiss += p->slots[i].missed;
			t->stats.missed += p->slots[i].missed;
		}
}

static int switch_all(struct dp_inproc *t, struct dp_event *ev, bool on)
{
	int first = 0;

	for (struct ip_proc *p = t->procs; p; p = p->next) {
		char why[512] = "";
		int ret;

		if (p->sock < 0)
			continue;
		ret = proc_switch(p, ev, on, why, sizeof(why));
		if (ret && why[0])
			inproc_log(t, "dprobe: process %d: %s\n", (int)p->pid, why);
		if (ret && !first)
			first = ret;
	}
	return first;
}

int dp_inproc_enable(struct dp_inproc *t, struct dp_event *ev)
{
	return switch_all(t, ev, true);
}

int dp_inproc_disable(struct dp_inproc *t, struct dp_event *ev)
{
	return switch_all(t, ev, false);
}

/* The first stops tracing; the second, every wait that follows it. */
void dp_inproc_stop(struct dp_inproc *t)
{
	if (t->stop_req < 2)
		t->stop_req++;
}

void dp_inproc_request_profile(struct dp_inproc *t)
{
	t->profile_req = 1;
}

void dp_inproc_set_profile_cb(struct dp_inproc *t, void (*cb)(void *),
			      void *priv)
{
	t->profile_cb = cb;
	t->profile_priv = priv;
}

/* The locations of the first image (the others have the same or their
 * own program's). */
void dp_inproc_list_probes(const struct dp_inproc *t, FILE *out)
{
	const struct ip_proc *p = t->procs;

	for (unsigned i = 0; p && i < p->nslots; i++) {
		const struct slot *s = &p->slots[i];

		fprintf(out, "%s/%s 0x%llx %s\n", s->pr->event->group,
			s->pr->event->name, (unsigned long long)s->addr,
			s->how ? s->how : "not armed");
	}
}

/* The sum, made when asked (the handle is the caller's, not const). */
const struct dp_stats *dp_inproc_stats(const struct dp_inproc *t)
{
	struct dp_stats *st = (struct dp_stats *)&t->stats;
	uint64_t missed = st->missed;

	*st = (struct dp_stats){ .missed = missed };
	for (const struct ip_proc *p = t->procs; p; p = p->next) {
		st->events += p->stats.events;
		st->filtered += p->stats.filtered;
		st->lost += p->stats.lost;
		st->dropped += p->stats.dropped;
	}
	st->procs = t->nprocs;
	st->forks = t->nforks;
	st->untraced = t->untraced + t->nlost_images;
	return st;
}

void dp_inproc_free(struct dp_inproc *t)
{
	struct ip_proc *p, *next;

	if (!t)
		return;
	for (p = t->procs; p; p = next) {
		next = p->next;
		proc_free(p);
	}
	while (t->pend) {
		struct pend *q = t->pend;

		t->pend = q->next;
		free(q);
	}
	free(t->watch);
	close_hub(t);
	if (t->have_spare)
		dp_ring_set_close(&t->spare);
	inproc_agg_free(t);
	free(t);
}

/* ---- dprobe show ------------------------------------------------------------ */

static int unhex(const char *h, uint8_t *out, unsigned max)
{
	unsigned n = 0, v;

	while (n < max && sscanf(h + 2 * n, "%2x", &v) == 1)
		out[n++] = (uint8_t)v;
	return (int)n;
}

/* One SHOWN answer printed; 0, or -errno. */
static int show_answer(struct ip_proc *p, const struct slot *sl,
		       const char *msg, FILE *out)
{
	unsigned long long addr, patch, detour, tail, xol;
	unsigned slot, nbytes, dlen;
	int armed, opt, emul, pos = 0;
	char orighex[96];
	uint8_t orig[48];
	struct dp_show_site s;

	if (sscanf(msg, "SHOWN %u %llx %d %d %d %llx %u %llx %u %llx %llx "
		   "%95s %n", &slot, &addr, &armed, &opt, &emul, &patch,
		   &nbytes, &detour, &dlen, &tail, &xol, orighex, &pos) != 12 ||
	    !pos)
		return -EPROTO;
	s = (struct dp_show_site){
		.ev = sl->pr->event, .pid = p->pid, .addr = addr,
		.orig = orig, .orig_len = (unsigned)unhex(orighex, orig,
							  sizeof(orig)),
		.armed = armed, .optimized = opt, .how = msg + pos,
		.engine = "agent", .patch = patch, .nbytes = nbytes,
		.detour = detour, .detour_len = dlen, .tail = tail,
		.xol = emul ? 0 : xol,
	};
	dp_show_site(out, &s, &p->symbolizer);
	return 0;
}

/* The locations of @ev (NULL: all) in the first image, as the agent
 * describes them; the code itself is read from the process. */
int dp_inproc_show(struct dp_inproc *t, const struct dp_event *ev, FILE *out)
{
	struct ip_proc *p = t->procs;
	char buf[DP_AGENT_MSG_MAX];
	int ret = -ENOENT, r;

	for (unsigned i = 0; p && p->sock >= 0 && i < p->nslots; i++) {
		const struct slot *sl = &p->slots[i];

		if ((ev && sl->pr->event != ev) || sl->dropped)
			continue;
		r = chan_send(p, -1, "SHOW %u", i);
		if (!r)
			r = chan_answer(p, "SHOWN ", buf, sizeof(buf));
		if (r > 0)	/* ERR: not armed (a tracepoint, refused) */
			fprintf(out, "%s/%s: 0x%llx: not armed\n",
				sl->pr->event->group, sl->pr->event->name,
				(unsigned long long)sl->addr);
		else if (r < 0 || (r = show_answer(p, sl, buf, out)))
			return r;
		ret = 0;
	}
	return ret;
}

/* dprobe show: the locations printed, then the session ends; a launched
 * command, held in its agent's constructor, is killed before main(). */
static void show_and_end(struct dp_inproc *t)
{
	int r = dp_inproc_show(t, NULL, t->o.show);

	if (r == -ENOENT)
		fprintf(t->o.show, "no probe location is armed\n");
	else if (r)
		inproc_log(t, "dprobe: show: %s\n", strerror(-r));
	fflush(t->o.show);
	if (t->launched && !t->exited)
		kill(t->pid, SIGKILL);
	t->stop_req = 1;
}
