// SPDX-License-Identifier: GPL-2.0
/*
 * dprobe show on the ptrace engine: each site is an int3 whose
 * instruction runs out of line in a slot (a copy, then a jmp back) or is
 * emulated at the trap.  The tracer never jump-optimises: a jmp to a
 * detour would need code of ours in the process to call, and the
 * in-process engine (the agent) is that.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>

#include "engine/engine.h"
#include "engine/ptrace/internal.h"

static void show_site(struct proc *p, const struct site *s,
		      const struct dp_event *ev, FILE *out)
{
	char how[160];
	struct dp_show_site v = {
		.ev = ev, .pid = p->pid, .addr = s->addr,
		.orig = s->insn.bytes, .orig_len = s->insn.len,
		.armed = s->armed, .how = how, .engine = "ptrace",
		.xol = dp_insn_needs_slot(&s->insn) ? s->slot : 0,
	};

	snprintf(how, sizeof(how), "int3 (%s; not optimized: the ptrace "
		 "engine only places int3s)", dp_insn_strategy(&s->insn));
	dp_show_site(out, &v, &p->symbolizer);
}

int dp_ptrace_show(struct dp_tracer *tr, const struct dp_event *ev, FILE *out)
{
	struct proc *p = tr->procs;
	int ret = -ENOENT;

	for (unsigned h = 0; p && h < SITE_HASH; h++)
		for (const struct site *s = p->sites[h]; s; s = s->next)
			for (unsigned k = 0; k < s->nprobes; k++) {
				const struct dp_event *e = s->probes[k]->event;

				if (ev && e != ev)
					continue;
				show_site(p, s, e, out);
				ret = 0;
			}
	return ret;
}

/*
 * With o.show, once the first process has every probe armed (a launched
 * command at its entry point, still stopped there): print them, then
 * end the session.  A launched command is killed (the loop reaps it), an
 * attached process let go.
 */
void show_and_end(struct dp_tracer *tr)
{
	int r = dp_ptrace_show(tr, NULL, tr->o.show);

	tr->shown = true;
	if (r == -ENOENT)
		fprintf(tr->o.show, "no probe location is armed\n");
	fflush(tr->o.show);
	if (tr->root && !tr->root_done)
		kill(tr->root, SIGKILL);
	else
		tr->stop_req = 1;
}
