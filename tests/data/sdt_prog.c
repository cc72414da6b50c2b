// SPDX-License-Identifier: GPL-2.0
/*
 * SDT probes for the sym/sdt unit tests, built at -O0 (non-PIE) and -O2
 * (PIE) into $DPROBE_BUILD/tests/data/sdt_O0 and sdt_O2 with
 * tests/data/sdt_sem.c (the semaphore-gated ones).  Each probe is written
 * so that GCC prints a given operand form for its arguments: registers of
 * every width (local register variables pin them), stack slots at -O0,
 * base+displacement, RIP-relative globals and immediates at -O2.  Forms
 * GCC never prints through sdt.h's "nor" constraint (%ah, indexed and
 * segment-relative addresses, SSE registers, "SYM+N(%rip)") come from
 * notes written by hand below.  Runs, and fires every probe once.
 */
#include <sys/sdt.h>

struct pair {
	long a;
	long b;
};

int g_int = -7;
struct pair g_pair = { 1, 2 };
double g_dbl = 1.5;

/* every register width, in eight different registers */
__attribute__((noinline)) void sdt_widths(long v)
{
	register long rdi asm("rdi") = v;
	register int esi asm("rsi") = (int)v - 1;
	register short dx asm("rdx") = (short)(v - 2);
	register signed char cl asm("rcx") = (signed char)(v - 3);
	register unsigned r8d asm("r8") = (unsigned)v + 4;
	register unsigned short r9w asm("r9") = (unsigned short)(v + 5);
	register unsigned char r10b asm("r10") = (unsigned char)(v + 6);
	register unsigned long r11 asm("r11") = (unsigned long)v + 7;

	STAP_PROBE8(sdt_test, widths, rdi, esi, dx, cl, r8d, r9w, r10b, r11);
}

/* the three narrower names of %rdi */
__attribute__((noinline)) void sdt_di(long v)
{
	{
		register int edi asm("rdi") = (int)v;

		STAP_PROBE1(sdt_test, di32, edi);
	}
	{
		register short di asm("rdi") = (short)v;

		STAP_PROBE1(sdt_test, di16, di);
	}
	{
		register signed char dil asm("rdi") = (signed char)v;

		STAP_PROBE1(sdt_test, di8, dil);
	}
}

/* -O0: stack slots (-20(%rbp)); -O2: the registers of the arguments */
__attribute__((noinline)) void sdt_args(long a, int b, short c,
					signed char d, unsigned e,
					unsigned short f)
{
	STAP_PROBE6(sdt_test, args, a, b, c, d, e, f);
}

/* -O2: 8(%rdi) and (%rdi) */
__attribute__((noinline)) void sdt_mem(struct pair *p)
{
	STAP_PROBE2(sdt_test, mem, p->b, p->a);
}

__attribute__((noinline)) long *sdt_ptr(void)
{
	static long v = 42;

	return &v;
}

/* -O2: (%rax), the value behind a returned pointer */
__attribute__((noinline)) void sdt_deref(void)
{
	STAP_PROBE1(sdt_test, deref, *sdt_ptr());
}

/* -O2: g_int(%rip), 8+g_pair(%rip), 8f@g_dbl(%rip) */
__attribute__((noinline)) void sdt_glob(void)
{
	STAP_PROBE3(sdt_test, glob, g_int, g_pair.b, g_dbl);
}

/* $5, $-1, an unsigned byte GCC prints as $-56, a 64-bit constant */
__attribute__((noinline)) void sdt_imm(void)
{
	STAP_PROBE4(sdt_test, imm, 5, -1, (unsigned char)200, 0x123456789LL);
}

/* one probe name, a site in each caller */
static inline __attribute__((always_inline)) void sdt_twice(int x)
{
	STAP_PROBE1(sdt_test, twice, x);
}

__attribute__((noinline)) void sdt_caller1(int x)
{
	sdt_twice(x);
}

__attribute__((noinline)) void sdt_caller2(int x)
{
	sdt_twice(x + 1);
}

/*
 * A note as sdt.h lays it out (site, .stapsdt.base, semaphore, provider,
 * name, arguments), with the argument string written by hand.
 */
#define SDT_HAND(name, args)						\
	__asm__ __volatile__("990:	nop\n"				\
		".pushsection .note.stapsdt,\"?\",\"note\"\n"		\
		".balign 4\n"						\
		".4byte 992f-991f, 994f-993f, 3\n"			\
		"991:	.asciz \"stapsdt\"\n"				\
		"992:	.balign 4\n"					\
		"993:	.8byte 990b\n"					\
		".8byte _.stapsdt.base\n"				\
		".8byte 0\n"						\
		".asciz \"sdt_hand\"\n"					\
		".asciz \"" name "\"\n"					\
		".asciz \"" args "\"\n"					\
		"994:	.balign 4\n"					\
		".popsection\n")

__attribute__((noinline)) void sdt_hand(void)
{
	/* translated */
	SDT_HAND("ok", "1@%ah 1@%bh 8@g_pair+8(%rip) -4@g_int-0(%rip) "
		 "%rdi 8@%rip 8@16(%rip) 2@0x10(%rsp) -8@g_pair");
	/* refused, one reason each */
	SDT_HAND("refused", "-1@%ah 8@8(%rax,%rbx,4) 8@(,%rax,8) "
		 "4@%fs:0x28 8f@%xmm0 16@%rax -4@$g_int 8@nosuch(%rip) "
		 "4@(%eax) 8@g_int(%rax)");
	SDT_HAND("none", "");
}
/* the .stapsdt.base the hand-made notes refer to (sdt.h defines it once) */
__asm__(".ifndef _.stapsdt.base\n"
	".pushsection .stapsdt.base,\"aG\",\"progbits\",.stapsdt.base,comdat\n"
	".weak _.stapsdt.base\n"
	".hidden _.stapsdt.base\n"
	"_.stapsdt.base: .space 1\n"
	".size _.stapsdt.base, 1\n"
	".popsection\n"
	".endif\n");

void sdt_gated(int x);

int main(int argc, char **argv)
{
	struct pair p = { argc, 3 };

	(void)argv;
	sdt_widths(argc);
	sdt_di(argc);
	sdt_args(argc, -2, -3, -4, 5, 6);
	sdt_mem(&p);
	sdt_deref();
	sdt_glob();
	sdt_imm();
	sdt_caller1(argc);
	sdt_caller2(argc);
	sdt_hand();
	sdt_gated(argc);
	return 0;
}
