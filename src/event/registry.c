// SPDX-License-Identifier: GPL-2.0
/*
 * The event registry: what kprobe_events and uprobe_events hold.  A line
 * creates an event, appends a probe to an existing one (a multi-probe
 * event, as append_trace_kprobe() does), or deletes probes (as
 * dyn_event_release() does).  Every rejected line
 * leaves the registry exactly as it was.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>

#include "event/eprobe.h"
#include "event/event.h"
#include "event/filter.h"
#include "event/kformat.h"
#include "event/regindex.h"
#include "lang/fetch.h"

const struct dp_field dp_common_fields[DP_NR_COMMON_FIELDS] = {
	{ .name = "common_type", .type = "unsigned short", .offset = 0,
	  .size = 2, .elem_size = 2 },
	{ .name = "common_flags", .type = "unsigned char", .offset = 2,
	  .size = 1, .elem_size = 1 },
	{ .name = "common_preempt_count", .type = "unsigned char",
	  .offset = 3, .size = 1, .elem_size = 1 },
	{ .name = "common_pid", .type = "int", .offset = 4, .size = 4,
	  .elem_size = 4, .is_signed = true },
};

void dp_registry_init(struct dp_registry *reg)
{
	memset(reg, 0, sizeof(*reg));
	reg->next_id_base = DP_FIRST_EVENT_ID;
}

static void probe_free(struct dp_probe *p)
{
	dp_probe_def_free(&p->def);
	free(p);
}

static void event_free(struct dp_event *ev)
{
	struct dp_probe *p, *n;

	dp_eprobe_unlink(ev);
	/* (the whole registry going: event probes may outlive it here) */
	for (unsigned i = 0; i < ev->neprobes; i++)
		ev->eprobes[i]->attached = NULL;
	free(ev->eprobes);
	free(ev->kprint_fmt);
	dp_ktp_free(ev->ktp);
	for (p = ev->probes; p; p = n) {
		n = p->next;
		probe_free(p);
	}
	for (unsigned i = 0; i < ev->nfields; i++)
		free((char *)ev->fields[i].type);
	free(ev->fields);
	if (ev->synth)
		dp_synth_def_free(ev->synth);
	free(ev->synth);
	dp_filter_free(ev->filter);
	free(ev->filter_text);
	free(ev);
}

void dp_registry_free(struct dp_registry *reg)
{
	struct dp_event *ev, *n;

	dp_regidx_drop(reg);
	for (ev = reg->events; ev; ev = n) {
		n = ev->next;
		event_free(ev);
	}
	for (unsigned i = 0; i < 8; i++)
		dp_error_clear(&reg->log[i]);
	memset(reg, 0, sizeof(*reg));
}

/* (the index is a cache: building it changes nothing a caller sees) */
struct dp_event *dp_registry_find(const struct dp_registry *reg,
				  const char *group, const char *name)
{
	return dp_regidx_find((struct dp_registry *)reg, group, name);
}

struct dp_event *dp_registry_find_id(const struct dp_registry *reg,
				     unsigned id)
{
	return dp_regidx_find_id((struct dp_registry *)reg, id);
}

void dp_registry_relinked(struct dp_registry *reg)
{
	dp_regidx_drop(reg);
}

const struct dp_field *dp_event_field(const struct dp_event *ev,
				      const char *name)
{
	for (unsigned i = 0; i < ev->nfields; i++)
		if (!strcmp(ev->fields[i].name, name))
			return &ev->fields[i];
	for (unsigned i = 0; i < DP_NR_COMMON_FIELDS; i++)
		if (!strcmp(dp_common_fields[i].name, name))
			return &dp_common_fields[i];
	return NULL;
}

/* Lowest free id, as the kernel's dynamic event ids are handed out. */
static unsigned alloc_id_from(struct dp_registry *reg, unsigned base)
{
	return dp_regidx_free_id(reg, base);
}

/* The lowest id from the first dynamic one that no event has. */
static unsigned alloc_id(struct dp_registry *reg)
{
	return alloc_id_from(reg, reg->next_id_base);
}

static void header_field(struct dp_field *f, const char *name, unsigned off)
{
	f->name = name;
	f->type = strdup("unsigned long");
	f->fclass = DP_FC_NUM;
	f->offset = off;
	f->size = f->elem_size = 8;
}

static void arg_field(struct dp_field *f, const struct dp_arg *a,
		      unsigned head)
{
	const struct dp_type *t = &a->type;
	char type[64];

	dp_type_format_name(t, type, sizeof(type));
	f->name = a->name;
	f->type = strdup(type);
	f->offset = head + a->offset;
	f->elem_size = t->size;
	f->count = t->count;
	f->size = dp_type_fixed_size(t);
	f->is_signed = dp_type_is_signed(t);
	f->ptype = t;
	if (dp_type_is_string(t))
		f->fclass = t->count ? DP_FC_STRING_ARRAY : DP_FC_STRING;
	else
		f->fclass = t->count ? DP_FC_ARRAY : DP_FC_NUM;
}

/* The record layout of an event, from its first probe. */
static int build_fields(struct dp_event *ev)
{
	const struct dp_probe_def *def = &ev->probes->def;
	unsigned nh = def->is_return ? 2 : 1, head = dp_probe_head_size(def);

	if (def->kind == DP_KIND_TRACEPOINT || def->kind == DP_KIND_EPROBE)
		nh = 0;

	ev->nfields = nh + def->nargs;
	ev->fields = calloc(ev->nfields, sizeof(*ev->fields));
	if (!ev->fields)
		return -ENOMEM;
	if (!nh) {
		/* a tracepoint's fields follow the common ones */
	} else if (def->is_return) {
		header_field(&ev->fields[0], "__probe_func", 8);
		header_field(&ev->fields[1], "__probe_ret_ip", 16);
	} else {
		header_field(&ev->fields[0], "__probe_ip", 8);
	}
	for (unsigned i = 0; i < def->nargs; i++)
		arg_field(&ev->fields[nh + i], &def->args[i], head);
	for (unsigned i = 0; i < ev->nfields; i++)
		if (!ev->fields[i].type)
			return -ENOMEM;
	ev->fixed_size = head + def->args_size;
	return 0;
}

/* Types are equal as the kernel's fetch_type pointers: b4@4/16 is u16. */
static bool same_type(const struct dp_type *a, const struct dp_type *b)
{
	enum dp_type_kind ka = a->kind == DP_T_BITFIELD ? DP_T_U : a->kind;
	enum dp_type_kind kb = b->kind == DP_T_BITFIELD ? DP_T_U : b->kind;

	return ka == kb && a->size == b->size && a->count == b->count;
}

/* trace_probe_compare_arg_type(): 0, or the 1-based first difference. */
static unsigned compare_args(const struct dp_probe_def *a,
			     const struct dp_probe_def *b)
{
	if (a->nargs != b->nargs)
		return (a->nargs < b->nargs ? a->nargs : b->nargs) + 1;
	for (unsigned i = 0; i < a->nargs; i++)
		if (!same_type(&a->args[i].type, &b->args[i].type) ||
		    strcmp(a->args[i].name, b->args[i].name))
			return i + 1;
	return 0;
}

static bool same_place(const struct dp_probe_def *a,
		       const struct dp_probe_def *b)
{
	const struct dp_place *x = &a->place, *y = &b->place;

	if (a->kind == DP_KIND_UPROBE)
		return x->dev == y->dev && x->ino == y->ino &&
		       x->offset == y->offset;
	if (!x->symbol || !y->symbol)
		return !x->symbol && !y->symbol && x->addr == y->addr;
	return !strcmp(x->symbol, y->symbol) && x->offset == y->offset &&
	       !strcmp(x->module ? x->module : "", y->module ? y->module : "");
}

/* All uprobes on one inode+offset must agree on the reference counter. */
static bool ref_ctr_mismatch(const struct dp_registry *reg,
			     const struct dp_probe_def *def)
{
	for (const struct dp_event *ev = reg->events; ev; ev = ev->next) {
		if (ev->kind != DP_KIND_UPROBE)
			continue;
		for (const struct dp_probe *p = ev->probes; p; p = p->next)
			if (p->def.place.dev == def->place.dev &&
			    p->def.place.ino == def->place.ino &&
			    p->def.place.offset == def->place.offset &&
			    p->def.place.ref_ctr != def->place.ref_ctr)
				return true;
	}
	return false;
}

/*
 * The kernel's dynamic event types: kprobes (p, r), uprobes, fprobes
 * (f, t) and eprobes.  A definition appends to an event of its own type
 * only (an eprobe to none); an application tracepoint's own event is of
 * none.
 */
static int family(const struct dp_probe_def *def)
{
	if (def->kind == DP_KIND_UPROBE)
		return 0;
	if (def->kind == DP_KIND_EPROBE)
		return 3;
	return def->fprobe || def->kind == DP_KIND_TRACEPOINT ? 2 : 1;
}

static int ev_family(const struct dp_event *ev)
{
	return ev->builtin || !ev->probes ? -1 : family(&ev->probes->def);
}

struct kind_want {
	int family;
	bool same;
};

static bool kind_ok(const struct dp_event *ev, const void *arg)
{
	const struct kind_want *w = arg;

	return (ev_family(ev) == w->family) == w->same;
}

static struct dp_event *find_kind(struct dp_registry *reg,
				  const struct dp_probe_def *def, bool same)
{
	struct kind_want w = { family(def), same };

	return dp_regidx_find_if(reg, def->group, def->event, kind_ok, &w);
}

static int append_probe(struct dp_registry *reg, struct dp_event *ev,
			struct dp_probe *p)
{
	*dp_regidx_probes_tail(reg, ev) = p;
	p->event = ev;
	dp_regidx_probe_added(reg, p);
	return 0;
}

static int new_event(struct dp_registry *reg, struct dp_probe *p)
{
	struct dp_event *ev = calloc(1, sizeof(*ev)), **tail;

	if (!ev)
		return -ENOMEM;
	ev->id = alloc_id(reg);
	ev->serial = ++reg->serials;
	memcpy(ev->group, p->def.group, sizeof(ev->group));
	memcpy(ev->name, p->def.event, sizeof(ev->name));
	ev->kind = p->def.kind;
	ev->is_return = p->def.is_return;
	ev->probes = p;
	p->event = ev;
	if (build_fields(ev)) {
		ev->probes = NULL;
		event_free(ev);
		return -ENOMEM;
	}
	tail = dp_regidx_events_tail(reg);
	*tail = ev;
	dp_regidx_event_added(reg, ev);
	return 0;
}

/*
 * register_kretprobe() gives a return probe without MAXACTIVE
 * max(10, 2 * possible CPUs) instances, and kprobe_events lists that
 * number ("r10:"); dprobe keeps the same default for symbol places.
 * Not for the tracers' events: the kernel's function_graph keeps a
 * return stack per task, and so do they (no maxactive).
 */
static int default_maxactive(void)
{
	int n = 2 * get_nprocs_conf();

	return n > 10 ? n : 10;
}

/* register_trace_uprobe() / register_trace_kprobe(). */
static int register_probe(struct dp_registry *reg, const char *line,
			  struct dp_probe *p, struct dp_error *err)
{
	struct dp_event *old;
	unsigned diff;

	if (p->def.kind == DP_KIND_KPROBE && p->def.is_return &&
	    !p->def.fprobe && !p->def.maxactive &&
	    strcmp(p->def.group, DP_TRACER_GROUP))
		p->def.maxactive = default_maxactive();
	/* trace_probe_register_event_call(): an eprobe never appends */
	if (p->def.kind == DP_KIND_EPROBE &&
	    dp_registry_find(reg, p->def.group, p->def.event)) {
		dp_error_at(err, line, DP_ERR_EVENT_EXIST, EEXIST, 0, 0);
		return -EEXIST;
	}
	if (p->def.kind == DP_KIND_UPROBE && ref_ctr_mismatch(reg, &p->def)) {
		dp_error_at(err, line, DP_ERR_REFCTR_MISMATCH, EINVAL, 1, 0);
		return -EINVAL;
	}
	old = find_kind(reg, &p->def, true);
	if (old) {
		if (old->is_return != p->def.is_return ||
		    old->kind != p->def.kind) {
			dp_error_at(err, line, DP_ERR_DIFF_PROBE_TYPE, EEXIST, 0, 0);
			return -EEXIST;
		}
		diff = compare_args(&p->def, &old->probes->def);
		if (diff) {
			dp_error_at(err, line, DP_ERR_DIFF_ARG_TYPE, EEXIST,
				    (int)diff + 1, 0);
			return -EEXIST;
		}
		if (dp_regidx_same_probe(reg, old, &p->def, same_place)) {
			dp_error_at(err, line, DP_ERR_SAME_PROBE, EEXIST, 0, 0);
			return -EEXIST;
		}
		return append_probe(reg, old, p);
	}
	if (find_kind(reg, &p->def, false)) {
		dp_error_at(err, line, DP_ERR_EVENT_EXIST, EEXIST, 0, 0);
		return -EEXIST;
	}
	return new_event(reg, p);
}

/* ---- synthetic events ---------------------------------------------------- */

static void log_error(struct dp_registry *reg, const struct dp_error *e);

/*
 * A synthetic event's fields, one 8-byte slot each after the common
 * fields (a char[N] takes 256 bytes), as synth_event_define_fields() lays
 * them out.
 */
static int synth_fields(struct dp_event *ev)
{
	const struct dp_synth_def *d = ev->synth;

	ev->nfields = d->nfields;
	ev->fields = calloc(d->nfields, sizeof(*ev->fields));
	if (!ev->fields)
		return -ENOMEM;
	for (unsigned i = 0; i < d->nfields; i++) {
		const struct dp_synth_field *sf = &d->fields[i];
		struct dp_field *f = &ev->fields[i];

		f->name = sf->name;
		f->type = strdup(sf->type);
		if (!f->type)
			return -ENOMEM;
		f->offset = DP_TP_HEAD_SIZE + sf->offset;
		f->size = sf->size;
		f->is_signed = sf->is_signed;
		f->elem_size = sf->size;
		f->fclass = DP_FC_NUM;
		if (sf->is_string && sf->is_dynamic) {
			f->fclass = DP_FC_STRING;
			f->elem_size = 4;
		} else if (sf->is_stack) {
			f->fclass = DP_FC_STACK;
			f->elem_size = 8;
		} else if (sf->is_string) {
			f->fclass = DP_FC_ARRAY;
			f->elem_size = 1;
			f->count = sf->size;
		}
	}
	ev->fixed_size = DP_TP_HEAD_SIZE + d->size;
	return 0;
}

static int synth_create(struct dp_registry *reg, const char *line, bool dyn,
			struct dp_error *err)
{
	struct dp_synth_def *d = calloc(1, sizeof(*d));
	struct dp_event *ev, **tail;
	int ret;

	if (!d)
		return -ENOMEM;
	ret = dp_parse_synth(line, dyn, d, err);
	if (ret) {
		free(d);
		return ret == -ENODATA ? 0 : ret;
	}
	ev = dp_registry_find(reg, DP_SYNTH_GROUP, d->name);
	if (ev) {
		/* find_synth_event() finds it; another kind of event of
		 * that name fails registration, without a log entry */
		ret = ev->synth ? dp_synth_error(err, line,
						 DP_ERR_SYNTH_EVENT_EXISTS,
						 d->name, EEXIST) : -EEXIST;
		dp_synth_def_free(d);
		free(d);
		return ret;
	}
	ev = calloc(1, sizeof(*ev));
	if (!ev) {
		dp_synth_def_free(d);
		free(d);
		return -ENOMEM;
	}
	ev->id = alloc_id(reg);
	ev->serial = ++reg->serials;
	snprintf(ev->group, sizeof(ev->group), "%s", DP_SYNTH_GROUP);
	snprintf(ev->name, sizeof(ev->name), "%s", d->name);
	ev->kind = DP_KIND_SYNTH;
	ev->synth = d;
	if (synth_fields(ev)) {
		event_free(ev);
		return -ENOMEM;
	}
	tail = dp_regidx_events_tail(reg);
	*tail = ev;
	dp_regidx_event_added(reg, ev);
	return 0;
}

int dp_registry_synth(struct dp_registry *reg, const char *line, bool dyn,
		      struct dp_error *err)
{
	struct dp_error local = { 0 };
	struct dp_error *e = err ? err : &local;
	int ret;

	dp_error_clear(e);
	ret = synth_create(reg, line, dyn, e);
	if (ret)
		log_error(reg, e);
	dp_error_clear(&local);
	return ret;
}

/* synth_event_match(): by name, in the synthetic group; the rest of a
 * delete's words are not looked at. */
static bool synth_matches(const struct dp_delete_cmd *cmd,
			  const struct dp_event *ev)
{
	return ev->synth && !strcmp(ev->name, cmd->event) &&
	       (cmd->any_group || !strcmp(cmd->group, DP_SYNTH_GROUP));
}

/* Unlink and free @ev, the last event made. */
static void drop_event(struct dp_registry *reg, struct dp_event *ev)
{
	struct dp_event **pp = &reg->events;

	dp_regidx_drop(reg);
	while (*pp && *pp != ev)
		pp = &(*pp)->next;
	if (*pp)
		*pp = ev->next;
	event_free(ev);
}

static int create(struct dp_registry *reg, const char *line,
		  struct dp_probe **out, struct dp_error *err)
{
	struct dp_probe *p;
	int ret;

	if (line[0] == 's' && line[1] == ':')
		return synth_create(reg, line, true, err);
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	if (line[strspn(line, " \t")] == 'e')
		ret = dp_eprobe_parse(reg, line, &p->def, err);
	else
		ret = dp_parse_probe_flags(line, &p->def, err, reg->parse_flags);
	if (ret == -ENODATA) {
		free(p);
		return 0;
	}
	if (!ret && reg->resolve && p->def.kind != DP_KIND_EPROBE)
		ret = reg->resolve(reg->resolve_priv, line, &p->def, p, err);
	if (!ret)
		ret = register_probe(reg, line, p, err);
	if (ret) {
		probe_free(p);
		return ret;
	}
	if (p->def.kind == DP_KIND_EPROBE) {
		ret = dp_eprobe_link(reg, p->event, line, err);
		if (ret) {
			drop_event(reg, p->event);
			return ret;
		}
	}
	if (out)
		*out = p;
	return 0;
}

/* "NAME=BODY" tokens after the place must equal the first arguments. */
static bool args_match(const struct dp_probe_def *def, int argc,
		       char *const *argv)
{
	char buf[DP_MAX_ARGSTR_LEN + 1];

	if ((int)def->nargs < argc)
		return false;
	for (int i = 0; i < argc; i++) {
		snprintf(buf, sizeof(buf), "%s=%s", def->args[i].name,
			 def->args[i].body);
		if (strcmp(buf, argv[i]))
			return false;
	}
	return true;
}

/* trace_{u,k}probe_match_command_head(). */
static bool head_matches(const struct dp_probe_def *def, int argc,
			 char *const *argv)
{
	char buf[DP_MAX_ARGSTR_LEN + 1];
	const char *tok;
	size_t len;

	if (!argc)
		return true;
	tok = argv[0];
	if (def->kind == DP_KIND_UPROBE) {
		len = strlen(def->place.path);
		if (strncmp(def->place.path, tok, len) || tok[len] != ':')
			return false;
		if (def->place.ref_ctr)
			snprintf(buf, sizeof(buf), "0x%016lx(0x%lx)",
				 (unsigned long)def->place.offset,
				 (unsigned long)def->place.ref_ctr);
		else
			snprintf(buf, sizeof(buf), "0x%016lx",
				 (unsigned long)def->place.offset);
		tok += len + 1;
	} else if (def->kind == DP_KIND_EPROBE) {
		/* eprobe_dyn_event_match(): SYSTEM/EVENT or SYSTEM.EVENT */
		size_t glen = strlen(def->place.module);

		return !strncmp(tok, def->place.module, glen) &&
		       (tok[glen] == '/' || tok[glen] == '.') &&
		       !strcmp(tok + glen + 1, def->place.symbol) &&
		       args_match(def, argc - 1, argv + 1);
	} else {
		char *place = dp_place_canonical(def);

		snprintf(buf, sizeof(buf), "%s", place ? place : "");
		free(place);
	}
	return !strcmp(buf, tok) && args_match(def, argc - 1, argv + 1);
}

static bool delete_matches(const struct dp_delete_cmd *cmd,
			   const struct dp_event *ev, const struct dp_probe *p)
{
	return (!cmd->event[0] || !strcmp(ev->name, cmd->event)) &&
	       (cmd->any_group || !strcmp(ev->group, cmd->group)) &&
	       head_matches(&p->def, cmd->nmatch, cmd->match);
}

/* Unlink matching probes, then events left with none. */
static void remove_matching(struct dp_registry *reg,
			    const struct dp_delete_cmd *cmd)
{
	struct dp_event **evp = &reg->events;

	dp_regidx_drop(reg);
	while (*evp) {
		struct dp_event *ev = *evp;

		if (ev->synth) {
			if (synth_matches(cmd, ev)) {
				*evp = ev->next;
				event_free(ev);
			} else {
				evp = &ev->next;
			}
			continue;
		}
		struct dp_probe **pp = &ev->probes;

		while (*pp) {
			struct dp_probe *p = *pp;

			if (delete_matches(cmd, ev, p)) {
				*pp = p->next;
				probe_free(p);
			} else {
				pp = &p->next;
			}
		}
		if (ev->probes) {
			evp = &ev->next;
			continue;
		}
		*evp = ev->next;
		event_free(ev);
	}
}

/*
 * An enabled event is busy for a delete only if it would lose its last
 * probe: the kernel removes a probe that has siblings without looking
 * (trace_probe_has_sibling()).
 */
static bool delete_busy(const struct dp_delete_cmd *cmd, struct dp_event *ev)
{
	if (!ev->enabled)
		return false;
	for (struct dp_probe *p = ev->probes; p; p = p->next)
		if (!delete_matches(cmd, ev, p))
			return false;	/* a sibling stays */
	return true;
}

/* Would the delete take every probe of @ev? */
static bool delete_empties(const struct dp_delete_cmd *cmd,
			   const struct dp_event *ev)
{
	for (const struct dp_probe *p = ev->probes; p; p = p->next)
		if (!delete_matches(cmd, ev, p))
			return false;
	return true;
}

/*
 * dyn_event_release().  Unlike the kernel, which may delete some matches
 * before finding a busy one, the whole delete is refused when any match is
 * busy, so a failed command never half-applies.
 */
static int delete(struct dp_registry *reg, const char *line,
		  struct dp_error *err)
{
	struct dp_delete_cmd cmd;
	bool found = false;
	int ret = dp_parse_delete(line, &cmd, err);

	if (ret)
		return ret;
	for (struct dp_event *ev = reg->events; ev; ev = ev->next) {
		if (synth_matches(&cmd, ev)) {
			found = true;
			if (ev->enabled) {
				dp_error_at(err, line, DP_ERR_BUSY, EBUSY, 0, 0);
				ret = -EBUSY;
				goto out;
			}
		}
		for (struct dp_probe *p = ev->probes; p; p = p->next) {
			if (!delete_matches(&cmd, ev, p))
				continue;
			found = true;
			if (delete_busy(&cmd, ev)) {
				dp_error_at(err, line, DP_ERR_BUSY, EBUSY, 0, 0);
				ret = -EBUSY;
				goto out;
			}
			if (ev->neprobes && delete_empties(&cmd, ev)) {
				dp_error_at(err, line, DP_ERR_EP_ATTACHED,
					    EBUSY, 0, 0);
				ret = -EBUSY;
				goto out;
			}
		}
	}
	if (!found) {
		dp_error_at(err, line, DP_ERR_NO_SUCH_EVENT, ENOENT, 0, 0);
		ret = -ENOENT;
		goto out;
	}
	remove_matching(reg, &cmd);
out:
	dp_delete_cmd_free(&cmd);
	return ret;
}

static void log_error(struct dp_registry *reg, const struct dp_error *e)
{
	struct dp_error *slot;

	if (!e->logged)
		return;
	if (reg->nlog == 8) {
		dp_error_clear(&reg->log[0]);
		memmove(&reg->log[0], &reg->log[1], 7 * sizeof(reg->log[0]));
		memset(&reg->log[7], 0, sizeof(reg->log[7]));
		reg->nlog--;
	}
	slot = &reg->log[reg->nlog++];
	*slot = *e;
	slot->command = e->command ? strdup(e->command) : NULL;
}

int dp_registry_apply(struct dp_registry *reg, const char *raw,
		      struct dp_probe **probe_out, struct dp_error *err)
{
	struct dp_error local = { 0 };
	struct dp_error *e = err ? err : &local;
	size_t len = strlen(raw);
	char *line;
	int ret;

	if (probe_out)
		*probe_out = NULL;
	dp_error_clear(e);
	/* the kernel's write path cuts each line at its first '#' */
	line = strndup(raw, strcspn(raw, "#\n"));
	if (!line)
		return -ENOMEM;
	if (len > DP_MAX_LINE_LEN) {
		dp_error_at(e, "", DP_ERR_LINE_TOO_LONG, EINVAL, 0, 0);
		ret = -EINVAL;
	} else if (dp_line_is_delete(line)) {
		ret = delete(reg, line, e);
	} else {
		ret = create(reg, line, probe_out, e);
	}
	if (ret)
		log_error(reg, e);
	dp_error_clear(&local);
	free(line);
	return ret;
}

/* ---- kernel tracepoints -------------------------------------------------- */

struct dp_event *dp_registry_kernel_tp(struct dp_registry *reg,
				       const char *group, const char *name,
				       const char *format)
{
	struct dp_event *ev = dp_registry_find(reg, group, name), **tail;

	if (ev)
		return ev->kernel ? ev : NULL;
	ev = calloc(1, sizeof(*ev));
	if (!ev || !(ev->probes = calloc(1, sizeof(*ev->probes)))) {
		free(ev);
		return NULL;
	}
	/* ids of their own: the events a user makes are numbered as
	 * without them */
	ev->id = alloc_id_from(reg, DP_FIRST_KERNEL_TP_ID);
	ev->serial = ++reg->serials;
	snprintf(ev->group, sizeof(ev->group), "%s", group);
	snprintf(ev->name, sizeof(ev->name), "%s", name);
	ev->kind = DP_KIND_TRACEPOINT;
	ev->kernel = ev->builtin = true;
	/* one probe with no place: what the record counts are kept on */
	ev->probes->event = ev;
	ev->probes->def.kind = DP_KIND_TRACEPOINT;
	ev->ktp = dp_ktp_parse(format);
	if (!ev->ktp || dp_ktp_describe(ev, ev->ktp, format)) {
		event_free(ev);
		return NULL;
	}
	tail = dp_regidx_events_tail(reg);
	*tail = ev;
	dp_regidx_event_added(reg, ev);
	return ev;
}
