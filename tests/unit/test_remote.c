// SPDX-License-Identifier: GPL-2.0
/*
 * engine/ptrace/remote: uprobe reference counters (SDT semaphores) in
 * another process, as the kernel's __update_ref_ctr() updates them: a
 * signed 16-bit value that never goes below 0, written only where the
 * process itself may write, and nothing but its two bytes.
 *
 * The target is a fork of the test: it has the test's mappings at the
 * same addresses (a writable page followed by a read-only one), and
 * sleeps while the test changes its memory from outside.  (The timeout is
 * test_inject's: with two different suite timeouts, Criterion 2.4's -j2
 * runner leaks 48 bytes, which LeakSanitizer reports.)
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "engine/ptrace/remote.h"

#define PG 4096

static uint8_t *pages;		/* [0, PG) read-write, [PG, 2 PG) read-only */
static pid_t child;
static struct dp_mm mm = { .mem_fd = -1 };

/* Start the target with the writable page filled with 0xa5, the
 * read-only one with zeros (a counter there could be incremented). */
static void setup(void)
{
	pages = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(pages, MAP_FAILED);
	memset(pages, 0xa5, PG);
	memset(pages + PG, 0, PG);
	cr_assert_eq(mprotect(pages + PG, PG, PROT_READ), 0);
	child = fork();
	cr_assert_geq(child, 0);
	if (!child) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		/* nothing of the test runner's stays open in here */
		close_range(3, ~0u, 0);
		for (;;)
			pause();
	}
	cr_assert_eq(dp_mm_open(&mm, child), 0);
}

static void teardown(void)
{
	dp_mm_close(&mm);
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	munmap(pages, 2 * PG);
}

TestSuite(refctr, .init = setup, .fini = teardown, .timeout = 60);

static void poke(size_t off, const void *src, size_t len)
{
	struct iovec l = { (void *)src, len }, r = { pages + off, len };

	cr_assert_eq(process_vm_writev(child, &l, 1, &r, 1, 0), (ssize_t)len);
}

static void peek(size_t off, void *dst, size_t len)
{
	struct iovec l = { dst, len }, r = { pages + off, len };

	cr_assert_eq(process_vm_readv(child, &l, 1, &r, 1, 0), (ssize_t)len);
}

static void set16(size_t off, uint16_t v)
{
	poke(off, &v, 2);
}

static uint16_t get16(size_t off)
{
	uint16_t v;

	peek(off, &v, 2);
	return v;
}

static int add(size_t off, int delta, int *val)
{
	return dp_mm_ref_ctr_add(&mm, (uint64_t)(uintptr_t)(pages + off),
				 delta, val);
}

Test(refctr, counts_up_and_down_leaving_neighbours)
{
	uint8_t around[8], want[8];
	int val;

	set16(100, 0);
	cr_assert_eq(add(100, 1, &val), 0);
	cr_assert_eq(val, 0);
	cr_assert_eq(add(100, 1, &val), 0);
	cr_assert_eq(val, 1);
	cr_assert_eq(get16(100), 2);
	cr_assert_eq(add(100, -1, &val), 0);
	cr_assert_eq(add(100, -1, &val), 0);
	cr_assert_eq(val, 1);
	cr_assert_eq(get16(100), 0);
	/* the bytes on either side are the program's */
	memset(want, 0xa5, sizeof(want));
	want[3] = want[4] = 0;
	peek(97, around, sizeof(around));
	cr_assert_arr_eq(around, want, sizeof(want));
	/* our own copy of the page was never touched */
	cr_assert_eq(pages[100], 0xa5);
}

Test(refctr, never_below_zero)
{
	int val;

	set16(10, 0);
	cr_assert_eq(add(10, -1, &val), -EINVAL);
	cr_assert_eq(val, 0);
	cr_assert_eq(get16(10), 0);
}

/* The kernel's counter is a short: what is negative there stays so. */
Test(refctr, signed_short_as_the_kernel)
{
	int val;

	set16(20, 0xfffe);	/* -2: +1 would still be negative */
	cr_assert_eq(add(20, 1, &val), -EINVAL);
	cr_assert_eq(val, -2);
	cr_assert_eq(get16(20), 0xfffe);
	set16(20, 0xffff);	/* -1 + 1 = 0 is allowed */
	cr_assert_eq(add(20, 1, &val), 0);
	cr_assert_eq(val, -1);
	cr_assert_eq(get16(20), 0);
	set16(20, 0x7fff);	/* 32767 + 1 wraps to -32768 ... */
	cr_assert_eq(add(20, 1, &val), 0);
	cr_assert_eq(get16(20), 0x8000);
	/* ... which cannot be decremented */
	cr_assert_eq(add(20, -1, &val), -EINVAL);
	cr_assert_eq(val, -32768);
	cr_assert_eq(get16(20), 0x8000);
}

Test(refctr, read_only_is_not_written)
{
	int val;

	cr_assert_eq(add(PG + 8, 1, &val), -EFAULT);
	cr_assert_eq(get16(PG + 8), 0);
}

Test(refctr, across_pages_is_refused)
{
	int val;

	/* its first byte writable, the second not: nothing is written */
	set16(PG - 2, 0);
	cr_assert_eq(add(PG - 1, 1, &val), -EFAULT);
	cr_assert_eq(get16(PG - 2), 0);
}

Test(refctr, unmapped_fails)
{
	int val;

	cr_assert_eq(dp_mm_ref_ctr_add(&mm, 8, 1, &val), -EFAULT);
	cr_assert_eq(dp_mm_ref_ctr_add(&mm, UINT64_C(0xffff800000000000), -1,
				       &val), -EFAULT);
}
