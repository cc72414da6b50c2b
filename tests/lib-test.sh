#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Self-test of tests/lib.sh, the runners' shared library: counts and the
# closing line, the $DPROBE_RESULTS line, whole-suite skips and their
# reasons, the scratch directory and background programs at exit,
# waiting for a line (and giving up), for a process to end, timeouts,
# and comparing.  Each
# check runs a small runner in its own sh and looks at what it printed,
# wrote and returned.
#
#   sh tests/lib-test.sh
#
# Prints one line per check and "lib: N passed, N failed, N skipped";
# appends "lib P F S" to $DPROBE_RESULTS when it is set.
# (the small runners are single-quoted: their own sh expands them)
# shellcheck disable=SC2016
set -u
LIB=$(cd "$(dirname "$0")" && pwd)/lib.sh
# shellcheck source=tests/lib.sh
. "$LIB"
t_begin lib
t_scratch dprobe-libtest
W=$T_DIR

# run NAME SCRIPT: SCRIPT run by sh after sourcing lib.sh, in $W/NAME/
# (its cwd), stdout and stderr to $W/NAME.out, exit status to $W/NAME.rc.
# Its results go where it says, never to this suite's $DPROBE_RESULTS.
run() {
	mkdir -p "$W/$1"
	(cd "$W/$1" && unset DPROBE_RESULTS &&
		sh -c ". '$LIB'; $2" >"$W/$1.out" 2>&1)
	echo $? >"$W/$1.rc"
}

# is CASE FILE TEXT: FILE holds exactly TEXT (and a newline).
is() {
	if printf '%s\n' "$3" | cmp -s - "$2"; then
		t_pass "$1"
	else
		t_fail "$1" "got '$(cat "$2")', want '$3'"
	fi
}

# ---- counting ---------------------------------------------------------------

run count 'DPROBE_RESULTS=res; t_begin demo
	t_pass one; t_fail two because it broke; t_skip three "no tool"
	t_pass four; t_fail five; t_skip six; t_end; echo "rc=$?"'
is "PASS/FAIL/SKIP lines and the closing line" "$W/count.out" "PASS: one
FAIL: two: because it broke
SKIP: three: no tool
PASS: four
FAIL: five
SKIP: six
demo: 2 passed, 2 failed, 2 skipped
rc=1"
is "the results line" "$W/count/res" "demo 2 2 2"

run key 'DPROBE_RESULTS=res; t_begin "qemu boot" qemu; T_TAG=boot
	t_pass a; t_add 3 0 1; t_end; echo "rc=$?"'
is "T_TAG, t_add, and a results key apart from the name" "$W/key.out" \
	"PASS boot: a
qemu boot: 4 passed, 0 failed, 1 skipped
rc=0"
is "the results line under its key" "$W/key/res" "qemu 4 0 1"

run nores 'unset DPROBE_RESULTS; t_begin quiet; t_pass a; t_end'
if [ "$(cat "$W/nores.rc")" = 0 ] && [ -z "$(ls "$W/nores")" ]; then
	t_pass "no \$DPROBE_RESULTS: no results file, status 0"
else
	t_fail "no \$DPROBE_RESULTS" "status $(cat "$W/nores.rc"), files: $(ls "$W/nores")"
fi

run rel 'DPROBE_RESULTS=res; t_begin rel; mkdir sub; cd sub; t_pass a; t_end'
is "a relative \$DPROBE_RESULTS is the caller's" "$W/rel/res" "rel 1 0 0"

# ---- skipping ---------------------------------------------------------------

run skipall 'DPROBE_RESULTS=res; t_begin "kernel-diff"
	T_SELF="kernel differential"; T_TAG=x
	t_skip_all "not root"; echo "not reached"'
is "t_skip_all: the reason, one skip, and no further" "$W/skipall.out" \
	"SKIP: kernel differential: not root
kernel-diff: 0 passed, 0 failed, 1 skipped"
is "t_skip_all: its results line" "$W/skipall/res" "kernel-diff 0 0 1"
is "t_skip_all: status 0" "$W/skipall.rc" 0

run require 't_begin req; t_require sh cat; echo "tools there"
	t_require no-such-tool-dp sh; echo "not reached"'
is "t_require: a missing command is the reason" "$W/require.out" \
	"tools there
SKIP: req: no-such-tool-dp not found
req: 0 passed, 0 failed, 1 skipped"

run root 't_begin r; t_require root; echo "root"'
if [ "$(id -u)" = 0 ]; then want=root; else want="SKIP: r: not root
r: 0 passed, 0 failed, 1 skipped"; fi
is "t_require root" "$W/root.out" "$want"

run tracefs 'T_TRACEFS=$(pwd)/none; t_begin tfs; t_require tracefs'
is "t_require tracefs without one" "$W/tracefs.out" \
	"SKIP: tfs: no $W/tracefs/none/uprobe_events
tfs: 0 passed, 0 failed, 1 skipped"

# ---- scratch directory, background programs ---------------------------------

run scratch 't_begin s; t_scratch dprobe-libtest-s; echo "$T_DIR" >dir
	[ -d "$T_DIR" ] || echo "no dir"; T_AT_EXIT="echo hook"
	t_start_bg "$T_DIR/out" sh -c "echo up; exec sleep 60"; echo "$T_PID" >pid
	t_wait_line "$T_DIR/out" "^up\$" 10 && t_pass a; t_end'
d=$(cat "$W/scratch/dir")
p=$(cat "$W/scratch/pid")
# killed at exit: gone once the kernel has reaped it (slower under load)
for _ in $(seq 1 40); do
	kill -0 "$p" 2>/dev/null || break
	sleep 0.05
done
if [ -n "$d" ] && [ ! -e "$d" ] && ! kill -0 "$p" 2>/dev/null &&
   [ "$(tail -n 1 "$W/scratch.out")" = hook ]; then
	t_pass "at exit: background program killed, hook run, directory removed"
else
	kill "$p" 2>/dev/null
	t_fail "at exit" "dir $d: $(ls -d "$d" 2>&1), pid $p: $(kill -0 "$p" 2>&1 && echo alive), out: $(cat "$W/scratch.out")"
fi

run keep 't_begin k; T_KEEP=failed; t_scratch dprobe-libtest-k
	echo "$T_DIR" >dir; t_fail a; t_end'
d=$(cat "$W/keep/dir")
if [ -d "$d" ] && grep -qx "k: scratch files kept in $d" "$W/keep.out"; then
	t_pass "T_KEEP=failed: kept after a failure, and said so"
else
	t_fail "T_KEEP=failed" "$(cat "$W/keep.out")"
fi
rm -rf "$d"

run signal 't_begin g; t_scratch dprobe-libtest-g; echo "$T_DIR" >dir
	kill -TERM $$; sleep 5; echo "not reached"'
d=$(cat "$W/signal/dir")
if [ "$(cat "$W/signal.rc")" = 143 ] && [ ! -e "$d" ] && [ ! -s "$W/signal.out" ]; then
	t_pass "SIGTERM: status 143, directory removed"
else
	t_fail "SIGTERM" "status $(cat "$W/signal.rc"), dir $(ls -d "$d" 2>&1)"
fi

# ---- waiting ----------------------------------------------------------------

run wait 't_begin w; (sleep 0.3; echo "one ready") >f & t_wait_line f "^one r" 10
	echo "rc=$?"; printf partial >g; t_wait_line g "" 1; echo "rc=$?"'
is "t_wait_line: a line that comes, a line without its newline" \
	"$W/wait.out" "rc=0
rc=0"

t0=$(date +%s)
run nowait 't_begin n; echo other >f; t_wait_line f ready 1; echo "rc=$?"
	t_wait_line nofile "" 1; echo "rc=$?"'
t1=$(date +%s)
if [ "$(cat "$W/nowait.out")" = "rc=1
rc=1" ] && [ $((t1 - t0)) -ge 2 ] && [ $((t1 - t0)) -le 20 ]; then
	t_pass "t_wait_line: gives up after its timeout ($((t1 - t0)) s for two 1 s waits)"
else
	t_fail "t_wait_line timeout" "$((t1 - t0)) s: $(cat "$W/nowait.out")"
fi

# a child that ends (reaped by the shell, not a zombie kill -0 finds)
# and one that outlives the wait, killed after it
t0=$(date +%s)
run gone 'sleep 0.2 & t_wait_gone $! 10; echo "rc=$?"
	sleep 30 & p=$!; t_wait_gone $p 1; echo "rc=$?"; kill $p'
t1=$(date +%s)
if [ "$(cat "$W/gone.out")" = "rc=0
rc=1" ] && [ $((t1 - t0)) -ge 1 ] && [ $((t1 - t0)) -le 10 ]; then
	t_pass "t_wait_gone: a process that ends, one that outlives the wait ($((t1 - t0)) s)"
else
	t_fail "t_wait_gone" "$((t1 - t0)) s: $(cat "$W/gone.out")"
fi

run timeout 't_timeout 1 sleep 30; echo "rc=$?"; t_timeout 5 true; echo "rc=$?"'
is "t_timeout: 124 after the time, the command's status before" \
	"$W/timeout.out" "rc=124
rc=0"

# ---- comparing --------------------------------------------------------------

run check 'printf "a\nb 12\n" >exp; printf "a\nb 12\n" >same
	printf "a\nb 99\n" >num; printf "a\nc\n" >other
	t_check exp same; echo "rc=$?"
	t_check exp num sed "s/[0-9][0-9]*/12/"; echo "rc=$?"
	t_check exp other >diff; echo "rc=$?"
	T_UPDATE=1 t_check exp other; echo "rc=$?"; cat exp'
is "t_check: equal, equal after the normaliser, different, update" \
	"$W/check.out" "rc=0
rc=0
rc=1
rc=0
a
c"
if grep -qx -- '-b 12' "$W/check/diff" && grep -qx '+c' "$W/check/diff"; then
	t_pass "t_check: prints the unified diff"
else
	t_fail "t_check diff" "$(cat "$W/check/diff")"
fi

t_end
