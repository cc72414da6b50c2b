// SPDX-License-Identifier: GPL-2.0
/*
 * The semaphore-gated SDT probes of sdt_prog (tests/data/sdt_prog.c): with
 * _SDT_HAS_SEMAPHORES every note of this file names PROVIDER_NAME_semaphore,
 * an unsigned short in .probes that a tracer increments while it has the
 * probe armed; the probes fire only then.
 */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

__extension__ unsigned short sdt_sem_gated_semaphore
	__attribute__((unused, section(".probes")));
__extension__ unsigned short sdt_sem_gated2_semaphore
	__attribute__((unused, section(".probes")));

__attribute__((noinline)) void sdt_gated(int x)
{
	if (__builtin_expect(sdt_sem_gated_semaphore, 0))
		STAP_PROBE1(sdt_sem, gated, x);
	if (__builtin_expect(sdt_sem_gated2_semaphore, 0))
		STAP_PROBE2(sdt_sem, gated2, x, x + 1);
	/* a second site of the first probe: one semaphore for both */
	if (__builtin_expect(sdt_sem_gated_semaphore, 0))
		STAP_PROBE1(sdt_sem, gated, -x);
}
