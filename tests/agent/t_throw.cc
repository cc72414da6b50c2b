// SPDX-License-Identifier: GPL-2.0
/*
 * C++ exceptions thrown across frames whose return addresses a kretprobe
 * replaced.  Round i: main -> middle(i) -> thrower(i); thrower throws on
 * odd rounds, so neither frame returns and the unwinder walks through
 * both.  libdprobe must put the real return addresses back before it does
 * (the throw would otherwise end in std::terminate), count the dropped
 * returns as missed, and keep tracing the calls that return.  Also a
 * catch inside a probed function (whose own return is still reported:
 * the catch hijacks it again), and a rethrow from a catch (the frame
 * hijacked again at the catch is put back again for the rethrow).
 */
#include <stdexcept>

#include <dprobe/kprobes.h>

#include "agent_test.h"

static volatile long sink;

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

__attribute__((noipa)) long catcher(long i)
{
	try {
		return middle(i);
	} catch (const std::runtime_error &) {
		return -1;
	}
}

__attribute__((noipa)) long rethrower(long i)
{
	try {
		return middle(i);
	} catch (...) {
		sink = 7;
		throw;
	}
}

static int rets;
static long last;

static int on_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	(void)ri;
	rets++;
	last = (long)regs_return_value(regs);
	return 0;
}

int main()
{
	struct kretprobe rt = {}, rm = {}, rc = {}, rr = {};
	long total = 0;
	int caught = 0;

	rt.kp.symbol_name = "_Z7throwerl";
	rm.kp.symbol_name = "_Z6middlel";
	rc.kp.symbol_name = "_Z7catcherl";
	rr.kp.symbol_name = "_Z9rethrowerl";
	rt.handler = rm.handler = rc.handler = rr.handler = on_ret;

	BEGIN("throw across two kretprobe'd frames, caught in main");
	CHECK_EQ(register_kretprobe(&rt), 0);
	CHECK_EQ(register_kretprobe(&rm), 0);
	for (long i = 0; i < 6; i++) {
		try {
			total += middle(i);
		} catch (const std::runtime_error &e) {
			caught++;
		}
	}
	CHECK_EQ(total, 0 + 1 + 20 + 1 + 40 + 1);
	CHECK_EQ(caught, 3);
	/* even rounds: both returns; odd rounds: both dropped */
	CHECK_EQ(rets, 6);
	CHECK_EQ(rt.nmissed + rm.nmissed, 6);
	rets = 0;
	CHECK_EQ(middle(2), 21);
	CHECK_EQ(rets, 2);
	CHECK_EQ(last, 21);
	END();

	BEGIN("a catch inside a kretprobe'd function: its own return reported");
	CHECK_EQ(register_kretprobe(&rc), 0);
	rets = 0;
	/* middle's and thrower's returns are dropped; the catch gives
	 * catcher's back its return probe (__cxa_begin_catch) */
	CHECK_EQ(catcher(3), -1);
	CHECK_EQ(rets, 1);
	CHECK_EQ(last, -1);
	CHECK_EQ(catcher(4), 41);
	CHECK_EQ(rets, 4);
	CHECK_EQ(last, 41);
	END();

	BEGIN("a rethrow through a kretprobe'd function");
	CHECK_EQ(register_kretprobe(&rr), 0);
	caught = 0;
	try {
		rethrower(5);
	} catch (const std::runtime_error &) {
		caught = 1;
	}
	CHECK_EQ(caught, 1);
	CHECK_EQ(sink, 7);
	rets = 0;
	CHECK_EQ(rethrower(6), 61);
	CHECK_EQ(rets, 3);
	END();

	unregister_kretprobe(&rt);
	unregister_kretprobe(&rm);
	unregister_kretprobe(&rc);
	unregister_kretprobe(&rr);
	return t_exit();
}
