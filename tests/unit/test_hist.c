// SPDX-License-Identifier: GPL-2.0
/*
 * Hist triggers (event/hist.h): the kernel's syntax and errors (with the
 * error_log positions of 6.12's trace_events_hist.c), the trigger line,
 * and the `hist` text for each key and value modifier, sorts, limits and
 * drops, written from the kernel's format strings.  tests/qemu/ compares
 * the same text with a real kernel's.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "event/hist.h"
#include "event/synth.h"
#include "event/syscalls.h"
#include "capture.h"

static struct dp_registry reg;
static struct dp_event *openat, *kp;

static void setup(void)
{
	dp_registry_init(&reg);
	cr_assert_eq(dp_registry_syscalls_glob(&reg, "sys_enter_openat"), 1);
	openat = dp_registry_find(&reg, "syscalls", "sys_enter_openat");
	cr_assert_eq(dp_registry_apply(&reg, "p:kp/k work a=%di:s32 "
				       "s=+0(%si):string", NULL, NULL), 0);
	kp = dp_registry_find(&reg, "kp", "k");
	cr_assert(openat && kp);
}

static void teardown(void)
{
	dp_registry_free(&reg);
}

TestSuite(hist, .init = setup, .fini = teardown);

static struct dp_hist *make(struct dp_event *ev, const char *text)
{
	struct dp_hist_error err;
	struct dp_hist *h = NULL;
	int ret = dp_hist_new(ev, text, &h, &err);

	cr_assert_eq(ret, 0, "%s: %d %s", text, ret, err.msg ? err.msg : "");
	return h;
}

static void refused(struct dp_event *ev, const char *text, const char *msg,
		    unsigned pos)
{
	struct dp_hist_error err;
	struct dp_hist *h = NULL;

	cr_assert_eq(dp_hist_new(ev, text, &h, &err), -EINVAL, "%s", text);
	cr_assert_null(h);
	if (!msg) {
		cr_assert_null(err.msg, "%s: %s", text, err.msg);
		return;
	}
	cr_assert_not_null(err.msg, "%s", text);
	cr_assert_str_eq(err.msg, msg, "%s", text);
	cr_assert_eq(err.pos, pos, "%s: at %u", text, err.pos);
}

static const struct dp_rec_meta meta = { .pid = 42, .tgid = 42,
					 .comm = "fileserver" };

/* sys_enter_openat with dfd, flags, mode */
static void openat_hit(struct dp_hist *h, int64_t dfd, uint64_t flags,
		       uint64_t mode, long nr)
{
	uint64_t args[DP_SYSCALL_MAX_ARGS] = { (uint64_t)dfd, 0x1000, flags,
					       mode };
	uint8_t rec[128];
	size_t len = dp_syscall_record(openat, false, nr, args, 0, 42, rec,
				       sizeof(rec));

	cr_assert_gt(len, 0);
	dp_hist_add(h, rec, len, &meta, NULL);
}

/* kp/k with a (s32) and the string s */
static void kp_hit(struct dp_hist *h, int32_t a, const char *s,
		   const struct dp_symbolizer *sym)
{
	const struct dp_field *fa = dp_event_field(kp, "a");
	const struct dp_field *fs = dp_event_field(kp, "s");
	uint8_t rec[256] = { 0 };
	size_t n = strlen(s) + 1, len = kp->fixed_size + n;

	dp_rec_put(rec, kp->id, 2);
	dp_rec_put(rec + fa->offset, (uint32_t)a, 4);
	dp_rec_put(rec + fs->offset,
		   dp_data_loc((unsigned)n, kp->fixed_size), 4);
	memcpy(rec + kp->fixed_size, s, n);
	dp_hist_add(h, rec, len, &meta, sym);
}

static char *text_of(struct dp_hist *h)
{
	struct cap c;

	dp_hist_print(h, 0, cap_open(&c));
	return cap_close(&c);
}

static void expect(struct dp_hist *h, const char *want)
{
	char *got = text_of(h);

	cr_assert_str_eq(got, want);
	free(got);
}

Test(hist, defaults_and_the_trigger_line)
{
	struct dp_hist *h = make(openat, "hist:keys=dfd");
	struct cap c;
	char *line;

	dp_hist_print_trigger(h, cap_open(&c));
	line = cap_close(&c);
	cr_assert_str_eq(line, "hist:keys=dfd:vals=hitcount:sort=hitcount:"
			 "size=2048 [active]\n");
	free(line);
	dp_hist_free(h);
	/* the other spellings; size rounded up to a power of two */
	h = make(openat, "hist:key=dfd.hex,mode:values=flags,hitcount:"
		 "sort=mode.descending,dfd:size=1000");
	dp_hist_print_trigger(h, cap_open(&c));
	line = cap_close(&c);
	cr_assert_str_eq(line, "hist:keys=dfd.hex,mode:vals=hitcount,flags:"
			 "sort=mode.descending,dfd.hex:size=1024 [active]\n");
	free(line);
	dp_hist_pause(h, true);
	dp_hist_print_trigger(h, cap_open(&c));
	line = cap_close(&c);
	cr_assert(strstr(line, ":size=1024 [paused]\n"));
	free(line);
	dp_hist_free(h);
}

Test(hist, entries_sorted_by_hitcount_and_totals)
{
	struct dp_hist *h = make(openat, "hist:keys=dfd:vals=flags");

	openat_hit(h, 3, 1, 0, 257);
	openat_hit(h, 5, 2, 0, 257);
	openat_hit(h, 5, 4, 0, 257);
	openat_hit(h, 7, 8, 0, 257);
	openat_hit(h, 5, 16, 0, 257);
	openat_hit(h, 7, 32, 0, 257);
	expect(h, "# event histogram\n"
		  "#\n"
		  "# trigger info: hist:keys=dfd:vals=hitcount,flags:"
		  "sort=hitcount:size=2048 [active]\n"
		  "#\n"
		  "\n"
		  "{ dfd:          3 } hitcount:          1  flags:          1\n"
		  "{ dfd:          7 } hitcount:          2  flags:         40\n"
		  "{ dfd:          5 } hitcount:          3  flags:         22\n"
		  "\n"
		  "Totals:\n"
		  "    Hits: 6\n"
		  "    Entries: 3\n"
		  "    Dropped: 0\n");
	dp_hist_free(h);
}

Test(hist, two_sort_keys_descending)
{
	struct dp_hist *h = make(openat, "hist:keys=dfd,mode:"
				 "sort=hitcount.descending,mode.descending");
	char *got;

	openat_hit(h, 1, 0, 10, 257);
	openat_hit(h, 1, 0, 30, 257);
	openat_hit(h, 1, 0, 20, 257);
	openat_hit(h, 1, 0, 20, 257);
	got = text_of(h);
	cr_assert(strstr(got,
		"{ dfd:          1, mode:         20 } hitcount:          2\n"
		"{ dfd:          1, mode:         30 } hitcount:          1\n"
		"{ dfd:          1, mode:         10 } hitcount:          1\n"),
		"%s", got);
	free(got);
	dp_hist_free(h);
}

Test(hist, key_modifiers)
{
	struct dp_hist *h = make(openat, "hist:keys=dfd.hex,flags.log2,"
				 "mode.buckets=100:sort=flags");
	char *got;

	openat_hit(h, -100, 1, 199, 257);
	openat_hit(h, -100, 5, 100, 257);
	openat_hit(h, -100, 1000, 5, 257);
	/* above 2^63 (a negative number): the kernel's shift by 64 */
	openat_hit(h, -100, (uint64_t)-2, 7, 257);
	got = text_of(h);
	cr_assert(strstr(got, "hist:keys=dfd.hex,flags.log2,mode.buckets=100:"
			 "vals=hitcount:sort=flags.log2:size=2048 [active]\n"),
		  "%s", got);
	/* dfd is the kernel's unsigned 8-byte argument */
	cr_assert(strstr(got,
		"{ dfd: ffffffffffffff9c, flags: ~ 2^0 , mode: ~ 0-99 } "
		"hitcount:          1\n"
		"{ dfd: ffffffffffffff9c, flags: ~ 2^0 , mode: ~ 100-199 } "
		"hitcount:          1\n"
		"{ dfd: ffffffffffffff9c, flags: ~ 2^3 , mode: ~ 100-199 } "
		"hitcount:          1\n"
		"{ dfd: ffffffffffffff9c, flags: ~ 2^10, mode: ~ 0-99 } "
		"hitcount:          1\n"), "%s", got);
	free(got);
	dp_hist_free(h);
}

Test(hist, execname_and_syscall)
{
	struct dp_hist *h = make(openat, "hist:keys=common_pid.execname,"
				 "__syscall_nr.syscall");
	char *got;

	openat_hit(h, 1, 0, 0, 257);
	openat_hit(h, 1, 0, 0, 2);
	openat_hit(h, 1, 0, 0, 257);
	got = text_of(h);
	cr_assert(strstr(got,
		"{ common_pid: fileserver      [        42], __syscall_nr: "
		"open                          [  2] } hitcount:          1\n"
		"{ common_pid: fileserver      [        42], __syscall_nr: "
		"openat                        [257] } hitcount:          2\n"),
		"%s", got);
	free(got);
	dp_hist_free(h);
}

static int fake_lookup(void *priv, uint64_t addr, const char **sym,
		       uint64_t *off, uint64_t *size)
{
	(void)priv;
	if (addr < 0x1000 || addr >= 0x1100)
		return -1;
	*sym = "work";
	*off = addr - 0x1000;
	*size = 0x100;
	return 0;
}

Test(hist, strings_symbols_and_signed_keys)
{
	struct dp_symbolizer sym = { fake_lookup, NULL };
	struct dp_hist *h = make(kp, "hist:keys=s,a:sort=s");
	struct dp_hist *hs = make(kp, "hist:keys=a.sym-offset");
	char *got;

	kp_hit(h, -1, "beta", NULL);
	kp_hit(h, 2, "alpha", NULL);
	kp_hit(h, 2, "alpha", NULL);
	got = text_of(h);
	/* a string key is padded to 50; a signed one sign-extended */
	cr_assert(strstr(got,
		"{ s: alpha                                             , a:"
		"          2 } hitcount:          2\n"
		"{ s: beta                                              , a: "
		"18446744073709551615 } hitcount:          1\n"), "%s", got);
	free(got);
	kp_hit(hs, 0x1010, "x", &sym);
	kp_hit(hs, 0x2000, "x", &sym);
	got = text_of(hs);
	cr_assert(strstr(got, "{ a: [1010] work+0x10/0x100"), "%s", got);
	cr_assert(strstr(got, "{ a: [2000] 0x2000"), "%s", got);
	free(got);
	dp_hist_free(h);
	dp_hist_free(hs);
}

Test(hist, percent_graph_and_nohitcount)
{
	struct dp_hist *h = make(openat, "hist:keys=dfd:vals=hitcount.percent,"
				 "hitcount.graph:nohitcount:sort=dfd");
	struct dp_hist *x = make(openat, "hist:keys=dfd:vals=mode.hex,"
				 "hitcount");
	char *got;

	openat_hit(h, 1, 0, 0x10, 257);
	openat_hit(h, 2, 0, 0x10, 257);
	openat_hit(h, 2, 0, 0x10, 257);
	openat_hit(h, 2, 0, 0x10, 257);
	got = text_of(h);
	cr_assert(strstr(got, "hist:keys=dfd:vals=hitcount.percent,"
			 "hitcount.graph:sort=dfd:size=2048:"
			 "nohitcount [active]\n"), "%s", got);
	cr_assert(strstr(got,
		"{ dfd:          1 }  hitcount (%):  25.00  hitcount: "
		"######              \n"
		"{ dfd:          2 }  hitcount (%):  75.00  hitcount: "
		"####################\n"), "%s", got);
	free(got);
	openat_hit(x, 1, 0, 0x10, 257);
	openat_hit(x, 1, 0, 0x1a, 257);
	got = text_of(x);
	cr_assert(strstr(got, "hist:keys=dfd:vals=hitcount,mode.hex:"), "%s",
		  got);
	cr_assert(strstr(got, "{ dfd:          1 } hitcount:          2  "
			 "mode:         2a\n"), "%s", got);
	free(got);
	dp_hist_free(x);
	dp_hist_free(h);
}

Test(hist, full_table_drops)
{
	struct dp_hist *h = make(openat, "hist:keys=dfd:size=100");
	char *got;

	for (int i = 0; i < 200; i++)
		openat_hit(h, i, 0, 0, 257);
	openat_hit(h, 5, 0, 0, 257);
	got = text_of(h);
	cr_assert(strstr(got, ":size=128 [active]\n"), "%s", got);
	cr_assert(strstr(got, "\nTotals:\n    Hits: 201\n    Entries: 128\n"
			 "    Dropped: 72\n"), "%s", got);
	free(got);
	dp_hist_clear(h);
	got = text_of(h);
	cr_assert(strstr(got, "    Hits: 0\n    Entries: 0\n    Dropped: 0\n"));
	free(got);
	dp_hist_free(h);
}

Test(hist, filter_and_pause)
{
	struct dp_hist *h = make(openat, "hist:keys=dfd if dfd == 3");
	struct cap c;
	char *got;

	openat_hit(h, 3, 0, 0, 257);
	openat_hit(h, 4, 0, 0, 257);
	dp_hist_pause(h, true);
	openat_hit(h, 3, 0, 0, 257);
	dp_hist_pause(h, false);
	got = text_of(h);
	cr_assert(strstr(got, ":size=2048 if dfd == 3 [active]\n"), "%s", got);
	cr_assert(strstr(got, "{ dfd:          3 } hitcount:          1\n"));
	cr_assert(strstr(got, "    Hits: 1\n"));
	free(got);
	/* a second trigger in the same file: two blank lines first */
	dp_hist_print(h, 1, cap_open(&c));
	got = cap_close(&c);
	cr_assert(!strncmp(got, "\n\n# event histogram\n", 20));
	free(got);
	dp_hist_free(h);
}

Test(hist, nohitcount_needs_a_value)
{
	struct dp_hist_error err;
	struct dp_hist *h = NULL;

	cr_assert_eq(dp_hist_new(openat, "hist:keys=dfd:nohitcount", &h, &err),
		     -ENOENT);
	cr_assert_str_eq(err.msg, "Non-hitcount value is required for "
			 "'nohitcount'");
	cr_assert_eq(err.pos, 0);
}

Test(hist, commands_and_sameness)
{
	struct dp_hist *a = make(openat, "hist:keys=dfd:vals=mode");
	struct dp_hist *b = make(openat, "hist:keys=dfd:vals=mode:pause");
	struct dp_hist *c = make(openat, "hist:keys=dfd:vals=flags:clear");
	struct dp_hist *d = make(openat, "hist:keys=dfd:vals=mode:continue");

	cr_assert_eq(dp_hist_command(a), DP_HIST_ADD);
	cr_assert_eq(dp_hist_command(b), DP_HIST_PAUSE);
	cr_assert_eq(dp_hist_command(c), DP_HIST_CLEAR);
	cr_assert_eq(dp_hist_command(d), DP_HIST_CONT);
	cr_assert(dp_hist_same(a, b));
	cr_assert(!dp_hist_same(a, c));
	dp_hist_free(a);
	dp_hist_free(b);
	dp_hist_free(c);
	dp_hist_free(d);
}

/* The kernel's messages; the caret where its errpos() puts it. */
Test(hist, errors)
{
	refused(openat, "hist:keys=nosuch", "Couldn't find field", 10);
	refused(openat, "hist:keys=dfd:vals=hitcount,nosuch",
		"Couldn't find field", 28);
	refused(openat, "hist:keys=dfd.bogus", "Invalid field modifier", 14);
	refused(openat, "hist:keys=dfd.percent", "Invalid field modifier", 14);
	refused(openat, "hist:keys=dfd.buckets=0", "Invalid field modifier",
		22);
	refused(openat, "hist:keys=dfd.bucketx", "Invalid field modifier",
		20);
	refused(openat, "hist:keys=dfd:vals=mode:sort=flags",
		"Sort field must be a key or a val", 29);
	refused(openat, "hist:keys=dfd:sort=dfd,hitcount,mode",
		"Too many sort fields (Max = 2)", 14);
	refused(openat, "hist:keys=dfd:sort=dfd.up", "Invalid sort modifier",
		23);
	/* split at every comma, as create_sort_keys(): an empty one, a
	 * third one even when the second is no field */
	refused(openat, "hist:keys=dfd:sort=dfd,", "Empty sort field", 14);
	refused(openat, "hist:keys=dfd:sort=,dfd", "Empty sort field", 14);
	refused(openat, "hist:keys=dfd:sort=.descending", "Empty sort field",
		14);
	refused(openat, "hist:keys=dfd:sort=dfd,nosuch,mode",
		"Too many sort fields (Max = 2)", 14);
	refused(openat, "hist:keys=dfd:vals=", "Empty assignment", 14);
	refused(openat, "hist:keys=dfd:onmax($x).save(dfd)",
		"Couldn't find onmax or onchange variable", 18);
	/* silent -EINVAL, as the kernel's */
	refused(openat, "hist:keys=dfd:bogus", NULL, 0);
	refused(openat, "hist:keys=dfd:vals=mode,flags,dfd", NULL, 0);
	refused(openat, "hist:vals=mode", NULL, 0);
	refused(openat, "hist:keys=dfd:size=64", NULL, 0);
	refused(openat, "hist:keys=dfd:size=200000", NULL, 0);
	refused(openat, "hist:keys=dfd,flags,mode,__syscall_nr", NULL, 0);
	refused(openat, "histo:keys=dfd", NULL, 0);
	refused(openat, "hist:keys=dfd if nosuch == 1", NULL, 0);
}

/* kp's record at @a with @n frames of user stack */
static void kp_stack_hit(struct dp_hist *h, const uint64_t *stack, unsigned n,
			 const struct dp_symbolizer *sym)
{
	const struct dp_field *fa = dp_event_field(kp, "a");
	struct dp_rec_meta m = meta;
	uint8_t rec[256] = { 0 };

	m.stack = stack;
	m.nstack = n;
	dp_rec_put(rec, kp->id, 2);
	dp_rec_put(rec + fa->offset, 1, 4);
	dp_rec_put(rec + dp_event_field(kp, "s")->offset,
		   dp_data_loc(1, kp->fixed_size), 4);
	dp_hist_add(h, rec, kp->fixed_size + 1, &m, sym);
}

/* The user stack as a key: the frames one a line after nine spaces,
 * "}" with no space before it (hist_trigger_print_key()). */
Test(hist, stacktrace_keys)
{
	struct dp_symbolizer sym = { fake_lookup, NULL };
	struct dp_hist *h = make(kp, "hist:keys=stacktrace,a");
	const uint64_t one[] = { 0x1010, 0x2000, 0x10ff, 0 };
	const uint64_t two[] = { 0x1020 };
	char *got, *line;
	struct cap c;

	cr_assert(dp_hist_wants_stacks(h));
	cr_assert(dp_hist_wants_symbols(h));
	/* the legacy name prints as the current one */
	dp_hist_print_trigger(h, cap_open(&c));
	line = cap_close(&c);
	cr_assert_str_eq(line, "hist:keys=common_stacktrace,a:vals=hitcount:"
			 "sort=hitcount:size=2048 [active]\n");
	free(line);
	kp_stack_hit(h, one, 4, &sym);
	kp_stack_hit(h, one, 3, &sym);		/* the same: up to a 0 */
	kp_stack_hit(h, two, 1, &sym);
	kp_stack_hit(h, NULL, 0, &sym);		/* none: the empty stack */
	got = text_of(h);
	cr_assert(strstr(got,
		"{ common_stacktrace:\n"
		"         work+0x10/0x100\n"
		"         0x2000\n"
		"         work+0xff/0x100\n"
		", a:          1} hitcount:          2\n"), "%s", got);
	cr_assert(strstr(got, "{ common_stacktrace:\n"
			 "         work+0x20/0x100\n"
			 ", a:          1} hitcount:          1\n"), "%s", got);
	cr_assert(strstr(got, "{ common_stacktrace:\n, a:          1} "
			 "hitcount:          1\n"), "%s", got);
	cr_assert(strstr(got, "Hits: 4\n    Entries: 3\n"), "%s", got);
	free(got);
	dp_hist_free(h);
	h = make(kp, "hist:keys=common_stacktrace:sort=common_stacktrace");
	dp_hist_free(h);
	h = make(kp, "hist:keys=a");
	cr_assert_not(dp_hist_wants_stacks(h));
	dp_hist_free(h);
	/* a value or a field of that name is not one */
	refused(kp, "hist:keys=a:vals=common_stacktrace", "Couldn't find field",
		17);
}

/* ---- variables, references, actions, name= (one env of triggers) ---------- */

static struct dp_hist *env_v[8];
static unsigned env_n, fired;
static char fired_text[256];

static struct dp_hist *env_each(void *priv, size_t i)
{
	(void)priv;
	return i < env_n ? env_v[i] : NULL;
}

static void env_fire(void *priv, const struct dp_event *ev, const void *rec,
		     size_t len, const struct dp_rec_meta *m)
{
	FILE *f = fmemopen(fired_text, sizeof(fired_text), "w");

	(void)priv;
	(void)m;
	fired++;
	cr_assert_eq(dp_rec_check(ev, rec, len), 0);
	dp_synth_print(f, ev, rec, len, NULL);
	fclose(f);
}

static const struct dp_hist_env env = { &reg, env_each, env_fire, NULL };
static struct dp_event *ke;

static void vsetup(void)
{
	setup();
	cr_assert_eq(dp_registry_apply(&reg, "p:kp/e run_job bb=%di:u32",
				       NULL, NULL), 0);
	cr_assert_eq(dp_registry_synth(&reg, "lat u64 lat; u32 bb", false,
				       NULL), 0);
	ke = dp_registry_find(&reg, "kp", "e");
	env_n = fired = 0;
	fired_text[0] = '\0';
}

static void vteardown(void)
{
	while (env_n)
		dp_hist_free(env_v[--env_n]);
	teardown();
}

TestSuite(hist_vars, .init = vsetup, .fini = vteardown);

static struct dp_hist *vmake(struct dp_event *ev, const char *text)
{
	struct dp_hist_error err;
	struct dp_hist *h = NULL;
	int ret = dp_hist_new_in(&env, ev, text, false, &h, &err);

	cr_assert_eq(ret, 0, "%s: %d %s", text, ret, err.msg ? err.msg : "");
	env_v[env_n++] = h;
	return h;
}

static void vrefused(struct dp_event *ev, const char *text, const char *msg)
{
	struct dp_hist_error err;
	struct dp_hist *h = NULL;

	cr_assert_eq(dp_hist_new_in(&env, ev, text, false, &h, &err), -EINVAL,
		     "%s", text);
	cr_assert_null(h);
	cr_assert_not_null(err.msg, "%s", text);
	cr_assert_str_eq(err.msg, msg, "%s", text);
	if (!strcmp(msg, "Couldn't find field") && strchr(text, '$')) {
		cr_assert_eq(err.nprev, 1, "%s", text);
		cr_assert_str_eq(err.prev_msg[0], "Couldn't find variable");
	}
}

static void hit_at(struct dp_hist *h, struct dp_event *ev, uint32_t v,
		   uint64_t ts_ns)
{
	const struct dp_field *f = dp_event_field(ev, ev == kp ? "a" : "bb");
	struct dp_rec_meta m = meta;
	uint8_t rec[64] = { 0 };

	m.ts_ns = ts_ns;
	dp_rec_put(rec, ev->id, 2);
	dp_rec_put(rec + f->offset, v, 4);
	dp_hist_add(h, rec, ev->fixed_size, &m, NULL);
}

static char *trigger_of(struct dp_hist *h)
{
	struct cap c;

	dp_hist_print_trigger(h, cap_open(&c));
	return cap_close(&c);
}

Test(hist_vars, latency_into_a_synthetic_event_read_once)
{
	struct dp_hist *s = vmake(kp, "hist:keys=a:ts0=common_timestamp.usecs");
	struct dp_hist *e = vmake(ke, "hist:keys=bb:lat=common_timestamp.usecs-"
				  "$ts0:onmatch(kp.k).trace(lat,$lat,bb)");
	char *t = trigger_of(e);

	cr_assert_str_eq(t, "hist:keys=bb:vals=hitcount:lat=common_timestamp."
			 "usecs-$ts0:sort=hitcount:size=2048:clock=global:"
			 "onmatch(kp.k).trace(lat,$lat,bb) [active]\n");
	free(t);
	hit_at(s, kp, 5, 1000000);
	hit_at(e, ke, 5, 1250400);	/* 1250.4 us: 1250 */
	cr_assert_eq(fired, 1);
	cr_assert_str_eq(fired_text, "lat=250 bb=5");
	/* $ts0 was read: no second match, and no hit for the end */
	hit_at(e, ke, 5, 1300000);
	hit_at(e, ke, 6, 1300000);
	cr_assert_eq(fired, 1);
	expect(e, "# event histogram\n#\n# trigger info: hist:keys=bb:"
	       "vals=hitcount:lat=common_timestamp.usecs-$ts0:sort=hitcount:"
	       "size=2048:clock=global:onmatch(kp.k).trace(lat,$lat,bb) "
	       "[active]\n#\n\n{ bb:          5 } hitcount:          1\n\n"
	       "Totals:\n    Hits: 1\n    Entries: 1\n    Dropped: 0\n");
	/* the start's variables are read: it may not go */
	cr_assert(dp_hist_referenced(s));
	cr_assert_not(dp_hist_referenced(e));
	cr_assert(dp_hist_generates(e, dp_registry_find(&reg, "synthetic",
							"lat")->id));
}

Test(hist_vars, the_newer_action_form_and_onmax_save)
{
	struct dp_hist *s = vmake(kp, "hist:keys=a:ts0=common_timestamp");
	struct dp_hist *e = vmake(ke, "hist:keys=bb:d=common_timestamp-$ts0:"
				  "onmax($d).save(bb):onmatch(kp.k).lat($d,bb)");

	hit_at(s, kp, 1, 100);
	hit_at(e, ke, 1, 400);
	hit_at(s, kp, 1, 1000);
	hit_at(e, ke, 1, 1100);
	cr_assert_eq(fired, 2);
	cr_assert_str_eq(fired_text, "lat=100 bb=1");
	expect(e, "# event histogram\n#\n# trigger info: hist:keys=bb:"
	       "vals=hitcount:d=common_timestamp-$ts0:sort=hitcount:"
	       "size=2048:clock=global:onmax($d).save(bb):onmatch(kp.k)."
	       "lat($d,bb) [active]\n#\n\n{ bb:          1 } hitcount:          2"
	       "\n\tmax:        300  bb:          1\n\n"
	       "Totals:\n    Hits: 2\n    Entries: 1\n    Dropped: 0\n");
}

Test(hist_vars, expressions_constants_and_cpu)
{
	struct dp_hist *h = vmake(kp, "hist:keys=a:x=10*2+1,y=a/3,z=-(a),"
				  "c=common_cpu");
	char *t = trigger_of(h);

	cr_assert_str_eq(t, "hist:keys=a:vals=hitcount:x=21,y=a/3,z=-(a),"
			 "c=common_cpu:sort=hitcount:size=2048 [active]\n");
	free(t);
	/* a plain own variable stands for its field */
	vmake(kp, "hist:keys=a:vals=$p:p=a");
}

Test(hist_vars, string_params)
{
	const struct dp_field *fv, *fn;
	struct dp_event *kt;
	uint8_t rec[128] = { 0 };
	struct dp_hist *h;

	cr_assert_eq(dp_registry_apply(&reg, "p:kp/t work vv=%di:s32 "
				       "nm=+0(%si):string", NULL, NULL), 0);
	kt = dp_registry_find(&reg, "kp", "t");
	cr_assert_eq(dp_registry_synth(&reg, "sl char name[]; s32 val; "
				       "char small[4]", false, NULL), 0);
	cr_assert_eq(dp_registry_synth(&reg, "sm char name[]; s32 val",
				       false, NULL), 0);
	/* a string into a char[N] only from a char[N] of that size, and
	 * not into a number */
	vrefused(kt, "hist:keys=vv:onmatch(kp.t).sl(nm,vv,nm)",
		 "Param type doesn't match synthetic event field type");
	vrefused(kt, "hist:keys=vv:onmatch(kp.t).sm(nm,nm)",
		 "Param type doesn't match synthetic event field type");
	/* no reference: every record matches */
	h = vmake(kt, "hist:keys=vv:onmatch(kp.t).sm(nm,vv)");
	fv = dp_event_field(kt, "vv");
	fn = dp_event_field(kt, "nm");
	dp_rec_put(rec, kt->id, 2);
	dp_rec_put(rec + fv->offset, 7, 4);
	dp_rec_put(rec + fn->offset, dp_data_loc(6, kt->fixed_size), 4);
	memcpy(rec + kt->fixed_size, "hello", 6);
	dp_hist_add(h, rec, kt->fixed_size + 6, &meta, NULL);
	cr_assert_eq(fired, 1);
	cr_assert_str_eq(fired_text, "name=hello val=7");
}

/* kp's record at a=1 and @ts_ns with @n frames of user stack */
static void kp_stack_at(struct dp_hist *h, const uint64_t *stack, unsigned n,
			uint64_t ts_ns)
{
	const struct dp_field *fa = dp_event_field(kp, "a");
	struct dp_rec_meta m = meta;
	uint8_t rec[256] = { 0 };

	m.stack = stack;
	m.nstack = n;
	m.ts_ns = ts_ns;
	dp_rec_put(rec, kp->id, 2);
	dp_rec_put(rec + fa->offset, 1, 4);
	dp_rec_put(rec + dp_event_field(kp, "s")->offset,
		   dp_data_loc(1, kp->fixed_size), 4);
	dp_hist_add(h, rec, kp->fixed_size + 1, &m, NULL);
}

/*
 * The inter-event stack selftests' triggers: a stack variable (the older
 * name too, two blanks before "if") on one event, copied by $ on the
 * other, handed by trace() to an 'unsigned long[]' field and printed as
 * print_synth_event() prints a stack: "stack=STACK:" then "=> %pS" a
 * line, the frame count skipped.  The copy outlives the entry it came
 * from (cleared here).
 */
Test(hist_vars, stack_variables_into_a_stack_field)
{
	const uint64_t one[] = { 0x1010, 0x2000, 0x10ff }, two[] = { 0x1020 };
	struct dp_hist *s, *e;
	char *t;

	cr_assert_eq(dp_registry_synth(&reg, "wl u32 id; u64 delta; "
				       "unsigned long[] stack", false, NULL),
		     0);
	s = vmake(kp, "hist:keys=a:ts=common_timestamp.usecs,st=stacktrace"
		  "  if a == 1||a == 2");
	e = vmake(ke, "hist:keys=bb:delta=common_timestamp.usecs-$ts,s=$st:"
		  "onmax($delta).trace(wl,bb,$delta,$s)");
	cr_assert(dp_hist_wants_stacks(s));
	cr_assert_not(dp_hist_wants_stacks(e));
	t = trigger_of(s);
	cr_assert_str_eq(t, "hist:keys=a:vals=hitcount:ts=common_timestamp."
			 "usecs,st=common_stacktrace:sort=hitcount:size=2048:"
			 "clock=global if a == 1||a == 2 [active]\n");
	free(t);
	kp_stack_at(s, one, 3, 1000000);
	hit_at(e, ke, 1, 1007000);
	cr_assert_eq(fired, 1);
	cr_assert_str_eq(fired_text, "id=1 delta=7 stack=STACK:\n"
			 "=> 0x1010\n=> 0x2000\n=> 0x10ff\n");
	/* no new maximum: nothing; a new one with another stack, after
	 * the start's table is cleared (e holds its own copy) */
	kp_stack_at(s, two, 1, 2000000);
	hit_at(e, ke, 1, 2003000);
	cr_assert_eq(fired, 1);
	kp_stack_at(s, two, 1, 3000000);
	dp_hist_clear(s);
	kp_stack_at(s, two, 1, 3000000);
	hit_at(e, ke, 1, 3009000);
	cr_assert_eq(fired, 2);
	cr_assert_str_eq(fired_text, "id=1 delta=9 stack=STACK:\n"
			 "=> 0x1020\n");
	/* no stack: the empty one */
	kp_stack_at(s, NULL, 0, 4000000);
	hit_at(e, ke, 1, 4010000);
	cr_assert_eq(fired, 3);
	cr_assert_str_eq(fired_text, "id=1 delta=10 stack=STACK:\n");
	/* a stack goes into a stack field only, and into no expression */
	vrefused(ke, "hist:keys=bb:x=$st:onmatch(kp.k).trace(lat,$x,bb)",
		 "Param type doesn't match synthetic event field type");
	vrefused(ke, "hist:keys=bb:d=common_timestamp.usecs-$ts:"
		 "onmatch(kp.k).trace(wl,bb,$d,$d)",
		 "Param type doesn't match synthetic event field type");
	vrefused(kp, "hist:keys=a:y=common_stacktrace+1",
		 "Couldn't find field");
	vrefused(ke, "hist:keys=bb:z=$st+1",
		 "String type can not be an operand in expression");
}

Test(hist_vars, name_shares_one_table)
{
	struct dp_hist *a = vmake(kp, "hist:name=both:keys=common_pid");
	struct dp_hist *b = vmake(ke, "hist:name=both:keys=common_pid");
	char *ta, *tb;

	hit_at(a, kp, 1, 0);
	hit_at(b, ke, 1, 0);
	ta = text_of(a);
	tb = text_of(b);
	cr_assert_str_eq(ta, tb);
	cr_assert(strstr(ta, "hist:name=both:keys=common_pid:vals=hitcount"));
	cr_assert(strstr(ta, "hitcount:          2\n"));
	free(ta);
	free(tb);
	vrefused(ke, "hist:name=both:keys=bb", "Named hist trigger doesn't "
		 "match existing named trigger (includes variables)");
}

Test(hist_vars, errors)
{
	vmake(kp, "hist:keys=a:ts0=common_timestamp.usecs");
	/* then taken for a field: two entries, as the kernel logs */
	vrefused(ke, "hist:keys=bb:x=$nosuch", "Couldn't find field");
	vrefused(kp, "hist:keys=a:ts0=a", "Variable already defined");
	vrefused(ke, "hist:keys=bb:d=common_timestamp-$ts0",
		 "Timestamp units in expression don't match");
	vrefused(ke, "hist:keys=bb:d=bb/0", "Division by zero");
	vrefused(ke, "hist:keys=bb:d=1x", "Expecting numeric literal");
	/* an expression variable of the same trigger is not there yet */
	vrefused(ke, "hist:keys=bb:vals=$d:d=bb+1", "Couldn't find field");
	vrefused(ke, "hist:keys=bb:d=-(bb)+1",
		 "Unary minus not supported in sub-expressions");
	vrefused(ke, "hist:keys=bb:d=bb+bb+bb+bb+bb",
		 "Too many subexpressions (3 max)");
	vrefused(ke, "hist:keys=$ts0", "Using variable references in keys not "
		 "supported");
	vrefused(ke, "hist:keys=bb:onmatch(kp.k).trace(nosuch,bb)",
		 "Couldn't find synthetic event");
	vrefused(ke, "hist:keys=bb:onmatch(kp.k).lat($ts0)",
		 "Param count doesn't match synthetic event field count");
	vrefused(ke, "hist:keys=bb:onmatch(kp.k).lat(bb,bb)",
		 "Param type doesn't match synthetic event field type");
	/* a field as a param is a field variable: never signed, as the
	 * kernel's create_var() makes it (common_pid is no pid_t) */
	cr_assert_eq(dp_registry_synth(&reg, "pl pid_t pid", false, NULL), 0);
	vrefused(ke, "hist:keys=bb:onmatch(kp.k).pl(common_pid)",
		 "Param type doesn't match synthetic event field type");
	vrefused(ke, "hist:keys=bb:onmatch(kp.nosuch).lat(bb,bb)",
		 "Invalid subsystem or event name");
	vrefused(ke, "hist:keys=bb:onmatch(kp).lat(bb,bb)", "Missing subsystem");
	vrefused(ke, "hist:keys=bb:onmatch(kp.k).save(bb)",
		 "Handler doesn't support action");
	vrefused(ke, "hist:keys=bb:onmax(bb).save(bb)",
		 "For onmax(x) or onchange(x), x must be a variable");
	vrefused(ke, "hist:keys=bb:x=bb:onmax($x).save(nosuch)",
		 "Couldn't create field variable");
	vrefused(ke, "hist:keys=bb:onmatch(kp.k)", "No action found");
}

/* onmax()/onchange().snapshot(): one trigger holds the snapshot, taken on
 * a new maximum or another value against the last snapshot's, whatever
 * the entry; the hist file details the last one. */
static unsigned snaps;

static void env_snapshot(void *priv)
{
	(void)priv;
	snaps++;
}

Test(hist_vars, snapshot_action)
{
	static const struct dp_hist_env senv = { &reg, env_each, env_fire,
						 NULL, NULL, env_snapshot };
	struct dp_hist_error err;
	struct dp_hist *h = NULL, *o = NULL;
	char *got;

	snaps = 0;
	/* no snapshot buffer (trace --trigger): refused, said so */
	vrefused(ke, "hist:keys=bb:x=bb:onmax($x).snapshot()",
		 "Not supported by dprobe yet (snapshot() outside dprobe "
		 "mount: no snapshot buffer)");
	vrefused(ke, "hist:keys=bb:onmatch(kp.k).snapshot()",
		 "Handler doesn't support action");
	cr_assert_eq(dp_hist_new_in(&senv, ke, "hist:keys=bb:x=bb:"
				    "onmax($x).snapshot()", false, &h, &err),
		     0, "%s", err.msg ? err.msg : "");
	env_v[env_n++] = h;
	cr_assert(dp_hist_snapshots(h));
	/* a second one: the buffer is taken (-EBUSY, nothing logged) */
	err.msg = NULL;
	cr_assert_eq(dp_hist_new_in(&senv, kp, "hist:keys=a:y=a:"
				    "onchange($y).snapshot()", false, &o, &err),
		     -EBUSY);
	cr_assert_null(o);
	cr_assert_null(err.msg);
	hit_at(h, ke, 5, 0);
	hit_at(h, ke, 5, 0);		/* no new maximum */
	hit_at(h, ke, 3, 0);		/* a new entry, below the last */
	cr_assert_eq(snaps, 1);
	hit_at(h, ke, 9, 0);
	cr_assert_eq(snaps, 2);
	got = text_of(h);
	cr_assert(strstr(got, "onmax($x).snapshot() [active]\n"), "%s", got);
	cr_assert(strstr(got, "{ bb:          9 } hitcount:          1\n"
			 "\tmax:          9\n"), "%s", got);
	cr_assert(strstr(got, "\nSnapshot taken (see tracing/snapshot).  "
			 "Details:\n\ttriggering value { onmax($x) }:"
			 "          9\ttriggered by event with key: { bb:"
			 "          9 }\n\nTotals:"), "%s", got);
	free(got);
}

/* An event outside the registry (the mount's ftrace/print) that onmatch()
 * may name. */
Test(hist_vars, onmatch_an_event_outside_the_registry)
{
	static struct dp_event print;
	struct dp_hist_env xenv = env;
	struct dp_hist_error err;
	struct dp_hist *h = NULL;

	print = *kp;
	snprintf(print.group, sizeof(print.group), "ftrace");
	snprintf(print.name, sizeof(print.name), "print");
	print.next = NULL;
	cr_assert_eq(dp_hist_new_in(&env, ke, "hist:keys=bb:x=common_timestamp:"
				    "onmatch(ftrace.print).lat($x,bb)", false,
				    &h, &err), -EINVAL);
	cr_assert_str_eq(err.msg, "Invalid subsystem or event name");
	xenv.extra = &print;
	cr_assert_eq(dp_hist_new_in(&xenv, ke, "hist:keys=bb:x=common_timestamp:"
				    "onmatch(ftrace.print).lat($x,bb)", false,
				    &h, &err), 0, "%s", err.msg ? err.msg : "");
	env_v[env_n++] = h;
	hit_at(h, ke, 5, 100);
	cr_assert_eq(fired, 1);
	cr_assert_str_eq(fired_text, "lat=100 bb=5");
}
