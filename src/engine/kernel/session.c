// SPDX-License-Identifier: GPL-2.0
/*
 * A kernel-engine session: the private instance and groups, the events
 * created in them, the launched command or the processes attached to,
 * and the reader of the instance's binary per-CPU buffers.
 *
 * Order of setup, so that a failure at any step leaves nothing behind:
 * every definition is translated first (no tracefs change), then the
 * instance is made and configured, the events created, checked against
 * dprobe's layout and enabled, the buffers opened, and only then a
 * launched command is let go.  Teardown runs the same steps backwards
 * and is the one path out, error or not.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/kernel/internal.h"
#include "engine/kernel/session.h"
#include "event/filter.h"
#include "sym/elf.h"
#include "util/util.h"

/* ---- setup: translation, no tracefs change ------------------------------ */

static int kev_add(struct dp_kernel *k, struct kev **out)
{
	struct kev *v = realloc(k->kevs, (k->nkevs + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	k->kevs = v;
	*out = memset(&v[k->nkevs++], 0, sizeof(*v));
	return 0;
}

static int kref_add(struct kev *e, char *line, char *path, uint64_t vaddr,
		    struct dp_probe *pr)
{
	struct kref *v = realloc(e->refs, (e->nrefs + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	e->refs = v;
	v[e->nrefs++] = (struct kref){ line, path, vaddr, pr };
	return 0;
}

/* Undo the last kev_add() and what translate_event() gave it. */
static void kev_forget_last(struct dp_kernel *k)
{
	struct kev *e = &k->kevs[--k->nkevs];

	for (size_t j = 0; j < e->nrefs; j++) {
		free(e->refs[j].line);
		free(e->refs[j].path);
	}
	free(e->refs);
}

static int translate_event(struct dp_kernel *k, const struct dp_kdefs_ctx *c,
			   struct dp_event *ev, char *why, size_t whylen)
{
	struct kev *e;
	int ret = kev_add(k, &e);

	if (ret)
		return ret;
	e->ev = ev;
	dp_kgroup_name(c->pid, ev->group, e->kgroup, sizeof(e->kgroup));
	snprintf(e->kname, sizeof(e->kname), "%s", ev->name);
	for (struct dp_probe *p = ev->probes; p; p = p->next) {
		char *line, *path;
		uint64_t vaddr;

		ret = dp_kdefs_line(c, p, &line, &e->file, &path, &vaddr, why,
				    whylen);
		if (!ret && kref_add(e, line, path, vaddr, p)) {
			free(line);
			free(path);
			ret = -ENOMEM;
		}
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * A probe of the session's own at the program's entry point: its hits
 * say where the program is loaded in each process that runs it, so that
 * run-time addresses in it (return addresses of probes in its libraries)
 * print as symbols after the process is gone.  Its records are never
 * shown.  Best effort: a program it cannot be placed in goes without.
 */
static void add_entry_probe(struct dp_kernel *k, const struct dp_kdefs_ctx *c)
{
	struct dp_probe *p = NULL;
	struct dp_elf *elf;
	uint64_t entry, off;
	char line[PATH_MAX + 64], why[256];

	if (dp_elf_open(k->o.binary, &elf))
		return;
	entry = dp_elf_entry(elf);
	if (!entry || dp_elf_vaddr_to_off(elf, entry, &off) ||
	    !dp_elf_vaddr_is_exec(elf, entry) ||
	    strpbrk(k->o.binary, " \t\n")) {
		dp_elf_close(elf);
		return;
	}
	dp_elf_close(elf);
	snprintf(line, sizeof(line), "p:dprobe/__entry %s:0x%" PRIx64,
		 k->o.binary, off);
	if (dp_registry_apply(&k->hidden, line, &p, NULL) || !p)
		return;
	p->vaddr = entry;
	if (translate_event(k, c, p->event, why, sizeof(why))) {
		kev_forget_last(k);
		return;
	}
	k->kevs[k->nkevs - 1].hidden = true;
}

/* The file offset of a "r:GRP/EVENT PATH:0xOFF ..." line we wrote. */
static int line_offset(const struct kref *r, uint64_t *off)
{
	const char *p = strchr(r->line, ' ');
	char *end;

	if (!p || strncmp(p + 1, r->path, strlen(r->path)))
		return -EINVAL;
	p += 1 + strlen(r->path);
	if (strncmp(p, ":0x", 3))
		return -EINVAL;
	*off = strtoull(p + 3, &end, 16);
	return end == p + 3 ? -EINVAL : 0;
}

/* One hidden entry probe at the place of return probe @r (retmiss.c). */
static int add_call_probe(struct dp_kernel *k, const struct dp_kdefs_ctx *c,
			  const struct kref *r, size_t n)
{
	struct dp_probe *p = NULL;
	char line[PATH_MAX + 96], why[512];
	uint64_t off;
	int ret = line_offset(r, &off);

	if (ret)
		return ret;
	snprintf(line, sizeof(line), "p:dprobe/__call_%zu %s:0x%" PRIx64
		 " sp=$stack", n, r->path, off);
	ret = dp_registry_apply(&k->hidden, line, &p, NULL);
	if (ret || !p)
		return ret ? ret : -EINVAL;
	p->vaddr = r->vaddr;
	ret = translate_event(k, c, p->event, why, sizeof(why));
	if (ret) {
		kev_forget_last(k);
		return ret;
	}
	k->kevs[k->nkevs - 1].hidden = true;
	k->kevs[k->nkevs - 1].ret_pr = r->pr;
	return 0;
}

/*
 * Hidden entry probes for the return probes of program places, so that
 * the returns longjmp() skips count as missed (retmiss.c).  Added after
 * every user event: created and enabled after their return probes.
 */
static void add_call_probes(struct dp_kernel *k, const struct dp_kdefs_ctx *c)
{
	size_t nuser = k->nkevs, n = 0;

	for (size_t i = 0; i < nuser; i++) {
		for (size_t j = 0; j < k->kevs[i].nrefs; j++) {
			struct kref r = k->kevs[i].refs[j];

			if (k->kevs[i].hidden || !r.path || !r.pr->def.is_return)
				continue;
			if (add_call_probe(k, c, &r, n++)) {
				fprintf(k->log, "dprobe: %s/%s: returns skipped "
					"by longjmp() will not be counted\n",
					k->kevs[i].ev->group,
					k->kevs[i].ev->name);
				continue;
			}
			k->kevs[i].has_calls = true;
		}
	}
}

static int translate(struct dp_kernel *k, char *why, size_t whylen)
{
	const struct dp_kernel_opts *o = &k->o;
	struct dp_kdefs_ctx c = {
		.pid = getpid(), .kernel = o->kernel, .binary = o->binary,
		.objs = o->objs, .nobjs = o->nobjs,
	};
	int ret;

	for (struct dp_event *ev = o->reg->events; ev; ev = ev->next) {
		if (!dp_event_placed(ev))
			continue;	/* tracepoints: dp_ktp_translate() */
		ret = translate_event(k, &c, ev, why, whylen);
		if (ret)
			return ret;
	}
	if (o->binary && !o->kernel)
		add_entry_probe(k, &c);
	if (!o->kernel)
		add_call_probes(k, &c);
	return 0;
}

/* What the kernel must have for this session's lines. */
static int check_kernel(struct dp_kernel *k, char *why, size_t whylen)
{
	for (size_t i = 0; i < k->nkevs; i++) {
		const char *f = k->kevs[i].file;

		if (!f || dp_tfs_exists(&k->tfs, f))
			continue;
		if (!strcmp(f, "kprobe_events"))
			dp_say(why, whylen, "this kernel has no kprobe_events (it "
			    "was built without CONFIG_KPROBE_EVENTS): kernel "
			    "functions cannot be probed here; tests/qemu/ runs "
			    "--kernel in a guest kernel that has them");
		else
			dp_say(why, whylen, "this kernel has no uprobe_events (it "
			    "was built without CONFIG_UPROBE_EVENTS); use "
			    "--engine agent or --engine ptrace");
		return -ENOTSUP;
	}
	if (!dp_tfs_exists(&k->tfs, "instances")) {
		dp_say(why, whylen, "%s has no instances/ directory: the kernel "
		    "engine needs tracefs instances (Linux 3.10 or later)",
		    k->tfs.root);
		return -ENOTSUP;
	}
	return 0;
}

static int read_layout(struct dp_kernel *k, char *why, size_t whylen)
{
	char *page = NULL, *event = NULL;
	int ret;

	dp_tfs_read(&k->tfs, "events/header_page", &page, NULL);
	dp_tfs_read(&k->tfs, "events/header_event", &event, NULL);
	ret = dp_kraw_layout_parse(&k->layout, page, event);
	free(page);
	free(event);
	if (ret)
		dp_say(why, whylen, "this kernel's ring-buffer page layout "
		    "(events/header_page, header_event) is not one dprobe "
		    "reads");
	return ret;
}

/* ---- instance ------------------------------------------------------------ */

/* "instances/dprobe.PID/FILE": 0 or -ENAMETOOLONG. */
static int inst_rel(const struct dp_kernel *k, const char *file, char *rel,
		    size_t len)
{
	int n = snprintf(rel, len, "%s/%s", k->inst, file);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int inst_write(struct dp_kernel *k, const char *file, const char *s)
{
	char rel[PATH_MAX];

	if (inst_rel(k, file, rel, sizeof(rel)))
		return -ENAMETOOLONG;
	return dp_tfs_write(&k->tfs, rel, s);
}

static int inst_read(struct dp_kernel *k, const char *file, char **buf)
{
	char rel[PATH_MAX];

	if (inst_rel(k, file, rel, sizeof(rel)))
		return -ENAMETOOLONG;
	return dp_tfs_read(&k->tfs, rel, buf, NULL);
}

/* Add the thread ids of @pid to @f, each whole: one cut short would
 * name another thread. */
static void add_tids(pid_t pid, FILE *f)
{
	char p[64];
	struct dirent *d;
	DIR *dir;

	snprintf(p, sizeof(p), "/proc/%d/task", (int)pid);
	dir = opendir(p);
	if (!dir) {
		fprintf(f, "%d ", (int)pid);
		return;
	}
	while ((d = readdir(dir)))
		if (d->d_name[0] >= '1' && d->d_name[0] <= '9')
			fprintf(f, "%s ", d->d_name);
	closedir(dir);
}

/* set_event_pid: the traced processes' threads, in one write. */
static int set_event_pids(struct dp_kernel *k)
{
	char *pids = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&pids, &len);
	int ret;

	if (!f)
		return -ENOMEM;
	for (int i = 0; i < k->npids; i++)
		add_tids(k->pids[i], f);
	ret = fclose(f) ? -ENOMEM : inst_write(k, "set_event_pid", pids);
	free(pids);
	return ret;
}

static int make_instance(struct dp_kernel *k, char *why, size_t whylen)
{
	int ret = dp_kinst_create(&k->tfs, getpid(), k->inst, sizeof(k->inst));

	if (ret == -EEXIST) {
		dp_say(why, whylen, "%s/%s is in use by another dprobe with this "
		    "pid (in another pid namespace); stop that one, or run "
		    "`dprobe cleanup` once it is gone", k->tfs.root, k->inst);
		return ret;
	}
	if (ret) {
		dp_say(why, whylen, "cannot create %s/%s: %s", k->tfs.root,
		    k->inst, dp_kstrerror(ret));
		return ret;
	}
	k->inst_made = true;
	/* CLOCK_MONOTONIC, as the other engines' timestamps */
	k->mono_clock = !inst_write(k, "trace_clock", "mono");
	if (!k->mono_clock)
		fprintf(k->log, "dprobe: this kernel has no 'mono' trace "
			"clock; timestamps are its default clock's\n");
	inst_write(k, "buffer_percent", "0");
	if (!k->npids)
		return 0;
	/* the kernel keeps the tgid of each thread that records (in
	 * saved_tgids): a thread gone before its records are read is
	 * still known as the command's.  Best effort: old kernels lack it */
	inst_write(k, "options/record-tgid", "1");
	/* threads (and with -f, children) join the list as they are made */
	ret = inst_write(k, "options/event-fork", "1");
	if (!ret)
		ret = set_event_pids(k);
	if (ret)
		dp_say(why, whylen, "cannot restrict %s to the traced processes "
		    "(set_event_pid, options/event-fork): %s", k->inst,
		    dp_kstrerror(ret));
	return ret;
}

/* ---- events --------------------------------------------------------------- */

static void refused(struct dp_kernel *k, const char *file, const char *line,
		    int err, char *why, size_t whylen)
{
	char log[2048];

	dp_tfs_error_log(&k->tfs, line, log, sizeof(log));
	if (log[0])
		dp_say(why, whylen, "the kernel refused a definition:\n%s", log);
	else
		dp_say(why, whylen, "the kernel refused '%s' in %s: %s", line, file,
		    dp_kstrerror(err));
}

static int event_dir_read(struct dp_kernel *k, const char *grp,
			  const char *name, const char *file, char **buf)
{
	char rel[3 * DP_MAX_EVENT_NAME_LEN + 16];

	snprintf(rel, sizeof(rel), "events/%s/%s/%s", grp, name, file);
	return inst_read(k, rel, buf);
}

static int event_enable(struct dp_kernel *k, const char *grp, const char *name)
{
	char rel[3 * DP_MAX_EVENT_NAME_LEN + 16];

	snprintf(rel, sizeof(rel), "events/%s/%s/enable", grp, name);
	return inst_write(k, rel, "1");
}

static int read_id(struct dp_kernel *k, struct kev *e, const char *grp)
{
	char *id;
	int ret = event_dir_read(k, grp, e->kname, "id", &id);

	if (ret)
		return ret;
	e->kid = (unsigned)strtoul(id, NULL, 10);
	free(id);
	return e->kid ? 0 : -EINVAL;
}

static int create_event(struct dp_kernel *k, struct kev *e, char *why,
			size_t whylen)
{
	char *fmt;
	int ret;

	for (size_t i = 0; i < e->nrefs; i++) {
		ret = dp_tfs_append(&k->tfs, e->file, e->refs[i].line);
		if (ret) {
			refused(k, e->file, e->refs[i].line, ret, why, whylen);
			return ret;
		}
		e->created = true;
	}
	ret = read_id(k, e, e->kgroup);
	if (!ret)
		ret = event_dir_read(k, e->kgroup, e->kname, "format", &fmt);
	if (ret) {
		dp_say(why, whylen, "%s/%s was created but its id or format "
		    "cannot be read: %s", e->kgroup, e->kname, dp_kstrerror(ret));
		return ret;
	}
	ret = dp_kdefs_check_format(e->ev, fmt, why, whylen);
	free(fmt);
	if (!ret && (ret = event_enable(k, e->kgroup, e->kname)))
		dp_say(why, whylen, "cannot enable %s/%s in %s: %s%s", e->kgroup,
		    e->kname, k->inst, dp_kstrerror(ret),
		    ret == -DP_ENOTSUPP && !strcmp(e->file, "uprobe_events") ?
		    " (the kernel would not install the breakpoint: its "
		    "uprobes cannot probe the instruction there)" : "");
	return ret;
}

static int create_events(struct dp_kernel *k, char *why, size_t whylen)
{
	int ret;

	for (size_t i = 0; i < k->nkevs; i++) {
		struct kev *e = &k->kevs[i];

		ret = e->file ? create_event(k, e, why, whylen) :
		      dp_ktp_enable(k, e, why, whylen);
		if (ret)
			return ret;
	}
	return 0;
}

/* ---- buffers ----------------------------------------------------------- */

static int open_buffers(struct dp_kernel *k, char *why, size_t whylen)
{
	int ncpus = get_nprocs_conf();
	char rel[PATH_MAX], p[PATH_MAX];

	k->cpus = calloc((size_t)ncpus, sizeof(*k->cpus));
	k->page = malloc(k->layout.page_size);
	if (!k->cpus || !k->page)
		return -ENOMEM;
	for (int c = 0; c < ncpus; c++) {
		int fd;

		snprintf(rel, sizeof(rel), "%s/per_cpu/cpu%d/trace_pipe_raw",
			 k->inst, c);
		if (dp_tfs_path(&k->tfs, rel, p, sizeof(p)))
			return -ENAMETOOLONG;
		fd = open(p, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT)
			continue;	/* a CPU that is not possible */
		if (fd < 0) {
			dp_say(why, whylen, "cannot open %s: %s", p, strerror(errno));
			return -errno;
		}
		k->cpus[k->ncpus++] = (struct kcpu){ .fd = fd, .cpu = c };
	}
	return 0;
}

/* ---- teardown: the one way out ------------------------------------------- */

static void teardown(struct dp_kernel *k)
{
	for (int i = 0; i < k->ncpus; i++)
		close(k->cpus[i].fd);
	k->ncpus = 0;
	/* an instance with an open file cannot go: buffers closed first */
	if (k->inst_made && dp_kinst_remove(&k->tfs, k->inst)) {
		/* someone holds a file of it open: our events off at least,
		 * or the kernel will not let them be deleted */
		inst_write(k, "events/enable", "0");
		inst_write(k, "tracing_on", "0");
		fprintf(k->log, "dprobe: could not remove %s/%s (a file of it "
			"is open); `dprobe cleanup` will once it is closed\n",
			k->tfs.root, k->inst);
	}
	k->inst_made = false;
	for (size_t i = k->nkevs; i-- > 0;) {
		struct kev *e = &k->kevs[i];

		if (!e->created)
			continue;
		if (dp_kevent_delete(&k->tfs, e->file, e->kgroup, e->kname))
			fprintf(k->log, "dprobe: could not delete %s/%s from "
				"%s; `dprobe cleanup` will\n", e->kgroup,
				e->kname, e->file);
		e->created = false;
	}
}

/* ---- sessions -------------------------------------------------------------- */

static int session_new(const struct dp_kernel_opts *o, struct dp_kernel **out,
		       char *why, size_t whylen)
{
	struct dp_kernel *k = calloc(1, sizeof(*k));
	int ret;

	if (!k)
		return -ENOMEM;
	k->o = *o;
	k->log = o->log ? o->log : stderr;
	k->child = -1;
	dp_registry_init(&k->hidden);
	k->ksym = dp_ksym_new(o->kernel);
	ret = k->ksym ? dp_tfs_find(&k->tfs, why, whylen) : -ENOMEM;
	if (!ret && dp_kcleanup(NULL, why, whylen) < 0)
		why[0] = '\0';	/* leftovers we cannot remove are not ours */
	if (!ret)
		ret = translate(k, why, whylen);
	if (!ret)
		ret = dp_ktp_translate(k, why, whylen);
	if (!ret)
		ret = dp_ktp_filters(k, why, whylen);
	if (!ret)
		ret = check_kernel(k, why, whylen);
	if (!ret)
		ret = read_layout(k, why, whylen);
	if (!ret)
		ret = dp_kustack_prepare(k, why, whylen);
	if (ret) {
		dp_kernel_free(k);
		return ret;
	}
	*out = k;
	return 0;
}

/* Instance, events, buffers: everything the run needs in tracefs. */
static int arm(struct dp_kernel *k, char *why, size_t whylen)
{
	int ret = make_instance(k, why, whylen);

	/* a user_stack entry after each record, in this instance only */
	if (!ret && k->ustack.on &&
	    (ret = inst_write(k, "options/userstacktrace", "1")))
		dp_say(why, whylen, "--stack: cannot set %s/options/"
		    "userstacktrace: %s", k->inst, dp_kstrerror(ret));
	if (!ret)
		ret = create_events(k, why, whylen);
	if (!ret)
		ret = open_buffers(k, why, whylen);
	if (ret)
		teardown(k);
	return ret;
}

static int set_pids(struct dp_kernel *k, const pid_t *pids, int n)
{
	k->pids = calloc((size_t)(n ? n : 1), sizeof(*pids));
	if (!k->pids)
		return -ENOMEM;
	memcpy(k->pids, pids, (size_t)n * sizeof(*pids));
	k->npids = n;
	return 0;
}

/* The child: wait until the parent has armed everything, then exec. */
static void child_main(int rfd, char *const argv[], const sigset_t *mask,
		       bool quiet)
{
	int err = quiet ? dp_child_quiet() : -1;
	char go = 0;

	if (mask)
		sigprocmask(SIG_SETMASK, mask, NULL);
	while (read(rfd, &go, 1) < 0 && errno == EINTR)
		;
	if (go != 'g')
		_exit(127);
	close(rfd);
	execvp(argv[0], argv);
	/* dprobe's stderr, also with --quiet-target */
	dprintf(err >= 0 ? err : 2, "dprobe: cannot execute %s: %s\n",
		argv[0], strerror(errno));
	_exit(127);
}

/*
 * The kernel filters events by its own pids (set_event_pid) and records
 * them: from inside a child pid namespace, whose pids are not those, the
 * traced processes would never be seen.  The initial pid namespace has
 * a fixed inode number (PROC_PID_INIT_INO).
 */
#define INIT_PIDNS	"pid:[4026531836]"

int dp_kcheck_pidns(char *why, size_t whylen)
{
	char ns[64];
	ssize_t n = readlink("/proc/self/ns/pid", ns, sizeof(ns) - 1);

	if (n < 0)
		return 0;	/* no such link: an old kernel, no namespaces */
	ns[n] = '\0';
	if (!strcmp(ns, INIT_PIDNS))
		return 0;
	dp_say(why, whylen, "the kernel engine cannot follow processes from "
	    "inside a pid namespace (the kernel filters and records its own "
	    "pids, which this namespace does not show); run dprobe in the "
	    "host's pid namespace, or use --engine agent or --engine ptrace");
	return -ENOTSUP;
}

int dp_kernel_launch(const struct dp_kernel_opts *o, char *const argv[],
		     struct dp_kernel **out, char *why, size_t whylen)
{
	struct dp_kernel *k;
	int fds[2], ret;
	pid_t pid;

	ret = dp_kcheck_pidns(why, whylen);
	if (!ret)
		ret = session_new(o, &k, why, whylen);
	if (ret)
		return ret;
	if (pipe2(fds, O_CLOEXEC)) {
		ret = -errno;
		goto fail;
	}
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		close(fds[0]);
		close(fds[1]);
		goto fail;
	}
	if (!pid) {
		close(fds[1]);
		child_main(fds[0], argv, o->child_mask, o->quiet_target);
	}
	close(fds[0]);
	k->child = pid;
	ret = set_pids(k, &pid, 1);
	if (!ret)
		ret = arm(k, why, whylen);
	if (ret) {
		/* the command never runs: nothing of it was traced */
		close(fds[1]);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		k->child = -1;
		goto fail;
	}
	if (write(fds[1], "g", 1) != 1)
		ret = -errno;
	close(fds[1]);
	if (ret) {
		teardown(k);
		goto fail;
	}
	*out = k;
	return 0;
fail:
	dp_kernel_free(k);
	return ret;
}

int dp_kernel_attach(const struct dp_kernel_opts *o, const pid_t *pids,
		     int npids, struct dp_kernel **out, char *why,
		     size_t whylen)
{
	struct dp_kernel *k;
	int ret = npids ? dp_kcheck_pidns(why, whylen) : 0;

	if (!ret)
		ret = session_new(o, &k, why, whylen);
	if (ret)
		return ret;
	for (int i = 0; i < npids; i++) {
		if (kill(pids[i], 0) && errno == ESRCH) {
			dp_say(why, whylen, "no process %d", (int)pids[i]);
			dp_kernel_free(k);
			return -ESRCH;
		}
	}
	ret = set_pids(k, pids, npids);
	if (!ret)
		ret = arm(k, why, whylen);
	if (ret) {
		dp_kernel_free(k);
		return ret;
	}
	*out = k;
	return 0;
}

void dp_kernel_request_profile(struct dp_kernel *k)
{
	k->want_profile = 1;
}

void dp_kernel_set_profile_cb(struct dp_kernel *k, void (*cb)(void *),
			      void *priv)
{
	k->profile_cb = cb;
	k->profile_priv = priv;
}

void dp_kernel_stop(struct dp_kernel *k)
{
	k->stop = 1;
}

const struct dp_stats *dp_kernel_stats(const struct dp_kernel *k)
{
	return &k->stats;
}

void dp_kernel_free(struct dp_kernel *k)
{
	if (!k)
		return;
	teardown(k);
	for (size_t i = 0; i < k->nkevs; i++) {
		for (size_t j = 0; j < k->kevs[i].nrefs; j++) {
			free(k->kevs[i].refs[j].line);
			free(k->kevs[i].refs[j].path);
		}
		free(k->kevs[i].refs);
		dp_kev_tp_free(&k->kevs[i]);
	}
	free(k->kevs);
	free(k->cpus);
	free(k->page);
	free(k->pids);
	dp_kread_free(k);
	dp_kret_free(k);
	dp_ksym_free(k->ksym);
	dp_registry_free(&k->hidden);
	free(k);
}

/* ---- running ---------------------------------------------------------------- */

/* Whether the traced processes are all gone (never, system-wide). */
static bool all_gone(struct dp_kernel *k)
{
	siginfo_t si = { 0 };
	char *list;
	bool empty;

	if (k->child > 0) {
		/* not reaped yet: its /proc entries name its last records */
		if (waitid(P_PID, (id_t)k->child, &si,
			   WEXITED | WNOHANG | WNOWAIT) || si.si_pid != k->child)
			return false;
	} else if (!k->npids) {
		return false;
	} else {
		for (int i = 0; i < k->npids; i++)
			if (!kill(k->pids[i], 0) || errno != ESRCH)
				return false;
	}
	if (!k->o.follow)
		return true;
	/* -f: the kernel drops exited tasks from the list */
	if (inst_read(k, "set_event_pid", &list))
		return true;
	empty = !strpbrk(list, "0123456789");
	free(list);
	if (!empty && k->child > 0) {
		/* the command itself is listed until reaped */
		char self[32];

		snprintf(self, sizeof(self), "%d\n", (int)k->child);
		if (inst_read(k, "set_event_pid", &list))
			return true;
		empty = !strcmp(list, self);
		free(list);
	}
	return empty;
}

/*
 * The kernel's hit and miss counts of our events, into the probes'
 * kprobe_profile counters: kprobe_profile lines are "EVENT HITS MISSES",
 * uprobe_profile lines "PATH EVENT HITS", one per probe in the order the
 * probes were written, so the Nth line of an event is its Nth probe.
 * The counts are the kernel's totals: assigned, not added.
 */
static void profile_line(struct dp_kernel *k, const char *file,
			 const char *name, uint64_t hit, uint64_t miss,
			 unsigned *seen)
{
	for (size_t i = 0; i < k->nkevs; i++) {
		struct kev *e = &k->kevs[i];
		struct dp_probe *pr = e->ev->probes;

		if (!e->created || !e->file || strcmp(e->file, file) ||
		    strcmp(e->kname, name))
			continue;
		for (unsigned n = seen[i]++; pr && n; n--)
			pr = pr->next;
		if (pr) {
			pr->nhit = hit;
			pr->nmiss = miss;
		}
		return;
	}
}

static void read_profile_file(struct dp_kernel *k, const char *file,
			      const char *events, unsigned *seen)
{
	char *text, *line, *save = NULL, name[DP_MAX_EVENT_NAME_LEN];
	char path[PATH_MAX];
	unsigned long long hit, miss = 0;
	bool uprobe = !strcmp(events, "uprobe_events");

	if (dp_tfs_read(&k->tfs, file, &text, NULL))
		return;
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (uprobe ? sscanf(line, "%4095s %63s %llu", path, name, &hit) != 3 :
		    sscanf(line, "%63s %llu %llu", name, &hit, &miss) != 3)
			continue;
		profile_line(k, events, name, hit, miss, seen);
	}
	free(text);
}

static void read_profile(struct dp_kernel *k)
{
	unsigned *seen = calloc(k->nkevs ? k->nkevs : 1, sizeof(*seen));

	if (!seen)
		return;
	read_profile_file(k, "kprobe_profile", "kprobe_events", seen);
	memset(seen, 0, (k->nkevs ? k->nkevs : 1) * sizeof(*seen));
	read_profile_file(k, "uprobe_profile", "uprobe_events", seen);
	free(seen);
	dp_kret_missed(k);
	k->stats.missed = 0;
	for (size_t i = 0; i < k->nkevs; i++)
		for (struct dp_probe *pr = k->kevs[i].ev->probes;
		     k->kevs[i].created && pr; pr = pr->next)
			k->stats.missed += pr->nmiss;
}

/* Records the kernel overwrote before they were read. */
static void read_overruns(struct dp_kernel *k)
{
	unsigned long long total = 0, n;
	char rel[64], *text, *p;

	for (int i = 0; i < k->ncpus; i++) {
		snprintf(rel, sizeof(rel), "per_cpu/cpu%d/stats", k->cpus[i].cpu);
		if (inst_read(k, rel, &text))
			continue;
		p = strstr(text, "\noverrun: ");
		if (p && sscanf(p + 10, "%llu", &n) == 1)
			total += n;
		free(text);
	}
	if (total > k->stats.lost)
		k->stats.lost = total;
}

int dp_kernel_run(struct dp_kernel *k, int *status)
{
	sigset_t none;
	int ret = 0;

	sigemptyset(&none);
	*status = 0;
	while (!k->stop && !all_gone(k)) {
		ret = dp_kread_wait(k, k->o.child_mask ? k->o.child_mask : &none);
		if (!ret)
			ret = dp_kread_drain(k, false);
		if (ret)
			break;
		if (k->want_profile && k->profile_cb) {
			k->want_profile = 0;
			read_profile(k);
			k->profile_cb(k->profile_priv);
		}
	}
	/* what was written before the end is in the buffers: read it all */
	if (!ret)
		ret = dp_kread_drain(k, true);
	dp_kret_finish(k);
	read_profile(k);
	read_overruns(k);
	teardown(k);
	/* a launched command runs on after a stop: wait for it, as the
	 * other engines do (docs/dprobe-trace.md, DETACHING) */
	while (k->child > 0) {
		if (waitpid(k->child, status, 0) == k->child)
			k->child = -1;
		else if (errno != EINTR)
			break;
	}
	return ret;
}
