// SPDX-License-Identifier: GPL-2.0
/*
 * The state behind a mount, as a fresh tracefs has it: no events, an
 * empty buffer of the default size, tracing on.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>

#include "fs/internal.h"

void dp_fs_init(struct dp_fs *fs, const struct dp_fs_opts *o)
{
	memset(fs, 0, sizeof(*fs));
	fs->o = o;
	fs->ncpus = get_nprocs();
	fs->limit = (size_t)DP_FS_DEFAULT_KB << 10;
	fs->tracing_on = true;
	fs->child_fd = -1;
	fs->cmd_fd = -1;
	pthread_mutex_init(&fs->lock, NULL);
	pthread_mutex_init(&fs->buf_lock, NULL);
	pthread_cond_init(&fs->buf_cond, NULL);
	pthread_mutex_init(&fs->mgr_lock, NULL);
	pthread_cond_init(&fs->mgr_cond, NULL);
	dp_registry_init(&fs->reg);
	dp_resolver_init(&fs->res, o->binary, false);
	/* every definition is checked against the target's files */
	fs->reg.resolve = dp_resolve_cb;
	fs->reg.resolve_priv = &fs->res;
	for (size_t i = 0; i < o->nbuiltin; i++) {
		struct dp_probe *p = NULL;

		if (!dp_registry_apply(&fs->reg, o->builtin[i], &p, NULL) && p)
			p->event->builtin = true;
	}
}

void dp_fs_fini(struct dp_fs *fs)
{
	dp_fs_buf_clear(fs);
	dp_fs_log_clear(fs);
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
}
