// SPDX-License-Identifier: GPL-2.0
/*
 * e2e target: a probe on a library that is not loaded when tracing
 * starts.
 *
 * Usage: dl LIBPATH.  Phase 1 dlopens LIBPATH and calls dl_work(1, "one")
 * and dl_work(2, "three"), then dlcloses it (unmapped: its probes go).
 * Phase 2 dlopens it again and calls dl_work(3, "seven").  Every call goes
 * through call_it(), whose one indirect call is the return site a return
 * probe on dl_work reports.
 */
#include <dlfcn.h>
#include <stdio.h>

typedef long (*work_fn)(long, const char *);
volatile long sink;

__attribute__((noipa)) long call_it(work_fn fn, long a, const char *s)
{
	long r = fn(a, s);

	sink = r;
	return r;
}

static int phase(const char *path, const long *as, const char *const *ss,
		 int n)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	work_fn fn;

	if (!h) {
		fprintf(stderr, "dl: %s\n", dlerror());
		return -1;
	}
	fn = (work_fn)dlsym(h, "dl_work");
	if (!fn) {
		fprintf(stderr, "dl: %s\n", dlerror());
		return -1;
	}
	for (int i = 0; i < n; i++)
		printf("dl: dl_work(%ld, \"%s\") = %ld\n", as[i], ss[i],
		       call_it(fn, as[i], ss[i]));
	return dlclose(h);
}

int main(int argc, char **argv)
{
	static const long a1[] = { 1, 2 }, a2[] = { 3 };
	static const char *const s1[] = { "one", "three" }, *const s2[] = { "seven" };

	if (argc < 2) {
		fprintf(stderr, "usage: dl LIBPATH\n");
		return 2;
	}
	if (phase(argv[1], a1, s1, 2) || phase(argv[1], a2, s2, 1))
		return 1;
	return 0;
}
