#!/bin/sh
# The cost of a jump-optimised probe's detour against the issue's floor
# (a function-pointer hook writing the same 32-byte record to a
# thread-local ring).  Usage: sh bench/opt.sh [N] [REPEATS]
set -eu
cd "$(dirname "$0")/.."
out=$(mktemp /tmp/dprobe-opt-bench.XXXXXX)
trap 'rm -f "$out"' EXIT
cc -O2 -D_GNU_SOURCE -Iinclude -Isrc -o "$out" bench/opt_bench.c \
	src/arch/x86_64/optprobe.c src/arch/x86_64/insn.c \
	src/arch/x86_64/decode.c src/arch/x86_64/regs.c \
	src/arch/x86_64/emit.c -lZydis
"$out" "${1:-20000000}" "${2:-5}"
