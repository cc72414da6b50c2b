#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Cost of one ring buffer record (src/ring/): builds bench/ring_bench.c and
# runs it.  Prints a Markdown table (see the comment in ring_bench.c).
#
#   sh bench/ring.sh [N [REPEATS [RING_KIB]]]    (default 1e8 5 1024)
#
# First checks that the producer side (src/ring/ring_api.h) compiled the
# way the in-process agent builds it (-O2 -mgeneral-regs-only) calls
# nothing: no libc function, no helper, so a probe handler using it cannot
# reach a probed function or touch SIMD state.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$here/..
CC=${CC:-cc}
out=${BENCH_OUT:-$top/build/bench}
mkdir -p "$out"

cat >"$out/ring_api_check.c" <<'C'
#include "ring/ring_api.h"
struct dp_ring *claim(struct dp_ring_set_hdr *s) { return dp_ring_claim(s, 1, 2); }
void release(struct dp_ring *r) { dp_ring_release(r); }
int write_rec(struct dp_ring *r, const void *p, unsigned n)
{
	return dp_ring_write(r, 1, 2, p, n);
}
int rec(struct dp_ring *r, unsigned long a, unsigned long b)
{
	unsigned long *p = dp_ring_reserve(r, 16, a, 0);

	if (!p)
		return -1;
	p[0] = a;
	p[1] = b;
	if (a == b)
		dp_ring_discard(r, p);
	else
		dp_ring_commit(r);
	return 0;
}
C
$CC -std=gnu17 -O2 -mgeneral-regs-only -fno-stack-protector -Wall -Wextra \
	-Werror -I"$top/src" -c "$out/ring_api_check.c" -o "$out/ring_api_check.o"
undef=$(nm -u "$out/ring_api_check.o")
if [ -n "$undef" ]; then
	echo "ring_api.h calls out of line:" >&2
	echo "$undef" >&2
	exit 1
fi
echo "producer path (ring_api.h, -mgeneral-regs-only): no calls out, OK"
echo

$CC -std=gnu17 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -I"$top/src" \
	-o "$out/ring_bench" "$here/ring_bench.c" "$top/src/ring/ring.c" -lpthread
"$out/ring_bench" "$@"
