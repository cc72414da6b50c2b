/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Definition-time resolution of probe places, run by the event registry on
 * every parsed definition (struct dp_registry.resolve): the kernel's own
 * checks (the uprobe file exists and is regular; a kprobe symbol exists,
 * is unique, a return probe sits at function entry, the probe point is an
 * instruction boundary) plus dprobe's (an x86-64 ELF, an offset inside an
 * executable segment, on an instruction boundary for uprobes too).
 */
#ifndef DPROBE_SYM_RESOLVE_H
#define DPROBE_SYM_RESOLVE_H

#include <stdbool.h>

#include "event/event.h"
#include "lang/errors.h"
#include "lang/lang.h"
#include "sym/elf.h"

struct dp_resolver_file;

struct dp_resolver {
	/*
	 * -x BINARY: where kprobe places without MOD: (and MOD: naming its
	 * basename) are looked up.  NULL: such places get syntax checks only.
	 */
	const char *default_binary;
	/* Only what the kernel checks at definition time; no ELF is read. */
	bool no_elf;
	/* Files opened so far, by device and inode. */
	struct dp_resolver_file *cache;
};

void dp_resolver_init(struct dp_resolver *r, const char *default_binary,
		      bool no_elf);
void dp_resolver_free(struct dp_resolver *r);

/*
 * Open @path through the cache.  Returns 0 with *@elf set (owned by the
 * resolver), or -errno as dp_elf_open() does, with the reason in @why.
 */
int dp_resolver_open(struct dp_resolver *r, const char *path,
		     struct dp_elf **elf, char *why, size_t whylen);

/*
 * The registry's resolve callback; @priv is a struct dp_resolver.  Returns
 * 0 with probe->file_offset and probe->vaddr filled where they are known
 * (@probe may be NULL), or -errno with @err (may be NULL) positioned on
 * @line as the kernel's error_log would.
 */
int dp_resolve_cb(void *priv, const char *line, struct dp_probe_def *def,
		  struct dp_probe *probe, struct dp_error *err);

/*
 * The file a place's MOD: names in a program: @mod itself if it is a
 * path, else @binary or the first of the @nobjs @objs (the program's
 * loaded objects) whose base name is @mod.  @mod NULL: @binary.  NULL if
 * none matches.
 */
const char *dp_module_file(const char *binary, char *const *objs,
			   size_t nobjs, const char *mod);

#endif
