/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Run-time addresses in a live process: its memory map, the ELF objects it
 * has loaded (with their load bias), probe places resolved to the
 * addresses where their instructions are mapped, a symbolizer for
 * addresses seen at run time, and where the dynamic linker reports
 * dlopen()/dlclose().  Reads /proc and the target's memory only; never
 * stops or modifies the target.
 *
 * Files are opened through /proc/PID/root when the target has another
 * root (a container), and through /proc/PID/map_files when the mapped
 * file is no longer the one at its path (deleted or replaced).
 */
#ifndef DPROBE_SYM_PROC_H
#define DPROBE_SYM_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lang/errors.h"
#include "lang/lang.h"
#include "event/sink.h"
#include "sym/elf.h"

/* ---- /proc/PID/maps ----------------------------------------------------- */

#define DP_MAP_R	0x1
#define DP_MAP_W	0x2
#define DP_MAP_X	0x4
#define DP_MAP_SHARED	0x8	/* 's' rather than 'p' */

struct dp_map {
	uint64_t start, end;	/* [start, end) */
	uint64_t offset;	/* file offset of start */
	uint64_t dev;		/* makedev(major, minor), as stat's st_dev */
	uint64_t ino;		/* 0 for anonymous and special mappings */
	unsigned perms;		/* DP_MAP_* */
	bool deleted;		/* the path ended in " (deleted)" */
	char *path;		/* "" if anonymous; "[stack]", "[vdso]", ...;
				 * a file's path without " (deleted)" */
};

struct dp_maps {
	struct dp_map *v;	/* in address order, as the kernel lists them */
	size_t n;
};

/*
 * Parse the text of a maps file (@len bytes, need not end in NUL).
 * Returns 0, -ENOMEM, or -EINVAL for a malformed line (*@out is then
 * empty).
 */
int dp_maps_parse(const char *text, size_t len, struct dp_maps *out);
/* Read and parse /proc/@pid/maps: 0, -ESRCH, -EACCES, ... with @why. */
int dp_maps_read(pid_t pid, struct dp_maps *out, char *why, size_t whylen);
void dp_maps_free(struct dp_maps *m);
/* The mapping containing @addr, or NULL. */
const struct dp_map *dp_maps_find(const struct dp_maps *m, uint64_t addr);

/* ---- loaded objects ----------------------------------------------------- */

/*
 * One load of an ELF file with code mapped in the process: the main
 * executable, the dynamic linker, each shared library (a library loaded
 * into two link-map namespaces is two objects with the same dev and ino).
 * [vdso] is not a file and is not listed.
 */
struct dp_proc_obj {
	uint64_t dev, ino;	/* identity, as in maps */
	const char *path;	/* the path the target maps it by */
	const char *open_path;	/* how dprobe opened it (NULL if it failed) */
	const char *soname;	/* DT_SONAME, NULL if none */
	bool main;		/* /proc/PID/exe */
	bool interp;		/* the dynamic linker (AT_BASE) */
	bool deleted;
	uint64_t start, end;	/* lowest and highest address mapped */
	uint64_t bias;		/* run-time address = link-time + bias */
	struct dp_elf *elf;	/* NULL if the file could not be read */
	int err;		/* then -errno ... */
	const char *why;	/* ... and why ("" otherwise) */
};

/* The objects of one reading of the maps, in address order. */
struct dp_proc_objs {
	struct dp_proc_obj *v;
	size_t n;
	struct dp_maps maps;	/* the reading they come from */
	size_t *map_obj;	/* per mapping: its object index, or SIZE_MAX */
};

/*
 * A traced process as seen from outside: the current object set plus a
 * cache of opened ELF files (by device and inode) that lives as long as
 * the struct, so that re-reading the maps after a dlopen() costs little.
 */
struct dp_proc;

/*
 * Read the maps of process @pid and its objects.  Returns 0, or -ESRCH
 * (no such process), -EACCES / -EPERM (not allowed to read it), -EINVAL
 * (@pid <= 0), -ENOMEM, with a human reason in @why.
 */
int dp_proc_open(pid_t pid, struct dp_proc **out, char *why, size_t whylen);
void dp_proc_close(struct dp_proc *p);
pid_t dp_proc_pid(const struct dp_proc *p);

/* The current object set; valid until the next dp_proc_refresh(). */
const struct dp_proc_objs *dp_proc_objs(const struct dp_proc *p);

/*
 * Read the maps again (after a dlopen/dlclose/exec).  If @old is not
 * NULL the previous set is handed to the caller (free it with
 * dp_proc_objs_free(), before dp_proc_close(): its ELF files and sonames
 * belong to @p) so that it can be compared with the new one; otherwise it
 * is freed.  On error the current set is left as it was.
 */
int dp_proc_refresh(struct dp_proc *p, struct dp_proc_objs **old, char *why,
		    size_t whylen);
void dp_proc_objs_free(struct dp_proc_objs *s);

/* The object whose mappings contain @addr, or NULL. */
const struct dp_proc_obj *dp_proc_obj_at(const struct dp_proc_objs *s,
					 uint64_t addr);
/* The main executable's object, or NULL (a process that is exiting). */
const struct dp_proc_obj *dp_proc_main(const struct dp_proc_objs *s);

/*
 * Which objects of @new were not in @old and which of @old are not in
 * @new; an object is the same when its file (dev, ino) is loaded at the
 * same bias.  The arrays point into @old and @new.
 */
struct dp_proc_diff {
	const struct dp_proc_obj **added;	/* in @new */
	size_t nadded;
	const struct dp_proc_obj **removed;	/* in @old */
	size_t nremoved;
};
int dp_proc_objs_diff(const struct dp_proc_objs *old,
		      const struct dp_proc_objs *new,
		      struct dp_proc_diff *d);
void dp_proc_diff_free(struct dp_proc_diff *d);

/*
 * Run-time address of file offset @off of @o (one of @s's objects), in an
 * executable mapping of it, or a writable one if @writable (a uprobe's
 * reference counter): 0, or -ENOENT if no such mapping holds @off.
 */
int dp_proc_obj_off_to_addr(const struct dp_proc_objs *s,
			    const struct dp_proc_obj *o, uint64_t off,
			    bool writable, uint64_t *addr);

/* ---- probe places ------------------------------------------------------- */

/* Where one probe goes in the process. */
struct dp_proc_loc {
	const struct dp_proc_obj *obj;	/* in the current set */
	uint64_t addr;		/* run-time address of the instruction */
	uint64_t vaddr;		/* its link-time address */
	uint64_t file_offset;	/* its offset in the file */
	uint64_t ref_ctr_addr;	/* run-time address of (REF), 0 if none */
};

struct dp_proc_res {
	/*
	 * The object the place names is not mapped (yet): not an error, the
	 * probe is armed when it appears.  @why says what is awaited.
	 */
	bool pending;
	char why[160];
	size_t n;		/* one location per load of the object */
	struct dp_proc_loc *loc;
};

/*
 * Resolve @def's place in the current object set:
 *   PATH:OFFSET      the objects whose file is PATH (same device and
 *                    inode, PATH looked up here and in the target's root),
 *                    at the address where OFFSET is mapped;
 *   [MOD:]SYM[+offs] MOD absent: the main executable; a path: that file;
 *                    otherwise the object whose path's basename or whose
 *                    DT_SONAME is MOD ("libc.so.6"); several different
 *                    files answering to MOD is an error naming them;
 *   MEMADDR          a run-time address inside an object's code.
 * Symbols, offsets and instruction boundaries are checked against the
 * file as dp_resolve_cb() does.  @line is the definition as written, for
 * the caret of an error (NULL: its canonical form).  Returns 0 with @res
 * filled (res->pending, or res->n >= 1 locations; free it with
 * dp_proc_res_free()), or -errno with @err (may be NULL) filled.  The
 * locations point into the current set: valid until the next refresh.
 */
int dp_proc_resolve(struct dp_proc *p, const char *line,
		    const struct dp_probe_def *def, struct dp_proc_res *res,
		    struct dp_error *err);
void dp_proc_res_free(struct dp_proc_res *res);

/*
 * Whether @def's place names object @o (same test as dp_proc_resolve(),
 * without resolving the symbol): when @o appears or disappears, the
 * probes it names are the ones to re-resolve.
 */
bool dp_proc_names_obj(struct dp_proc *p, const struct dp_probe_def *def,
		       const struct dp_proc_obj *o);

/*
 * Run-time address of "[MOD:]SYM[+|-offs]" (the text of an @SYM fetch
 * argument; without MOD the main executable).  0, -ENOENT (no such symbol,
 * or MOD not mapped), -ENOTUNIQ (MOD ambiguous), with @why.
 */
int dp_proc_sym_addr(struct dp_proc *p, const char *text, uint64_t *addr,
		     char *why, size_t whylen);

/* ---- symbolizing -------------------------------------------------------- */

struct dp_proc_sym {
	const struct dp_proc_obj *obj;
	const char *name;	/* without "@VERSION"; NULL if no symbol */
	uint64_t off, size;	/* @addr - symbol start; symbol size */
	bool ifunc;		/* STT_GNU_IFUNC: the code is its resolver */
};

/*
 * The object and function symbol containing run-time address @addr.
 * Returns 0 (out->name NULL when the object has no symbol there), or
 * -ENOENT when no object contains @addr.
 */
int dp_proc_symbolize(struct dp_proc *p, uint64_t addr,
		      struct dp_proc_sym *out);
/* A struct dp_symbolizer over the current object set of @p. */
/* The same in an object set of @p's that dp_proc_refresh() handed back
 * (kept, not freed): records read after a dlclose() name their symbols. */
int dp_proc_symbolize_in(struct dp_proc *p, const struct dp_proc_objs *objs,
			 uint64_t addr, struct dp_proc_sym *out);
void dp_proc_symbolizer(struct dp_proc *p, struct dp_symbolizer *s);

/* ---- the dynamic linker's rendezvous ------------------------------------ */

/*
 * Run-time address of the function the dynamic linker calls before and
 * after each change to the list of loaded objects (glibc's
 * _dl_debug_state, the r_brk of struct r_debug): a breakpoint there sees
 * every dlopen() and dlclose().  Taken from the dynamic linker's symbols,
 * which works as soon as it is mapped (at exec); else from r_debug.r_brk
 * through the main executable's DT_DEBUG, which the linker fills in when
 * it starts.  Returns 0, -ENOENT (a static executable), -EAGAIN (r_debug
 * not set up yet and no symbol), -ESRCH ...
 */
int dp_proc_dl_breakpoint(pid_t pid, uint64_t *addr);
int dp_proc_dl_brk(struct dp_proc *p, uint64_t *addr, char *why,
		   size_t whylen);
/*
 * The address of the target's struct r_debug, from DT_DEBUG in the main
 * executable's dynamic section (read in the target's memory): r_state
 * tells whether the link map is consistent at a breakpoint hit.  0,
 * -ENOENT (no dynamic section or no DT_DEBUG), -EAGAIN (not filled in
 * yet), -errno of a memory read.
 */
int dp_proc_r_debug(struct dp_proc *p, uint64_t *addr, char *why,
		    size_t whylen);

#endif
