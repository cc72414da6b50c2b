#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Builds the e2e programs before the suites run (`make test-build`), so
# that the stages running the cases at once (run.sh on each engine, in a
# time namespace) do not each compile the same programs.
#
#   sh tests/e2e/progs.sh DPROBE [COPIES...]
#
# Every program a case names (prog=, libs=, with its variant=, at each of
# its levels=) and every one it builds by name (`build_prog NAME
# [VARIANT]`) is built into $(dirname DPROBE)/tests/e2e (or $E2E_BUILD)
# by lib.sh's build_prog_real, as run.sh builds it: only what is missing
# or older than its source.  (A case with a build_prog of its own builds
# that program itself.)  Each COPIES folder then gets a copy of every
# program, the folder layout kept: the stages that put the kernel's
# uprobes on the programs (kernel-ref.sh, kernel-engine.sh) run copies of
# their own, as a uprobe patches the file's page cache for every process
# that runs it.  A copy is a new file written under a temporary name and
# renamed, made only where it is missing or older than the program.
set -u
[ $# -ge 1 ] || { echo "usage: $0 DPROBE [COPIES...]" >&2; exit 2; }
E2E=$(cd "$(dirname "$0")" && pwd)
case $1 in
/*) DPROBE=$1 ;;
*) DPROBE=$(pwd)/$1 ;;
esac
shift
BUILD=${E2E_BUILD:-$(cd "$(dirname "$DPROBE")" && pwd)/tests/e2e}
LEVEL=O2
export E2E DPROBE BUILD LEVEL
# shellcheck source=tests/e2e/lib.sh
. "$E2E/lib.sh"

# "LEVEL NAME VARIANT" lines: what the cases build
wanted() {
	awk '
	function flush(   n, i, k) {
		if (own || FNR == 0)
			return
		n = split(lv, L, " ")
		for (i = 1; i <= n; i++) {
			if (p != "") print L[i], p, v
			if (l != "") print L[i], l, v
			for (k = 1; k <= nb; k++)
				print L[i], B[k] (index(B[k], " ") ? "" : " ")
		}
	}
	FNR == 1 { if (NR > 1) flush(); p = l = v = ""; lv = "O0 O2"; own = nb = 0 }
	/^build_prog\(\)/ { own = 1 }
	/^(prog|libs|variant|levels)=/ {
		k = $0; sub(/=.*/, "", k)
		val = $0; sub(/^[^=]*=/, "", val); sub(/#.*/, "", val)
		gsub(/["\047]/, "", val); sub(/[ \t]+$/, "", val)
		if (k == "prog") p = val; else if (k == "libs") l = val
		else if (k == "variant") v = val; else lv = val
	}
	{
		line = $0
		while (match(line, /build_prog [a-z][a-z0-9_]*( [a-z]+)?\)/)) {
			b = substr(line, RSTART + 11, RLENGTH - 12)
			B[++nb] = b
			line = substr(line, RSTART + RLENGTH)
		}
	}
	END { if (NR > 0) flush() }' "$E2E"/cases/*.sh | sort -u
}

mkdir -p "$BUILD" || exit 1
rc=0
wanted >"$BUILD/want.$$" || rc=1
while read -r LEVEL name variant; do
	build_prog_real "$name" "$variant" >/dev/null ||
		{ echo "e2e: cannot build $name ($LEVEL${variant:+ $variant})" >&2; rc=1; }
done <"$BUILD/want.$$"
rm -f "$BUILD/want.$$"

for copies in "$@"; do
	for d in "$BUILD"/O*; do
		[ -d "$d" ] || continue
		to=$copies/$(basename "$d")
		mkdir -p "$to" || { rc=1; continue; }
		for f in "$d"/*; do
			[ -f "$f" ] || continue
			case $f in *.log | *.log.* | *.[0-9]*) continue ;; esac
			c=$to/$(basename "$f")
			[ -e "$c" ] && ! [ "$f" -nt "$c" ] && continue
			cp -p "$f" "$c.$$" && mv -f "$c.$$" "$c" || rc=1
		done
	done
done
exit $rc
