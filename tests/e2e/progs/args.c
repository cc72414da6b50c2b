// SPDX-License-Identifier: GPL-2.0
/*
 * e2e target: entry arguments of every fetch type.
 *
 * Every probed function gets fixed inputs through the SysV x86-64 calling
 * convention (%di %si %dx %cx %r8 %r9, then the stack), so what a probe
 * at its entry reads follows from this file alone.  `noipa` keeps each
 * function a real, separately called function at every -O level (no
 * inlining, cloning or interprocedural shortcuts), and all parameters are
 * 64 bits wide so no register holds undefined upper bits.
 */
#include <stddef.h>
#include <stdio.h>

#define PROBED __attribute__((noipa))

struct inner {
	long v;			/* +0 */
	long w;			/* +8 */
	const char *name;	/* +16 */
};

struct outer {
	struct inner *in;	/* +0 */
	long pad;		/* +8 */
};

struct rec {
	char tag[8];		/* +0: "record", then two NULs */
	unsigned short bits;	/* +8 */
	short neg;		/* +10 */
	unsigned int u32s[2];	/* +12 */
	const char *names[3];	/* +24 */
	struct outer *out;	/* +48 */
	unsigned char bytes[4];	/* +56 */
};

/* The offsets the case files use; a change here must fail the build. */
_Static_assert(offsetof(struct rec, bits) == 8, "rec.bits");
_Static_assert(offsetof(struct rec, neg) == 10, "rec.neg");
_Static_assert(offsetof(struct rec, u32s) == 12, "rec.u32s");
_Static_assert(offsetof(struct rec, names) == 24, "rec.names");
_Static_assert(offsetof(struct rec, out) == 48, "rec.out");
_Static_assert(offsetof(struct rec, bytes) == 56, "rec.bytes");
_Static_assert(offsetof(struct inner, name) == 16, "inner.name");

/* Globals read with @SYM / @+OFFS. */
long g_magic = 0x12345678;
const char g_text[] = "global text";

static struct inner in1 = { -42, 0x0123456789abcdef, "inner name" };
static struct outer out1 = { &in1, 7 };
static const struct rec rec1 = {
	.tag = "record",
	.bits = 0xbeef,
	.neg = -5,
	.u32s = { 1, 4294967295u },
	.names = { "alpha", "beta", "gamma" },
	.out = &out1,
	.bytes = { 0x11, 0x22, 0x33, 0xff },
};

volatile long sink;

PROBED long take_ints(long a, long b, long c, long d, long e, long f)
{
	sink = a ^ b ^ c ^ d ^ e ^ f;
	return sink;
}

PROBED long take_many(long a1, long a2, long a3, long a4, long a5, long a6,
		      long a7, long a8)
{
	sink = a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8;
	return sink;
}

PROBED long take_rec(const struct rec *r, const char *s,
		     const struct outer *o, const char *null)
{
	sink = r->bits + s[0] + o->pad + (null != 0);
	return sink;
}

PROBED long take_nothing(void)
{
	sink = g_magic;
	return sink;
}

int main(void)
{
	take_ints(-7, 0x1122334455667788, 255, (long)0x8000000000000000ul,
		  0, 0x7fffffffffffffff);
	take_many(1, 2, 3, 4, 5, 6, -7, 0x7fffffff00000000);
	take_rec(&rec1, "hello world", &out1, NULL);
	take_nothing();
	printf("args: ok\n");
	return 0;
}
