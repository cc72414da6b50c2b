// SPDX-License-Identifier: GPL-2.0
/*
 * The process the kernel's ftrace selftests probe through `dprobe mount`
 * (tests/ftrace/run.sh): functions named as the kernel functions the
 * kprobe/ and dynevent/ tests place probes on, with arguments of the
 * same kinds, called in a loop every 200 us: a test enables a probe and
 * greps the trace right after, where the kernel's function would have
 * run because of what the test did (a fork, a read, a new event
 * directory: tracefs_create_dir() gets "test", the name the char test
 * creates; the file opened is /dev/null, as in the user-memory test,
 * whose vfs_symlink() dentry is a pointer nothing can read),
 * tracepoints (dprobe's tracepoint.h) named as the kernel's (the
 * trigger tests' sched_process_fork among them, and the sched_switch,
 * sched_wakeup, sched_process_exec and kmem:kmalloc of the hist tests,
 * with the kernel's fields), the
 * system calls the event-probe tests put eprobes on, and a thread named
 * ls opening "." (the synthetic-eprobe test's ls).  No function does
 * anything else.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

/* the members %pd and %pD read, as the kernel's: a dentry's
 * d_name.name, a file's f_path.dentry */
struct qstr { unsigned int hash, len; const char *name; };
struct dentry { unsigned int d_flags; struct dentry *d_parent;
		struct qstr d_name; };
struct path { void *mnt; struct dentry *dentry; };
struct file { struct path f_path; long pos; };
struct sock { int family; };
struct kernel_clone_args { unsigned long flags; int exit_signal; };
struct filename { const char *name; int refcnt; };
struct kmem_cache { unsigned int object_size; const char *name; };
struct list_head { struct list_head *next, *prev; };
struct sched_entity { long load; struct list_head group_node; };
struct task_struct { int pid; struct sched_entity se; };

/*
 * Tracepoints named and typed as the kernel's the tracepoint-probe tests
 * (t:) attach to, with the arguments they read by name.
 */
#define DP_CREATE_TRACE_POINTS
#include <dprobe/tracepoint.h>

DP_TRACE_EVENT(kmem, kfree,
	TP_PROTO(const void *ptr),
	TP_ARGS(ptr),
	TP_FIELDS(tp_field(unsigned long, ptr)))

DP_TRACE_EVENT(kmem, kmem_cache_alloc,
	TP_PROTO(struct kmem_cache *s, unsigned long bytes),
	TP_ARGS(s, bytes),
	TP_FIELDS(tp_field(unsigned long, s) tp_field(unsigned long, bytes)))

/* p for the tracepoint-probe test (p->se...), then the kernel's fields,
 * which the inter-event tests' triggers name */
DP_TRACE_EVENT(sched, sched_wakeup,
	TP_PROTO(struct task_struct *p, const char *comm, int pid, int prio,
		 int target_cpu),
	TP_ARGS(p, comm, pid, prio, target_cpu),
	TP_FIELDS(tp_field(unsigned long, p) tp_string(comm) tp_pid(pid)
		  tp_field(int, prio) tp_field(int, target_cpu)))

/* the fields the histogram syntax-error test names */
DP_TRACE_EVENT(kmem, kmalloc,
	TP_PROTO(unsigned long call_site, const void *ptr,
		 unsigned long bytes_req, unsigned long bytes_alloc,
		 unsigned long gfp_flags, int node),
	TP_ARGS(call_site, ptr, bytes_req, bytes_alloc, gfp_flags, node),
	TP_FIELDS(tp_field(unsigned long, call_site)
		  tp_field(unsigned long, ptr)
		  tp_field(unsigned long, bytes_req)
		  tp_field(unsigned long, bytes_alloc)
		  tp_field(unsigned long, gfp_flags) tp_field(int, node)))

DP_TRACE_EVENT(sched, sched_process_exec,
	TP_PROTO(const char *filename, int pid, int old_pid),
	TP_ARGS(filename, pid, old_pid),
	TP_FIELDS(tp_string(filename) tp_pid(pid) tp_pid(old_pid)))

/* The event the trigger tests put their triggers on, fired in the loop
 * as kernel_clone() is called (no process is made: the kernel's would
 * fire for the test shell's own "( echo forked )"), and the one their
 * enable_event triggers name. */
DP_TRACE_EVENT(sched, sched_process_fork,
	TP_PROTO(const char *parent_comm, int parent_pid,
		 const char *child_comm, int child_pid),
	TP_ARGS(parent_comm, parent_pid, child_comm, child_pid),
	TP_FIELDS(tp_string(parent_comm) tp_pid(parent_pid)
		  tp_string(child_comm) tp_pid(child_pid)))

/* the kernel's fields (prev_state a long, as TASK_INTERRUPTIBLE 1; the
 * pids pid_t, as in all the sched events) */
DP_TRACE_EVENT(sched, sched_switch,
	TP_PROTO(const char *prev_comm, int prev_pid, int prev_prio,
		 long prev_state, const char *next_comm, int next_pid,
		 int next_prio),
	TP_ARGS(prev_comm, prev_pid, prev_prio, prev_state, next_comm,
		next_pid, next_prio),
	TP_FIELDS(tp_string(prev_comm) tp_pid(prev_pid)
		  tp_field(int, prev_prio) tp_field(long, prev_state)
		  tp_string(next_comm) tp_pid(next_pid)
		  tp_field(int, next_prio)))

volatile long sink;

#define KFN __attribute__((noinline, used))

KFN long vfs_read(struct file *file, char *buf, unsigned long count, long *pos)
{
	sink += count + (pos ? *pos : 0) + (buf ? buf[0] : 0) +
		(file ? file->pos : 0);
	return (long)count;
}

KFN long vfs_write(struct file *file, const char *buf, unsigned long count,
		   long *pos)
{
	return vfs_read(file, (char *)buf, count, pos);
}

KFN int vfs_open(const struct path *path, struct file *file)
{
	sink += path && path->dentry ? path->dentry->d_name.len : 0;
	return file ? 0 : -1;
}

KFN int vfs_symlink(void *idmap, struct dentry *dir, struct dentry *dentry,
		    const char *oldname)
{
	sink += oldname ? oldname[0] : 0;
	return dir == dentry;
}

KFN void kfree(const void *object)
{
	sink += object != NULL;
	trace_kfree(object);
}

KFN struct filename *getname_flags(const char *filename, int flags)
{
	static struct filename fn;

	fn.name = filename;
	fn.refcnt = flags;
	return &fn;
}

KFN void dput(struct dentry *d)
{
	sink += d != NULL;
}

KFN struct sock *inet_csk_accept(struct sock *sk, int flags, int *err,
				 int kern)
{
	sink += flags + kern + (err ? *err : 0);
	return sk;
}

KFN long kernel_clone(struct kernel_clone_args *args)
{
	return args ? (long)args->flags : 0;
}

KFN long _do_fork(struct kernel_clone_args *args)
{
	return kernel_clone(args);
}

KFN void do_exit(long code)
{
	sink += code;
}

KFN long do_sys_openat2(int dfd, const char *filename, void *how)
{
	sink += dfd + (filename ? filename[0] : 0) + (how != NULL);
	return 3;
}

KFN long do_sys_open(int dfd, const char *filename, int flags, unsigned mode)
{
	return do_sys_openat2(dfd, filename, NULL) + flags + mode;
}

KFN struct dentry *tracefs_create_dir(const char *name, struct dentry *parent)
{
	sink += name ? name[0] : 0;
	return parent;
}

KFN void trace_printk_irq_work(void *work)
{
	sink += work != NULL;
}

KFN long schedule_timeout(long timeout)
{
	return timeout;
}

/* A sleep and the wakeup after it, as two sched_switch events: pid - 1
 * goes to sleep (prev_state 1, TASK_INTERRUPTIBLE) for the target, which
 * then switches back to it. */
KFN void __schedule(int self)
{
	trace_sched_switch("sleeper", self - 1, 120, 1, "target", self, 120);
	trace_sched_switch("target", self, 120, 0, "sleeper", self - 1, 120);
}

KFN void schedule(void)
{
	__schedule((int)getpid());
}

/* the second function the set_ftrace_filter listing test puts a
 * function command on */
KFN void sched_tick(void)
{
	sink++;
}

/* names the ftrace/ function-filter tests glob for (mutex*unl*,
 * [Ss]y[Ss]_*): a set_ftrace_filter rule that selects nothing is an
 * error, as in the kernel */
KFN void mutex_unlock(void *lock)
{
	sink += lock != NULL;
}

KFN long sys_getpid(void)
{
	return (long)getpid();
}

/* The `ls` the synthetic-eprobe test runs and greps for ("ls-" lines
 * with the files it opened): a thread of that name opening ".". */
static void *ls_thread(void *arg)
{
	const struct timespec tick = { 0, 1000 * 1000 };

	(void)arg;
	prctl(PR_SET_NAME, "ls");
	for (;;) {
		close(openat(AT_FDCWD, ".", O_RDONLY | O_DIRECTORY));
		nanosleep(&tick, NULL);
	}
	return NULL;
}

int main(void)
{
	pthread_t ls;
	char buf[64] = "hello";
	/* the VFS-type tests grep the name of the file whose enable they
	 * write and read: "enable" */
	struct dentry root = { 0, NULL, { 0, 1, "/" } };
	struct dentry d = { 0, &root, { 0, 6, "enable" } };
	struct path p = { NULL, &d };
	struct file f = { { NULL, &d }, 0 };
	struct sock sk = { 2 };
	struct kernel_clone_args ca = { 0x11, 17 };
	/* a thousand rounds a second: the tests wait a second or more for
	 * their events, and every hit of an enabled event is a line dprobe
	 * formats for the whole stage */
	const struct timespec tick = { 0, 1000 * 1000 };
	struct kmem_cache cache = { 64, "kmalloc-64" };
	struct task_struct task = { 1, { 0, { NULL, NULL } } };
	long pos = 0;
	int err = 0;

	task.se.group_node.next = task.se.group_node.prev =
		&task.se.group_node;

	if (pthread_create(&ls, NULL, ls_thread, NULL))
		return 1;
	printf("ftrace target %d ready\n", (int)getpid());
	fflush(stdout);
	for (;;) {
		vfs_open(&p, &f);
		vfs_read(&f, buf, sizeof(buf), &pos);
		vfs_write(&f, buf, 5, &pos);
		/* a pointer no read can follow: the user-memory test reads
		 * it as a string and expects (fault) */
		vfs_symlink(NULL, &root, (struct dentry *)16, "target");
		kernel_clone(&ca);
		inet_csk_accept(&sk, 0, &err, 0);
		tracefs_create_dir("test", &root);
		do_sys_open(-100, "/dev/null", 0, 0);
		dput(&d);
		kfree(buf);
		getname_flags("/dev/null", 0);
		trace_kmem_cache_alloc(&cache, cache.object_size);
		trace_sched_wakeup(&task, "target", (int)getpid(), 120, 0);
		trace_kmalloc(0, buf, 64, 64, 0xcc0, -1);
		trace_sched_process_fork("target", (int)getpid(), "target",
					 (int)getpid() + 1);
		trace_sched_process_exec("/bin/target", (int)getpid(),
					 (int)getpid());
		schedule();
		sched_tick();
		mutex_unlock(&err);
		sys_getpid();
		trace_printk_irq_work(NULL);
		schedule_timeout(1);
		do_exit(0);
		/* the system calls the event-probe tests watch: the chdir
		 * of the add/remove test's shell (its eprobe reads the
		 * path), the openat of the syntax and duplicate tests */
		if (chdir("/sys/kernel/tracing"))
			err = errno;
		close(openat(AT_FDCWD, "/dev/null", O_RDONLY));
		nanosleep(&tick, NULL);
	}
	return 0;
}
