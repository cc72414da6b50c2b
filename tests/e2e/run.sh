#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# End-to-end tests of `dprobe trace` and `dprobe stat` on real processes.
#
#   sh tests/e2e/run.sh DPROBE [CASE...]
#
# Builds the programs of tests/e2e/progs at -O0 and -O2 (into
# $(dirname DPROBE)/tests/e2e, or $E2E_BUILD), runs every case of
# tests/e2e/cases (or the named ones) at each level the case allows, and
# compares what dprobe printed, after normalisation, with the case's
# expected output.  One line per case and level: PASS, FAIL (with the
# difference and a command to reproduce it) or SKIP with the reason; then
# "e2e: N passed, N failed, N skipped".  With $DPROBE_RESULTS set, appends
# "e2e P F S" to that file.  Exit status 1 if anything failed.
#
# Env: E2E_LEVELS (default "O0 O2"), E2E_TIMEOUT (seconds per dprobe run,
# default 60), E2E_KEEP=1 (keep the scratch directory), E2E_BUILD,
# E2E_TIMES=FILE (appends "WALL_MS CPU_MS CASE LEVEL" per case run),
# E2E_TIMESTAMPED=1 (only the cases whose result can hold a timestamp:
# those that do not say timestamps=no; tests/run-all.sh's time-namespace
# pass);
# DPROBE_ENGINE (dprobe's own: auto, agent or ptrace) picks the engine
# the cases run on; `make e2e` runs them on auto (the in-process engine
# wherever it can) and on ptrace.
#
# When `DPROBE trace --help` fails, every case fails (exit status 1).
#
# Case files are sh fragments; see tests/e2e/README.md.
set -u

if [ $# -lt 1 ]; then
	echo "usage: $0 DPROBE [CASE...]" >&2
	exit 2
fi
E2E=$(cd "$(dirname "$0")" && pwd)
case $1 in
/*) DPROBE=$1 ;;
*) DPROBE=$(pwd)/$1 ;;
esac
shift
BUILD=${E2E_BUILD:-$(cd "$(dirname "$DPROBE")" && pwd)/tests/e2e}
TMO=${E2E_TIMEOUT:-60}
LEVELS=${E2E_LEVELS:-O0 O2}
export E2E DPROBE BUILD TMO

# shellcheck source=tests/e2e/lib.sh
. "$E2E/lib.sh"

if [ $# -gt 0 ]; then
	cases=
	for c in "$@"; do
		cases="$cases $E2E/cases/${c%.sh}.sh"
	done
else
	cases=$(ls "$E2E"/cases/*.sh)
fi

t_begin e2e

# A dprobe that cannot even print its usage fails every case: a broken
# binary must never pass as "skipped".
if ! why=$("$DPROBE" trace --help 2>&1 >/dev/null); then
	for c in $cases; do
		n=$(basename "$c" .sh)
		t_fail "$n" "'$DPROBE trace --help' failed: $(printf '%s' "$why" | head -n 1)"
	done
	t_end
	exit 1
fi

T_KEEP=failed
[ "${E2E_KEEP:-0}" = 1 ] && T_KEEP=1
t_scratch dpe2e
WORK=$T_DIR

# cpu_ms: $_cpu is the CPU time (user and system) of the runner's
# children that have ended, in milliseconds, from the shell's `times`
# (run in this shell: in a pipeline or $(...) it would count a
# subshell's children).
cpu_ms() {
	times >"$WORK/.times"
	_cpu=$(sed -n '2s/[ms]/ /gp' "$WORK/.times" |
		awk '{ printf "%d\n", ($1 + $3) * 60000 + ($2 + $4) * 1000 }')
}

# run_one CASEFILE LEVEL: 0 pass, 1 fail, 2 skip (reason in $T/skip),
# 3 the case does not run at this level.
run_one() {
	(
		# the settings a case may make (see README.md), and defaults
		# shellcheck disable=SC2034
		{
			desc='' prog='' variant='' args='' opts='' defs='' needs=''
			json='' sort_events='' stdout_events='' kdiff=no libs=''
			syslibs='' DP_WRAP='' kexpect='' kengine='' LIB=''
			events_by='' timestamps=yes
			engines='auto agent ptrace'
		}
		levels="O0 O2"
		# shellcheck disable=SC1090
		. "$1"
		case " $levels " in *" $LEVEL "*) ;; *) exit 3 ;; esac
		[ "${E2E_TIMESTAMPED:-0}" = 1 ] && [ "$timestamps" = no ] && exit 3
		case " $engines " in *" ${DPROBE_ENGINE:-auto} "*) ;; *) exit 3 ;; esac
		for need in $needs; do
			case $need in
			root) [ "$(id -u)" = 0 ] || { echo "needs root" >"$T/skip"; exit 2; } ;;
			*) command -v "$need" >/dev/null 2>&1 ||
				{ echo "needs $need" >"$T/skip"; exit 2; } ;;
			esac
		done
		if [ -n "$prog" ]; then
			P=$(build_prog "$prog" "$variant") ||
				{ echo "cannot build $prog" >"$T/why"; exit 1; }
		fi
		LIB=
		if [ -n "$libs" ]; then
			# shellcheck disable=SC2034  # used by the case
			LIB=$(build_prog "$libs" "$variant") ||
				{ echo "cannot build $libs" >"$T/why"; exit 1; }
		fi
		cd "$T" || exit 1
		if command -v case_run >/dev/null 2>&1; then
			case_run
		else
			# shellcheck disable=SC2086  # opts, args: word lists
			dp_trace $opts -- "$P" $args
		fi
		if command -v case_result >/dev/null 2>&1; then
			case_result >"$T/got"
		else
			trace_result >"$T/got"
		fi
		expected | subst >"$T/exp" ||
			{ echo "cannot work out the expected output" >"$T/why"; exit 1; }
		if [ -n "$sort_events" ]; then
			# events sorted as trace_result sorts them; "> " and "# "
			# lines stay in order after them
			{
				grep -v -e "^> " -e "^# " "$T/exp" | LC_ALL=C sort
				grep -e "^> " "$T/exp"
				grep -e "^# " "$T/exp"
			} >"$T/exp.sorted"
			mv "$T/exp.sorted" "$T/exp"
		fi
		rc=0
		t_check "$T/exp" "$T/got" >"$T/diff" || rc=1
		if command -v case_check >/dev/null 2>&1; then
			case_check >"$T/check" 2>&1 || rc=1
		fi
		exit $rc
	)
}

for c in $cases; do
	name=$(basename "$c" .sh)
	if [ ! -f "$c" ]; then
		t_fail "$name" "no such case"
		continue
	fi
	for LEVEL in $LEVELS; do
		export LEVEL
		T=$WORK/$name.$LEVEL
		mkdir -p "$T"
		export T
		[ -z "${E2E_TIMES:-}" ] || { _t0=$(date +%s%N); cpu_ms; _c0=$_cpu; }
		run_one "$c" "$LEVEL"
		_rc=$?
		if [ -n "${E2E_TIMES:-}" ]; then
			cpu_ms
			echo "$((($(date +%s%N) - _t0) / 1000000)) $((_cpu - _c0))" \
				"$name $LEVEL" >>"$E2E_TIMES"
		fi
		case $_rc in
		0) t_pass "$name ($LEVEL)" ;;
		2) t_skip "$name ($LEVEL)" "$(cat "$T/skip")" ;;
		3) ;;
		*)
			t_fail "$name ($LEVEL)"
			[ -s "$T/why" ] && sed 's/^/    /' "$T/why"
			[ -s "$T/diff" ] && head -n 60 "$T/diff" | sed 's/^/    /'
			[ -s "$T/check" ] && head -n 30 "$T/check" | sed 's/^/    /'
			if [ -s "$T/stderr" ] && [ ! -s "$T/diff" ]; then
				echo "    dprobe's stderr:"
				tail -n 5 "$T/stderr" | sed 's/^/      /'
			fi
			[ -s "$T/cmd" ] && echo "    repro: $(cat "$T/cmd")"
			;;
		esac
	done
done
t_end
