// SPDX-License-Identifier: GPL-2.0
/*
 * Event probes (eprobe.h): an e: line's fields looked up in the
 * registry, the link to the attached event, and the records made from
 * each record of it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "event/eprobe.h"
#include "event/filter.h"
#include "lang/fetch.h"

/* ---- parsing ------------------------------------------------------------- */

static bool has_event(void *priv, const char *group, const char *name)
{
	return dp_registry_find(priv, group, name) != NULL;
}

/* The kernel's filter_assign_type() for a field, as get_event_field()
 * then reads it: our records keep every string as __data_loc. */
static enum dp_tfield_kind field_kind(const struct dp_field *f)
{
	if (f->fclass == DP_FC_STRING)
		return DP_TF_DYN_STR;
	if (f->fclass == DP_FC_ARRAY && f->elem_size == 1 &&
	    strstr(f->type, "char"))
		return DP_TF_STATIC_STR;
	if (strstr(f->type, "char *"))
		return DP_TF_PTR_STR;
	return DP_TF_NUM;
}

/* A field of the event's own (not a common one: trace_get_fields()). */
static int find_field(void *priv, const char *group, const char *name,
		      const char *field, struct dp_tfield *out)
{
	const struct dp_event *ev = dp_registry_find(priv, group, name);

	for (unsigned i = 0; ev && i < ev->nfields; i++) {
		const struct dp_field *f = &ev->fields[i];

		if (strcmp(f->name, field))
			continue;
		/* an array of numbers is no value: the kernel reads its
		 * first element's bytes; so does dprobe */
		*out = (struct dp_tfield){
			.offset = f->offset,
			.size = f->elem_size ? f->elem_size : f->size,
			.is_signed = f->is_signed, .kind = field_kind(f),
		};
		if (out->size > 8)
			out->size = 8;
		return 0;
	}
	return -ENOENT;
}

int dp_eprobe_parse(const struct dp_registry *reg, const char *line,
		    struct dp_probe_def *def, struct dp_error *err)
{
	const struct dp_attach_lookup lk = {
		.event = has_event, .field = find_field, .priv = (void *)reg,
	};

	return dp_parse_eprobe(line, def, err, &lk);
}

/* ---- the link ------------------------------------------------------------ */

int dp_eprobe_link(struct dp_registry *reg, struct dp_event *ev,
		   const char *line, struct dp_error *err)
{
	const struct dp_probe_def *def = &ev->probes->def;
	struct dp_event *att = dp_registry_find(reg, def->place.module,
						def->place.symbol);
	struct dp_event **v;

	if (!att)
		return -ENODEV;	/* the parser looked: cannot happen */
	if (def->filter) {
		struct dp_filter_error fe = { 0 };

		ev->ep_filter = dp_filter_compile(att, def->filter, &fe);
		if (!ev->ep_filter) {
			dp_error_detail(err, line, DP_ERR_BAD_EP_FILTER, EINVAL,
					0, 0, "%s", dp_filter_err_message(fe.code));
			return -EINVAL;
		}
	}
	v = realloc(att->eprobes, (att->neprobes + 1) * sizeof(*v));
	if (!v) {
		dp_filter_free(ev->ep_filter);
		ev->ep_filter = NULL;
		return -ENOMEM;
	}
	att->eprobes = v;
	att->eprobes[att->neprobes++] = ev;
	ev->attached = att;
	return 0;
}

void dp_eprobe_unlink(struct dp_event *ev)
{
	struct dp_event *att = ev->attached;

	dp_filter_free(ev->ep_filter);
	ev->ep_filter = NULL;
	if (!att)
		return;
	for (unsigned i = 0; i < att->neprobes; i++) {
		if (att->eprobes[i] != ev)
			continue;
		memmove(&att->eprobes[i], &att->eprobes[i + 1],
			(att->neprobes - i - 1) * sizeof(*att->eprobes));
		att->neprobes--;
		break;
	}
	ev->attached = NULL;
}

/* ---- firing -------------------------------------------------------------- */

/* The traced process's memory, read when the record is delivered. */
static int read_task(void *priv, uint64_t addr, void *dst, size_t len)
{
	int pid = *(const int *)priv;

	if (pid <= 0)
		return -EFAULT;	/* no engine vouched for one */
	struct iovec local = { dst, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };

	return process_vm_readv(pid, &local, 1, &remote, 1, 0) ==
	       (ssize_t)len ? 0 : -EFAULT;
}

#define EPROBE_REC_MAX (64u << 10)

void dp_eprobe_fire(const struct dp_deliver *d, const struct dp_event *att,
		    const void *rec, size_t len, const struct dp_rec_meta *meta,
		    const struct dp_symbolizer *sym)
{
	static __thread uint8_t *buf;
	int pid = meta->mm_pid;
	struct dp_hit_ctx ctx = {
		.read_mem = read_task, .priv = &pid, .comm = meta->comm,
		.pid = meta->pid, .rec = rec, .rec_len = len,
	};

	if (!buf && !(buf = malloc(EPROBE_REC_MAX)))
		return;
	for (unsigned i = 0; i < att->neprobes; i++) {
		struct dp_event *ep = att->eprobes[i];
		struct dp_probe *pr = ep->probes;
		size_t n;

		if (!ep->enabled || (ep->ep_filter &&
		    !dp_filter_match(ep->ep_filter, att, rec, len, meta)))
			continue;
		pr->nhit++;
		n = dp_fetch_record(&pr->def, ep->id, &ctx, buf, EPROBE_REC_MAX);
		if (n)
			dp_event_deliver(d, pr, buf, n, meta, sym);
		else
			dp_event_lost_record(d);
	}
}
