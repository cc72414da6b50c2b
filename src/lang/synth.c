// SPDX-License-Identifier: GPL-2.0
/*
 * Synthetic event definitions, parsed as the kernel's create_synth_event()
 * (dynamic_events) and create_or_delete_synth_event() (synthetic_events)
 * parse them: the same checks in the same order, the same error_log
 * entries ("synthetic_events", the caret where the kernel's errpos() puts
 * it: the first occurrence of the offending word in the command).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/argv.h"
#include "lang/fetcharg.h"
#include "lang/kstrto.h"
#include "lang/synth.h"

struct synth_ctx {
	const char *cmd;	/* the command as logged (last_cmd) */
	struct dp_error *err;
};

/* The command as the kernel logs it: from its first word, without the
 * comment. */
static char *logged_command(const char *line)
{
	line += strspn(line, " \t");
	return strndup(line, strcspn(line, "#\n"));
}

static int fail_in(struct dp_error *e, const char *cmd, enum dp_err_code code,
		   const char *word, int err)
{
	const char *at = word && *word ? strstr(cmd, word) : NULL;

	if (!e)
		return -err;
	dp_error_clear(e);
	e->code = code;
	e->err = err;
	e->logged = true;
	e->loc = "synthetic_events";
	e->command = strdup(cmd);
	e->pos = at ? (int)(at - cmd) : 0;
	return -err;
}

static int synth_fail(const struct synth_ctx *c, enum dp_err_code code,
		      const char *word, int err)
{
	return fail_in(c->err, c->cmd, code, word, err);
}

int dp_synth_error(struct dp_error *e, const char *line, enum dp_err_code code,
		   const char *word, int err)
{
	char *cmd = logged_command(line);

	if (!cmd)
		return -ENOMEM;
	fail_in(e, cmd, code, word, err);
	free(cmd);
	return -err;
}

/* The scalar types and their sizes (synth_field_size()). */
static const struct {
	const char *type;
	unsigned size;
	const char *fmt;
} scalars[] = {
	{ "s64", 8, "%lld" }, { "u64", 8, "%llu" }, { "s32", 4, "%d" },
	{ "u32", 4, "%u" }, { "s16", 2, "%d" }, { "u16", 2, "%u" },
	{ "s8", 1, "%d" }, { "u8", 1, "%u" }, { "char", 1, "%d" },
	{ "unsigned char", 1, "%u" }, { "int", 4, "%d" },
	{ "unsigned int", 4, "%u" }, { "long", 8, "%ld" },
	{ "unsigned long", 8, "%lu" }, { "bool", 1, "%d" },
	{ "pid_t", 4, "%d" }, { "gfp_t", 4, "%x" },
};

static bool is_string_type(const char *type)
{
	return strstr(type, "char[") != NULL;
}

static bool is_stack_type(const char *type)
{
	return strstr(type, "long[") != NULL;
}

/* char[N]: N (1..256), 0 for char[], -1 for a bad length. */
static int string_size(const char *type)
{
	const char *start = strstr(type, "char[") + 5, *end = strchr(type, ']');
	char buf[4];
	unsigned n;

	if (!end || end < start || end[1])
		return -1;
	if (end - start > 3)
		return -1;
	if (end == start)
		return 0;
	memcpy(buf, start, (size_t)(end - start));
	buf[end - start] = '\0';
	if (dp_kstrtouint(buf, 0, &n) || n > DP_SYNTH_STR_MAX)
		return -1;
	return (int)n;
}

/* synth_field_size(): bytes, 0 for unknown or dynamic, -1 bad string. */
static int type_size(const char *type)
{
	for (size_t i = 0; i < sizeof(scalars) / sizeof(scalars[0]); i++)
		if (!strcmp(type, scalars[i].type))
			return (int)scalars[i].size;
	if (is_string_type(type))
		return string_size(type);
	return 0;
}

const char *dp_synth_field_fmt(const char *type)
{
	for (size_t i = 0; i < sizeof(scalars) / sizeof(scalars[0]); i++)
		if (!strcmp(type, scalars[i].type))
			return scalars[i].fmt;
	if (is_string_type(type) || is_stack_type(type))
		return "%s";
	return "%llu";
}

/* The type as the format shows it: "unsigned " TYPE ARRAY, and
 * "__data_loc " before a dynamic one. */
static int field_type(const struct synth_ctx *c, struct dp_synth_field *f,
		      const char *prefix, const char *type, const char *name,
		      const char *array)
{
	char buf[512];
	int size;

	snprintf(buf, sizeof(buf), "%s%s%s", prefix ? prefix : "", type,
		 array ? array : "");
	size = type_size(buf);
	if (size < 0)
		return array ? synth_fail(c, DP_ERR_SYNTH_INVALID_ARRAY_SPEC,
					  name, EINVAL) :
			       synth_fail(c, DP_ERR_SYNTH_INVALID_TYPE, type,
					  EINVAL);
	f->is_string = is_string_type(buf);
	f->is_stack = !f->is_string && is_stack_type(buf);
	if (size == 0) {
		if (!f->is_string && !f->is_stack)
			return synth_fail(c, DP_ERR_SYNTH_INVALID_TYPE, type,
					  EINVAL);
		f->is_dynamic = true;
		size = 8;
		f->type = malloc(strlen(buf) + sizeof("__data_loc "));
		if (f->type)
			sprintf(f->type, "__data_loc %s", buf);
	} else {
		f->type = strdup(buf);
	}
	f->size = (unsigned)size;
	/* synth_field_signed() of the type the format shows: a dynamic
	 * field's starts with __data_loc, signed whatever follows */
	f->is_signed = f->type && f->type[0] != 'u' &&
		       strcmp(f->type, "gfp_t");
	return f->type ? 0 : -ENOMEM;
}

/* parse_synth_field(): "[unsigned] TYPE NAME[ARRAY]" from @argv. */
static int one_field(const struct synth_ctx *c, struct dp_synth_def *def,
		     int argc, char **argv, int *consumed)
{
	const char *prefix = NULL, *type = argv[0], *name, *array;
	struct dp_synth_field *f = &def->fields[def->nfields];
	int ret;

	if (!strcmp(type, "unsigned")) {
		if (argc < 3)
			return synth_fail(c, DP_ERR_SYNTH_INCOMPLETE_TYPE, type,
					  EINVAL);
		prefix = "unsigned ";
		type = argv[1];
		name = argv[2];
		*consumed += 3;
	} else {
		name = argc > 1 ? argv[1] : NULL;
		*consumed += 2;
	}
	if (!name)
		return synth_fail(c, DP_ERR_SYNTH_INVALID_FIELD, type, EINVAL);
	array = strchr(name, '[');
	f->name = strndup(name, array ? (size_t)(array - name) : strlen(name));
	if (!f->name)
		return -ENOMEM;
	if (!dp_is_good_name(f->name)) {
		free(f->name);
		f->name = NULL;
		return synth_fail(c, DP_ERR_SYNTH_BAD_NAME, name, EINVAL);
	}
	ret = field_type(c, f, prefix, type, name, array);
	if (ret) {
		free(f->name);
		free(f->type);
		memset(f, 0, sizeof(*f));
		return ret;
	}
	def->nfields++;
	return 0;
}

/* The fields after the name: ';'-separated groups of words. */
static int parse_fields(const struct synth_ctx *c, struct dp_synth_def *def,
			const char *text)
{
	char *copy = strdup(text), *rest = copy, *group;
	int ret = 0;

	def->fields = calloc(DP_SYNTH_FIELDS_MAX, sizeof(*def->fields));
	if (!copy || !def->fields) {
		free(copy);
		return -ENOMEM;
	}
	while (!ret && (group = strsep(&rest, ";"))) {
		struct dp_argv a;
		int consumed = 0;

		if (dp_argv_split(group, &a)) {
			ret = -ENOMEM;
			break;
		}
		while (!ret && a.argc > consumed) {
			if (def->nfields == DP_SYNTH_FIELDS_MAX)
				ret = synth_fail(c, DP_ERR_SYNTH_TOO_MANY_FIELDS,
						 NULL, EINVAL);
			else
				ret = one_field(c, def, a.argc - consumed,
						a.argv + consumed, &consumed);
		}
		dp_argv_free(&a);
	}
	free(copy);
	if (!ret && !def->nfields)
		ret = synth_fail(c, DP_ERR_SYNTH_INVALID_CMD, NULL, EINVAL);
	return ret;
}

/* check_command(): the name and one whole field before the first ';'. */
static bool command_complete(const char *cmd)
{
	char *copy = strndup(cmd, strcspn(cmd, ";"));
	struct dp_argv a;
	bool ok = false;

	if (!copy)
		return false;
	if (copy[0] == '!') {
		ok = true;
	} else if (!dp_argv_split(copy, &a)) {
		ok = a.argc >= 3;
		dp_argv_free(&a);
	}
	free(copy);
	return ok;
}

/* Field offsets: one 8-byte slot each, 256 bytes for a char[N]. */
static void lay_out(struct dp_synth_def *def)
{
	unsigned off = 0;

	for (unsigned i = 0; i < def->nfields; i++) {
		struct dp_synth_field *f = &def->fields[i];

		f->offset = off;
		off += f->is_string && !f->is_dynamic ? DP_SYNTH_STR_MAX : 8;
	}
	def->size = off;
}

int dp_parse_synth(const char *line, bool dyn, struct dp_synth_def *def,
		   struct dp_error *err)
{
	char *cmd = logged_command(line);
	struct synth_ctx c = { .err = err };
	const char *name, *sp;
	size_t nlen;
	int ret;

	memset(def, 0, sizeof(*def));
	if (!cmd)
		return -ENOMEM;
	c.cmd = cmd;
	if (!*c.cmd) {
		ret = -ENODATA;
		goto out;
	}
	name = c.cmd;
	if (dyn) {
		if (name[0] != 's' || name[1] != ':') {
			ret = -ECANCELED;
			goto out;
		}
		name += 2;
	}
	sp = strpbrk(c.cmd, " \t");
	if (!sp) {
		ret = synth_fail(&c, DP_ERR_SYNTH_INVALID_CMD, NULL, EINVAL);
		goto out;
	}
	/* the kernel looks for a '/' in the whole rest of the command */
	if (dyn && strchr(name, '/')) {
		if (strncmp(name, DP_SYNTH_GROUP "/", sizeof(DP_SYNTH_GROUP))) {
			ret = synth_fail(&c, DP_ERR_SYNTH_INVALID_DYN_CMD, NULL,
					 EINVAL);
			goto out;
		}
		name += sizeof(DP_SYNTH_GROUP);
	}
	if (!command_complete(name)) {
		ret = synth_fail(&c, DP_ERR_SYNTH_INVALID_CMD, NULL, EINVAL);
		goto out;
	}
	nlen = (size_t)(sp - name);
	if (!nlen) {
		ret = synth_fail(&c, DP_ERR_SYNTH_INVALID_CMD, NULL, EINVAL);
		goto out;
	}
	if (nlen >= sizeof(def->name)) {
		ret = synth_fail(&c, DP_ERR_SYNTH_BAD_NAME, NULL, EINVAL);
		goto out;
	}
	memcpy(def->name, name, nlen);
	if (!dp_is_good_name(def->name)) {
		ret = synth_fail(&c, DP_ERR_SYNTH_BAD_NAME, def->name, EINVAL);
		goto out;
	}
	ret = parse_fields(&c, def, sp + strspn(sp, " \t"));
	if (!ret)
		lay_out(def);
out:
	if (ret)
		dp_synth_def_free(def);
	free(cmd);
	return ret;
}

void dp_synth_def_free(struct dp_synth_def *def)
{
	for (unsigned i = 0; def->fields && i < def->nfields; i++) {
		free(def->fields[i].type);
		free(def->fields[i].name);
	}
	free(def->fields);
	memset(def, 0, sizeof(*def));
}

char *dp_synth_listing(const struct dp_synth_def *def)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	fprintf(f, "%s\t", def->name);
	for (unsigned i = 0; i < def->nfields; i++) {
		const char *t = def->fields[i].type;

		/* __data_loc belongs in the format, not the definition */
		if (!strncmp(t, "__data_loc ", 11))
			t += 11;
		fprintf(f, "%s %s%s", t, def->fields[i].name,
			i + 1 < def->nfields ? "; " : "");
	}
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}
