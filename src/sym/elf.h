/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An opened x86-64 ELF file: its function and object symbols (.symtab and
 * .dynsym merged), PT_LOAD segments, executable sections and build-id, and
 * the mappings between file offsets, link-time addresses and symbols that
 * probe places need.  The file's bytes are copied into memory when it is
 * opened (a file that changes while it is read is an error of the open,
 * never a signal, and a change after it is not seen); every string and
 * byte handed out stays valid until dp_elf_close().
 */
#ifndef DPROBE_SYM_ELF_H
#define DPROBE_SYM_ELF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct dp_elf_sym {
	const char *name;	/* as in the string table (may hold "@VER") */
	const char *version;	/* symbol version, NULL if none */
	uint64_t value;		/* link-time address */
	uint64_t size;
	uint8_t type;		/* STT_FUNC, STT_GNU_IFUNC or STT_OBJECT */
	uint8_t bind;		/* STB_LOCAL, STB_GLOBAL, STB_WEAK, ... */
	bool hidden;		/* a non-default version ("name@VER") */
	uint16_t base_len;	/* length of the name without "@VER" */
	bool debug_only;	/* from the separate debug file's .symtab */
};

struct dp_elf_seg {		/* a PT_LOAD */
	uint64_t vaddr, memsz;
	uint64_t offset, filesz;
	uint32_t flags;		/* PF_R / PF_W / PF_X */
};

struct dp_elf_sec {		/* an SHF_EXECINSTR section with file bytes */
	const char *name;
	uint64_t addr, size, offset;
};

struct dp_elf;

/*
 * Open @path.  Returns 0, -errno of open()/stat()/read(), -EIO for a file
 * that became shorter while it was read, -EISDIR for a directory, -EINVAL
 * for another non-regular file, or -ENOEXEC for a file that is not a
 * 64-bit x86-64 ELF.  On failure dp_elf_strerror() says why.
 */
int dp_elf_open(const char *path, struct dp_elf **out);
/* The same, with the reason written to @why (may be NULL). */
int dp_elf_open_why(const char *path, struct dp_elf **out, char *why,
		    size_t whylen);
/* Why the calling thread's last dp_elf_open() failed ("" if it did not). */
const char *dp_elf_strerror(void);
void dp_elf_close(struct dp_elf *e);

const char *dp_elf_path(const struct dp_elf *e);
uint64_t dp_elf_file_size(const struct dp_elf *e);
/* The file's bytes as read (a private copy that lives as long as @e). */
const uint8_t *dp_elf_image(const struct dp_elf *e, size_t *size);
/* ET_DYN: loaded at a base chosen at run time (a PIE or a library). */
bool dp_elf_is_pie(const struct dp_elf *e);
/* The entry point's link-time address (e_entry). */
uint64_t dp_elf_entry(const struct dp_elf *e);
/* A PT_INTERP (or PT_DYNAMIC): the file is linked dynamically. */
bool dp_elf_is_dynamic(const struct dp_elf *e);
/* The PT_INTERP path (the dynamic loader) in @buf: 0, or -ENOENT. */
int dp_elf_interp(const struct dp_elf *e, char *buf, size_t len);
/* GNU build-id bytes, or 0 if the file has none. */
size_t dp_elf_build_id(const struct dp_elf *e, const uint8_t **id);
/* Build-id as lowercase hex into @buf; "" if none.  Returns its length. */
size_t dp_elf_build_id_hex(const struct dp_elf *e, char *buf, size_t len);

size_t dp_elf_nsegs(const struct dp_elf *e);
const struct dp_elf_seg *dp_elf_seg(const struct dp_elf *e, size_t i);
size_t dp_elf_nsecs(const struct dp_elf *e);
const struct dp_elf_sec *dp_elf_sec(const struct dp_elf *e, size_t i);

/* Symbols, sorted by address; duplicates between the two tables merged. */
size_t dp_elf_nsyms(const struct dp_elf *e);
const struct dp_elf_sym *dp_elf_sym(const struct dp_elf *e, size_t i);

/*
 * Symbol by name.  "NAME" matches NAME in either table, with or without a
 * version; "NAME@VER" / "NAME@@VER" also require that version.  Returns 0
 * with *@out filled when exactly one address matches (a default version
 * wins over hidden ones), -ENOENT for none, -ENOTUNIQ for several addresses
 * (e.g. static functions of the same name in two translation units).
 */
int dp_elf_lookup(const struct dp_elf *e, const char *name,
		  struct dp_elf_sym *out);
/*
 * All matches of @name, one per distinct address, in address order: up to
 * @max of them are stored in @out.  Returns the number of matches.
 */
size_t dp_elf_lookup_all(const struct dp_elf *e, const char *name,
			 const struct dp_elf_sym **out, size_t max);

/*
 * The function symbol containing @vaddr (the innermost one, a global name
 * preferred among aliases); a symbol of size 0 covers only its own address.
 * *@offset (if not NULL) is @vaddr - value.  NULL if none.
 */
const struct dp_elf_sym *dp_elf_sym_at(const struct dp_elf *e, uint64_t vaddr,
				       uint64_t *offset);
/*
 * End of the last function symbol that ends at or before @vaddr, 0 if
 * none: a known instruction boundary to decode from when no symbol
 * contains @vaddr.
 */
uint64_t dp_elf_func_end_before(const struct dp_elf *e, uint64_t vaddr);

/*
 * Up to @max function names close to @name (edit distance, or @name as a
 * prefix), best first, without repeats.  Returns how many were stored.
 */
size_t dp_elf_suggest(const struct dp_elf *e, const char *name,
		      const char **out, size_t max);

/* Link-time address of file offset @off, through its PT_LOAD: 0 or -ENOENT. */
int dp_elf_off_to_vaddr(const struct dp_elf *e, uint64_t off, uint64_t *vaddr);
/* File offset of @vaddr if it has file bytes in a PT_LOAD: 0 or -ENOENT. */
int dp_elf_vaddr_to_off(const struct dp_elf *e, uint64_t vaddr, uint64_t *off);
/* @off is inside the file and inside the file part of an executable PT_LOAD. */
bool dp_elf_off_is_exec(const struct dp_elf *e, uint64_t off);
/* The same for a link-time address. */
bool dp_elf_vaddr_is_exec(const struct dp_elf *e, uint64_t vaddr);
/* The executable section containing @vaddr, or NULL. */
const struct dp_elf_sec *dp_elf_exec_sec_at(const struct dp_elf *e,
					    uint64_t vaddr);

/*
 * The file bytes at @vaddr: returns a pointer into the file's copy and sets
 * *@avail to the number of bytes up to the end of the segment's file part,
 * or NULL if @vaddr has no file bytes.
 */
const uint8_t *dp_elf_code(const struct dp_elf *e, uint64_t vaddr,
			   size_t *avail);
/*
 * The file bytes of the section named @name (any kind with file bytes):
 * a pointer into the file's copy with its link-time address and size in
 * @sec, or NULL if the file has no such section.
 */
const uint8_t *dp_elf_section(const struct dp_elf *e, const char *name,
			      struct dp_elf_sec *sec);
/* Copy up to @len bytes at @vaddr; returns the count, or -EFAULT if none. */
ssize_t dp_elf_read(const struct dp_elf *e, uint64_t vaddr, void *buf,
		    size_t len);

#endif
