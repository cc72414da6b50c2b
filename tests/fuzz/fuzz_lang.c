// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness for the definition language: every input line goes
 * through the registry as a write to *_events would.  Properties checked:
 * no crash/leak/UB (ASan/UBSan); an accepted definition's canonical line
 * parses again to the same canonical line; its record can be fetched from
 * a synthetic hit and rendered without reading outside the record; a
 * synthetic event's listing defines the same event again; an event probe
 * (e:) fetches from a record of its attached event without reading
 * outside it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event/event.h"
#include "lang/fetch.h"
#include "output/output.h"

static uint8_t mem[256];

static int fake_read(void *priv, uint64_t addr, void *dst, size_t len)
{
	(void)priv;
	if (addr < 0x1000 || addr - 0x1000 + len > sizeof(mem))
		return -EFAULT;
	memcpy(dst, mem + (addr - 0x1000), len);
	return 0;
}

static void roundtrip(const struct dp_probe *p)
{
	char *canon = dp_probe_canonical(&p->def), *again;
	struct dp_probe_def def;

	if (!canon)
		return;
	if (dp_parse_probe(canon, &def, NULL) == 0) {
		again = dp_probe_canonical(&def);
		if (again && strcmp(canon, again)) {
			fprintf(stderr, "canonical drift:\n%s\n%s\n", canon, again);
			abort();
		}
		free(again);
		dp_probe_def_free(&def);
	} else if (p->def.kind == DP_KIND_UPROBE) {
		fprintf(stderr, "canonical line refused: %s\n", canon);
		abort();
	}
	free(canon);
}

/* A synthetic event's listing defines the same event again. */
static void synth_roundtrip(const struct dp_registry *reg, FILE *sink)
{
	for (const struct dp_event *ev = reg->events; ev; ev = ev->next) {
		char *list, *again = NULL;
		struct dp_synth_def d;

		if (!ev->synth)
			continue;
		list = dp_synth_listing(ev->synth);
		if (!list)
			continue;
		if (dp_parse_synth(list, false, &d, NULL) == 0) {
			again = dp_synth_listing(&d);
			dp_synth_def_free(&d);
		}
		if (!again || strcmp(list, again)) {
			fprintf(stderr, "synthetic listing drift:\n%s\n%s\n",
				list, again ? again : "(refused)");
			abort();
		}
		dp_event_format(ev, sink);
		free(again);
		free(list);
	}
}

static void fire(const struct dp_probe *p, FILE *sink)
{
	struct dp_regs regs = { .di = 0x1000, .si = 0x1008, .sp = 0x1010,
				.ax = 7, .dx = 0x1040 };
	struct dp_hit_ctx ctx = { .regs = &regs, .read_mem = fake_read,
				  .comm = "fuzz", .ip = 0x401000 };
	struct dp_rec_meta meta = { .comm = "fuzz", .pid = 1 };
	static uint8_t rec[65536], att[512];
	size_t n;

	/* an event probe reads a record of the event it is on: bytes
	 * whose __data_loc words point anywhere, in the record or not */
	if (p->def.kind == DP_KIND_EPROBE) {
		for (size_t i = 0; i < sizeof(att); i++)
			att[i] = (uint8_t)(i * 13 + 5);
		ctx.rec = att;
		ctx.rec_len = p->event->attached &&
			      p->event->attached->fixed_size < sizeof(att) ?
			      p->event->attached->fixed_size + 64 : sizeof(att);
	}
	n = dp_fetch_record(&p->def, p->event->id, &ctx, rec, sizeof(rec));

	if (n) {
		dp_trace_line(sink, p->event, rec, n, &meta, NULL);
		dp_json_line(sink, p->event, rec, n, &meta, NULL);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dp_registry reg;
	char *text = malloc(size + 1), *line, *save = NULL;
	FILE *sink = fopen("/dev/null", "w");

	for (size_t i = 0; i < sizeof(mem); i++)
		mem[i] = (uint8_t)(i * 7 + 1);
	mem[200] = 0;
	memcpy(mem, (uint64_t[]){ 0x1040 }, 8);
	memcpy(text, data, size);
	text[size] = '\0';
	dp_registry_init(&reg);
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		struct dp_probe *p = NULL;
		struct dp_error e = { 0 };

		if (dp_registry_apply(&reg, line, &p, &e) == 0 && p) {
			roundtrip(p);
			fire(p, sink);
		} else if (e.command) {
			dp_error_print(&e, sink);
		}
		dp_error_clear(&e);
	}
	synth_roundtrip(&reg, sink);
	dp_registry_free(&reg);
	fclose(sink);
	free(text);
	return 0;
}
