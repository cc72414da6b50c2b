/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which instructions the host kernel's x86-64 uprobes refuse to probe.
 *
 * The kernel checks the instruction only when it installs the breakpoint:
 * at `enable` for a process that maps the file already, else at each
 * later mmap() of it, where a refusal is silent (the probe just never
 * fires).  The kernel engine asks here first, so such a place is refused
 * up front, with the instruction named.  The rules are those of
 * arch/x86/kernel/uprobes.c (uprobe_init_insn()), restated in kuprobe.c.
 */
#ifndef DPROBE_ARCH_KUPROBE_H
#define DPROBE_ARCH_KUPROBE_H

#include <stddef.h>
#include <stdint.h>

/*
 * The instruction at @code (@avail bytes of the file).  0 if the kernel
 * takes it; otherwise -ENOTSUP (or -ENOEXEC if it does not decode) with
 * one sentence in @why naming the instruction and the reason, e.g.
 * "'lock addq $0x01, 0x2e7e(%rip)' (f0 48 83 05 ...): the kernel's uprobes
 * refuse lock-prefixed instructions".
 */
int dp_kuprobe_check(const uint8_t *code, size_t avail, char *why,
		     size_t whylen);

#endif
