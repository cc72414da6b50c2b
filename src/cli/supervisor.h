/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ptrace engine runs in a child of the process the user sees as
 * dprobe (the supervisor).  When a tracer dies, the kernel lets its
 * tracees go as they are: a thread stopped at one of the int3s resumes
 * with the SIGTRAP still to deliver and dies of it, and any later hit
 * kills the program too.  A tracer that is a child outlives a `kill -9`
 * of dprobe: the kernel sends it SIGTERM (PR_SET_PDEATHSIG) and it
 * detaches as after a Ctrl-C, every byte and return address restored.
 */
#ifndef DPROBE_CLI_SUPERVISOR_H
#define DPROBE_CLI_SUPERVISOR_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

/*
 * Fork the process that will run the ptrace engine (stdio flushed first).
 * Returns 0 in the child, the child's pid in the parent, -errno if none.
 */
pid_t dp_sup_fork(void);

/*
 * In the parent: forward SIGINT, SIGTERM, SIGHUP, SIGUSR1 and SIGALRM (the
 * --duration timer) to @child until it exits, sleeping with @mask (those
 * signals unblocked); return its exit code, which is dprobe's.
 */
int dp_sup_wait(pid_t child, const sigset_t *mask);

/*
 * In a signal handler of dprobe: act on this signal?  In the child, only
 * what the supervisor forwards counts (dp_sup_forwarded()): a Ctrl-C or a
 * kill of the process group reaches both, and must not count twice.
 * Once the supervisor is gone, or in a dprobe without one, true.
 */
bool dp_sup_signal_ours(const siginfo_t *si);

/*
 * The signal the supervisor forwards with: a real-time one, queued with
 * the forwarded signal's number, so that it never merges with a SIGINT
 * the child already has pending.  dp_sup_forwarded() gives that number
 * for a signal the child's supervisor sent, 0 for any other.
 */
int dp_sup_signal(void);
int dp_sup_forwarded(const siginfo_t *si);

/* In the child: the supervisor is gone (killed); async-signal-safe. */
bool dp_sup_orphaned(void);

#endif
