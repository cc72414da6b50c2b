// SPDX-License-Identifier: GPL-2.0
/*
 * With -f, an exec whose program the agent will not be in: a statically
 * linked program (no dynamic loader to preload us), a set-ID one that
 * runs in secure mode (the loader ignores LD_PRELOAD there), or an
 * environment without the preload (env -i, a scrubbed envp).  Before such
 * an exec the process is handed to dprobe (channel.c), which takes it
 * with the ptrace engine: the probes are placed in the new image before
 * its first instruction, and its records join the session's output.
 *
 * The exec functions of the C library are put in front of the program's
 * (a process the agent was injected into keeps its own bindings: its
 * execs are seen afterwards, see the tree in src/engine/inproc/).  A
 * vfork child calls them on its parent's memory: nothing here allocates,
 * locks or uses stdio, only system calls and the stack.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "engine/agent/agent.h"
#include "engine/agent/events.h"
#include "engine/agent/protocol.h"

extern char **environ;

typedef int (*execve_fn)(const char *, char *const[], char *const[]);

static execve_fn real_execve, real_execvpe;
static char self_path[PATH_MAX];	/* this library, as the loader named it */

__attribute__((constructor)) static void exec_load(void)
{
	Dl_info di;

	real_execve = (execve_fn)dlsym(RTLD_NEXT, "execve");
	real_execvpe = (execve_fn)dlsym(RTLD_NEXT, "execvpe");
	if (dladdr((void *)exec_load, &di) && di.dli_fname &&
	    strlen(di.dli_fname) < sizeof(self_path))
		strcpy(self_path, di.dli_fname);
}

/* ---- what the new image will be ---------------------------------------- */

/* Whether the list @list (':' or ' ' separated) holds @item. */
static bool list_has(const char *list, const char *item)
{
	size_t n = strlen(item);

	for (const char *s = list; *s;) {
		size_t k = strcspn(s, ": ");

		if (k == n && !strncmp(s, item, n))
			return true;
		s += k;
		s += *s != '\0';
	}
	return false;
}

/* Whether @envp starts the agent in the new image: our library preloaded
 * and the hub named. */
static bool env_preloads(char *const envp[])
{
	bool pre = false, sock = false;
	size_t ls = sizeof(DP_AGENT_ENV_SOCK) - 1;

	for (char *const *e = envp; e && *e; e++) {
		if (!strncmp(*e, "LD_PRELOAD=", 11))
			pre = self_path[0] && list_has(*e + 11, self_path);
		else if (!strncmp(*e, DP_AGENT_ENV_SOCK, ls) && (*e)[ls] == '=')
			sock = true;
	}
	return pre && sock;
}

/*
 * What @path will run as: NULL if the agent will be in it (or nothing
 * can be said: the exec fails, or it is not an x86-64 ELF program dprobe
 * could trace anyway), else the word for EXEC.  A script is judged by
 * its interpreter (#!), a few levels deep as the kernel does.
 */
static const char *program_why(const char *path, int depth)
{
	char buf[256];
	Elf64_Ehdr eh;
	struct stat st;
	ssize_t n;
	int fd;

	if (depth > 4)
		return NULL;
	/* never blocks (a FIFO) nor opens a terminal; a regular file only */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return NULL;
	}
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n > 2 && buf[0] == '#' && buf[1] == '!') {
		char *s = buf + 2, *e;

		close(fd);
		buf[n] = '\0';
		s += strspn(s, " \t");
		e = s + strcspn(s, " \t\n");
		*e = '\0';
		return *s ? program_why(s, depth + 1) : NULL;
	}
	if (n < (ssize_t)sizeof(eh) || fstat(fd, &st)) {
		close(fd);
		return NULL;
	}
	memcpy(&eh, buf, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr)) {
		close(fd);
		return NULL;
	}
	/* secure mode (AT_SECURE): the loader ignores our LD_PRELOAD */
	if (((st.st_mode & S_ISUID) && st.st_uid != getuid()) ||
	    ((st.st_mode & S_ISGID) && st.st_gid != getgid())) {
		close(fd);
		return "setid";
	}
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;

		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph)))
		    != (ssize_t)sizeof(ph))
			break;
		if (ph.p_type == PT_INTERP) {
			close(fd);
			return NULL;
		}
	}
	close(fd);
	return "static";
}

static const char *why_of(const char *path)
{
	return program_why(path, 0);
}

/* The file execvp() would run for @file (PATH searched), into @out. */
static const char *search_path(const char *file, char *out, size_t len)
{
	const char *path = NULL;
	size_t fl = strlen(file);

	if (strchr(file, '/'))
		return file;
	for (char **e = environ; e && *e; e++)
		if (!strncmp(*e, "PATH=", 5))
			path = *e + 5;
	if (!path)
		path = "/bin:/usr/bin";
	for (const char *s = path;; s++) {
		size_t k = strcspn(s, ":");

		if (k + 1 + fl < len) {
			memcpy(out, s, k);
			out[k] = '/';
			memcpy(out + k + 1, file, fl + 1);
			if (!k)
				memmove(out, out + 1, fl + 1);	/* "": here */
			if (!access(out, X_OK))
				return out;
		}
		s += k;
		if (!*s)
			return NULL;
	}
}

/* Before the exec: a ticket if dprobe took the process (see channel.c). */
static unsigned hand_over(const char *path, char *const envp[])
{
	const char *why;

	if (!path || !dp_chan_exec_follows())
		return 0;
	why = dp_chan_look(path, why_of);
	if (!why && !env_preloads(envp))
		why = "nopreload";
	if (!why)
		return 0;
	return dp_chan_exec_ask((int)syscall(SYS_getpid), why, path);
}

void dp_exec_spawned(int pid, const char *file, bool search,
		     char *const envp[])
{
	char buf[PATH_MAX];
	const char *path, *why;

	if (pid <= 0 || !dp_chan_exec_follows())
		return;
	path = search ? search_path(file, buf, sizeof(buf)) : file;
	why = path ? dp_chan_look(path, why_of) : NULL;
	if (!why && path && !env_preloads(envp ? envp : environ))
		why = "nopreload";
	if (why)
		dp_chan_exec_late(pid, why, path);
}

static int exec_with(execve_fn fn, const char *file, const char *path,
		     char *const argv[], char *const envp[])
{
	unsigned ticket;
	int ret, err;

	if (!fn) {
		errno = ENOSYS;
		return -1;
	}
	ticket = hand_over(path, envp);
	ret = fn(file, argv, envp);
	err = errno;
	dp_chan_exec_failed(ticket);
	errno = err;
	return ret;
}

/* ---- the C library's exec functions ------------------------------------ */

DP_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	return exec_with(real_execve, path, path, argv, envp);
}

DP_EXPORT int execv(const char *path, char *const argv[])
{
	return exec_with(real_execve, path, path, argv, environ);
}

DP_EXPORT int execvpe(const char *file, char *const argv[],
		      char *const envp[])
{
	char buf[PATH_MAX];

	return exec_with(real_execvpe, file,
			 search_path(file, buf, sizeof(buf)), argv, envp);
}

DP_EXPORT int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

/* The variadic ones: their arguments into an array on the stack, as the
 * C library does (no allocation in a vfork child). */

/*
 * execl(), execlp() and execle() from their arguments: @arg, the rest of
 * @ap up to its NULL, then execle()'s environment if @with_env.  The
 * array lives in this frame, which stays until the exec returns.
 * @search: by PATH, as execlp().
 */
static int exec_va(const char *file, const char *arg, va_list ap,
		   bool search, bool with_env)
{
	va_list c;
	size_t n = 1;
	char **envp = environ;

	va_copy(c, ap);
	while (va_arg(c, char *))
		n++;
	va_end(c);
	char *argv[n + 1];

	argv[0] = (char *)arg;
	for (size_t i = 1; i <= n; i++)		/* argv[n]: the NULL */
		argv[i] = va_arg(ap, char *);
	if (with_env)
		envp = va_arg(ap, char **);
	return search ? execvpe(file, argv, envp) : execve(file, argv, envp);
}

DP_EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	int ret;

	va_start(ap, arg);
	ret = exec_va(path, arg, ap, false, false);
	va_end(ap);
	return ret;
}

DP_EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	int ret;

	va_start(ap, arg);
	ret = exec_va(file, arg, ap, true, false);
	va_end(ap);
	return ret;
}

DP_EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	int ret;

	va_start(ap, arg);
	ret = exec_va(path, arg, ap, false, true);
	va_end(ap);
	return ret;
}
