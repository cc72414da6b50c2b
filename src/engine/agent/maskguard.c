// SPDX-License-Identifier: GPL-2.0
/*
 * Jump guards on libc's sigprocmask() and pthread_sigmask(): the guards
 * of signal.c without an int3, where the code allows it.
 *
 * An int3 guard kills a thread that meets it with SIGTRAP blocked, and
 * glibc has such threads we cannot reach: posix_spawn() (and system(),
 * popen(), which use it) blocks every signal with a raw system call,
 * then its child, running on our memory until it execs, calls
 * sigprocmask() (glibc 2.36's __spawni_child: once to read the mask, and
 * again to set the one asked for with POSIX_SPAWN_SETSIGMASK).
 *
 * So the first byte of the function (after an endbr64) becomes a jmp
 * rel32 and nothing else changes: the four bytes after it, which stay the code's own, are
 * its displacement.  The jump lands where they say, and a stub of ours
 * is mapped there when that address is free.  A one-byte write: a thread
 * runs either the old instruction or the jump, never a mix, and threads
 * past the first instruction run unchanged code; putting the byte back
 * is as safe.  No signal is involved: a thread may meet it with every
 * signal blocked.
 *
 * The stub loads the tail's address into %r11 (free at a call) and jumps
 * to dp_maskguard_entry (maskguard_entry.S); the tail is the first
 * instruction relocated, then a jump to the second.  The entry leaves
 * calls that cannot block SIGTRAP to the tail; otherwise it calls
 * dp_maskguard_set() for a copy of the set without SIGTRAP and calls the
 * function on it from a frame of its own.  Stubs and tails are never
 * unmapped (a thread may be in one at any time) and are reused by the
 * next session.
 *
 * Where the stub cannot go (the address is taken, the first instruction
 * is a branch or cannot be relocated), a function that only calls another
 * guarded by a jump needs no guard of its own (glibc's sigprocmask()
 * calls pthread_sigmask()); otherwise signal.c's int3 guard stays.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "arch/arch.h"
#include "engine/agent/agent.h"

#define JMP_REL32 0xe9
/* movabs $tail, %r11; jmp *0(%rip); .quad entry */
#define STUB_BYTES (10 + 14)
#define CODE_BYTES (STUB_BYTES + DP_INSN_SLOT_SIZE)
#define MAX_GUARDS 4

struct maskguard {
	uint64_t fn;		/* the guarded function */
	uint64_t addr;		/* the byte that jumps: fn's, or after endbr64 */
	uint8_t orig;		/* its own value */
	bool covered;		/* no jump: it only calls a guarded one */
	bool armed;		/* the jmp is what the code has at addr */
};

static struct maskguard mg[MAX_GUARDS];
static int nmg;
/* the process the guards were armed in (a vfork child shares them) */
static pid_t armed_pid;

/* The pages of [@at, @at + @len) mapped for us, nothing replaced. */
static int map_exact(uint64_t at, size_t len)
{
	uint64_t lo = at & ~(DP_PAGE_SIZE - 1);
	uint64_t hi = (at + len + DP_PAGE_SIZE - 1) & ~(DP_PAGE_SIZE - 1);
	void *p = mmap((void *)(uintptr_t)lo, hi - lo, PROT_READ | PROT_EXEC,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
		       -1, 0);

	if (p == MAP_FAILED)
		return -errno;
	if ((uint64_t)(uintptr_t)p != lo) {
		/* a kernel without MAP_FIXED_NOREPLACE took it as a hint */
		munmap(p, hi - lo);
		return -EEXIST;
	}
	return 0;
}

/* The stub at @at, then the tail for @in, written into our new pages. */
static int write_code(uint64_t at, const struct dp_insn *in)
{
	static const uint8_t movabs_r11[] = { 0x49, 0xbb };
	uint8_t buf[CODE_BYTES];
	struct dp_emit e;
	int n;

	memset(buf, DP_INT3, sizeof(buf));
	dp_emit_init(&e, buf, STUB_BYTES, at);
	dp_emit_bytes(&e, movabs_r11, sizeof(movabs_r11));
	dp_emit_u64(&e, at + STUB_BYTES);
	if (dp_emit_jmp_abs(&e, (uint64_t)(uintptr_t)dp_maskguard_entry))
		return -ENOSPC;
	n = dp_insn_make_slot(in, at + STUB_BYTES, buf + STUB_BYTES,
			      DP_INSN_SLOT_SIZE);
	if (n < 0)
		return n;
	return dp_text_write(at, buf, sizeof(buf), NULL);
}

/* The guard of the function at @fn. */
static struct maskguard *find(uint64_t fn)
{
	for (int i = 0; i < nmg; i++)
		if (mg[i].fn == fn)
			return &mg[i];
	return NULL;
}

/*
 * A jump guard for the function at @fn; 0, or -errno when it cannot have
 * one.  At load, before any guard is armed.  After an endbr64, the jump
 * is the next instruction's first byte: a thread through the endbr64
 * meets it there.
 */
int dp_maskguard_build(uint64_t fn)
{
	static const uint8_t endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	uint8_t code[DP_INSN_MAX_LEN + sizeof(endbr64)];
	uint64_t addr = fn, at;
	struct dp_insn in;
	int32_t rel;
	int err;

	if (find(fn))
		return 0;
	if (nmg == MAX_GUARDS)
		return -ENOSPC;
	dp_site_recover(fn, code, sizeof(code));
	if (!memcmp(code, endbr64, sizeof(endbr64))) {
		addr += sizeof(endbr64);
		memmove(code, code + sizeof(endbr64), DP_INSN_MAX_LEN);
	}
	if (dp_insn_analyze(code, DP_INSN_MAX_LEN, addr, &in, NULL) ||
	    !dp_insn_needs_slot(&in))
		return -EOPNOTSUPP;	/* a branch: it cannot be relocated */
	memcpy(&rel, code + 1, sizeof(rel));
	at = addr + 5 + (uint64_t)(int64_t)rel;
	err = map_exact(at, CODE_BYTES);
	if (!err)
		err = write_code(at, &in);
	/* (pages that could not be written stay: they are never freed) */
	if (err)
		return err;
	mg[nmg].fn = fn;
	mg[nmg].addr = addr;
	mg[nmg].orig = code[0];
	nmg++;
	return 0;
}

/* A system call instruction (syscall, sysenter, int $0x80). */
static bool is_syscall(const struct dp_insn *in)
{
	const uint8_t *b = in->bytes;

	return (b[0] == 0x0f && (b[1] == 0x05 || b[1] == 0x34)) ||
	       (b[0] == 0xcd && b[1] == 0x80);
}

/*
 * The function at @fn changes no mask itself: no system call, every
 * branch and call inside it or to @to (glibc's sigprocmask() is
 * pthread_sigmask() and errno).
 */
static bool only_calls(uint64_t fn, uint64_t to)
{
	uint64_t start, size;
	uint8_t *code;
	bool ok = true;

	if (dp_sym_func_bounds(fn, &start, &size) || start != fn ||
	    size > 4096 || !(code = malloc(size)))
		return false;
	dp_site_recover(start, code, size);
	for (uint64_t off = 0; ok && off < size;) {
		struct dp_insn in;

		if (dp_insn_analyze(code + off, size - off, start + off, &in,
				    NULL) || is_syscall(&in) ||
		    in.op == DP_OP_CALL_IND || in.op == DP_OP_JMP_IND)
			ok = false;
		else if (dp_insn_has_target(&in) && in.target != to &&
			 in.target - start >= size)
			ok = false;
		off += in.len;
	}
	free(code);
	return ok;
}

/*
 * No jump for @fn, which only calls @to: @to's jump guards it, if it has
 * one; then neither guard is an int3.  0 or -errno.
 */
int dp_maskguard_cover(uint64_t fn, uint64_t to)
{
	struct maskguard *g = find(to);

	if (find(fn))
		return 0;
	if (!g || g->covered || nmg == MAX_GUARDS || !only_calls(fn, to))
		return -EOPNOTSUPP;
	mg[nmg].fn = fn;
	mg[nmg].covered = true;
	nmg++;
	return 0;
}

bool dp_maskguard_has(uint64_t fn)
{
	return find(fn) != NULL;
}

/* The byte at @addr while no int3 of ours is there, into *@b. */
bool dp_maskguard_resting(uint64_t addr, uint8_t *b)
{
	for (int i = 0; i < nmg; i++) {
		if (mg[i].covered || mg[i].addr != addr)
			continue;
		if (!mg[i].armed)
			return false;
		*b = JMP_REL32;
		return true;
	}
	return false;
}

void dp_maskguard_recover(uint64_t addr, uint8_t *buf, size_t len)
{
	for (int i = 0; i < nmg; i++)
		if (!mg[i].covered && mg[i].armed && mg[i].addr - addr < len)
			buf[mg[i].addr - addr] = mg[i].orig;
}

/*
 * Every jump in (@on) or out, under the mutex.  Where a probe's int3
 * sits on the byte (site.c), only the state changes: the site puts back
 * what dp_maskguard_resting() says when it disarms.
 */
void dp_maskguard_arm(bool on)
{
	const uint8_t jmp = JMP_REL32;

	if (on)
		__atomic_store_n(&armed_pid, getpid(), __ATOMIC_RELAXED);
	for (int i = 0; i < nmg; i++) {
		struct maskguard *g = &mg[i];
		struct dp_site *s = dp_site_lookup(g->addr);

		if (g->covered || g->armed == on)
			continue;
		if (!(s && s->armed) &&
		    dp_text_write(g->addr, on ? &jmp : &g->orig, 1,
				  on ? &g->orig : &jmp))
			continue;	/* the code is not what it was */
		g->armed = on;
	}
}

/* A fork child has its own copy of the code: the pid it is guarded for. */
void dp_maskguard_forked(void)
{
	__atomic_store_n(&armed_pid, getpid(), __ATOMIC_RELAXED);
}

#define SIGTRAP_BIT (1ul << (SIGTRAP - 1))

/*
 * From dp_maskguard_entry: the set the function is to be called with, a
 * copy of @set without SIGTRAP in @copy when @set would block it.  As
 * the kernel, the first 8 bytes.  Not in a vfork child (it shares our
 * memory, not our pid): it is about to exec, with the mask it was asked
 * for.  Runs on any thread with any mask, a vfork child's included: no
 * lock, no allocation.
 */
const sigset_t *dp_maskguard_set(int how, const sigset_t *set,
				 sigset_t *copy)
{
	unsigned long word;

	if (how != SIG_BLOCK && how != SIG_SETMASK)
		return set;
	if (dp_copy_nofault(&word, set, sizeof(word)) ||
	    !(word & SIGTRAP_BIT))
		return set;	/* (a bad pointer: libc reports it) */
	if (dp_raw_syscall(SYS_getpid, 0, 0, 0) !=
	    __atomic_load_n(&armed_pid, __ATOMIC_RELAXED))
		return set;
	memset(copy, 0, sizeof(*copy));
	copy->__val[0] = word & ~SIGTRAP_BIT;
	return copy;
}
