#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# `make install` and `make uninstall` (mk/install.mk), checked on what
# they write:
#
#   sh tests/install/run.sh O        (O: the build directory, e.g. build)
#
# Installs with DESTDIR=<scratch> PREFIX=/usr, then: the installed dprobe
# traces the bundled example on the default (in-process) engine with the
# installed libdprobe.so, also from a copy of the tree elsewhere (the
# target's /proc/PID/maps must show that copy's library, never the build
# tree's); every manual page renders and carries every option of the
# command's --help; pkg-config gives flags with which a program using
# tracepoint.h compiles, links and runs; the bash completion completes
# commands, options, --engine values and functions of the target;
# uninstall leaves no file behind.  One PASS/FAIL/SKIP line each, then
# "install: N passed, N failed, N skipped"; with $DPROBE_RESULTS set,
# "install P F S" is appended to it.  Exit status 1 if anything failed.
set -u

if [ $# -ne 1 ]; then
	echo "usage: $0 BUILD-DIR" >&2
	exit 2
fi
top=$(cd "$(dirname "$0")/../.." && pwd)
O=$(cd "$1" && pwd) || exit 2
unset DPROBE_AGENT DPROBE_ENGINE
export LC_ALL=C

# shellcheck source=tests/lib.sh
. "$top/tests/lib.sh"
t_begin install
ok() { t_pass "$1"; }
ko() { t_fail "$1"; }
sk() { t_skip "$1"; }

t_scratch dpinst
W=$T_DIR
R=				# agent_override's root-only directory
# shellcheck disable=SC2016  # expanded at exit
T_AT_EXIT='rm -rf ${R:+"$R"}'
D=$W/dest			# DESTDIR
U=$D/usr			# what PREFIX=/usr became
mk() { make -C "$top" --no-print-directory O="$O" DESTDIR="$D" PREFIX=/usr "$@"; }

# ---- install -----------------------------------------------------------------
if ! mk install >"$W/install.log" 2>&1; then
	ko "make install DESTDIR=... PREFIX=/usr failed: $(tail -n 3 "$W/install.log")"
	t_end
	exit 1
fi
cmds=$("$U/bin/dprobe" help --commands | cut -f1)
missing=
for f in bin/dprobe lib/dprobe/libdprobe.so include/dprobe/kprobes.h \
	 include/dprobe/tracepoint.h lib/pkgconfig/dprobe.pc \
	 share/bash-completion/completions/dprobe share/man/man1/dprobe.1 \
	 share/doc/dprobe/README.md $(for c in $cmds; do
		echo "share/man/man1/dprobe-$c.1"; done); do
	[ -f "$U/$f" ] || missing="$missing $f"
done
if [ -z "$cmds" ]; then
	ko "install: the installed dprobe lists no command"
elif [ -n "$missing" ]; then
	ko "install: missing under DESTDIR/usr:$missing"
else
	ok "install: dprobe, libdprobe.so, headers, dprobe.pc, $(echo "$cmds" | wc -l) + 1 pages, completion"
fi

# ---- tracing with the installed library ---------------------------------------
# Events of a trace, without what changes between runs (pid, cpu, time).
events() { sed -n 's/^.* [0-9]*\.[0-9]\{6\}: //p' "$1"; }

# trace_example NAME DPROBE: the seed's probes on examples/work, the
# default engine, which must be the in-process one (its --profile says
# so); its events must be the build tree's dprobe's.
trace_example() {
	"$2" trace -e @"$top/examples/work.probes" --profile -o "$W/$1.out" \
		-- "$O/examples/work" >"$W/$1.err" 2>&1
	rc=$?
	events "$W/$1.out" >"$W/$1.events"
	if [ $rc -ne 0 ]; then
		ko "$1: dprobe trace failed: $(tail -n 2 "$W/$1.err")"
	elif ! grep -q '^# probes (in-process engine)' "$W/$1.err"; then
		ko "$1: not the in-process engine: $(grep engine "$W/$1.err")"
	elif [ "$(grep -c '^myprobe: ' "$W/$1.events")" != 3 ]; then
		ko "$1: expected 3 myprobe events, got: $(cat "$W/$1.out")"
	elif ! events "$W/ref.out" | diff - "$W/$1.events" >"$W/$1.diff"; then
		ko "$1: events differ from the build tree's dprobe: $(head -n 5 "$W/$1.diff")"
	else
		ok "$1: traces examples/work on the in-process engine"
	fi
}

# maps_check NAME DPROBE LIB: a traced command's own maps show LIB (the
# agent of that installed tree) and nothing else of the build tree.
maps_check() {
	if ! "$2" trace --engine agent -e 'p:w libc.so.6:write' -o "$W/$1.ev" \
	     -- cat /proc/self/maps >"$W/$1.maps" 2>"$W/$1.err"; then
		ko "$1: dprobe trace --engine agent failed: $(tail -n 2 "$W/$1.err")"
	elif ! grep -q " $3\$" "$W/$1.maps"; then
		ko "$1: the target does not map $3: $(grep dprobe "$W/$1.maps" | head -n 2)"
	elif grep " $O/" "$W/$1.maps" | grep -qv " $3\$"; then
		ko "$1: the target maps the build tree's $(grep " $O/" "$W/$1.maps" | head -n 1)"
	elif ! grep -q '^ *cat-.* w: ' "$W/$1.ev"; then
		ko "$1: no event from the probe on write: $(head -n 3 "$W/$1.ev")"
	else
		ok "$1: the target maps $3"
	fi
}

# root_only PATH: PATH and every directory above it are root's alone.
root_only() {
	p=$1
	while :; do
		# shellcheck disable=SC2046  # two words: uid, mode
		set -- $(stat -L -c '%u %A' "$p") || return 1
		[ "$1" = 0 ] || return 1
		case $2 in ?????w???? | ????????w?) return 1 ;; esac
		[ "$p" = / ] && return 0
		p=$(dirname "$p")
	done
}

# agent_refused NAME VALUE REASON: DPROBE_AGENT=VALUE is an error (exit
# status 1) naming exactly REASON, and nothing of VALUE is loaded.
agent_refused() {
	DPROBE_AGENT=$2 "$U/bin/dprobe" trace -e 'p:w libc.so.6:write' \
		-o /dev/null -- cat /proc/self/maps >"$W/$1.maps" 2>"$W/$1.err"
	rc=$?
	if grep -qF " $2" "$W/$1.maps"; then
		ko "DPROBE_AGENT: $1: the library was loaded"
	elif [ "$rc" != 1 ]; then
		ko "DPROBE_AGENT: $1: exit status $rc, not 1: $(head -n 2 "$W/$1.err")"
	elif [ "$(cat "$W/$1.err")" != "dprobe: \$DPROBE_AGENT ($2) is refused: $3; unset it to use dprobe's own copy" ]; then
		ko "DPROBE_AGENT: $1: not the reason '$3': $(head -n 2 "$W/$1.err")"
	else
		ok "DPROBE_AGENT: $1: refused ($3), an error"
	fi
}

# $DPROBE_AGENT: never a library an unprivileged user could have put
# there; a root-owned one in root-only directories is taken.  Each case
# lies in a directory only root can use (0700, with root-only
# directories above it: not /tmp, 1777), so the one thing it changes is
# the only reason to refuse it.
agent_override() {
	if [ "$(id -u)" != 0 ]; then
		sk "DPROBE_AGENT: not root: any copy a non-root user can make is refused as not root's, whatever else is wrong with it"
		return
	fi
	R=
	for parent in "$O" /run /root; do
		root_only "$parent" &&
			R=$(mktemp -d "$parent/dpagent.XXXXXX") && break
	done
	if [ -z "$R" ] || ! root_only "$R"; then
		sk "DPROBE_AGENT: no root-only directory to test in (not $O, /run nor /root)"
		[ -n "$R" ] && rm -rf "$R"
		return
	fi
	lib=$U/lib/dprobe/libdprobe.so
	mkdir "$R/ok" "$R/evil" "$R/gw" "$R/user" "$R/a b"
	for d in ok evil gw user "a b"; do
		cp "$lib" "$R/$d/"
		chmod 0755 "$R/$d"
		chmod 0644 "$R/$d/libdprobe.so"
	done
	chmod 0777 "$R/evil"
	chmod 0666 "$R/gw/libdprobe.so"
	chown 65534 "$R/user/libdprobe.so"
	agent_refused "world-writable directory" "$R/evil/libdprobe.so" \
		"a directory above it is not root's alone"
	agent_refused "file others can write" "$R/gw/libdprobe.so" \
		"it is not owned by root, or group or others can write it"
	agent_refused "file not root's" "$R/user/libdprobe.so" \
		"it is not owned by root, or group or others can write it"
	agent_refused "relative path" "ok/libdprobe.so" \
		"it is not an absolute path"
	agent_refused "a blank in the path" "$R/a b/libdprobe.so" \
		"LD_PRELOAD cannot hold a path with a colon or a blank"
	agent_refused "no such file" "$R/none/libdprobe.so" \
		"it cannot be resolved"
	DPROBE_AGENT=$R/ok/libdprobe.so maps_check "DPROBE_AGENT" \
		"$U/bin/dprobe" "$R/ok/libdprobe.so" 2>/dev/null
	rm -rf "$R"
	R=
}

if ! "$O/dprobe" trace -e @"$top/examples/work.probes" -o "$W/ref.out" \
     -- "$O/examples/work" >/dev/null 2>"$W/ref.err"; then
	ko "trace: the build tree's dprobe cannot trace the example: $(tail -n 2 "$W/ref.err")"
else
	trace_example installed-trace "$U/bin/dprobe"
	maps_check installed-agent "$U/bin/dprobe" "$U/lib/dprobe/libdprobe.so"
	# A tree moved elsewhere uses its own copy: the lookup is relative.
	cp -a "$U" "$W/moved"
	trace_example moved-trace "$W/moved/bin/dprobe"
	maps_check moved-agent "$W/moved/bin/dprobe" "$W/moved/lib/dprobe/libdprobe.so"
	rm -rf "$W/moved"
	agent_override
fi

# ---- manual pages -------------------------------------------------------------
# Every page renders with a NAME section naming it, and the page of a
# command has every option its --help shows.
man_check() {
	page=$U/share/man/man1/$1.1
	if ! MANWIDTH=100 man -l "$page" >"$W/$1.txt" 2>"$W/$1.merr"; then
		ko "man $1: man -l failed: $(head -n 2 "$W/$1.merr")"
		return
	fi
	if ! grep -q "^ *$1 - " "$W/$1.txt"; then
		ko "man $1: no NAME line '$1 - ...'"
		return
	fi
	[ "$1" = dprobe ] && { ok "man $1: renders"; return; }
	lost=
	for o in $("$U/bin/dprobe" help "${1#dprobe-}" |
		   grep -oE '(^|[][ (|,])--?[A-Za-z][-A-Za-z]*' | sed 's/^[^-]*//' |
		   sort -u); do
		grep -q -e "$o" "$W/$1.txt" || lost="$lost $o"
	done
	if [ -n "$lost" ]; then
		ko "man $1: options of --help missing from the page:$lost"
	else
		ok "man $1: renders, with every option of its --help"
	fi
}

if ! command -v man >/dev/null; then
	sk "man: man-db is not installed (apt-get install man-db)"
else
	for c in $cmds; do
		man_check "dprobe-$c"
	done
	man_check dprobe
	if MANPATH=$U/share/man man -w dprobe-trace 2>/dev/null |
	   grep -q "^$U/share/man/man1/dprobe-trace.1"; then
		ok "man: MANPATH=DESTDIR/usr/share/man finds dprobe-trace"
	else
		ko "man: MANPATH=$U/share/man man -w dprobe-trace does not find the page"
	fi
fi

# ---- pkg-config -------------------------------------------------------------------
cat >"$W/tp_events.h" <<'EOF'
#include <dprobe/tracepoint.h>
DP_TRACE_EVENT(inst, hit,
	TP_PROTO(int n, const char *what),
	TP_ARGS(n, what),
	TP_FIELDS(tp_field(int, n) tp_string(what)))
EOF
cat >"$W/tp_prog.c" <<'EOF'
/* A program with a tracepoint and its own probe on it. */
#include <stdio.h>
#include <string.h>
#define DP_CREATE_TRACE_POINTS
#include "tp_events.h"

static void probe(void *data, int n, const char *what)
{
	*(int *)data += n + (int)strlen(what);
}

int main(void)
{
	int sum = 0;
	char maps[256];
	FILE *f;

	if (register_trace_hit(probe, &sum))
		return 2;
	trace_hit(40, "ok");
	unregister_trace_hit(probe, &sum);
	trace_hit(1000, "off");
	printf("sum %d\n", sum);
	/* which libdprobe.so the loader took */
	f = fopen("/proc/self/maps", "r");
	while (f && fgets(maps, sizeof(maps), f))
		if (strstr(maps, "libdprobe.so")) {
			fputs(strchr(maps, '/'), stdout);
			break;
		}
	return 0;
}
EOF
pc() { PKG_CONFIG_PATH=$U/lib/pkgconfig pkg-config "$@" dprobe; }
if ! command -v pkg-config >/dev/null; then
	sk "pkg-config: not installed (apt-get install pkgconf)"
elif ! libs=$(pc --cflags --libs 2>"$W/pc.err"); then
	ko "pkg-config --cflags --libs dprobe: $(cat "$W/pc.err")"
elif ! echo "$libs" | grep -q -- '-L/usr/lib/dprobe .*-ldprobe'; then
	ko "pkg-config --libs dprobe: '$libs' does not link /usr/lib/dprobe's libdprobe"
else
	ok "pkg-config --cflags --libs dprobe: $libs"
	# the staged tree stands in for /usr: prefix= moves every path
	flags=$(pc --define-variable=prefix="$U" --cflags --libs)
	# shellcheck disable=SC2086
	if ! ${CC:-cc} -O2 -Wall -Werror -o "$W/tp_prog" "$W/tp_prog.c" -I"$W" \
	     $flags >"$W/cc.log" 2>&1; then
		ko "pkg-config: a tracepoint.h program does not build: $(head -n 3 "$W/cc.log")"
	elif ! "$W/tp_prog" >"$W/tp.out" 2>&1; then
		ko "pkg-config: the tracepoint.h program failed: $(cat "$W/tp.out")"
	elif [ "$(cat "$W/tp.out")" != "sum 42
$U/lib/dprobe/libdprobe.so" ]; then
		ko "pkg-config: the tracepoint.h program printed: $(cat "$W/tp.out")"
	else
		ok "pkg-config: a tracepoint.h program builds, links and runs (probe called, installed library)"
	fi
fi

# ---- bash completion ----------------------------------------------------------------
# The completion runs with a PATH of known commands only (links in
# $W/path): the installed dprobe, the tools the completion and comp()
# use, and true and truncate, so that completing a command name does not
# depend on what this machine has installed (p11-kit's trust, ...).
mkdir "$W/path"
ln -s "$U/bin/dprobe" "$W/path/dprobe"
for c in awk cut grep head paste readlink sed sort true truncate; do
	for d in $(echo "$PATH" | tr : ' '); do
		if [ -f "$d/$c" ] && [ -x "$d/$c" ]; then
			ln -s "$d/$c" "$W/path/$c"
			break
		fi
	done
done
bash=$(command -v bash) || bash=bash
# comp N WORD...: what completing WORD number N (from 0) gives, one
# line, sorted; bash passes the word without its opening quote.
comp() {
	# shellcheck disable=SC2016  # bash's script, expanded by bash
	PATH=$W/path Q="'" "$bash" -c '
		. "$1"; COMP_CWORD=$2; shift 2
		COMP_WORDS=("$@")
		cur=${COMP_WORDS[COMP_CWORD]}
		_dprobe dprobe "${cur#"$Q"}" "${COMP_WORDS[COMP_CWORD - 1]}"
		printf "%s\n" "${COMPREPLY[@]}" | sort | paste -sd" " -' \
		comp "$U/share/bash-completion/completions/dprobe" "$@" 2>&1
}
# comp_is WHAT EXPECTED N WORD...
comp_is() {
	what=$1 want=$2
	shift 2
	got=$(comp "$@")
	if [ "$got" = "$want" ]; then
		ok "completion: $what"
	else
		ko "completion: $what: '$*' gave '$got', not '$want'"
	fi
}
if ! command -v bash >/dev/null; then
	sk "completion: bash is not installed"
else
	comp_is "commands" "--help --version $(echo "$cmds" | sort | paste -sd' ' -)" \
		1 dprobe ''
	comp_is "a command" "trace" 1 dprobe tr
	comp_is "options of trace" "--engine --event" 2 dprobe trace --e
	comp_is "options of check" "--file --filter" 2 dprobe check --fi
	comp_is "--engine values" "agent auto" 3 dprobe stat --engine a
	comp_is "a command after --" "true truncate" 3 dprobe trace -- tru
	comp_is "functions of the program after --" "p:ev work" \
		3 dprobe trace -e "'p:ev wo" -- "$O/examples/work"
	comp_is "p:NAME to a whole definition" "p:run_job run_job" \
		3 dprobe trace -e "'p:run" -- "$O/examples/work"
	comp_is "functions of -x BINARY" "p main" \
		4 dprobe check -x "$O/examples/work" "'p mai"
	t_start_bg /dev/null sleep 30
	sl=$T_PID
	comp_is "functions of -p PID's libraries" "r:m libc.so.6:malloc_usable_size" \
		5 dprobe trace -p "$sl" -e "'r:m libc.so.6:malloc_us"
	kill "$sl" 2>/dev/null
	wait "$sl" 2>/dev/null
fi

# ---- make run on a fresh boot: tracefs not mounted -----------------------------
# examples/run.sh in a mount namespace of its own where tracefs is
# unmounted (the machine's mount is untouched): as root it mounts
# tracefs, and the kernel engine's part of the demo runs.
run_fresh() {
	unshare -m sh -c 'umount /sys/kernel/tracing 2>/dev/null || exit 99
		grep -q " /sys/kernel/tracing tracefs " /proc/mounts && exit 99
		cd "$1" && exec sh examples/run.sh "$2"' sh "$top" "$O/dprobe" \
		>"$W/run.out" 2>&1
}
if [ "$(id -u)" != 0 ]; then
	sk "make run: mounting tracefs needs root"
elif ! grep -qw tracefs /proc/filesystems || ! command -v unshare >/dev/null; then
	sk "make run: no tracefs in this kernel, or no unshare(1)"
elif run_fresh; [ $? = 99 ]; then
	sk "make run: tracefs cannot be unmounted in a private mount namespace here"
elif ! grep -q '^(mounted tracefs on /sys/kernel/tracing)' "$W/run.out"; then
	ko "make run: tracefs was not mounted: $(grep -i 'tracefs\|kernel' "$W/run.out" | head -n 3)"
elif ! sed -n '/(--engine kernel)/,$p' "$W/run.out" | grep -q ' myprobe: (work+0x0'; then
	ko "make run: no kernel-engine events after mounting tracefs: $(grep -A3 'engine kernel' "$W/run.out" | head -n 4)"
else
	ok "make run: mounts tracefs when it is not mounted, and the kernel engine runs"
fi

# ---- uninstall --------------------------------------------------------------------
if ! mk uninstall >"$W/uninstall.log" 2>&1; then
	ko "make uninstall failed: $(tail -n 3 "$W/uninstall.log")"
elif left=$(find "$D" ! -type d; find "$D" -type d -name '*dprobe*') &&
     [ -n "$left" ]; then
	ko "make uninstall left: $(echo "$left" | head -n 5 | paste -sd' ' -)"
else
	ok "make uninstall removes every file it installed"
fi

t_end
