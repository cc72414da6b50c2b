// SPDX-License-Identifier: GPL-2.0
/*
 * sym/sdt: SDT notes and the translation of their argument specs.  The
 * programs are tests/data/sdt_prog.c + sdt_sem.c built at -O0 (non-PIE)
 * and -O2 (PIE) into $DPROBE_BUILD/tests/data/; what the notes hold is
 * checked against binutils (readelf -n/-lW/-SW, nm), and every
 * translation is compiled by dprobe's own definition parser, in the
 * definition the tracer will build from it.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "lang/lang.h"
#include "sym/sdt.h"
#include "test_data.h"

#define PYTHON "/usr/bin/python3.11"

/* ---- helpers ------------------------------------------------------------ */

static struct dp_sdt_probe *read_ok(const char *path, size_t *n)
{
	struct dp_sdt_probe *p = NULL;
	char err[512];
	int ret = dp_sdt_read(path, &p, n, err, sizeof(err));

	cr_assert_eq(ret, 0, "%s: %d %s", path, ret, err);
	return p;
}

/* The uprobe definition the tracer builds for a site, parsed by lang/. */
static void expect_definition_parses(const char *path,
				     const struct dp_sdt_probe *p)
{
	char line[4096];
	size_t len;
	struct dp_probe_def def;
	struct dp_error e = { 0 };
	int ret;

	len = (size_t)snprintf(line, sizeof(line), "p:sdt_%s/%s %s:0x%" PRIx64,
			       p->provider, p->name, path, p->pc_foff);
	if (p->sem)
		len += (size_t)snprintf(line + len, sizeof(line) - len,
					"(0x%" PRIx64 ")", p->sem_foff);
	for (unsigned i = 0; i < p->nargs; i++)
		if (!p->args[i].error)
			len += (size_t)snprintf(line + len, sizeof(line) - len,
						" arg%u=%s:%s", i + 1,
						p->args[i].expr,
						p->args[i].type);
	cr_assert_lt(len, sizeof(line));
	ret = dp_parse_probe(line, &def, &e);
	cr_expect_eq(ret, 0, "refused: %s (%s)", line, e.detail);
	if (!ret) {
		cr_expect_eq(def.place.offset, p->pc_foff);
		cr_expect_eq(def.place.ref_ctr, p->sem ? p->sem_foff : 0);
		dp_probe_def_free(&def);
	}
	dp_error_clear(&e);
}

/* One argument alone, in the smallest uprobe definition. */
static int lang_accepts(const char *expr, const char *type, char *why,
			size_t len)
{
	char line[DP_SDT_EXPR_LEN + DP_SDT_TYPE_LEN + 64];
	struct dp_probe_def def;
	struct dp_error e = { 0 };
	int ret;

	snprintf(line, sizeof(line), "p:g/e /bin/true:0x0 a=%s:%s", expr, type);
	ret = dp_parse_probe(line, &def, &e);
	snprintf(why, len, "%s: %s", line, ret ? e.detail : "ok");
	if (!ret)
		dp_probe_def_free(&def);
	dp_error_clear(&e);
	return ret;
}

/* ---- binutils' view of a file ------------------------------------------- */

struct note_fact {
	char provider[64], name[64], args[512];
	uint64_t pc, base, sem;
};

/* The stapsdt notes as readelf -n prints them, in note order. */
static size_t readelf_notes(const char *path, struct note_fact *f, size_t max)
{
	char cmd[4200], line[1024];
	size_t n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -nW '%s'", path);
	p = popen(cmd, "r");
	cr_assert(p);
	while (fgets(line, sizeof(line), p)) {
		char *s = line + strspn(line, " "), *nl = strchr(s, '\n');
		char *prov = strstr(s, "Provider: ");

		if (nl)
			*nl = '\0';
		/* -W puts the provider on the owner's line */
		if (prov) {
			cr_assert_lt(n, max);
			memset(&f[n], 0, sizeof(f[n]));
			snprintf(f[n++].provider, sizeof(f->provider), "%s",
				 prov + 10);
		} else if (n && !strncmp(s, "Name: ", 6)) {
			snprintf(f[n - 1].name, sizeof(f->name), "%s", s + 6);
		} else if (n && !strncmp(s, "Location: ", 10)) {
			cr_assert_eq(sscanf(s, "Location: %" SCNx64 ", Base: %"
					    SCNx64 ", Semaphore: %" SCNx64,
					    &f[n - 1].pc, &f[n - 1].base,
					    &f[n - 1].sem), 3);
		} else if (n && !strncmp(s, "Arguments:", 10)) {
			snprintf(f[n - 1].args, sizeof(f->args), "%s",
				 s + 10 + strspn(s + 10, " "));
		}
	}
	pclose(p);
	return n;
}

/* File offset of @vaddr through readelf -lW's LOAD rows, or -1. */
static int64_t readelf_vaddr_to_off(const char *path, uint64_t vaddr)
{
	char cmd[4200], line[512];
	uint64_t off, va, pa, fsz, msz;
	int64_t found = -1;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -lW '%s'", path);
	p = popen(cmd, "r");
	cr_assert(p);
	while (fgets(line, sizeof(line), p)) {
		if (sscanf(line, " LOAD %" SCNx64 " %" SCNx64 " %" SCNx64 " %"
			   SCNx64 " %" SCNx64, &off, &va, &pa, &fsz, &msz) == 5 &&
		    vaddr >= va && vaddr - va < fsz)
			found = (int64_t)(off + (vaddr - va));
	}
	pclose(p);
	return found;
}

/* File range of section @name through readelf -SW. */
static bool readelf_section(const char *path, const char *name,
			    uint64_t *off, uint64_t *size)
{
	char cmd[4200], line[512], sname[128], type[64];
	uint64_t addr;
	bool found = false;
	char *s;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -SW '%s'", path);
	p = popen(cmd, "r");
	cr_assert(p);
	while (fgets(line, sizeof(line), p)) {
		s = strchr(line, ']');
		if (!s || !strchr(line, '['))
			continue;
		if (sscanf(s + 1, " %127s %63s %" SCNx64 " %" SCNx64 " %" SCNx64,
			   sname, type, &addr, off, size) == 5 &&
		    !strcmp(sname, name)) {
			found = true;
			break;
		}
	}
	pclose(p);
	return found;
}

/* Link-time address of @sym as nm prints it. */
static uint64_t nm_addr(const char *path, const char *sym)
{
	char cmd[4200], line[512], name[256], t;
	uint64_t v, found = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm '%s'", path);
	p = popen(cmd, "r");
	cr_assert(p);
	while (fgets(line, sizeof(line), p))
		if (sscanf(line, "%" SCNx64 " %c %255s", &v, &t, name) == 3 &&
		    !strcmp(name, sym))
			found = v;
	pclose(p);
	cr_assert(found, "nm: no %s in %s", sym, path);
	return found;
}

static uint8_t file_byte(const char *path, uint64_t off)
{
	uint8_t b = 0;
	int fd = open(path, O_RDONLY);

	cr_assert(fd >= 0);
	cr_assert_eq(pread(fd, &b, 1, (off_t)off), 1);
	close(fd);
	return b;
}

/* ---- one argument spec -------------------------------------------------- */

/* g_int at file offset 0x3000, g_pair at 0x3010, "dup" ambiguous. */
static int fake_foff(void *ctx, const char *sym, uint64_t *foff)
{
	(void)ctx;
	if (!strcmp(sym, "g_int"))
		*foff = 0x3000;
	else if (!strcmp(sym, "g_pair"))
		*foff = 0x3010;
	else if (!strcmp(sym, "dup"))
		return -ENOTUNIQ;
	else
		return -ENOENT;
	return 0;
}

struct arg_row {
	const char *spec;
	int ret;
	const char *expr, *type;	/* ret 0 */
	const char *why;		/* ret != 0: in the error */
};

#define OK(s, e, t) { s, 0, e, t, NULL }
#define NO(s, r, w) { s, -r, NULL, NULL, w }

static const struct arg_row arg_rows[] = {
	/* registers: every width maps to the 64-bit name, the type keeps
	 * the low bytes */
	OK("8@%rdi", "%di", "u64"),
	OK("-8@%rdi", "%di", "s64"),
	OK("-4@%edi", "%di", "s32"),
	OK("-2@%di", "%di", "s16"),
	OK("-1@%dil", "%di", "s8"),
	OK("-4@%eax", "%ax", "s32"),
	OK("2@%ax", "%ax", "u16"),
	OK("1@%al", "%ax", "u8"),
	OK("-1@%sil", "%si", "s8"),
	OK("1@%bpl", "%bp", "u8"),
	OK("1@%spl", "%sp", "u8"),
	OK("-4@%ebp", "%bp", "s32"),
	OK("8@%rsp", "%sp", "u64"),
	OK("4@%r8d", "%r8", "u32"),
	OK("2@%r9w", "%r9", "u16"),
	OK("1@%r10b", "%r10", "u8"),
	OK("-8@%r15", "%r15", "s64"),
	OK("8@%rip", "%ip", "u64"),
	OK("8@%eax", "%ax", "u64"),	/* the size governs (sdt.h PR24541) */
	OK("-4@%rax", "%ax", "s32"),
	/* high bytes: a bitfield of the 64-bit register */
	OK("1@%ah", "%ax", "b8@8/64"),
	OK("1@%dh", "%dx", "b8@8/64"),
	/* memory: base + displacement, the sign always written */
	OK("-4@-20(%rbp)", "-20(%bp)", "s32"),
	OK("-8@8(%rdi)", "+8(%di)", "s64"),
	OK("-8@(%rax)", "+0(%ax)", "s64"),
	OK("-4@112(%rsp)", "+112(%sp)", "s32"),
	OK("4@0x10(%rsp)", "+16(%sp)", "u32"),
	OK("4@-0x10(%r12)", "-16(%r12)", "u32"),
	OK("8@010(%rbx)", "+8(%bx)", "u64"),	/* octal, as gas reads it */
	OK("2@16(%rip)", "+16(%ip)", "u16"),
	/* globals: the file-offset form */
	OK("-4@g_int(%rip)", "@+0x3000", "s32"),
	OK("-8@8+g_pair(%rip)", "@+0x3018", "s64"),
	OK("8@g_pair+8(%rip)", "@+0x3018", "u64"),
	OK("8@g_pair-8(%rip)", "@+0x3008", "u64"),
	OK("-4@g_int-0(%rip)", "@+0x3000", "s32"),
	OK("8@g_pair", "@+0x3010", "u64"),
	OK("8@0x404040", "@0x404040", "u64"),
	/* immediates, as the type stores them */
	OK("-4@$5", "\\5", "s32"),
	OK("-4@$-1", "\\-1", "s32"),
	OK("1@$-56", "\\200", "u8"),
	OK("-1@$200", "\\-56", "s8"),
	OK("-8@$4886718345", "\\4886718345", "s64"),
	OK("8@$0x10", "\\16", "u64"),
	OK("8@$-1", "\\18446744073709551615", "u64"),
	OK("-2@$65535", "\\-1", "s16"),
	/* floats: the raw bits */
	OK("8f@%rax", "%ax", "x64"),
	OK("4f@-8(%rbp)", "-8(%bp)", "x32"),
	/* no size: 8 bytes, unsigned */
	OK("%rdi", "%di", "u64"),
	OK("-8(%rbp)", "-8(%bp)", "u64"),
	OK("$7", "\\7", "u64"),
	/* refused, with a reason */
	NO("-1@%ah", EOPNOTSUPP, "high-byte"),
	NO("2@%ch", EOPNOTSUPP, "high-byte"),
	NO("8@8(%rax,%rbx,4)", EOPNOTSUPP, "indexed address not supported"),
	NO("8@(,%rax,8)", EOPNOTSUPP, "indexed"),
	NO("8@(%rax,%rbx)", EOPNOTSUPP, "indexed"),
	NO("4@%fs:0x28", EOPNOTSUPP, "segment"),
	NO("8@%fs:g_int@tpoff", EOPNOTSUPP, "segment"),
	NO("8f@%xmm0", EOPNOTSUPP, "SSE"),
	NO("4@%st", EOPNOTSUPP, "x87"),
	NO("16@%rax", EOPNOTSUPP, "size"),
	NO("3@%eax", EOPNOTSUPP, "size"),
	NO("2f@%ax", EOPNOTSUPP, "size"),
	NO("0@%rax", EINVAL, "size"),
	NO("1234@%rax", EINVAL, "size"),
	NO("-4@$g_int", EOPNOTSUPP, "immediate"),
	NO("8@nosuch(%rip)", ENOENT, "not found"),
	NO("8@dup(%rip)", ENOTUNIQ, "not unique"),
	NO("8@g_pair-0x4000(%rip)", ERANGE, "range"),
	NO("4@(%eax)", EOPNOTSUPP, "narrower"),
	NO("4@(%ah)", EOPNOTSUPP, "narrower"),
	NO("8@g_int(%rax)", EOPNOTSUPP, "base register"),
	NO("8@-g_int(%rip)", EOPNOTSUPP, "arithmetic"),
	NO("8@g_int+g_pair(%rip)", EOPNOTSUPP, "arithmetic"),
	NO("8@g_int@GOTPCREL(%rip)", EOPNOTSUPP, "relocation"),
	NO("", EINVAL, "number"),
	NO("8@", EINVAL, "number"),
	NO("8@%foo", EINVAL, "register"),
	NO("8@%", EINVAL, "register"),
	NO("8@%rax)", EINVAL, "junk"),
	NO("8@(%rax", EINVAL, "')'"),
	NO("8@$", EINVAL, "number"),
	NO("8@$99999999999999999999", EINVAL, "range"),
	NO("8@09(%rax)", EINVAL, "digit"),
	NO("8@0x(%rax)", EINVAL, "junk"),
	NO("-@%rax", EINVAL, "number"),
	NO("8@%rax %rbx", EINVAL, "junk"),
};

Test(sdt, arg_specs)
{
	struct dp_sdt_arg a;
	char why[1024];

	for (size_t i = 0; i < sizeof(arg_rows) / sizeof(arg_rows[0]); i++) {
		const struct arg_row *r = &arg_rows[i];
		int ret = dp_sdt_parse_arg(r->spec, &a, fake_foff, NULL);

		cr_expect_eq(ret, r->ret, "'%s': ret %d (%s), want %d", r->spec,
			     ret, a.error ? a.error : "-", r->ret);
		cr_expect_str_eq(a.spec, r->spec);
		if (r->ret) {
			cr_expect(a.error && strstr(a.error, r->why),
				  "'%s': error '%s', want '%s'", r->spec,
				  a.error ? a.error : "(none)", r->why);
			cr_expect_str_eq(a.expr, "", "'%s'", r->spec);
			continue;
		}
		cr_expect_null(a.error, "'%s': %s", r->spec, a.error);
		cr_expect_str_eq(a.expr, r->expr, "'%s': expr %s", r->spec, a.expr);
		cr_expect_str_eq(a.type, r->type, "'%s': type %s", r->spec, a.type);
		cr_expect_eq(lang_accepts(a.expr, a.type, why, sizeof(why)), 0,
			     "%s", why);
	}
}

Test(sdt, arg_sizes_and_signs)
{
	struct dp_sdt_arg a;

	cr_assert_eq(dp_sdt_parse_arg("-4@%eax", &a, NULL, NULL), 0);
	cr_expect_eq(a.size, 4);
	cr_expect(a.is_signed && !a.is_float);
	cr_assert_eq(dp_sdt_parse_arg("1@%al", &a, NULL, NULL), 0);
	cr_expect_eq(a.size, 1);
	cr_expect(!a.is_signed);
	cr_assert_eq(dp_sdt_parse_arg("8f@%rax", &a, NULL, NULL), 0);
	cr_expect(a.is_float && a.size == 8);
	cr_assert_eq(dp_sdt_parse_arg("%rdi", &a, NULL, NULL), 0);
	cr_expect(a.size == 8 && !a.is_signed);
}

Test(sdt, arg_without_resolver)
{
	struct dp_sdt_arg a;

	cr_expect_eq(dp_sdt_parse_arg("-4@g_int(%rip)", &a, NULL, NULL),
		     -EOPNOTSUPP);
	cr_expect(a.error && strstr(a.error, "symbol"));
	/* what needs no symbol still translates */
	cr_expect_eq(dp_sdt_parse_arg("-4@-20(%rbp)", &a, NULL, NULL), 0);
}

Test(sdt, arg_too_long)
{
	char spec[200];
	struct dp_sdt_arg a;

	memset(spec, 'a', sizeof(spec) - 1);
	spec[sizeof(spec) - 1] = '\0';
	memcpy(spec, "8@", 2);
	cr_expect_eq(dp_sdt_parse_arg(spec, &a, fake_foff, NULL), -EINVAL);
	cr_expect(a.error && strstr(a.error, "too long"));
	cr_expect_eq(strlen(a.spec), sizeof(a.spec) - 1);
}

/* ---- one note description ----------------------------------------------- */

static size_t make_desc(uint8_t *buf, uint64_t pc, uint64_t base, uint64_t sem,
			const char *prov, const char *name, const char *args)
{
	size_t n = 24;

	memcpy(buf, &pc, 8);
	memcpy(buf + 8, &base, 8);
	memcpy(buf + 16, &sem, 8);
	strcpy((char *)buf + n, prov);
	n += strlen(prov) + 1;
	strcpy((char *)buf + n, name);
	n += strlen(name) + 1;
	if (args) {
		strcpy((char *)buf + n, args);
		n += strlen(args) + 1;
	}
	return n;
}

Test(sdt, note_desc)
{
	uint8_t d[1024];
	struct dp_sdt_probe p;
	char err[128];
	uint64_t base;
	size_t n;

	n = make_desc(d, 0x1234, 0x2004, 0x4040, "prov", "name__x",
		      "-4@%edi  8@%rsi\t-4@-20(%rbp)");
	cr_assert_eq(dp_sdt_parse_note(d, n + 3, &p, &base, err, sizeof(err)), 0);
	cr_expect_str_eq(p.provider, "prov");
	cr_expect_str_eq(p.name, "name__x");
	cr_expect_eq(p.pc, 0x1234);
	cr_expect_eq(base, 0x2004);
	cr_expect_eq(p.sem, 0x4040);
	cr_expect_null(p.error);
	cr_assert_eq(p.nargs, 3);
	cr_expect_str_eq(p.args[0].spec, "-4@%edi");
	cr_expect_str_eq(p.args[1].spec, "8@%rsi");
	cr_expect_str_eq(p.args[2].spec, "-4@-20(%rbp)");

	/* no argument string at all, or an empty one */
	n = make_desc(d, 1, 2, 0, "p", "n", NULL);
	cr_assert_eq(dp_sdt_parse_note(d, n, &p, &base, err, sizeof(err)), 0);
	cr_expect_eq(p.nargs, 0);
	n = make_desc(d, 1, 2, 0, "p", "n", "");
	cr_assert_eq(dp_sdt_parse_note(d, n, &p, &base, err, sizeof(err)), 0);
	cr_expect_eq(p.nargs, 0);

	/* too many arguments, names that cannot be event names */
	n = make_desc(d, 1, 2, 0, "p", "n",
		      "1@%al 1@%al 1@%al 1@%al 1@%al 1@%al 1@%al 1@%al 1@%al "
		      "1@%al 1@%al 1@%al 1@%al");
	cr_assert_eq(dp_sdt_parse_note(d, n, &p, &base, err, sizeof(err)), 0);
	cr_expect_eq(p.nargs, DP_SDT_MAX_ARGS);
	cr_expect(p.error && strstr(p.error, "more than 12"));
	n = make_desc(d, 1, 2, 0, "p-x", "n", "");
	cr_assert_eq(dp_sdt_parse_note(d, n, &p, &base, err, sizeof(err)), 0);
	cr_expect(p.error && strstr(p.error, "identifier"));
	n = make_desc(d, 1, 2, 0, "p",
		      "n123456789012345678901234567890123456789012345678901234567890123",
		      "");
	cr_assert_eq(dp_sdt_parse_note(d, n, &p, &base, err, sizeof(err)), 0);
	cr_expect(p.error && strstr(p.error, "too long"));
	cr_expect_eq(strlen(p.name), DP_SDT_NAME_LEN - 1);

	/* malformed */
	cr_expect_eq(dp_sdt_parse_note(d, 23, &p, &base, err, sizeof(err)),
		     -ENOEXEC);
	cr_expect(strstr(err, "too short"), "%s", err);
	n = make_desc(d, 1, 2, 0, "p", "n", "8@%rax");
	cr_expect_eq(dp_sdt_parse_note(d, 26, &p, &base, err, sizeof(err)),
		     -ENOEXEC);
	cr_expect(strstr(err, "NUL"), "%s", err);
	cr_expect_eq(dp_sdt_parse_note(d, n - 1, &p, &base, err, sizeof(err)),
		     -ENOEXEC);
	cr_expect(strstr(err, "arguments"), "%s", err);
}

/* ---- the test programs -------------------------------------------------- */

/*
 * What each spec of the test programs must become.  A row with @sym is a
 * global: its "@+" offset is nm's address of @sym plus @addend, translated
 * through the site's segment (readelf's file offset of the site).
 */
struct prog_row {
	const char *spec, *expr, *type, *sym;
	int64_t addend;
	const char *why;		/* refused */
};

#define RX(s, e, t) { s, e, t, NULL, 0, NULL }
#define RG(s, t, sym, add) { s, NULL, t, sym, add, NULL }
#define RN(s, w) { s, NULL, NULL, NULL, 0, w }

static const struct prog_row prog_rows[] = {
	RX("-8@%rdi", "%di", "s64"), RX("-4@%esi", "%si", "s32"),
	RX("-2@%dx", "%dx", "s16"), RX("-1@%cl", "%cx", "s8"),
	RX("4@%r8d", "%r8", "u32"), RX("2@%r9w", "%r9", "u16"),
	RX("1@%r10b", "%r10", "u8"), RX("8@%r11", "%r11", "u64"),
	RX("-4@%edi", "%di", "s32"), RX("-2@%di", "%di", "s16"),
	RX("-1@%dil", "%di", "s8"), RX("-4@%eax", "%ax", "s32"),
	RX("-8@%rdx", "%dx", "s64"), RX("-8@%rax", "%ax", "s64"),
	RX("8f@%rcx", "%cx", "x64"),
	RX("-8@-8(%rbp)", "-8(%bp)", "s64"), RX("-4@-12(%rbp)", "-12(%bp)", "s32"),
	RX("-2@-16(%rbp)", "-16(%bp)", "s16"), RX("-1@-20(%rbp)", "-20(%bp)", "s8"),
	RX("4@-24(%rbp)", "-24(%bp)", "u32"), RX("2@-28(%rbp)", "-28(%bp)", "u16"),
	RX("-4@-4(%rbp)", "-4(%bp)", "s32"),
	RX("-8@8(%rdi)", "+8(%di)", "s64"), RX("-8@(%rdi)", "+0(%di)", "s64"),
	RX("-8@(%rax)", "+0(%ax)", "s64"),
	RG("-4@g_int(%rip)", "s32", "g_int", 0),
	RG("-8@8+g_pair(%rip)", "s64", "g_pair", 8),
	RG("8f@g_dbl(%rip)", "x64", "g_dbl", 0),
	RX("-4@$5", "\\5", "s32"), RX("-4@$-1", "\\-1", "s32"),
	RX("1@$-56", "\\200", "u8"), RX("-8@$4886718345", "\\4886718345", "s64"),
	/* the hand-made notes */
	RX("1@%ah", "%ax", "b8@8/64"), RX("1@%bh", "%bx", "b8@8/64"),
	RG("8@g_pair+8(%rip)", "u64", "g_pair", 8),
	RG("-4@g_int-0(%rip)", "s32", "g_int", 0),
	RX("%rdi", "%di", "u64"), RX("8@%rip", "%ip", "u64"),
	RX("8@16(%rip)", "+16(%ip)", "u64"), RX("2@0x10(%rsp)", "+16(%sp)", "u16"),
	RG("-8@g_pair", "s64", "g_pair", 0),
	RN("-1@%ah", "high-byte"), RN("8@8(%rax,%rbx,4)", "indexed"),
	RN("8@(,%rax,8)", "indexed"), RN("4@%fs:0x28", "segment"),
	RN("8f@%xmm0", "SSE"), RN("16@%rax", "size"),
	RN("-4@$g_int", "immediate"), RN("8@nosuch(%rip)", "not found"),
	RN("4@(%eax)", "narrower"), RN("8@g_int(%rax)", "base register"),
};

/* Forms the two builds together must show (the task's list). */
static const char *const required_specs[] = {
	"-8@%rdi", "-4@%edi", "-2@%di", "-1@%dil", "4@%r8d", "2@%r9w",
	"1@%r10b", "1@%ah", "-1@-20(%rbp)", "-8@8(%rdi)", "-8@(%rax)",
	"-4@g_int(%rip)", "-8@8+g_pair(%rip)", "8@g_pair+8(%rip)", "-4@$5",
	"-4@$-1", "8@8(%rax,%rbx,4)",
};

static const struct prog_row *prog_row(const char *spec)
{
	for (size_t i = 0; i < sizeof(prog_rows) / sizeof(prog_rows[0]); i++)
		if (!strcmp(prog_rows[i].spec, spec))
			return &prog_rows[i];
	return NULL;
}

static void check_arg(const char *path, const struct dp_sdt_probe *p,
		      const struct dp_sdt_arg *a)
{
	const struct prog_row *r = prog_row(a->spec);
	char expr[64];

	cr_assert(r, "%s: %s:%s: spec '%s' not in the table of this test "
		  "(another compiler?)", path, p->provider, p->name, a->spec);
	if (r->why) {
		cr_expect(a->error && strstr(a->error, r->why),
			  "%s: '%s' gives '%s', want '%s'", path, a->spec,
			  a->error ? a->error : "(no error)", r->why);
		return;
	}
	cr_expect_null(a->error, "%s: '%s': %s", path, a->spec, a->error);
	if (r->sym)
		snprintf(expr, sizeof(expr), "@+0x%" PRIx64,
			 nm_addr(path, r->sym) + r->addend -
			 (p->pc - p->pc_foff));
	else
		snprintf(expr, sizeof(expr), "%s", r->expr);
	cr_expect_str_eq(a->expr, expr, "%s: '%s'", path, a->spec);
	cr_expect_str_eq(a->type, r->type, "%s: '%s'", path, a->spec);
}

static void join_specs(const struct dp_sdt_probe *p, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < p->nargs && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? " " : "",
				      p->args[i].spec);
}

/* Everything about @path's sites against binutils; returns the sites. */
static struct dp_sdt_probe *check_program(const char *path, size_t *np)
{
	struct note_fact f[64];
	size_t nf = readelf_notes(path, f, 64), n;
	struct dp_sdt_probe *p = read_ok(path, &n);
	uint64_t probes_off, probes_size;
	char args[512];

	cr_assert(readelf_section(path, ".probes", &probes_off, &probes_size));
	cr_assert_gt(n, 0);
	cr_assert_eq(n, nf, "%s: %zu sites, readelf shows %zu", path, n, nf);
	for (size_t i = 0; i < n; i++) {
		cr_expect_str_eq(p[i].provider, f[i].provider);
		cr_expect_str_eq(p[i].name, f[i].name);
		cr_expect_eq(p[i].pc, f[i].pc, "%s: %s", path, p[i].name);
		cr_expect_eq(p[i].sem, f[i].sem);
		cr_expect_null(p[i].error, "%s: %s: %s", path, p[i].name,
			       p[i].error);
		cr_expect_eq((int64_t)p[i].pc_foff,
			     readelf_vaddr_to_off(path, p[i].pc));
		/* every site is sdt.h's nop (or the hand-made ones') */
		cr_expect_eq(file_byte(path, p[i].pc_foff), 0x90,
			     "%s: %s: no nop at 0x%" PRIx64, path, p[i].name,
			     p[i].pc_foff);
		if (p[i].sem) {
			cr_expect_eq((int64_t)p[i].sem_foff,
				     readelf_vaddr_to_off(path, p[i].sem));
			cr_expect(p[i].sem_foff >= probes_off &&
				  p[i].sem_foff + 2 <= probes_off + probes_size,
				  "%s: semaphore of %s at 0x%" PRIx64
				  " not in .probes", path, p[i].name,
				  p[i].sem_foff);
		}
		join_specs(&p[i], args, sizeof(args));
		cr_expect_str_eq(args, f[i].args);
		for (unsigned k = 0; k < p[i].nargs; k++)
			check_arg(path, &p[i], &p[i].args[k]);
		expect_definition_parses(path, &p[i]);
	}
	*np = n;
	return p;
}

static size_t count_sites(const struct dp_sdt_probe *p, size_t n,
			  const char *prov, const char *name)
{
	size_t c = 0;

	for (size_t i = 0; i < n; i++)
		c += !strcmp(p[i].provider, prov) && !strcmp(p[i].name, name);
	return c;
}

static const struct dp_sdt_probe *find(const struct dp_sdt_probe *p, size_t n,
				       const char *prov, const char *name,
				       size_t nth)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(p[i].provider, prov) && !strcmp(p[i].name, name) &&
		    !nth--)
			return &p[i];
	cr_assert_fail("no %s:%s", prov, name);
	return NULL;
}

static void check_shape(const struct dp_sdt_probe *p, size_t n)
{
	const struct dp_sdt_probe *a, *b;

	/* one probe name, two sites */
	cr_expect_eq(count_sites(p, n, "sdt_test", "twice"), 2);
	a = find(p, n, "sdt_test", "twice", 0);
	b = find(p, n, "sdt_test", "twice", 1);
	cr_expect_neq(a->pc, b->pc);
	cr_expect_eq(a->sem, 0);
	/* gated twice, on one semaphore; gated2 on its own */
	cr_expect_eq(count_sites(p, n, "sdt_sem", "gated"), 2);
	a = find(p, n, "sdt_sem", "gated", 0);
	b = find(p, n, "sdt_sem", "gated", 1);
	cr_expect_neq(a->sem, 0);
	cr_expect_eq(a->sem, b->sem);
	cr_expect_eq(a->sem_foff, b->sem_foff);
	b = find(p, n, "sdt_sem", "gated2", 0);
	cr_expect_neq(b->sem, 0);
	cr_expect_neq(b->sem, a->sem);
	/* the hand-made ones */
	a = find(p, n, "sdt_hand", "none", 0);
	cr_expect_eq(a->nargs, 0);
	a = find(p, n, "sdt_hand", "refused", 0);
	for (unsigned i = 0; i < a->nargs; i++)
		cr_expect_not_null(a->args[i].error, "%s", a->args[i].spec);
	a = find(p, n, "sdt_hand", "ok", 0);
	for (unsigned i = 0; i < a->nargs; i++)
		cr_expect_null(a->args[i].error, "%s", a->args[i].spec);
}

Test(sdt, program_O0)
{
	size_t n;
	struct dp_sdt_probe *p = check_program(test_data("sdt_O0"), &n);

	check_shape(p, n);
	free(p);
}

Test(sdt, program_O2)
{
	size_t n;
	struct dp_sdt_probe *p = check_program(test_data("sdt_O2"), &n);

	check_shape(p, n);
	free(p);
}

Test(sdt, required_forms)
{
	const char *bins[] = { test_data("sdt_O0"), test_data("sdt_O2") };
	struct dp_sdt_probe *p[2];
	size_t n[2];
	bool seen;

	for (int b = 0; b < 2; b++)
		p[b] = read_ok(bins[b], &n[b]);
	for (size_t r = 0; r < sizeof(required_specs) / sizeof(required_specs[0]); r++) {
		seen = false;
		for (int b = 0; b < 2; b++)
			for (size_t i = 0; i < n[b]; i++)
				for (unsigned k = 0; k < p[b][i].nargs; k++)
					seen |= !strcmp(p[b][i].args[k].spec,
							required_specs[r]);
		cr_expect(seen, "no site uses the form %s", required_specs[r]);
	}
	free(p[0]);
	free(p[1]);
}

Test(sdt, python)
{
	static const char *const names[] = {
		"function__entry", "function__return", "line", "gc__start",
		"gc__done", "import__find__load__start",
		"import__find__load__done", "audit",
	};
	struct note_fact f[64];
	uint64_t probes_off, probes_size;
	const struct dp_sdt_probe *entry;
	struct dp_sdt_probe *p;
	size_t n;

	if (access(PYTHON, R_OK))
		cr_skip_test(PYTHON " is not installed");
	p = read_ok(PYTHON, &n);
	cr_assert_eq(n, readelf_notes(PYTHON, f, 64));
	cr_assert(readelf_section(PYTHON, ".probes", &probes_off, &probes_size));
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		cr_expect_eq(count_sites(p, n, "python", names[i]), 1, "%s",
			     names[i]);
	for (size_t i = 0; i < n; i++) {
		cr_expect_eq(p[i].pc, f[i].pc);
		cr_expect_null(p[i].error, "%s: %s", p[i].name, p[i].error);
		cr_expect_eq((int64_t)p[i].pc_foff,
			     readelf_vaddr_to_off(PYTHON, p[i].pc));
		cr_expect_neq(p[i].sem, 0, "%s is not gated", p[i].name);
		cr_expect(p[i].sem_foff >= probes_off &&
			  p[i].sem_foff + 2 <= probes_off + probes_size);
		for (unsigned k = 0; k < p[i].nargs; k++)
			cr_expect_null(p[i].args[k].error, "%s: %s: %s",
				       p[i].name, p[i].args[k].spec,
				       p[i].args[k].error);
		expect_definition_parses(PYTHON, &p[i]);
	}
	/* file name, function name (pointers), line number (int) */
	entry = find(p, n, "python", "function__entry", 0);
	cr_expect_eq(entry->nargs, 3);
	cr_expect_str_eq(entry->args[0].type, "u64");
	cr_expect_str_eq(entry->args[2].type, "s32");
	free(p);
}

Test(sdt, no_notes)
{
	struct dp_sdt_probe *p = (void *)1;
	size_t n = 7;
	char err[256];

	cr_expect_eq(dp_sdt_read(test_data("sym_pie"), &p, &n, err, sizeof(err)), 0,
		     "%s", err);
	cr_expect_eq(n, 0);
	cr_expect_null(p);
}

Test(sdt, not_elf)
{
	struct dp_sdt_probe *p;
	size_t n;
	char err[256];

	cr_expect_eq(dp_sdt_read("/nonexistent/x", &p, &n, err, sizeof(err)),
		     -ENOENT);
	cr_expect(strstr(err, "/nonexistent/x"), "%s", err);
	cr_expect_eq(dp_sdt_read("/etc/passwd", &p, &n, err, sizeof(err)),
		     -ENOEXEC);
	cr_expect_null(p);
	cr_expect_eq(n, 0);
}

/* ---- corrupt copies ----------------------------------------------------- */

struct blob {		/* a file's bytes, to mutate; zero before the first load */
	uint8_t *b;
	size_t len;
	size_t note_off, note_size;	/* .note.stapsdt in the file */
	size_t shdr_off;		/* its section header */
};

static void load_blob(const char *path, struct blob *bl)
{
	struct stat st;
	Elf *elf;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	GElf_Shdr sh;
	size_t shstrndx, idx;
	int fd = open(path, O_RDONLY);

	cr_assert(fd >= 0);
	cr_assert_eq(fstat(fd, &st), 0);
	free(bl->b);
	bl->len = (size_t)st.st_size;
	bl->b = malloc(bl->len);
	cr_assert_eq(pread(fd, bl->b, bl->len, 0), (ssize_t)bl->len);
	elf_version(EV_CURRENT);
	elf = elf_memory((char *)bl->b, bl->len);
	cr_assert(elf && gelf_getehdr(elf, &eh));
	cr_assert_eq(elf_getshdrstrndx(elf, &shstrndx), 0);
	bl->note_size = 0;
	while ((scn = elf_nextscn(elf, scn))) {
		gelf_getshdr(scn, &sh);
		if (!strcmp(elf_strptr(elf, shstrndx, sh.sh_name),
			    ".note.stapsdt")) {
			idx = elf_ndxscn(scn);
			bl->note_off = sh.sh_offset;
			bl->note_size = sh.sh_size;
			bl->shdr_off = eh.e_shoff + idx * eh.e_shentsize;
		}
	}
	elf_end(elf);
	close(fd);
	cr_assert_gt(bl->note_size, 0);
}

static char *write_blob(const struct blob *bl, size_t len)
{
	char *path = strdup("/tmp/dprobe-sdt-XXXXXX");
	int fd = mkstemp(path);

	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, bl->b, len), (ssize_t)len);
	close(fd);
	return path;
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

static size_t align4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

/* The description of each note in turn: @fn(desc, descsz, arg). */
static void each_note(struct blob *bl, void (*fn)(uint8_t *, uint32_t, void *),
		      void *arg)
{
	size_t off = bl->note_off, end = bl->note_off + bl->note_size;

	while (off + 12 <= end) {
		uint32_t namesz = get32(bl->b + off), descsz = get32(bl->b + off + 4);
		uint8_t *desc = bl->b + off + 12 + align4(namesz);

		fn(desc, descsz, arg);
		off += 12 + align4(namesz) + align4(descsz);
	}
}

/* Read a mutated copy; returns dp_sdt_read()'s result. */
static int read_copy(const struct blob *bl, size_t len, struct dp_sdt_probe **p,
		     size_t *n, char *err, size_t errlen)
{
	char *path = write_blob(bl, len);
	int ret = dp_sdt_read(path, p, n, err, errlen);

	unlink(path);
	free(path);
	return ret;
}

static void expect_refused(const struct blob *bl, size_t len, const char *what)
{
	struct dp_sdt_probe *p = (void *)1;
	size_t n = 5;
	char err[512] = "";
	int ret = read_copy(bl, len, &p, &n, err, sizeof(err));

	cr_expect_lt(ret, 0, "%s: accepted", what);
	cr_expect_neq(err[0], '\0', "%s: no message", what);
	cr_expect_null(p, "%s", what);
	cr_expect_eq(n, 0, "%s", what);
}

Test(sdt, corrupt_notes)
{
	struct blob bl = { 0 };
	uint8_t *hdr;
	struct dp_sdt_probe *p;
	size_t n;
	char err[512];

	load_blob(test_data("sdt_O2"), &bl);
	hdr = bl.b + bl.note_off;

	/* a name size running past the section */
	put32(hdr, 0x7ffffff0);
	expect_refused(&bl, bl.len, "namesz");
	put32(hdr, 8);
	cr_assert_eq(read_copy(&bl, bl.len, &p, &n, err, sizeof(err)), 0, "%s",
		     err);
	free(p);

	/* a description too short for pc, base and semaphore */
	put32(hdr + 4, 16);
	expect_refused(&bl, bl.len, "descsz 16");
	cr_assert_eq(read_copy(&bl, bl.len, &p, &n, err, sizeof(err)), -ENOEXEC);
	cr_expect(strstr(err, "too short"), "%s", err);

	/* a description running past the section */
	put32(hdr + 4, (uint32_t)bl.note_size);
	expect_refused(&bl, bl.len, "descsz past the end");
	load_blob(test_data("sdt_O2"), &bl);
	hdr = bl.b + bl.note_off;

	/* strings without their NULs */
	memset(hdr + 12 + 8 + 24, 'x', get32(hdr + 4) - 24);
	expect_refused(&bl, bl.len, "no NUL");
	cr_assert_eq(read_copy(&bl, bl.len, &p, &n, err, sizeof(err)), -ENOEXEC);
	cr_expect(strstr(err, "NUL"), "%s", err);
	load_blob(test_data("sdt_O2"), &bl);

	/* the section header claims more bytes than the file has */
	put64(bl.b + bl.shdr_off + 32, bl.len);	/* sh_size */
	expect_refused(&bl, bl.len, "sh_size");
	load_blob(test_data("sdt_O2"), &bl);

	/* the file cut inside the notes (its section headers go too) */
	expect_refused(&bl, bl.note_off + 30, "truncated");
	free(bl.b);
}

static void move_note(uint8_t *desc, uint32_t len, void *arg)
{
	uint64_t delta = *(uint64_t *)arg;

	(void)len;
	put64(desc, get64(desc) - delta);		/* pc */
	put64(desc + 8, get64(desc + 8) - delta);	/* .stapsdt.base */
	if (get64(desc + 16))
		put64(desc + 16, get64(desc + 16) - delta);
}

/*
 * Prelink: the notes keep the addresses of before the move, .stapsdt.base
 * tells by how much everything moved.
 */
Test(sdt, prelinked)
{
	struct blob bl = { 0 };
	struct dp_sdt_probe *want, *got;
	size_t nw, ng;
	uint64_t delta = 0x10000;
	char err[512];

	want = read_ok(test_data("sdt_O2"), &nw);
	load_blob(test_data("sdt_O2"), &bl);
	each_note(&bl, move_note, &delta);
	cr_assert_eq(read_copy(&bl, bl.len, &got, &ng, err, sizeof(err)), 0,
		     "%s", err);
	cr_assert_eq(ng, nw);
	for (size_t i = 0; i < nw; i++) {
		cr_expect_eq(got[i].pc, want[i].pc);
		cr_expect_eq(got[i].pc_foff, want[i].pc_foff);
		cr_expect_eq(got[i].sem, want[i].sem);
		cr_expect_eq(got[i].sem_foff, want[i].sem_foff);
		for (unsigned k = 0; k < want[i].nargs; k++)
			cr_expect_str_eq(got[i].args[k].expr, want[i].args[k].expr);
	}
	free(want);
	free(got);
	free(bl.b);
}

static void bad_addresses(uint8_t *desc, uint32_t len, void *arg)
{
	int *i = arg;

	(void)len;
	if ((*i)++ == 0)
		put64(desc, 0x10);		/* pc: not code */
	else if (get64(desc + 16))
		put64(desc + 16, 0x7fff0000);	/* semaphore: nowhere */
}

/* A site that cannot be armed is reported, the others still are. */
Test(sdt, bad_site_addresses)
{
	struct blob bl = { 0 };
	struct dp_sdt_probe *p;
	size_t n, gated = 0;
	int i = 0;
	char err[512];

	load_blob(test_data("sdt_O2"), &bl);
	each_note(&bl, bad_addresses, &i);
	cr_assert_eq(read_copy(&bl, bl.len, &p, &n, err, sizeof(err)), 0, "%s",
		     err);
	cr_assert_gt(n, 1);
	cr_expect(p[0].error && strstr(p[0].error, "executable"), "%s",
		  p[0].error);
	/* the symbols of RIP-relative operands need the site's offset */
	for (size_t k = 1; k < n; k++) {
		if (!p[k].sem) {
			cr_expect_null(p[k].error, "%s: %s", p[k].name, p[k].error);
			continue;
		}
		gated++;
		cr_expect(p[k].error && strstr(p[k].error, "semaphore"), "%s",
			  p[k].name);
	}
	cr_expect_eq(gated, 3);
	free(p);
	free(bl.b);
}
