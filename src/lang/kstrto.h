/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Number parsing with the kernel's kstrto*() rules, so every number in a
 * definition is accepted or refused exactly as the kernel would: base 0
 * means "0x" hex, leading-0 octal, else decimal; one leading '+' allowed;
 * one trailing newline allowed; nothing else after the digits.
 * Return 0, -EINVAL (malformed) or -ERANGE (overflow).
 */
#ifndef DPROBE_LANG_KSTRTO_H
#define DPROBE_LANG_KSTRTO_H

#include <stdbool.h>
#include <stdint.h>

int dp_kstrtoull(const char *s, unsigned base, uint64_t *res);
int dp_kstrtoll(const char *s, unsigned base, int64_t *res);
int dp_kstrtouint(const char *s, unsigned base, unsigned *res);
/*
 * The kernel's _parse_integer(): the digits of @base (2..16) at the start
 * of @s, no prefix, no sign.  Returns how many there are; *@res is their
 * value, *@overflow set if it does not fit in 64 bits.
 */
unsigned dp_parse_digits(const char *s, unsigned base, uint64_t *res,
			 bool *overflow);
/* simple_strtoul(): parses a prefix, never fails; *end after the digits. */
uint64_t dp_simple_strtoul(const char *s, const char **end, unsigned base);

#endif
