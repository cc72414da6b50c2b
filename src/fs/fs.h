/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `dprobe mount`: a FUSE file system with tracefs' layout (kprobe_events,
 * events/GROUP/EVENT/enable, trace, trace_pipe...) served by dprobe's own
 * ptrace engine for one process tree.
 */
#ifndef DPROBE_FS_H
#define DPROBE_FS_H

#include <stdbool.h>
#include <sys/types.h>

/* Where the events of events/syscalls/ come from (--syscalls). */
enum dp_fs_syscalls {
	DP_FS_SYS_AUTO,		/* the kernel where it can, else ptrace */
	DP_FS_SYS_KERNEL,	/* the kernel's (root, its tracefs) */
	DP_FS_SYS_PTRACE,	/* the ptrace engine's syscall stops */
	DP_FS_SYS_NONE,		/* no events/syscalls/ */
};

struct dp_fs_opts {
	const char *mountpoint;
	pid_t pid;		/* the target: attached, or started by the caller */
	bool own_child;		/* @pid is our child (-- CMD): reap it */
	const char *binary;	/* the target's executable (symbol places) */
	/* definitions of the target's static events (its application
	 * tracepoints), made at the start as tracefs has the kernel's */
	char *const *builtin;
	size_t nbuiltin;
	/* the files a definition's MOD: may name by base name (the target's
	 * libraries), for definitions by name (sym/debugdef.h) */
	char *const *objs;
	size_t nobjs;
	enum dp_fs_syscalls syscalls;
};

/*
 * Mount, serve until unmounted (Ctrl-C, SIGTERM, `fusermount3 -u`), then
 * detach every probe and unmount.  Returns 0, or -errno after printing
 * one sentence saying why (no /dev/fuse, not allowed to mount...).
 * *@status is the command's wait status when @own_child (waited for).
 */
int dp_fs_run(const struct dp_fs_opts *o, int *status);

#endif
