// SPDX-License-Identifier: GPL-2.0
/*
 * The tracers' renderers (output/tracer.h): function_graph and function
 * lines from records built by hand, so durations are exact: leaves,
 * nesting, the duration marks at each threshold, two threads, frames
 * left by a longjmp, max_graph_depth, set_graph_function,
 * set_graph_notrace, return values, the trace_options, lost records and
 * other events as comments; the tracers found by --tracer only; the
 * stack tracer's table (stack_trace).
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event/event.h"
#include "output/output.h"
#include "output/renderer.h"
#include "output/tracer.h"

#include "capture.h"

/* ---- the ftrace/ events and their records -------------------------------- */

/* funcgraph_entry (__probe_ip), funcgraph_exit (__probe_func,
 * __probe_ret_ip, retval), function (__probe_ip, parent_ip), and
 * kprobes/other with a u32 "x". */
static struct dp_type tx64 = { .kind = DP_T_X, .size = 8 };
static struct dp_type tu32 = { .kind = DP_T_U, .size = 4 };
static struct dp_field ent_f[] = {
	{ .name = "__probe_ip", .type = "unsigned long", .offset = 8,
	  .size = 8, .elem_size = 8 },
};
static struct dp_field ent_sp_f[] = {
	{ .name = "__probe_ip", .type = "unsigned long", .offset = 8,
	  .size = 8, .elem_size = 8 },
	{ .name = "sp", .type = "u64", .offset = 16, .size = 8,
	  .elem_size = 8, .ptype = &tx64 },
};
static struct dp_field ext_f[] = {
	{ .name = "__probe_func", .type = "unsigned long", .offset = 8,
	  .size = 8, .elem_size = 8 },
	{ .name = "__probe_ret_ip", .type = "unsigned long", .offset = 16,
	  .size = 8, .elem_size = 8 },
	{ .name = "retval", .type = "u64", .offset = 24, .size = 8,
	  .elem_size = 8, .ptype = &tx64 },
};
static struct dp_field fn_f[] = {
	{ .name = "__probe_ip", .type = "unsigned long", .offset = 8,
	  .size = 8, .elem_size = 8 },
	{ .name = "parent_ip", .type = "u64", .offset = 16, .size = 8,
	  .elem_size = 8, .ptype = &tx64 },
};
static struct dp_field oth_f[] = {
	{ .name = "__probe_ip", .type = "unsigned long", .offset = 8,
	  .size = 8, .elem_size = 8 },
	{ .name = "x", .type = "u32", .offset = 16, .size = 4,
	  .elem_size = 4, .ptype = &tu32 },
};
static struct dp_event ev_ent = {
	.id = 1001, .group = "ftrace", .name = "funcgraph_entry",
	.kind = DP_KIND_KPROBE, .nfields = 1, .fields = ent_f,
	.fixed_size = 16,
};
static struct dp_event ev_ent_sp = {
	.id = 1005, .group = "ftrace", .name = "funcgraph_entry",
	.kind = DP_KIND_KPROBE, .nfields = 2, .fields = ent_sp_f,
	.fixed_size = 24,
};
static struct dp_event ev_ext = {
	.id = 1002, .group = "ftrace", .name = "funcgraph_exit",
	.kind = DP_KIND_KPROBE, .is_return = true, .nfields = 3,
	.fields = ext_f, .fixed_size = 32,
};
static struct dp_event ev_fn = {
	.id = 1003, .group = "ftrace", .name = "function",
	.kind = DP_KIND_KPROBE, .nfields = 2, .fields = fn_f,
	.fixed_size = 24,
};
static struct dp_event ev_oth = {
	.id = 1004, .group = "kprobes", .name = "other",
	.kind = DP_KIND_KPROBE, .nfields = 2, .fields = oth_f,
	.fixed_size = 20,
};

/* Functions of 0x100 bytes: main at 0x1000, a, b, c, d after it. */
enum { MAIN = 0x1000, A = 0x2000, B = 0x3000, C = 0x4000, D = 0x5000 };

static int lookup(void *priv, uint64_t addr, const char **sym,
		  uint64_t *off, uint64_t *size)
{
	static const char *const names[] = { "main", "a", "b", "c", "d" };

	(void)priv;
	if (addr < 0x1000 || addr >= 0x6000 || (addr & 0xfff) >= 0x100)
		return -1;
	*sym = names[addr / 0x1000 - 1];
	*off = addr & 0xff;
	*size = 0x100;
	return 0;
}

static const struct dp_symbolizer syms = { lookup, NULL };

/* A session of one tracer, its records fed by E(), X(), O(). */
struct sess {
	struct dp_renderer r;
	struct cap c;
	struct dp_tracer_opts o;
};

static void start(struct sess *s, const char *tracer)
{
	const struct dp_renderer_ops *ops = dp_renderer_tracer(tracer);

	cr_assert_not_null(ops, "no tracer %s", tracer);
	dp_renderer_init(&s->r, ops, cap_open(&s->c), 2);
	dp_tracer_opts_init(&s->o);
	s->r.tracer = &s->o;
}

static void begin(struct sess *s, const char *tracer)
{
	start(s, tracer);
	dp_render_begin(&s->r);
}

static char *finish(struct sess *s)
{
	dp_render_end(&s->r);
	return cap_close(&s->c);
}

/* Thread @tid of "work" (or "worker" for tids but 100) at @us µs + @ns. */
static struct dp_rec_meta at(int tid, uint64_t ns)
{
	return (struct dp_rec_meta){
		.ts_ns = 1000000000000ull + ns, .cpu = tid == 100 ? 0 : 1,
		.pid = tid, .tgid = 100, .comm = tid == 100 ? "work" : "worker",
	};
}

static void feed(struct sess *s, const struct dp_event *ev, uint8_t *rec,
		 size_t len, int tid, uint64_t ns)
{
	struct dp_rec_meta m = at(tid, ns);

	memcpy(rec, &ev->id, 2);
	memcpy(rec + 4, &tid, 4);
	cr_assert_eq(dp_render_event(&s->r, ev, rec, len, &m, &syms), 0);
}

/* An entry of @fn by @tid at @ns. */
static void E(struct sess *s, int tid, uint64_t ns, uint64_t fn)
{
	uint8_t rec[16] = { 0 };

	memcpy(rec + 8, &fn, 8);
	feed(s, &ev_ent, rec, sizeof(rec), tid, ns);
}

/* An entry with the stack pointer @sp. */
static void ES(struct sess *s, uint64_t ns, uint64_t fn, uint64_t sp)
{
	uint8_t rec[24] = { 0 };

	memcpy(rec + 8, &fn, 8);
	memcpy(rec + 16, &sp, 8);
	feed(s, &ev_ent_sp, rec, sizeof(rec), 100, ns);
}

/* A return of @fn by @tid at @ns, returning @rv. */
static void X(struct sess *s, int tid, uint64_t ns, uint64_t fn, uint64_t rv)
{
	uint8_t rec[32] = { 0 };
	uint64_t ret_ip = MAIN + 0x10;

	memcpy(rec + 8, &fn, 8);
	memcpy(rec + 16, &ret_ip, 8);
	memcpy(rec + 24, &rv, 8);
	feed(s, &ev_ext, rec, sizeof(rec), tid, ns);
}

/* Another event, x=@x, by @tid at @ns. */
static void O(struct sess *s, int tid, uint64_t ns, uint32_t x)
{
	uint8_t rec[20] = { 0 };
	uint64_t ip = B + 4;

	memcpy(rec + 8, &ip, 8);
	memcpy(rec + 16, &x, 4);
	feed(s, &ev_oth, rec, sizeof(rec), tid, ns);
}

#define HEADER \
	"# tracer: function_graph\n" \
	"#\n" \
	"# CPU  DURATION                  FUNCTION CALLS\n" \
	"# |     |   |                     |   |   |   |\n"

#define EXPECT(s, want) do { \
	char *got_ = finish(s); \
	cr_expect_str_eq(got_, want, "got:\n%s", got_); \
	free(got_); \
} while (0)

/* ---- function_graph --------------------------------------------------- */

/* A call with nothing inside is one line; calls with calls inside open
 * and close, two spaces a level. */
Test(fgraph, leaf_and_nesting)
{
	struct sess s;

	begin(&s, "function_graph");
	E(&s, 100, 0, MAIN);
	E(&s, 100, 1000, A);
	X(&s, 100, 2500, A, 0);
	E(&s, 100, 3000, B);
	E(&s, 100, 3100, C);
	X(&s, 100, 3200, C, 0);
	X(&s, 100, 4000, B, 0);
	X(&s, 100, 5000, MAIN, 0);
	EXPECT(&s, HEADER
		" 0)               |  main() {\n"
		" 0)   1.500 us    |    a();\n"
		" 0)               |    b() {\n"
		" 0)   0.100 us    |      c();\n"
		" 0)   1.000 us    |    }\n"
		" 0)   5.000 us    |  }\n");
}

/* trace_find_mark(): a mark when the duration is above 10 us, 100 us,
 * 1 ms, 10 ms, 100 ms, 1 s, none at the thresholds themselves; the
 * number keeps to 7 digits and a dot. */
Test(fgraph, duration_marks)
{
	static const uint64_t d[] = {
		10000, 10001, 100000, 100001, 1000000, 1000001, 10000000,
		10000001, 100000000, 100000001, 1000000000, 1000000001,
		123456789, 9999999999ull,
	};
	struct sess s;
	uint64_t t = 0;

	begin(&s, "function_graph");
	for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++) {
		E(&s, 100, t, A);
		X(&s, 100, t + d[i], A, 0);
		t += d[i];
	}
	EXPECT(&s, HEADER
		" 0)   10.000 us   |  a();\n"
		" 0) + 10.001 us   |  a();\n"
		" 0) + 100.000 us  |  a();\n"
		" 0) ! 100.001 us  |  a();\n"
		" 0) ! 1000.000 us |  a();\n"
		" 0) # 1000.001 us |  a();\n"
		" 0) # 10000.00 us |  a();\n"
		" 0) * 10000.00 us |  a();\n"
		" 0) * 100000.0 us |  a();\n"
		" 0) @ 100000.0 us |  a();\n"
		" 0) @ 1000000 us  |  a();\n"
		" 0) $ 1000000 us  |  a();\n"
		" 0) @ 123456.7 us |  a();\n"
		" 0) $ 9999999 us  |  a();\n");
}

/* Lines keep the records' order across threads; a switch of thread is
 * the kernel's context-switch block; an entry waits for its thread's
 * next record, not for the next record of all. */
Test(fgraph, two_threads)
{
	struct sess s;

	begin(&s, "function_graph");
	E(&s, 100, 0, MAIN);
	E(&s, 101, 100, A);
	E(&s, 100, 200, B);	/* main's line is now known: main() { */
	X(&s, 101, 300, A, 0);	/* a is a leaf of 101 */
	X(&s, 100, 400, B, 0);	/* b is a leaf of 100 */
	X(&s, 100, 500, MAIN, 0);
	EXPECT(&s, HEADER
		" 0)               |  main() {\n"
		" ------------------------------------------\n"
		" 1)    work-100    =>   worker-101  \n"
		" ------------------------------------------\n"
		"\n"
		" 1)   0.200 us    |  a();\n"
		" ------------------------------------------\n"
		" 0)   worker-101   =>    work-100   \n"
		" ------------------------------------------\n"
		"\n"
		" 0)   0.200 us    |    b();\n"
		" 0)   0.500 us    |  }\n");
}

/* A longjmp from d to main: d, c, b and a never return; main's return
 * closes them first, without durations, and the depth is main's again. */
Test(fgraph, longjmp_skips_frames)
{
	struct sess s;

	begin(&s, "function_graph");
	E(&s, 100, 0, MAIN);
	E(&s, 100, 100, A);
	E(&s, 100, 200, B);
	E(&s, 100, 300, C);
	E(&s, 100, 400, D);
	X(&s, 100, 800, MAIN, 0);
	EXPECT(&s, HEADER
		" 0)               |  main() {\n"
		" 0)               |    a() {\n"
		" 0)               |      b() {\n"
		" 0)               |        c() {\n"
		" 0)               |          d() {\n"
		" 0)               |          } /* d (unwound) */\n"
		" 0)               |        } /* c (unwound) */\n"
		" 0)               |      } /* b (unwound) */\n"
		" 0)               |    } /* a (unwound) */\n"
		" 0)   0.800 us    |  }\n");
}

/* With the stack pointer in the entries, the first call after the jump
 * closes the frames it left: a call at or above a frame's stack pointer
 * is not inside it; one far above (a signal handler's stack) is. */
Test(fgraph, longjmp_seen_by_sp)
{
	struct sess s;

	begin(&s, "function_graph");
	ES(&s, 0, MAIN, 0x7000f000);
	ES(&s, 100, A, 0x7000eff0);
	ES(&s, 200, B, 0x7000efe0);
	ES(&s, 300, C, 0x7000efd0);
	ES(&s, 400, D, 0x7000eff0);	/* main calls d after the jump */
	ES(&s, 450, C, 0x7100eff0);	/* a handler, on its own stack */
	X(&s, 100, 470, C, 0);
	X(&s, 100, 500, D, 0);
	X(&s, 100, 800, MAIN, 0);
	EXPECT(&s, HEADER
		" 0)               |  main() {\n"
		" 0)               |    a() {\n"
		" 0)               |      b() {\n"
		" 0)               |        c() {\n"
		" 0)               |        } /* c (unwound) */\n"
		" 0)               |      } /* b (unwound) */\n"
		" 0)               |    } /* a (unwound) */\n"
		" 0)               |    d() {\n"
		" 0)   0.020 us    |      c();\n"
		" 0)   0.100 us    |    }\n"
		" 0)   0.800 us    |  }\n");
}

/* The matching frame is the innermost of the function: recursion. */
Test(fgraph, recursion)
{
	struct sess s;

	begin(&s, "function_graph");
	E(&s, 100, 0, A);
	E(&s, 100, 100, A);
	E(&s, 100, 200, A);
	X(&s, 100, 300, A, 0);
	X(&s, 100, 400, A, 0);
	X(&s, 100, 500, A, 0);
	EXPECT(&s, HEADER
		" 0)               |  a() {\n"
		" 0)               |    a() {\n"
		" 0)   0.100 us    |      a();\n"
		" 0)   0.300 us    |    }\n"
		" 0)   0.500 us    |  }\n");
}

static void tree(struct sess *s)
{
	E(s, 100, 0, MAIN);
	E(s, 100, 100, A);
	E(s, 100, 200, B);
	E(s, 100, 300, C);
	X(s, 100, 400, C, 0);
	X(s, 100, 500, B, 0);
	X(s, 100, 600, A, 0);
	E(s, 100, 700, B);
	X(s, 100, 800, B, 0);
	X(s, 100, 900, MAIN, 0);
}

/* max_graph_depth: nothing at that depth or below; a call whose
 * callees are all hidden is a leaf. */
Test(fgraph, max_depth)
{
	struct sess s;

	start(&s, "function_graph");
	s.o.max_depth = 2;
	dp_render_begin(&s.r);
	tree(&s);
	EXPECT(&s, HEADER
		" 0)               |  main() {\n"
		" 0)   0.500 us    |    a();\n"
		" 0)   0.100 us    |    b();\n"
		" 0)   0.900 us    |  }\n");
	start(&s, "function_graph");
	s.o.max_depth = 1;
	dp_render_begin(&s.r);
	tree(&s);
	EXPECT(&s, HEADER " 0)   0.900 us    |  main();\n");
}

/* set_graph_function: only what runs inside a matching function, from
 * depth 0; set_graph_notrace: a function and all it calls hidden. */
Test(fgraph, graph_function_and_notrace)
{
	static const char *const g[] = { "b*" };
	static const char *const n[] = { "c" };
	struct sess s;

	start(&s, "function_graph");
	s.o.graph_funcs = g;
	s.o.ngraph_funcs = 1;
	dp_render_begin(&s.r);
	tree(&s);
	EXPECT(&s, HEADER
		" 0)               |  b() {\n"
		" 0)   0.100 us    |    c();\n"
		" 0)   0.300 us    |  }\n"
		" 0)   0.100 us    |  b();\n");
	start(&s, "function_graph");
	s.o.notrace_funcs = n;
	s.o.nnotrace_funcs = 1;
	dp_render_begin(&s.r);
	tree(&s);
	EXPECT(&s, HEADER
		" 0)               |  main() {\n"
		" 0)               |    a() {\n"
		" 0)   0.300 us    |      b();\n"
		" 0)   0.500 us    |    }\n"
		" 0)   0.100 us    |    b();\n"
		" 0)   0.900 us    |  }\n");
}

/* The options are read at each record (the mount changes them while the
 * tracer runs): a new max_graph_depth, new globs (their generation bumped:
 * the matches remembered go), a column turned off. */
Test(fgraph, options_live)
{
	static const char *const g1[] = { "a" };
	static const char *const g2[] = { "b" };
	struct sess s;

	start(&s, "function_graph");
	s.o.graph_funcs = g1;
	s.o.ngraph_funcs = 1;
	dp_render_begin(&s.r);
	E(&s, 100, 0, MAIN);
	E(&s, 100, 100, A);
	E(&s, 100, 200, B);
	X(&s, 100, 300, B, 0);
	s.o.max_depth = 1;		/* a's frame is in: b is below it */
	E(&s, 100, 400, B);
	X(&s, 100, 500, B, 0);
	X(&s, 100, 600, A, 0);
	s.o.max_depth = 0;
	s.o.graph_funcs = g2;
	s.o.globs_gen++;
	E(&s, 100, 700, A);
	X(&s, 100, 800, A, 0);
	s.o.flags &= ~DP_FG_DURATION;
	E(&s, 100, 900, B);
	X(&s, 100, 1000, B, 0);
	X(&s, 100, 1100, MAIN, 0);
	EXPECT(&s, HEADER
		" 0)               |  a() {\n"
		" 0)   0.100 us    |    b();\n"
		" 0)   0.500 us    |  }\n"
		" 0) b();\n");
}

/* funcgraph-retval: hex, an error number in decimal (also a 32-bit one),
 * all hex with funcgraph-retval-hex; the name after every brace. */
Test(fgraph, retval)
{
	struct sess s;

	start(&s, "function_graph");
	dp_trace_option_set(&s.o.flags, "funcgraph-retval");
	dp_render_begin(&s.r);
	E(&s, 100, 0, MAIN);
	E(&s, 100, 100, A);
	X(&s, 100, 200, A, 0);
	E(&s, 100, 300, A);
	X(&s, 100, 400, A, (uint64_t)-22);
	E(&s, 100, 500, A);
	X(&s, 100, 600, A, 0xffffffea);
	E(&s, 100, 700, A);
	X(&s, 100, 800, A, (uint64_t)-4096);
	X(&s, 100, 900, MAIN, 0x10);
	EXPECT(&s,
		"# tracer: function_graph\n"
		"#\n"
		"# CPU  DURATION                  FUNCTION CALLS\n"
		"# |     |   |                     |   |   |   |\n"
		" 0)               |  main() {\n"
		" 0)   0.100 us    |    a(); /* = 0x0 */\n"
		" 0)   0.100 us    |    a(); /* = -22 */\n"
		" 0)   0.100 us    |    a(); /* = -22 */\n"
		" 0)   0.100 us    |    a(); /* = 0xfffffffffffff000 */\n"
		" 0)   0.900 us    |  } /* main = 0x10 */\n");
	start(&s, "function_graph");
	dp_trace_option_set(&s.o.flags, "funcgraph-retval");
	dp_trace_option_set(&s.o.flags, "funcgraph-retval-hex");
	dp_render_begin(&s.r);
	E(&s, 100, 300, A);
	X(&s, 100, 400, A, (uint64_t)-22);
	EXPECT(&s, HEADER
		" 0)   0.100 us    |  a(); /* = 0xffffffffffffffea */\n");
}

/* funcgraph-tail, -proc, -abstime on; -cpu, -overhead off; then
 * -duration off: the header follows. */
Test(fgraph, options)
{
	struct sess s;

	start(&s, "function_graph");
	cr_assert_eq(dp_trace_option_set(&s.o.flags, "funcgraph-tail"), 0);
	cr_assert_eq(dp_trace_option_set(&s.o.flags, "funcgraph-proc"), 0);
	cr_assert_eq(dp_trace_option_set(&s.o.flags, "funcgraph-abstime"), 0);
	cr_assert_eq(dp_trace_option_set(&s.o.flags, "nofuncgraph-cpu"), 0);
	cr_assert_eq(dp_trace_option_set(&s.o.flags, "nofuncgraph-overhead"),
		     0);
	dp_render_begin(&s.r);
	E(&s, 100, 0, MAIN);
	E(&s, 100, 1000, A);
	X(&s, 100, 21000, A, 0);
	X(&s, 100, 1999999, MAIN, 0);
	EXPECT(&s,
		"# tracer: function_graph\n"
		"#\n"
		"#     TIME         TASK/PID         DURATION                  FUNCTION CALLS\n"
		"#      |            |    |           |   |                     |   |   |   |\n"
		" 1000.000000 |     work-100    |               |  main() {\n"
		" 1000.000001 |     work-100    |   20.000 us   |    a();\n"
		" 1000.001999 |     work-100    |   1999.999 us |  } /* main */\n");
	start(&s, "function_graph");
	cr_assert_eq(dp_trace_option_set(&s.o.flags, "nofuncgraph-duration"),
		     0);
	cr_assert_eq(dp_trace_option_set(&s.o.flags, "funcgraph-bogus"), -1);
	dp_render_begin(&s.r);
	E(&s, 100, 0, A);
	X(&s, 100, 1000, A, 0);
	EXPECT(&s,
		"# tracer: function_graph\n"
		"#\n"
		"# CPU               FUNCTION CALLS\n"
		"# |                 |   |   |   |\n"
		" 0) a();\n");
}

/* Other events are comments, indented as the kernel does (none at depth
 * 0); a return without its entry is "} /" "* name *" "/" without a time;
 * lost records are the kernel's marker in their place. */
Test(fgraph, comments_unmatched_lost)
{
	struct sess s;

	begin(&s, "function_graph");
	X(&s, 100, 0, C, 0);		/* entered before tracing */
	E(&s, 100, 100, MAIN);
	O(&s, 100, 150, 7);
	E(&s, 100, 200, A);
	O(&s, 100, 250, 8);
	X(&s, 100, 300, A, 0);
	dp_render_lost(&s.r, 0, 5);
	X(&s, 100, 400, B, 0);		/* its entry was lost */
	X(&s, 100, 500, MAIN, 0);
	EXPECT(&s, HEADER
		" 0)               |  } /* c */\n"
		" 0)               |  main() {\n"
		" 0)               |  /* other: (b+0x4/0x100) x=7 */\n"
		" 0)               |    a() {\n"
		" 0)               |      /* other: (b+0x4/0x100) x=8 */\n"
		" 0)   0.100 us    |    }\n"
		"CPU:0 [LOST 5 EVENTS]\n"
		" 0)               |    } /* b */\n"
		" 0)   0.400 us    |  }\n");
}

/* An entry line waits at most 100 ms of trace time for its thread: then
 * it is "func() {" and the lines behind it go out. */
Test(fgraph, entry_waits_bounded)
{
	struct sess s;

	begin(&s, "function_graph");
	E(&s, 100, 0, A);
	E(&s, 101, 1000, B);
	X(&s, 101, 2000, B, 0);
	fflush(s.c.f);
	cr_expect_str_eq(s.c.buf, HEADER, "nothing yet: %s", s.c.buf);
	E(&s, 101, 100001000, C);	/* 100 ms after a's entry */
	fflush(s.c.f);
	cr_expect_str_eq(s.c.buf, HEADER
		" 0)               |  a() {\n"
		" ------------------------------------------\n"
		" 1)    work-100    =>   worker-101  \n"
		" ------------------------------------------\n"
		"\n"
		" 1)   1.000 us    |  b();\n", "%s", s.c.buf);
	X(&s, 100, 100002000, A, 0);
	EXPECT(&s, HEADER
		" 0)               |  a() {\n"
		" ------------------------------------------\n"
		" 1)    work-100    =>   worker-101  \n"
		" ------------------------------------------\n"
		"\n"
		" 1)   1.000 us    |  b();\n"
		" 1)               |  c() {\n"
		" ------------------------------------------\n"
		" 0)   worker-101   =>    work-100   \n"
		" ------------------------------------------\n"
		"\n"
		" 0) @ 100002.0 us |  }\n");
}

/* A copy of the session in a forked child is freed without a byte. */
Test(fgraph, discard)
{
	struct sess s;
	size_t len;
	char *got;

	begin(&s, "function_graph");
	E(&s, 100, 0, A);
	fflush(s.c.f);
	len = s.c.len;
	dp_render_discard(&s.r);
	got = cap_close(&s.c);
	cr_expect_eq(strlen(got), len);
	free(got);
}

/* ---- function ----------------------------------------------------------- */

static void F(struct sess *s, uint64_t ns, uint64_t ip, uint64_t parent)
{
	uint8_t rec[24] = { 0 };

	memcpy(rec + 8, &ip, 8);
	memcpy(rec + 16, &parent, 8);
	feed(s, &ev_fn, rec, sizeof(rec), 100, ns);
}

/* "func <-parent" after the context, names alone; a parent no symbol
 * covers as 0x%08lx, none for 0; other events as text prints them. */
Test(function, lines)
{
	struct sess s;

	begin(&s, "function");
	F(&s, 1000, A, MAIN + 0x24);
	F(&s, 2000, B, 0x9999);
	F(&s, 3000, C, 0);
	O(&s, 100, 4000, 3);
	dp_render_lost(&s.r, 1, 2);
	EXPECT(&s,
		"            work-100     [000] .....  1000.000001: a <-main\n"
		"            work-100     [000] .....  1000.000002: b <-0x00009999\n"
		"            work-100     [000] .....  1000.000003: c\n"
		"            work-100     [000] .....  1000.000004: other: (b+0x4/0x100) x=3\n"
		"CPU:1 [LOST 2 EVENTS]\n");
}

/* print-parent off: the name alone (the mount's options/print-parent). */
Test(function, noprint_parent)
{
	struct sess s;

	start(&s, "function");
	s.o.flags &= ~DP_TR_PRINT_PARENT;
	dp_render_begin(&s.r);
	F(&s, 1000, A, MAIN + 0x24);
	s.o.flags |= DP_TR_PRINT_PARENT;
	F(&s, 2000, B, A);
	EXPECT(&s,
		"            work-100     [000] .....  1000.000001: a\n"
		"            work-100     [000] .....  1000.000002: b <-a\n");
}

/* ---- selection and options -------------------------------------------- */

/* The tracers by --tracer only; --format's names unchanged. */
Test(tracer, by_name)
{
	char buf[256];

	cr_expect_not_null(dp_renderer_tracer("function_graph"));
	cr_expect_not_null(dp_renderer_tracer("function"));
	cr_expect_null(dp_renderer_tracer("text"));
	cr_expect_null(dp_renderer_by_name("function_graph"));
	cr_expect_null(dp_renderer_by_name("function"));
	cr_expect_not_null(dp_renderer_tracer("stack"));
	cr_expect_null(dp_renderer_by_name("stack"));
	cr_expect_str_eq(dp_renderer_tracer_names(buf, sizeof(buf)),
			 "function, function_graph or stack");
	cr_expect_str_eq(dp_renderer_names(buf, sizeof(buf)),
			 "text, json, folded, flamegraph, chrome, tracedat, "
			 "ctf or otlp");
}

/* trace_options: NAME sets, noNAME clears, the kernel's defaults. */
Test(tracer, options_table)
{
	struct dp_tracer_opts o;
	size_t n;
	const struct dp_trace_option *t = dp_trace_options(&n);

	dp_tracer_opts_init(&o);
	cr_expect_eq(o.flags, DP_FG_CPU | DP_FG_OVERHEAD | DP_FG_DURATION |
			      DP_FG_IRQS | DP_FG_SLEEP_TIME | DP_FG_GRAPH_TIME |
			      DP_TR_PRINT_PARENT);
	cr_expect_eq(n, 12);
	cr_expect_str_eq(t[0].name, "funcgraph-overrun");
	cr_expect_eq(dp_trace_option_set(&o.flags, "nofuncgraph-cpu"), 0);
	cr_expect_eq(o.flags & DP_FG_CPU, 0);
	cr_expect_eq(dp_trace_option_set(&o.flags, "funcgraph-proc"), 0);
	cr_expect_neq(o.flags & DP_FG_PROC, 0);
	cr_expect_eq(dp_trace_option_set(&o.flags, "proc"), -1);
	{
		struct cap c;
		char *got;

		dp_tracer_opts_init(&o);
		dp_trace_options_list(cap_open(&c), o.flags);
		got = cap_close(&c);
		cr_expect_str_eq(got, "nofuncgraph-overrun\nfuncgraph-cpu\n"
			"funcgraph-overhead\nnofuncgraph-proc\n"
			"funcgraph-duration\nnofuncgraph-abstime\n"
			"funcgraph-irqs\nnofuncgraph-tail\nnofuncgraph-retval\n"
			"nofuncgraph-retval-hex\nsleep-time\ngraph-time\n");
		free(got);
	}
	cr_expect_eq(dp_trace_option_set(&o.flags, "no"), -1);
}

/* ---- the stack tracer ------------------------------------------------- */

static struct dp_field stk_f[] = {
	{ .name = "__probe_ip", .type = "unsigned long", .offset = 8,
	  .size = 8, .elem_size = 8 },
};
static struct dp_event ev_stk = {
	.id = 1006, .group = "ftrace", .name = "stack",
	.kind = DP_KIND_KPROBE, .nfields = 1, .fields = stk_f,
	.fixed_size = 16, .stack = true, .stack_max = true,
};

/* A record of a stack @n deep: frames @fr, depths @d. */
static void S(struct sess *s, const uint64_t *fr, const uint64_t *d,
	      unsigned n)
{
	uint8_t rec[16] = { 0 };
	struct dp_rec_meta m = at(100, 0);

	m.stack = fr;
	m.nstack = n;
	m.stack_depth = d;
	memcpy(rec, &ev_stk.id, 2);
	memcpy(rec + 8, &fr[0], 8);
	cr_assert_eq(dp_render_event(&s->r, &ev_stk, rec, sizeof(rec), &m,
				     &syms), 0);
}

#define STK_HEAD(n) \
	"        Depth    Size   Location    (" #n " entries)\n" \
	"        -----    ----   --------\n"

/* The deepest stack kept, printed at the end as trace_stack.c's
 * t_show(): sizes from the next entry's depth, the last one's its depth;
 * a shallower stack after it changes nothing; an address no symbol
 * covers in hex. */
Test(stack, deepest_table)
{
	static const uint64_t f1[] = { D, C + 0x10, MAIN + 0x20 };
	static const uint64_t d1[] = { 500, 492, 200 };
	static const uint64_t f2[] = { A, B + 0x8, B + 0x8, MAIN + 0x24, 0x9999 };
	static const uint64_t d2[] = { 4144, 4136, 3832, 3528, 48 };
	static const uint64_t f3[] = { C, MAIN };
	static const uint64_t d3[] = { 1000, 900 };
	struct sess s;
	char *got;

	begin(&s, "stack");
	S(&s, f1, d1, 3);
	S(&s, f2, d2, 5);
	S(&s, f3, d3, 2);
	got = finish(&s);
	cr_expect_str_eq(got, STK_HEAD(5)
		"  0)     4144       8   a+0x0/0x100\n"
		"  1)     4136     304   b+0x8/0x100\n"
		"  2)     3832     304   b+0x8/0x100\n"
		"  3)     3528    3480   main+0x24/0x100\n"
		"  4)       48      48   0x9999\n");
	free(got);
}

/* Entries not sized (0), or not below the one before (a bad frame
 * pointer's), are left out; the walk's bad-frame mark ends the table. */
Test(stack, unsized_entries)
{
	static const uint64_t fr[] = { A, B + 1, C + 2, D + 3, MAIN + 4,
				       DP_STACK_BAD_FRAME, MAIN + 5 };
	static const uint64_t d[] = { 800, 0, 700, 900, 100, 0, 50 };
	struct sess s;
	char *got;

	begin(&s, "stack");
	S(&s, fr, d, 7);
	got = finish(&s);
	cr_expect_str_eq(got, STK_HEAD(3)
		"  0)      800     100   a+0x0/0x100\n"
		"  1)      700     600   c+0x2/0x100\n"
		"  2)      100     100   main+0x4/0x100\n");
	free(got);
}

/* stack_trace before any maximum: the kernel's lines on how to turn the
 * tracer on, only while it is off; stack_max_size set by hand keeps a
 * shallower stack out, as the kernel's does. */
Test(stack, file_states)
{
	static const uint64_t d[] = { 300, 200 };
	static const char *const w[] = { "a+0x0/0x100", "main+0x4/0x100" };
	struct dp_stack_max m = { 0 };
	struct cap c;
	char *got;

	dp_stack_max_print(cap_open(&c), &m, false);
	got = cap_close(&c);
	cr_expect_str_eq(got, STK_HEAD(0) "#\n#  Stack tracer disabled\n#\n"
		"# To enable the stack tracer, either add 'stacktrace' to the\n"
		"# kernel command line\n"
		"# or 'echo 1 > /proc/sys/kernel/stack_tracer_enabled'\n#\n");
	free(got);
	dp_stack_max_print(cap_open(&c), &m, true);
	got = cap_close(&c);
	cr_expect_str_eq(got, STK_HEAD(0));
	free(got);
	m.max_size = 400;
	cr_expect_not(dp_stack_max_take(&m, d, w, 2));
	m.max_size = 10;
	cr_expect(dp_stack_max_take(&m, d, w, 2));
	cr_expect_eq(m.max_size, 300);
	dp_stack_max_print(cap_open(&c), &m, false);
	got = cap_close(&c);
	cr_expect_str_eq(got, STK_HEAD(2)
		"  0)      300     100   a+0x0/0x100\n"
		"  1)      200     200   main+0x4/0x100\n");
	free(got);
	dp_stack_max_clear(&m);
}
