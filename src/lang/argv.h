/* SPDX-License-Identifier: GPL-2.0 */
/* Splitting a command into words as the kernel's argv_split() does. */
#ifndef DPROBE_LANG_ARGV_H
#define DPROBE_LANG_ARGV_H

struct dp_argv {
	int argc;
	char **argv;	/* NULL-terminated; each a malloc'd copy */
};

/* Split @line at runs of whitespace.  Returns 0 or -ENOMEM. */
int dp_argv_split(const char *line, struct dp_argv *a);
void dp_argv_free(struct dp_argv *a);
/* The words joined by single spaces (malloc'd), as error_log shows them. */
char *dp_argv_join(const struct dp_argv *a);

#endif
