// SPDX-License-Identifier: GPL-2.0
/*
 * e2e target of the function tracers (--tracer function|function_graph):
 * every call made in an order the source fixes.
 *
 *   fact(3)     recursion: fact(3) -> fact(2) -> fact(1) -> leaf(0)
 *   do_jump()   jumper(2) -> jumper(1) -> jumper(0), which longjmps back
 *               into do_jump: the three jumper calls never return; then
 *               leaf(1)
 *   do_throw()  thrower(2) -> thrower(1) -> thrower(0), which throws; the
 *               catch in do_throw calls leaf(2)
 *   two threads, one after the other (each joined before the next is
 *               made): worker(N) -> leaf(N)
 *
 * The functions are extern "C" so that their symbols are their names.
 * Prints one line of results.
 */
#include <csetjmp>
#include <cstdio>
#include <pthread.h>
#include <stdexcept>

#define NOINLINE __attribute__((noinline, noclone))

extern "C" {
static jmp_buf jb;
volatile int sink;

NOINLINE int leaf(int x)
{
	sink = x;
	return x + 1;
}

NOINLINE int fact(int n)
{
	int r = n <= 1 ? leaf(0) : n * fact(n - 1);

	sink = r;
	return r;
}

NOINLINE void jumper(int d)
{
	if (d == 0)
		longjmp(jb, 1);
	jumper(d - 1);
	sink = d;
}

NOINLINE int do_jump(void)
{
	if (!setjmp(jb))
		jumper(2);
	return leaf(1);
}

NOINLINE void thrower(int d)
{
	if (d == 0)
		throw std::runtime_error("thrown");
	thrower(d - 1);
	sink = d;
}

NOINLINE int do_throw(void)
{
	try {
		thrower(2);
	} catch (const std::exception &) {
		return leaf(2);
	}
	return 0;
}

NOINLINE void *worker(void *arg)
{
	sink = leaf((int)(long)arg);
	return nullptr;
}
}

int main()
{
	int a = fact(3), b = do_jump(), c = do_throw();

	for (long i = 3; i <= 4; i++) {
		pthread_t t;

		if (pthread_create(&t, nullptr, worker, (void *)i) ||
		    pthread_join(t, nullptr))
			return 1;
	}
	printf("fgraph: %d %d %d\n", a, b, c);
	return 0;
}
