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

static int64_t now_ms(void)
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
 * Wait for @events on the socket until @deadline (now_ms()): the revents,
 * 0 at the deadline, or -EINTR when dprobe must quit.  The stop signals
 * are taken meanwhile once tracing runs (t->waitmask).
 */
static int wait_sock(struct dp_inproc *t, short events, int64_t deadline)
{
	struct pollfd pfd = { .fd = t->sock, .events = events };

	for (;;) {
		int64_t left = deadline - now_ms();
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

/* One message if there is one now: its length, 0 at EOF, -EAGAIN, -errno. */
static int recv_now(struct dp_inproc *t, char *buf, size_t len)
{
	ssize_t n;

	do
		n = recv(t->sock, buf, len - 1, MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return (int)n;
}

static int inq_push(struct dp_inproc *t, const char *msg)
{
	struct inq *q = &t->inq;
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

static bool inq_pop(struct dp_inproc *t, char *buf, size_t len)
{
	struct inq *q = &t->inq;

	if (q->head == q->n)
		return false;
	snprintf(buf, len, "%s", q->msg[q->head]);
	free(q->msg[q->head++]);
	if (q->head == q->n)
		q->head = q->n = 0;
	return true;
}

void chan_free(struct dp_inproc *t)
{
	while (t->inq.head < t->inq.n)
		free(t->inq.msg[t->inq.head++]);
	free(t->inq.msg);
	t->inq = (struct inq){ 0 };
	if (t->sock >= 0)
		close(t->sock);
	t->sock = -1;
}

/* The socket has a message while dprobe wants to send: keep it. */
static int queue_incoming(struct dp_inproc *t)
{
	char buf[DP_AGENT_MSG_MAX];
	int n = recv_now(t, buf, sizeof(buf));

	if (n == -EAGAIN)
		return 0;
	if (n <= 0)
		return n ? n : -EPIPE;
	return inq_push(t, buf);
}

static int send_bounded(struct dp_inproc *t, struct msghdr *mh, size_t len)
{
	int64_t deadline = now_ms() + INPROC_REPLY_TIMEOUT_MS;

	for (;;) {
		ssize_t n = sendmsg(t->sock, mh, MSG_NOSIGNAL | MSG_DONTWAIT);
		int ev;

		if (n == (ssize_t)len)
			return 0;
		if (n >= 0 || (errno != EAGAIN && errno != EINTR))
			return -EPIPE;
		ev = wait_sock(t, POLLOUT | POLLIN, deadline);
		if (ev <= 0)
			return ev ? ev : -ETIMEDOUT;
		if ((ev & POLLIN) && !(ev & POLLOUT)) {
			int ret = queue_incoming(t);

			if (ret)
				return ret;
		} else if (!(ev & POLLOUT)) {
			return -EPIPE;		/* hung up */
		}
	}
}

int chan_send(struct dp_inproc *t, int fd, const char *fmt, ...)
{
	char buf[DP_AGENT_MSG_MAX], cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { buf, 0 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	va_list ap;
	int n;

	if (t->sock < 0)
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
	return send_bounded(t, &mh, (size_t)n);
}

int chan_recv(struct dp_inproc *t, char *buf, size_t len, int timeout_ms)
{
	int64_t deadline = now_ms() + timeout_ms;

	if (inq_pop(t, buf, len))
		return (int)strlen(buf);
	if (t->sock < 0)
		return 0;
	for (;;) {
		int n = recv_now(t, buf, len), ev;

		if (n != -EAGAIN)
			return n;
		ev = wait_sock(t, POLLIN, deadline);
		if (ev <= 0)
			return ev ? ev : -ETIMEDOUT;
	}
}

/* ---- miss counts ----------------------------------------------------------- */

/* "STAT <slot> <missed> ...": the slots that missed hits, and how many. */
static void stat_pairs(struct dp_inproc *t, const char *p)
{
	unsigned long long missed;
	unsigned slot;
	int n;

	while (sscanf(p, " %u %llu%n", &slot, &missed, &n) == 2) {
		if (slot < t->nslots)
			t->slots[slot].missed_new = missed;
		p += n;
	}
}

/* END: the counts read since the last END replace the probes' ones. */
static void stat_end(struct dp_inproc *t)
{
	t->stats.missed = 0;
	for (unsigned i = 0; i < t->nslots; i++)
		t->slots[i].pr->nmiss = 0;
	for (unsigned i = 0; i < t->nslots; i++) {
		struct slot *s = &t->slots[i];

		s->pr->nmiss += s->missed_new;
		t->stats.missed += s->missed_new;
		s->missed_new = 0;
	}
}

/* A STAT or END message: taken, and 1 for END; else 0 (not one). */
static int chan_note(struct dp_inproc *t, const char *msg)
{
	if (!strncmp(msg, "STAT ", 5)) {
		stat_pairs(t, msg + 5);
		return 0;
	}
	if (!strcmp(msg, "END")) {
		stat_end(t);
		return 1;
	}
	return 0;
}

void chan_read_stats(struct dp_inproc *t, int timeout_ms)
{
	char buf[DP_AGENT_MSG_MAX];

	while (chan_recv(t, buf, sizeof(buf), timeout_ms) > 0 &&
	       !chan_note(t, buf))
		;
}

void inproc_update_missed(struct dp_inproc *t)
{
	if (t->sock >= 0 && !chan_send(t, -1, "STATS"))
		chan_read_stats(t, INPROC_REPLY_TIMEOUT_MS);
}

/*
 * While tracing: wait about a millisecond for the channel and read what
 * came (the miss counts the agent sends at exit).  False when the agent
 * is gone: the channel hung up or was closed.
 */
bool chan_serve(struct dp_inproc *t)
{
	char buf[DP_AGENT_MSG_MAX];
	int ev = wait_sock(t, POLLIN, now_ms() + 1);

	if (ev <= 0)
		return ev == 0 || ev == -EINTR;	/* the caller sees a stop */
	for (int i = 0; i < SERVE_BATCH; i++) {
		int n = recv_now(t, buf, sizeof(buf));

		if (n == -EAGAIN)
			return true;
		if (n <= 0)
			return false;
		chan_note(t, buf);
	}
	return true;
}
