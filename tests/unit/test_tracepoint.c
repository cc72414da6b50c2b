// SPDX-License-Identifier: GPL-2.0
/*
 * Application tracepoints read from an ELF file (sym/tracepoint.c): the
 * layout dprobe reads is the one include/dprobe/tracepoint.h writes, the
 * example program's tracepoints are found with their fields, and a
 * malformed entry is refused.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dprobe/tracepoint.h"
#include "sym/elf.h"
#include "sym/tracepoint.h"
#include "test_data.h"

_Static_assert(DP_TP_FILE_MAGIC == DP_TRACEPOINT_MAGIC, "magic");
_Static_assert(DP_TP_FILE_VERSION == DP_TRACEPOINT_VERSION, "version");
_Static_assert(DP_TP_FILE_GROUP_OFF == offsetof(struct dp_tracepoint, group),
	       "group");
_Static_assert(DP_TP_FILE_GROUP_LEN == DP_TP_GROUP_LEN, "group length");
_Static_assert(DP_TP_FILE_NAME_OFF == offsetof(struct dp_tracepoint, name),
	       "name");
_Static_assert(DP_TP_FILE_NAME_LEN == DP_TP_NAME_LEN, "name length");
_Static_assert(DP_TP_FILE_PROTO_OFF == offsetof(struct dp_tracepoint, proto),
	       "proto");
_Static_assert(DP_TP_FILE_PROTO_LEN == DP_TP_PROTO_LEN, "proto length");
_Static_assert(DP_TP_FILE_FIELDS_OFF == offsetof(struct dp_tracepoint, fields),
	       "fields");
_Static_assert(DP_TP_FILE_FIELD_SIZE == sizeof(struct dp_tp_field), "field");
_Static_assert(DP_TP_FILE_MAX_ARGS == DP_TP_MAX_ARGS, "args");
_Static_assert(sizeof(struct dp_tracepoint) % DP_TP_FILE_ALIGN == 0, "align");
_Static_assert((int)DP_TP_INT == DP_TPF_INT && (int)DP_TP_STRING == DP_TPF_STRING &&
	       (int)DP_TP_ARRAY == DP_TPF_ARRAY, "kinds");

static char example[4096];

static void setup(void)
{
	snprintf(example, sizeof(example), "%s",
		 test_build("examples/", "tracepoint_example"));
}

TestSuite(tracepoint, .init = setup);

static struct dp_elf *open_example(void)
{
	struct dp_elf *elf;

	cr_assert_eq(dp_elf_open(example, &elf), 0, "%s", example);
	return elf;
}

Test(tracepoint, example_tracepoints)
{
	struct dp_elf *elf = open_example();
	struct dp_tp_desc *v, d;
	struct dp_elf_sym sym;
	uint64_t off;
	ssize_t n = dp_elf_tracepoints(elf, &v);

	cr_assert_eq(n, 2);
	cr_assert_eq(dp_elf_tracepoint(elf, NULL, "order", &d), 0);
	cr_assert_str_eq(d.group, "shop");
	cr_assert_str_eq(d.proto, "int id, const char *item, unsigned long cents");
	cr_assert_eq(d.nargs, 3);
	cr_assert_str_eq(d.args[0].name, "id");
	cr_assert_eq(d.args[0].kind, DP_TP_INT);
	cr_assert_eq(d.args[0].size, 4);
	cr_assert(d.args[0].is_signed);
	cr_assert_eq(d.args[1].kind, DP_TP_STRING);
	cr_assert_eq(d.args[2].size, 8);
	cr_assert(!d.args[2].is_signed);
	/* where the struct is: its symbol, and that address in the file */
	cr_assert_eq(dp_elf_lookup(elf, "__dp_tracepoint_order", &sym), 0);
	cr_assert_eq(d.vaddr, sym.value);
	cr_assert_eq(dp_elf_vaddr_to_off(elf, d.vaddr, &off), 0);
	cr_assert_eq(d.file_offset, off);

	cr_assert_eq(dp_elf_tracepoint(elf, "shop", "restock", &d), 0);
	cr_assert_eq(d.args[1].kind, DP_TP_ARRAY);
	cr_assert_eq(d.args[1].count, 4);
	cr_assert_eq(d.args[1].size, 1);
	cr_assert_eq(dp_elf_tracepoint(elf, "other", "restock", &d), -ENOENT);
	cr_assert_eq(dp_elf_tracepoint(elf, NULL, "nosuch", &d), -ENOENT);
	free(v);
	dp_elf_close(elf);
}

Test(tracepoint, default_args)
{
	struct dp_elf *elf = open_example();
	struct dp_tp_desc d;
	char *a;

	cr_assert_eq(dp_elf_tracepoint(elf, "shop", "order", &d), 0);
	a = dp_tp_default_args(&d);
	cr_assert_str_eq(a, "id=$arg1:s32 item=+0($arg2):string cents=$arg3:u64");
	free(a);
	cr_assert_eq(dp_elf_tracepoint(elf, "shop", "restock", &d), 0);
	a = dp_tp_default_args(&d);
	cr_assert_str_eq(a, "qty=$arg1:u16 tag=+0($arg2):u8[4]");
	free(a);
	dp_elf_close(elf);
}

/* A copy whose first field kind is 9: the file is not what it claims. */
Test(tracepoint, malformed_entry)
{
	struct dp_elf *elf = open_example();
	char tmp[] = "/tmp/dprobe-tp-XXXXXX";
	struct dp_tp_desc *v, d;
	uint8_t kind = 9;
	FILE *in, *out;
	char buf[65536];
	size_t n;
	int fd;

	cr_assert_eq(dp_elf_tracepoint(elf, "shop", "order", &d), 0);
	dp_elf_close(elf);
	fd = mkstemp(tmp);
	cr_assert_geq(fd, 0);
	out = fdopen(fd, "w");
	in = fopen(example, "r");
	while ((n = fread(buf, 1, sizeof(buf), in)))
		fwrite(buf, 1, n, out);
	fclose(in);
	fseek(out, (long)(d.file_offset + DP_TP_FILE_FIELDS_OFF +
			  DP_TP_FILE_FIELD_NAME_KIND), SEEK_SET);
	fwrite(&kind, 1, 1, out);
	fclose(out);
	cr_assert_eq(dp_elf_open(tmp, &elf), 0);
	cr_assert_eq(dp_elf_tracepoints(elf, &v), -EINVAL);
	cr_assert_eq(dp_elf_tracepoint(elf, "shop", "order", &d), -EINVAL);
	dp_elf_close(elf);
	unlink(tmp);
}

/* A file without the section has none. */
Test(tracepoint, none)
{
	struct dp_elf *elf;
	struct dp_tp_desc *v;

	cr_assert_eq(dp_elf_open("/bin/true", &elf), 0);
	cr_assert_eq(dp_elf_tracepoints(elf, &v), 0);
	cr_assert_null(v);
	dp_elf_close(elf);
}
