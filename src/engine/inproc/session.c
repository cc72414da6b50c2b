// SPDX-License-Identifier: GPL-2.0
/*
 * The in-process engine's work with one process image (see inproc.h):
 * launch a command or inject the agent into a process, then, for every
 * image that joins the session, the handshake that hands it the rings
 * and the probes, and the detach that takes everything out again.
 * tree.c runs the session over all of them.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/agent/protocol.h"
#include "engine/engine.h"
#include "engine/inproc/internal.h"
#include "engine/ptrace/inject.h"
#include "lang/errors.h"
#include "util/util.h"

#define CONNECT_TIMEOUT_MS	10000
#define DETACH_TIMEOUT_MS	5000
#define JOIN_HELLO_MS		1000

void inproc_log(struct dp_inproc *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(t->o.log ? t->o.log : stderr, fmt, ap);
	va_end(ap);
}

/* ---- suitability ------------------------------------------------------------ */

/* Whether @path asks for a dynamic loader (PT_INTERP): -1 if unreadable. */
static int has_interp(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = -1;
	size_t n;
	Elf *e;

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (e && !elf_getphdrnum(e, &n)) {
		ret = 0;
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_INTERP)
				ret = 1;
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return ret;
}

int dp_inproc_program(const char *path)
{
	struct stat st;
	int interp;

	if (stat(path, &st) || (interp = has_interp(path)) < 0)
		return -1;
	return (interp ? DP_PROGRAM_DYNAMIC : 0) |
	       (st.st_mode & (S_ISUID | S_ISGID) ? DP_PROGRAM_SETID : 0);
}

/* ---- the channels ----------------------------------------------------------- */

/*
 * Every channel is a socket pair nobody else can reach.  A launched
 * command inherits one end of the hub, and each agent in its tree hands
 * dprobe the end of a pair of its own over it (NEW, tree.c); in a
 * running process the agent makes the pair and dprobe takes its end out
 * of the process with pidfd_getfd(), which needs the same rights as
 * ptrace.  No name, so no other user can see, connect to or flood them.
 */
int inproc_check_end(int fd, pid_t pid)
{
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	int type = 0, dom = 0;
	socklen_t tl = sizeof(type), dl = sizeof(dom);

	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &dl) ||
	    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl))
		return -EPROTO;
	/* a socket pair's credentials are its creator's: the target */
	if (dom != AF_UNIX || type != SOCK_SEQPACKET || cred.pid != pid)
		return -EPROTO;
	return 0;
}

/* dprobe's end of the pair the agent made in @pid, descriptor @fd there. */
static int take_agent_end(struct ip_proc *p, long fd, char *why,
			  size_t whylen)
{
	int pidfd = (int)syscall(SYS_pidfd_open, p->pid, 0), mine, ret;

	if (pidfd < 0 || fd < 0 || fd > INT_MAX) {
		ret = pidfd < 0 ? -errno : -EPROTO;
		goto fail;
	}
	mine = (int)syscall(SYS_pidfd_getfd, pidfd, (int)fd, 0);
	ret = mine < 0 ? -errno : inproc_check_end(mine, p->pid);
	if (ret && mine >= 0)
		close(mine);
	if (!ret)
		p->sock = mine;
fail:
	if (pidfd >= 0)
		close(pidfd);
	if (ret)
		snprintf(why, whylen, "cannot take the agent's channel from "
			 "process %d: %s", (int)p->pid, strerror(-ret));
	return ret;
}

bool inproc_root_gone(struct dp_inproc *t)
{
	if (t->exited)
		return true;
	if (t->launched) {
		if (waitpid(t->pid, &t->status, WNOHANG) == t->pid)
			t->exited = true;
	} else if (kill(t->pid, 0) && errno == ESRCH) {
		t->exited = true;
	}
	return t->exited;
}

/* ---- the handshake ---------------------------------------------------------- */

/* The root of the session (the first image): its errors are the session's. */
static bool is_root(const struct ip_proc *p)
{
	return p == p->tree->procs;
}

static int hello_clock(struct ip_proc *p, const char *clock, char *why,
		       size_t whylen)
{
	struct dp_inproc *t = p->tree;
	bool tsc = !strcmp(clock, "tsc");

	if (!t->clk_set) {
		clk_init(&t->clk, tsc);
		t->clk_set = true;
		inproc_agg_clock(t);
	} else if (t->clk.tsc != tsc) {
		snprintf(why, whylen, "its agent stamps records with another "
			 "clock (%s)", clock);
		return -EPROTO;
	}
	return 0;
}

/*
 * -p with -f: the agent made the hub its process's programs join over
 * (dprobe_agent_attach("f")), and sends our end right after HELLO.
 */
static int take_hub(struct ip_proc *p, char *why, size_t whylen)
{
	char buf[DP_AGENT_MSG_MAX];
	int fd, n = chan_recv_fd(p, buf, sizeof(buf), &fd, CONNECT_TIMEOUT_MS);

	if (n > 0 && !strcmp(buf, "HUB") && fd >= 0 &&
	    !inproc_check_end(fd, p->pid)) {
		p->tree->hub = fd;
		return 0;
	}
	if (fd >= 0)
		close(fd);
	snprintf(why, whylen, "the agent of process %d did not send the hub "
		 "of its process tree", (int)p->pid);
	return n < 0 ? n : -EPROTO;
}

/*
 * "HELLO <version> <pid> <clock> [fork <ppid>]", the agent's first word,
 * within CONNECT_TIMEOUT_MS.
 */
static int hello(struct ip_proc *p, char *why, size_t whylen)
{
	char buf[DP_AGENT_MSG_MAX], clock[16];
	/* a followed image's agent says it right after NEW: a process that
	 * does not must not hold the others' reading long */
	int ver, pid, ppid, n = chan_recv(p, buf, sizeof(buf),
					  is_root(p) ? CONNECT_TIMEOUT_MS :
					  JOIN_HELLO_MS);

	if (n <= 0) {
		snprintf(why, whylen, "the agent of process %d did not say "
			 "hello", (int)p->pid);
		return n ? n : -EPIPE;
	}
	if (sscanf(buf, "HELLO %d %d %15s", &ver, &pid, clock) != 3) {
		snprintf(why, whylen, "the agent did not say hello");
		return -EPROTO;
	}
	if (ver != DP_AGENT_VERSION) {
		snprintf(why, whylen, "the agent speaks version %d, dprobe %d",
			 ver, DP_AGENT_VERSION);
		return -EPROTO;
	}
	if (pid != p->pid) {
		snprintf(why, whylen, "the agent of process %d answered for "
			 "process %d", (int)p->pid, pid);
		return -EPROTO;
	}
	if (sscanf(buf, "HELLO %*d %*d %*s fork %d", &ppid) == 1)
		p->parent = ppid;
	n = hello_clock(p, clock, why, whylen);
	if (!n && is_root(p) && p->tree->o.follow && !p->tree->launched)
		n = take_hub(p, why, whylen);
	return n;
}

int inproc_ring_set(struct dp_inproc *t, struct dp_ring_set *set)
{
	const struct dp_inproc_opts *o = &t->o;
	uint64_t size = dp_ring_size_round(o->buffer_size ? o->buffer_size :
					   DP_RING_DEFAULT_SIZE);

	if (!size)
		return -E2BIG;
	return dp_ring_set_create(set, DP_RING_DEFAULT_RINGS, size,
				  o->overwrite ? DP_RING_OVERWRITE :
				  o->blocking ? DP_RING_BLOCK :
				  DP_RING_DISCARD);
}

/* The image's rings: the spare set made ahead of time (tree.c), or new. */
static int rings(struct ip_proc *p, char *why, size_t whylen)
{
	struct dp_inproc *t = p->tree;
	int ret = 0;

	if (t->have_spare) {
		p->rings = t->spare;
		t->have_spare = false;
	} else {
		ret = inproc_ring_set(t, &p->rings);
	}
	if (ret) {
		snprintf(why, whylen, "cannot create the rings: %s",
			 ret == -E2BIG ? "buffer size too large" : strerror(-ret));
		return ret;
	}
	p->have_rings = true;
	p->rd = dp_ring_reader_new(&p->rings, true);
	if (!p->rd)
		return -ENOMEM;
	return chan_send(p, p->rings.fd, "RINGS");
}

static int new_slot(struct ip_proc *p, struct dp_probe *pr, uint64_t addr)
{
	struct slot *v;

	if (p->nslots >= DP_AGENT_MAX_SLOTS)
		return -E2BIG;
	v = realloc(p->slots, (p->nslots + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	p->slots = v;
	v[p->nslots] = (struct slot){ .pr = pr, .addr = addr };
	return (int)p->nslots++;
}

/* @SYM arguments: their run-time addresses, as the ptrace engine reads. */
static int send_syms(struct ip_proc *p, int slot, const struct dp_probe *pr)
{
	for (unsigned i = 0; i < pr->def.nargs; i++) {
		const struct dp_arg *a = &pr->def.args[i];
		char why[160];
		uint64_t addr;
		int ret;

		if (a->insn[0].op != DP_FOP_SYMBOL ||
		    dp_proc_sym_addr(p->proc, a->insn[0].data, &addr, why,
				     sizeof(why)))
			continue;
		ret = chan_send(p, -1, "SYM %d %u %llx", slot, i,
			       (unsigned long long)addr);
		if (ret)
			return ret;
	}
	return 0;
}

/* chan_answer()'s result where an ERR answer is not an error. */
static int answer_errno(int ret)
{
	return ret < 0 ? ret : 0;
}

/* The agent's answer to IFUNC: 0 with *@impl, or -errno. */
static int ifunc_reply(struct ip_proc *p, uint64_t *impl)
{
	char buf[DP_AGENT_MSG_MAX];
	unsigned long long a;
	int ret = chan_answer(p, "IFUNC ", buf, sizeof(buf));

	if (ret)
		return ret < 0 ? ret : -ENOENT;
	if (sscanf(buf, "IFUNC %llx", &a) != 1)
		return -EPROTO;
	*impl = a;
	return 0;
}

/*
 * A probe on an IFUNC symbol's entry would be on its resolver, which runs
 * once, at binding: it goes on the implementation the loader chose in
 * this process instead (asked of the agent), and dprobe says so once.
 * @l is changed; 0, or -EPIPE (the channel failed).
 */
static int ifunc_target(struct ip_proc *p, struct dp_probe *pr,
			struct dp_proc_loc *l)
{
	struct dp_proc_sym ps, impl_ps;
	uint64_t impl;
	int ret;

	if (pr->def.place.offset || dp_proc_symbolize(p->proc, l->addr, &ps) ||
	    !ps.ifunc || ps.off || !l->obj || !l->obj->path)
		return 0;
	ret = chan_send(p, -1, "IFUNC %s %s", ps.name, l->obj->path);
	if (!ret)
		ret = ifunc_reply(p, &impl);
	if (ret)
		return ret == -EPIPE ? ret : 0;
	if (dp_proc_symbolize(p->proc, impl, &impl_ps) || !impl_ps.obj)
		return 0;
	l->file_offset += impl - l->addr;
	if (!pr->ifunc_said) {
		inproc_log(p->tree, "dprobe: %s/%s: %s is an IFUNC: probing "
			   "%s%s%s+%#llx, the implementation this process "
			   "uses\n", pr->event->group, pr->event->name,
			   ps.name, impl_ps.name ? impl_ps.name : "",
			   impl_ps.name ? " at " : "",
			   dp_base_name(impl_ps.obj->path),
			   (unsigned long long)l->file_offset);
		pr->ifunc_said = true;
	}
	l->vaddr += impl - l->addr;
	l->addr = impl;
	return 0;
}

/* True if @addr is the first byte of a function symbol of @p's objects:
 * there the caller is only in the return address at [sp]. */
static bool at_func_entry(struct dp_proc *proc, uint64_t addr)
{
	struct dp_proc_sym ps;

	return !dp_proc_symbolize(proc, addr, &ps) && ps.name && !ps.off;
}

static int send_location(struct ip_proc *p, struct dp_probe *pr,
			 const struct dp_proc_loc *l, const char *line)
{
	unsigned flags = p->tree->o.count_only && !pr->event->filter ?
		DP_AGENT_F_COUNT : 0;
	int slot = new_slot(p, pr, l->addr), ret;

	if (slot < 0)
		return slot;
	if (inproc_agg_flags(p->tree, pr->event))
		flags = inproc_agg_flags(p->tree, pr->event);
	p->slots[slot].counter = flags && slot < (int)DP_RING_NCOUNTERS;
	/* --stack: the agent walks the stack for this location only (a
	 * tracepoint's registers are made up: the frame-pointer chain from
	 * the function that fired it, never a snapshot) */
	if (!flags && pr->event->stack) {
		bool tp = pr->def.kind == DP_KIND_TRACEPOINT;

		flags = DP_AGENT_F_STACK;
		if (pr->event->stack_dwarf && !tp)
			flags |= DP_AGENT_F_DWARF |
				DP_AGENT_DWARF_FLAGS(pr->event->stack_dwarf);
		else if (!pr->def.is_return && !tp &&
			 at_func_entry(p->proc, l->addr))
			flags |= DP_AGENT_F_ENTRY;
		if (pr->event->stack_max && (flags & DP_AGENT_F_ENTRY))
			flags |= DP_AGENT_F_STACKMAX;
		p->slots[slot].depths = flags & DP_AGENT_F_STACKMAX;
		p->slots[slot].stack = true;
		p->slots[slot].snap = tp ? 0 : pr->event->stack_dwarf;
	}
	ret = chan_send(p, -1, "PROBE %d %u %llx %llx %x %s", slot,
		       pr->event->id, (unsigned long long)l->addr,
		       (unsigned long long)(l->addr - l->file_offset), flags,
		       line);
	if (!ret && (flags & DP_AGENT_F_AGG))
		ret = inproc_agg_send(p, slot, pr->event);
	if (!ret && l->ref_ctr_addr)
		ret = chan_send(p, -1, "REF %d %llx", slot,
			       (unsigned long long)l->ref_ctr_addr);
	return ret ? ret : send_syms(p, slot, pr);
}

/*
 * The root image without -f must have every place: the engine cannot
 * wait for an object to be loaded later.  With -f, and in every image
 * that follows, a place that is not in this image is pending: an exec or
 * another process of the session may have it.
 */
static int unresolved(struct ip_proc *p, struct dp_probe *pr,
		      const char *what, int err, char *why, size_t whylen)
{
	struct dp_inproc *t = p->tree;
	struct pend *q;

	if (err == -ENOTSUP || !is_root(p) || t->o.follow) {
		p->pending++;
		for (q = t->pend; q && q->pr != pr; q = q->next)
			;
		if (!q && (q = calloc(1, sizeof(*q)))) {
			q->pr = pr;
			q->next = t->pend;
			t->pend = q;
		}
		if (q) {
			q->n++;
			snprintf(q->why, sizeof(q->why), "%s", what);
		}
		return 0;
	}
	snprintf(why, whylen, "%s/%s: %s", pr->event->group, pr->event->name,
		 what);
	return err;
}

static int send_probe(struct ip_proc *p, struct dp_probe *pr, char *why,
		      size_t whylen)
{
	struct dp_error e = { 0 };
	struct dp_proc_res res;
	char *line, what[1024];
	int ret = dp_proc_resolve(p->proc, NULL, &pr->def, &res, &e);

	if (ret) {
		snprintf(what, sizeof(what), "%s%s%s%s", dp_err_message(e.code),
			 e.detail[0] ? " (" : "", e.detail,
			 e.detail[0] ? ")" : "");
		dp_error_clear(&e);
		return unresolved(p, pr, what, ret, why, whylen);
	}
	if (res.pending) {
		/* armed when it is loaded (MAPS) */
		snprintf(what, sizeof(what), "%s never loaded",
			 pr->def.place.module ? pr->def.place.module :
			 "its object");
		dp_proc_res_free(&res);
		return unresolved(p, pr, what, -ENOTSUP, why, whylen);
	}
	line = dp_probe_canonical(&pr->def);
	for (size_t i = 0; !ret && i < res.n; i++) {
		ret = ifunc_target(p, pr, &res.loc[i]);
		if (!ret)
			ret = line ? send_location(p, pr, &res.loc[i], line) :
			      -ENOMEM;
		if (!ret && !pr->vaddr) {
			pr->vaddr = res.loc[i].vaddr;
			pr->file_offset = res.loc[i].file_offset;
		}
	}
	free(line);
	dp_proc_res_free(&res);
	if (ret && !why[0])
		snprintf(why, whylen, "the agent went away");
	return ret;
}

/* The live image of a fork child's parent, or NULL. */
static struct ip_proc *parent_of(const struct ip_proc *p)
{
	struct ip_proc *parent = NULL;

	for (struct ip_proc *q = p->tree->procs; q; q = q->next)
		if (q->pid == p->parent && q != p && !q->closed)
			parent = q;
	return parent;
}

/*
 * A fork child: its parent's objects (the same mappings: the parent's
 * reading of them serves, as the images are freed together at the end)
 * and probe locations, at the same addresses.
 */
static int inherit(struct ip_proc *p, char *why, size_t whylen)
{
	const struct ip_proc *parent = parent_of(p);

	if (!parent || !parent->proc) {
		snprintf(why, whylen, "its parent %d is not traced",
			 (int)p->parent);
		return -ESRCH;
	}
	p->proc = parent->proc;
	p->proc_borrowed = true;
	p->slots = calloc(parent->nslots ? parent->nslots : 1,
			  sizeof(*p->slots));
	if (!p->slots)
		return -ENOMEM;
	for (unsigned i = 0; i < parent->nslots; i++) {
		const struct slot *s = &parent->slots[i];

		p->slots[i] = (struct slot){ .pr = s->pr, .addr = s->addr,
					     .counter = s->counter };
		if (s->how && !(p->slots[i].how = strdup(s->how)))
			return -ENOMEM;
	}
	p->nslots = parent->nslots;
	p->pending = parent->pending;
	return 0;
}

/* One reply to ARM: 1 when ARMED came, 0 for another line, or -errno. */
static int arm_reply(struct ip_proc *p, char *buf, char *why, size_t whylen)
{
	unsigned slot;
	int n, err;

	if (sscanf(buf, "ARMED %d", &n) == 1)
		return 1;
	if (chan_note(p, buf))
		return 0;	/* the process is exiting, or forked */
	if (sscanf(buf, "OK %u %n", &slot, &n) == 1 && slot < p->nslots) {
		free(p->slots[slot].how);
		p->slots[slot].how = strdup(buf + n);
		return 0;
	}
	if (sscanf(buf, "ERR %u %d %n", &slot, &err, &n) == 2) {
		const struct dp_probe *pr = slot < p->nslots ? p->slots[slot].pr : NULL;

		p->refused = true;
		if (!why[0] && pr)
			snprintf(why, whylen, "%s/%s at 0x%llx: %s",
				 pr->event->group, pr->event->name,
				 (unsigned long long)p->slots[slot].addr, buf + n);
		else if (!why[0])
			snprintf(why, whylen, "agent: %s", buf + n);
		return -(err > 0 ? err : EINVAL);
	}
	snprintf(why, whylen, "the agent said '%.60s'", buf);
	return -EPROTO;
}

static int arm(struct ip_proc *p, char *why, size_t whylen)
{
	char buf[DP_AGENT_MSG_MAX];
	int ret = chan_send(p, -1, "ARM"), first = 0, n;

	while (!ret) {
		n = chan_recv(p, buf, sizeof(buf), INPROC_REPLY_TIMEOUT_MS);
		if (n <= 0) {
			if (!why[0])
				snprintf(why, whylen, "the agent did not answer");
			return n ? n : -EPIPE;
		}
		ret = arm_reply(p, buf, why, whylen);
		if (ret < 0 && !first)
			first = ret;
		if (ret < 0)
			ret = 0;	/* read the other answers */
		else if (ret == 1)
			return first;
	}
	return ret;
}

/* ---- objects loaded and unloaded (MAPS) ------------------------------------ */

/* Whether @pr has a location at @addr in @p already (not dropped). */
static bool has_slot(const struct ip_proc *p, const struct dp_probe *pr,
		     uint64_t addr)
{
	for (unsigned i = 0; i < p->nslots; i++)
		if (p->slots[i].pr == pr && p->slots[i].addr == addr &&
		    !p->slots[i].dropped)
			return true;
	return false;
}

/* The locations whose object is no longer mapped go, in the agent too. */
static int drop_gone(struct ip_proc *p)
{
	const struct dp_proc_objs *objs = dp_proc_objs(p->proc);
	int ret = 0;

	for (unsigned i = 0; !ret && i < p->nslots; i++) {
		struct slot *s = &p->slots[i];

		if (s->dropped || dp_proc_obj_at(objs, s->addr))
			continue;
		ret = chan_send(p, -1, "DROP %llx %llx",
				(unsigned long long)s->addr,
				(unsigned long long)s->addr + 1);
		if (!ret)	/* an ERR answer is no failure here */
			ret = answer_errno(chan_answer(p, "DROPPED ", NULL, 0));
		s->dropped = true;
	}
	return ret;
}

/* The locations of every probe that are new in the current objects. */
static int send_new(struct ip_proc *p, unsigned *n)
{
	int ret = 0;

	for (struct dp_event *ev = p->tree->o.reg->events; ev; ev = ev->next)
		for (struct dp_probe *pr = ev->probes;
		     ev->enabled && dp_event_placed(ev) && pr; pr = pr->next) {
			struct dp_error e = { 0 };
			struct dp_proc_res res;
			char *line;

			if (dp_proc_resolve(p->proc, NULL, &pr->def, &res, &e)) {
				dp_error_clear(&e);
				continue;	/* not in this image */
			}
			line = dp_probe_canonical(&pr->def);
			for (size_t i = 0; !ret && !res.pending && i < res.n; i++) {
				ret = ifunc_target(p, pr, &res.loc[i]);
				if (ret || has_slot(p, pr, res.loc[i].addr))
					continue;
				ret = line ? send_location(p, pr, &res.loc[i],
							  line) : -ENOMEM;
				(*n)++;
			}
			free(line);
			dp_proc_res_free(&res);
			if (ret)
				return ret;
		}
	return 0;
}

/*
 * The image's symbols: the objects mapped now, else those of before a
 * MAPS (a record of a library unloaded since it was written).
 */
static int symbolize(void *priv, uint64_t addr, const char **sym,
		     uint64_t *off, uint64_t *size)
{
	struct ip_proc *p = priv;
	struct dp_proc_sym ps;

	if (!dp_proc_symbolize(p->proc, addr, &ps) && ps.name)
		goto found;
	for (const struct old_objs *o = p->old_objs; o; o = o->next)
		if (!dp_proc_symbolize_in(p->proc, o->objs, addr, &ps) &&
		    ps.name)
			goto found;
	return -1;
found:
	*sym = ps.name;
	*off = ps.off;
	*size = ps.size;
	return 0;
}

static void set_symbolizer(struct ip_proc *p)
{
	p->symbolizer = (struct dp_symbolizer){ symbolize, p };
}

/* Keep @objs (dp_proc_refresh()'s old set) for symbolize(). */
static void keep_objs(struct ip_proc *p, struct dp_proc_objs *objs)
{
	struct old_objs *o;

	if (!objs)
		return;
	o = malloc(sizeof(*o));
	if (!o) {
		dp_proc_objs_free(objs);
		return;
	}
	*o = (struct old_objs){ p->old_objs, objs };
	p->old_objs = o;
}

/* A fork child's objects are its parent's until it loads its own. */
static int own_objects(struct ip_proc *p, char *why, size_t whylen)
{
	struct dp_proc *mine;
	int ret = dp_proc_open(p->pid, &mine, why, whylen);

	if (ret)
		return ret;
	p->proc = mine;
	p->proc_borrowed = false;
	dp_unwinder_free(p->unw);	/* it read the parent's */
	p->unw = NULL;
	set_symbolizer(p);
	return 0;
}

int proc_refresh(struct ip_proc *p)
{
	struct dp_proc_objs *old = NULL;
	char why[512] = "";
	unsigned n = 0;
	int ret;

	p->maps_req = false;
	ret = p->proc_borrowed ? own_objects(p, why, sizeof(why)) :
	      dp_proc_refresh(p->proc, &old, why, sizeof(why));
	keep_objs(p, old);
	if (!ret)
		ret = drop_gone(p);
	if (!ret)
		ret = send_new(p, &n);
	if (!ret && n)
		ret = arm(p, why, sizeof(why));
	/* the thread that loaded or unloaded waits for this */
	if (ret != -EPIPE && chan_send(p, -1, "SYNCED") == -EPIPE)
		ret = -EPIPE;
	if (ret && why[0] && ret != -EPIPE)
		inproc_log(p->tree, "dprobe: process %d: %s\n", (int)p->pid,
			   why);
	return ret;
}

static int send_probes(struct ip_proc *p, char *why, size_t whylen)
{
	int ret;

	for (struct dp_event *ev = p->tree->o.reg->events; ev; ev = ev->next)
		for (struct dp_probe *pr = ev->probes;
		     ev->enabled && dp_event_placed(ev) && pr; pr = pr->next)
			if ((ret = send_probe(p, pr, why, whylen)))
				return ret;
	return 0;
}

int proc_handshake(struct ip_proc *p, char *why, size_t whylen)
{
	int ret = hello(p, why, whylen);

	if (!ret)
		ret = rings(p, why, whylen);
	if (!ret && (ret = inproc_agg_send_mem(p)))
		snprintf(why, whylen, "cannot send the hist tables: %s",
			 strerror(-ret));
	if (!ret && p->parent)
		ret = inherit(p, why, whylen);
	else if (!ret)
		ret = dp_proc_open(p->pid, &p->proc, why, whylen);
	if (ret)
		return ret;
	set_symbolizer(p);
	if (!p->parent)
		ret = send_probes(p, why, whylen);
	/* dprobe show: the launched command waits before main() */
	if (!ret && p->tree->o.show && p->tree->launched && is_root(p))
		ret = chan_send(p, -1, "HOLD");
	if (!ret)
		ret = arm(p, why, whylen);
	if (!ret) {
		p->tree->nprocs++;
		p->tree->nforks += p->parent != 0;
	}
	return ret;
}

struct ip_proc *proc_new(struct dp_inproc *t, pid_t pid, int sock)
{
	struct ip_proc *p = calloc(1, sizeof(*p));

	if (!p) {
		if (sock >= 0)
			close(sock);
		return NULL;
	}
	p->tree = t;
	p->pid = pid;
	p->sock = sock;
	p->hsock = -1;
	*t->procs_tail = p;
	t->procs_tail = &p->next;
	return p;
}

static struct dp_inproc *tree_new(const struct dp_inproc_opts *o)
{
	struct dp_inproc *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->o = *o;
	t->hub = -1;
	t->procs_tail = &t->procs;
	if (inproc_agg_init(t)) {
		inproc_agg_free(t);
		free(t);
		return NULL;
	}
	return t;
}

/* ---- events switched on and off while tracing ---------------------------- */

/*
 * @ev's locations in @p switched @on; an event @p has no location of
 * (never enabled there) gets them, armed.  Its slots are never removed:
 * records of it may still be in the rings.
 */
int proc_switch(struct ip_proc *p, struct dp_event *ev, bool on, char *why,
		size_t whylen)
{
	bool any = false;
	int ret = 0;

	if (!dp_event_placed(ev))
		return 0;	/* an event probe: its attached event fires it */
	for (unsigned i = 0; !ret && i < p->nslots; i++) {
		if (p->slots[i].pr->event != ev || p->slots[i].dropped)
			continue;
		any = true;
		ret = chan_send(p, -1, "SLOT %u %d", i, on);
		if (!ret)	/* an ERR answer is no failure here */
			ret = answer_errno(chan_answer(p, "SLOTTED ", NULL, 0));
	}
	if (ret || any || !on)
		return ret;
	for (struct dp_probe *pr = ev->probes; !ret && pr; pr = pr->next)
		ret = send_probe(p, pr, why, whylen);
	return ret ? ret : arm(p, why, whylen);
}

/* ---- launch and attach ---------------------------------------------------- */

/* The hub's end in a launched command: above what shells use for theirs. */
#define HUB_FD_MIN	100

/*
 * In the child: the agent preloaded, the hub's end inherited, its number
 * and dprobe's pid in the environment ("FD:PID", ":f" with -f: the
 * agent keeps both for the programs it runs).
 */
static void launch_child(const struct dp_inproc *t, char *const argv[],
			 int errfd, int hub)
{
	const char *pre = getenv("LD_PRELOAD");
	char *val = NULL, num[48];
	int err, fd;

	if (t->o.child_mask)
		sigprocmask(SIG_SETMASK, t->o.child_mask, NULL);
	if (t->o.quiet_target)
		dp_child_quiet();	/* the errno goes through errfd */
	if (pre && *pre ? asprintf(&val, "%s:%s", t->o.agent, pre) < 0 :
	    !(val = strdup(t->o.agent)))
		_exit(127);
	/* a copy without close-on-exec, out of the way of the program's */
	fd = fcntl(hub, F_DUPFD, HUB_FD_MIN);
	if (fd < 0)
		fd = fcntl(hub, F_DUPFD, 3);
	if (fd < 0)
		_exit(127);
	snprintf(num, sizeof(num), "%d:%d%s", fd, (int)getppid(),
		 t->o.follow ? ":f" : "");
	setenv("LD_PRELOAD", val, 1);
	setenv(DP_AGENT_ENV_SOCK, num, 1);
	execvp(argv[0], argv);
	err = errno;
	if (write(errfd, &err, sizeof(err)) < 0)
		_exit(127);
	_exit(127);
}

static int start_child(struct dp_inproc *t, char *const argv[], char *why,
		       size_t whylen)
{
	int fds[2], sv[2], err = 0;
	ssize_t n;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -errno;
	t->hub = sv[0];
	if (pipe2(fds, O_CLOEXEC)) {
		close(sv[1]);
		return -errno;
	}
	t->pid = fork();
	if (t->pid < 0) {
		err = -errno;
		close(fds[0]);
		close(fds[1]);
		close(sv[1]);
		return err;
	}
	if (!t->pid)
		launch_child(t, argv, fds[1], sv[1]);
	close(sv[1]);
	close(fds[1]);
	t->launched = true;
	do
		n = read(fds[0], &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	close(fds[0]);
	if (n == sizeof(err)) {
		waitpid(t->pid, NULL, 0);
		t->exited = true;
		snprintf(why, whylen, "cannot execute %s: %s", argv[0],
			 strerror(err));
		return -err;
	}
	return 0;
}

/*
 * The launched command's agent joins, within CONNECT_TIMEOUT_MS: a
 * command that exits first, or never loads the agent, ends the wait.
 */
static int wait_root(struct dp_inproc *t, struct ip_proc **out, char *why,
		     size_t whylen)
{
	for (int waited = 0; waited < CONNECT_TIMEOUT_MS; waited += 20) {
		if (inproc_root_gone(t))
			break;
		*out = tree_accept(t, 20);
		if (*out)
			return 0;
		if (inproc_must_quit(t))
			return -EINTR;
	}
	if (inproc_root_gone(t)) {
		snprintf(why, whylen, "process %d exited before the agent "
			 "started", (int)t->pid);
		return -ESRCH;
	}
	snprintf(why, whylen, "the agent did not start in process %d within "
		 "%d s", (int)t->pid, CONNECT_TIMEOUT_MS / 1000);
	return -ETIMEDOUT;
}

/*
 * The target exited while it was being set up: not an error, the session
 * simply has nothing to read (as the ptrace engine ends when its process
 * does).  A probe the agent refused stays an error even then: the agent
 * lets the program go on after ARMED, and a short program can be gone
 * before we look.
 */
static int start_root(struct ip_proc *p, int ret, char *why, size_t whylen)
{
	if (!ret)
		ret = proc_handshake(p, why, whylen);
	if (ret && !p->refused && inproc_root_gone(p->tree)) {
		chan_free(p);
		p->closed = true;
		return 0;
	}
	return ret;
}

static void abandon(struct dp_inproc *t)
{
	if (t->launched && !t->exited) {
		kill(t->pid, SIGKILL);
		waitpid(t->pid, &t->status, 0);
		t->exited = true;
	}
	dp_inproc_free(t);
}

int dp_inproc_launch(const struct dp_inproc_opts *o, char *const argv[],
		     struct dp_inproc **out, char *why, size_t whylen)
{
	struct dp_inproc *t = tree_new(o);
	struct ip_proc *p = NULL;
	int ret;

	if (!t)
		return -ENOMEM;
	ret = start_child(t, argv, why, whylen);
	if (!ret)
		ret = wait_root(t, &p, why, whylen);
	if (!ret)
		ret = start_root(p, 0, why, whylen);
	else if (ret == -ESRCH)
		ret = 0;	/* it exited before its agent came: nothing to read */
	if (ret) {
		abandon(t);
		return ret;
	}
	*out = t;
	return 0;
}

int dp_inproc_attach(const struct dp_inproc_opts *o, pid_t pid,
		     struct dp_inproc **out, char *why, size_t whylen)
{
	struct dp_inproc *t = tree_new(o);
	struct ip_proc *p;
	long rv = 0;
	int ret;

	if (!t || !(p = proc_new(t, pid, -1))) {
		if (t)
			inproc_agg_free(t);
		free(t);
		return -ENOMEM;
	}
	t->pid = pid;
	/*
	 * The agent answers with the number of our end of its pair; with
	 * -f it makes the hub its fork children and programs join over.
	 * It arms its guards on libc's signal functions in the call, and
	 * from then on keeps SIGTRAP out of every mask set through them;
	 * a thread that blocked SIGTRAP before (between two sessions, say,
	 * in the middle of its own block ... restore) has it unblocked by
	 * the injection, or its restore would meet the guard's int3 with it
	 * blocked (DP_INJECT_AGENT_SIGNALS).
	 */
	ret = dp_ptrace_inject_flags(pid, o->agent, DP_AGENT_ATTACH_FN,
				     o->follow ? "f" : NULL,
				     DP_INJECT_AGENT_SIGNALS, &rv, why, whylen);
	if (!ret && rv == -EBUSY) {
		snprintf(why, whylen, "process %d is traced already by another "
			 "dprobe (its agent is attached)", (int)pid);
		ret = -EALREADY;
	} else if (!ret && rv < 0) {
		snprintf(why, whylen, "the agent could not start in process "
			 "%d: %s", (int)pid, strerror((int)-rv));
		ret = rv >= -4095 ? (int)rv : -EINVAL;
	}
	if (!ret)
		ret = take_agent_end(p, rv, why, whylen);
	if (!ret)
		ret = start_root(p, 0, why, whylen);
	else if (inproc_root_gone(t))
		ret = 0;	/* it exited while we injected */
	if (ret) {
		/* closing the channel makes the agent take everything out */
		dp_inproc_free(t);
		return ret;
	}
	*out = t;
	return 0;
}

/*
 * Take every probe out (the agent restores every byte) and say bye.  A
 * second stop request cuts the waits short: closing the channel makes
 * the agent take everything out as well.
 */
void proc_detach(struct ip_proc *p)
{
	char buf[DP_AGENT_MSG_MAX];

	if (p->sock < 0)
		return;
	inproc_update_missed(p);
	if (!chan_send(p, -1, "DETACH"))
		while (chan_recv(p, buf, sizeof(buf), DETACH_TIMEOUT_MS) > 0 &&
		       strcmp(buf, "BYE"))
			;
	chan_free(p);
}

void proc_free(struct ip_proc *p)
{
	chan_free(p);
	reader_free(p);
	handoff_free(p);
	while (p->old_objs) {
		struct old_objs *o = p->old_objs;

		p->old_objs = o->next;
		dp_proc_objs_free(o->objs);
		free(o);
	}
	dp_unwinder_free(p->unw);	/* before the objects it reads */
	if (p->proc && !p->proc_borrowed)
		dp_proc_close(p->proc);
	for (unsigned i = 0; i < p->nslots; i++)
		free(p->slots[i].how);
	free(p->slots);
	free(p->comms);
	free(p);
}
