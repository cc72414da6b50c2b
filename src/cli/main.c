// SPDX-License-Identifier: GPL-2.0
/* dprobe: kprobe-based event tracing for user-space processes. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "util/util.h"

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;	/* one line: `help --commands`, man NAME */
	const char *synopsis;
	const char *help;
} commands[] = {
	{ "check", dp_cmd_check,
	  "validate probe definitions as kprobe_events/uprobe_events would",
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
	  "  t[:[GRP/]EVENT] [TPGROUP:]TRACEPOINT [FETCHARGS]       (tracepoint)\n"
	  "  -:[GRP/]EVENT [PLACE [NAME=BODY...]]\n"
	  "Named events (with -x BINARY): GROUP:NAME, an application tracepoint\n"
	  "(dprobe/tracepoint.h), and sdt_PROVIDER:NAME, an SDT probe, alone or\n"
	  "as the place of a p: line whose FETCHARGS use its arguments as $argN.\n"
	  "FETCHARGS: [NAME=]EXPR[:TYPE], EXPR one of %REG @ADDR @SYM[+|-offs]\n"
	  "  @+FOFFS $stack $stackN $retval $comm $argN +|-[u]OFFS(EXPR) \\IMM\n"
	  "  \\\"STR\"; TYPE one of u8..u64 s8..s64 x8..x64 char string ustring\n"
	  "  symbol symstr b<W>@<O>/<C>, or TYPE[N] for arrays.\n" },
	{ "format", dp_cmd_format, "print an event's format file",
	  "dprobe format [--no-elf] [-x BINARY] (-f FILE | DEF...)",
	  "Apply the definitions, then print the `format` file of the event\n"
	  "the last definition created or appended to, as the kernel shows\n"
	  "events/GRP/EVENT/format (with dprobe's own event ID).\n" },
	{ "list", dp_cmd_list,
	  "list the functions, tracepoints and SDT probes to place probes on",
	  "dprobe list (-x BINARY | -p PID | --kernel) [GLOB]\n"
	  "       dprobe list -x BINARY (-L FUNC | -V FUNC[:LINE] | -v) [GLOB]",
	  "List the functions a probe can be placed on, like ftrace's\n"
	  "available_filter_functions: every function symbol (STT_FUNC or\n"
	  "STT_GNU_IFUNC, of non-zero size) of BINARY, or of every object the\n"
	  "process PID has mapped, as SYMBOL MODULE ADDRESS SIZE, sorted by\n"
	  "module then address.  A version that is not the default is shown\n"
	  "as NAME@VERSION, as it is written in a place.  Then, as perf list\n"
	  "does, the application tracepoints (GROUP:NAME [Tracepoint event])\n"
	  "and SDT probes (sdt_PROVIDER:NAME [SDT event]) of the same files.\n"
	  "\n"
	  "  -x, --binary BIN   list BIN's functions at their link-time addresses\n"
	  "  -p, --pid PID      list the functions of every object mapped in PID\n"
	  "                     at their run-time addresses\n"
	  "  --kernel           the kernel's tracepoints (available_events) as\n"
	  "                     GROUP:NAME [Tracepoint event]\n"
	  "  GLOB               only the names matching this shell pattern\n"
	  "\n"
	  "With the debug information of BINARY (in it, in its debug file under\n"
	  "/usr/lib/debug or $DPROBE_DEBUG_DIR, or from debuginfod), as perf\n"
	  "probe's -L, -V and --funcs show it:\n"
	  "  -L, --lines FUNC   FUNC's source, each line with code numbered as\n"
	  "                     FUNC:N places it\n"
	  "  -V, --vars PLACE   the variables a definition can name at FUNC,\n"
	  "                     FUNC:N or FILE:N, with their types\n"
	  "  -v, --protos       every function with debug information and its\n"
	  "                     prototype\n" },
	{ "trace", dp_cmd_trace,
	  "stream probe events from a program or running processes",
	  "dprobe trace [-e DEF]... [-e @FILE] [--filter EVENT=EXPR]...\n"
	  "             [--trigger [EVENT=]hist:...]... [-o FILE]\n"
	  "             [--format text|json|folded|flamegraph|chrome|ctf|otlp]\n"
	  "             [-g|--stack[=EVENT,...]] [--flamegraph OUT.svg]\n"
	  "             [--call-graph fp|dwarf[,SIZE]]\n"
	  "             [--duration SECS] [-f] [--profile]\n"
	  "             [--engine auto|agent|ptrace|kernel] [--kernel]\n"
	  "             [--buffer-size SIZE] [--overwrite|--blocking] [--no-demangle]\n"
	  "             [--dry-run]\n"
	  "             [--ts us|ns] [--quiet-target]\n"
	  "             [--tracer function|function_graph|stack] [--filter-func F]...\n"
	  "             [--notrace-func F]... [--graph-func GLOB]...\n"
	  "             [--graph-notrace GLOB]... [--max-depth N]\n"
	  "             [--trace-option [no]NAME[,...]]... [--force]\n"
	  "             (-p PID[,PID...] | -- CMD [ARGS...] | --kernel alone)",
	  "Trace probe events in a command it starts or in running processes,\n"
	  "printing each as ftrace's trace_pipe does.  On exit, a summary line\n"
	  "goes to stderr: events, filtered, missed (return probes over their\n"
	  "MAXACTIVE), lost.  The exit status is the command's.\n"
	  "\n"
	  "  -e, --event DEF      a probe definition (see 'dprobe help check');\n"
	  "                       @FILE reads definitions from FILE; GROUP:NAME\n"
	  "                       an application tracepoint, sdt_PROV:NAME an\n"
	  "                       SDT probe of the program or its libraries;\n"
	  "                       syscalls:GLOB the kernel's syscall events of\n"
	  "                       the traced processes (ptrace engine)\n"
	  "  --filter EVENT=EXPR  the event's filter, in ftrace's filter language\n"
	  "  --trigger [EVENT=]hist:keys=...[:vals=...][:sort=...][:size=N]\n"
	  "                       [ if FILTER]  a hist trigger, as ftrace's, on\n"
	  "                       EVENT (else on every event): its events are\n"
	  "                       aggregated, not printed, and the hist file is\n"
	  "                       printed at exit (also on SIGUSR1)\n"
	  "  -o, --output FILE    write events to FILE\n"
	  "  --format F           text (the default): lines as trace_pipe prints\n"
	  "                       them; json: one JSON object per event;\n"
	  "                       folded: the stacks counted, for flame graphs;\n"
	  "                       flamegraph: those drawn as an SVG (both imply\n"
	  "                       -g); chrome: Trace Event Format JSON, for\n"
	  "                       Perfetto UI and chrome://tracing; ctf: a\n"
	  "                       CTF 1.8 trace in the new or empty directory\n"
	  "                       -o names, for babeltrace2 and Trace Compass;\n"
	  "                       otlp: OpenTelemetry log records (OTLP/JSON,\n"
	  "                       one request a line), for a Collector's\n"
	  "                       otlpjsonfile receiver; tracedat: trace-cmd's\n"
	  "                       trace.dat (what dprobe record writes)\n"
	  "  --flamegraph OUT     --format flamegraph -o OUT: an interactive\n"
	  "                       flame graph of the stacks (dprobe flamegraph)\n"
	  "  -g, --stack[=EVENTS] the user stack at each hit of every event (or\n"
	  "                       of the EVENTS named: NAME or GROUP/NAME, comma\n"
	  "                       separated), as ftrace's userstacktrace prints\n"
	  "                       it (frame pointers)\n"
	  "  --call-graph fp|dwarf[,SIZE]  how stacks are taken (implies -g):\n"
	  "                       fp walks frame pointers (the default); dwarf\n"
	  "                       copies the registers and SIZE bytes of stack\n"
	  "                       (8192; at most 32768) at each hit and unwinds\n"
	  "                       them with the CFI (.eh_frame), for code built\n"
	  "                       without frame pointers\n"
	  "  --json               the same as --format json\n"
	  "  --ts us|ns           timestamps in microseconds (the default, as the\n"
	  "                       kernel prints them) or nanoseconds\n"
	  "  --duration SECS      detach SECS seconds after the probes are armed\n"
	  "  -f, --follow-forks   trace forked children too (like strace -f)\n"
	  "  --quiet-target       the command's stdout and stderr go to\n"
	  "                       /dev/null: only dprobe's output is left\n"
	  "                       (without it and without -o, both share the\n"
	  "                       terminal)\n"
	  "  --profile            print the kprobe_profile table at exit (also on\n"
	  "                       SIGUSR1)\n"
	  "  -p, --pid PID[,PID]  attach to running processes (all their threads)\n"
	  "  --engine E           auto (default, or $DPROBE_ENGINE): in-process\n"
	  "                       (libdprobe.so, jump-optimised probes) where it\n"
	  "                       can run, else ptrace; agent; ptrace; kernel\n"
	  "                       (the host kernel's uprobe_events, as root)\n"
	  "  --kernel             places are kernel functions (kprobe_events),\n"
	  "                       GROUP:NAME a kernel tracepoint; without -p or\n"
	  "                       -- CMD, system-wide (docs/kernel-engine.md)\n"
	  "  --buffer-size SIZE   in-process ring per thread (K/M/G; default 1M)\n"
	  "  --overwrite          in-process: a full ring overwrites old records\n"
	  "  --blocking           in-process: a full ring makes the thread wait\n"
	  "                       for dprobe (at most ~10 ms) before it drops:\n"
	  "                       every record kept while dprobe keeps up\n"
	  "  --no-demangle        C++ and Rust symbols as they are in the file\n"
	  "  --dry-run            print the definitions as they would be armed\n"
	  "                       (names translated) and run nothing\n"
	  "  --tracer T           ftrace's function tracer (each call: func\n"
	  "                       <-caller) or function_graph (calls nested,\n"
	  "                       with durations) over the program's functions\n"
	  "                       (docs/tracers.md); -e events show among them;\n"
	  "                       stack: the deepest stack at their entries,\n"
	  "                       frame by frame, as the kernel's stack_trace\n"
	  "  --filter-func F      the functions a tracer traces (default: the\n"
	  "                       program's), in set_ftrace_filter's words:\n"
	  "                       GLOB (in the program and its libraries),\n"
	  "                       !GLOB, GLOB:mod:LIB, @FILE of lines\n"
	  "  --notrace-func F     functions never traced (set_ftrace_notrace)\n"
	  "  --graph-func GLOB    function_graph: only calls inside these\n"
	  "                       (set_graph_function); --graph-notrace GLOB:\n"
	  "                       not these nor what they call\n"
	  "  --max-depth N        function_graph: N levels deep at most\n"
	  "  --trace-option O     the tracer's trace_options: funcgraph-proc,\n"
	  "                       funcgraph-abstime, funcgraph-tail,\n"
	  "                       funcgraph-retval, nofuncgraph-cpu, ...\n"
	  "  --force              let a glob (-e 'p:grp/ GLOB', --filter-func)\n"
	  "                       select more than 20000 functions\n"
	  "\n"
	  "A place may be a glob over function names: 'p:grp/ [MOD:]GLOB' is an\n"
	  "event per function (p_NAME_0, as the kernel names one), 'p:grp/evt\n"
	  "GLOB' one event with a probe on each; functions that cannot be\n"
	  "probed safely are left out and counted by reason.\n"
	  "Symbol places without MOD: name the command's executable; MOD is a\n"
	  "path, or the basename or soname of a loaded object (libc.so.6).\n"
	  "Ctrl-C, SIGTERM and --duration detach: every original byte goes back\n"
	  "and the process runs on as if never traced.\n"
	  "\n"
	  "The in-process engine loads libdprobe.so from dprobe's directory, or\n"
	  "else from ../lib/dprobe/ beside it (where 'make install' puts it).\n"
	  "DPROBE_AGENT=PATH names another one, taken only as an absolute path\n"
	  "to a root-owned file that only root can replace; DPROBE_ENGINE sets\n"
	  "the default of --engine.\n" },
	{ "record", dp_cmd_record,
	  "record events into a trace.dat for report, trace-cmd and KernelShark",
	  "dprobe record [-o FILE] [--force] [--compress] [-e DEF]...\n"
	  "              [trace's options] (-p PID | -- CMD [ARGS...])\n"
	  "       dprobe record --recover FILE.part [-o FILE] [--force]",
	  "Trace as 'dprobe trace' does (the same -e, --filter, --trigger, -p,\n"
	  "-f, --engine, --duration, --stack, --buffer-size) but copy each\n"
	  "record unformatted into FILE (default trace.dat), in trace-cmd's\n"
	  "trace.dat format: 'dprobe report FILE' shows it afterwards with any\n"
	  "--format, filter or hist trigger, 'trace-cmd report FILE' prints its\n"
	  "events with their fields, and KernelShark opens it.  On a terminal a\n"
	  "status line shows events, lost records, megabytes and the rate.\n"
	  "\n"
	  "  -o, --output FILE    where the recording goes (default trace.dat)\n"
	  "  --force              overwrite FILE if it exists (else refused); a\n"
	  "                       glob may select more than 20000 functions\n"
	  "  --compress           write trace.dat version 7, its pages and\n"
	  "                       sections compressed with zstd (as trace-cmd 3\n"
	  "                       writes it; version 6, uncompressed, without)\n"
	  "  --recover FILE.part  a recorder killed before it wrote FILE left\n"
	  "                       its pages in FILE.part: write FILE of them\n" },
	{ "report", dp_cmd_report,
	  "show a recording (dprobe record's trace.dat) as trace would have",
	  "dprobe report [FILE] [--format F] [-o OUT] [--ts us|ns]\n"
	  "              [--filter EVENT=EXPR]... [-e 's:SYNTH FIELDS']...\n"
	  "              [--trigger [EVENT=]hist:...]...",
	  "Read FILE (default trace.dat), written by 'dprobe record', and print\n"
	  "its events as 'dprobe trace' prints them live: the events are made\n"
	  "again from the definitions the file holds, addresses are named with\n"
	  "the symbols recorded beside them, and every record goes through the\n"
	  "filters, hist triggers and format given here.  A file cut short (a\n"
	  "full disk, a copy stopped early) is read up to its last whole page\n"
	  "(of a compressed one: chunk of pages), and what is missing is said;\n"
	  "a trace.dat dprobe did not write is refused (trace-cmd report reads\n"
	  "it).\n"
	  "\n"
	  "  --format F           any of trace's formats; tracedat writes the\n"
	  "                       records that pass as a recording of their own\n"
	  "  -o, --output OUT     write there instead of stdout\n"
	  "  --ts us|ns           timestamps in microseconds (default) or ns\n"
	  "  --filter EVENT=EXPR  as trace's, on the recorded fields\n"
	  "  -e 's:NAME FIELDS'   a synthetic event for the triggers' actions\n"
	  "                       (onmatch().trace(NAME,...)): a latency\n"
	  "                       between two recorded events, as ftrace does\n"
	  "  --trigger [EVENT=]hist:...  a hist trigger, as trace's\n" },
	{ "stat", dp_cmd_stat, "count probe hits, as perf stat does",
	  "dprobe stat [-e DEF]... [--filter EVENT=EXPR]... [--engine E] [--kernel]\n"
	  "            (-p PID | -- CMD [ARGS...] | --kernel alone)",
	  "Count probe hits per event while the command runs (or until Ctrl-C\n"
	  "for -p), and print them as perf stat does, with the time elapsed.\n" },
	{ "show", dp_cmd_show,
	  "show what a probe does to the code: the bytes before and after, the detour",
	  "dprobe show [--engine auto|agent|ptrace] [-e DEF]... [PLACE]\n"
	  "            (-p PID | -- CMD [ARGS...])",
	  "Arm the probes as 'dprobe trace' would, then print for each probe\n"
	  "location what it did to the code, disassembled: the original\n"
	  "instructions, the bytes written there now (an int3, or the jmp of a\n"
	  "jump-optimised probe), the detour that saves the registers and calls\n"
	  "the handlers with its relocated (displaced) instructions, or the\n"
	  "int3's out-of-line copy of the instruction, and where the code jumps\n"
	  "back; why a probe is not jump-optimised; and a compiler's entry site\n"
	  "(-pg -mfentry -mnop-mcount's 5-byte nop, -fpatchable-function-entry's\n"
	  "nops; with =N,M, the nops before the symbol that a jmp short at it\n"
	  "reaches), which the jmp replaces with nothing to relocate.  Then every\n"
	  "probe is removed.  A command it starts is held before its main() while\n"
	  "shown and then killed: it never runs its own code.  A running process\n"
	  "(-p) runs on as it was.  Addresses are the process's own.\n"
	  "\n"
	  "  -e, --event DEF      a probe definition (see 'dprobe help check')\n"
	  "  PLACE                a definition's place, for 'p PLACE': work,\n"
	  "                       work+4, libc.so.6:malloc\n"
	  "  -p, --pid PID        show the probes in a running process\n"
	  "  --engine E           agent (the default where it can run) or ptrace\n" },
	{ "latency", dp_cmd_latency,
	  "a function's entry-to-return time as a log2 histogram",
	  "dprobe latency PLACE [--by comm|pid|tid] [--filter EXPR] [--us]\n"
	  "               [--interval SECS] [--duration SECS] [-f] [--engine E]\n"
	  "               [--quiet-target] (-p PID[,PID...] | -- CMD [ARGS...])",
	  "Time every call of the function at PLACE (prog:func, func of the\n"
	  "command, libc.so.6:malloc), from its entry to its return, in each\n"
	  "thread (recursion and longjmp included), and print the durations\n"
	  "as the kernel's hist text for the key lat.log2 (nanoseconds; bucket\n"
	  "2^N holds (2^(N-1), 2^N]) with a bar per bucket, then count, min,\n"
	  "avg and max: at the end, and on SIGUSR1.\n"
	  "\n"
	  "  PLACE [FETCHARGS]    a place as in a p: definition; FETCHARGS name\n"
	  "                       what --filter tests ('work a=%di:s32')\n"
	  "  --by comm|pid|tid    one histogram per thread name, process or thread\n"
	  "  --filter EXPR        time only the calls whose entry passes EXPR\n"
	  "                       (ftrace's filter language, on FETCHARGS and\n"
	  "                       common fields)\n"
	  "  --us                 the histogram in microseconds\n"
	  "  --interval SECS      print the histograms every SECS seconds too\n"
	  "  --duration SECS      stop after SECS seconds\n"
	  "  -f, --follow-forks   time calls in forked children too\n"
	  "  --engine E           auto, agent, ptrace or kernel (as trace's)\n"
	  "  --quiet-target       the command's stdout and stderr to /dev/null\n"
	  "  -p, --pid PID[,PID]  attach to running processes\n"
	  "\n"
	  "The summary line of trace (events, filtered, missed, lost) ends the\n"
	  "run on stderr; calls that never returned are said there.\n" },
	{ "count", dp_cmd_count,
	  "count events by key, most first, as a hist trigger does",
	  "dprobe count -e DEF... --by KEY[,KEY...] [--filter EVENT=EXPR]...\n"
	  "             [--interval SECS] [--duration SECS] [-f] [--engine E]\n"
	  "             [--quiet-target] (-p PID[,PID...] | -- CMD [ARGS...])",
	  "Count each event's records by the values of KEY (up to three keys),\n"
	  "and print them most first as the kernel's hist text, with a bar\n"
	  "per entry: what --trigger 'hist:keys=KEY:sort=hitcount.descending'\n"
	  "prints, at the end and on SIGUSR1.\n"
	  "\n"
	  "  -e, --event DEF      a definition or named event (as trace's -e)\n"
	  "  --by KEY[,KEY]       a field of the event; comm (the thread's\n"
	  "                       name); pid (the process); tid or common_pid\n"
	  "                       (the thread); each with the hist modifiers\n"
	  "                       .hex .sym .sym-offset .log2 .buckets=N, and\n"
	  "                       .execname on common_pid\n"
	  "  --filter EVENT=EXPR  count only the records that pass (ftrace's\n"
	  "                       filter language)\n"
	  "  --interval SECS      print the counts every SECS seconds too\n"
	  "  --duration SECS      stop after SECS seconds\n"
	  "  -f, --follow-forks   count in forked children too\n"
	  "  --engine E           auto, agent or ptrace (as trace's)\n"
	  "  --quiet-target       the command's stdout and stderr to /dev/null\n"
	  "  -p, --pid PID[,PID]  attach to running processes\n" },
	{ "top", dp_cmd_top,
	  "the hottest keys of events, refreshed, as perf top",
	  "dprobe top -e DEF... [--by KEY[,KEY...]] [-n ROWS] [--interval SECS]\n"
	  "           [--filter EVENT=EXPR]... [--duration SECS] [-f] [--engine E]\n"
	  "           [--quiet-target] (-p PID[,PID...] | -- CMD [ARGS...])",
	  "Count each event's records by KEY over an interval and show the\n"
	  "most frequent values, as the kernel's hist text with bars; then\n"
	  "start again.  On a terminal the screen is redrawn each interval;\n"
	  "otherwise each interval is printed as a block of its own.  Ends on\n"
	  "Ctrl-C, --duration or when the command exits, with a last block.\n"
	  "\n"
	  "  -e, --event DEF      a definition or named event (as trace's -e)\n"
	  "  --by KEY[,KEY]       as count's --by (default: comm)\n"
	  "  -n, --rows N         entries shown per event (default 20)\n"
	  "  --interval SECS      the refresh interval (default 1)\n"
	  "  --filter EVENT=EXPR  count only the records that pass\n"
	  "  --duration SECS      stop after SECS seconds\n"
	  "  -f, --follow-forks   count in forked children too\n"
	  "  --engine E           auto, agent or ptrace (as trace's)\n"
	  "  --quiet-target       the command's stdout and stderr to /dev/null\n"
	  "  -p, --pid PID[,PID]  attach to running processes\n" },
	{ "flamegraph", dp_cmd_flamegraph,
	  "draw folded stacks as an interactive flame graph (SVG)",
	  "dprobe flamegraph [FILE|-] [-o OUT.svg] [--title TITLE] [--width N]",
	  "Read folded stacks (the lines of 'dprobe trace --format folded', or\n"
	  "of any stack collapser: FRAME;FRAME;... COUNT, the outermost frame\n"
	  "first) from FILE or standard input and write a flame graph: one\n"
	  "self-contained SVG (no network) where each frame is as wide as its\n"
	  "share of the samples, its callers below it.  In a browser a click\n"
	  "zooms on a frame, 'Reset zoom' or Escape undoes it, 'Search' or\n"
	  "Ctrl-F colours the frames matching a regular expression (also\n"
	  "FILE.svg?s=REGEX; FILE.svg?z=NAME opens zoomed on NAME), and the\n"
	  "frame under the pointer is named below.\n"
	  "A line that is not a folded stack stops it with the line's number,\n"
	  "before anything is written.\n"
	  "\n"
	  "  -o, --output OUT     write the SVG to OUT (default: standard output)\n"
	  "  --title TITLE        the title above the graph (default: Flame Graph)\n"
	  "  --width N            the width in pixels (200 to 100000; default 1200)\n"
	  "\n"
	  "'dprobe trace --stack --flamegraph OUT.svg' does both steps in one.\n" },
	{ "mount", dp_cmd_mount,
	  "serve tracefs' files for one process tree over FUSE",
	  "dprobe mount DIR [--syscalls SRC] (-p PID | -- CMD [ARGS...])",
	  "Mount a FUSE file system with tracefs' layout on DIR, served by\n"
	  "dprobe's engines for one process tree: write definitions to\n"
	  "kprobe_events/uprobe_events/dynamic_events, enable\n"
	  "events/GROUP/EVENT/enable, read trace, trace_pipe, kprobe_profile,\n"
	  "error_log... as in the kernel's tracefs (docs/mount.md).  The files\n"
	  "stay served after the process exits.  Ctrl-C, SIGTERM or\n"
	  "'fusermount3 -u DIR' detach every probe and unmount; a command\n"
	  "started with -- CMD is then waited for.\n"
	  "\n"
	  "  -p, --pid PID      serve a running process (and what it forks)\n"
	  "  -- CMD [ARGS...]   start CMD and serve it\n"
	  "  --syscalls SRC     where events/syscalls/ comes from: kernel (the\n"
	  "                     kernel's syscall events; root), ptrace (the\n"
	  "                     traced processes' syscall stops: no root or\n"
	  "                     tracefs needed, two context switches a call),\n"
	  "                     none, or auto (default: kernel where it can)\n" },
	{ "cleanup", dp_cmd_cleanup,
	  "remove what killed dprobe runs left in tracefs", "dprobe cleanup",
	  "Remove what dprobe runs that died (kill -9, a crash) left in tracefs:\n"
	  "their instances/dprobe.PID and the events of their dprobePID_*\n"
	  "groups, one line per thing removed.  Runs of the kernel engine do\n"
	  "this silently when they start.  Needs root.\n" },
	{ "help", dp_cmd_help, "show the help of a command",
	  "dprobe help [COMMAND]",
	  "Show the help of COMMAND (what 'dprobe COMMAND --help' shows), or\n"
	  "the usage of every command.\n"
	  "\n"
	  "  --commands         one line per command: its name, a tab, what it\n"
	  "                     does (for scripts: the manual pages and the bash\n"
	  "                     completion are made from this help)\n" },
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

/* `dprobe help --commands`: NAME<TAB>SUMMARY, in the table's order. */
static int list_commands(void)
{
	for (size_t i = 0; i < NR_COMMANDS; i++)
		printf("%s\t%s\n", commands[i].name, commands[i].summary);
	return DP_EXIT_OK;
}

int dp_cmd_help(int argc, char **argv)
{
	if (argc < 2) {
		dp_usage(stdout, NULL);
		return DP_EXIT_OK;
	}
	if (!strcmp(argv[1], "--commands"))
		return list_commands();
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return dp_cmd_help(2, (char *[]){ argv[0], "help", NULL });
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
