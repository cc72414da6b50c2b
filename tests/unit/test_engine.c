// SPDX-License-Identifier: GPL-2.0
/*
 * The engine chooser (src/engine/engine.c) in a made-up world: the agent
 * library there or not (or refused), the program dynamic, static,
 * set-user-ID or unreadable, tracefs there or not.  Each case checks the
 * engine chosen and the one-line reason, or the error as the CLI prints
 * it, and the launch-time fallback.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"

/* ---- the made-up world --------------------------------------------------- */

static struct {
	const char *agent;	/* NULL: not found */
	const char *refused;	/* non-NULL: $DPROBE_AGENT refused, why */
	int program;		/* DP_PROGRAM_* or -1 */
	const char *no_tracefs;	/* non-NULL: the kernel engine's error */
	int agent_lookups;
} w;

static char *fake_find_agent(char *why, size_t whylen)
{
	w.agent_lookups++;
	why[0] = '\0';
	if (w.refused) {
		snprintf(why, whylen, "%s", w.refused);
		return NULL;
	}
	return w.agent ? strdup(w.agent) : NULL;
}

static int fake_program(const char *path)
{
	cr_assert_str_eq(path, "/bin/prog");
	return w.program;
}

static int fake_kernel_ready(const struct dp_engine_opts *o, char *why,
			     size_t whylen)
{
	(void)o;
	if (!w.no_tracefs)
		return 0;
	snprintf(why, whylen, "%s", w.no_tracefs);
	return -ENOENT;
}

static const struct dp_engine_env fake = {
	.find_agent = fake_find_agent,
	.program = fake_program,
	.kernel_ready = fake_kernel_ready,
};

static char *argv_prog[] = { "prog", NULL };
static struct dp_registry empty_reg;
static struct dp_engine_opts o;
static struct dp_engine_choice ch;

/* A dynamically linked program to launch, the agent found. */
static void normal(void)
{
	memset(&w, 0, sizeof(w));
	w.agent = "/opt/dprobe/libdprobe.so";
	w.program = DP_PROGRAM_DYNAMIC;
	o = (struct dp_engine_opts){ .reg = &empty_reg, .argv = argv_prog,
				     .binary = "/bin/prog" };
}

TestSuite(engine_choose, .init = normal);

static void chose(const char *name, const char *reason)
{
	cr_assert_eq(dp_engine_choose(&ch, &o, &fake), 0, "error: %s", ch.why);
	cr_assert_str_eq(ch.ops->name, name);
	cr_assert_str_eq(ch.reason, reason);
}

static void refused(int err, const char *why)
{
	cr_assert_eq(dp_engine_choose(&ch, &o, &fake), err);
	cr_assert_str_eq(ch.why, why);
}

/* ---- auto ----------------------------------------------------------------- */

Test(engine_choose, dynamic_program_runs_on_the_agent)
{
	chose("agent", "agent: in-process engine (libdprobe.so found, "
	      "dynamically linked program)");
	cr_assert_str_eq(o.agent, "/opt/dprobe/libdprobe.so");
	cr_assert(!ch.strict);
}

Test(engine_choose, static_program_runs_on_ptrace)
{
	w.program = 0;
	chose("ptrace", "ptrace: the program is statically linked, the "
	      "in-process engine needs the dynamic loader");
}

Test(engine_choose, no_agent_library_runs_on_ptrace)
{
	w.agent = NULL;
	chose("ptrace", "ptrace: libdprobe.so was not found next to dprobe "
	      "nor in ../lib/dprobe/ from it, the in-process engine runs "
	      "from it");
	cr_assert_null(o.agent);
}

Test(engine_choose, follow_forks_runs_on_the_agent)
{
	o.follow = true;
	chose("agent", "agent: in-process engine (libdprobe.so found, "
	      "dynamically linked program)");
}

Test(engine_choose, setuid_program_runs_on_ptrace)
{
	w.program = DP_PROGRAM_DYNAMIC | DP_PROGRAM_SETID;
	chose("ptrace", "ptrace: the program is set-user-ID, it ignores the "
	      "LD_PRELOAD the in-process engine needs");
}

Test(engine_choose, unreadable_program_runs_on_ptrace)
{
	w.program = -1;
	chose("ptrace", "ptrace: the program cannot be read, the in-process "
	      "engine needs to know how it is linked");
}

Test(engine_choose, one_process_gets_the_agent_injected)
{
	pid_t pid = 42;

	o.argv = NULL;
	o.pids = &pid;
	o.npids = 1;
	w.program = 0;	/* not looked at: the process runs already */
	chose("agent", "agent: in-process engine (libdprobe.so found, "
	      "injected into the running process)");
}

Test(engine_choose, several_processes_run_on_ptrace)
{
	pid_t pids[] = { 42, 43 };

	o.argv = NULL;
	o.pids = pids;
	o.npids = 2;
	chose("ptrace", "ptrace: several processes given, the in-process "
	      "engine attaches to one at a time");
}

Test(engine_choose, refused_agent_is_an_error_even_with_f)
{
	w.refused = "$DPROBE_AGENT (x) is refused: it is not an absolute path";
	o.follow = true;
	refused(-EINVAL, w.refused);
}

Test(engine_choose, auto_never_picks_the_kernel_engine)
{
	w.program = 0;
	w.agent = NULL;
	cr_assert_eq(dp_engine_choose(&ch, &o, &fake), 0);
	cr_assert_str_neq(ch.ops->name, "kernel");
}

/* ---- named ---------------------------------------------------------------- */

Test(engine_choose, forced_agent)
{
	o.forced = dp_engine_by_name("agent");
	chose("agent", "agent: forced by --engine");
	cr_assert(ch.strict);
}

Test(engine_choose, forced_ptrace_does_not_look_for_the_agent)
{
	w.refused = "refused";
	o.forced = dp_engine_by_name("ptrace");
	chose("ptrace", "ptrace: forced by --engine");
	cr_assert_eq(w.agent_lookups, 0);
}

Test(engine_choose, forced_kernel)
{
	o.forced = dp_engine_by_name("kernel");
	chose("kernel", "kernel: forced by --engine");
}

Test(engine_choose, forced_agent_on_a_static_program_is_an_error)
{
	w.program = 0;
	o.forced = dp_engine_by_name("agent");
	refused(-EINVAL, "cannot use the in-process engine: the program is "
		"statically linked");
}

Test(engine_choose, forced_agent_with_f)
{
	o.follow = true;
	o.forced = dp_engine_by_name("agent");
	chose("agent", "agent: forced by --engine");
}

Test(engine_choose, kernel_without_tracefs_is_an_error)
{
	w.no_tracefs = "no tracefs at /nowhere ($DPROBE_TRACEFS): set it to "
		       "where tracefs is mounted, or unset it";
	o.forced = dp_engine_by_name("kernel");
	refused(-ENOENT, w.no_tracefs);
}

Test(engine_choose, kernel_places_need_tracefs_too)
{
	w.no_tracefs = "tracefs is not mounted";
	o.kernel = true;
	o.argv = NULL;
	refused(-ENOENT, w.no_tracefs);
}

Test(engine_choose, kernel_places_run_on_the_kernel_engine)
{
	o.kernel = true;
	o.argv = NULL;
	chose("kernel", "kernel: --kernel given, the places are in the kernel");
	cr_assert_eq(w.agent_lookups, 0);
}

Test(engine_choose, names)
{
	cr_assert_str_eq(dp_engine_names(), "agent, ptrace or kernel");
	cr_assert_null(dp_engine_by_name("auto"));
	cr_assert_null(dp_engine_by_name("bogus"));
	cr_assert_null(dp_engine_by_name(""));
	for (size_t i = 0; dp_engines[i]; i++)
		cr_assert_eq(dp_engine_by_name(dp_engines[i]->name),
			     dp_engines[i]);
}

/* ---- application tracepoints ---------------------------------------------- */

static struct dp_event tp_event = { .kind = DP_KIND_TRACEPOINT };
static struct dp_registry tp_reg = { .events = &tp_event };

Test(engine_choose, tracepoints_take_the_agent)
{
	o.reg = &tp_reg;
	chose("agent", "agent: the events include application tracepoints, "
	      "which only it enables");
	cr_assert(ch.strict);
}

Test(engine_choose, tracepoints_on_a_static_program_are_an_error)
{
	o.reg = &tp_reg;
	w.program = 0;
	refused(-EINVAL, "cannot use the in-process engine: the program is "
		"statically linked");
}

Test(engine_choose, tracepoints_refuse_forced_ptrace)
{
	o.reg = &tp_reg;
	o.forced = dp_engine_by_name("ptrace");
	refused(-EINVAL, "tracepoints are enabled by the in-process engine, "
		"not --engine ptrace");
}

Test(engine_choose, tracepoints_are_the_kernels_on_the_kernel_engine)
{
	o.reg = &tp_reg;
	o.forced = dp_engine_by_name("kernel");
	chose("kernel", "kernel: forced by --engine");
}

/* ---- syscall events (made from the ptrace engine's syscall stops) ------- */

static struct dp_event sys_event = { .kind = DP_KIND_TRACEPOINT,
				     .kernel = true };
static struct dp_registry sys_reg = { .events = &sys_event };

Test(engine_choose, syscall_events_take_ptrace)
{
	o.reg = &sys_reg;
	chose("ptrace", "ptrace: the events include syscall events, made from "
	      "the target's syscall stops");
	cr_assert(ch.strict);
}

Test(engine_choose, syscall_events_refuse_forced_agent)
{
	o.reg = &sys_reg;
	o.forced = dp_engine_by_name("agent");
	refused(-EINVAL, "the syscalls: events are made by the ptrace engine, "
		"not --engine agent");
}

Test(engine_choose, syscall_events_and_tracepoints_are_an_error)
{
	struct dp_event tp = { .kind = DP_KIND_TRACEPOINT, .next = &sys_event };
	struct dp_registry both = { .events = &tp };

	o.reg = &both;
	refused(-EINVAL, "the syscalls: events are made by the ptrace engine, "
		"which cannot enable application tracepoints");
}

Test(engine_choose, syscalls_are_the_kernels_with_kernel)
{
	o.reg = &sys_reg;
	o.kernel = true;
	chose("kernel", "kernel: --kernel given, the places are in the kernel");
}

/* ---- the launch-time fallback --------------------------------------------- */

static char why[512];

static bool fall(int err, const char *said)
{
	cr_assert_eq(dp_engine_choose(&ch, &o, &fake), 0);
	snprintf(why, sizeof(why), "%s", said);
	return dp_engine_fallback(&ch, &o, err, why, sizeof(why));
}

Test(engine_choose, a_probe_the_agent_cannot_arm_falls_back)
{
	cr_assert(fall(-ENOTSUP, "p:a/b prog:0x10: int3 needed"));
	cr_assert_str_eq(ch.ops->name, "ptrace");
	cr_assert_str_eq(why, "the in-process engine cannot trace this "
			 "(p:a/b prog:0x10: int3 needed); using the ptrace "
			 "engine");
	cr_assert_str_eq(ch.reason, "ptrace: the in-process engine cannot "
			 "trace this (p:a/b prog:0x10: int3 needed)");
}

Test(engine_choose, a_user_error_at_launch_does_not_fall_back)
{
	cr_assert(!fall(-EINVAL, "no symbol 'nope'"));
	cr_assert_str_eq(ch.ops->name, "agent");
	cr_assert_str_eq(why, "no symbol 'nope'");
}

Test(engine_choose, an_attach_failure_falls_back)
{
	pid_t pid = 42;

	o.argv = NULL;
	o.pids = &pid;
	o.npids = 1;
	cr_assert(fall(-EPERM, ""));
	cr_assert_str_eq(ch.ops->name, "ptrace");
	cr_assert_str_eq(why, "the in-process engine cannot trace this "
			 "(Operation not permitted); using the ptrace engine");
}

Test(engine_choose, another_agent_attached_does_not_fall_back)
{
	pid_t pid = 42;

	o.argv = NULL;
	o.pids = &pid;
	o.npids = 1;
	cr_assert(!fall(-EALREADY, "another dprobe is attached"));
	cr_assert_str_eq(why, "another dprobe is attached");
}

Test(engine_choose, a_forced_engine_does_not_fall_back)
{
	o.forced = dp_engine_by_name("agent");
	cr_assert(!fall(-ENOTSUP, ""));
	cr_assert_str_eq(ch.ops->name, "agent");
	cr_assert_str_eq(why, strerror(ENOTSUP));
}

Test(engine_choose, ptrace_has_nothing_to_fall_back_to)
{
	w.program = 0;
	cr_assert(!fall(-ENOTSUP, "cannot"));
	cr_assert_str_eq(ch.ops->name, "ptrace");
	cr_assert_str_eq(why, "cannot");
}
