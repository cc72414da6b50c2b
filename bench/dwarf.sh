#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# How long translating named probes takes against a large debug file:
# 1,000 definitions on libc's functions, each naming the function's first
# parameter (p:dN libc.so.6:FUNC PARAM), applied by `dprobe check -x
# libc.so.6 -f FILE`, against the same 1,000 places without arguments in
# the same run (what opening libc and resolving the places costs without
# the debug information).  The debug file is libc6-dbg's.  Median of
# BENCH_REPEATS (default 5) runs of each.
#
#   sh bench/dwarf.sh [DPROBE]        (DPROBE default: build/dprobe)
#
# Target (issue 14): the 1,000 named definitions in at most 1 s.
set -u

here=$(cd "$(dirname "$0")" && pwd)
DPROBE=${1:-$here/../build/dprobe}
REPEATS=${BENCH_REPEATS:-5}
N=${BENCH_DEFS:-1000}
LIBC=$(ldd /bin/true | awk '/libc.so.6/ { print $3 }')
tmp=$(mktemp -d /tmp/dpdwarf.XXXXXX) || exit 2
trap 'rm -rf "$tmp"' EXIT

if ! "$DPROBE" list -x "$LIBC" -v >"$tmp/protos" 2>"$tmp/err" ||
   [ ! -s "$tmp/protos" ]; then
	echo "bench: no debug information for $LIBC (install libc6-dbg): $(cat "$tmp/err")" >&2
	exit 2
fi
# "TYPE NAME(TYPE P, ...)": functions with a named first parameter, once
awk -v n="$N" '
	match($0, /[A-Za-z_][A-Za-z0-9_]*\(/) {
		fn = substr($0, RSTART, RLENGTH - 1)
		rest = substr($0, RSTART + RLENGTH)
		if (rest ~ /^void\)/ || seen[fn]++) next
		split(rest, a, /[,)]/)
		k = split(a[1], w, /[ *&]+/)
		p = w[k]
		if (p !~ /^[A-Za-z_][A-Za-z0-9_]*$/ || p == fn) next
		printf "p:d%d libc.so.6:%s %s\n", ++m, fn, p
		if (m == n) exit
	}' "$tmp/protos" >"$tmp/named"
sed 's/ [^ ]*$//' "$tmp/named" >"$tmp/plain"

# run FILE -> ms for one `dprobe check` of FILE; the counts in $tmp/n.*
run() {
	t0=$(date +%s%N)
	"$DPROBE" check -x "$LIBC" -f "$1" >"$tmp/out" 2>&1
	t1=$(date +%s%N)
	grep -c '^p:' "$tmp/out" >"$tmp/n.ok"
	grep -c 'error:' "$tmp/out" >"$tmp/n.bad"
	echo $(((t1 - t0) / 1000000))
}

median() {
	sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

for f in plain named; do
	: >"$tmp/ms.$f"
	r=0
	while [ $r -lt "$REPEATS" ]; do
		run "$tmp/$f" >>"$tmp/ms.$f"
		r=$((r + 1))
	done
	eval "ok_$f=\$(cat \$tmp/n.ok) bad_$f=\$(cat \$tmp/n.bad)"
done
# shellcheck disable=SC2154  # set by the eval above
{
	echo "machine: $(nproc) CPUs, $(uname -r); $REPEATS repeats; $LIBC"
	echo "| case | definitions | accepted | median ms |"
	echo "| --- | ---: | ---: | ---: |"
	echo "| places only (p:dN libc.so.6:FUNC) | $(wc -l <"$tmp/plain") | $ok_plain | $(median <"$tmp/ms.plain") |"
	echo "| by name (p:dN libc.so.6:FUNC PARAM) | $(wc -l <"$tmp/named") | $ok_named | $(median <"$tmp/ms.named") |"
}
