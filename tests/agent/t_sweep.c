// SPDX-License-Identifier: GPL-2.0
/*
 * The instruction sweep, in process: a kprobe on every byte offset of two
 * functions of this program (built -O2) and of the strlen and memcpy
 * implementations libc's IFUNCs picked (384 bytes each, as
 * tests/safety/sweep.sh probes them).  Every offset that starts an
 * instruction (decoded here with Zydis from the function's start) must be
 * accepted, or refused as an instruction that cannot be probed; every
 * other offset refused with -EILSEQ.  With all of them armed at once, half
 * with post handlers, the program's checksum must not change.
 */
#include <errno.h>
#include <stdint.h>

#include <Zydis/Zydis.h>
#include <dprobe/kprobes.h>

#include "agent_test.h"

__attribute__((noinline)) unsigned long mix(unsigned long h, const char *s,
					    size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ul;
	return h;
}

__attribute__((noinline)) int classify(int x)
{
	switch (x % 7) {
	case 0: return x / 3;
	case 1: return x * 5 + 1;
	case 2: return -x;
	case 3: return x << 2;
	case 4: return x > 100 ? 1 : 2;
	default: return x & 0x55;
	}
}

static size_t (*volatile p_strlen)(const char *) = strlen;
static void *(*volatile p_memcpy)(void *, const void *, size_t) = memcpy;

static unsigned long workload(void)
{
	static char buf[4096], dst[4096];
	unsigned long h = 14695981039346656037ul;

	for (int i = 0; i < (int)sizeof(buf) - 1; i++)
		buf[i] = (char)('a' + i % 26);
	for (int n = 0; n < 3000; n += 37) {
		size_t len;

		buf[n] = '\0';
		len = p_strlen(buf);
		h = mix(h, buf + len / 2, len < 16 ? len : 16);
		h += len;
		buf[n] = (char)('a' + n % 26);
		p_memcpy(dst, buf + (n % 13), (size_t)n);
		h = mix(h, dst + n / 2, n < 16 ? (size_t)n : 16);
		h += (unsigned long)classify(n);
	}
	return h;
}

static long hits, posts;

static int on_pre(struct kprobe *p, struct pt_regs *regs)
{
	(void)p;
	(void)regs;
	__atomic_fetch_add(&hits, 1, __ATOMIC_RELAXED);
	return 0;
}

static void on_post(struct kprobe *p, struct pt_regs *regs, unsigned long f)
{
	(void)p;
	(void)regs;
	(void)f;
	__atomic_fetch_add(&posts, 1, __ATOMIC_RELAXED);
}

/* Function sizes from the ELF symbol table would need libelf; the end of
 * a function of ours is found by its final ret or jmp instead, close
 * enough: the sweep only needs the bytes it covers to be code. */
static size_t own_size(const void *fn)
{
	ZydisDecoder d;
	ZydisDecodedInstruction in;
	size_t off = 0, end = 0;

	ZydisDecoderInit(&d, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	while (off < 1024 && ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(
			&d, NULL, (const char *)fn + off, 15, &in))) {
		off += in.length;
		if (in.mnemonic == ZYDIS_MNEMONIC_RET)
			end = off;
		if (in.mnemonic == ZYDIS_MNEMONIC_INT3 ||
		    (in.mnemonic == ZYDIS_MNEMONIC_NOP && end && off > end + 16))
			break;
	}
	return end;
}

/* The instruction starts of [start, start + len): a byte map. */
static void boundaries(const uint8_t *start, size_t len, uint8_t *is)
{
	ZydisDecoder d;
	ZydisDecodedInstruction in;
	size_t off = 0;

	memset(is, 0, len);
	ZydisDecoderInit(&d, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	while (off < len && ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(
			&d, NULL, start + off, 15, &in))) {
		is[off] = 1;
		off += in.length;
	}
}

struct region {
	const char *name;
	const uint8_t *start;
	size_t len;
};

#define MAX_PROBES 2048

static struct kprobe kps[MAX_PROBES];
static int nkps;

static void sweep(const struct region *r)
{
	uint8_t is[1024];
	int accepted = 0, refused = 0, wrong = 0;
	char name[96];

	snprintf(name, sizeof(name), "sweep %s: every offset of %zu bytes",
		 r->name, r->len);
	BEGIN(name);
	boundaries(r->start, r->len, is);
	for (size_t off = 0; off < r->len && nkps < MAX_PROBES; off++) {
		struct kprobe *kp = &kps[nkps];
		int err;

		memset(kp, 0, sizeof(*kp));
		kp->addr = (kprobe_opcode_t *)(r->start + off);
		kp->pre_handler = on_pre;
		if (nkps % 2)
			kp->post_handler = on_post;
		err = register_kprobe(kp);
		if (!err) {
			nkps++;
			accepted++;
		} else if (err == -EOPNOTSUPP && is[off]) {
			refused++;
		}
		if (is[off] ? err && err != -EOPNOTSUPP : err != -EILSEQ) {
			if (wrong++ < 5)
				printf("#   +%zu (%s): %d\n", off,
				       is[off] ? "boundary" : "inside", err);
		}
	}
	printf("# %s: %d probes, %d refused\n", r->name, accepted, refused);
	CHECK_EQ(wrong, 0);
	CHECK(accepted > 10, "%d accepted", accepted);
	END();
}

/*
 * One instruction at a time, with a pre handler only, so that each may
 * be jump-optimised (no probe in its replaced bytes): the program must
 * compute the same with every one of them.
 */
static int n_optimised;

static void sweep_one_by_one(const struct region *r, unsigned long want)
{
	uint8_t is[1024];
	int probed = 0, optimised = 0, bad = 0;
	const char *why = "";
	char name[96];

	snprintf(name, sizeof(name), "sweep %s one by one, jump-optimised "
		 "where possible", r->name);
	BEGIN(name);
	boundaries(r->start, r->len, is);
	for (size_t off = 0; off < r->len; off++) {
		struct kprobe kp = { .addr = (kprobe_opcode_t *)(r->start + off),
				     .pre_handler = on_pre };
		unsigned long got;

		if (!is[off] || register_kprobe(&kp))
			continue;
		probed++;
		if (kprobe_optimized(&kp))
			optimised++;
		else
			why = kprobe_opt_reason(&kp);
		got = workload();
		if (got != want && bad++ < 5)
			printf("#   +%zu (%s): checksum %lx\n", off,
			       kprobe_optimized(&kp) ? "optimised" :
			       kprobe_opt_reason(&kp), got);
		unregister_kprobe(&kp);
	}
	printf("# %s: %d probes, %d jump-optimised%s%s\n", r->name, probed,
	       optimised, *why ? "; not: " : "", why);
	CHECK_EQ(bad, 0);
	if (getenv("DPROBE_NOOPT"))
		CHECK_EQ(optimised, 0);
	n_optimised += optimised;
	END();
}

int main(void)
{
	unsigned long want = workload(), got;
	struct region regs[] = {
		{ "mix", (const uint8_t *)mix, own_size((const void *)mix) },
		{ "classify", (const uint8_t *)classify,
		  own_size((const void *)classify) },
		{ "libc strlen", (const uint8_t *)p_strlen, 384 },
		{ "libc memcpy", (const uint8_t *)p_memcpy, 384 },
	};

	static uint8_t saved[4][1024];

	for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
		sweep_one_by_one(&regs[i], want);
	BEGIN("the one-by-one sweep optimised some probes (unless DPROBE_NOOPT)");
	CHECK(getenv("DPROBE_NOOPT") || n_optimised > 0, "none");
	END();
	for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++) {
		memcpy(saved[i], regs[i].start, regs[i].len);
		sweep(&regs[i]);
	}

	BEGIN("every probe armed at once: the program computes the same");
	hits = posts = 0;
	got = workload();
	CHECK(got == want, "checksum %lx, want %lx", got, want);
	CHECK(hits > 1000, "%ld hits", hits);
	CHECK(posts > 100, "%ld post handler calls", posts);
	printf("# %d probes, %ld hits, %ld post handler calls\n", nkps, hits,
	       posts);
	{
		int nopt = 0;

		for (int i = 0; i < nkps; i++)
			nopt += kprobe_optimized(&kps[i]);
		printf("# %d of them jump-optimised\n", nopt);
	}
	END();

	BEGIN("all unregistered: every byte back, the same result");
	for (int i = 0; i < nkps; i++)
		unregister_kprobe(&kps[i]);
	hits = 0;
	CHECK(workload() == want, "checksum");
	CHECK_EQ(hits, 0);
	for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
		CHECK(!memcmp(saved[i], regs[i].start, regs[i].len),
		      "%s: bytes differ", regs[i].name);
	END();
	return t_exit();
}
