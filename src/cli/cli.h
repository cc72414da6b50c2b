/* SPDX-License-Identifier: GPL-2.0 */
/* The dprobe command: subcommands and shared option handling. */
#ifndef DPROBE_CLI_H
#define DPROBE_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "event/event.h"
#include "output/output.h"
#include "sym/resolve.h"

/* Exit codes: 0 ok, 1 a definition (or filter) was rejected, 2 usage. */
enum { DP_EXIT_OK = 0, DP_EXIT_REJECTED = 1, DP_EXIT_USAGE = 2 };

/* Definitions given as arguments or read from -f FILE, in order. */
struct dp_defs {
	char **lines;
	int n;
	char *file_buf;		/* owner of the lines' text */
};

/*
 * Options shared by the commands that take definitions:
 *   -f FILE, -x BINARY, --no-elf, --json
 */
#define DP_MAX_FILTERS 64

struct dp_def_opts {
	const char *file;
	const char *binary;
	bool no_elf;
	bool json;
	int nfilters;
	const char *filters[DP_MAX_FILTERS];	/* "EVENT=EXPR" */
};

int dp_cmd_check(int argc, char **argv);
int dp_cmd_format(int argc, char **argv);
int dp_cmd_list(int argc, char **argv);
int dp_cmd_help(int argc, char **argv);
int dp_cmd_trace(int argc, char **argv);
int dp_cmd_stat(int argc, char **argv);
int dp_cmd_record(int argc, char **argv);
int dp_cmd_report(int argc, char **argv);
/* --ts us|ns (trace's and report's): 0, or -1 after saying why. */
int dp_cli_parse_ts(const char *arg, enum dp_ts_mode *ts);
/* -o DIR of a format that writes a directory (--format ctf): made, or
 * an empty one taken; 0, or -1 after saying why. */
int dp_cli_out_dir(const char *path);
/* dprobe record --recover PART [-o OUT] [--force]: the recording a killed
 * recorder's PART holds, written to OUT (PART without .part); the exit
 * status. */
int dp_cli_recover(const char *part, const char *out, bool force);
int dp_cmd_latency(int argc, char **argv);
int dp_cmd_count(int argc, char **argv);
int dp_cmd_top(int argc, char **argv);
int dp_cmd_mount(int argc, char **argv);
int dp_cmd_cleanup(int argc, char **argv);
int dp_cmd_flamegraph(int argc, char **argv);
int dp_cmd_show(int argc, char **argv);

/* Parse the shared options; returns the index of the first DEF, or -1. */
int dp_parse_def_opts(int argc, char **argv, const char *cmd,
		      struct dp_def_opts *o, bool allow_json);
/* Collect DEFs (argv[first..]) or the lines of o->file, each line a
 * definition of its own (as in a write to kprobe_events). 0 or -1. */
int dp_defs_load(struct dp_defs *d, const struct dp_def_opts *o, int argc,
		 char **argv, int first);
/* The lines of @n texts (-e DEF), in order.  0, or -1 (said why). */
int dp_defs_from_texts(struct dp_defs *d, const char *const *texts, int n);
void dp_defs_free(struct dp_defs *d);

void dp_usage(FILE *out, const char *cmd);

/* The event named "EVENT", "GRP/EVENT" or "GRP:EVENT"; NULL if none. */
struct dp_event *dp_cli_find_event(const struct dp_registry *reg,
				   const char *name);
/*
 * Apply one --filter "EVENT=EXPR" to @reg as a write to the event's
 * `filter` file.  On failure prints why (the kernel's error_log entry for
 * a parse error) and returns -1.  @json prints a JSON object instead.
 */
int dp_cli_apply_filter(struct dp_registry *reg, const char *arg, bool json);

/* A launched command's wait status as a shell's $?: the exit code, or
 * 128 + the signal that killed it. */
int dp_cli_exit_code(int status);

#endif
