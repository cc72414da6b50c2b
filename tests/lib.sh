# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0
#
# What every shell test runner shares: its PASS/FAIL/SKIP lines and
# counts, the closing line "NAME: N passed, N failed, N skipped" (which
# tests/run-all.sh greps) and the "KEY P F S" line in $DPROBE_RESULTS
# (which tests/summary.sh adds up), skipping the whole suite with a
# reason, a scratch directory removed on every way out, background
# programs killed then, waiting for a line, and comparing with the
# expected text.  Sourcing it only defines functions; t_begin starts a
# suite.  POSIX sh (dash).  Names: t_* functions, T_* variables, and _t*
# for its own scratch variables.
#
#   t_begin NAME [KEY]   a suite: NAME in the closing line, KEY (default
#                        NAME) in $DPROBE_RESULTS
#   T_TAG                word after PASS/FAIL/SKIP ("PASS agent: CASE")
#   T_SELF               what whole-suite skips and the scratch message
#                        call the suite (default NAME)
#   t_pass CASE | t_fail CASE [WHY...] | t_skip CASE [REASON]
#   t_add P F S          counts of cases run elsewhere (kdiff)
#   t_end                closing line and results line; status 1 iff a
#                        case failed
#   t_skip_all REASON    one skip for the whole suite, t_end, exit 0
#   t_require WHAT...    t_skip_all unless root, tracefs, instances or
#                        a command is there
#   t_scratch PREFIX     $T_DIR, removed at exit ($T_KEEP: 1 keeps it,
#                        "failed" keeps it when a case failed) after the
#                        pids in $T_BG are killed and $T_AT_EXIT is run
#   t_start_bg OUT CMD.. / t_wait_line FILE REGEX SECS / t_timeout SECS CMD..
#   t_wait_gone PID SECS
#   t_check EXPECTED GOT [NORMALISER...]   (T_UPDATE=1 rewrites EXPECTED)

T_TRACEFS=${T_TRACEFS:-/sys/kernel/tracing}

# ---- counting ---------------------------------------------------------------

t_begin() {
	T_NAME=$1
	T_KEY=${2:-$1}
	T_SELF=$1
	T_TAG=
	T_PASS=0 T_FAIL=0 T_SKIP=0
	# a relative results file stays the caller's when the runner cd's
	T_RESULTS=${DPROBE_RESULTS:-}
	case $T_RESULTS in
	'' | /*) ;;
	*) T_RESULTS=$(pwd)/$T_RESULTS ;;
	esac
}

t_pass() {
	T_PASS=$((T_PASS + 1))
	echo "PASS${T_TAG:+ $T_TAG}: $1"
}

# t_fail CASE [WHY...]: the words of WHY joined by blanks after ": ".
t_fail() {
	T_FAIL=$((T_FAIL + 1))
	_tc=$1
	shift
	echo "FAIL${T_TAG:+ $T_TAG}: $_tc${*:+: $*}"
}

t_skip() {
	T_SKIP=$((T_SKIP + 1))
	echo "SKIP${T_TAG:+ $T_TAG}: $1${2:+: $2}"
}

t_add() {
	T_PASS=$((T_PASS + $1))
	T_FAIL=$((T_FAIL + $2))
	T_SKIP=$((T_SKIP + $3))
}

t_end() {
	echo "$T_NAME: $T_PASS passed, $T_FAIL failed, $T_SKIP skipped"
	if [ -n "$T_RESULTS" ]; then
		echo "$T_KEY $T_PASS $T_FAIL $T_SKIP" >>"$T_RESULTS"
	fi
	[ "$T_FAIL" = 0 ]
}

# ---- skipping ---------------------------------------------------------------

# A suite that cannot run says why and counts one skip, never a pass.
t_skip_all() {
	T_TAG=
	t_skip "$T_SELF" "$1"
	t_end
	exit 0
}

# t_lacks WHAT: prints why WHAT is missing, or fails when it is there.
# root; tracefs (uprobe_events, mounting tracefs where it is not);
# instances (tracefs instances); anything else is a command.
t_lacks() {
	case $1 in
	root) [ "$(id -u)" = 0 ] && return 1
		echo "not root" ;;
	tracefs)
		if [ ! -e "$T_TRACEFS/uprobe_events" ] && [ -d "$T_TRACEFS" ]; then
			mount -t tracefs nodev "$T_TRACEFS" 2>/dev/null
		fi
		[ -e "$T_TRACEFS/uprobe_events" ] && return 1
		echo "no $T_TRACEFS/uprobe_events" ;;
	instances) [ -d "$T_TRACEFS/instances" ] && return 1
		echo "no $T_TRACEFS/instances" ;;
	*) command -v "$1" >/dev/null 2>&1 && return 1
		echo "$1 not found" ;;
	esac
}

t_require() {
	for _tw in "$@"; do
		_tr=$(t_lacks "$_tw") && t_skip_all "$_tr"
	done
	:
}

# ---- scratch directory and background programs ------------------------------

t_scratch() {
	T_DIR=$(mktemp -d "/tmp/$1.XXXXXX") || exit 2
	T_DIR=$(cd "$T_DIR" && pwd -P)
	T_KEEP=${T_KEEP:-0}
	T_BG=${T_BG:-}
	T_AT_EXIT=${T_AT_EXIT:-}
	trap t_cleanup EXIT
	trap 'exit 129' HUP
	trap 'exit 130' INT
	trap 'exit 141' PIPE
	trap 'exit 143' TERM
}

# Background programs first (a hook may wait for what they hold), then
# the runner's $T_AT_EXIT, then the directory.
t_cleanup() {
	trap - EXIT HUP INT PIPE TERM
	for _tp in $T_BG; do
		kill "$_tp" 2>/dev/null
	done
	[ -z "$T_AT_EXIT" ] || eval "$T_AT_EXIT"
	if [ "$T_KEEP" = 1 ] || { [ "$T_KEEP" = failed ] && [ "$T_FAIL" != 0 ]; }; then
		echo "$T_SELF: scratch files kept in $T_DIR"
	else
		rm -rf "$T_DIR"
	fi
}

# t_start_bg OUT CMD [ARG...]: CMD in the background, stdout and stderr
# to OUT; $T_PID is its pid, killed at exit unless it ended before.
t_start_bg() {
	_to=$1
	shift
	"$@" >"$_to" 2>&1 </dev/null &
	T_PID=$!
	T_BG="${T_BG:-} $T_PID"
}

# t_wait_line FILE REGEX SECS: until a line of FILE matches the extended
# REGEX ('' : any line, even one without its newline yet), polling every
# 20 ms; fails once SECS seconds have passed on the clock (not counted
# in polls: on a loaded machine each poll costs far more than 20 ms).
t_wait_line() {
	_tend=$(($(date +%s) + $3))
	_tn=0
	while :; do
		if [ -z "$2" ]; then
			[ -s "$1" ] && return 0
		else
			grep -qE -- "$2" "$1" 2>/dev/null && return 0
		fi
		_tn=$((_tn + 1))
		if [ $((_tn % 10)) = 0 ] && [ "$(date +%s)" -gt "$_tend" ]; then
			return 1
		fi
		sleep 0.02
	done
}

# t_wait_gone PID SECS: until process PID is gone, polling every 10 ms
# (a fixed wait of a tenth of a second costs more in a loop of rounds
# than the polls); fails once SECS seconds have passed on the clock.
t_wait_gone() {
	_tend=$(($(date +%s) + $2))
	_tn=0
	while kill -0 "$1" 2>/dev/null; do
		_tn=$((_tn + 1))
		if [ $((_tn % 10)) = 0 ] && [ "$(date +%s)" -gt "$_tend" ]; then
			return 1
		fi
		sleep 0.01
	done
}

# t_timeout SECS CMD [ARG...]: CMD, sent SIGTERM after SECS seconds and
# SIGKILL 5 s later (status 124 or 137 then).
t_timeout() {
	timeout -k 5 "$@"
}

# ---- comparing --------------------------------------------------------------

# t_check EXPECTED GOT [NORMALISER...]: the file GOT, through the
# NORMALISER command when one is given, is the file EXPECTED; otherwise
# the unified diff is printed and the status is 1.  With T_UPDATE=1
# EXPECTED is rewritten from GOT instead.
t_check() {
	_te=$1
	_tg=$2
	_tg_in=$2
	shift 2
	if [ $# -gt 0 ]; then
		_tg=$(mktemp) || return 2
		"$@" <"$_tg_in" >"$_tg"
	fi
	if [ "${T_UPDATE:-0}" = 1 ]; then
		cp "$_tg" "$_te"
		_trc=0
	else
		diff -u "$_te" "$_tg"
		_trc=$?
	fi
	[ $# -eq 0 ] || rm -f "$_tg"
	[ "$_trc" = 0 ]
}
