// SPDX-License-Identifier: GPL-2.0
/*
 * A process for the proc unit tests to look at.  It prints where its
 * functions are, as the loader placed them, then waits for signals:
 *   SIGUSR1  dlopen() each library named on the command line, print
 *            "loaded" and the address of proc_lib_fn in each;
 *   SIGUSR2  dlclose() them again and print "closed".
 * With PROC_MAP_DATA=FILE in the environment it first maps FILE privately
 * and writable, as a symbol reader does (libelf): data, not a load.
 * It never exits by itself: the tests kill it.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define MAX_LIBS 8

int proc_counter;

__attribute__((noinline)) int proc_work(int a, const char *name)
{
	proc_counter += a;
	return name[0] + proc_counter;
}

/* libc's own definition, not a PLT stub of a non-PIE executable */
static void *libc_sym(const char *name)
{
	void *h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);

	return h ? dlsym(h, name) : NULL;
}

static void load(int n, char **paths, void **handles)
{
	printf("loaded");
	for (int i = 0; i < n; i++) {
		handles[i] = dlopen(paths[i], RTLD_NOW | RTLD_LOCAL);
		if (!handles[i]) {
			printf(" error=%s", dlerror());
			continue;
		}
		printf(" %p", dlsym(handles[i], "proc_lib_fn"));
	}
	printf("\n");
	fflush(stdout);
}

static void unload(int n, void **handles)
{
	for (int i = 0; i < n; i++) {
		if (handles[i])
			dlclose(handles[i]);
		handles[i] = NULL;
	}
	printf("closed\n");
	fflush(stdout);
}

static void map_data(const char *path)
{
	struct stat st;
	int fd;

	if (!path)
		return;
	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st) ||
	    mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE,
		 fd, 0) == MAP_FAILED)
		exit(3);
	close(fd);
}

int main(int argc, char **argv)
{
	void *handles[MAX_LIBS] = { 0 };
	int n = argc - 1 < MAX_LIBS ? argc - 1 : MAX_LIBS, sig;
	sigset_t set;

	map_data(getenv("PROC_MAP_DATA"));
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("ready %p %p\n", (void *)proc_work, libc_sym("getpid"));
	fflush(stdout);
	for (;;) {
		if (sigwait(&set, &sig))
			return 1;
		if (sig == SIGUSR1)
			load(n, argv + 1, handles);
		else
			unload(n, handles);
	}
}
