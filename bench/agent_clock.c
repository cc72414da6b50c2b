// SPDX-License-Identifier: GPL-2.0
/*
 * Prints the clock the agent's hit path uses in this environment (the
 * same CPU, vDSO and DPROBE_AGENT_CLOCK as a traced program would have):
 *
 *   agent_clock LIBDPROBE_SO
 *   -> agent clock: tsc + rseq cpu_id (rdtscp no, rdpid no, invariant tsc yes)
 *
 * bench/run.sh prints it under its table; the agent's timestamps cost
 * what this path costs.
 */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	const char *(*clock_line)(void);
	void *lib;

	if (argc != 2) {
		fprintf(stderr, "usage: agent_clock LIBDPROBE_SO\n");
		return 2;
	}
	lib = dlopen(argv[1], RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "agent_clock: %s\n", dlerror());
		return 1;
	}
	*(void **)&clock_line = dlsym(lib, "dprobe_agent_clock");
	if (!clock_line) {
		fprintf(stderr, "agent_clock: %s has no dprobe_agent_clock()\n",
			argv[1]);
		return 1;
	}
	printf("agent clock: %s\n", clock_line());
	return 0;
}
