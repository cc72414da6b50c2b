// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness for SDT notes (sym/sdt): the input is read both as an
 * NT_STAPSDT note description and as a note's argument string.  Properties
 * checked: no crash/leak/UB (ASan/UBSan); an argument spec is either
 * translated (size 1/2/4/8, an expression and a type) or refused with a
 * reason, never both; and every translation is accepted by the definition
 * parser in the uprobe definition the tracer would build from it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/lang.h"
#include "sym/sdt.h"

/* Any symbol resolves (to an offset derived from its name) but "nosuch*". */
static int fake_foff(void *ctx, const char *sym, uint64_t *foff)
{
	uint64_t h = 1469598103934665603ULL;

	(void)ctx;
	if (!strncmp(sym, "nosuch", 6))
		return -ENOENT;
	for (const char *s = sym; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ULL;
	*foff = h >> 20;
	return 0;
}

static void check_translation(const struct dp_sdt_arg *a)
{
	char line[DP_SDT_EXPR_LEN + DP_SDT_TYPE_LEN + 64];
	struct dp_probe_def def;
	struct dp_error e = { 0 };

	if (a->size != 1 && a->size != 2 && a->size != 4 && a->size != 8) {
		fprintf(stderr, "'%s': size %d\n", a->spec, a->size);
		abort();
	}
	if (!a->expr[0] || !a->type[0]) {
		fprintf(stderr, "'%s': empty translation\n", a->spec);
		abort();
	}
	snprintf(line, sizeof(line), "p:g/e /bin/true:0x10(0x20) a=%s:%s",
		 a->expr, a->type);
	if (dp_parse_probe(line, &def, &e)) {
		fprintf(stderr, "'%s' -> refused: %s (%s)\n", a->spec, line,
			e.detail);
		abort();
	}
	dp_probe_def_free(&def);
	dp_error_clear(&e);
}

static void check_spec(const char *spec)
{
	struct dp_sdt_arg a;
	int ret = dp_sdt_parse_arg(spec, &a, fake_foff, NULL);

	if (!ret != !a.error) {
		fprintf(stderr, "'%s': ret %d, error %s\n", spec, ret,
			a.error ? a.error : "(none)");
		abort();
	}
	if (!ret)
		check_translation(&a);
	else if (a.expr[0])
		abort();
}

static void as_note(const uint8_t *data, size_t size)
{
	struct dp_sdt_probe p;
	uint64_t base;
	char err[128];

	if (dp_sdt_parse_note(data, size, &p, &base, err, sizeof(err)))
		return;
	if (p.nargs > DP_SDT_MAX_ARGS)
		abort();
	for (unsigned i = 0; i < p.nargs; i++)
		if (!p.args[i].error)
			check_spec(p.args[i].spec);
}

static void as_arg_string(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *tok, *save = NULL;

	memcpy(text, data, size);
	text[size] = '\0';
	for (tok = strtok_r(text, " \t\n", &save); tok;
	     tok = strtok_r(NULL, " \t\n", &save))
		check_spec(tok);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	as_note(data, size);
	as_arg_string(data, size);
	return 0;
}
