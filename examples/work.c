// SPDX-License-Identifier: GPL-2.0
/*
 * The bundled example: a small program whose functions are worth probing,
 * used by `make run`, the README and the golden tests.
 */
#include <stdio.h>
#include <string.h>

struct job {
	int id;
	const char *name;
	unsigned flags;
};

__attribute__((noinline)) int work(int a, const char *name)
{
	return (int)strlen(name) + a;
}

__attribute__((noinline)) long run_job(const struct job *job)
{
	return work(job->id, job->name) * (long)(job->flags & 0xff);
}

int main(int argc, char **argv)
{
	static const char *const names[] = { "etc", "passwd", "hosts" };
	long total = 0;

	for (int i = 0; i < 3; i++) {
		struct job job = { i, argc > 1 ? argv[1] : names[i], 0x100 | i };

		total += run_job(&job);
	}
	printf("total %ld\n", total);
	return 0;
}
