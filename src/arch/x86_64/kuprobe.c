// SPDX-License-Identifier: GPL-2.0
/*
 * The host kernel's rules for x86-64 uprobe places (see kuprobe.h).
 *
 * The kernel decodes the instruction and refuses it (ENOTSUPP, 524) when
 *  - a legacy prefix is lock (f0) or an es/cs/ss/ds override (26 2e 36
 *    3e), whatever the byte means there: branch hints and notrack are the
 *    same bytes, so `notrack jmp *%rax` and `cs nopw ...` are refused too;
 *  - it is mov to %ss (it holds traps off for one instruction);
 *  - it is a relative call, jmp or jcc (e8, e9, eb, 70-7f, 0f 80-8f)
 *    with an operand-size prefix (66): its 16-bit forms differ between
 *    Intel and AMD in 64-bit mode, so branch_setup_xol_ops() refuses any
 *    such branch (arch/x86/kernel/uprobes.c);
 *  - its first opcode byte is one of the one-byte opcodes it marks bad:
 *    invalid in 64-bit mode, port I/O, the trap instructions, hlt,
 *    cli/sti and iret.  Two- and three-byte opcodes (0f ...) all pass this
 *    test, as 0f itself is marked good.  For a VEX or EVEX instruction
 *    the "first opcode byte" is the one after the prefix, so vpxor (its
 *    byte ef, out %al,(%dx) in the one-byte map) is refused as well:
 *    measured on Linux 6.18, as the kernel's decoder reads it.
 * It runs its own decoder; an instruction Zydis cannot decode is refused
 * here as well.
 *
 * One rule is dprobe's own: the kernel takes `syscall`, but the process
 * dies with SIGSEGV at the probed address once the probe is hit
 * (measured on Linux 6.18), and a traced process must never crash.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <Zydis/Zydis.h>

#include "arch/x86_64/decode.h"
#include "arch/x86_64/kuprobe.h"

/* What a one-byte opcode the kernel refuses is, or NULL if it takes it. */
static const char *bad_opcode(uint8_t op)
{
	switch (op) {
	case 0x06: case 0x07: case 0x0e: case 0x16: case 0x17: case 0x1e:
	case 0x1f: case 0x27: case 0x2f: case 0x37: case 0x3f: case 0x60:
	case 0x61: case 0x62: case 0x82: case 0x9a: case 0xce: case 0xd4:
	case 0xd5: case 0xd6: case 0xea:
		return "invalid in 64-bit mode";
	case 0x6c: case 0x6d: case 0x6e: case 0x6f: case 0xe4: case 0xe5:
	case 0xe6: case 0xe7: case 0xec: case 0xed: case 0xee: case 0xef:
		return "port I/O";
	case 0xcc: case 0xcd: case 0xf1:
		return "int3, int N or int1";
	case 0xf4:
		return "hlt";
	case 0xfa: case 0xfb:
		return "cli or sti";
	case 0xcf:
		return "iret";
	default:
		return NULL;
	}
}

static const char *bad_prefix(const ZydisDecodedInstruction *insn)
{
	for (int i = 0; i < insn->raw.prefix_count; i++) {
		switch (insn->raw.prefixes[i].value) {
		case 0xf0:
			return "the kernel's uprobes refuse lock-prefixed "
			       "instructions";
		case 0x26: case 0x2e: case 0x36: case 0x3e:
			return "the kernel's uprobes refuse an es/cs/ss/ds "
			       "prefix byte (also the branch-hint and notrack "
			       "prefixes)";
		default:
			break;
		}
	}
	return NULL;
}

static bool has_prefix(const ZydisDecodedInstruction *insn, uint8_t value)
{
	for (int i = 0; i < insn->raw.prefix_count; i++)
		if (insn->raw.prefixes[i].value == value)
			return true;
	return false;
}

/* A relative call, jmp or jcc, as the kernel emulates them. */
static bool is_rel_branch(const ZydisDecodedInstruction *insn)
{
	if (insn->encoding != ZYDIS_INSTRUCTION_ENCODING_LEGACY)
		return false;
	if (insn->opcode_map == ZYDIS_OPCODE_MAP_DEFAULT)
		return insn->opcode == 0xe8 || insn->opcode == 0xe9 ||
		       insn->opcode == 0xeb ||
		       (insn->opcode >= 0x70 && insn->opcode <= 0x7f);
	return insn->opcode_map == ZYDIS_OPCODE_MAP_0F &&
	       insn->opcode >= 0x80 && insn->opcode <= 0x8f;
}

static bool is_mov_ss(const ZydisDecodedInstruction *insn)
{
	return insn->encoding == ZYDIS_INSTRUCTION_ENCODING_LEGACY &&
	       insn->opcode_map == ZYDIS_OPCODE_MAP_DEFAULT &&
	       insn->opcode == 0x8e && insn->raw.modrm.reg == 2;
}

/* The reason the kernel refuses @insn into @reason, or false. */
static bool refused(const ZydisDecodedInstruction *insn, char *reason,
		    size_t len)
{
	bool vex = insn->encoding == ZYDIS_INSTRUCTION_ENCODING_VEX ||
		   insn->encoding == ZYDIS_INSTRUCTION_ENCODING_EVEX;
	const char *s = bad_prefix(insn), *what;

	if (s) {
		snprintf(reason, len, "%s", s);
		return true;
	}
	if (is_mov_ss(insn)) {
		snprintf(reason, len, "the kernel's uprobes refuse mov to "
			 "%%ss (it holds traps off for one instruction)");
		return true;
	}
	if (is_rel_branch(insn) && has_prefix(insn, 0x66)) {
		snprintf(reason, len, "the kernel's uprobes refuse a relative "
			 "call, jmp or jcc with an operand-size prefix (66): "
			 "Intel and AMD differ on its 16-bit form");
		return true;
	}
	if (insn->mnemonic == ZYDIS_MNEMONIC_SYSCALL) {
		snprintf(reason, len, "the kernel takes it, but a process "
			 "that hits a uprobe on syscall dies with SIGSEGV "
			 "(measured on Linux 6.18); --engine agent or ptrace "
			 "probe it");
		return true;
	}
	/* 0f escapes pass; a VEX/EVEX opcode byte is looked up as if it
	 * were a one-byte opcode */
	if (!vex && insn->opcode_map != ZYDIS_OPCODE_MAP_DEFAULT)
		return false;
	if (insn->encoding != ZYDIS_INSTRUCTION_ENCODING_LEGACY && !vex)
		return false;
	what = bad_opcode(insn->opcode);
	if (!what)
		return false;
	if (vex)
		snprintf(reason, len, "the kernel's uprobes look the opcode "
			 "byte after a VEX/EVEX prefix (0x%02x) up in their "
			 "one-byte table, which refuses it (%s)",
			 insn->opcode, what);
	else
		snprintf(reason, len, "the kernel's uprobes refuse opcode "
			 "0x%02x (%s)", insn->opcode, what);
	return true;
}

/* "'TEXT' (BYTES)": the instruction in AT&T syntax, as objdump shows it. */
static void spell(const ZydisDecodedInstruction *insn,
		  const ZydisDecodedOperand *ops, const uint8_t *code,
		  char *out, size_t len)
{
	ZydisFormatter f;
	char text[128] = "?", hex[3 * DP_INSN_MAX_LEN + 1] = "";
	size_t n = 0;

	if (ZYAN_SUCCESS(ZydisFormatterInit(&f, ZYDIS_FORMATTER_STYLE_ATT)) &&
	    ZYAN_SUCCESS(ZydisFormatterSetProperty(&f,
				ZYDIS_FORMATTER_PROP_HEX_UPPERCASE, 0)))
		ZydisFormatterFormatInstruction(&f, insn, ops,
						insn->operand_count_visible,
						text, sizeof(text),
						ZYDIS_RUNTIME_ADDRESS_NONE, NULL);
	for (unsigned i = 0; i < insn->length && n + 4 <= sizeof(hex); i++)
		n += (size_t)snprintf(hex + n, sizeof(hex) - n, "%s%02x",
				      i ? " " : "", code[i]);
	snprintf(out, len, "'%s' (%s)", text, hex);
}

int dp_kuprobe_check(const uint8_t *code, size_t avail, char *why,
		     size_t whylen)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction insn;
	ZydisDecoder dec;
	char text[192], reason[256];

	if (avail > DP_INSN_MAX_LEN)
		avail = DP_INSN_MAX_LEN;
	if (!code || !avail ||
	    !ZYAN_SUCCESS(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64,
					   ZYDIS_STACK_WIDTH_64)) ||
	    !ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, code, avail, &insn,
						 ops))) {
		snprintf(why, whylen, "the bytes there do not decode as an "
			 "x86-64 instruction");
		return -ENOEXEC;
	}
	if (!refused(&insn, reason, sizeof(reason)))
		return 0;
	spell(&insn, ops, code, text, sizeof(text));
	snprintf(why, whylen, "%s: %s", text, reason);
	return -ENOTSUP;
}
