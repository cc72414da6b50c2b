/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Private to src/fs/: the state behind the mounted files.
 *
 * Threads and locks:
 *   - FUSE worker threads run the file operations.  Everything a control
 *     file changes (the registry, enable flags, filters, triggers, the
 *     error log) is under fs->lock, held for the whole operation.
 *   - The session manager thread owns the session child (see session.c):
 *     it forks it, stops it and reaps it, on request of an operation that
 *     holds fs->lock and waits, so the registry it copies cannot change.
 *   - The reader thread moves what the child sends into the trace buffer
 *     and the profile table, under fs->buf_lock only.
 *   - The monitor thread notices the target's exit.
 */
#ifndef DPROBE_FS_INTERNAL_H
#define DPROBE_FS_INTERNAL_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "event/event.h"
#include "event/fcmd.h"
#include "event/sink.h"
#include "fs/fs.h"
#include "output/renderer.h"
#include "output/tracer.h"
#include "sym/debugdef.h"
#include "sym/resolve.h"
#include "sym/tracer.h"

struct dp_proc;

#define DP_FS_LOG_MAX		8	/* error_log entries, as the kernel */
#define DP_FS_DEFAULT_KB	1408	/* buffer_size_kb of a fresh tracefs */
#define DP_FS_CPUMASK_WORDS	16	/* tracing_cpumask: 1024 CPUs at most */
/* The kernel's ring buffer sub-buffers: 4 KiB pages, 1 to 128 of them
 * (buffer_subbuf_size_kb); a sub-buffer's header takes 16 bytes, and
 * the largest entry is what is left less two words. */
#define DP_FS_PAGE_SIZE		4096
#define DP_FS_SUBBUF_ORDER_MAX	7
#define DP_FS_SUBBUF_HDR	16
#define dp_fs_subbuf_data(fs)	((DP_FS_PAGE_SIZE << (fs)->subbuf_order) - \
				 DP_FS_SUBBUF_HDR)
#define dp_fs_max_entry(fs)	(dp_fs_subbuf_data(fs) - 8)

/* The general trace options the mount honours (options.c), as bits of
 * fs->trace_flags, and the kernel's defaults of them. */
enum {
	DP_FS_OPT_PRINT_PARENT = 1u << 0,
	DP_FS_OPT_OVERWRITE = 1u << 1,
	DP_FS_OPT_MARKERS = 1u << 2,
	DP_FS_OPT_STACKTRACE = 1u << 3,
};
#define DP_FS_OPT_DEFAULT (DP_FS_OPT_PRINT_PARENT | DP_FS_OPT_OVERWRITE | \
			   DP_FS_OPT_MARKERS)

/* One rendered `trace` line in the buffer. */
struct dp_fs_line {
	struct dp_fs_line *next;
	size_t len;
	int cpu;
	char text[];
};

/* Hit/miss counts of one probe, as the session child last reported. */
struct dp_fs_count {
	unsigned id;		/* event id */
	unsigned idx;		/* probe index in the event */
	uint64_t nhit, nmiss;
	unsigned serial;	/* the event's serial: an id is reused, not it */
};

/* One of the two trace buffers: the main one and the snapshot. */
struct dp_fs_ring {
	struct dp_fs_line *head, *tail;
	size_t bytes, entries;
	unsigned long written;
};

struct dp_fs_trig;
struct dp_fs_fsite;

enum { DP_LANE_PROC, DP_LANE_KERNEL };

/* One session child and what reads it (session.c). */
struct dp_fs_lane {
	struct dp_fs *fs;
	int which;			/* DP_LANE_* */
	pid_t child;			/* 0 if none */
	int child_fd;			/* its pipe's read end */
	int cmd_fd;			/* the child's command pipe, write end */
	/* the engine the child runs (it says which when it is ready) */
	const struct dp_engine_ops *engine;
	/* under buf_lock: the child's answer to the last command, and its
	 * profile frames */
	unsigned long ack_gen;
	int ack_result;
	unsigned long profile_gen;
	/* the child's answer to the last `show` read (session.c) */
	unsigned long show_gen;
	int show_result;
	char *show_text;
	size_t show_len;
	pthread_t reader;
	bool reader_live;		/* started, not joined yet */
	bool reader_running;		/* not at the pipe's end yet */
	char *armed;			/* kernel lane: the events it arms */
};

struct dp_fs {
	const struct dp_fs_opts *o;
	int ncpus;

	/* ---- under lock ---- */
	pthread_mutex_t lock;
	struct dp_registry reg;
	struct dp_resolver res;
	struct dp_debugdef *dbg;	/* definitions by name, opened when used */
	/* the program the target runs now (res.default_binary): an exec
	 * changes it (dp_fs_follow_exec()) */
	char exe[PATH_MAX];
	char *log[DP_FS_LOG_MAX];	/* error_log entries, oldest first */
	unsigned nlog;
	unsigned *ever_enabled;		/* ids enabled since their creation */
	size_t never;

	/* ---- under buf_lock ---- */
	pthread_mutex_t buf_lock;
	pthread_cond_t buf_cond;	/* a line arrived, a profile arrived */
	/* ring[live] is the main buffer, ring[!live] the snapshot's
	 * (allocated or not: snap_alloc; snap_refs: snapshot triggers) */
	struct dp_fs_ring ring[2];
	int live;
	bool snap_alloc;
	unsigned snap_refs;
	size_t limit;			/* buffer_size_kb * 1024 */
	uint64_t cpumask[DP_FS_CPUMASK_WORDS];	/* tracing_cpumask */
	unsigned cpumask_bits;		/* the CPUs it has: nr_cpu_ids */
	unsigned subbuf_order;		/* buffer_subbuf_size_kb: 4 KiB << it */
	bool tracing_on;
	unsigned trace_flags;		/* DP_FS_OPT_*: trace_options */
	struct dp_fs_count *counts;
	size_t ncounts;
	/* the events in the kernel's soft mode, with their triggers
	 * (trigger.c): the reader threads run them; the served process's
	 * symbols for the lines rendered there */
	struct dp_fs_trig *trigs;
	size_t ntrigs;
	struct dp_proc *trig_proc;
	bool trig_proc_failed;
	struct dp_symbolizer trig_sym;
	/* events/ftrace/print, written by trace_marker (marker.c) */
	struct dp_event *marker;
	/* hist triggers (hist.c), and the served process's symbols for
	 * their .sym keys */
	struct dp_fs_hist *hists;
	size_t nhists;
	struct dp_fs_hctx *hctx;	/* hist.c: variables, synthetic events */
	struct dp_proc *hist_proc;
	bool hist_proc_failed;
	struct dp_symbolizer hist_sym;
	/* current_tracer (tracer.c): the function tracer (NULL: nop), its
	 * functions' rules, and, under buf_lock, its renderer writing
	 * into tr_text */
	const struct dp_tracer *tracer;
	struct dp_funcsel ftrace_filter, ftrace_notrace;
	size_t tr_nfuncs;		/* the functions it is on */
	/* set_graph_function, set_graph_notrace (graph.c): their rules;
	 * under buf_lock, the names they select, escaped as globs, which
	 * tr_opts points to */
	struct dp_funcsel graph_function, graph_notrace;
	char **graph_names[2];
	size_t ngraph_names[2];
	struct dp_renderer tr_render;
	/* the renderer's options, read by it at each record: changed
	 * under buf_lock */
	struct dp_tracer_opts tr_opts;
	/* its events, for the reader threads (which must not look in the
	 * registry: it changes under fs->lock alone); set and cleared
	 * under buf_lock too */
	const struct dp_event *tr_events[4];
	unsigned ntr_events;
	FILE *tr_mem;
	char *tr_text;
	size_t tr_size;
	/* the stack tracer (stack.c): on, its functions' rules, its event
	 * (NULL: off); under buf_lock for the reader threads, the event's
	 * id and the deepest stack */
	bool stack_on;
	struct dp_funcsel stack_filter;
	struct dp_event *stack_ev;
	unsigned stack_id;
	struct dp_stack_max stack_max;
	/* set_ftrace_filter's function commands (fcmds.c), under
	 * buf_lock too, each on a site: a hidden event with one probe on
	 * the function's entry, named by its id */
	struct dp_fcmd_set fcmds;
	struct dp_fs_fsite *fsites;
	size_t nfsites;
	unsigned fsite_serial;

	/* ---- session (session.c) ---- */
	pthread_mutex_t mgr_lock;
	pthread_cond_t mgr_cond;
	unsigned long mgr_req, mgr_done;
	int mgr_result;
	bool mgr_quit;
	pthread_t mgr_thread, monitor_thread;
	/* the session children: one for the events placed in processes,
	 * one for the kernel's tracepoints (events/syscalls/) */
	struct dp_fs_lane lanes[2];
	/* the lane that arms events/syscalls/: the kernel's (DP_LANE_KERNEL)
	 * or the ptrace engine's syscall stops (DP_LANE_PROC) */
	int sys_lane;

	/* ---- instances (instance.c) ---- */
	/* an instance: the top level it is in (NULL at the top level), its
	 * name, its open files (under the top level's lock), the next one */
	struct dp_fs *top;
	char *inst_name;
	unsigned inst_refs;
	struct dp_fs *inst_next;
	/* the top level's instances: changed under lock and inst_lock, read
	 * by the reader threads under inst_lock */
	struct dp_fs *insts;
	pthread_mutex_t inst_lock;
	/* an instance: its events enabled outside soft mode (buf_lock) */
	struct dp_fs_plain *plain;
	size_t nplain;

	atomic_bool target_gone;
	atomic_bool exiting;
	int target_status;
	struct fuse *fuse;
};

/* state.c: an empty state for @o (no threads yet), and its end */
void dp_fs_init(struct dp_fs *fs, const struct dp_fs_opts *o);
void dp_fs_fini(struct dp_fs *fs);

/* buffer.c: the trace buffers and the error log */
void dp_fs_buf_add(struct dp_fs *fs, unsigned id, int cpu, const char *text,
		   size_t len);
/* A line of a hit on @cpu (-1: not known) into ring[@which] (buf_lock
 * held), tracing on or not: not if tracing_cpumask leaves @cpu out. */
void dp_fs_ring_add_locked(struct dp_fs *fs, int which, int cpu,
			   const char *text, size_t len);
void dp_fs_buf_clear(struct dp_fs *fs);		/* the main buffer */
void dp_fs_buf_fini(struct dp_fs *fs);		/* both */
void dp_fs_buf_set_limit(struct dp_fs *fs, size_t bytes);
/* `trace`: header and every line, into @out (non-consuming). */
void dp_fs_buf_render(struct dp_fs *fs, FILE *out);
/*
 * `trace_pipe`: take whole lines (at least one, unless none fits) into
 * @dst of @size bytes, waiting for one while the buffer is empty.
 * Returns the bytes taken, or -EINTR when @stop says so.
 */
ssize_t dp_fs_buf_consume(struct dp_fs *fs, char *dst, size_t size,
			  bool (*stop)(void *priv), void *priv);
void dp_fs_log_add(struct dp_fs *fs, char *entry);	/* takes @entry */
void dp_fs_log_clear(struct dp_fs *fs);
/* The `snapshot` file, and a write of @v to it (0 frees, 1 swaps, other
 * values clear the snapshot). */
void dp_fs_snapshot_render(struct dp_fs *fs, FILE *out);
int dp_fs_snapshot_write(struct dp_fs *fs, unsigned long v);
/*
 * Take a snapshot now (buf_lock held), as the kernel's
 * tracing_snapshot_instance(): the main buffer and the snapshot's change
 * places; 0.  Without a snapshot buffer (never allocated, or freed by
 * `echo 0 > snapshot`) the kernel's two "*** SNAPSHOT NOT ALLOCATED ***"
 * lines go into the trace, tracing stops, and -ENOENT.  For the hist
 * onmax()/onchange() snapshot() action: its trigger should hold the
 * buffer with dp_fs_snapshot_arm_locked() while it exists.
 */
int dp_fs_snapshot_take(struct dp_fs *fs);
void dp_fs_snapshot_arm_locked(struct dp_fs *fs);
void dp_fs_snapshot_disarm_locked(struct dp_fs *fs);
/* A `<stack trace>` entry with @n frames (buf_lock held). */
/* The buffer's lines of @cpu (all: -1) printed to @out and consumed,
 * as the kernel's ftrace_dump() (buf_lock held). */
void dp_fs_buf_dump_locked(struct dp_fs *fs, int cpu, FILE *out);
void dp_fs_buf_stack_locked(struct dp_fs *fs, const struct dp_rec_meta *meta,
			    const uint64_t *ips, size_t n,
			    const struct dp_symbolizer *sym);
/* Metadata for an entry made now by @comm (this process's pid). */
void dp_fs_now_meta(struct dp_rec_meta *meta, const char *comm);

/* cpumask.c: tracing_cpumask */
/* The CPUs the kernel's cpumasks have (nr_cpu_ids), 1024 at most. */
unsigned dp_fs_possible_cpus(void);
/* Every one of @nbits CPUs. */
void dp_fs_cpumask_all(uint64_t *mask, unsigned nbits);
/* A write to tracing_cpumask: 0, -EINVAL or -EOVERFLOW (bitmap_parse()). */
int dp_fs_cpumask_parse(const char *buf, size_t len, uint64_t *mask,
			unsigned nbits);
/* The mask as the kernel's "%*pb\n". */
void dp_fs_cpumask_print(FILE *out, const uint64_t *mask, unsigned nbits);
/* Does @fs record the lines of @cpu (buf_lock held)?  A negative @cpu
 * (not known) is recorded. */
bool dp_fs_cpu_traced(const struct dp_fs *fs, int cpu);

/* The served process's symbols, opened when first needed (buf_lock
 * held): for the lines the reader threads make. */
const struct dp_symbolizer *dp_fs_symbolizer(struct dp_fs *fs);

/* tracer.c: current_tracer, set_ftrace_filter, set_ftrace_notrace */
/* A write to current_tracer (fs->lock held): 0 or -errno. */
int dp_fs_tracer_write(struct dp_fs *fs, const char *buf, size_t len);
void dp_fs_tracer_print(const struct dp_fs *fs, FILE *out);
/* A write to set_ftrace_filter (@notrace: set_ftrace_notrace), a `>`
 * of it, and its contents (fs->lock held). */
int dp_fs_funcsel_write(struct dp_fs *fs, bool notrace, const char *buf,
			size_t len);
int dp_fs_funcsel_truncate(struct dp_fs *fs, bool notrace);
void dp_fs_funcsel_print(struct dp_fs *fs, bool notrace, FILE *out);
/* @ev is one of the tracer's events. */
bool dp_fs_tracer_event(const struct dp_fs *fs, const struct dp_event *ev);
/* Its events armed raw, for the session child (fs->lock held). */
void dp_fs_tracer_mark(struct dp_fs *fs, struct dp_event *ev);
/* A record of event @id (a reader thread): the tracer's lines of it. */
void dp_fs_tracer_record(struct dp_fs *fs, unsigned id, const void *rec,
			 size_t len, const struct dp_rec_meta *meta);
void dp_fs_tracer_fini(struct dp_fs *fs);
/* function_graph is the current tracer. */
bool dp_fs_fgraph_current(const struct dp_fs *fs);
/* set_graph_function or set_graph_notrace changed (fs->lock held): the
 * tracer moved if the functions it is on are others now.  0 or -errno. */
int dp_fs_tracer_graph_changed(struct dp_fs *fs);

/* Does any rule of @s put functions in? */
static inline bool dp_fs_sel_some(const struct dp_funcsel *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (!s->v[i].neg)
			return true;
	return false;
}

/* graph.c: set_graph_function, set_graph_notrace (@notrace),
 * max_graph_depth (fs->lock held) */
int dp_fs_graph_write(struct dp_fs *fs, bool notrace, const char *buf,
		      size_t len);
int dp_fs_graph_truncate(struct dp_fs *fs, bool notrace);
void dp_fs_graph_print(struct dp_fs *fs, bool notrace, FILE *out);
/* The renderer's globs as the two files' rules select now. */
void dp_fs_graph_sync(struct dp_fs *fs);
void dp_fs_graph_depth_print(struct dp_fs *fs, FILE *out);
int dp_fs_graph_depth_write(struct dp_fs *fs, const char *buf, size_t len);
void dp_fs_graph_fini(struct dp_fs *fs);

/* options.c: trace_options and options/NAME (fs->lock held) */
bool dp_fs_option_exists(const struct dp_fs *fs, const char *name);
void dp_fs_options_list(struct dp_fs *fs,
			void (*fill)(void *priv, const char *name, bool dir),
			void *priv);
void dp_fs_option_print(struct dp_fs *fs, const char *name, FILE *out);
int dp_fs_option_write(struct dp_fs *fs, const char *name, const char *buf,
		       size_t len);
void dp_fs_trace_options_print(struct dp_fs *fs, FILE *out);
int dp_fs_trace_options_write(struct dp_fs *fs, const char *buf, size_t len);
/* The functions @filter selects and @notrace does not, in the served
 * program and its libraries (*@program: the program's path, the
 * caller's to free); 0 or -errno. */
int dp_fs_select_funcs(struct dp_fs *fs, const struct dp_funcsel *filter,
		       const struct dp_funcsel *notrace, struct dp_funclist *l,
		       char **program);
void dp_fs_funclist_free(struct dp_funclist *l);
/* Whether rule @r selects some function (a rule that selects nothing is
 * refused, as the kernel refuses a function it does not have). */
bool dp_fs_rule_matches(struct dp_fs *fs, const struct dp_funcrule *r);
/* Rules @from.. of @s each name a function (a `!` rule need not):
 * 0, or -EINVAL as the kernel's set_ftrace_filter. */
int dp_fs_rules_check(struct dp_fs *fs, const struct dp_funcsel *s,
		      size_t from);
/* A selection as set_ftrace_filter (set_ftrace_notrace: @notrace) shows
 * it: the functions, or the line saying all are. */
void dp_fs_sel_print(struct dp_fs *fs, const struct dp_funcsel *s,
		     bool notrace, FILE *out);

/* stack.c: the stack tracer (stack_tracer_enabled, stack_max_size,
 * stack_trace, stack_trace_filter; fs->lock held unless said) */
int dp_fs_stack_enable_write(struct dp_fs *fs, const char *buf, size_t len);
int dp_fs_stack_max_write(struct dp_fs *fs, const char *buf, size_t len);
int dp_fs_stack_filter_write(struct dp_fs *fs, const char *buf, size_t len);
int dp_fs_stack_filter_truncate(struct dp_fs *fs);
/* The read side of the four files, by kind. */
void dp_fs_stack_print(struct dp_fs *fs, int kind, FILE *out);
/* Its event armed raw, for the session child. */
void dp_fs_stack_mark(struct dp_fs *fs, struct dp_event *ev);
/* A record of event @id (a reader thread): a new deepest stack? */
void dp_fs_stack_record(struct dp_fs *fs, unsigned id,
			const struct dp_rec_meta *meta);
void dp_fs_stack_fini(struct dp_fs *fs);

/* fcmds.c: set_ftrace_filter's function commands (event/fcmd.h) */
/* The command words of @text (set_ftrace_filter's when !@notrace) run
 * and blanked out, for the rules left (fs->lock held): 0 or -errno. */
int dp_fs_fcmd_take(struct dp_fs *fs, bool notrace, char *text);
/* The listing after the functions. */
void dp_fs_fcmd_print(struct dp_fs *fs, FILE *out);
/* A site's event is armed raw, with the user stack for stacktrace. */
void dp_fs_fcmd_mark(struct dp_fs *fs, struct dp_event *ev);
/* A record of event @id (a reader thread): the commands of its site. */
void dp_fs_fcmd_record(struct dp_fs *fs, unsigned id, const void *rec,
		       size_t len, const struct dp_rec_meta *meta);
/* Whether an enable_event or disable_event command names @ev (buf_lock
 * held). */
bool dp_fs_fcmd_targets(const struct dp_fs *fs, const struct dp_event *ev);
/* Whether @fs (an instance) has a function command. */
bool dp_fs_fcmd_any(const struct dp_fs *fs);
void dp_fs_fcmd_fini(struct dp_fs *fs);

/* trigger.c: trigger commands other than hist (event/trigger.h), the
 * events' soft mode, and the records of the events in it */
/* A write to @ev's trigger file (fs->lock held): 0 or -errno. */
int dp_fs_trigger_write(struct dp_fs *fs, struct dp_event *ev,
			const char *text);
/* Opening it with O_TRUNC: the hist and enable_hist/disable_hist
 * triggers go, as the kernel's unreg_all. */
int dp_fs_trigger_truncate(struct dp_fs *fs, struct dp_event *ev);
/* The trigger file (the list of commands when there is no trigger). */
void dp_fs_trigger_print(struct dp_fs *fs, const struct dp_event *ev,
			 FILE *out);
/* The enable file ("0*", "1*" in soft mode). */
void dp_fs_trigger_enable_print(struct dp_fs *fs, const struct dp_event *ev,
				FILE *out);
/* @ev was written @on (fs->lock held): in soft mode, its soft bit. */
void dp_fs_trigger_enabled(struct dp_fs *fs, struct dp_event *ev, bool on);
/* @ev's filter changed (fs->lock held). */
void dp_fs_trigger_filter_changed(struct dp_fs *fs, struct dp_event *ev);
/* Set ev->soft and ev->triggered for the session child: an event in
 * soft mode is armed and sends its records raw (fs->lock held). */
void dp_fs_trigger_mark(struct dp_fs *fs, struct dp_event *ev);
/* Whether a hist trigger on event @id has a common_stacktrace key. */
bool dp_fs_hist_stacks(struct dp_fs *fs, unsigned id);
/* A record of event @id in soft mode (a reader thread): the triggers,
 * then the line, as the kernel orders them. */
void dp_fs_trigger_record(struct dp_fs *fs, unsigned id, const void *rec,
			  size_t len, const struct dp_rec_meta *meta);
/* The marker's record (marker.c; fs->lock held): 0 or -errno. */
int dp_fs_trigger_marker(struct dp_fs *fs, const void *rec, size_t len,
			 const struct dp_rec_meta *meta, const char *line,
			 size_t linelen);
void dp_fs_trigger_fini(struct dp_fs *fs);
/* @ev in soft mode or out of it as what names it now says (fs->lock
 * held): true if that changed (the child is to be re-armed). */
bool dp_fs_trigger_sync(struct dp_fs *fs, struct dp_event *ev);
/* What a trigger runs on, for a record of @ev (buf_lock held). */
struct dp_fs_run {
	struct dp_fs *fs;
	const struct dp_event *ev;
	const uint8_t *rec;
	size_t len;
	const struct dp_rec_meta *meta;
};
extern const struct dp_trigger_ops dp_fs_trigger_ops;
/* @ev's trace line into the main buffer (buf_lock held). */
void dp_fs_trigger_line_locked(struct dp_fs *fs, const struct dp_event *ev,
			       const void *rec, size_t len,
			       const struct dp_rec_meta *meta);

/* marker.c: trace_marker and events/ftrace/print */
/* The process writing, in a FUSE worker thread (0: this process). */
extern __thread pid_t dp_fs_writer;
int dp_fs_marker_init(struct dp_fs *fs);
void dp_fs_marker_fini(struct dp_fs *fs);
/* A write to trace_marker (fs->lock held): bytes taken or -errno. */
int dp_fs_marker_write(struct dp_fs *fs, const char *buf, size_t len);
/* A write to trace_marker_raw: bytes taken or -errno. */
int dp_fs_marker_raw_write(struct dp_fs *fs, const char *buf, size_t len);
/* events/ftrace/print's format file */
void dp_fs_marker_format(FILE *out);

/* hist.c: hist triggers (buf_lock taken inside) */
struct dp_fs_hist;
/* A write of "hist:..." or "!hist:..." to @ev's trigger file: 0, or
 * -errno with an error_log entry where the kernel makes one. */
int dp_fs_hist_write(struct dp_fs *fs, const struct dp_event *ev,
		     const char *text);
bool dp_fs_hist_on(struct dp_fs *fs, unsigned id);
void dp_fs_hist_remove_event(struct dp_fs *fs, unsigned id);
void dp_fs_hist_print_triggers(struct dp_fs *fs, unsigned id, FILE *out);
/* The event's `hist` file. */
void dp_fs_hist_read(struct dp_fs *fs, unsigned id, FILE *out);
/* A record of event @id (reader thread). */
void dp_fs_hist_add(struct dp_fs *fs, unsigned id, const void *rec,
		    size_t len, const struct dp_rec_meta *meta);
void dp_fs_hist_fini(struct dp_fs *fs);
/* Pause or continue every hist trigger of event @id (buf_lock held):
 * what enable_hist and disable_hist do. */
void dp_fs_hist_pause_locked(struct dp_fs *fs, unsigned id, bool paused);
/* The synthetic events' enable and filter, as the registry has them now,
 * for the records the triggers' actions make (fs->lock held). */
void dp_fs_hist_sync(struct dp_fs *fs);
/* Event @id is in soft mode (a trigger is on it, or an enable_event &
 * co names it): armed when not enabled, busy (trigger.c). */
bool dp_fs_triggered(struct dp_fs *fs, unsigned id);

/* kevents.c: the syscall events, the kernel's or made without it, into
 * the registry, and fs->sys_lane (at the start, before any thread) */
void dp_fs_kernel_events(struct dp_fs *fs);

/* session.c: arming the enabled events in a session child */
int dp_fs_session_start(struct dp_fs *fs);
void dp_fs_session_end(struct dp_fs *fs);
/* Stop the child (if any) and start one for the enabled events; called
 * with fs->lock held.  0, or -errno with the reason on stderr. */
int dp_fs_rearm(struct dp_fs *fs);
/* Fresh counts into the registry's probes (fs->lock held). */
void dp_fs_update_profile(struct dp_fs *fs);
/* events/GROUP/EVENT/show: what the event's probes did to the code of
 * the traced process, as `dprobe show` prints it, asked of the session
 * child; "not armed" while the event is not enabled. */
void dp_fs_show_read(struct dp_fs *fs, const struct dp_event *ev, FILE *out);

/* The target's program as it is now: after an exec, definitions are
 * checked against the new one (fs->lock held). */
void dp_fs_follow_exec(struct dp_fs *fs);

/* instance.c: instances/ (an instance is a struct dp_fs with ->top) */
struct dp_fs_path;
/* Is @path in instances/ (the top level's)?  Then dp_fs_lookup() asks: */
bool dp_fs_inst_path(const struct dp_fs *fs, const char *path);
int dp_fs_inst_lookup(struct dp_fs *fs, const char *path,
		      struct dp_fs_path *p);
/* Has an instance the top level's root file @name? */
bool dp_fs_inst_root_file(const struct dp_fs *fs, const char *name);
void dp_fs_inst_list(struct dp_fs *fs,
		     void (*fill)(void *priv, const char *name, bool dir),
		     void *priv);
/* mkdir(2) and rmdir(2) at @path (fs->lock held): 0 or -errno. */
int dp_fs_inst_mkdir(struct dp_fs *fs, const char *path);
int dp_fs_inst_rmdir(struct dp_fs *fs, const char *path);
void dp_fs_inst_fini(struct dp_fs *fs);
/* The instances' events as the top level's are now (fs->lock held). */
void dp_fs_inst_sync(struct dp_fs *fs);
/* Is event @id enabled or in soft mode in an instance (fs->lock held)? */
bool dp_fs_inst_busy(struct dp_fs *fs, unsigned id);
/* The top level's @ev armed, raw, for the instances that want it. */
void dp_fs_inst_mark(struct dp_fs *fs, struct dp_event *ev);
/* dp_fs_rearm() of an instance. */
int dp_fs_inst_rearm(struct dp_fs *inst);
/* A record of event @id for every instance (a reader thread). */
void dp_fs_inst_record(struct dp_fs *fs, unsigned id, const void *rec,
		       size_t len, const struct dp_rec_meta *meta);

/* control.c: file contents and writes */
enum dp_fs_kind {
	F_NONE,
	F_ROOT_DIR, F_EVENTS_DIR, F_GROUP_DIR, F_EVENT_DIR,
	F_KPROBE_EVENTS, F_UPROBE_EVENTS, F_DYNAMIC_EVENTS, F_SYNTH_EVENTS,
	F_SET_EVENT,
	F_TRACE, F_TRACE_PIPE, F_KPROBE_PROFILE, F_UPROBE_PROFILE,
	F_TRACING_ON, F_BUFFER_SIZE, F_ERROR_LOG, F_AVAILABLE_EVENTS,
	F_AVAILABLE_FUNCS, F_README, F_CURRENT_TRACER, F_AVAILABLE_TRACERS,
	F_ALL_ENABLE,				/* events/enable */
	F_GROUP_ENABLE, F_GROUP_FILTER,		/* events/GROUP/ */
	F_EV_ENABLE, F_EV_FILTER, F_EV_FORMAT, F_EV_ID, F_EV_TRIGGER,
	F_EV_HIST, F_EV_SHOW,
	F_SNAPSHOT, F_TRACE_MARKER, F_TRACE_MARKER_RAW,
	F_FTRACE_DIR,				/* events/ftrace/ */
	F_OPTIONS_DIR, F_OPTION,		/* options/, options/NAME */
	F_INSTANCES_DIR,			/* instances/ */
	F_TRACE_CLOCK, F_HEADER_PAGE, F_HEADER_EVENT, F_SUBBUF_SIZE,
	F_CPUMASK, F_FTRACE_FILTER, F_FTRACE_NOTRACE,
	F_GRAPH_FUNCTION, F_GRAPH_NOTRACE, F_MAX_GRAPH_DEPTH, F_TRACE_OPTIONS,
	F_STACK_ENABLED, F_STACK_MAX_SIZE, F_STACK_TRACE, F_STACK_FILTER,
};

struct dp_fs_path {
	enum dp_fs_kind kind;
	struct dp_fs *tr;	/* the instance it is in; NULL: the top level */
	char group[DP_MAX_EVENT_NAME_LEN];
	char event[DP_MAX_EVENT_NAME_LEN];	/* or the option's name */
};

/* Parse @path; -ENOENT if nothing is there now (fs->lock held). */
int dp_fs_lookup(struct dp_fs *fs, const char *path, struct dp_fs_path *p);
bool dp_fs_is_dir(enum dp_fs_kind k);
bool dp_fs_is_writable(enum dp_fs_kind k);
/* Contents of a file at open/first read (fs->lock held).  0 or -errno. */
int dp_fs_read_file(struct dp_fs *fs, const struct dp_fs_path *p, FILE *out);
/* One write(2) of @len bytes; returns @len or -errno (fs->lock held). */
int dp_fs_write_file(struct dp_fs *fs, const struct dp_fs_path *p,
		     const char *buf, size_t len);
/* Opening with O_TRUNC (shell '>'): 0 or -errno (fs->lock held). */
int dp_fs_truncate_file(struct dp_fs *fs, const struct dp_fs_path *p);
/* The names under a directory, through @fill (fs->lock held). */
void dp_fs_list_dir(struct dp_fs *fs, const struct dp_fs_path *p,
		    void (*fill)(void *priv, const char *name, bool dir),
		    void *priv);
/* The state a path's file is in: its instance's, or the top level's. */
static inline struct dp_fs *dp_fs_of(struct dp_fs *fs,
				     const struct dp_fs_path *p)
{
	return p->tr ? p->tr : fs;
}
/* available_filter_functions of the target (no lock needed). */
void dp_fs_list_functions(struct dp_fs *fs, FILE *out);
/* The functions @sel selects, listed as available_filter_functions
 * lists them; how many lines. */
size_t dp_fs_list_selected(struct dp_fs *fs, const struct dp_funcsel *sel,
			   FILE *out);
/* How many names @sel selects (0 when the process is gone). */
size_t dp_fs_funcs_count(struct dp_fs *fs, const struct dp_funcsel *sel);
/* The target's files, the program first (*@p to close, *@paths to
 * free): 0 or -errno. */
int dp_fs_target_paths(struct dp_fs *fs, struct dp_proc **p,
		       const char ***paths, size_t *n);

#endif
