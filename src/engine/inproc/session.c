// SPDX-License-Identifier: GPL-2.0
/*
 * The in-process engine's session with one target (see inproc.h): start
 * the agent in it, hand it the rings and the probes, serve the output
 * until the end, then take everything out again.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/agent/protocol.h"
#include "engine/engine.h"
#include "engine/inproc/internal.h"
#include "engine/ptrace/inject.h"
#include "lang/errors.h"

#define CONNECT_TIMEOUT_MS	10000
#define DETACH_TIMEOUT_MS	5000

void inproc_log(struct dp_inproc *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(t->o.log ? t->o.log : stderr, fmt, ap);
	va_end(ap);
}

/* ---- suitability ------------------------------------------------------------ */

/* Whether @path asks for a dynamic loader (PT_INTERP): -1 if unreadable. */
static int has_interp(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = -1;
	size_t n;
	Elf *e;

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (e && !elf_getphdrnum(e, &n)) {
		ret = 0;
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_INTERP)
				ret = 1;
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return ret;
}

int dp_inproc_program(const char *path)
{
	struct stat st;
	int interp;

	if (stat(path, &st) || (interp = has_interp(path)) < 0)
		return -1;
	return (interp ? DP_PROGRAM_DYNAMIC : 0) |
	       (st.st_mode & (S_ISUID | S_ISGID) ? DP_PROGRAM_SETID : 0);
}

/* ---- the channel ------------------------------------------------------------ */

/*
 * The channel is a socket pair nobody else can reach: one end goes to
 * the command dprobe launches (inherited, its number in the environment),
 * or, for a running process, the agent makes the pair and dprobe takes
 * its end out of the process with pidfd_getfd(), which needs the same
 * rights as ptrace.  No name, so no other user can see, connect to or
 * flood it.
 */
static int launch_pair(struct dp_inproc *t, int *child_end)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -errno;
	t->sock = sv[0];
	*child_end = sv[1];
	return 0;
}

/* Whether @fd is a channel end the agent of @pid made: 0 or -errno. */
static int check_taken_end(int fd, pid_t pid)
{
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	int type = 0, dom = 0;
	socklen_t tl = sizeof(type), dl = sizeof(dom);

	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &dl) ||
	    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl))
		return -EPROTO;
	/* a socket pair's credentials are its creator's: the target */
	if (dom != AF_UNIX || type != SOCK_SEQPACKET || cred.pid != pid)
		return -EPROTO;
	return 0;
}

/* dprobe's end of the pair the agent made in @pid, descriptor @fd there. */
static int take_agent_end(struct dp_inproc *t, long fd, char *why,
			  size_t whylen)
{
	int pidfd = (int)syscall(SYS_pidfd_open, t->pid, 0), mine, ret;

	if (pidfd < 0 || fd < 0 || fd > INT_MAX) {
		ret = pidfd < 0 ? -errno : -EPROTO;
		goto fail;
	}
	mine = (int)syscall(SYS_pidfd_getfd, pidfd, (int)fd, 0);
	ret = mine < 0 ? -errno : check_taken_end(mine, t->pid);
	if (ret && mine >= 0)
		close(mine);
	if (!ret)
		t->sock = mine;
fail:
	if (pidfd >= 0)
		close(pidfd);
	if (ret)
		snprintf(why, whylen, "cannot take the agent's channel from "
			 "process %d: %s", (int)t->pid, strerror(-ret));
	return ret;
}

static bool child_gone(struct dp_inproc *t)
{
	if (t->exited)
		return true;
	if (t->launched) {
		if (waitpid(t->pid, &t->status, WNOHANG) == t->pid)
			t->exited = true;
	} else if (kill(t->pid, 0) && errno == ESRCH) {
		t->exited = true;
	}
	return t->exited;
}

/* ---- the handshake ---------------------------------------------------------- */

/*
 * The agent's first word, within CONNECT_TIMEOUT_MS: a launched command
 * that exits first, or never loads the agent, ends the wait.
 */
static int wait_hello(struct dp_inproc *t, char *buf, size_t len, char *why,
		      size_t whylen)
{
	for (int waited = 0; waited < CONNECT_TIMEOUT_MS; waited += 20) {
		int n;

		if (child_gone(t)) {
			snprintf(why, whylen, "process %d exited before the "
				 "agent started", (int)t->pid);
			return -ESRCH;
		}
		n = chan_recv(t, buf, len, 20);
		if (n > 0)
			return 0;
		if (n != -ETIMEDOUT)
			break;
	}
	if (child_gone(t)) {
		snprintf(why, whylen, "process %d exited before the agent "
			 "started", (int)t->pid);
		return -ESRCH;
	}
	snprintf(why, whylen, "the agent did not start in process %d within "
		 "%d s", (int)t->pid, CONNECT_TIMEOUT_MS / 1000);
	return -ETIMEDOUT;
}

static int hello(struct dp_inproc *t, char *why, size_t whylen)
{
	char buf[DP_AGENT_MSG_MAX], clock[16];
	int ver, pid, ret = wait_hello(t, buf, sizeof(buf), why, whylen);

	if (ret)
		return ret;
	if (sscanf(buf, "HELLO %d %d %15s", &ver, &pid, clock) != 3) {
		snprintf(why, whylen, "the agent did not say hello");
		return -EPROTO;
	}
	if (ver != DP_AGENT_VERSION) {
		snprintf(why, whylen, "the agent speaks version %d, dprobe %d",
			 ver, DP_AGENT_VERSION);
		return -EPROTO;
	}
	if (pid != t->pid) {
		snprintf(why, whylen, "the agent of process %d answered for "
			 "process %d", (int)t->pid, pid);
		return -EPROTO;
	}
	clk_init(&t->clk, !strcmp(clock, "tsc"));
	return 0;
}

static int rings(struct dp_inproc *t, char *why, size_t whylen)
{
	uint64_t size = dp_ring_size_round(t->o.buffer_size ?
					   t->o.buffer_size : DP_RING_DEFAULT_SIZE);
	int ret;

	if (!size) {
		snprintf(why, whylen, "buffer size too large");
		return -EINVAL;
	}
	ret = dp_ring_set_create(&t->rings, DP_RING_DEFAULT_RINGS, size,
				 t->o.overwrite ? DP_RING_OVERWRITE : DP_RING_DISCARD);
	if (ret) {
		snprintf(why, whylen, "cannot create the rings: %s", strerror(-ret));
		return ret;
	}
	t->have_rings = true;
	t->rd = dp_ring_reader_new(&t->rings, true);
	if (!t->rd)
		return -ENOMEM;
	return chan_send(t, t->rings.fd, "RINGS");
}

static int new_slot(struct dp_inproc *t, struct dp_probe *pr, uint64_t addr)
{
	struct slot *v;

	if (t->nslots >= DP_AGENT_MAX_SLOTS)
		return -E2BIG;
	v = realloc(t->slots, (t->nslots + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	t->slots = v;
	v[t->nslots] = (struct slot){ .pr = pr, .addr = addr };
	return (int)t->nslots++;
}

/* @SYM arguments: their run-time addresses, as the ptrace engine reads. */
static int send_syms(struct dp_inproc *t, int slot, const struct dp_probe *pr)
{
	for (unsigned i = 0; i < pr->def.nargs; i++) {
		const struct dp_arg *a = &pr->def.args[i];
		char why[160];
		uint64_t addr;
		int ret;

		if (a->insn[0].op != DP_FOP_SYMBOL ||
		    dp_proc_sym_addr(t->proc, a->insn[0].data, &addr, why,
				     sizeof(why)))
			continue;
		ret = chan_send(t, -1, "SYM %d %u %llx", slot, i,
			       (unsigned long long)addr);
		if (ret)
			return ret;
	}
	return 0;
}

static int send_location(struct dp_inproc *t, struct dp_probe *pr,
			 const struct dp_proc_loc *l, const char *line)
{
	unsigned flags = t->o.count_only && !pr->event->filter ?
		DP_AGENT_F_COUNT : 0;
	int slot = new_slot(t, pr, l->addr), ret;

	if (slot < 0)
		return slot;
	t->slots[slot].counter = flags && slot < (int)DP_RING_NCOUNTERS;
	ret = chan_send(t, -1, "PROBE %d %u %llx %llx %x %s", slot,
		       pr->event->id, (unsigned long long)l->addr,
		       (unsigned long long)(l->addr - l->file_offset), flags,
		       line);
	if (!ret && l->ref_ctr_addr)
		ret = chan_send(t, -1, "REF %d %llx", slot,
			       (unsigned long long)l->ref_ctr_addr);
	return ret ? ret : send_syms(t, slot, pr);
}

static int send_probe(struct dp_inproc *t, struct dp_probe *pr, char *why,
		      size_t whylen)
{
	struct dp_error e = { 0 };
	struct dp_proc_res res;
	char *line;
	int ret = dp_proc_resolve(t->proc, NULL, &pr->def, &res, &e);

	if (ret) {
		snprintf(why, whylen, "%s/%s: %s%s%s%s", pr->event->group,
			 pr->event->name, dp_err_message(e.code),
			 e.detail[0] ? " (" : "", e.detail,
			 e.detail[0] ? ")" : "");
		dp_error_clear(&e);
		return ret;
	}
	if (res.pending) {
		snprintf(why, whylen, "%s/%s: %s; the in-process engine arms "
			 "probes only in objects loaded at the start (use "
			 "--engine ptrace)", pr->event->group, pr->event->name,
			 res.why);
		dp_proc_res_free(&res);
		return -ENOTSUP;
	}
	line = dp_probe_canonical(&pr->def);
	for (size_t i = 0; !ret && i < res.n; i++) {
		ret = line ? send_location(t, pr, &res.loc[i], line) : -ENOMEM;
		if (!ret && !pr->vaddr) {
			pr->vaddr = res.loc[i].vaddr;
			pr->file_offset = res.loc[i].file_offset;
		}
	}
	free(line);
	dp_proc_res_free(&res);
	if (ret && !why[0])
		snprintf(why, whylen, "the agent went away");
	return ret;
}

/* One reply to ARM: 1 when ARMED came, 0 for another line, or -errno. */
static int arm_reply(struct dp_inproc *t, char *buf, char *why, size_t whylen)
{
	unsigned slot;
	int n, err;

	if (sscanf(buf, "ARMED %d", &n) == 1)
		return 1;
	if (!strncmp(buf, "STAT ", 5) || !strcmp(buf, "END"))
		return 0;	/* the process is exiting: its last word */
	if (sscanf(buf, "OK %u %n", &slot, &n) == 1 && slot < t->nslots) {
		free(t->slots[slot].how);
		t->slots[slot].how = strdup(buf + n);
		return 0;
	}
	if (sscanf(buf, "ERR %u %d %n", &slot, &err, &n) == 2) {
		const struct dp_probe *pr = slot < t->nslots ? t->slots[slot].pr : NULL;

		t->refused = true;
		if (!why[0] && pr)
			snprintf(why, whylen, "%s/%s at 0x%llx: %s",
				 pr->event->group, pr->event->name,
				 (unsigned long long)t->slots[slot].addr, buf + n);
		else if (!why[0])
			snprintf(why, whylen, "agent: %s", buf + n);
		return -(err > 0 ? err : EINVAL);
	}
	snprintf(why, whylen, "the agent said '%.60s'", buf);
	return -EPROTO;
}

static int arm(struct dp_inproc *t, char *why, size_t whylen)
{
	char buf[DP_AGENT_MSG_MAX];
	int ret = chan_send(t, -1, "ARM"), first = 0, n;

	while (!ret) {
		n = chan_recv(t, buf, sizeof(buf), INPROC_REPLY_TIMEOUT_MS);
		if (n <= 0) {
			if (!why[0])
				snprintf(why, whylen, "the agent did not answer");
			return n ? n : -EPIPE;
		}
		ret = arm_reply(t, buf, why, whylen);
		if (ret < 0 && !first)
			first = ret;
		if (ret < 0)
			ret = 0;	/* read the other answers */
		else if (ret == 1)
			return first;
	}
	return ret;
}

static int handshake(struct dp_inproc *t, char *why, size_t whylen)
{
	int ret = hello(t, why, whylen);

	if (!ret)
		ret = rings(t, why, whylen);
	if (!ret)
		ret = dp_proc_open(t->pid, &t->proc, why, whylen);
	if (ret)
		return ret;
	dp_proc_symbolizer(t->proc, &t->symbolizer);
	for (struct dp_event *ev = t->o.reg->events; ev; ev = ev->next)
		for (struct dp_probe *pr = ev->probes; pr; pr = pr->next)
			if ((ret = send_probe(t, pr, why, whylen)))
				return ret;
	return arm(t, why, whylen);
}

static struct dp_inproc *session_new(const struct dp_inproc_opts *o)
{
	struct dp_inproc *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->o = *o;
	t->sock = -1;
	return t;
}

/* ---- launch and attach ---------------------------------------------------- */

/* In the child: the agent preloaded, its channel end inherited. */
static void launch_child(const struct dp_inproc *t, char *const argv[],
			 int errfd, int chan)
{
	const char *pre = getenv("LD_PRELOAD");
	char *val = NULL, num[16];
	int err, fd;

	if (t->o.child_mask)
		sigprocmask(SIG_SETMASK, t->o.child_mask, NULL);
	if (pre && *pre ? asprintf(&val, "%s:%s", t->o.agent, pre) < 0 :
	    !(val = strdup(t->o.agent)))
		_exit(127);
	/* a copy without close-on-exec, above the standard three */
	fd = fcntl(chan, F_DUPFD, 3);
	if (fd < 0)
		_exit(127);
	snprintf(num, sizeof(num), "%d", fd);
	setenv("LD_PRELOAD", val, 1);
	setenv(DP_AGENT_ENV_SOCK, num, 1);
	execvp(argv[0], argv);
	err = errno;
	if (write(errfd, &err, sizeof(err)) < 0)
		_exit(127);
	_exit(127);
}

static int start_child(struct dp_inproc *t, char *const argv[], char *why,
		       size_t whylen)
{
	int fds[2], err = 0, chan = -1;
	ssize_t n;

	err = launch_pair(t, &chan);
	if (err)
		return err;
	if (pipe2(fds, O_CLOEXEC)) {
		close(chan);
		return -errno;
	}
	t->pid = fork();
	if (t->pid < 0) {
		err = -errno;
		close(fds[0]);
		close(fds[1]);
		close(chan);
		return err;
	}
	if (!t->pid)
		launch_child(t, argv, fds[1], chan);
	close(chan);
	close(fds[1]);
	t->launched = true;
	do
		n = read(fds[0], &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	close(fds[0]);
	if (n == sizeof(err)) {
		waitpid(t->pid, NULL, 0);
		t->exited = true;
		snprintf(why, whylen, "cannot execute %s: %s", argv[0],
			 strerror(err));
		return -err;
	}
	return 0;
}

/*
 * The target exited while it was being set up: not an error, the session
 * simply has nothing to read (as the ptrace engine ends when its process
 * does).  A probe the agent refused stays an error even then: the agent
 * lets the program go on after ARMED, and a short program can be gone
 * before we look.
 */
static bool gone_early(struct dp_inproc *t)
{
	if (!child_gone(t))
		return false;
	chan_free(t);
	return true;
}

/* The agent says hello and arms the probes (the target started or injected). */
static int start_session(struct dp_inproc *t, char *why, size_t whylen)
{
	int ret = handshake(t, why, whylen);

	return ret && !t->refused && gone_early(t) ? 0 : ret;
}

static void abandon(struct dp_inproc *t)
{
	if (t->launched && !t->exited) {
		kill(t->pid, SIGKILL);
		waitpid(t->pid, &t->status, 0);
		t->exited = true;
	}
	dp_inproc_free(t);
}

int dp_inproc_launch(const struct dp_inproc_opts *o, char *const argv[],
		     struct dp_inproc **out, char *why, size_t whylen)
{
	struct dp_inproc *t = session_new(o);
	int ret;

	if (!t)
		return -ENOMEM;
	ret = start_child(t, argv, why, whylen);
	if (!ret)
		ret = start_session(t, why, whylen);
	if (ret) {
		abandon(t);
		return ret;
	}
	*out = t;
	return 0;
}

int dp_inproc_attach(const struct dp_inproc_opts *o, pid_t pid,
		     struct dp_inproc **out, char *why, size_t whylen)
{
	struct dp_inproc *t = session_new(o);
	long rv = 0;
	int ret;

	if (!t)
		return -ENOMEM;
	t->pid = pid;
	/* the agent answers with the number of our end of its pair */
	ret = dp_ptrace_inject(pid, o->agent, DP_AGENT_ATTACH_FN, NULL, &rv,
			       why, whylen);
	if (!ret && rv == -EBUSY) {
		snprintf(why, whylen, "process %d is traced already by another "
			 "dprobe (its agent is attached)", (int)pid);
		ret = -EALREADY;
	} else if (!ret && rv < 0) {
		snprintf(why, whylen, "the agent could not start in process "
			 "%d: %s", (int)pid, strerror((int)-rv));
		ret = rv >= -4095 ? (int)rv : -EINVAL;
	}
	if (!ret)
		ret = take_agent_end(t, rv, why, whylen);
	if (!ret)
		ret = start_session(t, why, whylen);
	else if (gone_early(t))
		ret = 0;	/* it exited while we injected */
	if (ret) {
		/* closing the channel makes the agent take everything out */
		dp_inproc_free(t);
		return ret;
	}
	*out = t;
	return 0;
}

/* ---- running ------------------------------------------------------------------ */

/*
 * Take every probe out (the agent restores every byte) and say bye.  A
 * second stop request cuts the waits short: closing the channel makes
 * the agent take everything out as well.
 */
static void detach(struct dp_inproc *t)
{
	char buf[DP_AGENT_MSG_MAX];

	if (t->sock < 0)
		return;
	inproc_update_missed(t);
	if (!chan_send(t, -1, "DETACH"))
		while (chan_recv(t, buf, sizeof(buf), DETACH_TIMEOUT_MS) > 0 &&
		       strcmp(buf, "BYE"))
			;
	chan_free(t);
}

/* Whether the target is gone within about 200 ms. */
static bool gone_soon(struct dp_inproc *t)
{
	for (int i = 0; i < 200 && !child_gone(t); i++)
		usleep(1000);
	return child_gone(t);
}

/* Read and print until a stop, the target's end or the channel's. */
static void trace_loop(struct dp_inproc *t)
{
	while (!t->stop_req) {
		reader_drain(t, false);
		if (t->profile_req) {
			t->profile_req = 0;
			inproc_update_missed(t);
			if (t->profile_cb)
				t->profile_cb(t->profile_priv);
		}
		if (child_gone(t))
			break;
		if (!chan_serve(t)) {
			/* the image that had the agent is gone: an exit
			 * (the zombie follows soon) or an exec */
			if (!gone_soon(t))
				inproc_log(t, "dprobe: process %d closed the "
					   "channel (an exec?); the in-process "
					   "engine traces it no more\n",
					   (int)t->pid);
			break;
		}
	}
}

/* A launched command runs on after a detach: wait for it, unless told
 * to stop waiting (Ctrl-C again). */
static void wait_launched(struct dp_inproc *t)
{
	const struct timespec ms10 = { 0, 10000000 };

	while (t->launched && !child_gone(t) && !inproc_must_quit(t))
		ppoll(NULL, 0, &ms10, t->waitmask);
	if (t->launched && !t->exited)
		inproc_log(t, "dprobe: process %d runs on without probes\n",
			   (int)t->pid);
}

int dp_inproc_run(struct dp_inproc *t, int *status)
{
	/* the caller blocked its stop signals: they interrupt the waits */
	sigemptyset(&t->unblocked);
	t->waitmask = &t->unblocked;
	trace_loop(t);
	/* what the agent said at exit, if it exited (or is exiting) */
	if (t->sock >= 0)
		chan_read_stats(t, 0);
	if (!child_gone(t))
		detach(t);
	chan_free(t);
	reader_drain(t, true);
	wait_launched(t);
	if (status)
		*status = t->status;
	return 0;
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

void dp_inproc_list_probes(const struct dp_inproc *t, FILE *out)
{
	for (unsigned i = 0; i < t->nslots; i++) {
		const struct slot *s = &t->slots[i];

		fprintf(out, "%s/%s 0x%llx %s\n", s->pr->event->group,
			s->pr->event->name, (unsigned long long)s->addr,
			s->how ? s->how : "not armed");
	}
}

const struct dp_stats *dp_inproc_stats(const struct dp_inproc *t)
{
	return &t->stats;
}

void dp_inproc_free(struct dp_inproc *t)
{
	if (!t)
		return;
	chan_free(t);
	if (t->rd)
		dp_ring_reader_free(t->rd);
	if (t->have_rings)
		dp_ring_set_close(&t->rings);
	if (t->proc)
		dp_proc_close(t->proc);
	for (unsigned i = 0; i < t->nslots; i++)
		free(t->slots[i].how);
	free(t->slots);
	free(t->comms);
	free(t);
}
