// SPDX-License-Identifier: GPL-2.0
/*
 * e2e target library, loaded with dlopen() by dl.c: dl_work(a, s) =
 * a * 100 + strlen(s).
 */
#include <string.h>

volatile long dl_sink;

__attribute__((noipa)) long dl_work(long a, const char *s)
{
	dl_sink = a * 100 + (long)strlen(s);
	return dl_sink;
}
