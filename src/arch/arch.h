/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What dprobe asks of the machine it probes, behind one header (as the
 * kernel keeps its arch_* hooks): everything outside src/arch/ includes
 * this file, never a file of an architecture's folder.  Only x86-64 is
 * supported; its services are:
 *
 *   decode.h    instruction lengths, instruction-boundary checks
 *   insn.h      decode and classify the instruction a probe displaces,
 *               relocate it into an out-of-line slot, emulate it
 *   regs.h      the register frame of a hit (struct dp_regs) and the
 *               register names of fetch arguments (%di, %ax, ...)
 *   optprobe.h  jump-optimised probes: which probe points qualify, the
 *               detour, the jump to it
 *   entrysite.h -fpatchable-function-entry=N,M sites: nops before the
 *               symbol too, a jmp short at it
 *   kuprobe.h   which instructions the kernel's uprobes refuse
 *   disasm.h    an instruction as text, for people (not in the agent)
 *   emit.h      the code emitter: jmp/call/jcc rel32, the absolute jump,
 *               int3 (DP_INT3), nop fill
 *   frame.h     the frame-pointer convention: a frame pointer's checks,
 *               the prologue of a function that keeps one
 *   syscalls.h  the system calls: numbers, and the arguments the kernel's
 *               syscall events declare
 */
#ifndef DPROBE_ARCH_H
#define DPROBE_ARCH_H

#include "arch/x86_64/decode.h"
#include "arch/x86_64/disasm.h"
#include "arch/x86_64/emit.h"
#include "arch/x86_64/entrysite.h"
#include "arch/x86_64/frame.h"
#include "arch/x86_64/insn.h"
#include "arch/x86_64/kuprobe.h"
#include "arch/x86_64/optprobe.h"
#include "arch/x86_64/regs.h"
#include "arch/x86_64/syscalls.h"

#endif
