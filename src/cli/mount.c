// SPDX-License-Identifier: GPL-2.0
/*
 * dprobe mount DIR (-p PID | -- CMD [ARGS...]): tracefs' files for one
 * process tree, on a FUSE mount (src/fs/).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/named.h"
#include "fs/fs.h"

struct mount_opts {
	const char *dir;
	pid_t pid;
	char **cmd;
	enum dp_fs_syscalls syscalls;
};

static int parse_syscalls(const char *s, enum dp_fs_syscalls *v)
{
	static const char *const names[] = {
		[DP_FS_SYS_AUTO] = "auto", [DP_FS_SYS_KERNEL] = "kernel",
		[DP_FS_SYS_PTRACE] = "ptrace", [DP_FS_SYS_NONE] = "none",
	};

	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(s, names[i])) {
			*v = (enum dp_fs_syscalls)i;
			return 0;
		}
	}
	fprintf(stderr, "dprobe mount: --syscalls: '%s' is not auto, kernel, "
		"ptrace or none\n", s);
	return -1;
}

static int parse_pid(const char *s, pid_t *pid)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*end || end == s || v <= 0 || v > INT_MAX) {
		fprintf(stderr, "dprobe mount: bad process id '%s'\n", s);
		return -1;
	}
	*pid = (pid_t)v;
	return 0;
}

static int parse_opts(int argc, char **argv, struct mount_opts *o)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--")) {
			if (i + 1 < argc)
				o->cmd = argv + i + 1;
			break;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			dp_usage(stdout, "mount");
			exit(DP_EXIT_OK);
		} else if (!strcmp(a, "-p") || !strcmp(a, "--pid")) {
			if (i + 1 == argc || parse_pid(argv[++i], &o->pid))
				return -1;
		} else if (!strcmp(a, "--syscalls")) {
			if (i + 1 == argc || parse_syscalls(argv[++i], &o->syscalls))
				return -1;
		} else if (!strncmp(a, "--syscalls=", 11)) {
			if (parse_syscalls(a + 11, &o->syscalls))
				return -1;
		} else if (!strncmp(a, "-p", 2)) {
			if (parse_pid(a + 2, &o->pid))
				return -1;
		} else if (a[0] == '-' || o->dir) {
			fprintf(stderr, "dprobe mount: unexpected '%s'\n", a);
			return -1;
		} else {
			o->dir = a;
		}
	}
	if (!o->dir) {
		fprintf(stderr, "dprobe mount: no mount point given\n");
		return -1;
	}
	if (!o->cmd == !o->pid) {
		fprintf(stderr, "dprobe mount: give either -p PID or -- CMD\n");
		return -1;
	}
	return 0;
}

/* What execvp() would run for @name, or NULL. */
static char *find_program(const char *name)
{
	const char *path = getenv("PATH");
	char *copy, *dir, *save = NULL, buf[PATH_MAX], *res = NULL;

	if (strchr(name, '/'))
		return realpath(name, NULL);
	copy = strdup(path ? path : "/usr/local/bin:/usr/bin:/bin");
	for (dir = strtok_r(copy, ":", &save); dir && !res;
	     dir = strtok_r(NULL, ":", &save)) {
		struct stat st;

		snprintf(buf, sizeof(buf), "%s/%s", *dir ? dir : ".", name);
		if (!stat(buf, &st) && S_ISREG(st.st_mode) && !access(buf, X_OK))
			res = realpath(buf, NULL);
	}
	free(copy);
	return res;
}

static char *process_binary(pid_t pid)
{
	char link[64];

	if (kill(pid, 0) && errno == ESRCH) {
		fprintf(stderr, "dprobe mount: no process %d\n", (int)pid);
		return NULL;
	}
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	/* the path itself: /proc/PID/exe goes away with the process */
	return realpath(link, NULL);
}

/* A plain fork/exec: the command shares dprobe's terminal and files. */
static pid_t start_command(char **cmd)
{
	pid_t pid = fork();

	if (pid < 0) {
		fprintf(stderr, "dprobe mount: fork: %s\n", strerror(errno));
		return -1;
	}
	if (!pid) {
		execvp(cmd[0], cmd);
		fprintf(stderr, "dprobe mount: cannot execute %s: %s\n", cmd[0],
			strerror(errno));
		_exit(127);
	}
	return pid;
}

static bool is_dir(const char *path)
{
	struct stat st;

	if (stat(path, &st) || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "dprobe mount: %s is not a directory\n", path);
		return false;
	}
	return true;
}

/*
 * The target's application tracepoints, as the events a tracefs has
 * before anyone writes a probe: "GROUP:NAME [Tracepoint event]" lines of
 * `dprobe list`, each turned into its t: definition.
 */
static void static_events(const struct dp_cli_objs *o,
			  struct dp_cli_lines *out)
{
	struct dp_cli_objs objs = *o;
	char *text = NULL, *save = NULL, name[256];
	size_t len = 0;
	FILE *f;

	if (!(f = open_memstream(&text, &len)))
		return;
	for (size_t i = 0; i < objs.n; i++)
		dp_cli_list_named(objs.paths[i], NULL, f);
	fclose(f);
	for (char *l = strtok_r(text, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		struct dp_cli_lines defs = { 0 };

		if (!strstr(l, "[Tracepoint event]") ||
		    sscanf(l, "%255s", name) != 1 ||
		    dp_cli_expand(name, &objs, &defs))
			continue;
		for (size_t k = 0; k < defs.n; k++) {
			char **v = realloc(out->v, (out->n + 1) * sizeof(*v));

			if (!v)
				break;
			out->v = v;
			out->v[out->n++] = defs.v[k];
			defs.v[k] = NULL;
		}
		dp_cli_lines_free(&defs);
	}
	free(text);
}

int dp_cmd_mount(int argc, char **argv)
{
	struct mount_opts mo = { 0 };
	struct dp_cli_lines tps = { 0 };
	struct dp_cli_objs objs = { 0 };
	struct dp_fs_opts fo;
	char *binary;
	int status = 0, err;

	if (parse_opts(argc, argv, &mo)) {
		dp_usage(stderr, "mount");
		return DP_EXIT_USAGE;
	}
	if (!is_dir(mo.dir))
		return DP_EXIT_REJECTED;
	binary = mo.cmd ? find_program(mo.cmd[0]) : process_binary(mo.pid);
	if (!binary) {
		if (mo.cmd)
			fprintf(stderr, "dprobe mount: cannot execute %s: %s\n",
				mo.cmd[0], strerror(ENOENT));
		return mo.cmd ? 127 : DP_EXIT_REJECTED;
	}
	if (mo.cmd) {
		mo.pid = start_command(mo.cmd);
		if (mo.pid < 0) {
			free(binary);
			return DP_EXIT_REJECTED;
		}
	}
	/* the target's files: its static events, and where a definition's
	 * MOD: is looked up */
	if (mo.cmd ? dp_cli_objs_of_binary(&objs, binary) :
	    dp_cli_objs_of_pid(&objs, mo.pid))
		objs = (struct dp_cli_objs){ 0 };
	static_events(&objs, &tps);
	fo = (struct dp_fs_opts){ .mountpoint = mo.dir, .pid = mo.pid,
				  .own_child = mo.cmd != NULL, .binary = binary,
				  .builtin = tps.v, .nbuiltin = tps.n,
				  .objs = objs.paths, .nobjs = objs.n,
				  .syscalls = mo.syscalls };
	err = dp_fs_run(&fo, &status);
	dp_cli_lines_free(&tps);
	dp_cli_objs_free(&objs);
	if (err && mo.cmd) {
		/* nothing was mounted: the command was never traced */
		kill(mo.pid, SIGKILL);
		while (waitpid(mo.pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	free(binary);
	if (err)
		return DP_EXIT_REJECTED;
	return mo.cmd ? dp_cli_exit_code(status) : DP_EXIT_OK;
}
