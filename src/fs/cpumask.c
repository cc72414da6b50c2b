// SPDX-License-Identifier: GPL-2.0
/*
 * tracing_cpumask: the CPUs whose hits the buffer records, as the
 * kernel's.  It reads as the kernel's "%*pb" prints a cpumask of
 * nr_cpu_ids bits (hex, 32-bit groups from the highest, comma-separated,
 * the first as wide as its bits need); a write is parsed as
 * bitmap_parse() parses one (groups of at most 8 hex digits, separated
 * by commas or blanks, from the lowest; a bit past the CPUs, or more
 * groups than they need, is EOVERFLOW; another character EINVAL).  A
 * line of a CPU outside the mask is not recorded, as the kernel's
 * per-CPU buffers with recording off take nothing; its triggers still
 * run (they look at the event, not at the buffer).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>

#include "fs/internal.h"

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static bool separator(int c)
{
	return c == ',' || isspace(c);
}

/* The group that ends at @buf[*end - 1], going back; -errno. */
static int group_back(const char *buf, size_t *end, uint32_t *v)
{
	unsigned digits = 0;

	*v = 0;
	while (*end && !separator((unsigned char)buf[*end - 1])) {
		int h = hexval((unsigned char)buf[*end - 1]);

		if (h < 0)
			return -EINVAL;
		if (digits == 8)
			return -EOVERFLOW;
		*v |= (uint32_t)h << (4 * digits++);
		(*end)--;
	}
	return 0;
}

int dp_fs_cpumask_parse(const char *buf, size_t len, uint64_t *mask,
			unsigned nbits)
{
	unsigned groups = (nbits + 31) / 32, n = 0;
	size_t end = strnlen(buf, len);
	const char *nl = memchr(buf, '\n', end);

	if (nl)
		end = (size_t)(nl - buf);
	memset(mask, 0, DP_FS_CPUMASK_WORDS * sizeof(*mask));
	for (;;) {
		uint32_t v;
		int ret;

		while (end && separator((unsigned char)buf[end - 1]))
			end--;
		if (!end)
			break;
		if (n == groups)
			return -EOVERFLOW;
		ret = group_back(buf, &end, &v);
		if (ret)
			return ret;
		mask[n / 2] |= (uint64_t)v << (32 * (n % 2));
		n++;
	}
	for (unsigned b = nbits; b < 32 * n; b++)
		if (mask[b / 64] >> (b % 64) & 1)
			return -EOVERFLOW;
	return 0;
}

void dp_fs_cpumask_print(FILE *out, const uint64_t *mask, unsigned nbits)
{
	unsigned chunk = nbits % 32 ? nbits % 32 : 32;
	int top = (int)((nbits + 31) / 32) - 1;

	for (int g = top; g >= 0; g--) {
		uint32_t v = (uint32_t)(mask[g / 2] >> (32 * (g % 2)));

		if (chunk < 32)
			v &= (1u << chunk) - 1;
		fprintf(out, "%s%0*x", g == top ? "" : ",", (int)(chunk + 3) / 4,
			v);
		chunk = 32;
	}
	fputc('\n', out);
}

unsigned dp_fs_possible_cpus(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "re");
	char line[256];
	unsigned n = 0;

	/* "0-1", "0-3,8-11": the highest CPU is after the last '-' or ',' */
	if (f && fgets(line, sizeof(line), f)) {
		char *p = line + strcspn(line, "\n");

		while (p > line && isdigit((unsigned char)p[-1]))
			p--;
		n = (unsigned)strtoul(p, NULL, 10) + 1;
	}
	if (f)
		fclose(f);
	if (!n)
		n = (unsigned)get_nprocs_conf();
	return n > DP_FS_CPUMASK_WORDS * 64 ? DP_FS_CPUMASK_WORDS * 64 : n;
}

void dp_fs_cpumask_all(uint64_t *mask, unsigned nbits)
{
	memset(mask, 0, DP_FS_CPUMASK_WORDS * sizeof(*mask));
	for (unsigned b = 0; b < nbits; b++)
		mask[b / 64] |= 1ull << (b % 64);
}

bool dp_fs_cpu_traced(const struct dp_fs *fs, int cpu)
{
	/* a line whose CPU is not known (dprobe's own) is recorded */
	if (cpu < 0 || (unsigned)cpu >= DP_FS_CPUMASK_WORDS * 64)
		return true;
	return fs->cpumask[cpu / 64] >> (cpu % 64) & 1;
}
