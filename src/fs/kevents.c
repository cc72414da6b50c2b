// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's syscall events in a dprobe mount: events/syscalls/
 * sys_enter_* and sys_exit_*, with the kernel's fields and formats, for
 * the served process tree only.  Two sources, chosen once at the start
 * (--syscalls):
 *
 *   - the kernel: the kernel lane of session.c arms them on the kernel
 *     engine.  Their formats are read by a child in a mount namespace of
 *     its own, so that a tracefs it has to mount (the kernel's may not be
 *     mounted, or hidden, as when the kernel's selftests run against the
 *     mount) is seen by nobody else; the child sends them up a pipe and
 *     the events are made in the registry before the mount serves.
 *   - the ptrace engine's syscall stops, without root or the kernel's
 *     tracefs: the formats from the architecture's table
 *     (event/syscalls.h), the events armed by the process lane, which
 *     then runs on the ptrace engine.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/engine.h"
#include "event/syscalls.h"
#include "fs/internal.h"

#define KEV_GLOB	"syscalls:*"
#define KEV_MAX		(1u << 20)	/* one format file, at most */

/* A record up the pipe: three lengths, then group, name and format. */
static int put(int fd, const char *s)
{
	uint32_t n = (uint32_t)strlen(s);

	return write(fd, &n, 4) == 4 && write(fd, s, n) == (ssize_t)n ? 0 :
	       -EPIPE;
}

static int send_one(void *priv, const char *group, const char *name,
		    const char *format)
{
	int fd = *(int *)priv;

	return put(fd, group) || put(fd, name) || put(fd, format) ? -EPIPE : 0;
}

static __attribute__((noreturn)) void walk(int fd)
{
	char why[512] = "";
	int ret;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (unshare(CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
		snprintf(why, sizeof(why), "no mount namespace of its own: %s",
			 strerror(errno));
		ret = -EPERM;
	} else {
		ret = dp_engine_tracepoint_formats(KEV_GLOB, send_one, &fd, why,
						   sizeof(why));
	}
	/* an empty group ends the walk; then the reason, if it failed */
	put(fd, "");
	put(fd, ret ? (why[0] ? why : strerror(-ret)) : "");
	_exit(ret ? 1 : 0);
}

static char *get(FILE *f)
{
	uint32_t n;
	char *s;

	if (fread(&n, 4, 1, f) != 1 || n > KEV_MAX || !(s = malloc(n + 1)))
		return NULL;
	if (fread(s, 1, n, f) != n) {
		free(s);
		return NULL;
	}
	s[n] = '\0';
	return s;
}

/* Read the child's events into the registry; its reason if it failed. */
static char *take(struct dp_fs *fs, FILE *f, unsigned *n)
{
	char *group, *name, *format;

	while ((group = get(f))) {
		if (!*group) {
			free(group);
			return get(f);
		}
		name = get(f);
		format = name ? get(f) : NULL;
		if (format && dp_registry_kernel_tp(&fs->reg, group, name,
						    format))
			++*n;
		free(group);
		free(name);
		free(format);
		if (!format)
			break;
	}
	return strdup("the reader of the kernel's formats stopped");
}

/* The kernel's formats: how many events were made; *@why if none. */
static unsigned from_kernel(struct dp_fs *fs, char **why)
{
	int fds[2], st;
	unsigned n = 0;
	FILE *f;
	pid_t pid;

	*why = NULL;
	if (geteuid()) {
		*why = strdup("the kernel's tracefs is root's");
		return 0;
	}
	if (pipe2(fds, O_CLOEXEC))
		return 0;
	fflush(NULL);
	pid = fork();
	if (!pid) {
		close(fds[0]);
		walk(fds[1]);
	}
	close(fds[1]);
	f = pid > 0 ? fdopen(fds[0], "r") : NULL;
	if (f) {
		*why = take(fs, f, &n);
		fclose(f);
	} else {
		close(fds[0]);
	}
	if (pid > 0)
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
	return n;
}

void dp_fs_kernel_events(struct dp_fs *fs)
{
	enum dp_fs_syscalls src = fs->o->syscalls;
	char *why = NULL;

	fs->sys_lane = DP_LANE_KERNEL;
	if (src == DP_FS_SYS_NONE)
		return;
	if (src != DP_FS_SYS_PTRACE && from_kernel(fs, &why)) {
		free(why);
		return;
	}
	if (src == DP_FS_SYS_KERNEL) {
		fprintf(stderr, "dprobe mount: no syscalls/ events: %s\n",
			why && *why ? why : "the kernel's are not available");
	} else {
		/* without the kernel: said when the kernel was expected */
		if (why && *why && !geteuid())
			fprintf(stderr, "dprobe mount: syscalls/ events from "
				"the traced processes' syscall stops (%s)\n",
				why);
		fs->sys_lane = DP_LANE_PROC;
		dp_registry_syscalls(&fs->reg);
	}
	free(why);
}
