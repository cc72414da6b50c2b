// SPDX-License-Identifier: GPL-2.0
/*
 * The table of engines, the choice of one for a session (and the reason
 * in one line), and the handle the callers hold: what engine.h promises,
 * over each engine's struct dp_engine_ops.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/inproc/inproc.h"
#include "engine/kernel/kernel.h"

/* Each engine's ops, in its folder's ops.c. */
extern const struct dp_engine_ops dp_agent_engine;
extern const struct dp_engine_ops dp_ptrace_engine;
extern const struct dp_engine_ops dp_kernel_engine;

/* The order is the order auto tries them in (DP_ENGINE_AUTO). */
const struct dp_engine_ops *const dp_engines[] = {
	&dp_agent_engine,
	&dp_ptrace_engine,
	&dp_kernel_engine,
	NULL,
};

const struct dp_engine_env dp_engine_real_env = {
	.find_agent = dp_inproc_find_agent,
	.program = dp_inproc_program,
	.kernel_ready = dp_kernel_ready,
};

struct dp_engine {
	const struct dp_engine_ops *ops;
	void *state;
};

/* ---- the table --------------------------------------------------------------- */

const struct dp_engine_ops *dp_engine_by_name(const char *name)
{
	for (size_t i = 0; dp_engines[i]; i++)
		if (!strcmp(dp_engines[i]->name, name))
			return dp_engines[i];
	return NULL;
}

const struct dp_engine_ops *dp_engine_with(unsigned flags)
{
	for (size_t i = 0; dp_engines[i]; i++)
		if ((dp_engines[i]->flags & flags) == flags)
			return dp_engines[i];
	return NULL;
}

const char *dp_engine_names(void)
{
	static char names[256];
	size_t n = 0;

	if (names[0])
		return names;
	for (size_t i = 0; dp_engines[i] && n < sizeof(names); i++)
		n += (size_t)snprintf(names + n, sizeof(names) - n, "%s%s",
				      !i ? "" : dp_engines[i + 1] ? ", " :
				      " or ", dp_engines[i]->name);
	return names;
}

/* ---- the choice -------------------------------------------------------------- */

static void say(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void say(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

static bool has_app_tracepoints(const struct dp_registry *reg)
{
	for (const struct dp_event *ev = reg ? reg->events : NULL; ev;
	     ev = ev->next)
		if (ev->kind == DP_KIND_TRACEPOINT && !ev->kernel)
			return true;
	return false;
}

/* The kernel's syscall events made from the target's own system calls
 * (event/syscalls.h), not the kernel engine's tracepoints. */
static bool has_syscall_events(const struct dp_engine_opts *o)
{
	for (const struct dp_event *ev = o->reg ? o->reg->events : NULL;
	     ev && !o->kernel; ev = ev->next)
		if (ev->kernel)
			return true;
	return false;
}

/*
 * What the session asks of every engine, before the engine's own checks:
 * 1 with @ch->why and @ch->reason if @e lacks it, else 0.
 */
static int lacks(struct dp_engine_choice *ch, const struct dp_engine_opts *o,
		 const struct dp_engine_ops *e)
{
	if (o->follow && !(e->flags & DP_ENGINE_FOLLOWS)) {
		say(ch->why, sizeof(ch->why), "it does not follow forks (-f)");
		say(ch->reason, sizeof(ch->reason), "-f given, the %s does not "
		    "follow forks", e->desc);
		return 1;
	}
	if (o->npids > 1 && !(e->flags & DP_ENGINE_MANY_PIDS)) {
		say(ch->why, sizeof(ch->why), "it attaches to one process at a "
		    "time");
		say(ch->reason, sizeof(ch->reason), "several processes given, "
		    "the %s attaches to one at a time", e->desc);
		return 1;
	}
	return 0;
}

/*
 * Can @e take the session?  0 yes; 1 no, with @ch->why and @ch->reason;
 * -errno: an error (@ch->why), whatever engine would be next.
 */
static int check(struct dp_engine_choice *ch, const struct dp_engine_opts *o,
		 const struct dp_engine_ops *e)
{
	int ret = e->prepare ? e->prepare(ch, o) : 0;

	if (!ret)
		ret = lacks(ch, o, e);
	if (!ret && e->unsuitable)
		ret = e->unsuitable(ch, o);
	return ret;
}

/* @e is the engine: its reason "NAME: @fmt...". */
static int take(struct dp_engine_choice *ch, struct dp_engine_opts *o,
		const struct dp_engine_ops *e, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int take(struct dp_engine_choice *ch, struct dp_engine_opts *o,
		const struct dp_engine_ops *e, const char *fmt, ...)
{
	char why[sizeof(ch->reason)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	say(ch->reason, sizeof(ch->reason), "%s: %s", e->name, why);
	ch->ops = e;
	ch->why[0] = '\0';
	o->agent = ch->agent[0] ? ch->agent : NULL;
	return 0;
}

/* An engine named, or the only one that can: it runs, or nothing does. */
static int choose_strict(struct dp_engine_choice *ch,
			 struct dp_engine_opts *o,
			 const struct dp_engine_ops *e, const char *because)
{
	int ret = check(ch, o, e);

	ch->strict = true;
	if (ret > 0) {
		/* ch->why is the engine's; the message is as it always was */
		char why[sizeof(ch->why)];

		snprintf(why, sizeof(why), "%s", ch->why);
		say(ch->why, sizeof(ch->why), "cannot use the %s: %s", e->desc,
		    why);
		return -EINVAL;
	}
	if (ret < 0)
		return ret;
	return take(ch, o, e, "%s", because);
}

/* The first engine of the table, from @from on, that takes the session. */
static int choose_auto(struct dp_engine_choice *ch, struct dp_engine_opts *o,
		       size_t from)
{
	char no[sizeof(ch->reason)] = "";

	for (size_t i = from; dp_engines[i]; i++) {
		const struct dp_engine_ops *e = dp_engines[i];
		int ret;

		if (!(e->flags & DP_ENGINE_AUTO))
			continue;
		ch->reason[0] = '\0';
		ret = check(ch, o, e);
		if (ret < 0)
			return ret;
		if (!ret && no[0]) {
			ch->fallback = true;
			snprintf(ch->no, sizeof(ch->no), "%s", no);
			return take(ch, o, e, "%s", no);
		}
		if (!ret)
			return take(ch, o, e, "%s", e->suits ? e->suits(o) :
				    e->desc);
		/* why not this one is why the next one */
		say(no, sizeof(no), "%s", ch->reason[0] ? ch->reason : ch->why);
	}
	say(ch->why, sizeof(ch->why), "no engine can trace this: %s", no);
	return -ENOTSUP;
}

/*
 * The policy, in order:
 *
 *  1. --engine NAME (or $DPROBE_ENGINE) is that engine or an error,
 *     never another: "cannot use the DESC: WHY".
 *  2. --kernel places are the kernel engine's (the CLI refuses --kernel
 *     with another engine named).
 *  3. An application tracepoint calls the in-process engine's probe
 *     function: an engine that enables them is the only one possible
 *     (another one named is an error, checked first), unless the kernel
 *     engine was named (then GROUP:NAME is the kernel's tracepoint).
 *     Likewise syscall events without --kernel: the engine that sees
 *     the target's system calls (DP_ENGINE_SYSCALLS); both at once, an
 *     error.
 *  4. Otherwise the engines marked DP_ENGINE_AUTO, in table order: the
 *     in-process engine where it can run (its library found, a
 *     dynamically linked program that is not set-user-ID, one
 *     process), else the ptrace engine.  An engine's error (a refused
 *     $DPROBE_AGENT, no tracefs) ends the choice.
 *  5. After the choice, at launch: dp_engine_fallback().
 */
int dp_engine_choose(struct dp_engine_choice *ch, struct dp_engine_opts *o,
		     const struct dp_engine_env *env)
{
	const struct dp_engine_ops *want = o->forced, *tp, *sc;

	memset(ch, 0, sizeof(*ch));
	ch->env = env ? env : &dp_engine_real_env;
	o->agent = NULL;
	if (want && !(want->flags & DP_ENGINE_KERNEL) &&
	    has_app_tracepoints(o->reg) &&
	    !(want->flags & DP_ENGINE_APP_TRACEPOINTS)) {
		tp = dp_engine_with(DP_ENGINE_APP_TRACEPOINTS);
		say(ch->why, sizeof(ch->why), "tracepoints are enabled by the "
		    "%s, not --engine %s", tp ? tp->desc : "no engine",
		    want->name);
		return -EINVAL;
	}
	sc = has_syscall_events(o) ? dp_engine_with(DP_ENGINE_SYSCALLS) : NULL;
	if (has_syscall_events(o) && (!sc || (want && want != sc) ||
				      (!want && has_app_tracepoints(o->reg)))) {
		if (want)
			say(ch->why, sizeof(ch->why), "the syscalls: events "
			    "are made by the %s, not --engine %s",
			    sc ? sc->desc : "no engine", want->name);
		else
			say(ch->why, sizeof(ch->why), "the syscalls: events "
			    "are made by the %s, which cannot enable "
			    "application tracepoints", sc ? sc->desc :
			    "no engine");
		return -EINVAL;
	}
	if (want)
		return choose_strict(ch, o, want, "forced by --engine");
	if (sc)
		return choose_strict(ch, o, sc, "the events include syscall "
				     "events, made from the target's syscall "
				     "stops");
	if (o->kernel && (want = dp_engine_with(DP_ENGINE_KERNEL)))
		return choose_strict(ch, o, want, "--kernel given, the places "
				     "are in the kernel");
	tp = dp_engine_with(DP_ENGINE_APP_TRACEPOINTS);
	if (tp && has_app_tracepoints(o->reg))
		return choose_strict(ch, o, tp, "the events include "
				     "application tracepoints, which only it "
				     "enables");
	return choose_auto(ch, o, 0);
}

/*
 * 5. A launch that failed: on auto, a failure that is the engine's and
 * not the user's gives way to the next engine.  -ENOTSUP is the engine
 * saying so (the agent cannot arm a probe); attaching fails in more ways
 * that are the engine's (injecting the agent), except -EALREADY (another
 * dprobe's agent is there: two engines would patch the same code).  A
 * probe that cannot be placed at all fails on the next engine too.
 */
bool dp_engine_fallback(struct dp_engine_choice *ch, struct dp_engine_opts *o,
			int err, char *why, size_t whylen)
{
	const struct dp_engine_ops *failed = ch->ops;
	char was[512];
	size_t next = 0;

	if (!why[0])
		say(why, whylen, "%s", strerror(-err));
	if (ch->strict || err == -EALREADY || (err != -ENOTSUP && o->argv))
		return false;
	while (dp_engines[next] && dp_engines[next++] != failed)
		;
	snprintf(was, sizeof(was), "%s", why);
	ch->fallback = false;	/* the caller says this one (@why) */
	if (choose_auto(ch, o, next)) {
		ch->ops = failed;
		say(why, whylen, "%s", was);
		return false;
	}
	say(ch->reason, sizeof(ch->reason), "%s: the %s cannot trace this "
	    "(%s)", ch->ops->name, failed->desc, was);
	say(why, whylen, "the %s cannot trace this (%s); using the %s",
	    failed->desc, was, ch->ops->desc);
	return true;
}

/*
 * Never a silent fallback: another engine than the one auto tries first
 * is said in one line, before the first event; the choice itself only
 * with DPROBE_VERBOSE.
 */
void dp_engine_say_choice(const struct dp_engine_choice *ch)
{
	const char *v = getenv("DPROBE_VERBOSE");

	if (v && *v && strcmp(v, "0"))
		fprintf(stderr, "dprobe: engine %s\n", ch->reason);
	else if (ch->fallback)
		fprintf(stderr, "dprobe: using the %s: %s\n", ch->ops->desc,
			ch->no);
}

/* ---- the handle -------------------------------------------------------------- */

int dp_engine_start(const struct dp_engine_ops *ops,
		    const struct dp_engine_opts *o, struct dp_engine **out,
		    char *why, size_t whylen)
{
	struct dp_engine *e;
	int err;

	/* it would trace on, never show and end */
	if (o->show && !ops->show) {
		snprintf(why, whylen, "the %s cannot show its probes",
			 ops->desc);
		return -ENOTSUP;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->ops = ops;
	err = o->argv ? ops->launch(o, &e->state, why, whylen) :
	      ops->attach(o, &e->state, why, whylen);
	if (err) {
		free(e);
		return err;
	}
	*out = e;
	return 0;
}

int dp_engine_run(struct dp_engine *e, int *status)
{
	return e->ops->run(e->state, status);
}

void dp_engine_stop(struct dp_engine *e)
{
	if (e)
		e->ops->stop(e->state);
}

void dp_engine_abandon(struct dp_engine *e)
{
	if (e && e->ops->abandon)
		e->ops->abandon(e->state);
	else
		dp_engine_stop(e);
}

void dp_engine_request_profile(struct dp_engine *e)
{
	if (e)
		e->ops->request_profile(e->state);
}

void dp_engine_set_profile_cb(struct dp_engine *e, void (*cb)(void *),
			      void *priv)
{
	e->ops->set_profile_cb(e->state, cb, priv);
}

bool dp_engine_list_probes(const struct dp_engine *e, FILE *out)
{
	if (!e || !e->ops->list_probes)
		return false;
	fprintf(out, "# probes (%s):\n", e->ops->desc);
	e->ops->list_probes(e->state, out);
	return true;
}

int dp_engine_enable(struct dp_engine *e, struct dp_event *ev)
{
	return e->ops->enable ? e->ops->enable(e->state, ev) : -ENOTSUP;
}

int dp_engine_disable(struct dp_engine *e, struct dp_event *ev)
{
	return e->ops->disable ? e->ops->disable(e->state, ev) : -ENOTSUP;
}

int dp_engine_show(struct dp_engine *e, const struct dp_event *ev, FILE *out)
{
	if (!e || !e->ops->show)
		return -ENOTSUP;
	return e->ops->show(e->state, ev, out);
}

const struct dp_stats *dp_engine_stats(const struct dp_engine *e)
{
	return e->ops->stats(e->state);
}

void dp_engine_free(struct dp_engine *e)
{
	if (!e)
		return;
	e->ops->free(e->state);
	free(e);
}

/* ---- engine-wide ------------------------------------------------------------- */

int dp_engine_cleanup(FILE *report)
{
	int total = 0, err = 0;

	for (size_t i = 0; dp_engines[i]; i++) {
		int n = dp_engines[i]->cleanup ? dp_engines[i]->cleanup(report) : 0;

		if (n < 0)
			err = n;
		else
			total += n;
	}
	return err ? err : total;
}

int dp_engine_list_tracepoints(const char *glob, FILE *out)
{
	for (size_t i = 0; dp_engines[i]; i++)
		if (dp_engines[i]->list_tracepoints)
			return dp_engines[i]->list_tracepoints(glob, out);
	return -ENOTSUP;
}

int dp_engine_tracepoint_formats(const char *glob, dp_tp_format_cb cb,
				 void *priv, char *why, size_t whylen)
{
	for (size_t i = 0; dp_engines[i]; i++)
		if (dp_engines[i]->tracepoint_formats)
			return dp_engines[i]->tracepoint_formats(glob, cb, priv,
								 why, whylen);
	snprintf(why, whylen, "no engine knows the kernel's tracepoints");
	return -ENOTSUP;
}

bool dp_engine_tp_named(const char *tp, const char *event, size_t len)
{
	for (size_t i = 0; dp_engines[i]; i++)
		if (dp_engines[i]->tp_named &&
		    dp_engines[i]->tp_named(tp, event, len))
			return true;
	return false;
}
