/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tracepoints of tests/agent/t_tracepoint.c (and of its
 * -DDP_TP_NO_JUMP_LABEL build): every field kind and eight arguments of
 * every integer size, a two-argument one for the concurrency test, and
 * one declared with the kernel-style split (defined in the .c file).
 */
#ifndef DPROBE_TESTS_TP_TEST_EVENTS_H
#define DPROBE_TESTS_TP_TEST_EVENTS_H

#include <stdbool.h>
#include <stdint.h>

#include <dprobe/tracepoint.h>

DP_TRACE_EVENT(dptest, tp_values,
	TP_PROTO(int id, const char *path, const unsigned char *key, long big,
		 unsigned short small, signed char c, void *ptr, bool flag),
	TP_ARGS(id, path, key, big, small, c, ptr, flag),
	TP_FIELDS(tp_field(int, id) tp_string(path)
		  tp_array(unsigned char, key, 16) tp_field(long, big)
		  tp_field(unsigned short, small) tp_field(signed char, c)
		  tp_field(uintptr_t, ptr) tp_field(bool, flag)))

DP_TRACE_EVENT(dptest, tp_simple,
	TP_PROTO(int a, long b),
	TP_ARGS(a, b),
	TP_FIELDS(tp_field(int, a) tp_field(long, b)))

DP_DECLARE_TRACE(dptest, tp_split,
	TP_PROTO(const uint32_t *words, uint64_t n),
	TP_ARGS(words, n))

#endif
