// SPDX-License-Identifier: GPL-2.0
/*
 * Application tracepoints (include/dprobe/tracepoint.h): probe arrays,
 * static keys and the jump tables of the objects that define them.
 *
 * A tracepoint's probes are a NULL-terminated array that is never changed
 * once published: registering and unregistering build a new one under the
 * registration mutex, publish it with a release store, wait for a grace
 * period (core.c) and free the old one.  Firing holds a read side of that
 * grace period while it walks the array (__dp_tp_begin/__dp_tp_end, called
 * by the out-of-line code the header generates), so a probe that was
 * unregistered is never called once unregister has returned.
 *
 * The key of a tracepoint is its count of probes.  Each trace_NAME() site
 * compiled with asm goto is a 5-byte nop with an entry in its object's
 * __dp_jump_table (site, target of the jump, tracepoint); objects hand
 * their table to us from a constructor.  When a key goes from 0 to 1,
 * every site of it becomes "jmp target", and the nop again when it goes
 * back to 0, by dp_text_poke() (the kernel's text_poke_bp()): nop and jmp
 * are single instructions, so a thread is never inside the bytes being
 * changed.  The jumps appear before the array is published (a failure to
 * patch one site puts the others back, so a probe whose register failed
 * is never called) and go before it is withdrawn; a thread that takes a
 * jump early or late finds an empty array, which costs it nothing but
 * the calls.
 *
 * Sites shared with kprobes: a kprobe's int3 on a site makes the kprobe
 * the owner of the site's bytes; the nop or the jmp is then what it
 * displaced, changed in its saved copy (see kprobe_view_set()), so both
 * work in either order, also when the kprobe came first and the object's
 * table later (a program dprobe starts: its probes are registered before
 * the program's constructors run).  Jump optimisation never covers a
 * registered site or a site's target (opt.c); a region that does, made
 * before the table was known, is unoptimised first, as the kernel does
 * for a probe inside an optimised one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "dprobe/tracepoint.h"
#include "engine/agent/agent.h"

#define JUMP_LEN DP_JUMP_LEN

/* The jump tables of the loaded objects (under the mutex). */
struct jump_table {
	const struct dp_jump_entry *start, *stop;
	struct jump_table *next;
};

static struct jump_table *tables;

/* In a probe of ours: the array being walked must not be freed. */
static __thread int tp_depth __attribute__((tls_model("initial-exec")));

/* ---- checks ---------------------------------------------------------------- */

static int tp_valid(const struct dp_tracepoint *tp)
{
	struct {
		uint32_t magic;
		uint16_t version, nargs;
	} h;

	if (!tp || ((uintptr_t)tp & 63))
		return -EINVAL;
	if (dp_copy_nofault(&h, tp, sizeof(h)))
		return -EFAULT;
	if (h.magic != DP_TRACEPOINT_MAGIC ||
	    h.version != DP_TRACEPOINT_VERSION || h.nargs > DP_TP_MAX_ARGS)
		return -EINVAL;
	return 0;
}

static bool ident_char(char c)
{
	return c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z');
}

static bool space_char(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
	       c == '\v';
}

/*
 * @s (at most @max bytes) with spaces kept only between two identifier
 * characters, single: "const char * path" and "const char*path" are the
 * same prototype.  False if it does not fit in @out.
 */
static bool proto_norm(const char *s, size_t max, char *out, size_t size)
{
	size_t n = 0;
	bool gap = false;

	for (size_t i = 0; i < max && s[i]; i++) {
		if (space_char(s[i])) {
			gap = true;
			continue;
		}
		if (n + 2 >= size)
			return false;
		if (gap && n && ident_char(out[n - 1]) && ident_char(s[i]))
			out[n++] = ' ';
		out[n++] = s[i];
		gap = false;
	}
	out[n] = '\0';
	return true;
}

static bool proto_matches(const struct dp_tracepoint *tp, const char *proto)
{
	char want[DP_TP_PROTO_LEN], got[DP_TP_PROTO_LEN];

	return proto_norm(tp->proto, sizeof(tp->proto), want, sizeof(want)) &&
	       proto_norm(proto, 4 * DP_TP_PROTO_LEN, got, sizeof(got)) &&
	       !strcmp(want, got);
}

/* Called from a probe or a kprobe handler: registering could deadlock or
 * free the array the caller walks. */
static bool in_probe(void)
{
	return tp_depth || dp_tls.depth;
}

/* ---- jump sites ------------------------------------------------------------ */

static uint64_t rel_addr(const void *field, int64_t off)
{
	return (uint64_t)(uintptr_t)field + (uint64_t)off;
}

static struct dp_tracepoint *entry_key(const struct dp_jump_entry *e)
{
	if (!e->key)
		return NULL;	/* a placeholder */
	return (struct dp_tracepoint *)(uintptr_t)rel_addr(&e->key, e->key);
}

static uint64_t entry_site(const struct dp_jump_entry *e)
{
	return rel_addr(&e->code, e->code);
}

static uint64_t entry_target(const struct dp_jump_entry *e)
{
	return rel_addr(&e->target, e->target);
}

bool dp_tp_jumps_hit(uint64_t lo, uint64_t hi)
{
	for (const struct jump_table *t = tables; t; t = t->next)
		for (const struct dp_jump_entry *e = t->start; e < t->stop; e++)
			if (entry_key(e) && dp_jump_hits(entry_site(e),
							 entry_target(e), lo, hi))
				return true;
	return false;
}

/*
 * A kprobe's site on a jump site: what the kprobe displaced becomes
 * @want (the nop or the jmp, going to @dest), the rest of its bytes
 * under the int3 too when it is armed.  A hit reads the site's
 * instruction with no lock, so for the time of the change the trap
 * resumes at @dest without reading it (site->step, which the optimiser
 * uses the same way; it never optimises over a jump site), and a grace
 * period lets the hits that read it before end first.  Both forms are
 * emulated (no slot) and 5 bytes long; the int3 stays at byte 0 all
 * along, so no thread decodes the bytes after it.
 */
static int kprobe_view_set(struct dp_site *s, const uint8_t *want,
			   const uint8_t *old, uint64_t dest)
{
	struct dp_insn in;
	int err;

	if (s->insn.len == JUMP_LEN && !memcmp(s->insn.bytes, want, JUMP_LEN))
		return 0;
	if (s->optimized || s->insn.len != JUMP_LEN ||
	    memcmp(s->insn.bytes, old, JUMP_LEN))
		return -EBUSY;
	if (dp_insn_analyze(want, JUMP_LEN, s->addr, &in, NULL) ||
	    in.len != JUMP_LEN || dp_insn_needs_slot(&in) ||
	    dp_insn_may_fault(&in))
		return -EBUSY;
	__atomic_store_n(&s->step, dest, __ATOMIC_RELEASE);
	dp_synchronize();
	if (s->armed) {
		err = dp_text_write(s->addr + 1, want + 1, JUMP_LEN - 1,
				    old + 1);
		if (err) {
			__atomic_store_n(&s->step, 0, __ATOMIC_RELEASE);
			return err;
		}
	}
	s->insn = in;
	dp_site_for_each(s, p)
		p->opcode = want[0];
	/* the new instruction is complete before a hit can read it */
	__atomic_store_n(&s->step, 0, __ATOMIC_RELEASE);
	return 0;
}

/*
 * Make the site of @e a jmp (@on) or the nop: 0 or -errno.  Under a
 * kprobe's int3 the change is made to what the kprobe displaced, so
 * that neither silences the other: the kprobe runs its handlers then
 * the tracepoint's jmp or nop, and leaves that in the code when it goes.
 */
static int site_set(const struct dp_jump_entry *e, bool on)
{
	uint64_t site = entry_site(e), target = entry_target(e);
	uint64_t dest = on ? target : site + JUMP_LEN;
	uint8_t jmp[JUMP_LEN], nop[JUMP_LEN];
	const uint8_t *want = on ? jmp : nop, *old = on ? nop : jmp;
	struct dp_emit em;
	struct dp_site *s;
	int err;

	dp_emit_init(&em, jmp, sizeof(jmp), site);
	if (dp_emit_jmp(&em, target))
		return -ERANGE;
	dp_emit_init(&em, nop, sizeof(nop), site);
	dp_emit_nops(&em, sizeof(nop));
	/* an optimised kprobe's jmp that holds the site or the target
	 * goes first, or the site is left alone */
	if (dp_opt_clear_jump(site, target))
		return -EBUSY;
	s = dp_site_lookup(site);
	if (s && s->armed)
		return kprobe_view_set(s, want, old, dest);
	if (memcmp((const void *)(uintptr_t)site, want, JUMP_LEN)) {
		err = dp_agent_init();
		if (!err)
			err = dp_text_poke(site, want, old, JUMP_LEN, dest);
		if (err)
			return err;
	}
	/* a disabled kprobe there arms over the new bytes when enabled */
	if (s && s->probes)
		kprobe_view_set(s, want, old, dest);
	return 0;
}

/* Every site of @tp in @t: jmp (@on) or nop. Stops at the first error. */
static int table_set(const struct jump_table *t, const struct dp_tracepoint *tp,
		     bool on, const struct dp_jump_entry **failed)
{
	for (const struct dp_jump_entry *e = t->start; e < t->stop; e++) {
		int err;

		if (entry_key(e) != tp)
			continue;
		err = site_set(e, on);
		if (err && on) {
			*failed = e;
			return err;
		}
	}
	return 0;
}

/* Back to nops, the sites of @tp before @failed (an enabling failed). */
static void key_undo(const struct dp_tracepoint *tp,
		     const struct dp_jump_entry *failed)
{
	for (const struct jump_table *t = tables; t; t = t->next) {
		for (const struct dp_jump_entry *e = t->start; e < t->stop; e++) {
			if (e == failed)
				return;
			if (entry_key(e) == tp)
				site_set(e, false);
		}
	}
}

/*
 * Every site of @tp as @on says.  Disabling never fails: a jmp that
 * cannot go (a kprobe on it) stays and leads to an empty array.
 */
static int key_switch(const struct dp_tracepoint *tp, bool on)
{
	const struct dp_jump_entry *failed = NULL;

	for (const struct jump_table *t = tables; t; t = t->next) {
		int err = table_set(t, tp, on, &failed);

		if (err) {
			key_undo(tp, failed);
			return err;
		}
	}
	return 0;
}

/* ---- the jump tables of the objects -------------------------------------- */

/*
 * From each object's constructors (once per tracepoint it defines: the
 * second time is a no-op).  The sites of keys already on are patched:
 * something may have registered a probe before this constructor ran.
 */
DP_EXPORT void __dp_jump_table_register(const struct dp_jump_entry *start,
					const struct dp_jump_entry *stop)
{
	struct jump_table *t;

	if (!start || stop <= start)
		return;
	dp_lock();
	for (t = tables; t; t = t->next)
		if (t->start == start)
			goto out;
	t = malloc(sizeof(*t));
	if (!t) {
		dp_warn("libdprobe: out of memory: the tracepoints of an "
			"object cannot be enabled\n");
		goto out;
	}
	t->start = start;
	t->stop = stop;
	t->next = tables;
	tables = t;
	for (const struct dp_jump_entry *e = start; e < stop; e++) {
		const struct dp_tracepoint *tp = entry_key(e);

		if (!tp)
			continue;
		/* a jmp optimised before the table was known */
		if (!tp->key)
			dp_opt_clear_jump(entry_site(e), entry_target(e));
		else if (site_set(e, true))
			dp_warn("libdprobe: a tracepoint site cannot be "
				"enabled (an int3 that is not ours, or a jump-"
				"optimised kprobe over it)\n");
	}
out:
	dp_unlock();
}

/* From the object's destructors (dlclose, exit): its code is going. */
DP_EXPORT void __dp_jump_table_unregister(const struct dp_jump_entry *start)
{
	dp_lock();
	for (struct jump_table **pp = &tables; *pp; pp = &(*pp)->next) {
		struct jump_table *t = *pp;

		if (t->start == start) {
			*pp = t->next;
			free(t);
			break;
		}
	}
	dp_unlock();
}

/* ---- probe arrays ------------------------------------------------------------ */

/*
 * What an entry is replaced with in place when there is no memory for a
 * smaller array: called with the tracepoint's arguments, which the SysV
 * convention lets it ignore.  Dropped when the array is next copied.
 */
static void stub_probe(void)
{
}

static bool is_stub(const struct dp_tracepoint_func *f)
{
	return f->func == (void *)stub_probe;
}

static size_t funcs_len(const struct dp_tracepoint_func *f)
{
	size_t n = 0;

	while (f && f[n].func)
		n++;
	return n;
}

static ssize_t funcs_find(const struct dp_tracepoint_func *f, void *func,
			  void *data)
{
	for (size_t i = 0; f && f[i].func; i++)
		if (f[i].func == func && f[i].data == data)
			return (ssize_t)i;
	return -1;
}

/* @old without its stubs and without entry @skip (-1: none), plus @add
 * (NULL: nothing); *@n gets the length.  NULL if it would be empty. */
static struct dp_tracepoint_func *
funcs_copy(const struct dp_tracepoint_func *old, ssize_t skip,
	   const struct dp_tracepoint_func *add, size_t *n, int *err)
{
	struct dp_tracepoint_func *f;
	size_t len = funcs_len(old), k = 0;

	*err = 0;
	f = malloc((len + 2) * sizeof(*f));
	if (!f) {
		*err = -ENOMEM;
		return NULL;
	}
	for (size_t i = 0; i < len; i++)
		if ((ssize_t)i != skip && !is_stub(&old[i]))
			f[k++] = old[i];
	if (add)
		f[k++] = *add;
	f[k].func = f[k].data = NULL;
	*n = k;
	if (!k) {
		free(f);
		return NULL;
	}
	return f;
}

/* The key follows the count of real entries (stubs do not count). */
static void publish(struct dp_tracepoint *tp, struct dp_tracepoint_func *f,
		    uint32_t n)
{
	__atomic_store_n(&tp->funcs, f, __ATOMIC_RELEASE);
	__atomic_store_n(&tp->key, n, __ATOMIC_RELAXED);
}

static int probe_add(struct dp_tracepoint *tp, void *func, void *data)
{
	struct dp_tracepoint_func add = { func, data }, *old = tp->funcs, *f;
	uint32_t was = tp->key;
	size_t n;
	int err;

	if (funcs_find(old, func, data) >= 0)
		return -EEXIST;
	f = funcs_copy(old, -1, &add, &n, &err);
	if (!f)
		return err;
	/*
	 * The jumps first: a thread that takes one before the array is
	 * published finds the old one (empty), and if a site cannot be
	 * patched the new array was never seen, so a failed register
	 * never calls its probe.
	 */
	if (!was) {
		err = key_switch(tp, true);
		if (err) {
			free(f);
			return err;
		}
	}
	publish(tp, f, (uint32_t)n);
	if (old) {
		dp_synchronize();
		free(old);
	}
	return 0;
}

static int probe_del(struct dp_tracepoint *tp, void *func, void *data)
{
	struct dp_tracepoint_func *old = tp->funcs, *f;
	ssize_t i = funcs_find(old, func, data);
	size_t n;
	int err;

	if (i < 0)
		return -ENOENT;
	f = funcs_copy(old, i, NULL, &n, &err);
	if (err) {
		/* no memory for a smaller array: neutralise the entry */
		__atomic_store_n(&old[i].func, (void *)stub_probe,
				 __ATOMIC_RELEASE);
		__atomic_store_n(&tp->key, tp->key - 1, __ATOMIC_RELAXED);
		if (!tp->key)
			key_switch(tp, false);
		dp_synchronize();
		return 0;
	}
	if (!n)
		key_switch(tp, false);
	publish(tp, f, (uint32_t)n);
	dp_synchronize();
	free(old);
	return 0;
}

/* ---- the API ------------------------------------------------------------------ */

DP_EXPORT int dp_tracepoint_probe_register(struct dp_tracepoint *tp,
					   void *func, void *data,
					   const char *proto)
{
	int err = tp_valid(tp);

	if (err)
		return err;
	if (!func || (proto && !proto_matches(tp, proto)))
		return -EINVAL;
	if (in_probe())
		return -EBUSY;
	dp_lock();
	err = probe_add(tp, func, data);
	dp_unlock();
	return err;
}

DP_EXPORT int dp_tracepoint_probe_unregister(struct dp_tracepoint *tp,
					     void *func, void *data)
{
	int err = tp_valid(tp);

	if (err)
		return err;
	if (!func)
		return -EINVAL;
	if (in_probe())
		return -EBUSY;
	dp_lock();
	err = probe_del(tp, func, data);
	dp_unlock();
	return err;
}

/* ---- firing ------------------------------------------------------------------- */

/*
 * The first load only avoids the read side when the array is empty (a
 * thread that took a jump as the last probe went); the array used is the
 * one loaded inside the read side.
 */
DP_EXPORT struct __dp_tp_read __dp_tp_begin(struct dp_tracepoint *tp)
{
	struct __dp_tp_read r = { NULL, NULL };
	const struct dp_tracepoint_func *f;
	dp_gp_t gp;

	if (!__atomic_load_n(&tp->funcs, __ATOMIC_RELAXED))
		return r;
	gp = dp_gp_enter();
	f = __atomic_load_n(&tp->funcs, __ATOMIC_ACQUIRE);
	if (!f) {
		dp_gp_leave(gp);
		return r;
	}
	tp_depth++;
	r.funcs = f;
	r.token = gp;
	return r;
}

DP_EXPORT void __dp_tp_end(void *token)
{
	tp_depth--;
	dp_gp_leave(token);
}
