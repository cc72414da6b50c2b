/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Files the Makefile builds for the unit tests, under $DPROBE_BUILD:
 * test_data("x") is $DPROBE_BUILD/tests/data/x, test_build("examples/",
 * "y") is $DPROBE_BUILD/examples/y.  The last eight results stay valid.
 */
#ifndef DPROBE_TEST_DATA_H
#define DPROBE_TEST_DATA_H

#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

/* $DPROBE_BUILD/@dir@name */
static inline const char *test_build(const char *dir, const char *name)
{
	static char buf[8][PATH_MAX];
	static int next;
	const char *top = getenv("DPROBE_BUILD");
	char *b = buf[next++ % 8];

	cr_assert(top, "DPROBE_BUILD is not set");
	snprintf(b, sizeof(buf[0]), "%s/%s%s", top, dir, name);
	return b;
}

static inline const char *test_data(const char *name)
{
	return test_build("tests/data/", name);
}

#endif
