// SPDX-License-Identifier: GPL-2.0
/*
 * Resolving probe places at definition time.  Every check that fails
 * reports the kernel's error code and errno where the kernel has one, with
 * the caret where its error_log would put it (token 1, the place), and a
 * dprobe detail saying what was found instead.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "arch/arch.h"
#include "lang/kstrto.h"
#include "sym/elf.h"
#include "sym/demangle.h"
#include "sym/resolve.h"
#include "sym/tracepoint.h"
#include "util/util.h"

struct dp_resolver_file {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	int ret;		/* result of dp_elf_open() */
	char why[128];
	struct dp_elf *elf;
	struct dp_resolver_file *next;
};

void dp_resolver_init(struct dp_resolver *r, const char *default_binary,
		      bool no_elf)
{
	memset(r, 0, sizeof(*r));
	r->default_binary = default_binary;
	r->no_elf = no_elf;
}

void dp_resolver_free(struct dp_resolver *r)
{
	struct dp_resolver_file *f, *next;

	for (f = r->cache; f; f = next) {
		next = f->next;
		dp_elf_close(f->elf);
		free(f);
	}
	r->cache = NULL;
}

static bool same_file(const struct dp_resolver_file *f, const struct stat *st)
{
	return f->dev == st->st_dev && f->ino == st->st_ino &&
	       f->size == st->st_size &&
	       f->mtime.tv_sec == st->st_mtim.tv_sec &&
	       f->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

int dp_resolver_open(struct dp_resolver *r, const char *path,
		     struct dp_elf **elf, char *why, size_t whylen)
{
	struct dp_resolver_file *f;
	struct stat st;
	int ret;

	*elf = NULL;
	if (stat(path, &st)) {
		ret = -errno;
		snprintf(why, whylen, "%s", strerror(-ret));
		return ret;
	}
	for (f = r->cache; f; f = f->next)
		if (same_file(f, &st))
			break;
	if (!f) {
		f = calloc(1, sizeof(*f));
		if (!f) {
			snprintf(why, whylen, "out of memory");
			return -ENOMEM;
		}
		f->dev = st.st_dev;
		f->ino = st.st_ino;
		f->size = st.st_size;
		f->mtime = st.st_mtim;
		f->ret = dp_elf_open_why(path, &f->elf, f->why, sizeof(f->why));
		/* Out of memory may pass; anything else is the file's answer. */
		if (f->ret == -ENOMEM) {
			ret = f->ret;
			snprintf(why, whylen, "%s", f->why);
			free(f);
			return ret;
		}
		f->next = r->cache;
		r->cache = f;
	}
	snprintf(why, whylen, "%s", f->why);
	*elf = f->elf;
	return f->ret;
}

/* ---- errors ------------------------------------------------------------- */

/*
 * Where token 1 (the place) starts in @line and how long it is, splitting
 * at white space as the kernel's argv_split() does.
 */
static const char *place_token(const char *line, size_t *len)
{
	const char *p = line;
	int i;

	for (i = 0; i < 2; i++) {
		while (*p && isspace((unsigned char)*p))
			p++;
		if (i == 1)
			break;
		while (*p && !isspace((unsigned char)*p))
			p++;
	}
	*len = 0;
	while (p[*len] && !isspace((unsigned char)p[*len]))
		(*len)++;
	return p;
}

/* Caret offset of a uprobe's OFFSET: just after the last ':' of the place. */
static int offset_caret(const char *line)
{
	size_t len, i;
	const char *tok = place_token(line, &len);

	for (i = len; i > 0; i--)
		if (tok[i - 1] == ':')
			return i;
	return 0;
}

#define fail(err, line, code, errnum, caret, ...) \
	dp_error_detail(err, line, code, errnum, 1, caret, __VA_ARGS__)

/* A file that could not be opened as an ELF, reported at token 1 +0. */
static int open_fail(struct dp_error *err, const char *line, const char *path,
		     int ret, const char *why)
{
	if (ret == -ENOEXEC)
		return fail(err, line, DP_ERR_NOT_ELF, ENOEXEC, 0, "%s: %s",
			    path, why);
	if (ret == -EISDIR || ret == -EINVAL)
		return fail(err, line, DP_ERR_NO_REGULAR_FILE, EINVAL, 0,
			    "%s: %s", path, why);
	return fail(err, line, DP_ERR_FILE_NOT_FOUND, -ret, 0, "%s: %s",
		    path, why);
}

/* ---- instruction boundaries --------------------------------------------- */

/*
 * A known instruction start at or before @vaddr to decode from: the
 * function symbol containing it, else the end of the previous function in
 * the same executable section, else that section's start.  Returns 0,
 * -ERANGE when @vaddr is in no executable section (header or data bytes in
 * an executable segment), or -ENOENT when the file has no section headers
 * to tell (then nothing can be proven).
 */
static int decode_start(const struct dp_elf *elf, uint64_t vaddr,
			uint64_t *start)
{
	const struct dp_elf_sym *sym = dp_elf_sym_at(elf, vaddr, NULL);
	const struct dp_elf_sec *sec;
	uint64_t end;

	if (sym) {
		*start = sym->value;
		return 0;
	}
	sec = dp_elf_exec_sec_at(elf, vaddr);
	if (!sec)
		return dp_elf_nsecs(elf) ? -ERANGE : -ENOENT;
	end = dp_elf_func_end_before(elf, vaddr);
	*start = end > sec->addr ? end : sec->addr;
	return 0;
}

/*
 * 0 if @vaddr starts an instruction when decoding from @start; else
 * -EILSEQ with *@insn the start of the covering (or undecodable)
 * instruction.
 */
static int check_boundary(const struct dp_elf *elf, uint64_t start,
			  uint64_t vaddr, uint64_t *insn)
{
	const uint8_t *code;
	size_t avail;

	*insn = start;
	code = dp_elf_code(elf, start, &avail);
	if (!code)
		return -EILSEQ;
	if (avail > vaddr - start + DP_INSN_MAX_LEN)
		avail = vaddr - start + DP_INSN_MAX_LEN;
	return dp_insn_boundary_at(code, avail, start, vaddr, insn);
}

/* "work+0x4" for @vaddr, or "0x401136" when no function contains it. */
static void symbolize(const struct dp_elf *elf, uint64_t vaddr, char *buf,
		      size_t len)
{
	const struct dp_elf_sym *s;
	uint64_t off;

	s = dp_elf_sym_at(elf, vaddr, &off);
	if (s)
		snprintf(buf, len, "%.*s+0x%" PRIx64, (int)s->base_len,
			 s->name, off);
	else
		snprintf(buf, len, "0x%" PRIx64, vaddr);
}

/* Why @vaddr is not a boundary, for err->detail. */
static void bndry_detail(const struct dp_elf *elf, uint64_t vaddr,
			 uint64_t insn, bool file_offsets, char *buf,
			 size_t len)
{
	char where[96];
	uint64_t shown = insn, at = vaddr, off;
	uint8_t code[DP_INSN_MAX_LEN];
	ssize_t n;

	symbolize(elf, insn, where, sizeof(where));
	if (file_offsets && !dp_elf_vaddr_to_off(elf, insn, &off) &&
	    !dp_elf_vaddr_to_off(elf, vaddr, &at))
		shown = off;
	n = dp_elf_read(elf, insn, code, sizeof(code));
	if (n <= 0 || dp_insn_length(code, n) < 0)
		snprintf(buf, len, "cannot decode the instruction at 0x%" PRIx64
			 " (%s)", shown, where);
	else
		snprintf(buf, len, "0x%" PRIx64 " is inside the %d-byte "
			 "instruction at 0x%" PRIx64 " (%s)", at,
			 dp_insn_length(code, n), shown, where);
}

/* ---- uprobes: PATH:OFFSET ----------------------------------------------- */

static int resolve_uprobe(struct dp_resolver *r, const char *line,
			  const struct dp_probe_def *def,
			  struct dp_probe *probe, struct dp_error *err)
{
	const char *path = def->place.path;
	uint64_t off = def->place.offset, vaddr, start, insn;
	struct dp_elf *elf;
	struct stat st;
	char why[128], detail[DP_ERROR_DETAIL_MAX];
	int ret;

	/* What the kernel's kern_path(LOOKUP_FOLLOW) and d_is_reg() check. */
	if (stat(path, &st)) {
		ret = errno;
		return fail(err, line, DP_ERR_FILE_NOT_FOUND, ret, 0,
			    "%s: %s", path, strerror(ret));
	}
	if (!S_ISREG(st.st_mode))
		return fail(err, line, DP_ERR_NO_REGULAR_FILE, EINVAL, 0,
			    "%s: %s", path, S_ISDIR(st.st_mode) ?
			    "is a directory" : "not a regular file");
	if (r->no_elf)
		return 0;

	ret = dp_resolver_open(r, path, &elf, why, sizeof(why));
	if (ret)
		return open_fail(err, line, path, ret, why);
	if (off >= dp_elf_file_size(elf))
		return fail(err, line, DP_ERR_OFFS_OUTSIDE, EINVAL,
			    offset_caret(line), "offset 0x%" PRIx64 " is past "
			    "the end of %s (size 0x%" PRIx64 ")", off, path,
			    dp_elf_file_size(elf));
	if (!dp_elf_off_is_exec(elf, off) || dp_elf_off_to_vaddr(elf, off, &vaddr))
		return fail(err, line, DP_ERR_OFFS_OUTSIDE, EINVAL,
			    offset_caret(line), "offset 0x%" PRIx64 " is not "
			    "in an executable segment of %s", off, path);

	ret = decode_start(elf, vaddr, &start);
	if (ret == -ERANGE)
		return fail(err, line, DP_ERR_OFFS_OUTSIDE, EINVAL,
			    offset_caret(line), "offset 0x%" PRIx64 " is not "
			    "in a code section of %s", off, path);
	if (!ret && check_boundary(elf, start, vaddr, &insn)) {
		bndry_detail(elf, vaddr, insn, true, detail, sizeof(detail));
		return fail(err, line, DP_ERR_BAD_INSN_BNDRY, EILSEQ,
			    offset_caret(line), "%s", detail);
	}
	if (probe) {
		probe->file_offset = off;
		probe->vaddr = vaddr;
	}
	return 0;
}

/* ---- kprobes: [MOD:]SYM[+offs] | MEMADDR -------------------------------- */

/*
 * The file a MOD: prefix names, or NULL if it cannot be told at definition
 * time (a library of the target not given on the command line: like a
 * module not loaded yet, it is accepted unchecked).
 */
static const char *module_path(const struct dp_resolver *r, const char *mod)
{
	char *real;
	bool match = false;
	struct stat st;

	if (strchr(mod, '/'))
		return mod;
	if (r->default_binary) {
		if (!strcmp(dp_base_name(r->default_binary), mod))
			return r->default_binary;
		/* libc.so.6 given as -x /lib/.../libc.so.6 -> libc-2.36.so */
		real = realpath(r->default_binary, NULL);
		if (real)
			match = !strcmp(dp_base_name(real), mod);
		free(real);
		if (match)
			return r->default_binary;
	}
	if (!stat(mod, &st) && S_ISREG(st.st_mode))
		return mod;
	return NULL;
}

const char *dp_module_file(const char *binary, char *const *objs,
			   size_t nobjs, const char *mod)
{
	if (!mod)
		return binary;
	if (strchr(mod, '/'))
		return mod;
	if (binary && !strcmp(dp_base_name(binary), mod))
		return binary;
	for (size_t i = 0; i < nobjs; i++)
		if (!strcmp(dp_base_name(objs[i]), mod))
			return objs[i];
	return NULL;
}

/* "searched FILE; did you mean: a, b, c?" */
static void missing_detail(const struct dp_elf *elf, const char *path,
			   const char *sym, char *buf, size_t len)
{
	const char *near[3];
	size_t n = dp_elf_suggest(elf, sym, near, 3), i;
	int o;

	char *cxx[3];
	size_t nc = n ? 0 : dp_cxx_suggest(elf, sym, cxx, 3);

	o = snprintf(buf, len, "searched %s", path);
	for (i = 0; i < n && o >= 0 && (size_t)o < len; i++)
		o += snprintf(buf + o, len - o, "%s%s", i ? ", " :
			      "; did you mean: ", near[i]);
	/* a C++ name written plain: the readable names it may mean */
	for (i = 0; i < nc && o >= 0 && (size_t)o < len; i++)
		o += snprintf(buf + o, len - o, "%s'%s'", i ? ", " :
			      "; did you mean: ", cxx[i]);
	for (i = 0; i < nc; i++)
		free(cxx[i]);
	if ((n || nc) && o >= 0 && (size_t)o < len)
		snprintf(buf + o, len - o, "?");
}

/* "2 symbols named helper in FILE: 0x1139, 0x1189" */
static void nonuniq_detail(const struct dp_elf *elf, const char *path,
			   const char *sym, char *buf, size_t len)
{
	const struct dp_elf_sym *m[4];
	size_t n = dp_elf_lookup_all(elf, sym, m, 4), i;
	int o;

	o = snprintf(buf, len, "%zu symbols named %s in %s:", n, sym, path);
	for (i = 0; i < n && i < 4 && o >= 0 && (size_t)o < len; i++)
		o += snprintf(buf + o, len - o, "%s 0x%" PRIx64, i ? "," : "",
			      m[i]->value);
	if (n > 4 && o >= 0 && (size_t)o < len)
		snprintf(buf + o, len - o, ", ...");
}

/* One "@[MOD:]SYM[+|-offs]" argument's address into *@imm. */
static int resolve_sym_arg(struct dp_resolver *r, struct dp_elf *elf,
			   const char *line, const char *text, uint64_t *imm,
			   struct dp_error *err)
{
	char buf[DP_MAX_ARGSTR_LEN + 2], why[128], detail[DP_ERROR_DETAIL_MAX];
	const struct dp_elf_sym *first;
	const char *path = dp_elf_path(elf), *mod = NULL;
	struct dp_elf_sym sym;
	char *name = buf, *pm, *colon;
	int64_t off = 0;
	int ret;

	snprintf(buf, sizeof(buf), "%s", text);
	colon = strrchr(buf, ':');
	if (colon) {
		*colon = '\0';
		mod = module_path(r, buf);
		if (!mod)
			return 0;	/* a file not given: left to the engine */
		ret = dp_resolver_open(r, mod, &elf, why, sizeof(why));
		if (ret)
			return open_fail(err, line, mod, ret, why);
		path = mod;
		name = colon + 1;
	}
	pm = strpbrk(name, "+-");
	if (pm) {
		if (dp_kstrtoll(pm, 0, &off))
			return fail(err, line, DP_ERR_FAIL_REG_PROBE, EINVAL, 0,
				    "@%s: bad offset", text);
		*pm = '\0';
	}
	ret = dp_elf_lookup(elf, name, &sym);
	/* kallsyms_lookup_name() takes the first of several */
	if (ret == -ENOTUNIQ && dp_elf_lookup_all(elf, name, &first, 1)) {
		sym = *first;
		ret = 0;
	}
	if (ret) {
		missing_detail(elf, path, name, detail, sizeof(detail));
		return fail(err, line, DP_ERR_BAD_PROBE_ADDR, ENOENT, 0,
			    "@%s: %s", text, detail);
	}
	*imm = sym.value + (uint64_t)off;
	return 0;
}

/*
 * Fill the address of each "@SYM[+|-offs]" argument into the IMM after its
 * placeholder, as the kernel's traceprobe_update_arg() does when the probe
 * is registered: a bad offset is -EINVAL, a missing symbol -ENOENT, both
 * reported on the place (token 1).  The address is the link-time one; for
 * a PIE the engine adds the load bias (the DP_FOP_SYMBOL marker stays).
 * With "MOD:SYM" the symbol is looked up in that file when it is known.
 */
static int resolve_sym_args(struct dp_resolver *r, struct dp_elf *elf,
			    const char *line, struct dp_probe_def *def,
			    struct dp_error *err)
{
	for (unsigned i = 0; i < def->nargs; i++) {
		struct dp_arg *a = &def->args[i];

		for (unsigned j = 0; j + 1 < a->n_insn; j++) {
			struct dp_fetch_insn *in = &a->insn[j];
			int ret;

			if (in->op == DP_FOP_END)
				break;
			if (in->op != DP_FOP_SYMBOL || !in->data ||
			    in[1].op != DP_FOP_IMM)
				continue;
			ret = resolve_sym_arg(r, elf, line, in->data,
					      &in[1].imm, err);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/*
 * The kprobe place @vaddr, decoded from @start: refused as the kernel
 * does if it is not an instruction boundary, else @probe (may be NULL)
 * gets its address and file offset.
 */
static int kprobe_place(const struct dp_elf *elf, uint64_t start,
			uint64_t vaddr, const char *line,
			struct dp_probe *probe, struct dp_error *err)
{
	uint64_t insn, foff = 0;
	char detail[DP_ERROR_DETAIL_MAX];

	if (check_boundary(elf, start, vaddr, &insn)) {
		bndry_detail(elf, vaddr, insn, false, detail, sizeof(detail));
		return fail(err, line, DP_ERR_BAD_INSN_BNDRY, EILSEQ, 0, "%s",
			    detail);
	}
	dp_elf_vaddr_to_off(elf, vaddr, &foff);
	if (probe) {
		probe->vaddr = vaddr;
		probe->file_offset = foff;
	}
	return 0;
}

static int kprobe_symbol(struct dp_resolver *r, struct dp_elf *elf,
			 const char *path, const char *line,
			 struct dp_probe_def *def, struct dp_probe *probe,
			 struct dp_error *err)
{
	const char *name = def->place.symbol;
	uint64_t off = def->place.offset, vaddr;
	struct dp_elf_sym sym;
	char detail[DP_ERROR_DETAIL_MAX];
	int ret;

	ret = dp_elf_lookup(elf, name, &sym);
	if (ret == -ENOTUNIQ) {
		nonuniq_detail(elf, path, name, detail, sizeof(detail));
		return fail(err, line, DP_ERR_NON_UNIQ_SYMBOL, EINVAL, 0,
			    "%s; use an address", detail);
	}
	if (ret) {
		missing_detail(elf, path, name, detail, sizeof(detail));
		return fail(err, line, DP_ERR_BAD_PROBE_ADDR, EINVAL, 0, "%s",
			    detail);
	}
	if (def->is_return && off)
		return fail(err, line, DP_ERR_BAD_RETPROBE, EINVAL, 0,
			    "%s+%" PRIu64 " is not the entry of %s", name, off,
			    name);
	/* what follows is what the kernel checks when registering */
	ret = resolve_sym_args(r, elf, line, def, err);
	if (ret)
		return ret;
	if (!dp_elf_vaddr_is_exec(elf, sym.value))
		return fail(err, line, DP_ERR_FAIL_REG_PROBE, EINVAL, 0,
			    "%s is not code (0x%" PRIx64 " is not in an "
			    "executable segment of %s)", name, sym.value, path);
	vaddr = sym.value + off;
	/* the end boundary is a place, as the kernel takes SYM+SIZE (the
	 * next symbol's first instruction) */
	if ((sym.size && off > sym.size) || !dp_elf_vaddr_is_exec(elf, vaddr))
		return fail(err, line, DP_ERR_BAD_PROBE_ADDR, EINVAL, 0,
			    "offset %" PRIu64 " is outside %s (size %" PRIu64
			    ")", off, name, sym.size);
	return kprobe_place(elf, sym.value, vaddr, line, probe, err);
}

/*
 * A bare address is a run-time address of the traced process.  It can be
 * checked only against a non-PIE main binary, whose link-time addresses
 * are its run-time ones; anything else (a library, a PIE) is left to the
 * engine.
 */
static int kprobe_addr(struct dp_resolver *r, struct dp_elf *elf,
		       const char *line, struct dp_probe_def *def,
		       struct dp_probe *probe, struct dp_error *err)
{
	uint64_t vaddr = def->place.addr, start;
	int ret;

	ret = resolve_sym_args(r, elf, line, def, err);
	if (ret)
		return ret;
	if (dp_elf_is_pie(elf) || def->place.module ||
	    !dp_elf_vaddr_is_exec(elf, vaddr))
		return 0;
	/* nothing to decode from: @vaddr itself, which passes */
	if (decode_start(elf, vaddr, &start))
		start = vaddr;
	return kprobe_place(elf, start, vaddr, line, probe, err);
}

static int resolve_kprobe(struct dp_resolver *r, const char *line,
			  struct dp_probe_def *def,
			  struct dp_probe *probe, struct dp_error *err)
{
	const char *path;
	struct dp_elf *elf;
	char why[128];
	int ret;

	if (r->no_elf)
		return 0;
	path = def->place.module ? module_path(r, def->place.module) :
	       r->default_binary;
	if (!path)
		return 0;	/* syntax only: nothing to look in */
	ret = dp_resolver_open(r, path, &elf, why, sizeof(why));
	if (ret)
		return open_fail(err, line, path, ret, why);
	if (!def->place.symbol)
		return kprobe_addr(r, elf, line, def, probe, err);
	return kprobe_symbol(r, elf, path, line, def, probe, err);
}

/*
 * An application tracepoint, looked up in the default binary.  One that
 * is not there may live in a library the program loads: only the process
 * can tell (dp_proc_resolve), so that is refused here only for a static
 * binary.
 */
static int resolve_tracepoint(struct dp_resolver *r, const char *line,
			      struct dp_probe_def *def,
			      struct dp_probe *probe, struct dp_error *err)
{
	const char *path = r->default_binary;
	const char *grp = def->place.module;
	struct dp_tp_desc d;
	struct dp_elf *elf;
	char why[128];
	int ret;

	if (r->no_elf || !path)
		return 0;
	ret = dp_resolver_open(r, path, &elf, why, sizeof(why));
	if (ret)
		return open_fail(err, line, path, ret, why);
	ret = resolve_sym_args(r, elf, line, def, err);
	if (ret)
		return ret;
	ret = dp_elf_tracepoint(elf, grp, def->place.symbol, &d);
	if (ret == -ENOENT && dp_elf_is_dynamic(elf))
		return 0;
	if (ret == -ENOENT)
		return fail(err, line, DP_ERR_NO_TRACEPOINT, ENOENT, 0,
			    "%s has no tracepoint %s%s%s", path,
			    grp ? grp : "", grp ? ":" : "", def->place.symbol);
	if (ret)
		return fail(err, line, DP_ERR_NO_TRACEPOINT, -ret, 0,
			    "%s: malformed %s section", path, DP_TP_SECTION);
	if (probe) {
		probe->vaddr = d.vaddr;
		probe->file_offset = d.file_offset;
	}
	return 0;
}

int dp_resolve_cb(void *priv, const char *line, struct dp_probe_def *def,
		  struct dp_probe *probe, struct dp_error *err)
{
	struct dp_resolver *r = priv;

	if (def->kind == DP_KIND_TRACEPOINT)
		return resolve_tracepoint(r, line, def, probe, err);
	if (def->kind == DP_KIND_UPROBE)
		return resolve_uprobe(r, line, def, probe, err);
	return resolve_kprobe(r, line, def, probe, err);
}
