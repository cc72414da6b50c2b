// SPDX-License-Identifier: GPL-2.0
/*
 * fileserver: a long-running example whose functions mirror the kernel
 * functions the seed documents probe, so their tracefs sessions replay
 * verbatim against it under `dprobe mount`:
 *
 *   do_sys_open(int dfd, const char *filename, int flags, int mode)
 *   do_filp_open(int dfd, struct filename *pathname, int flags, int mode)
 *   vfs_read(int fd, char *buf, size_t count, long *pos)
 *
 * (struct filename starts with its name, so +0(+0(%si)):string on
 * do_filp_open reads the path, as on the kernel's.)
 *
 *   fileserver REQ_FIFO
 *
 * serves requests read line by line from REQ_FIFO (a FIFO or a file),
 * reopening it at its end so that every `echo ... > REQ_FIFO` is served:
 *   open PATH    open PATH, print the descriptor, close it
 *   read PATH    open PATH, read it with vfs_read(), print the byte count
 *   quit         exit
 * Each answer is one line on stdout, flushed at once, so that a test can
 * wait for it.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct filename {
	const char *name;	/* first, as in the kernel's struct */
	const char *uptr;
	int refcnt;
};

__attribute__((noinline)) int do_filp_open(int dfd, struct filename *pathname,
					   int flags, int mode)
{
	return openat(dfd, pathname->name, flags, mode);
}

__attribute__((noinline)) long do_sys_open(int dfd, const char *filename,
					   int flags, int mode)
{
	struct filename fn = { filename, filename, 1 };

	return do_filp_open(dfd, &fn, flags, mode);
}

__attribute__((noinline)) long vfs_read(int fd, char *buf, size_t count,
					long *pos)
{
	ssize_t n = pread(fd, buf, count, *pos);

	if (n > 0)
		*pos += n;
	return n;
}

static void serve_open(const char *path)
{
	long fd = do_sys_open(AT_FDCWD, path, O_RDONLY, 0);

	if (fd < 0) {
		printf("open %s: failed\n", path);
		return;
	}
	printf("open %s: fd %ld\n", path, fd);
	close((int)fd);
}

static void serve_read(const char *path)
{
	long fd = do_sys_open(AT_FDCWD, path, O_RDONLY, 0), n, total = 0;
	long pos = 0;
	char buf[256];

	if (fd < 0) {
		printf("read %s: failed\n", path);
		return;
	}
	while ((n = vfs_read((int)fd, buf, sizeof(buf), &pos)) > 0)
		total += n;
	close((int)fd);
	printf("read %s: %ld bytes\n", path, total);
}

/* 1 when asked to quit. */
static int serve(char *line)
{
	line[strcspn(line, "\n")] = '\0';
	if (!strncmp(line, "open ", 5))
		serve_open(line + 5);
	else if (!strncmp(line, "read ", 5))
		serve_read(line + 5);
	else if (!strcmp(line, "quit"))
		return 1;
	else if (*line)
		printf("unknown request: %s\n", line);
	return 0;
}

int main(int argc, char **argv)
{
	char *line = NULL;
	size_t cap = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: fileserver REQ_FIFO\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("fileserver %d ready\n", (int)getpid());
	for (;;) {
		FILE *f = fopen(argv[1], "r");	/* waits for a writer */

		if (!f) {
			perror(argv[1]);
			return 1;
		}
		while (getline(&line, &cap, f) > 0) {
			if (serve(line)) {
				fclose(f);
				free(line);
				printf("fileserver: bye\n");
				return 0;
			}
		}
		fclose(f);
	}
}
