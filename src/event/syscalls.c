// SPDX-License-Identifier: GPL-2.0
/*
 * Syscall events from the architecture's table (syscalls.h).  Their
 * layout is the kernel's (kernel/trace/trace_syscalls.c): after the
 * common fields, `int __syscall_nr` at offset 8, then each argument as an
 * unsigned long from offset 16 whatever its C type; an exit event has
 * `long ret` there instead.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event/syscalls.h"
#include "lang/layout.h"

#define SYS_NR_OFF	8
#define SYS_ARGS_OFF	16

static const char common_fields[] =
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n";

/* The argument's name: the last word of "TYPE NAME". */
static const char *arg_name(const char *decl)
{
	const char *sp = strrchr(decl, ' ');

	return sp ? sp + 1 : decl;
}

static void enter_fields(FILE *f, const struct dp_syscall *sc)
{
	unsigned n = dp_syscall_nargs(sc);

	for (unsigned i = 0; i < n; i++)
		fprintf(f, "\tfield:%s;\toffset:%u;\tsize:8;\tsigned:0;\n",
			sc->args[i], SYS_ARGS_OFF + 8 * i);
	fputs("\nprint fmt: \"", f);
	for (unsigned i = 0; i < n; i++)
		fprintf(f, "%s%s: 0x%%08lx", i ? ", " : "",
			arg_name(sc->args[i]));
	fputc('"', f);
	for (unsigned i = 0; i < n; i++)
		fprintf(f, ", ((unsigned long)(REC->%s))",
			arg_name(sc->args[i]));
	fputc('\n', f);
}

char *dp_syscall_format(const struct dp_syscall *sc, bool exit, unsigned id)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	fprintf(f, "name: sys_%s_%s\nID: %u\nformat:\n%s",
		exit ? "exit" : "enter", sc->name, id, common_fields);
	if (exit)
		fputs("\tfield:long ret;\toffset:16;\tsize:8;\tsigned:1;\n"
		      "\nprint fmt: \"0x%lx\", REC->ret\n", f);
	else
		enter_fields(f, sc);
	if (fclose(f)) {
		free(text);
		return NULL;
	}
	return text;
}

int dp_registry_syscalls_glob(struct dp_registry *reg, const char *glob)
{
	int made = 0;

	for (size_t i = 0; i < dp_syscall_count(); i++) {
		const struct dp_syscall *sc = dp_syscall_at(i);

		for (int exit = 0; exit < 2; exit++) {
			char name[DP_MAX_EVENT_NAME_LEN], *format;
			struct dp_event *ev;

			snprintf(name, sizeof(name), "sys_%s_%s",
				 exit ? "exit" : "enter", sc->name);
			if (fnmatch(glob, name, 0))
				continue;
			format = dp_syscall_format(sc, exit, 0);
			ev = format ? dp_registry_kernel_tp(reg, DP_SYSCALLS_GROUP,
							    name, format) : NULL;
			free(format);
			if (!ev)
				return -ENOMEM;
			made++;
		}
	}
	return made;
}

unsigned dp_registry_syscalls(struct dp_registry *reg)
{
	int n = dp_registry_syscalls_glob(reg, "*");

	return n > 0 ? (unsigned)n : 0;
}

const struct dp_syscall *dp_syscall_of_event(const struct dp_event *ev,
					     bool *exit)
{
	const char *n = ev->name;

	if (!ev->kernel || strcmp(ev->group, DP_SYSCALLS_GROUP))
		return NULL;
	if (!strncmp(n, "sys_enter_", 10)) {
		*exit = false;
		return dp_syscall_by_name(n + 10);
	}
	if (!strncmp(n, "sys_exit_", 9)) {
		*exit = true;
		return dp_syscall_by_name(n + 9);
	}
	return NULL;
}

size_t dp_syscall_record(const struct dp_event *ev, bool exit, long nr,
			 const uint64_t *args, int64_t ret, int tid,
			 uint8_t *buf, size_t cap)
{
	bool is_exit;
	const struct dp_syscall *sc = dp_syscall_of_event(ev, &is_exit);
	/* the event's layout, whatever number the call had */
	unsigned n = exit ? 1 : sc ? dp_syscall_nargs(sc) : 0;
	size_t len = SYS_ARGS_OFF + 8 * (size_t)n;

	if (len > cap)
		return 0;
	memset(buf, 0, len);
	dp_rec_put(buf + DP_REC_TYPE_OFF, (uint16_t)ev->id, 2);
	dp_rec_put(buf + DP_REC_PID_OFF, (uint32_t)tid, 4);
	dp_rec_put(buf + SYS_NR_OFF, (uint32_t)nr, 4);
	for (unsigned i = 0; i < n; i++)
		dp_rec_put(buf + SYS_ARGS_OFF + 8 * i,
			   exit ? (uint64_t)ret : args[i], 8);
	return len;
}
