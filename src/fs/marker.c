// SPDX-License-Identifier: GPL-2.0
/*
 * trace_marker: a write becomes an ftrace/print entry in the buffer, as
 * the kernel's tracing_mark_write() makes it (at most 4054 bytes a write,
 * a '\n' added when the text has none, "tracing_mark_write: TEXT" in the
 * trace), with the triggers of events/ftrace/print run on it (hist too;
 * the kernel's print event has no enable and no filter: neither here).
 *
 * events/ftrace/print is the kernel's event: id 5 (TRACE_PRINT), its
 * `format` the kernel's text.  dprobe's record of it, what the triggers'
 * filters and hist keys read, has the common fields, `ip` (0: the
 * kernel's is its own tracing_mark_write) and `buf` as a __data_loc
 * string where the kernel has a char[] at the record's end.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "fs/internal.h"
#include "output/output.h"

#define MARKER_ID		5	/* the kernel's TRACE_PRINT */
#define PRINT_FIXED		20	/* header, ip, the __data_loc word */
/* What one entry holds of a write: ring_buffer_max_event_size() (the
 * sub-buffer's data less two words: 4072 bytes for 4 KiB) less the
 * print entry's header, ip, '\0' and a possible '\n'.  A longer write
 * is cut there and its rest written again, into the next entry, as the
 * kernel's. */
#define MARKER_META		18

static struct dp_field print_fields[] = {
	{ .name = "ip", .type = "unsigned long", .fclass = DP_FC_NUM,
	  .offset = 8, .size = 8, .elem_size = 8 },
	{ .name = "buf", .type = "char[]", .fclass = DP_FC_STRING,
	  .offset = 16, .size = 4, .elem_size = 4, .is_signed = true },
};

static const char print_format[] =
	"name: print\n"
	"ID: 5\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:unsigned long ip;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:char buf[];\toffset:16;\tsize:0;\tsigned:1;\n"
	"\n"
	"print fmt: \"%ps: %s\", (void *)REC->ip, REC->buf\n";

__thread pid_t dp_fs_writer;

int dp_fs_marker_init(struct dp_fs *fs)
{
	struct dp_event *ev = calloc(1, sizeof(*ev));

	if (!ev)
		return -ENOMEM;
	ev->id = MARKER_ID;
	snprintf(ev->group, sizeof(ev->group), "ftrace");
	snprintf(ev->name, sizeof(ev->name), "print");
	ev->kind = DP_KIND_TRACEPOINT;
	ev->builtin = true;
	ev->fields = print_fields;
	ev->nfields = sizeof(print_fields) / sizeof(print_fields[0]);
	ev->fixed_size = PRINT_FIXED;
	fs->marker = ev;
	return 0;
}

void dp_fs_marker_fini(struct dp_fs *fs)
{
	free(fs->marker);
	fs->marker = NULL;
}

void dp_fs_marker_format(FILE *out)
{
	fputs(print_format, out);
}

/* The writer: its thread id and name, as the kernel's current. */
static void writer(struct dp_rec_meta *meta, char *comm, size_t size)
{
	pid_t pid = dp_fs_writer > 0 ? dp_fs_writer : getpid();
	char path[64];
	FILE *f;

	comm[0] = '\0';
	dp_fs_now_meta(meta, NULL);
	meta->pid = meta->tgid = (int)pid;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = fopen(path, "re");
	if (f) {
		if (fgets(comm, (int)size, f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	meta->comm = comm[0] ? comm : NULL;
}

/* ring_buffer_max_event_size() of @fs's buffer. */
static size_t marker_max(struct dp_fs *fs)
{
	size_t max;

	pthread_mutex_lock(&fs->buf_lock);
	max = dp_fs_max_entry(fs);
	pthread_mutex_unlock(&fs->buf_lock);
	return max;
}

/* The option `markers`: off, both files refuse writes, as the kernel's. */
static bool markers_on(struct dp_fs *fs)
{
	bool on;

	pthread_mutex_lock(&fs->buf_lock);
	on = fs->trace_flags & DP_FS_OPT_MARKERS;
	pthread_mutex_unlock(&fs->buf_lock);
	return on;
}

int dp_fs_marker_write(struct dp_fs *fs, const char *buf, size_t len)
{
	char comm[DP_TASK_COMM_LEN + 1];
	struct dp_rec_meta meta;
	size_t max = marker_max(fs) - MARKER_META;
	size_t cnt = len > max ? max : len;
	size_t rlen = PRINT_FIXED + cnt + 1;
	uint8_t *rec = calloc(1, rlen);
	char *line = NULL;
	size_t n = 0;
	uint16_t type;
	int32_t pid;
	uint32_t loc;
	FILE *f;
	int ret;

	if (!rec)
		return -ENOMEM;
	if (!markers_on(fs)) {
		free(rec);
		return -EINVAL;
	}
	writer(&meta, comm, sizeof(comm));
	/* the record the triggers see: the text, NUL-terminated, no '\n'
	 * added yet */
	type = MARKER_ID;
	pid = meta.pid;
	loc = dp_data_loc((unsigned)cnt + 1, PRINT_FIXED);
	memcpy(rec + DP_REC_TYPE_OFF, &type, 2);
	memcpy(rec + DP_REC_PID_OFF, &pid, 4);
	memcpy(rec + 16, &loc, 4);
	memcpy(rec + PRINT_FIXED, buf, cnt);
	f = open_memstream(&line, &n);
	if (!f) {
		free(rec);
		return -ENOMEM;
	}
	dp_trace_context(f, &meta);
	fputs("tracing_mark_write: ", f);
	fwrite(buf, 1, cnt, f);
	if (!cnt || buf[cnt - 1] != '\n')
		fputc('\n', f);
	if (fclose(f)) {
		free(line);
		free(rec);
		return -ENOMEM;
	}
	ret = dp_fs_trigger_marker(fs, rec, rlen, &meta, line, n);
	free(line);
	free(rec);
	return ret ? ret : (int)cnt;
}

/*
 * trace_marker_raw: the first 4 bytes a tag id, the rest data, a
 * TRACE_RAW_DATA entry printed as trace_raw_data() does ("# ID buf: xx
 * ..."): the kernel prints the whole ring-buffer entry, padded to 4
 * bytes and to at least the size of its "<faulted>" text, whatever the
 * padding holds; dprobe prints zeros there.  No triggers, as in the
 * kernel.
 */
#define RAW_HEAD	12	/* struct trace_entry, the id */
#define RAW_MIN		13	/* FAULT_SIZE_ID: "<faulted>" and an id */

int dp_fs_marker_raw_write(struct dp_fs *fs, const char *buf, size_t len)
{
	char comm[DP_TASK_COMM_LEN + 1];
	struct dp_rec_meta meta;
	size_t size, nbuf;
	uint32_t id;
	char *line = NULL;
	size_t n = 0;
	FILE *f;
	bool on;

	if (len < sizeof(id) || !markers_on(fs))
		return -EINVAL;
	size = RAW_HEAD + (len < RAW_MIN ? RAW_MIN : len);
	/* as the kernel's: more than the largest entry is EINVAL */
	if (size > marker_max(fs))
		return -EINVAL;
	pthread_mutex_lock(&fs->buf_lock);
	on = fs->tracing_on;
	pthread_mutex_unlock(&fs->buf_lock);
	if (!on)
		return -EBADF;
	size = (size + 3) & ~(size_t)3;
	nbuf = size - RAW_HEAD;
	memcpy(&id, buf, sizeof(id));
	writer(&meta, comm, sizeof(comm));
	f = open_memstream(&line, &n);
	if (!f)
		return -ENOMEM;
	dp_trace_context(f, &meta);
	fprintf(f, "# %x buf:", id);
	for (size_t i = 0; i < nbuf; i++)
		fprintf(f, " %02x", i + 4 < len ? (unsigned char)buf[i + 4] : 0);
	fputc('\n', f);
	if (fclose(f)) {
		free(line);
		return -ENOMEM;
	}
	pthread_mutex_lock(&fs->buf_lock);
	dp_fs_ring_add_locked(fs, fs->live, meta.cpu, line, n);
	pthread_mutex_unlock(&fs->buf_lock);
	free(line);
	return (int)len;
}
