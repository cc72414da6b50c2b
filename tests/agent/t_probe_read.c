// SPDX-License-Identifier: GPL-2.0
/*
 * dp_probe_read() and dp_probe_read_str() on good and bad memory, from
 * ordinary code and from a handler, with the program's own SIGSEGV
 * handler installed (it must never see our faults).
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include <dprobe/kprobes.h>

#include "agent_test.h"

static int prog_segvs;

static void on_segv(int sig)
{
	(void)sig;
	prog_segvs++;
	_exit(99);
}

static char *page_pair(void)
{
	long ps = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, 3 * ps, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	/* readable page, PROT_NONE page, unmapped page */
	mprotect(p + ps, ps, PROT_NONE);
	munmap(p + 2 * ps, ps);
	return p;
}

static void test_plain(char *p)
{
	long ps = sysconf(_SC_PAGESIZE), v = 0, src = 0x1122334455667788;
	char buf[64];

	BEGIN("dp_probe_read: good, NULL, PROT_NONE, unmapped, straddling");
	CHECK_EQ(dp_probe_read(&v, &src, sizeof(v)), 0);
	CHECK_EQ(v, src);
	CHECK_EQ(dp_probe_read(&v, NULL, sizeof(v)), -EFAULT);
	CHECK_EQ(dp_probe_read(&v, p + ps, sizeof(v)), -EFAULT);
	CHECK_EQ(dp_probe_read(&v, p + 2 * ps, sizeof(v)), -EFAULT);
	CHECK_EQ(dp_probe_read(buf, p + ps - 8, 16), -EFAULT);
	CHECK_EQ(dp_probe_read(buf, p + ps - 16, 16), 0);
	CHECK_EQ(dp_probe_read(&v, (void *)-4096l, sizeof(v)), -EFAULT);
	CHECK_EQ(dp_probe_read(&v, NULL, 0), 0);
	CHECK_EQ(prog_segvs, 0);
	END();
}

static void test_str(char *p)
{
	long ps = sysconf(_SC_PAGESIZE);
	char buf[16];

	BEGIN("dp_probe_read_str: length with NUL, truncation, page end");
	CHECK_EQ(dp_probe_read_str(buf, "hello", sizeof(buf)), 6);
	CHECK(!strcmp(buf, "hello"), "%s", buf);
	CHECK_EQ(dp_probe_read_str(buf, "hello world, long", 8), 8);
	CHECK(!strcmp(buf, "hello w"), "%s", buf);
	CHECK_EQ(dp_probe_read_str(buf, "", sizeof(buf)), 1);
	CHECK_EQ(dp_probe_read_str(buf, "x", 0), 0);
	/* a string ending on the last byte before a PROT_NONE page */
	memcpy(p + ps - 4, "abc", 4);
	CHECK_EQ(dp_probe_read_str(buf, p + ps - 4, sizeof(buf)), 4);
	CHECK(!strcmp(buf, "abc"), "%s", buf);
	/* one running into it */
	memcpy(p + ps - 3, "xyz", 3);
	CHECK_EQ(dp_probe_read_str(buf, p + ps - 3, sizeof(buf)), -EFAULT);
	CHECK_EQ(dp_probe_read_str(buf, NULL, sizeof(buf)), -EFAULT);
	CHECK_EQ(prog_segvs, 0);
	END();
}

static long got_ok, got_bad, got_str;
static char str_copy[32];

__attribute__((noipa)) long reader(const char *good, const char *bad)
{
	return (long)(good - bad);
}

static int pre_reads(struct kprobe *kp, struct pt_regs *regs)
{
	char c;

	(void)kp;
	got_ok = dp_probe_read(&c, (void *)regs->di, 1);
	got_bad = dp_probe_read(&c, (void *)regs->si, 1);
	got_str = dp_probe_read_str(str_copy, (void *)regs->di,
				    sizeof(str_copy));
	return 0;
}

static void test_in_handler(char *p)
{
	struct kprobe kp = { .symbol_name = "reader", .pre_handler = pre_reads };
	long ps = sysconf(_SC_PAGESIZE);

	BEGIN("dp_probe_read from a probe handler");
	CHECK_EQ(register_kprobe(&kp), 0);
	reader("probe me", p + ps);
	CHECK_EQ(got_ok, 0);
	CHECK_EQ(got_bad, -EFAULT);
	CHECK_EQ(got_str, 9);
	CHECK(!strcmp(str_copy, "probe me"), "%s", str_copy);
	CHECK_EQ(prog_segvs, 0);
	unregister_kprobe(&kp);
	END();
}

int main(void)
{
	char *p = page_pair();

	signal(SIGSEGV, on_segv);
	signal(SIGBUS, on_segv);
	if (!p)
		return 1;
	test_plain(p);
	test_str(p);
	test_in_handler(p);
	return t_exit();
}
