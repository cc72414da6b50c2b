// SPDX-License-Identifier: GPL-2.0
/*
 * e2e target for where the ptrace engine puts its page of slots: it walks
 * down from the probed code in 1 MiB steps, then up.  This program takes
 * every 1 MiB-aligned spot below its code first (a PROT_NONE page each),
 * so that for a non-PIE build (code at 0x400000) the walk down finds
 * nothing free and must not end on page 0: a root process may map it, and
 * the engine once did, read the address 0 as a failure ("Cannot allocate
 * memory") and left the program with a valid NULL page.
 *
 * Usage: lowspots STOPFILE.  Prints "lowspots: ready (N spots taken)" (N
 * is 0 for a PIE build: its code is far from address 0), then calls
 * tick(i) until STOPFILE exists, checking each result, and prints
 * "lowspots: ok" or "lowspots: WRONG".
 */
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#define STEP (1ul << 20)

volatile long sink;

__attribute__((noipa)) long tick(long i)
{
	sink = i;
	return i + 3;
}

/* The spots the engine's walk down would try, from the code to 1 MiB. */
static int take_spots(void)
{
	uintptr_t base = (uintptr_t)tick & ~(STEP - 1);
	int n = 0;

	if (base > (1ul << 30))
		return 0;
	for (uintptr_t a = base - STEP; a >= STEP && a < base; a -= STEP)
		if (mmap((void *)a, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
			 MAP_FIXED_NOREPLACE, -1, 0) == (void *)a)
			n++;
	return n;
}

int main(int argc, char **argv)
{
	long bad = 0;

	if (argc != 2)
		return 2;
	printf("lowspots: ready (%d spots taken)\n", take_spots());
	fflush(stdout);
	for (long i = 0;; i++) {
		if (tick(i & 0xffff) != (i & 0xffff) + 3)
			bad++;
		if (!(i & 1023)) {
			if (!access(argv[1], F_OK))
				break;
			usleep(1000);
		}
	}
	printf("lowspots: %s\n", bad ? "WRONG" : "ok");
	return bad ? 1 : 0;
}
