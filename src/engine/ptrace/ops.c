// SPDX-License-Identifier: GPL-2.0
/*
 * The ptrace engine as engine.h sees it: struct dp_engine_ops over the
 * dp_ptrace_* functions of ptrace.h.
 */
#include "engine/engine.h"
#include "engine/ptrace/ptrace.h"

static struct dp_ptrace_opts opts_of(const struct dp_engine_opts *o)
{
	return (struct dp_ptrace_opts){
		.reg = o->reg, .follow = o->follow,
		.count_only = o->count_only, .sink = o->sink, .log = o->log,
		.child_mask = o->child_mask, .wake_sig = o->wake_sig,
		.quiet_target = o->quiet_target,
		.at_exec = o->at_exec, .show = o->show,
	};
}

static int pt_launch(const struct dp_engine_opts *o, void **state,
		     char *why, size_t whylen)
{
	struct dp_ptrace_opts po = opts_of(o);
	struct dp_tracer *t = NULL;
	int err = dp_ptrace_launch(&po, o->argv, &t, why, whylen);

	*state = t;
	return err;
}

static int pt_attach(const struct dp_engine_opts *o, void **state,
		     char *why, size_t whylen)
{
	struct dp_ptrace_opts po = opts_of(o);
	struct dp_tracer *t = NULL;
	int err = dp_ptrace_attach(&po, o->pids, o->npids, &t, why, whylen);

	*state = t;
	return err;
}

static int pt_run(void *state, int *status)
{
	return dp_ptrace_run(state, status);
}

static void pt_stop(void *state)
{
	dp_ptrace_stop(state);
}

static void pt_abandon(void *state)
{
	dp_ptrace_abandon(state);
}

static void pt_request_profile(void *state)
{
	dp_ptrace_request_profile(state);
}

static void pt_set_profile_cb(void *state, void (*cb)(void *), void *priv)
{
	dp_ptrace_set_profile_cb(state, cb, priv);
}

static int pt_show(void *state, const struct dp_event *ev, FILE *out)
{
	return dp_ptrace_show(state, ev, out);
}

static const struct dp_stats *pt_stats(const void *state)
{
	return dp_ptrace_stats(state);
}

static void pt_free(void *state)
{
	if (state)
		dp_ptrace_free(state);
}

const struct dp_engine_ops dp_ptrace_engine = {
	.name = "ptrace",
	.desc = "ptrace engine",
	.flags = DP_ENGINE_AUTO | DP_ENGINE_FOLLOWS | DP_ENGINE_MANY_PIDS |
		 DP_ENGINE_SUPERVISED | DP_ENGINE_AT_EXEC |
		 DP_ENGINE_SYSCALLS | DP_ENGINE_STACK_MAX,
	.launch = pt_launch,
	.attach = pt_attach,
	.run = pt_run,
	.stop = pt_stop,
	.abandon = pt_abandon,
	.request_profile = pt_request_profile,
	.set_profile_cb = pt_set_profile_cb,
	.show = pt_show,
	.stats = pt_stats,
	.free = pt_free,
};
