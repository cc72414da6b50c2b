// SPDX-License-Identifier: GPL-2.0
/*
 * Debug information through libdw (see debuginfo.h).
 *
 * The file is reported to libdwfl offline, at its link-time addresses,
 * so every address here is the ELF's own (a symbol's st_value), and
 * libdwfl finds the DWARF where Debian puts it: in the file, by
 * .gnu_debuglink or by build-id under /usr/lib/debug, or from
 * debuginfod.  A variable's place at an address comes from its DWARF
 * location (list): a register, memory at a register plus an offset, or
 * at the frame base (the CFA from the call frame information), and is
 * written as the fetch argument the kernel's language has for it; a
 * chain of members and indices adds offsets and dereferences, typed from
 * the declared C types.
 */
#include <ctype.h>
#include <stdarg.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sym/debuginfo.h"
#include "sym/elf.h"
#include "util/util.h"

struct dp_dbg {
	char *path;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Dwarf *dw;
	Dwarf_Addr bias;	/* DWARF address + bias = module address */
	int64_t shift;		/* module address - link-time address */
	struct dp_elf *elf;	/* the file's own symbols */
	/* every function's inlined copies and out-of-line DWARF instances,
	 * by name: made at the first lookup that needs them */
	struct fn_copy {
		char *name;
		uint64_t addr;	/* link-time entry of the copy */
		Dwarf_Off die;	/* its DIE */
		bool inlined;	/* else an out-of-line instance (a clone) */
	} *copies;
	size_t ncopies;
	bool indexed;
};

/* Addresses here are link-time (the ELF's); libdwfl's are the module's,
 * libdw's the DWARF's. */
static Dwarf_Addr dw_pc(const struct dp_dbg *d, uint64_t vaddr)
{
	return vaddr + d->shift - d->bias;
}

static uint64_t link_addr(const struct dp_dbg *d, Dwarf_Addr dwaddr)
{
	return dwaddr + d->bias - d->shift;
}

/* A DIE's name, through DW_AT_abstract_origin and DW_AT_specification
 * (an inlined copy's variables have theirs at the origin). */
static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;

	return dwarf_attr_integrate(die, DW_AT_name, &a) ?
	       dwarf_formstring(&a) : NULL;
}

/* ---- opening ------------------------------------------------------------ */

static char *debuginfo_path;	/* NULL: libdwfl's ":.debug:/usr/lib/debug" */

static const Dwfl_Callbacks offline_cb = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

/* $DPROBE_DEBUG_DIR: one more tree like /usr/lib/debug, searched first
 * (by build-id and by debuglink path), as sym/elf.c does for symbols. */
static void set_debuginfo_path(void)
{
	static char buf[PATH_MAX + 64];
	const char *dir = getenv("DPROBE_DEBUG_DIR");

	if (debuginfo_path || !dir || !*dir || strchr(dir, ':'))
		return;
	snprintf(buf, sizeof(buf), ":.debug:%s:/usr/lib/debug", dir);
	debuginfo_path = buf;
}

static void no_dwarf(const char *path, struct dp_elf *elf, char *why,
		     size_t whylen)
{
	char id[128] = "";

	if (elf && dp_elf_build_id_hex(elf, id, sizeof(id)) > 2)
		snprintf(why, whylen, "no debug information for %s: searched "
			 "the file, its .gnu_debuglink next to it, in .debug/ "
			 "and /usr/lib/debug, and /usr/lib/debug/.build-id/"
			 "%.2s/%s.debug%s; install %s, or set DEBUGINFOD_URLS",
			 path, id, id + 2, getenv("DEBUGINFOD_URLS") ?
			 " and debuginfod" : "",
			 !strncmp(dp_base_name(path), "libc.so", 7) ?
			 "libc6-dbg" : "its -dbgsym package");
	else
		snprintf(why, whylen, "no debug information for %s: searched "
			 "the file, its .gnu_debuglink next to it, in .debug/ "
			 "and /usr/lib/debug%s; rebuild it with -g, or install "
			 "its -dbgsym package", path,
			 getenv("DEBUGINFOD_URLS") ? ", and debuginfod" : "");
}

int dp_dbg_open(const char *path, struct dp_dbg **out, char *why,
		size_t whylen)
{
	struct dp_dbg *d = calloc(1, sizeof(*d));
	int err;

	if (!d)
		return -ENOMEM;
	d->path = strdup(path);
	err = dp_elf_open_why(path, &d->elf, why, whylen);
	if (err || !d->path)
		goto fail;
	set_debuginfo_path();
	d->dwfl = dwfl_begin(&offline_cb);
	if (!d->dwfl) {
		err = -ENOMEM;
		goto fail;
	}
	d->mod = dwfl_report_offline(d->dwfl, path, path, -1);
	dwfl_report_end(d->dwfl, NULL, NULL);
	if (d->mod)
		d->dw = dwfl_module_getdwarf(d->mod, &d->bias);
	if (d->dw) {
		Dwarf_Addr low = 0;
		uint64_t first = UINT64_MAX;

		dwfl_module_info(d->mod, NULL, &low, NULL, NULL, NULL, NULL,
				 NULL);
		for (size_t i = 0; i < dp_elf_nsegs(d->elf); i++)
			if (dp_elf_seg(d->elf, i)->vaddr < first)
				first = dp_elf_seg(d->elf, i)->vaddr;
		d->shift = first == UINT64_MAX ? 0 :
			   (int64_t)low - (int64_t)(first & ~0xfffull);
	}
	if (!d->dw) {
		no_dwarf(path, d->elf, why, whylen);
		err = -ENOENT;
		goto fail;
	}
	*out = d;
	return 0;
fail:
	dp_dbg_close(d);
	return err ? err : -ENOMEM;
}

void dp_dbg_close(struct dp_dbg *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->ncopies; i++)
		free(d->copies[i].name);
	free(d->copies);
	if (d->dwfl)
		dwfl_end(d->dwfl);
	if (d->elf)
		dp_elf_close(d->elf);
	free(d->path);
	free(d);
}

/* ---- functions ------------------------------------------------------------ */

/* A function symbol of the debug file's own .symtab (a static function
 * of a stripped file): its address, or 0. */
static uint64_t debug_sym(struct dp_dbg *d, const char *name)
{
	int n = dwfl_module_getsymtab(d->mod);

	for (int i = 1; i < n; i++) {
		GElf_Sym s;
		GElf_Addr a;
		const char *nm = dwfl_module_getsym_info(d->mod, i, &s, &a,
							 NULL, NULL, NULL);

		if (nm && !strcmp(nm, name) && GELF_ST_TYPE(s.st_info) == STT_FUNC &&
		    s.st_value)
			return s.st_value;
	}
	return 0;
}

static void name_place(struct dp_dbg *d, struct dp_dbg_place *pl)
{
	uint64_t off = 0;
	const struct dp_elf_sym *s = dp_elf_sym_at(d->elf, pl->addr, &off);

	if (s) {
		pl->func = s->value;
		snprintf(pl->sym, sizeof(pl->sym), "%.*s", (int)s->base_len,
			 s->name);
	}
	pl->entry = pl->addr == pl->func;
}

/* ---- inlined copies and clones ------------------------------------------- */

static void add_copy(struct dp_dbg *d, const char *name, Dwarf_Addr dwaddr,
		     Dwarf_Die *die, bool inlined)
{
	struct fn_copy *v;

	if (d->ncopies % 256 == 0) {
		v = realloc(d->copies, (d->ncopies + 256) * sizeof(*v));
		if (!v)
			return;
		d->copies = v;
	}
	v = &d->copies[d->ncopies];
	v->name = strdup(name);
	if (!v->name)
		return;
	v->addr = link_addr(d, dwaddr);
	v->die = dwarf_dieoffset(die);
	v->inlined = inlined;
	d->ncopies++;
}

/* Every DIE under @die: inlined copies, and out-of-line instances of a
 * function whose own DIE is abstract (DW_AT_abstract_origin). */
static void walk(struct dp_dbg *d, Dwarf_Die *die, int depth)
{
	Dwarf_Die c;

	if (depth > 64 || dwarf_child(die, &c))
		return;
	do {
		int tag = dwarf_tag(&c);
		Dwarf_Addr pc;
		const char *n;

		if ((tag == DW_TAG_inlined_subroutine ||
		     (tag == DW_TAG_subprogram &&
		      dwarf_hasattr(&c, DW_AT_abstract_origin))) &&
		    (n = die_name(&c)) &&
		    (!dwarf_entrypc(&c, &pc) || !dwarf_lowpc(&c, &pc)))
			add_copy(d, n, pc, &c, tag == DW_TAG_inlined_subroutine);
		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
		    tag == DW_TAG_lexical_block || tag == DW_TAG_namespace ||
		    tag == DW_TAG_class_type || tag == DW_TAG_structure_type)
			walk(d, &c, depth + 1);
	} while (!dwarf_siblingof(&c, &c));
}

static void index_copies(struct dp_dbg *d)
{
	Dwarf_Die *cu = NULL;
	Dwarf_Addr bias;

	if (d->indexed)
		return;
	d->indexed = true;
	while ((cu = dwfl_module_nextcu(d->mod, cu, &bias)))
		walk(d, cu, 0);
}

int dp_dbg_func_places(struct dp_dbg *d, const char *name,
		       struct dp_dbg_place *pl, int max, int *inlined,
		       char *why, size_t whylen)
{
	int n = 0;

	*inlined = 0;
	if (!dp_dbg_func(d, name, &pl[0], why, whylen))
		n = 1;
	index_copies(d);
	for (size_t i = 0; i < d->ncopies && n < max; i++) {
		struct dp_dbg_place p = { .addr = d->copies[i].addr };
		bool dup = false;

		if (strcmp(d->copies[i].name, name))
			continue;
		/* a clone (name.isra.0) stands for the function only when the
		 * function has no symbol of its own */
		if (!d->copies[i].inlined && n && !*inlined && pl[0].entry)
			continue;
		name_place(d, &p);
		for (int k = 0; k < n; k++)
			dup |= pl[k].addr == p.addr;
		if (dup || !p.sym[0])
			continue;
		p.entry = !d->copies[i].inlined && p.addr == p.func;
		p.scope = d->copies[i].inlined ? d->copies[i].die : 0;
		pl[n++] = p;
		*inlined += d->copies[i].inlined;
	}
	if (n)
		why[0] = '\0';
	return n ? n : -ENOENT;
}

int dp_dbg_func(struct dp_dbg *d, const char *name, struct dp_dbg_place *pl,
		char *why, size_t whylen)
{
	struct dp_elf_sym s;
	uint64_t addr = 0;
	const char *near[3];
	size_t n;
	int o;

	memset(pl, 0, sizeof(*pl));
	if (!dp_elf_lookup(d->elf, name, &s))
		addr = s.value;
	else
		addr = debug_sym(d, name);
	if (addr) {
		pl->addr = pl->func = addr;
		pl->entry = true;
		snprintf(pl->sym, sizeof(pl->sym), "%s", name);
		return 0;
	}
	o = snprintf(why, whylen, "no function %s in %s", name, d->path);
	n = dp_elf_suggest(d->elf, name, near, 3);
	for (size_t i = 0; i < n && o > 0 && (size_t)o < whylen; i++)
		o += snprintf(why + o, whylen - o, "%s%s", i ? ", " :
			      "; did you mean: ", near[i]);
	if (n && o > 0 && (size_t)o < whylen)
		snprintf(why + o, whylen - o, "?");
	return -ENOENT;
}

/* The scopes around DWARF address @pc, innermost first (free()d by the
 * caller); the number, or 0. */
static int scopes_at(struct dp_dbg *d, uint64_t addr, Dwarf_Die **scopes)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(d->mod, addr + d->shift, &bias);
	int n;

	*scopes = NULL;
	if (!cu)
		return 0;
	n = dwarf_getscopes(cu, addr + d->shift - bias, scopes);
	return n > 0 ? n : 0;
}

struct func_match {
	Dwarf_Addr pc;
	Dwarf_Die *out;
	bool found;
};

static int match_func(Dwarf_Die *die, void *arg)
{
	struct func_match *m = arg;
	Dwarf_Addr lo;

	if ((!dwarf_lowpc(die, &lo) && lo == m->pc) ||
	    (!dwarf_entrypc(die, &lo) && lo == m->pc)) {
		*m->out = *die;
		m->found = true;
		return DWARF_CB_ABORT;
	}
	return DWARF_CB_OK;
}

/* The out-of-line subprogram that starts at link-time address @func
 * (not an inlined copy's abstract definition), into @fn. */
static bool func_die(struct dp_dbg *d, uint64_t func, Dwarf_Die *fn)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(d->mod, func + d->shift, &bias);
	struct func_match m = { func + d->shift - bias, fn, false };

	if (cu)
		dwarf_getfuncs(cu, match_func, &m, 0);
	return m.found;
}

/* ---- lines -------------------------------------------------------------- */

/* Whether @path ends with @tail at a path component boundary. */
static bool path_ends(const char *path, const char *tail)
{
	size_t p = strlen(path), t = strlen(tail);

	return p >= t && !strcmp(path + p - t, tail) &&
	       (p == t || path[p - t - 1] == '/');
}

/* Whether DWARF address @a is inside function @fn's code. */
static bool in_func(Dwarf_Die *fn, Dwarf_Addr a)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;

	while ((off = dwarf_ranges(fn, off, &base, &lo, &hi)) > 0)
		if (a >= lo && a < hi)
			return true;
	return false;
}

/* Add @addr once (the lowest address of a line per function). */
static int add_place(struct dp_dbg *d, uint64_t addr, struct dp_dbg_place *pl,
		     int n, int max)
{
	struct dp_dbg_place p = { .addr = addr };

	name_place(d, &p);
	for (int i = 0; i < n; i++)
		if (pl[i].func == p.func) {
			if (addr < pl[i].addr)
				pl[i] = p;
			return n;
		}
	if (n < max)
		pl[n++] = p;
	return n;
}

/* The rows of one CU's line table at @line of @file (in @fn if not NULL). */
static int cu_rows(struct dp_dbg *d, Dwarf_Die *cu, Dwarf_Die *fn,
		   const char *file, int line, uint64_t skip,
		   struct dp_dbg_place *pl, int n, int max)
{
	Dwarf_Lines *lines;
	size_t nl;

	if (dwarf_getsrclines(cu, &lines, &nl))
		return n;
	for (size_t i = 0; i < nl; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		Dwarf_Addr a;
		int ln;
		bool stmt;
		const char *src;

		if (!l || dwarf_lineno(l, &ln) || ln != line ||
		    dwarf_linebeginstatement(l, &stmt) || !stmt ||
		    dwarf_lineaddr(l, &a))
			continue;
		src = dwarf_linesrc(l, NULL, NULL);
		if (!src || !path_ends(src, file) || (fn && !in_func(fn, a)) ||
		    (skip && link_addr(d, a) == skip))
			continue;
		n = add_place(d, link_addr(d, a), pl, n, max);
	}
	return n;
}

/* Line-table rows at @line in @file: of @fn's CU, or of every CU; not
 * at @skip (a function's entry: its own line 0), if not 0. */
static int rows_at(struct dp_dbg *d, Dwarf_Die *fn, const char *file, int line,
		   uint64_t skip, struct dp_dbg_place *pl, int max)
{
	Dwarf_Die *cu = NULL, cudie;
	Dwarf_Addr bias;
	int n = 0;

	if (fn)
		return dwarf_diecu(fn, &cudie, NULL, NULL) ?
		       cu_rows(d, &cudie, fn, file, line, skip, pl, 0, max) : 0;
	while ((cu = dwfl_module_nextcu(d->mod, cu, &bias)))
		n = cu_rows(d, cu, NULL, file, line, skip, pl, n, max);
	return n;
}

int dp_dbg_lines(struct dp_dbg *d, const char *where, bool rel, int line,
		 struct dp_dbg_place *pl, int max, char *why, size_t whylen)
{
	struct dp_dbg_place f;
	Dwarf_Die fn;
	const char *file;
	int decl = 0, n;

	if (!rel) {
		n = rows_at(d, NULL, where, line, 0, pl, max);
		if (!n)
			snprintf(why, whylen, "no code for line %d of %s in %s",
				 line, where, d->path);
		return n ? n : -ENOENT;
	}
	n = 0;
	if (!dp_dbg_func(d, where, &f, why, whylen)) {
		if (!func_die(d, f.addr, &fn) || dwarf_decl_line(&fn, &decl) ||
		    !(file = dwarf_decl_file(&fn))) {
			snprintf(why, whylen, "no line information for %s in %s",
				 where, d->path);
			return -ENOENT;
		}
		/* line 0 is the entry; a line whose only code is the
		 * entry's is line 0's (perf probe refuses it the same way) */
		if (!line) {
			pl[0] = f;
			return 1;
		}
		n = rows_at(d, &fn, file, decl + line, f.addr, pl, max);
		if (!n && rows_at(d, &fn, file, decl + line, 0, pl, max))
			snprintf(why, whylen, "line %d of %s shares its address "
				 "with the function's entry: probe %s:0", line,
				 where, where);
		else if (!n)
			snprintf(why, whylen, "no code for line %d of %s (%s:%d) "
				 "in %s", line, where, dp_base_name(file),
				 decl + line, d->path);
	}
	/* and in each inlined copy, its variables its own */
	index_copies(d);
	for (size_t i = 0; line > 0 && i < d->ncopies && n < max; i++) {
		struct fn_copy *c = &d->copies[i];
		Dwarf_Die in;
		int k;

		if (!c->inlined || strcmp(c->name, where) ||
		    !dwarf_offdie(d->dw, c->die, &in) ||
		    dwarf_decl_line(&in, &decl) || !(file = dwarf_decl_file(&in)))
			continue;
		k = rows_at(d, &in, file, decl + line, 0, pl + n, max - n);
		for (int j = n; j < n + k; j++) {
			pl[j].scope = c->die;
			pl[j].entry = false;
		}
		n += k;
	}
	if (n)
		why[0] = '\0';
	return n ? n : -ENOENT;
}

/* @text with blanks taken out, into @out. */
static void squeeze(const char *text, char *out, size_t len)
{
	size_t k = 0;

	for (; *text && k + 1 < len; text++)
		if (!isspace((unsigned char)*text))
			out[k++] = *text;
	out[k] = '\0';
}

int dp_dbg_lazy(struct dp_dbg *d, const char *func, const char *pattern,
		struct dp_dbg_place *pl, int max, char *why, size_t whylen)
{
	struct dp_dbg_place f;
	char pat[1100], buf[1024], path[4096], *text = NULL;
	size_t textcap = 0;
	Dwarf_Die fn;
	const char *file;
	int decl = 0, ln = 0, n = 0, last = 0;
	FILE *src;

	if (dp_dbg_func(d, func, &f, why, whylen))
		return -ENOENT;
	if (!func_die(d, f.addr, &fn) || dwarf_decl_line(&fn, &decl) ||
	    !(file = dwarf_decl_file(&fn))) {
		snprintf(why, whylen, "no line information for %s", func);
		return -ENOENT;
	}
	if (file[0] != '/') {
		Dwarf_Die cu;
		Dwarf_Attribute a;
		const char *dir = dwarf_diecu(&fn, &cu, NULL, NULL) &&
				  dwarf_attr(&cu, DW_AT_comp_dir, &a) ?
				  dwarf_formstring(&a) : NULL;

		if (dir) {
			snprintf(path, sizeof(path), "%s/%s", dir, file);
			file = path;
		}
	}
	src = fopen(file, "re");
	if (!src) {
		snprintf(why, whylen, "cannot read the source %s of %s: %m",
			 file, func);
		return -ENOENT;
	}
	squeeze(pattern, buf, sizeof(buf));
	snprintf(pat, sizeof(pat), "*%s*", buf);
	/* lines from the declaration on while they still hold code of it */
	/* getline(): a line longer than any buffer is still one line */
	while (getline(&text, &textcap, src) > 0) {
		struct dp_dbg_place one[8];
		int k;

		if (++ln < decl)
			continue;
		if (last && ln > last + 64)
			break;
		k = rows_at(d, &fn, file, ln, f.addr, one, 8);
		if (k > 0)
			last = ln;
		squeeze(text, buf, sizeof(buf));
		for (int i = 0; i < k && !fnmatch(pat, buf, 0); i++)
			if (n < max)
				pl[n++] = one[i];
	}
	fclose(src);
	free(text);
	if (!n)
		snprintf(why, whylen, "no line of %s matches %s", func, pattern);
	return n ? n : -ENOENT;
}

/* ---- types ---------------------------------------------------------------- */

static bool die_type(Dwarf_Die *die, Dwarf_Die *out)
{
	Dwarf_Attribute a;

	return dwarf_attr_integrate(die, DW_AT_type, &a) &&
	       dwarf_formref_die(&a, out);
}

/* @t without typedefs and qualifiers; false for void. */
static bool peel(Dwarf_Die *t)
{
	for (int i = 0; i < 32; i++) {
		switch (dwarf_tag(t)) {
		case DW_TAG_typedef:
		case DW_TAG_const_type:
		case DW_TAG_volatile_type:
		case DW_TAG_restrict_type:
		case DW_TAG_atomic_type:
			if (!die_type(t, t))
				return false;
			break;
		default:
			return true;
		}
	}
	return false;
}

static int64_t type_size(Dwarf_Die *t)
{
	Dwarf_Word sz;

	return dwarf_aggregate_size(t, &sz) ? -1 : (int64_t)sz;
}

static bool is_char(Dwarf_Die *t)
{
	Dwarf_Die p = *t;
	Dwarf_Attribute a;
	Dwarf_Word enc;

	if (!peel(&p) || dwarf_tag(&p) != DW_TAG_base_type ||
	    type_size(&p) != 1 || !dwarf_attr(&p, DW_AT_encoding, &a) ||
	    dwarf_formudata(&a, &enc))
		return false;
	return enc == DW_ATE_signed_char || enc == DW_ATE_unsigned_char;
}

/* "s32", "u8", "x64"... for a scalar type; NULL if not one. */
static const char *scalar_type(Dwarf_Die *t)
{
	static const char *const s[] = { "s8", "s16", "s32", "s64" };
	static const char *const u[] = { "u8", "u16", "u32", "u64" };
	static const char *const x[] = { "x8", "x16", "x32", "x64" };
	Dwarf_Attribute a;
	Dwarf_Word enc = DW_ATE_unsigned;
	int64_t sz = type_size(t);
	int k;

	switch (sz) {
	case 1: k = 0; break;
	case 2: k = 1; break;
	case 4: k = 2; break;
	case 8: k = 3; break;
	default: return NULL;
	}
	switch (dwarf_tag(t)) {
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type:
		return x[k];
	case DW_TAG_enumeration_type:
		if (dwarf_attr(t, DW_AT_encoding, &a) && !dwarf_formudata(&a, &enc))
			return enc == DW_ATE_signed ? s[k] : u[k];
		return s[k];
	case DW_TAG_base_type:
		if (dwarf_attr(t, DW_AT_encoding, &a))
			dwarf_formudata(&a, &enc);
		if (enc == DW_ATE_signed || enc == DW_ATE_signed_char)
			return s[k];
		if (enc == DW_ATE_float)
			return x[k];
		return u[k];
	default:
		return NULL;
	}
}

/* ---- where a value is ----------------------------------------------------- */

/* A value: in a register (or a fetch variable), or in memory at base+off. */
struct val {
	bool mem;
	char base[64];		/* "%di", "$arg1", "+8(%di)", "@sym" */
	int64_t off;
	int derefs;
	Dwarf_Die type;		/* as declared (peel() to look into it) */
	int bit_size, bit_off;	/* a bitfield member, else 0 */
	bool imm;		/* a constant: "\\N" */
};

/* The fetch argument that reads @v (a memory value), or names it. */
static int val_text(const struct val *v, char *buf, size_t len)
{
	int n;

	if (!v->mem)
		n = snprintf(buf, len, "%s", v->base);
	else if (v->base[0] == '@')
		n = v->off ? snprintf(buf, len, "%s%+" PRId64, v->base, v->off) :
		     snprintf(buf, len, "%s", v->base);
	else
		n = snprintf(buf, len, "%c%" PRId64 "(%s)", v->off < 0 ? '-' : '+',
			     v->off < 0 ? -v->off : v->off, v->base);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

#define MAX_DEREFS 14	/* the kernel's nesting limit */

static const char *const dw_regs[] = {
	"ax", "dx", "cx", "bx", "si", "di", "bp", "sp",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
};
/* The integer arguments' registers, in order (the SysV ABI). */
static const int abi_regs[] = { 5, 4, 1, 2, 8, 9 };

/* A DW_OP_bregN / DW_OP_bregx operation: register (of the 16) and offset. */
static bool breg_of(const Dwarf_Op *op, int *reg, int64_t *off)
{
	if (op->atom >= DW_OP_breg0 && op->atom <= DW_OP_breg15) {
		*reg = op->atom - DW_OP_breg0;
		*off = (int64_t)op->number;
		return true;
	}
	if (op->atom == DW_OP_bregx && op->number < 16) {
		*reg = (int)op->number;
		*off = (int64_t)op->number2;
		return true;
	}
	return false;
}

/* A DW_OP_regN / DW_OP_regx operation: the register (of the 16). */
static bool reg_of(const Dwarf_Op *op, int *reg)
{
	if (op->atom >= DW_OP_reg0 && op->atom <= DW_OP_reg15) {
		*reg = op->atom - DW_OP_reg0;
		return true;
	}
	if (op->atom == DW_OP_regx && op->number < 16) {
		*reg = (int)op->number;
		return true;
	}
	return false;
}

/* The CFA at link-time address @addr as a register and an offset. */
static bool cfa_at(struct dp_dbg *d, uint64_t addr, int *reg, int64_t *off)
{
	Dwarf_Addr bias;
	Dwarf_CFI *cfi = dwfl_module_dwarf_cfi(d->mod, &bias);
	Dwarf_Frame *fr = NULL;
	Dwarf_Op *ops;
	size_t n;
	bool ok = false;

	if (!cfi || dwarf_cfi_addrframe(cfi, addr + d->shift - bias, &fr)) {
		cfi = dwfl_module_eh_cfi(d->mod, &bias);
		if (!cfi || dwarf_cfi_addrframe(cfi, addr + d->shift - bias, &fr))
			return false;
	}
	if (!dwarf_frame_cfa(fr, &ops, &n) && n == 1)
		ok = breg_of(&ops[0], reg, off);
	free(fr);
	return ok;
}

/* The frame base of function @fn at @addr: a register and an offset. */
static bool frame_base(struct dp_dbg *d, Dwarf_Die *fn, uint64_t addr,
		       int *reg, int64_t *off)
{
	Dwarf_Attribute a;
	Dwarf_Op *ops;
	size_t n;

	if (!dwarf_attr_integrate(fn, DW_AT_frame_base, &a) ||
	    dwarf_getlocation_addr(&a, dw_pc(d, addr), &ops, &n, 1) != 1 ||
	    n != 1)
		return false;
	if (ops[0].atom == DW_OP_call_frame_cfa)
		return cfa_at(d, addr, reg, off);
	return breg_of(&ops[0], reg, off);
}

/* Whether a value of type @t is passed in an integer register. */
static bool int_class(Dwarf_Die *t)
{
	Dwarf_Die p = *t;
	Dwarf_Attribute a;
	Dwarf_Word enc = 0;
	int64_t sz;

	if (!peel(&p))
		return false;
	sz = type_size(&p);
	switch (dwarf_tag(&p)) {
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type:
	case DW_TAG_enumeration_type:
		return true;
	case DW_TAG_base_type:
		if (dwarf_attr(&p, DW_AT_encoding, &a))
			dwarf_formudata(&a, &enc);
		return enc != DW_ATE_float && enc != DW_ATE_complex_float &&
		       sz > 0 && sz <= 8;
	default:
		return false;
	}
}

/*
 * The ABI register parameter @var arrives in (0 for %di, ...), or -1:
 * every parameter before it and itself must go in integer registers
 * (the SysV rules, where a struct or a float would change the count).
 */
static int abi_index(Dwarf_Die *fn, Dwarf_Die *var)
{
	Dwarf_Die c, t;
	int k = 0;

	if (dwarf_tag(var) != DW_TAG_formal_parameter || dwarf_child(fn, &c))
		return -1;
	/* a struct returned in memory: its address comes first, in %rdi */
	if (die_type(fn, &t) && peel(&t) &&
	    (dwarf_tag(&t) == DW_TAG_structure_type ||
	     dwarf_tag(&t) == DW_TAG_union_type ||
	     dwarf_tag(&t) == DW_TAG_class_type) && type_size(&t) > 16)
		k = 1;
	do {
		if (dwarf_tag(&c) != DW_TAG_formal_parameter)
			continue;
		if (!die_type(&c, &t))
			return -1;
		if (!int_class(&t)) {
			Dwarf_Die p = t;

			/* a float goes in an SSE register: the integer ones
			 * are counted on; a struct by value is not known */
			if (!peel(&p) || dwarf_tag(&p) != DW_TAG_base_type ||
			    dwarf_dieoffset(&c) == dwarf_dieoffset(var))
				return -1;
			continue;
		}
		if (k >= 6)
			return -1;
		if (dwarf_dieoffset(&c) == dwarf_dieoffset(var))
			return k;
		k++;
	} while (!dwarf_siblingof(&c, &c));
	return -1;
}

/*
 * Where variable @var is at @addr.  @ret: a return probe, whose
 * parameters are read through the values saved at entry ($argN).  At a
 * function's entry a parameter is where the ABI puts it, whatever its
 * DWARF location says (at -O0 that is its stack slot, which the
 * prologue has not written yet).
 */
static enum dp_dbg_err locate(struct dp_dbg *d, Dwarf_Die *fn, Dwarf_Die *var,
			      uint64_t addr, bool entry, bool ret, bool args,
			      struct val *v, char *why, size_t whylen)
{
	const char *name = die_name(var);
	Dwarf_Attribute a;
	Dwarf_Op *ops;
	size_t n;
	int reg, k;
	int64_t off;

	memset(v, 0, sizeof(*v));
	if (!die_type(var, &v->type)) {
		snprintf(why, whylen, "%s has no type", name);
		return DP_DBG_UNSUPPORTED;
	}
	if (entry && (k = abi_index(fn, var)) >= 0) {
		if (ret || args)
			snprintf(v->base, sizeof(v->base), "$arg%d", k + 1);
		else
			snprintf(v->base, sizeof(v->base), "%%%s",
				 dw_regs[abi_regs[k]]);
		return DP_DBG_OK;
	}
	if (dwarf_attr_integrate(var, DW_AT_const_value, &a)) {
		Dwarf_Sword sv;
		Dwarf_Word uv;

		/* a constant the compiler folded in: an immediate */
		if (!dwarf_formsdata(&a, &sv))
			snprintf(v->base, sizeof(v->base), "\\%lld", (long long)sv);
		else if (!dwarf_formudata(&a, &uv))
			snprintf(v->base, sizeof(v->base), "\\%llu",
				 (unsigned long long)uv);
		else
			return DP_DBG_UNSUPPORTED;
		v->imm = true;
		return DP_DBG_OK;
	}
	if (!dwarf_attr_integrate(var, DW_AT_location, &a) ||
	    dwarf_getlocation_addr(&a, dw_pc(d, addr), &ops, &n, 1) != 1 ||
	    !n) {
		snprintf(why, whylen, "%s is optimised out at this place", name);
		return DP_DBG_OPTIMIZED;
	}
	if (n == 1 && reg_of(&ops[0], &reg)) {
		if (ret) {
			for (k = 0; k < 6 && abi_regs[k] != reg; k++)
				;
			if (k == 6 || dwarf_tag(var) != DW_TAG_formal_parameter) {
				snprintf(why, whylen, "%s is not an argument "
					 "passed in a register: a return probe "
					 "cannot read it", name);
				return DP_DBG_UNSUPPORTED;
			}
			snprintf(v->base, sizeof(v->base), "$arg%d", k + 1);
		} else {
			snprintf(v->base, sizeof(v->base), "%%%s", dw_regs[reg]);
		}
		return DP_DBG_OK;
	}
	if (ret) {
		snprintf(why, whylen, "%s is not in a register at the "
			 "function's entry: a return probe cannot read it",
			 name);
		return DP_DBG_UNSUPPORTED;
	}
	if (n == 1 && breg_of(&ops[0], &reg, &off)) {
		v->mem = true;
		snprintf(v->base, sizeof(v->base), "%%%s", dw_regs[reg]);
		v->off = off;
		return DP_DBG_OK;
	}
	if (n == 1 && ops[0].atom == DW_OP_fbreg &&
	    frame_base(d, fn, addr, &reg, &off) && reg < 16) {
		v->mem = true;
		snprintf(v->base, sizeof(v->base), "%%%s", dw_regs[reg]);
		v->off = off + (int64_t)ops[0].number;
		return DP_DBG_OK;
	}
	if (n == 1 && ops[0].atom == DW_OP_addr) {
		uint64_t so = 0;
		const struct dp_elf_sym *s = dp_elf_sym_at(d->elf,
							   link_addr(d, ops[0].number),
							   &so);

		if (s) {
			v->mem = true;
			snprintf(v->base, sizeof(v->base), "@%.*s",
				 (int)s->base_len, s->name);
			v->off = (int64_t)so;
			return DP_DBG_OK;
		}
	}
	if (n == 1 && ops[0].atom >= DW_OP_reg17 && ops[0].atom <= DW_OP_reg31) {
		snprintf(why, whylen, "%s is in %%xmm%d here (floating point): "
			 "a fetch argument reads integer registers and memory",
			 name, ops[0].atom - DW_OP_reg17);
		return DP_DBG_UNSUPPORTED;
	}
	snprintf(why, whylen, "%s is computed, not stored, at this place (a "
		 "DWARF expression of %zu operations, not a register or memory "
		 "at one)", name, n);
	return DP_DBG_UNSUPPORTED;
}

/* A variable or parameter called @name among @scope's children; the
 * names seen go on @have. */
static bool var_in(Dwarf_Die *scope, const char *name, Dwarf_Die *var,
		   char *have, size_t havelen)
{
	Dwarf_Die c;

	if (dwarf_child(scope, &c))
		return false;
	do {
		int tag = dwarf_tag(&c);
		const char *cn;
		size_t h = strlen(have);

		if (tag != DW_TAG_variable && tag != DW_TAG_formal_parameter)
			continue;
		cn = die_name(&c);
		if (!cn)
			continue;
		if (!strcmp(cn, name)) {
			*var = c;
			return true;
		}
		if (h + strlen(cn) + 3 < havelen)
			snprintf(have + h, havelen - h, "%s%s", h ? ", " : "", cn);
	} while (!dwarf_siblingof(&c, &c));
	return false;
}

/*
 * Variable @name visible at @addr in the function that starts at @func:
 * the innermost scopes first (blocks, inlined copies), then the
 * function's own.  Its DIE into @var, the function's into @fn.
 */
static bool find_var(struct dp_dbg *d, uint64_t addr, uint64_t func,
		     uint64_t scope, const char *name, Dwarf_Die *fn,
		     Dwarf_Die *var, char *have, size_t havelen)
{
	Dwarf_Die *sc, in;
	int n;
	bool found = false;

	have[0] = '\0';
	if (!func_die(d, func, fn))
		return false;
	/* an inlined copy's own parameters first (its range may be empty
	 * at -O2, so no scope lookup at its entry finds it) */
	if (scope && dwarf_offdie(d->dw, scope, &in) &&
	    var_in(&in, name, var, have, havelen))
		return true;
	n = scopes_at(d, addr, &sc);
	for (int i = 0; i < n && !found; i++) {
		int tag = dwarf_tag(&sc[i]);

		if (tag == DW_TAG_subprogram)
			break;
		if (tag == DW_TAG_lexical_block ||
		    tag == DW_TAG_inlined_subroutine)
			found = var_in(&sc[i], name, var, have, havelen);
	}
	free(sc);
	return found || var_in(fn, name, var, have, havelen);
}

/* ---- members and indices ---------------------------------------------------- */

static bool member_offset(Dwarf_Die *m, int64_t *off)
{
	Dwarf_Attribute a;
	Dwarf_Word w;
	Dwarf_Op *ops;
	size_t n;

	*off = 0;
	if (!dwarf_attr_integrate(m, DW_AT_data_member_location, &a))
		return true;	/* a union's members */
	if (!dwarf_formudata(&a, &w)) {
		*off = (int64_t)w;
		return true;
	}
	if (!dwarf_getlocation(&a, &ops, &n) && n == 1 &&
	    ops[0].atom == DW_OP_plus_uconst) {
		*off = (int64_t)ops[0].number;
		return true;
	}
	return false;
}

/* Member @name of struct/union @t (anonymous members searched too):
 * its DIE and byte offset; the members' names into @have otherwise. */
static bool find_member(Dwarf_Die *t, const char *name, Dwarf_Die *m,
			int64_t *off, char *have, size_t havelen)
{
	Dwarf_Die c;

	if (dwarf_child(t, &c))
		return false;
	do {
		const char *cn = die_name(&c);
		Dwarf_Die sub;
		int64_t o;

		if (dwarf_tag(&c) != DW_TAG_member || !member_offset(&c, &o))
			continue;
		if (cn && !strcmp(cn, name)) {
			*m = c;
			*off = o;
			return true;
		}
		if (!cn && die_type(&c, &sub) && peel(&sub) &&
		    find_member(&sub, name, m, off, have, havelen)) {
			*off += o;
			return true;
		}
		if (cn && strlen(have) + strlen(cn) + 3 < havelen)
			snprintf(have + strlen(have), havelen - strlen(have),
				 "%s%s", have[0] ? ", " : "", cn);
	} while (!dwarf_siblingof(&c, &c));
	return false;
}

/* The byte offset of member path @path ("d_name.name") in @t. */
static bool member_path(Dwarf_Die *t, const char *path, int64_t *off)
{
	char buf[256], *save = NULL, have[8];
	Dwarf_Die cur = *t, m;
	int64_t o;

	snprintf(buf, sizeof(buf), "%s", path);
	*off = 0;
	for (char *tok = strtok_r(buf, ".", &save); tok;
	     tok = strtok_r(NULL, ".", &save)) {
		have[0] = '\0';
		if (!peel(&cur) || !find_member(&cur, tok, &m, &o, have,
						sizeof(have)))
			return false;
		*off += o;
		if (!die_type(&m, &cur))
			return !strtok_r(NULL, ".", &save);
	}
	return true;
}

int dp_dbg_member_offset(struct dp_dbg *d, const char *type, const char *path,
			 int64_t *off)
{
	Dwarf_Die *cu = NULL, c;
	Dwarf_Addr bias;

	while ((cu = dwfl_module_nextcu(d->mod, cu, &bias))) {
		if (dwarf_child(cu, &c))
			continue;
		do {
			const char *n = die_name(&c);

			if (dwarf_tag(&c) == DW_TAG_structure_type && n &&
			    !strcmp(n, type) &&
			    !dwarf_hasattr(&c, DW_AT_declaration) &&
			    member_path(&c, path, off))
				return 0;
		} while (!dwarf_siblingof(&c, &c));
	}
	return -ENOENT;
}

/*
 * A bitfield member @m at byte @member_off of its struct: @v (the member,
 * at v->off) becomes the storage unit that holds it and the bits in it.
 */
static void bitfield(Dwarf_Die *m, struct val *v, int64_t member_off)
{
	Dwarf_Attribute a;
	Dwarf_Word bs, bo;
	Dwarf_Die t = v->type;
	int64_t csz, dbo, unit;

	if (!dwarf_attr(m, DW_AT_bit_size, &a) || dwarf_formudata(&a, &bs))
		return;
	csz = peel(&t) ? type_size(&t) : -1;
	if (csz <= 0)
		return;
	if (dwarf_attr(m, DW_AT_data_bit_offset, &a) && !dwarf_formudata(&a, &bo))
		dbo = (int64_t)bo;	/* from the struct's start */
	else if (dwarf_attr(m, DW_AT_bit_offset, &a) && !dwarf_formudata(&a, &bo))
		/* DWARF 2/3: from the storage unit's most significant bit */
		dbo = member_off * 8 + csz * 8 - (int64_t)bo - (int64_t)bs;
	else
		return;
	unit = (dbo / (csz * 8)) * csz;
	v->off += unit - member_off;
	v->bit_off = (int)(dbo - unit * 8);
	v->bit_size = (int)bs;
}

static int64_t array_count(Dwarf_Die *t)
{
	Dwarf_Die c;
	Dwarf_Attribute a;
	Dwarf_Word w;

	if (dwarf_child(t, &c))
		return -1;
	do {
		if (dwarf_tag(&c) != DW_TAG_subrange_type)
			continue;
		if (dwarf_attr(&c, DW_AT_count, &a) && !dwarf_formudata(&a, &w))
			return (int64_t)w;
		if (dwarf_attr(&c, DW_AT_upper_bound, &a) && !dwarf_formudata(&a, &w))
			return (int64_t)w + 1;
		return -1;
	} while (!dwarf_siblingof(&c, &c));
	return -1;
}

/* @v is a pointer: the value it points to becomes @v (at @off in it). */
static enum dp_dbg_err deref(struct val *v, Dwarf_Die *target, int64_t off,
			     char *why, size_t whylen)
{
	char text[64];

	if (++v->derefs > MAX_DEREFS || val_text(v, text, sizeof(text))) {
		snprintf(why, whylen, "the chain is too deep to fetch");
		return DP_DBG_TOO_LONG;
	}
	memcpy(v->base, text, sizeof(v->base));
	v->mem = true;
	v->off = off;
	v->type = *target;
	v->bit_size = 0;
	return DP_DBG_OK;
}

static size_t ident_len(const char *s)
{
	size_t n = 0;

	if (!isalpha((unsigned char)s[0]) && s[0] != '_')
		return 0;
	while (isalnum((unsigned char)s[n]) || s[n] == '_')
		n++;
	return n;
}

/* One step of the chain at @s: "->NAME", ".NAME" or "[N]"; the length
 * it took, or 0 with the error in @e. */
static size_t step(struct val *v, const char *s, enum dp_dbg_err *e,
		   char *why, size_t whylen)
{
	char name[128], have[512] = "";
	Dwarf_Die t = v->type, m, elem;
	int64_t off;
	size_t n;
	bool arrow = s[0] == '-';

	*e = DP_DBG_OK;
	if (v->imm) {
		snprintf(why, whylen, "the value is a constant here (the "
			 "compiler folded it in): it has no members");
		return *e = DP_DBG_UNSUPPORTED, 0;
	}
	if (s[0] == '-' && s[1] != '>')
		return *e = DP_DBG_BAD_HYPHEN, 0;
	if (s[0] == '[') {
		char *end;
		long idx = strtol(s + 1, &end, 0);
		int64_t cnt, esz;

		if (end == s + 1 || *end != ']' || idx < 0) {
			snprintf(why, whylen, "an index is a number in [ ]");
			return *e = DP_DBG_UNSUPPORTED, 0;
		}
		if (!peel(&t) || !die_type(&t, &elem) ||
		    (dwarf_tag(&t) != DW_TAG_array_type &&
		     dwarf_tag(&t) != DW_TAG_pointer_type)) {
			snprintf(why, whylen, "[ ] on something that is neither "
				 "an array nor a pointer");
			return *e = DP_DBG_UNSUPPORTED, 0;
		}
		esz = type_size(&elem);
		if (esz <= 0)
			return *e = DP_DBG_UNSUPPORTED, 0;
		if (dwarf_tag(&t) == DW_TAG_array_type) {
			cnt = array_count(&t);
			if (cnt >= 0 && idx >= cnt) {
				snprintf(why, whylen, "index %ld is past the end "
					 "of an array of %" PRId64, idx, cnt);
				return *e = DP_DBG_BAD_INDEX, 0;
			}
			if (!v->mem)
				return *e = DP_DBG_STRUCT_VAL, 0;
			v->off += idx * esz;
			v->type = elem;
		} else if ((*e = deref(v, &elem, idx * esz, why, whylen))) {
			return 0;
		}
		return (size_t)(end + 1 - s);
	}
	s += arrow ? 2 : 1;
	n = ident_len(s);
	if (!n || n >= sizeof(name)) {
		snprintf(why, whylen, "a member name must follow %s",
			 arrow ? "->" : ".");
		return *e = DP_DBG_NO_FIELD, 0;
	}
	memcpy(name, s, n);
	name[n] = '\0';
	if (!peel(&t))
		return *e = DP_DBG_NOT_PTR, 0;
	if (arrow) {
		if (dwarf_tag(&t) != DW_TAG_pointer_type || !die_type(&t, &t) ||
		    !peel(&t) || (dwarf_tag(&t) != DW_TAG_structure_type &&
				  dwarf_tag(&t) != DW_TAG_union_type &&
				  dwarf_tag(&t) != DW_TAG_class_type))
			return *e = DP_DBG_NOT_PTR, 0;
	} else if (dwarf_tag(&t) != DW_TAG_structure_type &&
		   dwarf_tag(&t) != DW_TAG_union_type &&
		   dwarf_tag(&t) != DW_TAG_class_type) {
		return *e = DP_DBG_NOT_PTR, 0;
	}
	if (!find_member(&t, name, &m, &off, have, sizeof(have))) {
		snprintf(why, whylen, "%s has no member %s%s%s",
			 die_name(&t) ? die_name(&t) : "the type",
			 name, have[0] ? "; its members: " : "", have);
		return *e = DP_DBG_NO_FIELD, 0;
	}
	if (!die_type(&m, &elem))
		return *e = DP_DBG_UNSUPPORTED, 0;
	if (arrow) {
		if ((*e = deref(v, &elem, off, why, whylen)))
			return 0;
	} else {
		if (!v->mem)
			return *e = DP_DBG_STRUCT_VAL, 0;
		v->off += off;
		v->type = elem;
		v->bit_size = 0;
	}
	bitfield(&m, v, off);
	return (size_t)(n + (arrow ? 2 : 1));
}

/* The fetch argument for the whole value @v, typed (or with @type). */
static enum dp_dbg_err finish(struct val *v, const char *type, char *out,
			      size_t len, char *why, size_t whylen)
{
	char text[64];
	Dwarf_Die t = v->type, e;
	const char *st;
	int n;

	if (!peel(&t)) {
		snprintf(why, whylen, "a void value cannot be fetched");
		return DP_DBG_UNSUPPORTED;
	}
	if (val_text(v, text, sizeof(text)))
		return DP_DBG_TOO_LONG;
	if (v->bit_size) {
		n = snprintf(out, len, "%s:b%d@%d/%d", text, v->bit_size,
			     v->bit_off, (int)type_size(&t) * 8);
	} else if (dwarf_tag(&t) == DW_TAG_pointer_type && die_type(&t, &e) &&
		   is_char(&e) && (!*type || strstr(type, "string"))) {
		n = snprintf(out, len, "+0(%s):%s", text, *type ? type : "string");
	} else if (dwarf_tag(&t) == DW_TAG_array_type && die_type(&t, &e) &&
		   is_char(&e) && (!*type || strstr(type, "string"))) {
		if (!v->mem)
			return DP_DBG_STRUCT_VAL;
		n = snprintf(out, len, "%s:%s", text, *type ? type : "string");
	} else if (*type) {
		if (strstr(type, "string")) {
			snprintf(why, whylen, "the value is not a char pointer "
				 "or array");
			return DP_DBG_BAD_STRING;
		}
		n = snprintf(out, len, "%s:%s", text, type);
	} else if (dwarf_tag(&t) == DW_TAG_array_type) {
		int64_t cnt = array_count(&t);

		if (!v->mem || !die_type(&t, &e) || !peel(&e) ||
		    !(st = scalar_type(&e)) || cnt <= 0 || cnt > 64) {
			snprintf(why, whylen, "an array is fetched when it holds "
				 "at most 64 numbers");
			return DP_DBG_UNSUPPORTED;
		}
		n = snprintf(out, len, "%s:%s[%d]", text, st, (int)cnt);
	} else if ((st = scalar_type(&t))) {
		n = snprintf(out, len, "%s:%s", text, st);
	} else if (dwarf_tag(&t) == DW_TAG_structure_type ||
		   dwarf_tag(&t) == DW_TAG_union_type ||
		   dwarf_tag(&t) == DW_TAG_class_type) {
		return DP_DBG_STRUCT_VAL;
	} else {
		snprintf(why, whylen, "its type has no fetch type");
		return DP_DBG_UNSUPPORTED;
	}
	return n < 0 || (size_t)n >= len ? DP_DBG_TOO_LONG : DP_DBG_OK;
}

enum dp_dbg_err dp_dbg_arg(struct dp_dbg *d, const struct dp_dbg_place *pl,
			   bool ret, const char *expr, const char *type,
			   struct dp_dbg_arg *out, int *at, char *why,
			   size_t whylen)
{
	char name[128], have[1024];
	Dwarf_Die fn, var;
	struct val v;
	enum dp_dbg_err e;
	uint64_t addr = ret ? pl->func : pl->addr;
	size_t n, pos;

	memset(out, 0, sizeof(*out));
	*at = 0;
	why[0] = '\0';
	if (!strncmp(expr, "$retval", 7)) {
		memset(&v, 0, sizeof(v));
		if (!func_die(d, pl->func, &fn) ||
		    !die_type(&fn, &v.type)) {
			snprintf(why, whylen, "the function returns void");
			return DP_DBG_NO_RETVAL;
		}
		snprintf(v.base, sizeof(v.base), "$retval");
		pos = 7;
	} else {
		n = ident_len(expr);
		if (!n || n >= sizeof(name))
			return DP_DBG_NO_VAR;
		memcpy(name, expr, n);
		name[n] = '\0';
		if (!find_var(d, addr, pl->func, pl->scope, name, &fn, &var, have,
			      sizeof(have))) {
			snprintf(why, whylen, "no %s at this place%s%s", name,
				 have[0] ? "; there are: " : "", have);
			return DP_DBG_NO_VAR;
		}
		e = locate(d, &fn, &var, addr, ret || pl->entry, ret,
			   pl->args, &v, why, whylen);
		if (e)
			return e;
		if (!expr[n])
			snprintf(out->name, sizeof(out->name), "%.32s", name);
		pos = n;
	}
	while (expr[pos]) {
		size_t k = step(&v, expr + pos, &e, why, whylen);

		if (!k) {
			/* the kernel's caret is on the member a step names */
			*at = (int)pos + (!strncmp(expr + pos, "->", 2) ? 2 :
					  expr[pos] == '.' ? 1 : 0);
			return e ? e : DP_DBG_NO_FIELD;
		}
		pos += k;
	}
	e = finish(&v, type, out->body, sizeof(out->body), why, whylen);
	if (e == DP_DBG_TOO_LONG && !why[0])
		snprintf(why, whylen, "the fetch argument would be longer than "
			 "63 characters");
	return e;
}

int dp_dbg_params(struct dp_dbg *d, const struct dp_dbg_place *pl,
		  char (*names)[33], int max)
{
	Dwarf_Die fn, c;
	int n = 0;

	/* an inlined copy's own parameters, not its caller's */
	if (pl->scope ? !dwarf_offdie(d->dw, pl->scope, &fn) :
	    !func_die(d, pl->func, &fn))
		return -ENOENT;
	if (dwarf_child(&fn, &c))
		return 0;
	do {
		const char *cn = die_name(&c);

		if (dwarf_tag(&c) == DW_TAG_formal_parameter && cn &&
		    strlen(cn) < 33 && n < max)
			snprintf(names[n++], 33, "%s", cn);
	} while (!dwarf_siblingof(&c, &c));
	return n;
}

/*
 * What the function at @pl declares: its number of parameters (-1 when
 * it takes a variable list, "..."), and whether it returns a value.
 * 0, or -ENOENT.
 */
int dp_dbg_signature(struct dp_dbg *d, const struct dp_dbg_place *pl,
		     int *nparams, bool *returns)
{
	Dwarf_Die fn, c, t;
	int n = 0;

	if (!func_die(d, pl->func, &fn))
		return -ENOENT;
	*returns = die_type(&fn, &t);
	if (!dwarf_child(&fn, &c)) {
		do {
			if (dwarf_tag(&c) == DW_TAG_formal_parameter)
				n++;
			else if (dwarf_tag(&c) == DW_TAG_unspecified_parameters)
				n = -1000;
		} while (!dwarf_siblingof(&c, &c));
	}
	*nparams = n < 0 ? -1 : n;
	return 0;
}

/* ---- what there is ---------------------------------------------------------- */

/* snprintf() that may cut: a type's name is shown, never parsed. */
static void say_type(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

/* @t without const, volatile and restrict (typedefs kept); false: void. */
static bool peel_quals(Dwarf_Die *t)
{
	for (int i = 0; i < 32; i++) {
		int tag = dwarf_tag(t);

		if (tag != DW_TAG_const_type && tag != DW_TAG_volatile_type &&
		    tag != DW_TAG_restrict_type)
			return true;
		if (!die_type(t, t))
			return false;
	}
	return false;
}

/* @t's C name into @buf (@len), as perf probe -V shows types. */
static void type_name(Dwarf_Die *t, char *buf, size_t len, int depth,
		      bool quals)
{
	Dwarf_Die in;
	const char *n = die_name(t);
	char sub[256];
	int64_t cnt;

	buf[0] = '\0';
	if (depth > 8) {
		say_type(buf, len, "...");
		return;
	}
	switch (dwarf_tag(t)) {
	case DW_TAG_base_type:
	case DW_TAG_typedef:
		say_type(buf, len, "%s", n ? n : "?");
		return;
	case DW_TAG_structure_type:
	case DW_TAG_class_type:
		say_type(buf, len, "struct %s", n ? n : "(anon)");
		return;
	case DW_TAG_union_type:
		say_type(buf, len, "union %s", n ? n : "(anon)");
		return;
	case DW_TAG_enumeration_type:
		say_type(buf, len, "enum %s", n ? n : "(anon)");
		return;
	case DW_TAG_subroutine_type:
		say_type(buf, len, "(function)");
		return;
	default:
		break;
	}
	if (!die_type(t, &in))
		snprintf(sub, sizeof(sub), "void");
	else
		type_name(&in, sub, sizeof(sub), depth + 1, quals);
	switch (dwarf_tag(t)) {
	case DW_TAG_pointer_type:
		say_type(buf, len, "%s*", sub);
		break;
	case DW_TAG_reference_type:
		say_type(buf, len, "%s&", sub);
		break;
	case DW_TAG_const_type:
	case DW_TAG_volatile_type:
		/* perf probe -V shows types without qualifiers */
		if (quals)
			say_type(buf, len, "%s %s", dwarf_tag(t) ==
				 DW_TAG_const_type ? "const" : "volatile", sub);
		else
			say_type(buf, len, "%s", sub);
		break;
	case DW_TAG_array_type:
		cnt = array_count(t);
		if (cnt >= 0)
			say_type(buf, len, "%s[%" PRId64 "]", sub, cnt);
		else
			say_type(buf, len, "%s[]", sub);
		break;
	default:
		say_type(buf, len, "%s", sub);
		break;
	}
}

int dp_dbg_func_lines(struct dp_dbg *d, const char *func, char *file,
		      size_t filelen,
		      void (*line)(void *priv, int rel, const char *text),
		      void *priv, char *why, size_t whylen)
{
	struct dp_dbg_place f, one[8];
	char path[4096], *text = NULL;
	size_t textcap = 0;
	Dwarf_Die fn, cu;
	Dwarf_Attribute a;
	const char *src, *dir;
	int decl = 0, ln = 0, last = 0, next;
	FILE *fp;

	if (dp_dbg_func(d, func, &f, why, whylen))
		return -ENOENT;
	if (!func_die(d, f.addr, &fn) || dwarf_decl_line(&fn, &decl) ||
	    !(src = dwarf_decl_file(&fn))) {
		snprintf(why, whylen, "no line information for %s", func);
		return -ENOENT;
	}
	dir = src[0] != '/' && dwarf_diecu(&fn, &cu, NULL, NULL) &&
	      dwarf_attr(&cu, DW_AT_comp_dir, &a) ? dwarf_formstring(&a) : NULL;
	if (dir)
		snprintf(path, sizeof(path), "%s/%s", dir, src);
	else
		snprintf(path, sizeof(path), "%s", src);
	snprintf(file, filelen, "%s", path);
	/* the function's last line: the highest with code in it; after it,
	 * lines up to the next one with code (perf probe -L's context) */
	for (int l = decl; l < decl + 4096; l++)
		if (rows_at(d, &fn, src, l, 0, one, 8) > 0)
			last = l;
		else if (last && l > last + 64)
			break;
	for (next = last + 1; next <= last + 8; next++)
		if (rows_at(d, NULL, src, next, 0, one, 8) > 0)
			break;
	fp = fopen(path, "re");
	if (!fp) {
		snprintf(why, whylen, "cannot read %s: %s", path, strerror(errno));
		return -errno;
	}
	while (getline(&text, &textcap, fp) > 0 && ++ln <= next) {
		text[strcspn(text, "\n")] = '\0';
		if (ln < decl)
			continue;
		/* 0 is the entry; a line numbered has code of its own */
		if (ln == decl)
			line(priv, 0, text);
		else
			line(priv, ln <= last && rows_at(d, &fn, src, ln, f.addr,
							 one, 8) > 0 ?
			     ln - decl : -1, text);
	}
	fclose(fp);
	free(text);
	return 0;
}

int dp_dbg_vars(struct dp_dbg *d, const struct dp_dbg_place *pl,
		void (*var)(void *priv, const char *type, const char *name,
			    bool located),
		void *priv)
{
	Dwarf_Die *sc, fn;
	int n;

	if (!func_die(d, pl->func, &fn))
		return -ENOENT;
	n = scopes_at(d, pl->addr, &sc);
	for (int i = 0; i <= n; i++) {
		Dwarf_Die *s = i < n ? &sc[i] : &fn, c, t;
		int tag = dwarf_tag(s);

		if (i < n && tag != DW_TAG_lexical_block &&
		    tag != DW_TAG_inlined_subroutine) {
			if (tag == DW_TAG_subprogram)
				i = n - 1;	/* the function's own, last */
			continue;
		}
		if (dwarf_child(s, &c))
			continue;
		do {
			char tn[256] = "?", why[256];
			const char *cn = die_name(&c);
			struct val v;

			tag = dwarf_tag(&c);
			if ((tag != DW_TAG_variable &&
			     tag != DW_TAG_formal_parameter) || !cn)
				continue;
			/* perf's way: the type without its qualifiers */
			if (die_type(&c, &t) && peel_quals(&t))
				type_name(&t, tn, sizeof(tn), 0, false);
			/* located: a definition could fetch it here */
			var(priv, tn, cn, locate(d, &fn, &c, pl->addr, pl->entry,
						 false, false, &v, why,
						 sizeof(why)) == DP_DBG_OK);
		} while (!dwarf_siblingof(&c, &c));
	}
	free(sc);
	return 0;
}

struct proto_walk {
	void (*fn)(void *priv, const char *name, const char *proto);
	void *priv;
};

static int one_proto(Dwarf_Die *die, void *arg)
{
	struct proto_walk *w = arg;
	char proto[1024], tn[256];
	const char *name = die_name(die);
	Dwarf_Die t, c;
	Dwarf_Addr lo;
	size_t k;
	bool first = true;

	if (!name || (dwarf_lowpc(die, &lo) && dwarf_entrypc(die, &lo)))
		return DWARF_CB_OK;
	if (die_type(die, &t))
		type_name(&t, tn, sizeof(tn), 0, true);
	else
		snprintf(tn, sizeof(tn), "void");
	k = (size_t)snprintf(proto, sizeof(proto), "%s %s(", tn, name);
	if (!dwarf_child(die, &c)) {
		do {
			const char *pn = die_name(&c);

			if (dwarf_tag(&c) != DW_TAG_formal_parameter ||
			    k >= sizeof(proto))
				continue;
			if (die_type(&c, &t))
				type_name(&t, tn, sizeof(tn), 0, true);
			k += (size_t)snprintf(proto + k, sizeof(proto) - k,
					      "%s%s%s%s", first ? "" : ", ", tn,
					      pn ? " " : "", pn ? pn : "");
			first = false;
		} while (!dwarf_siblingof(&c, &c));
	}
	if (k < sizeof(proto))
		snprintf(proto + k, sizeof(proto) - k, "%s)", first ? "void" : "");
	w->fn(w->priv, name, proto);
	return DWARF_CB_OK;
}

int dp_dbg_prototypes(struct dp_dbg *d,
		      void (*fn)(void *priv, const char *name,
				 const char *proto),
		      void *priv)
{
	struct proto_walk w = { fn, priv };
	Dwarf_Die *cu = NULL;
	Dwarf_Addr bias;

	while ((cu = dwfl_module_nextcu(d->mod, cu, &bias)))
		dwarf_getfuncs(cu, one_proto, &w, 0);
	return 0;
}
