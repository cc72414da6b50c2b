// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lang/argv.h"

int dp_argv_split(const char *line, struct dp_argv *a)
{
	size_t cap = 8;
	const char *p = line;

	a->argc = 0;
	a->argv = calloc(cap, sizeof(*a->argv));
	if (!a->argv)
		return -ENOMEM;
	for (;;) {
		const char *start;

		while (*p && isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		start = p;
		while (*p && !isspace((unsigned char)*p))
			p++;
		if ((size_t)a->argc + 2 > cap) {
			char **n = realloc(a->argv, cap * 2 * sizeof(*n));

			if (!n)
				goto nomem;
			a->argv = n;
			cap *= 2;
		}
		a->argv[a->argc] = strndup(start, (size_t)(p - start));
		if (!a->argv[a->argc])
			goto nomem;
		a->argv[++a->argc] = NULL;
	}
	return 0;
nomem:
	dp_argv_free(a);
	return -ENOMEM;
}

void dp_argv_free(struct dp_argv *a)
{
	for (int i = 0; a->argv && i < a->argc; i++)
		free(a->argv[i]);
	free(a->argv);
	a->argv = NULL;
	a->argc = 0;
}

char *dp_argv_join(const struct dp_argv *a)
{
	size_t len = 1;
	char *s, *p;

	for (int i = 0; i < a->argc; i++)
		len += strlen(a->argv[i]) + 1;
	s = p = malloc(len);
	if (!s)
		return NULL;
	*p = '\0';
	for (int i = 0; i < a->argc; i++) {
		size_t n = strlen(a->argv[i]);

		if (i)
			*p++ = ' ';
		memcpy(p, a->argv[i], n);
		p += n;
		*p = '\0';
	}
	return s;
}
