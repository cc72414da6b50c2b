// SPDX-License-Identifier: GPL-2.0
/*
 * ELF files for probe places: the file is copied into memory once (a
 * mapping of it would fault with SIGBUS if it were truncated) and read
 * through libelf; symbols are copied into arrays sorted by address (for
 * symbolizing) and by name (for lookups), so both are O(log n).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sym/elf.h"
#include "util/util.h"

#ifndef DP_IN_AGENT
#include <elfutils/libdwfl.h>
#endif

struct dp_elf {
	char *path;
	uint8_t *map;
	size_t size;
	Elf *elf;
	bool pie;
	uint64_t entry;			/* e_entry */
	const uint8_t *build_id;
	size_t build_id_len;

	struct dp_elf_seg *segs;
	size_t nsegs;
	struct dp_elf_sec *secs;
	size_t nsecs;

	struct dp_elf_sym *syms;	/* by address */
	size_t nsyms;
	uint32_t *by_name;		/* indices into syms, by base name */
	uint32_t *funcs;		/* indices of function symbols */
	uint64_t *max_end;		/* max cover end of funcs[0..i] */
	size_t nfuncs;
	/* a stripped file's separate debug file, whose .symtab names its
	 * static functions (the names point into its mapping) */
	struct dp_elf *debug;
	void *aux;	/* a Dwfl holding .gnu_debugdata's names (not agent) */
};

static __thread char last_why[160];

const char *dp_elf_strerror(void)
{
	return last_why;
}

/* ---- the file header ---------------------------------------------------- */

static const char *machine_name(unsigned m)
{
	switch (m) {
	case EM_386:		return "i386";
	case EM_ARM:		return "ARM";
	case EM_AARCH64:	return "AArch64";
	case EM_RISCV:		return "RISC-V";
	case EM_PPC64:		return "PowerPC64";
	case EM_S390:		return "s390";
	case EM_MIPS:		return "MIPS";
	case EM_BPF:		return "BPF";
	default:		return NULL;
	}
}

/*
 * Check the identification and header by hand rather than through libelf,
 * to say precisely why a file is refused.
 */
static int check_header(const uint8_t *map, size_t size, char *why,
			size_t whylen)
{
	Elf64_Ehdr eh;
	const char *mname;

	if (size < EI_NIDENT || memcmp(map, ELFMAG, SELFMAG)) {
		dp_say(why, whylen, size ? "not an ELF file" :
			"empty file, not an ELF file");
		return -ENOEXEC;
	}
	if (map[EI_CLASS] != ELFCLASS64) {
		dp_say(why, whylen, map[EI_CLASS] == ELFCLASS32 ?
			"32-bit ELF (ELFCLASS32), not x86-64" :
			"ELF of unknown class %u", map[EI_CLASS]);
		return -ENOEXEC;
	}
	if (map[EI_DATA] != ELFDATA2LSB) {
		dp_say(why, whylen, "big-endian ELF, not x86-64");
		return -ENOEXEC;
	}
	if (size < sizeof(eh)) {
		dp_say(why, whylen, "truncated ELF header");
		return -ENOEXEC;
	}
	memcpy(&eh, map, sizeof(eh));
	if (eh.e_machine != EM_X86_64) {
		mname = machine_name(eh.e_machine);
		if (mname)
			dp_say(why, whylen, "ELF for %s, not x86-64", mname);
		else
			dp_say(why, whylen, "ELF for machine %u, not x86-64",
				eh.e_machine);
		return -ENOEXEC;
	}
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) {
		dp_say(why, whylen, "ELF %s, not an executable or a shared object",
			eh.e_type == ET_REL ? "relocatable object" :
			eh.e_type == ET_CORE ? "core dump" : "of unknown type");
		return -ENOEXEC;
	}
	return 0;
}

/* ---- segments, sections, notes ------------------------------------------ */

static int load_segments(struct dp_elf *e, char *why, size_t whylen)
{
	size_t n, i;
	GElf_Phdr ph;

	if (elf_getphdrnum(e->elf, &n)) {
		dp_say(why, whylen, "bad program headers: %s", elf_errmsg(-1));
		return -ENOEXEC;
	}
	e->segs = calloc(n ? n : 1, sizeof(*e->segs));
	if (!e->segs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct dp_elf_seg *s = &e->segs[e->nsegs];

		if (!gelf_getphdr(e->elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		s->vaddr = ph.p_vaddr;
		s->memsz = ph.p_memsz;
		s->offset = ph.p_offset;
		s->filesz = ph.p_filesz;
		s->flags = ph.p_flags;
		/* A truncated file: only bytes that exist can be read. */
		if (s->offset > e->size)
			s->filesz = 0;
		else if (s->filesz > e->size - s->offset)
			s->filesz = e->size - s->offset;
		e->nsegs++;
	}
	return 0;
}

static void find_build_id(struct dp_elf *e)
{
	size_t n, i, off, name_off, desc_off;
	GElf_Phdr ph;
	GElf_Nhdr nh;
	Elf_Data *d;

	if (elf_getphdrnum(e->elf, &n))
		return;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(e->elf, i, &ph) || ph.p_type != PT_NOTE)
			continue;
		if (ph.p_offset > e->size || ph.p_filesz > e->size - ph.p_offset)
			continue;
		d = elf_getdata_rawchunk(e->elf, ph.p_offset, ph.p_filesz,
					 ph.p_align == 8 ? ELF_T_NHDR8 :
					 ELF_T_NHDR);
		if (!d)
			continue;
		off = 0;
		while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off))) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((char *)d->d_buf + name_off, "GNU", 4) &&
			    nh.n_descsz) {
				e->build_id = (uint8_t *)d->d_buf + desc_off;
				e->build_id_len = nh.n_descsz;
				return;
			}
		}
	}
}

static int load_sections(struct dp_elf *e)
{
	size_t shstrndx, cap = 0;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	struct dp_elf_sec *tmp;

	if (elf_getshdrstrndx(e->elf, &shstrndx))
		shstrndx = 0;
	while ((scn = elf_nextscn(e->elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_EXECINSTR) ||
		    sh.sh_type == SHT_NOBITS || !sh.sh_size)
			continue;
		if (sh.sh_offset > e->size || sh.sh_size > e->size - sh.sh_offset)
			continue;
		if (e->nsecs == cap) {
			cap = cap ? 2 * cap : 8;
			tmp = realloc(e->secs, cap * sizeof(*tmp));
			if (!tmp)
				return -ENOMEM;
			e->secs = tmp;
		}
		e->secs[e->nsecs].name = shstrndx ?
			elf_strptr(e->elf, shstrndx, sh.sh_name) : NULL;
		if (!e->secs[e->nsecs].name)
			e->secs[e->nsecs].name = "?";
		e->secs[e->nsecs].addr = sh.sh_addr;
		e->secs[e->nsecs].size = sh.sh_size;
		e->secs[e->nsecs].offset = sh.sh_offset;
		e->nsecs++;
	}
	return 0;
}

/* ---- symbols ------------------------------------------------------------ */

struct symvec {
	struct dp_elf_sym *v;
	size_t n, cap;
};

static int symvec_push(struct symvec *sv, const struct dp_elf_sym *s)
{
	struct dp_elf_sym *tmp;

	if (sv->n == sv->cap) {
		sv->cap = sv->cap ? 2 * sv->cap : 256;
		tmp = realloc(sv->v, sv->cap * sizeof(*tmp));
		if (!tmp)
			return -ENOMEM;
		sv->v = tmp;
	}
	sv->v[sv->n++] = *s;
	return 0;
}

/* Version names of .gnu.version_d, by version index. */
struct verdefs {
	const char **name;
	size_t n;
};

static void load_verdefs(Elf *elf, Elf_Scn *scn, size_t strndx,
			 struct verdefs *vd)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	GElf_Verdef def;
	GElf_Verdaux aux;
	size_t off = 0, cnt = 0;
	const char **tmp;

	while (d && gelf_getverdef(d, off, &def) && cnt++ < 65536) {
		if (def.vd_ndx >= vd->n) {
			tmp = realloc(vd->name, (def.vd_ndx + 1) * sizeof(*tmp));
			if (!tmp)
				return;
			memset(tmp + vd->n, 0,
			       (def.vd_ndx + 1 - vd->n) * sizeof(*tmp));
			vd->name = tmp;
			vd->n = def.vd_ndx + 1;
		}
		if (gelf_getverdaux(d, off + def.vd_aux, &aux))
			vd->name[def.vd_ndx] = elf_strptr(elf, strndx,
							  aux.vda_name);
		if (!def.vd_next)
			break;
		off += def.vd_next;
	}
}

static bool wanted_sym(const GElf_Sym *s)
{
	unsigned type = GELF_ST_TYPE(s->st_info);

	if (s->st_shndx == SHN_UNDEF || s->st_shndx == SHN_ABS || !s->st_name)
		return false;
	return type == STT_FUNC || type == STT_GNU_IFUNC || type == STT_OBJECT;
}

/* Split "name@VER" / "name@@VER" as the static linker writes them. */
static void split_version(struct dp_elf_sym *s)
{
	const char *at = strchr(s->name, '@');
	size_t len = at ? (size_t)(at - s->name) : strlen(s->name);

	s->base_len = len > UINT16_MAX ? UINT16_MAX : len;
	if (!at)
		return;
	s->hidden = at[1] != '@';
	s->version = at + (s->hidden ? 1 : 2);
}

/*
 * @ds: the symbol @s called @name, as read_symtab() and
 * minidebug_symbols() keep it.  False: not one to keep (no name, or not
 * a defined function or object).
 */
static bool sym_fill(struct dp_elf_sym *ds, const GElf_Sym *s,
		     const char *name, bool debug_only)
{
	if (!name || !*name || !wanted_sym(s))
		return false;
	memset(ds, 0, sizeof(*ds));
	ds->name = name;
	ds->value = s->st_value;
	ds->size = s->st_size;
	ds->type = GELF_ST_TYPE(s->st_info);
	ds->bind = GELF_ST_BIND(s->st_info);
	ds->debug_only = debug_only;
	split_version(ds);
	return true;
}

static int read_symtab(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh,
		       Elf_Data *versym, const struct verdefs *vd,
		       struct symvec *sv)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t i, n;
	GElf_Sym s;
	GElf_Versym ver;
	struct dp_elf_sym ds;

	if (!d || !sh->sh_entsize)
		return 0;
	n = sh->sh_size / sh->sh_entsize;
	for (i = 1; i < n; i++) {
		if (!gelf_getsym(d, i, &s) ||
		    !sym_fill(&ds, &s, elf_strptr(elf, sh->sh_link, s.st_name),
			      false))
			continue;
		/* Index 0 is local, 1 the file's base: only >= 2 names a version. */
		if (versym && gelf_getversym(versym, i, &ver)) {
			ds.hidden = ver & 0x8000;
			ver &= 0x7fff;
			if (ver >= 2 && ver < vd->n && vd->name[ver])
				ds.version = vd->name[ver];
		}
		if (symvec_push(sv, &ds))
			return -ENOMEM;
	}
	return 0;
}

static int base_cmp(const struct dp_elf_sym *a, const struct dp_elf_sym *b)
{
	size_t n = a->base_len < b->base_len ? a->base_len : b->base_len;
	int r = memcmp(a->name, b->name, n);

	if (r)
		return r;
	return (a->base_len > b->base_len) - (a->base_len < b->base_len);
}

/* Preference among aliases at one address: global, then default version. */
static int sym_rank(const struct dp_elf_sym *s)
{
	int b = s->bind == STB_GLOBAL ? 3 : s->bind == STB_WEAK ? 2 :
		s->bind == STB_LOCAL ? 1 : 0;

	return 2 * b + !s->hidden;
}

static int cmp_value_base(const void *pa, const void *pb)
{
	const struct dp_elf_sym *a = pa, *b = pb;

	if (a->value != b->value)
		return a->value < b->value ? -1 : 1;
	return base_cmp(a, b);
}

/*
 * Final address order: by value, then rank ascending, so that a backward
 * walk meets the preferred alias of an address first.
 */
static int cmp_value_rank(const void *pa, const void *pb)
{
	const struct dp_elf_sym *a = pa, *b = pb;
	int r;

	if (a->value != b->value)
		return a->value < b->value ? -1 : 1;
	r = sym_rank(a) - sym_rank(b);
	return r ? r : strcmp(a->name, b->name);
}

static int cmp_index_name(const void *pa, const void *pb, void *syms)
{
	const struct dp_elf_sym *v = syms;
	const struct dp_elf_sym *a = &v[*(const uint32_t *)pa];
	const struct dp_elf_sym *b = &v[*(const uint32_t *)pb];
	int r = base_cmp(a, b);

	if (r)
		return r;
	return (a->value > b->value) - (a->value < b->value);
}

/*
 * The same symbol usually appears in both .symtab and .dynsym, possibly
 * once with "@@VER" in its name: keep one entry per base name and address,
 * merging what each table knows.
 */
static size_t dedup(struct dp_elf_sym *v, size_t n)
{
	size_t i, o = 0;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_value_base);
	for (i = 0; i < n; i++) {
		struct dp_elf_sym *k = o ? &v[o - 1] : NULL;

		if (!k || k->value != v[i].value || base_cmp(k, &v[i])) {
			v[o++] = v[i];
			continue;
		}
		if (!k->version && v[i].version)
			k->version = v[i].version;
		if (k->hidden && !v[i].hidden)
			k->hidden = false;
		if (v[i].size > k->size)
			k->size = v[i].size;
		if (sym_rank(&v[i]) > sym_rank(k))
			k->bind = v[i].bind;
		/* show "malloc" rather than "malloc@@GLIBC_2.2.5" */
		if (strchr(k->name, '@') && !strchr(v[i].name, '@'))
			k->name = v[i].name;
	}
	return o;
}

static bool is_func(const struct dp_elf_sym *s)
{
	return s->type == STT_FUNC || s->type == STT_GNU_IFUNC;
}

static uint64_t cover_end(const struct dp_elf_sym *s)
{
	return s->value + (s->size ? s->size : 1);
}

static int build_indexes(struct dp_elf *e)
{
	size_t i;
	uint64_t m = 0;

	e->by_name = malloc((e->nsyms ? e->nsyms : 1) * sizeof(uint32_t));
	e->funcs = malloc((e->nsyms ? e->nsyms : 1) * sizeof(uint32_t));
	e->max_end = malloc((e->nsyms ? e->nsyms : 1) * sizeof(uint64_t));
	if (!e->by_name || !e->funcs || !e->max_end)
		return -ENOMEM;
	for (i = 0; i < e->nsyms; i++) {
		e->by_name[i] = i;
		if (!is_func(&e->syms[i]))
			continue;
		if (cover_end(&e->syms[i]) > m)
			m = cover_end(&e->syms[i]);
		e->max_end[e->nfuncs] = m;
		e->funcs[e->nfuncs++] = i;
	}
	if (e->nsyms)
		qsort_r(e->by_name, e->nsyms, sizeof(uint32_t), cmp_index_name,
			e->syms);
	return 0;
}

#ifndef DP_IN_AGENT
/* The file's .gnu_debuglink name, or NULL. */
static const char *debuglink(struct dp_elf *e)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t shstr;

	if (elf_getshdrstrndx(e->elf, &shstr))
		return NULL;
	while ((scn = elf_nextscn(e->elf, scn))) {
		const char *name;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) ||
		    !(name = elf_strptr(e->elf, shstr, sh.sh_name)) ||
		    strcmp(name, ".gnu_debuglink"))
			continue;
		d = elf_getdata(scn, NULL);
		if (d && d->d_size > 4 && memchr(d->d_buf, '\0', d->d_size))
			return d->d_buf;
	}
	return NULL;
}

/* Whether @d is @e's debug file: the same build-id. */
static bool same_build(const struct dp_elf *e, const struct dp_elf *d)
{
	return d->build_id_len == e->build_id_len &&
	       !memcmp(d->build_id, e->build_id, e->build_id_len);
}

/* Set while a debug file is opened: it never looks for its own. */
static __thread bool opening_debug;

static struct dp_elf *try_debug(struct dp_elf *e, const char *path)
{
	struct dp_elf *d = NULL;
	int err;

	if (access(path, R_OK))
		return NULL;
	opening_debug = true;
	err = dp_elf_open_why(path, &d, NULL, 0);
	opening_debug = false;
	if (err)
		return NULL;
	if (same_build(e, d) && d->nsyms)
		return d;
	dp_elf_close(d);	/* another build's: never trusted */
	return NULL;
}

/*
 * A stripped file's debug file, where Debian's -dbgsym packages and
 * libc6-dbg put it: by build-id under /usr/lib/debug (and under
 * $DPROBE_DEBUG_DIR first), or by .gnu_debuglink next to the file, in
 * .debug/ there, or under /usr/lib/debug.  Only one with the same
 * build-id is taken.
 */
static struct dp_elf *find_debug(struct dp_elf *e)
{
	const char *dirs[] = { getenv("DPROBE_DEBUG_DIR"), "/usr/lib/debug" };
	const char *link;
	char path[PATH_MAX], hex[96], dir[PATH_MAX];
	struct dp_elf *d = NULL;
	size_t k = 0, n;

	if (!e->build_id_len || e->build_id_len * 2 + 1 > sizeof(hex))
		return NULL;
	for (size_t i = 0; i < e->build_id_len; i++)
		k += (size_t)snprintf(hex + k, sizeof(hex) - k, "%02x",
				      e->build_id[i]);
	for (size_t i = 0; i < 2 && !d; i++)
		if (dirs[i] && *dirs[i] &&
		    snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug",
			     dirs[i], hex, hex + 2) < (int)sizeof(path))
			d = try_debug(e, path);
	link = d ? NULL : debuglink(e);
	if (!link || strchr(link, '/'))
		return d;
	n = (size_t)(dp_base_name(e->path) - e->path);
	snprintf(dir, sizeof(dir), "%.*s", (int)n, e->path);
	if (snprintf(path, sizeof(path), "%s%s", dir, link) < (int)sizeof(path))
		d = try_debug(e, path);
	if (!d && snprintf(path, sizeof(path), "%s.debug/%s", dir, link) <
		  (int)sizeof(path))
		d = try_debug(e, path);
	if (!d && dir[0] == '/' &&
	    snprintf(path, sizeof(path), "/usr/lib/debug%s%s", dir, link) <
	    (int)sizeof(path))
		d = try_debug(e, path);
	return d;
}

/* Whether the file carries a section called @name. */
static bool has_section(struct dp_elf *e, const char *name)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t shstr;
	const char *n;

	if (elf_getshdrstrndx(e->elf, &shstr))
		return false;
	while ((scn = elf_nextscn(e->elf, scn)))
		if (gelf_getshdr(scn, &sh) &&
		    (n = elf_strptr(e->elf, shstr, sh.sh_name)) && !strcmp(n, name))
			return true;
	return false;
}

/*
 * MiniDebugInfo (Fedora's and others' .gnu_debugdata): an xz-compressed
 * ELF holding the symbols a stripped file's .dynsym lacks.  libdwfl reads
 * it (elfutils is built with lzma); its names live as long as the Dwfl.
 */
static int minidebug_symbols(struct dp_elf *e, struct symvec *sv)
{
	static char *path;
	static const Dwfl_Callbacks cb = {
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.section_address = dwfl_offline_section_address,
		.debuginfo_path = &path,
	};
	Dwfl *d;
	Dwfl_Module *m;
	int n;

	if (!has_section(e, ".gnu_debugdata") || !(d = dwfl_begin(&cb)))
		return 0;
	m = dwfl_report_offline(d, e->path, e->path, -1);
	dwfl_report_end(d, NULL, NULL);
	n = m ? dwfl_module_getsymtab(m) : -1;
	for (int i = 1; i < n; i++) {
		struct dp_elf_sym ds;
		GElf_Sym s;
		GElf_Addr a;
		const char *name;

		name = dwfl_module_getsym_info(m, i, &s, &a, NULL, NULL, NULL);
		if (!sym_fill(&ds, &s, name, true))
			continue;
		if (symvec_push(sv, &ds)) {
			dwfl_end(d);
			return -ENOMEM;
		}
	}
	e->aux = d;
	return 0;
}

static int debug_symbols(struct dp_elf *e, struct symvec *sv)
{
	if (opening_debug)
		return 0;
	e->debug = find_debug(e);
	if (!e->debug)
		return minidebug_symbols(e, sv);
	for (size_t i = 0; e->debug && i < e->debug->nsyms; i++) {
		struct dp_elf_sym s = e->debug->syms[i];

		s.debug_only = true;
		if (symvec_push(sv, &s))
			return -ENOMEM;
	}
	return 0;
}
#else
/* The agent is handed addresses: it never looks names up. */
static int debug_symbols(struct dp_elf *e, struct symvec *sv)
{
	(void)e;
	(void)sv;
	return 0;
}
#endif

static int load_symbols(struct dp_elf *e)
{
	Elf_Scn *scn = NULL, *dynsym = NULL, *symtab = NULL;
	Elf_Data *versym = NULL;
	struct verdefs vd = { 0 };
	struct symvec sv = { 0 };
	GElf_Shdr sh;
	int ret = 0;

	while ((scn = elf_nextscn(e->elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			symtab = scn;
		else if (sh.sh_type == SHT_DYNSYM)
			dynsym = scn;
		else if (sh.sh_type == SHT_GNU_versym)
			versym = elf_getdata(scn, NULL);
		else if (sh.sh_type == SHT_GNU_verdef)
			load_verdefs(e->elf, scn, sh.sh_link, &vd);
	}
	if (symtab && gelf_getshdr(symtab, &sh))
		ret = read_symtab(e->elf, symtab, &sh, NULL, &vd, &sv);
	else
		ret = debug_symbols(e, &sv);
	if (!ret && dynsym && gelf_getshdr(dynsym, &sh))
		ret = read_symtab(e->elf, dynsym, &sh, versym, &vd, &sv);
	free(vd.name);
	if (ret) {
		free(sv.v);
		return ret;
	}
	sv.n = dedup(sv.v, sv.n);
	if (sv.n)
		qsort(sv.v, sv.n, sizeof(*sv.v), cmp_value_rank);
	e->syms = sv.v;
	e->nsyms = sv.n;
	return build_indexes(e);
}

/* ---- open / close ------------------------------------------------------- */


/*
 * The file's bytes, copied into anonymous memory (private and writable,
 * so that libelf never touches the file).  Never a mapping of the file:
 * a file truncated while it is mapped turns every access past its new
 * end into SIGBUS, and a library may be replaced or truncated under
 * dprobe at any time.  Inside a traced process (libdprobe.so) a file
 * mapping would also show in the process's maps as one more mapping of
 * a loaded object and mislead whoever reads them.  A file that is
 * shorter than fstat() said by the time it is read changed under us: an
 * error for this object, never a signal.
 */
static int file_bytes(int fd, size_t size, uint8_t **out, char *why,
		      size_t whylen)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t done = 0;
	ssize_t n;
	int err;

	if (p == MAP_FAILED) {
		err = errno;
		dp_say(why, whylen, "cannot hold its %zu bytes: %s", size,
			strerror(err));
		return -err;
	}
	while (done < size) {
		n = pread(fd, (char *)p + done, size - done, (off_t)done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n ? errno : EIO;
			munmap(p, size);
			if (n)
				dp_say(why, whylen, "read: %s", strerror(err));
			else
				dp_say(why, whylen, "the file is shorter than "
					"its size said (%zu of %zu bytes): it "
					"changed while it was read", done,
					size);
			return -err;
		}
		done += (size_t)n;
	}
	*out = p;
	return 0;
}

static int map_file(struct dp_elf *e, const char *path, char *why,
		    size_t whylen)
{
	struct stat st;
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		dp_say(why, whylen, "%s", strerror(-ret));
		return ret;
	}
	if (fstat(fd, &st)) {
		ret = -errno;
		dp_say(why, whylen, "%s", strerror(-ret));
	} else if (S_ISDIR(st.st_mode)) {
		ret = -EISDIR;
		dp_say(why, whylen, "is a directory");
	} else if (!S_ISREG(st.st_mode)) {
		ret = -EINVAL;
		dp_say(why, whylen, "not a regular file");
	} else if (st.st_size == 0) {
		ret = -ENOEXEC;
		dp_say(why, whylen, "empty file, not an ELF file");
	} else {
		ret = file_bytes(fd, (size_t)st.st_size, &e->map, why, whylen);
		if (!ret)
			e->size = (size_t)st.st_size;
	}
	close(fd);
	return ret;
}

int dp_elf_open_why(const char *path, struct dp_elf **out, char *why,
		    size_t whylen)
{
	struct dp_elf *e;
	GElf_Ehdr eh;
	int ret;

	*out = NULL;
	dp_say(why, whylen, "%s", "");
	e = calloc(1, sizeof(*e));
	if (!e || !(e->path = strdup(path))) {
		free(e);
		dp_say(why, whylen, "out of memory");
		return -ENOMEM;
	}
	ret = map_file(e, path, why, whylen);
	if (ret)
		goto fail;
	ret = check_header(e->map, e->size, why, whylen);
	if (ret)
		goto fail;
	elf_version(EV_CURRENT);
	e->elf = elf_memory((char *)e->map, e->size);
	if (!e->elf || elf_kind(e->elf) != ELF_K_ELF || !gelf_getehdr(e->elf, &eh)) {
		dp_say(why, whylen, "malformed ELF: %s", elf_errmsg(-1));
		ret = -ENOEXEC;
		goto fail;
	}
	e->pie = eh.e_type == ET_DYN;
	e->entry = eh.e_entry;
	find_build_id(e);
	ret = load_segments(e, why, whylen);
	if (!ret)
		ret = load_sections(e);
	if (!ret)
		ret = load_symbols(e);
	if (ret) {
		if (ret == -ENOMEM)
			dp_say(why, whylen, "out of memory");
		goto fail;
	}
	*out = e;
	return 0;
fail:
	dp_elf_close(e);
	return ret;
}

int dp_elf_open(const char *path, struct dp_elf **out)
{
	return dp_elf_open_why(path, out, last_why, sizeof(last_why));
}

void dp_elf_close(struct dp_elf *e)
{
	if (!e)
		return;
	if (e->elf)
		elf_end(e->elf);
	if (e->map)
		munmap(e->map, e->size);
	dp_elf_close(e->debug);
#ifndef DP_IN_AGENT
	if (e->aux)
		dwfl_end(e->aux);
#endif
	free(e->segs);
	free(e->secs);
	free(e->syms);
	free(e->by_name);
	free(e->funcs);
	free(e->max_end);
	free(e->path);
	free(e);
}

/* ---- accessors ---------------------------------------------------------- */

const char *dp_elf_path(const struct dp_elf *e)
{
	return e->path;
}

const uint8_t *dp_elf_image(const struct dp_elf *e, size_t *size)
{
	*size = e->size;
	return e->map;
}

uint64_t dp_elf_file_size(const struct dp_elf *e)
{
	return e->size;
}

uint64_t dp_elf_entry(const struct dp_elf *e)
{
	return e->entry;
}

bool dp_elf_is_pie(const struct dp_elf *e)
{
	return e->pie;
}

size_t dp_elf_build_id(const struct dp_elf *e, const uint8_t **id)
{
	if (id)
		*id = e->build_id;
	return e->build_id_len;
}

size_t dp_elf_build_id_hex(const struct dp_elf *e, char *buf, size_t len)
{
	size_t i, o = 0;

	if (!len)
		return 0;
	for (i = 0; i < e->build_id_len && o + 3 <= len; i++)
		o += snprintf(buf + o, len - o, "%02x", e->build_id[i]);
	buf[o] = '\0';
	return o;
}

size_t dp_elf_nsegs(const struct dp_elf *e)
{
	return e->nsegs;
}

const struct dp_elf_seg *dp_elf_seg(const struct dp_elf *e, size_t i)
{
	return i < e->nsegs ? &e->segs[i] : NULL;
}

size_t dp_elf_nsecs(const struct dp_elf *e)
{
	return e->nsecs;
}

const struct dp_elf_sec *dp_elf_sec(const struct dp_elf *e, size_t i)
{
	return i < e->nsecs ? &e->secs[i] : NULL;
}

size_t dp_elf_nsyms(const struct dp_elf *e)
{
	return e->nsyms;
}

const struct dp_elf_sym *dp_elf_sym(const struct dp_elf *e, size_t i)
{
	return i < e->nsyms ? &e->syms[i] : NULL;
}

/* ---- lookups by name ---------------------------------------------------- */

struct query {
	const char *base;
	size_t base_len;
	const char *version;	/* NULL: any */
};

static void parse_query(const char *name, struct query *q)
{
	const char *at = strchr(name, '@');

	q->base = name;
	q->base_len = at ? (size_t)(at - name) : strlen(name);
	q->version = at ? at + (at[1] == '@' ? 2 : 1) : NULL;
}

static int query_cmp(const struct query *q, const struct dp_elf_sym *s)
{
	size_t n = q->base_len < s->base_len ? q->base_len : s->base_len;
	int r = memcmp(q->base, s->name, n);

	if (r)
		return r;
	return (q->base_len > s->base_len) - (q->base_len < s->base_len);
}

/* First index in by_name whose base name is not below @q. */
static size_t name_lower_bound(const struct dp_elf *e, const struct query *q)
{
	size_t lo = 0, hi = e->nsyms, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (query_cmp(q, &e->syms[e->by_name[mid]]) > 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Walk the matches of @q: one per address (by_name holds each base name's
 * entries in address order).  With @skip_hidden, addresses whose only
 * names are non-default versions are left out.
 */
static size_t collect_from(const struct dp_elf *e, const struct query *q,
			   bool skip_hidden, bool skip_debug,
			   const struct dp_elf_sym **out, size_t max)
{
	const struct dp_elf_sym *s, *last = NULL;
	size_t i, n = 0;

	for (i = name_lower_bound(e, q); i < e->nsyms; i++) {
		s = &e->syms[e->by_name[i]];
		if (query_cmp(q, s))
			break;
		if (q->version && (!s->version || strcmp(q->version, s->version)))
			continue;
		if ((skip_hidden && s->hidden) || (skip_debug && s->debug_only))
			continue;
		if (last && last->value == s->value) {
			/* another entry at the same address: keep the better */
			if (n <= max && sym_rank(s) > sym_rank(last))
				out[n - 1] = s;
			continue;
		}
		if (n < max)
			out[n] = s;
		n++;
		last = s;
	}
	return n;
}

static size_t collect(const struct dp_elf *e, const struct query *q,
		      bool skip_hidden, const struct dp_elf_sym **out,
		      size_t max)
{
	return collect_from(e, q, skip_hidden, false, out, max);
}

size_t dp_elf_lookup_all(const struct dp_elf *e, const char *name,
			 const struct dp_elf_sym **out, size_t max)
{
	struct query q;

	parse_query(name, &q);
	return collect(e, &q, false, out, max);
}

int dp_elf_lookup(const struct dp_elf *e, const char *name,
		  struct dp_elf_sym *out)
{
	const struct dp_elf_sym *m[2];
	struct query q;
	size_t n;

	parse_query(name, &q);
	n = collect(e, &q, false, m, 2);
	/* the file's own symbol before a debug file's local of the same
	 * name (a name that was unique stays so with the debug file) */
	if (n > 1 && collect_from(e, &q, false, true, m, 2) == 1)
		n = 1;
	if (n > 1) {
		/* libc's memcpy@GLIBC_2.2.5 beside memcpy@@GLIBC_2.14 */
		n = collect_from(e, &q, true, true, m, 2);
		if (n != 1)
			n = collect(e, &q, true, m, 2);
		if (n != 1)
			return -ENOTUNIQ;
	}
	if (!n)
		return -ENOENT;
	if (out)
		*out = *m[0];
	return 0;
}

/* ---- lookups by address ------------------------------------------------- */

/* Index in funcs of the last function symbol with value <= @vaddr, or -1. */
static ssize_t func_floor(const struct dp_elf *e, uint64_t vaddr)
{
	size_t lo = 0, hi = e->nfuncs, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (e->syms[e->funcs[mid]].value <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (ssize_t)lo - 1;
}

const struct dp_elf_sym *dp_elf_sym_at(const struct dp_elf *e, uint64_t vaddr,
				       uint64_t *offset)
{
	const struct dp_elf_sym *s;
	ssize_t k;

	/* max_end bounds the walk: no earlier symbol reaches past it. */
	for (k = func_floor(e, vaddr); k >= 0 && e->max_end[k] > vaddr; k--) {
		s = &e->syms[e->funcs[k]];
		if (vaddr < cover_end(s)) {
			if (offset)
				*offset = vaddr - s->value;
			return s;
		}
	}
	return NULL;
}

uint64_t dp_elf_func_end_before(const struct dp_elf *e, uint64_t vaddr)
{
	const struct dp_elf_sym *s;
	uint64_t best = 0, end;
	ssize_t k;

	for (k = func_floor(e, vaddr); k >= 0 && e->max_end[k] > best; k--) {
		s = &e->syms[e->funcs[k]];
		end = s->value + s->size;
		if (end <= vaddr && end > best)
			best = end;
	}
	return best;
}

/* ---- suggestions -------------------------------------------------------- */

#define SUGGEST_MAX_LEN 128

/* Optimal-string-alignment distance: typos and swapped letters cost 1. */
static unsigned osa_distance(const char *a, size_t n, const char *b, size_t m)
{
	unsigned d[3][SUGGEST_MAX_LEN + 1];
	unsigned *pp, *p, *c, v;
	size_t i, j;

	for (j = 0; j <= m; j++)
		d[0][j] = j;
	for (i = 1; i <= n; i++) {
		/* rows rotate: c is row i, p row i - 1, pp row i - 2 */
		c = d[i % 3];
		p = d[(i + 2) % 3];
		pp = d[(i + 1) % 3];
		c[0] = i;
		for (j = 1; j <= m; j++) {
			v = p[j - 1] + (a[i - 1] != b[j - 1]);
			if (p[j] + 1 < v)
				v = p[j] + 1;
			if (c[j - 1] + 1 < v)
				v = c[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && pp[j - 2] + 1 < v)
				v = pp[j - 2] + 1;
			c[j] = v;
		}
	}
	return d[n % 3][m];
}

struct candidate {
	const char *name;
	unsigned score;
	size_t len;
};

static bool cand_better(const struct candidate *a, const struct candidate *b)
{
	if (a->score != b->score)
		return a->score < b->score;
	if (a->len != b->len)
		return a->len < b->len;
	return strcmp(a->name, b->name) < 0;
}

static void cand_insert(struct candidate *best, size_t *n, size_t max,
			const struct candidate *c)
{
	size_t i;

	for (i = *n; i > 0 && cand_better(c, &best[i - 1]); i--)
		if (i < max)
			best[i] = best[i - 1];
	if (i < max) {
		best[i] = *c;
		if (*n < max)
			(*n)++;
	}
}

size_t dp_elf_suggest(const struct dp_elf *e, const char *name,
		      const char **out, size_t max)
{
	struct candidate best[8], c;
	const struct dp_elf_sym *s, *prev = NULL;
	size_t qlen = strlen(name), i, n = 0;
	unsigned limit = qlen < 5 ? 1 : qlen < 9 ? 2 : 3;

	if (max > 8)
		max = 8;
	if (!qlen || !max)
		return 0;
	for (i = 0; i < e->nsyms; i++) {
		s = &e->syms[e->by_name[i]];
		if (!is_func(s) || (prev && !base_cmp(prev, s)))
			continue;
		prev = s;
		c.name = s->name;
		c.len = s->base_len;
		c.score = UINT_MAX;
		if (qlen >= 3 && c.len > qlen && !memcmp(s->name, name, qlen))
			c.score = 1;	/* "work" for "worker" */
		else if (c.len + limit >= qlen && qlen + limit >= c.len &&
			 qlen <= SUGGEST_MAX_LEN && c.len <= SUGGEST_MAX_LEN)
			c.score = osa_distance(name, qlen, s->name, c.len);
		if (c.score > limit || c.score == 0)
			continue;
		cand_insert(best, &n, max, &c);
	}
	for (i = 0; i < n; i++)
		out[i] = best[i].name;
	return n;
}

/* ---- offsets and addresses ---------------------------------------------- */

static const struct dp_elf_seg *seg_of_off(const struct dp_elf *e,
					   uint64_t off, bool exec)
{
	const struct dp_elf_seg *found = NULL;
	size_t i;

	for (i = 0; i < e->nsegs; i++) {
		const struct dp_elf_seg *s = &e->segs[i];

		if (off < s->offset || off - s->offset >= s->filesz)
			continue;
		if (s->flags & PF_X)
			return s;
		if (!exec && !found)
			found = s;
	}
	return found;
}

static const struct dp_elf_seg *seg_of_vaddr(const struct dp_elf *e,
					     uint64_t vaddr)
{
	size_t i;

	for (i = 0; i < e->nsegs; i++) {
		const struct dp_elf_seg *s = &e->segs[i];

		if (vaddr >= s->vaddr && vaddr - s->vaddr < s->filesz)
			return s;
	}
	return NULL;
}

int dp_elf_off_to_vaddr(const struct dp_elf *e, uint64_t off, uint64_t *vaddr)
{
	const struct dp_elf_seg *s = seg_of_off(e, off, false);

	if (!s)
		return -ENOENT;
	*vaddr = s->vaddr + (off - s->offset);
	return 0;
}

int dp_elf_vaddr_to_off(const struct dp_elf *e, uint64_t vaddr, uint64_t *off)
{
	const struct dp_elf_seg *s = seg_of_vaddr(e, vaddr);

	if (!s)
		return -ENOENT;
	*off = s->offset + (vaddr - s->vaddr);
	return 0;
}

bool dp_elf_off_is_exec(const struct dp_elf *e, uint64_t off)
{
	return off < e->size && seg_of_off(e, off, true);
}

bool dp_elf_vaddr_is_exec(const struct dp_elf *e, uint64_t vaddr)
{
	const struct dp_elf_seg *s = seg_of_vaddr(e, vaddr);

	return s && (s->flags & PF_X);
}

const struct dp_elf_sec *dp_elf_exec_sec_at(const struct dp_elf *e,
					    uint64_t vaddr)
{
	size_t i;

	for (i = 0; i < e->nsecs; i++)
		if (vaddr >= e->secs[i].addr &&
		    vaddr - e->secs[i].addr < e->secs[i].size)
			return &e->secs[i];
	return NULL;
}

const uint8_t *dp_elf_code(const struct dp_elf *e, uint64_t vaddr,
			   size_t *avail)
{
	const struct dp_elf_seg *s = seg_of_vaddr(e, vaddr);

	if (!s)
		return NULL;
	*avail = s->filesz - (vaddr - s->vaddr);
	return e->map + s->offset + (vaddr - s->vaddr);
}

ssize_t dp_elf_read(const struct dp_elf *e, uint64_t vaddr, void *buf,
		    size_t len)
{
	size_t avail;
	const uint8_t *p = dp_elf_code(e, vaddr, &avail);

	if (!p)
		return -EFAULT;
	if (len > avail)
		len = avail;
	memcpy(buf, p, len);
	return len;
}

const uint8_t *dp_elf_section(const struct dp_elf *e, const char *name,
			      struct dp_elf_sec *sec)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	const char *n;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(e->elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(e->elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		n = elf_strptr(e->elf, shstrndx, sh.sh_name);
		if (!n || strcmp(n, name))
			continue;
		if (sh.sh_offset > e->size || sh.sh_size > e->size - sh.sh_offset)
			return NULL;
		sec->name = n;
		sec->addr = sh.sh_addr;
		sec->size = sh.sh_size;
		sec->offset = sh.sh_offset;
		return e->map + sh.sh_offset;
	}
	return NULL;
}

bool dp_elf_is_dynamic(const struct dp_elf *e)
{
	size_t n;
	GElf_Phdr ph;

	if (elf_getphdrnum(e->elf, &n))
		return false;
	for (size_t i = 0; i < n; i++)
		if (gelf_getphdr(e->elf, (int)i, &ph) &&
		    (ph.p_type == PT_INTERP || ph.p_type == PT_DYNAMIC))
			return true;
	return false;
}

int dp_elf_interp(const struct dp_elf *e, char *buf, size_t len)
{
	size_t n;
	GElf_Phdr ph;

	if (elf_getphdrnum(e->elf, &n))
		return -ENOENT;
	for (size_t i = 0; i < n; i++) {
		if (!gelf_getphdr(e->elf, (int)i, &ph) || ph.p_type != PT_INTERP)
			continue;
		if (ph.p_offset >= e->size || ph.p_filesz > e->size - ph.p_offset ||
		    !ph.p_filesz || ph.p_filesz > len)
			return -ENOENT;
		memcpy(buf, e->map + ph.p_offset, ph.p_filesz);
		buf[ph.p_filesz - 1] = '\0';
		return 0;
	}
	return -ENOENT;
}
