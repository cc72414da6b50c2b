// SPDX-License-Identifier: GPL-2.0
/* dprobe: kprobe-based event tracing for user-space processes. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

#define DPROBE_VERSION "0.1.0"

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *synopsis;
	const char *help;
} commands[] = {
	{ "check", dp_cmd_check,
	  "dprobe check [--json] [--no-elf] [-x BINARY] [--filter EVENT=EXPR]...\n"
	  "             (-f FILE | DEF...)",
	  "Apply probe definitions in order, as successive writes to\n"
	  "kprobe_events/uprobe_events, and print what the kernel would: the\n"
	  "canonical line of each accepted definition, the error_log block of\n"
	  "each rejected one.  Exit status 1 if any definition was rejected.\n"
	  "\n"
	  "  -f, --file FILE    read definitions from FILE ('-' for stdin)\n"
	  "  -x, --binary BIN   resolve symbol places without MOD: against BIN\n"
	  "  --filter EVENT=EXPR  after the definitions, set EVENT's filter as a\n"
	  "                     write to events/GRP/EVENT/filter would; a bad\n"
	  "                     filter prints the kernel's error_log entry\n"
	  "  --no-elf           only the checks the kernel makes when a line is\n"
	  "                     written (no ELF reading: offsets, symbols and\n"
	  "                     instruction boundaries are not checked)\n"
	  "  --json             one JSON object per input line: input, accepted,\n"
	  "                     canonical, errno, error, caret_col, command, logged\n"
	  "\n"
	  "Definitions:\n"
	  "  p[:[GRP/]EVENT] PATH:OFFSET[%return][(REF)] [FETCHARGS]   (uprobe)\n"
	  "  p[:[GRP/]EVENT] [MOD:]SYM[+offs]|MEMADDR [FETCHARGS]      (kprobe)\n"
	  "  r[MAXACTIVE][:[GRP/]EVENT] [MOD:]SYM[+0] [FETCHARGS]\n"
	  "  -:[GRP/]EVENT [PLACE [NAME=BODY...]]\n"
	  "FETCHARGS: [NAME=]EXPR[:TYPE], EXPR one of %REG @ADDR @SYM[+|-offs]\n"
	  "  @+FOFFS $stack $stackN $retval $comm $argN +|-[u]OFFS(EXPR) \\IMM\n"
	  "  \\\"STR\"; TYPE one of u8..u64 s8..s64 x8..x64 char string ustring\n"
	  "  symbol symstr b<W>@<O>/<C>, or TYPE[N] for arrays.\n" },
	{ "format", dp_cmd_format,
	  "dprobe format [--no-elf] [-x BINARY] (-f FILE | DEF...)",
	  "Apply the definitions, then print the `format` file of the event\n"
	  "the last definition created or appended to, as the kernel shows\n"
	  "events/GRP/EVENT/format (with dprobe's own event ID).\n" },
	{ "help", dp_cmd_help, "dprobe help [COMMAND]",
	  "Show the help of COMMAND, or the list of commands.\n" },
};

#define NR_COMMANDS (sizeof(commands) / sizeof(commands[0]))

void dp_usage(FILE *out, const char *cmd)
{
	for (size_t i = 0; i < NR_COMMANDS; i++) {
		if (cmd && strcmp(cmd, commands[i].name))
			continue;
		fprintf(out, "usage: %s\n", commands[i].synopsis);
		if (cmd)
			fprintf(out, "\n%s", commands[i].help);
	}
	if (!cmd)
		fprintf(out, "\nSee 'dprobe help COMMAND' and docs/ for more.\n");
}

int dp_cmd_help(int argc, char **argv)
{
	if (argc < 2) {
		dp_usage(stdout, NULL);
		return DP_EXIT_OK;
	}
	for (size_t i = 0; i < NR_COMMANDS; i++) {
		if (!strcmp(argv[1], commands[i].name)) {
			dp_usage(stdout, argv[1]);
			return DP_EXIT_OK;
		}
	}
	fprintf(stderr, "dprobe: no such command '%s'\n", argv[1]);
	return DP_EXIT_USAGE;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		dp_usage(stderr, NULL);
		return DP_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		dp_usage(stdout, NULL);
		return DP_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("dprobe %s\n", DPROBE_VERSION);
		return DP_EXIT_OK;
	}
	for (size_t i = 0; i < NR_COMMANDS; i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "dprobe: no such command '%s'\n\n", argv[1]);
	dp_usage(stderr, NULL);
	return DP_EXIT_USAGE;
}
