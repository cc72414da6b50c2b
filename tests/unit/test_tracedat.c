// SPDX-License-Identifier: GPL-2.0
/*
 * Recordings (record/tracedat.h): what the writer puts in a trace.dat
 * comes back from the reader byte for byte, in time order, with the
 * losses, stacks, tasks, definitions and symbols beside it; a record
 * longer than a page is refused and counted; a file cut short is read
 * up to its last whole page and says so; foreign and newer files are
 * refused with a message.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "event/event.h"
#include "lang/layout.h"
#include "record/tracedat.h"

static struct dp_registry reg;
static struct dp_event *ev;
static char path[] = "/tmp/dp-unit-tdat.XXXXXX";

static void setup(void)
{
	struct dp_error err = { 0 };
	int fd;

	dp_registry_init(&reg);
	cr_assert_eq(dp_registry_apply(&reg, "p:grp/k work x=%di:u32 "
				       "s=+0(%si):string", NULL, &err), 0);
	ev = dp_registry_find(&reg, "grp", "k");
	cr_assert_not_null(ev);
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
}

static void teardown(void)
{
	dp_registry_free(&reg);
	unlink(path);
	strcpy(path, "/tmp/dp-unit-tdat.XXXXXX");
}

/* A record of ev: x = @x, s = @slen bytes of 'a'+x%26 and a NUL. */
static size_t make_rec(uint8_t *rec, uint32_t x, size_t slen)
{
	unsigned data = DP_ENTRY_HEAD_SIZE + 8;
	uint32_t loc = (uint32_t)((slen + 1) << 16 | data);

	memset(rec, 0, data + slen + 1);
	rec[0] = ev->id & 0xff;
	rec[1] = ev->id >> 8;
	memcpy(rec + 8, &(uint64_t){ 0x401000 }, 8);
	memcpy(rec + DP_ENTRY_HEAD_SIZE, &x, 4);
	memcpy(rec + DP_ENTRY_HEAD_SIZE + 4, &loc, 4);
	memset(rec + data, 'a' + x % 26, slen);
	return data + slen + 1;
}

static int fake_lookup(void *priv, uint64_t addr, const char **sym,
		       uint64_t *off, uint64_t *size)
{
	(void)priv;
	if (addr < 0x401000 || addr >= 0x401100)
		return -1;
	*sym = "work";
	*off = addr - 0x401000;
	*size = 0x100;
	return 0;
}

static const struct dp_symbolizer fake_sym = { fake_lookup, NULL };

static void write_file(struct dp_tdat_writer *w)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f);
	cr_assert_eq(dp_tdat_finish(w, f), 0);
	fclose(f);
	dp_tdat_writer_free(w);
}

TestSuite(tracedat, .init = setup, .fini = teardown);

/* A writer of version 6, or of version 7 compressed. */
static struct dp_tdat_writer *writer(int ncpus, bool compress)
{
	struct dp_tdat_writer *w = dp_tdat_writer_new(NULL, ncpus);

	cr_assert_not_null(w);
	if (compress)
		cr_assert_eq(dp_tdat_writer_compress(w, DP_TDAT_ZSTD_LEVEL), 0);
	return w;
}

/* 3000 records on two CPUs: small and large, gaps needing a time extend,
 * one going back in time; a loss in the middle and one at the end; a
 * stack.  All come back, in time order, each as it was written. */
static void round_trip(bool compress)
{
	struct dp_tdat_writer *w = writer(2, compress);
	static const uint64_t frames[3] = { 0x401010, 0x401020, 0x7fff0 };
	uint8_t rec[512], want[512];
	struct dp_tdat_rec r;
	struct dp_symbolizer sym;
	const char *name;
	uint64_t off, size, last = 0, ts = 1000;
	unsigned n = 0, losses = 0, stacks = 0, back = 0;

	cr_assert_not_null(w);
	for (uint32_t i = 0; i < 3000; i++) {
		struct dp_rec_meta m = { .cpu = (int)(i % 2), .pid = 77,
					 .tgid = 70, .comm = "worker" };
		size_t len = make_rec(rec, i, i % 7 == 0 ? 300 : i % 50);

		ts += i % 100 == 0 ? 1ull << 30 : 37;
		m.ts_ns = i == 1500 ? ts - 5000 : ts;	/* back in time */
		if (i == 10) {
			m.stack = frames;
			m.nstack = 3;
		}
		if (i == 2001)
			dp_tdat_lost(w, 1, 5);
		cr_assert_eq(dp_tdat_record(w, ev, rec, len, &m, &fake_sym), 0);
	}
	dp_tdat_lost(w, 0, DP_LOST_UNKNOWN);
	write_file(w);

	char err[256] = "";
	struct dp_tdat *t = dp_tdat_open(path, err, sizeof(err));

	cr_assert_not_null(t, "%s", err);
	cr_assert_eq(dp_tdat_ncpus(t), 2);
	cr_assert_eq(dp_tdat_tgid(t, 77), 70);
	cr_assert_str_eq(dp_tdat_comm(t, 77), "worker");
	/* the event, and the one its stacks are written as */
	cr_assert_eq(dp_tdat_nevents(t), 2);
	cr_assert_str_eq(dp_tdat_event(t, 1)->kind, "");
	cr_assert_eq(dp_tdat_event(t, 1)->id, DP_TDAT_STACK_ID);
	cr_assert_str_eq(dp_tdat_event(t, 0)->kind, "def");
	cr_assert_str_eq(dp_tdat_event(t, 0)->def,
			 "p:grp/k work x=%di:u32 s=+0(%si):string");
	cr_assert_not_null(strstr(dp_tdat_event(t, 0)->format, "name: k\n"));
	while (dp_tdat_next(t, &r) > 0) {
		if (r.lost) {
			losses++;
			cr_assert(r.lost == 5 ? r.cpu == 1 :
				  r.lost == DP_LOST_UNKNOWN && r.cpu == 0);
		}
		if (!r.data)
			continue;
		uint32_t x;

		memcpy(&x, r.data + DP_ENTRY_HEAD_SIZE, 4);
		size_t len = make_rec(want, x, x % 7 == 0 ? 300 : x % 50);

		/* the ring buffer keeps lengths in 4-byte words */
		cr_assert_eq(r.len, (len + 3) & ~(size_t)3);
		memcpy(want + 4, &(uint32_t){ 77 }, 4);
		cr_assert_eq(memcmp(r.data, want, len), 0, "record %u", x);
		cr_assert_eq(r.id, ev->id);
		cr_assert_eq(r.cpu, (int)(x % 2));
		back += r.ts_ns < last;
		last = r.ts_ns;
		if (r.stack) {
			stacks++;
			cr_assert_eq(x, 10);
			cr_assert_eq(r.nstack, 3);
			cr_assert_eq(memcmp(r.stack, frames, sizeof(frames)), 0);
		}
		n++;
	}
	cr_assert_eq(n, 3000);
	cr_assert_eq(losses, 2);
	cr_assert_eq(stacks, 1);
	cr_assert_leq(back, 1, "only the record written back in time");
	cr_assert_str_eq(dp_tdat_damage(t), "");
	dp_tdat_symbolizer(t, 70, &sym);
	cr_assert_eq(sym.lookup(sym.priv, 0x401020, &name, &off, &size), 0);
	cr_assert_str_eq(name, "work");
	cr_assert_eq(off, 0x20);
	cr_assert_eq(size, 0x100);
	dp_tdat_symbolizer(t, 71, &sym);
	cr_assert_neq(sym.lookup(sym.priv, 0x401020, &name, &off, &size), 0,
		      "another process's addresses are its own");
	dp_tdat_close(t);
}

Test(tracedat, round_trip)
{
	round_trip(false);
}

/* The same, in a version 7 file compressed with zstd. */
Test(tracedat, round_trip_compressed)
{
	FILE *f;
	char head[16];

	round_trip(true);
	f = fopen(path, "r");
	cr_assert_eq(fread(head, 1, sizeof(head), f), sizeof(head));
	fclose(f);
	cr_assert_eq(memcmp(head, "\x17\x08\x44tracing7", 11), 0);
}

Test(tracedat, record_longer_than_a_page_is_counted)
{
	struct dp_tdat_writer *w = dp_tdat_writer_new(NULL, 1);
	static uint8_t rec[DP_TDAT_PAGE + 64];
	struct dp_rec_meta m = { .ts_ns = 1, .pid = 1, .tgid = 1 };
	uint64_t events, lost, bytes;

	cr_assert_eq(dp_tdat_record(w, ev, rec, make_rec(rec, 1,
			DP_TDAT_PAGE), &m, NULL), -1);
	cr_assert_eq(dp_tdat_record(w, ev, rec, make_rec(rec, 2, 10), &m,
				    NULL), 0);
	dp_tdat_counts(w, &events, &lost, &bytes);
	cr_assert_eq(events, 1);
	cr_assert_eq(lost, 1);
	dp_tdat_writer_free(w);
}

/* Cut inside its third page: two pages read, the cut said. */
Test(tracedat, cut_file_reads_whole_pages)
{
	struct dp_tdat_writer *w = dp_tdat_writer_new(NULL, 1);
	uint8_t rec[512];
	struct dp_tdat_rec r;
	char err[256];
	unsigned n = 0;
	long size;
	FILE *f;

	for (uint32_t i = 0; i < 200; i++) {
		struct dp_rec_meta m = { .ts_ns = 100 + i, .pid = 1, .tgid = 1 };

		dp_tdat_record(w, ev, rec, make_rec(rec, i, 40), &m, NULL);
	}
	write_file(w);
	f = fopen(path, "r+");
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	cr_assert_eq(size % DP_TDAT_PAGE, 0);
	cr_assert_eq(ftruncate(fileno(f), size - DP_TDAT_PAGE / 2), 0);
	fclose(f);

	struct dp_tdat *t = dp_tdat_open(path, err, sizeof(err));

	cr_assert_not_null(t, "%s", err);
	while (dp_tdat_next(t, &r) > 0)
		n += r.data != NULL;
	cr_assert_gt(n, 100);
	cr_assert_lt(n, 200);
	cr_assert_not_null(strstr(dp_tdat_damage(t), "it was cut"),
			   "%s", dp_tdat_damage(t));
	dp_tdat_close(t);
}

/*
 * Version 7, cut inside its last chunk: 10000 records on one CPU make
 * three chunks of pages; the first two are read, the cut said.
 */
Test(tracedat, cut_compressed_file_reads_whole_chunks)
{
	struct dp_tdat_writer *w = writer(1, true);
	uint8_t rec[512];
	struct dp_tdat_rec r;
	char err[256];
	unsigned n = 0;
	uint32_t last = 0;
	long size;
	FILE *f;

	for (uint32_t i = 0; i < 10000; i++) {
		struct dp_rec_meta m = { .ts_ns = 100 + i, .pid = 1, .tgid = 1 };

		dp_tdat_record(w, ev, rec, make_rec(rec, i, 40), &m, NULL);
	}
	write_file(w);
	f = fopen(path, "r+");
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	/* the strings section (the sections' names) ends the file */
	cr_assert_eq(ftruncate(fileno(f), size - 120), 0);
	fclose(f);

	struct dp_tdat *t = dp_tdat_open(path, err, sizeof(err));

	cr_assert_not_null(t, "%s", err);
	while (dp_tdat_next(t, &r) > 0) {
		if (!r.data)
			continue;
		memcpy(&last, r.data + DP_ENTRY_HEAD_SIZE, 4);
		cr_assert_eq(last, n, "in order, none missing before the cut");
		n++;
	}
	/* 2 chunks of 64 pages: a record is its 4-byte header and its
	 * bytes in 4-byte words */
	size_t each = 4 + ((make_rec(rec, 0, 40) + 3) & ~(size_t)3);

	cr_assert_eq(n, 2 * DP_TDAT_CHUNK_PAGES * (DP_TDAT_PAGE_DATA / each),
		     "%u records", n);
	cr_assert_not_null(strstr(dp_tdat_damage(t), "CPU 0: 2 of its 3 "
				  "chunks are in the file (it was cut)"),
			   "%s", dp_tdat_damage(t));
	dp_tdat_close(t);
}

static void expect_refused(const char *what)
{
	char err[256] = "";

	cr_assert_null(dp_tdat_open(path, err, sizeof(err)));
	cr_assert_not_null(strstr(err, what), "%s", err);
}

/* Replace the first @from in the file with @to (as long). */
static void patch(const char *from, const char *to)
{
	FILE *f = fopen(path, "r+");
	static char buf[1 << 16];
	size_t n = fread(buf, 1, sizeof(buf), f);
	char *p = memmem(buf, n, from, strlen(from));

	cr_assert_not_null(p);
	fseek(f, p - buf, SEEK_SET);
	fwrite(to, 1, strlen(to), f);
	fclose(f);
}

Test(tracedat, foreign_and_newer_files_are_refused)
{
	FILE *f = fopen(path, "w");

	fputs("just text\n", f);
	fclose(f);
	expect_refused("not a trace.dat file");
	write_file(dp_tdat_writer_new(NULL, 1));
	patch("dprobe-recording 1", "dprobe-recording 9");
	expect_refused("newer dprobe");
	write_file(dp_tdat_writer_new(NULL, 1));
	patch("\x17\x08\x44tracing6", "\x17\x08\x44tracing7");
	expect_refused("read it with trace-cmd report");
	write_file(dp_tdat_writer_new(NULL, 1));
	/* the option's id: one trace-cmd might use, not dprobe's */
	patch("PD", "\x05\x00");
	expect_refused("dprobe did not write");
	/* version 7: the same, and a compression dprobe does not write */
	write_file(writer(1, true));
	patch("PD", "\x05\x00");
	expect_refused("dprobe did not write");
	write_file(writer(1, true));
	patch("zstd", "zlib");
	expect_refused("compressed with 'zlib'");
	write_file(writer(1, true));
	patch("dprobe-recording 1", "dprobe-recording 9");
	expect_refused("newer dprobe");
}

/*
 * A full disk while recording (here a file size limit on the spill
 * file): the pages written before it are kept, the records after it are
 * counted as not kept, finish says so, and the file reads whole.
 */
static void spill_error(bool compress, uint32_t nrec)
{
	struct rlimit lim = { 64 * 1024, RLIM_INFINITY }, old;
	struct dp_tdat_writer *w;
	uint8_t rec[600];
	char *buf = NULL, err[256];
	size_t len = 0;
	uint64_t events, lost, bytes;
	struct dp_tdat_rec r;
	unsigned n = 0;
	FILE *mem, *f;

	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &old);
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
	w = writer(1, compress);
	for (uint32_t i = 0; i < nrec; i++) {
		struct dp_rec_meta m = { .ts_ns = 100 + i, .pid = 1, .tgid = 1 };

		dp_tdat_record(w, ev, rec, make_rec(rec, i, 500), &m, NULL);
	}
	dp_tdat_counts(w, &events, &lost, &bytes);
	cr_assert_gt(lost, 0);
	cr_assert_lt(events, nrec);
	mem = open_memstream(&buf, &len);
	cr_assert_eq(dp_tdat_finish(w, mem), -1, "a spill error is said");
	fclose(mem);
	dp_tdat_writer_free(w);
	setrlimit(RLIMIT_FSIZE, &old);
	f = fopen(path, "w");
	fwrite(buf, 1, len, f);
	fclose(f);
	free(buf);

	struct dp_tdat *t = dp_tdat_open(path, err, sizeof(err));

	cr_assert_not_null(t, "%s", err);
	while (dp_tdat_next(t, &r) > 0)
		n += r.data != NULL;
	cr_assert_gt(n, 50, "the pages before the error: %u records", n);
	cr_assert_leq(n, events);
	cr_assert_str_eq(dp_tdat_damage(t), "");
	dp_tdat_close(t);
}

Test(tracedat, spill_error_keeps_the_pages_before_it)
{
	spill_error(false, 2000);
}

/* Compressed: the chunks written before the error are kept (records of
 * one letter repeated compress well: many more of them fill the limit). */
Test(tracedat, spill_error_keeps_the_chunks_before_it)
{
	spill_error(true, 100000);
}

/*
 * A recorder killed before it wrote the file: its spill file (OUT.part)
 * holds every batch of pages written with what describes them, and
 * dp_tdat_recover() makes a recording of it that reads as one written
 * whole, up to the last batch.  A recording that ends normally leaves no
 * .part; a file that is not one is refused.
 */
Test(tracedat, killed_recorder_recovered)
{
	char dir[] = "/tmp/dp-unit-tdat-kill.XXXXXX", out[128], part[160];
	char err[256] = "";
	struct dp_tdat_writer *w;
	struct dp_tdat_rec r;
	uint8_t rec[512];
	uint64_t pages;
	unsigned n = 0;
	FILE *f;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(out, sizeof(out), "%s/rec.dat", dir);
	snprintf(part, sizeof(part), "%s.part", out);
	w = dp_tdat_writer_new(out, 2);
	cr_assert_not_null(w);
	cr_assert_eq(access(part, F_OK), 0, "the spill file is named");
	for (uint32_t i = 0; i < 5000; i++) {
		struct dp_rec_meta m = { .ts_ns = 100 + i, .cpu = (int)(i % 2),
					 .pid = 9, .tgid = 9, .comm = "k" };

		dp_tdat_record(w, ev, rec, make_rec(rec, i, 40), &m, &fake_sym);
	}
	dp_tdat_writer_free(w);		/* killed: never finished */
	f = fopen(out, "w");
	cr_assert_eq(dp_tdat_recover(part, f, &pages, err, sizeof(err)), 0,
		     "%s", err);
	fclose(f);
	cr_assert_eq(pages % 64, 0, "whole batches: %lu pages",
		     (unsigned long)pages);
	cr_assert_gt(pages, 0);

	struct dp_tdat *t = dp_tdat_open(out, err, sizeof(err));

	cr_assert_not_null(t, "%s", err);
	cr_assert_str_eq(dp_tdat_event(t, 0)->def,
			 "p:grp/k work x=%di:u32 s=+0(%si):string");
	cr_assert_str_eq(dp_tdat_comm(t, 9), "k");
	while (dp_tdat_next(t, &r) > 0)
		n += r.data != NULL;
	cr_assert_gt(n, 1000, "%u records", n);
	cr_assert_lt(n, 5000);
	dp_tdat_close(t);

	/* the last batch cut inside its last page (a full disk): the pages
	 * before the cut are kept */
	struct stat st;
	uint64_t whole = pages;

	cr_assert_eq(stat(part, &st), 0);
	cr_assert_eq(truncate(part, st.st_size - DP_TDAT_PAGE / 2), 0);
	f = fopen(out, "w");
	cr_assert_eq(dp_tdat_recover(part, f, &pages, err, sizeof(err)), 0,
		     "%s", err);
	fclose(f);
	cr_assert_eq(pages, whole - 1);

	/* not a spill file */
	f = fopen(part, "w");
	fputs("garbage", f);
	fclose(f);
	f = fopen(out, "w");
	cr_assert_eq(dp_tdat_recover(part, f, &pages, err, sizeof(err)), -1);
	fclose(f);
	cr_assert_not_null(strstr(err, "not the pages of a dprobe recording"),
			   "%s", err);
	unlink(part);

	/* a recording that ends normally takes its .part away */
	w = dp_tdat_writer_new(out, 1);
	f = fopen(out, "w");
	cr_assert_eq(dp_tdat_finish(w, f), 0);
	fclose(f);
	dp_tdat_writer_free(w);
	cr_assert_neq(access(part, F_OK), 0);
	unlink(out);
	rmdir(dir);
}

/* Compressed: the killed recorder's chunks make a compressed recording
 * (version 7) of the whole chunks it spilled. */
Test(tracedat, killed_compressed_recorder_recovered)
{
	char dir[] = "/tmp/dp-unit-tdat-killz.XXXXXX", out[128], part[160];
	char err[256] = "", head[12];
	struct dp_tdat_writer *w;
	struct dp_tdat_rec r;
	uint8_t rec[512];
	uint64_t pages;
	uint32_t x;
	unsigned n = 0;
	FILE *f;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(out, sizeof(out), "%s/rec.dat", dir);
	snprintf(part, sizeof(part), "%s.part", out);
	w = dp_tdat_writer_new(out, 1);
	cr_assert_eq(dp_tdat_writer_compress(w, DP_TDAT_ZSTD_LEVEL), 0);
	for (uint32_t i = 0; i < 20000; i++) {
		struct dp_rec_meta m = { .ts_ns = 100 + i, .pid = 9, .tgid = 9,
					 .comm = "k" };

		dp_tdat_record(w, ev, rec, make_rec(rec, i, 40), &m, NULL);
	}
	dp_tdat_writer_free(w);		/* killed: never finished */
	f = fopen(out, "w");
	cr_assert_eq(dp_tdat_recover(part, f, &pages, err, sizeof(err)), 0,
		     "%s", err);
	fclose(f);
	cr_assert_eq(pages % DP_TDAT_CHUNK_PAGES, 0, "whole chunks: %lu pages",
		     (unsigned long)pages);
	cr_assert_gt(pages, 0);
	f = fopen(out, "r");
	cr_assert_eq(fread(head, 1, sizeof(head), f), sizeof(head));
	fclose(f);
	cr_assert_eq(memcmp(head, "\x17\x08\x44tracing7", 11), 0);

	struct dp_tdat *t = dp_tdat_open(out, err, sizeof(err));

	cr_assert_not_null(t, "%s", err);
	while (dp_tdat_next(t, &r) > 0) {
		if (!r.data)
			continue;
		memcpy(&x, r.data + DP_ENTRY_HEAD_SIZE, 4);
		cr_assert_eq(x, n, "in order from the first");
		n++;
	}
	cr_assert_gt(n, 3000, "%u records", n);
	cr_assert_lt(n, 20000);
	cr_assert_str_eq(dp_tdat_damage(t), "");
	dp_tdat_close(t);
	unlink(out);
	unlink(part);
	rmdir(dir);
}
