/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a renderer writes, captured in memory (open_memstream) for the
 * tests to compare.
 */
#ifndef DPROBE_TEST_CAPTURE_H
#define DPROBE_TEST_CAPTURE_H

#include <criterion/criterion.h>
#include <stdio.h>

struct cap {
	char *buf;
	size_t len;
	FILE *f;
};

static inline FILE *cap_open(struct cap *c)
{
	c->buf = NULL;
	c->len = 0;
	c->f = open_memstream(&c->buf, &c->len);
	cr_assert_not_null(c->f);
	return c->f;
}

/* Closes the stream; the caller frees the text. */
static inline char *cap_close(struct cap *c)
{
	fclose(c->f);
	return c->buf;
}

#endif
