// SPDX-License-Identifier: GPL-2.0
/*
 * Jump optimisation of armed sites, as the kernel's optprobes
 * (kernel/kprobes.c's optimizer, arch/x86/kernel/kprobes/opt.c).
 *
 * A site is optimised when every probe on it allows it (no post_handler,
 * no KPROBE_FLAG_NOOPT, no DPROBE_NOOPT=1 in the environment) and
 * dp_opt_analyze() accepts it over its whole function (known by a sized
 * symbol).  A kretprobe's entry is optimised like any kprobe, as in the
 * kernel: its pre handler only replaces the return address in memory.
 * The instructions covering 5 bytes at the probe point ("the region",
 * after an endbr64 if there is one) are then replaced by a jmp to a
 * detour near the code that calls dp_opt_hit().  At a function entry the
 * detour may also enter the region with a call (see entry_end()).
 * Everything runs synchronously under the registration mutex: the probe
 * works as an int3 first and register_kprobe() returns optimised or not.
 *
 * Patching live code, with the int3 already at the probe address:
 *   1. site->step = the tail (the relocated region + a jmp past it): a
 *      thread trapping on the int3 from now on skips the whole region;
 *      a grace period lets trap handlers that read the old value finish;
 *   2. no thread may be inside the region (or the site's slots, which
 *      jump into it): every thread gets DP_SIG_WHERE and looks at the
 *      context it was interrupted in, and at the contexts saved in the
 *      signal frames above it (a handler running on top of the region);
 *      if any is inside, try again a little later, then give up and stay
 *      an int3;
 *   3. bytes 1..N-1 (rel32, int3 padding), sync cores, then byte 0 = jmp,
 *      sync; each write first verifies the bytes it replaces.  With an
 *      endbr64 the int3 is before the region: byte 0 of the region is
 *      written like the rest, then the endbr64 is restored.
 * Unoptimising reverses it: the int3 back at the probe address, sync,
 * the region's bytes restored, sync.  With an endbr64 a thread may sit
 * between it and the jmp, so step 2 comes first.  Detours are never
 * freed: a thread may be preempted inside one for any length of time.
 *
 * The jump sites of application tracepoints (tracepoint.c) are branches
 * the code does not show until they are enabled: a region never holds a
 * registered site (its nop becomes a jmp) or a site's target (the jmp
 * would land inside the region), and a table that registers, or a site
 * about to be patched, first unoptimises the regions it hits.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "arch/arch.h"
#include "engine/agent/agent.h"

#define TAIL_BYTES 64
#define JUMP_WHY "a tracepoint's jump site or target in the replaced bytes"
#define WHERE_TRIES 20
#define WHERE_WAIT_NS (100 * 1000 * 1000)	/* for the answers of a round */

static int noopt_env = -1;
/* dp_opt_batch_begin() depth, and the sites queued meanwhile */
static int batch_depth;
static struct dp_site **queued;
static size_t nqueued, capqueued;

/* false: no memory to queue @s (the caller optimises it now) */
static bool enqueue(struct dp_site *s)
{
	if (s->queued)
		return true;
	if (nqueued == capqueued) {
		size_t cap = capqueued ? 2 * capqueued : 256;
		struct dp_site **v = realloc(queued, cap * sizeof(*v));

		if (!v)
			return false;
		queued = v;
		capqueued = cap;
	}
	s->queued = true;
	queued[nqueued++] = s;
	return true;
}

static bool env_noopt(void)
{
	if (noopt_env < 0) {
		const char *v = getenv("DPROBE_NOOPT");

		noopt_env = v && *v && strcmp(v, "0");
	}
	return noopt_env;
}

/* Why the probes on @s do not allow optimising it, or NULL. */
static const char *probes_refuse(const struct dp_site *s)
{
	if (env_noopt())
		return "DPROBE_NOOPT is set";
	dp_site_for_each(s, p) {
		if (p->flags & KPROBE_FLAG_NOOPT)
			return "KPROBE_FLAG_NOOPT";
		if (p->post_handler)
			return "a post_handler is set";
	}
	return NULL;
}

static bool all_nosimd(const struct dp_site *s)
{
	dp_site_for_each(s, p)
		if (!(p->flags & KPROBE_FLAG_NOSIMD))
			return false;
	return true;
}

/* ---- building ------------------------------------------------------------ */

/*
 * With an endbr64 the int3 guards the region only for threads coming
 * through the probe address: a branch to the region's first byte would
 * bypass it (dp_opt_analyze() allows that, the jmp starting there).
 */
static bool branch_to(const uint8_t *code, uint64_t start, size_t size,
		      uint64_t to)
{
	for (size_t off = 0; off < size;) {
		struct dp_insn in;
		int len;

		if (!dp_insn_analyze(code + off, size - off, start + off, &in,
				     NULL)) {
			if (dp_insn_has_target(&in) && in.target == to)
				return true;
			len = in.len;
		} else {
			len = dp_insn_length(code + off, size - off);
			if (len <= 0)
				return true;
		}
		off += (size_t)len;
	}
	return false;
}

/* dp_opt_ctx's reader: jump tables, read where the program reads them */
static int read_mem(void *priv, uint64_t addr, void *dst, size_t len)
{
	(void)priv;
	return dp_probe_read(dst, (const void *)(uintptr_t)addr, len);
}

struct span {
	uint64_t lo, hi;	/* [lo, hi) */
};

/* A probe of ours in the span, or a built site's region reaching into it
 * (a short function's, into its padding). */
static bool span_taken(struct dp_site *t, void *arg)
{
	const struct span *r = arg;

	return (t->armed && t->addr >= r->lo && t->addr < r->hi) ||
	       (t->detour && t->patch < r->hi && t->patch + t->nbytes > r->lo);
}

static bool taken(uint64_t lo, uint64_t hi)
{
	struct span r = { lo, hi };
	uint64_t reach = 4 + sizeof(((struct dp_site *)0)->orig);

	return dp_sites_in(lo > reach ? lo - reach : 0, hi, span_taken, &r);
}

/* A short site's nops before its symbol that @r (a function's padding)
 * reaches: the padding ends there. */
static bool cut_at_pre(struct dp_site *t, void *arg)
{
	struct span *r = arg;

	if (t->pre >= r->lo && t->pre < r->hi)
		r->hi = t->pre;
	return false;
}

/* How much of the @n bytes of padding at @end a region may take. */
static size_t pad_free(uint64_t end, size_t n)
{
	struct span r = { end, end + n };

	dp_sites_in(end, end + n + DP_ENTRY_PRE_LEN, cut_at_pre, &r);
	return (size_t)(r.hi - end);
}

/*
 * A -fpatchable-function-entry=N,M site at @start whose jmp short goes to
 * the nops before the symbol (entrysite.h): 2 to 4 bytes of nops at it,
 * and before it 5 one-byte nops that no symbol covers (they are in the
 * same mapping: reading them cannot fault), no probe of ours is in and no
 * region of the function before reaches (its padding, see pad_free()).
 */
static int analyze_short(const uint8_t *code, uint64_t start, uint64_t size,
			 struct dp_optprobe *op)
{
	uint8_t pre[DP_ENTRY_PRE_LEN];
	uint64_t at, lo = start - DP_ENTRY_PRE_LEN;
	size_t n;

	dp_entry_site(code, size, start, &at);
	n = dp_entry_nop_bytes(code + (at - start), size - (at - start));
	if (n < DP_JMP_REL8_LEN || n >= DP_OPT_JMP_LEN ||
	    start < DP_ENTRY_PRE_LEN || !dp_sym_uncovered(lo, start) ||
	    taken(lo, start))
		return -EOPNOTSUPP;
	dp_site_recover(lo, pre, sizeof(pre));
	return dp_opt_analyze_short(code, start, size, pre, op, NULL);
}

static int analyze(struct dp_site *s, struct dp_optprobe *op, bool *entry)
{
	uint8_t pad[DP_OPT_JMP_LEN + 8];
	struct dp_opt_ctx c = { .read = read_mem, .pad = pad };
	uint64_t start, size;
	uint8_t *code;
	int err;

	if (dp_sym_func_bounds(s->addr, &start, &size)) {
		s->why = "no function symbol with a size";
		return -ENOENT;
	}
	code = malloc(size);
	if (!code) {
		s->why = "out of memory";
		return -ENOMEM;
	}
	dp_site_recover(start, code, size);
	c.npad = pad_free(start + size, dp_sym_func_pad(start + size,
							sizeof(pad)));
	dp_site_recover(start + size, pad, c.npad);
	c.fcode = code;
	c.fstart = start;
	c.fsize = size;
	*entry = s->addr == start;
	/* else the nops at the symbol are relocated as any instruction */
	if (!*entry || analyze_short(code, start, size, op))
		err = dp_opt_analyze_in(&c, s->addr, op, &s->why);
	else
		err = 0;
	if (!err && op->nbytes > sizeof(s->orig)) {
		s->why = "too many bytes to replace";
		err = -EOPNOTSUPP;
	}
	if (!err && op->patch != s->addr &&
	    branch_to(code, start, size, op->patch)) {
		s->why = "a branch targets the instruction after the endbr64";
		err = -EOPNOTSUPP;
	}
	if (err && !s->why)
		s->why = "the function cannot be analysed";
	free(code);
	return err;
}

/* The region relocated to @at, then a jmp past it: where the int3 skips. */
static int make_tail(const struct dp_optprobe *op, uint64_t at, uint8_t *buf)
{
	struct dp_emit e;
	int err;

	dp_emit_init(&e, buf, TAIL_BYTES, at);
	err = dp_opt_relocate(&e, op);
	if (err)
		return err;
	/* the tail is in reach of the region: the detour just before it is */
	err = dp_emit_jmp(&e, op->patch + op->nbytes);
	dp_emit_int3(&e, e.cap - e.len);
	return err;
}

/*
 * At a function entry the detour does not end in its own copy of the
 * region: when the pre handlers have just hijacked the return address
 * (the slot at (%rsp) holds dp_kretprobe_trampoline), it goes to
 * dp_kretprobe_call (trampoline.S) with the tail's address at -16(%rsp),
 * to enter the tail with a real call (see there); otherwise it jumps to
 * the tail.  %rax is kept at -8(%rsp) meanwhile; the red zone and the
 * flags are dead at an entry.  The tail's address is stored in one piece,
 * so that the load of it can be forwarded from the store.
 *
 * The end of the detour from dp_opt_make_detour() (the relocated region
 * and the jump back) is replaced: its start is the length of a detour
 * with nothing to relocate, less its jump back (a rel32: its target is
 * near).  Returns the detour's new length, or @n if its first bytes are
 * not what was expected.
 */
static int entry_end(const struct dp_optprobe *op, uint64_t at, uint64_t arg,
		     uint64_t tail, uint8_t *detour, int n)
{
	const uint64_t handler = (uint64_t)(uintptr_t)dp_opt_entry;
	const uint64_t tramp = (uint64_t)(uintptr_t)dp_kretprobe_trampoline;
	const uint64_t call = (uint64_t)(uintptr_t)dp_kretprobe_call;
	static const uint8_t save_rax[] = { 0x48, 0x89, 0x44, 0x24, 0xf8 };
	static const uint8_t load_rax[] = { 0x48, 0x8b, 0x44, 0x24, 0xf8 };
	static const uint8_t movabs_rax[] = { 0x48, 0xb8 };
	static const uint8_t cmp_rax_top[] = { 0x48, 0x39, 0x04, 0x24 };
	static const uint8_t store_rax_16[] = { 0x48, 0x89, 0x44, 0x24, 0xf0 };
	uint8_t bare[DP_OPT_DETOUR_SIZE];
	struct dp_optprobe none = *op;
	struct dp_emit e;
	int k;

	none.ninsn = 0;
	none.patch = at;
	none.nbytes = 0;
	k = dp_opt_make_detour(&none, at, handler, arg, bare, sizeof(bare));
	if (k < 5 || k - 5 > n || memcmp(bare, detour, (size_t)k - 5) ||
	    k - 5 + 64 > DP_OPT_DETOUR_SIZE)
		return n;
	dp_emit_init(&e, detour, DP_OPT_DETOUR_SIZE, at);
	e.len = (size_t)k - 5;
	/* mov %rax, -8(%rsp); movabs $tramp, %rax; cmp %rax, (%rsp) */
	dp_emit_bytes(&e, save_rax, sizeof(save_rax));
	dp_emit_bytes(&e, movabs_rax, sizeof(movabs_rax));
	dp_emit_u64(&e, tramp);
	dp_emit_bytes(&e, cmp_rax_top, sizeof(cmp_rax_top));
	/* mov -8(%rsp), %rax; jne tail (near: right after the detour) */
	dp_emit_bytes(&e, load_rax, sizeof(load_rax));
	dp_emit_jcc(&e, 0x5, tail);
	/* hijacked: movabs $tail, %rax; mov %rax, -16(%rsp); rax back */
	dp_emit_bytes(&e, save_rax, sizeof(save_rax));
	dp_emit_bytes(&e, movabs_rax, sizeof(movabs_rax));
	dp_emit_u64(&e, tail);
	dp_emit_bytes(&e, store_rax_16, sizeof(store_rax_16));
	dp_emit_bytes(&e, load_rax, sizeof(load_rax));
	dp_emit_jmp_far(&e, call);
	return (int)e.len;
}

/*
 * Where the tail goes after a detour of @n bytes: right after it (16-byte
 * aligned), leaving room for entry_end()'s code at a function entry.
 */
static size_t tail_offset(int n, bool entry_end_too)
{
	size_t off = ((size_t)n + (entry_end_too ? 80 : 0) + 15) & ~(size_t)15;

	return off < DP_OPT_DETOUR_SIZE ? off : DP_OPT_DETOUR_SIZE;
}

/* The jmp over the region (padded with int3), and a short site's jmp
 * before the symbol that its jmp short goes to. */
static int make_jumps(struct dp_site *s, const struct dp_optprobe *op,
		      uint64_t detour)
{
	if (op->entry_site != DP_ENTRY_PATCHABLE_SHORT) {
		s->pre = 0;
		memset(s->jmp, DP_INT3, op->nbytes);
		return dp_opt_make_jump(op, detour, s->jmp);
	}
	s->pre = dp_opt_pre_addr(op);
	return dp_opt_make_pre_jump(op, detour, s->prejmp) ||
	       dp_opt_make_jump_short(op, s->jmp) ? -ERANGE : 0;
}

static int build(struct dp_site *s)
{
	struct dp_optprobe op;
	uint8_t buf[DP_OPT_DETOUR_SIZE + TAIL_BYTES];
	uint64_t at;
	size_t off;
	bool entry, ee;
	int n;

	if (analyze(s, &op, &entry))
		return -EOPNOTSUPP;
	/* the most a detour and its tail take; what is not used goes back
	 * to the page (dp_slots_trim()), so detours pack near their sites */
	at = dp_slots_alloc_near(op.patch, sizeof(buf));
	if (!at) {
		s->why = "no memory for a detour within reach";
		return -ENOMEM;
	}
	dp_xsave_setup();
	memset(buf, DP_INT3, sizeof(buf));
	n = dp_opt_make_detour(&op, at, (uint64_t)(uintptr_t)dp_opt_entry,
			       (uint64_t)(uintptr_t)s, buf, DP_OPT_DETOUR_SIZE);
	ee = entry && !op.save_flags;
	off = n < 0 ? 0 : tail_offset(n, ee);
	if (n < 0 || make_tail(&op, at + off, buf + off) ||
	    make_jumps(s, &op, at)) {
		/* the memory stays allocated, unused: it is never freed */
		s->why = "an operand or branch target of the region cannot "
			 "reach from the detour";
		return -ERANGE;
	}
	if (ee)
		n = entry_end(&op, at, (uint64_t)(uintptr_t)s, at + off, buf,
			      n);
	if ((size_t)n > off) {
		s->why = "the detour outgrew its room";
		return -ERANGE;
	}
	dp_slots_trim(at, sizeof(buf), off + TAIL_BYTES);
	/* unreachable until the jmp is written, after a sync (lazy): one
	 * write for the detour and its tail */
	if (dp_text_write_fresh(at, buf, off + TAIL_BYTES)) {
		s->why = "cannot write the detour";
		return -EFAULT;
	}
	s->patch = op.patch;
	s->nbytes = op.nbytes;
	s->flags_live = op.save_flags;
	s->detour_len = (unsigned int)n;
	dp_site_recover(op.patch, s->orig, op.nbytes);
	s->detour = at;
	s->tail = at + off;
	return 0;
}

/* ---- where the threads are ----------------------------------------------- */

static void nap(long ns)
{
	struct timespec ts = { 0, ns };

	nanosleep(&ts, NULL);
}

static bool send_where(pid_t pid, pid_t tid, int gen)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	si.si_signo = DP_SIG_WHERE;
	si.si_code = SI_QUEUE;
	si.si_pid = pid;
	si.si_uid = getuid();
	si.si_value.sival_ptr = (void *)(uintptr_t)
		((uint64_t)DP_WHERE_MAGIC << 32 | (uint32_t)gen);
	return !syscall(SYS_rt_tgsigqueueinfo, pid, tid, DP_SIG_WHERE, &si);
}

/*
 * A thread that is not running (blocked in a system call: a sleep, a
 * read, a futex wait) is looked at without a signal: the kernel shows
 * its stack pointer and instruction pointer in /proc/self/task/TID/syscall.
 * A signal would end its sleep, poll or epoll_wait with EINTR (they are
 * not restarted after a handler, SA_RESTART or not): the program would
 * see its timeouts cut short.  1: inside, 0: outside, -1: running (ask
 * it with the signal).
 */
static int where_blocked(pid_t tid)
{
	char path[64], buf[256];
	unsigned long long sp, pc;
	long nr;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* "NR A1 ... A6 SP PC" in a system call, "-1 SP PC" blocked outside
	 * one, "running" */
	if (sscanf(buf, "%ld %*s %*s %*s %*s %*s %*s %llx %llx", &nr, &sp,
		   &pc) == 3 && nr >= 0)
		return dp_opt_where_blocked(sp, pc);
	if (sscanf(buf, "%ld %llx %llx", &nr, &sp, &pc) == 3 && nr == -1)
		return dp_opt_where_blocked(sp, pc);
	return -1;
}

/*
 * The ranges a round asks about live in one buffer, replaced (never
 * freed) when it must grow: an answer that comes late may still read it.
 */
static struct dp_where_range *where_buf;
static size_t where_cap, where_n;

static bool where_room(size_t n)
{
	struct dp_where_range *v;
	size_t cap = n < 16 ? 16 : 2 * n;

	if (n <= where_cap)
		return true;
	v = calloc(cap, sizeof(*v));
	if (!v)
		return false;
	where_buf = v;
	where_cap = cap;
	return true;
}

/* @s's replaced bytes (lo, hi), open at its int3, and its slot pair. */
static void where_add(const struct dp_site *s, uint64_t lo, uint64_t hi)
{
	where_buf[where_n++] = (struct dp_where_range){ lo + 1, hi, lo, 0 };
	if (s->slot)
		where_buf[where_n++] = (struct dp_where_range){
			s->slot, s->slot + DP_SLOT_BYTES, 0, 0 };
}

static int by_start(const void *a, const void *b)
{
	const struct dp_where_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static void where_sort(void)
{
	uint64_t m = 0;

	dp_sort(where_buf, where_n, sizeof(*where_buf), by_start);
	for (size_t i = 0; i < where_n; i++) {
		if (where_buf[i].end > m)
			m = where_buf[i].end;
		where_buf[i].maxend = m;
	}
}

/*
 * One round: is any other thread inside the ranges of where_buf?
 * 0: none, -EBUSY: some, -ETIMEDOUT: some did not answer (blocked the
 * signal, stopped, or exited meanwhile).
 */
static int where_round(void)
{
	pid_t pid = getpid(), self = (pid_t)syscall(SYS_gettid);
	struct dirent *d;
	int sent = 0, inside = 0, gen;
	DIR *dir;

	dp_where.r = where_buf;
	dp_where.n = where_n;
	dp_where.restorer = dp_sigreturn_addr();
	__atomic_store_n(&dp_where.pid, pid, __ATOMIC_RELAXED);
	__atomic_store_n(&dp_where.inside, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&dp_where.answers, 0, __ATOMIC_RELAXED);
	gen = dp_where.gen + 1;
	__atomic_store_n(&dp_where.gen, gen, __ATOMIC_RELEASE);
	dir = opendir("/proc/self/task");
	if (!dir)
		return -ETIMEDOUT;
	while ((d = readdir(dir))) {
		pid_t tid = (pid_t)atoi(d->d_name);
		int at;

		if (tid <= 0 || tid == self)
			continue;
		at = where_blocked(tid);
		if (at > 0)
			inside++;
		else if (at < 0 && send_where(pid, tid, gen))
			sent++;
	}
	closedir(dir);
	if (inside) {
		__atomic_store_n(&dp_where.gen, gen + 1, __ATOMIC_RELEASE);
		return -EBUSY;
	}
	for (long waited = 0; waited < WHERE_WAIT_NS; waited += 20000) {
		if (__atomic_load_n(&dp_where.answers, __ATOMIC_ACQUIRE) >= sent)
			return __atomic_load_n(&dp_where.inside,
					       __ATOMIC_RELAXED) ? -EBUSY : 0;
		nap(20000);
	}
	return -ETIMEDOUT;
}

/* Rounds until no thread is inside where_buf's ranges, or a few tries. */
static int wait_outside_ranges(int tries)
{
	int err = 0;

	where_sort();
	for (int i = 0; i < tries; i++) {
		err = where_round();
		if (!err || err == -ETIMEDOUT)
			break;
		nap(200000);
	}
	/* answers of this round that come late must count for nothing */
	__atomic_store_n(&dp_where.gen, dp_where.gen + 1, __ATOMIC_RELEASE);
	return err;
}

/* Rounds until no thread is inside (@lo, @hi) or @s's slots; 0 or -errno. */
static int wait_outside(const struct dp_site *s, uint64_t lo, uint64_t hi)
{
	if (!where_room(2))
		return -ENOMEM;
	where_n = 0;
	where_add(s, lo, hi);
	return wait_outside_ranges(WHERE_TRIES);
}

/* ---- patching ------------------------------------------------------------ */

static int write_region(const struct dp_site *s, const uint8_t *to,
			const uint8_t *from)
{
	int err = dp_text_write(s->patch + 1, to + 1, s->nbytes - 1, from + 1);

	if (!err)
		err = dp_text_write(s->patch, to, 1, from);
	return err;
}

static const uint8_t pre_nops[DP_ENTRY_PRE_LEN] = { 0x90, 0x90, 0x90, 0x90,
						    0x90 };

/*
 * A short site's jmp before the symbol, written (and the cores synced)
 * before the jmp short that leads to it; not again when it is there: a
 * thread may be about to run it.
 */
static int write_pre(struct dp_site *s)
{
	int err;

	if (!s->pre || s->pre_in)
		return 0;
	err = dp_text_write(s->pre, s->prejmp, DP_ENTRY_PRE_LEN, pre_nops);
	if (!err)
		s->pre_in = true;
	return err;
}

/* The nops before the symbol of the short sites of @v whose jmp short
 * is gone, once no thread is about to run their jmp (one round for all
 * of them); if one may be, each stays, unreachable. */
static void restore_pres(struct dp_site **v, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += v[i]->pre_in && !v[i]->optimized;
	if (!k || !where_room(k))
		return;
	where_n = 0;
	for (size_t i = 0; i < n; i++)
		if (v[i]->pre_in && !v[i]->optimized)
			where_buf[where_n++] = (struct dp_where_range){
				v[i]->pre, v[i]->pre + DP_ENTRY_PRE_LEN, 0, 0 };
	if (wait_outside_ranges(1))
		return;
	for (size_t i = 0; i < n; i++) {
		if (!v[i]->pre_in || v[i]->optimized)
			continue;
		if (!dp_text_queue(v[i]->pre, pre_nops, DP_ENTRY_PRE_LEN,
				   v[i]->prejmp))
			v[i]->pre_in = false;
	}
	dp_text_flush();
	dp_text_sync();
}

static void optimize(struct dp_site *s)
{
	const uint8_t int3 = DP_INT3;
	uint8_t gate[sizeof(s->orig)];
	int err;

	__atomic_store_n(&s->step, s->tail, __ATOMIC_RELEASE);
	dp_synchronize();
	err = wait_outside(s, s->addr, s->patch + s->nbytes);
	if (err) {
		s->why = err == -EBUSY ? "a thread stayed inside the replaced bytes" :
			 "a thread did not answer (blocked signal?)";
		__atomic_store_n(&s->step, 0, __ATOMIC_RELEASE);
		return;
	}
	/* what is there now: the int3 at byte 0 unless behind an endbr64 */
	memcpy(gate, s->orig, s->nbytes);
	if (s->patch == s->addr)
		gate[0] = DP_INT3;
	err = write_pre(s);
	if (!err)
		err = write_region(s, s->jmp, gate);
	if (!err && s->patch != s->addr)
		err = dp_text_write(s->addr, s->insn.bytes, 1, &int3);
	if (err) {
		/* the code changed under us: leave what is there alone */
		s->why = "the code changed while it was being patched";
		return;
	}
	s->optimized = true;
	s->why = NULL;
}

int dp_opt_unoptimize(struct dp_site *s)
{
	const uint8_t int3 = DP_INT3;

	if (!s->optimized)
		return 0;
	if (s->patch == s->addr) {
		/* the int3 first: then nobody enters the half-restored bytes */
		dp_text_write(s->addr, &int3, 1, s->jmp);
		dp_text_write(s->addr + 1, s->orig + 1, s->nbytes - 1,
			      s->jmp + 1);
		s->optimized = false;
	} else {
		dp_text_write(s->addr, &int3, 1, s->insn.bytes);
		if (wait_outside(s, s->addr, s->patch + s->nbytes)) {
			/*
			 * A thread sits between the endbr64 and the jmp: the
			 * jmp stays (the detour with no probe is harmless)
			 * and the int3 keeps sending threads to the tail.
			 */
			s->why = "could not be unoptimised: the jmp stays";
			return -EBUSY;
		}
		write_region(s, s->orig, s->jmp);
		s->optimized = false;
	}
	restore_pres(&s, 1);
	__atomic_store_n(&s->step, 0, __ATOMIC_RELEASE);
	return 0;
}

static bool armed_other(struct dp_site *t, void *arg)
{
	return t != arg && t->armed;
}

/* Another armed site inside @s's region: its int3 would be overwritten. */
static bool region_has_probe(struct dp_site *s)
{
	return dp_sites_in(s->addr + 1, s->patch + s->nbytes, armed_other, s) ||
	       (s->pre && dp_sites_in(s->pre, s->addr, armed_other, s));
}

static bool make_room_at(struct dp_site *t, void *arg)
{
	uint64_t addr = *(const uint64_t *)arg;

	if (t->pre_in && addr - t->pre < DP_ENTRY_PRE_LEN) {
		dp_opt_unoptimize(t);
		restore_pres(&t, 1);
		if (!t->optimized)
			t->why = "another probe in the nops before the symbol";
		return false;
	}
	if (!t->optimized || addr <= t->addr || addr >= t->patch + t->nbytes)
		return false;
	dp_opt_unoptimize(t);
	if (!t->optimized)
		t->why = "another probe in the replaced bytes";
	return false;
}

void dp_opt_make_room(uint64_t addr)
{
	/* a region starts at its site, after an endbr64 at most */
	uint64_t reach = 4 + sizeof(((struct dp_site *)0)->orig);

	/* (or, for a short site, its jmp before the symbol: up to 5 after) */
	dp_sites_in(addr > reach ? addr - reach : 0,
		    addr + DP_ENTRY_PRE_LEN + 1, make_room_at, &addr);
}

int dp_opt_clear_jump(uint64_t site, uint64_t target)
{
	int err = 0;

	for (struct dp_site *t = dp_sites_first(); t; t = t->all_next) {
		if (!t->optimized ||
		    !dp_jump_hits(site, target, t->addr, t->patch + t->nbytes))
			continue;
		if (dp_opt_unoptimize(t))
			err = -EBUSY;
		else
			t->why = JUMP_WHY;
	}
	return err;
}

static bool site_wanted(const struct dp_site *s)
{
	dp_site_for_each(s, p)
		if (!kprobe_disabled(p))
			return true;
	return false;
}

void dp_opt_update(struct dp_site *s)
{
	const char *refuse = probes_refuse(s);

	__atomic_store_n(&s->nosimd, all_nosimd(s), __ATOMIC_RELEASE);
	if (s->optimized) {
		if (refuse || !site_wanted(s))
			dp_opt_unoptimize(s);
		if (!s->optimized)
			s->why = refuse;
		return;
	}
	if (!s->armed || !site_wanted(s))
		return;
	if (refuse) {
		s->why = refuse;
		return;
	}
	if (!s->opt_tried) {
		s->opt_tried = true;
		if (build(s))
			return;
	}
	if (!s->detour)
		return;	/* refused for good: s->why says why */
	if (region_has_probe(s)) {
		s->why = "another probe in the replaced bytes";
		return;
	}
	/*
	 * Checked each time, not once in analyze(): objects with jump
	 * tables come and go, and a tracepoint's target is often in
	 * another function (GCC's FN.cold), which the branches that
	 * dp_opt_analyze() looks at cannot show.
	 */
	if (dp_tp_jumps_hit(s->addr, s->patch + s->nbytes)) {
		s->why = JUMP_WHY;
		return;
	}
	if (!batch_depth || !enqueue(s))
		optimize(s);
}

/* ---- batches --------------------------------------------------------------- */

void dp_opt_batch_begin(void)
{
	dp_lock();
	batch_depth++;
	dp_unlock();
}

bool dp_opt_batching(void)
{
	return batch_depth > 0;
}

/* Still to be optimised, as dp_opt_update() decided when it queued it? */
static bool still_wanted(struct dp_site *s)
{
	return s->armed && !s->optimized && s->detour && site_wanted(s) &&
	       !probes_refuse(s) && !region_has_probe(s) &&
	       !dp_tp_jumps_hit(s->addr, s->patch + s->nbytes);
}

/* The bytes at @s's region now: the int3 at byte 0 unless an endbr64
 * comes first. */
static void gate_of(const struct dp_site *s, uint8_t *gate)
{
	memcpy(gate, s->orig, s->nbytes);
	if (s->patch == s->addr)
		gate[0] = DP_INT3;
}

/* write_pre() in a batch's first phase: unreachable until its second. */
static bool queue_pre(struct dp_site *s)
{
	if (!s->pre || s->pre_in)
		return false;
	if (dp_text_queue(s->pre, s->prejmp, DP_ENTRY_PRE_LEN, pre_nops))
		return true;
	s->pre_in = true;
	return false;
}

/*
 * optimize() for @n sites at once, each phase written for all of them
 * and ended by one sync: bytes 1..N-1, then byte 0 (the jmp), then the
 * endbr64s put back over their int3s.  A site whose bytes changed under
 * us is left as it is, as optimize() leaves it.
 */
static void patch_all(struct dp_site **v, size_t n)
{
	const uint8_t int3 = DP_INT3;
	uint8_t gate[sizeof(v[0]->orig)];
	bool *bad = calloc(n, sizeof(*bad));

	if (!bad) {
		for (size_t i = 0; i < n; i++)
			optimize(v[i]);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		gate_of(v[i], gate);
		bad[i] = queue_pre(v[i]) ||
			 dp_text_queue(v[i]->patch + 1, v[i]->jmp + 1,
				       v[i]->nbytes - 1, gate + 1) != 0;
	}
	dp_text_flush();
	dp_text_sync();
	for (size_t i = 0; i < n; i++) {
		gate_of(v[i], gate);
		bad[i] = bad[i] || dp_text_queue(v[i]->patch, v[i]->jmp,
						      1, gate);
	}
	dp_text_flush();
	dp_text_sync();
	for (size_t i = 0; i < n; i++)
		if (!bad[i] && v[i]->patch != v[i]->addr)
			bad[i] = dp_text_queue(v[i]->addr,
						    v[i]->insn.bytes, 1, &int3);
	dp_text_flush();
	dp_text_sync();
	for (size_t i = 0; i < n; i++) {
		if (bad[i]) {
			v[i]->why = "the code changed while it was being patched";
			continue;
		}
		v[i]->optimized = true;
		v[i]->why = NULL;
	}
	free(bad);
}

static void optimize_all(struct dp_site **v, size_t n)
{
	int err;

	if (!n)
		return;
	for (size_t i = 0; i < n; i++)
		__atomic_store_n(&v[i]->step, v[i]->tail, __ATOMIC_RELEASE);
	dp_synchronize();
	err = where_room(2 * n) ? 0 : -ENOMEM;
	if (!err) {
		where_n = 0;
		for (size_t i = 0; i < n; i++)
			where_add(v[i], v[i]->addr,
				  v[i]->patch + v[i]->nbytes);
		/* one try: the sites a thread is in are then done one by one */
		err = wait_outside_ranges(1);
	}
	if (!err) {
		patch_all(v, n);
		return;
	}
	for (size_t i = 0; i < n; i++)
		__atomic_store_n(&v[i]->step, 0, __ATOMIC_RELEASE);
	for (size_t i = 0; i < n; i++)
		optimize(v[i]);
}

void dp_opt_batch_end(void)
{
	size_t n = 0;

	dp_lock();
	if (--batch_depth) {
		dp_unlock();
		return;
	}
	/* the int3s, slots and detours written meanwhile */
	dp_text_flush();
	dp_text_sync();
	for (size_t i = 0; i < nqueued; i++) {
		queued[i]->queued = false;
		if (still_wanted(queued[i]))
			queued[n++] = queued[i];
	}
	optimize_all(queued, n);
	free(queued);
	queued = NULL;
	nqueued = capqueued = 0;
	dp_unlock();
}

/*
 * dp_opt_unoptimize() for @n sites at once (a session's end): the int3s
 * over every jmp, one sync, every region's other bytes back, one sync.
 * A site behind an endbr64 needs its own round of asking where the
 * threads are: it is done alone.
 */
void dp_opt_unoptimize_many(struct dp_site **v, size_t n)
{
	const uint8_t int3 = DP_INT3;
	bool any = false;

	for (size_t i = 0; i < n; i++) {
		if (!v[i]->optimized || v[i]->patch != v[i]->addr)
			continue;
		dp_text_queue(v[i]->addr, &int3, 1, v[i]->jmp);
		any = true;
	}
	if (!any)
		goto alone;
	dp_text_flush();
	dp_text_sync();
	for (size_t i = 0; i < n; i++) {
		struct dp_site *s = v[i];

		if (!s->optimized || s->patch != s->addr)
			continue;
		dp_text_queue(s->addr + 1, s->orig + 1, s->nbytes - 1,
			      s->jmp + 1);
	}
	dp_text_flush();
	dp_text_sync();
	/* only now may a trap run the first instruction and go on after it */
	for (size_t i = 0; i < n; i++) {
		struct dp_site *s = v[i];

		if (!s->optimized || s->patch != s->addr)
			continue;
		s->optimized = false;
		__atomic_store_n(&s->step, 0, __ATOMIC_RELEASE);
	}
alone:
	for (size_t i = 0; i < n; i++)
		dp_opt_unoptimize(v[i]);
	restore_pres(v, n);
}
