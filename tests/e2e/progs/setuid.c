// SPDX-License-Identifier: GPL-2.0
/*
 * agent-setuid's program: linked with libdprobe.so (its constructor runs
 * before main()), installed set-user-ID root by the case and run by
 * nobody.  Prints its effective uid: 0 shows the set-user-ID bit took.
 */
#include <stdio.h>
#include <unistd.h>

int main(void)
{
	printf("setuid: euid=%d\n", (int)geteuid());
	return 0;
}
