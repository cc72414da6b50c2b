// SPDX-License-Identifier: GPL-2.0
/*
 * The FUSE side of `dprobe mount`: path operations on top of control.c,
 * a multithreaded loop (a reader blocked in trace_pipe must not hold up
 * other requests), and the mount's life: mount, serve, and on Ctrl-C,
 * SIGTERM or an unmount from outside, detach every probe and unmount.
 *
 * Like tracefs, nothing is cacheable: every file is direct_io with size 0
 * and lookups are not cached, so events come and go at once.  A file's
 * contents are produced when it is first read through a handle (as
 * seq_file does), so one `cat` sees one consistent snapshot.
 */
#define FUSE_USE_VERSION 312
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <fuse_lowlevel.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fs/internal.h"

/*
 * Each trace_pipe reader blocked in read holds one worker thread, and an
 * interrupt (its Ctrl-C) is read by a free one: libfuse's default of 10
 * workers would let ten readers hang every other request, their own
 * interrupts included.  Workers are started only when needed.
 */
#define DP_FS_MAX_THREADS	256

struct handle {
	struct dp_fs_path path;
	pthread_mutex_t lock;	/* concurrent reads of one handle (pread) */
	char *data;		/* snapshot for reads */
	size_t len;
	bool have;
	bool nonblock;		/* trace_pipe opened O_NONBLOCK */
};

static struct dp_fs *get_fs(void)
{
	return fuse_get_context()->private_data;
}

/*
 * libfuse cancels its worker threads when the loop ends; an operation
 * holding fs->lock (or waiting for the session manager) must finish, so
 * every operation runs with cancellation off.
 */
#define OP_ENTER(fs, oldstate) do {					\
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &(oldstate));	\
	pthread_mutex_lock(&(fs)->lock);				\
} while (0)

#define OP_EXIT(fs, oldstate) do {					\
	pthread_mutex_unlock(&(fs)->lock);				\
	pthread_setcancelstate((oldstate), NULL);			\
} while (0)

static void *fs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	/* `>` arrives as open(O_TRUNC): it clears, as in tracefs */
	if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC)
		conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
	cfg->direct_io = 1;
	cfg->kernel_cache = 0;
	cfg->entry_timeout = 0;
	cfg->attr_timeout = 0;
	cfg->negative_timeout = 0;
	return fuse_get_context()->private_data;
}

static int fs_getattr(const char *path, struct stat *st,
		      struct fuse_file_info *fi)
{
	struct dp_fs *fs = get_fs();
	struct dp_fs_path p;
	int ret, old;

	(void)fi;
	OP_ENTER(fs, old);
	ret = dp_fs_lookup(fs, path, &p);
	OP_EXIT(fs, old);
	if (ret)
		return ret;
	memset(st, 0, sizeof(*st));
	st->st_uid = getuid();
	st->st_gid = getgid();
	if (dp_fs_is_dir(p.kind)) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
	} else {
		st->st_mode = S_IFREG | (dp_fs_is_writable(p.kind) ? 0644 : 0444);
		st->st_nlink = 1;
	}
	return 0;
}

struct fill_ctx {
	void *buf;
	fuse_fill_dir_t filler;
};

static void fill_one(void *priv, const char *name, bool dir)
{
	struct fill_ctx *c = priv;
	struct stat st = { .st_mode = dir ? S_IFDIR : S_IFREG };

	c->filler(c->buf, name, &st, 0, 0);
}

static int fs_readdir(const char *path, void *buf, fuse_fill_dir_t filler,
		      off_t off, struct fuse_file_info *fi,
		      enum fuse_readdir_flags flags)
{
	struct dp_fs *fs = get_fs();
	struct fill_ctx c = { buf, filler };
	struct dp_fs_path p;
	int ret, old;

	(void)off;
	(void)fi;
	(void)flags;
	OP_ENTER(fs, old);
	ret = dp_fs_lookup(fs, path, &p);
	if (!ret && !dp_fs_is_dir(p.kind))
		ret = -ENOTDIR;
	if (!ret) {
		filler(buf, ".", NULL, 0, 0);
		filler(buf, "..", NULL, 0, 0);
		dp_fs_list_dir(dp_fs_of(fs, &p), &p, fill_one, &c);
	}
	OP_EXIT(fs, old);
	return ret;
}

static int fs_open(const char *path, struct fuse_file_info *fi)
{
	struct dp_fs *fs = get_fs();
	struct handle *h = calloc(1, sizeof(*h));
	bool wr = (fi->flags & O_ACCMODE) != O_RDONLY;
	int ret, old;

	if (!h)
		return -ENOMEM;
	pthread_mutex_init(&h->lock, NULL);
	OP_ENTER(fs, old);
	ret = dp_fs_lookup(fs, path, &h->path);
	if (!ret && dp_fs_is_dir(h->path.kind))
		ret = -EISDIR;
	if (!ret && wr && (fi->flags & O_TRUNC))
		ret = dp_fs_truncate_file(dp_fs_of(fs, &h->path), &h->path);
	/* an open file holds its instance: rmdir is EBUSY meanwhile */
	if (!ret && h->path.tr)
		h->path.tr->inst_refs++;
	OP_EXIT(fs, old);
	if (ret) {
		pthread_mutex_destroy(&h->lock);
		free(h);
		return ret;
	}
	fi->direct_io = 1;
	fi->keep_cache = 0;
	if (h->path.kind == F_TRACE_PIPE)
		fi->nonseekable = 1;
	h->nonblock = fi->flags & O_NONBLOCK;
	fi->fh = (uintptr_t)h;
	return 0;
}

struct pipe_stop {
	struct dp_fs *fs;
	struct fuse *fuse;
	bool nonblock;
};

/*
 * A trace_pipe reader gives up on a signal (Ctrl-C, timeout) or unmount;
 * a non-blocking one at once.
 */
static bool pipe_should_stop(void *priv)
{
	struct pipe_stop *s = priv;

	return s->nonblock || fuse_interrupted() || atomic_load(&s->fs->exiting) ||
	       fuse_session_exited(fuse_get_session(s->fuse));
}

static int snapshot(struct dp_fs *fs, struct handle *h)
{
	FILE *f;
	int ret, old;

	free(h->data);
	h->data = NULL;
	h->len = 0;
	f = open_memstream(&h->data, &h->len);
	if (!f)
		return -ENOMEM;
	OP_ENTER(fs, old);
	ret = dp_fs_read_file(dp_fs_of(fs, &h->path), &h->path, f);
	OP_EXIT(fs, old);
	if (fclose(f) && !ret)
		ret = -ENOMEM;
	h->have = !ret;
	return ret;
}

static int fs_read(const char *path, char *buf, size_t size, off_t off,
		   struct fuse_file_info *fi)
{
	struct dp_fs *fs = get_fs();
	struct handle *h = (struct handle *)(uintptr_t)fi->fh;
	struct pipe_stop stop = { fs, fs->fuse, h->nonblock };
	int ret;

	(void)path;
	if (h->path.kind == F_TRACE_PIPE) {
		ret = (int)dp_fs_buf_consume(dp_fs_of(fs, &h->path), buf, size,
					     pipe_should_stop, &stop);
		return ret == -EINTR && h->nonblock ? -EAGAIN : ret;
	}
	/* two threads may pread one handle: one snapshot at a time */
	pthread_mutex_lock(&h->lock);
	if (!h->have || off == 0) {
		ret = snapshot(fs, h);
		if (ret)
			goto out;
	}
	if ((size_t)off >= h->len)
		size = 0;
	else if (size > h->len - (size_t)off)
		size = h->len - (size_t)off;
	if (size)
		memcpy(buf, h->data + off, size);
	ret = (int)size;
out:
	pthread_mutex_unlock(&h->lock);
	return ret;
}

static int fs_write(const char *path, const char *buf, size_t size,
		    off_t off, struct fuse_file_info *fi)
{
	struct dp_fs *fs = get_fs();
	struct handle *h = (struct handle *)(uintptr_t)fi->fh;
	struct dp_fs_path p;
	int ret, old;

	(void)off;
	OP_ENTER(fs, old);
	/* the event may have been deleted since this handle was opened */
	ret = dp_fs_lookup(fs, path, &p);
	dp_fs_writer = fuse_get_context()->pid;	/* trace_marker's pid */
	if (!ret)
		ret = dp_fs_write_file(dp_fs_of(fs, &h->path), &h->path, buf,
				       size);
	dp_fs_writer = 0;
	OP_EXIT(fs, old);
	return ret;
}

static int fs_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	struct dp_fs *fs = get_fs();
	struct dp_fs_path p;
	int ret, old;

	(void)fi;
	OP_ENTER(fs, old);
	ret = dp_fs_lookup(fs, path, &p);
	if (!ret && size == 0)
		ret = dp_fs_truncate_file(dp_fs_of(fs, &p), &p);
	OP_EXIT(fs, old);
	return ret;
}

static int fs_release(const char *path, struct fuse_file_info *fi)
{
	struct handle *h = (struct handle *)(uintptr_t)fi->fh;
	struct dp_fs *fs = get_fs();
	int old;

	(void)path;
	if (h->path.tr) {
		OP_ENTER(fs, old);
		h->path.tr->inst_refs--;
		OP_EXIT(fs, old);
	}
	pthread_mutex_destroy(&h->lock);
	free(h->data);
	free(h);
	return 0;
}

/* mkdir and rmdir make and remove instances (instances/NAME) alone. */
static int fs_mkdir(const char *path, mode_t mode)
{
	struct dp_fs *fs = get_fs();
	int ret, old;

	(void)mode;
	OP_ENTER(fs, old);
	ret = dp_fs_inst_mkdir(fs, path);
	OP_EXIT(fs, old);
	return ret;
}

static int fs_rmdir(const char *path)
{
	struct dp_fs *fs = get_fs();
	int ret, old;

	OP_ENTER(fs, old);
	ret = dp_fs_inst_rmdir(fs, path);
	OP_EXIT(fs, old);
	return ret;
}

static const struct fuse_operations ops = {
	.init = fs_init,
	.getattr = fs_getattr,
	.readdir = fs_readdir,
	.open = fs_open,
	.read = fs_read,
	.write = fs_write,
	.truncate = fs_truncate,
	.mkdir = fs_mkdir,
	.rmdir = fs_rmdir,
	.release = fs_release,
};

/* ---- the mount's life ----------------------------------------------------- */

static struct fuse *fs_mount(struct dp_fs *fs, const char *dir)
{
	/* "tracefs" in its /proc/mounts line, as tools that look for a
	 * tracefs by grepping there (the kernel's ftracetest) expect; the
	 * type stays fuse.dprobe, so none takes it for the kernel's */
	char *argv[] = { "dprobe", "-o", "fsname=dprobe-tracefs,subtype=dprobe",
			 NULL };
	struct fuse_args args = FUSE_ARGS_INIT(3, argv);
	struct fuse *f;

	if (access("/dev/fuse", R_OK | W_OK)) {
		fprintf(stderr, "dprobe mount: /dev/fuse is %s: FUSE needs the "
			"fuse module loaded and access to /dev/fuse (root)\n",
			errno == ENOENT ? "missing" : "not accessible");
		return NULL;
	}
	f = fuse_new(&args, &ops, sizeof(ops), fs);
	fuse_opt_free_args(&args);
	if (!f) {
		fprintf(stderr, "dprobe mount: cannot start a FUSE session\n");
		return NULL;
	}
	if (fuse_mount(f, dir)) {
		fprintf(stderr, "dprobe mount: cannot mount on %s (it must be "
			"an existing directory, and mounting needs root or "
			"fusermount3)\n", dir);
		fuse_destroy(f);
		return NULL;
	}
	return f;
}

static struct fuse_session *g_session;

static void on_stop(int sig)
{
	(void)sig;
	if (g_session)
		fuse_session_exit(g_session);
}

/*
 * Ctrl-C, SIGTERM and SIGHUP end the loop.  Unlike libfuse's own
 * handlers these are installed even when the signal came in ignored (a
 * background job of a script): a `kill -INT` must still unmount.  No
 * SA_RESTART: the loop's wait must return.
 */
static void set_stop_signals(struct fuse_session *se, bool on)
{
	struct sigaction sa = { .sa_handler = on ? on_stop : SIG_DFL };

	g_session = on ? se : NULL;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, on ? SIG_IGN : SIG_DFL);
}

int dp_fs_run(const struct dp_fs_opts *o, int *status)
{
	struct fuse_loop_config *cfg;
	struct fuse_session *se;
	struct dp_fs fs;
	int ret;

	dp_fs_init(&fs, o);
	dp_fs_kernel_events(&fs);
	fs.fuse = fs_mount(&fs, o->mountpoint);
	if (!fs.fuse) {
		dp_fs_fini(&fs);
		return -EPERM;
	}
	se = fuse_get_session(fs.fuse);
	ret = dp_fs_session_start(&fs);
	if (ret) {
		fprintf(stderr, "dprobe mount: cannot start threads: %s\n",
			strerror(-ret));
		goto unmount;
	}
	set_stop_signals(se, true);
	fprintf(stderr, "dprobe mount: serving process %d on %s (Ctrl-C or "
		"'fusermount3 -u %s' to stop)\n", (int)o->pid, o->mountpoint,
		o->mountpoint);
	cfg = fuse_loop_cfg_create();
	if (!cfg) {
		ret = -ENOMEM;
	} else {
		fuse_loop_cfg_set_idle_threads(cfg, 16);
		fuse_loop_cfg_set_max_threads(cfg, DP_FS_MAX_THREADS);
		ret = fuse_loop_mt(fs.fuse, cfg);
		fuse_loop_cfg_destroy(cfg);
	}
	set_stop_signals(se, false);
	/* unmount first: no request may come in while the probes go */
	fuse_unmount(fs.fuse);
	dp_fs_session_end(&fs);
	*status = fs.target_status;
	fuse_destroy(fs.fuse);
	dp_fs_fini(&fs);
	/* the mount was served and the command waited for: a loop error is
	 * said here, never taken for "nothing was mounted" (the caller
	 * would kill a pid that is no longer the command's) */
	if (ret < 0)
		fprintf(stderr, "dprobe mount: the FUSE loop ended with an "
			"error: %s\n", strerror(-ret));
	return 0;
unmount:
	fuse_unmount(fs.fuse);
	fuse_destroy(fs.fuse);
	dp_fs_fini(&fs);
	return ret;
}
