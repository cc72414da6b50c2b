// SPDX-License-Identifier: GPL-2.0
/*
 * e2e target: functions whose first instructions branch or call, the
 * shapes an optimising compiler often starts a function with, written in
 * assembly so that they start so at -O0 as at -O2:
 *
 *   rl_call      call rl_leaf first                     3x + 1
 *   rl_callmem   call *rl_ptr(%rip) first (-fno-plt)    3x + 2
 *   rl_jcc       test; je: a jcc in the first 5 bytes   x ? x + 10 : -1
 *   rl_jccmid    cmp; jl (the probe on the jl)          x < 5 ? x + 200 : x + 100
 *   rl_tail      jmp rl_leaf: a tail-call wrapper       3x
 *   rl_jmp8      jmp rel8 over a nop                    x + 7
 *   rl_callthrow call rl_throwpad first, which calls rl_thrower (the
 *                probe there on its call): round i throws when i is odd, else
 *                returns 10i, and rl_callthrow adds 1.  The exception
 *                unwinds through rl_callthrow while its call is on the
 *                stack (with CFI for both assembler functions).
 *
 * rl_run(x) calls each once for x = 2, 0, 7; rl_guarded(i) calls rl_callthrow(i)
 * inside a try for i = 0..3.
 */
#include <cstdio>
#include <stdexcept>

extern "C" {
long rl_call(long), rl_callmem(long), rl_jcc(long), rl_jccmid(long);
long rl_tail(long), rl_jmp8(long), rl_callthrow(long);
void rl_run(long x);
long rl_guarded(long i);

__attribute__((noipa)) long rl_leaf(long x)
{
	return 3 * x;
}

__attribute__((noipa)) long rl_thrower(long i)
{
	if (i & 1)
		throw std::runtime_error("odd");
	return 10 * i;
}
}

#define FN(n) ".globl " #n "\n.type " #n ", @function\n" #n ":\n.cfi_startproc\n"
#define END(n) ".cfi_endproc\n.size " #n ", . - " #n "\n"
__asm__(".text\n"
	FN(rl_call)
	"	call rl_leaf\n"			/* e8 rel32: always 5 bytes */
	"	leaq 1(%rax), %rax\n"
	"	ret\n"
	END(rl_call)
	FN(rl_callmem)
	"	call *rl_ptr(%rip)\n"
	"	leaq 2(%rax), %rax\n"
	"	ret\n"
	END(rl_callmem)
	FN(rl_jcc)
	"	testq %rdi, %rdi\n"
	"	je 1f\n"
	"	leaq 10(%rdi), %rax\n"
	"	ret\n"
	"1:	movq $-1, %rax\n"
	"	ret\n"
	END(rl_jcc)
	FN(rl_jccmid)
	"	cmpq $5, %rdi\n"
	"	jl 1f\n"			/* probed: the cmp's flags live */
	"	leaq 100(%rdi), %rax\n"
	"	ret\n"
	"1:	leaq 200(%rdi), %rax\n"
	"	ret\n"
	END(rl_jccmid)
	FN(rl_tail)
	"	.byte 0xe9\n"			/* jmp rel32, never relaxed */
	"	.long rl_leaf - . - 4\n"
	END(rl_tail)
	FN(rl_jmp8)
	"	jmp 1f\n"
	"	nopl (%rax)\n"
	"1:	leaq 7(%rdi), %rax\n"
	"	ret\n"
	END(rl_jmp8)
	FN(rl_callthrow)
	"	call rl_throwpad\n"
	"	leaq 1(%rax), %rax\n"
	"	ret\n"
	END(rl_callthrow)
	FN(rl_throwpad)
	/* called with %rsp 16-byte aligned (rl_callthrow pushed nothing):
	 * it stays so for the ABI's call */
	"	subq $16, %rsp\n"
	".cfi_adjust_cfa_offset 16\n"
	"	call rl_thrower\n"
	"	addq $16, %rsp\n"
	".cfi_adjust_cfa_offset -16\n"
	"	ret\n"
	END(rl_throwpad)
	".section .data.rel.local,\"aw\"\n"
	".p2align 3\n"
	"rl_ptr:	.quad rl_leaf\n"
	".text\n");

extern "C" __attribute__((noipa)) void rl_run(long x)
{
	long a = rl_call(x);
	long b = rl_callmem(x);
	long c = rl_jcc(x);
	long d = rl_jccmid(x);
	long e = rl_tail(x);
	long f = rl_jmp8(x);

	std::printf("relocs: x=%ld call %ld callmem %ld jcc %ld jccmid %ld "
		    "tail %ld jmp8 %ld\n", x, a, b, c, d, e, f);
}

extern "C" __attribute__((noipa)) long rl_guarded(long i)
{
	try {
		long r = rl_callthrow(i);

		std::printf("relocs: round %ld returned %ld\n", i, r);
		return r;
	} catch (const std::runtime_error &e) {
		std::printf("relocs: round %ld caught %s\n", i, e.what());
		return 100;
	}
}

int main()
{
	long total = 0;

	rl_run(2);
	rl_run(0);
	rl_run(7);
	for (long i = 0; i < 4; i++)
		total += rl_guarded(i);
	std::printf("relocs: total %ld\n", total);
	return 0;
}
