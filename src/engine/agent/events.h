/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The agent's probe-event layer, built on the kprobes API as the kernel's
 * trace_kprobe is built on register_kprobe():
 *
 *   events.c   probe events: definitions grouped by address into one
 *              kprobe (entries) and one kretprobe (returns) each, the
 *              handlers that run the fetch programs straight into the
 *              hitting thread's ring (the hit path)
 *   channel.c  the control channel to dprobe (protocol.h): the handshake,
 *              the control thread, and what happens when dprobe goes away
 *   dlwatch.c  objects loaded and unloaded at run time (dlopen, dlclose)
 *   spawn.c    vfork() and posix_spawn() & co: children on the parent's
 *              memory until their exec
 *   exec.c     exec of a program the agent will not be in (static,
 *              set-ID, without the preload): handed to dprobe first
 *   maps.c     the program unmapping the rings: recording stops first
 */
#ifndef DPROBE_AGENT_EVENTS_H
#define DPROBE_AGENT_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ring/ring.h"

/*
 * While @on, probes hit by this thread record nothing: the agent's own
 * work (the control thread, the handshake in the constructor) calls the
 * library functions a user may have probed.
 */
void dp_ev_quiet(bool on);
/* This thread spawns (spawn.c): EV_SPAWN around posix_spawn() & co,
 * EV_VFORK set by vfork() and cleared by the parent's next hit. */
#define EV_SPAWN	1u
#define EV_VFORK	2u
void dp_ev_spawning(unsigned flag, bool on);
/* -f: a spawning child's hits are recorded (as its own), else dropped. */
void dp_ev_set_follow(bool on);
/* Whether this thread is quiet now (the hit path may ask). */
bool dp_ev_quiet_now(void);

/* Map the ring set dprobe sent (@fd stays the caller's to close); -errno. */
int dp_ev_rings(int fd);

/*
 * A probe location (PROBE message).  Only noted here: sites are made and
 * registered by dp_ev_arm().  0 or -errno with @why.
 */
int dp_ev_add(unsigned slot, unsigned id, uint64_t addr, uint64_t foffs,
	      uint32_t flags, const char *line, char *why, size_t whylen);
/* The run-time address of argument @arg's @SYM (SYM message). */
int dp_ev_sym(unsigned slot, unsigned arg, uint64_t addr);
/* The reference counter of @slot's locations (REF message). */
int dp_ev_ref_ctr(unsigned slot, uint64_t addr);

/*
 * Register and enable every site not registered yet; @report is called
 * once per probe location with the outcome (0 and how it is handled, or
 * -errno and why).  Returns the number of locations armed.
 */
typedef void (*dp_ev_report_fn)(void *priv, unsigned slot, int err,
				const char *text);
int dp_ev_arm(dp_ev_report_fn report, void *priv);
/* Switch the probes of @slot on or off (SLOT); how many there are. */
int dp_ev_switch(unsigned slot, bool on);
/* What slot @slot's site did to the code, as SHOWN's fields (protocol.h)
 * into @buf; 0 or -ENOENT (no such slot, not registered, a tracepoint). */
int dp_ev_show(unsigned slot, char *buf, size_t len);
/* Enable or disable every registered site. */
void dp_ev_enable(bool on);
/*
 * The slots known, in the order they were added: calls @fn for each with
 * the missed hits of its probes (return instances not available).
 */
void dp_ev_for_each_missed(void (*fn)(void *priv, unsigned slot,
				      unsigned long missed), void *priv);
/* Unregister and forget everything, unmap the rings. */
void dp_ev_clear(void);
/* "tsc" or "mono": what record timestamps are. */
const char *dp_ev_clock_name(void);
/* A fork child stops recording, puts its bytes back and takes its
 * probes off the tracepoints (atfork). */
void dp_ev_forget_in_child(void);
/* A fork child that is followed (-f) keeps its probes but stops writing
 * into its parent's rings, until dprobe sends it its own (atfork). */
void dp_ev_follow_in_child(void);
/*
 * The probe locations in [@start, @end) go (their object is unloaded,
 * or is being): unregistered, their bytes put back where they still are
 * ours.  Returns how many locations went.
 */
int dp_ev_drop(uint64_t start, uint64_t end);

/* maps.c: whether [@addr, @addr + @len) meets the rings' mapping; the
 * program is about to take it: recording stops (events.c). */
bool dp_ev_rings_meet(uintptr_t addr, size_t len);

/* AGGMEM: map the session's hist tables (a fork child keeps its
 * parent's); 0 or -errno.  The caller closes @fd. */
int dp_ev_agg_mem(int fd);
struct dp_agg_spec;
/* AGG: a table for the DP_AGENT_F_AGG probe in @slot, before it is
 * armed; 0, or -errno with @why. */
int dp_ev_agg(unsigned slot, const struct dp_agg_spec *spec, char *why,
	      size_t whylen);
void dp_ev_rings_taken(void);

/* dlwatch.c: the loader's map changes (see there). */
int dp_dlwatch_prepare(void);
int dp_dlwatch_start(void);
/* The eventfd the control thread polls, or -1; a poke on it. */
int dp_dlwatch_fd(void);
void dp_dlwatch_wake(void);
/* After it polled readable: whether to say MAPS (objects came or went). */
bool dp_dlwatch_changed(void);
/* SYNCED came: whether to say MAPS again (they changed meanwhile). */
bool dp_dlwatch_synced(void);
/* This thread (the control thread) never waits for dprobe in the loader. */
void dp_dlwatch_never_wait(void);
/* The eventfd's number: the caller closes it (in every table it is in). */
int dp_dlwatch_stop(void);
void dp_dlwatch_fork_child(void);

/*
 * channel.c, for exec.c: with -f, process @pid (this one or a vfork
 * child) is about to exec @path, which will have no agent (@why: a
 * word, protocol.h).  dprobe is asked to take it over (the ptrace
 * engine); returns a ticket > 0 once it did, 0 if it did not (or there
 * is no session to ask).  dp_chan_exec_failed(): the exec returned.
 */
bool dp_chan_exec_follows(void);
unsigned dp_chan_exec_ask(int pid, const char *why, const char *path);
void dp_chan_exec_failed(unsigned ticket);
/* The program took the rings' memory (maps.c): dprobe is told. */
void dp_chan_rings_taken(void);
/* Child @pid already runs @path (posix_spawn: glibc's child exec'd it):
 * dprobe takes it from now on, where it can.  Never waits. */
void dp_chan_exec_late(int pid, const char *why, const char *path);
/*
 * @fn(@path), run by the control thread in its own descriptor table
 * when this process has one (a file it opens takes no number in the
 * program's), else here.
 */
const char *dp_chan_look(const char *path, const char *(*fn)(const char *));
/* exec.c, for spawn.c: child @pid was started on @file (PATH searched
 * if @search), with environment @envp (NULL: ours). */
void dp_exec_spawned(int pid, const char *file, bool search,
		     char *const envp[]);

#endif
