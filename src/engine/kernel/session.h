/* SPDX-License-Identifier: GPL-2.0 */
/* Private to src/engine/kernel/: a session's state, shared by session.c,
 * read.c (the buffers' reader) and tp.c (kernel tracepoints). */
#ifndef DPROBE_ENGINE_KERNEL_SESSION_H
#define DPROBE_ENGINE_KERNEL_SESSION_H

#include <signal.h>

#include "engine/kernel/internal.h"
#include "engine/kernel/tidmap.h"

/* One line written to *_events for one probe of an event. */
struct kref {
	char *line;
	char *path;		/* user places: the object, for symbols */
	uint64_t vaddr;		/* and the probe's link-time address */
	struct dp_probe *pr;
};

struct dp_ktp;

/* One event of the session, as the kernel knows it. */
struct kev {
	struct dp_event *ev;	/* dprobe's (the registry's) */
	const char *file;	/* "uprobe_events"...; NULL: a tracepoint */
	char kgroup[DP_MAX_EVENT_NAME_LEN];
	char kname[DP_MAX_EVENT_NAME_LEN];
	unsigned kid;		/* the kernel's event id */
	bool created;		/* in *_events: to delete */
	struct kref *refs;
	size_t nrefs;
	struct dp_ktp *tp;	/* a tracepoint's record conversion */
	bool hidden;		/* the program's entry: for symbols only */
	/* retmiss.c: a hidden entry probe of the return probe @ret_pr,
	 * and the returns of it never seen; a return event that has one */
	struct dp_probe *ret_pr;
	uint64_t skipped;
	bool has_calls;
};

struct kcpu {
	int fd;
	int cpu;
};

struct ktgid;
struct krec;

struct dp_kernel {
	struct dp_kernel_opts o;
	FILE *log;
	struct dp_tfs tfs;
	char inst[64];		/* "instances/dprobe.PID" */
	bool inst_made;
	struct kev *kevs;
	size_t nkevs;
	struct kcpu *cpus;
	int ncpus;
	struct dp_kraw_layout layout;
	bool mono_clock;	/* trace_clock is "mono": records' times
				 * compare with CLOCK_MONOTONIC */
	uint8_t *page;
	pid_t child;		/* launched, not reaped yet; -1 */
	pid_t *pids;		/* the processes traced (tgids) */
	int npids;
	volatile sig_atomic_t stop;
	volatile sig_atomic_t want_profile;	/* SIGUSR1 */
	void (*profile_cb)(void *);
	void *profile_priv;
	struct dp_stats stats;
	struct dp_ksym *ksym;
	struct dp_registry hidden;	/* the entry probe's event */
	/* read.c */
	struct dp_tidmap tids;	/* tid -> struct ktid: tgid, comm */
	struct ktgid *saved;	/* the kernel's saved_tgids, sorted */
	size_t nsaved;
	bool saved_stale;	/* to read again before the next lookup */
	unsigned long round;	/* reading rounds so far */
	struct krec *recs;	/* one round's records, to sort */
	size_t nrecs, rec_cap;
	uint8_t *arena;
	size_t arena_len, arena_cap;
	uint8_t *conv;		/* a tracepoint record, converted */
	size_t conv_cap;
	/* retmiss.c: per thread, the entries whose return is pending */
	struct dp_tidmap stacks;	/* tid -> struct kstack */
	/* ustack.c: the kernel's user_stack entries (--stack) */
	struct {
		bool on;		/* options/userstacktrace is set */
		unsigned id;		/* the entry's event id */
		unsigned off, n;	/* its caller array: offset, length */
	} ustack;
};

/* read.c: wait for data (signals in @mask may come), read what is there. */
int dp_kread_wait(struct dp_kernel *k, const sigset_t *mask);
/* Hand on the records no CPU can precede any more (@final: all of
 * them, every CPU read to its end): 0 or -errno. */
int dp_kread_drain(struct dp_kernel *k, bool final);
void dp_kread_free(struct dp_kernel *k);

/* retmiss.c: returns skipped by longjmp(), counted as missed.  Account
 * for a record of @e by thread @tid; true if it was a hidden entry
 * record (nothing more to do with it). */
bool dp_kret_account(struct dp_kernel *k, struct kev *e, pid_t tid,
		     const uint8_t *rec, size_t len);
/* The end: entries still pending never returned. */
void dp_kret_finish(struct dp_kernel *k);
/* Add the skipped returns to the return probes' nmiss. */
void dp_kret_missed(struct dp_kernel *k);
void dp_kret_free(struct dp_kernel *k);

/* ustack.c: user stacks.  The most frames an entry gives. */
#define DP_KUSTACK_MAX	64
/* Some event wants its stack: the entry's layout, or -errno (@why). */
int dp_kustack_prepare(struct dp_kernel *k, char *why, size_t whylen);
/* The frames of @rec if it is the user_stack entry of thread @tid, into
 * @out (DP_KUSTACK_MAX); 0 if it is not one. */
unsigned dp_kustack_frames(const struct dp_kernel *k, const uint8_t *rec,
			   size_t len, pid_t tid, uint64_t *out);

/* tp.c: kernel tracepoints named in opts.tracepoints. */
int dp_ktp_translate(struct dp_kernel *k, char *why, size_t whylen);
int dp_ktp_filters(struct dp_kernel *k, char *why, size_t whylen);
int dp_ktp_enable(struct dp_kernel *k, struct kev *e, char *why,
		  size_t whylen);
/* The record in dprobe's layout for e->ev; NULL if malformed. */
const uint8_t *dp_ktp_convert(struct dp_kernel *k, const struct kev *e,
			      const uint8_t *rec, size_t len, size_t *out_len);
void dp_kev_tp_free(struct kev *e);

#endif
