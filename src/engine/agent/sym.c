// SPDX-License-Identifier: GPL-2.0
/*
 * Symbols of the loaded objects.  dl_iterate_phdr() lists the main
 * program and every library with its load bias; each file is opened once
 * with the ELF reader of the dprobe core (.symtab when present, .dynsym
 * otherwise), so static functions are found too, not only what dlsym()
 * sees.  "LIB:SYM" restricts the search to the object whose file name or
 * soname is LIB, as dprobe's MOD:SYM does; a bare SYM is searched in the
 * main program first, then the libraries in load order.
 *
 * Everything here runs under the registration mutex.
 */
#include <errno.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "engine/agent/agent.h"
#include "sym/elf.h"
#include "util/util.h"

#define MAX_EXEC 8

struct obj {
	char *path;
	char *soname;
	uint64_t bias;
	struct dp_elf *elf;		/* NULL when the file cannot be read */
	bool main, vdso, self;
	int nexec;
	struct { uint64_t lo, hi; } exec[MAX_EXEC];	/* run-time ranges */
};

static struct obj **objs;
static size_t nobjs;
static unsigned long long last_gen = ~0ull;

/* What the dl_iterate_phdr callback saw, copied out of the loader lock. */
struct seen {
	struct obj o;
	const ElfW(Phdr) *phdr;
	int phnum;
};

struct scan {
	struct seen *v;
	size_t n, cap;
	unsigned long long gen;
	uint64_t vdso;
};

static int scan_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct scan *sc = data;
	struct seen *s;

	(void)size;
	sc->gen = info->dlpi_adds * 1000003ull + info->dlpi_subs;
	if (sc->n == sc->cap) {
		size_t cap = sc->cap ? 2 * sc->cap : 32;
		struct seen *v = realloc(sc->v, cap * sizeof(*v));

		if (!v)
			return 1;
		sc->v = v;
		sc->cap = cap;
	}
	s = &sc->v[sc->n];
	memset(s, 0, sizeof(*s));
	s->o.main = sc->n == 0;
	s->o.bias = info->dlpi_addr;
	s->o.path = strdup(info->dlpi_name ? info->dlpi_name : "");
	if (!s->o.path)
		return 1;
	s->phdr = info->dlpi_phdr;
	s->phnum = info->dlpi_phnum;
	sc->n++;
	return 0;
}

/* The soname from the object's dynamic section in memory. */
static char *read_soname(const struct seen *s)
{
	const ElfW(Dyn) *d = NULL;
	uint64_t strtab = 0, soname = UINT64_MAX;

	for (int i = 0; i < s->phnum; i++)
		if (s->phdr[i].p_type == PT_DYNAMIC)
			d = (const void *)(uintptr_t)(s->o.bias + s->phdr[i].p_vaddr);
	for (; d && d->d_tag != DT_NULL; d++) {
		if (d->d_tag == DT_STRTAB)
			strtab = d->d_un.d_ptr;
		else if (d->d_tag == DT_SONAME)
			soname = d->d_un.d_val;
	}
	if (!strtab || soname == UINT64_MAX)
		return NULL;
	/* ld.so relocates d_ptr in place for libraries, not always */
	if (strtab < s->o.bias)
		strtab += s->o.bias;
	return strdup((const char *)(uintptr_t)(strtab + soname));
}

static void obj_free(struct obj *o)
{
	if (!o)
		return;
	if (o->elf)
		dp_elf_close(o->elf);
	free(o->path);
	free(o->soname);
	free(o);
}

static struct obj *obj_make(struct seen *s, uint64_t vdso)
{
	struct obj *o = malloc(sizeof(*o));
	char exe[4096];
	ssize_t n;

	if (!o)
		return NULL;
	*o = s->o;
	s->o.path = NULL;
	for (int i = 0; i < s->phnum && o->nexec < MAX_EXEC; i++) {
		const ElfW(Phdr) *ph = &s->phdr[i];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		o->exec[o->nexec].lo = o->bias + ph->p_vaddr;
		o->exec[o->nexec].hi = o->bias + ph->p_vaddr + ph->p_memsz;
		o->nexec++;
	}
	o->vdso = vdso && o->bias == vdso;
	o->self = o->nexec && dp_in_self(o->exec[0].lo);
	if (o->main && !o->path[0]) {
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n > 0) {
			exe[n] = '\0';
			free(o->path);
			o->path = strdup(exe);
			if (!o->path) {
				free(o);
				return NULL;
			}
		}
	}
	if (!o->vdso) {
		o->soname = read_soname(s);
		if (o->path[0])
			dp_elf_open(o->path, &o->elf);
	}
	return o;
}

/* Take an object of the previous list that is still loaded, if any. */
static struct obj *obj_reuse(const struct seen *s)
{
	for (size_t i = 0; i < nobjs; i++) {
		struct obj *o = objs[i];

		if (o && o->bias == s->o.bias && o->main == s->o.main &&
		    (o->main || !strcmp(o->path, s->o.path))) {
			objs[i] = NULL;
			return o;
		}
	}
	return NULL;
}

static int refresh(void)
{
	struct scan sc = { 0 };
	struct obj **v;
	int err = 0;

	sc.vdso = getauxval(AT_SYSINFO_EHDR);
	dl_iterate_phdr(scan_cb, &sc);
	if (sc.gen == last_gen && sc.n == nobjs)
		goto out;
	v = calloc(sc.n ? sc.n : 1, sizeof(*v));
	if (!v) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < sc.n; i++) {
		v[i] = obj_reuse(&sc.v[i]);
		if (!v[i])
			v[i] = obj_make(&sc.v[i], sc.vdso);
	}
	for (size_t i = 0; i < nobjs; i++)
		obj_free(objs[i]);
	free(objs);
	objs = v;
	nobjs = sc.n;
	last_gen = sc.gen;
out:
	for (size_t i = 0; i < sc.n; i++)
		free(sc.v[i].o.path);
	free(sc.v);
	return err;
}

static bool obj_named(const struct obj *o, const char *lib, size_t len)
{
	const char *b = dp_base_name(o->path);

	return (strlen(b) == len && !strncmp(b, lib, len)) ||
	       (o->soname && strlen(o->soname) == len &&
		!strncmp(o->soname, lib, len));
}

/* Look @name up in every object it may name; calls @fn for each hit. */
static int lookup(const char *name, int (*fn)(void *, uint64_t), void *priv)
{
	const char *colon = strchr(name, ':'), *sym = name;
	struct dp_elf_sym s;
	int ret = -ENOENT, r;

	if (refresh())
		return -ENOMEM;
	if (colon)
		sym = colon + 1;
	if (!*sym)
		return -EINVAL;
	for (size_t i = 0; i < nobjs; i++) {
		struct obj *o = objs[i];

		if (!o || !o->elf || o->vdso)
			continue;
		if (colon && !obj_named(o, name, (size_t)(colon - name)))
			continue;
		r = dp_elf_lookup(o->elf, sym, &s);
		if (r == -ENOTUNIQ) {
			ret = -EADDRNOTAVAIL;
			continue;
		}
		if (r)
			continue;
		ret = fn(priv, o->bias + s.value);
		if (ret <= 0)
			return ret;
	}
	return ret > 0 ? 0 : ret;
}

static int first_cb(void *priv, uint64_t addr)
{
	*(uint64_t *)priv = addr;
	return 0;
}

int dp_sym_lookup(const char *name, uint64_t *addr)
{
	return lookup(name, first_cb, addr);
}

struct all {
	uint64_t *v;
	int n, max;
};

static int all_cb(void *priv, uint64_t addr)
{
	struct all *a = priv;

	if (a->n < a->max)
		a->v[a->n++] = addr;
	return 1;
}

int dp_sym_lookup_all(const char *name, uint64_t *addrs, int max)
{
	struct all a = { addrs, 0, max };

	lookup(name, all_cb, &a);
	return a.n;
}

static const struct obj *obj_at(uint64_t addr, uint64_t *hi)
{
	for (size_t i = 0; i < nobjs; i++) {
		const struct obj *o = objs[i];

		for (int k = 0; o && k < o->nexec; k++) {
			if (addr >= o->exec[k].lo && addr < o->exec[k].hi) {
				*hi = o->exec[k].hi;
				return o;
			}
		}
	}
	return NULL;
}

/*
 * A known instruction start before @addr, as dprobe's resolver picks it:
 * the function symbol containing it, else the end of the previous
 * function in the same executable section, else the section's start.
 */
int dp_sym_code_range(uint64_t addr, struct dp_code_range *r)
{
	const struct dp_elf_sym *sym;
	const struct dp_elf_sec *sec;
	const struct obj *o;
	uint64_t vaddr, end;

	if (refresh())
		return -ENOMEM;
	memset(r, 0, sizeof(*r));
	o = obj_at(addr, &r->end);
	if (!o || o->vdso || o->self || dp_in_self(addr))
		return -EINVAL;
	if (!o->elf)
		return -EILSEQ;
	vaddr = addr - o->bias;
	sym = dp_elf_sym_at(o->elf, vaddr, NULL);
	if (sym) {
		r->start = o->bias + sym->value;
		r->func_entry = sym->value == vaddr;
		return 0;
	}
	sec = dp_elf_exec_sec_at(o->elf, vaddr);
	if (!sec)
		return dp_elf_nsecs(o->elf) ? -EINVAL : -EILSEQ;
	end = dp_elf_func_end_before(o->elf, vaddr);
	r->start = o->bias + (end > sec->addr ? end : sec->addr);
	return 0;
}

int dp_sym_func_bounds(uint64_t addr, uint64_t *start, uint64_t *size)
{
	const struct dp_elf_sym *sym;
	const struct obj *o;
	uint64_t end;

	if (refresh())
		return -ENOMEM;
	o = obj_at(addr, &end);
	if (!o || o->vdso || o->self || !o->elf)
		return -ENOENT;
	sym = dp_elf_sym_at(o->elf, addr - o->bias, NULL);
	if (!sym || !sym->size || o->bias + sym->value + sym->size > end ||
	    addr - (o->bias + sym->value) >= sym->size)
		return -ENOENT;
	*start = o->bias + sym->value;
	*size = sym->size;
	return 0;
}

size_t dp_sym_func_pad(uint64_t end, size_t max)
{
	const struct obj *o;
	uint64_t hi;
	size_t n = 0;

	if (refresh())
		return 0;
	o = obj_at(end, &hi);
	if (!o || o->vdso || o->self || !o->elf)
		return 0;
	while (n < max && end + n < hi &&
	       !dp_elf_sym_at(o->elf, end + n - o->bias, NULL))
		n++;
	return n;
}

bool dp_sym_uncovered(uint64_t lo, uint64_t hi)
{
	return lo < hi && dp_sym_func_pad(lo, hi - lo) == hi - lo;
}
