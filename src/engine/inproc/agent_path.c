// SPDX-License-Identifier: GPL-2.0
/*
 * Where libdprobe.so is.  dprobe (often root) preloads or injects that
 * file into the processes it traces, so it is taken only from places
 * whoever installed dprobe chose, never from one an unprivileged user
 * could name.  In order:
 *
 *   $DPROBE_AGENT                    an explicit override, honoured only
 *                                    as an absolute path to a root-owned
 *                                    regular file that only root can
 *                                    replace (the file and every directory
 *                                    above it not writable by group or
 *                                    others); otherwise an error, never
 *                                    another copy in its place
 *   DIR/libdprobe.so                 DIR holding the running dprobe: the
 *                                    build tree
 *   DIR/../lib/dprobe/libdprobe.so   where `make install` puts it (bin/ ->
 *                                    lib/dprobe/), relative so that a tree
 *                                    installed under DESTDIR, or moved,
 *                                    finds its own copy
 *   PREFIX/lib/dprobe/libdprobe.so   the install path this dprobe was built
 *                                    for, when it is root's alone: a copy
 *                                    of the installed dprobe (in /tmp, in
 *                                    a container's bind mount) finds it
 */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/inproc/inproc.h"

#define AGENT_ENV	"DPROBE_AGENT"
#define AGENT_NAME	"libdprobe.so"
#define AGENT_INSTALLED	"../lib/dprobe/" AGENT_NAME
#ifndef DPROBE_AGENTDIR
#define DPROBE_AGENTDIR	"/usr/local/lib/dprobe"
#endif

/* Only root (or nobody) can change what @st names. */
static bool root_only(const struct stat *st)
{
	return st->st_uid == 0 && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

/*
 * Why @real (a resolved absolute path) is not a file only root controls,
 * or NULL.  Every directory up to / is checked too: a user who can
 * write one of them could swap the file after this check.
 */
static const char *not_roots_file(const char *real)
{
	char dir[PATH_MAX], *slash;
	struct stat st;

	if (stat(real, &st))
		return "it cannot be read";
	if (!S_ISREG(st.st_mode))
		return "it is not a regular file";
	if (!root_only(&st))
		return "it is not owned by root, or group or others can write it";
	snprintf(dir, sizeof(dir), "%s", real);
	do {
		slash = strrchr(dir, '/');
		slash[slash == dir] = '\0';	/* "/a" becomes "/" */
		if (stat(dir, &st) || !root_only(&st))
			return "a directory above it is not root's alone";
	} while (dir[1]);
	return NULL;
}

/* LD_PRELOAD splits its value at colons and blanks. */
static const char *not_preloadable(const char *path)
{
	return strpbrk(path, ": \t\n") ?
		"LD_PRELOAD cannot hold a path with a colon or a blank" : NULL;
}

/* $DPROBE_AGENT's file, or NULL with the reason it is refused in @why. */
static char *from_env(const char *env, char *why, size_t whylen)
{
	const char *bad = NULL;
	char *real = NULL;

	if (env[0] != '/')
		bad = "it is not an absolute path";
	else if (!(real = realpath(env, NULL)))
		bad = "it cannot be resolved";
	else if (!(bad = not_roots_file(real)))
		bad = not_preloadable(real);
	if (!bad)
		return real;
	snprintf(why, whylen, "$" AGENT_ENV " (%s) is refused: %s; unset it "
		 "to use dprobe's own copy", env, bad);
	free(real);
	return NULL;
}

/* @rel resolved against the running dprobe's directory, if it is a file. */
static char *beside_exe(const char *rel)
{
	char exe[PATH_MAX], *slash, *path, *real;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	struct stat st;

	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	if (asprintf(&path, "%s/%s", exe, rel) < 0)
		return NULL;
	real = realpath(path, NULL);
	free(path);
	if (real && (stat(real, &st) || !S_ISREG(st.st_mode) ||
		     access(real, R_OK))) {
		free(real);
		real = NULL;
	}
	return real;
}

/* The install path's copy, if only root can have put it there. */
static char *installed(void)
{
	char *real = realpath(DPROBE_AGENTDIR "/" AGENT_NAME, NULL);

	if (real && not_roots_file(real)) {
		free(real);
		real = NULL;
	}
	return real;
}

char *dp_inproc_find_agent(char *why, size_t whylen)
{
	const char *env = secure_getenv(AGENT_ENV), *bad;
	char *path;

	why[0] = '\0';
	if (env && *env)
		return from_env(env, why, whylen);
	path = beside_exe(AGENT_NAME);
	if (!path)
		path = beside_exe(AGENT_INSTALLED);
	if (!path)
		path = installed();
	if (path && (bad = not_preloadable(path))) {
		fprintf(stderr, "dprobe: cannot use %s: %s\n", path, bad);
		free(path);
		path = NULL;
	}
	return path;
}
