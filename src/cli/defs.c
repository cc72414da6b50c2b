// SPDX-License-Identifier: GPL-2.0
/* Reading definitions from the command line or a file. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "cli/cli.h"
#include "event/filter.h"
#include "output/output.h"

enum { OPT_NO_ELF = 256, OPT_JSON, OPT_FILTER };

int dp_parse_def_opts(int argc, char **argv, const char *cmd,
		      struct dp_def_opts *o, bool allow_json)
{
	static const struct option longopts[] = {
		{ "file", required_argument, NULL, 'f' },
		{ "binary", required_argument, NULL, 'x' },
		{ "no-elf", no_argument, NULL, OPT_NO_ELF },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "filter", required_argument, NULL, OPT_FILTER },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	optind = 1;
	while ((c = getopt_long(argc, argv, "+f:x:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'f': o->file = optarg; break;
		case 'x': o->binary = optarg; break;
		case OPT_NO_ELF: o->no_elf = true; break;
		case OPT_JSON:
			if (!allow_json)
				goto usage;
			o->json = true;
			break;
		case OPT_FILTER:
			if (o->nfilters == DP_MAX_FILTERS) {
				fprintf(stderr, "dprobe %s: at most %d filters\n",
					cmd, DP_MAX_FILTERS);
				goto usage;
			}
			o->filters[o->nfilters++] = optarg;
			break;
		case 'h':
			dp_usage(stdout, cmd);
			exit(DP_EXIT_OK);
		default:
			goto usage;
		}
	}
	if (!o->file && optind >= argc) {
		fprintf(stderr, "dprobe %s: no definition given\n", cmd);
		goto usage;
	}
	if (o->file && optind < argc) {
		fprintf(stderr, "dprobe %s: give -f FILE or DEFs, not both\n", cmd);
		goto usage;
	}
	return optind;
usage:
	dp_usage(stderr, cmd);
	return -1;
}

static char *read_file(const char *path)
{
	FILE *f;
	struct stat st;
	char *buf;
	size_t n;

	if (!strcmp(path, "-"))
		f = stdin;
	else if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return errno = EISDIR, NULL;
	else if (!(f = fopen(path, "r")))
		return NULL;
	buf = malloc(1 << 20);
	if (!buf) {
		errno = ENOMEM;
		goto out;
	}
	n = fread(buf, 1, (1 << 20) - 1, f);
	if (ferror(f) || !feof(f)) {
		free(buf);
		buf = NULL;
		errno = ferror(f) ? EIO : EFBIG;
		goto out;
	}
	buf[n] = '\0';
	if (memchr(buf, '\0', n)) {
		/* a NUL would silently end a line: refuse binary input */
		free(buf);
		buf = NULL;
		errno = EINVAL;
	}
out:
	if (f != stdin)
		fclose(f);
	return buf;
}

/*
 * Append the lines of @text to @d, cutting it in place: the kernel takes
 * each line of a write to kprobe_events as a command of its own.  A
 * newline at the end starts no line; an empty text is one empty line.
 */
static int add_lines(struct dp_defs *d, char *text, int *cap)
{
	char *p = text, *nl;

	do {
		if (d->n == *cap) {
			char **v = realloc(d->lines, (size_t)(*cap *= 2) *
					   sizeof(*v));

			if (!v)
				return -1;
			d->lines = v;
		}
		d->lines[d->n++] = p;
		nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		p = nl + 1;
	} while (nl && *p);
	return 0;
}

/* Lines of @file_buf (taken over by @d), then of @texts, in order. */
static int split_defs(struct dp_defs *d, char *file_buf,
		      const char *const *texts, int n)
{
	size_t len = 0;
	int cap = 16;
	char *p;

	d->file_buf = file_buf;
	for (int i = 0; i < n; i++)
		len += strlen(texts[i]) + 1;
	if (!file_buf)
		d->file_buf = malloc(len ? len : 1);
	d->lines = malloc((size_t)cap * sizeof(*d->lines));
	if (!d->file_buf || !d->lines)
		goto oom;
	if (file_buf && *file_buf && add_lines(d, file_buf, &cap))
		goto oom;
	p = d->file_buf;
	for (int i = 0; i < n; i++) {
		size_t l = strlen(texts[i]) + 1;

		memcpy(p, texts[i], l);
		if (add_lines(d, p, &cap))
			goto oom;
		p += l;
	}
	return 0;
oom:
	fprintf(stderr, "dprobe: out of memory\n");
	dp_defs_free(d);
	return -1;
}

int dp_defs_from_texts(struct dp_defs *d, const char *const *texts, int n)
{
	memset(d, 0, sizeof(*d));
	return split_defs(d, NULL, texts, n);
}

int dp_defs_load(struct dp_defs *d, const struct dp_def_opts *o, int argc,
		 char **argv, int first)
{
	char *buf;

	memset(d, 0, sizeof(*d));
	if (!o->file)
		return split_defs(d, NULL, (const char *const *)argv + first,
				  argc - first);
	buf = read_file(o->file);
	if (!buf) {
		fprintf(stderr, "dprobe: %s: %s%s\n", o->file, strerror(errno),
			errno == EINVAL ? " (the file contains NUL bytes)" : "");
		return -1;
	}
	return split_defs(d, buf, NULL, 0);
}

void dp_defs_free(struct dp_defs *d)
{
	free(d->lines);
	free(d->file_buf);
	memset(d, 0, sizeof(*d));
}

struct dp_event *dp_cli_find_event(const struct dp_registry *reg,
				   const char *name)
{
	size_t sep = strcspn(name, "/:");
	char group[DP_MAX_EVENT_NAME_LEN];
	struct dp_event *ev;

	if (!name[sep]) {
		for (ev = reg->events; ev; ev = ev->next)
			if (!strcmp(ev->name, name))
				return ev;
		return NULL;
	}
	if (sep >= sizeof(group))
		return NULL;
	memcpy(group, name, sep);
	group[sep] = '\0';
	return dp_registry_find(reg, group, name + sep + 1);
}

static void filter_json(const char *event, const char *text, int ret,
			const struct dp_filter_error *e)
{
	fputs("{\"filter\":", stdout);
	dp_json_string(stdout, text);
	fputs(",\"event\":", stdout);
	dp_json_string(stdout, event);
	if (!ret) {
		fputs(",\"accepted\":true}\n", stdout);
		return;
	}
	printf(",\"accepted\":false,\"errno\":\"%s\",\"error\":",
	       dp_errno_name(e->err));
	dp_json_string(stdout, e->has_code ? dp_filter_err_message(e->code)
					   : "Error");
	printf(",\"caret_col\":%d}\n", e->has_code ? e->pos : 0);
}

int dp_cli_apply_filter(struct dp_registry *reg, const char *arg, bool json)
{
	const char *eq = strchr(arg, '=');
	struct dp_filter_error e = { 0 };
	char name[2 * DP_MAX_EVENT_NAME_LEN];
	struct dp_event *ev;
	int ret;

	if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof(name)) {
		fprintf(stderr, "dprobe: --filter takes EVENT=EXPR, not '%s'\n", arg);
		return -1;
	}
	snprintf(name, sizeof(name), "%.*s", (int)(eq - arg), arg);
	ev = dp_cli_find_event(reg, name);
	if (!ev) {
		fprintf(stderr, "dprobe: --filter: no event '%s'\n", name);
		return -1;
	}
	ret = dp_event_set_filter(ev, eq + 1, &e);
	if (json)
		filter_json(name, eq + 1, ret, &e);
	else if (ret)
		dp_filter_error_log_print(eq + 1, &e, stdout);
	return ret ? -1 : 0;
}

int dp_cli_exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 0;
}
