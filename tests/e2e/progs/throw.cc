// SPDX-License-Identifier: GPL-2.0
/*
 * e2e target: C++ exceptions thrown across frames with return probes.
 *
 * Round i (0..5): main -> middle(i) -> thrower(i).  thrower throws when i
 * is odd, so neither thrower nor middle returns in rounds 1, 3, 5 and the
 * unwinder walks through both frames (their return addresses are what a
 * return probe replaces).  In even rounds thrower returns i * 10 and
 * middle returns that + 1.
 */
#include <cstdio>
#include <stdexcept>

volatile long sink;

__attribute__((noipa)) long thrower(long i)
{
	if (i & 1)
		throw std::runtime_error("odd");
	sink = i * 10;
	return sink;
}

__attribute__((noipa)) long middle(long i)
{
	long r = thrower(i);

	sink = r + 1;
	return sink;
}

int main()
{
	long total = 0;

	for (long i = 0; i < 6; i++) {
		try {
			total += middle(i);
			std::printf("throw: round %ld returned\n", i);
		} catch (const std::runtime_error &e) {
			std::printf("throw: round %ld caught %s\n", i, e.what());
			total += 100;
		}
	}
	std::printf("throw: total %ld\n", total);
	return 0;
}
