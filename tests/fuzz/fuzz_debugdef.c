// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness for definitions by name (sym/debugdef.c): every input
 * line is translated against this harness's own executable, whose debug
 * information (it is built with -g) describes the functions below, and
 * each definition it stands for goes through the registry.  Properties
 * checked: no crash/leak/UB (ASan/UBSan); a translation succeeds, sets
 * an error, or (-ENODATA, no debug information) leaves the line to the
 * parser untouched; what it gives names nothing the debug information must
 * translate again, and every line of it is a definition of the same
 * kind (p or r).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "event/event.h"
#include "sym/debugdef.h"

struct fz_hdr {
	unsigned short len;
	unsigned flag : 3, prio : 5;
};

struct fz_msg {
	int id;
	struct fz_hdr hdr;
	char name[8];
	const char *text;
	struct fz_msg *next;
	int vals[4];
	union { int i; unsigned char b[4]; } u;
};

/* Places and variables for the inputs (kept: referenced below). */
__attribute__((noinline, used)) int fz_handle(struct fz_msg *r, int n,
					   const char *who)
{
	volatile int local = n + (who ? who[0] : 0);

	return r ? r->id + local : local;
}

__attribute__((noinline, used)) double fz_float(double x, long k)
{
	return x * (double)k;
}

static struct dp_debugdef *ctx;
static char self[4096];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	(void)argc;
	(void)argv;
	self[n > 0 ? n : 0] = '\0';
	ctx = dp_debugdef_new(self, NULL, 0);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char line[1024], **out = NULL;
	struct dp_error e = { 0 };
	struct dp_registry reg;
	int ret;

	if (!ctx || size >= sizeof(line) || memchr(data, '\0', size) ||
	    memchr(data, '\n', size))
		return 0;
	memcpy(line, data, size);
	line[size] = '\0';
	if (!dp_debugdef_needed(line))
		return 0;
	ret = dp_debugdef_translate(ctx, line, &out, &e);
	if (ret == -ENODATA) {
		/* no debug information: the line goes to the parser as is */
		if (e.code || e.command) {
			fprintf(stderr, "-ENODATA with an error: %s\n", line);
			abort();
		}
		return 0;
	}
	if (ret) {
		if (!e.code && !e.err) {
			fprintf(stderr, "failed without an error: %s\n", line);
			abort();
		}
		dp_error_clear(&e);
		return 0;
	}
	dp_registry_init(&reg);
	for (size_t i = 0; out && out[i]; i++) {
		if (dp_debugdef_needed(out[i]) || out[i][0] != line[0]) {
			fprintf(stderr, "translated to a line that still needs "
				"translating: %s -> %s\n", line, out[i]);
			abort();
		}
		dp_registry_apply(&reg, out[i], NULL, NULL);
	}
	dp_registry_free(&reg);
	dp_debugdef_lines_free(out);
	return 0;
}
