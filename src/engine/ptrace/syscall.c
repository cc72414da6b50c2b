// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's syscall events (events/syscalls/sys_enter_NAME and
 * sys_exit_NAME) served from the tracer's own syscall stops, for a
 * dprobe mount without the kernel's tracefs (event/syscalls.h makes the
 * events and their records).
 *
 * When the registry holds any, every tracee is resumed with
 * PTRACE_SYSCALL instead of PTRACE_CONT and stops at each system call's
 * entry and exit (SIGTRAP | 0x80 with PTRACE_O_TRACESYSGOOD, never taken
 * for a signal of the program's).  PTRACE_GET_SYSCALL_INFO says which
 * stop it is; an exit's number is the one its thread entered with.  The
 * stops cost two context switches per system call, for every system
 * call: the price of seeing them without the kernel.
 */
#include <errno.h>
#include <string.h>
#include <sys/ptrace.h>

#include "engine/ptrace/internal.h"
#include "event/deliver.h"
#include "event/syscalls.h"

bool sys_events_init(struct dp_tracer *tr)
{
	memset(tr->sys_ev, 0, sizeof(tr->sys_ev));
	tr->sys_on = false;
	for (struct dp_event *ev = tr->o.reg->events; ev; ev = ev->next) {
		bool exit;
		const struct dp_syscall *sc = dp_syscall_of_event(ev, &exit);

		if (!sc || sc->nr < 0 || sc->nr >= DP_SYSCALL_NR_MAX)
			continue;
		tr->sys_ev[exit][sc->nr] = ev;
		tr->sys_on = true;
	}
	return tr->sys_on;
}

static void sys_emit(struct thread *t, struct dp_event *ev, bool exit,
		     long nr, const uint64_t *args, int64_t ret)
{
	struct dp_tracer *tr = t->proc->tracer;
	struct dp_deliver d = { &tr->o.sink, &tr->stats, tr->o.count_only };
	struct dp_probe *pr = ev->probes;
	char comm[DP_TASK_COMM_LEN];
	struct dp_rec_meta meta = { 0 };
	size_t len;

	pr->nhit++;
	if (dp_event_deliver_counted(&d, pr))
		return;
	len = dp_syscall_record(ev, exit, nr, args, ret, t->tid, tr->rec,
				sizeof(tr->rec));
	if (!len) {
		dp_event_lost_record(&d);
		return;
	}
	thread_meta(t, &meta, comm);
	dp_event_deliver(&d, pr, tr->rec, len, &meta, &t->proc->symbolizer);
}

void sys_stop(struct thread *t)
{
	struct dp_tracer *tr = t->proc->tracer;
	struct __ptrace_syscall_info si;
	bool exit;
	long nr;

	memset(&si, 0, sizeof(si));
	if (ptrace(PTRACE_GET_SYSCALL_INFO, t->tid, (void *)sizeof(si), &si) <= 0)
		return;
	if (si.op == PTRACE_SYSCALL_INFO_ENTRY) {
		exit = false;
		nr = t->sys_nr = (long)si.entry.nr;
	} else if (si.op == PTRACE_SYSCALL_INFO_EXIT) {
		/* attached inside a system call: its entry was not seen */
		exit = true;
		nr = t->sys_nr;
		t->sys_nr = -1;
	} else {
		return;
	}
	if (nr < 0 || nr >= DP_SYSCALL_NR_MAX || !tr->sys_ev[exit][nr] ||
	    t->proc->silent)
		return;
	sys_emit(t, tr->sys_ev[exit][nr], exit, nr,
		 exit ? NULL : (const uint64_t *)si.entry.args,
		 exit ? (int64_t)si.exit.rval : 0);
}
