// SPDX-License-Identifier: GPL-2.0
/*
 * e2e target: a probed function called with a frame pointer that is no
 * frame pointer (--stack must stop there and mark the bad frame, the
 * program never sees it): %rbp 1 MiB above the stack pointer (past the
 * stack's top: a read faults), then 4 KiB + 4 above it (unaligned), then
 * a kernel address, then 64 bytes below the stack pointer.  main keeps
 * frame pointers (-fno-omit-frame-pointer, tests/e2e/lib.sh): at its
 * calls %rbp must be its frame, so what the walk meets there is a bad
 * frame, not the end of the chain.
 *
 * Usage: stackbad  -- prints "stackbad: ok 6".
 */
#include <stdio.h>

__attribute__((noipa)) long leaf(long x)
{
	return x + 1;
}

int main(void)
{
	long r = 0;
	for (int i = 0; i < 4; i++) {
		long bad = i == 0 ? 0x100000 : i == 1 ? 0x1004 :
			   i == 2 ? 0 : -0x48;

		/* leaf's caller's frame: %rbp as said, the stack pointer
		 * 16-byte aligned at the call as the ABI wants; main's
		 * %rbp saved and put back around the call */
		__asm__ volatile(
			"push %%rbp\n\t"
			"sub $8, %%rsp\n\t"
			"mov %%rsp, %%rbp\n\t"
			"add %1, %%rbp\n\t"
			"test %1, %1\n\t"
			"jnz 1f\n\t"
			"movabs $0xffff888000000000, %%rbp\n"
			"1:\tmov $5, %%edi\n\t"
			"call leaf\n\t"
			"add $8, %%rsp\n\t"
			"pop %%rbp"
			: "=a"(r) : "b"(bad)
			: "rdi", "rsi", "rdx", "rcx", "r8", "r9", "r10", "r11", "memory");
	}
	printf("stackbad: ok %ld\n", r);
	return 0;
}
