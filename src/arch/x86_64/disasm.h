/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One instruction as text, for people (`dprobe show`): AT&T syntax, as
 * objdump prints it, with a relative branch's destination as an absolute
 * address.  Not in the agent: it only ever runs in dprobe.
 */
#ifndef DPROBE_ARCH_DISASM_H
#define DPROBE_ARCH_DISASM_H

#include <stddef.h>
#include <stdint.h>

/*
 * The instruction at run-time address @addr (bytes @code, @avail of them)
 * into @text (@len bytes); its length, or -EILSEQ (then @text says
 * "(bad)" and the caller shows one byte).  *@target, if not NULL, is set
 * to a relative jmp/call/jcc's destination, else 0.
 */
int dp_disasm(const uint8_t *code, size_t avail, uint64_t addr, char *text,
	      size_t len, uint64_t *target);

#endif
