/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SDT/USDT probes (systemtap's <sys/sdt.h>): the sites an ELF file lists in
 * its .note.stapsdt notes, and their argument specs ("-4@-20(%rbp)")
 * translated into dprobe's fetch-argument language ("-20(%bp)" of type
 * "s32"), so that each site becomes an ordinary uprobe definition:
 *
 *	p:sdt_PROV/NAME PATH:0xPC_FOFF(0xSEM_FOFF) arg1=EXPR:TYPE ...
 *
 * Knows ELF files, not processes: every address here is link-time, every
 * offset a file offset.
 */
#ifndef DPROBE_SYM_SDT_H
#define DPROBE_SYM_SDT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sym/elf.h"

#define DP_SDT_MAX_ARGS		12	/* STAP_PROBE12 is sdt.h's largest */
#define DP_SDT_NAME_LEN		64
#define DP_SDT_SPEC_LEN		64
#define DP_SDT_EXPR_LEN		96
#define DP_SDT_TYPE_LEN		16

struct dp_sdt_arg {
	char spec[DP_SDT_SPEC_LEN];	/* as in the note: "-4@-20(%rbp)" */
	int size;		/* bytes: 1, 2, 4 or 8 (anything, @error set) */
	bool is_signed;		/* "-N@" */
	bool is_float;		/* "Nf@": type is x32/x64, the raw IEEE bits */
	/*
	 * The operand as a fetch argument: "%ax", "-20(%bp)", "+0(%di)",
	 * "+8(%ip)", "@+0x4010" (a global: the uprobe language's file-offset
	 * form), "\5" (an immediate).  "" when @error is set.
	 */
	char expr[DP_SDT_EXPR_LEN];
	char type[DP_SDT_TYPE_LEN];	/* "s32", "u64", "x64", "b8@8/64" */
	const char *error;	/* NULL, or why the operand is not translated */
};

struct dp_sdt_probe {
	char provider[DP_SDT_NAME_LEN], name[DP_SDT_NAME_LEN];
	uint64_t pc;		/* link-time address of the site (after the
				 * .stapsdt.base prelink adjustment) */
	uint64_t pc_foff;	/* its file offset (the uprobe's OFFSET) */
	uint64_t sem;		/* link-time address of the semaphore, 0: none */
	uint64_t sem_foff;	/* its file offset (the uprobe's REF_CTR_OFFSET) */
	unsigned nargs;
	struct dp_sdt_arg args[DP_SDT_MAX_ARGS];
	/*
	 * NULL, or why the site itself cannot be probed (its address is not
	 * in an executable segment, its semaphore has no file bytes, more
	 * than DP_SDT_MAX_ARGS arguments, a name that is not an identifier).
	 * Arguments are translated, or carry their own error, either way.
	 */
	const char *error;
};

/*
 * All SDT sites of the ELF file @path, in note order: one entry per site
 * (a probe name may have several).  Returns 0 with *@out a malloc'd array
 * of *@n entries (free() it; NULL when *@n is 0, a file without SDT notes),
 * or a negative errno with the reason in @err: what dp_elf_open() returns
 * for a file it refuses, -ENOEXEC for a malformed .note.stapsdt.
 */
int dp_sdt_read(const char *path, struct dp_sdt_probe **out, size_t *n,
		char *err, size_t errlen);
/* The same for a file already opened (e.g. through the resolver's cache). */
int dp_sdt_read_elf(const struct dp_elf *e, struct dp_sdt_probe **out,
		    size_t *n, char *err, size_t errlen);

/*
 * Translate one argument spec ("[-]N[f]@OPERAND", or a bare OPERAND: size
 * unknown, read as u64) into @out.  Symbols in RIP-relative operands
 * ("foo(%rip)", "foo+8(%rip)", "8+foo(%rip)") are looked up with
 * @sym_foff, which stores the "@+" operand for the symbol itself (the
 * addend is applied here); a NULL @sym_foff makes such operands an error.
 *
 * Returns 0, or with @out->error set: -EINVAL for a spec that is not an
 * operand, -EOPNOTSUPP for one the fetch language cannot express (indexed
 * or segment-relative addresses, SSE registers, signed high-byte
 * registers, sizes other than 1/2/4/8), -ENOENT/-ENOTUNIQ (or the
 * resolver's error) for a symbol it could not resolve, -ERANGE for a
 * symbol plus addend before the start of the file.
 */
int dp_sdt_parse_arg(const char *spec, struct dp_sdt_arg *out,
		     int (*sym_foff)(void *ctx, const char *sym, uint64_t *foff),
		     void *ctx);

/*
 * Decode one NT_STAPSDT note description (@len bytes at @desc) into @p:
 * provider, name, pc and sem as written (not adjusted, no file offsets),
 * and the argument specs split into @p->args[].spec (not translated).
 * *@base is the note's .stapsdt.base address.  Returns 0 (@p->error may
 * be set), or -ENOEXEC with the reason in @err for a malformed
 * description.  dp_sdt_read() is this, then the adjustment and
 * translation; exposed for the fuzzer and the tests.
 */
int dp_sdt_parse_note(const void *desc, size_t len, struct dp_sdt_probe *p,
		      uint64_t *base, char *err, size_t errlen);

#endif
