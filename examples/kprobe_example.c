// SPDX-License-Identifier: GPL-2.0
/*
 * The user-space twin of the kernel's samples/kprobes/kprobe_example.c:
 * plant a kprobe with a pre and a post handler on a symbol, let the
 * program run over it a few times, remove it.
 *
 *   kprobe_example [SYMBOL]
 *
 * SYMBOL is any function of the program or of a library it has loaded,
 * "LIB:SYM" to name the library ("libc.so.6:getpid"); the default is
 * this program's example_clone(), which the work loop below calls, as the
 * kernel sample's default is kernel_clone.  The loop also calls getpid()
 * and strlen(), so those can be tried too.
 *
 * The handlers run in a SIGTRAP handler, so they print with snprintf()
 * into a buffer and write(2) rather than with stdio.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <dprobe/kprobes.h>

#define MAX_SYMBOL_LEN 64
static char symbol[MAX_SYMBOL_LEN] = "example_clone";

/* For each probe you need to allocate a kprobe structure. */
static struct kprobe kp = {
	.symbol_name = symbol,
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

/* Called just before the probed instruction is executed. */
static int handler_pre(struct kprobe *p, struct pt_regs *regs)
{
	say("<%s> pre_handler: p->addr = %p, ip = %lx, flags = 0x%lx\n",
	    p->symbol_name, (void *)p->addr, regs->ip, regs->flags);
	/* returning 0 lets the probed instruction run */
	return 0;
}

/* Called after the probed instruction has run. */
static void handler_post(struct kprobe *p, struct pt_regs *regs,
			 unsigned long flags)
{
	(void)flags;
	say("<%s> post_handler: p->addr = %p, flags = 0x%lx\n",
	    p->symbol_name, (void *)p->addr, regs->flags);
}

/* What the kernel sample probes by default: something that gets called. */
__attribute__((noinline)) long example_clone(long flags, const char *name)
{
	__asm__ volatile("" ::: "memory");
	return flags * 2 + (long)strlen(name);
}

static long work(int i)
{
	static const char *const names[] = { "init", "worker", "daemon" };

	return example_clone(i, names[i % 3]) + (getpid() > 0);
}

int main(int argc, char **argv)
{
	long sum = 0;
	int ret;

	if (argc > 1)
		snprintf(symbol, sizeof(symbol), "%s", argv[1]);
	kp.pre_handler = handler_pre;
	kp.post_handler = handler_post;

	ret = register_kprobe(&kp);
	if (ret < 0) {
		say("register_kprobe failed, returned %d (%s)\n", ret,
		    strerror(-ret));
		return 1;
	}
	say("Planted kprobe at %p\n", (void *)kp.addr);

	for (int i = 0; i < 3; i++)
		sum += work(i);

	unregister_kprobe(&kp);
	say("kprobe at %p unregistered\n", (void *)kp.addr);
	say("work done: %ld, missed %lu\n", sum, kp.nmissed);
	return 0;
}
