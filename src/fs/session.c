// SPDX-License-Identifier: GPL-2.0
/*
 * Arming the enabled events: the session child.
 *
 * The ptrace engine owns its tracees through waitpid(-1) and signals, a
 * model that does not mix with FUSE's worker threads.  So the events are
 * armed by a child process: forked with a copy of the registry (same
 * definitions, same ids, same filters), it attaches to the target
 * (following forks) with the engine chosen once for the mount (the
 * in-process engine where it can, as `dprobe trace` chooses; or
 * $DPROBE_ENGINE), renders each record as a `trace` line (it holds the
 * target's symbolizer) and sends it down a pipe; it also sends the
 * probes' hit/miss counts on SIGUSR1 and when it ends.
 *
 * When the set of enabled events changes, an engine that can switch
 * events at run time (the in-process engine) is told so: the manager
 * writes the enabled events (ids, names, filters, definitions) down a
 * command pipe and sends SIGUSR2; the child, from the engine's loop,
 * adds the events it lacks to its registry, switches each one on or off
 * and answers.  The probes already live are not touched: no event of
 * theirs is lost.  With another engine (ptrace), or when that fails, the
 * child is sent SIGTERM, which makes the engine detach and restore every
 * byte, and a new one is started with only the enabled events.
 *
 * There are two such children, two lanes: one for the events placed in
 * the processes, one for the kernel's tracepoints (events/syscalls/, on
 * the kernel engine, in a mount namespace of its own).  An event probe
 * goes with the event it is on, which is armed "soft" when only its event
 * probes are enabled: its records feed them and go no further.  The
 * kernel lane cannot switch events: it is started anew when what it arms
 * changes.  Without the kernel's syscall events (--syscalls ptrace), the
 * syscall events are the process lane's, which runs on the ptrace engine
 * (DP_ENGINE_SYSCALLS) while any is armed.
 *
 * The children are forked by one long-lived manager thread, so that
 * PR_SET_PDEATHSIG (tied to the forking thread) only fires when dprobe
 * itself dies: then too the child detaches.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sched.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine.h"
#include "event/filter.h"
#include "fs/internal.h"
#include "output/output.h"

/* FR_SHOW: on the command pipe, `show` asked for event id; from the
 * child, its text (id: -errno). */
enum { FR_READY = 1, FR_ERROR, FR_LINE, FR_PROFILE, FR_ACK, FR_REC, FR_SHOW };

/* FR_REC: a record for the hist triggers, after this, then @nstack
 * return addresses (its user stack, when the event is marked for it),
 * then with @depths as many depths (the stack tracer's, record.h). */
struct rec_head {
	uint64_t ts_ns;
	int32_t cpu, pid, tgid, mm_pid;
	uint32_t nstack, depths;
	char comm[DP_TASK_COMM_LEN];
};

struct frame {
	uint32_t type;
	uint32_t len;		/* payload bytes after the header */
	uint32_t id;		/* FR_LINE: event id */
	int32_t cpu;		/* FR_LINE: the hit's CPU (-1: not known) */
};

#define FRAME_MAX	(1u << 20)

/* ---- the child ------------------------------------------------------------ */

struct child_ctx {
	int fd;
	int cmd_fd;			/* the manager's commands */
	struct dp_registry *reg;
	FILE *mem;
	char *buf;
	size_t size;
};

static struct dp_engine *g_tracer;
static volatile sig_atomic_t g_cmd_pending;

static void on_term(int sig)
{
	(void)sig;
	if (g_tracer)
		dp_engine_stop(g_tracer);
	else
		_exit(0);	/* not attached yet: nothing to restore */
}

static void on_usr1(int sig)
{
	(void)sig;
	if (g_tracer)
		dp_engine_request_profile(g_tracer);
}

/* A command waits: the engine's loop reads it (child_profile()). */
static void on_usr2(int sig)
{
	(void)sig;
	g_cmd_pending = 1;
	if (g_tracer)
		dp_engine_request_profile(g_tracer);
}

static int send_frame_cpu(int fd, uint32_t type, uint32_t id, int32_t cpu,
			  const void *data, size_t len)
{
	struct frame h = { .type = type, .len = (uint32_t)len, .id = id,
			   .cpu = cpu };
	struct iovec iov[2] = { { &h, sizeof(h) }, { (void *)data, len } };
	int n = 2;

	while (n) {
		ssize_t w = writev(fd, iov + 2 - n, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		for (int i = 2 - n; i < 2 && w > 0; i++) {
			size_t k = (size_t)w < iov[i].iov_len ? (size_t)w : iov[i].iov_len;

			iov[i].iov_base = (char *)iov[i].iov_base + k;
			iov[i].iov_len -= k;
			w -= (ssize_t)k;
		}
		while (n && !iov[2 - n].iov_len)
			n--;
	}
	return 0;
}

static int send_frame(int fd, uint32_t type, uint32_t id, const void *data,
		      size_t len)
{
	return send_frame_cpu(fd, type, id, -1, data, len);
}

static void child_emit(void *priv, const struct dp_event *ev, const void *rec,
		       size_t len, const struct dp_rec_meta *meta,
		       const struct dp_symbolizer *sym)
{
	struct child_ctx *c = priv;
	struct dp_trace_opts o = { .ncpus = 1, .sym = sym };

	rewind(c->mem);
	if (dp_trace_line(c->mem, ev, rec, len, meta, &o) || fflush(c->mem))
		return;
	send_frame_cpu(c->fd, FR_LINE, ev->id, meta->cpu, c->buf, c->size);
}

/* Every record of a triggered event, raw, for the hist triggers. */
static void child_trigger(void *priv, const struct dp_event *ev,
			  const void *rec, size_t len,
			  const struct dp_rec_meta *meta,
			  const struct dp_symbolizer *sym)
{
	struct child_ctx *c = priv;
	struct rec_head h = { .ts_ns = meta->ts_ns, .cpu = meta->cpu,
			      .pid = meta->pid, .tgid = meta->tgid,
			      .mm_pid = meta->mm_pid };
	size_t sl;
	char *buf;

	(void)sym;
	if (meta->stack)
		h.nstack = meta->nstack < DP_STACK_MAX ? meta->nstack :
			   DP_STACK_MAX;
	h.depths = meta->stack && meta->stack_depth;
	sl = h.nstack * sizeof(uint64_t) * (h.depths ? 2 : 1);
	if (len > FRAME_MAX - sizeof(h) - sl ||
	    !(buf = malloc(sizeof(h) + len + sl)))
		return;
	snprintf(h.comm, sizeof(h.comm), "%s", meta->comm ? meta->comm : "");
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), rec, len);
	if (h.nstack)
		memcpy(buf + sizeof(h) + len, meta->stack,
		       h.nstack * sizeof(uint64_t));
	if (h.depths)
		memcpy(buf + sizeof(h) + len + h.nstack * sizeof(uint64_t),
		       meta->stack_depth, h.nstack * sizeof(uint64_t));
	send_frame(c->fd, FR_REC, ev->id, buf, sizeof(h) + len + sl);
	free(buf);
}

static int read_frame(int fd, struct frame *h, char **data);
static void child_commands(struct child_ctx *c);

/* A frame (or the manager's end: EOF) to read, within @ms. */
static bool cmd_waiting(int fd, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int n;

	do
		n = poll(&pfd, 1, ms);
	while (n < 0 && errno == EINTR);
	return n == 1 && (pfd.revents & (POLLIN | POLLHUP));
}

/* How long a SIGUSR2 waits for its frame, which the manager writes right
 * after it (the signal first: the child reads while the pipe fills). */
#define CMD_FRAME_WAIT_MS 250

static void child_profile(void *priv)
{
	struct child_ctx *c = priv;
	bool announced = g_cmd_pending;

	/*
	 * A `show` read writes its frame, then sends SIGUSR1, which every
	 * engine's loop takes (the ptrace engine's keeps SIGUSR2 blocked).
	 * A command's SIGUSR2 may also come after its frame was found and
	 * read here: a frame is read only once poll() sees it, never on the
	 * flag alone, which would block this child (signals masked) on an
	 * empty pipe until the next command, and the manager stopping it
	 * would wait for it for ever.
	 */
	g_cmd_pending = 0;
	if (cmd_waiting(c->cmd_fd, announced ? CMD_FRAME_WAIT_MS : 0))
		child_commands(c);
	struct dp_fs_count *v;
	size_t n = 0;

	for (struct dp_event *ev = c->reg->events; ev; ev = ev->next)
		for (struct dp_probe *p = ev->probes; p; p = p->next)
			n++;
	v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return;
	n = 0;
	for (struct dp_event *ev = c->reg->events; ev; ev = ev->next) {
		unsigned idx = 0;

		for (struct dp_probe *p = ev->probes; p; p = p->next)
			v[n++] = (struct dp_fs_count){ ev->id, idx++, p->nhit,
						       p->nmiss, ev->serial };
	}
	send_frame(c->fd, FR_PROFILE, 0, v, n * sizeof(*v));
	free(v);
}

/* ---- the child: events switched while it traces -------------------------- */

/*
 * The command: one line per item, "E <id> <serial>" opening an enabled event,
 * then "G <group>", "N <name>", "F <filter>" (may be empty) and one
 * "L <definition>" per probe.  Every enabled event is listed: the ones
 * not listed are switched off.
 */
struct want {
	unsigned id, serial;	/* the parent's event: its id and serial */
	bool soft;		/* armed for its event probes only */
	bool triggered;		/* its records go to the hist triggers */
	bool stack;		/* ... with the user stack */
	bool stack_max;		/* ... the stack tracer's (event.h) */
	char *group, *name, *filter;
	char **lines;
	size_t nlines;
};

static void want_free(struct want *w, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < w[i].nlines; k++)
			free(w[i].lines[k]);
		free(w[i].lines);
	}
	free(w);
}

static int want_parse(char *text, struct want **out, size_t *nout)
{
	struct want *w = NULL, *cur = NULL;
	size_t n = 0;
	char *save = NULL;

	for (char *l = strtok_r(text, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		char k = l[0], *v = l[1] == ' ' ? l + 2 : l + 1;

		if (k == 'E') {
			struct want *t = realloc(w, (n + 1) * sizeof(*w));

			if (!t)
				goto fail;
			w = t;
			cur = &w[n++];
			char *end;

			*cur = (struct want){ .id = (unsigned)strtoul(v, &end, 10),
					      .group = "", .name = "",
					      .filter = "" };
			cur->serial = (unsigned)strtoul(end, NULL, 10);
		} else if (!cur) {
			goto fail;
		} else if (k == 'G') {
			cur->group = v;
		} else if (k == 'N') {
			cur->name = v;
		} else if (k == 'F') {
			cur->filter = v;
		} else if (k == 'S') {
			cur->soft = true;
		} else if (k == 'T') {
			cur->triggered = true;
		} else if (k == 'K') {
			cur->stack = true;
		} else if (k == 'M') {
			cur->stack_max = true;
		} else if (k == 'L') {
			char **t = realloc(cur->lines,
					   (cur->nlines + 1) * sizeof(*t));

			if (!t || !(t[cur->nlines] = strdup(v)))
				goto fail;
			cur->lines = t;
			cur->nlines++;
		}
	}
	*out = w;
	*nout = n;
	return 0;
fail:
	want_free(w, n);
	return -EINVAL;
}

static size_t nprobes(const struct dp_event *ev)
{
	size_t n = 0;

	for (const struct dp_probe *p = ev->probes; p; p = p->next)
		n++;
	return n;
}

/* The child's event for @w: its own, or one made from the definitions. */
static struct dp_event *want_event(struct dp_registry *reg,
				   const struct want *w)
{
	struct dp_event *ev = dp_registry_find_id(reg, w->id);

	/* another event under the same id (deleted and made again): the
	 * child starts anew, its counts from 0 */
	if (ev)
		return strcmp(ev->group, w->group) || strcmp(ev->name, w->name) ||
		       nprobes(ev) != w->nlines || ev->serial != w->serial ?
		       NULL : ev;
	if (dp_registry_find(reg, w->group, w->name))
		return NULL;	/* deleted and made again: start anew */
	for (size_t k = 0; k < w->nlines; k++)
		if (dp_registry_apply(reg, w->lines[k], NULL, NULL))
			return NULL;
	ev = dp_registry_find(reg, w->group, w->name);
	if (ev) {
		ev->id = w->id;	/* the parent's: FR_LINE frames name it */
		ev->serial = w->serial;
	}
	return ev;
}

static int want_filter(struct dp_event *ev, const struct want *w)
{
	const char *now = ev->filter_text ? ev->filter_text : "";
	struct dp_filter_error e = { 0 };

	if (!strcmp(now, w->filter))
		return 0;
	return dp_event_set_filter(ev, w->filter[0] ? w->filter : "0", &e);
}

static bool wanted(const struct want *w, size_t n, unsigned id)
{
	for (size_t i = 0; i < n; i++)
		if (w[i].id == id)
			return true;
	return false;
}

/* 0 when the engine runs exactly the wanted events, else -errno. */
static int apply_wants(struct child_ctx *c, const struct want *w, size_t n)
{
	int ret = 0;

	for (struct dp_event *ev = c->reg->events; ev && !ret; ev = ev->next)
		if (ev->enabled && !wanted(w, n, ev->id)) {
			ev->enabled = false;
			ret = dp_engine_disable(g_tracer, ev);
		}
	for (size_t i = 0; i < n && !ret; i++) {
		struct dp_event *ev = want_event(c->reg, &w[i]);

		if (!ev || want_filter(ev, &w[i]))
			return -EINVAL;
		ev->soft = w[i].soft;
		ev->triggered = w[i].triggered;
		/* the probes capture the stack or not from when they are
		 * armed: armed again when that changes */
		if (ev->enabled && (ev->stack != w[i].stack ||
				    ev->stack_max != w[i].stack_max)) {
			ev->enabled = false;
			ret = dp_engine_disable(g_tracer, ev);
			if (ret)
				return ret;
		}
		ev->stack = w[i].stack;
		ev->stack_max = w[i].stack_max;
		if (!ev->enabled) {
			ev->enabled = true;
			ret = dp_engine_enable(g_tracer, ev);
		}
	}
	return ret;
}

/* A `show` read: the engine's text for event @id, sent back. */
static void child_show(struct child_ctx *c, unsigned id)
{
	const struct dp_event *ev = dp_registry_find_id(c->reg, id);
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	int ret = f ? -ENOENT : -ENOMEM;

	if (f && ev)
		ret = dp_engine_show(g_tracer, ev, f);
	if (f)
		fclose(f);
	send_frame(c->fd, FR_SHOW, (uint32_t)-ret, buf, ret ? 0 : size);
	free(buf);
}

static void child_commands(struct child_ctx *c)
{
	struct frame h;
	struct want *w = NULL;
	size_t n = 0;
	char *data;
	int ret = -EINVAL;

	if (read_frame(c->cmd_fd, &h, &data))
		_exit(1);	/* the manager is gone */
	if (h.type == FR_SHOW) {
		free(data);
		child_show(c, h.id);
		return;
	}
	if (!want_parse(data, &w, &n))
		ret = apply_wants(c, w, n);
	want_free(w, n);
	free(data);
	send_frame(c->fd, FR_ACK, (uint32_t)-ret, NULL, 0);
}

/* ---- which child arms what ------------------------------------------------ */

/* The syscall events, and the event probes on them, are the lane's that
 * serves them (the kernel's, or the ptrace engine's syscall stops);
 * everything else is placed in processes. */
static int lane_of(const struct dp_fs *fs, const struct dp_event *ev)
{
	while (ev->attached)
		ev = ev->attached;
	return ev->kernel ? fs->sys_lane : DP_LANE_PROC;
}

static bool armed(const struct dp_event *ev)
{
	return ev->enabled || ev->soft;
}

/* Are syscall events armed?  In the process lane: on the ptrace engine. */
static bool proc_syscalls(const struct dp_registry *reg)
{
	for (const struct dp_event *ev = reg->events; ev; ev = ev->next)
		if (ev->kernel && armed(ev))
			return true;
	return false;
}

/*
 * An event in soft mode (a trigger on it or naming it: trigger.c) is
 * armed and sends its records raw (triggered), its lines made by the
 * triggers' side; one that is not enabled but has an enabled event probe
 * on it (or on one of those) is armed for them only.  Both are soft: no
 * line from the child.
 */
static void mark_soft(struct dp_fs *fs)
{
	struct dp_registry *reg = &fs->reg;
	bool changed = true;

	for (struct dp_event *ev = reg->events; ev; ev = ev->next) {
		dp_fs_trigger_mark(fs, ev);
		dp_fs_inst_mark(fs, ev);
		dp_fs_tracer_mark(fs, ev);
		dp_fs_stack_mark(fs, ev);
		dp_fs_fcmd_mark(fs, ev);
	}
	while (changed) {
		changed = false;
		for (struct dp_event *ev = reg->events; ev; ev = ev->next) {
			if (ev->enabled || ev->soft)
				continue;
			for (unsigned i = 0; i < ev->neprobes && !ev->soft; i++)
				ev->soft = armed(ev->eprobes[i]);
			changed |= ev->soft;
		}
	}
}

/* The child's copy of the registry, with only what its lane arms (event
 * probes stay reachable from the events they are on). */
static void keep_lane(struct dp_fs *fs, int lane)
{
	struct dp_event **pp = &fs->reg.events;

	while (*pp) {
		struct dp_event *ev = *pp;

		if (armed(ev) && lane_of(fs, ev) == lane) {
			ev->enabled = true;	/* soft: for its probes */
			pp = &ev->next;
		} else {
			*pp = ev->next;	/* the child's copy: no free */
		}
	}
	dp_registry_relinked(&fs->reg);
}

static void child_signals(void)
{
	struct sigaction sa = { .sa_handler = on_term };
	sigset_t set;

	/* the parent decides when this child ends: not the terminal */
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_usr2;
	sigaction(SIGUSR2, &sa, NULL);
	sigfillset(&set);
	sigdelset(&set, SIGSEGV);
	sigdelset(&set, SIGBUS);
	sigdelset(&set, SIGFPE);
	sigdelset(&set, SIGILL);
	/* held until the engine's loop waits for them */
	sigprocmask(SIG_SETMASK, &set, NULL);
}

/*
 * The engine, as `dprobe trace -p` would choose it (the in-process one
 * where it can), or the one $DPROBE_ENGINE names; not the kernel's.
 * Syscall events in the process lane take the one that sees syscalls.
 */
static int choose(struct dp_engine_choice *ch, struct dp_engine_opts *eo,
		  char *why, size_t whylen)
{
	const char *name = getenv("DPROBE_ENGINE");

	if (eo->kernel) {
		eo->forced = dp_engine_by_name("kernel");
		if (!eo->forced) {
			snprintf(why, whylen, "no kernel engine");
			return -EINVAL;
		}
	} else
	if (name && *name && strcmp(name, "auto")) {
		eo->forced = dp_engine_by_name(name);
		if (!eo->forced || (eo->forced->flags & DP_ENGINE_KERNEL)) {
			snprintf(why, whylen, "$DPROBE_ENGINE=%s: the mount "
				 "runs on the agent or the ptrace engine", name);
			return -EINVAL;
		}
	}
	if (dp_engine_choose(ch, eo, NULL)) {
		snprintf(why, whylen, "%s", ch->why);
		return -EINVAL;
	}
	dp_engine_say_choice(ch);
	return 0;
}

/*
 * The kernel lane's tracepoints, "GROUP:NAME" each, in a mount namespace
 * of the child's own: a tracefs the kernel engine has to mount is seen by
 * nobody else (a tool reading the mount's tracefs never finds the
 * kernel's first in /proc/mounts).
 */
static const char **kernel_lane(struct dp_registry *reg, size_t *n)
{
	const char **v;
	size_t k = 0;

	if (unshare(CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return NULL;
	for (struct dp_event *ev = reg->events; ev; ev = ev->next)
		k++;
	v = calloc(k + 1, sizeof(*v));
	for (struct dp_event *ev = reg->events; v && ev; ev = ev->next) {
		char *t;

		if (!ev->kernel || asprintf(&t, "%s:%s", ev->group, ev->name) < 0)
			continue;
		v[(*n)++] = t;
	}
	return v;
}

static __attribute__((noreturn)) void child_main(struct dp_fs *fs,
						 struct dp_fs_lane *lane,
						 int fd, int cmd, pid_t parent)
{
	struct child_ctx c = { .fd = fd, .reg = &fs->reg };
	pid_t pid = fs->o->pid;
	/* this child is the tracer of the whole process tree, forks
	 * followed */
	struct dp_engine_opts eo = {
		.reg = &fs->reg, .pids = &pid, .npids = 1, .follow = true,
		.sink = { child_emit, NULL, &c, NULL, child_trigger },
		.kernel = lane->which == DP_LANE_KERNEL,
	};
	struct dp_engine_choice *ch = calloc(1, sizeof(*ch));
	sigset_t none;
	char why[4096] = "";
	int err, status;

	child_signals();
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		_exit(1);
	if (dup2(fd, 3) < 0 || dup2(cmd, 4) < 0)
		_exit(1);
	c.fd = 3;
	c.cmd_fd = 4;
	close_range(5, ~0U, 0);
	keep_lane(fs, lane->which);
	if (eo.kernel) {
		eo.tracepoints = kernel_lane(&fs->reg, &eo.ntracepoints);
		if (!eo.tracepoints) {
			snprintf(why, sizeof(why), "no mount namespace of its "
				 "own for the kernel's tracefs: %s",
				 strerror(errno));
			send_frame(c.fd, FR_ERROR, 0, why, strlen(why));
			_exit(1);
		}
	}
	if (!ch || choose(ch, &eo, why, sizeof(why))) {
		send_frame(c.fd, FR_ERROR, 0, why, strlen(why));
		_exit(1);
	}
	c.mem = open_memstream(&c.buf, &c.size);
	if (!c.mem)
		_exit(1);
	sigemptyset(&none);
	eo.child_mask = &none;
	for (;;) {
		why[0] = '\0';
		err = dp_engine_start(ch->ops, &eo, &g_tracer, why, sizeof(why));
		if (!err || !dp_engine_fallback(ch, &eo, err, why, sizeof(why)))
			break;
		fprintf(stderr, "dprobe mount: %s\n", why);
	}
	if (err) {
		if (!why[0])
			snprintf(why, sizeof(why), "%s", strerror(-err));
		send_frame(c.fd, FR_ERROR, 0, why, strlen(why));
		_exit(1);
	}
	/* the parent learns which engine runs: may it switch events? */
	send_frame(c.fd, FR_READY, 0, ch->ops->name, strlen(ch->ops->name));
	dp_engine_set_profile_cb(g_tracer, child_profile, &c);
	dp_engine_run(g_tracer, &status);
	child_profile(&c);
	_exit(0);
}

/* ---- the parent: reading the child ---------------------------------------- */

static int read_full(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t r = read(fd, p, len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		len -= (size_t)r;
	}
	return 0;
}

/* One frame; its payload malloc'd into *@data (NUL-terminated). */
static int read_frame(int fd, struct frame *h, char **data)
{
	*data = NULL;
	if (read_full(fd, h, sizeof(*h)) || h->len > FRAME_MAX)
		return -1;
	*data = malloc(h->len + 1);
	if (!*data || read_full(fd, *data, h->len)) {
		free(*data);
		*data = NULL;
		return -1;
	}
	(*data)[h->len] = '\0';
	return 0;
}

static void store_counts(struct dp_fs_lane *lane, const char *data,
			 size_t len)
{
	struct dp_fs *fs = lane->fs;
	size_t n = len / sizeof(struct dp_fs_count);
	struct dp_fs_count *v = malloc(n ? len : 1);

	if (!v)
		return;
	memcpy(v, data, n * sizeof(*v));
	pthread_mutex_lock(&fs->buf_lock);
	/* counts of events this child does not arm are kept (those of an
	 * event deleted since, made again under its id, match no serial) */
	for (size_t i = 0; i < fs->ncounts; i++) {
		bool dup = false;

		for (size_t j = 0; j < n && !dup; j++)
			dup = v[j].id == fs->counts[i].id &&
			      v[j].serial == fs->counts[i].serial;
		if (!dup) {
			struct dp_fs_count *t = realloc(v, (n + 1) * sizeof(*v));

			if (!t)
				break;
			v = t;
			v[n++] = fs->counts[i];
		}
	}
	free(fs->counts);
	fs->counts = v;
	fs->ncounts = n;
	lane->profile_gen++;
	pthread_cond_broadcast(&fs->buf_cond);
	pthread_mutex_unlock(&fs->buf_lock);
}

/* A record for the hist triggers; a malformed frame is dropped. */
static void store_rec(struct dp_fs *fs, unsigned id, const char *data,
		      size_t len)
{
	uint64_t stack[DP_STACK_MAX], depth[DP_STACK_MAX];
	struct dp_rec_meta meta;
	struct rec_head h;
	size_t sl;

	if (len < sizeof(h))
		return;
	memcpy(&h, data, sizeof(h));
	h.comm[sizeof(h.comm) - 1] = '\0';
	sl = (size_t)h.nstack * sizeof(uint64_t) * (h.depths ? 2 : 1);
	if (h.nstack > DP_STACK_MAX || len - sizeof(h) < sl)
		return;
	len -= sl;
	meta = (struct dp_rec_meta){ .ts_ns = h.ts_ns, .cpu = h.cpu,
				     .pid = h.pid, .tgid = h.tgid,
				     .mm_pid = h.mm_pid,
				     .comm = h.comm[0] ? h.comm : NULL };
	if (h.nstack) {
		memcpy(stack, data + len, h.nstack * sizeof(uint64_t));
		meta.stack = stack;
		meta.nstack = h.nstack;
	}
	if (h.nstack && h.depths) {
		memcpy(depth, data + len + h.nstack * sizeof(uint64_t),
		       h.nstack * sizeof(uint64_t));
		meta.stack_depth = depth;
	}
	dp_fs_hist_add(fs, id, data + sizeof(h), len - sizeof(h), &meta);
	dp_fs_trigger_record(fs, id, data + sizeof(h), len - sizeof(h), &meta);
	dp_fs_inst_record(fs, id, data + sizeof(h), len - sizeof(h), &meta);
	dp_fs_tracer_record(fs, id, data + sizeof(h), len - sizeof(h), &meta);
	dp_fs_stack_record(fs, id, &meta);
	dp_fs_fcmd_record(fs, id, data + sizeof(h), len - sizeof(h), &meta);
}

static void store_ack(struct dp_fs_lane *lane, int result)
{
	struct dp_fs *fs = lane->fs;

	pthread_mutex_lock(&fs->buf_lock);
	lane->ack_result = result;
	lane->ack_gen++;
	pthread_cond_broadcast(&fs->buf_cond);
	pthread_mutex_unlock(&fs->buf_lock);
}

static void store_show(struct dp_fs_lane *lane, int result, char *text,
		       size_t len)
{
	struct dp_fs *fs = lane->fs;

	pthread_mutex_lock(&fs->buf_lock);
	free(lane->show_text);
	lane->show_text = text;
	lane->show_len = len;
	lane->show_result = result;
	lane->show_gen++;
	pthread_cond_broadcast(&fs->buf_cond);
	pthread_mutex_unlock(&fs->buf_lock);
}

static void *reader_main(void *arg)
{
	struct dp_fs_lane *lane = arg;
	struct dp_fs *fs = lane->fs;
	struct frame h;
	char *data;

	while (!read_frame(lane->child_fd, &h, &data)) {
		if (h.type == FR_LINE)
			dp_fs_buf_add(fs, h.id, h.cpu, data, h.len);
		else if (h.type == FR_PROFILE)
			store_counts(lane, data, h.len);
		else if (h.type == FR_ACK)
			store_ack(lane, -(int)h.id);
		else if (h.type == FR_REC)
			store_rec(fs, h.id, data, h.len);
		if (h.type == FR_SHOW)
			store_show(lane, -(int)h.id, data, h.len);
		else
			free(data);
	}
	pthread_mutex_lock(&fs->buf_lock);
	lane->reader_running = false;
	pthread_cond_broadcast(&fs->buf_cond);
	pthread_mutex_unlock(&fs->buf_lock);
	return NULL;
}

/* Counts as last reported into the registry's probes. */
static void apply_counts(struct dp_fs *fs)
{
	pthread_mutex_lock(&fs->buf_lock);
	for (size_t i = 0; i < fs->ncounts; i++) {
		struct dp_event *ev = dp_registry_find_id(&fs->reg,
							  fs->counts[i].id);
		struct dp_probe *p = ev && ev->serial == fs->counts[i].serial ?
				     ev->probes : NULL;

		for (unsigned k = 0; p && k < fs->counts[i].idx; k++)
			p = p->next;
		if (p) {
			p->nhit = fs->counts[i].nhit;
			p->nmiss = fs->counts[i].nmiss;
		}
	}
	pthread_mutex_unlock(&fs->buf_lock);
}

/*
 * Every running child drains what it has and reports its counts: after
 * this, a hit made before the call is in the buffer and the profile.
 */
void dp_fs_update_profile(struct dp_fs *fs)
{
	unsigned long gen[2];
	bool asked[2] = { false, false };
	struct timespec until;

	if (fs->top)	/* an instance: the children are the top level's */
		fs = fs->top;
	pthread_mutex_lock(&fs->buf_lock);
	for (int i = 0; i < 2; i++) {
		struct dp_fs_lane *l = &fs->lanes[i];

		gen[i] = l->profile_gen;
		asked[i] = l->child && l->reader_running &&
			   !kill(l->child, SIGUSR1);
	}
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 2;
	for (int i = 0; i < 2; i++) {
		struct dp_fs_lane *l = &fs->lanes[i];

		while (asked[i] && gen[i] == l->profile_gen &&
		       l->reader_running &&
		       !pthread_cond_timedwait(&fs->buf_cond, &fs->buf_lock,
					       &until))
			;
	}
	pthread_mutex_unlock(&fs->buf_lock);
	apply_counts(fs);
}

/* The running child's text for @ev; -errno if there is none. */
static int ask_show(struct dp_fs_lane *lane, const struct dp_event *ev,
		    FILE *out)
{
	struct dp_fs *fs = lane->fs;
	struct timespec until;
	unsigned long gen;
	int ret = -ETIMEDOUT;

	if (!lane->child || !lane->reader_running)
		return -ENOENT;
	pthread_mutex_lock(&fs->buf_lock);
	gen = lane->show_gen;
	pthread_mutex_unlock(&fs->buf_lock);
	if (send_frame(lane->cmd_fd, FR_SHOW, ev->id, NULL, 0) ||
	    kill(lane->child, SIGUSR1))
		return -EPIPE;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 5;
	pthread_mutex_lock(&fs->buf_lock);
	while (gen == lane->show_gen && lane->reader_running &&
	       !pthread_cond_timedwait(&fs->buf_cond, &fs->buf_lock, &until))
		;
	if (gen != lane->show_gen) {
		ret = lane->show_result;
		if (!ret)
			fwrite(lane->show_text, 1, lane->show_len, out);
	}
	pthread_mutex_unlock(&fs->buf_lock);
	return ret;
}

void dp_fs_show_read(struct dp_fs *fs, const struct dp_event *ev, FILE *out)
{
	int ret = -ENOENT;

	if (fs->top)	/* an instance: the children are the top level's */
		fs = fs->top;
	if (ev->enabled && dp_event_placed(ev) && lane_of(fs, ev) == DP_LANE_PROC)
		ret = ask_show(&fs->lanes[DP_LANE_PROC], ev, out);
	if (ret == -ENOTSUP)
		fprintf(out, "%s/%s: the engine cannot show its probes\n",
			ev->group, ev->name);
	else if (ret)
		fprintf(out, "%s/%s: not armed%s\n", ev->group, ev->name,
			ev->enabled ? "" : " (the event is not enabled)");
}

/* ---- the manager ------------------------------------------------------------ */

static void stop_child(struct dp_fs_lane *lane)
{
	int st;

	if (!lane->child)
		return;
	kill(lane->child, SIGTERM);
	/* the child's last frames must be read for it to finish writing */
	if (lane->reader_live)
		pthread_join(lane->reader, NULL);
	lane->reader_live = false;
	while (waitpid(lane->child, &st, 0) < 0 && errno == EINTR)
		;
	close(lane->child_fd);
	if (lane->cmd_fd >= 0)
		close(lane->cmd_fd);
	lane->child = 0;
	lane->child_fd = lane->cmd_fd = -1;
	apply_counts(lane->fs);
}

static bool any_armed(const struct dp_fs *fs, int lane)
{
	for (const struct dp_event *ev = fs->reg.events; ev; ev = ev->next)
		if (armed(ev) && lane_of(fs, ev) == lane)
			return true;
	return false;
}

/* Fork the child; 0 once it has armed every enabled event. */
static int start_child(struct dp_fs_lane *lane, bool last_try)
{
	struct dp_fs *fs = lane->fs;
	struct frame h;
	char *msg;
	int fds[2], cmd[2], st, ret = 0;
	pid_t pid, me = getpid();

	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	if (pipe2(cmd, O_CLOEXEC)) {
		ret = -errno;
		close(fds[0]);
		close(fds[1]);
		return ret;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		close(fds[0]);
		close(fds[1]);
		close(cmd[0]);
		close(cmd[1]);
		return ret;
	}
	if (!pid) {
		close(fds[0]);
		close(cmd[1]);
		child_main(fs, lane, fds[1], cmd[0], me);
	}
	close(fds[1]);
	close(cmd[0]);
	lane->cmd_fd = cmd[1];
	if (read_frame(fds[0], &h, &msg) || h.type != FR_READY) {
		if (last_try)
			fprintf(stderr, "dprobe mount: cannot arm the enabled "
				"%sevents in process %d: %s\n",
				lane->which == DP_LANE_KERNEL ? "kernel " : "",
				(int)fs->o->pid,
				msg && h.type == FR_ERROR ? msg :
				"the tracer stopped");
		free(msg);
		close(fds[0]);
		close(lane->cmd_fd);
		lane->cmd_fd = -1;
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		return -EINVAL;
	}
	lane->engine = dp_engine_by_name(msg);
	free(msg);
	lane->child = pid;
	lane->child_fd = fds[0];
	lane->reader_running = true;
	if (pthread_create(&lane->reader, NULL, reader_main, lane)) {
		lane->reader_running = false;
		stop_child(lane);
		return -EAGAIN;
	}
	lane->reader_live = true;
	return 0;
}

/* The events @lane arms, as child_commands() reads them. */
static char *wants_text(struct dp_fs *fs, int lane, size_t *len)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, len);

	if (!f)
		return NULL;
	for (const struct dp_event *ev = fs->reg.events; ev; ev = ev->next) {
		if (!armed(ev) || lane_of(fs, ev) != lane)
			continue;
		fprintf(f, "E %u %u\nG %s\nN %s\nF ", ev->id, ev->serial,
			ev->group, ev->name);
		for (const char *c = ev->filter_text; c && *c; c++)
			fputc(*c == '\n' ? ' ' : *c, f);
		fputc('\n', f);
		if (ev->soft)
			fputs("S\n", f);
		if (ev->triggered)
			fputs("T\n", f);
		if (ev->stack)
			fputs("K\n", f);
		if (ev->stack_max)
			fputs("M\n", f);
		for (const struct dp_probe *p = ev->probes; !ev->kernel && p;
		     p = p->next) {
			char *line = dp_probe_canonical(&p->def);

			if (line)
				fprintf(f, "L %s\n", line);
			free(line);
		}
	}
	if (fclose(f)) {
		free(text);
		return NULL;
	}
	return text;
}

/*
 * The running child switches its events (an engine that can): 0 once it
 * answered that it runs exactly the enabled ones, else -errno (then it is
 * started anew).
 */
static int switch_live(struct dp_fs_lane *lane)
{
	struct dp_fs *fs = lane->fs;
	struct timespec until;
	unsigned long gen;
	size_t len = 0;
	char *text;
	int ret = -ETIMEDOUT;

	if (!lane->child || !lane->reader_running || !lane->engine ||
	    !lane->engine->enable)
		return -ENOTSUP;
	/* syscall events now: only a new child on the ptrace engine */
	if (lane->which == DP_LANE_PROC && fs->sys_lane == DP_LANE_PROC &&
	    proc_syscalls(&fs->reg) &&
	    !(lane->engine->flags & DP_ENGINE_SYSCALLS))
		return -ENOTSUP;
	text = wants_text(fs, lane->which, &len);
	if (!text)
		return -ENOMEM;
	pthread_mutex_lock(&fs->buf_lock);
	gen = lane->ack_gen;
	pthread_mutex_unlock(&fs->buf_lock);
	/* the signal first: the child reads while the pipe fills */
	if (len > FRAME_MAX || kill(lane->child, SIGUSR2) ||
	    send_frame(lane->cmd_fd, 0, 0, text, len)) {
		free(text);
		return -EPIPE;
	}
	free(text);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 10;
	pthread_mutex_lock(&fs->buf_lock);
	while (gen == lane->ack_gen && lane->reader_running &&
	       !pthread_cond_timedwait(&fs->buf_cond, &fs->buf_lock, &until))
		;
	if (gen != lane->ack_gen)
		ret = lane->ack_result;
	pthread_mutex_unlock(&fs->buf_lock);
	return ret;
}

/*
 * Stop the child, start the next one.  An attach that fails is tried
 * again a few times: a target caught inside an interrupted system call
 * can make one remote mmap fail.
 */
static int restart(struct dp_fs_lane *lane)
{
	struct timespec pause = { 0, 50 * 1000 * 1000 };
	struct dp_fs *fs = lane->fs;
	int ret = 0;

	stop_child(lane);
	for (int i = 0; i < 3; i++) {
		if (!any_armed(fs, lane->which) || atomic_load(&fs->target_gone))
			return 0;
		ret = start_child(lane, i == 2);
		if (!ret)
			break;
		nanosleep(&pause, NULL);
	}
	return ret;
}

/* The kernel lane is started anew whenever what it arms changes. */
static int rearm_kernel(struct dp_fs *fs)
{
	struct dp_fs_lane *lane = &fs->lanes[DP_LANE_KERNEL];
	size_t len = 0;
	char *now = wants_text(fs, DP_LANE_KERNEL, &len);
	int ret;

	if (!now)
		return -ENOMEM;
	if (lane->armed && !strcmp(now, lane->armed) &&
	    (lane->child || !len)) {
		free(now);
		return 0;
	}
	free(lane->armed);
	lane->armed = now;
	ret = restart(lane);
	if (ret) {
		free(lane->armed);	/* tried again on the next change */
		lane->armed = NULL;
	}
	return ret;
}

static int do_rearm(struct dp_fs *fs)
{
	int ret = 0;

	mark_soft(fs);
	if (switch_live(&fs->lanes[DP_LANE_PROC]))
		ret = restart(&fs->lanes[DP_LANE_PROC]);
	if (!ret)
		ret = rearm_kernel(fs);
	return ret;
}

static void *mgr_main(void *arg)
{
	struct dp_fs *fs = arg;

	pthread_mutex_lock(&fs->mgr_lock);
	for (;;) {
		int ret;

		while (!fs->mgr_quit && fs->mgr_req == fs->mgr_done)
			pthread_cond_wait(&fs->mgr_cond, &fs->mgr_lock);
		if (fs->mgr_quit)
			break;
		pthread_mutex_unlock(&fs->mgr_lock);
		ret = do_rearm(fs);
		pthread_mutex_lock(&fs->mgr_lock);
		fs->mgr_result = ret;
		fs->mgr_done = fs->mgr_req;
		pthread_cond_broadcast(&fs->mgr_cond);
	}
	pthread_mutex_unlock(&fs->mgr_lock);
	for (int i = 0; i < 2; i++)
		stop_child(&fs->lanes[i]);
	free(fs->lanes[DP_LANE_KERNEL].armed);
	fs->lanes[DP_LANE_KERNEL].armed = NULL;
	return NULL;
}

int dp_fs_rearm(struct dp_fs *fs)
{
	unsigned long req;
	int ret;

	if (fs->top)
		return dp_fs_inst_rearm(fs);
	dp_fs_hist_sync(fs);
	pthread_mutex_lock(&fs->mgr_lock);
	req = ++fs->mgr_req;
	pthread_cond_broadcast(&fs->mgr_cond);
	while (fs->mgr_done < req)
		pthread_cond_wait(&fs->mgr_cond, &fs->mgr_lock);
	ret = fs->mgr_result;
	pthread_mutex_unlock(&fs->mgr_lock);
	return ret;
}

/* ---- the target's end ---------------------------------------------------- */

static void *monitor_main(void *arg)
{
	struct dp_fs *fs = arg;
	struct timespec tick = { 0, 100 * 1000 * 1000 };
	int st;

	if (fs->o->own_child) {
		while (waitpid(fs->o->pid, &st, 0) < 0) {
			if (errno != EINTR) {
				st = 0;
				break;
			}
		}
		fs->target_status = st;
		atomic_store(&fs->target_gone, true);
		return NULL;
	}
	while (!atomic_load(&fs->exiting)) {
		if (kill(fs->o->pid, 0) && errno == ESRCH) {
			atomic_store(&fs->target_gone, true);
			break;
		}
		nanosleep(&tick, NULL);
	}
	return NULL;
}

/* Threads are started with every signal blocked: signals go to main. */
int dp_fs_session_start(struct dp_fs *fs)
{
	sigset_t all, old;
	int ret;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&fs->mgr_thread, NULL, mgr_main, fs);
	if (!ret) {
		ret = pthread_create(&fs->monitor_thread, NULL, monitor_main, fs);
		if (ret) {
			pthread_mutex_lock(&fs->mgr_lock);
			fs->mgr_quit = true;
			pthread_cond_broadcast(&fs->mgr_cond);
			pthread_mutex_unlock(&fs->mgr_lock);
			pthread_join(fs->mgr_thread, NULL);
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -ret;
}

/*
 * Detach (the manager stops the child on its way out), then wait for a
 * command we started: it runs on untraced, as after `dprobe trace`.
 */
void dp_fs_session_end(struct dp_fs *fs)
{
	atomic_store(&fs->exiting, true);
	pthread_mutex_lock(&fs->mgr_lock);
	fs->mgr_quit = true;
	pthread_cond_broadcast(&fs->mgr_cond);
	pthread_mutex_unlock(&fs->mgr_lock);
	pthread_join(fs->mgr_thread, NULL);
	for (int i = 0; i < 2; i++) {
		free(fs->lanes[i].show_text);
		fs->lanes[i].show_text = NULL;
	}
	if (fs->o->own_child && !atomic_load(&fs->target_gone))
		fprintf(stderr, "dprobe mount: every probe removed; waiting "
			"for process %d to exit\n", (int)fs->o->pid);
	pthread_join(fs->monitor_thread, NULL);
}
