// SPDX-License-Identifier: GPL-2.0
/*
 * dprobe's end of the control channel (src/engine/agent/protocol.h):
 * sending and receiving messages, and the agent's miss counts.
 *
 * Both sides may talk at once (the agent answers ERR to a PROBE while
 * dprobe is still sending others, it sends its miss counts at exit while
 * dprobe reads the rings), and a socket's buffer holds only so many
 * packets: a side that only writes while the other only writes waits
 * forever.  So dprobe never blocks on a send without reading: a message
 * that arrives while it waits to send is queued for chan_recv(), and
 * while tracing it reads whatever comes (chan_serve()).  Every wait is
 * bounded, and a second stop request (Ctrl-C twice) ends it: the agent
 * may be hostile, and dprobe must still get out.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "engine/agent/protocol.h"
#include "engine/inproc/internal.h"

/* Messages kept while waiting to send: every slot's ERR, and some. */
#define INQ_MAX		(DP_AGENT_MAX_SLOTS + 64u)
/* Messages read per look while tracing, so the rings are read too. */
#define SERVE_BATCH	256

int64_t inproc_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

bool inproc_must_quit(const struct dp_inproc *t)
{
	return t->stop_req >= 2;
}

void inproc_take_signals(struct dp_inproc *t)
{
	const struct timespec zero = { 0, 0 };

	if (t->waitmask)
		ppoll(NULL, 0, &zero, t->waitmask);
}

/*
 * Wait for @events on @fd until @deadline (inproc_now_ms()): the revents,
 * 0 at the deadline, or -EINTR when dprobe must quit.  The stop signals
 * are taken meanwhile once tracing runs (t->waitmask).
 */
int inproc_wait_fd(struct dp_inproc *t, int fd, short events,
		   int64_t deadline)
{
	struct pollfd pfd = { .fd = fd, .events = events };

	for (;;) {
		int64_t left = deadline - inproc_now_ms();
		struct timespec ts;
		int r;

		if (inproc_must_quit(t))
			return -EINTR;
		if (left < 0)
			left = 0;
		ts = (struct timespec){ left / 1000, (left % 1000) * 1000000 };
		r = ppoll(&pfd, 1, &ts, t->waitmask);
		if (r > 0)
			return pfd.revents;
		if (!r)
			return 0;
		if (errno != EINTR)
			return -errno;
	}
}

static int wait_sock(struct ip_proc *p, short events, int64_t deadline)
{
	return inproc_wait_fd(p->tree, p->sock, events, deadline);
}

/* One message if there is one now: its length, 0 at EOF, -EAGAIN, -errno. */
static int recv_now(struct ip_proc *p, char *buf, size_t len)
{
	ssize_t n;

	do
		n = recv(p->sock, buf, len - 1, MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return (int)n;
}

static int inq_push(struct ip_proc *p, const char *msg)
{
	struct inq *q = &p->inq;
	char *copy;

	if (q->n - q->head >= INQ_MAX)
		return -EPROTO;		/* an agent that only talks */
	if (q->n == q->cap) {
		unsigned cap = q->cap ? 2 * q->cap : 64;
		char **v = realloc(q->msg, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		q->msg = v;
		q->cap = cap;
	}
	copy = strdup(msg);
	if (!copy)
		return -ENOMEM;
	q->msg[q->n++] = copy;
	return 0;
}

static bool inq_pop(struct ip_proc *p, char *buf, size_t len)
{
	struct inq *q = &p->inq;

	if (q->head == q->n)
		return false;
	snprintf(buf, len, "%s", q->msg[q->head]);
	free(q->msg[q->head++]);
	if (q->head == q->n)
		q->head = q->n = 0;
	return true;
}

void chan_free(struct ip_proc *p)
{
	while (p->inq.head < p->inq.n)
		free(p->inq.msg[p->inq.head++]);
	free(p->inq.msg);
	p->inq = (struct inq){ 0 };
	if (p->sock >= 0)
		close(p->sock);
	p->sock = -1;
}

/* The socket has a message while dprobe wants to send: keep it. */
static int queue_incoming(struct ip_proc *p)
{
	char buf[DP_AGENT_MSG_MAX];
	int n = recv_now(p, buf, sizeof(buf));

	if (n == -EAGAIN)
		return 0;
	if (n <= 0)
		return n ? n : -EPIPE;
	return inq_push(p, buf);
}

static int send_bounded(struct ip_proc *p, struct msghdr *mh, size_t len)
{
	int64_t deadline = inproc_now_ms() + INPROC_REPLY_TIMEOUT_MS;

	for (;;) {
		ssize_t n = sendmsg(p->sock, mh, MSG_NOSIGNAL | MSG_DONTWAIT);
		int ev;

		if (n == (ssize_t)len)
			return 0;
		if (n >= 0 || (errno != EAGAIN && errno != EINTR))
			return -EPIPE;
		ev = wait_sock(p, POLLOUT | POLLIN, deadline);
		if (ev <= 0)
			return ev ? ev : -ETIMEDOUT;
		if ((ev & POLLIN) && !(ev & POLLOUT)) {
			int ret = queue_incoming(p);

			if (ret)
				return ret;
		} else if (!(ev & POLLOUT)) {
			return -EPIPE;		/* hung up */
		}
	}
}

int chan_send(struct ip_proc *p, int fd, const char *fmt, ...)
{
	char buf[DP_AGENT_MSG_MAX], cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { buf, 0 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	va_list ap;
	int n;

	if (p->sock < 0)
		return -EPIPE;
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || n >= (int)sizeof(buf))
		return -EMSGSIZE;
	iov.iov_len = (size_t)n;
	if (fd >= 0) {
		struct cmsghdr *c;

		memset(cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	return send_bounded(p, &mh, (size_t)n);
}

int chan_recv(struct ip_proc *p, char *buf, size_t len, int timeout_ms)
{
	int64_t deadline = inproc_now_ms() + timeout_ms;

	if (inq_pop(p, buf, len))
		return (int)strlen(buf);
	if (p->sock < 0)
		return 0;
	for (;;) {
		int n = recv_now(p, buf, len), ev;

		if (n != -EAGAIN)
			return n;
		ev = wait_sock(p, POLLIN, deadline);
		if (ev <= 0)
			return ev ? ev : -ETIMEDOUT;
	}
}

int chan_recv_fd(struct ip_proc *p, char *buf, size_t len, int *fd,
		 int timeout_ms)
{
	int64_t deadline = inproc_now_ms() + timeout_ms;
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { buf, len - 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	ssize_t n;

	*fd = -1;
	if (p->inq.head < p->inq.n)
		return -EPROTO;		/* its descriptor was not kept */
	if (p->sock < 0)
		return 0;
	for (;;) {
		int ev;

		n = recvmsg(p->sock, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (n >= 0 || (errno != EAGAIN && errno != EINTR))
			break;
		ev = wait_sock(p, POLLIN, deadline);
		if (ev <= 0)
			return ev ? ev : -ETIMEDOUT;
	}
	if (n < 0)
		return -errno;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
		    c->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(fd, CMSG_DATA(c), sizeof(int));
	buf[n] = '\0';
	return (int)n;
}

/* ---- miss counts ----------------------------------------------------------- */

/* "STAT <slot> <missed> ...": the slots that missed hits, and how many. */
static void stat_pairs(struct ip_proc *p, const char *s)
{
	unsigned long long missed;
	unsigned slot;
	int n;

	while (sscanf(s, " %u %llu%n", &slot, &missed, &n) == 2) {
		if (slot < p->nslots)
			p->slots[slot].missed_new = missed;
		s += n;
	}
}

/* END: the counts read since the last END replace this image's ones. */
static void stat_end(struct ip_proc *p)
{
	for (unsigned i = 0; i < p->nslots; i++) {
		struct slot *s = &p->slots[i];

		s->missed = s->missed_new;
		s->missed_new = 0;
	}
	tree_sum_missed(p->tree);
}

int chan_note(struct ip_proc *p, const char *msg)
{
	if (!strncmp(msg, "STAT ", 5)) {
		stat_pairs(p, msg + 5);
		return 1;
	}
	if (!strcmp(msg, "END")) {
		stat_end(p);
		return 2;
	}
	if (!strcmp(msg, "MAPS")) {
		p->maps_req = true;	/* done by the loop, between reads */
		return 1;
	}
	if (!strncmp(msg, "UNTRACED ", 9)) {
		p->tree->untraced++;	/* a fork child, not followed */
		return 1;
	}
	if (!strncmp(msg, "EXEC ", 5)) {
		handoff_exec(p, msg + 5);	/* it waits for the answer */
		return 1;
	}
	if (!strcmp(msg, "RINGSTAKEN")) {
		inproc_log(p->tree, "dprobe: process %d unmapped the agent's "
			   "rings: its events from then on are not recorded\n",
			   (int)p->pid);
		return 1;
	}
	if (!strncmp(msg, "EXECLATE ", 9)) {
		handoff_exec_late(p, msg + 9);
		return 1;
	}
	if (!strncmp(msg, "EXECFAIL ", 9)) {
		handoff_exec_failed(p, msg + 9);
		return 1;
	}
	return 0;
}

int chan_answer(struct ip_proc *p, const char *word, char *buf, size_t len)
{
	char msg[DP_AGENT_MSG_MAX];
	int n;

	while ((n = chan_recv(p, msg, sizeof(msg), INPROC_REPLY_TIMEOUT_MS)) > 0) {
		bool err = !strncmp(msg, "ERR ", 4);

		if (err || !strncmp(msg, word, strlen(word))) {
			if (buf)
				snprintf(buf, len, "%s", msg);
			return err;
		}
		chan_note(p, msg);
	}
	return n ? n : -EPIPE;
}

void chan_read_stats(struct ip_proc *p, int timeout_ms)
{
	char buf[DP_AGENT_MSG_MAX];

	while (chan_recv(p, buf, sizeof(buf), timeout_ms) > 0 &&
	       chan_note(p, buf) != 2)
		;
}

void inproc_update_missed(struct ip_proc *p)
{
	if (p->sock >= 0 && !chan_send(p, -1, "STATS"))
		chan_read_stats(p, INPROC_REPLY_TIMEOUT_MS);
}

/*
 * While tracing, once a poll said the channel has something: read what
 * came (the miss counts the agent sends at exit, untraced fork children).
 * False when the agent is gone: the channel hung up or was closed.
 */
bool chan_serve(struct ip_proc *p)
{
	char buf[DP_AGENT_MSG_MAX];

	if (p->sock < 0)
		return false;
	for (int i = 0; i < SERVE_BATCH; i++) {
		int n = recv_now(p, buf, sizeof(buf));

		if (n == -EAGAIN)
			return true;
		if (n <= 0)
			return false;
		chan_note(p, buf);
	}
	return true;
}
