// SPDX-License-Identifier: GPL-2.0
/*
 * Application tracepoints (include/dprobe/tracepoint.h): the descriptors
 * dprobe reads from the file, probes seeing exactly the arguments, the
 * static key (the bytes of every site: the nop when disabled, a jmp to
 * the out-of-line call when enabled), the errors of the registration
 * functions, kprobes on a site, a tracepoint in a dlopen()ed library, and
 * register/unregister while 8 threads fire, with the probes' data freed
 * as soon as unregister returns (a use after free shows under ASan:
 * `make BUILD=asan agent-test` builds this program with it).
 *
 * t_tracepoint_nojl.c builds the same with -DDP_TP_NO_JUMP_LABEL (a load
 * and a branch): then there is no site to look at.
 *
 * TP_ROUNDS overrides the rounds of the concurrency test.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include <dprobe/kprobes.h>

#define DP_CREATE_TRACE_POINTS
#include "tp_test_events.h"

#include "agent_test.h"

DP_DEFINE_TRACE(dptest, tp_split,
	TP_PROTO(const uint32_t *words, uint64_t n),
	TP_ARGS(words, n),
	TP_FIELDS(tp_array(uint32_t, words, 4) tp_field(uint64_t, n)))

#ifdef DP_TP_JUMP_LABEL
#define MODE "jump label"
#else
#define MODE "load and branch"
#endif

extern struct dp_tracepoint __start___dp_tracepoints[]
	__attribute__((visibility("hidden")));
extern struct dp_tracepoint __stop___dp_tracepoints[]
	__attribute__((visibility("hidden")));

static const uint8_t nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

/* Functions with the sites: kept out of line so each has its own. */
__attribute__((noinline)) void fire_values(int id, const char *path,
					   const unsigned char *key, long big,
					   unsigned short small, signed char c,
					   void *ptr, bool flag)
{
	trace_tp_values(id, path, key, big, small, c, ptr, flag);
}

__attribute__((noinline)) long fire_simple(int a, long b)
{
	trace_tp_simple(a, b);
	return a + b;
}

__attribute__((noinline)) void fire_split(const uint32_t *w, uint64_t n)
{
	trace_tp_split(w, n);
}

/* ---- the sites of a tracepoint ------------------------------------------ */

static uint64_t rel(const void *field, int64_t off)
{
	return (uint64_t)(uintptr_t)field + (uint64_t)off;
}

struct sites {
	int n, nop, jmp, other;
	uint64_t first;		/* the first site's address */
};

/* Count the sites of @tp by what their bytes are now. */
static struct sites sites_of(const struct dp_tracepoint *tp)
{
	struct sites r = { 0 };

	for (const struct dp_jump_entry *e = __start___dp_jump_table;
	     e < __stop___dp_jump_table; e++) {
		uint64_t site = rel(&e->code, e->code);
		uint64_t target = rel(&e->target, e->target);
		const uint8_t *b = (const uint8_t *)(uintptr_t)site;
		int32_t d;

		if (!e->key || rel(&e->key, e->key) != (uint64_t)(uintptr_t)tp)
			continue;
		if (!r.n++)
			r.first = site;
		memcpy(&d, b + 1, 4);
		if (!memcmp(b, nop5, 5))
			r.nop++;
		else if (b[0] == 0xe9 && site + 5 + (uint64_t)(int64_t)d == target)
			r.jmp++;
		else
			r.other++;
	}
	return r;
}

/* All sites of @tp are nops (@on false) or jmps (@on true). */
static void check_sites(const struct dp_tracepoint *tp, bool on)
{
	struct sites s = sites_of(tp);

#ifdef DP_TP_JUMP_LABEL
	/* trace_NAME() and trace_NAME_enabled() at least */
	CHECK(s.n >= 1, "%s: no site in the jump table", tp->name);
	CHECK_EQ(on ? s.jmp : s.nop, s.n);
#else
	(void)on;
	CHECK_EQ(s.n, 0);
#endif
	CHECK_EQ(s.other, 0);
}

/* ---- the descriptors -------------------------------------------------------- */

struct want_field {
	const char *name;
	int kind, size, is_signed, count;
};

static void check_fields(const struct dp_tracepoint *tp,
			 const struct want_field *w, int n)
{
	CHECK_EQ(tp->nargs, n);
	for (int i = 0; i < n && i < DP_TP_MAX_ARGS; i++) {
		const struct dp_tp_field *f = &tp->fields[i];

		CHECK_STR_EQ(f->name, w[i].name);
		CHECK_EQ(f->kind, w[i].kind);
		CHECK_EQ(f->size, w[i].size);
		CHECK_EQ(f->is_signed, w[i].is_signed);
		CHECK_EQ(f->count, w[i].count);
	}
}

static void test_descriptors(void)
{
	static const struct want_field values[] = {
		{ "id", DP_TPF_INT, 4, 1, 0 },
		{ "path", DP_TPF_STRING, 1, 0, 0 },
		{ "key", DP_TPF_ARRAY, 1, 0, 16 },
		{ "big", DP_TPF_INT, 8, 1, 0 },
		{ "small", DP_TPF_INT, 2, 0, 0 },
		{ "c", DP_TPF_INT, 1, 1, 0 },
		{ "ptr", DP_TPF_INT, 8, 0, 0 },
		{ "flag", DP_TPF_INT, 1, 0, 0 },
	};
	static const struct want_field split[] = {
		{ "words", DP_TPF_ARRAY, 4, 0, 4 },
		{ "n", DP_TPF_INT, 8, 0, 0 },
	};
	const struct dp_tracepoint *tp = &__dp_tracepoint_tp_values;
	int found = 0, n = 0;

	BEGIN("descriptors: constant part as dprobe reads it (" MODE ")");
	CHECK_EQ(tp->magic, DP_TRACEPOINT_MAGIC);
	CHECK_EQ(tp->version, DP_TRACEPOINT_VERSION);
	CHECK_STR_EQ(tp->group, "dptest");
	CHECK_STR_EQ(tp->name, "tp_values");
	CHECK_STR_EQ(tp->proto, "int id, const char *path, const unsigned "
		     "char *key, long big, unsigned short small, signed char "
		     "c, void *ptr, bool flag");
	check_fields(tp, values, 8);
	CHECK_STR_EQ(__dp_tracepoint_tp_split.proto,
		     "const uint32_t *words, uint64_t n");
	check_fields(&__dp_tracepoint_tp_split, split, 2);
	/* the section: entries one after another, each found by its magic */
	for (struct dp_tracepoint *t = __start___dp_tracepoints;
	     t < __stop___dp_tracepoints; t++, n++) {
		CHECK_EQ(t->magic, DP_TRACEPOINT_MAGIC);
		found += t == &__dp_tracepoint_tp_values ||
			 t == &__dp_tracepoint_tp_simple ||
			 t == &__dp_tracepoint_tp_split;
	}
	CHECK_EQ(n, 3);
	CHECK_EQ(found, 3);
	CHECK_EQ((uintptr_t)tp % 64, 0);
	END();
}

/* ---- values ------------------------------------------------------------------ */

struct seen {
	int calls;
	int id;
	char path[32];
	unsigned char key[16];
	long big;
	unsigned short small;
	signed char c;
	void *ptr;
	bool flag;
	uint64_t raw[8];	/* the generic probe's slots */
};

static void values_probe(void *data, int id, const char *path,
			 const unsigned char *key, long big,
			 unsigned short small, signed char c, void *ptr,
			 bool flag)
{
	struct seen *s = data;

	s->calls++;
	s->id = id;
	snprintf(s->path, sizeof(s->path), "%s", path);
	memcpy(s->key, key, sizeof(s->key));
	s->big = big;
	s->small = small;
	s->c = c;
	s->ptr = ptr;
	s->flag = flag;
}

/* What dprobe's recording probe does: every argument as a 64-bit slot. */
static void generic_probe(void *data, uint64_t a0, uint64_t a1, uint64_t a2,
			  uint64_t a3, uint64_t a4, uint64_t a5, uint64_t a6,
			  uint64_t a7)
{
	struct seen *s = data;
	const uint64_t a[8] = { a0, a1, a2, a3, a4, a5, a6, a7 };

	s->calls++;
	memcpy(s->raw, a, sizeof(a));
}

static const unsigned char key16[16] = {
	0, 1, 2, 3, 0xfc, 0xfd, 0xfe, 0xff, 8, 9, 10, 11, 12, 13, 14, 0x80
};

static void fire_known(void)
{
	fire_values(-42, "/etc/passwd", key16, LONG_MIN + 5, 0xfffe, -5,
		    (void *)(uintptr_t)0x1234567890ul, true);
}

static void test_values(void)
{
	struct seen s = { 0 }, g = { 0 };
	struct dp_tracepoint *tp = &__dp_tracepoint_tp_values;

	BEGIN("values: a typed probe sees exactly the arguments, the generic "
	      "one each in its slot (" MODE ")");
	CHECK(!trace_tp_values_enabled(), "enabled before any probe");
	check_sites(tp, false);
	fire_known();
	CHECK_EQ(s.calls, 0);

	CHECK_EQ(register_trace_tp_values(values_probe, &s), 0);
	CHECK(trace_tp_values_enabled(), "not enabled with a probe");
	CHECK_EQ(tp->key, 1);
	check_sites(tp, true);
	fire_known();
	CHECK_EQ(s.calls, 1);
	CHECK_EQ(s.id, -42);
	CHECK_STR_EQ(s.path, "/etc/passwd");
	CHECK(!memcmp(s.key, key16, 16), "key differs");
	CHECK(s.big == LONG_MIN + 5, "big %ld", s.big);
	CHECK_EQ(s.small, 0xfffe);
	CHECK_EQ(s.c, -5);
	CHECK(s.ptr == (void *)(uintptr_t)0x1234567890ul, "ptr %p", s.ptr);
	CHECK(s.flag, "flag false");

	CHECK_EQ(dp_tracepoint_probe_register(tp, (void *)generic_probe, &g,
					      NULL), 0);
	CHECK_EQ(tp->key, 2);
	fire_known();
	CHECK_EQ(s.calls, 2);
	CHECK_EQ(g.calls, 1);
	/* only the argument's own bytes are defined in its slot */
	CHECK_EQ((int32_t)g.raw[0], -42);
	CHECK_STR_EQ((const char *)(uintptr_t)g.raw[1], "/etc/passwd");
	CHECK(g.raw[2] == (uintptr_t)key16, "key slot %#lx", (long)g.raw[2]);
	CHECK(g.raw[3] == (uint64_t)(LONG_MIN + 5), "big slot");
	CHECK_EQ((uint16_t)g.raw[4], 0xfffe);
	CHECK_EQ((int8_t)g.raw[5], -5);
	CHECK(g.raw[6] == 0x1234567890ul, "ptr slot");
	CHECK_EQ((uint8_t)g.raw[7], 1);

	CHECK_EQ(dp_tracepoint_probe_unregister(tp, (void *)generic_probe, &g),
		 0);
	CHECK_EQ(unregister_trace_tp_values(values_probe, &s), 0);
	CHECK(!trace_tp_values_enabled(), "still enabled");
	CHECK_EQ(tp->key, 0);
	CHECK(!tp->funcs, "array left");
	check_sites(tp, false);
	fire_known();
	CHECK_EQ(s.calls, 2);
	CHECK_EQ(g.calls, 1);
	END();
}

/* ---- several probes, the split declaration -------------------------------- */

static char order[16];
static int norder;

static void order_a(void *data, const uint32_t *w, uint64_t n)
{
	(void)data;
	if (norder < 15 && w[n - 1] == 7)
		order[norder++] = 'a';
}

static void order_b(void *data, const uint32_t *w, uint64_t n)
{
	if (norder < 15 && w[n - 1] == 7)
		order[norder++] = *(const char *)data;
}

static void test_order(void)
{
	static const uint32_t w[4] = { 4, 5, 6, 7 };

	BEGIN("several probes run in registration order, each (func, data) "
	      "once; DP_DECLARE_TRACE/DP_DEFINE_TRACE");
	CHECK_EQ(register_trace_tp_split(order_a, NULL), 0);
	CHECK_EQ(register_trace_tp_split(order_b, "b"), 0);
	CHECK_EQ(register_trace_tp_split(order_b, "c"), 0);
	fire_split(w, 4);
	CHECK_EQ(unregister_trace_tp_split(order_b, "b"), 0);
	fire_split(w, 4);
	CHECK_EQ(unregister_trace_tp_split(order_a, NULL), 0);
	CHECK(trace_tp_split_enabled(), "disabled with a probe left");
	fire_split(w, 4);
	CHECK_EQ(unregister_trace_tp_split(order_b, "c"), 0);
	fire_split(w, 4);
	order[norder] = '\0';
	CHECK_STR_EQ(order, "abcacc");
	check_sites(&__dp_tracepoint_tp_split, false);
	END();
}

/* ---- errors ------------------------------------------------------------------- */

static int inner_err = 1;

static void simple_noop(void *data, int a, long b)
{
	(void)data;
	(void)a;
	(void)b;
}

/* Registering from inside a probe must be refused. */
static void simple_nested(void *data, int a, long b)
{
	(void)data;
	(void)a;
	(void)b;
	inner_err = register_trace_tp_simple(simple_noop, NULL);
	if (!inner_err)
		unregister_trace_tp_simple(simple_noop, NULL);
}

static void test_errors(void)
{
	static struct dp_tracepoint fake __attribute__((aligned(64)));
	struct dp_tracepoint *tp = &__dp_tracepoint_tp_simple;
	void *f = (void *)simple_noop;

	BEGIN("errors: prototype mismatch, duplicate, unknown, bad magic, "
	      "from inside a probe");
	CHECK_EQ(dp_tracepoint_probe_register(tp, f, NULL, "long a, long b"),
		 -EINVAL);
	CHECK_EQ(dp_tracepoint_probe_register(tp, f, NULL, "int a"), -EINVAL);
	CHECK_EQ(dp_tracepoint_probe_register(tp, f, NULL, "int a, long b, "
					      "int c"), -EINVAL);
	CHECK_EQ(dp_tracepoint_probe_register(tp, f, NULL, "inta, long b"),
		 -EINVAL);
	CHECK_EQ(tp->key, 0);
	/* the same prototype, spaced differently */
	CHECK_EQ(dp_tracepoint_probe_register(tp, f, NULL, "  int  a ,long\tb"),
		 0);
	CHECK_EQ(dp_tracepoint_probe_register(tp, f, NULL, "int a, long b"),
		 -EEXIST);
	CHECK_EQ(register_trace_tp_simple(simple_noop, NULL), -EEXIST);
	CHECK_EQ(register_trace_tp_simple(simple_noop, tp), 0);
	CHECK_EQ(tp->key, 2);
	CHECK_EQ(unregister_trace_tp_simple(simple_noop, tp), 0);
	CHECK_EQ(unregister_trace_tp_simple(simple_noop, tp), -ENOENT);
	CHECK_EQ(unregister_trace_tp_simple(simple_noop, NULL), 0);
	CHECK_EQ(unregister_trace_tp_simple(simple_noop, NULL), -ENOENT);
	CHECK_EQ(dp_tracepoint_probe_unregister(tp, (void *)simple_nested,
						NULL), -ENOENT);
	CHECK_EQ(dp_tracepoint_probe_register(tp, NULL, NULL, NULL), -EINVAL);
	CHECK_EQ(dp_tracepoint_probe_register(&fake, f, NULL, NULL), -EINVAL);
	fake = *tp;
	fake.version = 2;
	CHECK_EQ(dp_tracepoint_probe_register(&fake, f, NULL, NULL), -EINVAL);
	CHECK_EQ(dp_tracepoint_probe_register(NULL, f, NULL, NULL), -EINVAL);
	CHECK_EQ(dp_tracepoint_probe_register(
			 (struct dp_tracepoint *)(uintptr_t)4096, f, NULL, NULL),
		 -EFAULT);

	CHECK_EQ(register_trace_tp_simple(simple_nested, NULL), 0);
	fire_simple(1, 2);
	CHECK_EQ(inner_err, -EBUSY);
	CHECK_EQ(unregister_trace_tp_simple(simple_nested, NULL), 0);
	CHECK_EQ(tp->key, 0);
	check_sites(tp, false);
	END();
}

/* ---- a kprobe on a site --------------------------------------------------- */

#ifdef DP_TP_JUMP_LABEL
static int kp_hits;

static int kp_pre(struct kprobe *p, struct pt_regs *regs)
{
	(void)p;
	(void)regs;
	kp_hits++;
	return 0;
}

static void count_probe(void *data, int a, long b)
{
	(void)a;
	(void)b;
	(*(int *)data)++;
}

static void test_kprobe(void)
{
	struct dp_tracepoint *tp = &__dp_tracepoint_tp_simple;
	struct kprobe kp = { .pre_handler = kp_pre, .flags = KPROBE_FLAG_NOOPT };
	struct sites s = sites_of(tp);
	const uint8_t *b = (const uint8_t *)(uintptr_t)s.first;
	int calls = 0;

	BEGIN("a kprobe on a site: the tracepoint is enabled and disabled "
	      "under it, in either order, and it leaves the right bytes");
	/* the kprobe first: the tracepoint's jmp goes under its int3 */
	kp.addr = (kprobe_opcode_t *)(uintptr_t)s.first;
	CHECK_EQ(register_kprobe(&kp), 0);
	CHECK_EQ(kp.opcode, 0x0f);
	CHECK_EQ(register_trace_tp_simple(count_probe, &calls), 0);
	CHECK_EQ(tp->key, 1);
	CHECK_EQ(b[0], 0xcc);
	CHECK_EQ(kp.opcode, 0xe9);
	for (int i = 0; i < 3; i++)
		fire_simple(i, i);
	CHECK_EQ(calls, 3);
	CHECK_EQ(kp_hits, 3);
	/* and away again: the kprobe runs the nop */
	CHECK_EQ(unregister_trace_tp_simple(count_probe, &calls), 0);
	CHECK_EQ(kp.opcode, 0x0f);
	fire_simple(1, 1);
	CHECK_EQ(calls, 3);
	CHECK_EQ(kp_hits, 4);
	/* on again, then the kprobe goes: the jmp is whole in the code */
	CHECK_EQ(register_trace_tp_simple(count_probe, &calls), 0);
	unregister_kprobe(&kp);
	check_sites(tp, true);
	fire_simple(1, 1);
	CHECK_EQ(calls, 4);
	CHECK_EQ(kp_hits, 4);

	/* enabled first: the kprobe takes the jmp as its instruction */
	memset(&kp, 0, sizeof(kp));
	kp.pre_handler = kp_pre;
	kp.flags = KPROBE_FLAG_NOOPT;
	kp.addr = (kprobe_opcode_t *)(uintptr_t)s.first;
	CHECK_EQ(register_kprobe(&kp), 0);
	CHECK_EQ(kp.opcode, 0xe9);
	fire_simple(1, 1);
	CHECK_EQ(calls, 5);
	CHECK_EQ(kp_hits, 5);
	/* the jmp goes under the kprobe: it calls nothing any more */
	CHECK_EQ(unregister_trace_tp_simple(count_probe, &calls), 0);
	fire_simple(1, 1);
	CHECK_EQ(calls, 5);
	CHECK_EQ(kp_hits, 6);
	/* a disabled kprobe follows the site too, and arms over it */
	CHECK_EQ(disable_kprobe(&kp), 0);
	check_sites(tp, false);
	CHECK_EQ(register_trace_tp_simple(count_probe, &calls), 0);
	check_sites(tp, true);
	CHECK_EQ(enable_kprobe(&kp), 0);
	fire_simple(1, 1);
	CHECK_EQ(calls, 6);
	CHECK_EQ(kp_hits, 7);
	CHECK_EQ(unregister_trace_tp_simple(count_probe, &calls), 0);
	unregister_kprobe(&kp);
	fire_simple(1, 1);
	CHECK_EQ(calls, 6);
	CHECK_EQ(kp_hits, 7);
	check_sites(tp, false);
	END();
}
#else
static void test_kprobe(void)
{
	/* no site to put a kprobe on */
}
#endif

/* ---- a tracepoint in a dlopen()ed library ---------------------------------- */

static void lib_probe(void *data, int a, long b)
{
	long *sum = data;

	*sum += a + b;
}

static void test_library(void)
{
	char path[PATH_MAX], *slash;
	struct dp_tracepoint *(*lib_tp)(void);
	void (*lib_fire)(int, long);
	const struct dp_jump_entry *(*lib_table)(const struct dp_jump_entry **);
	const struct dp_jump_entry *start, *stop;
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 32);
	long sum = 0;
	void *h;

	BEGIN("a tracepoint of the same name in a dlopen()ed library is its "
	      "own; its sites are patched");
	CHECK(n > 0, "readlink");
	path[n > 0 ? n : 0] = '\0';
	slash = strrchr(path, '/');
	strcpy(slash ? slash + 1 : path, "libtp_lib.so");
	h = dlopen(path, RTLD_NOW);
	CHECK(h, "dlopen: %s", dlerror());
	if (!h) {
		END();
		return;
	}
	lib_tp = (struct dp_tracepoint *(*)(void))dlsym(h, "tp_lib_tracepoint");
	lib_fire = (void (*)(int, long))dlsym(h, "tp_lib_fire");
	lib_table = (const struct dp_jump_entry *(*)(
			const struct dp_jump_entry **))dlsym(h, "tp_lib_jump_table");
	CHECK(lib_tp && lib_fire && lib_table, "dlsym");
	if (lib_tp && lib_fire && lib_table) {
		struct dp_tracepoint *tp = lib_tp();
		int jmps = 0, sites = 0;

		CHECK(tp != &__dp_tracepoint_tp_simple, "the same struct");
		CHECK_STR_EQ(tp->group, "dplib");
		CHECK_EQ(dp_tracepoint_probe_register(tp, (void *)lib_probe,
						      &sum, "int a, long b"), 0);
		lib_fire(3, 4);
		fire_simple(100, 100);	/* the executable's: no probe */
		CHECK_EQ(sum, 7);
		start = lib_table(&stop);
		for (const struct dp_jump_entry *e = start; e < stop; e++) {
			const uint8_t *b;

			if (!e->key)
				continue;
			sites++;
			b = (const uint8_t *)(uintptr_t)rel(&e->code, e->code);
			jmps += b[0] == 0xe9;
		}
#ifdef DP_TP_JUMP_LABEL
		CHECK(sites > 0, "no site in the library");
#endif
		CHECK_EQ(jmps, sites);
		CHECK_EQ(dp_tracepoint_probe_unregister(tp, (void *)lib_probe,
							&sum), 0);
		lib_fire(3, 4);
		CHECK_EQ(sum, 7);
	}
	dlclose(h);
	END();
}

/* ---- concurrency ---------------------------------------------------------- */

#define NFIRE 8
#define LIVE 0x11fe11feu

struct pdata {
	unsigned int magic;
	atomic_long calls;
};

static atomic_int stop_firing;
static atomic_long fired, bad_data;

static void check_data(struct pdata *d)
{
	if (d->magic != LIVE)
		atomic_fetch_add(&bad_data, 1);
	/* widen the window a late call would be caught in */
	for (volatile int i = 0; i < 50; i++)
		;
	if (d->magic != LIVE)
		atomic_fetch_add(&bad_data, 1);
	atomic_fetch_add_explicit(&d->calls, 1, memory_order_relaxed);
}

static void conc_a(void *data, int a, long b)
{
	(void)a;
	(void)b;
	check_data(data);
}

static void conc_b(void *data, int a, long b)
{
	if (b != (long)a * 3)
		atomic_fetch_add(&bad_data, 1);
	check_data(data);
}

static void conc_c(void *data, int a, long b)
{
	(void)a;
	(void)b;
	check_data(data);
}

static void *firer(void *arg)
{
	long n = 0;

	(void)arg;
	while (!atomic_load_explicit(&stop_firing, memory_order_relaxed)) {
		fire_simple((int)(n & 0xffff), (n & 0xffff) * 3);
		/*
		 * 8 threads on fewer CPUs: give the CPU up now and then
		 * outside the tracepoint, or most preemptions land inside
		 * a read side and each grace period waits for a time slice.
		 */
		if (!(++n & 255))
			sched_yield();
	}
	atomic_fetch_add(&fired, n);
	return NULL;
}

static int rounds(void)
{
	const char *env = getenv("TP_ROUNDS");

	return env ? atoi(env) : 1500;
}

static void nap_us(long us)
{
	struct timespec ts = { 0, us * 1000 };

	nanosleep(&ts, NULL);
}

static struct pdata *pdata_new(void)
{
	struct pdata *d = calloc(1, sizeof(*d));

	d->magic = LIVE;
	return d;
}

static void pdata_free(struct pdata *d)
{
	d->magic = 0xdeadu;
	free(d);
}

/*
 * One round: a probe on an empty tracepoint (the key goes on: the sites
 * are patched under the firing threads), sometimes a second and a third
 * (the array is copied), then all go (the key goes off), each data
 * freed as soon as its unregister returns.
 */
static int conc_round(int i, long *calls)
{
	void (*fns[3])(void *, int, long) = { conc_a, conc_b, conc_c };
	struct pdata *d[3] = { pdata_new(), NULL, NULL };
	int k = 1 + (i % 3 == 0) + (i % 5 == 0), errs = 0;

	for (int j = 1; j < k; j++)
		d[j] = pdata_new();
	for (int j = 0; j < k; j++)
		errs += register_trace_tp_simple(fns[(i + j) % 3], d[j]) != 0;
	/* let the threads call it (the fallback's rounds are short) */
	for (int w = 0; w < 1000 && !atomic_load(&d[0]->calls); w++)
		nap_us(10);
	for (int j = k - 1; j >= 0; j--) {
		/* the middle one first, sometimes */
		int m = (k == 3 && j == 2) ? 1 : (k == 3 && j == 1) ? 2 : j;

		errs += unregister_trace_tp_simple(fns[(i + m) % 3], d[m]) != 0;
		*calls += atomic_load(&d[m]->calls);
		pdata_free(d[m]);
	}
	return errs;
}

static void test_concurrency(void)
{
	pthread_t t[NFIRE];
	int n = rounds(), errs = 0;
	long calls = 0;
	struct timespec t0, t1;

	BEGIN("register/unregister while 8 threads fire: every call sees live "
	      "data (" MODE ")");
	for (int i = 0; i < NFIRE; i++)
		pthread_create(&t[i], NULL, firer, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < n; i++)
		errs += conc_round(i, &calls);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	atomic_store(&stop_firing, 1);
	for (int i = 0; i < NFIRE; i++)
		pthread_join(t[i], NULL);
	printf("# %d rounds in %.2f s, %ld fired, %ld probe calls\n", n,
	       (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
	       atomic_load(&fired), calls);
	CHECK_EQ(errs, 0);
	CHECK_EQ(atomic_load(&bad_data), 0);
	CHECK(calls > 0, "no probe call");
	CHECK_EQ(__dp_tracepoint_tp_simple.key, 0);
	check_sites(&__dp_tracepoint_tp_simple, false);
	END();
}

int main(void)
{
	test_descriptors();
	test_values();
	test_order();
	test_errors();
	test_kprobe();
	test_library();
	test_concurrency();
	return t_exit();
}
