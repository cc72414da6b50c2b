// SPDX-License-Identifier: GPL-2.0
/*
 * Symbols for the places the kernel reports.  A uprobe record carries a
 * run-time address; the process may be gone by the time it is read (a
 * short command has exited long before its buffer is drained), so where
 * each object is loaded is learnt from the records themselves: a probe
 * whose link-time address is known and whose hit address is reported
 * gives its object's load bias in that process.  The live process's maps
 * are the fallback for addresses in other objects.  Kernel addresses
 * (--kernel) are looked up in /proc/kallsyms.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/kernel/internal.h"
#include "sym/elf.h"
#include "sym/proc.h"

struct kfile {
	char *path;
	struct dp_elf *elf;	/* NULL if it could not be read */
};

struct kload {			/* @file loaded at @bias in @tgid */
	pid_t tgid;
	size_t file;
	uint64_t bias;
};

struct kproc {
	pid_t tgid;
	struct dp_proc *proc;	/* NULL: could not be opened */
};

struct kallsym {
	uint64_t addr;
	char *name;
};

struct dp_ksym {
	bool kernel;
	struct kfile *files;
	size_t nfiles;
	struct kload *loads;
	size_t nloads;
	struct kproc *procs;
	size_t nprocs;
	struct kallsym *ks;
	size_t nks;
	bool ks_read;
	pid_t cur;
	char name[256];
};

struct dp_ksym *dp_ksym_new(bool kernel)
{
	struct dp_ksym *s = calloc(1, sizeof(*s));

	if (s)
		s->kernel = kernel;
	return s;
}

void dp_ksym_free(struct dp_ksym *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nfiles; i++) {
		if (s->files[i].elf)
			dp_elf_close(s->files[i].elf);
		free(s->files[i].path);
	}
	for (size_t i = 0; i < s->nprocs; i++)
		if (s->procs[i].proc)
			dp_proc_close(s->procs[i].proc);
	for (size_t i = 0; i < s->nks; i++)
		free(s->ks[i].name);
	free(s->files);
	free(s->loads);
	free(s->procs);
	free(s->ks);
	free(s);
}

static ssize_t file_index(struct dp_ksym *s, const char *path)
{
	struct kfile *v;

	for (size_t i = 0; i < s->nfiles; i++)
		if (!strcmp(s->files[i].path, path))
			return (ssize_t)i;
	v = realloc(s->files, (s->nfiles + 1) * sizeof(*v));
	if (!v)
		return -1;
	s->files = v;
	v[s->nfiles].path = strdup(path);
	v[s->nfiles].elf = NULL;
	if (!v[s->nfiles].path)
		return -1;
	if (dp_elf_open(path, &v[s->nfiles].elf))
		v[s->nfiles].elf = NULL;
	return (ssize_t)s->nfiles++;
}

void dp_ksym_learn(struct dp_ksym *s, pid_t tgid, const char *path,
		   uint64_t vaddr, uint64_t addr)
{
	ssize_t f;
	struct kload *v;

	if (!path || !vaddr || !addr)
		return;
	f = file_index(s, path);
	if (f < 0)
		return;
	/* the latest load wins: after an exec the object moves */
	for (size_t i = 0; i < s->nloads; i++) {
		if (s->loads[i].tgid == tgid && s->loads[i].file == (size_t)f) {
			s->loads[i].bias = addr - vaddr;
			return;
		}
	}
	v = realloc(s->loads, (s->nloads + 1) * sizeof(*v));
	if (!v)
		return;
	s->loads = v;
	v[s->nloads++] = (struct kload){ tgid, (size_t)f, addr - vaddr };
}

static int ks_cmp(const void *pa, const void *pb)
{
	const struct kallsym *a = pa, *b = pb;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

/* /proc/kallsyms' text symbols, sorted (module names dropped). */
static void read_kallsyms(struct dp_ksym *s)
{
	char line[512], name[256], type;
	unsigned long long addr;
	size_t cap = 0;
	FILE *f;

	s->ks_read = true;
	f = fopen("/proc/kallsyms", "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		struct kallsym *v;

		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3 ||
		    !addr || (type != 't' && type != 'T'))
			continue;
		if (s->nks == cap) {
			cap = cap ? 2 * cap : 65536;
			v = realloc(s->ks, cap * sizeof(*v));
			if (!v)
				break;
			s->ks = v;
		}
		s->ks[s->nks].addr = addr;
		s->ks[s->nks].name = strdup(name);
		if (s->ks[s->nks].name)
			s->nks++;
	}
	fclose(f);
	if (s->nks)
		qsort(s->ks, s->nks, sizeof(*s->ks), ks_cmp);
}

/* The kernel's %pS: size up to the next symbol. */
static int kernel_lookup(struct dp_ksym *s, uint64_t addr, const char **sym,
			 uint64_t *off, uint64_t *size)
{
	size_t lo = 0, hi;

	if (!s->ks_read)
		read_kallsyms(s);
	hi = s->nks;
	if (!hi || addr < s->ks[0].addr)
		return -1;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->ks[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	if (lo + 1 == s->nks)
		return -1;
	*sym = s->ks[lo].name;
	*off = addr - s->ks[lo].addr;
	*size = s->ks[lo + 1].addr - s->ks[lo].addr;
	return 0;
}

static int elf_lookup(struct dp_ksym *s, const struct dp_elf *elf,
		      uint64_t vaddr, const char **sym, uint64_t *off,
		      uint64_t *size)
{
	const struct dp_elf_sym *es;

	if (!elf || !dp_elf_vaddr_is_exec(elf, vaddr))
		return -1;
	es = dp_elf_sym_at(elf, vaddr, off);
	if (!es)
		return -1;
	snprintf(s->name, sizeof(s->name), "%.*s", (int)es->base_len, es->name);
	*sym = s->name;
	*size = es->size;
	return 0;
}

static struct dp_proc *proc_of(struct dp_ksym *s, pid_t tgid)
{
	struct kproc *v;
	char why[160];

	for (size_t i = 0; i < s->nprocs; i++)
		if (s->procs[i].tgid == tgid)
			return s->procs[i].proc;
	v = realloc(s->procs, (s->nprocs + 1) * sizeof(*v));
	if (!v)
		return NULL;
	s->procs = v;
	v[s->nprocs].tgid = tgid;
	if (tgid <= 0 || dp_proc_open(tgid, &v[s->nprocs].proc, why, sizeof(why)))
		v[s->nprocs].proc = NULL;
	return v[s->nprocs++].proc;
}

static int lookup(void *priv, uint64_t addr, const char **sym, uint64_t *off,
		  uint64_t *size)
{
	struct dp_ksym *s = priv;
	struct dp_proc_sym ps;
	struct dp_proc *p;

	if (s->kernel && addr >= 0xffff800000000000ULL)
		return kernel_lookup(s, addr, sym, off, size);
	for (size_t i = 0; i < s->nloads; i++) {
		const struct kload *l = &s->loads[i];

		if (l->tgid == s->cur &&
		    !elf_lookup(s, s->files[l->file].elf, addr - l->bias, sym,
				off, size))
			return 0;
	}
	p = proc_of(s, s->cur);
	if (!p || dp_proc_symbolize(p, addr, &ps) || !ps.name)
		return -1;
	*sym = ps.name;
	*off = ps.off;
	*size = ps.size;
	return 0;
}

void dp_ksym_symbolizer(struct dp_ksym *s, pid_t tgid,
			struct dp_symbolizer *out)
{
	s->cur = tgid;
	out->lookup = lookup;
	out->priv = s;
}
