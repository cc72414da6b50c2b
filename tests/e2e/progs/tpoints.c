// SPDX-License-Identifier: GPL-2.0
/*
 * e2e target with application tracepoints (include/dprobe/tracepoint.h).
 *
 *   tp:ints    every integer width and signedness: s8..s64, u8..u64
 *   tp:strs    a string, a NULL string (a fault), a 4-int array, a
 *              pointer recorded as an integer
 *   tp:eight   eight arguments: the 7th and 8th are passed on the stack
 *   tp:tick    one int, fired in a loop (counting, threads, attach)
 *
 * Usage: tpoints              fire ints(i) strs(i) eight(i) for i = 0..2
 *        tpoints --threads T N   T threads fire tick(0..N-1) each
 *        tpoints --wait GOFILE N  print "tpoints: ready", wait for GOFILE,
 *                                 fire tick(0..N-1), wait for GOFILE.2,
 *                                 fire tick(N..2N-1)
 *        tpoints --once N        tick_once(0..N-1): a function whose
 *                                first instruction (at -O2) is the nop
 *                                of its trace_tick(); before each call
 *                                the stack below is filled with 0xa5, so
 *                                a probe's frame that reads memory it
 *                                did not set shows it
 *        tpoints --fork          a fork child prints whether tick is
 *                                enabled and fires tick(1); then the
 *                                parent does the same with tick(2)
 *        tpoints --spoil GOFILE N  as --wait, but after tick(0..N-1) the
 *                                version of tick's struct dp_tracepoint
 *                                is overwritten (print "tpoints: spoiled"):
 *                                from then on libdprobe refuses to
 *                                unregister anything from it
 * Each mode prints one line at the end (--fork: one per process), with
 * what it computed, so that a test sees the program behave the same
 * traced or not.
 *
 * tp_neg_sem is a reference counter (an SDT semaphore's place) that
 * holds -2: adding 1 would leave it negative, which the kernel refuses.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define DP_CREATE_TRACE_POINTS
#include <dprobe/tracepoint.h>

DP_TRACE_EVENT(tp, ints,
	TP_PROTO(int8_t s8, int16_t s16, int32_t s32, int64_t s64,
		 uint8_t u8, uint16_t u16, uint32_t u32, uint64_t u64),
	TP_ARGS(s8, s16, s32, s64, u8, u16, u32, u64),
	TP_FIELDS(tp_field(int8_t, s8) tp_field(int16_t, s16)
		  tp_field(int32_t, s32) tp_field(int64_t, s64)
		  tp_field(uint8_t, u8) tp_field(uint16_t, u16)
		  tp_field(uint32_t, u32) tp_field(uint64_t, u64)))

DP_TRACE_EVENT(tp, strs,
	TP_PROTO(const char *name, const char *none, const int *vec,
		 const void *ptr),
	TP_ARGS(name, none, vec, ptr),
	TP_FIELDS(tp_string(name) tp_string(none) tp_array(int, vec, 4)
		  tp_field(uintptr_t, ptr)))

DP_TRACE_EVENT(tp, eight,
	TP_PROTO(long a, long b, long c, long d, long e, long f, long g,
		 long h),
	TP_ARGS(a, b, c, d, e, f, g, h),
	TP_FIELDS(tp_field(long, a) tp_field(long, b) tp_field(long, c)
		  tp_field(long, d) tp_field(long, e) tp_field(long, f)
		  tp_field(long, g) tp_field(long, h)))

DP_TRACE_EVENT(tp, tick,
	TP_PROTO(int i),
	TP_ARGS(i),
	TP_FIELDS(tp_field(int, i)))

unsigned short tp_neg_sem __attribute__((section(".probes"), used)) = 0xfffe;

static const char *const names[] = { "zero", "one", "two" };

static long fire_all(void)
{
	long sum = 0;

	for (int i = 0; i < 3; i++) {
		int vec[4] = { i, -i, 100 * i, -1 };

		trace_ints((int8_t)(-1 - i), (int16_t)(-300 * (i + 1)),
			   -70000 * (i + 1), -5000000000LL * (i + 1),
			   (uint8_t)(250 + i), (uint16_t)(65530 + i),
			   4000000000u + (uint32_t)i,
			   18000000000000000000ull + (uint64_t)i);
		trace_strs(names[i], NULL, vec, (const void *)(uintptr_t)(0x1000 * (i + 1)));
		trace_eight(i, i + 1, i + 2, i + 3, i + 4, i + 5, i + 6, i + 7);
		sum += vec[2];
	}
	return sum;
}

static long ticks(int from, int to)
{
	long sum = 0;

	for (int i = from; i < to; i++) {
		trace_tick(i);
		sum += i;
	}
	return sum;
}

__attribute__((noinline)) void tick_once(int i)
{
	trace_tick(i);
}

__attribute__((noinline)) static void dirty_stack(void)
{
	volatile unsigned char junk[16384];

	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = 0xa5;
}

static int fork_mode(void)
{
	pid_t pid = fork();
	int status = 0;

	if (pid < 0)
		return 1;
	if (!pid) {
		printf("tpoints: child tick enabled=%d\n", trace_tick_enabled());
		tick_once(1);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	printf("tpoints: parent tick enabled=%d\n", trace_tick_enabled());
	tick_once(2);
	return status != 0;
}

static void *thread_main(void *arg)
{
	return (void *)ticks(0, (int)(intptr_t)arg);
}

static void wait_for(const char *path)
{
	while (access(path, F_OK))
		usleep(2000);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && !strcmp(argv[1], "--threads")) {
		int t = atoi(argv[2]), n = atoi(argv[3]);
		pthread_t th[64];
		long sum = 0;
		void *r;

		for (int i = 0; i < t && i < 64; i++)
			pthread_create(&th[i], NULL, thread_main,
				       (void *)(intptr_t)n);
		for (int i = 0; i < t && i < 64; i++) {
			pthread_join(th[i], &r);
			sum += (long)r;
		}
		printf("tpoints: %d threads, sum %ld\n", t, sum);
		return 0;
	}
	if (argc == 4 && (!strcmp(argv[1], "--wait") ||
			  !strcmp(argv[1], "--spoil"))) {
		char go2[4096];
		int n = atoi(argv[3]);
		long sum;

		snprintf(go2, sizeof(go2), "%s.2", argv[2]);
		printf("tpoints: ready\n");
		wait_for(argv[2]);
		sum = ticks(0, n);
		if (!strcmp(argv[1], "--spoil")) {
			__atomic_store_n(&__dp_tracepoint_tick.version, 0xbad,
					 __ATOMIC_RELAXED);
			printf("tpoints: spoiled\n");
		}
		wait_for(go2);
		sum += ticks(n, 2 * n);
		printf("tpoints: sum %ld\n", sum);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "--once")) {
		long sum = 0;

		for (int i = 0; i < atoi(argv[2]); i++) {
			dirty_stack();
			tick_once(i);
			sum += i;
		}
		printf("tpoints: sum %ld\n", sum);
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "--fork"))
		return fork_mode();
	printf("tpoints: sum %ld\n", fire_all());
	return 0;
}
