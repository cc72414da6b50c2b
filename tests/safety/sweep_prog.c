// SPDX-License-Identifier: GPL-2.0
/*
 * Target of the instruction sweep: calls strlen and memcpy (whatever
 * implementation the IFUNC picked) and a few functions of its own on many
 * inputs and prints a checksum, so a probe that changes behaviour shows.
 * With "addr" it prints the run-time addresses of the libc functions it
 * uses, as file offsets in libc, for the sweep to probe.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) unsigned long mix(unsigned long h, const char *s,
					    size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ul;
	return h;
}

__attribute__((noinline)) int classify(int x)
{
	switch (x % 7) {
	case 0: return x / 3;
	case 1: return x * 5 + 1;
	case 2: return -x;
	case 3: return x << 2;
	case 4: return x > 100 ? 1 : 2;
	default: return x & 0x55;
	}
}

static size_t (*volatile p_strlen)(const char *) = strlen;
static void *(*volatile p_memcpy)(void *, const void *, size_t) = memcpy;

/* File offset in libc of the code at run-time address @a. */
static void print_offset(const char *name, void *a)
{
	Dl_info info;
	struct link_map *lm;

	if (!dladdr1(a, &info, (void **)&lm, RTLD_DL_LINKMAP))
		return;
	printf("%s %s 0x%lx\n", name, info.dli_fname,
	       (unsigned long)((uintptr_t)a - lm->l_addr));
}

int main(int argc, char **argv)
{
	static char buf[4096], dst[4096];
	unsigned long h = 14695981039346656037ul;

	if (argc > 1 && !strcmp(argv[1], "addr")) {
		print_offset("strlen", (void *)p_strlen);
		print_offset("memcpy", (void *)p_memcpy);
		return 0;
	}
	for (int i = 0; i < (int)sizeof(buf) - 1; i++)
		buf[i] = (char)('a' + i % 26);
	for (int n = 0; n < 3000; n += 37) {
		size_t len;

		buf[n] = '\0';
		len = p_strlen(buf);
		h = mix(h, buf + len / 2, len < 16 ? len : 16);
		h += len;
		buf[n] = (char)('a' + n % 26);
		p_memcpy(dst, buf + (n % 13), (size_t)n);
		h = mix(h, dst + n / 2, n < 16 ? (size_t)n : 16);
		h += (unsigned long)classify(n);
	}
	printf("%lx\n", h);
	return 0;
}
