// SPDX-License-Identifier: GPL-2.0
/*
 * Initialisation, the registration mutex, grace periods and text writes.
 *
 * Text writes go through /proc/self/mem: the kernel writes through a
 * read-only private mapping there as it does for ptrace (the page becomes
 * an anonymous copy), so the protection of the code never changes while
 * other threads run it (an mprotect(RW) window would make them fault),
 * and W^X holds for our slot pages too.  Every write is a single byte for
 * probes (atomic for other threads: they see the old instruction or the
 * int3), is verified against the expected old bytes first, and is
 * followed by membarrier(SYNC_CORE) when the kernel has it, as the
 * kernel's text_poke_sync() makes every CPU serialise after a patch.
 */
#include <errno.h>
#include <sys/resource.h>
#include <fcntl.h>
#include <link.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "engine/agent/agent.h"

__thread struct dp_tls dp_tls __attribute__((tls_model("initial-exec")));

bool dp_have_fsgsbase;

static pthread_mutex_t reg_mutex = PTHREAD_MUTEX_INITIALIZER;
/* /proc/self/mem in the program's descriptor table (see dp_own_files()) */
static int mem_fd = -1;
static pid_t mem_pid;
static dev_t mem_dev;		/* ...and what it names: the program may */
static ino_t mem_ino;		/* close the number and reuse it */
/* ... and in the control thread's own table, while it has one */
static int own_mem_fd = -1;
static __thread bool own_files __attribute__((tls_model("initial-exec")));
static bool have_sync_core;
static uint64_t self_lo, self_hi;

/* ---- the registration mutex -------------------------------------------- */

void dp_lock(void)
{
	pthread_mutex_lock(&reg_mutex);
}

void dp_unlock(void)
{
	pthread_mutex_unlock(&reg_mutex);
}

static bool gp_held(void);

/*
 * A fork while another thread registers must not copy our structures
 * half-updated: the mutex is held across it.  Not while this thread holds
 * a read side (in a handler, or a signal handler that interrupted a hit
 * just before it counted as one): another thread could be holding the
 * mutex, waiting for that read side to end.
 */
static __thread bool fork_locked;

static void atfork_prepare(void)
{
	fork_locked = !dp_tls.depth && !gp_held();
	if (fork_locked)
		pthread_mutex_lock(&reg_mutex);
}

static void atfork_parent(void)
{
	if (fork_locked)
		pthread_mutex_unlock(&reg_mutex);
}

/* ---- grace periods -------------------------------------------------------- */

/*
 * Read sides without atomic instructions (agent.h has the reader's half).
 *
 * Reader, on its own slot r:  R0 idx = epoch & 1;  R1 r->lease[idx]++;
 * R2 read the probe lists, run handlers;  R3 r->lease[idx]--.  Plain
 * loads and stores; only the compiler is kept from reordering them.
 *
 * Writer, under the registration mutex, after W1 (unlinking a kprobe,
 * clearing kretprobe_holder.rp, setting site->step...):
 *   A   membarrier(PRIVATE_EXPEDITED): every thread of the process that
 *       is running executes a full barrier (one that is not running
 *       passes through the scheduler, which is one);
 *   S1  epoch = e + 1, then wait until no slot holds lease[e & 1];
 *   S2  epoch = e + 2, then wait until no slot holds lease[(e + 1) & 1].
 *
 * Why no reader that saw what W1 removed is still running after S2: take
 * a reader whose R2 read the old value.  Its barrier point from A comes
 * after R2 (a barrier before R2 would have made W1 visible to it), so R0,
 * R1 and R2 all precede it, and everything the writer reads after A sees
 * R1.  R0 read an epoch no later than e (the flips come after A), so idx
 * is e & 1 or (e + 1) & 1: S1 or S2 looks at that very counter, finds it
 * non-zero, and waits for R3.  On x86 the loads of R2 are complete
 * before R3's store is visible (stores are not reordered with earlier
 * loads), so once the writer sees R3 the reader is done with the object.
 * The flips only ensure progress: readers that start after a flip count
 * on the other parity, so the one being waited for drains even when a
 * thread hits probes back to back.
 *
 * The cases around it:
 *  - nesting on one thread (a signal handler hitting a probe while the
 *    thread is in a read side, or between the load and store of R1 or
 *    R3): the nested read side restores the counter before the
 *    interrupted code resumes, so each thread's counters stay exact;
 *  - threads that start meanwhile claim a slot (a locked CAS) before
 *    their R1, so the same argument covers them: the slots are scanned
 *    after A;
 *  - threads that exit hold no read side (handlers return), so their
 *    slots read zero and are never waited for; slots live in memory of
 *    ours that is never freed, not in the thread's TLS, so the writer
 *    never reads the storage of an exited thread.  Slots of threads that
 *    are gone (tgkill() says ESRCH) are taken back when free slots run
 *    low, and a slot whose thread died inside a read side is freed
 *    instead of waited for;
 *  - a thread that finds no free slot takes over one whose thread is
 *    gone holding no read side (a CAS on its tid; the writer frees a slot
 *    with a CAS too, through -1, so the two never both get it), else
 *    maps one more chunk: every thread has a slot, and a program that
 *    keeps starting threads does not add chunks without end;
 *  - a vfork()/posix_spawn() child runs on its parent thread's TLS: it
 *    claims no slot (its pid is not ours), else the slot would be under
 *    its tid and freed once it has exec'd while the parent still uses it;
 *  - the writer's own slot and shared read sides are skipped: a handler
 *    that unregisters would otherwise wait for itself;
 *  - fork: the child's only thread keeps its slot (under its new tid)
 *    and its read sides; every other slot is freed.  The membarrier
 *    registration is inherited.
 * A thread that finds no free slot, and every thread when the kernel
 * lacks PRIVATE_EXPEDITED, counts on dp_gp_shared[] with a locked RMW (a
 * full barrier of its own, as SRCU's smp_mb()); the writer waits for
 * those counters too (the same two parities), minus its own read sides.
 */
#define GP_CHUNK 64

struct gp_chunk {
	struct dp_gp_reader r[GP_CHUNK];
	struct gp_chunk *next;		/* appended under the mutex, release */
};

static struct gp_chunk gp_chunk0;
static int gp_free = GP_CHUNK;		/* slots with no owner (a hint) */
static bool gp_fast;			/* membarrier PRIVATE_EXPEDITED works */
static pid_t gp_pid;			/* this process's, for the hit path */

unsigned int dp_gp_epoch;
unsigned int dp_gp_shared[2];

static struct gp_chunk *gp_next(const struct gp_chunk *c)
{
	return __atomic_load_n(&c->next, __ATOMIC_ACQUIRE);
}

/* The last chunk now. */
static struct gp_chunk *gp_last(void)
{
	struct gp_chunk *c = &gp_chunk0;

	while (gp_next(c))
		c = gp_next(c);
	return c;
}

/*
 * Append @n (zeroed) after @last, the last chunk when the caller found
 * no free slot; false if a chunk was appended since (then @n is not
 * used): threads that all find the slots taken at once add one chunk,
 * not one each.  Chunks are never freed.
 */
static bool gp_append(struct gp_chunk *last, struct gp_chunk *n)
{
	struct gp_chunk *none = NULL;

	if (!__atomic_compare_exchange_n(&last->next, &none, n, false,
					 __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		return false;
	__atomic_fetch_add(&gp_free, GP_CHUNK, __ATOMIC_RELAXED);
	return true;
}

/*
 * Every slot taken on the hit path: one chunk more, mapped without a
 * library call, so that every thread has a slot (the return stacks of
 * KPROBE_FLAG_RP_THREAD are in them).
 */
static __attribute__((noinline, cold)) bool gp_grow_now(struct gp_chunk *last)
{
	long p = dp_raw_syscall6(SYS_mmap, 0, sizeof(struct gp_chunk),
				 PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p < 0 && p > -4096)
		return false;
	if (!gp_append(last, (struct gp_chunk *)p))
		dp_raw_syscall(SYS_munmap, p, sizeof(struct gp_chunk), 0);
	return true;	/* a chunk was added, by us or another thread */
}

bool dp_gp_slots(void)
{
	return __atomic_load_n(&gp_fast, __ATOMIC_ACQUIRE);
}

/* @r, owned by @from, is ours now (a CAS: no other claimer has it). */
static bool gp_take(struct dp_gp_reader *r, int from)
{
	if (!__atomic_compare_exchange_n(&r->tid, &from, dp_tls.tid, false,
					 __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
		return false;
	/* what the slot's return stack held was a dead thread's */
	if (r->rstack)
		r->rstack->top = 0;
	return true;
}

/*
 * The slot of a thread that has exited holding no read side, taken over
 * (no library call: tgkill() made raw).  Exited threads' slots are
 * otherwise taken back only by dp_synchronize(), and a program that
 * keeps starting threads during a recording would grow chunks forever.
 */
static __attribute__((noinline, cold)) struct dp_gp_reader *gp_take_dead(void)
{
	for (struct gp_chunk *c = &gp_chunk0; c; c = gp_next(c)) {
		for (int i = 0; i < GP_CHUNK; i++) {
			struct dp_gp_reader *r = &c->r[i];
			int tid = __atomic_load_n(&r->tid, __ATOMIC_RELAXED);

			if (tid <= 0 ||
			    __atomic_load_n(&r->lease[0], __ATOMIC_RELAXED) ||
			    __atomic_load_n(&r->lease[1], __ATOMIC_RELAXED) ||
			    dp_raw_syscall(SYS_tgkill, gp_pid, tid, 0) != -ESRCH)
				continue;
			if (gp_take(r, tid))
				return r;
		}
	}
	return NULL;
}

static struct dp_gp_reader *gp_claim(void)
{
	struct dp_gp_reader *r;
	struct gp_chunk *last;

	if (!dp_tls.tid)
		dp_tls.tid = (int)dp_raw_syscall(SYS_gettid, 0, 0, 0);
again:
	/* before the scan: a chunk appended during it has free slots */
	last = gp_last();
	for (struct gp_chunk *c = &gp_chunk0; c; c = gp_next(c)) {
		for (int i = 0; i < GP_CHUNK; i++) {
			r = &c->r[i];
			if (__atomic_load_n(&r->tid, __ATOMIC_RELAXED) ||
			    !gp_take(r, 0))
				continue;
			__atomic_fetch_sub(&gp_free, 1, __ATOMIC_RELAXED);
			return r;
		}
	}
	if ((r = gp_take_dead()))
		return r;
	if (gp_grow_now(last))
		goto again;
	return NULL;
}

/* The first read side of a thread, or one with no slot: on the hit path. */
dp_gp_t dp_gp_enter_slow(void)
{
	unsigned int idx;

	/*
	 * A hit nested in the claim (a signal) takes the shared counters;
	 * with no free slot, the claim takes a dead thread's or adds some.
	 * So does a child sharing this thread's memory and TLS (vfork(),
	 * posix_spawn()): a slot claimed under its tid would be freed once
	 * it has exec'd, while this thread uses it.
	 */
	if (__atomic_load_n(&gp_fast, __ATOMIC_RELAXED) &&
	    !dp_tls.gp_claiming &&
	    dp_raw_syscall(SYS_getpid, 0, 0, 0) == gp_pid) {
		struct dp_gp_reader *r;

		dp_tls.gp_claiming = true;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		r = gp_claim();
		dp_tls.gp = r;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		dp_tls.gp_claiming = false;
		if (r)
			return dp_gp_enter();
	}
	idx = __atomic_load_n(&dp_gp_epoch, __ATOMIC_RELAXED) & 1;
	__atomic_fetch_add(&dp_gp_shared[idx], 1, __ATOMIC_SEQ_CST);
	dp_tls.shared[idx]++;
	return &dp_gp_shared[idx];
}

void dp_gp_leave_shared(dp_gp_t c)
{
	dp_tls.shared[c - dp_gp_shared]--;
	__atomic_fetch_sub(c, 1, __ATOMIC_RELEASE);
}

/* This thread holds a read side. */
static bool gp_held(void)
{
	const struct dp_gp_reader *r = dp_tls.gp;

	return dp_tls.shared[0] || dp_tls.shared[1] ||
	       (r && (r->lease[0] || r->lease[1]));
}

bool dp_gp_for_each(bool (*fn)(struct dp_gp_reader *, void *), void *arg)
{
	for (struct gp_chunk *c = &gp_chunk0; c; c = gp_next(c))
		for (int i = 0; i < GP_CHUNK; i++)
			if (fn(&c->r[i], arg))
				return true;
	return false;
}

static bool thread_gone(int tid)
{
	return syscall(SYS_tgkill, getpid(), tid, 0) && errno == ESRCH;
}

/*
 * Free a slot whose thread @tid is gone (under the mutex), unless a new
 * thread took it over first (gp_take_dead()): marked -1 meanwhile, which
 * no claimer takes, so that no one uses the counters being cleared.
 */
static void gp_release(struct dp_gp_reader *r, int tid)
{
	if (!__atomic_compare_exchange_n(&r->tid, &tid, -1, false,
					 __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
		return;
	__atomic_store_n(&r->lease[0], 0, __ATOMIC_RELAXED);
	__atomic_store_n(&r->lease[1], 0, __ATOMIC_RELAXED);
	__atomic_store_n(&r->tid, 0, __ATOMIC_RELEASE);
	__atomic_fetch_add(&gp_free, 1, __ATOMIC_RELAXED);
}

static void gp_pause(int spins)
{
	struct timespec ts = { 0, 20000 };

	if (spins < 64)
		sched_yield();
	else
		nanosleep(&ts, NULL);
}

/* Until @r holds no read side of parity @idx, or its thread is gone. */
static void gp_wait_reader(struct dp_gp_reader *r, int idx)
{
	for (int spins = 0;
	     __atomic_load_n(&r->lease[idx], __ATOMIC_ACQUIRE); spins++) {
		int tid = __atomic_load_n(&r->tid, __ATOMIC_RELAXED);

		/* checked now and then: a handler that never returned */
		if (spins >= 64 && spins % 64 == 0 && tid > 0 &&
		    thread_gone(tid)) {
			gp_release(r, tid);
			return;
		}
		gp_pause(spins);
	}
}

static void gp_wait(int idx)
{
	const struct dp_gp_reader *self = dp_tls.gp;

	for (struct gp_chunk *c = &gp_chunk0; c; c = gp_next(c))
		for (int i = 0; i < GP_CHUNK; i++)
			if (&c->r[i] != self)
				gp_wait_reader(&c->r[i], idx);
	for (int spins = 0;
	     __atomic_load_n(&dp_gp_shared[idx], __ATOMIC_SEQ_CST) >
	     dp_tls.shared[idx]; spins++)
		gp_pause(spins);
}

/* A full barrier on every thread of the process (A above). */
static void gp_barrier(void)
{
	struct timespec ts = { 0, 1000000 };

	if (!gp_fast) {
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		return;
	}
	/* registered at init, so only a lack of memory can make it fail */
	while (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0))
		nanosleep(&ts, NULL);
}

/*
 * Keep free slots for threads to come: take back those of exited threads
 * (which hold nothing), and add a chunk when few are left.
 */
static void gp_maintain(void)
{
	struct gp_chunk *c, *n;

	if (!gp_fast ||
	    __atomic_load_n(&gp_free, __ATOMIC_RELAXED) >= GP_CHUNK / 4)
		return;
	for (c = &gp_chunk0; c; c = gp_next(c)) {
		for (int i = 0; i < GP_CHUNK; i++) {
			struct dp_gp_reader *r = &c->r[i];
			int tid = __atomic_load_n(&r->tid, __ATOMIC_RELAXED);

			if (tid > 0 && r != dp_tls.gp && !r->lease[0] &&
			    !r->lease[1] && thread_gone(tid))
				gp_release(r, tid);
		}
	}
	if (__atomic_load_n(&gp_free, __ATOMIC_RELAXED) >= GP_CHUNK / 4)
		return;
	n = aligned_alloc(64, sizeof(*n));
	if (!n)
		return;
	memset(n, 0, sizeof(*n));
	if (!gp_append(gp_last(), n))
		free(n);	/* a thread with no slot added one */
}

void dp_synchronize(void)
{
	gp_barrier();
	for (int i = 0; i < 2; i++) {
		unsigned int e = dp_gp_epoch;

		__atomic_store_n(&dp_gp_epoch, e + 1, __ATOMIC_SEQ_CST);
		gp_wait((int)(e & 1));
	}
	gp_maintain();
}

static void gp_init(void)
{
	gp_pid = getpid();
	long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);

	if (cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
	    !syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED,
		     0, 0))
		__atomic_store_n(&gp_fast, true, __ATOMIC_RELEASE);
}

/* In a fork child: this thread is the only one. */
static void gp_fork_child(void)
{
	int n = 0;

	dp_tls.tid = (int)syscall(SYS_gettid);
	gp_pid = getpid();
	for (struct gp_chunk *c = &gp_chunk0; c; c = c->next) {
		for (int i = 0; i < GP_CHUNK; i++) {
			struct dp_gp_reader *r = &c->r[i];

			if (r == dp_tls.gp) {
				r->tid = dp_tls.tid;
				continue;
			}
			r->lease[0] = r->lease[1] = 0;
			r->tid = 0;
			n++;
		}
	}
	gp_free = n;
	for (int i = 0; i < 2; i++)
		dp_gp_shared[i] = dp_tls.shared[i];
}

static void atfork_child(void)
{
	/* the descriptor names the parent's memory: reopen on next use */
	if (mem_fd >= 0)
		close(mem_fd);
	mem_fd = -1;
	/* read sides held by the parent's other threads do not exist here */
	gp_fork_child();
	/* this thread is the only one: whoever held the mutex is gone */
	pthread_mutex_init(&reg_mutex, NULL);
}

/* ---- descriptors ---------------------------------------------------------- */

/*
 * Our descriptors out of the program's way: a program gets the lowest
 * free number from open(), and some print or compare them (fd=4), so
 * what the agent keeps open goes high up, below the soft limit and far
 * under any select() set.  @fd on any failure.
 *
 * Moving is not atomic: between the call that made @fd (at the lowest
 * free number) and its move, an open() of another thread of the program
 * gets the next number instead of that one.  So this is only done where
 * no thread of the program can open anything meanwhile: in the
 * constructor before main(), in dprobe_agent_attach() (dprobe has every
 * other thread stopped), in a fork child's handler (it is the only
 * thread); the control thread makes its descriptors in a table of its
 * own (dp_own_files()).
 */
int dp_fd_high(int fd, bool cloexec)
{
	struct rlimit rl;
	rlim_t top;
	int nfd;

	if (fd < 0 || getrlimit(RLIMIT_NOFILE, &rl))
		return fd;
	top = rl.rlim_cur < 1024 ? rl.rlim_cur : 1024;
	if (top < 128 || fd >= (int)top - 64)
		return fd;
	nfd = fcntl(fd, cloexec ? F_DUPFD_CLOEXEC : F_DUPFD, (int)top - 64);
	if (nfd < 0)
		return fd;
	close(fd);
	return nfd;
}

/* close_range(@lo, @hi) without the system call (before Linux 5.9). */
static void close_each(unsigned int lo, unsigned int hi)
{
	struct rlimit rl;
	unsigned int top = 1u << 20;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < top)
		top = (unsigned int)rl.rlim_cur;
	for (unsigned int fd = lo; fd <= hi && fd < top; fd++)
		close((int)fd);
}

/* Close every descriptor of this thread's table but the @n of @keep. */
static void keep_only(const int *keep, int n)
{
	int v[8], k = 0;
	unsigned int lo = 0;

	for (int i = 0; i < n && k < 8; i++)
		if (keep[i] >= 0)
			v[k++] = keep[i];
	for (int i = 1; i < k; i++)		/* a few: insertion sort */
		for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
			int t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	for (int i = 0; i <= k; i++) {
		unsigned int hi = i < k ? (unsigned int)v[i] : ~0u;

		if (hi > lo && syscall(SYS_close_range, lo, hi - 1, 0) &&
		    errno == ENOSYS)
			close_each(lo, hi - 1);
		if (i < k)
			lo = (unsigned int)v[i] + 1;
	}
}

/*
 * The calling thread (the control thread, channel.c) gets a descriptor
 * table of its own: what it opens from now on (the rings dprobe sends,
 * the files and /proc entries registering reads, our /proc/self/mem)
 * takes no number in the program's table, where a thread of the program
 * opening a file at that moment would get the next number instead, as
 * the kernel's uprobes never make happen.  The copy the kernel makes is
 * emptied at once but for @keep (the channel, the loader watch's
 * eventfd: the same files as the program's table has at those numbers),
 * so that a pipe or socket the program closes is not held open by us.
 * What a hit or a program thread uses stays in the program's table,
 * made where nothing of the program can open meanwhile (dp_fd_high()).
 * 0, or -errno (the thread keeps the program's table).
 */
int dp_own_files(const int *keep, int n)
{
	/*
	 * Refused (a seccomp filter, an old kernel): the thread stays in the
	 * program's table and nothing is closed (keep_only() must only ever
	 * run on a copy, or it would close the program's descriptors).  That
	 * is a safe fallback: every caller tests dp_own_files_now() and then
	 * works in the program's table as the other threads do (the keeper
	 * only ends, files for exec.c are read by the thread that asks, text
	 * is written through the program-table /proc/self/mem, everything is
	 * closed by identity at the end); what is lost is only that a
	 * descriptor the control thread makes takes the lowest free number
	 * for a moment, so an open() of the program's at that instant may
	 * get the next one.
	 */
	if (unshare(CLONE_FILES))
		return -errno;
	keep_only(keep, n);
	own_files = true;
	own_mem_fd = -1;
	return 0;
}

bool dp_own_files_now(void)
{
	return own_files;
}

/* ---- text --------------------------------------------------------------- */

/* /proc/self/mem, in the table of the calling thread: its number or -errno. */
static int mem_open(void)
{
	struct stat st;
	pid_t pid;

	if (own_files) {
		if (own_mem_fd < 0)
			own_mem_fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
		return own_mem_fd < 0 ? -errno : own_mem_fd;
	}
	/* in a batch (under way in this process: a fork child does not go
	 * on with its parent's) the pid was checked at its first write */
	if (mem_fd >= 0 && dp_opt_batching())
		return mem_fd;
	pid = getpid();
	if (mem_fd >= 0 && mem_pid == pid)
		return mem_fd;
	if (mem_fd >= 0)
		close(mem_fd);
	mem_fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	if (mem_fd < 0)
		return -errno;
	mem_fd = dp_fd_high(mem_fd, true);
	mem_pid = pid;
	if (!fstat(mem_fd, &st)) {
		mem_dev = st.st_dev;
		mem_ino = st.st_ino;
	}
	return mem_fd;
}

int dp_text_take_fd(dev_t *dev, ino_t *ino)
{
	int fd;

	dp_lock();
	fd = mem_pid == getpid() ? mem_fd : -1;
	*dev = mem_dev;
	*ino = mem_ino;
	mem_fd = -1;
	dp_unlock();
	return fd;
}

int dp_text_prepare(void)
{
	int fd = mem_open();

	return fd < 0 ? fd : 0;
}

static void sync_cores(void)
{
	if (have_sync_core)
		syscall(SYS_membarrier,
			MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0);
}

void dp_text_sync(void)
{
	sync_cores();
}

int dp_text_write(uint64_t addr, const void *src, size_t len,
		  const void *expect)
{
	int err = dp_text_write_lazy(addr, src, len, expect);

	if (!err)
		sync_cores();
	return err;
}

/*
 * Writes queued by dp_text_queue(): single probe bytes and regions, kept
 * until dp_text_flush() writes them a span at a time (each span the
 * current bytes, read directly, with the queued ones over them): one
 * system call per page of code instead of one per write.
 */
#define QUEUED_MAX 24
#define SPAN_GAP 512			/* joins writes this close */
#define SPAN_MAX DP_PAGE_SIZE

struct queued {
	uint64_t addr;
	size_t seq;			/* queue order, for equal addresses */
	uint8_t len;
	uint8_t bytes[QUEUED_MAX];
};

static struct queued *queue;
static size_t nqueue, capqueue;

static int write_now(uint64_t addr, const void *src, size_t len,
		     const void *expect);

/*
 * Heapsort: libc's qsort() is a function the user may probe, and one the
 * agent called while arming would show as hits of the program's.
 */
static void swap_bytes(uint8_t *a, uint8_t *b, size_t size)
{
	for (size_t i = 0; i < size; i++) {
		uint8_t t = a[i];

		a[i] = b[i];
		b[i] = t;
	}
}

static void sift(uint8_t *v, size_t size, size_t root, size_t n,
		 int (*cmp)(const void *, const void *))
{
	for (size_t child; (child = 2 * root + 1) < n; root = child) {
		if (child + 1 < n && cmp(v + child * size, v + (child + 1) * size) < 0)
			child++;
		if (cmp(v + root * size, v + child * size) >= 0)
			return;
		swap_bytes(v + root * size, v + child * size, size);
	}
}

void dp_sort(void *base, size_t n, size_t size,
	     int (*cmp)(const void *, const void *))
{
	uint8_t *v = base;

	for (size_t i = n / 2; i-- > 0;)
		sift(v, size, i, n, cmp);
	for (size_t end = n; end-- > 1;) {
		swap_bytes(v, v + end * size, size);
		sift(v, size, 0, end, cmp);
	}
}

static int by_addr(const void *a, const void *b)
{
	const struct queued *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* queue[i..j) written as one span; false: not readable directly */
static bool write_span(size_t i, size_t j, uint64_t lo, uint64_t hi)
{
	static uint8_t buf[SPAN_MAX + QUEUED_MAX];
	int fd = mem_open();

	if (fd < 0 || dp_copy_nofault(buf, (const void *)(uintptr_t)lo, hi - lo))
		return false;
	for (size_t k = i; k < j; k++)
		memcpy(buf + (queue[k].addr - lo), queue[k].bytes, queue[k].len);
	return pwrite(fd, buf, hi - lo, (off_t)lo) == (ssize_t)(hi - lo);
}

void dp_text_flush(void)
{
	size_t i = 0, j, n = nqueue;

	if (!n)
		return;
	nqueue = 0;	/* (write_now() below must not flush again) */
	dp_sort(queue, n, sizeof(*queue), by_addr);
	for (; i < n; i = j) {
		uint64_t lo = queue[i].addr, hi = lo + queue[i].len;

		for (j = i + 1; j < n && queue[j].addr <= hi + SPAN_GAP &&
		     queue[j].addr + queue[j].len - lo <= SPAN_MAX; j++)
			if (queue[j].addr + queue[j].len > hi)
				hi = queue[j].addr + queue[j].len;
		if (write_span(i, j, lo, hi))
			continue;
		for (size_t k = i; k < j; k++)
			write_now(queue[k].addr, queue[k].bytes, queue[k].len,
				  NULL);
	}
}

int dp_text_queue(uint64_t addr, const void *src, size_t len,
		  const void *expect)
{
	uint8_t cur[QUEUED_MAX];

	if (len > QUEUED_MAX ||
	    (expect && dp_copy_nofault(cur, (const void *)(uintptr_t)addr, len)))
		return dp_text_write_lazy(addr, src, len, expect);
	if (expect && memcmp(cur, expect, len))
		return -EBUSY;
	if (nqueue == capqueue) {
		size_t cap = capqueue ? 2 * capqueue : 1024;
		struct queued *v = realloc(queue, cap * sizeof(*v));

		if (!v)
			return dp_text_write_lazy(addr, src, len, NULL);
		queue = v;
		capqueue = cap;
	}
	queue[nqueue] = (struct queued){ .addr = addr, .seq = nqueue,
					 .len = (uint8_t)len };
	memcpy(queue[nqueue++].bytes, src, len);
	return 0;
}

int dp_text_write_fresh(uint64_t addr, const void *src, size_t len)
{
	return write_now(addr, src, len, NULL);
}

/* What was queued goes first: writes land in the order they were asked. */
int dp_text_write_lazy(uint64_t addr, const void *src, size_t len,
		       const void *expect)
{
	dp_text_flush();
	return write_now(addr, src, len, expect);
}

static int write_now(uint64_t addr, const void *src, size_t len,
		     const void *expect)
{
	uint8_t cur[DP_SLOT_BYTES];
	int fd = mem_open();

	if (fd < 0)
		return fd;
	if (expect) {
		if (len > sizeof(cur))
			return -EINVAL;
		/* our own memory, read directly (no system call), through
		 * the kernel only where that faults (a page not readable) */
		if (dp_copy_nofault(cur, (const void *)(uintptr_t)addr, len) &&
		    pread(fd, cur, len, (off_t)addr) != (ssize_t)len)
			return -EFAULT;
		if (memcmp(cur, expect, len))
			return -EBUSY;
	}
	if (pwrite(fd, src, len, (off_t)addr) != (ssize_t)len)
		return -EFAULT;
	return 0;
}

/* ---- live patching of one instruction ------------------------------------ */

#define POKE_BITS 8

static struct dp_poke *pokes[1u << POKE_BITS];

static unsigned int poke_hash(uint64_t addr)
{
	return (unsigned int)((addr * 0x9e3779b97f4a7c15ull) >> (64 - POKE_BITS));
}

/* On the hit path: no lock, no call. */
struct dp_poke *dp_poke_lookup(uint64_t addr)
{
	struct dp_poke *p;

	p = __atomic_load_n(&pokes[poke_hash(addr)], __ATOMIC_ACQUIRE);
	for (; p; p = p->hnext)
		if (p->addr == addr)
			return p;
	return NULL;
}

static struct dp_poke *poke_get(uint64_t addr)
{
	struct dp_poke *p = dp_poke_lookup(addr);
	unsigned int h = poke_hash(addr);

	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->addr = addr;
	p->hnext = pokes[h];
	__atomic_store_n(&pokes[h], p, __ATOMIC_RELEASE);
	return p;
}

/*
 * Only the first byte ever changes under a thread that could execute it:
 * while it is the int3, no thread decodes the bytes after it, and the
 * core sync after each write makes every CPU drop what it had fetched.
 */
int dp_text_poke(uint64_t addr, const uint8_t *insn, const uint8_t *old,
		 size_t len, uint64_t dest)
{
	const uint8_t int3 = DP_INT3;
	struct dp_poke *p;
	int err;

	if (len < 2 || len > DP_SLOT_BYTES)
		return -EINVAL;
	if (memcmp((const void *)(uintptr_t)addr, old, len))
		return -EBUSY;
	p = poke_get(addr);
	if (!p)
		return -ENOMEM;
	__atomic_store_n(&p->dest, dest, __ATOMIC_RELAXED);
	__atomic_store_n(&p->seq, p->seq + 1, __ATOMIC_RELEASE);
	err = dp_text_write(addr, &int3, 1, old);
	if (!err) {
		err = dp_text_write(addr + 1, insn + 1, len - 1, old + 1);
		if (err)
			dp_text_write(addr, old, 1, &int3);
		else
			err = dp_text_write(addr, insn, 1, &int3);
	}
	__atomic_store_n(&p->seq, p->seq + 1, __ATOMIC_RELEASE);
	return err;
}

/* ---- our own code -------------------------------------------------------- */

bool dp_in_self(uint64_t addr)
{
	return addr >= self_lo && addr < self_hi;
}

static int find_self(struct dl_phdr_info *info, size_t size, void *data)
{
	uint64_t me = (uint64_t)(uintptr_t)data, lo = UINT64_MAX, hi = 0;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t a = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD)
			continue;
		if (a < lo)
			lo = a;
		if (a + ph->p_memsz > hi)
			hi = a + ph->p_memsz;
	}
	if (me < lo || me >= hi)
		return 0;
	self_lo = lo & ~(DP_PAGE_SIZE - 1);
	self_hi = hi;
	return 1;
}

void dp_warn(const char *msg)
{
	long n = 0;

	while (msg[n])
		n++;
	dp_raw_syscall(SYS_write, 2, (long)msg, n);
}

/* ---- initialisation ---------------------------------------------------- */

/*
 * Emulated calls and returns do not update a CET shadow stack, and the
 * return trampoline would not match it: refuse to probe when one is on.
 */
static bool shadow_stack_on(void)
{
	char buf[4096], *p, *nl;
	ssize_t n;
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	p = strstr(buf, "x86_Thread_features:");
	if (!p)
		return false;
	nl = strchr(p, '\n');
	if (nl)
		*nl = '\0';
	return strstr(p, "shstk") != NULL;
}

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_err;

static void init(void)
{
	long cmds;

	dl_iterate_phdr(find_self, (void *)(uintptr_t)find_self);
	dp_have_fsgsbase = getauxval(AT_HWCAP2) & 2;	/* HWCAP2_FSGSBASE */
	dp_regs_init();
	gp_init();
	cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
	if (cmds > 0 &&
	    (cmds & MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE) &&
	    !syscall(SYS_membarrier,
		     MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0))
		have_sync_core = true;
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
	if (shadow_stack_on()) {
		init_err = -EOPNOTSUPP;
		return;
	}
	init_err = dp_signals_install();
}

int dp_agent_init(void)
{
	pthread_once(&init_once, init);
	return init_err;
}

/*
 * Installed at load so that every later sigaction() of the program goes
 * through us.  The library is linked -z nodelete: once loaded its code
 * stays, so a thread can never return into an unmapped trampoline.
 */
__attribute__((constructor)) static void agent_load(void)
{
	if (!dp_agent_init())
		dp_signals_guard();
}

/* At exit: put every probed byte back; threads still running are safe. */
__attribute__((destructor)) static void agent_unload(void)
{
	dp_agent_disarm_all();
}
