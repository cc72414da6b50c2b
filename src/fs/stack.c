// SPDX-License-Identifier: GPL-2.0
/*
 * The stack tracer in the mount (kernel/trace/trace_stack.c's files):
 *
 *   stack_tracer_enabled  1 or 0: on or off; the kernel's switch is the
 *                         sysctl /proc/sys/kernel/stack_tracer_enabled,
 *                         which a mount cannot serve, so it is a file here
 *   stack_trace_filter    the functions checked, in set_ftrace_filter's
 *                         words (all of the program's when empty)
 *   stack_max_size        the deepest stack in bytes; writing sets it
 *                         (0 starts the search again)
 *   stack_trace           that stack, each entry with its depth and size
 *
 * On, the stack tracer's event (sym/tracer.h: ftrace/stack, listed in no
 * *_events file) is placed on the functions the filter selects, armed
 * raw like the function tracers' (tracer.c): the engine keeps each
 * process's deepest stack and makes a record only when it grows,
 * and the reader threads keep the deepest of all (output/tracer.h).  It
 * runs beside current_tracer, as the kernel's does.  The ptrace engine
 * checks the same in dprobe, at each stop.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fs/internal.h"
#include "lang/kstrto.h"

static const struct dp_tracer *stack_tracer(void)
{
	const struct dp_tracer *t = NULL;

	dp_tracer_by_name("stack", &t);
	return t;
}

/* The event out of the registry (the reader threads told first). */
static void remove_event(struct dp_fs *fs)
{
	char del[2 * DP_MAX_EVENT_NAME_LEN + 4];

	if (!fs->stack_ev)
		return;
	pthread_mutex_lock(&fs->buf_lock);
	fs->stack_id = 0;
	pthread_mutex_unlock(&fs->buf_lock);
	snprintf(del, sizeof(del), "-:%s/%s", fs->stack_ev->group,
		 fs->stack_ev->name);
	dp_registry_apply(&fs->reg, del, NULL, NULL);
	fs->stack_ev = NULL;
}

/* The event on @l's functions: one event, a probe on each. */
static int add_event(struct dp_fs *fs, const char *program,
		     struct dp_funclist *l)
{
	char **lines = NULL;
	size_t n = 0;
	int ret = dp_tracer_defs(stack_tracer(), program, l, &lines, &n);
	struct dp_event *ev = NULL;

	for (size_t i = 0; !ret && i < n; i++) {
		struct dp_probe *p = NULL;

		ret = dp_registry_apply(&fs->reg, lines[i], &p, NULL);
		if (!ret && p && !ev)
			ev = p->event;
	}
	for (size_t i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
	if (ev) {
		ev->builtin = true;
		dp_tracer_event_setup(ev);
		fs->stack_ev = ev;
	}
	if (ret || !ev) {
		remove_event(fs);
		return ret ? ret : -EINVAL;
	}
	pthread_mutex_lock(&fs->buf_lock);
	fs->stack_id = ev->id;
	pthread_mutex_unlock(&fs->buf_lock);
	return 0;
}

/*
 * The event as the switch and the filter say now, placed again: its
 * probes new, each process starts its search from nothing (the agent's
 * maximum goes back to 0 with a new probe), and the records it sends
 * are kept if deeper than stack_max_size.
 */
static int apply(struct dp_fs *fs)
{
	static const struct dp_funcsel none;
	struct dp_funclist l = { 0 };
	char *program = NULL;
	int ret = 0;

	if (fs->stack_on) {
		ret = dp_fs_select_funcs(fs, &fs->stack_filter, &none, &l,
					 &program);
		if (!ret && !l.n)
			ret = -EINVAL;
		if (!ret && l.n > DP_FUNCSEL_LIMIT)
			ret = -E2BIG;
	}
	if (!ret) {
		remove_event(fs);
		if (fs->stack_on)
			ret = add_event(fs, program, &l);
		if (ret)
			fs->stack_on = false;
	}
	dp_fs_funclist_free(&l);
	free(program);
	dp_fs_update_profile(fs);
	return dp_fs_rearm(fs) ? -EIO : ret;
}

/* A number as the kernel's kstrto*_from_user() takes it. */
static int number(const char *buf, size_t len, uint64_t *v)
{
	char tmp[32];

	if (!len || len >= sizeof(tmp))
		return -EINVAL;
	memcpy(tmp, buf, len);
	tmp[len] = '\0';
	return dp_kstrtoull(tmp, 10, v) ? -EINVAL : 0;
}

int dp_fs_stack_enable_write(struct dp_fs *fs, const char *buf, size_t len)
{
	uint64_t v;

	if (number(buf, len, &v))
		return -EINVAL;
	if ((v != 0) == fs->stack_on)
		return 0;
	fs->stack_on = v != 0;
	return apply(fs);
}

int dp_fs_stack_max_write(struct dp_fs *fs, const char *buf, size_t len)
{
	uint64_t v;

	if (number(buf, len, &v))
		return -EINVAL;
	pthread_mutex_lock(&fs->buf_lock);
	fs->stack_max.max_size = v;
	pthread_mutex_unlock(&fs->buf_lock);
	/* the processes keep their own maximum: they search again */
	return fs->stack_on ? apply(fs) : 0;
}

/* Each write adds rules (a `>` cleared them first). */
int dp_fs_stack_filter_write(struct dp_fs *fs, const char *buf, size_t len)
{
	struct dp_funcsel *s = &fs->stack_filter;
	char *text = strndup(buf, len), err[256];
	size_t before = s->n;
	int ret;

	if (!text)
		return -ENOMEM;
	ret = dp_funcsel_add(s, text, err, sizeof(err));
	free(text);
	if (!ret)
		ret = dp_fs_rules_check(fs, s, before);
	if (!ret && fs->stack_on)
		ret = apply(fs);
	if (ret)
		dp_funcsel_truncate(s, before);	/* the rules as they were */
	return ret;
}

int dp_fs_stack_filter_truncate(struct dp_fs *fs)
{
	dp_funcsel_free(&fs->stack_filter);
	return fs->stack_on ? apply(fs) : 0;
}

void dp_fs_stack_print(struct dp_fs *fs, int kind, FILE *out)
{
	/* the child drains every ring before it answers: the stacks of
	 * what the process did before this read are in, as in the
	 * kernel's, which checks at the hit */
	if (fs->stack_ev && (kind == F_STACK_MAX_SIZE || kind == F_STACK_TRACE))
		dp_fs_update_profile(fs);
	switch (kind) {
	case F_STACK_ENABLED:
		fprintf(out, "%d\n", fs->stack_on);
		break;
	case F_STACK_FILTER:
		dp_fs_sel_print(fs, &fs->stack_filter, false, out);
		break;
	case F_STACK_MAX_SIZE:
		pthread_mutex_lock(&fs->buf_lock);
		fprintf(out, "%llu\n",
			(unsigned long long)fs->stack_max.max_size);
		pthread_mutex_unlock(&fs->buf_lock);
		break;
	case F_STACK_TRACE:
		pthread_mutex_lock(&fs->buf_lock);
		dp_stack_max_print(out, &fs->stack_max, fs->stack_on);
		pthread_mutex_unlock(&fs->buf_lock);
		break;
	}
}

void dp_fs_stack_mark(struct dp_fs *fs, struct dp_event *ev)
{
	if (ev != fs->stack_ev)
		return;
	ev->enabled = false;
	ev->soft = ev->triggered = true;
	/* after the triggers' marks, which set the stack for their own */
	ev->stack = ev->stack_max = true;
}

void dp_fs_stack_record(struct dp_fs *fs, unsigned id,
			const struct dp_rec_meta *meta)
{
	pthread_mutex_lock(&fs->buf_lock);
	if (id && id == fs->stack_id)
		dp_stack_max_offer(&fs->stack_max, meta, dp_fs_symbolizer(fs));
	pthread_mutex_unlock(&fs->buf_lock);
}

void dp_fs_stack_fini(struct dp_fs *fs)
{
	dp_funcsel_free(&fs->stack_filter);
	dp_stack_max_clear(&fs->stack_max);
	fs->stack_ev = NULL;
	fs->stack_on = false;
}
