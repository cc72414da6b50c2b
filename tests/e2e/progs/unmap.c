// SPDX-License-Identifier: GPL-2.0
/*
 * e2e target: a program that unmaps memory it did not map.  It calls
 * work(1), then munmap()s every mapping of /proc/self/maps whose name
 * holds "dprobe-rings" (the in-process engine's rings, if it is traced
 * by it), then calls work(2) and work(3).  work(a) returns a * 10 + 1;
 * each result is printed, then "unmap: done".
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

volatile long sink;

__attribute__((noipa)) long work(long a)
{
	sink = a * 10 + 1;
	return sink;
}

static void unmap_rings(void)
{
	unsigned long lo[64], hi[64];
	char line[512];
	int n = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return;
	while (n < 64 && fgets(line, sizeof(line), f))
		if (strstr(line, "dprobe-rings") &&
		    sscanf(line, "%lx-%lx", &lo[n], &hi[n]) == 2)
			n++;
	fclose(f);
	for (int i = 0; i < n; i++)
		munmap((void *)lo[i], hi[i] - lo[i]);
}

int main(void)
{
	printf("unmap: work(1) = %ld\n", work(1));
	fflush(stdout);
	unmap_rings();
	printf("unmap: work(2) = %ld\n", work(2));
	printf("unmap: work(3) = %ld\n", work(3));
	printf("unmap: done\n");
	return 0;
}
