// SPDX-License-Identifier: GPL-2.0
/*
 * Fetch programs run against a synthetic hit (registers, a small fake
 * address space, comm), then the record is rendered as a trace line: the
 * whole shared path from definition text to what ftrace would print.
 * Values are those of the kprobetrace document's examples.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event/event.h"
#include "lang/fetch.h"
#include "output/output.h"

#define F "/bin/sh"
#include "fake_mem.h"

static struct dp_regs regs;
static struct dp_hit_ctx ctx;
static struct dp_registry reg;

static void setup(void)
{
	uint64_t ptrs[2] = { 0x3000, 0 };
	uint16_t beef = 0xbeef;

	memset(mem, 0, sizeof(mem));
	put(0x2004, &beef, 2);
	put(0x2006, "structname", 11);
	put(0x2018, ptrs, sizeof(ptrs));
	put(0x3000, "hello world", 12);
	put(0x3800, (uint64_t[]){ 0x4011eb }, 8);
	memset(&regs, 0, sizeof(regs));
	regs.di = 0x28;
	regs.si = 0x3000;
	regs.dx = 0x2000;
	regs.cx = 0xfffffff9;
	regs.sp = 0x3800;
	regs.ax = 0x4f;
	ctx = (struct dp_hit_ctx){ .regs = &regs, .read_mem = fake_read,
				   .comm = "target", .pid = 42,
				   .ip = 0x401146, .func = 0x401146,
				   .ret_ip = 0x4011eb };
	dp_registry_init(&reg);
}

static void teardown(void)
{
	dp_registry_free(&reg);
}

TestSuite(fetch, .init = setup, .fini = teardown);

/* Define @def, fire it once on ctx, return the trace line body. */
static char *fire(const char *def)
{
	struct dp_probe *p;
	struct dp_error e = { 0 };
	uint8_t rec[8192];
	struct dp_rec_meta meta = { .ts_ns = 100000001000ull, .cpu = 1,
				    .pid = 42, .tgid = 42, .comm = "target" };
	char *buf = NULL, *body;
	size_t len = 0, n;
	FILE *f;

	cr_assert_eq(dp_registry_apply(&reg, def, &p, &e), 0, "%s: %s", def,
		     dp_err_message(e.code));
	n = dp_fetch_record(&p->def, p->event->id, &ctx, rec, sizeof(rec));
	cr_assert_gt(n, 0);
	f = open_memstream(&buf, &len);
	cr_assert_eq(dp_trace_line(f, p->event, rec, n, &meta, NULL), 0);
	fclose(f);
	body = strdup(strstr(buf, ": ") + 2);
	free(buf);
	body[strcspn(body, "\n")] = '\0';
	return body;
}

static void expect(const char *def, const char *want)
{
	char *got = fire(def);

	cr_assert_str_eq(got, want);
	free(got);
}

Test(fetch, integer_types)
{
	expect("p:g/types " F ":0x10 u8=%cx:u8 u16=%cx:u16 u32=%cx:u32 "
	       "u64=%cx:u64 s8=%cx:s8 s16=%cx:s16 s32=%cx:s32 s64=%cx:s64",
	       "types: (0x401146) u8=249 u16=65529 u32=4294967289 "
	       "u64=4294967289 s8=-7 s16=-7 s32=-7 s64=4294967289");
	expect("p:g/hex " F ":0x10 x8=%cx:x8 x16=%cx:x16 x32=%cx:x32 "
	       "x64=%cx:x64 dflt=%cx %di",
	       "hex: (0x401146) x8=0xf9 x16=0xfff9 x32=0xfffffff9 "
	       "x64=0xfffffff9 dflt=0xfffffff9 arg6=0x28");
}

Test(fetch, memory_types)
{
	expect("p:g/mem " F ":0x10 ch=+6(%dx):char chs=+6(%dx):char[3] "
	       "bf=+4(%dx):b4@4/16 arr=+6(%dx):x8[4] u16arr=+4(%dx):u16[2]",
	       "mem: (0x401146) ch='s' chs={'s','t','r'} bf=14 "
	       "arr={0x73,0x74,0x72,0x75} u16arr={48879,29811}");
}

Test(fetch, strings)
{
	expect("p:g/strs " F ":0x10 str=+6(%dx):string p=+0(+24(%dx)):string "
	       "sarr=+24(%dx):string[2] us=+0(%si):ustring comm=$comm "
	       "COMM=$COMM fs=+0(\\0):string",
	       "strs: (0x401146) str=\"structname\" p=\"hello world\" "
	       "sarr={\"hello world\",(fault)} us=\"hello world\" "
	       "comm=\"target\" COMM=\"target\" fs=(fault)");
}

Test(fetch, immediates_stack_and_faults)
{
	expect("p:g/misc " F ":0x10 imm=\\123 immneg=\\-5:s32 immhex=\\0x10:u8 "
	       "stk=$stack stk0=$stack0 fn=+0(\\0):x64 fo=+0(+0(\\0)):x64 "
	       "is=\\\"abc\":string",
	       "misc: (0x401146) imm=0x7b immneg=-5 immhex=16 stk=0x3800 "
	       "stk0=0x4011eb fn=0x0 fo=0x0 is=\"abc\"");
}

Test(fetch, return_probe)
{
	expect("r:g/rp " F ":0x10 ret=$retval sret=$retval:s8 ip=%ip",
	       "rp: (0x4011eb <- 0x401146) ret=0x4f sret=79 ip=0x0");
}

Test(fetch, file_offset_base)
{
	uint32_t v = 0x12345678;

	put(0x2100, &v, 4);
	ctx.foffs_base = 0x2000;
	expect("p:g/fo " F ":0x10 g=@+0x100:x32 s=@0x3000:string",
	       "fo: (0x401146) g=0x12345678 s=\"hello world\"");
}

Test(fetch, string_too_long_is_a_fault)
{
	memset(mem + 0x1000, 'a', 0x1000);	/* no NUL before the end */
	expect("p:g/long " F ":0x10 s=+0(%si):string", "long: (0x401146) s=(fault)");
}

Test(fetch, kprobe_args_at_entry)
{
	uint64_t a7 = 77;

	put(0x3808, &a7, 8);
	regs.r9 = 6;
	expect("p:g/args work $arg1 $arg6 $arg7",
	       "args: (0x00401146) arg1=0x28 arg2=0x6 arg3=0x4d");
}
