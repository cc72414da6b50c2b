// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <string.h>

#include "arch/x86_64/emit.h"
#include "arch/x86_64/entrysite.h"
#include "arch/x86_64/insn.h"

static const uint8_t endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };

size_t dp_entry_nop_bytes(const uint8_t *code, size_t len)
{
	size_t n = 0;

	while (n < len) {
		struct dp_insn in;

		if (dp_insn_analyze(code + n, len - n, 0, &in, NULL) ||
		    in.op != DP_OP_NOP ||
		    (in.len == 4 && !memcmp(in.bytes, endbr64, 3)))
			break;	/* (endbr32 too: f3 0f 1e fb) */
		n += in.len;
	}
	return n;
}

/* One-byte nops ending @pre; only those: a gap in them is padding. */
static size_t pre_nops(const uint8_t *pre, size_t npre)
{
	size_t n = 0;

	while (n < npre && pre[npre - 1 - n] == 0x90)
		n++;
	return n;
}

/* After an endbr64, if @code starts with one. */
static size_t past_endbr(const uint8_t *code, size_t len)
{
	return len >= 4 && !memcmp(code, endbr64, 4) ? 4 : 0;
}

enum dp_entry_site dp_entry_site_around(const uint8_t *pre, size_t npre,
					const uint8_t *code, size_t len,
					uint64_t fstart, uint64_t *at)
{
	enum dp_entry_site e = dp_entry_site(code, len, fstart, at);
	size_t k = past_endbr(code, len), n, m;

	if (e != DP_ENTRY_NONE)
		return e;
	n = dp_entry_nop_bytes(code + k, len - k);
	m = pre_nops(pre, npre);
	if (n >= 2 && n < DP_OPT_JMP_LEN && m >= DP_ENTRY_PRE_LEN)
		return DP_ENTRY_PATCHABLE_SHORT;
	/* two or more one-byte nops: an assembler pads with long ones */
	if ((n >= 2 && n < DP_OPT_JMP_LEN) || m >= 2)
		return DP_ENTRY_PATCHABLE_UNUSED;
	return DP_ENTRY_NONE;
}

/* A relative branch of the function into (patch, patch + n) or the nops
 * before it: a thread would land inside a jump. */
static int branch_into(const uint8_t *fcode, uint64_t fstart, size_t fsize,
		       uint64_t patch, unsigned int n, const char **why)
{
	for (size_t off = 0; off < fsize;) {
		struct dp_insn in;
		int len;

		if (!dp_insn_analyze(fcode + off, fsize - off, fstart + off,
				     &in, NULL)) {
			len = in.len;
			if (dp_insn_has_target(&in) &&
			    ((in.target > patch && in.target < patch + n) ||
			     (in.target < fstart &&
			      in.target >= fstart - DP_ENTRY_PRE_LEN))) {
				*why = "a branch targets the entry's nops";
				return -EOPNOTSUPP;
			}
		} else {
			len = dp_insn_length(fcode + off, fsize - off);
			if (len <= 0) {
				*why = "the function does not decode";
				return -EILSEQ;
			}
		}
		off += (size_t)len;
	}
	return 0;
}

/* The nops at op->patch as the region's instructions (relocated to
 * nothing, see dp_opt_relocate()). */
static int take_nops(const uint8_t *code, size_t n, struct dp_optprobe *op)
{
	for (size_t off = 0; off < n;) {
		struct dp_insn *in = &op->insn[op->ninsn];

		if (op->ninsn == DP_OPT_MAX_INSNS ||
		    dp_insn_analyze(code + off, n - off, op->patch + off, in,
				    NULL))
			return -EOPNOTSUPP;
		op->ninsn++;
		off += in->len;
	}
	op->nbytes = (unsigned int)n;
	return 0;
}

int dp_opt_analyze_short(const uint8_t *fcode, uint64_t fstart, size_t fsize,
			 const uint8_t *pre, struct dp_optprobe *op,
			 const char **why)
{
	const char *dummy;
	uint64_t at;
	size_t k, n;

	if (!why)
		why = &dummy;
	*why = "not a patchable entry with nops before the symbol";
	memset(op, 0, sizeof(*op));
	if (fstart < DP_ENTRY_PRE_LEN ||
	    dp_entry_site_around(pre, DP_ENTRY_PRE_LEN, fcode, fsize, fstart,
				 &at) != DP_ENTRY_PATCHABLE_SHORT)
		return -EOPNOTSUPP;
	k = (size_t)(at - fstart);
	n = dp_entry_nop_bytes(fcode + k, fsize - k);
	if (k + n >= fsize)
		return -EOPNOTSUPP;	/* nothing after the nops to go back to */
	op->addr = fstart;
	op->patch = at;
	op->entry_site = DP_ENTRY_PATCHABLE_SHORT;
	if (take_nops(fcode + k, n, op))
		return -EOPNOTSUPP;
	*why = NULL;
	return branch_into(fcode, fstart, fsize, at, op->nbytes, why);
}

int dp_opt_make_pre_jump(const struct dp_optprobe *op, uint64_t detour,
			 uint8_t out[DP_ENTRY_PRE_LEN])
{
	struct dp_emit e;

	dp_emit_init(&e, out, DP_ENTRY_PRE_LEN, dp_opt_pre_addr(op));
	return dp_emit_jmp(&e, detour);
}

int dp_opt_make_jump_short(const struct dp_optprobe *op, uint8_t *out)
{
	struct dp_emit e;
	int err;

	dp_emit_init(&e, out, op->nbytes, op->patch);
	err = dp_emit_jmp8(&e, dp_opt_pre_addr(op));
	if (!err)
		err = dp_emit_int3(&e, op->nbytes - DP_JMP_REL8_LEN);
	return err;
}
