#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Differential test against the live kernel's uprobe_events.
#
#   sh tests/kernel/run.sh DPROBE          compare DPROBE with the kernel
#   sh tests/kernel/run.sh --kernel-only   only show what the kernel does
#
# Every line of corpus.txt is written to uprobe_events (one write() each) and
# given to `DPROBE check --json --no-elf -f`; every line of formats.txt is
# created in the kernel and its events/GRP/EVENT/format compared with
# `DPROBE format --no-elf`.  Needs root and tracefs; skips otherwise.
# Env: DPROBE_RESULTS (file to append "kernel-diff P F S" to), KDIFF_KEEP
# (directory to copy the expanded corpus and both sides' results to).
set -u

here=$(cd "$(dirname "$0")" && pwd)
kernel_only=0
# shellcheck source=tests/lib.sh
. "$here/../lib.sh"
t_begin kernel-diff
T_SELF="kernel differential"

if [ $# -ne 1 ]; then
	echo "usage: $0 DPROBE | --kernel-only" >&2
	exit 2
fi
if [ "$1" = --kernel-only ]; then
	kernel_only=1
else
	case $1 in
	/*) dprobe=$1 ;;
	*) dprobe=$(pwd)/$1 ;;
	esac
	if [ ! -x "$dprobe" ]; then
		echo "kernel-diff: $dprobe is not an executable" >&2
		t_add 0 1 0
		t_end
		exit 1
	fi
fi

t_require root tracefs gcc nm readelf flock

# One run at a time: runs share the dpk* group names.
exec 9>/tmp/dpk-kdiff.lock
flock -w 900 9 || t_skip_all "another run holds /tmp/dpk-kdiff.lock"

# (the prefix is what the leftovers of an earlier run are found by)
t_scratch dpk-kdiff
tmp=$T_DIR
kdiff=$tmp/kdiff

# Before the scratch directory goes: the kernel's events of this run,
# and a copy of the results for $KDIFF_KEEP.
cleanup() {
	if [ -x "$kdiff" ]; then
		"$kdiff" cleanup "$tmp/"
	fi
	if [ -n "${KDIFF_KEEP:-}" ]; then
		mkdir -p "$KDIFF_KEEP" &&
			cp "$tmp"/*.exp "$tmp"/*.jsonl "$KDIFF_KEEP"/ 2>/dev/null
	fi
}
T_AT_EXIT=cleanup

gcc -std=gnu17 -O1 -D_GNU_SOURCE -o "$kdiff" "$here/kdiff.c" ||
	t_skip_all "cannot build kdiff"
# Leftovers of an interrupted earlier run: under the lock, every other
# /tmp/dpk-kdiff.XXXXXX is stale.
"$kdiff" cleanup /tmp/dpk-kdiff. ||
	t_skip_all "cannot remove the leftovers of an earlier run"
for old in /tmp/dpk-kdiff.??????; do
	[ "$old" != "$tmp" ] && [ -d "$old" ] && rm -rf "$old"
done

# ---- targets ----------------------------------------------------------
src=$here/data/target.c
gcc -O0 -fno-pie -no-pie -o "$tmp/dpktarget" "$src" ||
	t_skip_all "cannot build the non-PIE target"
gcc -O0 -fpie -pie -o "$tmp/dpk-pie.v2" "$src" ||
	t_skip_all "cannot build the PIE target"
cp "$tmp/dpktarget" "$tmp/dpk+plus"
cp "$tmp/dpktarget" "$tmp/.dpkhidden"
long=dpklongname
while [ ${#long} -lt 70 ]; do long=${long}x; done
cp "$tmp/dpktarget" "$tmp/$long"
ln -s dpktarget "$tmp/dpklink"
ln -s dpkloop "$tmp/dpkloop"
mkdir "$tmp/dpkdir"
mkfifo "$tmp/dpkfifo"
echo "not an ELF file" >"$tmp/dpk.txt"

# File offset of a symbol: vaddr - segment vaddr + segment offset.
file_offset() {
	va=$(nm "$1" | awk -v s="$2" '$3 == s { print $1; exit }')
	[ -n "$va" ] || return 1
	readelf -lW "$1" | awk '$1 == "LOAD" { print $2, $3, $6 }' |
	while read -r off vaddr memsz; do
		if [ $((0x$va >= vaddr && 0x$va < vaddr + memsz)) = 1 ]; then
			echo $((0x$va - vaddr + off))
			break
		fi
	done
}

vars="TARGET=$tmp/dpktarget PIE=$tmp/dpk-pie.v2 DIR=$tmp DIRNAME=${tmp##*/}"
vars="$vars LINK=$tmp/dpklink PLUS=$tmp/dpk+plus HIDDEN=$tmp/.dpkhidden"
vars="$vars LONG=$tmp/$long SUBDIR=$tmp/dpkdir FIFO=$tmp/dpkfifo"
vars="$vars TXT=$tmp/dpk.txt NOFILE=$tmp/dpk-no-such-file"
for sym in probe_me retnull leaf main dpk_global dpk_semaphore \
	dpk_semaphore2; do
	off=$(file_offset "$tmp/dpktarget" $sym) ||
		t_skip_all "no symbol $sym in the target"
	poff=$(file_offset "$tmp/dpk-pie.v2" $sym) ||
		t_skip_all "no symbol $sym in the PIE target"
	va=$(nm "$tmp/dpktarget" | awk -v s=$sym '$3 == s { print $1; exit }')
	vars="$vars OFF_$sym=$(printf 0x%x "$off") DOFF_$sym=$off"
	vars="$vars OOFF_$sym=$(printf 0%o "$off") POFF_$sym=$(printf 0x%x "$poff")"
	vars="$vars OFF1_$sym=$(printf 0x%x $((off + 1))) VA_$sym=0x$va"
	vars="$vars LOFF_$sym=$(printf 0x%016x "$off")"
done

# shellcheck disable=SC2086  # $vars is a list of NAME=VALUE words
"$kdiff" expand $vars <"$here/corpus.txt" >"$tmp/corpus.exp" ||
	t_skip_all "cannot expand corpus.txt"
# shellcheck disable=SC2086
"$kdiff" expand $vars <"$here/formats.txt" >"$tmp/formats.exp" ||
	t_skip_all "cannot expand formats.txt"

# Relative paths in the corpus are relative to the target directory, for
# the kernel and dprobe alike.
cd "$tmp" || exit 2

# ---- the kernel -------------------------------------------------------
"$kdiff" kernel corpus.exp kernel.jsonl || exit 2
"$kdiff" cleanup "$tmp/" || exit 2
if [ $kernel_only = 1 ]; then
	"$kdiff" show kernel.jsonl
	"$kdiff" formats - formats.exp /dev/null
	exit 0
fi

# ---- dprobe -----------------------------------------------------------
: >counts
"$dprobe" check --json --no-elf -f corpus.exp >dprobe.jsonl 2>dprobe.err
rc=$?
if [ $rc -gt 1 ]; then
	echo "kernel-diff: dprobe check exited with $rc:" >&2
	head -20 dprobe.err >&2
fi
"$kdiff" compare corpus.exp kernel.jsonl dprobe.jsonl counts
"$kdiff" formats "$dprobe" formats.exp counts

while read -r p f; do
	t_add "$p" "$f" 0
done <counts
# A failed cleanup is a failure too.
if ! "$kdiff" cleanup "$tmp/"; then
	t_add 0 1 0
fi
t_end
