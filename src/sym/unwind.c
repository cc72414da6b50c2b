// SPDX-License-Identifier: GPL-2.0
/*
 * DWARF unwinding of a stack snapshot with libdwfl's frame API: the
 * process's objects are reported as modules whose ELF is an in-memory
 * handle over dprobe's copy of the file (so a file replaced, or a
 * process gone by the time its ring is read, changes nothing), and the
 * thread's state comes from the snapshot alone.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <libelf.h>

#include "arch/arch.h"
#include "event/record.h"
#include "sym/unwind.h"

struct dp_unwinder {
	Dwfl *dwfl;
	struct dp_proc *proc;
	/* the object set last reported (compared by address and size) */
	const struct dp_proc_objs *objs;
	size_t nobjs;
	bool attached;
	Elf *arch_elf;		/* the machine for libdwfl's backend */
	/* the walk in progress */
	const struct dp_stack_snap *snap;
	pid_t tid;
	/* the last read outside the copy since the last frame was taken:
	 * why a walk that ends "outermost" ended (libdwfl takes a return
	 * address it cannot read for an undefined one) */
	bool missed;
	uint64_t miss;
};

/* ---- modules: dprobe's copies of the mapped files ----------------------- */

static Elf *image_elf(const struct dp_elf *e)
{
	size_t size;
	const uint8_t *img = dp_elf_image(e, &size);

	/* libelf reads it in place: the copy is private and writable */
	return elf_memory((char *)(uintptr_t)img, size);
}

static int find_elf(Dwfl_Module *mod, void **userdata, const char *name,
		    Dwarf_Addr base, char **file_name, Elf **elfp)
{
	(void)mod;
	(void)name;
	(void)base;
	(void)file_name;
	*elfp = *userdata ? image_elf(*userdata) : NULL;
	return -1;
}

/* No separate debug file: .eh_frame is in the loaded file itself, and a
 * search on every new module would cost more than the walk. */
static int no_debuginfo(Dwfl_Module *mod, void **userdata, const char *name,
			Dwarf_Addr base, const char *file_name,
			const char *debuglink_file, GElf_Word debuglink_crc,
			char **debuginfo_file_name)
{
	(void)mod;
	(void)userdata;
	(void)name;
	(void)base;
	(void)file_name;
	(void)debuglink_file;
	(void)debuglink_crc;
	(void)debuginfo_file_name;
	return -1;
}

static const Dwfl_Callbacks module_cb = {
	.find_elf = find_elf,
	.find_debuginfo = no_debuginfo,
	.section_address = dwfl_offline_section_address,
};

/* Report @p's current objects (again, after a dlopen or dlclose). */
static void sync_modules(struct dp_unwinder *u)
{
	const struct dp_proc_objs *s = dp_proc_objs(u->proc);

	if (!s || (s == u->objs && s->n == u->nobjs))
		return;
	u->objs = s;
	u->nobjs = s->n;
	dwfl_report_begin(u->dwfl);
	for (size_t i = 0; i < s->n; i++) {
		const struct dp_proc_obj *o = &s->v[i];
		Dwfl_Module *m;
		void **ud;

		if (!o->elf || o->end <= o->start)
			continue;
		m = dwfl_report_module(u->dwfl, o->path, o->start, o->end);
		if (m && dwfl_module_info(m, &ud, NULL, NULL, NULL, NULL, NULL,
					  NULL))
			*ud = o->elf;
		if (!u->arch_elf)
			u->arch_elf = image_elf(o->elf);
	}
	dwfl_report_end(u->dwfl, NULL, NULL);
}

/* ---- the thread: the snapshot ------------------------------------------- */

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_arg)
{
	(void)dwfl;
	(void)arg;
	(void)thread_arg;
	return 0;	/* only dwfl_getthread_frames() asks, by tid */
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_arg)
{
	struct dp_unwinder *u = arg;

	(void)dwfl;
	*thread_arg = u;
	return tid == u->tid;
}

/* A word of the copy; anything outside it is unknown, never read.  A
 * word the CFI saved is 8-byte aligned: an unaligned one comes from a
 * frame pointer that is none (a CFA of %rbp + 16), and is refused. */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result,
			void *arg)
{
	const struct dp_unwinder *u = arg;
	const struct dp_stack_snap *s = u->snap;
	uint64_t sp = s->regs[DP_UNWIND_RSP];

	(void)dwfl;
	if (addr < sp || s->len < 8 || addr - sp > s->len - 8 || (addr & 7)) {
		((struct dp_unwinder *)arg)->missed = true;
		((struct dp_unwinder *)arg)->miss = addr;
		return false;
	}
	memcpy(result, s->stack + (addr - sp), 8);
	return true;
}

static bool initial_registers(Dwfl_Thread *thread, void *arg)
{
	const struct dp_unwinder *u = arg;
	Dwarf_Word regs[DP_UNWIND_NREGS];

	for (unsigned i = 0; i < DP_UNWIND_NREGS; i++)
		regs[i] = u->snap->regs[i];
	if (!dwfl_thread_state_registers(thread, 0, DP_UNWIND_NREGS, regs))
		return false;
	dwfl_thread_state_register_pc(thread, regs[DP_UNWIND_RIP]);
	return true;
}

static const Dwfl_Thread_Callbacks thread_cb = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = initial_registers,
};

/* ---- the walk ------------------------------------------------------------ */

struct walk {
	struct dp_unwinder *u;
	uint64_t *out;
	unsigned n, max;
};

static int take_frame(Dwfl_Frame *f, void *arg)
{
	struct walk *w = arg;
	Dwarf_Addr pc;

	w->u->missed = false;
	/* a caller at 0 is no caller: the end of a chain (libdwfl ends it
	 * there itself, as the start code of some machines unwinds to 0) */
	if (!dwfl_frame_pc(f, &pc, NULL) || (w->n && !pc))
		return DWARF_CB_ABORT;
	w->out[w->n++] = pc;
	return w->n < w->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/*
 * Whether @addr can be no code of the process: the first 64 KiB (no
 * program maps code there), above the user half, or a mapping known not
 * to be code (a file's data, the stack, the heap).  An anonymous mapping
 * may be JIT code made executable since the maps were read, and one not
 * in the maps read may be new: the walk cannot tell there.
 */
static bool no_code(const struct dp_unwinder *u, uint64_t addr)
{
	const struct dp_proc_objs *s = dp_proc_objs(u->proc);
	const struct dp_map *m = s ? dp_maps_find(&s->maps, addr) : NULL;

	if (addr < 0x10000 || addr >= (1ull << 47))
		return true;
	return m && !(m->perms & DP_MAP_X) && m->path && *m->path;
}

/*
 * Whether a walk that ended with libdwfl's @ret met a bad frame
 * (unwind.h): a read outside the copy ended it "outermost", other than
 * one past the end of a copy cut at its size, or it failed at a pc that
 * is no code (a return address taken from garbage).
 */
static bool ended_bad(const struct dp_unwinder *u, const struct walk *w,
		      const struct dp_stack_snap *s, int ret)
{
	uint64_t sp = s->regs[DP_UNWIND_RSP], a = u->miss;

	if (ret < 0)
		return w->n > 1 && no_code(u, w->out[w->n - 1]);
	if (ret > 0 || !u->missed)
		return false;		/* at @max, or the CFI's outermost */
	return a < sp || (a & 7) || a - sp > DP_FRAME_SPAN ||
	       (s->whole && a - sp >= s->len);
}

unsigned dp_unwind(struct dp_unwinder *u, pid_t tid,
		   const struct dp_stack_snap *s, uint64_t *out, unsigned max,
		   bool *complete)
{
	struct walk w = { u, out, 0, max };
	int ret = -1;
	bool bad = false;

	if (complete)
		*complete = false;
	if (!max)
		return 0;
	sync_modules(u);
	if (!u->attached && u->arch_elf)
		u->attached = dwfl_attach_state(u->dwfl, u->arch_elf,
						dp_proc_pid(u->proc),
						&thread_cb, u);
	if (u->attached) {
		u->snap = s;
		u->tid = tid > 0 ? tid : 1;
		u->missed = false;
		ret = dwfl_getthread_frames(u->dwfl, u->tid, take_frame, &w);
		u->snap = NULL;
		bad = w.n && ended_bad(u, &w, s, ret);
	}
	/* no module, no state: at least where the hit was */
	if (!w.n)
		out[w.n++] = s->regs[DP_UNWIND_RIP];
	if (bad && w.n < max)
		out[w.n++] = DP_STACK_BAD_FRAME;
	if (complete)
		*complete = ret == 0 && !bad;
	return w.n;
}

int dp_unwinder_new(struct dp_proc *p, struct dp_unwinder **out)
{
	struct dp_unwinder *u = calloc(1, sizeof(*u));

	*out = NULL;
	if (!u)
		return -ENOMEM;
	elf_version(EV_CURRENT);
	u->dwfl = dwfl_begin(&module_cb);
	if (!u->dwfl) {
		free(u);
		return -ENOMEM;
	}
	u->proc = p;
	*out = u;
	return 0;
}

void dp_unwinder_free(struct dp_unwinder *u)
{
	if (!u)
		return;
	dwfl_end(u->dwfl);
	if (u->arch_elf)
		elf_end(u->arch_elf);
	free(u);
}
