// SPDX-License-Identifier: GPL-2.0
/*
 * The agent's end of the control channel (protocol.h).
 *
 * Launched under dprobe, the library finds the socket's address in its
 * environment and runs the handshake in its constructor, before the
 * program's main(): dprobe sends the rings and the probes, the agent
 * registers them and answers, and only then does the program go on, so
 * no hit is missed.  Injected into a running process, dprobe calls
 * dprobe_agent_attach(), which connects and leaves the handshake to the
 * control thread.  Either way the control thread then serves dprobe until
 * it says DETACH or goes away; in both cases every probe is removed and
 * every byte put back.  The control thread blocks the program's signals
 * (they are for the program's threads), not the ones libdprobe owns.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "engine/agent/agent.h"
#include "engine/agent/events.h"
#include "engine/agent/protocol.h"
#include "event/agg.h"

/* How long the exit waits for dprobe to take the miss counts. */
#define EXIT_SEND_TIMEOUT_S	2

/* How long an injected agent waits for dprobe to take its channel end. */
#define ATTACH_WAIT_MS		10000

static int ctl_fd = -1;
static int peer_fd = -1;	/* dprobe's end, until dprobe has it */
static pthread_mutex_t ctl_mutex = PTHREAD_MUTEX_INITIALIZER;
/* -f: where fork children (and exec'd images) join dprobe's session */
static int hub_fd = -1;

/*
 * Our descriptors by identity: a program that closes every descriptor
 * (a daemon does) and opens files or sockets again may get our numbers
 * back.  Nothing is sent on, read from or closed through a number that
 * no longer names the file we made.
 */
struct fd_id {
	dev_t dev;
	ino_t ino;
};
static struct fd_id ctl_id, hub_id, watch_id;

static struct fd_id fd_id(int fd)
{
	struct stat st;

	if (fd < 0 || fstat(fd, &st))
		return (struct fd_id){ 0, 0 };
	return (struct fd_id){ st.st_dev, st.st_ino };
}

static bool still_ours(int fd, struct fd_id id)
{
	struct fd_id now = fd_id(fd);

	return fd >= 0 && id.ino && now.dev == id.dev && now.ino == id.ino;
}

static void close_ours(int *fd, struct fd_id *id)
{
	if (still_ours(*fd, *id))
		close(*fd);
	*fd = -1;
	*id = (struct fd_id){ 0, 0 };
}

static void ctl_send(const char *fmt, ...)
{
	char buf[DP_AGENT_MSG_MAX];
	va_list ap;
	int n;

	if (!still_ours(ctl_fd, ctl_id))
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(buf))
		n = sizeof(buf) - 1;
	send(ctl_fd, buf, (size_t)n, MSG_NOSIGNAL);
}

/* One message, NUL-terminated, and the descriptor it carried (or -1). */
static ssize_t ctl_recv(char *buf, size_t len, int *fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { buf, len - 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	ssize_t n;

	*fd = -1;
	do
		n = recvmsg(ctl_fd, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return n;
	buf[n] = '\0';
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
			memcpy(fd, CMSG_DATA(c), sizeof(int));
	return n;
}

static void report(void *priv, unsigned slot, int err, const char *text)
{
	(void)priv;
	if (err)
		ctl_send("ERR %u %d %s", slot, -err, text);
	else
		ctl_send("OK %u %s", slot, text);
}

/* A STAT message being filled: "STAT" and (slot, missed) pairs. */
struct stat_msg {
	char text[DP_AGENT_MSG_MAX];
	size_t len;
};

static void stat_flush(struct stat_msg *m)
{
	if (m->len > 4)
		ctl_send("%s", m->text);
	m->len = (size_t)sprintf(m->text, "STAT");
}

/* Only the slots that missed hits: a few messages for any number. */
static void stat_add(void *priv, unsigned slot, unsigned long missed)
{
	struct stat_msg *m = priv;

	if (!missed)
		return;
	if (m->len + 2 * 24 >= sizeof(m->text))
		stat_flush(m);
	m->len += (size_t)sprintf(m->text + m->len, " %u %lu", slot, missed);
}

static void send_stats(void)
{
	struct stat_msg m;

	m.len = (size_t)sprintf(m.text, "STAT");
	dp_ev_for_each_missed(stat_add, &m);
	stat_flush(&m);
	ctl_send("END");
}

static void on_probe(const char *args)
{
	unsigned slot, id, flags;
	unsigned long long addr, foffs;
	char why[256] = "";
	int pos = 0, ret;

	if (sscanf(args, "%u %u %llx %llx %x %n", &slot, &id, &addr, &foffs,
		   &flags, &pos) != 5 || !pos) {
		ctl_send("ERR 0 %d bad PROBE message", EINVAL);
		return;
	}
	ret = dp_ev_add(slot, id, addr, foffs, flags, args + pos, why,
			sizeof(why));
	if (ret)
		ctl_send("ERR %u %d %s", slot, -ret, why);
}

static void on_show(const char *args)
{
	char buf[DP_AGENT_MSG_MAX - 32];
	unsigned slot;
	int ret = sscanf(args, "%u", &slot) == 1 ? 0 : -EINVAL;

	if (!ret)
		ret = dp_ev_show(slot, buf, sizeof(buf));
	if (ret)
		ctl_send("ERR %u %d not armed", ret == -EINVAL ? 0 : slot, -ret);
	else
		ctl_send("SHOWN %u %s", slot, buf);
}

static void on_sym(const char *args)
{
	unsigned slot, arg;
	unsigned long long addr;

	if (sscanf(args, "%u %u %llx", &slot, &arg, &addr) != 3 ||
	    dp_ev_sym(slot, arg, addr))
		ctl_send("ERR 0 %d bad SYM message", EINVAL);
}

/* One field of an AGG message, "OFF:SIZE:SIGNED:MODE:ARG": 0 or -1. */
static int agg_field(const char **s, struct dp_agg_field *f)
{
	unsigned off, size, sign, mode;
	unsigned long long arg;
	int n = 0;

	if (sscanf(*s, " %u:%u:%u:%u:%llu%n", &off, &size, &sign, &mode, &arg,
		   &n) != 5 || off > 0xffff || size > 8 || sign > 1 || mode > 255)
		return -1;
	*f = (struct dp_agg_field){ .off = (uint16_t)off, .size = (uint8_t)size,
				    .is_signed = (uint8_t)sign,
				    .mode = (uint8_t)mode, .arg = arg };
	*s += n;
	return 0;
}

/* "AGG <slot> <off> <bits> <recsize> <nkeys> <nvals> <field>..." */
static void on_agg(const char *args)
{
	struct dp_agg_spec spec = { 0 };
	unsigned slot;
	unsigned long long off;
	char why[128] = "bad AGG message";
	int n = 0, ret = -EINVAL;

	if (sscanf(args, "%u %llu %u %u %u %u%n", &slot, &off, &spec.bits,
		   &spec.rec_size, &spec.nkeys, &spec.nvals, &n) != 6) {
		ctl_send("ERR 0 %d bad AGG message", EINVAL);
		return;
	}
	spec.off = off;
	args += n;
	if (spec.nkeys <= DP_AGG_MAX_KEYS && spec.nvals <= DP_AGG_NVALS) {
		unsigned i;

		for (i = 0; i < spec.nkeys && !agg_field(&args, &spec.key[i]); i++)
			;
		if (i == spec.nkeys) {
			for (i = 0; i < spec.nvals &&
			     !agg_field(&args, &spec.val[i]); i++)
				;
			if (i == spec.nvals)
				ret = dp_ev_agg(slot, &spec, why, sizeof(why));
		}
	}
	if (ret)
		ctl_send("ERR %u %d hist table: %s", slot, -ret, why);
}

static void on_ref(const char *args)
{
	unsigned slot;
	unsigned long long addr;

	if (sscanf(args, "%u %llx", &slot, &addr) != 2 ||
	    dp_ev_ref_ctr(slot, addr))
		ctl_send("ERR 0 %d bad REF message", EINVAL);
}

/*
 * Register what came, and from the first ARM on watch the loader: probes
 * on objects loaded later are sent when they come (dlwatch.c).
 */
static void on_arm(void)
{
	int n = dp_ev_arm(report, NULL);

	dp_dlwatch_start();
	ctl_send("ARMED %d", n);
}

/*
 * "IFUNC <symbol> <path>": the implementation the loader chose for an
 * IFUNC symbol of that object (dlsym() runs its resolver, as binding
 * does), so that a probe on strlen is on the strlen this process runs.
 */
static void on_ifunc(const char *args)
{
	char sym[256];
	int pos = 0;
	void *h, *impl = NULL;

	if (sscanf(args, "%255s %n", sym, &pos) != 1 || !pos) {
		ctl_send("ERR 0 %d bad IFUNC message", EINVAL);
		return;
	}
	h = dlopen(args + pos, RTLD_LAZY | RTLD_NOLOAD);
	if (h) {
		impl = dlsym(h, sym);
		dlclose(h);
	}
	if (impl)
		ctl_send("IFUNC %llx", (unsigned long long)(uintptr_t)impl);
	else
		ctl_send("ERR 0 %d %s: not found in %s", ENOENT, sym, args + pos);
}

static void on_slot(const char *args)
{
	unsigned slot, on;

	if (sscanf(args, "%u %u", &slot, &on) != 2)
		ctl_send("ERR 0 %d bad SLOT message", EINVAL);
	else
		ctl_send("SLOTTED %d", dp_ev_switch(slot, on));
}

static void on_drop(const char *args)
{
	unsigned long long start, end;

	if (sscanf(args, "%llx %llx", &start, &end) != 2 || start > end)
		ctl_send("ERR 0 %d bad DROP message", EINVAL);
	else
		ctl_send("DROPPED %d", dp_ev_drop(start, end));
}

/* ---- an exec dprobe hands to another engine (exec.c) ------------------------ */

/* How long an exec waits for dprobe to take the process, at most. */
#define EXEC_WAIT_MS	10000
#define EXEC_ASKS	8	/* execs waiting at once (other threads, vfork) */

/*
 * The answers, set by the control thread and polled by the thread that
 * execs: it may be a vfork child (another process on this memory), so
 * no lock or condition variable of this process is shared with it.
 */
static struct exec_ask {
	unsigned ticket;
	int answer;		/* 0: none yet, 1: taken, 2: not taken */
} exec_asks[EXEC_ASKS];
static unsigned exec_tickets;

bool dp_chan_exec_follows(void)
{
	return hub_fd >= 0 && ctl_fd >= 0;
}

unsigned dp_chan_exec_ask(int pid, const char *why, const char *path)
{
	unsigned t = __atomic_add_fetch(&exec_tickets, 1, __ATOMIC_RELAXED);
	struct exec_ask *a = &exec_asks[t % EXEC_ASKS];
	const struct timespec step = { 0, 200000 };

	if (!t || !still_ours(hub_fd, hub_id))
		return 0;
	__atomic_store_n(&a->answer, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&a->ticket, t, __ATOMIC_RELEASE);
	ctl_send("EXEC %u %d %s %s", t, pid, why, path);
	for (int i = 0; i < EXEC_WAIT_MS * 5; i++) {
		int ans = __atomic_load_n(&a->answer, __ATOMIC_ACQUIRE);

		if (__atomic_load_n(&a->ticket, __ATOMIC_RELAXED) != t)
			return 0;	/* another exec took the slot */
		if (ans)
			return ans == 1 ? t : 0;
		if (!still_ours(ctl_fd, ctl_id))
			return 0;
		nanosleep(&step, NULL);
	}
	dp_chan_exec_failed(t);	/* too late: whatever was set up goes */
	return 0;
}

void dp_chan_exec_failed(unsigned ticket)
{
	if (ticket)
		ctl_send("EXECFAIL %u", ticket);
}

void dp_chan_rings_taken(void)
{
	ctl_send("RINGSTAKEN");
}

void dp_chan_exec_late(int pid, const char *why, const char *path)
{
	if (still_ours(hub_fd, hub_id))
		ctl_send("EXECLATE %d %s %s", pid, why, path);
}

static void on_execgo(const char *args)
{
	unsigned t;
	int taken;

	if (sscanf(args, "%u %d", &t, &taken) != 2)
		return;
	struct exec_ask *a = &exec_asks[t % EXEC_ASKS];

	if (__atomic_load_n(&a->ticket, __ATOMIC_ACQUIRE) == t)
		__atomic_store_n(&a->answer, taken ? 1 : 2, __ATOMIC_RELEASE);
}

/* ---- -f in a process we were injected into ---------------------------------- */

/*
 * A process dprobe attached to with -f: the programs it execs join too,
 * as a launched command's do, through what its environment then holds.
 * The environment is replaced by a copy with LD_PRELOAD (this library
 * first) and DP_AGENT_ENV_SOCK (the hub, inherited: no close-on-exec)
 * set, swapped in with one store; the old array is never freed (another
 * thread may be reading it) and goes back at the detach if the program
 * has not replaced it meanwhile.
 */
static char **saved_environ, **our_environ;

static bool env_is(const char *entry, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(entry, name, n) && entry[n] == '=';
}

static void publish_env(void)
{
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	const char *pre = NULL;
	char *ld = NULL, *sock = NULL, **v;
	size_t n = 0, k = 0;
	Dl_info di;

	if (!dladdr((void *)publish_env, &di) || !di.dli_fname ||
	    getsockopt(hub_fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl))
		return;
	for (char **e = environ; e && *e; e++, n++)
		if (env_is(*e, "LD_PRELOAD"))
			pre = *e + sizeof("LD_PRELOAD");
	v = malloc((n + 3) * sizeof(*v));
	if (!v || asprintf(&sock, DP_AGENT_ENV_SOCK "=%d:%d:f", hub_fd,
			   (int)cred.pid) < 0 ||
	    asprintf(&ld, "LD_PRELOAD=%s%s%s", di.dli_fname,
		     pre && *pre ? ":" : "", pre ? pre : "") < 0) {
		free(v);
		return;		/* (an asprintf that failed left NULL) */
	}
	for (char **e = environ; e && *e; e++)
		if (!env_is(*e, "LD_PRELOAD") && !env_is(*e, DP_AGENT_ENV_SOCK))
			v[k++] = *e;
	v[k++] = ld;
	v[k++] = sock;
	v[k] = NULL;
	fcntl(hub_fd, F_SETFD, 0);	/* the programs it runs inherit it */
	saved_environ = environ;
	our_environ = v;
	__atomic_store_n(&environ, v, __ATOMIC_RELEASE);
}

/* At the detach: the environment as it was (the hub is closed after). */
static void unpublish_env(void)
{
	if (our_environ && environ == our_environ)
		__atomic_store_n(&environ, saved_environ, __ATOMIC_RELEASE);
	our_environ = saved_environ = NULL;
	dp_ev_set_follow(false);
}

/* HOLD: the handshake in the constructor goes on after ARM, until GO
 * (dprobe show looks at the armed code before main() runs). */
static bool held;

/* One message: 1 when the channel is done (DETACH), else 0. */
static int handle(char *msg, int fd)
{
	int ret;

	/* mapped or refused: no descriptor dprobe sends is kept */
	if (!strcmp(msg, "RINGS")) {
		ret = fd < 0 ? -EBADF : dp_ev_rings(fd);
		if (fd >= 0)
			close(fd);
		if (ret)
			ctl_send("ERR 0 %d rings: %s", -ret, strerror(-ret));
		return 0;
	}
	if (!strcmp(msg, "AGGMEM")) {
		ret = fd < 0 ? -EBADF : dp_ev_agg_mem(fd);
		if (fd >= 0)
			close(fd);
		if (ret)
			ctl_send("ERR 0 %d hist tables: %s", -ret, strerror(-ret));
		return 0;
	}
	if (fd >= 0)
		close(fd);
	if (!strncmp(msg, "PROBE ", 6))
		on_probe(msg + 6);
	else if (!strncmp(msg, "SYM ", 4))
		on_sym(msg + 4);
	else if (!strncmp(msg, "AGG ", 4))
		on_agg(msg + 4);
	else if (!strncmp(msg, "REF ", 4))
		on_ref(msg + 4);
	else if (!strcmp(msg, "ARM"))
		on_arm();
	else if (!strncmp(msg, "SHOW ", 5))
		on_show(msg + 5);
	else if (!strcmp(msg, "HOLD") || !strcmp(msg, "GO"))
		held = msg[0] == 'H';
	else if (!strncmp(msg, "DROP ", 5))
		on_drop(msg + 5);
	else if (!strncmp(msg, "IFUNC ", 6))
		on_ifunc(msg + 6);
	else if (!strncmp(msg, "SLOT ", 5))
		on_slot(msg + 5);
	else if (!strncmp(msg, "EXECGO ", 7))
		on_execgo(msg + 7);
	else if (!strcmp(msg, "SYNCED")) {
		if (dp_dlwatch_synced())
			ctl_send("MAPS");
	}
	else if (!strcmp(msg, "DISARM"))
		dp_ev_enable(false), ctl_send("DISARMED");
	else if (!strcmp(msg, "ENABLE"))
		dp_ev_enable(true), ctl_send("ENABLED");
	else if (!strcmp(msg, "STATS"))
		send_stats();
	else if (!strcmp(msg, "DETACH"))
		return 1;
	else
		ctl_send("ERR 0 %d unknown message", EINVAL);
	return 0;
}

/* ---- files read for a thread of the program (exec.c) ------------------------ */

/*
 * With -f, exec.c reads the file a thread of the program is about to
 * exec (or has just posix_spawn()ed): static, set-ID, a script?  Opened
 * on that thread, it would take the lowest free number of the program's
 * table for a moment, and another thread's open() the next one.  So the
 * worker reads it, in its own table: the thread puts the path in a slot,
 * pokes the eventfd the worker polls and waits for the answer.  A vfork
 * child (another process: its table is its own copy already, and its
 * working directory may not be ours), a process without a worker, or a
 * worker that does not answer in time: the caller reads it itself.
 */
#define LOOK_SLOTS	4
#define LOOK_WAIT_MS	2000

enum { LOOK_FREE, LOOK_FILLING, LOOK_ASKED, LOOK_BUSY, LOOK_DONE };

static struct look {
	unsigned state;
	const char *(*fn)(const char *);
	const char *answer;
	char path[PATH_MAX];
} looks[LOOK_SLOTS];
static pid_t look_pid;		/* whose worker reads them (0: none) */

const char *dp_chan_look(const char *path, const char *(*fn)(const char *))
{
	const struct timespec step = { 0, 100000 };
	pid_t pid = (pid_t)dp_raw_syscall(SYS_getpid, 0, 0, 0);
	struct look *l = NULL;
	const char *ans;
	unsigned st;

	if (__atomic_load_n(&look_pid, __ATOMIC_ACQUIRE) != pid ||
	    strlen(path) >= PATH_MAX)
		return fn(path);
	for (int i = 0; i < LOOK_SLOTS && !l; i++) {
		st = LOOK_FREE;
		if (__atomic_compare_exchange_n(&looks[i].state, &st,
						LOOK_FILLING, false,
						__ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			l = &looks[i];
	}
	if (!l)
		return fn(path);
	strcpy(l->path, path);
	l->fn = fn;
	__atomic_store_n(&l->state, LOOK_ASKED, __ATOMIC_RELEASE);
	dp_dlwatch_wake();
	for (int i = 0;
	     __atomic_load_n(&l->state, __ATOMIC_ACQUIRE) != LOOK_DONE; i++) {
		st = LOOK_ASKED;	/* no answer in time: taken back */
		if (i >= LOOK_WAIT_MS * 10 &&
		    __atomic_compare_exchange_n(&l->state, &st, LOOK_FREE,
						false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return fn(path);
		nanosleep(&step, NULL);
	}
	ans = l->answer;
	__atomic_store_n(&l->state, LOOK_FREE, __ATOMIC_RELEASE);
	return ans;
}

/* The worker, poked: every slot asked for. */
static void serve_looks(void)
{
	for (int i = 0; i < LOOK_SLOTS; i++) {
		struct look *l = &looks[i];
		unsigned st = LOOK_ASKED;

		if (!__atomic_compare_exchange_n(&l->state, &st, LOOK_BUSY,
						 false, __ATOMIC_ACQUIRE,
						 __ATOMIC_RELAXED))
			continue;
		l->answer = l->fn(l->path);
		__atomic_store_n(&l->state, LOOK_DONE, __ATOMIC_RELEASE);
	}
}

/*
 * Wait for a message, telling dprobe meanwhile when the loader's objects
 * change (dlwatch.c).  False if the wait failed (the channel is gone).
 */
static bool wait_message(void)
{
	for (;;) {
		if (!still_ours(ctl_fd, ctl_id))
			return false;	/* the program closed it (its table) */
		struct pollfd pfd[2] = {
			{ .fd = ctl_fd, .events = POLLIN },
			{ .fd = dp_dlwatch_fd(), .events = POLLIN },
		};
		int r = poll(pfd, pfd[1].fd >= 0 ? 2 : 1, -1);

		if (r < 0 && errno != EINTR)
			return false;
		if (r > 0 && pfd[1].revents) {
			if (dp_dlwatch_changed())
				ctl_send("MAPS");
			serve_looks();
		}
		if (r > 0 && pfd[0].revents)
			return true;
	}
}

/* ---- the control thread's descriptors ---------------------------------------- */

/*
 * The control thread (the worker below) runs in a descriptor table of
 * its own (dp_own_files(), core.c): a descriptor the kernel hands it (a
 * message's, a file it opens) never takes a number in the program's
 * table, not even for the moment before dp_fd_high() could move it.
 * What a thread of the program or a hit uses (the channel, for EXEC,
 * RINGSTAKEN and the exit's counts; the hub; the loader watch's eventfd;
 * /proc/self/mem) is in the program's table, made before the worker
 * starts where no thread of the program opens anything meanwhile, and
 * the worker keeps copies of the channel and the eventfd.
 *
 * A thread cannot close a descriptor of another table, so a second
 * thread stays in the program's table as the worker's keeper: at the
 * worker's request it closes dprobe's end of an injected pair once
 * dprobe took it and, at the end of the session, the program's copies
 * of the channel, the hub, the eventfd and /proc/self/mem (by identity:
 * the program may have closed them and opened others); the worker then
 * says BYE on its own copy.  The keeper ends there, the worker after (its
 * table goes with it).  Both are made by start_thread(), not one by the
 * other: a thread that makes a thread takes the loader's TLS lock, which
 * a thread of the program waiting in dp_dlwatch_stub() holds.
 */
#define KEEPER_FDS 4	/* the channel, the hub, the eventfd, /proc/self/mem */

static struct {
	sem_t req, done;
	int n;
	int fd[KEEPER_FDS];
	struct fd_id id[KEEPER_FDS];
	bool last;		/* the keeper ends after this request */
} keeper;

static __thread bool is_worker;
static struct fd_id peer_id;

static void keeper_add(int fd, struct fd_id id)
{
	if (fd >= 0 && keeper.n < KEEPER_FDS) {
		keeper.fd[keeper.n] = fd;
		keeper.id[keeper.n++] = id;
	}
}

/* The worker: the keeper closes what was added; its last request ends it. */
static void keeper_call(bool last)
{
	keeper.last = last;
	sem_post(&keeper.req);
	while (sem_wait(&keeper.done) && errno == EINTR)
		;
	keeper.n = 0;
}

static void *keeper_thread(void *arg)
{
	bool last;

	(void)arg;
	do {
		while (sem_wait(&keeper.req) && errno == EINTR)
			;
		for (int i = 0; i < keeper.n; i++)
			close_ours(&keeper.fd[i], &keeper.id[i]);
		last = keeper.last;
		sem_post(&keeper.done);		/* the worker goes on */
	} while (!last);
	return NULL;
}

/*
 * The session is over: every probe out, the environment back, our
 * descriptors closed, in every table they are in.  @bye: dprobe asked
 * (DETACH), it is told when all is done.  Under ctl_mutex.
 *
 * /proc/self/mem goes too: after dp_ev_clear() nothing of ours is left
 * in the code, and a process dprobe detached from keeps no descriptor of
 * ours (the next attach opens it again while the program's threads are
 * stopped; a write before that opens it when it is needed).
 */
static void end_session(bool bye)
{
	int watch = dp_dlwatch_stop(), mem;
	struct fd_id wid = watch_id, mid;

	dp_ev_clear();
	dp_signals_guard_session(false);
	mem = dp_text_take_fd(&mid.dev, &mid.ino);
	unpublish_env();
	if (is_worker) {
		__atomic_store_n(&look_pid, 0, __ATOMIC_RELEASE);
		serve_looks();		/* what came meanwhile */
		keeper.n = 0;
		if (dp_own_files_now()) {
			keeper_add(ctl_fd, ctl_id);
			keeper_add(hub_fd, hub_id);
			keeper_add(watch, wid);
			/* in the program's table only */
			keeper_add(mem, mid);
			mem = -1;
		}
		keeper_call(true);
		is_worker = false;
	}
	if (bye)
		ctl_send("BYE");
	close_ours(&mem, &mid);
	close_ours(&watch, &wid);
	close_ours(&hub_fd, &hub_id);
	close_ours(&ctl_fd, &ctl_id);
	watch_id = (struct fd_id){ 0, 0 };
}

/*
 * Serve messages until @until_armed is met (the handshake) or the
 * channel ends: 1 while it goes on, 0 when it is over (everything
 * removed, the descriptors closed).
 */
static int serve(bool until_armed)
{
	char buf[DP_AGENT_MSG_MAX];
	int fd, done = 0;
	ssize_t n;

	for (;;) {
		n = wait_message() ? ctl_recv(buf, sizeof(buf), &fd) : -1;
		if (n <= 0)
			break;		/* dprobe went away: EOF or error */
		done = handle(buf, fd);
		if (done || (until_armed && !held && (!strcmp(buf, "ARM") ||
						      !strcmp(buf, "GO"))))
			break;
	}
	if (n > 0 && !done)
		return 1;
	pthread_mutex_lock(&ctl_mutex);
	end_session(done);
	pthread_mutex_unlock(&ctl_mutex);
	return 0;
}

/*
 * Injected: dprobe takes its end of our pair out of the process
 * (pidfd_getfd) after dprobe_agent_attach() returned, so the end stays
 * open here until dprobe's first message shows it has it.  A dprobe that
 * never comes (it died) leaves nothing behind after ATTACH_WAIT_MS.
 */
static bool wait_for_dprobe(void)
{
	struct pollfd pfd = { .fd = ctl_fd, .events = POLLIN };
	int r;

	if (peer_fd < 0)
		return true;
	do
		r = poll(&pfd, 1, ATTACH_WAIT_MS);
	while (r < 0 && errno == EINTR);
	if (is_worker && dp_own_files_now()) {
		keeper_add(peer_fd, peer_id);	/* in the program's table */
		keeper_call(false);
	} else {
		close(peer_fd);
	}
	peer_fd = -1;
	return r > 0;
}

/* The control thread: the session, until DETACH or dprobe's end. */
static void control(void)
{
	dp_ev_quiet(true);
	dp_dlwatch_never_wait();
	if (wait_for_dprobe()) {
		serve(false);
		return;
	}
	pthread_mutex_lock(&ctl_mutex);
	end_session(false);
	pthread_mutex_unlock(&ctl_mutex);
}

static void *worker_thread(void *arg)
{
	int keep[2] = { ctl_fd, dp_dlwatch_fd() };

	(void)arg;
	is_worker = true;
	/* failing that (a seccomp filter), it works in the program's table */
	if (!dp_own_files(keep, 2) && keep[1] >= 0)
		__atomic_store_n(&look_pid, getpid(), __ATOMIC_RELEASE);
	control();
	return NULL;
}

/* Without a keeper: the control thread in the program's table. */
static void *ctl_thread(void *arg)
{
	(void)arg;
	control();
	return NULL;
}

/*
 * The control thread, with the program's signals blocked.  Not ours:
 * SIGTRAP (probes it hits, and the int3 guards on libc's signal
 * functions when we were dlopen()ed, which pthread_sigmask() itself
 * meets), the faults dp_probe_read() recovers from, and the signal that
 * asks every thread where it is before a jump is patched.  Its keeper
 * first (a small stack: it only closes), then the worker; failing
 * either, one thread that stays in the program's table.
 */
static int start_thread(void)
{
	static const int ours[] = { SIGTRAP, SIGSEGV, SIGBUS, SIGILL, SIGFPE };
	sigset_t all, old;
	pthread_attr_t attr, small;
	pthread_t tid;
	int ret;

	sigfillset(&all);
	for (size_t i = 0; i < sizeof(ours) / sizeof(ours[0]); i++)
		sigdelset(&all, ours[i]);
	sigdelset(&all, DP_SIG_WHERE);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	peer_id = fd_id(peer_fd);
	keeper.n = 0;
	sem_init(&keeper.req, 0, 0);
	sem_init(&keeper.done, 0, 0);
	pthread_attr_init(&small);
	pthread_attr_setdetachstate(&small, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&small, 256 * 1024);
	ret = pthread_create(&tid, &small, keeper_thread, NULL);
	pthread_attr_destroy(&small);
	if (!ret) {
		ret = pthread_create(&tid, &attr, worker_thread, NULL);
		if (ret) {
			keeper.last = true;	/* the keeper ends at once */
			sem_post(&keeper.req);
		}
	}
	if (ret)
		ret = pthread_create(&tid, &attr, ctl_thread, NULL);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -ret;
}

/*
 * The hub dprobe handed down: DP_AGENT_ENV_SOCK is "FD:PID[:f]", a
 * seqpacket unix socket whose pair process PID (dprobe) made (SO_PEERCRED:
 * a pair's credentials are its creator's); ":f" (-f): the programs this
 * one starts are traced too.  Anything else is left alone: it is not ours.
 */
static int inherited_hub(const char *val, bool *follow)
{
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	int fd = 0, type = 0, dom = 0, pid = 0, *num = &fd;
	socklen_t tl = sizeof(type), dl = sizeof(dom);
	const char *p;

	for (p = val; *p >= '0' && *p <= '9' && p - val < 20; p++) {
		if (*num > 99999999)
			return -EINVAL;	/* no descriptor or pid is that big */
		*num = *num * 10 + (*p - '0');
		if (p[1] == ':' && num == &fd) {
			num = &pid;
			p++;
		}
	}
	*follow = !strcmp(p, ":f");
	if ((*p && !*follow) || num != &pid || !pid)
		return -EINVAL;
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &dl) ||
	    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl))
		return -EBADF;
	if (dom != AF_UNIX || type != SOCK_SEQPACKET || cred.pid != pid)
		return -EPERM;
	return fd;
}

/* @msg on @sock with descriptor @fd: 0 or -errno. */
static int send_fd(int sock, const char *msg, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { (void *)msg, strlen(msg) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;

	memset(cbuf, 0, sizeof(cbuf));
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	while (sendmsg(sock, &mh, MSG_NOSIGNAL) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

/*
 * Join the session: a pair of our own, whose other end goes to dprobe
 * over the hub ("NEW <pid>"); ours is the channel (or -errno).
 */
static int join(int hub)
{
	char msg[32];
	int sv[2], ret;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -errno;
	snprintf(msg, sizeof(msg), "NEW %d", (int)getpid());
	ret = send_fd(hub, msg, sv[1]);
	close(sv[1]);
	if (ret) {
		close(sv[0]);
		return ret;
	}
	return dp_fd_high(sv[0], true);
}

/* A new pair: our end is the channel, dprobe takes the other one. */
static int new_pair(void)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -errno;
	peer_fd = dp_fd_high(sv[1], true);
	return dp_fd_high(sv[0], true);
}

/* Our channel is @fd: say hello on it (@extra: "fork PPID" or ""). */
static int hello(int fd, const char *extra)
{
	int ret = dp_agent_init();

	if (ret)
		return ret;
	if (ctl_fd >= 0)
		return -EBUSY;		/* attached already */
	ctl_fd = fd;
	ctl_id = fd_id(fd);
	/*
	 * Injected, the guards on libc's signal functions now, while dprobe
	 * has every thread stopped, until end_session() (signal.c); launched,
	 * our own functions interpose and there are none.
	 */
	dp_signals_guard_session(true);
	/*
	 * What threads of the program and hits use is made now, in the
	 * program's table, while none of its threads can open anything
	 * (see the control thread's descriptors above); a failure shows
	 * when it is needed (text writes; the loader is not watched).
	 */
	dp_text_prepare();
	dp_dlwatch_prepare();
	watch_id = fd_id(dp_dlwatch_fd());
	ctl_send("HELLO %d %d %s%s%s", DP_AGENT_VERSION, (int)getpid(),
		 dp_ev_clock_name(), *extra ? " " : "", extra);
	return 0;
}

/*
 * -f in a running process: a hub for the programs it starts, made here
 * (no thread of the program can open anything meanwhile).  We keep one
 * end, named in the environment the programs it execs get
 * (publish_env()); dprobe gets the other, HUB after HELLO.
 */
static int make_hub(void)
{
	int sv[2], ret;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -errno;
	ret = send_fd(ctl_fd, "HUB", sv[1]);
	close(sv[1]);
	if (ret) {
		close(sv[0]);
		return ret;
	}
	hub_fd = dp_fd_high(sv[0], true);
	hub_id = fd_id(hub_fd);
	dp_ev_set_follow(true);
	publish_env();
	return 0;
}

/*
 * Called in the process by the ptrace engine after injecting us, with
 * every other thread stopped: the number of the descriptor dprobe takes
 * (its end of a new pair), or -errno (-EBUSY: another dprobe is
 * attached).  @how: "f" (-f: the programs it starts are traced too), or
 * NULL.
 */
DP_EXPORT int dprobe_agent_attach(const char *how)
{
	bool follow = how && !strcmp(how, "f");
	int ret, fd;

	pthread_mutex_lock(&ctl_mutex);
	/* the control thread's own table is not the program's */
	ret = ctl_fd >= 0 || dp_own_files_now() ? -EBUSY : dp_agent_init();
	fd = ret ? ret : new_pair();
	if (fd >= 0 && !(ret = hello(fd, "")) &&
	    !(ret = follow ? make_hub() : 0) && !(ret = start_thread()))
		ret = peer_fd;
	if (ret < 0 && fd >= 0) {
		if (ctl_fd == fd)
			end_session(false);
		else
			close(fd);
		close(peer_fd);
		peer_fd = -1;
	}
	pthread_mutex_unlock(&ctl_mutex);
	return ret;
}

/*
 * At exit (the program's exit(), not a kill): the miss counts, which
 * dprobe reads once the process is gone.
 */
__attribute__((destructor)) static void channel_unload(void)
{
	/* a dprobe that does not read (stopped) must not hold the exit */
	const struct timeval bound = { EXIT_SEND_TIMEOUT_S, 0 };

	dp_ev_quiet(true);
	pthread_mutex_lock(&ctl_mutex);
	if (still_ours(ctl_fd, ctl_id)) {
		setsockopt(ctl_fd, SOL_SOCKET, SO_SNDTIMEO, &bound,
			   sizeof(bound));
		send_stats();
	}
	pthread_mutex_unlock(&ctl_mutex);
}

/*
 * A fork child with -f joins the session before fork() returns in it:
 * dprobe sends it rings of its own and it keeps its parent's probes.  0,
 * or -errno (then it is not traced).
 */
static int follow_child(void)
{
	char extra[32];
	int fd;

	dp_ev_follow_in_child();
	dp_dlwatch_fork_child();
	if (!still_ours(hub_fd, hub_id))
		return -EBADF;	/* the program closed it */
	fd = join(hub_fd);
	if (fd < 0)
		return fd;
	snprintf(extra, sizeof(extra), "fork %d", (int)getppid());
	dp_ev_quiet(true);
	if (!hello(fd, extra) && serve(true))
		start_thread();
	dp_ev_quiet(false);
	return 0;
}

/*
 * In a fork child, the parent's channel is not ours: with -f the child
 * joins on its own, else it tells dprobe it ran untraced (one packet,
 * never waited for) and its copies of the probes go.
 */
static void atfork_child(void)
{
	int parent = ctl_fd;
	struct fd_id parent_id = ctl_id;

	if (peer_fd >= 0)
		close(peer_fd);
	ctl_fd = peer_fd = -1;
	ctl_id = (struct fd_id){ 0, 0 };
	pthread_mutex_init(&ctl_mutex, NULL);
	/* the parent's worker is not here (a pending look is the parent's) */
	look_pid = 0;
	memset(looks, 0, sizeof(looks));
	if (!still_ours(parent, parent_id)) {
		dp_ev_forget_in_child();
		dp_signals_guard_session(false);
		return;
	}
	if (hub_fd < 0) {
		char msg[32];
		int n = snprintf(msg, sizeof(msg), "UNTRACED %d", (int)getpid());

		send(parent, msg, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
	}
	close(parent);
	if (hub_fd < 0 || follow_child()) {
		/* the parent's session is not the child's: its guards go */
		dp_ev_forget_in_child();
		dp_signals_guard_session(false);
		close_ours(&hub_fd, &hub_id);
		dp_ev_set_follow(false);
	}
}

/*
 * getenv() without calling it: a program preloaded with the agent but not
 * traced by it must not show the lookup to anyone probing getenv.
 */
static const char *env_value(const char *name)
{
	size_t n = strlen(name);

	for (char **e = environ; e && *e; e++)
		if (!strncmp(*e, name, n) && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

/*
 * LD_PRELOAD=<us> DPROBE_AGENT_SOCK=<hub>: the command dprobe launched.
 * Without -f both variables go, so that the programs it runs are not
 * traced.
 */
static void unsetenv_preload(void)
{
	const char *pre = env_value("LD_PRELOAD");
	char *copy, *tok, *save = NULL, *out;
	size_t n = 0;

	if (!pre)
		return;
	copy = strdup(pre);
	out = calloc(1, strlen(pre) + 1);
	if (!copy || !out)
		goto out;
	for (tok = strtok_r(copy, ": ", &save); tok;
	     tok = strtok_r(NULL, ": ", &save)) {
		const char *base = strrchr(tok, '/');

		if (!strcmp(base ? base + 1 : tok, "libdprobe.so"))
			continue;
		n += (size_t)sprintf(out + n, "%s%s", n ? ":" : "", tok);
	}
	if (n)
		setenv("LD_PRELOAD", out, 1);
	else
		unsetenv("LD_PRELOAD");
out:
	free(copy);
	free(out);
}

/*
 * The channel dprobe named in the environment.  None in a set-user-ID or
 * set-capability program (AT_SECURE): its environment is the one of the
 * unprivileged user who ran it, who must not feed it probes, as the
 * loader ignores LD_PRELOAD there; tracing such a process is root's job
 * (dprobe -p injects the agent).
 */
static const char *channel_from_env(void)
{
	if (getauxval(AT_SECURE))
		return NULL;
	return env_value(DP_AGENT_ENV_SOCK);
}

__attribute__((constructor)) static void channel_load(void)
{
	const char *name = channel_from_env();
	bool follow = false;
	int hub, fd;

	/* after the core's handlers: the child's mutexes are fresh first */
	if (dp_agent_init())
		return;
	pthread_atfork(NULL, NULL, atfork_child);
	if (!name)
		return;
	hub = inherited_hub(name, &follow);
	if (!follow) {
		unsetenv(DP_AGENT_ENV_SOCK);
		unsetenv_preload();
	}
	if (hub < 0)
		return;
	fd = join(hub);
	if (follow) {
		hub_fd = hub;	/* inherited by the programs we run, too */
		hub_id = fd_id(hub);
		dp_ev_set_follow(true);
	} else {
		close(hub);
	}
	if (fd < 0)
		return;
	dp_ev_quiet(true);
	if (!hello(fd, "") && serve(true))
		start_thread();
	dp_ev_quiet(false);
}
