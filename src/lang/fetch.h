/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Running fetch programs against a probe hit, producing an event record
 * laid out as the kernel's: the common header, the probe header, the
 * fixed-size argument fields packed in order, then __data_loc data
 * (lang/layout.h).
 */
#ifndef DPROBE_LANG_FETCH_H
#define DPROBE_LANG_FETCH_H

#include <stddef.h>
#include <stdint.h>

#include "arch/arch.h"
#include "lang/lang.h"
#include "lang/layout.h"

/*
 * Everything a fetch program can read at a hit.  Engines fill it; the
 * memory reader may fail (then the value is recorded as a fault).
 */
struct dp_hit_ctx {
	const struct dp_regs *regs;
	/* Read @len bytes at @addr; 0 on success, -EFAULT otherwise. */
	int (*read_mem)(void *priv, uint64_t addr, void *dst, size_t len);
	/*
	 * Read a NUL-terminated string of at most @max bytes (incl. NUL)
	 * into @dst; returns its length including the NUL, or -EFAULT (also
	 * when no NUL is found within @max).  NULL: built on read_mem.
	 */
	long (*read_str)(void *priv, uint64_t addr, char *dst, size_t max);
	void *priv;		/* for read_mem and read_str */
	/* Symbolize @addr as "sym+0xoff/0xsize" for symbol/symstr; NULL ok. */
	int (*symbolize)(void *sym_priv, uint64_t addr, char *dst, size_t len);
	/* Run-time address of "[MOD:]SYM[+|-offs]" for @SYM; NULL: use the
	 * address the resolver stored (link-time) */
	int (*sym_addr)(void *sym_priv, const char *text, uint64_t *addr);
	void *sym_priv;
	const char *comm;
	int pid;
	uint64_t ip;		/* probe address (entry) */
	uint64_t func;		/* return probe: function address */
	uint64_t ret_ip;	/* return probe: return address */
	uint64_t foffs_base;	/* runtime address of file offset 0 (@+OFFS) */
	const uint64_t *entry_args;	/* $argN saved at entry (returns) */
	unsigned n_entry_args;
	/* an event probe: the attached event's record its $FIELDs are read
	 * from (a string field's value is a place in it) */
	const uint8_t *rec;
	size_t rec_len;
};

/*
 * Build the record into @buf (at most @cap bytes).  @id is the event id
 * stored in common_type.  Returns the record size, or 0 if it does not fit.
 * Strings longer than the space left are recorded as faults.
 */
size_t dp_fetch_record(const struct dp_probe_def *def, unsigned id,
		       const struct dp_hit_ctx *ctx, void *buf, size_t cap);

/* Bytes before the first argument: 16 for entries, 24 for returns. */
unsigned dp_probe_head_size(const struct dp_probe_def *def);

#endif
