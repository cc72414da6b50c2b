// SPDX-License-Identifier: GPL-2.0
/*
 * The in-process engine as engine.h sees it: struct dp_engine_ops over
 * the dp_inproc_* functions of inproc.h, and what it needs of a target
 * (its library, a program the dynamic loader starts).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "engine/engine.h"
#include "engine/inproc/inproc.h"

/* The library: a refused $DPROBE_AGENT is an error, a missing one not. */
static int ip_prepare(struct dp_engine_choice *ch,
		      const struct dp_engine_opts *o)
{
	char *path = ch->env->find_agent(ch->why, sizeof(ch->why));

	(void)o;
	if (!path)
		return ch->why[0] ? -EINVAL : 0;
	snprintf(ch->agent, sizeof(ch->agent), "%s", path);
	free(path);
	return 0;
}

static int no(struct dp_engine_choice *ch, const char *why,
	      const char *reason)
{
	snprintf(ch->why, sizeof(ch->why), "%s", why);
	snprintf(ch->reason, sizeof(ch->reason), "%s", reason);
	return 1;
}

/* A launch preloads the library: the loader must run, and honour it. */
static int ip_unsuitable(struct dp_engine_choice *ch,
			 const struct dp_engine_opts *o)
{
	int prog;

	if (!ch->agent[0])
		return no(ch, DP_INPROC_NO_AGENT, "libdprobe.so was not found "
			  "next to dprobe nor in ../lib/dprobe/ from it, the "
			  "in-process engine runs from it");
	if (!o->argv)
		return 0;
	prog = ch->env->program(o->binary);
	if (prog < 0)
		return no(ch, "the program cannot be read", "the program "
			  "cannot be read, the in-process engine needs to know "
			  "how it is linked");
	if (prog & DP_PROGRAM_SETID)
		return no(ch, "a set-user-ID program ignores LD_PRELOAD",
			  "the program is set-user-ID, it ignores the "
			  "LD_PRELOAD the in-process engine needs");
	if (!(prog & DP_PROGRAM_DYNAMIC))
		return no(ch, "the program is statically linked", "the program "
			  "is statically linked, the in-process engine needs "
			  "the dynamic loader");
	return 0;
}

static const char *ip_suits(const struct dp_engine_opts *o)
{
	return o->argv ? "in-process engine (libdprobe.so found, dynamically "
			 "linked program)" :
			 "in-process engine (libdprobe.so found, injected into "
			 "the running process)";
}

static struct dp_inproc_opts opts_of(const struct dp_engine_opts *o)
{
	return (struct dp_inproc_opts){
		.reg = o->reg, .count_only = o->count_only, .sink = o->sink,
		.log = o->log, .child_mask = o->child_mask, .agent = o->agent,
		.quiet_target = o->quiet_target,
		.buffer_size = o->buffer_size, .overwrite = o->overwrite,
		.blocking = o->blocking,
		.follow = o->follow, .aggs = o->aggs, .naggs = o->naggs,
		.show = o->show,
	};
}

static int ip_launch(const struct dp_engine_opts *o, void **state,
		     char *why, size_t whylen)
{
	struct dp_inproc_opts io = opts_of(o);
	struct dp_inproc *t = NULL;
	int err = dp_inproc_launch(&io, o->argv, &t, why, whylen);

	*state = t;
	return err;
}

static int ip_attach(const struct dp_engine_opts *o, void **state,
		     char *why, size_t whylen)
{
	struct dp_inproc_opts io = opts_of(o);
	struct dp_inproc *t = NULL;
	int err = dp_inproc_attach(&io, o->pids[0], &t, why, whylen);

	*state = t;
	return err;
}

static int ip_run(void *state, int *status)
{
	return dp_inproc_run(state, status);
}

static void ip_stop(void *state)
{
	dp_inproc_stop(state);
}

static void ip_request_profile(void *state)
{
	dp_inproc_request_profile(state);
}

static void ip_set_profile_cb(void *state, void (*cb)(void *), void *priv)
{
	dp_inproc_set_profile_cb(state, cb, priv);
}

static int ip_show(void *state, const struct dp_event *ev, FILE *out)
{
	return dp_inproc_show(state, ev, out);
}

static void ip_list_probes(const void *state, FILE *out)
{
	dp_inproc_list_probes(state, out);
}

static int ip_enable(void *state, struct dp_event *ev)
{
	return dp_inproc_enable(state, ev);
}

static int ip_disable(void *state, struct dp_event *ev)
{
	return dp_inproc_disable(state, ev);
}

static const struct dp_stats *ip_stats(const void *state)
{
	return dp_inproc_stats(state);
}

static void ip_free(void *state)
{
	dp_inproc_free(state);
}

const struct dp_engine_ops dp_agent_engine = {
	.name = "agent",
	.desc = "in-process engine",
	.flags = DP_ENGINE_AUTO | DP_ENGINE_APP_TRACEPOINTS | DP_ENGINE_FOLLOWS |
		 DP_ENGINE_STACK_MAX,
	.prepare = ip_prepare,
	.unsuitable = ip_unsuitable,
	.suits = ip_suits,
	.launch = ip_launch,
	.attach = ip_attach,
	.run = ip_run,
	.stop = ip_stop,
	.request_profile = ip_request_profile,
	.set_profile_cb = ip_set_profile_cb,
	.list_probes = ip_list_probes,
	.show = ip_show,
	.enable = ip_enable,
	.disable = ip_disable,
	.stats = ip_stats,
	.free = ip_free,
};
