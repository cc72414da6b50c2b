/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A target's memory for the fetch tests: 8 KiB readable at MEM_BASE, the
 * rest faults.  put() writes test data into it; fake_read() is the
 * dp_hit_ctx reader.
 */
#ifndef DPROBE_TEST_FAKE_MEM_H
#define DPROBE_TEST_FAKE_MEM_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define MEM_BASE 0x2000u

static uint8_t mem[0x2000];	/* readable 0x2000..0x3fff */

static inline int fake_read(void *priv, uint64_t addr, void *dst, size_t len)
{
	(void)priv;
	if (addr < MEM_BASE || addr + len > MEM_BASE + sizeof(mem) ||
	    addr + len < addr)
		return -EFAULT;
	memcpy(dst, mem + (addr - MEM_BASE), len);
	return 0;
}

static inline void put(uint64_t addr, const void *p, size_t n)
{
	memcpy(mem + (addr - MEM_BASE), p, n);
}

#endif
