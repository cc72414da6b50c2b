// SPDX-License-Identifier: GPL-2.0
/*
 * e2e target with SDT probes (<sys/sdt.h>), both gated by a semaphore:
 * they fire only while a tracer holds it.
 *
 *   e2e:args  (i, big, s, c, name): int, long, short, unsigned char,
 *             const char *; stack slots at -O0, registers at -O2
 *   e2e:glob  (g_counter, -i): a global, after the function changed it
 *   e2e:start (g_counter): the global as it is in memory (RIP-relative
 *             at -O2)
 *
 * main calls fire(i, -5e9 (i + 1), -300 - i, 200 + i, "zero"/"one"/"two")
 * for i = 0..2; fire adds i to g_counter (1000 at the start) between the
 * two probes, and returns how many probes fired.  Prints "sdt: fired N".
 */
#define _SDT_HAS_SEMAPHORES 1
#include <stdio.h>
#include <sys/sdt.h>

__extension__ unsigned short e2e_args_semaphore
	__attribute__((section(".probes")));
__extension__ unsigned short e2e_glob_semaphore
	__attribute__((section(".probes")));
__extension__ unsigned short e2e_start_semaphore
	__attribute__((section(".probes")));

long g_counter = 1000;

__attribute__((noipa)) int fire(int i, long big, short s, unsigned char c,
				const char *name)
{
	int fired = 0;

	if (__builtin_expect(e2e_start_semaphore, 0)) {
		STAP_PROBE1(e2e, start, g_counter);
		fired++;
	}
	if (__builtin_expect(e2e_args_semaphore, 0)) {
		STAP_PROBE5(e2e, args, i, big, s, c, name);
		fired++;
	}
	g_counter += i;
	if (__builtin_expect(e2e_glob_semaphore, 0)) {
		STAP_PROBE2(e2e, glob, g_counter, -i);
		fired++;
	}
	return fired;
}

int main(void)
{
	static const char *const names[] = { "zero", "one", "two" };
	int fired = 0;

	for (int i = 0; i < 3; i++)
		fired += fire(i, -5000000000L * (i + 1), (short)(-300 - i),
			      (unsigned char)(200 + i), names[i]);
	printf("sdt: fired %d\n", fired);
	return 0;
}
