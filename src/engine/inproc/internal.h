/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The in-process engine's internals, shared by
 *   session.c  launching or injecting, the handshake, detaching
 *   channel.c  the control channel's messages, the agent's miss counts
 *   reader.c   reading the rings: clock, thread names, records to output
 */
#ifndef DPROBE_INPROC_INTERNAL_H
#define DPROBE_INPROC_INTERNAL_H

#include <signal.h>

#include "engine/inproc/inproc.h"
#include "ring/ring.h"
#include "sym/proc.h"
#include "sym/unwind.h"

/* One probe location the agent knows, by slot number. */
struct slot {
	struct dp_probe *pr;
	uint64_t addr;
	char *how;		/* the agent's answer to PROBE */
	bool counter;		/* hits are counted in the rings' counters */
	bool stack;		/* its records end with a stack (protocol.h) */
	unsigned snap;		/* ... a snapshot of this many stack bytes at
				 * most (DP_AGENT_F_DWARF), to unwind */
	bool depths;		/* ... frames and their depths (the stack
				 * tracer, DP_AGENT_F_STACKMAX) */
	bool dropped;		/* its object went (DROP): no more hits */
	uint64_t counted;	/* of them, already added to the probe */
	uint64_t missed;	/* its misses, as the agent last said */
	uint64_t missed_new;	/* its misses in the STAT being read */
};

/* Messages that came while dprobe waited to send, read first. */
struct inq {
	char **msg;
	unsigned head, n, cap;
};

#define INPROC_REPLY_TIMEOUT_MS	30000

/*
 * Record timestamps in TSC ticks become CLOCK_MONOTONIC ns through a
 * continuous piecewise-linear map: each knot starts where the previous
 * segment is at that tick, with a slope that brings it back to the clock
 * over the next second, so converted times never go backwards.
 */
#define CLK_KNOTS 64
struct clk_knot {
	uint64_t tsc, ns;
	double ns_per_tick;
	uint64_t mult;		/* ns_per_tick in 32.32 fixed point: what
				 * each record's stamp is multiplied by */
};

struct clk {
	bool tsc;		/* else the stamps are ns already */
	uint64_t tsc0, ns0;	/* first measurement: long-baseline rate */
	struct clk_knot k[CLK_KNOTS];
	unsigned nk;		/* knots, the newest at (nk - 1) % CLK_KNOTS */
};

/* A thread's name, read from /proc at most once per pass. */
struct comm_ent {
	int tid;
	uint64_t read_ns;	/* when comm was read (CLOCK_MONOTONIC) */
	char comm[16];
};

/*
 * One process image with the agent: a process dprobe launched or
 * attached to, a fork child of one (-f), or the new image of an exec.
 * Each has its own channel, rings and probe slots; the tree (struct
 * dp_inproc) reads them all.
 */
struct ip_proc {
	struct dp_inproc *tree;
	struct ip_proc *next;		/* in the order they came */
	pid_t pid;
	pid_t parent;			/* a fork child: its parent's pid */
	bool refused;		/* the agent refused a probe (ERR to ARM) */
	bool closed;		/* the channel ended: the image is gone */
	bool maps_req;		/* the agent said MAPS: objects came or went */
	bool done;		/* closed, and its rings read to the end */
	int sock;		/* the control channel (a socket pair's end) */
	struct inq inq;
	struct dp_ring_set rings;
	bool have_rings;
	struct dp_ring_reader *rd;
	struct dp_ring_entry head;	/* read ahead, for the merge */
	bool have_head;
	struct dp_proc *proc;
	bool proc_borrowed;	/* a fork child's: its parent's (same objects) */
	/* object sets before a MAPS, newest first: records read after a
	 * dlclose() still name their symbols */
	struct old_objs *old_objs;
	struct dp_symbolizer symbolizer;
	struct dp_unwinder *unw;	/* over @proc, made at the first
					 * snapshot (reader.c) */
	struct slot *slots;
	unsigned nslots;
	unsigned pending;	/* probes whose place is not in this image */
	struct comm_ent *comms;
	unsigned ncomms, comms_cap, pass;
	uint64_t pass_ns;		/* when this pass began */
	struct dp_stats stats;	/* this image's (missed: the tree's) */
	/* an image the agent cannot be in, traced by the ptrace engine in
	 * a helper process for the session (handoff.c): no channel, no
	 * rings; its records come over @hsock */
	pid_t helper;		/* the helper process, or 0 */
	int hsock;		/* -1 once it ended */
	unsigned ticket;	/* the EXEC it answered (0: taken late) */
	pid_t asker;		/* the image that asked */
	unsigned char *hbuf;	/* the record read ahead (have_head) */
	size_t hlen;
	struct symc *named;	/* the places it named (its symbolizer) */
};

struct old_objs {
	struct old_objs *next;
	struct dp_proc_objs *objs;
};

/* A probe whose place was not in some image (its object not loaded). */
struct pend {
	struct pend *next;
	const struct dp_probe *pr;
	char why[256];
	unsigned n;		/* images it was pending in */
};

/*
 * The session: every process image traced.  A launched command inherits
 * one end of the hub, a socket pair of dprobe's; each agent that starts
 * (the command's, a followed fork child's, an exec'd image's) makes a
 * channel of its own and hands dprobe its end over the hub (NEW).
 */
/* The session's hist tables (agg.c). */
struct inproc_agg {
	int fd;				/* -1: none */
	uint8_t *map;			/* dprobe writes only owners */
	uint64_t size;
	struct agg_table *tab;
	unsigned ntab;
	unsigned passes;		/* the tree's, for inproc_agg_reap() */
};

struct dp_inproc {
	struct dp_inproc_opts o;
	struct inproc_agg agg;
	pid_t pid;		/* the command launched or process attached */
	bool launched, exited;
	int status;
	int hub;		/* dprobe's end of the hub, or -1 */
	struct ip_proc *procs, **procs_tail;
	unsigned nprocs;	/* images that said hello */
	unsigned nforks;	/* of them, fork children */
	unsigned untraced;	/* fork children not followed (no -f) */
	unsigned nlost_images;	/* images that could not be traced */
	struct pend *pend;
	/* -f: processes whose image closed while they live on (an exec):
	 * a new image should join before @deadline_ms, else it is named */
	struct exec_watch {
		pid_t pid;
		int64_t deadline_ms;
		char exe[256];	/* the program it runs now */
	} *watch;
	unsigned nwatch;
	bool clk_set;
	struct clk clk;		/* one clock for every image */
	/* -f: the next image's rings, made while nobody waits for them (a
	 * fork child waits in fork() for its own) */
	struct dp_ring_set spare;
	bool have_spare;
	/* the mask waits run with: NULL while setting up (the stop signals
	 * stay blocked), empty once tracing (they interrupt the waits) */
	const sigset_t *waitmask;
	sigset_t unblocked;
	/* stop requests: 1 stops tracing, 2 (Ctrl-C again) ends every wait */
	volatile sig_atomic_t stop_req, profile_req;
	void (*profile_cb)(void *);
	void *profile_priv;
	struct dp_stats stats;	/* the sum over the images */
	/* the last drain took many entries: the producers are busy, and
	 * the next look comes sooner than the idle millisecond */
	bool lively;
};

/* ---- session.c: one image ------------------------------------------------ */

void inproc_log(struct dp_inproc *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
struct ip_proc *proc_new(struct dp_inproc *t, pid_t pid, int sock);
/* Whether @fd is a channel end of a pair process @pid made: 0 or -errno. */
int inproc_check_end(int fd, pid_t pid);
/* A ring set of the session's size: 0 or -errno (-E2BIG: too large). */
int inproc_ring_set(struct dp_inproc *t, struct dp_ring_set *set);
/* Whether the launched command or attached process is gone (reaped). */
bool inproc_root_gone(struct dp_inproc *t);
/* The handshake: hello, rings, probes, ARM.  0 or -errno with @why. */
int proc_handshake(struct ip_proc *p, char *why, size_t whylen);
/* After MAPS: the probes of new objects armed, those of gone ones
 * dropped.  0 or -errno (the channel failed). */
int proc_refresh(struct ip_proc *p);
/* @ev switched on or off in @p (tree.c's dp_inproc_enable()). */
int proc_switch(struct ip_proc *p, struct dp_event *ev, bool on, char *why,
		size_t whylen);
/* Take every probe out of a live image and say bye. */
void proc_detach(struct ip_proc *p);
void proc_free(struct ip_proc *p);

/* ---- tree.c: every image ---------------------------------------------------- */

/* A NEW on the hub: the image's channel end (its pair), checked.  The
 * new image, or NULL (logged: the process runs untraced). */
struct ip_proc *tree_accept(struct dp_inproc *t, int timeout_ms);
/* The sum of the images' miss counts, into the probes and the stats. */
void tree_sum_missed(struct dp_inproc *t);

/* ---- handoff.c: processes the agent cannot be in ------------------------- */

/* "EXEC <ticket> <pid> <why> <path>" from @p: take it or not, answer. */
void handoff_exec(struct ip_proc *p, const char *args);
/* "EXECLATE <pid> <why> <path>": a child of @p runs it already. */
void handoff_exec_late(struct ip_proc *p, const char *args);
/* "EXECFAIL <ticket>": the process goes on in @p's image. */
void handoff_exec_failed(struct ip_proc *p, const char *args);
/* Process @pid runs a program without the agent (@what says which):
 * taken from now on, where the ptrace engine can.  Whether it was. */
bool handoff_late(struct dp_inproc *t, pid_t pid, const char *what);
/* Whether a helper traces @pid now (its agent must not join too). */
bool handoff_owns(const struct dp_inproc *t, pid_t pid);
/* The next record of helper image @p, read ahead into p->head (@final:
 * waiting for it, the helper is ending); whether there is one. */
bool handoff_peek(struct ip_proc *p, bool final);
void handoff_take(struct ip_proc *p);
/* At the session's end: every helper told to detach. */
void handoff_stop_all(struct dp_inproc *t);
void handoff_free(struct ip_proc *p);

/* ---- agg.c: hist triggers kept in the images ----------------------------- */

/* The tables the options ask for, in a memfd: 0 or -errno. */
int inproc_agg_init(struct dp_inproc *t);
void inproc_agg_free(struct dp_inproc *t);
/* Whether @ev's hits go to tables (its probes: DP_AGENT_F_AGG). */
bool inproc_agg_wanted(const struct dp_inproc *t, const struct dp_event *ev);
/* The DP_AGENT_F_* flags the tables give @ev's probes: F_AGG (with F_LAT
 * for a timed return probe), F_COUNT for its entry event, else 0. */
unsigned inproc_agg_flags(const struct dp_inproc *t, const struct dp_event *ev);
/* The clock's rate into the tables, for the agents' timed probes. */
void inproc_agg_clock(struct dp_inproc *t);
/* AGGMEM to @p (nothing without tables); AGG for @ev's probe in @slot. */
int inproc_agg_send_mem(struct ip_proc *p);
int inproc_agg_send(struct ip_proc *p, int slot, const struct dp_event *ev);
/* What every table went up by since the last look, to sink.agg. */
void inproc_agg_drain(struct dp_inproc *t);
/* The table slots of threads that are gone, free again (reads /proc). */
void inproc_agg_reap(struct dp_inproc *t);

/* ---- channel.c ----------------------------------------------------------- */

/* A message (with descriptor @fd, or -1) within INPROC_REPLY_TIMEOUT_MS,
 * reading what comes meanwhile; 0 or -errno. */
int chan_send(struct ip_proc *p, int fd, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The next message within @timeout_ms: its length, 0 at EOF, or -errno
 * (-ETIMEDOUT; -EINTR: dprobe must quit). */
int chan_recv(struct ip_proc *p, char *buf, size_t len, int timeout_ms);
/* The same with the descriptor the message carried (*@fd, -1 if none);
 * only where nothing was queued (the handshake). */
int chan_recv_fd(struct ip_proc *p, char *buf, size_t len, int *fd,
		 int timeout_ms);
/* A message the agent may send at any time (STAT, END, UNTRACED, MAPS):
 * 1 if it was one (END: 2), else 0. */
int chan_note(struct ip_proc *p, const char *msg);
/*
 * The agent's answer to a request: the next message that starts with
 * @word (copied into @buf if not NULL), the messages it may send at any
 * time noted meanwhile.  0, 1 if the agent answered ERR, or -errno.
 */
int chan_answer(struct ip_proc *p, const char *word, char *buf, size_t len);
/* STAT messages up to END, within @timeout_ms each. */
void chan_read_stats(struct ip_proc *p, int timeout_ms);
/* Ask the agent for its miss counts and put them in the probes. */
void inproc_update_missed(struct ip_proc *p);
/* What came on the channel (after a poll said so); false at its end. */
bool chan_serve(struct ip_proc *p);
/* Close the channel and drop what is queued. */
void chan_free(struct ip_proc *p);
/* Run the stop signals' handlers if some are pending (tracing only). */
void inproc_take_signals(struct dp_inproc *t);
/* A second stop request came: every wait and the last read end. */
bool inproc_must_quit(const struct dp_inproc *t);
/* A wait for @fd's @events until @deadline_ms (CLOCK_MONOTONIC ms),
 * with the tree's signal mask: revents, 0 at the deadline, or -errno. */
int inproc_wait_fd(struct dp_inproc *t, int fd, short events,
		   int64_t deadline_ms);
int64_t inproc_now_ms(void);

/* ---- reader.c ------------------------------------------------------------ */

void clk_init(struct clk *c, bool tsc);
/* A new measurement (once per pass; a knot about once a second). */
void clk_sample(struct clk *c);
uint64_t clk_ns(const struct clk *c, uint64_t stamp);

/*
 * Read everything the rings hold now, in timestamp order across the
 * images (@only: that image alone); @final: the producers are gone.
 * True if it stopped with entries left; t->lively if it took many.
 */
bool reader_drain(struct dp_inproc *t, struct ip_proc *only, bool final);
/* An image's rings are read: free them. */
void reader_free(struct ip_proc *p);

#endif
