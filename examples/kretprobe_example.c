// SPDX-License-Identifier: GPL-2.0
/*
 * The user-space twin of the kernel's samples/kprobes/kretprobe_example.c:
 * a return probe on a function that reports what it returned and how long
 * the call took, carrying the entry timestamp in the instance's data.
 *
 *   kretprobe_example [FUNCTION]
 *
 * The default FUNCTION is this program's example_alloc(), which the loop
 * below calls with growing sizes.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <dprobe/kprobes.h>

#define MAX_SYMBOL_LEN 64
static char func_name[MAX_SYMBOL_LEN] = "example_alloc";

/* Per-instance private data. */
struct my_data {
	long long entry_stamp;
};

static void say(const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0 && write(1, buf, (size_t)n < sizeof(buf) ? (size_t)n :
			   sizeof(buf) - 1) < 0)
		_exit(1);
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Timestamp the function entry. */
static int entry_handler(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct my_data *data = (struct my_data *)ri->data;

	(void)regs;
	data->entry_stamp = now_ns();
	return 0;
}

/* Report the return value and the time the call took. */
static int ret_handler(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct my_data *data = (struct my_data *)ri->data;
	long long delta = now_ns() - data->entry_stamp;

	say("%s returned %lu and took %lld ns to execute\n", func_name,
	    regs_return_value(regs), delta);
	return 0;
}

static struct kretprobe my_kretprobe = {
	.handler = ret_handler,
	.entry_handler = entry_handler,
	.data_size = sizeof(struct my_data),
	/* Probe up to 20 instances concurrently. */
	.maxactive = 20,
};

__attribute__((noinline)) unsigned long example_alloc(unsigned long size)
{
	volatile char *p = malloc(size);
	unsigned long sum = 0;

	for (unsigned long i = 0; p && i < size; i++)
		p[i] = (char)i;
	for (unsigned long i = 0; p && i < size; i++)
		sum += (unsigned char)p[i];
	free((void *)p);
	return sum;
}

int main(int argc, char **argv)
{
	unsigned long total = 0;
	int ret;

	if (argc > 1)
		snprintf(func_name, sizeof(func_name), "%s", argv[1]);
	my_kretprobe.kp.symbol_name = func_name;
	ret = register_kretprobe(&my_kretprobe);
	if (ret < 0) {
		say("register_kretprobe failed, returned %d (%s)\n", ret,
		    strerror(-ret));
		return 1;
	}
	say("Planted return probe at %s: %p\n", my_kretprobe.kp.symbol_name,
	    (void *)my_kretprobe.kp.addr);

	for (unsigned long n = 16; n <= 1024; n *= 4)
		total += example_alloc(n);

	unregister_kretprobe(&my_kretprobe);
	say("kretprobe at %p unregistered\n", (void *)my_kretprobe.kp.addr);
	/* nmiss > 0 suggests that maxactive was set too low. */
	say("Missed probing %d instances of %s.\n", my_kretprobe.nmissed,
	    my_kretprobe.kp.symbol_name);
	say("total %lu\n", total);
	return 0;
}
