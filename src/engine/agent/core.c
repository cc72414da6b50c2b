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
#include <fcntl.h>
#include <link.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "engine/agent/agent.h"

__thread struct dp_tls dp_tls __attribute__((tls_model("initial-exec")));

bool dp_have_fsgsbase;

static pthread_mutex_t reg_mutex = PTHREAD_MUTEX_INITIALIZER;
static int mem_fd = -1;
static pid_t mem_pid;
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

/*
 * A fork while another thread registers must not copy our structures
 * half-updated: the mutex is held across it.  Not from a handler: another
 * thread could be holding it, waiting for this thread's read side.
 */
static bool fork_locked;

static void atfork_prepare(void)
{
	fork_locked = !dp_tls.depth;
	if (fork_locked)
		pthread_mutex_lock(&reg_mutex);
}

static void atfork_parent(void)
{
	if (fork_locked)
		pthread_mutex_unlock(&reg_mutex);
}

/* ---- grace periods -------------------------------------------------------- */

static struct {
	_Atomic long n;
	char pad[64 - sizeof(long)];
} gp_readers[2] __attribute__((aligned(64)));
static _Atomic unsigned long gp_epoch;

static void atfork_child(void)
{
	/* the descriptor names the parent's memory: reopen on next use */
	if (mem_fd >= 0)
		close(mem_fd);
	mem_fd = -1;
	/* read sides held by the parent's other threads do not exist here */
	for (int i = 0; i < 2; i++)
		atomic_store(&gp_readers[i].n, (long)dp_tls.lease[i]);
	/* this thread is the only one: whoever held the mutex is gone */
	pthread_mutex_init(&reg_mutex, NULL);
}

int dp_gp_enter(void)
{
	int idx = (int)(atomic_load_explicit(&gp_epoch, memory_order_relaxed) & 1);

	/* a full barrier: the probe lists are read after this is visible */
	atomic_fetch_add_explicit(&gp_readers[idx].n, 1, memory_order_seq_cst);
	dp_tls.lease[idx]++;
	return idx;
}

void dp_gp_leave(int idx)
{
	dp_tls.lease[idx]--;
	atomic_fetch_sub_explicit(&gp_readers[idx].n, 1, memory_order_release);
}

static void gp_wait(int idx)
{
	struct timespec ts = { 0, 20000 };
	int spins = 0;

	while (atomic_load_explicit(&gp_readers[idx].n, memory_order_seq_cst) >
	       (long)dp_tls.lease[idx]) {
		if (++spins < 64)
			sched_yield();
		else
			nanosleep(&ts, NULL);
	}
}

/*
 * Two flips, as SRCU does: a reader that read the epoch just before the
 * first flip may increment the old counter after we saw it drained; it
 * is caught by the second.
 */
void dp_synchronize(void)
{
	for (int i = 0; i < 2; i++) {
		unsigned long e = atomic_load(&gp_epoch);

		atomic_store(&gp_epoch, e + 1);
		gp_wait((int)(e & 1));
	}
}

/* ---- text --------------------------------------------------------------- */

static int mem_open(void)
{
	pid_t pid = getpid();

	if (mem_fd >= 0 && mem_pid == pid)
		return 0;
	if (mem_fd >= 0)
		close(mem_fd);
	mem_fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	if (mem_fd < 0)
		return -errno;
	mem_pid = pid;
	return 0;
}

static void sync_cores(void)
{
	if (have_sync_core)
		syscall(SYS_membarrier,
			MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0);
}

int dp_text_write(uint64_t addr, const void *src, size_t len,
		  const void *expect)
{
	uint8_t cur[DP_SLOT_BYTES];
	int err = mem_open();

	if (err)
		return err;
	if (expect) {
		if (len > sizeof(cur))
			return -EINVAL;
		if (pread(mem_fd, cur, len, (off_t)addr) != (ssize_t)len)
			return -EFAULT;
		if (memcmp(cur, expect, len))
			return -EBUSY;
	}
	if (pwrite(mem_fd, src, len, (off_t)addr) != (ssize_t)len)
		return -EFAULT;
	sync_cores();
	return 0;
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
