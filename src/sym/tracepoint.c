// SPDX-License-Identifier: GPL-2.0
/*
 * Reading application tracepoints out of an ELF file (sym/tracepoint.h).
 * The layout is the constant part of include/dprobe/tracepoint.h's
 * struct dp_tracepoint; tests/unit/test_tracepoint.c checks the two agree.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sym/tracepoint.h"

static uint32_t load32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint16_t load16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* A NUL-terminated string within @len bytes, made of printable bytes. */
static int get_str(char *dst, const uint8_t *src, size_t len)
{
	size_t n = strnlen((const char *)src, len);

	if (n == len)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (src[i] < 0x20 || src[i] > 0x7e)
			return -EINVAL;
	memcpy(dst, src, n + 1);
	return 0;
}

static int get_arg(struct dp_tp_arg *a, const uint8_t *f)
{
	const size_t name_len = DP_TP_FILE_FIELD_NAME_KIND;

	if (get_str(a->name, f, name_len) || !a->name[0])
		return -EINVAL;
	a->kind = f[name_len];
	a->size = f[name_len + 1];
	a->is_signed = f[name_len + 2] != 0;
	/* a type name this dprobe does not know keeps the default */
	a->pid = a->kind == DP_TP_INT &&
		 f[name_len + 3] == DP_TP_FILE_TYPE_PID_T;
	a->count = load16(f + name_len + 4);
	switch (a->kind) {
	case DP_TP_STRING:
		return 0;
	case DP_TP_ARRAY:
		if (!a->count)
			return -EINVAL;
		/* elements are integers */
		__attribute__((fallthrough));
	case DP_TP_INT:
		if (a->pid && (a->size != 4 || !a->is_signed))
			return -EINVAL;
		return a->size == 1 || a->size == 2 || a->size == 4 ||
		       a->size == 8 ? 0 : -EINVAL;
	default:
		return -EINVAL;
	}
}

static int get_desc(struct dp_tp_desc *d, const uint8_t *p)
{
	if (get_str(d->group, p + DP_TP_FILE_GROUP_OFF, DP_TP_FILE_GROUP_LEN) ||
	    get_str(d->name, p + DP_TP_FILE_NAME_OFF, DP_TP_FILE_NAME_LEN) ||
	    get_str(d->proto, p + DP_TP_FILE_PROTO_OFF, DP_TP_FILE_PROTO_LEN))
		return -EINVAL;
	d->nargs = load16(p + 6);
	if (d->nargs > DP_TP_FILE_MAX_ARGS)
		return -EINVAL;
	for (unsigned i = 0; i < d->nargs; i++)
		if (get_arg(&d->args[i], p + DP_TP_FILE_FIELDS_OFF +
			    i * DP_TP_FILE_FIELD_SIZE))
			return -EINVAL;
	return 0;
}

ssize_t dp_elf_tracepoints(const struct dp_elf *elf, struct dp_tp_desc **out)
{
	struct dp_elf_sec sec;
	const uint8_t *data = dp_elf_section(elf, DP_TP_SECTION, &sec);
	struct dp_tp_desc *v = NULL, *tmp;
	size_t n = 0;

	*out = NULL;
	if (!data)
		return 0;
	/* entries are 64-byte aligned and their run-time part is zero here,
	 * so a magic at each aligned offset marks the next one */
	for (uint64_t off = 0; off + DP_TP_FILE_CONST_SIZE <= sec.size;
	     off += DP_TP_FILE_ALIGN) {
		const uint8_t *p = data + off;

		if (load32(p) != DP_TP_FILE_MAGIC ||
		    load16(p + 4) != DP_TP_FILE_VERSION)
			continue;
		tmp = realloc(v, (n + 1) * sizeof(*v));
		if (!tmp) {
			free(v);
			return -ENOMEM;
		}
		v = tmp;
		memset(&v[n], 0, sizeof(v[n]));
		if (get_desc(&v[n], p)) {
			free(v);
			return -EINVAL;
		}
		v[n].vaddr = sec.addr + off;
		v[n].file_offset = sec.offset + off;
		n++;
	}
	*out = v;
	return (ssize_t)n;
}

int dp_elf_tracepoint(const struct dp_elf *elf, const char *group,
		      const char *name, struct dp_tp_desc *out)
{
	struct dp_tp_desc *v;
	ssize_t n = dp_elf_tracepoints(elf, &v);
	int ret = -ENOENT;

	if (n < 0)
		return (int)n;
	for (ssize_t i = 0; i < n; i++) {
		if (strcmp(v[i].name, name) || (group && strcmp(v[i].group, group)))
			continue;
		*out = v[i];
		ret = 0;
		break;
	}
	free(v);
	return ret;
}

bool dp_tp_same_fields(const struct dp_tp_desc *a, const struct dp_tp_desc *b)
{
	if (a->nargs != b->nargs)
		return false;
	for (unsigned i = 0; i < a->nargs; i++) {
		const struct dp_tp_arg *x = &a->args[i], *y = &b->args[i];

		if (strcmp(x->name, y->name) || x->kind != y->kind ||
		    x->size != y->size || x->is_signed != y->is_signed ||
		    x->pid != y->pid ||
		    x->count != y->count)
			return false;
	}
	return true;
}

static void put_int_type(FILE *f, const struct dp_tp_arg *a)
{
	fprintf(f, "%c%u", a->is_signed ? 's' : 'u', a->size * 8);
}

char *dp_tp_default_args(const struct dp_tp_desc *tp)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	for (unsigned i = 0; i < tp->nargs; i++) {
		const struct dp_tp_arg *a = &tp->args[i];

		fprintf(f, "%s%s=", i ? " " : "", a->name);
		switch (a->kind) {
		case DP_TP_STRING:
			fprintf(f, "+0($arg%u):string", i + 1);
			break;
		case DP_TP_ARRAY:
			fprintf(f, "+0($arg%u):", i + 1);
			put_int_type(f, a);
			fprintf(f, "[%u]", a->count);
			break;
		default:
			fprintf(f, "$arg%u:", i + 1);
			if (a->pid && a->kind == DP_TP_INT)
				fputs("pid_t", f);
			else
				put_int_type(f, a);
			break;
		}
	}
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}
