// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>

#include "lang/kstrto.h"

/* The kernel's _parse_integer_fixup_radix(). */
static const char *fixup_radix(const char *s, unsigned *base)
{
	if (*base == 0) {
		if (s[0] == '0') {
			if (tolower((unsigned char)s[1]) == 'x' &&
			    isxdigit((unsigned char)s[2]))
				*base = 16;
			else
				*base = 8;
		} else {
			*base = 10;
		}
	}
	if (*base == 16 && s[0] == '0' && tolower((unsigned char)s[1]) == 'x')
		s += 2;
	return s;
}

static int digit_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)tolower((unsigned char)c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return 99;
}

unsigned dp_parse_digits(const char *s, unsigned base, uint64_t *res,
			 bool *overflow)
{
	uint64_t v = 0;
	unsigned n = 0;

	*overflow = false;
	for (;; n++) {
		int d = digit_value(s[n]);

		if (d >= (int)base)
			break;
		if (v > (UINT64_MAX - (uint64_t)d) / base)
			*overflow = true;
		v = v * base + (uint64_t)d;
	}
	*res = v;
	return n;
}

/* _kstrtoull(): digits only, no sign. */
static int kstrtoull_nosign(const char *s, unsigned base, uint64_t *res)
{
	bool overflow;
	unsigned n;

	s = fixup_radix(s, &base);
	n = dp_parse_digits(s, base, res, &overflow);
	if (n == 0)
		return -EINVAL;
	if (overflow)
		return -ERANGE;
	s += n;
	if (*s == '\n')
		s++;
	return *s ? -EINVAL : 0;
}

int dp_kstrtoull(const char *s, unsigned base, uint64_t *res)
{
	if (s[0] == '+')
		s++;
	return kstrtoull_nosign(s, base, res);
}

int dp_kstrtoll(const char *s, unsigned base, int64_t *res)
{
	uint64_t tmp;
	int ret;

	if (s[0] == '-') {
		ret = kstrtoull_nosign(s + 1, base, &tmp);
		if (ret < 0)
			return ret;
		if (tmp > (uint64_t)INT64_MAX + 1)
			return -ERANGE;
		*res = (int64_t)(0 - tmp);
		return 0;
	}
	ret = dp_kstrtoull(s, base, &tmp);
	if (ret < 0)
		return ret;
	if (tmp > (uint64_t)INT64_MAX)
		return -ERANGE;
	*res = (int64_t)tmp;
	return 0;
}

int dp_kstrtouint(const char *s, unsigned base, unsigned *res)
{
	uint64_t tmp;
	int ret = dp_kstrtoull(s, base, &tmp);

	if (ret < 0)
		return ret;
	if (tmp > UINT32_MAX)
		return -ERANGE;
	*res = (unsigned)tmp;
	return 0;
}

uint64_t dp_simple_strtoul(const char *s, const char **end, unsigned base)
{
	uint64_t v;
	bool overflow;

	s = fixup_radix(s, &base);
	s += dp_parse_digits(s, base, &v, &overflow);
	if (end)
		*end = s;
	return v;
}
