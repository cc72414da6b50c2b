// SPDX-License-Identifier: GPL-2.0
/*
 * 10,000 probes, one on each of 10,000 functions, registered together
 * (register_kprobes(): one batch, the jumps written for all at once) and
 * unregistered together, 20 times in a row, while another thread calls
 * every function all along: its sums never change, every probe is hit
 * and optimised while registered, and the code is byte for byte what it
 * was at the end.  The functions are made by the assembler (.rept), so
 * the program builds in an instant.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "dprobe/kprobes.h"
#include "agent_test.h"

#define NFN 10000
#define ROUNDS 20

/* fnI(x) = x * 3 + 1, each in its own sized symbol (jump optimisation
 * needs one), frame-pointer prologue first, as compilers make them;
 * many_tab holds their addresses */
__asm__(".altmacro\n"
	".macro many_fn n\n"
	"  .text\n"
	"  .p2align 4\n"
	"  .type many_fn\\n, @function\n"
	"many_fn\\n:\n"
	"  push %rbp\n"
	"  mov %rsp, %rbp\n"
	"  lea 1(%rdi,%rdi,2), %eax\n"
	"  pop %rbp\n"
	"  ret\n"
	"  .size many_fn\\n, .-many_fn\\n\n"
	"  .section .data.rel.ro, \"aw\"\n"
	"  .quad many_fn\\n\n"
	".endm\n"
	"  .section .data.rel.ro, \"aw\"\n"
	"  .p2align 3\n"
	"  .globl many_tab\n"
	"many_tab:\n"
	"  .set i, 0\n"
	"  .rept 10000\n"
	"  many_fn %i\n"
	"  .set i, i + 1\n"
	"  .endr\n"
	"  .text\n"
	".noaltmacro\n");

extern int (*const many_tab[NFN])(int);

static atomic_ulong hits;
static atomic_int stop, bad, asked, passes;

static int count_hit(struct kprobe *p, struct pt_regs *regs)
{
	(void)p;
	(void)regs;
	atomic_fetch_add_explicit(&hits, 1, memory_order_relaxed);
	return 0;
}

static void nap(void)
{
	struct timespec ts = { 0, 200000 };

	nanosleep(&ts, NULL);
}

/*
 * A pass over every function each time main asks: one runs while the
 * probes are registered or unregistered (the int3 phase makes each call
 * a trap: a few microseconds), one with all of them optimised.
 */
static void *caller(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		if (atomic_load(&passes) == atomic_load(&asked)) {
			nap();
			continue;
		}
		for (int i = 0; i < NFN; i++)
			if (many_tab[i](i) != i * 3 + 1)
				atomic_fetch_add(&bad, 1);
		atomic_fetch_add(&passes, 1);
	}
	return NULL;
}

static void ask_pass(void)
{
	atomic_fetch_add(&asked, 1);
}

static void wait_passes(void)
{
	while (atomic_load(&passes) < atomic_load(&asked))
		nap();
}

int main(void)
{
	static struct kprobe kp[NFN];
	static struct kprobe *kps[NFN];
	static uint8_t before[NFN][8];
	unsigned long h0;
	pthread_t th;
	int optimized = 0, armed_ok = 0;

	for (int i = 0; i < NFN; i++) {
		memcpy(before[i], (const void *)many_tab[i], sizeof(before[i]));
		kps[i] = &kp[i];
	}
	pthread_create(&th, NULL, caller, NULL);
	BEGIN("10,000 probes registered and unregistered together 20 times");
	for (int r = 0; r < ROUNDS; r++) {
		for (int i = 0; i < NFN; i++) {
			memset(&kp[i], 0, sizeof(kp[i]));
			kp[i].addr = (kprobe_opcode_t *)(uintptr_t)many_tab[i];
			kp[i].pre_handler = count_hit;
			kp[i].flags = KPROBE_FLAG_NOSIMD;
		}
		ask_pass();	/* while they are registered */
		CHECK_EQ(register_kprobes(kps, NFN), 0);
		wait_passes();
		h0 = atomic_load(&hits);
		ask_pass();
		wait_passes();
		armed_ok += atomic_load(&hits) - h0 == NFN;
		if (r == 0 || r == ROUNDS - 1)
			for (int i = 0; i < NFN; i++)
				optimized += kprobe_optimized(&kp[i]) != 0;
		ask_pass();	/* ...and unregistered */
		unregister_kprobes(kps, NFN);
		wait_passes();
	}
	CHECK_EQ(armed_ok, ROUNDS);
	CHECK_EQ(optimized, 2 * NFN);
	atomic_store(&stop, 1);
	pthread_join(th, NULL);
	CHECK_EQ(atomic_load(&bad), 0);
	for (int i = 0; i < NFN; i++)
		if (memcmp(before[i], (const void *)many_tab[i], sizeof(before[i])))
			CHECK(0, "fn %d's code changed", i);
	END();
	return t_exit();
}
