// SPDX-License-Identifier: GPL-2.0
/*
 * The state behind a mount, as a fresh tracefs has it: no events, an
 * empty buffer of the default size, tracing on.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "fs/internal.h"
#include "sym/proc.h"

/*
 * A definition is checked against the target's files; a raw address
 * (MEMADDR) also against the running process, as the kernel checks one
 * against its text when the line is written: one in no object's code is
 * refused then, not when its event is enabled.
 */
static int fs_resolve(void *priv, const char *line, struct dp_probe_def *def,
		      struct dp_probe *probe, struct dp_error *err)
{
	struct dp_fs *fs = priv;
	struct dp_proc_res res = { 0 };
	struct dp_proc *p;
	char why[256];
	int ret = dp_resolve_cb(&fs->res, line, def, probe, err);

	if (ret || def->kind != DP_KIND_KPROBE || def->place.symbol ||
	    atomic_load(&fs->target_gone) ||
	    dp_proc_open(fs->o->pid, &p, why, sizeof(why)))
		return ret;
	ret = dp_proc_resolve(p, line, def, &res, err);
	dp_proc_res_free(&res);
	dp_proc_close(p);
	/* register_kprobe() refuses an address outside text: EINVAL */
	if (ret && err && err->code == DP_ERR_BAD_PROBE_ADDR)
		err->code = DP_ERR_FAIL_REG_PROBE;
	return ret;
}

void dp_fs_follow_exec(struct dp_fs *fs)
{
	char link[64], now[PATH_MAX];
	ssize_t n;

	if (atomic_load(&fs->target_gone))
		return;
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)fs->o->pid);
	n = readlink(link, now, sizeof(now) - 1);
	if (n <= 0)
		return;
	now[n] = '\0';
	/* a program deleted since it started is still the same one */
	if (strstr(now, " (deleted)") || !strcmp(now, fs->exe))
		return;
	memcpy(fs->exe, now, (size_t)n + 1);
	fs->res.default_binary = fs->exe;
	dp_debugdef_free(fs->dbg);
	fs->dbg = NULL;
}

void dp_fs_init(struct dp_fs *fs, const struct dp_fs_opts *o)
{
	memset(fs, 0, sizeof(*fs));
	fs->o = o;
	fs->ncpus = get_nprocs();
	fs->limit = (size_t)DP_FS_DEFAULT_KB << 10;
	fs->cpumask_bits = dp_fs_possible_cpus();
	dp_fs_cpumask_all(fs->cpumask, fs->cpumask_bits);
	fs->tracing_on = true;
	fs->trace_flags = DP_FS_OPT_DEFAULT;
	dp_tracer_opts_init(&fs->tr_opts);
	for (int i = 0; i < 2; i++)
		fs->lanes[i] = (struct dp_fs_lane){ .fs = fs, .which = i,
						    .child_fd = -1,
						    .cmd_fd = -1 };
	pthread_mutex_init(&fs->lock, NULL);
	pthread_mutex_init(&fs->buf_lock, NULL);
	pthread_cond_init(&fs->buf_cond, NULL);
	pthread_mutex_init(&fs->mgr_lock, NULL);
	pthread_cond_init(&fs->mgr_cond, NULL);
	pthread_mutex_init(&fs->inst_lock, NULL);
	dp_registry_init(&fs->reg);
	dp_fs_marker_init(fs);
	dp_resolver_init(&fs->res, o->binary, false);
	snprintf(fs->exe, sizeof(fs->exe), "%s", o->binary ? o->binary : "");
	/* every definition is checked against the target's files */
	fs->reg.resolve = fs_resolve;
	fs->reg.resolve_priv = fs;
	for (size_t i = 0; i < o->nbuiltin; i++) {
		struct dp_probe *p = NULL;

		if (!dp_registry_apply(&fs->reg, o->builtin[i], &p, NULL) && p)
			p->event->builtin = true;
	}
}

void dp_fs_fini(struct dp_fs *fs)
{
	dp_fs_inst_fini(fs);
	dp_fs_buf_fini(fs);
	dp_fs_log_clear(fs);
	dp_fs_tracer_fini(fs);
	dp_fs_stack_fini(fs);
	dp_fs_trigger_fini(fs);
	dp_fs_hist_fini(fs);
	dp_fs_marker_fini(fs);
	dp_registry_free(&fs->reg);
	dp_resolver_free(&fs->res);
	dp_debugdef_free(fs->dbg);
	free(fs->counts);
	free(fs->ever_enabled);
	pthread_mutex_destroy(&fs->lock);
	pthread_mutex_destroy(&fs->buf_lock);
	pthread_cond_destroy(&fs->buf_cond);
	pthread_mutex_destroy(&fs->mgr_lock);
	pthread_cond_destroy(&fs->mgr_cond);
	pthread_mutex_destroy(&fs->inst_lock);
}
