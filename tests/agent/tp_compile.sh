#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The compile-time checks of include/dprobe/tracepoint.h: each snippet is
# a tracepoint definition (or a use) that must not compile, with the
# message the header gives; one that must compile comes first.
#
#   sh tests/agent/tp_compile.sh [CC]
#
# TAP lines for tests/agent/run.sh.
set -u
here=$(cd "$(dirname "$0")" && pwd)
CC=${1:-${CC:-cc}}
tmp=$(mktemp -d /tmp/dprobe-tpcc.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
n=0

compile() {	# file -> status, messages in $tmp/err
	$CC -std=gnu17 -Wall -Wextra -Werror -D_GNU_SOURCE \
		-I"$here/../../include" -fsyntax-only "$1" 2>"$tmp/err"
}

# case NAME EXPECTED-MESSAGE PROTO ARGS FIELDS [EXTRA-CODE]
case_fails() {
	n=$((n + 1))
	cat >"$tmp/c.c" <<EOC
#include <stdint.h>
struct pair { int a, b; };
#define DP_CREATE_TRACE_POINTS
#include <dprobe/tracepoint.h>
DP_TRACE_EVENT(grp, ev, TP_PROTO($3), TP_ARGS($4), TP_FIELDS($5))
${6:-}
EOC
	if compile "$tmp/c.c"; then
		echo "not ok $n - $1: compiles"
	elif grep -q -- "$2" "$tmp/err"; then
		echo "ok $n - $1: refused ($2)"
	else
		echo "not ok $n - $1: refused without \"$2\""
		sed 's/^/# /' "$tmp/err" | head -n 5
	fi
}

n=1
cat >"$tmp/ok.c" <<'EOC'
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
enum color { RED };
#define DP_CREATE_TRACE_POINTS
#include <dprobe/tracepoint.h>
DP_TRACE_EVENT(grp, ev,
	TP_PROTO(bool b, char c, enum color e, uint64_t u, const void *p,
		 char *s, const int16_t *w, unsigned long long x),
	TP_ARGS(b, c, e, u, p, s, w, x),
	TP_FIELDS(tp_field(bool, b) tp_field(char, c) tp_field(enum color, e)
		  tp_field(uint64_t, u) tp_field(uintptr_t, p) tp_string(s)
		  tp_array(int16_t, w, 3) tp_field(unsigned long long, x)))
DP_TRACE_EVENT(grp, pids, TP_PROTO(pid_t pid, int tid), TP_ARGS(pid, tid),
	TP_FIELDS(tp_pid(pid) tp_pid(tid)))
static void probe(void *data, bool b, char c, enum color e, uint64_t u,
		  const void *p, char *s, const int16_t *w,
		  unsigned long long x)
{
	(void)data; (void)b; (void)c; (void)e; (void)u; (void)p; (void)s;
	(void)w; (void)x;
}
int use(void);
int use(void)
{
	trace_ev(1, 'c', RED, 2, 0, "s", 0, 3);
	trace_pids(1, 2);
	return register_trace_ev(probe, 0) + trace_ev_enabled();
}
EOC
if compile "$tmp/ok.c"; then
	echo "ok 1 - every kind of argument and field compiles"
else
	echo "not ok 1 - every kind of argument and field compiles"
	sed 's/^/# /' "$tmp/err" | head -n 8
fi

case_fails "a field missing" "must describe every argument" \
	"int a, long b" "a, b" "tp_field(int, a)"
case_fails "a field too many" "must describe every argument" \
	"int a" "a" "tp_field(int, a) tp_field(int, a)"
case_fails "fields out of order" "is not argument 0" \
	"int a, long b" "a, b" "tp_field(long, b) tp_field(int, a)"
case_fails "a field named after no argument" "is not argument 1" \
	"int a, long b" "a, b" "tp_field(int, a) tp_field(long, c)"
case_fails "an integer field of another size" "the argument has another size" \
	"int a" "a" "tp_field(long, a)"
case_fails "a pid of another size" "not a 4-byte signed integer" \
	"long a" "a" "tp_pid(a)"
case_fails "an unsigned pid" "not a 4-byte signed integer" \
	"unsigned a" "a" "tp_pid(a)"
case_fails "a float argument" "not an integer or a pointer" \
	"double d" "d" "tp_field(uint64_t, d)"
case_fails "a struct argument" "not an integer or a pointer" \
	"struct pair s" "s" "tp_field(uint64_t, s)"
case_fails "a string that is not char *" "not a pointer to char" \
	"const int *s" "s" "tp_string(s)"
case_fails "an array of another type" "not a pointer to" \
	"const uint16_t *w" "w" "tp_array(uint32_t, w, 2)"
case_fails "an array of no element" "count out of range" \
	"const uint16_t *w" "w" "tp_array(uint16_t, w, 0)"
case_fails "an array longer than an event records" "count out of range" \
	"const uint16_t *w" "w" "tp_array(uint16_t, w, 65)"
case_fails "nine arguments" "too many arguments" \
	"int a, int b, int c, int d, int e, int f, int g, int h, int i" \
	"a, b, c, d, e, f, g, h, i" \
	"tp_field(int, a) tp_field(int, b) tp_field(int, c) tp_field(int, d)
	 tp_field(int, e) tp_field(int, f) tp_field(int, g) tp_field(int, h)
	 tp_field(int, i)"
case_fails "a probe of the wrong type" "incompatible" \
	"int a" "a" "tp_field(int, a)" \
	"static void p(void *d, long a) { (void)d; (void)a; }
int use(void); int use(void) { return register_trace_ev(p, 0); }"
echo "1..$n"
