// SPDX-License-Identifier: GPL-2.0
/*
 * Arming the enabled events: the session child.
 *
 * The ptrace engine owns its tracees through waitpid(-1) and signals, a
 * model that does not mix with FUSE's worker threads.  So the events are
 * armed by a child process: forked with a copy of the registry from which
 * every disabled event is unlinked (same definitions, same ids, same
 * filters), it attaches to the target (following forks), renders each
 * record as a `trace` line (it holds the target's symbolizer) and sends it
 * down a pipe; it also sends the probes' hit/miss counts on SIGUSR1 and
 * when it ends.  When the set of enabled events changes the child is sent
 * SIGTERM, which makes the engine detach and restore every byte, and a new
 * one is started.
 *
 * The child is forked by one long-lived manager thread, so that
 * PR_SET_PDEATHSIG (tied to the forking thread) only fires when dprobe
 * itself dies: then too the child detaches.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine.h"
#include "fs/internal.h"
#include "output/output.h"

enum { FR_READY = 1, FR_ERROR, FR_LINE, FR_PROFILE };

struct frame {
	uint32_t type;
	uint32_t len;		/* payload bytes after the header */
	uint32_t id;		/* FR_LINE: event id */
	uint32_t pad;
};

#define FRAME_MAX	(1u << 20)

/* ---- the child ------------------------------------------------------------ */

struct child_ctx {
	int fd;
	struct dp_registry *reg;
	FILE *mem;
	char *buf;
	size_t size;
};

static struct dp_engine *g_tracer;

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

static int send_frame(int fd, uint32_t type, uint32_t id, const void *data,
		      size_t len)
{
	struct frame h = { .type = type, .len = (uint32_t)len, .id = id };
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

static void child_emit(void *priv, const struct dp_event *ev, const void *rec,
		       size_t len, const struct dp_rec_meta *meta,
		       const struct dp_symbolizer *sym)
{
	struct child_ctx *c = priv;
	struct dp_trace_opts o = { .ncpus = 1, .sym = sym };

	rewind(c->mem);
	if (dp_trace_line(c->mem, ev, rec, len, meta, &o) || fflush(c->mem))
		return;
	send_frame(c->fd, FR_LINE, ev->id, c->buf, c->size);
}

static void child_profile(void *priv)
{
	struct child_ctx *c = priv;
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
						       p->nmiss };
	}
	send_frame(c->fd, FR_PROFILE, 0, v, n * sizeof(*v));
	free(v);
}

/* The registry's own copy, with only the enabled events in it. */
static void keep_enabled(struct dp_registry *reg)
{
	struct dp_event **pp = &reg->events;

	while (*pp) {
		if ((*pp)->enabled)
			pp = &(*pp)->next;
		else
			*pp = (*pp)->next;	/* the child's copy: no free */
	}
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
	sigfillset(&set);
	sigdelset(&set, SIGSEGV);
	sigdelset(&set, SIGBUS);
	sigdelset(&set, SIGFPE);
	sigdelset(&set, SIGILL);
	/* held until the engine's loop waits for them */
	sigprocmask(SIG_SETMASK, &set, NULL);
}

static __attribute__((noreturn)) void child_main(struct dp_fs *fs, int fd,
						 pid_t parent)
{
	struct child_ctx c = { .fd = fd, .reg = &fs->reg };
	pid_t pid = fs->o->pid;
	struct dp_engine_opts eo = {
		.reg = &fs->reg, .pids = &pid, .npids = 1, .follow = true,
		.sink = { child_emit, NULL, &c },
	};
	/* this child is the tracer of the whole process tree, forks
	 * followed: the ptrace engine's way */
	const struct dp_engine_ops *ops = dp_engine_by_name("ptrace");
	sigset_t none;
	char why[512] = "";
	int err, status;

	child_signals();
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		_exit(1);
	if (dup2(fd, 3) < 0)
		_exit(1);
	c.fd = 3;
	close_range(4, ~0U, 0);
	keep_enabled(&fs->reg);
	c.mem = open_memstream(&c.buf, &c.size);
	if (!c.mem)
		_exit(1);
	sigemptyset(&none);
	eo.child_mask = &none;
	err = dp_engine_start(ops, &eo, &g_tracer, why, sizeof(why));
	if (err) {
		if (!why[0])
			snprintf(why, sizeof(why), "%s", strerror(-err));
		send_frame(c.fd, FR_ERROR, 0, why, strlen(why));
		_exit(1);
	}
	send_frame(c.fd, FR_READY, 0, NULL, 0);
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

static void store_counts(struct dp_fs *fs, const char *data, size_t len)
{
	size_t n = len / sizeof(struct dp_fs_count);
	struct dp_fs_count *v = malloc(n ? len : 1);

	if (!v)
		return;
	memcpy(v, data, n * sizeof(*v));
	pthread_mutex_lock(&fs->buf_lock);
	/* counts of events this child does not arm are kept */
	for (size_t i = 0; i < fs->ncounts; i++) {
		bool dup = false;

		for (size_t j = 0; j < n && !dup; j++)
			dup = v[j].id == fs->counts[i].id;
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
	fs->profile_gen++;
	pthread_cond_broadcast(&fs->buf_cond);
	pthread_mutex_unlock(&fs->buf_lock);
}

static void *reader_main(void *arg)
{
	struct dp_fs *fs = arg;
	struct frame h;
	char *data;

	while (!read_frame(fs->child_fd, &h, &data)) {
		if (h.type == FR_LINE)
			dp_fs_buf_add(fs, h.id, data, h.len);
		else if (h.type == FR_PROFILE)
			store_counts(fs, data, h.len);
		free(data);
	}
	pthread_mutex_lock(&fs->buf_lock);
	fs->reader_running = false;
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
		struct dp_probe *p = ev ? ev->probes : NULL;

		for (unsigned k = 0; p && k < fs->counts[i].idx; k++)
			p = p->next;
		if (p) {
			p->nhit = fs->counts[i].nhit;
			p->nmiss = fs->counts[i].nmiss;
		}
	}
	pthread_mutex_unlock(&fs->buf_lock);
}

void dp_fs_update_profile(struct dp_fs *fs)
{
	struct timespec until;
	unsigned long gen;

	pthread_mutex_lock(&fs->buf_lock);
	if (fs->child && fs->reader_running) {
		gen = fs->profile_gen;
		kill(fs->child, SIGUSR1);
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 2;
		while (gen == fs->profile_gen && fs->reader_running &&
		       !pthread_cond_timedwait(&fs->buf_cond, &fs->buf_lock,
					       &until))
			;
	}
	pthread_mutex_unlock(&fs->buf_lock);
	apply_counts(fs);
}

/* ---- the manager ------------------------------------------------------------ */

static void stop_child(struct dp_fs *fs)
{
	int st;

	if (!fs->child)
		return;
	kill(fs->child, SIGTERM);
	/* the child's last frames must be read for it to finish writing */
	if (fs->reader_live)
		pthread_join(fs->reader, NULL);
	fs->reader_live = false;
	while (waitpid(fs->child, &st, 0) < 0 && errno == EINTR)
		;
	close(fs->child_fd);
	fs->child = 0;
	fs->child_fd = -1;
	apply_counts(fs);
}

static bool any_enabled(const struct dp_fs *fs)
{
	for (const struct dp_event *ev = fs->reg.events; ev; ev = ev->next)
		if (ev->enabled)
			return true;
	return false;
}

/* Fork the child; 0 once it has armed every enabled event. */
static int start_child(struct dp_fs *fs, bool last_try)
{
	struct frame h;
	char *msg;
	int fds[2], st, ret = 0;
	pid_t pid, me = getpid();

	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		close(fds[0]);
		close(fds[1]);
		return ret;
	}
	if (!pid) {
		close(fds[0]);
		child_main(fs, fds[1], me);
	}
	close(fds[1]);
	if (read_frame(fds[0], &h, &msg) || h.type != FR_READY) {
		if (last_try)
			fprintf(stderr, "dprobe mount: cannot arm the enabled "
				"events in process %d: %s\n", (int)fs->o->pid,
				msg && h.type == FR_ERROR ? msg :
				"the tracer stopped");
		free(msg);
		close(fds[0]);
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		return -EINVAL;
	}
	free(msg);
	fs->child = pid;
	fs->child_fd = fds[0];
	fs->reader_running = true;
	if (pthread_create(&fs->reader, NULL, reader_main, fs)) {
		fs->reader_running = false;
		stop_child(fs);
		return -EAGAIN;
	}
	fs->reader_live = true;
	return 0;
}

/*
 * Stop the child, start the next one.  An attach that fails is tried
 * again a few times: a target caught inside an interrupted system call
 * can make one remote mmap fail.
 */
static int do_rearm(struct dp_fs *fs)
{
	struct timespec pause = { 0, 50 * 1000 * 1000 };
	int ret = 0;

	stop_child(fs);
	for (int i = 0; i < 3; i++) {
		if (!any_enabled(fs) || atomic_load(&fs->target_gone))
			return 0;
		ret = start_child(fs, i == 2);
		if (!ret)
			break;
		nanosleep(&pause, NULL);
	}
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
	stop_child(fs);
	return NULL;
}

int dp_fs_rearm(struct dp_fs *fs)
{
	unsigned long req;
	int ret;

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
	if (fs->o->own_child && !atomic_load(&fs->target_gone))
		fprintf(stderr, "dprobe mount: every probe removed; waiting "
			"for process %d to exit\n", (int)fs->o->pid);
	pthread_join(fs->monitor_thread, NULL);
}
