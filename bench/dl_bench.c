// SPDX-License-Identifier: GPL-2.0
/*
 * Benchmark target: a library loaded, called once and unloaded, M times.
 *
 *   dl_bench LIB M     prints "<ns for the M cycles> <M>"
 *
 * With dprobe tracing a probe on the library's dlwork() (pending until
 * the library is loaded), each dlopen() returns only once the probe is
 * armed and each dlclose() once it is dropped (the agent engine's
 * dlwatch.c): (traced - untraced) / M is the cost of arming and
 * dropping a probe on a library, the time from dlopen() to armed
 * included.  Built with -DBENCH_DL_LIB, the file is that library.
 */
#ifdef BENCH_DL_LIB
__attribute__((noipa)) long dlwork(long a)
{
	return a * 3 + 1;
}
#else
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long m = argc > 2 ? atol(argv[2]) : 100, sum = 0;
	long long t0;

	if (argc < 2)
		return 2;
	t0 = now_ns();
	for (long i = 0; i < m; i++) {
		void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
		long (*fn)(long);

		if (!h || !(fn = (long (*)(long))dlsym(h, "dlwork"))) {
			fprintf(stderr, "dl_bench: %s\n", dlerror());
			return 1;
		}
		sum += fn(i);
		dlclose(h);
	}
	printf("%lld %ld %ld\n", now_ns() - t0, m, sum);
	return 0;
}
#endif
