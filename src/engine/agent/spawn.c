// SPDX-License-Identifier: GPL-2.0
/*
 * Children that run on their parent's memory until they exec: vfork(),
 * and glibc's posix_spawn(), which system() and popen() use (a clone
 * with CLONE_VM | CLONE_VFORK).  Such a child shares the parent thread's
 * stack and thread-local data, so a probe it hits before its exec would
 * find the parent's ring there and be recorded as the parent's.
 *
 * The preloaded agent puts these functions in front of the C library's
 * (a process the agent was injected into keeps its own bindings) and
 * marks the calling thread as spawning (events.c): its hits then cost
 * one gettid() that tells the child from the parent, and the child's are
 * not recorded.  vfork() cannot be wrapped by a call (the child must not
 * return through a frame of ours), so it only marks the thread and jumps
 * to the real one; the parent's first hit after it ends the check.
 * A child that runs a program the agent cannot be in (a static one) is
 * handed to dprobe once posix_spawn() returned (exec.c).
 */
#include <dlfcn.h>
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "engine/agent/agent.h"
#include "engine/agent/events.h"

typedef int (*spawn_fn)(pid_t *, const char *,
			const posix_spawn_file_actions_t *,
			const posix_spawnattr_t *, char *const[], char *const[]);

static spawn_fn real_spawn, real_spawnp;
static int (*real_system)(const char *);
static FILE *(*real_popen)(const char *, const char *);
/* read by vfork() below: never NULL once the library is loaded */
__attribute__((used)) static pid_t (*real_vfork)(void);

static pid_t vfork_by_fork(void)
{
	return fork();
}

__attribute__((constructor)) static void spawn_load(void)
{
	real_spawn = (spawn_fn)dlsym(RTLD_NEXT, "posix_spawn");
	real_spawnp = (spawn_fn)dlsym(RTLD_NEXT, "posix_spawnp");
	real_system = (int (*)(const char *))dlsym(RTLD_NEXT, "system");
	real_popen = (FILE *(*)(const char *, const char *))
		dlsym(RTLD_NEXT, "popen");
	real_vfork = (pid_t (*)(void))dlsym(RTLD_NEXT, "vfork");
	if (!real_vfork)
		real_vfork = vfork_by_fork;
}

__attribute__((used)) DP_HIDDEN void dp_spawn_vforking(void)
{
	dp_ev_spawning(EV_VFORK, true);
}

/* Marks the thread, then the C library's vfork() as if called directly
 * (the return address on the stack is the caller's). */
DP_EXPORT __attribute__((naked)) pid_t vfork(void)
{
	__asm__ volatile("sub $8, %rsp\n\t"
			 "call dp_spawn_vforking\n\t"
			 "add $8, %rsp\n\t"
			 "jmp *real_vfork(%rip)\n\t");
}

DP_EXPORT int posix_spawn(pid_t *pid, const char *path,
			  const posix_spawn_file_actions_t *fa,
			  const posix_spawnattr_t *attr, char *const argv[],
			  char *const envp[])
{
	int ret;

	if (!real_spawn)
		return ENOSYS;
	dp_ev_spawning(EV_SPAWN, true);
	ret = real_spawn(pid, path, fa, attr, argv, envp);
	dp_ev_spawning(EV_SPAWN, false);
	if (!ret && pid)
		dp_exec_spawned(*pid, path, false, envp);
	return ret;
}

DP_EXPORT int posix_spawnp(pid_t *pid, const char *file,
			   const posix_spawn_file_actions_t *fa,
			   const posix_spawnattr_t *attr, char *const argv[],
			   char *const envp[])
{
	int ret;

	if (!real_spawnp)
		return ENOSYS;
	dp_ev_spawning(EV_SPAWN, true);
	ret = real_spawnp(pid, file, fa, attr, argv, envp);
	dp_ev_spawning(EV_SPAWN, false);
	if (!ret && pid)
		dp_exec_spawned(*pid, file, true, envp);
	return ret;
}

DP_EXPORT int system(const char *cmd)
{
	int ret;

	if (!real_system)
		return -1;
	dp_ev_spawning(EV_SPAWN, true);
	ret = real_system(cmd);
	dp_ev_spawning(EV_SPAWN, false);
	return ret;
}

DP_EXPORT FILE *popen(const char *cmd, const char *mode)
{
	FILE *f;

	if (!real_popen)
		return NULL;
	dp_ev_spawning(EV_SPAWN, true);
	f = real_popen(cmd, mode);
	dp_ev_spawning(EV_SPAWN, false);
	return f;
}
