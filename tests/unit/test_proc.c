// SPDX-License-Identifier: GPL-2.0
/*
 * sym/proc: maps, loaded objects and their bias, probe places resolved to
 * run-time addresses, the symbolizer and the dynamic linker's breakpoint,
 * checked on live helper processes (tests/data/proc_target.c, built into
 * $DPROBE_BUILD/tests/data/).  A helper prints where the loader put its
 * functions, which is what every resolved address is compared with; the
 * bytes at a resolved address are compared with the file's.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "lang/errors.h"
#include "lang/lang.h"
#include "output/output.h"
#include "sym/elf.h"
#include "sym/proc.h"
#include "test_data.h"

#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"

/* ---- helper processes --------------------------------------------------- */

struct helper {
	pid_t pid;
	int fd;			/* its stdout */
	uint64_t work;		/* &proc_work, as printed */
	uint64_t getpid;	/* libc's getpid */
};

static struct helper helpers[4];
static int nhelpers;
static char tmpdir[64];

static void kill_helpers(void)
{
	for (int i = 0; i < nhelpers; i++) {
		kill(helpers[i].pid, SIGKILL);
		waitpid(helpers[i].pid, NULL, 0);
		if (helpers[i].fd >= 0)
			close(helpers[i].fd);
	}
	nhelpers = 0;
	if (tmpdir[0]) {
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd))
			fprintf(stderr, "could not remove %s\n", tmpdir);
		tmpdir[0] = '\0';
	}
}

TestSuite(proc, .fini = kill_helpers, .timeout = 60);

/* One line of the helper's output, without '\n'; fails after 10 s. */
static void read_line(struct helper *h, char *buf, size_t len)
{
	struct pollfd pfd = { .fd = h->fd, .events = POLLIN };
	size_t n = 0;
	char c;

	for (;;) {
		cr_assert_gt(poll(&pfd, 1, 10000), 0, "helper %d is silent",
			     h->pid);
		cr_assert_eq(read(h->fd, &c, 1), 1, "helper %d ended", h->pid);
		if (c == '\n')
			break;
		if (n + 1 < len)
			buf[n++] = c;
	}
	buf[n] = '\0';
}

static char skip_why[256];

/*
 * Start @prog with @lib1, @lib2 as arguments, after @setup (if not NULL)
 * has run in the child; wait for its "ready" line.  NULL if @setup said
 * "skip REASON" instead (in skip_why).
 */
static struct helper *spawn_setup(const char *prog, const char *lib1,
				  const char *lib2, void (*setup)(void))
{
	struct helper *h = &helpers[nhelpers];
	char line[256];
	int fds[2];

	cr_assert_lt(nhelpers, 4);
	cr_assert_eq(pipe2(fds, O_CLOEXEC), 0);
	h->pid = fork();
	cr_assert_geq(h->pid, 0);
	if (!h->pid) {
		/* dies with the test even if the test crashes */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(fds[1], 1);
		if (setup)
			setup();
		execl(prog, prog, lib1, lib2, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	h->fd = fds[0];
	nhelpers++;
	read_line(h, line, sizeof(line));
	if (!strncmp(line, "skip ", 5)) {
		snprintf(skip_why, sizeof(skip_why), "%s", line + 5);
		return NULL;
	}
	cr_assert_eq(sscanf(line, "ready %" SCNx64 " %" SCNx64, &h->work,
			    &h->getpid), 2, "helper said '%s'", line);
	return h;
}

static struct helper *spawn(const char *prog, const char *lib1,
			    const char *lib2)
{
	return spawn_setup(prog, lib1, lib2, NULL);
}

/* Send @sig and return the helper's answer line. */
static void poke(struct helper *h, int sig, char *buf, size_t len)
{
	cr_assert_eq(kill(h->pid, sig), 0);
	read_line(h, buf, len);
}

static void read_mem(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };

	cr_assert_eq(process_vm_readv(pid, &l, 1, &r, 1, 0), (ssize_t)len,
		     "read 0x%" PRIx64 " in %d: %s", addr, pid, strerror(errno));
}

static void read_file(const char *path, uint64_t off, void *buf, size_t len)
{
	int fd = open(path, O_RDONLY);

	cr_assert_geq(fd, 0, "open %s", path);
	cr_assert_eq(pread(fd, buf, len, off), (ssize_t)len);
	close(fd);
}

static struct dp_proc *proc_ok(pid_t pid)
{
	struct dp_proc *p = NULL;
	char why[256] = "";
	int ret = dp_proc_open(pid, &p, why, sizeof(why));

	cr_assert_eq(ret, 0, "dp_proc_open(%d): %d %s", pid, ret, why);
	return p;
}

static void parse_ok(const char *line, struct dp_probe_def *def)
{
	struct dp_error e = { 0 };
	int ret = dp_parse_probe(line, def, &e);

	cr_assert_eq(ret, 0, "parse '%s': %s", line, dp_err_message(e.code));
	dp_error_clear(&e);
}

/* Resolve @line in @p, expecting exactly one location; returns it. */
static struct dp_proc_loc resolve1(struct dp_proc *p, const char *line)
{
	struct dp_probe_def def;
	struct dp_proc_res res;
	struct dp_error e = { 0 };
	struct dp_proc_loc l;
	int ret;

	parse_ok(line, &def);
	ret = dp_proc_resolve(p, line, &def, &res, &e);
	cr_assert_eq(ret, 0, "resolve '%s': %d %s (%s)", line, ret,
		     dp_err_message(e.code), e.detail);
	cr_assert_not(res.pending, "'%s' pending: %s", line, res.why);
	cr_assert_eq(res.n, 1, "'%s': %zu locations", line, res.n);
	l = res.loc[0];
	dp_proc_res_free(&res);
	dp_probe_def_free(&def);
	dp_error_clear(&e);
	return l;
}

/* Resolve @line expecting failure; returns the errno, fills @e. */
static int resolve_err(struct dp_proc *p, const char *line,
		       struct dp_error *e)
{
	struct dp_probe_def def;
	struct dp_proc_res res;
	int ret;

	parse_ok(line, &def);
	ret = dp_proc_resolve(p, line, &def, &res, e);
	cr_assert_lt(ret, 0, "'%s' resolved", line);
	cr_assert_eq(res.n, 0);
	dp_probe_def_free(&def);
	return -ret;
}

static const struct dp_proc_obj *obj_by_base(const struct dp_proc_objs *s,
					     const char *base)
{
	for (size_t i = 0; i < s->n; i++) {
		const char *b = strrchr(s->v[i].path, '/');

		if (!strcmp(b ? b + 1 : s->v[i].path, base))
			return &s->v[i];
	}
	return NULL;
}

static char *real(const char *path)
{
	char *r = realpath(path, NULL);

	cr_assert(r, "realpath %s", path);
	return r;
}

/* ---- maps --------------------------------------------------------------- */

Test(proc, maps_parse)
{
	static const char text[] =
		"00400000-00401000 r--p 00000000 fe:00 1234       /usr/bin/prog\n"
		"7f0000000000-7f0000002000 r-xp 00001000 08:11 99 "
		"/tmp/my lib.so (deleted)\n"
		"7ffff7ff0000-7ffff7ff1000 rw-p 00000000 00:00 0  [stack]\n"
		"7ffff7ff3000-7ffff7ff4000 r-xp 00000000 00:00 0  [vdso]\n"
		"7ffff7ff5000-7ffff7ff6000 rw-s 00000000 00:05 77 /dev/zero (deleted)\n"
		"7ffff7ff7000-7ffff7ff8000 rw-p 00000000 00:00 0 \n"
		"7ffff7ff9000-7ffff7ffa000 ---p 00000000 00:00 0";
	struct dp_maps m;

	cr_assert_eq(dp_maps_parse(text, strlen(text), &m), 0);
	cr_assert_eq(m.n, 7);
	cr_assert_eq(m.v[0].start, 0x400000);
	cr_assert_eq(m.v[0].end, 0x401000);
	cr_assert_eq(m.v[0].perms, DP_MAP_R);
	cr_assert_eq(m.v[0].dev, makedev(0xfe, 0));
	cr_assert_eq(m.v[0].ino, 1234);
	cr_assert_str_eq(m.v[0].path, "/usr/bin/prog");
	cr_assert_not(m.v[0].deleted);

	cr_assert_eq(m.v[1].start, 0x7f0000000000);
	cr_assert_eq(m.v[1].offset, 0x1000);
	cr_assert_eq(m.v[1].perms, DP_MAP_R | DP_MAP_X);
	cr_assert_eq(m.v[1].dev, makedev(8, 0x11));
	cr_assert_str_eq(m.v[1].path, "/tmp/my lib.so");
	cr_assert(m.v[1].deleted);

	cr_assert_str_eq(m.v[2].path, "[stack]");
	cr_assert_eq(m.v[2].ino, 0);
	cr_assert_eq(m.v[2].perms, DP_MAP_R | DP_MAP_W);
	cr_assert_str_eq(m.v[3].path, "[vdso]");
	cr_assert_eq(m.v[4].perms, DP_MAP_R | DP_MAP_W | DP_MAP_SHARED);
	cr_assert(m.v[4].deleted);
	cr_assert_str_eq(m.v[4].path, "/dev/zero");
	cr_assert_str_eq(m.v[5].path, "");
	cr_assert_eq(m.v[6].perms, 0);

	cr_assert_eq(dp_maps_find(&m, 0x400fff), &m.v[0]);
	cr_assert_eq(dp_maps_find(&m, 0x7f0000001234), &m.v[1]);
	cr_assert_null(dp_maps_find(&m, 0x401000));
	cr_assert_null(dp_maps_find(&m, 0));
	dp_maps_free(&m);

	cr_assert_eq(dp_maps_parse("garbage\n", 8, &m), -EINVAL);
	cr_assert_eq(m.n, 0);
	cr_assert_eq(dp_maps_parse("", 0, &m), 0);
	cr_assert_eq(m.n, 0);
}

Test(proc, maps_read_live)
{
	struct helper *h = spawn(test_data("proc_nopie"), NULL, NULL);
	struct dp_maps m;
	struct stat st;
	char why[256];
	const struct dp_map *w;

	cr_assert_eq(dp_maps_read(h->pid, &m, why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(stat(test_data("proc_nopie"), &st), 0);
	w = dp_maps_find(&m, h->work);
	cr_assert_not_null(w);
	cr_assert_eq(w->dev, st.st_dev);
	cr_assert_eq(w->ino, st.st_ino);
	cr_assert(w->perms & DP_MAP_X);
	cr_assert_eq(w->start, 0x401000, "non-PIE text at 0x%" PRIx64,
		     w->start);
	dp_maps_free(&m);
}

/* ---- objects ------------------------------------------------------------ */

Test(proc, objects_pie)
{
	struct helper *h = spawn(test_data("proc_pie"), NULL, NULL);
	struct dp_proc *p = proc_ok(h->pid);
	const struct dp_proc_objs *s = dp_proc_objs(p);
	const struct dp_proc_obj *mo = dp_proc_main(s), *libc, *ld;
	char *exe = real(test_data("proc_pie"));
	size_t nmain = 0, ninterp = 0;

	cr_assert_not_null(mo);
	cr_assert_str_eq(mo->path, exe);
	cr_assert_not_null(mo->elf);
	cr_assert_null(mo->soname);
	cr_assert_not(mo->interp);
	libc = obj_by_base(s, "libc.so.6");
	cr_assert_not_null(libc);
	cr_assert_str_eq(libc->soname, "libc.so.6");
	ld = obj_by_base(s, "ld-linux-x86-64.so.2");
	cr_assert_not_null(ld);
	cr_assert(ld->interp);
	cr_assert_str_eq(ld->soname, "ld-linux-x86-64.so.2");
	for (size_t i = 0; i < s->n; i++) {
		nmain += s->v[i].main;
		ninterp += s->v[i].interp;
		cr_assert_neq(s->v[i].path[0], '[', "%s", s->v[i].path);
		cr_assert_eq(s->v[i].err, 0, "%s: %s", s->v[i].path,
			     s->v[i].why);
		cr_assert_lt(s->v[i].start, s->v[i].end);
	}
	cr_assert_eq(nmain, 1);
	cr_assert_eq(ninterp, 1);
	/* every mapping of the file belongs to the one object */
	for (size_t i = 0; i < s->maps.n; i++)
		if (s->maps.v[i].ino == mo->ino && s->maps.v[i].dev == mo->dev)
			cr_assert_eq(&s->v[s->map_obj[i]], mo);
	cr_assert_eq(dp_proc_obj_at(s, h->work), mo);
	cr_assert_eq(dp_proc_obj_at(s, h->getpid), libc);
	cr_assert_null(dp_proc_obj_at(s, 16));
	free(exe);
	dp_proc_close(p);
}

/* The bias makes the ELF's proc_work land where the loader put it. */
static void check_bias(const char *prog, bool pie)
{
	struct helper *h = spawn(test_data(prog), NULL, NULL);
	struct dp_proc *p = proc_ok(h->pid);
	const struct dp_proc_objs *s = dp_proc_objs(p);
	const struct dp_proc_obj *mo = dp_proc_main(s), *libc;
	struct dp_elf_sym sym;
	uint8_t mem[16], file[16];

	cr_assert_not_null(mo);
	cr_assert_eq(dp_elf_is_pie(mo->elf), pie);
	if (pie)
		cr_assert_eq(mo->bias, mo->start, "PIE bias 0x%" PRIx64
			     " start 0x%" PRIx64, mo->bias, mo->start);
	else
		cr_assert_eq(mo->bias, 0);
	cr_assert_eq(dp_elf_lookup(mo->elf, "proc_work", &sym), 0);
	cr_assert_eq(sym.value + mo->bias, h->work);

	libc = obj_by_base(s, "libc.so.6");
	cr_assert_not_null(libc);
	cr_assert_eq(libc->bias % 4096, 0);
	cr_assert_eq(dp_elf_lookup(libc->elf, "getpid", &sym), 0);
	cr_assert_eq(sym.value + libc->bias, h->getpid);
	read_mem(h->pid, h->getpid, mem, sizeof(mem));
	cr_assert_eq(dp_elf_read(libc->elf, sym.value, file, sizeof(file)), 16);
	cr_assert_arr_eq(mem, file, sizeof(mem));
	dp_proc_close(p);
}

Test(proc, bias_nopie)
{
	check_bias("proc_nopie", false);
}

Test(proc, bias_pie)
{
	check_bias("proc_pie", true);
}

/* ---- places ------------------------------------------------------------- */

/* PATH:OFFSET lands on the mapped copy of exactly those file bytes. */
static void check_uprobe(struct helper *h, struct dp_proc *p,
			 const char *path, const char *symname, uint64_t want)
{
	struct dp_elf *e = NULL;
	struct dp_elf_sym sym;
	struct dp_proc_loc l;
	uint64_t off;
	uint8_t mem[32], file[32];
	char line[PATH_MAX + 64];

	cr_assert_eq(dp_elf_open(path, &e), 0);
	cr_assert_eq(dp_elf_lookup(e, symname, &sym), 0);
	cr_assert_eq(dp_elf_vaddr_to_off(e, sym.value, &off), 0);
	snprintf(line, sizeof(line), "p:u/x %s:0x%" PRIx64 " a=%%di", path,
		 off);
	l = resolve1(p, line);
	cr_assert_eq(l.addr, want, "%s: 0x%" PRIx64 " != 0x%" PRIx64, line,
		     l.addr, want);
	cr_assert_eq(l.file_offset, off);
	cr_assert_eq(l.vaddr, sym.value);
	cr_assert_eq(l.ref_ctr_addr, 0);
	read_mem(h->pid, l.addr, mem, sizeof(mem));
	read_file(path, off, file, sizeof(file));
	cr_assert_arr_eq(mem, file, sizeof(mem));
	dp_elf_close(e);
}

Test(proc, uprobe_places)
{
	struct helper *h1 = spawn(test_data("proc_pie"), NULL, NULL);
	struct helper *h2 = spawn(test_data("proc_nopie"), NULL, NULL);
	struct dp_proc *p1 = proc_ok(h1->pid), *p2 = proc_ok(h2->pid);

	check_uprobe(h1, p1, test_data("proc_pie"), "proc_work", h1->work);
	check_uprobe(h1, p1, LIBC, "getpid", h1->getpid);
	check_uprobe(h2, p2, test_data("proc_nopie"), "proc_work", h2->work);
	check_uprobe(h2, p2, LIBC, "getpid", h2->getpid);
	dp_proc_close(p1);
	dp_proc_close(p2);
}

Test(proc, symbol_places)
{
	struct helper *h = spawn(test_data("proc_pie"), NULL, NULL);
	struct dp_proc *p = proc_ok(h->pid);
	char line[PATH_MAX + 64];
	struct dp_proc_loc l;
	uint64_t off;

	l = resolve1(p, "p:s/a proc_work a=%di");
	cr_assert_eq(l.addr, h->work);
	cr_assert(dp_proc_main(dp_proc_objs(p)) == l.obj);
	cr_assert_eq(dp_elf_vaddr_to_off(l.obj->elf, l.vaddr, &off), 0);
	cr_assert_eq(l.file_offset, off);

	snprintf(line, sizeof(line), "p:s/b %s:proc_work", test_data("proc_pie"));
	cr_assert_eq(resolve1(p, line).addr, h->work);
	cr_assert_eq(resolve1(p, "r:s/c proc_pie:proc_work $retval").addr,
		     h->work);
	cr_assert_eq(resolve1(p, "p:s/d libc.so.6:getpid").addr, h->getpid);
	cr_assert_eq(resolve1(p, "p:s/e " LIBC ":getpid").addr, h->getpid);

	/* an offset inside the function, on an instruction boundary */
	l = resolve1(p, "p:s/f proc_work+0");
	cr_assert_eq(l.addr, h->work);

	/* MEMADDR: a run-time address */
	snprintf(line, sizeof(line), "p:s/g 0x%" PRIx64, h->work);
	l = resolve1(p, line);
	cr_assert_eq(l.addr, h->work);
	cr_assert(l.obj->main);
	cr_assert_eq(l.file_offset, off);
	dp_proc_close(p);
}

Test(proc, sym_addr)
{
	struct helper *h = spawn(test_data("proc_nopie"), NULL, NULL);
	struct dp_proc *p = proc_ok(h->pid);
	uint64_t a = 0;
	char why[256];

	cr_assert_eq(dp_proc_sym_addr(p, "proc_work", &a, why, sizeof(why)),
		     0, "%s", why);
	cr_assert_eq(a, h->work);
	cr_assert_eq(dp_proc_sym_addr(p, "proc_work+4", &a, why, sizeof(why)), 0);
	cr_assert_eq(a, h->work + 4);
	cr_assert_eq(dp_proc_sym_addr(p, "libc.so.6:getpid", &a, why,
				      sizeof(why)), 0);
	cr_assert_eq(a, h->getpid);
	cr_assert_eq(dp_proc_sym_addr(p, "nosuchsym", &a, why, sizeof(why)),
		     -ENOENT);
	cr_assert_eq(dp_proc_sym_addr(p, "libnone.so:x", &a, why, sizeof(why)),
		     -ENOENT);
	cr_assert(strstr(why, "libnone.so"), "%s", why);
	dp_proc_close(p);
}

Test(proc, place_errors)
{
	struct helper *h = spawn(test_data("proc_pie"), NULL, NULL);
	struct dp_proc *p = proc_ok(h->pid);
	struct dp_error e = { 0 };
	char why[256] = "";
	struct dp_proc *q = NULL;

	cr_assert_eq(resolve_err(p, "p:e/a proc_wrok", &e), ENOENT);
	cr_assert_eq(e.code, DP_ERR_BAD_PROBE_ADDR);
	cr_assert(strstr(e.detail, "searched"), "%s", e.detail);
	cr_assert(strstr(e.detail, "proc_work"), "%s", e.detail);
	dp_error_clear(&e);

	cr_assert_eq(resolve_err(p, "p:e/b /nonexistent/lib.so:foo", &e),
		     ENOENT);
	cr_assert_eq(e.code, DP_ERR_FILE_NOT_FOUND);
	dp_error_clear(&e);

	cr_assert_eq(resolve_err(p, "p:e/c 0x10", &e), EINVAL);
	cr_assert(strstr(e.detail, "not in the code"), "%s", e.detail);
	dp_error_clear(&e);

	/* past the end of the function */
	cr_assert_eq(resolve_err(p, "p:e/d proc_work+4096", &e), EINVAL);
	cr_assert_eq(e.code, DP_ERR_BAD_PROBE_ADDR);
	dp_error_clear(&e);

	/* inside an instruction: the check of the file applies */
	cr_assert_eq(resolve_err(p, "p:e/e libc.so.6:getpid+1", &e), EILSEQ);
	cr_assert_eq(e.code, DP_ERR_BAD_INSN_BNDRY);
	dp_error_clear(&e);
	dp_proc_close(p);

	cr_assert_eq(dp_proc_open(INT_MAX, &q, why, sizeof(why)), -ESRCH);
	cr_assert_null(q);
	cr_assert(strstr(why, "no such process"), "%s", why);
	cr_assert_eq(dp_proc_open(0, &q, why, sizeof(why)), -EINVAL);
	cr_assert_eq(dp_proc_dl_breakpoint(INT_MAX, &(uint64_t){ 0 }),
		     -ESRCH);
}

/* ---- libraries that come and go ----------------------------------------- */

Test(proc, pending_dlopen)
{
	struct helper *h = spawn(test_data("proc_pie"), test_data("libproc_lib.so.1.0"),
				 NULL);
	struct dp_proc *p = proc_ok(h->pid);
	struct dp_proc_objs *old = NULL;
	struct dp_proc_diff d;
	struct dp_probe_def def;
	struct dp_proc_res res;
	struct dp_error e = { 0 };
	const char *line = "p:l/a libproc_lib.so.1:proc_lib_fn x=%di";
	char ans[256], why[256];
	uint64_t lib;
	const struct dp_proc_objs *s;

	parse_ok(line, &def);
	cr_assert_eq(dp_proc_resolve(p, line, &def, &res, &e), 0);
	cr_assert(res.pending);
	cr_assert_eq(res.n, 0);
	cr_assert(strstr(res.why, "libproc_lib.so.1"), "%s", res.why);
	dp_proc_res_free(&res);
	s = dp_proc_objs(p);
	for (size_t i = 0; i < s->n; i++)
		cr_assert_not(dp_proc_names_obj(p, &def, &s->v[i]));

	poke(h, SIGUSR1, ans, sizeof(ans));
	cr_assert_eq(sscanf(ans, "loaded %" SCNx64, &lib), 1, "%s", ans);
	cr_assert_eq(dp_proc_refresh(p, &old, why, sizeof(why)), 0, "%s", why);
	s = dp_proc_objs(p);
	cr_assert_eq(dp_proc_objs_diff(old, s, &d), 0);
	cr_assert_eq(d.nadded, 1);
	cr_assert_eq(d.nremoved, 0);
	cr_assert_str_eq(d.added[0]->soname, "libproc_lib.so.1");
	cr_assert(dp_proc_names_obj(p, &def, d.added[0]));
	dp_proc_diff_free(&d);
	dp_proc_objs_free(old);

	cr_assert_eq(resolve1(p, line).addr, lib);
	cr_assert_eq(resolve1(p, "p:l/b libproc_lib.so.1.0:proc_lib_fn").addr,
		     lib);
	snprintf(ans, sizeof(ans), "p:l/c %s:proc_lib_fn",
		 test_data("libproc_lib.so.1.0"));
	cr_assert_eq(resolve1(p, ans).addr, lib);

	poke(h, SIGUSR2, ans, sizeof(ans));
	cr_assert_str_eq(ans, "closed");
	cr_assert_eq(dp_proc_refresh(p, &old, why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(dp_proc_objs_diff(old, dp_proc_objs(p), &d), 0);
	cr_assert_eq(d.nadded, 0);
	cr_assert_eq(d.nremoved, 1);
	cr_assert_str_eq(d.removed[0]->soname, "libproc_lib.so.1");
	dp_proc_diff_free(&d);
	dp_proc_objs_free(old);

	cr_assert_eq(dp_proc_resolve(p, line, &def, &res, &e), 0);
	cr_assert(res.pending);
	dp_proc_res_free(&res);
	dp_probe_def_free(&def);
	dp_proc_close(p);
}

Test(proc, ambiguous_module)
{
	struct helper *h = spawn(test_data("proc_nopie"), test_data("libproc_lib.so.1.0"),
				 test_data("dup/libproc_lib.so.1.0"));
	struct dp_proc *p;
	struct dp_error e = { 0 };
	uint64_t a1, a2;
	char ans[256];

	poke(h, SIGUSR1, ans, sizeof(ans));
	cr_assert_eq(sscanf(ans, "loaded %" SCNx64 " %" SCNx64, &a1, &a2), 2,
		     "%s", ans);
	p = proc_ok(h->pid);
	cr_assert_eq(resolve_err(p, "p:m/a libproc_lib.so.1:proc_lib_fn", &e),
		     EINVAL);
	cr_assert_eq(e.code, DP_ERR_NON_UNIQ_SYMBOL);
	cr_assert(strstr(e.detail, "dup/libproc_lib.so.1.0"), "%s", e.detail);
	cr_assert(strstr(e.detail, "data/libproc_lib.so.1.0"), "%s", e.detail);
	dp_error_clear(&e);
	snprintf(ans, sizeof(ans), "p:m/b %s:proc_lib_fn",
		 test_data("dup/libproc_lib.so.1.0"));
	cr_assert_eq(resolve1(p, ans).addr, a2);
	dp_proc_close(p);
}

/* A deleted executable is read through /proc/PID/map_files. */
Test(proc, deleted_executable)
{
	char path[128], cmd[512];
	struct helper *h;
	struct dp_proc *p;
	const struct dp_proc_obj *mo;

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/dprobe-proc.XXXXXX");
	cr_assert_not_null(mkdtemp(tmpdir));
	snprintf(path, sizeof(path), "%s/proc_pie", tmpdir);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", test_data("proc_pie"), path);
	cr_assert_eq(system(cmd), 0);
	h = spawn(path, NULL, NULL);
	cr_assert_eq(unlink(path), 0);
	p = proc_ok(h->pid);
	mo = dp_proc_main(dp_proc_objs(p));
	cr_assert_not_null(mo);
	cr_assert(mo->deleted);
	cr_assert_not_null(mo->elf, "%s", mo->why);
	cr_assert(strstr(mo->open_path, "/map_files/"), "%s", mo->open_path);
	cr_assert_eq(resolve1(p, "p:d/a proc_work").addr, h->work);
	dp_proc_close(p);
}

/*
 * A container: the helper in its own mount namespace whose root is a
 * tmpfs holding copies of its files (pivot_root), so that the maps show
 * paths that exist only under /proc/PID/root.
 */
static const char *const container_files[][2] = {
	{ NULL, "/proc_pie" },		/* test_data("proc_pie") */
	{ "/lib64/ld-linux-x86-64.so.2", "/lib64/ld-linux-x86-64.so.2" },
	{ LIBC, "/lib/x86_64-linux-gnu/libc.so.6" },
};

__attribute__((noreturn)) static void child_skip(const char *what)
{
	dprintf(1, "skip %s: %s\n", what, strerror(errno));
	_exit(0);
}

static int copy_file(const char *src, const char *dst)
{
	char buf[65536];
	int in = open(src, O_RDONLY), out;
	ssize_t n;

	if (in < 0)
		return -1;
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (out < 0) {
		close(in);
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n) {
			n = -1;
			break;
		}
	close(in);
	close(out);
	return n < 0 ? -1 : 0;
}

static void enter_container(void)
{
	static const char *const dirs[] = {
		"lib64", "lib", "lib/x86_64-linux-gnu", "old",
	};
	char dst[PATH_MAX];

	if (unshare(CLONE_NEWNS))
		child_skip("unshare(CLONE_NEWNS)");
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		child_skip("making / private");
	if (mount("dprobe-test", tmpdir, "tmpfs", 0, NULL))
		child_skip("mounting a tmpfs");
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(dst, sizeof(dst), "%s/%s", tmpdir, dirs[i]);
		if (mkdir(dst, 0755))
			child_skip(dst);
	}
	for (size_t i = 0; i < 3; i++) {
		snprintf(dst, sizeof(dst), "%s%s", tmpdir,
			 container_files[i][1]);
		if (copy_file(container_files[i][0] ? container_files[i][0] :
			      test_data("proc_pie"), dst))
			child_skip(dst);
	}
	if (chdir(tmpdir) || syscall(SYS_pivot_root, ".", "old") ||
	    chroot(".") || chdir("/") || umount2("/old", MNT_DETACH))
		child_skip("pivot_root");
}

Test(proc, container_root)
{
	struct helper *h;
	struct dp_proc *p;
	const struct dp_proc_obj *mo, *libc;
	char root[64], line[160];
	struct dp_proc_loc l;

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/dprobe-ns.XXXXXX");
	cr_assert_not_null(mkdtemp(tmpdir));
	h = spawn_setup("/proc_pie", NULL, NULL, enter_container);
	if (!h)
		cr_skip_test("no mount namespace here (%s)", skip_why);
	p = proc_ok(h->pid);
	snprintf(root, sizeof(root), "/proc/%d/root/", h->pid);
	mo = dp_proc_main(dp_proc_objs(p));
	cr_assert_not_null(mo);
	cr_assert_str_eq(mo->path, "/proc_pie");
	cr_assert_not_null(mo->elf, "%s", mo->why);
	cr_assert(!strncmp(mo->open_path, root, strlen(root)), "%s",
		  mo->open_path);
	libc = obj_by_base(dp_proc_objs(p), "libc.so.6");
	cr_assert_not_null(libc);
	cr_assert(!strncmp(libc->open_path, root, strlen(root)), "%s",
		  libc->open_path);

	cr_assert_eq(resolve1(p, "p:c/a proc_work").addr, h->work);
	cr_assert_eq(resolve1(p, "p:c/b /proc_pie:proc_work").addr, h->work);
	cr_assert_eq(resolve1(p, "p:c/c libc.so.6:getpid").addr, h->getpid);
	/* a uprobe's PATH must exist for the parser, as for the kernel */
	l = resolve1(p, "p:c/d proc_work");
	snprintf(line, sizeof(line), "p:c/e %sproc_pie:0x%" PRIx64, root,
		 l.file_offset);
	cr_assert_eq(resolve1(p, line).addr, h->work);
	dp_proc_close(p);
}

/* ---- symbolizing and the loader's breakpoint ---------------------------- */

Test(proc, symbolizer)
{
	struct helper *h = spawn(test_data("proc_pie"), NULL, NULL);
	struct dp_proc *p = proc_ok(h->pid);
	struct dp_symbolizer sz;
	struct dp_proc_sym ps;
	struct dp_elf_sym sym;
	const char *name;
	uint64_t off, size;

	cr_assert_eq(dp_proc_symbolize(p, h->work + 3, &ps), 0);
	cr_assert_str_eq(ps.name, "proc_work");
	cr_assert_eq(ps.off, 3);
	cr_assert(ps.obj->main);
	cr_assert_eq(dp_elf_lookup(ps.obj->elf, "proc_work", &sym), 0);
	cr_assert_eq(ps.size, sym.size);

	dp_proc_symbolizer(p, &sz);
	cr_assert_eq(sz.lookup(sz.priv, h->work, &name, &off, &size), 0);
	cr_assert_str_eq(name, "proc_work");
	cr_assert_eq(off, 0);
	cr_assert_eq(size, sym.size);

	/* libc: an alias of getpid, whichever name it prefers */
	cr_assert_eq(sz.lookup(sz.priv, h->getpid, &name, &off, &size), 0);
	cr_assert_eq(off, 0);
	cr_assert_null(strchr(name, '@'));
	cr_assert(strstr(name, "getpid"), "%s", name);

	cr_assert_eq(sz.lookup(sz.priv, 16, &name, &off, &size), -1);
	cr_assert_eq(dp_proc_symbolize(p, 16, &ps), -ENOENT);
	dp_proc_close(p);
}

static void check_dl_breakpoint(const char *prog)
{
	struct helper *h = spawn(test_data(prog), NULL, NULL);
	struct dp_proc *p = proc_ok(h->pid);
	const struct dp_proc_objs *s = dp_proc_objs(p);
	const struct dp_proc_obj *o;
	const struct dp_map *m;
	struct dp_proc_sym ps;
	struct r_debug rd;
	uint64_t a = 0, b = 0, rda = 0;
	char why[256] = "";

	cr_assert_eq(dp_proc_dl_breakpoint(h->pid, &a), 0);
	cr_assert_eq(dp_proc_dl_brk(p, &b, why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(a, b);
	o = dp_proc_obj_at(s, a);
	cr_assert_not_null(o);
	cr_assert(o->interp, "0x%" PRIx64 " is in %s", a, o->path);
	m = dp_maps_find(&s->maps, a);
	cr_assert(m->perms & DP_MAP_X);
	cr_assert_eq(dp_proc_symbolize(p, a, &ps), 0);
	cr_assert_str_eq(ps.name, "_dl_debug_state");
	cr_assert_eq(ps.off, 0);

	/* the same function the loader announces in r_debug.r_brk */
	cr_assert_eq(dp_proc_r_debug(p, &rda, why, sizeof(why)), 0, "%s", why);
	read_mem(h->pid, rda, &rd, sizeof(rd));
	cr_assert_eq(rd.r_brk, a);
	cr_assert_eq(rd.r_state, RT_CONSISTENT);
	dp_proc_close(p);
}

Test(proc, dl_breakpoint_pie)
{
	check_dl_breakpoint("proc_pie");
}

Test(proc, dl_breakpoint_nopie)
{
	check_dl_breakpoint("proc_nopie");
}

/*
 * Stopped at its exec, before the dynamic linker ran: only the executable
 * and the linker are mapped.  The breakpoint is known from the linker's
 * symbols already; r_debug is not set up; libc is pending.
 */
Test(proc, at_exec)
{
	const char *prog = test_data("proc_pie");
	struct helper *h = &helpers[nhelpers];
	struct dp_proc *p;
	struct dp_probe_def def;
	struct dp_proc_res res;
	struct dp_error e = { 0 };
	const char *line = "p:x/a libc.so.6:getpid";
	uint64_t a = 0, rda;
	char why[256] = "";
	int st;

	h->pid = fork();
	cr_assert_geq(h->pid, 0);
	if (!h->pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		execl(prog, prog, (char *)NULL);
		_exit(127);
	}
	h->fd = -1;
	nhelpers++;
	cr_assert_eq(waitpid(h->pid, &st, 0), h->pid);
	cr_assert(WIFSTOPPED(st) && WSTOPSIG(st) == SIGTRAP);

	p = proc_ok(h->pid);
	cr_assert_eq(dp_proc_objs(p)->n, 2);
	cr_assert_not_null(obj_by_base(dp_proc_objs(p), "ld-linux-x86-64.so.2"));
	cr_assert_eq(dp_proc_dl_brk(p, &a, why, sizeof(why)), 0, "%s", why);
	cr_assert(dp_proc_obj_at(dp_proc_objs(p), a)->interp);
	cr_assert_eq(dp_proc_r_debug(p, &rda, why, sizeof(why)), -EAGAIN);

	cr_assert(resolve1(p, "p:x/b proc_work").obj->main);
	parse_ok(line, &def);
	cr_assert_eq(dp_proc_resolve(p, line, &def, &res, &e), 0);
	cr_assert(res.pending, "libc resolved before it was loaded");
	dp_proc_res_free(&res);
	dp_probe_def_free(&def);
	dp_proc_close(p);
}

static void map_libc_as_data(void)
{
	setenv("PROC_MAP_DATA", LIBC, 1);
}

/*
 * A private writable mapping of libc's file (what a symbol reader such as
 * libelf makes, or dprobe's agent once did) is data: libc is still found
 * where the loader put it.
 */
Test(proc, data_mapping_of_a_library)
{
	struct helper *h = spawn_setup(test_data("proc_pie"), NULL, NULL,
				       map_libc_as_data);
	struct dp_proc *p = proc_ok(h->pid);

	cr_assert_eq(resolve1(p, "p:s/d libc.so.6:getpid").addr, h->getpid);
	cr_assert_eq(resolve1(p, "p:s/e " LIBC ":getpid").addr, h->getpid);
	dp_proc_close(p);
}
