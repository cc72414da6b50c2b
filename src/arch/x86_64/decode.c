// SPDX-License-Identifier: GPL-2.0
/*
 * Instruction decoding with Zydis.  Only lengths are needed here, so the
 * operands are never decoded.
 */
#include <errno.h>
#include <pthread.h>

#include <Zydis/Zydis.h>

#include "arch/x86_64/decode.h"

static ZydisDecoder decoder;
static pthread_once_t decoder_once = PTHREAD_ONCE_INIT;

static void decoder_init(void)
{
	ZydisDecoderInit(&decoder, ZYDIS_MACHINE_MODE_LONG_64,
			 ZYDIS_STACK_WIDTH_64);
}

int dp_insn_length(const uint8_t *code, size_t len)
{
	ZydisDecodedInstruction insn;

	if (!code || !len)
		return -EILSEQ;
	pthread_once(&decoder_once, decoder_init);
	if (len > DP_INSN_MAX_LEN)
		len = DP_INSN_MAX_LEN;
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&decoder, NULL, code,
							len, &insn)))
		return -EILSEQ;
	return insn.length;
}

int dp_insn_boundary_at(const uint8_t *code, size_t len, uint64_t start,
			uint64_t target, uint64_t *insn_start)
{
	uint64_t pos = 0, want;
	int n;

	if (insn_start)
		*insn_start = target;
	if (target < start)
		return -EINVAL;
	want = target - start;
	while (pos < want) {
		n = pos < len ? dp_insn_length(code + pos, len - pos) : -EILSEQ;
		if (n < 0 || pos + n > want) {
			/* @target is inside this instruction, or unreachable */
			if (insn_start)
				*insn_start = start + pos;
			return -EILSEQ;
		}
		pos += n;
	}
	return 0;
}

int dp_insn_boundary(const uint8_t *code, size_t len, uint64_t start,
		     uint64_t target)
{
	return dp_insn_boundary_at(code, len, start, target, NULL);
}
