// SPDX-License-Identifier: GPL-2.0
/*
 * sym/ and arch/x86_64/decode: ELF symbols and offsets, instruction
 * boundaries (checked against objdump), and the definition-time resolver's
 * errors and carets.  Target programs are built from tests/data/sym_*.c
 * into $DPROBE_BUILD/tests/data/.
 */
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "arch/arch.h"
#include "event/event.h"
#include "lang/errors.h"
#include "lang/lang.h"
#include "sym/elf.h"
#include "sym/resolve.h"
#include "test_data.h"

/* ---- helpers ------------------------------------------------------------ */

static struct dp_elf *open_ok(const char *name)
{
	struct dp_elf *e = NULL;
	int ret = dp_elf_open(test_data(name), &e);

	cr_assert_eq(ret, 0, "open %s: %d (%s)", name, ret, dp_elf_strerror());
	return e;
}

/* Instruction addresses of @func in @bin, as objdump disassembles them. */
static size_t objdump_insns(const char *bin, const char *func, uint64_t *out,
			    size_t max)
{
	char cmd[8192], line[512];
	size_t n = 0;
	bool in = false;
	uint64_t a;
	FILE *p;
	int k;

	snprintf(cmd, sizeof(cmd), "objdump -d --no-show-raw-insn "
		 "--disassemble=%s '%s'", func, bin);
	p = popen(cmd, "r");
	cr_assert(p, "popen objdump");
	while (fgets(line, sizeof(line), p)) {
		if (strstr(line, ">:") && strchr(line, '<')) {
			in = !strncmp(strchr(line, '<') + 1, func, strlen(func)) &&
			     strchr(line, '<')[1 + strlen(func)] == '>';
			continue;
		}
		/* "  401146:\tpush ..."; not "Disassembly of section" */
		k = 0;
		if (in && sscanf(line, " %" SCNx64 "%n", &a, &k) == 1 &&
		    line[k] == ':' && n < max)
			out[n++] = a;
	}
	pclose(p);
	cr_assert_gt(n, 0, "objdump found no instructions of %s in %s", func,
		     bin);
	return n;
}

static bool in_list(const uint64_t *v, size_t n, uint64_t x)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

/* A hand-made definition; the line is what the caret positions refer to. */
struct tdef {
	char line[4096];
	struct dp_probe_def def;
	struct dp_probe probe;
	struct dp_error err;
};

static void tdef_uprobe(struct tdef *t, const char *path, uint64_t off)
{
	memset(t, 0, sizeof(*t));
	snprintf(t->line, sizeof(t->line), "p:g/e %s:0x%" PRIx64, path, off);
	t->def.kind = DP_KIND_UPROBE;
	strcpy(t->def.group, "g");
	strcpy(t->def.event, "e");
	t->def.place.path = (char *)path;
	t->def.place.offset = off;
}

static void tdef_kprobe(struct tdef *t, bool ret, const char *mod,
			const char *sym, uint64_t off)
{
	memset(t, 0, sizeof(*t));
	snprintf(t->line, sizeof(t->line), "%c:g/e %s%s%s+%" PRIu64,
		 ret ? 'r' : 'p', mod ? mod : "", mod ? ":" : "", sym, off);
	t->def.kind = DP_KIND_KPROBE;
	t->def.is_return = ret;
	strcpy(t->def.group, "g");
	strcpy(t->def.event, "e");
	t->def.place.module = (char *)mod;
	t->def.place.symbol = (char *)sym;
	t->def.place.offset = off;
}

static void tdef_addr(struct tdef *t, uint64_t addr)
{
	memset(t, 0, sizeof(*t));
	snprintf(t->line, sizeof(t->line), "p:g/e 0x%" PRIx64, addr);
	t->def.kind = DP_KIND_KPROBE;
	strcpy(t->def.group, "g");
	strcpy(t->def.event, "e");
	t->def.place.addr = addr;
}

static int run(struct dp_resolver *r, struct tdef *t)
{
	return dp_resolve_cb(r, t->line, &t->def, &t->probe, &t->err);
}

/* Caret column of the char after the last ':' of the place token. */
static int offs_pos(const struct tdef *t)
{
	return (int)(strrchr(t->line, ':') - t->line) + 1;
}

static void expect_err(struct tdef *t, int ret, enum dp_err_code code,
		       int err, int pos)
{
	cr_assert_eq(ret, -err, "%s: ret %d, want %d (detail: %s)", t->line,
		     ret, -err, t->err.detail);
	cr_assert_eq(t->err.code, code, "%s: code %d, want %d", t->line,
		     t->err.code, code);
	cr_assert_eq(t->err.err, err);
	cr_assert_eq(t->err.pos, pos, "%s: caret %d, want %d", t->line,
		     t->err.pos, pos);
	dp_error_clear(&t->err);
}

static char *write_tmp(const void *bytes, size_t len)
{
	char *path = strdup("/tmp/dprobe-sym-XXXXXX");
	int fd = mkstemp(path);

	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, bytes, len), (ssize_t)len);
	close(fd);
	return path;
}

/* ---- the decoder on hand-written bytes ---------------------------------- */

Test(decode, lengths)
{
	static const struct { uint8_t b[16]; size_t n; int len; } c[] = {
		{ { 0x48, 0x89, 0xe5 }, 3, 3 },				/* mov %rsp,%rbp */
		{ { 0x55 }, 1, 1 },					/* push %rbp */
		{ { 0xc3 }, 1, 1 },					/* ret */
		{ { 0xe8, 0x10, 0x20, 0x30, 0x40 }, 5, 5 },		/* call rel32 */
		{ { 0x0f, 0x1f, 0x44, 0x00, 0x00 }, 5, 5 },		/* nopl 0(%rax,%rax) */
		{ { 0xf3, 0x0f, 0x1e, 0xfa }, 4, 4 },			/* endbr64 */
		{ { 0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8 }, 10, 10 },	/* movabs */
		{ { 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0 }, 10, 10 },
		{ { 0x0f, 0x0b }, 2, 2 },				/* ud2 */
		{ { 0xcc }, 1, 1 },					/* int3 */
		{ { 0xe8, 0x00 }, 2, -EILSEQ },				/* truncated */
		{ { 0x06 }, 1, -EILSEQ },			/* push %es: not in 64-bit */
		{ { 0x0f, 0xff }, 2, -EILSEQ },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		cr_expect_eq(dp_insn_length(c[i].b, c[i].n), c[i].len,
			     "case %zu: %d", i, dp_insn_length(c[i].b, c[i].n));
	cr_expect_eq(dp_insn_length(c[0].b, 0), -EILSEQ);
}

Test(decode, boundaries)
{
	/* endbr64; push %rbp; mov %rsp,%rbp; call rel32; nopl 5; leave; ret */
	static const uint8_t code[] = {
		0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x89, 0xe5,
		0xe8, 0x00, 0x00, 0x00, 0x00, 0x0f, 0x1f, 0x44,
		0x00, 0x00, 0xc9, 0xc3,
	};
	static const unsigned starts[] = { 0, 4, 5, 8, 13, 18, 19, 20 };
	const uint64_t base = 0x401000;
	uint64_t at;

	for (unsigned t = 0; t <= sizeof(code); t++) {
		bool want = false;

		for (size_t i = 0; i < sizeof(starts) / sizeof(starts[0]); i++)
			want |= starts[i] == t;
		cr_expect_eq(dp_insn_boundary(code, sizeof(code), base,
					      base + t), want ? 0 : -EILSEQ,
			     "offset %u", t);
	}
	cr_expect_eq(dp_insn_boundary_at(code, sizeof(code), base, base + 10,
					 &at), -EILSEQ);
	cr_expect_eq(at, base + 8, "covering instruction at %#" PRIx64, at);
	cr_expect_eq(dp_insn_boundary(code, sizeof(code), base, base - 1),
		     -EINVAL);
	/* past the bytes given: cannot be proven */
	cr_expect_eq(dp_insn_boundary(code, sizeof(code), base, base + 30),
		     -EILSEQ);
	/* decoding fails before the target */
	static const uint8_t bad[] = { 0x55, 0x06, 0x90, 0x90 };

	cr_expect_eq(dp_insn_boundary_at(bad, sizeof(bad), 0, 3, &at), -EILSEQ);
	cr_expect_eq(at, 1);
}

/* ---- opening ------------------------------------------------------------ */

Test(elf, open_errors)
{
	struct dp_elf *e = (void *)1;
	static uint8_t h32[64] = { 0x7f, 'E', 'L', 'F', 1, 1, 1 };
	static uint8_t harm[64] = { 0x7f, 'E', 'L', 'F', 2, 1, 1 };
	char *p;

	cr_expect_eq(dp_elf_open("/nonexistent/x", &e), -ENOENT);
	cr_expect_null(e);
	cr_expect_eq(dp_elf_open("/tmp", &e), -EISDIR);
	cr_expect_eq(dp_elf_open("/dev/null", &e), -EINVAL);
	cr_expect_eq(dp_elf_open("data/sym_target.c", &e), -ENOEXEC);
	cr_expect(strstr(dp_elf_strerror(), "not an ELF"), "%s",
		  dp_elf_strerror());

	p = write_tmp("", 0);
	cr_expect_eq(dp_elf_open(p, &e), -ENOEXEC);
	cr_expect(strstr(dp_elf_strerror(), "empty"), "%s", dp_elf_strerror());
	unlink(p);
	free(p);

	p = write_tmp(h32, sizeof(h32));
	cr_expect_eq(dp_elf_open(p, &e), -ENOEXEC);
	cr_expect(strstr(dp_elf_strerror(), "32-bit"), "%s", dp_elf_strerror());
	unlink(p);
	free(p);

	harm[18] = 183;	/* e_machine = EM_AARCH64 */
	harm[16] = 2;	/* ET_EXEC */
	p = write_tmp(harm, sizeof(harm));
	cr_expect_eq(dp_elf_open(p, &e), -ENOEXEC);
	cr_expect(strstr(dp_elf_strerror(), "AArch64"), "%s",
		  dp_elf_strerror());
	unlink(p);
	free(p);

	/* a relocatable object is not something a process maps */
	harm[18] = 62;	/* EM_X86_64 */
	harm[16] = 1;	/* ET_REL */
	p = write_tmp(harm, sizeof(harm));
	cr_expect_eq(dp_elf_open(p, &e), -ENOEXEC);
	cr_expect(strstr(dp_elf_strerror(), "relocatable"), "%s",
		  dp_elf_strerror());
	unlink(p);
	free(p);
}

/* ---- files that change under dprobe --------------------------------------- */

#define LIBC_PATH	"/lib/x86_64-linux-gnu/libc.so.6"

/* The whole of @path, malloc'd, in *@len. */
static uint8_t *slurp(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *b;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st))
		return NULL;
	b = malloc((size_t)st.st_size);
	cr_assert(b);
	cr_assert_eq(pread(fd, b, (size_t)st.st_size, 0), st.st_size);
	close(fd);
	*len = (size_t)st.st_size;
	return b;
}

/* Every byte of malloc's code, summed: touches the file's bytes. */
static unsigned touch_malloc(const struct dp_elf *e)
{
	struct dp_elf_sym s;
	const uint8_t *code;
	size_t avail;
	unsigned sum = 0;

	if (dp_elf_lookup(e, "malloc", &s))
		return 0;
	code = dp_elf_code(e, s.value, &avail);
	for (size_t i = 0; code && i < avail && i < s.size; i++)
		sum += code[i];
	return sum;
}

/* Truncated once opened: what was read stays readable (a mapping of the
 * file would raise SIGBUS here). */
Test(elf, truncated_after_open)
{
	struct dp_elf *e;
	uint8_t *lib;
	size_t len;
	unsigned before;
	char *p;

	lib = slurp(LIBC_PATH, &len);
	if (!lib)
		cr_skip_test("no %s", LIBC_PATH);
	p = write_tmp(lib, len);
	cr_assert_eq(dp_elf_open(p, &e), 0, "%s", dp_elf_strerror());
	before = touch_malloc(e);
	cr_assert_eq(truncate(p, 0), 0);
	cr_expect_eq(touch_malloc(e), before);
	cr_expect_neq(before, 0u);
	dp_elf_close(e);
	unlink(p);
	free(p);
	free(lib);
}

/* A file shorter than fstat() said (a sysfs file says 4096 bytes): the
 * error is the open's, in words. */
Test(elf, shorter_than_its_size)
{
	const char *f = "/sys/devices/system/cpu/online";
	struct dp_elf *e = (void *)1;
	struct stat st;

	if (stat(f, &st) || st.st_size <= 64)
		cr_skip_test("no %s with a size", f);
	cr_expect_eq(dp_elf_open(f, &e), -EIO);
	cr_expect_null(e);
	cr_expect(strstr(dp_elf_strerror(), "shorter than its size said") &&
		  strstr(dp_elf_strerror(), "changed while it was read"),
		  "%s", dp_elf_strerror());
}

struct shrinker {
	const char *path;
	const uint8_t *bytes;
	size_t len;
	volatile int stop;
};

/* Cut the file to half its size and write it back whole, in a loop. */
static void *shrink_loop(void *arg)
{
	struct shrinker *s = arg;
	int fd = open(s->path, O_WRONLY);

	while (fd >= 0 && !s->stop) {
		if (ftruncate(fd, (off_t)(s->len / 2)) ||
		    pwrite(fd, s->bytes, s->len, 0) != (ssize_t)s->len)
			break;
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* Opened again and again while another thread truncates it: each open
 * succeeds or fails with a reason, none raises a signal.  A fixed number
 * of opens, however long they take (ASan, a loaded machine). */
#define TRUNCATED_OPENS	40

Test(elf, truncated_while_read)
{
	struct shrinker s = { 0 };
	unsigned ok = 0, changed = 0, other = 0;
	pthread_t th;
	uint8_t *lib;
	size_t len;
	char *p;

	lib = slurp(LIBC_PATH, &len);
	if (!lib)
		cr_skip_test("no %s", LIBC_PATH);
	p = write_tmp(lib, len);
	s = (struct shrinker){ p, lib, len, 0 };
	cr_assert_eq(pthread_create(&th, NULL, shrink_loop, &s), 0);
	for (int i = 0; i < TRUNCATED_OPENS; i++) {
		struct dp_elf *e;
		int ret = dp_elf_open(p, &e);

		if (!ret) {
			touch_malloc(e);
			dp_elf_close(e);
			ok++;
		} else if (ret == -EIO) {
			cr_expect(strstr(dp_elf_strerror(), "changed while it "
					 "was read"), "%s", dp_elf_strerror());
			changed++;
		} else {
			cr_expect(ret == -ENOEXEC && dp_elf_strerror()[0],
				  "%d: %s", ret, dp_elf_strerror());
			other++;
		}
	}
	s.stop = 1;
	pthread_join(th, NULL);
	cr_log_info("opened %u, changed %u, malformed %u", ok, changed, other);
	cr_expect_eq(ok + changed + other, TRUNCATED_OPENS);
	unlink(p);
	free(p);
	free(lib);
}

Test(elf, kind_and_build_id)
{
	struct dp_elf *np = open_ok("sym_nopie"), *pie = open_ok("sym_pie");
	char hex[64];

	cr_expect_not(dp_elf_is_pie(np));
	cr_expect(dp_elf_is_pie(pie));
	/* Debian's gcc always links with --build-id (sha1: 20 bytes) */
	cr_expect_eq(dp_elf_build_id(pie, NULL), 20);
	cr_expect_eq(dp_elf_build_id_hex(pie, hex, sizeof(hex)), 40);
	cr_expect_eq(strspn(hex, "0123456789abcdef"), 40);
	dp_elf_close(np);
	dp_elf_close(pie);
}

/* ---- symbols ------------------------------------------------------------ */

Test(elf, lookup)
{
	struct dp_elf *e = open_ok("sym_nopie");
	struct dp_elf_sym s;
	uint64_t a[256];
	size_t n = objdump_insns(test_data("sym_nopie"), "sym_work", a, 256);

	cr_assert_eq(dp_elf_lookup(e, "sym_work", &s), 0);
	cr_expect_eq(s.value, a[0]);
	cr_expect_eq(s.type, STT_FUNC);
	cr_expect_gt(s.value + s.size, a[n - 1]);
	cr_expect_str_eq(s.name, "sym_work");

	cr_assert_eq(dp_elf_lookup(e, "sym_loop", &s), 0);	/* static */
	cr_expect_eq(s.bind, STB_LOCAL);
	cr_assert_eq(dp_elf_lookup(e, "sym_counter", &s), 0);
	cr_expect_eq(s.type, STT_OBJECT);
	cr_expect_eq(s.size, sizeof(int));
	cr_expect_eq(dp_elf_lookup(e, "sym_nothing", &s), -ENOENT);
	cr_expect_eq(dp_elf_lookup(e, "sym_wor", &s), -ENOENT);
	cr_expect_eq(dp_elf_lookup(e, "", &s), -ENOENT);
	/* undefined references (strlen from libc) are not symbols here */
	cr_expect_eq(dp_elf_lookup(e, "strlen", &s), -ENOENT);
	dp_elf_close(e);
}

Test(elf, ambiguous_static)
{
	struct dp_elf *e = open_ok("sym_dup");
	const struct dp_elf_sym *m[4];
	struct dp_elf_sym s;
	uint64_t a1[64], a2[64];

	cr_expect_eq(dp_elf_lookup(e, "dup_helper", &s), -ENOTUNIQ);
	cr_assert_eq(dp_elf_lookup_all(e, "dup_helper", m, 4), 2);
	cr_expect_lt(m[0]->value, m[1]->value);
	/* objdump lists both; the first instruction of each is a value */
	objdump_insns(test_data("sym_dup"), "dup_helper", a1, 64);
	cr_expect(m[0]->value == a1[0] || m[1]->value == a1[0]);
	cr_expect_eq(dp_elf_lookup(e, "dup_a", &s), 0);
	cr_expect_eq(dp_elf_lookup(e, "dup_b", &s), 0);
	(void)a2;
	dp_elf_close(e);
}

Test(elf, dedup_and_dynsym)
{
	struct dp_elf *dyn = open_ok("sym_dyn"), *st = open_ok("sym_stripped");
	const struct dp_elf_sym *m[4];
	struct dp_elf_sym a, b;

	/* in .symtab and .dynsym of sym_dyn, counted once */
	cr_expect_eq(dp_elf_lookup_all(dyn, "sym_work", m, 4), 1);
	cr_assert_eq(dp_elf_lookup(dyn, "sym_work", &a), 0);
	cr_assert_eq(dp_elf_lookup(st, "sym_work", &b), 0);	/* dynsym only */
	cr_expect_eq(a.value, b.value);
	cr_expect_eq(a.size, b.size);
	/* static functions are only in .symtab */
	cr_expect_eq(dp_elf_lookup(dyn, "sym_loop", &a), 0);
	cr_expect_eq(dp_elf_lookup(st, "sym_loop", &a), -ENOENT);

	for (size_t i = 1; i < dp_elf_nsyms(dyn); i++) {
		const struct dp_elf_sym *x = dp_elf_sym(dyn, i - 1);
		const struct dp_elf_sym *y = dp_elf_sym(dyn, i);

		cr_expect_leq(x->value, y->value);
		cr_expect(x->value != y->value || strcmp(x->name, y->name),
			  "%s twice", x->name);
	}
	dp_elf_close(dyn);
	dp_elf_close(st);
}

Test(elf, versioned_names)
{
	const char *libc = "/lib/x86_64-linux-gnu/libc.so.6";
	const struct dp_elf_sym *m[4];
	struct dp_elf_sym a, b;
	struct dp_elf *e;

	if (access(libc, R_OK))
		cr_skip_test("no %s", libc);
	cr_assert_eq(dp_elf_open(libc, &e), 0);
	cr_assert_eq(dp_elf_lookup(e, "malloc", &a), 0);
	cr_assert_eq(dp_elf_lookup(e, "malloc@@GLIBC_2.2.5", &b), 0);
	cr_expect_eq(a.value, b.value);
	cr_expect_str_eq(a.version, "GLIBC_2.2.5");
	cr_expect_eq(dp_elf_lookup(e, "malloc@@GLIBC_9.9", &b), -ENOENT);
	/* two versions of memcpy: the default one is meant */
	if (dp_elf_lookup_all(e, "memcpy", m, 4) == 2) {
		cr_assert_eq(dp_elf_lookup(e, "memcpy", &a), 0);
		cr_expect_not(a.hidden);
		cr_assert_eq(dp_elf_lookup(e, "memcpy@GLIBC_2.2.5", &b), 0);
		cr_expect(b.hidden);
		cr_expect_neq(a.value, b.value);
	}
	dp_elf_close(e);
}

Test(elf, sym_at)
{
	struct dp_elf *e = open_ok("sym_pie");
	const struct dp_elf_sym *s;
	struct dp_elf_sym w, l;
	uint64_t off;

	cr_assert_eq(dp_elf_lookup(e, "sym_work", &w), 0);
	cr_assert_eq(dp_elf_lookup(e, "sym_loop", &l), 0);
	s = dp_elf_sym_at(e, w.value, &off);
	cr_assert(s);
	cr_expect_str_eq(s->name, "sym_work");
	cr_expect_eq(off, 0);
	s = dp_elf_sym_at(e, w.value + w.size - 1, &off);
	cr_assert(s);
	cr_expect_str_eq(s->name, "sym_work");
	cr_expect_eq(off, w.size - 1);
	s = dp_elf_sym_at(e, l.value + 3, &off);
	cr_assert(s);
	cr_expect_str_eq(s->name, "sym_loop");
	cr_expect_eq(off, 3);
	/* data is not in a function */
	cr_assert_eq(dp_elf_lookup(e, "sym_counter", &w), 0);
	cr_expect_null(dp_elf_sym_at(e, w.value, NULL));
	cr_expect_null(dp_elf_sym_at(e, 0, NULL));
	dp_elf_close(e);
}

Test(elf, suggest)
{
	struct dp_elf *e = open_ok("sym_nopie"), *ns = open_ok("sym_nosyms");
	const char *out[3];
	size_t n;

	n = dp_elf_suggest(e, "sym_wrok", out, 3);
	cr_assert_geq(n, 1);
	cr_expect_str_eq(out[0], "sym_work");
	n = dp_elf_suggest(e, "sym_wor", out, 3);
	cr_assert_eq(n, 2);
	cr_expect_str_eq(out[0], "sym_work");
	cr_expect_str_eq(out[1], "sym_worker");
	n = dp_elf_suggest(e, "mian", out, 3);
	cr_assert_geq(n, 1);
	cr_expect_str_eq(out[0], "main");
	cr_expect_eq(dp_elf_suggest(e, "zzzzzzzzzz", out, 3), 0);
	cr_expect_eq(dp_elf_suggest(ns, "sym_wrok", out, 3), 0);
	dp_elf_close(e);
	dp_elf_close(ns);
}

/* ---- offsets ------------------------------------------------------------ */

Test(elf, offsets)
{
	struct dp_elf *e = open_ok("sym_nopie");
	struct dp_elf_sym s;
	uint64_t off, v;
	uint8_t b[4];

	cr_assert_eq(dp_elf_lookup(e, "sym_work", &s), 0);
	cr_assert_eq(dp_elf_vaddr_to_off(e, s.value, &off), 0);
	/* a non-PIE links text at 0x400000 + file offset */
	cr_expect_eq(off, s.value - 0x400000);
	cr_assert_eq(dp_elf_off_to_vaddr(e, off, &v), 0);
	cr_expect_eq(v, s.value);
	cr_expect(dp_elf_off_is_exec(e, off));
	cr_expect(dp_elf_vaddr_is_exec(e, s.value));
	cr_expect_not(dp_elf_off_is_exec(e, 0));	/* ELF header: R only */
	cr_expect_not(dp_elf_off_is_exec(e, dp_elf_file_size(e)));
	cr_expect_not(dp_elf_off_is_exec(e, UINT64_MAX));
	cr_expect_eq(dp_elf_off_to_vaddr(e, UINT64_MAX, &v), -ENOENT);
	cr_expect_eq(dp_elf_vaddr_to_off(e, 0x10, &off), -ENOENT);

	/* -O0 code starts with push %rbp; mov %rsp,%rbp */
	cr_assert_eq(dp_elf_read(e, s.value, b, 4), 4);
	cr_expect_eq(b[0], 0x55);
	cr_expect_eq(b[1], 0x48);
	cr_expect_eq(dp_elf_read(e, 0x10, b, 4), -EFAULT);
	cr_assert_eq(dp_elf_lookup(e, "sym_counter", &s), 0);
	cr_expect_not(dp_elf_vaddr_is_exec(e, s.value));
	cr_expect(dp_elf_exec_sec_at(e, s.value) == NULL);
	dp_elf_close(e);

	e = open_ok("sym_pie");
	cr_assert_eq(dp_elf_lookup(e, "sym_work", &s), 0);
	cr_assert_eq(dp_elf_read(e, s.value, b, 4), 4);
	cr_expect(!memcmp(b, "\xf3\x0f\x1e\xfa", 4), "endbr64 expected");
	cr_assert_eq(dp_elf_vaddr_to_off(e, s.value, &off), 0);
	cr_expect_eq(off, s.value);	/* first segments at vaddr 0 */
	dp_elf_close(e);
}

/*
 * Every byte of @func: a boundary exactly where objdump starts an
 * instruction, both on raw code and through the resolver as a uprobe file
 * offset and as a SYM+offs kprobe.
 */
static void check_func(const char *bin, const char *func)
{
	struct dp_elf *e = open_ok(bin);
	struct dp_resolver r;
	struct dp_elf_sym s;
	struct tdef t;
	uint64_t a[1024], off;
	size_t n = objdump_insns(test_data(bin), func, a, 1024), avail;
	const uint8_t *code;
	int ret;

	cr_assert_eq(dp_elf_lookup(e, func, &s), 0);
	cr_assert_eq(s.value, a[0]);
	code = dp_elf_code(e, s.value, &avail);
	cr_assert(code);
	dp_resolver_init(&r, test_data(bin), false);
	for (uint64_t v = s.value; v < s.value + s.size; v++) {
		bool want = in_list(a, n, v);

		cr_expect_eq(dp_insn_boundary(code, avail, s.value, v),
			     want ? 0 : -EILSEQ, "%s %s+%#" PRIx64, bin, func,
			     v - s.value);

		cr_assert_eq(dp_elf_vaddr_to_off(e, v, &off), 0);
		tdef_uprobe(&t, test_data(bin), off);
		ret = run(&r, &t);
		if (want) {
			cr_expect_eq(ret, 0, "%s: %s", t.line, t.err.detail);
			cr_expect_eq(t.probe.vaddr, v);
			cr_expect_eq(t.probe.file_offset, off);
		} else {
			expect_err(&t, ret, DP_ERR_BAD_INSN_BNDRY, EILSEQ,
				   offs_pos(&t));
		}

		tdef_kprobe(&t, false, NULL, func, v - s.value);
		ret = run(&r, &t);
		if (want) {
			cr_expect_eq(ret, 0, "%s: %s", t.line, t.err.detail);
			cr_expect_eq(t.probe.vaddr, v);
			cr_expect_eq(t.probe.file_offset, off);
		} else {
			expect_err(&t, ret, DP_ERR_BAD_INSN_BNDRY, EILSEQ, 6);
		}
	}
	dp_resolver_free(&r);
	dp_elf_close(e);
}

Test(boundary, nopie_O0)
{
	check_func("sym_nopie", "sym_work");
	check_func("sym_nopie", "sym_loop");
	check_func("sym_nopie", "main");
}

Test(boundary, pie_O2)
{
	check_func("sym_pie", "sym_work");
	check_func("sym_pie", "sym_worker");
	check_func("sym_pie", "sym_loop");
	check_func("sym_pie", "main");
}

Test(boundary, dup)
{
	check_func("sym_dup", "dup_a");
}

/* No symbols at all: decoding starts at the executable section. */
Test(boundary, stripped)
{
	struct dp_elf *e = open_ok("sym_pie");
	struct dp_resolver r;
	struct dp_elf_sym s;
	struct tdef t;
	uint64_t a[256];
	size_t n = objdump_insns(test_data("sym_pie"), "sym_work", a, 256);

	cr_assert_eq(dp_elf_lookup(e, "sym_work", &s), 0);
	dp_resolver_init(&r, NULL, false);
	for (uint64_t v = s.value; v < s.value + s.size; v++) {
		/* sym_pie: text file offsets equal addresses */
		tdef_uprobe(&t, test_data("sym_nosyms"), v);
		if (in_list(a, n, v))
			cr_expect_eq(run(&r, &t), 0, "%s: %s", t.line,
				     t.err.detail);
		else
			expect_err(&t, run(&r, &t), DP_ERR_BAD_INSN_BNDRY,
				   EILSEQ, offs_pos(&t));
	}
	dp_resolver_free(&r);
	dp_elf_close(e);
}

/* ---- the resolver: uprobe places ---------------------------------------- */

Test(resolve, uprobe_file_errors)
{
	struct dp_resolver r;
	struct tdef t;

	dp_resolver_init(&r, NULL, false);
	tdef_uprobe(&t, "/nonexistent", 0x10);
	expect_err(&t, run(&r, &t), DP_ERR_FILE_NOT_FOUND, ENOENT, 6);
	tdef_uprobe(&t, "/etc/passwd/x", 0x10);
	expect_err(&t, run(&r, &t), DP_ERR_FILE_NOT_FOUND, ENOTDIR, 6);
	tdef_uprobe(&t, "/tmp", 0);
	expect_err(&t, run(&r, &t), DP_ERR_NO_REGULAR_FILE, EINVAL, 6);
	tdef_uprobe(&t, "/dev/null", 0);
	expect_err(&t, run(&r, &t), DP_ERR_NO_REGULAR_FILE, EINVAL, 6);
	tdef_uprobe(&t, "data/sym_target.c", 0);
	cr_expect_eq(run(&r, &t), -ENOEXEC);
	cr_expect(strstr(t.err.detail, "not an ELF"), "%s", t.err.detail);
	expect_err(&t, -ENOEXEC, DP_ERR_NOT_ELF, ENOEXEC, 6);
	dp_resolver_free(&r);
}

Test(resolve, uprobe_no_elf)
{
	struct dp_resolver r;
	struct tdef t;

	/* the kernel checks only the file: anything else is accepted */
	dp_resolver_init(&r, NULL, true);
	tdef_uprobe(&t, "data/sym_target.c", 0x12345);
	cr_expect_eq(run(&r, &t), 0);
	tdef_uprobe(&t, "/tmp", 0);
	expect_err(&t, run(&r, &t), DP_ERR_NO_REGULAR_FILE, EINVAL, 6);
	tdef_uprobe(&t, "/nonexistent", 0);
	expect_err(&t, run(&r, &t), DP_ERR_FILE_NOT_FOUND, ENOENT, 6);
	dp_resolver_free(&r);
}

Test(resolve, uprobe_offsets)
{
	struct dp_resolver r;
	struct dp_elf *e;
	struct dp_elf_sym s;
	struct tdef t;
	char why[128];
	uint64_t off;

	dp_resolver_init(&r, NULL, false);
	cr_assert_eq(dp_resolver_open(&r, test_data("sym_nopie"), &e, why,
				      sizeof(why)), 0);

	tdef_uprobe(&t, test_data("sym_nopie"), 0x99999999);
	expect_err(&t, run(&r, &t), DP_ERR_OFFS_OUTSIDE, EINVAL, offs_pos(&t));
	tdef_uprobe(&t, test_data("sym_nopie"), dp_elf_file_size(e));
	expect_err(&t, run(&r, &t), DP_ERR_OFFS_OUTSIDE, EINVAL, offs_pos(&t));
	tdef_uprobe(&t, test_data("sym_nopie"), 0);	/* the ELF header */
	expect_err(&t, run(&r, &t), DP_ERR_OFFS_OUTSIDE, EINVAL, offs_pos(&t));

	cr_assert_eq(dp_elf_lookup(e, "sym_work", &s), 0);
	cr_assert_eq(dp_elf_vaddr_to_off(e, s.value, &off), 0);
	/* push %rbp (1 byte), mov %rsp,%rbp (3 bytes) */
	tdef_uprobe(&t, test_data("sym_nopie"), off + 2);
	cr_expect_eq(run(&r, &t), -EILSEQ);
	cr_expect(strstr(t.err.detail, "sym_work+0x1"), "%s", t.err.detail);
	expect_err(&t, -EILSEQ, DP_ERR_BAD_INSN_BNDRY, EILSEQ, offs_pos(&t));
	tdef_uprobe(&t, test_data("sym_nopie"), off + 1);
	cr_expect_eq(run(&r, &t), 0, "%s", t.err.detail);
	cr_expect_eq(t.probe.vaddr, s.value + 1);
	cr_expect_eq(t.probe.file_offset, off + 1);

	/* no error, no probe: both optional */
	tdef_uprobe(&t, test_data("sym_nopie"), off + 2);
	cr_expect_eq(dp_resolve_cb(&r, t.line, &t.def, NULL, NULL), -EILSEQ);
	tdef_uprobe(&t, test_data("sym_nopie"), off);
	cr_expect_eq(dp_resolve_cb(&r, t.line, &t.def, NULL, NULL), 0);
	dp_resolver_free(&r);
}

Test(resolve, uprobe_paths)
{
	struct dp_resolver r;
	struct dp_elf *e1, *e2;
	struct tdef t;
	char link[64] = "/tmp/dprobe-sym-link-XXXXXX", why[128], rel[4200];
	struct dp_elf_sym s;
	uint64_t off;

	dp_resolver_init(&r, NULL, false);
	cr_assert_eq(dp_resolver_open(&r, test_data("sym_nopie"), &e1, why,
				      sizeof(why)), 0);
	cr_assert_eq(dp_elf_lookup(e1, "main", &s), 0);
	cr_assert_eq(dp_elf_vaddr_to_off(e1, s.value, &off), 0);

	/* symlinks are followed, as kern_path(LOOKUP_FOLLOW) does */
	cr_assert(mkdtemp(link));
	strcat(link, "/l");
	cr_assert_eq(symlink(test_data("sym_nopie"), link), 0);
	tdef_uprobe(&t, link, off);
	cr_expect_eq(run(&r, &t), 0, "%s", t.err.detail);
	/* ... and the cache knows it is the same file */
	cr_assert_eq(dp_resolver_open(&r, link, &e2, why, sizeof(why)), 0);
	cr_expect_eq(e1, e2);
	unlink(link);
	*strrchr(link, '/') = '\0';
	rmdir(link);

	/* relative to the cwd */
	snprintf(rel, sizeof(rel), "%s/tests", getenv("DPROBE_BUILD"));
	cr_assert_eq(chdir(rel), 0);
	tdef_uprobe(&t, "data/sym_nopie", off);
	cr_expect_eq(run(&r, &t), 0, "%s", t.err.detail);
	cr_assert_eq(dp_resolver_open(&r, "data/sym_nopie", &e2, why,
				      sizeof(why)), 0);
	cr_expect_eq(e1, e2);
	tdef_uprobe(&t, "data/sym_nopie", off + 2);	/* in mov %rsp,%rbp */
	expect_err(&t, run(&r, &t), DP_ERR_BAD_INSN_BNDRY, EILSEQ,
		   offs_pos(&t));
	dp_resolver_free(&r);
}

/* ---- the resolver: kprobe places ---------------------------------------- */

Test(resolve, kprobe_symbols)
{
	struct dp_resolver r;
	struct dp_elf *e;
	struct dp_elf_sym s;
	struct tdef t;
	char why[128];

	dp_resolver_init(&r, test_data("sym_nopie"), false);
	cr_assert_eq(dp_resolver_open(&r, test_data("sym_nopie"), &e, why,
				      sizeof(why)), 0);
	cr_assert_eq(dp_elf_lookup(e, "sym_work", &s), 0);

	tdef_kprobe(&t, false, NULL, "sym_work", 0);
	cr_expect_eq(run(&r, &t), 0, "%s", t.err.detail);
	cr_expect_eq(t.probe.vaddr, s.value);
	cr_expect_eq(t.probe.file_offset, s.value - 0x400000);
	tdef_kprobe(&t, true, NULL, "sym_work", 0);
	cr_expect_eq(run(&r, &t), 0, "%s", t.err.detail);

	tdef_kprobe(&t, false, NULL, "sym_wrok", 0);
	cr_expect_eq(run(&r, &t), -EINVAL);
	cr_expect(strstr(t.err.detail, "did you mean: sym_work"), "%s",
		  t.err.detail);
	cr_expect(strstr(t.err.detail, test_data("sym_nopie")), "%s",
		  t.err.detail);
	expect_err(&t, -EINVAL, DP_ERR_BAD_PROBE_ADDR, EINVAL, 6);

	tdef_kprobe(&t, true, NULL, "sym_work", 4);
	expect_err(&t, run(&r, &t), DP_ERR_BAD_RETPROBE, EINVAL, 6);
	tdef_kprobe(&t, false, NULL, "sym_work", 2);
	expect_err(&t, run(&r, &t), DP_ERR_BAD_INSN_BNDRY, EILSEQ, 6);
	/* the end boundary is a place (the kernel's SYM+SIZE), past it not */
	tdef_kprobe(&t, false, NULL, "sym_work", s.size);
	cr_assert_eq(run(&r, &t), 0, "sym_work+size: %s", t.err.detail);
	tdef_kprobe(&t, false, NULL, "sym_work", s.size + 1);
	expect_err(&t, run(&r, &t), DP_ERR_BAD_PROBE_ADDR, EINVAL, 6);
	tdef_kprobe(&t, false, NULL, "sym_work", 100000);
	expect_err(&t, run(&r, &t), DP_ERR_BAD_PROBE_ADDR, EINVAL, 6);
	tdef_kprobe(&t, false, NULL, "sym_counter", 0);
	expect_err(&t, run(&r, &t), DP_ERR_FAIL_REG_PROBE, EINVAL, 6);

	/* MOD: naming the binary itself */
	tdef_kprobe(&t, false, "sym_nopie", "sym_work", 1);
	cr_expect_eq(run(&r, &t), 0, "%s", t.err.detail);
	cr_expect_eq(t.probe.vaddr, s.value + 1);
	tdef_kprobe(&t, false, "sym_nopie", "sym_wrok", 0);
	expect_err(&t, run(&r, &t), DP_ERR_BAD_PROBE_ADDR, EINVAL, 6);
	/* a library not given: like a module not loaded, accepted */
	tdef_kprobe(&t, false, "libnotgiven.so.1", "whatever", 0);
	cr_expect_eq(run(&r, &t), 0);
	/* a module written as a path is opened */
	tdef_kprobe(&t, false, test_data("sym_dup"), "dup_a", 0);
	cr_expect_eq(run(&r, &t), 0, "%s", t.err.detail);
	tdef_kprobe(&t, false, test_data("sym_dup"), "dup_helper", 0);
	expect_err(&t, run(&r, &t), DP_ERR_NON_UNIQ_SYMBOL, EINVAL, 6);
	tdef_kprobe(&t, false, "/nonexistent/libx.so", "foo", 0);
	expect_err(&t, run(&r, &t), DP_ERR_FILE_NOT_FOUND, ENOENT, 6);
	dp_resolver_free(&r);

	/* no binary at all: syntax only */
	dp_resolver_init(&r, NULL, false);
	tdef_kprobe(&t, false, NULL, "sym_wrok", 3);
	cr_expect_eq(run(&r, &t), 0);
	dp_resolver_free(&r);
	/* kernel-only checks read no ELF */
	dp_resolver_init(&r, test_data("sym_nopie"), true);
	tdef_kprobe(&t, false, NULL, "sym_wrok", 3);
	cr_expect_eq(run(&r, &t), 0);
	dp_resolver_free(&r);
}

Test(resolve, kprobe_nonuniq)
{
	struct dp_resolver r;
	struct tdef t;

	dp_resolver_init(&r, test_data("sym_dup"), false);
	tdef_kprobe(&t, false, NULL, "dup_helper", 0);
	cr_expect_eq(run(&r, &t), -EINVAL);
	cr_expect(strstr(t.err.detail, "2 symbols named dup_helper"), "%s",
		  t.err.detail);
	expect_err(&t, -EINVAL, DP_ERR_NON_UNIQ_SYMBOL, EINVAL, 6);
	tdef_kprobe(&t, false, NULL, "dup_a", 0);
	cr_expect_eq(run(&r, &t), 0, "%s", t.err.detail);
	dp_resolver_free(&r);
}

Test(resolve, kprobe_bad_binary)
{
	struct dp_resolver r;
	struct tdef t;

	dp_resolver_init(&r, "data/sym_target.c", false);
	tdef_kprobe(&t, false, NULL, "main", 0);
	expect_err(&t, run(&r, &t), DP_ERR_NOT_ELF, ENOEXEC, 6);
	dp_resolver_free(&r);
	dp_resolver_init(&r, "/nonexistent/bin", false);
	tdef_kprobe(&t, false, NULL, "main", 0);
	expect_err(&t, run(&r, &t), DP_ERR_FILE_NOT_FOUND, ENOENT, 6);
	dp_resolver_free(&r);
}

Test(resolve, kprobe_address)
{
	struct dp_resolver r;
	struct dp_elf *e;
	struct dp_elf_sym s;
	struct tdef t;
	char why[128];

	dp_resolver_init(&r, test_data("sym_nopie"), false);
	cr_assert_eq(dp_resolver_open(&r, test_data("sym_nopie"), &e, why,
				      sizeof(why)), 0);
	cr_assert_eq(dp_elf_lookup(e, "sym_work", &s), 0);
	tdef_addr(&t, s.value + 1);
	cr_expect_eq(run(&r, &t), 0, "%s", t.err.detail);
	cr_expect_eq(t.probe.vaddr, s.value + 1);
	tdef_addr(&t, s.value + 2);
	expect_err(&t, run(&r, &t), DP_ERR_BAD_INSN_BNDRY, EILSEQ, 6);
	/* outside the binary: another mapping of the process */
	tdef_addr(&t, 0x7f0000001000);
	cr_expect_eq(run(&r, &t), 0);
	dp_resolver_free(&r);

	/* a PIE's run-time addresses are unknown before it runs */
	dp_resolver_init(&r, test_data("sym_pie"), false);
	tdef_addr(&t, s.value + 2);
	cr_expect_eq(run(&r, &t), 0);
	dp_resolver_free(&r);
}

/* ---- the resolver on definitions from the parser ------------------------ */

/* The IMM the resolver fills after the @SYM placeholder of argument @i. */
static uint64_t sym_imm(const struct dp_probe_def *def, unsigned i)
{
	const struct dp_arg *a = &def->args[i];

	for (unsigned j = 0; j + 1 < a->n_insn; j++)
		if (a->insn[j].op == DP_FOP_SYMBOL)
			return a->insn[j + 1].imm;
	cr_assert_fail("argument %u has no @SYM", i);
	return 0;
}

static int parse_resolve(struct dp_resolver *r, const char *line,
			 struct dp_probe_def *def, struct dp_error *err)
{
	int ret;

	memset(def, 0, sizeof(*def));
	memset(err, 0, sizeof(*err));
	ret = dp_parse_probe(line, def, err);
	cr_assert_eq(ret, 0, "parse %s: %d (%s)", line, ret,
		     dp_err_message(err->code));
	return dp_resolve_cb(r, line, def, NULL, err);
}

Test(resolve, parsed)
{
	struct dp_resolver r;
	struct dp_probe_def def;
	struct dp_error err;
	struct dp_elf *e;
	struct dp_elf_sym w, c;
	char line[4200], why[128];
	uint64_t off;

	dp_resolver_init(&r, test_data("sym_nopie"), false);
	cr_assert_eq(dp_resolver_open(&r, test_data("sym_nopie"), &e, why,
				      sizeof(why)), 0);
	cr_assert_eq(dp_elf_lookup(e, "sym_work", &w), 0);
	cr_assert_eq(dp_elf_lookup(e, "sym_counter", &c), 0);

	cr_expect_eq(parse_resolve(&r, "p:g/e sym_work+2", &def, &err),
		     -EILSEQ);
	cr_expect_eq(err.code, DP_ERR_BAD_INSN_BNDRY);
	cr_expect_eq(err.pos, 6);
	dp_error_clear(&err);
	dp_probe_def_free(&def);

	cr_expect_eq(parse_resolve(&r, "p:g/e sym_work x=@sym_counter "
				   "y=@sym_counter+4 z=@sym_counter-8", &def,
				   &err), 0, "%s", err.detail);
	cr_expect_eq(sym_imm(&def, 0), c.value);
	cr_expect_eq(sym_imm(&def, 1), c.value + 4);
	cr_expect_eq(sym_imm(&def, 2), c.value - 8);
	dp_probe_def_free(&def);

	/* as the kernel's registration: -ENOENT, reported on the place */
	cr_expect_eq(parse_resolve(&r, "p:g/e  sym_work+1   x=@no_such_sym",
				   &def, &err), -ENOENT);
	cr_expect_eq(err.code, DP_ERR_BAD_PROBE_ADDR);
	cr_expect_eq(err.pos, 6);
	dp_error_clear(&err);
	dp_probe_def_free(&def);

	cr_assert_eq(dp_elf_vaddr_to_off(e, w.value, &off), 0);
	snprintf(line, sizeof(line), "p:g/e %s:%#" PRIx64 " a=%%di",
		 test_data("sym_nopie"), off + 2);
	cr_expect_eq(parse_resolve(&r, line, &def, &err), -EILSEQ);
	cr_expect_eq(err.code, DP_ERR_BAD_INSN_BNDRY);
	cr_expect_eq(err.pos, (int)(strrchr(line, ':') - line) + 1);
	dp_error_clear(&err);
	dp_probe_def_free(&def);

	cr_expect_eq(parse_resolve(&r, "p:g/e data/sym_target.c:0", &def,
				   &err), -ENOEXEC);
	cr_expect_eq(err.code, DP_ERR_NOT_ELF);
	cr_expect_eq(err.pos, 6);
	dp_error_clear(&err);
	dp_probe_def_free(&def);
	dp_resolver_free(&r);
}
