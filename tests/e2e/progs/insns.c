// SPDX-License-Identifier: GPL-2.0
/*
 * e2e target: probes inside functions, on instructions an engine cannot
 * simply re-execute in place.
 *
 * asm_mix is written in assembler so its instructions are the same at
 * every -O level: a push, a RIP-relative lea, a conditional jump, a call,
 * a jump, a pop and a ret, each of which a probe displaces.  asm_add has
 * three plain instructions whose register effects are known, for probes
 * at offsets.  work() is ordinary C, probed at its second instruction.
 *
 *   asm_add(a, b)  = a + b + 16
 *   asm_mix(x)     = x ? asm_data + x + asm_leaf(x) : -asm_data
 *                  = x ? 1000 + x + 3 * x         : -1000
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

long asm_add(long a, long b);
long asm_mix(long x);
long asm_leaf(long x);
long asm_riprd(void);

__asm__(
	"	.data\n"
	"	.p2align 3\n"
	"	.globl asm_data\n"
	"asm_data:\n"
	"	.quad 1000\n"
	"	.text\n"
	"	.globl asm_add\n"
	"	.type asm_add, @function\n"
	"asm_add:\n"
	"	mov %rdi, %rax\n"
	"	add %rsi, %rax\n"
	"	lea 0x10(%rax), %rax\n"
	"	ret\n"
	"	.size asm_add, .-asm_add\n"
	"	.globl asm_leaf\n"
	"	.type asm_leaf, @function\n"
	"asm_leaf:\n"
	"	lea (%rdi,%rdi,2), %rax\n"
	"	ret\n"
	"	.size asm_leaf, .-asm_leaf\n"
	"	.globl asm_riprd\n"
	"	.type asm_riprd, @function\n"
	"asm_riprd:\n"
	"	mov asm_data(%rip), %rax\n"
	"	ret\n"
	"	.size asm_riprd, .-asm_riprd\n"
	"	.globl asm_mix\n"
	"	.type asm_mix, @function\n"
	"asm_mix:\n"
	"	push %rbx\n"
	"	mov %rdi, %rbx\n"
	"	lea asm_data(%rip), %rax\n"
	"	mov (%rax), %rax\n"
	"	test %rbx, %rbx\n"
	"	jz 1f\n"
	"	add %rbx, %rax\n"
	"	push %rax\n"
	"	call asm_leaf\n"
	"	pop %rdx\n"
	"	add %rdx, %rax\n"
	"	jmp 2f\n"
	"1:	neg %rax\n"
	"2:	pop %rbx\n"
	"	ret\n"
	"	.size asm_mix, .-asm_mix\n");

volatile long sink;

__attribute__((noipa)) long work(long a, const char *s)
{
	sink = a + (long)strlen(s);
	return sink;
}

int main(void)
{
	static const long xs[] = { 1, 0, 5 };
	long total = 0;

	for (int i = 0; i < 3; i++) {
		long m = asm_mix(xs[i]);

		printf("insns: asm_mix(%ld) = %ld\n", xs[i], m);
		total += m;
	}
	printf("insns: asm_add(3, 4) = %ld\n", asm_add(3, 4));
	printf("insns: asm_riprd() = %ld\n", asm_riprd());
	for (int i = 0; i < 4; i++)
		total += work(i, "abc");
	printf("insns: total %ld\n", total);
	return 0;
}
