// SPDX-License-Identifier: GPL-2.0
/*
 * Breakpoint sites: where an int3 goes, what it displaced, the slot that
 * runs the displaced instruction out of line, and which probes it serves.
 *
 * Arming protocol for one site (all threads may be running):
 *   1. read the original bytes and decide XOL or emulation;
 *   2. write the slot (relocated instruction + jump back) into a page
 *      within rel32 reach, mapped read+exec in the target;
 *   3. write the single int3 byte.  A one-byte write is atomic for other
 *      threads: they execute either the old instruction or the trap.
 * Disarming writes the original byte back; slots and pages stay mapped so
 * a thread that is inside a slot at that moment still finishes there.  A
 * detach, with every thread stopped, unmaps them (release.c).
 *
 * Reference counters (a uprobe's "(REF)", the semaphore that SDT probe
 * code tests before it fires) count as the kernel's update_ref_ctr()
 * counts: 1 is added when a site's int3 is first written for a probe with
 * a counter (before the write, given back if the write fails), 1 taken
 * when the int3 is taken out.  A site is what the kernel calls a uprobe
 * in one address space (one inode and offset): events sharing a place
 * count once, places sharing a counter once each.  Code that is unmapped
 * (dlclose) or replaced (exec) took its counter with it: nothing to undo.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "engine/ptrace/internal.h"

#define PAGE_SIZE 4096u
#define SLOTS_PER_PAGE (PAGE_SIZE / DP_INSN_SLOT_SIZE)

static unsigned site_hash(uint64_t addr)
{
	return (unsigned)((addr ^ (addr >> 12)) % SITE_HASH);
}

struct site *site_find(struct proc *p, uint64_t addr)
{
	struct site *s;

	for (s = p->sites[site_hash(addr)]; s; s = s->next)
		if (s->addr == addr)
			return s;
	return NULL;
}

static struct thread *ctl_thread(struct proc *p)
{
	for (struct thread *t = p->threads; t; t = t->next)
		if (t->stopped)
			return t;
	return NULL;
}

static bool in_reach(uint64_t a, uint64_t b)
{
	uint64_t d = a > b ? a - b : b - a;

	return d < (1ull << 31) - 2 * PAGE_SIZE;
}

/* A free slot within rel32 reach of @near; maps a new page if needed. */
static uint64_t slot_alloc(struct proc *p, uint64_t near)
{
	struct xol_page *pg;
	struct thread *t;
	uint64_t base;

	for (pg = p->pages; pg; pg = pg->next)
		if (pg->used < SLOTS_PER_PAGE && in_reach(pg->base, near))
			return pg->base + DP_INSN_SLOT_SIZE * pg->used++;
	t = ctl_thread(p);
	if (!t)
		return 0;
	base = dp_remote_mmap_near(&p->mm, t->tid, near, PAGE_SIZE,
				   PROT_READ | PROT_EXEC, &t->pending_sig);
	if (!base)
		return 0;
	pg = calloc(1, sizeof(*pg));
	if (!pg)
		return 0;
	pg->base = base;
	pg->used = 1;
	pg->next = p->pages;
	p->pages = pg;
	return base;
}

static int write_slot(struct proc *p, struct site *s)
{
	uint8_t buf[DP_INSN_SLOT_SIZE];
	uint64_t slot = slot_alloc(p, s->addr);
	int n;

	if (!slot)
		return -ENOMEM;
	n = dp_insn_make_slot(&s->insn, slot, buf, sizeof(buf));
	if (n < 0)
		return n;
	if (dp_mm_write(&p->mm, slot, buf, sizeof(buf)))
		return -EFAULT;
	s->slot = slot;
	return 0;
}

int site_build_fault_slot(struct proc *p, struct site *s)
{
	return s->slot ? 0 : write_slot(p, s);
}

static struct site *site_new(struct proc *p, uint64_t addr, char *why,
			     size_t whylen)
{
	uint8_t code[DP_INSN_MAX_LEN];
	const char *reason = NULL;
	struct site *s;
	int err;

	if (dp_mm_read(&p->mm, addr, code, sizeof(code)) &&
	    dp_mm_read(&p->mm, addr, code, 1)) {
		snprintf(why, whylen, "cannot read the code at 0x%lx",
			 (unsigned long)addr);
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->addr = addr;
	s->orig = code[0];
	err = dp_insn_analyze(code, sizeof(code), addr, &s->insn, &reason);
	if (!err && dp_insn_needs_slot(&s->insn))
		err = write_slot(p, s);
	if (err) {
		snprintf(why, whylen, "cannot probe 0x%lx: %s", (unsigned long)addr,
			 reason ? reason : err == -ERANGE ?
			 "no slot within reach of a %rip-relative operand" :
			 strerror(-err));
		free(s);
		return NULL;
	}
	s->next = p->sites[site_hash(addr)];
	p->sites[site_hash(addr)] = s;
	return s;
}

static int site_arm(struct proc *p, struct site *s)
{
	uint8_t int3 = DP_INT3;

	if (s->armed)
		return 0;
	if (dp_mm_write(&p->mm, s->addr, &int3, 1))
		return -EFAULT;
	s->armed = true;
	return 0;
}

static struct site *site_get(struct proc *p, uint64_t addr, char *why,
			     size_t whylen)
{
	struct site *s = site_find(p, addr);

	if (!s)
		s = site_new(p, addr, why, whylen);
	if (s && site_arm(p, s)) {
		snprintf(why, whylen, "cannot write the breakpoint at 0x%lx",
			 (unsigned long)addr);
		return NULL;
	}
	return s;
}

static bool site_has_probe(const struct site *s, const struct dp_probe *pr)
{
	for (unsigned i = 0; i < s->nprobes; i++)
		if (s->probes[i] == pr)
			return true;
	return false;
}

/* "GRP/EVENT: reference counter 0xOFFS (at 0xADDR) of process PID" */
static void ref_ctr_name(const struct proc *p, const struct dp_probe *pr,
			 uint64_t addr, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s: reference counter 0x%lx (at 0x%lx) of "
		 "process %d", pr->event->group, pr->event->name,
		 (unsigned long)pr->def.place.ref_ctr, (unsigned long)addr,
		 (int)p->pid);
}

/* Add 1 to the counter at @addr for @pr, about to be armed: 0 or -errno. */
static int ref_ctr_get(struct proc *p, const struct dp_probe *pr,
		       uint64_t addr, char *why, size_t whylen)
{
	char name[192];
	int val, err = dp_mm_ref_ctr_add(&p->mm, addr, 1, &val);

	if (!err)
		return 0;
	ref_ctr_name(p, pr, addr, name, sizeof(name));
	if (err == -EINVAL)
		snprintf(why, whylen, "%s holds %d (0x%04x): adding 1 leaves "
			 "it negative", name, val, (unsigned)(uint16_t)val);
	else
		snprintf(why, whylen, "%s cannot be written (not in a "
			 "writable mapping)", name);
	return err;
}

/* Take back the 1 that site @s added to its counter. */
static void ref_ctr_put(struct proc *p, struct site *s)
{
	int val, err;

	if (!s->ref_ctr)
		return;
	err = dp_mm_ref_ctr_add(&p->mm, s->ref_ctr, -1, &val);
	/* the kernel refuses the same, with a warning: the value is the
	 * program's business now; the int3 goes anyway */
	if (err == -EINVAL)
		tracer_log(p->tracer, "dprobe: reference counter at 0x%lx of "
			   "process %d holds %d: not decremented below 0\n",
			   (unsigned long)s->ref_ctr, (int)p->pid, val);
	else if (err)
		tracer_log(p->tracer, "dprobe: reference counter at 0x%lx of "
			   "process %d cannot be written: not decremented\n",
			   (unsigned long)s->ref_ctr, (int)p->pid);
	s->ref_ctr = 0;
}

int site_add_probe(struct proc *p, uint64_t addr, struct dp_probe *probe,
		   uint64_t foffs_base, uint64_t ref_ctr, char *why,
		   size_t whylen)
{
	struct site *s = site_find(p, addr);
	struct dp_probe **v;
	bool take;
	int err, val;

	if (s && site_has_probe(s, probe))
		return 0;
	/* the event registry keeps one counter per inode and offset */
	if (ref_ctr && s && s->ref_ctr && s->ref_ctr != ref_ctr) {
		snprintf(why, whylen, "%s/%s: another reference counter is "
			 "already set at 0x%lx", probe->event->group,
			 probe->event->name, (unsigned long)addr);
		return -EINVAL;
	}
	take = ref_ctr && !(s && s->ref_ctr);
	if (take) {
		err = ref_ctr_get(p, probe, ref_ctr, why, whylen);
		if (err)
			return err;
	}
	s = site_get(p, addr, why, whylen);
	if (!s) {
		if (take)
			dp_mm_ref_ctr_add(&p->mm, ref_ctr, -1, &val);
		return -EINVAL;
	}
	if (take)
		s->ref_ctr = ref_ctr;
	v = realloc(s->probes, (s->nprobes + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	v[s->nprobes++] = probe;
	s->probes = v;
	s->foffs_base = foffs_base;
	return 0;
}

int site_add_role(struct proc *p, uint64_t addr, enum site_role role)
{
	char why[160];
	struct site *s = site_get(p, addr, why, sizeof(why));

	if (!s)
		return -EINVAL;
	s->roles |= role;
	return 0;
}

void sites_disarm_all(struct proc *p)
{
	for (unsigned h = 0; h < SITE_HASH; h++) {
		for (struct site *s = p->sites[h]; s; s = s->next) {
			if (s->armed && !dp_mm_write(&p->mm, s->addr, &s->orig, 1))
				s->armed = false;
			/* an int3 that could not be taken out keeps its count */
			if (!s->armed)
				ref_ctr_put(p, s);
		}
	}
}

void sites_drop_ref_ctrs(struct proc *p)
{
	for (unsigned h = 0; h < SITE_HASH; h++)
		for (struct site *s = p->sites[h]; s; s = s->next)
			s->ref_ctr = 0;
}

static void site_free(struct site *s)
{
	free(s->probes);
	free(s);
}

void sites_forget(struct proc *p)
{
	struct xol_page *pg, *npg;

	for (unsigned h = 0; h < SITE_HASH; h++) {
		struct site *s = p->sites[h], *n;

		for (; s; s = n) {
			n = s->next;
			site_free(s);
		}
		p->sites[h] = NULL;
	}
	for (pg = p->pages; pg; pg = npg) {
		npg = pg->next;
		free(pg);
	}
	p->pages = NULL;
	p->tramp = 0;
}

/* Pending returns must not keep a pointer to a site about to go. */
static void forget_site_in_rets(struct proc *p, const struct site *s)
{
	for (struct thread *t = p->threads; t; t = t->next)
		for (unsigned i = 0; i < t->nrets; i++)
			if (t->rets[i].site == s)
				t->rets[i].site = NULL;
}

void sites_prune_unmapped(struct proc *p)
{
	const struct dp_proc_objs *objs = dp_proc_objs(p->sym);

	/* no object at all is a failed reading (a zombie leader), not a
	 * process without code */
	if (!objs || !objs->n)
		return;
	for (unsigned h = 0; h < SITE_HASH; h++) {
		struct site **sp = &p->sites[h];

		while (*sp) {
			struct site *s = *sp;
			uint8_t byte;

			if (dp_proc_obj_at(objs, s->addr)) {
				sp = &s->next;
				continue;
			}
			/* still readable and still ours: give the byte back */
			if (s->armed && !dp_mm_read(&p->mm, s->addr, &byte, 1) &&
			    byte == DP_INT3)
				dp_mm_write(&p->mm, s->addr, &s->orig, 1);
			forget_site_in_rets(p, s);
			*sp = s->next;
			site_free(s);
		}
	}
}

/* The return trampoline: one int3 in a slot of its own. */
int proc_trampoline(struct proc *p)
{
	uint8_t code[DP_INSN_SLOT_SIZE];
	struct dp_emit e;
	uint64_t slot;

	if (p->tramp)
		return 0;
	slot = slot_alloc(p, 0);
	if (!slot)
		return -ENOMEM;
	dp_emit_init(&e, code, sizeof(code), slot);
	dp_emit_int3(&e, sizeof(code));
	if (dp_mm_write(&p->mm, slot, code, sizeof(code)))
		return -EFAULT;
	p->tramp = slot;
	return 0;
}

static void resolve_error(const struct dp_error *e, const struct dp_probe *pr,
			  char *why, size_t whylen)
{
	snprintf(why, whylen, "%s/%s: %s%s%s%s", pr->event->group,
		 pr->event->name, dp_err_message(e->code),
		 e->detail[0] ? " (" : "", e->detail, e->detail[0] ? ")" : "");
}

static int arm_probe(struct proc *p, struct dp_probe *pr, bool initial,
		     char *why, size_t whylen)
{
	struct dp_proc_res res;
	struct dp_error e = { 0 };
	int ret = dp_proc_resolve(p->sym, NULL, &pr->def, &res, &e);

	if (ret) {
		resolve_error(&e, pr, why, whylen);
		dp_error_clear(&e);
		return initial ? ret : 0;
	}
	for (size_t i = 0; !ret && i < res.n; i++) {
		const struct dp_proc_loc *l = &res.loc[i];

		if (pr->def.is_return && proc_trampoline(p)) {
			snprintf(why, whylen, "cannot map the return trampoline");
			ret = -ENOMEM;
			break;
		}
		ret = site_add_probe(p, l->addr, pr, l->addr - l->file_offset,
				     l->ref_ctr_addr, why, whylen);
		/* as the kernel when it maps a probed object later: not
		 * armed in this process, and said so */
		if (ret && !initial && l->ref_ctr_addr)
			tracer_log(p->tracer, "dprobe: %s\n", why);
		if (!ret && !pr->vaddr) {
			pr->vaddr = l->vaddr;
			pr->file_offset = l->file_offset;
		}
	}
	dp_proc_res_free(&res);
	return initial ? ret : 0;
}

int proc_arm_probes(struct proc *p, bool initial, char *why, size_t whylen)
{
	int ret;

	for (struct dp_event *ev = p->tracer->o.reg->events; ev; ev = ev->next) {
		for (struct dp_probe *pr = ev->probes; dp_event_placed(ev) && pr;
		     pr = pr->next) {
			ret = arm_probe(p, pr, initial, why, whylen);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* AT_ENTRY from /proc/PID/auxv: where the program starts after ld.so. */
static uint64_t auxv_entry(pid_t pid)
{
	uint64_t av[2], entry = 0;
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/auxv", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	while (read(fd, av, sizeof(av)) == sizeof(av) && av[0]) {
		if (av[0] == 9 /* AT_ENTRY */) {
			entry = av[1];
			break;
		}
	}
	close(fd);
	return entry;
}

static void arm_symbol(struct proc *p, const char *text, enum site_role role)
{
	uint64_t addr;
	char why[160];

	if (!dp_proc_sym_addr(p->sym, text, &addr, why, sizeof(why)))
		site_add_role(p, addr, role);
}

void proc_arm_internal(struct proc *p)
{
	uint64_t addr;
	char why[160];

	if (!p->armed_libs) {
		addr = auxv_entry(p->pid);
		if (addr && site_add_role(p, addr, ROLE_ENTRY) == 0)
			;
		else
			p->armed_libs = true;	/* no entry point: arm now */
	}
	if (!dp_proc_dl_brk(p->sym, &addr, why, sizeof(why)))
		site_add_role(p, addr, ROLE_DLBRK);
	/* C++ exceptions and thread cancellation unwind through return
	 * addresses: they must not meet the trampoline */
	arm_symbol(p, "libgcc_s.so.1:_Unwind_RaiseException", ROLE_UNWIND);
	arm_symbol(p, "libgcc_s.so.1:_Unwind_ForcedUnwind", ROLE_UNWIND);
	arm_symbol(p, "_Unwind_RaiseException", ROLE_UNWIND);
	arm_symbol(p, "_Unwind_ForcedUnwind", ROLE_UNWIND);
}
