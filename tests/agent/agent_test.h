/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A minimal TAP harness for the libdprobe tests: each BEGIN()..END() is a
 * case, "ok N - name" or "not ok N - name", with the failed checks as
 * "#" lines; tests/agent/run.sh counts them.  Checks never stop a case.
 */
#ifndef DPROBE_TESTS_AGENT_TEST_H
#define DPROBE_TESTS_AGENT_TEST_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int t_cases, t_failed;
static bool t_ok;
static const char *t_name;
static const char *t_prefix = "";	/* before each case's name */

#define BEGIN(name)		\
	do {			\
		t_name = (name);	\
		t_ok = true;	\
	} while (0)

#define CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			t_ok = false;					\
			printf("#   %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			printf(__VA_ARGS__);				\
			printf("\n");					\
		}							\
	} while (0)

/* Integer equality, both values shown on failure. */
#define CHECK_EQ(a, b)							\
	CHECK((long long)(a) == (long long)(b), "%lld != %lld",	\
	      (long long)(a), (long long)(b))

/* String equality (NULL is a failure), both shown. */
#define CHECK_STR_EQ(a, b)						\
	do {								\
		const char *a_ = (a), *b_ = (b);			\
		CHECK(a_ && b_ && !strcmp(a_, b_), "\"%s\" != \"%s\"", \
		      a_ ? a_ : "(null)", b_ ? b_ : "(null)");		\
	} while (0)

#define END()								\
	do {								\
		t_cases++;						\
		if (!t_ok)						\
			t_failed++;					\
		printf("%s %d - %s%s\n", t_ok ? "ok" : "not ok", t_cases, \
		       t_prefix, t_name);				\
		fflush(stdout);						\
	} while (0)

static inline int t_exit(void)
{
	printf("1..%d\n", t_cases);
	return t_failed ? 1 : 0;
}

#endif
