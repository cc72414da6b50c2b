// SPDX-License-Identifier: GPL-2.0
/*
 * What the mounted files hold and what writing them does, following
 * tracefs (kernel/trace/trace.c, trace_events.c, trace_dynevent.c): every operation runs with fs->lock
 * held, and every change to the set of enabled events re-arms the
 * session child before the write returns, so that once `echo 1 > enable`
 * is done the probes are in the target.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "event/filter.h"
#include "fs/internal.h"
#include "lang/kstrto.h"
#include "record/tracedat.h"

static const struct {
	const char *name;
	enum dp_fs_kind kind;
} root_files[] = {
	{ "README", F_README },
	{ "available_events", F_AVAILABLE_EVENTS },
	{ "available_filter_functions", F_AVAILABLE_FUNCS },
	{ "available_tracers", F_AVAILABLE_TRACERS },
	{ "buffer_size_kb", F_BUFFER_SIZE },
	{ "buffer_subbuf_size_kb", F_SUBBUF_SIZE },
	{ "current_tracer", F_CURRENT_TRACER },
	{ "dynamic_events", F_DYNAMIC_EVENTS },
	{ "error_log", F_ERROR_LOG },
	{ "kprobe_events", F_KPROBE_EVENTS },
	{ "kprobe_profile", F_KPROBE_PROFILE },
	{ "max_graph_depth", F_MAX_GRAPH_DEPTH },
	{ "set_event", F_SET_EVENT },
	{ "set_ftrace_filter", F_FTRACE_FILTER },
	{ "set_ftrace_notrace", F_FTRACE_NOTRACE },
	{ "set_graph_function", F_GRAPH_FUNCTION },
	{ "set_graph_notrace", F_GRAPH_NOTRACE },
	{ "snapshot", F_SNAPSHOT },
	{ "stack_max_size", F_STACK_MAX_SIZE },
	{ "stack_trace", F_STACK_TRACE },
	{ "stack_trace_filter", F_STACK_FILTER },
	{ "stack_tracer_enabled", F_STACK_ENABLED },
	{ "synthetic_events", F_SYNTH_EVENTS },
	{ "trace", F_TRACE },
	{ "trace_clock", F_TRACE_CLOCK },
	{ "trace_marker", F_TRACE_MARKER },
	{ "trace_marker_raw", F_TRACE_MARKER_RAW },
	{ "trace_options", F_TRACE_OPTIONS },
	{ "trace_pipe", F_TRACE_PIPE },
	{ "tracing_cpumask", F_CPUMASK },
	{ "tracing_on", F_TRACING_ON },
	{ "uprobe_events", F_UPROBE_EVENTS },
	{ "uprobe_profile", F_UPROBE_PROFILE },
};

#define NR_ROOT_FILES (sizeof(root_files) / sizeof(root_files[0]))

static const struct {
	const char *name;
	enum dp_fs_kind kind;
} event_files[] = {
	{ "enable", F_EV_ENABLE },
	{ "filter", F_EV_FILTER },
	{ "format", F_EV_FORMAT },
	{ "id", F_EV_ID },
	{ "trigger", F_EV_TRIGGER },
	{ "hist", F_EV_HIST },
	{ "show", F_EV_SHOW },
};

/* `show` is dprobe's own, for events placed in the processes */
static bool has_file(const struct dp_event *ev, enum dp_fs_kind k)
{
	return k != F_EV_SHOW || dp_event_placed(ev);
}

static const char group_filter_text[] =
	"### global filter ###\n"
	"# Use this to set filters for multiple events.\n"
	"# Only events with the given fields will be affected.\n"
	"# If no events are modified, an error message will be displayed here\n";

/* events/ftrace/print has these alone (the kernel's print event: no
 * enable, no filter) */
static const struct {
	const char *name;
	enum dp_fs_kind kind;
} print_files[] = {
	{ "format", F_EV_FORMAT },
	{ "hist", F_EV_HIST },
	{ "id", F_EV_ID },
	{ "trigger", F_EV_TRIGGER },
};

bool dp_fs_is_dir(enum dp_fs_kind k)
{
	return k == F_ROOT_DIR || k == F_EVENTS_DIR || k == F_GROUP_DIR ||
	       k == F_EVENT_DIR || k == F_FTRACE_DIR || k == F_OPTIONS_DIR ||
	       k == F_INSTANCES_DIR;
}

bool dp_fs_is_writable(enum dp_fs_kind k)
{
	switch (k) {
	case F_KPROBE_PROFILE: case F_UPROBE_PROFILE: case F_AVAILABLE_EVENTS:
	case F_AVAILABLE_FUNCS: case F_README: case F_EV_FORMAT: case F_EV_ID:
	case F_TRACE_PIPE: case F_AVAILABLE_TRACERS: case F_EV_HIST:
	case F_EV_SHOW: case F_STACK_TRACE:
	case F_HEADER_PAGE: case F_HEADER_EVENT:
		return false;
	default:
		return !dp_fs_is_dir(k);
	}
}

static bool group_exists(const struct dp_fs *fs, const char *group)
{
	for (const struct dp_event *ev = fs->reg.events; ev; ev = ev->next)
		if (!ev->hidden && !strcmp(ev->group, group))
			return true;
	return false;
}

/* Split @path at '/' into at most 4 components of @len bytes. */
static int split_path(const char *path, char comp[4][DP_MAX_EVENT_NAME_LEN])
{
	int n = 0;

	while (*path) {
		size_t l;

		while (*path == '/')
			path++;
		if (!*path)
			break;
		l = strcspn(path, "/");
		if (n == 4 || l >= DP_MAX_EVENT_NAME_LEN)
			return -1;
		memcpy(comp[n], path, l);
		comp[n][l] = '\0';
		n++;
		path += l;
	}
	return n;
}

static int lookup_ftrace(char c[4][DP_MAX_EVENT_NAME_LEN], int n,
			 struct dp_fs_path *p)
{
	strcpy(p->group, "ftrace");
	if (n == 2) {
		p->kind = F_FTRACE_DIR;
		return 0;
	}
	if (strcmp(c[2], "print"))
		return -ENOENT;
	strcpy(p->event, "print");
	if (n == 3) {
		p->kind = F_EVENT_DIR;
		return 0;
	}
	for (size_t i = 0; i < sizeof(print_files) / sizeof(print_files[0]); i++) {
		if (!strcmp(c[3], print_files[i].name)) {
			p->kind = print_files[i].kind;
			return 0;
		}
	}
	return -ENOENT;
}

static int lookup_events(struct dp_fs *fs, char c[4][DP_MAX_EVENT_NAME_LEN],
			 int n, struct dp_fs_path *p)
{
	const struct dp_event *ev;

	if (n == 1) {
		p->kind = F_EVENTS_DIR;
		return 0;
	}
	if (n == 2 && !strcmp(c[1], "enable")) {
		p->kind = F_ALL_ENABLE;
		return 0;
	}
	if (n == 2 && !strcmp(c[1], "header_page")) {
		p->kind = F_HEADER_PAGE;
		return 0;
	}
	if (n == 2 && !strcmp(c[1], "header_event")) {
		p->kind = F_HEADER_EVENT;
		return 0;
	}
	if (!strcmp(c[1], "ftrace"))
		return lookup_ftrace(c, n, p);
	if (!group_exists(fs, c[1]))
		return -ENOENT;
	strcpy(p->group, c[1]);
	if (n == 2) {
		p->kind = F_GROUP_DIR;
		return 0;
	}
	if (n == 3 && !strcmp(c[2], "enable")) {
		p->kind = F_GROUP_ENABLE;
		return 0;
	}
	if (n == 3 && !strcmp(c[2], "filter")) {
		p->kind = F_GROUP_FILTER;
		return 0;
	}
	ev = dp_registry_find(&fs->reg, c[1], c[2]);
	if (!ev)
		return -ENOENT;
	strcpy(p->event, c[2]);
	if (n == 3) {
		p->kind = F_EVENT_DIR;
		return 0;
	}
	for (size_t i = 0; i < sizeof(event_files) / sizeof(event_files[0]); i++) {
		if (!strcmp(c[3], event_files[i].name) &&
		    has_file(ev, event_files[i].kind)) {
			p->kind = event_files[i].kind;
			return 0;
		}
	}
	return -ENOENT;
}

int dp_fs_lookup(struct dp_fs *fs, const char *path, struct dp_fs_path *p)
{
	char c[4][DP_MAX_EVENT_NAME_LEN];
	int n;

	if (dp_fs_inst_path(fs, path))
		return dp_fs_inst_lookup(fs, path, p);
	n = split_path(path, c);
	memset(p, 0, sizeof(*p));
	if (n < 0)
		return -ENOENT;
	if (n == 0) {
		p->kind = F_ROOT_DIR;
		return 0;
	}
	if (!strcmp(c[0], "events"))
		return lookup_events(fs, c, n, p);
	if (!strcmp(c[0], "options") && n <= 2) {
		if (n == 2 && !dp_fs_option_exists(fs, c[1]))
			return -ENOENT;
		p->kind = n == 1 ? F_OPTIONS_DIR : F_OPTION;
		if (n == 2)
			strcpy(p->event, c[1]);
		return 0;
	}
	if (n > 1)
		return -ENOENT;
	for (size_t i = 0; i < NR_ROOT_FILES; i++) {
		if (!strcmp(c[0], root_files[i].name) &&
		    dp_fs_inst_root_file(fs, c[0])) {
			p->kind = root_files[i].kind;
			return 0;
		}
	}
	return -ENOENT;
}

void dp_fs_list_dir(struct dp_fs *fs, const struct dp_fs_path *p,
		    void (*fill)(void *priv, const char *name, bool dir),
		    void *priv)
{
	const struct dp_event *ev, *e2;

	switch (p->kind) {
	case F_ROOT_DIR:
		fill(priv, "events", true);
		fill(priv, "options", true);
		if (!fs->top)
			fill(priv, "instances", true);
		for (size_t i = 0; i < NR_ROOT_FILES; i++)
			if (dp_fs_inst_root_file(fs, root_files[i].name))
				fill(priv, root_files[i].name, false);
		break;
	case F_INSTANCES_DIR:
		dp_fs_inst_list(fs, fill, priv);
		break;
	case F_EVENTS_DIR:
		fill(priv, "enable", false);
		fill(priv, "header_event", false);
		fill(priv, "header_page", false);
		fill(priv, "ftrace", true);
		/* each group once, where its first event stands */
		for (ev = fs->reg.events; ev; ev = ev->next) {
			for (e2 = fs->reg.events; e2 != ev; e2 = e2->next)
				if (!strcmp(e2->group, ev->group))
					break;
			if (e2 == ev && !ev->hidden)
				fill(priv, ev->group, true);
		}
		break;
	case F_GROUP_DIR:
		fill(priv, "enable", false);
		fill(priv, "filter", false);
		for (ev = fs->reg.events; ev; ev = ev->next)
			if (!strcmp(ev->group, p->group))
				fill(priv, ev->name, true);
		break;
	case F_FTRACE_DIR:
		fill(priv, "print", true);
		break;
	case F_OPTIONS_DIR:
		dp_fs_options_list(fs, fill, priv);
		break;
	case F_EVENT_DIR:
		if (!strcmp(p->group, "ftrace")) {
			for (size_t i = 0; i < sizeof(print_files) / sizeof(print_files[0]); i++)
				fill(priv, print_files[i].name, false);
			break;
		}
		ev = dp_registry_find(&fs->reg, p->group, p->event);
		for (size_t i = 0; i < sizeof(event_files) / sizeof(event_files[0]); i++)
			if (ev && has_file(ev, event_files[i].kind))
				fill(priv, event_files[i].name, false);
		break;
	default:
		break;
	}
}

/* ---- reading ---------------------------------------------------------------- */

static struct dp_event **list_events(struct dp_event *ev, size_t *n);

static const char readme[] =
	"tracing mini-HOWTO (dprobe mount: tracefs for one process tree):\n"
	"\n"
	"# echo 'p:myprobe do_sys_open dfd=%di:s32 name=+0(%si):string' > kprobe_events\n"
	"# echo 'r:myretprobe do_sys_open $retval' >> kprobe_events\n"
	"# echo 1 > events/kprobes/myprobe/enable\n"
	"# cat trace\n"
	"\n"
	"Important files:\n"
	"  trace\t\t\t- The static contents of the buffer\n"
	"\t\t\t  To clear the buffer write into this file: echo > trace\n"
	"  trace_pipe\t\t- A consuming read that blocks until there is data\n"
	"  tracing_on\t\t- Enable or disable writing to the buffer\n"
	"  buffer_size_kb\t- Size of the trace buffer, in kilobytes\n"
	"  trace_marker\t\t- Writes go into the buffer (events/ftrace/print)\n"
	"  trace_marker_raw\t- Binary writes: a 4-byte id, then data\n"
	"  snapshot\t\t- 'echo 1' swaps the buffer into the snapshot, 0 frees\n"
	"\t\t\t  it, 2 clears it; reading shows it\n"
	"  error_log\t\t- The last 8 rejected commands; 'echo > error_log' clears\n"
	"  available_events\t- The events that can be enabled (GROUP:EVENT)\n"
	"  available_filter_functions\t- Functions of the target a probe can be placed on\n"
	"  set_event\t\t- Enabled events; 'echo GROUP:EVENT >> set_event' enables,\n"
	"\t\t\t  '!GROUP:EVENT' disables, 'GROUP:*' names a whole group\n"
	"  current_tracer\t- The tracer: nop (events only), function or\n"
	"\t\t\t  function_graph on the functions set_ftrace_filter\n"
	"\t\t\t  selects (all of the program's when it is empty)\n"
	"  set_ftrace_filter\t- Functions to trace: GLOB, !GLOB, GLOB:mod:LIB\n"
	"\t\t\t  and function commands: FUNC:CMD[:N], !FUNC:CMD removes;\n"
	"\t\t\t  traceon traceoff stacktrace snapshot dump cpudump\n"
	"\t\t\t  enable_event:SYS:EVENT disable_event:SYS:EVENT\n"
	"  set_ftrace_notrace\t- Functions never traced (same words)\n"
	"  stack_tracer_enabled\t- 1 starts the stack tracer (the kernel's\n"
	"\t\t\t  sysctl kernel.stack_tracer_enabled), 0 stops it\n"
	"  stack_trace\t\t- The deepest stack seen, with each frame's size\n"
	"  stack_max_size\t- Its depth in bytes; writing sets it (0: again)\n"
	"  stack_trace_filter\t- Functions the stack tracer checks (same words)\n"
	"  kprobe_events\t\t- Probes on the target's symbols; writing a line\n"
	"\t\t\t  does Create/append/remove, reading shows them\n"
	"  uprobe_events\t\t- The same for probes on file offsets\n"
	"  dynamic_events\t- Every kind in one file; '>' removes every event\n"
	"\t  one definition per line, in the kernel's syntax:\n"
	"\t   Format: p[:[<group>/][<event>]] <place> [<args>]\n"
	"\t           r[maxactive][:[<group>/][<event>]] <place> [<args>]\n"
	"\t           f[:[<group>/][<event>]] <func-name>[%return] [<args>]\n"
	"\t           s:[synthetic/]<event> <field> [<field>]\n"
	"\t           t[:[<group>/][<event>]] <tracepoint> [<args>]\n"
	"\t           e[:[<group>/][<event>]] <attached-group>.<attached-event> [<args>] [if <filter>]\n"
	"\t           -:[<group>/][<event>]\n"
	"\t    place: [<module>:]<symbol>[+<offset>]|<memaddr>\n"
	"  place (kretprobe): [<module>:]<symbol>[+<offset>]%return|<memaddr>\n"
	"   place (uprobe): <path>:<offset>[%return][(ref_ctr_offset)]\n"
	"\t     args: <name>=fetcharg[:type]\n"
	"\t fetcharg: (%<register>|$<efield>), @<address>, @<symbol>[+|-<offset>],\n"
	"\t           $stack<index>, $stack, $retval, $comm, $arg<N>,\n"
	"\t           <argname>[->field[->field|.field...]] (debug information),\n"
	"\t           +|-[u]<offset>(<fetcharg>), \\imm-value, \\\"imm-string\"\n"
	"\t     kernel return probes support: $retval, $arg<N>, $comm\n"
	"\t     type: s8/16/32/64, u8/16/32/64, x8/16/32/64, char, string, symbol,\n"
	"\t           b<bit-width>@<bit-offset>/<container-size>, ustring,\n"
	"\t           symstr, %pd/%pD, <type>\\[<array-size>\\]\n"
	"\t   efield: a field of <attached-group>/<attached-event>, for\n"
	"\t           event probes (e:); events/syscalls/ are the kernel's\n"
	"\t           system calls of the served processes\n"
	"  synthetic_events\t- Events made of typed fields and no probe, which\n"
	"\t\t\t  a trigger's action generates:\n"
	"\t\t\t  echo 'lat_ev u64 lat; char name[]; long[] stack' >> synthetic_events\n"
	"\t\t\t  creates one, '!NAME' removes it; each field is\n"
	"\t\t\t  'TYPE NAME'; TYPE is s8..u64, char, int, long, their\n"
	"\t\t\t  unsigned forms, bool, pid_t, gfp_t, char[N], char[],\n"
	"\t\t\t  or long[] (a stack: a stack variable's frames)\n"
	"  kprobe_profile\t\t- Hits and misses of each kprobe\n"
	"  uprobe_profile\t- Hits of each uprobe\n"
	"  events/\t\t- One directory per group, one per event in it:\n"
	"      enable\t\t- 0/1 (group and events/enable: X when mixed)\n"
	"      filter\t\t- A filter expression; '0' clears\n"
	"      format\t\t- The record layout\n"
	"      id\t\t- The event id\n"
	"      trigger\t\t- traceon, traceoff, snapshot, stacktrace,\n"
	"\t\t\t  enable_event, disable_event, enable_hist, disable_hist\n"
	"\t\t\t  (CMD[:N] [if FILTER]; !CMD removes), hist\n"
	"      hist\t\t- The histograms of the event's hist triggers\n"
	"\n"
	"      hist trigger\t- If set, event hits are aggregated into a hash table\n"
	"\t    Format: hist:keys=<field1[,field2,...]>\n"
	"\t            [:<var1>=<field|var_ref|numeric_literal>[,<var2>=...]]\n"
	"\t            [:values=<field1[,field2,...]>]\n"
	"\t            [:sort=<field1[,field2,...]>]\n"
	"\t            [:size=#entries]\n"
	"\t            [:pause][:continue][:clear]\n"
	"\t            [:name=histname1]\n"
	"\t            [:nohitcount]\n"
	"\t            [:<handler>.<action>]\n"
	"\t            [if <filter>]\n\n"
	"\t    Keys may carry .hex, .sym, .sym-offset, .execname (common_pid),\n"
	"\t    .syscall, .log2 or .buckets=<size>; values .hex, .percent or\n"
	"\t    .graph; sort fields .descending or .ascending.  The default\n"
	"\t    size is 2048 entries.  common_timestamp (.usecs) and\n"
	"\t    common_cpu are fields of every event.  A variable holds a\n"
	"\t    field, $another, a number, or + - * / of them, or the user\n"
	"\t    stack at the hit: st=common_stacktrace.  Keys\n"
	"\t    can be any field, or the special string 'common_stacktrace'.\n\n"
	"\t    Handlers, run when an entry is added or updated, and actions:\n"
	"\t        onmatch(group.event)  - the key was seen on that event\n"
	"\t        onmax(var)            - var is above the entry's maximum\n"
	"\t        onchange(var)         - var is not what it was\n"
	"\t        trace(<synthetic_event>,param list), or\n"
	"\t        <synthetic_event>(param list) - fire the synthetic event\n"
	"\t        save(field,...)       - keep the fields with the entry\n"
	"\t        snapshot()            - take a snapshot of the buffer\n";

/* The kernel's EVENT_FILE_FL_ENABLED: enabled, or armed in soft mode. */
static bool registered(struct dp_fs *fs, const struct dp_event *ev)
{
	return ev->enabled || dp_fs_triggered(fs, ev->id);
}

/* 0, 1, X (mixed) or ? (no events), as a group's `enable` reads. */
static char enable_state(struct dp_fs *fs, const char *group)
{
	bool on = false, off = false;

	for (const struct dp_event *ev = fs->reg.events; ev; ev = ev->next) {
		if (ev->hidden || (group && strcmp(ev->group, group)))
			continue;
		if (registered(fs, ev))
			on = true;
		else
			off = true;
	}
	return on && off ? 'X' : on ? '1' : off ? '0' : '?';
}

/* Most recently created first, as the kernel walks its event list. */
static void print_set_event(struct dp_fs *fs, FILE *out)
{
	size_t n = 0;
	struct dp_event **v = list_events(fs->reg.events, &n);

	while (v && n--)
		if (registered(fs, v[n]))
			fprintf(out, "%s:%s\n", v[n]->group, v[n]->name);
	free(v);
}

/* synthetic_events lists NAME\tFIELDS; dynamic_events "s:synthetic/" first */
static void print_synth(const struct dp_event *ev, bool dyn, FILE *out)
{
	char *line = dp_synth_listing(ev->synth);

	if (line)
		fprintf(out, "%s%s\n", dyn ? "s:" DP_SYNTH_GROUP "/" : "", line);
	free(line);
}

static void print_dynamic(const struct dp_fs *fs, FILE *out)
{
	for (const struct dp_event *ev = fs->reg.events; ev; ev = ev->next) {
		if (ev->synth)
			print_synth(ev, true, out);
		for (const struct dp_probe *p = ev->probes; !ev->builtin && p;
		     p = p->next) {
			char *line = dp_probe_listing(&p->def);

			if (line)
				fprintf(out, "%s\n", line);
			free(line);
		}
	}
}

/* An event's directory: a registry event, or events/ftrace/print. */
static struct dp_event *path_event(struct dp_fs *fs, const struct dp_fs_path *p)
{
	if (!strcmp(p->group, "ftrace"))
		return !strcmp(p->event, "print") ? fs->marker : NULL;
	return dp_registry_find(&fs->reg, p->group, p->event);
}

static int read_event_file(struct dp_fs *fs, const struct dp_fs_path *p,
			   FILE *out)
{
	struct dp_event *ev = path_event(fs, p);

	if (!ev)
		return -ENOENT;
	switch (p->kind) {
	case F_EV_ENABLE:
		/* a trigger puts the kernel's event in soft mode: "0*";
		 * enable_event & co flip it at the process's hits */
		if (dp_fs_triggered(fs, ev->id))
			dp_fs_update_profile(fs);
		dp_fs_trigger_enable_print(fs, ev, out);
		break;
	case F_EV_FILTER:
		dp_event_filter_print(ev, out);
		break;
	case F_EV_FORMAT:
		if (ev == fs->marker)
			dp_fs_marker_format(out);
		else
			dp_event_format(ev, out);
		break;
	case F_EV_ID:
		fprintf(out, "%u\n", ev->id);
		break;
	case F_EV_TRIGGER:
		dp_fs_trigger_print(fs, ev, out);
		break;
	case F_EV_HIST:
		/* what the process did before this read is counted */
		dp_fs_update_profile(fs);
		dp_fs_hist_read(fs, ev->id, out);
		break;
	case F_EV_SHOW:
		dp_fs_show_read(fs, ev, out);
		break;
	default:
		return -EINVAL;
	}
	return 0;
}

int dp_fs_read_file(struct dp_fs *fs, const struct dp_fs_path *p, FILE *out)
{
	switch (p->kind) {
	case F_KPROBE_EVENTS:
		dp_registry_list(&fs->reg, DP_KIND_KPROBE, out);
		break;
	case F_UPROBE_EVENTS:
		dp_registry_list(&fs->reg, DP_KIND_UPROBE, out);
		break;
	case F_DYNAMIC_EVENTS:
		print_dynamic(fs, out);
		break;
	case F_SYNTH_EVENTS:
		for (const struct dp_event *ev = fs->reg.events; ev; ev = ev->next)
			if (ev->synth)
				print_synth(ev, false, out);
		break;
	case F_SET_EVENT:
		print_set_event(fs, out);
		break;
	case F_TRACE:
		/* the child drains every ring before it answers: what the
		 * process did before this read is in the buffer, as in the
		 * kernel's, whose records are written at the hit */
		dp_fs_update_profile(fs);
		dp_fs_buf_render(fs, out);
		break;
	case F_KPROBE_PROFILE:
	case F_UPROBE_PROFILE:
		dp_fs_update_profile(fs);
		dp_registry_profile(&fs->reg, p->kind == F_KPROBE_PROFILE ?
				    DP_KIND_KPROBE : DP_KIND_UPROBE, out);
		break;
	case F_OPTION:
		dp_fs_option_print(fs, p->event, out);
		break;
	case F_TRACE_OPTIONS:
		dp_fs_trace_options_print(fs, out);
		break;
	case F_GRAPH_FUNCTION:
	case F_GRAPH_NOTRACE:
		dp_fs_graph_print(fs, p->kind == F_GRAPH_NOTRACE, out);
		break;
	case F_MAX_GRAPH_DEPTH:
		dp_fs_graph_depth_print(fs, out);
		break;
	case F_TRACING_ON:
		/* triggers turn it on and off at the process's hits: those
		 * made before this read have run */
		if (fs->ntrigs)
			dp_fs_update_profile(fs);
		pthread_mutex_lock(&fs->buf_lock);
		fprintf(out, "%d\n", fs->tracing_on);
		pthread_mutex_unlock(&fs->buf_lock);
		break;
	case F_BUFFER_SIZE:
		pthread_mutex_lock(&fs->buf_lock);
		fprintf(out, "%zu\n", fs->limit >> 10);
		pthread_mutex_unlock(&fs->buf_lock);
		break;
	case F_ERROR_LOG:
		for (unsigned i = 0; i < fs->nlog; i++)
			fputs(fs->log[i], out);
		break;
	case F_AVAILABLE_EVENTS:
		for (const struct dp_event *ev = fs->reg.events; ev; ev = ev->next)
			if (!ev->hidden)
				fprintf(out, "%s:%s\n", ev->group, ev->name);
		break;
	case F_AVAILABLE_FUNCS:
		dp_fs_list_functions(fs, out);
		break;
	case F_README:
		fputs(readme, out);
		break;
	case F_CURRENT_TRACER:
		dp_fs_tracer_print(fs, out);
		break;
	case F_AVAILABLE_TRACERS:
		/* an instance has no function tracer: nop, events only */
		fprintf(out, "%s\n", fs->top ? "nop" : dp_tracer_list());
		break;
	case F_FTRACE_FILTER:
	case F_FTRACE_NOTRACE:
		dp_fs_funcsel_print(fs, p->kind == F_FTRACE_NOTRACE, out);
		break;
	case F_STACK_ENABLED:
	case F_STACK_MAX_SIZE:
	case F_STACK_TRACE:
	case F_STACK_FILTER:
		dp_fs_stack_print(fs, p->kind, out);
		break;
	case F_TRACE_CLOCK:
		/* the clock dprobe's timestamps count: CLOCK_MONOTONIC, what
		 * the kernel's local clock (sched_clock) counts as well */
		fputs("[local]\n", out);
		break;
	case F_HEADER_PAGE:
		pthread_mutex_lock(&fs->buf_lock);
		fprintf(out, dp_tdat_header_page_fmt,
			(unsigned)dp_fs_subbuf_data(fs));
		pthread_mutex_unlock(&fs->buf_lock);
		break;
	case F_CPUMASK:
		pthread_mutex_lock(&fs->buf_lock);
		dp_fs_cpumask_print(out, fs->cpumask, fs->cpumask_bits);
		pthread_mutex_unlock(&fs->buf_lock);
		break;
	case F_SUBBUF_SIZE:
		pthread_mutex_lock(&fs->buf_lock);
		fprintf(out, "%u\n", (DP_FS_PAGE_SIZE << fs->subbuf_order) >> 10);
		pthread_mutex_unlock(&fs->buf_lock);
		break;
	case F_HEADER_EVENT:
		fputs(dp_tdat_header_event, out);
		break;
	case F_ALL_ENABLE:
		fprintf(out, "%c\n", enable_state(fs, NULL));
		break;
	case F_GROUP_ENABLE:
		fprintf(out, "%c\n", enable_state(fs, p->group));
		break;
	case F_GROUP_FILTER:
		fputs(group_filter_text, out);
		break;
	case F_SNAPSHOT:
		dp_fs_update_profile(fs);
		dp_fs_snapshot_render(fs, out);
		break;
	case F_TRACE_MARKER:
	case F_TRACE_MARKER_RAW:
		return -EINVAL;		/* write only */
	case F_TRACE_PIPE:
		return -EINVAL;		/* served by the FUSE layer */
	default:
		return read_event_file(fs, p, out);
	}
	return 0;
}

/* ---- enabling ---------------------------------------------------------------- */

static void note_enabled(struct dp_fs *fs, unsigned id)
{
	unsigned *t;

	for (size_t i = 0; i < fs->never; i++)
		if (fs->ever_enabled[i] == id)
			return;
	t = realloc(fs->ever_enabled, (fs->never + 1) * sizeof(*t));
	if (!t)
		return;
	fs->ever_enabled = t;
	fs->ever_enabled[fs->never++] = id;
}

typedef bool (*ev_pred)(const struct dp_event *ev, const void *arg);

/*
 * Set the events @pred picks to @on and re-arm if anything changed.  If
 * the engine cannot arm them, every flag goes back and the write fails
 * (as enabling an unregistrable uprobe fails in the kernel).
 */
static int set_enabled(struct dp_fs *fs, ev_pred pred, const void *arg,
		       bool on)
{
	struct dp_event *ev;
	bool changed = false;
	size_t n = 0, i;
	bool *old;
	int ret;

	for (ev = fs->reg.events; ev; ev = ev->next)
		n++;
	old = calloc(n ? n : 1, sizeof(*old));
	if (!old)
		return -ENOMEM;
	for (ev = fs->reg.events, i = 0; ev; ev = ev->next, i++) {
		old[i] = ev->enabled;
		if (ev->hidden)
			continue;
		if (pred(ev, arg))
			dp_fs_trigger_enabled(fs, ev, on);
		if (!pred(ev, arg) || ev->enabled == on)
			continue;
		ev->enabled = on;
		changed = true;
		if (on)
			note_enabled(fs, ev->id);
	}
	ret = changed ? dp_fs_rearm(fs) : 0;
	if (ret) {
		for (ev = fs->reg.events, i = 0; ev; ev = ev->next, i++)
			ev->enabled = old[i];
		dp_fs_rearm(fs);
	}
	free(old);
	return ret;
}

static bool pred_all(const struct dp_event *ev, const void *arg)
{
	(void)ev;
	(void)arg;
	return true;
}

static bool pred_group(const struct dp_event *ev, const void *arg)
{
	return !strcmp(ev->group, arg);
}

static bool pred_one(const struct dp_event *ev, const void *arg)
{
	return ev == arg;
}

/* kstrtoul_from_user(base 10) that must give exactly 0 or 1. */
static int parse_bool(const char *buf, size_t len, bool *on)
{
	char tmp[32];
	uint64_t v;

	if (!len || len >= sizeof(tmp))
		return -EINVAL;
	memcpy(tmp, buf, len);
	tmp[len] = '\0';
	if (dp_kstrtoull(tmp, 10, &v) || v > 1)
		return -EINVAL;
	*on = v;
	return 0;
}

static int write_enable(struct dp_fs *fs, const struct dp_fs_path *p,
			const char *buf, size_t len)
{
	struct dp_event *ev;
	bool on;

	if (parse_bool(buf, len, &on))
		return -EINVAL;
	if (p->kind == F_ALL_ENABLE)
		return set_enabled(fs, pred_all, NULL, on);
	if (p->kind == F_GROUP_ENABLE)
		return set_enabled(fs, pred_group, p->group, on);
	ev = dp_registry_find(&fs->reg, p->group, p->event);
	if (!ev)
		return -ENOENT;
	return set_enabled(fs, pred_one, ev, on);
}

struct set_event_arg {
	const char *sys;	/* NULL: any */
	const char *name;	/* NULL: any */
	const char *either;	/* a bare word: event or system */
};

static bool pred_set_event(const struct dp_event *ev, const void *a)
{
	const struct set_event_arg *s = a;

	if (s->either)
		return !strcmp(ev->name, s->either) || !strcmp(ev->group, s->either);
	return (!s->sys || !strcmp(ev->group, s->sys)) &&
	       (!s->name || !strcmp(ev->name, s->name));
}

/* One set_event token: [!][SYSTEM:][EVENT], '*' only as a whole part. */
static int set_event_token(struct dp_fs *fs, char *tok)
{
	struct set_event_arg a = { 0 };
	bool on = true, any = false;
	char *colon;

	if (*tok == '!') {
		on = false;
		tok++;
	}
	colon = strchr(tok, ':');
	if (colon) {
		*colon = '\0';
		a.sys = *tok && strcmp(tok, "*") ? tok : NULL;
		a.name = colon[1] && strcmp(colon + 1, "*") ? colon + 1 : NULL;
	} else if (strcmp(tok, "*")) {
		a.either = tok;
	}
	if ((a.sys && strchr(a.sys, '*')) || (a.name && strchr(a.name, '*')) ||
	    (a.either && strchr(a.either, '*')))
		return -EINVAL;
	for (const struct dp_event *ev = fs->reg.events; ev && !any; ev = ev->next)
		any = pred_set_event(ev, &a);
	if (!any)
		return -EINVAL;
	return set_enabled(fs, pred_set_event, &a, on);
}

static int write_set_event(struct dp_fs *fs, const char *buf, size_t len)
{
	char *copy = strndup(buf, len), *tok, *save = NULL;
	int ret = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, " \t\n", &save); tok && !ret;
	     tok = strtok_r(NULL, " \t\n", &save))
		ret = set_event_token(fs, tok);
	free(copy);
	return ret;
}

/* ---- probe definitions ------------------------------------------------------ */

/*
 * The kernel's three lines.  dprobe's own context (the file searched, the
 * instruction an offset falls into) goes to the mount's stderr instead:
 * programs read error_log as the kernel writes it.
 */
static char *render_error(const struct dp_error *e)
{
	struct dp_error k = *e;
	char *s = NULL;
	size_t n = 0;
	FILE *f;

	if (e->detail[0])
		fprintf(stderr, "dprobe mount: %s: %s\n", e->command, e->detail);
	k.detail[0] = '\0';
	f = open_memstream(&s, &n);
	if (!f)
		return NULL;
	dp_error_print(&k, f);
	if (fclose(f)) {
		free(s);
		return NULL;
	}
	return s;
}

/* kprobe_events and uprobe_events take their own kind; fprobes and
 * tracepoint probes are dynamic_events' only, as in the kernel. */
static bool file_takes(enum dp_fs_kind file, const struct dp_probe_def *def)
{
	if (file == F_KPROBE_EVENTS)
		return def->kind == DP_KIND_KPROBE && !def->fprobe;
	if (file == F_UPROBE_EVENTS)
		return def->kind == DP_KIND_UPROBE;
	return true;
}

/* The events a delete through @file sees: not the static ones. */
static bool file_has(enum dp_fs_kind file, const struct dp_event *ev)
{
	if (ev->synth)
		return file == F_DYNAMIC_EVENTS || file == F_SYNTH_EVENTS;
	return !ev->builtin && ev->probes && file != F_SYNTH_EVENTS &&
	       file_takes(file, &ev->probes->def);
}

/* Events of the list starting at @ev, into a malloc'd array. */
static struct dp_event **list_events(struct dp_event *ev, size_t *n)
{
	struct dp_event **v, *e;
	size_t k = 0;

	for (e = ev; e; e = e->next)
		k++;
	v = calloc(k + 1, sizeof(*v));
	if (!v)
		return NULL;
	for (k = 0, e = ev; e; e = e->next)
		v[k++] = e;
	*n = k;
	return v;
}

static bool in_list(struct dp_event *const *v, size_t n,
		    const struct dp_event *ev)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == ev)
			return true;
	return false;
}

/*
 * Run a delete on the registry as seen through @file: kprobe_events and
 * uprobe_events see only their own kind of event (a delete there never
 * matches the other kind), dynamic_events sees them all.  Events with a
 * trigger count as busy, as in the kernel (soft mode).
 */
static int apply_delete(struct dp_fs *fs, enum dp_fs_kind file,
			const char *line, struct dp_error *e)
{
	struct dp_event **all, **after, **tail;
	size_t n = 0, m = 0, i;
	bool *soft, *mine;
	int ret;

	all = list_events(fs->reg.events, &n);
	soft = calloc(2 * (n + 1), sizeof(*soft));
	if (!all || !soft) {
		free(all);
		free(soft);
		return -ENOMEM;
	}
	mine = soft + n + 1;
	tail = &fs->reg.events;
	for (i = 0; i < n; i++) {
		soft[i] = !all[i]->enabled &&
			  (dp_fs_triggered(fs, all[i]->id) ||
			   dp_fs_inst_busy(fs, all[i]->id));
		all[i]->enabled |= soft[i];
		mine[i] = file_has(file, all[i]);
		if (mine[i]) {
			*tail = all[i];
			tail = &all[i]->next;
		}
	}
	*tail = NULL;
	dp_registry_relinked(&fs->reg);
	ret = dp_registry_apply(&fs->reg, line, NULL, e);
	after = list_events(fs->reg.events, &m);
	/* merge back, in the old order: survivors and the other kinds */
	tail = &fs->reg.events;
	for (i = 0; i < n; i++) {
		/* one of ours not listed any more was freed: no looking at it */
		if (mine[i] && (!after || !in_list(after, m, all[i])))
			continue;
		all[i]->enabled &= !soft[i];
		*tail = all[i];
		tail = &all[i]->next;
	}
	*tail = NULL;
	dp_registry_relinked(&fs->reg);
	free(after);
	free(all);
	free(soft);
	return ret;
}

/* Deleting an event that was ever enabled clears the buffer, as
 * the kernel's dyn_event_release() does. */
static void forget_deleted(struct dp_fs *fs)
{
	bool clear = false;

	for (size_t i = 0; i < fs->never;) {
		if (dp_registry_find_id(&fs->reg, fs->ever_enabled[i])) {
			i++;
			continue;
		}
		clear = true;
		fs->ever_enabled[i] = fs->ever_enabled[--fs->never];
	}
	if (clear)
		dp_fs_buf_clear(fs);
	dp_fs_inst_sync(fs);
	/* an id is reused by the next new event: its counts start at 0 */
	pthread_mutex_lock(&fs->buf_lock);
	for (size_t i = 0; i < fs->ncounts;) {
		if (dp_registry_find_id(&fs->reg, fs->counts[i].id))
			i++;
		else
			fs->counts[i] = fs->counts[--fs->ncounts];
	}
	pthread_mutex_unlock(&fs->buf_lock);
}

/* A line of the wrong kind for the file: the kernel's ECANCELED. */
static bool wrong_kind(const struct dp_fs *fs, enum dp_fs_kind file,
		       const char *line)
{
	struct dp_probe_def def = { 0 };
	struct dp_error e = { 0 };
	bool wrong = false;

	if (dp_line_is_delete(line))
		return false;
	/* an event probe is dynamic_events' only */
	if (line[strspn(line, " \t")] == 'e')
		return file != F_DYNAMIC_EVENTS;
	if (file == F_DYNAMIC_EVENTS)
		return false;
	if (!dp_parse_probe_flags(line, &def, &e, fs->reg.parse_flags)) {
		wrong = !file_takes(file, &def);
		dp_probe_def_free(&def);
	}
	dp_error_clear(&e);
	return wrong;
}

/* The probes armed for the enabled events: a change means a re-arm. */
static unsigned long armed_probes(const struct dp_fs *fs)
{
	unsigned long n = 0;

	for (const struct dp_event *ev = fs->reg.events; ev; ev = ev->next)
		for (const struct dp_probe *p = ev->probes; ev->enabled && p;
		     p = p->next)
			n++;
	return n;
}

/*
 * A definition that names variables, members or source lines: the
 * definitions it stands for (sym/debugdef.h), applied in order; the
 * first that fails ends it, as a write's lines do.
 */
static int apply_by_name(struct dp_fs *fs, const char *line,
			 struct dp_error *e)
{
	char **t = NULL;
	int ret;

	if (!fs->dbg)
		fs->dbg = dp_debugdef_new(fs->res.default_binary,
					  fs->o->objs, fs->o->nobjs);
	if (!fs->dbg)
		return -ENOMEM;
	ret = dp_debugdef_translate(fs->dbg, line, &t, e);
	if (ret == -ENODATA)	/* no debug information: the kernel's say */
		return dp_registry_apply(&fs->reg, line, NULL, e);
	for (size_t k = 0; !ret && t && t[k]; k++) {
		struct dp_probe *p = NULL;

		ret = dp_registry_apply(&fs->reg, t[k], &p, e);
		/* listed as written, as the kernel lists BTF arguments */
		for (unsigned i = 0; !ret && p && i < p->def.nargs; i++) {
			const char *w = dp_debugdef_shown(fs->dbg, k, i);

			if (w)
				p->def.args[i].shown = strndup(w, strcspn(w, "\n"));
		}
	}
	dp_debugdef_lines_free(t);
	return ret;
}

/* $argN and $retval checked against the function's declaration, as the
 * kernel checks them with BTF. */
static int check_by_debug(struct dp_fs *fs, const char *line,
			  struct dp_error *e)
{
	if (!fs->dbg)
		fs->dbg = dp_debugdef_new(fs->res.default_binary,
					  fs->o->objs, fs->o->nobjs);
	return fs->dbg ? dp_debugdef_check(fs->dbg, line, e) : 0;
}

/* A synthetic_events line: "!NAME" deletes (synth_event_delete()), any
 * other defines. */
static int apply_synth(struct dp_fs *fs, const char *line, struct dp_error *e)
{
	const char *l = line + strspn(line, " \t");
	char del[2 * DP_MAX_EVENT_NAME_LEN + 4];

	if (*l != '!')
		return dp_registry_synth(&fs->reg, line, false, e);
	l++;
	if (strcspn(l, " \t") >= DP_MAX_EVENT_NAME_LEN)
		return -ENOENT;
	snprintf(del, sizeof(del), "-:%s/%.*s", DP_SYNTH_GROUP,
		 (int)strcspn(l, " \t"), l);
	return apply_delete(fs, F_SYNTH_EVENTS, del, e);
}

/*
 * ":%pd" and ":%pD" arguments of a kprobe or fprobe line as the kernel
 * expands them before parsing (the target's struct dentry and struct
 * file, from its debug information): *@line is then a new string.
 */
static int expand_vfs_args(struct dp_fs *fs, char **line, struct dp_error *e)
{
	char *out = NULL;
	int ret;

	if (dp_line_is_delete(*line) || !strstr(*line, ":%p"))
		return 0;
	if (!fs->dbg)
		fs->dbg = dp_debugdef_new(fs->res.default_binary,
					  fs->o->objs, fs->o->nobjs);
	if (!fs->dbg)
		return -ENOMEM;
	ret = dp_debugdef_vfs_args(fs->dbg, *line, &out, e);
	if (ret == -ENODATA)
		return 0;
	if (!ret)
		*line = out;
	return ret;
}

static int apply_line(struct dp_fs *fs, enum dp_fs_kind file, char *line)
{
	char *const orig = line;
	struct dp_error e = { 0 };
	unsigned long armed = armed_probes(fs);
	int ret;

	dp_fs_follow_exec(fs);
	if (file == F_SYNTH_EVENTS) {
		ret = apply_synth(fs, line, &e);
		if (ret && e.logged)
			dp_fs_log_add(fs, render_error(&e));
		dp_error_clear(&e);
		if (!ret)
			forget_deleted(fs);
		return ret;
	}

	/* dynamic_events also deletes with "!X:[GRP/]EVENT ..." (the
	 * definition as written), as dyn_event_release() reads it */
	if (file == F_DYNAMIC_EVENTS && line[0] == '!' &&
	    strchr(line, ':') && strchr(line, ':') < line + strcspn(line, " \t")) {
		char *colon = strchr(line, ':');

		memmove(line + 1, colon, strlen(colon) + 1);
		line[0] = '-';
	}

	if (wrong_kind(fs, file, line))
		return -EINVAL;
	ret = expand_vfs_args(fs, &line, &e);
	if (ret) {
		if (e.logged)
			dp_fs_log_add(fs, render_error(&e));
		dp_error_clear(&e);
		return ret;
	}
	if (dp_line_is_delete(line))
		ret = apply_delete(fs, file, line, &e);
	else if (line[strspn(line, " \t")] == 'e')	/* fields, not names */
		ret = dp_registry_apply(&fs->reg, line, NULL, &e);
	else if (dp_debugdef_needed(line))
		ret = apply_by_name(fs, line, &e);
	else if (!(ret = check_by_debug(fs, line, &e)))
		ret = dp_registry_apply(&fs->reg, line, NULL, &e);
	if (ret && e.logged)
		dp_fs_log_add(fs, render_error(&e));
	dp_error_clear(&e);
	if (line != orig)
		free(line);
	if (!ret)
		forget_deleted(fs);
	/* a probe appended to an enabled event, or one of its probes
	 * deleted: armed or disarmed at once, as the kernel does */
	if (!ret && armed_probes(fs) != armed)
		dp_fs_rearm(fs);
	return ret;
}

/* Lines in order; the first failing one ends the write, as in the
 * kernel's trace_parse_run_command(). */
static int write_events(struct dp_fs *fs, enum dp_fs_kind file,
			const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char *line = strndup(p, l);
		int ret;

		if (!line)
			return -ENOMEM;
		ret = apply_line(fs, file, line);
		free(line);
		if (ret)
			return ret;
		p += l + (nl != NULL);
	}
	return 0;
}

/* `>`: every event of the file's kind goes, or none if one is busy. */
static int clear_events(struct dp_fs *fs, enum dp_fs_kind file)
{
	char line[2 * DP_MAX_EVENT_NAME_LEN + 4];
	struct dp_event *ev, *next;

	for (ev = fs->reg.events; ev; ev = ev->next)
		if (file_has(file, ev) &&
		    (ev->enabled || dp_fs_triggered(fs, ev->id) ||
		     dp_fs_inst_busy(fs, ev->id)))
			return -EBUSY;
	/* event probes first: the events they are on are busy till then */
	for (int pass = 0; pass < 2; pass++) {
		for (ev = fs->reg.events; ev; ev = next) {
			next = ev->next;
			if (!file_has(file, ev) ||
			    (ev->kind == DP_KIND_EPROBE) != !pass)
				continue;
			snprintf(line, sizeof(line), "-:%s/%s", ev->group,
				 ev->name);
			dp_registry_apply(&fs->reg, line, NULL, NULL);
		}
	}
	forget_deleted(fs);
	return 0;
}

/* ---- filters and triggers ---------------------------------------------------- */

static char *strip(const char *buf, size_t len)
{
	while (len && strchr(" \t\n", buf[len - 1]))
		len--;
	while (len && strchr(" \t\n", *buf)) {
		buf++;
		len--;
	}
	return strndup(buf, len);
}

static char *render_filter_error(const char *text,
				 const struct dp_filter_error *e)
{
	char *s = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&s, &n);

	if (!f)
		return NULL;
	dp_filter_error_log_print(text, e, f);
	if (fclose(f)) {
		free(s);
		return NULL;
	}
	return s;
}

static int set_filter(struct dp_fs *fs, struct dp_event *ev, const char *text)
{
	struct dp_filter_error e = { 0 };
	int ret = dp_event_set_filter(ev, text, &e);

	if (ret)
		dp_fs_log_add(fs, render_filter_error(text, &e));
	return ret;
}

/*
 * An event's filter, or a group's (every event of the group; the write
 * succeeds if it fits at least one).  An armed event is re-armed: the
 * session child holds a copy of its filter.
 */
static int write_filter(struct dp_fs *fs, const struct dp_fs_path *p,
			const char *buf, size_t len)
{
	char *text = strip(buf, len);
	bool armed = false, ok = false;
	int ret = -ENOENT;

	if (!text)
		return -ENOMEM;
	for (struct dp_event *ev = fs->reg.events; ev; ev = ev->next) {
		int r;

		if (strcmp(ev->group, p->group) ||
		    (p->kind == F_EV_FILTER && strcmp(ev->name, p->event)))
			continue;
		r = set_filter(fs, ev, text);
		if (!r)
			dp_fs_trigger_filter_changed(fs, ev);
		ok |= !r;
		ret = ok ? 0 : r;
		armed |= ev->enabled;
	}
	free(text);
	if (armed) {
		int r = dp_fs_rearm(fs);

		ret = ret ? ret : r;
	}
	return ret;
}

static int write_trigger(struct dp_fs *fs, const struct dp_fs_path *p,
			 const char *buf, size_t len)
{
	struct dp_event *ev = path_event(fs, p);
	char *text;
	int ret;

	if (len >= 4096)	/* the kernel takes less than a page */
		return -EINVAL;
	text = strip(buf, len);
	if (!ev || !text) {
		free(text);
		return ev ? -ENOMEM : -ENOENT;
	}
	if (!*text) {
		/* no command (`echo > trigger`, after O_TRUNC removed the
		 * hist triggers): accepted, where the kernel's is EINVAL */
		free(text);
		return 0;
	}
	ret = dp_fs_trigger_write(fs, ev, text);
	free(text);
	return ret;
}

/* snapshot: kstrtoul_from_user(base 10), then 0 frees, 1 swaps, the
 * rest clear */
static int write_snapshot(struct dp_fs *fs, const char *buf, size_t len)
{
	char tmp[32];
	uint64_t v;

	while (len && (buf[len - 1] == '\n'))
		len--;
	if (!len || len >= sizeof(tmp))
		return -EINVAL;
	memcpy(tmp, buf, len);
	tmp[len] = '\0';
	if (dp_kstrtoull(tmp, 10, &v))
		return -EINVAL;
	dp_fs_update_profile(fs);
	return dp_fs_snapshot_write(fs, (unsigned long)v);
}

/* ---- writing ---------------------------------------------------------------- */

static int write_cpumask(struct dp_fs *fs, const char *buf, size_t len)
{
	uint64_t mask[DP_FS_CPUMASK_WORDS];
	int ret = dp_fs_cpumask_parse(buf, len, mask, fs->cpumask_bits);

	if (ret)
		return ret;
	pthread_mutex_lock(&fs->buf_lock);
	memcpy(fs->cpumask, mask, sizeof(mask));
	pthread_mutex_unlock(&fs->buf_lock);
	return 0;
}

/*
 * buffer_subbuf_size_kb, as the kernel's buffer_subbuf_size_write(): the
 * KiB rounded up to a power of two of pages, 1 to 128 of them (0 is
 * EINVAL too).  What it changes here is the largest entry, so how a
 * trace_marker write is cut (marker.c), and header_page.
 */
static int write_subbuf_size(struct dp_fs *fs, uint64_t kb)
{
	uint64_t pages = (kb * 1024 + DP_FS_PAGE_SIZE - 1) / DP_FS_PAGE_SIZE;
	unsigned order = 0;

	if (!pages || pages > (1u << DP_FS_SUBBUF_ORDER_MAX))
		return -EINVAL;
	while ((1ull << order) < pages)
		order++;
	pthread_mutex_lock(&fs->buf_lock);
	fs->subbuf_order = order;
	pthread_mutex_unlock(&fs->buf_lock);
	return 0;
}

static int write_number(struct dp_fs *fs, enum dp_fs_kind kind,
			const char *buf, size_t len)
{
	char tmp[32];
	uint64_t v;

	if (!len || len >= sizeof(tmp))
		return -EINVAL;
	memcpy(tmp, buf, len);
	tmp[len] = '\0';
	if (dp_kstrtoull(tmp, 10, &v))
		return -EINVAL;
	if (kind == F_TRACING_ON) {
		pthread_mutex_lock(&fs->buf_lock);
		fs->tracing_on = v != 0;
		pthread_mutex_unlock(&fs->buf_lock);
		return 0;
	}
	if (kind == F_SUBBUF_SIZE)
		return write_subbuf_size(fs, v);
	if (!v || v > (1ULL << 22))	/* at most 4 GiB of text */
		return -EINVAL;
	dp_fs_buf_set_limit(fs, (size_t)v << 10);
	return 0;
}

/* trace_clock takes the clocks it lists, as the kernel does (blanks
 * around ignored); another name is EINVAL. */
static int write_name(const char *buf, size_t len, const char *name)
{
	while (len && (buf[len - 1] == '\n' || buf[len - 1] == ' ' ||
		       buf[len - 1] == '\t'))
		len--;
	return len == strlen(name) && !memcmp(buf, name, len) ? 0 : -EINVAL;
}

int dp_fs_write_file(struct dp_fs *fs, const struct dp_fs_path *p,
		     const char *buf, size_t len)
{
	int ret;

	switch (p->kind) {
	case F_KPROBE_EVENTS:
	case F_UPROBE_EVENTS:
	case F_DYNAMIC_EVENTS:
	case F_SYNTH_EVENTS:
		ret = write_events(fs, p->kind, buf, len);
		break;
	case F_SET_EVENT:
		ret = write_set_event(fs, buf, len);
		break;
	case F_TRACE:
	case F_ERROR_LOG:
		ret = 0;	/* only opening with O_TRUNC clears them */
		break;
	case F_TRACING_ON:
	case F_BUFFER_SIZE:
	case F_SUBBUF_SIZE:
		ret = write_number(fs, p->kind, buf, len);
		break;
	case F_CURRENT_TRACER:
		ret = dp_fs_tracer_write(fs, buf, len);
		break;
	case F_FTRACE_FILTER:
	case F_FTRACE_NOTRACE:
		ret = dp_fs_funcsel_write(fs, p->kind == F_FTRACE_NOTRACE, buf,
					  len);
		break;
	case F_STACK_ENABLED:
		ret = dp_fs_stack_enable_write(fs, buf, len);
		break;
	case F_STACK_MAX_SIZE:
		ret = dp_fs_stack_max_write(fs, buf, len);
		break;
	case F_STACK_FILTER:
		ret = dp_fs_stack_filter_write(fs, buf, len);
		break;
	case F_CPUMASK:
		ret = write_cpumask(fs, buf, len);
		break;
	case F_TRACE_CLOCK: {
		size_t skip = 0;

		while (skip < len && strchr(" \t\n", buf[skip]) && buf[skip])
			skip++;
		ret = write_name(buf + skip, len - skip, "local");
		break;
	}
	case F_ALL_ENABLE:
	case F_GROUP_ENABLE:
	case F_EV_ENABLE:
		ret = write_enable(fs, p, buf, len);
		break;
	case F_GROUP_FILTER:
	case F_EV_FILTER:
		ret = write_filter(fs, p, buf, len);
		break;
	case F_EV_TRIGGER:
		ret = write_trigger(fs, p, buf, len);
		break;
	case F_SNAPSHOT:
		ret = write_snapshot(fs, buf, len);
		break;
	case F_OPTION:
		ret = dp_fs_option_write(fs, p->event, buf, len);
		break;
	case F_TRACE_OPTIONS:
		ret = dp_fs_trace_options_write(fs, buf, len);
		break;
	case F_GRAPH_FUNCTION:
	case F_GRAPH_NOTRACE:
		ret = dp_fs_graph_write(fs, p->kind == F_GRAPH_NOTRACE, buf,
					len);
		break;
	case F_MAX_GRAPH_DEPTH:
		ret = dp_fs_graph_depth_write(fs, buf, len);
		break;
	case F_TRACE_MARKER:
		ret = dp_fs_marker_write(fs, buf, len);
		return ret;
	case F_TRACE_MARKER_RAW:
		return dp_fs_marker_raw_write(fs, buf, len);
	default:
		ret = -EINVAL;
		break;
	}
	return ret ? ret : (int)len;
}

int dp_fs_truncate_file(struct dp_fs *fs, const struct dp_fs_path *p)
{
	struct dp_event *ev;

	switch (p->kind) {
	case F_KPROBE_EVENTS:
	case F_UPROBE_EVENTS:
	case F_DYNAMIC_EVENTS:
	case F_SYNTH_EVENTS:
		return clear_events(fs, p->kind);
	case F_SET_EVENT:
		return set_enabled(fs, pred_all, NULL, false);
	case F_TRACE:
		/* what the process did before is in the buffer first, as in
		 * the kernel's, whose records are written at the hit: the
		 * clear takes it too, and no line of before comes after */
		dp_fs_update_profile(fs);
		dp_fs_buf_clear(fs);
		return 0;
	case F_ERROR_LOG:
		dp_fs_log_clear(fs);
		return 0;
	case F_FTRACE_FILTER:
	case F_FTRACE_NOTRACE:
		return dp_fs_funcsel_truncate(fs, p->kind == F_FTRACE_NOTRACE);
	case F_GRAPH_FUNCTION:
	case F_GRAPH_NOTRACE:
		return dp_fs_graph_truncate(fs, p->kind == F_GRAPH_NOTRACE);
	case F_STACK_FILTER:
		return dp_fs_stack_filter_truncate(fs);
	case F_EV_TRIGGER:
		/* every trigger of the event goes, as the kernel's unreg_all */
		ev = path_event(fs, p);
		if (!ev)
			return -ENOENT;
		return dp_fs_trigger_truncate(fs, ev);
	default:
		return 0;
	}
}
