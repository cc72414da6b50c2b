// SPDX-License-Identifier: GPL-2.0
/*
 * The syscall events dprobe makes without the kernel (event/syscalls.h):
 * the table of system calls, their `format` files against the running
 * kernel's, and the records the ptrace engine makes at a syscall stop.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "event/record.h"
#include "event/syscalls.h"

Test(syscalls, table_sorted_named_and_known)
{
	const struct dp_syscall *sc;
	size_t n = dp_syscall_count();

	cr_assert_gt(n, 350);
	for (size_t i = 0; i < n; i++) {
		sc = dp_syscall_at(i);
		cr_assert(sc->nr >= 0 && sc->nr < DP_SYSCALL_NR_MAX);
		if (i)
			cr_assert_gt(sc->nr, dp_syscall_at(i - 1)->nr, "%s",
				     sc->name);
		cr_assert_eq(dp_syscall_by_name(sc->name), sc, "%s", sc->name);
		cr_assert_eq(dp_syscall_by_nr(sc->nr), sc, "%s", sc->name);
	}
	sc = dp_syscall_by_name("openat");
	cr_assert_not_null(sc);
	cr_assert_eq(sc->nr, 257);
	cr_assert_eq(dp_syscall_nargs(sc), 4);
	cr_assert_str_eq(sc->args[1], "const char * filename");
	/* the events are named for the entry points: sys_newstat is stat */
	cr_assert_eq(dp_syscall_by_name("newstat")->nr, 4);
	cr_assert_eq(dp_syscall_nargs(dp_syscall_by_name("getpid")), 0);
	cr_assert_null(dp_syscall_by_nr(-1));
	cr_assert_null(dp_syscall_by_nr(DP_SYSCALL_NR_MAX));
	cr_assert_null(dp_syscall_by_name("ni_syscall"));
}

static char *slurp(const char *path)
{
	char *text = NULL;
	size_t len = 0, cap = 0;
	FILE *f = fopen(path, "re");
	int c;

	if (!f)
		return NULL;
	while ((c = fgetc(f)) != EOF) {
		if (len + 2 > cap) {
			cap = cap ? 2 * cap : 4096;
			text = realloc(text, cap);
			cr_assert_not_null(text);
		}
		text[len++] = (char)c;
	}
	fclose(f);
	if (text)
		text[len] = '\0';
	return text;
}

/* @text without its "ID: N" line. */
static void drop_id(char *text)
{
	char *id = strstr(text, "\nID: "), *end;

	if (id && (end = strchr(id + 1, '\n')))
		memmove(id, end, strlen(end) + 1);
}

/* Byte for byte the kernel's, but for the ID, where tracefs is mounted. */
Test(syscalls, formats_are_the_running_kernels)
{
	const char *dirs[] = { "/sys/kernel/tracing/events/syscalls",
			       "/sys/kernel/debug/tracing/events/syscalls" };
	unsigned compared = 0;

	for (size_t d = 0; d < 2 && !compared; d++) {
		for (size_t i = 0; i < dp_syscall_count(); i++) {
			const struct dp_syscall *sc = dp_syscall_at(i);

			for (int exit = 0; exit < 2; exit++) {
				char path[512], *k, *m;

				snprintf(path, sizeof(path), "%s/sys_%s_%s/format",
					 dirs[d], exit ? "exit" : "enter",
					 sc->name);
				k = slurp(path);
				if (!k)
					continue;
				m = dp_syscall_format(sc, exit, 7);
				cr_assert_not_null(m);
				drop_id(k);
				drop_id(m);
				cr_assert_str_eq(m, k, "%s", path);
				compared++;
				free(k);
				free(m);
			}
		}
	}
	if (!compared)
		cr_skip_test("no tracefs with syscall events mounted (root, "
			     "CONFIG_FTRACE_SYSCALLS)");
	cr_log_info("%u formats compared", compared);
}

Test(syscalls, format_header_and_print_fmt)
{
	char *m = dp_syscall_format(dp_syscall_by_name("getpid"), false, 42);

	cr_assert_not_null(m);
	cr_assert(!strncmp(m, "name: sys_enter_getpid\nID: 42\nformat:\n", 38));
	cr_assert_not_null(strstr(m, "\tfield:int __syscall_nr;\toffset:8;"
				     "\tsize:4;\tsigned:1;\n\nprint fmt: \"\"\n"));
	free(m);
	m = dp_syscall_format(dp_syscall_by_name("read"), true, 1);
	cr_assert_not_null(strstr(m, "\tfield:long ret;\toffset:16;\tsize:8;"
				     "\tsigned:1;\n\nprint fmt: \"0x%lx\", "
				     "REC->ret\n"));
	free(m);
}

static uint64_t field(const struct dp_event *ev, const uint8_t *rec,
		      const char *name)
{
	const struct dp_field *f = dp_event_field(ev, name);

	cr_assert_not_null(f, "%s", name);
	return dp_rec_load(rec + f->offset, f->size);
}

Test(syscalls, events_and_records)
{
	struct dp_registry reg;
	struct dp_event *in, *out;
	const uint64_t args[DP_SYSCALL_MAX_ARGS] = {
		(uint64_t)-100, 0x7ffe1000, 0x80000, 0644, 77, 88 };
	uint8_t rec[256];
	size_t len;
	bool exit;

	dp_registry_init(&reg);
	cr_assert_eq(dp_registry_syscalls(&reg), 2 * dp_syscall_count());
	in = dp_registry_find(&reg, "syscalls", "sys_enter_openat");
	out = dp_registry_find(&reg, "syscalls", "sys_exit_openat");
	cr_assert(in && out && in->kernel && out->kernel);
	cr_assert_eq(dp_syscall_of_event(in, &exit), dp_syscall_by_nr(257));
	cr_assert(!exit);
	cr_assert_eq(dp_syscall_of_event(out, &exit), dp_syscall_by_nr(257));
	cr_assert(exit);

	len = dp_syscall_record(in, false, 257, args, 0, 4242, rec, sizeof(rec));
	cr_assert_eq(len, 16 + 4 * 8);
	cr_assert_eq(dp_rec_check(in, rec, len), 0);
	cr_assert_eq(field(in, rec, "common_type"), in->id);
	cr_assert_eq(field(in, rec, "common_pid"), 4242);
	cr_assert_eq(field(in, rec, "__syscall_nr"), 257);
	cr_assert_eq(field(in, rec, "dfd"), (uint64_t)-100);
	cr_assert_eq(field(in, rec, "filename"), 0x7ffe1000);
	cr_assert_eq(field(in, rec, "mode"), 0644);

	len = dp_syscall_record(out, true, 257, NULL, -2, 4242, rec, sizeof(rec));
	cr_assert_eq(len, 24);
	cr_assert_eq(dp_rec_check(out, rec, len), 0);
	cr_assert_eq((int64_t)field(out, rec, "ret"), -2);
	/* too small a buffer: no record */
	cr_assert_eq(dp_syscall_record(in, false, 257, args, 0, 1, rec, 20), 0);
	dp_registry_free(&reg);
}
