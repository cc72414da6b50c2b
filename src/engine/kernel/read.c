// SPDX-License-Identifier: GPL-2.0
/*
 * The reader: binary pages from each CPU's trace_pipe_raw, records put in
 * time order across CPUs (a record waits until no CPU can precede it),
 * mapped from the kernel's event ids to dprobe's, filtered in user space
 * and handed to the sink, with the thread's comm and tgid from /proc
 * (cached: the kernel's own `trace` shows "<...>" when it no longer knows
 * a pid, and so does dprobe).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/kernel/session.h"
#include "event/deliver.h"
#include "event/record.h"

/* Pages read from one CPU per round: another CPU's turn comes soon. */
#define PAGES_PER_ROUND	64

struct ktid {
	pid_t tid, tgid;	/* tid 0: a free slot; tgid 0: unknown */
	unsigned long round;	/* of the last tgid lookup (if unknown) */
	bool has_comm;
	char comm[DP_TASK_COMM_LEN];
};

struct krec {
	uint64_t ts;
	size_t seq;		/* order of reading, for equal times */
	size_t off, len;	/* in the arena */
	int cpu;
	unsigned held;		/* rounds it waited for its user stack */
};

/* ---- threads ------------------------------------------------------------- */

/*
 * A thread gone before its first record was read: the kernel's
 * saved_cmdlines (which every enabled event keeps up to date) may still
 * know its name, as the kernel's own `trace` would print it.
 */
static void saved_comm(const struct dp_kernel *k, struct ktid *t)
{
	char *buf, *line, *save = NULL;
	size_t len;

	if (dp_tfs_read(&k->tfs, "saved_cmdlines", &buf, &len))
		return;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *end;
		long pid = strtol(line, &end, 10);

		if (pid != t->tid || *end != ' ' || !strcmp(end + 1, "<...>"))
			continue;
		snprintf(t->comm, sizeof(t->comm), "%s", end + 1);
		t->has_comm = true;
		break;
	}
	free(buf);
}

struct ktgid {
	pid_t pid, tgid;
};

static int ktgid_cmp(const void *pa, const void *pb)
{
	const struct ktgid *a = pa, *b = pb;

	return (a->pid > b->pid) - (a->pid < b->pid);
}

/* saved_tgids ("PID TGID" lines) into k->saved, sorted by pid. */
static void saved_tgids_read(struct dp_kernel *k)
{
	char *buf, *line, *save = NULL;
	struct ktgid *v = NULL, *nv;
	size_t n = 0, cap = 0;
	long pid, tgid;

	k->saved_stale = false;
	if (dp_tfs_read(&k->tfs, "saved_tgids", &buf, NULL))
		return;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "%ld %ld", &pid, &tgid) != 2 || pid <= 0 ||
		    tgid <= 0 || pid > INT32_MAX || tgid > INT32_MAX)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv)
				break;
			v = nv;
		}
		v[n++] = (struct ktgid){ (pid_t)pid, (pid_t)tgid };
	}
	free(buf);
	if (n)
		qsort(v, n, sizeof(*v), ktgid_cmp);
	free(k->saved);
	k->saved = v;
	k->nsaved = n;
}

/*
 * The tgid of a thread gone before its first record was read, from the
 * kernel (options/record-tgid is on in the instance: each thread that
 * recorded an event leaves its tgid there when it is switched out, its
 * last time included).  Read at most once per reading round.  0 if the
 * kernel does not know it either (yet: see tid_info()).
 */
static pid_t saved_tgid(struct dp_kernel *k, pid_t tid)
{
	struct ktgid key = { tid, 0 }, *hit;

	if (k->saved_stale)
		saved_tgids_read(k);
	hit = k->nsaved ? bsearch(&key, k->saved, k->nsaved,
				   sizeof(key), ktgid_cmp) : NULL;
	return hit ? hit->tgid : 0;
}

static void tid_fill(struct dp_kernel *k, struct ktid *t, pid_t tid)
{
	char p[64], buf[512], *q;
	ssize_t n;
	int fd;

	t->tid = tid;
	snprintf(p, sizeof(p), "/proc/%d/comm", (int)tid);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, t->comm, sizeof(t->comm) - 1);
		if (n > 0) {
			t->comm[n] = '\0';
			t->comm[strcspn(t->comm, "\n")] = '\0';
			t->has_comm = true;
		}
		close(fd);
	}
	if (!t->has_comm)
		saved_comm(k, t);
	snprintf(p, sizeof(p), "/proc/%d/status", (int)tid);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	q = strstr(buf, "\nTgid:");
	if (q)
		t->tgid = (pid_t)strtol(q + 6, NULL, 10);
	if (t->tgid <= 0)
		t->tgid = saved_tgid(k, tid);
	t->round = k->round;
}

/*
 * The thread's cached facts, read the first time it is seen.  A tgid
 * still unknown is not cached: the kernel records it only when the
 * thread is next switched out, maybe after this round read saved_tgids,
 * so it is looked up again once in each later round, to the end of the
 * run.
 */
static const struct ktid *tid_info(struct dp_kernel *k, pid_t tid)
{
	static const struct ktid unknown;
	struct ktid *t;
	bool made;

	if (tid <= 0)
		return &unknown;
	t = dp_tidmap_get(&k->tids, tid, sizeof(*t), 256, &made);
	if (!t)
		return &unknown;
	if (made)
		tid_fill(k, t, tid);
	else if (!t->tgid && t->round != k->round) {
		t->tgid = saved_tgid(k, tid);
		t->round = k->round;
	}
	return t;
}

static bool is_target(const struct dp_kernel *k, const struct ktid *t,
		      pid_t tid)
{
	pid_t who = t->tgid ? t->tgid : tid;

	for (int i = 0; i < k->npids; i++)
		if (k->pids[i] == who)
			return true;
	return false;
}

/* ---- one record ------------------------------------------------------------ */

static struct kev *kev_of(struct dp_kernel *k, unsigned kid)
{
	for (size_t i = 0; i < k->nkevs; i++)
		if (k->kevs[i].kid == kid)
			return &k->kevs[i];
	return NULL;
}

static void record(struct dp_kernel *k, uint8_t *data, size_t len,
		   uint64_t ts, int cpu, const uint64_t *stack, unsigned nstack)
{
	struct dp_deliver d = { &k->o.sink, &k->stats, k->o.count_only };
	struct dp_symbolizer sym;
	struct dp_rec_meta meta;
	const struct ktid *t;
	const uint8_t *rec = data;
	struct dp_probe *pr;
	struct dp_event *ev;
	struct kev *e;
	int32_t tid;

	if (len < DP_TP_HEAD_SIZE)
		return;
	tid = (int32_t)dp_rec_load(data + DP_REC_PID_OFF, 4);
	e = kev_of(k, (unsigned)dp_rec_load(data + DP_REC_TYPE_OFF, 2));
	if (!e)
		return;		/* nothing of ours */
	t = tid_info(k, tid);
	/* event-fork follows threads and children alike; without -f the
	 * children are left out here.  A thread whose process nobody knows
	 * any more may have been the command's: counted as lost, not
	 * dropped unsaid */
	if (!k->o.follow && k->npids && !is_target(k, t, tid)) {
		if (!t->tgid)
			dp_event_lost_record(&d);
		return;
	}
	ev = e->ev;
	pr = ev->probes;
	if (e->tp) {
		rec = dp_ktp_convert(k, e, data, len, &len);
		if (!rec) {
			dp_event_lost_record(&d);
			return;
		}
	} else {
		dp_rec_put(data + DP_REC_TYPE_OFF, (uint16_t)ev->id, 2);
		if (e->nrefs == 1 && len >= DP_ENTRY_HEAD_SIZE)
			dp_ksym_learn(k->ksym, t->tgid ? t->tgid : tid,
				      e->refs[0].path, e->refs[0].vaddr,
				      dp_rec_load(data + DP_REC_IP_OFF, 8));
		/* returns skipped by longjmp(), before any filter */
		if (dp_kret_account(k, e, tid, data, len) || e->hidden)
			return;		/* it was there for that alone */
	}
	pr->nhit++;
	if (dp_event_deliver_counted(&d, pr))
		return;
	meta = (struct dp_rec_meta){
		.ts_ns = ts, .cpu = cpu, .pid = tid,
		.tgid = t->tgid ? t->tgid : tid,
		.comm = t->has_comm ? t->comm : NULL,
		.mm_pid = tid,		/* the kernel's word */
	};
	if (ev->stack && nstack) {
		meta.stack = stack;
		meta.nstack = nstack;
	}
	/* it only names the process whose symbols a lookup uses */
	dp_ksym_symbolizer(k->ksym, meta.tgid, &sym);
	dp_event_deliver(&d, pr, rec, len, &meta, &sym);
}

/* ---- pages -------------------------------------------------------------------- */

static int keep(struct dp_kernel *k, const struct dp_kraw_rec *r, int cpu)
{
	struct krec *v;
	uint8_t *a;

	if (k->nrecs == k->rec_cap) {
		k->rec_cap = k->rec_cap ? 2 * k->rec_cap : 1024;
		v = realloc(k->recs, k->rec_cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		k->recs = v;
	}
	if (k->arena_len + r->len > k->arena_cap) {
		size_t cap = k->arena_cap ? 2 * k->arena_cap : 1 << 20;

		while (cap < k->arena_len + r->len)
			cap *= 2;
		a = realloc(k->arena, cap);
		if (!a)
			return -ENOMEM;
		k->arena = a;
		k->arena_cap = cap;
	}
	memcpy(k->arena + k->arena_len, r->data, r->len);
	k->recs[k->nrecs] = (struct krec){ r->ts, k->nrecs, k->arena_len,
					   r->len, cpu, 0 };
	k->nrecs++;
	k->arena_len += r->len;
	return 0;
}

static void lost(struct dp_kernel *k, const struct dp_kraw_page *pg, int cpu)
{
	struct dp_deliver d = { &k->o.sink, &k->stats, k->o.count_only };

	dp_event_lost(&d, cpu, pg->nmissed_known ? pg->nmissed :
			       DP_LOST_UNKNOWN);
}

/* Parse one page; *@last: the time of its last entry. */
static int parse_page(struct dp_kernel *k, size_t n, int cpu, uint64_t *last)
{
	struct dp_kraw_page pg;
	struct dp_kraw_rec r;
	int ret;

	if (dp_kraw_page_init(&pg, &k->layout, k->page, n)) {
		fprintf(k->log, "dprobe: a malformed page from cpu%d's buffer "
			"was skipped\n", cpu);
		return 0;
	}
	if (pg.missed)
		lost(k, &pg, cpu);
	while ((ret = dp_kraw_next(&pg, &r)) > 0)
		if (keep(k, &r, cpu))
			return -ENOMEM;
	if (ret < 0)
		fprintf(k->log, "dprobe: the rest of a malformed page from "
			"cpu%d's buffer was skipped\n", cpu);
	*last = pg.ts;
	return 0;
}

/*
 * Up to @max pages of one CPU, stopping early once a page ends after
 * @until.  1 if the CPU may have more, 0 if it is empty, or -errno.
 * *@last: the time of the last entry read.
 */
static int read_cpu(struct dp_kernel *k, const struct kcpu *c, int max,
		    uint64_t until, uint64_t *last)
{
	for (int i = 0; i < max; i++) {
		ssize_t n = read(c->fd, k->page, k->layout.page_size);

		if (n < 0 && errno == EINTR) {
			i--;
			continue;
		}
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n < 0)
			return -errno;
		if (!n)
			return 0;
		if (parse_page(k, (size_t)n, c->cpu, last))
			return -ENOMEM;
		if (*last > until)
			return 0;
	}
	return 1;
}

static int rec_cmp(const void *pa, const void *pb)
{
	const struct krec *a = pa, *b = pb;

	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/*
 * Keep the sorted records from @from on (those after the round's mark)
 * for the next round, at the start of the arena.
 */
static int hold(struct dp_kernel *k, size_t from)
{
	size_t n = k->nrecs - from, len = 0;
	uint8_t *tmp;

	k->nrecs = 0;
	k->arena_len = 0;
	if (!n)
		return 0;
	for (size_t i = from; i < from + n; i++)
		len += k->recs[i].len;
	tmp = malloc(len ? len : 1);
	if (!tmp)
		return -ENOMEM;
	len = 0;
	for (size_t i = from; i < from + n; i++) {
		memcpy(tmp + len, k->arena + k->recs[i].off, k->recs[i].len);
		k->recs[i].off = len;
		len += k->recs[i].len;
	}
	memcpy(k->arena, tmp, len);
	free(tmp);
	memmove(k->recs, k->recs + from, n * sizeof(*k->recs));
	for (size_t i = 0; i < n; i++) {
		k->recs[i].seq = i;
		k->recs[i].held++;
	}
	k->nrecs = n;
	k->arena_len = len;
	return 0;
}

/*
 * The user stack of record @i (sorted) into @st: the kernel writes it
 * as the next entry of the same CPU, a user_stack entry of the same
 * thread.  Its frames, 0 if it has none (not an event --stack named,
 * or the next entry of its CPU is something else: the kernel dropped
 * the stack), or -1 if no later entry of its CPU is read yet: it waits
 * for the next round, at most twice, never at the end.
 */
static int user_stack(struct dp_kernel *k, size_t i, bool final,
		      uint64_t *st)
{
	const struct krec *r = &k->recs[i];
	const uint8_t *data = k->arena + r->off;
	struct kev *e;

	if (!k->ustack.on || r->len < DP_TP_HEAD_SIZE)
		return 0;
	e = kev_of(k, (unsigned)dp_rec_load(data + DP_REC_TYPE_OFF, 2));
	if (!e || !e->ev->stack)
		return 0;
	for (size_t j = i + 1; j < k->nrecs; j++) {
		const struct krec *s = &k->recs[j];

		if (s->cpu == r->cpu)
			return (int)dp_kustack_frames(k, k->arena + s->off,
				s->len, (pid_t)dp_rec_load(data +
							   DP_REC_PID_OFF, 4),
				st);
	}
	return final || r->held >= 2 ? 0 : -1;
}

/* CLOCK_MONOTONIC in ns, the instance's trace_clock "mono". */
static uint64_t mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Records are put in order across CPUs only among those read together,
 * so a round hands on only what no CPU can still add an older record
 * to: those up to the time the round began (less the moment a record
 * takes from its timestamp to its commit), and not past the last record
 * read from a CPU whose round was cut short.  The rest waits.  The
 * final drain reads each CPU up to the time it began, and hands on all.
 */
#define COMMIT_SLACK_NS	(10 * 1000 * 1000)
#define FINAL_MAX_PAGES	(1 << 16)

int dp_kread_drain(struct dp_kernel *k, bool final)
{
	uint64_t now = mono_now(), mark;
	size_t out;
	int ret = 0;

	k->saved_stale = true;
	k->round++;

	mark = !k->mono_clock || final ? UINT64_MAX :
	       now > COMMIT_SLACK_NS ? now - COMMIT_SLACK_NS : 0;
	for (int i = 0; i < k->ncpus; i++) {
		uint64_t last = 0;

		ret = final ? read_cpu(k, &k->cpus[i], FINAL_MAX_PAGES,
				       k->mono_clock ? now : UINT64_MAX, &last) :
		      read_cpu(k, &k->cpus[i], PAGES_PER_ROUND, UINT64_MAX,
			       &last);
		if (ret < 0)
			break;
		if (ret > 0 && !final && last < mark)
			mark = last;
	}
	if (k->nrecs)
		qsort(k->recs, k->nrecs, sizeof(*k->recs), rec_cmp);
	for (out = 0; out < k->nrecs && k->recs[out].ts <= mark; out++) {
		const struct krec *r = &k->recs[out];
		uint64_t st[DP_KUSTACK_MAX];
		int n = user_stack(k, out, final, st);

		if (n < 0)
			break;		/* its stack is not read yet */
		record(k, k->arena + r->off, r->len, r->ts, r->cpu, st,
		       (unsigned)n);
	}
	if (hold(k, out) && !ret)
		ret = -ENOMEM;
	return ret < 0 ? ret : 0;
}

int dp_kread_wait(struct dp_kernel *k, const sigset_t *mask)
{
	struct pollfd pfd[256];
	struct timespec ts = { 0, 100 * 1000 * 1000 };
	int n = k->ncpus < 256 ? k->ncpus : 256;

	for (int i = 0; i < n; i++)
		pfd[i] = (struct pollfd){ .fd = k->cpus[i].fd, .events = POLLIN };
	/* the stop signals are let in only here, as in the other engines */
	if (ppoll(pfd, (nfds_t)n, &ts, mask) < 0 && errno != EINTR)
		return -errno;
	return 0;
}

void dp_kread_free(struct dp_kernel *k)
{
	free(k->saved);
	dp_tidmap_free(&k->tids);
	free(k->recs);
	free(k->arena);
	free(k->conv);
}
