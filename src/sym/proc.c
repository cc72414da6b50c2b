// SPDX-License-Identifier: GPL-2.0
/*
 * Run-time addresses in a live process.  The memory map is read from
 * /proc/PID/maps; file mappings that hold code are grouped into loaded
 * objects, each opened as an ELF file (through the definition resolver's
 * cache, so a file is read once), and its load bias is derived from the
 * mapping of its first segment.  Probe places are then checked against
 * the file exactly as at definition time, by handing dp_resolve_cb() a
 * copy of the place that names the object's file, and moved by the bias.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "lang/kstrto.h"
#include "sym/demangle.h"
#include "sym/proc.h"
#include "sym/tracepoint.h"
#include "sym/resolve.h"
#include "util/util.h"

/* What is remembered of a file across readings of the maps. */
struct file_info {
	uint64_t dev, ino;
	char *soname;
	struct file_info *next;
};

/* A NUL-terminated copy of a "name@VER" symbol's base name. */
struct interned {
	const char *orig;
	char *copy;
	struct interned *next;
};

/* Readable names of C++ symbols, by the symbol name's address. */
struct demangled_map {
	struct { const char *orig; char *copy; } *e;
	unsigned n, cap;	/* cap: a power of two */
};

struct dp_proc {
	pid_t pid;
	struct dp_resolver res;		/* opens and caches the ELF files */
	struct file_info *files;
	struct interned *names;
	struct demangled_map demangled;
	struct dp_proc_objs *cur;
	bool same_root;			/* /proc/PID/root is our "/" */
	uint64_t at_base;		/* the dynamic linker's load address */
};

/* ---- /proc/PID/maps ----------------------------------------------------- */

static int map_push(struct dp_maps *m, size_t *cap, const struct dp_map *e)
{
	struct dp_map *tmp;

	if (m->n == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		tmp = realloc(m->v, *cap * sizeof(*tmp));
		if (!tmp)
			return -ENOMEM;
		m->v = tmp;
	}
	m->v[m->n++] = *e;
	return 0;
}

/*
 * "START-END PERMS OFFSET MAJ:MIN INODE   PATH": the path is everything
 * after the blanks following the inode (it may hold blanks itself).
 */
static int parse_line(const char *s, size_t len, struct dp_map *e)
{
	static const char deleted[] = " (deleted)";
	const size_t dlen = sizeof(deleted) - 1;
	char buf[256], perms[8];
	unsigned long long start, end, off, ino;
	unsigned maj, min;
	int n = 0;
	size_t plen;

	memset(e, 0, sizeof(*e));
	snprintf(buf, sizeof(buf), "%.*s", (int)(len < 255 ? len : 255), s);
	if (sscanf(buf, "%llx-%llx %7s %llx %x:%x %llu%n", &start, &end,
		   perms, &off, &maj, &min, &ino, &n) != 7 || start > end ||
	    strlen(perms) != 4)
		return -EINVAL;
	e->start = start;
	e->end = end;
	e->offset = off;
	e->dev = makedev(maj, min);
	e->ino = ino;
	e->perms = (perms[0] == 'r' ? DP_MAP_R : 0) |
		   (perms[1] == 'w' ? DP_MAP_W : 0) |
		   (perms[2] == 'x' ? DP_MAP_X : 0) |
		   (perms[3] == 's' ? DP_MAP_SHARED : 0);
	s += n;
	len -= n;
	while (len && (*s == ' ' || *s == '\t')) {
		s++;
		len--;
	}
	plen = len;
	if (ino && plen > dlen && !memcmp(s + plen - dlen, deleted, dlen)) {
		e->deleted = true;
		plen -= dlen;
	}
	e->path = strndup(s, plen);
	return e->path ? 0 : -ENOMEM;
}

int dp_maps_parse(const char *text, size_t len, struct dp_maps *out)
{
	const char *p = text, *end = text + len, *nl;
	struct dp_map e;
	size_t cap = 0;
	int ret;

	memset(out, 0, sizeof(*out));
	while (p < end) {
		nl = memchr(p, '\n', end - p);
		if (!nl)
			nl = end;
		if (nl > p) {
			ret = parse_line(p, nl - p, &e);
			if (!ret && map_push(out, &cap, &e)) {
				free(e.path);
				ret = -ENOMEM;
			}
			if (ret) {
				dp_maps_free(out);
				return ret;
			}
		}
		p = nl + 1;
	}
	return 0;
}

void dp_maps_free(struct dp_maps *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i].path);
	free(m->v);
	memset(m, 0, sizeof(*m));
}

static ssize_t map_index(const struct dp_maps *m, uint64_t addr)
{
	size_t lo = 0, hi = m->n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (m->v[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < m->n && m->v[lo].start <= addr && addr < m->v[lo].end)
		return lo;
	return -1;
}

const struct dp_map *dp_maps_find(const struct dp_maps *m, uint64_t addr)
{
	ssize_t i = map_index(m, addr);

	return i < 0 ? NULL : &m->v[i];
}

/* The errno of a /proc file that could not be read, as the process's. */
static int proc_errno(int err)
{
	return err == ENOENT ? ESRCH : err;
}

static void proc_why(pid_t pid, int err, const char *what, char *why,
		     size_t len)
{
	if (err == ESRCH)
		dp_say(why, len, "no such process: %d", (int)pid);
	else if (err == EACCES || err == EPERM)
		dp_say(why, len, "cannot read /proc/%d/%s: %s (the process belongs "
		    "to another user, or ptrace is restricted)", (int)pid,
		    what, strerror(err));
	else
		dp_say(why, len, "cannot read /proc/%d/%s: %s", (int)pid, what,
		    strerror(err));
}

/* Whole contents of /proc/@pid/@what (NUL-terminated), or NULL + errno. */
static char *read_proc_file(pid_t pid, const char *what, size_t *len)
{
	char path[64], *buf = NULL, *tmp;
	size_t cap = 0, n = 0;
	ssize_t r;
	int fd, err;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, what);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	for (;;) {
		if (cap - n < 4096) {
			cap = cap ? 2 * cap : 16384;
			tmp = realloc(buf, cap + 1);
			if (!tmp) {
				err = ENOMEM;
				goto fail;
			}
			buf = tmp;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = errno;
			goto fail;
		}
		if (!r)
			break;
		n += r;
	}
	close(fd);
	buf[n] = '\0';
	*len = n;
	return buf;
fail:
	close(fd);
	free(buf);
	errno = err;
	return NULL;
}

int dp_maps_read(pid_t pid, struct dp_maps *out, char *why, size_t whylen)
{
	size_t len;
	char *text;
	int ret, err;

	memset(out, 0, sizeof(*out));
	if (pid <= 0) {
		dp_say(why, whylen, "invalid process id %d", (int)pid);
		return -EINVAL;
	}
	text = read_proc_file(pid, "maps", &len);
	if (!text) {
		err = proc_errno(errno);
		proc_why(pid, err, "maps", why, whylen);
		return -err;
	}
	ret = dp_maps_parse(text, len, out);
	free(text);
	if (ret)
		dp_say(why, whylen, ret == -ENOMEM ? "out of memory" :
		    "unexpected line in /proc/%d/maps", (int)pid);
	return ret;
}

/* ---- the target's memory and auxiliary vector --------------------------- */

static int mem_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

/* Value of auxv entry @type, 0 if absent or unreadable. */
static uint64_t auxv_get(pid_t pid, uint64_t type)
{
	uint64_t val = 0, *v;
	size_t len, i;
	char *buf = read_proc_file(pid, "auxv", &len);

	if (!buf)
		return 0;
	v = (uint64_t *)buf;
	for (i = 0; i + 1 < len / 8 && v[i] != AT_NULL; i += 2) {
		if (v[i] == type) {
			val = v[i + 1];
			break;
		}
	}
	free(buf);
	return val;
}

/* ---- files -------------------------------------------------------------- */

/* DT_SONAME of the ELF file at @path (opened as @elf), or NULL. */
static char *read_soname(const char *path, const struct dp_elf *elf)
{
	uint64_t strtab = 0, soname = UINT64_MAX;
	Elf64_Phdr ph;
	Elf64_Ehdr eh;
	Elf64_Dyn dyn;
	char name[256];
	ssize_t n;
	int fd, i;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    eh.e_phentsize != sizeof(ph))
		eh.e_phnum = 0;
	for (i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), eh.e_phoff + i * sizeof(ph)) !=
		    sizeof(ph))
			break;
		if (ph.p_type == PT_DYNAMIC)
			break;
	}
	close(fd);
	if (i >= eh.e_phnum || ph.p_type != PT_DYNAMIC)
		return NULL;
	/* the dynamic section lies in a loaded segment: read it by address */
	for (uint64_t a = ph.p_vaddr; a + sizeof(dyn) <= ph.p_vaddr + ph.p_filesz;
	     a += sizeof(dyn)) {
		if (dp_elf_read(elf, a, &dyn, sizeof(dyn)) != sizeof(dyn) ||
		    dyn.d_tag == DT_NULL)
			break;
		if (dyn.d_tag == DT_STRTAB)
			strtab = dyn.d_un.d_ptr;
		else if (dyn.d_tag == DT_SONAME)
			soname = dyn.d_un.d_val;
	}
	if (!strtab || soname == UINT64_MAX)
		return NULL;
	n = dp_elf_read(elf, strtab + soname, name, sizeof(name));
	if (n <= 0 || !memchr(name, '\0', n))
		return NULL;
	return strdup(name);
}

static const char *soname_of(struct dp_proc *p, uint64_t dev, uint64_t ino,
			     const char *path, const struct dp_elf *elf)
{
	struct file_info *f;

	for (f = p->files; f; f = f->next)
		if (f->dev == dev && f->ino == ino)
			return f->soname;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->dev = dev;
	f->ino = ino;
	f->soname = read_soname(path, elf);
	f->next = p->files;
	p->files = f;
	return f->soname;
}

static bool same_id(const struct stat *st, uint64_t dev, uint64_t ino)
{
	return (uint64_t)st->st_dev == dev && (uint64_t)st->st_ino == ino;
}

static int copy_path(char *out, size_t outlen, const char *src)
{
	size_t len = strlen(src);

	if (len >= outlen)
		return -ENAMETOOLONG;
	memcpy(out, src, len + 1);
	return 0;
}

/*
 * The path to open the file of mapping @m by.  The maps show paths in the
 * target's mount namespace: in a container, its own root is where they
 * start, so /proc/PID/root/PATH is tried before PATH; either must still be
 * the mapped file (same dev and ino).  Else the mapping itself, in
 * /proc/PID/map_files (a deleted or replaced file).  Returns 0 or -errno
 * with @why.
 */
static int open_path_of(const struct dp_proc *p, const struct dp_map *m,
			char *out, size_t outlen, char *why, size_t whylen)
{
	char cand[2][PATH_MAX + 64], mf[80];
	int n = 0, exists = -1, err = ENOENT;
	struct stat st;

	if (m->path[0] == '/' && !p->same_root)
		snprintf(cand[n++], sizeof(cand[0]), "/proc/%d/root%s",
			 (int)p->pid, m->path);
	if (m->path[0] == '/')
		snprintf(cand[n++], sizeof(cand[0]), "%s", m->path);
	for (int i = 0; i < n; i++) {
		if (stat(cand[i], &st)) {
			err = errno;
			continue;
		}
		if (!m->deleted && same_id(&st, m->dev, m->ino))
			return copy_path(out, outlen, cand[i]);
		if (exists < 0 && !m->deleted)
			exists = i;
	}
	snprintf(mf, sizeof(mf), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
		 (int)p->pid, m->start, m->end);
	if (!stat(mf, &st))
		return copy_path(out, outlen, mf);
	/* another file system's idea of dev/ino (overlayfs): keep the path */
	if (exists >= 0)
		return copy_path(out, outlen, cand[exists]);
	if (m->deleted) {
		err = errno;
		dp_say(why, whylen, "%s was deleted and %s cannot be read: %s",
		    m->path, mf, strerror(err));
		return -err;
	}
	dp_say(why, whylen, "%s: %s", m->path, strerror(err));
	return -err;
}

/* ---- objects ------------------------------------------------------------ */

struct objs_build {
	struct dp_proc_objs *s;
	size_t cap;
	/* per object: the address range its segments may occupy */
	uint64_t *lo, *hi;
	/* files with code mapped; bad[] marks those that are not ELF */
	uint64_t (*keys)[2];
	bool *bad;
	size_t nkeys;
};

static void obj_free_strings(struct dp_proc_obj *o)
{
	free((char *)o->open_path);
	free((char *)o->why);
}

void dp_proc_objs_free(struct dp_proc_objs *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		obj_free_strings(&s->v[i]);
	free(s->v);
	free(s->map_obj);
	dp_maps_free(&s->maps);
	free(s);
}

static ssize_t key_index(const struct objs_build *b, uint64_t dev,
			 uint64_t ino)
{
	for (size_t i = 0; i < b->nkeys; i++)
		if (b->keys[i][0] == dev && b->keys[i][1] == ino)
			return i;
	return -1;
}

/* The files of which some mapping is executable. */
static int collect_keys(struct objs_build *b)
{
	const struct dp_maps *m = &b->s->maps;

	b->keys = calloc(m->n ? m->n : 1, sizeof(*b->keys));
	b->bad = calloc(m->n ? m->n : 1, sizeof(*b->bad));
	if (!b->keys || !b->bad)
		return -ENOMEM;
	for (size_t i = 0; i < m->n; i++) {
		const struct dp_map *e = &m->v[i];

		if (!e->ino || !(e->perms & DP_MAP_X) ||
		    key_index(b, e->dev, e->ino) >= 0)
			continue;
		b->keys[b->nkeys][0] = e->dev;
		b->keys[b->nkeys][1] = e->ino;
		b->nkeys++;
	}
	return 0;
}

/*
 * The load bias, from the segment whose file bytes @m maps: the segment's
 * page-aligned start lands at m->start, i.e.
 *   bias = start - (p_vaddr - (p_offset - offset)).
 * Also the range [lo, hi) all segments of this load occupy.
 */
static void compute_bias(const struct dp_elf *elf, const struct dp_map *m,
			 uint64_t *bias, uint64_t *lo, uint64_t *hi)
{
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE), l = UINT64_MAX, h = 0;
	bool found = false;

	*bias = m->start - m->offset;
	for (size_t i = 0; i < dp_elf_nsegs(elf); i++) {
		const struct dp_elf_seg *s = dp_elf_seg(elf, i);

		if (s->vaddr < l)
			l = s->vaddr & ~(pg - 1);
		if (s->vaddr + s->memsz > h)
			h = (s->vaddr + s->memsz + pg - 1) & ~(pg - 1);
		if (found || m->offset < (s->offset & ~(pg - 1)) ||
		    m->offset >= s->offset + (s->filesz ? s->filesz : 1))
			continue;
		*bias = m->start - (s->vaddr - (s->offset - m->offset));
		found = true;
	}
	if (!dp_elf_nsegs(elf))
		l = h = 0;
	*lo = *bias + l;
	*hi = *bias + h;
}

/*
 * Whether @m maps the file as data rather than loading it: the loader
 * maps each PT_LOAD with its own protection, so a mapping that starts in
 * a segment but is writable (or executable) where the segment is not was
 * made by someone reading the file (a symbol reader's private copy, say)
 * and must not be taken for the object's load.
 */
static bool maps_as_data(const struct dp_elf *elf, const struct dp_map *m)
{
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);

	for (size_t i = 0; i < dp_elf_nsegs(elf); i++) {
		const struct dp_elf_seg *s = dp_elf_seg(elf, i);

		if (m->offset < (s->offset & ~(pg - 1)) ||
		    m->offset >= s->offset + (s->filesz ? s->filesz : 1))
			continue;
		return ((m->perms & DP_MAP_W) && !(s->flags & PF_W)) ||
		       ((m->perms & DP_MAP_X) && !(s->flags & PF_X));
	}
	return false;
}

/* Open the file of @m for a new object; -ENOEXEC for a non-ELF file. */
static int obj_open(struct dp_proc *p, const struct dp_map *m,
		    struct dp_proc_obj *o)
{
	char path[PATH_MAX + 64], why[192];
	int ret;

	ret = open_path_of(p, m, path, sizeof(path), why, sizeof(why));
	if (!ret)
		ret = dp_resolver_open(&p->res, path, &o->elf, why,
				       sizeof(why));
	if (ret == -ENOEXEC || ret == -ENOMEM)
		return ret;
	o->err = ret;
	o->why = strdup(ret ? why : "");
	if (!o->why)
		return -ENOMEM;
	if (!ret) {
		o->open_path = strdup(path);
		if (!o->open_path)
			return -ENOMEM;
		o->soname = soname_of(p, m->dev, m->ino, path, o->elf);
	}
	return 0;
}

/* Resize *@p to @n elements of @size; the old array stays on failure. */
static int grow(void *p, size_t n, size_t size)
{
	void *tmp = realloc(*(void **)p, n * size);

	if (!tmp)
		return -ENOMEM;
	*(void **)p = tmp;
	return 0;
}

static int obj_new(struct dp_proc *p, struct objs_build *b, size_t mi)
{
	const struct dp_map *m = &b->s->maps.v[mi];
	struct dp_proc_obj *o;
	int ret;

	if (b->s->n == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 32;
		if (grow(&b->s->v, b->cap, sizeof(*b->s->v)) ||
		    grow(&b->lo, b->cap, sizeof(*b->lo)) ||
		    grow(&b->hi, b->cap, sizeof(*b->hi)))
			return -ENOMEM;
	}
	o = &b->s->v[b->s->n];
	memset(o, 0, sizeof(*o));
	o->dev = m->dev;
	o->ino = m->ino;
	o->path = m->path;
	o->deleted = m->deleted;
	o->start = m->start;
	o->end = m->end;
	ret = obj_open(p, m, o);
	if (ret) {
		obj_free_strings(o);
		return ret;
	}
	if (o->elf && maps_as_data(o->elf, m)) {
		obj_free_strings(o);
		return -EAGAIN;
	}
	if (o->elf) {
		compute_bias(o->elf, m, &o->bias, &b->lo[b->s->n],
			     &b->hi[b->s->n]);
	} else {
		o->bias = m->start - m->offset;
		b->lo[b->s->n] = 0;
		b->hi[b->s->n] = UINT64_MAX;	/* takes every later mapping */
	}
	b->s->map_obj[mi] = b->s->n++;
	return 0;
}

/* The object of the same file whose load covers mapping @m, or -1. */
static ssize_t obj_covering(const struct objs_build *b, const struct dp_map *m)
{
	for (size_t i = b->s->n; i-- > 0;) {
		const struct dp_proc_obj *o = &b->s->v[i];

		if (o->dev == m->dev && o->ino == m->ino &&
		    m->start >= b->lo[i] && m->start < b->hi[i])
			return i;
	}
	return -1;
}

/* Group the file mappings of @b->s->maps into objects. */
static int group_objects(struct dp_proc *p, struct objs_build *b)
{
	struct dp_proc_objs *s = b->s;
	ssize_t k, oi;
	int ret;

	for (size_t i = 0; i < s->maps.n; i++) {
		const struct dp_map *m = &s->maps.v[i];

		s->map_obj[i] = SIZE_MAX;
		k = m->ino ? key_index(b, m->dev, m->ino) : -1;
		if (k < 0 || b->bad[k])
			continue;
		oi = obj_covering(b, m);
		if (oi >= 0) {
			s->map_obj[i] = oi;
			if (m->end > s->v[oi].end)
				s->v[oi].end = m->end;
			continue;
		}
		ret = obj_new(p, b, i);
		if (ret == -ENOEXEC)
			b->bad[k] = true;	/* mapped data, not an object */
		else if (ret && ret != -EAGAIN)	/* -EAGAIN: this mapping */
			return ret;
	}
	return 0;
}

/*
 * The main executable: the object that is /proc/PID/exe, by identity, or
 * by path where a stacking file system reports other numbers in stat().
 */
static void mark_main(struct dp_proc *p, struct dp_proc_objs *s)
{
	char exe[64], path[PATH_MAX];
	struct stat st;
	ssize_t n;
	size_t i;

	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)p->pid);
	if (!stat(exe, &st)) {
		for (i = 0; i < s->n; i++) {
			if (same_id(&st, s->v[i].dev, s->v[i].ino)) {
				s->v[i].main = true;
				return;
			}
		}
	}
	n = readlink(exe, path, sizeof(path) - 1);
	if (n <= 0)
		return;
	path[n] = '\0';
	for (i = 0; i < s->n; i++) {
		if (!strcmp(s->v[i].path, path)) {
			s->v[i].main = true;
			return;
		}
	}
}

/* Flag the main executable and the dynamic linker. */
static void mark_objects(struct dp_proc *p, struct dp_proc_objs *s)
{
	ssize_t mi;

	mark_main(p, s);
	mi = p->at_base ? map_index(&s->maps, p->at_base) : -1;
	if (mi >= 0 && s->map_obj[mi] != SIZE_MAX)
		s->v[s->map_obj[mi]].interp = true;
}

static void check_root(struct dp_proc *p)
{
	char root[64];
	struct stat a, b;

	snprintf(root, sizeof(root), "/proc/%d/root", (int)p->pid);
	/* unreadable: paths are taken as ours, checked by dev/ino anyway */
	p->same_root = stat(root, &a) || stat("/", &b) ||
		       (a.st_dev == b.st_dev && a.st_ino == b.st_ino);
}

static int snapshot(struct dp_proc *p, struct dp_proc_objs **out, char *why,
		    size_t whylen)
{
	struct objs_build b = { 0 };
	int ret;

	*out = NULL;
	b.s = calloc(1, sizeof(*b.s));
	if (!b.s)
		goto nomem;
	ret = dp_maps_read(p->pid, &b.s->maps, why, whylen);
	if (ret)
		goto fail;
	/* an exec changes all of these */
	check_root(p);
	p->at_base = auxv_get(p->pid, AT_BASE);
	b.s->map_obj = malloc((b.s->maps.n ? b.s->maps.n : 1) * sizeof(size_t));
	if (!b.s->map_obj || collect_keys(&b))
		goto nomem;
	ret = group_objects(p, &b);
	if (ret == -ENOMEM)
		goto nomem;
	mark_objects(p, b.s);
	free(b.lo);
	free(b.hi);
	free(b.keys);
	free(b.bad);
	*out = b.s;
	return 0;
nomem:
	ret = -ENOMEM;
	dp_say(why, whylen, "out of memory");
fail:
	free(b.lo);
	free(b.hi);
	free(b.keys);
	free(b.bad);
	dp_proc_objs_free(b.s);
	return ret;
}

int dp_proc_open(pid_t pid, struct dp_proc **out, char *why, size_t whylen)
{
	struct dp_proc *p;
	int ret;

	*out = NULL;
	if (pid <= 0) {
		dp_say(why, whylen, "invalid process id %d", (int)pid);
		return -EINVAL;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		dp_say(why, whylen, "out of memory");
		return -ENOMEM;
	}
	p->pid = pid;
	dp_resolver_init(&p->res, NULL, false);
	ret = snapshot(p, &p->cur, why, whylen);
	if (ret) {
		dp_proc_close(p);
		return ret;
	}
	*out = p;
	return 0;
}

void dp_proc_close(struct dp_proc *p)
{
	struct file_info *f, *fn;
	struct interned *s, *sn;

	if (!p)
		return;
	dp_proc_objs_free(p->cur);
	for (f = p->files; f; f = fn) {
		fn = f->next;
		free(f->soname);
		free(f);
	}
	for (s = p->names; s; s = sn) {
		sn = s->next;
		free(s->copy);
		free(s);
	}
	for (unsigned i = 0; i < p->demangled.cap; i++)
		free(p->demangled.e[i].copy);
	free(p->demangled.e);
	dp_resolver_free(&p->res);
	free(p);
}

pid_t dp_proc_pid(const struct dp_proc *p)
{
	return p->pid;
}

const struct dp_proc_objs *dp_proc_objs(const struct dp_proc *p)
{
	return p->cur;
}

int dp_proc_refresh(struct dp_proc *p, struct dp_proc_objs **old, char *why,
		    size_t whylen)
{
	struct dp_proc_objs *s;
	int ret = snapshot(p, &s, why, whylen);

	if (ret)
		return ret;
	if (old)
		*old = p->cur;
	else
		dp_proc_objs_free(p->cur);
	p->cur = s;
	return 0;
}

const struct dp_proc_obj *dp_proc_obj_at(const struct dp_proc_objs *s,
					 uint64_t addr)
{
	ssize_t mi = map_index(&s->maps, addr);

	if (mi < 0 || s->map_obj[mi] == SIZE_MAX)
		return NULL;
	return &s->v[s->map_obj[mi]];
}

const struct dp_proc_obj *dp_proc_main(const struct dp_proc_objs *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].main)
			return &s->v[i];
	return NULL;
}

static bool same_obj(const struct dp_proc_obj *a, const struct dp_proc_obj *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->bias == b->bias;
}

/* Objects of @a not in @b, into a malloc'd array. */
static int objs_minus(const struct dp_proc_objs *a,
		      const struct dp_proc_objs *b,
		      const struct dp_proc_obj ***out, size_t *n)
{
	size_t i, j;

	*n = 0;
	*out = malloc((a->n ? a->n : 1) * sizeof(**out));
	if (!*out)
		return -ENOMEM;
	for (i = 0; i < a->n; i++) {
		for (j = 0; j < b->n && !same_obj(&a->v[i], &b->v[j]); j++)
			;
		if (j == b->n)
			(*out)[(*n)++] = &a->v[i];
	}
	return 0;
}

int dp_proc_objs_diff(const struct dp_proc_objs *old,
		      const struct dp_proc_objs *new, struct dp_proc_diff *d)
{
	memset(d, 0, sizeof(*d));
	if (objs_minus(new, old, &d->added, &d->nadded) ||
	    objs_minus(old, new, &d->removed, &d->nremoved)) {
		dp_proc_diff_free(d);
		return -ENOMEM;
	}
	return 0;
}

void dp_proc_diff_free(struct dp_proc_diff *d)
{
	free(d->added);
	free(d->removed);
	memset(d, 0, sizeof(*d));
}

int dp_proc_obj_off_to_addr(const struct dp_proc_objs *s,
			    const struct dp_proc_obj *o, uint64_t off,
			    bool writable, uint64_t *addr)
{
	unsigned want = writable ? DP_MAP_W : DP_MAP_X;
	uintptr_t base = (uintptr_t)s->v, at = (uintptr_t)o;
	size_t oi, i;

	/* @o must be one of @s's objects */
	if (at < base || at >= base + s->n * sizeof(*o))
		return -EINVAL;
	oi = (at - base) / sizeof(*o);
	for (i = 0; i < s->maps.n; i++) {
		const struct dp_map *m = &s->maps.v[i];

		if (s->map_obj[i] != oi || !(m->perms & want) ||
		    off < m->offset || off - m->offset >= m->end - m->start)
			continue;
		*addr = m->start + (off - m->offset);
		return 0;
	}
	return -ENOENT;
}

/* ---- which objects a place names ---------------------------------------- */

/* Identities a path given by the user may have: here, and in the target. */
struct path_ids {
	struct stat st[2];
	int n;
};

static void path_ids(const struct dp_proc *p, const char *path,
		     struct path_ids *ids)
{
	char buf[PATH_MAX + 64];

	ids->n = 0;
	if (!stat(path, &ids->st[0]))
		ids->n++;
	if (!p->same_root && path[0] == '/') {
		snprintf(buf, sizeof(buf), "/proc/%d/root%s", (int)p->pid, path);
		if (!stat(buf, &ids->st[ids->n]))
			ids->n++;
	}
}

/* Whether @o is the object @mod names (NULL: the main executable). */
static bool obj_named(const struct dp_proc_obj *o, const char *mod,
		      const struct path_ids *ids)
{
	if (!mod)
		return o->main;
	if (strchr(mod, '/')) {
		for (int i = 0; i < ids->n; i++)
			if (same_id(&ids->st[i], o->dev, o->ino))
				return true;
		/* a deleted file is still known by its old path */
		return !strcmp(o->path, mod);
	}
	return !strcmp(dp_base_name(o->path), mod) ||
	       (o->soname && !strcmp(o->soname, mod));
}

/* The module a definition names: a uprobe's PATH, or MOD (NULL: main). */
static const char *def_module(const struct dp_probe_def *def)
{
	return def->kind == DP_KIND_UPROBE ? def->place.path :
	       def->place.module;
}

bool dp_proc_names_obj(struct dp_proc *p, const struct dp_probe_def *def,
		       const struct dp_proc_obj *o)
{
	const char *mod = def_module(def);
	struct path_ids ids = { .n = 0 };

	struct dp_tp_desc d;

	if (def->kind == DP_KIND_TRACEPOINT)
		return o->elf && !dp_elf_tracepoint(o->elf, def->place.module,
						    def->place.symbol, &d);
	if (def->kind == DP_KIND_KPROBE && !def->place.symbol)
		return def->place.addr >= o->start && def->place.addr < o->end;
	if (mod && strchr(mod, '/'))
		path_ids(p, mod, &ids);
	return obj_named(o, mod, &ids);
}

/*
 * Indices of the objects @mod names, into a malloc'd *@idx.  Returns the
 * count; -ENOTUNIQ when they are different files (with @why naming
 * them); -ENOMEM.
 */
static ssize_t named_objects(struct dp_proc *p, const char *mod, size_t **idx,
			     char *why, size_t whylen)
{
	const struct dp_proc_objs *s = p->cur;
	struct path_ids ids = { .n = 0 };
	size_t n = 0, i, o;
	bool multi = false;

	*idx = malloc((s->n ? s->n : 1) * sizeof(**idx));
	if (!*idx)
		return -ENOMEM;
	if (mod && strchr(mod, '/'))
		path_ids(p, mod, &ids);
	for (i = 0; i < s->n; i++) {
		if (!obj_named(&s->v[i], mod, &ids))
			continue;
		if (n && (s->v[i].dev != s->v[(*idx)[0]].dev ||
			  s->v[i].ino != s->v[(*idx)[0]].ino))
			multi = true;
		(*idx)[n++] = i;
	}
	if (!multi)
		return n;
	o = snprintf(why, whylen, "%s names %zu different objects:", mod, n);
	for (i = 0; i < n && o < whylen; i++)
		o += snprintf(why + o, whylen - o, "%s %s", i ? "," : "",
			      s->v[(*idx)[i]].path);
	if (o < whylen)
		snprintf(why + o, whylen - o, "; give a path");
	free(*idx);
	*idx = NULL;
	return -ENOTUNIQ;
}

/* ---- resolving places --------------------------------------------------- */

#define fail(err, line, code, errnum, ...) \
	dp_error_detail(err, line, code, errnum, 1, 0, __VA_ARGS__)

static int obj_unreadable(const struct dp_proc_obj *o, const char *line,
			  struct dp_error *err)
{
	return fail(err, line, DP_ERR_FILE_NOT_FOUND, -o->err, "%s: %s",
		    o->path, o->why);
}

static int res_push(struct dp_proc_res *res, const struct dp_proc_loc *l)
{
	struct dp_proc_loc *tmp = realloc(res->loc, (res->n + 1) * sizeof(*tmp));

	if (!tmp)
		return -ENOMEM;
	res->loc = tmp;
	res->loc[res->n++] = *l;
	return 0;
}

void dp_proc_res_free(struct dp_proc_res *res)
{
	free(res->loc);
	memset(res, 0, sizeof(*res));
}

/*
 * Check file offset @off of @o as a uprobe place on its file (an
 * executable segment, an instruction boundary) and fill @l.
 */
static int check_offset(struct dp_proc *p, const struct dp_proc_obj *o,
			const char *line, const struct dp_probe_def *def,
			uint64_t off, struct dp_proc_loc *l,
			struct dp_error *err)
{
	struct dp_probe_def tmp = *def;
	struct dp_probe probe = { 0 };
	int ret;

	if (!o->elf)
		return obj_unreadable(o, line, err);
	tmp.kind = DP_KIND_UPROBE;
	tmp.place.path = (char *)o->open_path;
	tmp.place.offset = off;
	tmp.nargs = 0;
	tmp.args = NULL;
	ret = dp_resolve_cb(&p->res, line, &tmp, &probe, err);
	if (ret)
		return ret;
	if (dp_proc_obj_off_to_addr(p->cur, o, off, false, &l->addr))
		return fail(err, line, DP_ERR_FAIL_REG_PROBE, EFAULT,
			    "offset 0x%" PRIx64 " of %s is not mapped in "
			    "process %d", off, o->path, (int)p->pid);
	l->obj = o;
	l->vaddr = probe.vaddr;
	l->file_offset = off;
	return 0;
}

/*
 * A uprobe's reference counter: an unsigned short, aligned as the kernel
 * requires (__uprobe_register() refuses an odd offset with EINVAL), both
 * bytes in a writable mapping of the object.
 */
static int ref_ctr_addr(struct dp_proc *p, const struct dp_proc_obj *o,
			const char *line, const struct dp_probe_def *def,
			struct dp_proc_loc *l, struct dp_error *err)
{
	uint64_t off = def->place.ref_ctr, second;

	if (!off)
		return 0;
	if (off & 1)
		return fail(err, line, DP_ERR_BAD_REFCNT, EINVAL,
			    "reference counter offset 0x%" PRIx64 " is odd: a "
			    "counter is a 2-byte aligned unsigned short", off);
	if (dp_proc_obj_off_to_addr(p->cur, o, off, true, &l->ref_ctr_addr) ||
	    dp_proc_obj_off_to_addr(p->cur, o, off + 1, true, &second) ||
	    second != l->ref_ctr_addr + 1)
		return fail(err, line, DP_ERR_BAD_REFCNT, EINVAL,
			    "reference counter offset 0x%" PRIx64
			    " is not in a writable mapping of %s", off, o->path);
	return 0;
}

static int resolve_uprobe(struct dp_proc *p, const char *line,
			  const struct dp_probe_def *def, const size_t *idx,
			  size_t n, struct dp_proc_res *res,
			  struct dp_error *err)
{
	const struct dp_proc_obj *o;
	struct dp_proc_loc l;
	int ret;

	for (size_t i = 0; i < n; i++) {
		o = &p->cur->v[idx[i]];
		memset(&l, 0, sizeof(l));
		ret = check_offset(p, o, line, def, def->place.offset, &l, err);
		if (ret)
			return ret;
		ret = ref_ctr_addr(p, o, line, def, &l, err);
		if (ret)
			return ret;
		if (res_push(res, &l))
			return -ENOMEM;
	}
	return 0;
}

/* "[MOD:]SYM+offs" in one object, through the definition-time checks. */
static int resolve_symbol(struct dp_proc *p, const struct dp_proc_obj *o,
			  const char *line, const struct dp_probe_def *def,
			  struct dp_proc_loc *l, struct dp_error *err)
{
	struct dp_probe_def tmp = *def;
	struct dp_probe probe = { 0 };
	const struct dp_map *m;
	int ret;

	if (!o->elf)
		return obj_unreadable(o, line, err);
	tmp.place.module = (char *)o->open_path;
	tmp.nargs = 0;
	tmp.args = NULL;
	ret = dp_resolve_cb(&p->res, line, &tmp, &probe, err);
	/* as the kernel when it registers: an unknown symbol is ENOENT */
	if (ret && dp_elf_lookup(o->elf, def->place.symbol, NULL) == -ENOENT) {
		if (err)
			err->err = ENOENT;
		return -ENOENT;
	}
	if (ret)
		return ret;
	l->obj = o;
	l->vaddr = probe.vaddr;
	l->file_offset = probe.file_offset;
	l->addr = probe.vaddr + o->bias;
	m = dp_maps_find(&p->cur->maps, l->addr);
	if (!m || !(m->perms & DP_MAP_X) || m->ino != o->ino)
		return fail(err, line, DP_ERR_FAIL_REG_PROBE, EFAULT,
			    "%s (0x%" PRIx64 ") is not in mapped code of %s in "
			    "process %d", def->place.symbol, l->addr, o->path,
			    (int)p->pid);
	return 0;
}

/* A symbol place in each load of the file MOD names. */
static int resolve_symbols(struct dp_proc *p, const char *line,
			   const struct dp_probe_def *def, const size_t *idx,
			   size_t n, struct dp_proc_res *res,
			   struct dp_error *err)
{
	struct dp_proc_loc l;
	int ret;

	for (size_t i = 0; i < n; i++) {
		memset(&l, 0, sizeof(l));
		ret = resolve_symbol(p, &p->cur->v[idx[i]], line, def, &l, err);
		if (ret)
			return ret;
		if (res_push(res, &l))
			return -ENOMEM;
	}
	return 0;
}

/* MEMADDR: a run-time address in an object's code. */
static int resolve_addr(struct dp_proc *p, const char *line,
			const struct dp_probe_def *def,
			struct dp_proc_res *res, struct dp_error *err)
{
	uint64_t addr = def->place.addr;
	const struct dp_map *m = dp_maps_find(&p->cur->maps, addr);
	const struct dp_proc_obj *o = dp_proc_obj_at(p->cur, addr);
	struct dp_proc_loc l = { 0 };
	struct path_ids ids = { .n = 0 };
	int ret;

	if (!m || !o || !(m->perms & DP_MAP_X))
		return fail(err, line, DP_ERR_BAD_PROBE_ADDR, EINVAL,
			    "0x%" PRIx64 " is not in the code of an object "
			    "mapped in process %d", addr, (int)p->pid);
	if (def->place.module) {
		if (strchr(def->place.module, '/'))
			path_ids(p, def->place.module, &ids);
		if (!obj_named(o, def->place.module, &ids))
			return fail(err, line, DP_ERR_BAD_PROBE_ADDR, EINVAL,
				    "0x%" PRIx64 " is in %s, not in %s", addr,
				    o->path, def->place.module);
	}
	ret = check_offset(p, o, line, def, addr - m->start + m->offset, &l,
			   err);
	if (ret)
		return ret;
	l.addr = addr;
	return res_push(res, &l) ? -ENOMEM : 0;
}

/* Nothing named: pending, or an error if it can never appear. */
static int not_mapped(struct dp_proc *p, const char *line,
		      const struct dp_probe_def *def, struct dp_proc_res *res,
		      struct dp_error *err)
{
	const char *mod = def_module(def);
	struct path_ids ids;

	if (!mod)
		return fail(err, line, DP_ERR_FAIL_REG_PROBE, ESRCH,
			    "process %d has no main executable mapped",
			    (int)p->pid);
	if (strchr(mod, '/')) {
		path_ids(p, mod, &ids);
		if (!ids.n)
			return fail(err, line, DP_ERR_FILE_NOT_FOUND, ENOENT,
				    "%s: %s", mod, strerror(ENOENT));
	}
	res->pending = true;
	dp_say(res->why, sizeof(res->why), "%s is not mapped in process %d; "
	    "the probe is armed when it is loaded", mod, (int)p->pid);
	return 0;
}

/*
 * An application tracepoint: its struct in every object that defines it
 * (tracepoints are per object), at the run-time address of its file
 * offset in the object's data.  None anywhere is the kernel's
 * NO_TRACEPOINT.
 */
static int resolve_tracepoint(struct dp_proc *p, const char *line,
			      const struct dp_probe_def *def,
			      struct dp_proc_res *res, struct dp_error *err)
{
	const char *grp = def->place.module;
	struct dp_proc_loc l;
	struct dp_tp_desc d, first;

	for (size_t i = 0; i < p->cur->n; i++) {
		const struct dp_proc_obj *o = &p->cur->v[i];

		if (!o->elf ||
		    dp_elf_tracepoint(o->elf, grp, def->place.symbol, &d))
			continue;
		/* one event, one record layout: the same fields everywhere */
		if (!res->n)
			first = d;
		else if (!dp_tp_same_fields(&first, &d))
			return fail(err, line, DP_ERR_NO_TRACEPOINT, EINVAL,
				    "tracepoint %s:%s of %s has other fields "
				    "than the one of %s", d.group, d.name,
				    o->path, res->loc[0].obj->path);
		memset(&l, 0, sizeof(l));
		l.obj = o;
		l.vaddr = d.vaddr;
		l.file_offset = d.file_offset;
		if (dp_proc_obj_off_to_addr(p->cur, o, d.file_offset, true,
					    &l.addr))
			return fail(err, line, DP_ERR_FAIL_REG_PROBE, EFAULT,
				    "tracepoint %s:%s of %s is not in a "
				    "writable mapping", d.group, d.name,
				    o->path);
		if (res_push(res, &l))
			return -ENOMEM;
	}
	if (res->n)
		return 0;
	return fail(err, line, DP_ERR_NO_TRACEPOINT, ENOENT,
		    "no object of process %d has tracepoint %s%s%s",
		    (int)p->pid, grp ? grp : "", grp ? ":" : "",
		    def->place.symbol);
}

static int resolve_in(struct dp_proc *p, const char *line,
		      const struct dp_probe_def *def, struct dp_proc_res *res,
		      struct dp_error *err)
{
	char why[sizeof(err->detail)];
	size_t *idx;
	ssize_t n;
	int ret = 0;

	if (def->kind == DP_KIND_TRACEPOINT)
		return resolve_tracepoint(p, line, def, res, err);
	if (def->kind == DP_KIND_KPROBE && !def->place.symbol)
		return resolve_addr(p, line, def, res, err);
	n = named_objects(p, def_module(def), &idx, why, sizeof(why));
	if (n == -ENOTUNIQ)
		return fail(err, line, DP_ERR_NON_UNIQ_SYMBOL, EINVAL, "%s",
			    why);
	if (n < 0)
		return n;
	if (!n)
		ret = not_mapped(p, line, def, res, err);
	else if (def->kind == DP_KIND_UPROBE)
		ret = resolve_uprobe(p, line, def, idx, n, res, err);
	else
		ret = resolve_symbols(p, line, def, idx, n, res, err);
	free(idx);
	return ret;
}

int dp_proc_resolve(struct dp_proc *p, const char *line,
		    const struct dp_probe_def *def, struct dp_proc_res *res,
		    struct dp_error *err)
{
	char *canon = NULL;
	int ret;

	memset(res, 0, sizeof(*res));
	if (!line)
		line = canon = dp_probe_canonical(def);
	if (!line)
		return -ENOMEM;
	ret = resolve_in(p, line, def, res, err);
	if (ret)
		dp_proc_res_free(res);
	free(canon);
	return ret;
}

int dp_proc_sym_addr(struct dp_proc *p, const char *text, uint64_t *addr,
		     char *why, size_t whylen)
{
	char buf[DP_MAX_ARGSTR_LEN + 2], *name = buf, *colon, *pm;
	const char *mod = NULL;
	const struct dp_elf_sym *first;
	const struct dp_proc_obj *o;
	struct dp_elf_sym sym;
	int64_t off = 0;
	size_t *idx;
	ssize_t n;
	int ret;

	snprintf(buf, sizeof(buf), "%s", text);
	colon = strrchr(buf, ':');
	if (colon) {
		*colon = '\0';
		mod = buf;
		name = colon + 1;
	}
	pm = strpbrk(name, "+-");
	if (pm) {
		if (dp_kstrtoll(pm, 0, &off)) {
			dp_say(why, whylen, "%s: bad offset", text);
			return -EINVAL;
		}
		*pm = '\0';
	}
	n = named_objects(p, mod, &idx, why, whylen);
	if (n < 0)
		return n;
	if (!n) {
		free(idx);
		dp_say(why, whylen, "%s is not mapped in process %d",
		    mod ? mod : "the main executable", (int)p->pid);
		return -ENOENT;
	}
	o = &p->cur->v[idx[0]];
	free(idx);
	if (!o->elf) {
		dp_say(why, whylen, "%s: %s", o->path, o->why);
		return o->err;
	}
	ret = dp_elf_lookup(o->elf, name, &sym);
	/* kallsyms_lookup_name() takes the first of several */
	if (ret == -ENOTUNIQ && dp_elf_lookup_all(o->elf, name, &first, 1)) {
		sym = *first;
		ret = 0;
	}
	if (ret) {
		dp_say(why, whylen, "%s: no symbol %s", o->path, name);
		return -ENOENT;
	}
	*addr = sym.value + (uint64_t)off + o->bias;
	return 0;
}

/* ---- symbolizing -------------------------------------------------------- */

/* @s's name without "@VER", NUL-terminated. */
/* A C++ or Rust symbol's readable name, made once per symbol. */
static const char *demangled(struct dp_proc *p, const struct dp_elf_sym *s)
{
	struct demangled_map *m = &p->demangled;
	unsigned h;
	char *d;

	if (m->n * 2 >= m->cap) {
		struct demangled_map old = *m;
		unsigned cap = m->cap ? m->cap * 2 : 256;

		m->e = calloc(cap, sizeof(*m->e));
		if (!m->e) {
			*m = old;
			return s->name;
		}
		m->cap = cap;
		m->n = 0;
		for (unsigned i = 0; i < old.cap; i++) {
			if (!old.e[i].orig)
				continue;
			h = (unsigned)(((uintptr_t)old.e[i].orig >> 3) *
				       2654435761u) & (cap - 1);
			while (m->e[h].orig)
				h = (h + 1) & (cap - 1);
			m->e[h] = old.e[i];
			m->n++;
		}
		free(old.e);
	}
	h = (unsigned)(((uintptr_t)s->name >> 3) * 2654435761u) & (m->cap - 1);
	while (m->e[h].orig && m->e[h].orig != s->name)
		h = (h + 1) & (m->cap - 1);
	if (m->e[h].orig)
		return m->e[h].copy;
	d = dp_demangle(s->name, false);
	if (!d)
		return s->name;
	m->e[h].orig = s->name;
	m->e[h].copy = d;
	m->n++;
	return d;
}

static const char *sym_base_name(struct dp_proc *p, const struct dp_elf_sym *s)
{
	struct interned *i;

	if (dp_demangle_on && s->name[0] == '_' && s->name[1] == 'Z')
		return demangled(p, s);
	if (!s->name[s->base_len])
		return s->name;
	for (i = p->names; i; i = i->next)
		if (i->orig == s->name)
			return i->copy;
	i = calloc(1, sizeof(*i));
	if (!i)
		return s->name;
	i->copy = strndup(s->name, s->base_len);
	if (!i->copy) {
		free(i);
		return s->name;
	}
	i->orig = s->name;
	i->next = p->names;
	p->names = i;
	return i->copy;
}

int dp_proc_symbolize(struct dp_proc *p, uint64_t addr,
		      struct dp_proc_sym *out)
{
	return dp_proc_symbolize_in(p, p->cur, addr, out);
}

int dp_proc_symbolize_in(struct dp_proc *p, const struct dp_proc_objs *objs,
			 uint64_t addr, struct dp_proc_sym *out)
{
	const struct dp_proc_obj *o = dp_proc_obj_at(objs, addr);
	const struct dp_elf_sym *s;

	memset(out, 0, sizeof(*out));
	if (!o)
		return -ENOENT;
	out->obj = o;
	if (!o->elf)
		return 0;
	s = dp_elf_sym_at(o->elf, addr - o->bias, &out->off);
	if (s) {
		out->name = sym_base_name(p, s);
		out->size = s->size;
		out->ifunc = s->type == STT_GNU_IFUNC;
	}
	return 0;
}

static int symbolizer_lookup(void *priv, uint64_t addr, const char **sym,
			     uint64_t *off, uint64_t *size)
{
	struct dp_proc_sym ps;

	if (dp_proc_symbolize(priv, addr, &ps) || !ps.name)
		return -1;
	*sym = ps.name;
	*off = ps.off;
	*size = ps.size;
	return 0;
}

void dp_proc_symbolizer(struct dp_proc *p, struct dp_symbolizer *s)
{
	s->lookup = symbolizer_lookup;
	s->priv = p;
}

/* ---- the dynamic linker's rendezvous ------------------------------------ */

/* The main executable's dynamic section, from its program headers. */
static int dynamic_addr(struct dp_proc *p, uint64_t *dyn, uint64_t *count,
			char *why, size_t whylen)
{
	uint64_t phdr = auxv_get(p->pid, AT_PHDR);
	uint64_t phnum = auxv_get(p->pid, AT_PHNUM), bias = 0;
	const struct dp_proc_obj *m = dp_proc_main(p->cur);
	Elf64_Phdr ph[64];
	bool have_bias = false;
	int ret;

	if (!phdr || !phnum) {
		dp_say(why, whylen, "no program headers in the auxiliary vector "
		    "of process %d", (int)p->pid);
		return -ENOENT;
	}
	if (phnum > 64)
		phnum = 64;
	ret = mem_read(p->pid, phdr, ph, phnum * sizeof(ph[0]));
	if (ret) {
		dp_say(why, whylen, "cannot read the program headers of process "
		    "%d: %s", (int)p->pid, strerror(-ret));
		return ret;
	}
	for (uint64_t i = 0; i < phnum; i++) {
		if (ph[i].p_type == PT_PHDR) {
			bias = phdr - ph[i].p_vaddr;
			have_bias = true;
		}
	}
	if (!have_bias && m) {
		bias = m->bias;
		have_bias = true;
	}
	for (uint64_t i = 0; i < phnum && have_bias; i++) {
		if (ph[i].p_type == PT_DYNAMIC) {
			*dyn = bias + ph[i].p_vaddr;
			*count = ph[i].p_memsz / sizeof(Elf64_Dyn);
			return 0;
		}
	}
	dp_say(why, whylen, "the executable of process %d has no dynamic section "
	    "(statically linked)", (int)p->pid);
	return -ENOENT;
}

int dp_proc_r_debug(struct dp_proc *p, uint64_t *addr, char *why,
		    size_t whylen)
{
	uint64_t dyn, count, i;
	Elf64_Dyn d;
	int ret;

	ret = dynamic_addr(p, &dyn, &count, why, whylen);
	if (ret)
		return ret;
	for (i = 0; i < count && i < 4096; i++) {
		ret = mem_read(p->pid, dyn + i * sizeof(d), &d, sizeof(d));
		if (ret) {
			dp_say(why, whylen, "cannot read the dynamic section of "
			    "process %d: %s", (int)p->pid, strerror(-ret));
			return ret;
		}
		if (d.d_tag == DT_NULL)
			break;
		if (d.d_tag != DT_DEBUG)
			continue;
		if (!d.d_un.d_ptr) {
			dp_say(why, whylen, "the dynamic linker of process %d "
			    "has not started yet", (int)p->pid);
			return -EAGAIN;
		}
		*addr = d.d_un.d_ptr;
		return 0;
	}
	dp_say(why, whylen, "the executable of process %d has no DT_DEBUG entry",
	    (int)p->pid);
	return -ENOENT;
}

static bool is_code(const struct dp_proc *p, uint64_t addr)
{
	const struct dp_map *m = dp_maps_find(&p->cur->maps, addr);

	return m && (m->perms & DP_MAP_X);
}

/* _dl_debug_state in the dynamic linker, or in a static executable. */
static int dl_symbol(struct dp_proc *p, uint64_t *addr)
{
	const struct dp_proc_objs *s = p->cur;
	struct dp_elf_sym sym;

	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < s->n; i++) {
			const struct dp_proc_obj *o = &s->v[i];

			if (!o->elf || !(pass ? o->main : o->interp))
				continue;
			if (dp_elf_lookup(o->elf, "_dl_debug_state", &sym) ||
			    sym.type == STT_OBJECT)
				continue;
			*addr = sym.value + o->bias;
			if (is_code(p, *addr))
				return 0;
		}
	}
	return -ENOENT;
}

int dp_proc_dl_brk(struct dp_proc *p, uint64_t *addr, char *why,
		   size_t whylen)
{
	struct r_debug rd;
	uint64_t rda;
	int ret;

	if (!dl_symbol(p, addr))
		return 0;
	ret = dp_proc_r_debug(p, &rda, why, whylen);
	if (ret)
		return ret;
	ret = mem_read(p->pid, rda, &rd, sizeof(rd));
	if (ret) {
		dp_say(why, whylen, "cannot read r_debug in process %d: %s",
		    (int)p->pid, strerror(-ret));
		return ret;
	}
	if (!rd.r_brk || !is_code(p, rd.r_brk)) {
		dp_say(why, whylen, "r_debug.r_brk of process %d is not set to "
		    "code (0x%" PRIx64 ")", (int)p->pid, (uint64_t)rd.r_brk);
		return -EAGAIN;
	}
	*addr = rd.r_brk;
	return 0;
}

int dp_proc_dl_breakpoint(pid_t pid, uint64_t *addr)
{
	struct dp_proc *p;
	int ret;

	ret = dp_proc_open(pid, &p, NULL, 0);
	if (ret)
		return ret;
	ret = dp_proc_dl_brk(p, addr, NULL, 0);
	dp_proc_close(p);
	return ret;
}
