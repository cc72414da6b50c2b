// SPDX-License-Identifier: GPL-2.0
/*
 * available_filter_functions: the functions of the target a probe can be
 * placed on (what `dprobe list -p` shows), one per line in address order,
 * as the kernel lists its own: "name" for the executable, "name [module]"
 * for a library, as a module's functions are shown.
 */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "fs/internal.h"
#include "sym/elf.h"
#include "sym/proc.h"

static int by_addr(const void *a, const void *b)
{
	const struct dp_elf_sym *x = *(const struct dp_elf_sym *const *)a;
	const struct dp_elf_sym *y = *(const struct dp_elf_sym *const *)b;

	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void list_object(const struct dp_proc_obj *o, FILE *out)
{
	const char *base = strrchr(o->path, '/');
	size_t n = dp_elf_nsyms(o->elf), k = 0;
	const struct dp_elf_sym **v = calloc(n ? n : 1, sizeof(*v));

	if (!v)
		return;
	base = base ? base + 1 : o->path;
	for (size_t i = 0; i < n; i++) {
		const struct dp_elf_sym *s = dp_elf_sym(o->elf, i);

		if ((s->type == STT_FUNC || s->type == STT_GNU_IFUNC) && s->size)
			v[k++] = s;
	}
	qsort(v, k, sizeof(*v), by_addr);
	for (size_t i = 0; i < k; i++) {
		fprintf(out, "%.*s", (int)v[i]->base_len, v[i]->name);
		if (v[i]->hidden && v[i]->version)
			fprintf(out, "@%s", v[i]->version);
		if (o->main)
			fputc('\n', out);
		else
			fprintf(out, " [%s]\n", base);
	}
	free(v);
}

void dp_fs_list_functions(struct dp_fs *fs, FILE *out)
{
	const struct dp_proc_objs *s;
	struct dp_proc *p;
	char why[256];

	if (atomic_load(&fs->target_gone) ||
	    dp_proc_open(fs->o->pid, &p, why, sizeof(why)))
		return;
	s = dp_proc_objs(p);
	/* the executable first, then the libraries in map order */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < s->n; i++)
			if (s->v[i].elf && s->v[i].main == !pass)
				list_object(&s->v[i], out);
	dp_proc_close(p);
}
