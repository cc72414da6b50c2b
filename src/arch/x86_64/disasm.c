// SPDX-License-Identifier: GPL-2.0
/* Instructions as text, with Zydis's formatter (see disasm.h). */
#include <errno.h>
#include <stdio.h>

#include <Zydis/Zydis.h>

#include "arch/x86_64/decode.h"
#include "arch/x86_64/disasm.h"

static uint64_t branch_target(const ZydisDecodedInstruction *in,
			      const ZydisDecodedOperand *ops, uint64_t addr)
{
	ZyanU64 to;

	if (!(in->attributes & ZYDIS_ATTRIB_IS_RELATIVE) ||
	    in->meta.category == ZYDIS_CATEGORY_SYSTEM)
		return 0;
	for (unsigned i = 0; i < in->operand_count_visible; i++)
		if (ops[i].type == ZYDIS_OPERAND_TYPE_IMMEDIATE &&
		    ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(in, &ops[i], addr,
							  &to)))
			return to;
	return 0;
}

int dp_disasm(const uint8_t *code, size_t avail, uint64_t addr, char *text,
	      size_t len, uint64_t *target)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction in;
	ZydisDecoder dec;
	ZydisFormatter f;

	if (target)
		*target = 0;
	if (avail > DP_INSN_MAX_LEN)
		avail = DP_INSN_MAX_LEN;
	if (!code || !avail ||
	    !ZYAN_SUCCESS(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64,
					   ZYDIS_STACK_WIDTH_64)) ||
	    !ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, code, avail, &in, ops))) {
		snprintf(text, len, "(bad)");
		return -EILSEQ;
	}
	if (!ZYAN_SUCCESS(ZydisFormatterInit(&f, ZYDIS_FORMATTER_STYLE_ATT)) ||
	    !ZYAN_SUCCESS(ZydisFormatterSetProperty(&f,
				ZYDIS_FORMATTER_PROP_HEX_UPPERCASE, 0)) ||
	    !ZYAN_SUCCESS(ZydisFormatterSetProperty(&f,
				ZYDIS_FORMATTER_PROP_ADDR_PADDING_ABSOLUTE,
				ZYDIS_PADDING_DISABLED)) ||
	    !ZYAN_SUCCESS(ZydisFormatterFormatInstruction(&f, &in, ops,
				in.operand_count_visible, text, len, addr,
				NULL)))
		snprintf(text, len, "?");
	if (target)
		*target = branch_target(&in, ops, addr);
	return in.length;
}
