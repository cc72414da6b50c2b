// SPDX-License-Identifier: GPL-2.0
/*
 * The fetch types (probe_fetch_types in trace_probe.c): their storage, the type a `format` file
 * shows, signedness, and the printf spec used in `print fmt`.
 */
#include <stdio.h>
#include <string.h>

#include "lang/lang.h"
#include "lang/types.h"

static const struct {
	const char *name;
	enum dp_type_kind kind;
	uint8_t size;
} basic_types[] = {
	{ "u8", DP_T_U, 1 },  { "u16", DP_T_U, 2 },
	{ "u32", DP_T_U, 4 }, { "u64", DP_T_U, 8 },
	{ "s8", DP_T_S, 1 },  { "s16", DP_T_S, 2 },
	{ "s32", DP_T_S, 4 }, { "s64", DP_T_S, 8 },
	{ "x8", DP_T_X, 1 },  { "x16", DP_T_X, 2 },
	{ "x32", DP_T_X, 4 }, { "x64", DP_T_X, 8 },
	{ "char", DP_T_CHAR, 1 },
	{ "string", DP_T_STRING, 4 },
	{ "ustring", DP_T_USTRING, 4 },
	{ "symbol", DP_T_SYMBOL, 8 },
	{ "symstr", DP_T_SYMSTR, 4 },
};

/*
 * The kernel's find_fetch_type(): NULL means the default (x64); a name
 * starting with 'b' is a bitfield whose container follows the '/'.
 * Bitfield width/offset are checked later (BAD_BITFIELD), as the kernel does.
 */
int dp_find_type(const char *name, bool kernel_place, struct dp_type *t)
{
	memset(t, 0, sizeof(*t));
	if (!name)
		name = "x64";
	if (name[0] == 'b') {
		const char *slash = strchr(name, '/');
		uint64_t bits;

		if (!slash || dp_kstrtoull(slash + 1, 0, &bits))
			return -1;
		if (bits != 8 && bits != 16 && bits != 32 && bits != 64)
			return -1;
		t->kind = DP_T_BITFIELD;
		t->size = (uint8_t)(bits / 8);
		return 0;
	}
	for (size_t i = 0; i < sizeof(basic_types) / sizeof(basic_types[0]); i++) {
		if (strcmp(basic_types[i].name, name))
			continue;
		/* symbol types need kernel-style (symbol) places */
		if (!kernel_place && (basic_types[i].kind == DP_T_SYMBOL ||
				      basic_types[i].kind == DP_T_SYMSTR))
			return -1;
		t->kind = basic_types[i].kind;
		t->size = basic_types[i].size;
		return 0;
	}
	return -1;
}

int dp_find_tp_type(const char *name, bool kernel_place, struct dp_type *t)
{
	if (!name || strcmp(name, "pid_t"))
		return dp_find_type(name, kernel_place, t);
	dp_find_type("s32", kernel_place, t);
	t->pid_t_name = true;
	return 0;
}

static const char *int_prefix(enum dp_type_kind k)
{
	return k == DP_T_S ? "s" : k == DP_T_X ? "x" : "u";
}

void dp_type_name(const struct dp_type *t, char *buf, size_t len)
{
	int n;

	switch (t->kind) {
	case DP_T_S:
		if (t->pid_t_name) {
			n = snprintf(buf, len, "pid_t");
			break;
		}
		__attribute__((fallthrough));
	case DP_T_U: case DP_T_X:
		n = snprintf(buf, len, "%s%u", int_prefix(t->kind), t->size * 8);
		break;
	case DP_T_BITFIELD:
		n = snprintf(buf, len, "b%u@%u/%u", t->bf_width, t->bf_offset,
			     t->size * 8);
		break;
	case DP_T_CHAR: n = snprintf(buf, len, "char"); break;
	case DP_T_STRING: n = snprintf(buf, len, "string"); break;
	case DP_T_USTRING: n = snprintf(buf, len, "ustring"); break;
	case DP_T_SYMBOL: n = snprintf(buf, len, "symbol"); break;
	default: n = snprintf(buf, len, "symstr"); break;
	}
	if (t->count && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, "[%u]", t->count);
}

/* The element type as a format file shows it ("u8", "s32", "char[]"...). */
static const char *format_elem(const struct dp_type *t)
{
	static const char *const u[] = { "u8", "u16", NULL, "u32",
					  NULL, NULL, NULL, "u64" };
	static const char *const s[] = { "s8", "s16", NULL, "s32",
					  NULL, NULL, NULL, "s64" };

	switch (t->kind) {
	case DP_T_S:
		return t->pid_t_name ? "pid_t" : s[t->size - 1];
	case DP_T_STRING: case DP_T_USTRING: case DP_T_SYMSTR:
		return "__data_loc char[]";
	default:	/* u, x, char, bitfield containers, symbol */
		return u[t->size - 1];
	}
}

void dp_type_format_name(const struct dp_type *t, char *buf, size_t len)
{
	if (t->count)
		snprintf(buf, len, "%s[%u]", format_elem(t), t->count);
	else
		snprintf(buf, len, "%s", format_elem(t));
}

bool dp_type_is_signed(const struct dp_type *t)
{
	return t->kind == DP_T_S || dp_type_is_string(t);
}

const char *dp_type_print_fmt(const struct dp_type *t)
{
	bool wide = t->size == 8;

	switch (t->kind) {
	case DP_T_U: case DP_T_BITFIELD:
		return wide ? "%Lu" : "%u";
	case DP_T_S:
		return wide ? "%Ld" : "%d";
	case DP_T_X:
		return wide ? "0x%Lx" : "0x%x";
	case DP_T_CHAR:
		return "'%c'";
	case DP_T_SYMBOL:
		return "%pS";
	default:
		return "\\\"%s\\\"";
	}
}
