#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The kernel's own ftrace selftests against `dprobe mount` (issue 15):
# ftracetest of the installed Linux source (Debian's linux-source-6.12,
# /usr/src/linux-source-*.tar.xz; its tools/testing/selftests/ftrace is
# extracted once into BUILD/ftrace/), run unmodified on the kprobe/ and
# dynevent/ test folders against a mount served for tests/ftrace/target.c,
# whose functions carry the names the tests probe.
#
#   sh tests/ftrace/run.sh DPROBE [TEST.tc...]
#
# ftracetest finds its tracing directory in /proc/mounts ("tracefs" in
# the line): it runs in a mount namespace of its own where the kernel's
# tracefs is unmounted and the dprobe mount sits at a path called
# .../tracefs.  Each test is one line: PASS for ftracetest's PASS and
# XFAIL, FAIL for FAIL (the log follows), SKIP with the reason for
# UNSUPPORTED, UNRESOLVED and UNTESTED (what the test needs that dprobe
# does not serve yet, or the kernel itself).  Then the counts.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$HERE/../lib.sh"
DPROBE=$(realpath -m "${1:?usage: run.sh DPROBE [TEST.tc...]}")
shift
BUILD=$(dirname "$DPROBE")
t_begin ftrace
t_require root unshare fusermount3 tar xz cc
[ -c /dev/fuse ] || t_skip_all "no /dev/fuse (the fuse module is not loaded)"
SRC=$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | sort -V | tail -n 1)
[ -n "$SRC" ] || t_skip_all "no /usr/src/linux-source-*.tar.xz (apt-get install linux-source-6.12)"

# the selftests, once per source tarball
FT=$BUILD/ftrace/$(basename "$SRC" .tar.xz)
if [ ! -x "$FT/ftracetest" ]; then
	rm -rf "$BUILD/ftrace.tmp" && mkdir -p "$BUILD/ftrace.tmp" &&
		tar -xJf "$SRC" -C "$BUILD/ftrace.tmp" --wildcards \
			'*/tools/testing/selftests/ftrace/*' &&
		mkdir -p "$BUILD/ftrace" && rm -rf "$FT" &&
		mv "$BUILD/ftrace.tmp"/*/tools/testing/selftests/ftrace "$FT" ||
		t_skip_all "cannot extract the ftrace selftests from $SRC"
	rm -rf "$BUILD/ftrace.tmp"
fi
TARGET=$BUILD/ftrace/target
if [ ! -x "$TARGET" ] || [ "$HERE/target.c" -nt "$TARGET" ]; then
	cc -O0 -g -I"$HERE/../../include" -o "$TARGET" "$HERE/target.c" \
		-L"$BUILD" -ldprobe -Wl,-rpath,"$BUILD" ||
		t_skip_all "cannot build target.c"
fi

t_scratch dpftrace
T_KEEP=${FTRACE_KEEP:-0}
W=$T_DIR
if [ $# -gt 0 ]; then
	CASES=$*
else
	CASES=$(cd "$FT" && ls test.d/kprobe/*.tc test.d/dynevent/*.tc)
fi

# inside the namespace: the target, the mount at $W/tracefs, ftracetest
cat >"$W/inner.sh" <<'INNER'
set -u
W=$1 DPROBE=$2 TARGET=$3 FT=$4
shift 4
for d in /sys/kernel/debug/tracing /sys/kernel/tracing; do
	umount "$d" 2>/dev/null
done
grep -q tracefs /proc/mounts && { echo "a tracefs stays mounted" >"$W/why"; exit 3; }
mkdir -p "$W/tracefs"
"$TARGET" >"$W/target.out" 2>&1 &
tpid=$!
"$DPROBE" mount "$W/tracefs" -p "$tpid" >"$W/mount.out" 2>&1 &
mpid=$!
for _ in $(seq 1 100); do
	[ -e "$W/tracefs/kprobe_events" ] && break
	sleep 0.05
done
if [ ! -e "$W/tracefs/kprobe_events" ]; then
	echo "the mount did not come up: $(cat "$W/mount.out")" >"$W/why"
	kill "$tpid" "$mpid" 2>/dev/null
	exit 3
fi
(cd "$FT" && ./ftracetest -l "$W/logs" "$@" >"$W/ftracetest.out" 2>&1)
fusermount3 -u "$W/tracefs" 2>/dev/null
wait "$mpid" 2>/dev/null
kill "$tpid" 2>/dev/null
exit 0
INNER

# shellcheck disable=SC2086  # CASES: one word per test
unshare -m --propagation private sh "$W/inner.sh" "$W" "$DPROBE" "$TARGET" \
	"$FT" $CASES
rc=$?
if [ $rc = 3 ]; then
	t_skip_all "$(cat "$W/why")"
fi
# "[n] description<TAB>[RESULT]" lines
awk '/^\[[0-9]+\] .*\[[A-Z]+\]$/ {
	r = $NF; gsub(/[][]/, "", r)
	d = $0; sub(/^\[[0-9]+\] /, "", d); sub(/[ \t]*\[[A-Z]+\]$/, "", d)
	print r "\t" d }' "$W/ftracetest.out" >"$W/results"
[ -s "$W/results" ] || t_fail ftracetest "no results: $(tail -n 3 "$W/ftracetest.out")"
while IFS="$(printf '\t')" read -r r d; do
	case $r in
	PASS | XFAIL) t_pass "$d" ;;
	FAIL) t_fail "$d" ;;
	*) t_skip "$d" "$r" ;;
	esac
done <"$W/results"
t_end
