// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness for `dprobe report`'s reader of trace.dat files
 * (record/tdat-read.c, tdat-read7.c), which reads files anyone may hand
 * it: the input is the file, version 6 or 7 (compressed chunks), read as
 * a trace.dat and as a killed recorder's spill file (dp_tdat_recover()).
 * Properties checked: no crash/leak/UB (ASan/UBSan), every
 * record handed out lies in the reader's buffer with its stack no deeper
 * than DP_STACK_MAX, and the reader ends.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "record/tracedat.h"

static void recover(const char *path)
{
	FILE *null = fopen("/dev/null", "w");
	uint64_t pages;
	char err[256];

	if (null) {
		dp_tdat_recover(path, null, &pages, err, sizeof(err));
		fclose(null);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("tdat", MFD_CLOEXEC);
	char path[64], err[256];
	struct dp_tdat *t;
	struct dp_tdat_rec r;
	unsigned long n = 0;

	if (fd < 0 || write(fd, data, size) != (ssize_t)size) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	t = dp_tdat_open(path, err, sizeof(err));
	while (t && dp_tdat_next(t, &r) > 0) {
		/* a record takes 4 bytes of a page at least; a version 7
		 * file's chunk of at most DP_TDAT_CHUNK_MAX pages takes 8
		 * bytes and a zstd frame (13 at least) of the input */
		if ((r.data && r.len > DP_TDAT_PAGE) || r.nstack > DP_STACK_MAX ||
		    ++n > (size + 1) * DP_TDAT_CHUNK_MAX * DP_TDAT_PAGE / 4 / 16) {
			fprintf(stderr, "record out of bounds: len %zu, %u "
				"frames, %lu records\n", r.len, r.nstack, n);
			abort();
		}
	}
	dp_tdat_close(t);
	/* the same bytes as a killed recorder's spill file */
	recover(path);
	close(fd);
	return 0;
}
