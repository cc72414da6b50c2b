// SPDX-License-Identifier: GPL-2.0
/*
 * The private tracefs instance of a run, and the leftovers of runs that
 * died without removing theirs (dprobe cleanup).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/kernel/internal.h"

int dp_kinst_create(const struct dp_tfs *t, pid_t pid, char *rel, size_t len)
{
	char p[PATH_MAX];

	snprintf(rel, len, "instances/" DP_KINST_PREFIX "%d", (int)pid);
	if (dp_tfs_path(t, rel, p, sizeof(p)))
		return -ENAMETOOLONG;
	return mkdir(p, 0700) ? -errno : 0;
}

int dp_kinst_remove(const struct dp_tfs *t, const char *rel)
{
	char p[PATH_MAX];

	/*
	 * No disabling first: the kernel disables an instance's events as
	 * it removes it, and refuses (EBUSY) while a file of it is open, so
	 * the instance of a live run (one we took for dead: its pid is in
	 * another pid namespace) is left as it was.
	 */
	if (dp_tfs_path(t, rel, p, sizeof(p)))
		return -ENAMETOOLONG;
	if (rmdir(p) && errno != ENOENT)
		return -errno;
	return 0;
}

int dp_kevent_delete(const struct dp_tfs *t, const char *file,
		     const char *group, const char *event)
{
	char cmd[2 * DP_MAX_EVENT_NAME_LEN + 8];

	snprintf(cmd, sizeof(cmd), "-:%s/%s", group, event);
	return dp_tfs_append(t, file, cmd);
}

/*
 * Whether @pid is a dprobe still running (its instance is in use).  Not
 * ours: cleanup runs before a run creates anything, so what bears our
 * pid is a dead run's whose pid we were given again.
 */
static bool dprobe_alive(pid_t pid)
{
	char p[64], exe[PATH_MAX];
	const char *base;
	ssize_t n;

	if (pid == getpid())
		return false;
	snprintf(p, sizeof(p), "/proc/%d/exe", (int)pid);
	n = readlink(p, exe, sizeof(exe) - 1);
	if (n < 0)
		return false;
	exe[n] = '\0';
	base = strrchr(exe, '/');
	base = base ? base + 1 : exe;
	return !strncmp(base, "dprobe", 6) && !strchr(base + 6, '/');
}

static void report(FILE *out, const char *what, const char *name)
{
	if (out)
		fprintf(out, "removed %s %s\n", what, name);
}

static int clean_instances(const struct dp_tfs *t, FILE *out)
{
	char p[PATH_MAX], rel[PATH_MAX];
	struct dirent *d;
	DIR *dir;
	int n = 0;

	if (dp_tfs_path(t, "instances", p, sizeof(p)) || !(dir = opendir(p)))
		return 0;
	while ((d = readdir(dir))) {
		pid_t pid = dp_kinst_pid(d->d_name);

		if (!pid || dprobe_alive(pid))
			continue;
		snprintf(rel, sizeof(rel), "instances/%s", d->d_name);
		if (!dp_kinst_remove(t, rel)) {
			report(out, "instance", rel);
			n++;
		}
	}
	closedir(dir);
	return n;
}

/* Events of dead runs' groups in @file ("p:GROUP/EVENT ..." lines). */
static int clean_events(const struct dp_tfs *t, const char *file, FILE *out)
{
	char *text, *line, *save = NULL, grp[DP_MAX_EVENT_NAME_LEN];
	char ev[DP_MAX_EVENT_NAME_LEN], name[2 * DP_MAX_EVENT_NAME_LEN + 2];
	int n = 0;

	if (dp_tfs_read(t, file, &text, NULL))
		return 0;
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':'), *slash, *sp;
		pid_t pid;

		if (!colon || !(slash = strchr(colon, '/')))
			continue;
		sp = strchr(slash, ' ');
		if (!sp || slash - colon - 1 >= (long)sizeof(grp) ||
		    sp - slash - 1 >= (long)sizeof(ev))
			continue;
		snprintf(grp, sizeof(grp), "%.*s", (int)(slash - colon - 1),
			 colon + 1);
		snprintf(ev, sizeof(ev), "%.*s", (int)(sp - slash - 1), slash + 1);
		pid = dp_kgroup_pid(grp);
		if (!pid || dprobe_alive(pid))
			continue;
		/* a multi-probe event is listed once per probe: one delete */
		if (dp_kevent_delete(t, file, grp, ev))
			continue;
		snprintf(name, sizeof(name), "%s/%s", grp, ev);
		report(out, file[0] == 'u' ? "uprobe event" : "kprobe event",
		       name);
		n++;
	}
	free(text);
	return n;
}

int dp_kcleanup(FILE *out, char *why, size_t whylen)
{
	struct dp_tfs t;
	int err = dp_tfs_find(&t, why, whylen), n;

	if (err)
		return err;
	/* instances first: their enabled events could not be deleted */
	n = clean_instances(&t, out);
	n += clean_events(&t, "uprobe_events", out);
	n += clean_events(&t, "kprobe_events", out);
	return n;
}

int dp_kernel_cleanup(FILE *report)
{
	char why[512];
	int n = dp_kcleanup(report, why, sizeof(why));

	if (n < 0)
		fprintf(stderr, "dprobe: %s\n", why);
	return n;
}
