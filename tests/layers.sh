#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The module boundaries of docs/architecture.md, checked on the sources:
# every `#include "DIR/..."` in src/MODULE must name a folder MODULE may
# use.  A module always uses itself.  One case per module.
#
#   sh tests/layers.sh
set -u
cd "$(dirname "$0")/.." || exit 2
. tests/lib.sh
t_begin layers

# MODULE: the folders it may include (besides its own).  The arrows run
# one way: util <- arch <- lang <- event <- output; sym, ring below the
# engines; the CLI and the mount reach the engines only through
# engine/engine.h (checked apart, below).
allowed() {
	case $1 in
	util)		echo "" ;;
	arch|arch/*)	echo "util arch" ;;
	ring)		echo "util" ;;
	lang)		echo "util arch" ;;
	event)		echo "util arch lang" ;;
	record)		echo "util arch lang event" ;;
	output)		echo "util arch lang event record" ;;
	sym)		echo "util arch lang event" ;;
	engine)		echo "util arch lang event ring sym engine/ptrace engine/inproc engine/kernel" ;;
	engine/ptrace)	echo "util arch lang event ring sym engine" ;;
	engine/kernel)	echo "util arch lang event ring sym engine" ;;
	engine/inproc)	echo "util arch lang event ring sym engine engine/agent engine/ptrace" ;;
	# the agent runs inside the target: only what it compiles in itself
	engine/agent)	echo "util arch lang event ring sym dprobe" ;;
	fs)		echo "util arch lang event record output ring sym engine" ;;
	cli)		echo "util arch lang event record output ring sym engine fs" ;;
	*)		echo "?" ;;
	esac
}

modules=$(find src -name '*.[chS]' | sed -E 's|^src/||; s|/[^/]*$||' | sort -u)
for m in $modules; do
	ok=$(allowed "$m")
	if [ "$ok" = "?" ]; then
		t_fail "$m" "a folder docs/architecture.md does not describe"
		continue
	fi
	bad=$(grep -HnoE '#include "[a-z0-9_]+(/[a-z0-9_]+)*/[a-z0-9_.-]+"' \
			src/"$m"/*.[chS] 2>/dev/null |
		awk -v self="$m" -v ok="$ok" -F: '
		BEGIN { n = split(ok, a, " "); for (i = 1; i <= n; i++) may[a[i]] = 1 }
		{
			inc = $3; sub(/^#include "/, "", inc); sub(/"$/, "", inc)
			dir = inc; sub(/\/[^\/]*$/, "", dir)
			top = dir; sub(/\/.*/, "", top)
			if (dir == self || dir in may || top in may && top != "engine")
				next
			# engine/engine.h is the engine folder itself
			if (dir == "engine" && "engine" in may)
				next
			print "  " $1 ":" $2 ": " inc
		}')
	if [ -n "$bad" ]; then
		t_fail "$m" "includes what it may not:"
		echo "$bad"
	else
		t_pass "$m"
	fi
done

t_end
