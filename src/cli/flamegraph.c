// SPDX-License-Identifier: GPL-2.0
/*
 * dprobe flamegraph [FILE|-] [-o OUT.svg] [--title T] [--width N]: folded
 * stacks (dprobe trace --format folded, perf's or any stack collapser's
 * "a;b;c 42" lines) drawn as an interactive SVG (output/flamegraph.h).
 * The whole input is read and checked before anything is written: a
 * line that is not a folded stack stops the command with its number,
 * and OUT is then not made.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "output/flamegraph.h"

enum { OPT_TITLE = 256, OPT_WIDTH };

struct flame_opts {
	const char *in, *out;
	struct dp_flame_opts svg;
};

static int parse_width(const char *arg, unsigned *width)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || *arg == '-' ||
	    v < DP_FLAME_MIN_WIDTH || v > DP_FLAME_MAX_WIDTH) {
		fprintf(stderr, "dprobe: bad width '%s' (%d to %d pixels)\n",
			arg, DP_FLAME_MIN_WIDTH, DP_FLAME_MAX_WIDTH);
		return -1;
	}
	*width = (unsigned)v;
	return 0;
}

static int parse_opts(int argc, char **argv, struct flame_opts *o)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "title", required_argument, NULL, OPT_TITLE },
		{ "width", required_argument, NULL, OPT_WIDTH },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': o->out = optarg; break;
		case OPT_TITLE: o->svg.title = optarg; break;
		case OPT_WIDTH:
			if (parse_width(optarg, &o->svg.width))
				return -1;
			break;
		case 'h':
			dp_usage(stdout, "flamegraph");
			exit(DP_EXIT_OK);
		default:
			return -1;
		}
	}
	if (argc - optind > 1) {
		fprintf(stderr, "dprobe: flamegraph takes one input file\n");
		return -1;
	}
	o->in = optind < argc ? argv[optind] : "-";
	return 0;
}

static const char *line_error(int err)
{
	switch (err) {
	case -E2BIG:
		return "deeper than 1024 frames";
	case -EOVERFLOW:
		return "more than 2^53 samples in all";
	case -ENOMEM:
		return strerror(ENOMEM);
	default:
		return "not a folded stack (FRAME;FRAME;... COUNT)";
	}
}

/* Every line of @in into @f.  0, or -1 (said why). */
static int read_stacks(FILE *in, const char *name, struct dp_flame *f)
{
	char *line = NULL;
	size_t cap = 0;
	unsigned long n = 0;
	int err = 0;

	while (getline(&line, &cap, in) >= 0) {
		n++;
		err = dp_flame_add_line(f, line);
		if (err < 0)
			break;
		err = 0;
	}
	free(line);
	if (err < 0) {
		fprintf(stderr, "dprobe: %s:%lu: %s\n", name, n,
			line_error(err));
		return -1;
	}
	if (ferror(in)) {
		fprintf(stderr, "dprobe: %s: %s\n", name, strerror(EIO));
		return -1;
	}
	return 0;
}

static int load(const struct flame_opts *o, struct dp_flame *f)
{
	bool std = !strcmp(o->in, "-");
	FILE *in = std ? stdin : fopen(o->in, "r");
	int ret;

	if (!in) {
		fprintf(stderr, "dprobe: %s: %s\n", o->in, strerror(errno));
		return -1;
	}
	ret = read_stacks(in, std ? "<stdin>" : o->in, f);
	if (!std)
		fclose(in);
	return ret;
}

static int write_out(const struct flame_opts *o, struct dp_flame *f)
{
	FILE *out = o->out ? fopen(o->out, "w") : stdout;
	int err;

	if (!out) {
		fprintf(stderr, "dprobe: %s: %s\n", o->out, strerror(errno));
		return -1;
	}
	err = dp_flame_write_svg(f, out, &o->svg);
	if (o->out && fclose(out) && !err)
		err = -EIO;
	if (err) {
		fprintf(stderr, "dprobe: %s: %s\n",
			o->out ? o->out : "<stdout>", strerror(-err));
		if (o->out)
			unlink(o->out);
		return -1;
	}
	return 0;
}

int dp_cmd_flamegraph(int argc, char **argv)
{
	struct flame_opts o = { 0 };
	struct dp_flame *f;
	int ret;

	if (parse_opts(argc, argv, &o)) {
		dp_usage(stderr, "flamegraph");
		return DP_EXIT_USAGE;
	}
	f = dp_flame_new();
	if (!f) {
		fprintf(stderr, "dprobe: %s\n", strerror(ENOMEM));
		return DP_EXIT_REJECTED;
	}
	ret = load(&o, f) || write_out(&o, f) ? DP_EXIT_REJECTED : DP_EXIT_OK;
	dp_flame_free(f);
	return ret;
}
