// SPDX-License-Identifier: GPL-2.0
/*
 * Looking up a vDSO function in the image the kernel mapped (see vdso.h).
 *
 * The image is read like any other input: every table the dynamic
 * section points at must lie inside the loaded segment, and every index
 * and offset is checked against it before use, so an image we do not
 * understand yields NULL (the caller then uses a system call), never a
 * wild read.
 *
 * The hit path runs where the program's SIMD and x87 registers are live
 * and unsaved (KPROBE_FLAG_NOSIMD), so a vDSO function is used only if
 * its code, and the code it calls, provably touches general registers
 * and memory alone.  The kernel builds its time functions so (-mno-sse
 * and friends); its getrandom, for one, is not, and is refused.  Of the
 * instructions the kernel may patch in or the compiler add, rdpid (in
 * getcpu, where the CPU has it) and endbr64/endbr32 (a function's entry
 * under IBT) are allowed; nothing else of CET.
 */
#include <elf.h>
#include <string.h>
#include <sys/auxv.h>

#include <Zydis/Zydis.h>

#include "engine/agent/vdso.h"

/* No vDSO is near this big; a bound for a header gone wrong. */
#define VDSO_MAX_SIZE (1u << 20)
/* Bounds of the walk through a function's code. */
#define SCAN_BLOCKS 64
#define SCAN_INSNS 4096

struct vdso_img {
	const uint8_t *base;		/* the ELF header, the segment's start */
	uint64_t vaddr, size;		/* the segment: link address, bytes */
	const Elf64_Sym *sym;
	uint64_t nsym;
	const char *str;
	uint64_t strsz;
};

/* @len bytes at link address @vaddr, if all inside the segment. */
static const void *img_at(const struct vdso_img *v, uint64_t vaddr,
			  uint64_t len)
{
	uint64_t off = vaddr - v->vaddr;

	if (vaddr < v->vaddr || off > v->size || len > v->size - off)
		return NULL;
	return v->base + off;
}

/* The executable segment that starts with the ELF header. */
static bool img_segment(struct vdso_img *v, const Elf64_Ehdr *eh)
{
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(v->base + eh->e_phoff);

	for (unsigned i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type != PT_LOAD || ph[i].p_offset ||
		    !(ph[i].p_flags & PF_X))
			continue;
		v->vaddr = ph[i].p_vaddr;
		v->size = ph[i].p_filesz;
		return v->size >= eh->e_phoff +
			(uint64_t)eh->e_phnum * sizeof(*ph) &&
			v->size <= VDSO_MAX_SIZE;
	}
	return false;
}

static const Elf64_Phdr *img_phdr(const struct vdso_img *v, uint32_t type)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)v->base;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(v->base + eh->e_phoff);

	for (unsigned i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == type)
			return &ph[i];
	return NULL;
}

/* Symbols counted by the SysV hash table: its chain count. */
static uint64_t count_sysv(const struct vdso_img *v, uint64_t hash)
{
	const uint32_t *h = img_at(v, hash, 8);

	return h ? h[1] : 0;
}

/* ...or by the GNU one: past the end of the longest chain. */
static uint64_t count_gnu(const struct vdso_img *v, uint64_t hash)
{
	const uint32_t *h = img_at(v, hash, 16), *bucket, *chain;
	uint64_t at, n = 0;

	if (!h || h[0] > VDSO_MAX_SIZE || h[2] > VDSO_MAX_SIZE)
		return 0;
	at = hash + 16 + (uint64_t)h[2] * 8;	/* past the bloom words */
	bucket = img_at(v, at, (uint64_t)h[0] * 4);
	if (!bucket)
		return 0;
	for (uint32_t b = 0; b < h[0]; b++)	/* the chain starting last */
		if (bucket[b] > n)
			n = bucket[b];
	if (n < h[1])
		return h[1];		/* every bucket empty */
	for (;; n++) {			/* a chain ends with bit 0 set */
		chain = img_at(v, at + (uint64_t)h[0] * 4 + (n - h[1]) * 4, 4);
		if (!chain)
			return 0;
		if (*chain & 1)
			return n + 1;
	}
}

/* The dynamic symbol and string tables. */
static bool img_tables(struct vdso_img *v)
{
	const Elf64_Phdr *dph = img_phdr(v, PT_DYNAMIC);
	const Elf64_Dyn *d;
	uint64_t symtab = 0, syment = 0, sysv = 0, gnu = 0, strtab = 0;

	if (!dph || !(d = img_at(v, dph->p_vaddr, dph->p_filesz)))
		return false;
	for (uint64_t i = 0; i < dph->p_filesz / sizeof(*d); i++) {
		switch (d[i].d_tag) {
		case DT_SYMTAB: symtab = d[i].d_un.d_ptr; break;
		case DT_SYMENT: syment = d[i].d_un.d_val; break;
		case DT_STRTAB: strtab = d[i].d_un.d_ptr; break;
		case DT_STRSZ: v->strsz = d[i].d_un.d_val; break;
		case DT_HASH: sysv = d[i].d_un.d_ptr; break;
		case DT_GNU_HASH: gnu = d[i].d_un.d_ptr; break;
		}
	}
	if (syment != sizeof(Elf64_Sym) || !symtab || !strtab)
		return false;
	v->nsym = sysv ? count_sysv(v, sysv) : gnu ? count_gnu(v, gnu) : 0;
	if (v->nsym > VDSO_MAX_SIZE / sizeof(Elf64_Sym))
		return false;
	v->sym = img_at(v, symtab, v->nsym * sizeof(Elf64_Sym));
	v->str = img_at(v, strtab, v->strsz);
	return v->sym && v->str && v->strsz;
}

static bool img_open(struct vdso_img *v, const void *image)
{
	const Elf64_Ehdr *eh;

	memset(v, 0, sizeof(*v));
	v->base = image;
	eh = (const Elf64_Ehdr *)v->base;
	/* the header and program headers are in the first page, which
	 * is mapped whatever the rest says */
	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh->e_machine != EM_X86_64 ||
	    eh->e_phentsize != sizeof(Elf64_Phdr) ||
	    eh->e_phoff < sizeof(*eh) ||
	    eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) >
	    DP_PAGE_SIZE)
		return false;
	return img_segment(v, eh) && img_tables(v);
}

/* Symbol @i's name is @name (bounded by the string table). */
static bool sym_named(const struct vdso_img *v, uint64_t i, const char *name)
{
	uint64_t at = v->sym[i].st_name, n = strlen(name);

	return at < v->strsz && v->strsz - at > n &&
	       !memcmp(v->str + at, name, n + 1);
}

/* ---- general registers only ---------------------------------------------- */

static bool insn_ok(const ZydisDecodedInstruction *in)
{
	switch (in->meta.category) {
	case ZYDIS_CATEGORY_BINARY: case ZYDIS_CATEGORY_BITBYTE:
	case ZYDIS_CATEGORY_CMOV: case ZYDIS_CATEGORY_COND_BR:
	case ZYDIS_CATEGORY_UNCOND_BR: case ZYDIS_CATEGORY_CALL:
	case ZYDIS_CATEGORY_RET: case ZYDIS_CATEGORY_DATAXFER:
	case ZYDIS_CATEGORY_LOGICAL: case ZYDIS_CATEGORY_MISC:
	case ZYDIS_CATEGORY_NOP: case ZYDIS_CATEGORY_WIDENOP:
	case ZYDIS_CATEGORY_PUSH: case ZYDIS_CATEGORY_POP:
	case ZYDIS_CATEGORY_SHIFT: case ZYDIS_CATEGORY_ROTATE:
	case ZYDIS_CATEGORY_SETCC: case ZYDIS_CATEGORY_FLAGOP:
	case ZYDIS_CATEGORY_CONVERT: case ZYDIS_CATEGORY_SEMAPHORE:
	case ZYDIS_CATEGORY_SYSTEM: case ZYDIS_CATEGORY_SYSCALL:
	case ZYDIS_CATEGORY_BMI1: case ZYDIS_CATEGORY_BMI2:
	case ZYDIS_CATEGORY_RDPID:	/* getcpu, patched in where it exists */
		return true;
	case ZYDIS_CATEGORY_CET:	/* a function's entry under IBT */
		return in->mnemonic == ZYDIS_MNEMONIC_ENDBR64 ||
		       in->mnemonic == ZYDIS_MNEMONIC_ENDBR32;
	default:
		return false;	/* x87, MMX, SSE, AVX, XSAVE... */
	}
}

static bool reg_ok(ZydisRegister r)
{
	switch (ZydisRegisterGetClass(r)) {
	case ZYDIS_REGCLASS_GPR8: case ZYDIS_REGCLASS_GPR16:
	case ZYDIS_REGCLASS_GPR32: case ZYDIS_REGCLASS_GPR64:
	case ZYDIS_REGCLASS_FLAGS: case ZYDIS_REGCLASS_IP:
	case ZYDIS_REGCLASS_SEGMENT:
		return true;
	default:
		return r == ZYDIS_REGISTER_NONE;
	}
}

/* Every operand, hidden ones too, in general registers or memory. */
static bool operands_ok(const ZydisDecodedInstruction *in,
			const ZydisDecodedOperand *op)
{
	for (unsigned i = 0; i < in->operand_count; i++) {
		if (op[i].type == ZYDIS_OPERAND_TYPE_REGISTER &&
		    !reg_ok(op[i].reg.value))
			return false;
		if (op[i].type == ZYDIS_OPERAND_TYPE_MEMORY &&
		    (!reg_ok(op[i].mem.base) || !reg_ok(op[i].mem.index) ||
		     !reg_ok(op[i].mem.segment)))
			return false;
	}
	return true;
}

struct scan {
	uint64_t todo[SCAN_BLOCKS], seen[SCAN_BLOCKS];
	unsigned ntodo, nseen, budget;
};

/* Queue the code at image offset @off, once; false when out of room. */
static bool scan_push(struct scan *sc, uint64_t off)
{
	for (unsigned i = 0; i < sc->nseen; i++)
		if (sc->seen[i] == off)
			return true;
	if (sc->nseen == SCAN_BLOCKS)
		return false;
	sc->seen[sc->nseen++] = off;
	sc->todo[sc->ntodo++] = off;
	return true;
}

/*
 * One run of straight-line code from @off to its ret or jmp, queueing
 * the direct branch and call targets.  An indirect branch, an
 * instruction that does not decode or one outside the list fails it.
 */
static bool scan_block(const struct vdso_img *v, const ZydisDecoder *dec,
		       struct scan *sc, uint64_t off)
{
	ZydisDecodedInstruction in;
	ZydisDecodedOperand op[ZYDIS_MAX_OPERAND_COUNT];

	for (;;) {
		uint64_t left = off < v->size ? v->size - off : 0;

		if (!sc->budget-- || !left ||
		    !ZYAN_SUCCESS(ZydisDecoderDecodeFull(dec, v->base + off,
				left < 15 ? left : 15, &in, op)) ||
		    !insn_ok(&in) || !operands_ok(&in, op))
			return false;
		off += in.length;
		switch (in.meta.category) {
		case ZYDIS_CATEGORY_RET:
			return true;
		case ZYDIS_CATEGORY_COND_BR:
		case ZYDIS_CATEGORY_UNCOND_BR:
		case ZYDIS_CATEGORY_CALL:
			if (op[0].type != ZYDIS_OPERAND_TYPE_IMMEDIATE ||
			    !op[0].imm.is_relative ||
			    !scan_push(sc, off + (uint64_t)op[0].imm.value.s))
				return false;
			if (in.meta.category == ZYDIS_CATEGORY_UNCOND_BR)
				return true;
			break;
		default:
			break;
		}
	}
}

/* The function at image offset @entry and all it reaches. */
static bool gpr_only(const struct vdso_img *v, uint64_t entry)
{
	ZydisDecoder dec;
	struct scan sc = { .budget = SCAN_INSNS };

	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	scan_push(&sc, entry);
	while (sc.ntodo)
		if (!scan_block(v, &dec, &sc, sc.todo[--sc.ntodo]))
			return false;
	return true;
}

bool dp_vdso_code_ok(const void *code, size_t len)
{
	struct vdso_img v = { .base = code, .size = len };

	return len <= VDSO_MAX_SIZE && gpr_only(&v, 0);
}

void *dp_vdso_sym(const char *name)
{
	return dp_vdso_sym_in((const void *)getauxval(AT_SYSINFO_EHDR), name);
}

void *dp_vdso_sym_in(const void *image, const char *name)
{
	struct vdso_img v;

	if (!img_open(&v, image))
		return NULL;
	for (uint64_t i = 1; i < v.nsym; i++) {
		const Elf64_Sym *s = &v.sym[i];
		unsigned bind = ELF64_ST_BIND(s->st_info);

		if (ELF64_ST_TYPE(s->st_info) != STT_FUNC ||
		    (bind != STB_GLOBAL && bind != STB_WEAK) ||
		    s->st_shndx == SHN_UNDEF || !sym_named(&v, i, name))
			continue;
		/* code inside the executable segment, harmless to call */
		if (!img_at(&v, s->st_value, s->st_size ? s->st_size : 1) ||
		    !gpr_only(&v, s->st_value - v.vaddr))
			return NULL;
		return (void *)(uintptr_t)(v.base + (s->st_value - v.vaddr));
	}
	return NULL;
}
