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

/* One probe location the agent knows, by slot number. */
struct slot {
	struct dp_probe *pr;
	uint64_t addr;
	char *how;		/* the agent's answer to PROBE */
	bool counter;		/* hits are counted in the rings' counters */
	uint64_t counted;	/* of them, already added to the probe */
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
	unsigned pass;
	char comm[16];
};

struct dp_inproc {
	struct dp_inproc_opts o;
	pid_t pid;
	bool launched, exited;
	bool refused;		/* the agent refused a probe (ERR to ARM) */
	int status;
	int sock;		/* the control channel (a socket pair's end) */
	struct inq inq;
	/* the mask waits run with: NULL while setting up (the stop signals
	 * stay blocked), empty once tracing (they interrupt the waits) */
	const sigset_t *waitmask;
	sigset_t unblocked;
	struct dp_ring_set rings;
	bool have_rings;
	struct dp_ring_reader *rd;
	struct dp_proc *proc;
	struct dp_symbolizer symbolizer;
	struct slot *slots;
	unsigned nslots;
	struct clk clk;
	struct comm_ent *comms;
	unsigned ncomms, comms_cap, pass;
	/* stop requests: 1 stops tracing, 2 (Ctrl-C again) ends every wait */
	volatile sig_atomic_t stop_req, profile_req;
	void (*profile_cb)(void *);
	void *profile_priv;
	struct dp_stats stats;
};

/* ---- session.c ----------------------------------------------------------- */

void inproc_log(struct dp_inproc *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ---- channel.c ----------------------------------------------------------- */

/* A message (with descriptor @fd, or -1) within INPROC_REPLY_TIMEOUT_MS,
 * reading what comes meanwhile; 0 or -errno. */
int chan_send(struct dp_inproc *t, int fd, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The next message within @timeout_ms: its length, 0 at EOF, or -errno
 * (-ETIMEDOUT; -EINTR: dprobe must quit). */
int chan_recv(struct dp_inproc *t, char *buf, size_t len, int timeout_ms);
/* STAT messages up to END, within @timeout_ms each. */
void chan_read_stats(struct dp_inproc *t, int timeout_ms);
/* Ask the agent for its miss counts and put them in the probes. */
void inproc_update_missed(struct dp_inproc *t);
/* While tracing: about 1 ms for the channel; false when it is closed. */
bool chan_serve(struct dp_inproc *t);
/* Close the channel and drop what is queued. */
void chan_free(struct dp_inproc *t);
/* Run the stop signals' handlers if some are pending (tracing only). */
void inproc_take_signals(struct dp_inproc *t);
/* A second stop request came: every wait and the last read end. */
bool inproc_must_quit(const struct dp_inproc *t);

/* ---- reader.c ------------------------------------------------------------ */

void clk_init(struct clk *c, bool tsc);
/* A new measurement (once per pass; a knot about once a second). */
void clk_sample(struct clk *c);
uint64_t clk_ns(const struct clk *c, uint64_t stamp);

/* Read everything the rings hold now; @final: the producers are gone. */
void reader_drain(struct dp_inproc *t, bool final);

#endif
