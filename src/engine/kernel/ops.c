// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel engine as engine.h sees it: struct dp_engine_ops over the
 * dp_kernel_* functions of kernel.h, and what it needs before any target
 * (root, tracefs, the host's pid namespace).
 */
#include "engine/engine.h"
#include "engine/kernel/internal.h"
#include "engine/kernel/kernel.h"

int dp_kernel_ready(const struct dp_engine_opts *o, char *why, size_t whylen)
{
	struct dp_tfs t;
	int ret = 0;

	/* the order dp_kernel_launch() and dp_kernel_attach() check in */
	if (o->argv || o->npids)
		ret = dp_kcheck_pidns(why, whylen);
	return ret ? ret : dp_tfs_find(&t, why, whylen);
}

static int k_prepare(struct dp_engine_choice *ch,
		     const struct dp_engine_opts *o)
{
	return ch->env->kernel_ready(o, ch->why, sizeof(ch->why));
}

static struct dp_kernel_opts opts_of(const struct dp_engine_opts *o)
{
	return (struct dp_kernel_opts){
		.reg = o->reg, .kernel = o->kernel, .follow = o->follow,
		.count_only = o->count_only, .sink = o->sink, .log = o->log,
		.child_mask = o->child_mask, .binary = o->binary,
		.quiet_target = o->quiet_target,
		.objs = o->objs, .nobjs = o->nobjs,
		.tracepoints = o->tracepoints,
		.ntracepoints = o->ntracepoints,
		.filters = o->filters, .nfilters = o->nfilters,
	};
}

static int k_launch(const struct dp_engine_opts *o, void **state,
		    char *why, size_t whylen)
{
	struct dp_kernel_opts ko = opts_of(o);
	struct dp_kernel *k = NULL;
	int err = dp_kernel_launch(&ko, o->argv, &k, why, whylen);

	*state = k;
	return err;
}

static int k_attach(const struct dp_engine_opts *o, void **state,
		    char *why, size_t whylen)
{
	struct dp_kernel_opts ko = opts_of(o);
	struct dp_kernel *k = NULL;
	int err = dp_kernel_attach(&ko, o->pids, o->npids, &k, why, whylen);

	*state = k;
	return err;
}

static int k_run(void *state, int *status)
{
	return dp_kernel_run(state, status);
}

static void k_stop(void *state)
{
	dp_kernel_stop(state);
}

static void k_request_profile(void *state)
{
	dp_kernel_request_profile(state);
}

static void k_set_profile_cb(void *state, void (*cb)(void *), void *priv)
{
	dp_kernel_set_profile_cb(state, cb, priv);
}

static const struct dp_stats *k_stats(const void *state)
{
	return dp_kernel_stats(state);
}

static void k_free(void *state)
{
	dp_kernel_free(state);
}

const struct dp_engine_ops dp_kernel_engine = {
	.name = "kernel",
	.desc = "kernel engine",
	.flags = DP_ENGINE_FOLLOWS | DP_ENGINE_MANY_PIDS | DP_ENGINE_KERNEL |
		 DP_ENGINE_OBJS,
	.prepare = k_prepare,
	.launch = k_launch,
	.attach = k_attach,
	.run = k_run,
	.stop = k_stop,
	.request_profile = k_request_profile,
	.set_profile_cb = k_set_profile_cb,
	.stats = k_stats,
	.free = k_free,
	.cleanup = dp_kernel_cleanup,
	.list_tracepoints = dp_kernel_list_tracepoints,
	.tp_named = dp_kernel_tp_named,
	.tracepoint_formats = dp_kernel_tracepoint_formats,
};
