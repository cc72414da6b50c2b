// SPDX-License-Identifier: GPL-2.0
/* Where a format that writes a directory puts its files (-o DIR). */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"

/*
 * -o DIR of a format that writes a directory: made, or an empty one
 * taken; never one with files in it, whose old trace would be mixed with
 * the new one.
 */
int dp_cli_out_dir(const char *path)
{
	struct dirent *e;
	bool empty = true;
	DIR *d;

	if (!mkdir(path, 0777))
		return 0;
	d = errno == EEXIST ? opendir(path) : NULL;
	if (!d) {
		fprintf(stderr, "dprobe: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (empty && (e = readdir(d)))
		empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
	closedir(d);
	if (!empty)
		fprintf(stderr, "dprobe: %s: the directory is not empty: give "
			"-o a new or empty directory\n", path);
	return empty ? 0 : -1;
}
