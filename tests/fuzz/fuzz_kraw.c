// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness for what the kernel engine parses from tracefs
 * (engine/kernel): the input is read as a trace_pipe_raw page (with the
 * default layout, and with a layout parsed from the input's text as a
 * header_page/header_event pair) and as a `format` file.  Properties
 * checked: no crash/leak/UB (ASan/UBSan), and every record the page
 * parser hands out lies inside the page with a length that is a multiple
 * of 4; every format field has a name and a size within its line's bounds.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/kernel/internal.h"

static void walk_page(const struct dp_kraw_layout *l, const uint8_t *buf,
		      size_t len)
{
	struct dp_kraw_page pg;
	struct dp_kraw_rec r;
	int n;

	if (dp_kraw_page_init(&pg, l, buf, len))
		return;
	while ((n = dp_kraw_next(&pg, &r)) == 1) {
		if (r.data < buf || r.data + r.len > buf + len || r.len % 4) {
			fprintf(stderr, "record out of the page: +%td len %zu\n",
				r.data - buf, r.len);
			abort();
		}
	}
}

static void walk_format(const char *text)
{
	const char *pos = text;
	struct dp_kfield f;

	while (dp_kformat_next(&pos, &f) == 1) {
		if (!f.name[0] || pos < text || pos > text + strlen(text)) {
			fprintf(stderr, "bad field '%s'\n", f.name);
			abort();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dp_kraw_layout l;
	uint8_t *page = malloc(size ? size : 1);
	char *text = malloc(size + 1), *sep;

	if (!page || !text)
		goto out;
	memcpy(page, data, size);
	dp_kraw_layout_default(&l);
	walk_page(&l, page, size);

	memcpy(text, data, size);
	text[size] = '\0';
	walk_format(text);
	/* "header_page\0header_event": a layout from text, then the page */
	sep = memchr(text, '\0', size);
	if (!dp_kraw_layout_parse(&l, text, sep && sep < text + size ?
				  sep + 1 : NULL))
		walk_page(&l, page, size);
out:
	free(page);
	free(text);
	return 0;
}
