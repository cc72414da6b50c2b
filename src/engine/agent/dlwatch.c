// SPDX-License-Identifier: GPL-2.0
/*
 * Objects loaded and unloaded at run time (dlopen, dlclose), for dprobe:
 * a probe on a library that is not loaded yet is armed when it is, and
 * the probes of a library that goes are taken out.
 *
 * The dynamic loader calls the function r_debug.r_brk names (glibc's
 * _dl_debug_state, an empty function) before and after each change of
 * its link map: the rendezvous debuggers put a breakpoint on.  The agent
 * puts a kprobe of its own there.  Its handler bumps an eventfd (one raw
 * system call) that the control thread polls with its channel; the
 * control thread compares dl_iterate_phdr()'s load and unload counters
 * with the ones it last told dprobe, and says MAPS when they moved.
 * dprobe reads the maps again, sends the probes of the new objects
 * (PROBE..., ARM), drops those of the objects that went (DROP), and says
 * SYNCED.
 *
 * The thread that changed the map waits for that, so that a probe on a
 * library is armed before dlopen() returns, as the kernel's uprobe is
 * when the file is mapped.  It cannot wait in the handler (it holds a
 * read side there, which arming waits for), so when the map is
 * consistent again the handler sends it to dp_dlwatch_stub() instead of
 * the empty function: a plain function, entered as if the loader had
 * called it, that waits (at most SYNC_WAIT_S) for the control thread and
 * returns to the loader.  The wait happens with the loader's lock held:
 * what arming does (dl_iterate_phdr, reading files, mmap) does not take
 * it.  The control thread itself, and the agent's own work, never wait.
 */
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "engine/agent/agent.h"
#include "engine/agent/events.h"

/* How long a thread that changed the map waits for dprobe, at most. */
#define SYNC_WAIT_S	2

static struct kprobe watch;
static bool watching;
static int watch_fd = -1;
/* the loader's counters as last told to dprobe (control thread) */
static unsigned long long told_adds, told_subs;
static bool outstanding;	/* MAPS sent, SYNCED not yet back */

/* Threads waiting for their change to be armed (dp_dlwatch_stub()). */
static pthread_mutex_t sync_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t sync_cond = PTHREAD_COND_INITIALIZER;
static unsigned long req_seq, done_seq;
static __thread bool never_wait
	__attribute__((tls_model("initial-exec")));

static void bump(void)
{
	uint64_t one = 1;
	int fd = __atomic_load_n(&watch_fd, __ATOMIC_RELAXED);

	if (fd >= 0)
		dp_raw_syscall(SYS_write, fd, (long)&one, sizeof(one));
}

/*
 * Entered instead of the loader's empty r_brk function, as if the loader
 * had called it: wait until the control thread says the change is armed.
 */
DP_HIDDEN void dp_dlwatch_stub(void)
{
	struct timespec until;
	unsigned long seq;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += SYNC_WAIT_S;
	pthread_mutex_lock(&sync_mutex);
	seq = ++req_seq;
	bump();
	while (done_seq < seq && __atomic_load_n(&watching, __ATOMIC_RELAXED) &&
	       !pthread_cond_timedwait(&sync_cond, &sync_mutex, &until))
		;
	pthread_mutex_unlock(&sync_mutex);
}

/* The hit path: no lock, no library call. */
static int on_map_change(struct kprobe *p, struct pt_regs *regs)
{
	(void)p;
	bump();
	if (_r_debug.r_state != RT_CONSISTENT || never_wait ||
	    dp_ev_quiet_now())
		return 0;
	regs->ip = (uintptr_t)dp_dlwatch_stub;
	return 1;		/* the function is empty: the stub replaces it */
}

void dp_dlwatch_never_wait(void)
{
	never_wait = true;
}

struct counts {
	unsigned long long adds, subs;
};

static int first_counts(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct counts *c = arg;

	if (size < offsetof(struct dl_phdr_info, dlpi_subs) +
		   sizeof(info->dlpi_subs))
		return 1;
	c->adds = info->dlpi_adds;
	c->subs = info->dlpi_subs;
	return 1;		/* the counters are global: one object is enough */
}

static struct counts loader_counts(void)
{
	struct counts c = { 0, 0 };

	dl_iterate_phdr(first_counts, &c);
	return c;
}

/*
 * The eventfd, made with the channel (channel.c's hello()), where no
 * thread of the program can open anything meanwhile: every thread's hit
 * writes to it, so it is in the program's descriptor table, and the
 * control thread, which works in a table of its own, keeps a copy.
 */
int dp_dlwatch_prepare(void)
{
	if (watch_fd < 0)
		watch_fd = dp_fd_high(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK),
				      true);
	return watch_fd < 0 ? -errno : 0;
}

int dp_dlwatch_start(void)
{
	struct counts c = loader_counts();
	int ret;

	if (watching)
		return 0;
	if (!_r_debug.r_brk)
		return -ENOENT;
	/* never made here: this thread's number may not be the program's */
	if (watch_fd < 0)
		return -EBADF;
	told_adds = c.adds;
	told_subs = c.subs;
	/* not optimised: the handler moves the thread (regs->ip) */
	watch = (struct kprobe){
		.addr = (kprobe_opcode_t *)(uintptr_t)_r_debug.r_brk,
		.pre_handler = on_map_change,
		.flags = KPROBE_FLAG_NOSIMD | KPROBE_FLAG_NOOPT,
	};
	ret = register_kprobe(&watch);
	if (ret)
		return ret;
	watching = true;
	return 0;
}

int dp_dlwatch_fd(void)
{
	return watch_fd;
}

void dp_dlwatch_wake(void)
{
	bump();
}

/* Every thread waiting so far: its change was told and armed. */
static void release_all(void)
{
	pthread_mutex_lock(&sync_mutex);
	done_seq = req_seq;
	pthread_cond_broadcast(&sync_cond);
	pthread_mutex_unlock(&sync_mutex);
}

/*
 * Whether to tell dprobe MAPS now: the loader's counters moved since it
 * was last told, and it is not busy with the last MAPS.  When they did
 * not move, every change a thread waits for was told: it goes on.
 */
static bool must_tell(void)
{
	struct counts c;

	if (outstanding)
		return false;
	c = loader_counts();
	if (c.adds != told_adds || c.subs != told_subs) {
		told_adds = c.adds;
		told_subs = c.subs;
		outstanding = true;
		return true;
	}
	release_all();
	return false;
}

bool dp_dlwatch_changed(void)
{
	uint64_t n;

	if (watch_fd < 0 || read(watch_fd, &n, sizeof(n)) != sizeof(n))
		return false;
	return must_tell();
}

bool dp_dlwatch_synced(void)
{
	outstanding = false;
	return must_tell();
}

int dp_dlwatch_stop(void)
{
	int fd = watch_fd;

	if (watching) {
		unregister_kprobe(&watch);
		__atomic_store_n(&watching, false, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&watch_fd, -1, __ATOMIC_RELAXED);
	outstanding = false;
	release_all();
	return fd;
}

/* A followed fork child: an eventfd of its own (the parent's is shared),
 * and none of the parent's waiters. */
void dp_dlwatch_fork_child(void)
{
	pthread_mutex_init(&sync_mutex, NULL);
	pthread_cond_init(&sync_cond, NULL);
	done_seq = req_seq;
	outstanding = false;
	if (watch_fd < 0)
		return;
	close(watch_fd);
	watch_fd = dp_fd_high(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK), true);
}
