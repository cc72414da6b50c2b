// SPDX-License-Identifier: GPL-2.0
/*
 * A hostile target for agent-scribble: it keeps writing records into the
 * agent's ring set after dprobe detached.  The main thread calls tick()
 * (the probed function) until the file argv[1] exists; SCRIBBLERS threads
 * wait for the rings dprobe hands the agent (the memfd "dprobe-rings" in
 * /proc/self/maps), open and map their own copy, so it outlives the
 * agent's, each claim a ring and commit 64-byte records as fast as they
 * can with the producer code (ring_api.h), and drop even more
 * (scribble()), on and on.  Built by the case
 * with -I src.  Prints "scribble: ready", then "scribble: writing" once
 * they all write, and "scribble: done" at the end.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ring/ring_api.h"

/* Threads that scribble, each on its own ring: one of them is always
 * writing, even on a busy machine. */
#define SCRIBBLERS 2

static atomic_int stop, writing;

__attribute__((noinline)) int tick(int i)
{
	__asm__ volatile("" ::: "memory");
	return i + 1;
}

/*
 * A descriptor of the ring set's memfd, opened anew: -1 if none yet.
 * The agent keeps no descriptor of it once mapped: its mapping is found
 * in /proc/self/maps and opened through /proc/self/map_files (root).
 */
static int open_rings(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	int fd = -1;

	while (f && fd < 0 && fgets(line, sizeof(line), f)) {
		char path[300], range[64];

		if (!strstr(line, "memfd:dprobe-rings") ||
		    sscanf(line, "%63s", range) != 1)
			continue;
		snprintf(path, sizeof(path), "/proc/self/map_files/%s", range);
		fd = open(path, O_RDWR | O_CLOEXEC);
	}
	if (f)
		fclose(f);
	return fd;
}

static uint64_t rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

/*
 * A burst of well-formed records (slot 0: the probe on tick), then a
 * reservation left open while a thousand more are tried: each of those is
 * dropped and counted lost, as a signal handler's nested in it would be.
 * Records and losses keep coming, whatever the reader does.
 */
static void scribble(struct dp_ring *r)
{
	void *p;

	for (int i = 0; i < 1000; i++) {
		p = dp_ring_reserve(r, 64, rdtsc(), 0);
		if (p) {
			memset(p, 0, 64);
			dp_ring_commit(r);
		}
	}
	p = dp_ring_reserve(r, 64, rdtsc(), 0);
	if (!p)
		return;
	memset(p, 0, 64);
	for (int i = 0; i < 1000; i++)
		dp_ring_reserve(r, 64, rdtsc(), 0);
	dp_ring_commit(r);
}

static void *scribbler(void *arg)
{
	struct dp_ring_set_hdr *set;
	struct dp_ring *r = NULL;
	struct stat st;
	int fd;

	(void)arg;
	while ((fd = open_rings()) < 0 && !stop)
		usleep(1000);
	if (fd < 0 || fstat(fd, &st))
		return NULL;
	set = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
		   MAP_SHARED, fd, 0);
	if (set == MAP_FAILED)
		return NULL;
	r = dp_ring_claim(set, getpid(), gettid());
	if (!r)
		return NULL;
	if (atomic_fetch_add(&writing, 1) == SCRIBBLERS - 1) {
		printf("scribble: writing\n");
		fflush(stdout);
	}
	while (!stop)
		scribble(r);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[SCRIBBLERS];
	int i = 0;

	if (argc < 2)
		return 2;
	/* before the scribblers: launched with the agent, the rings are
	 * there at once and "writing" could come first */
	printf("scribble: ready\n");
	fflush(stdout);
	for (int k = 0; k < SCRIBBLERS; k++)
		pthread_create(&th[k], NULL, scribbler, NULL);
	while (access(argv[1], F_OK)) {
		i = tick(i);
		usleep(1000);
	}
	stop = 1;
	for (int k = 0; k < SCRIBBLERS; k++)
		pthread_join(th[k], NULL);
	printf("scribble: done\n");
	return 0;
}
