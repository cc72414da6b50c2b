#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Kernel reference for the e2e cases: the same definitions, the same
# program, the same run, through the kernel's uprobe_events.
#
#   sh tests/e2e/kernel-ref.sh DPROBE [CASE...]
#   sh tests/e2e/kernel-ref.sh --kernel-only [CASE...]
#
# For each case marked kdiff=yes, at each level: the program (and the
# libraries it loads from the build directory) is copied into a private
# directory, because a uprobe is armed on an inode for every process on
# the machine.  The case's definitions are converted to PATH:OFFSET form
# on that copy (the file offset of the symbol from nm/readelf, plus the
# +offs; @SYM becomes @+OFFS; $retval and the rest are unchanged) in the
# group "dpe2e", created in uprobe_events, and enabled only in a private
# instance (instances/dpe2e-PID).  The program runs as the case runs it
# (under `setarch -R`, so addresses repeat), and the instance's trace is
# read.  Three things are compared:
#   1. the kernel's argument values with the case's expected output (so
#      the expectations, written by reasoning, are checked against the
#      reference implementation, also before dprobe can trace);
#   2. unless --kernel-only: dprobe's trace of the same converted
#      definitions on the same copy, run the same way, with the kernel's
#      lines whole (place and values; not comm-pid, cpu, flags or time:
#      the kernel prints DBZff flags on 6.18);
#   3. for `stat` cases, the kernel's uprobe_profile hits with the counts.
# Known kernel quirks are kept out of the compared cases rather than
# normalised: \"STR" (always (fault) on uprobes) and faulting
# intermediate dereferences (stale bytes) are only in kdiff=no cases.
#
# Every event, the group and the instance are removed at the end, also
# on failure or a signal; leftovers of a killed run are removed first.
# Needs root and tracefs; prints "SKIP: kernel-ref: REASON" otherwise.
# With $DPROBE_RESULTS set, appends "e2e-kernel P F S".
set -u

E2E=$(cd "$(dirname "$0")" && pwd)
TRACEFS=/sys/kernel/tracing
GROUP=dpe2e
kernel_only=0

if [ $# -lt 1 ]; then
	echo "usage: $0 DPROBE|--kernel-only [CASE...]" >&2
	exit 2
fi
if [ "$1" = --kernel-only ]; then
	kernel_only=1
	DPROBE=
	BUILD=${E2E_BUILD:-$(cd "$E2E/../.." && pwd)/build/tests/e2e}
else
	case $1 in
	/*) DPROBE=$1 ;;
	*) DPROBE=$(pwd)/$1 ;;
	esac
	BUILD=${E2E_BUILD:-$(cd "$(dirname "$DPROBE")" && pwd)/tests/e2e}
	if ! "$DPROBE" trace --help >/dev/null 2>&1; then
		echo "kernel-ref: dprobe trace is not built yet: kernel side only"
		kernel_only=1
	fi
fi
shift
TMO=${E2E_TIMEOUT:-60}
LEVELS=${E2E_LEVELS:-O0 O2}
export E2E DPROBE BUILD TMO

# shellcheck source=tests/e2e/lib.sh
. "$E2E/lib.sh"
t_begin e2e-kernel
T_SELF=kernel-ref

t_require root tracefs instances setarch flock
# dprobe's in-process engine preloads its agent, which moves the libraries
# the loader maps after it: the kernel's run gets the same preload, so
# run-time addresses compare.  With a socket address nobody listens on,
# the agent finds no dprobe and, as under dprobe, takes both variables
# out of the environment before main() (getenv() walks the same list).
kpreload() {
	[ $kernel_only = 0 ] && [ "${DPROBE_ENGINE:-auto}" != ptrace ] &&
		[ "${kengine:-}" != ptrace ] &&
		[ -f "$(dirname "$DPROBE")/libdprobe.so" ] || return 0
	grep -q 'using the ptrace engine' "$T/dstderr" 2>/dev/null && return 0
	echo "LD_PRELOAD=$(cd "$(dirname "$DPROBE")" && pwd)/libdprobe.so" \
		"DPROBE_AGENT_SOCK=dprobe-kernel-ref-$$"
}

# One run at a time: runs share the group name.
exec 9>/tmp/dpe2e-kref.lock
flock -w 900 9 || t_skip_all "another run holds /tmp/dpe2e-kref.lock"

INST=$TRACEFS/instances/dpe2e-$$

# Remove what a run created: disable in the instance(s), remove them, and
# delete every event of the group.  Returns non-zero if something stays.
kclean() {
	for _i in "$TRACEFS"/instances/dpe2e-*; do
		[ -d "$_i" ] || continue
		[ "$_i" != "$INST" ] && [ "${1:-}" != all ] && continue
		[ -e "$_i/events/$GROUP/enable" ] &&
			echo 0 >"$_i/events/$GROUP/enable" 2>/dev/null
		rmdir "$_i" 2>/dev/null
	done
	if grep -q "^[pr]:$GROUP/" $TRACEFS/uprobe_events; then
		echo "-:$GROUP/" >>$TRACEFS/uprobe_events 2>/dev/null
	fi
	! grep -q "^[pr]:$GROUP/" $TRACEFS/uprobe_events && [ ! -d "$INST" ]
}

cleanup() {
	if ! kclean; then
		echo "kernel-ref: could not remove every $GROUP event/instance" >&2
	fi
}
T_KEEP=failed
[ "${E2E_KEEP:-0}" = 1 ] && T_KEEP=1
T_AT_EXIT=cleanup
t_scratch dpe2e-kref
WORK=$T_DIR

# Leftovers of a killed run (we hold the lock, so none is in use).
kclean all || t_skip_all "cannot remove leftover $GROUP events or instances"

# ---- converting definitions ------------------------------------------------

# A case's definitions are converted in the shell that runs the case,
# without a process for each (a sweep has hundreds): the helpers set
# variables, and what binutils says is remembered per case and level
# (run_one runs each in a subshell of its own) in $_kmemo, "KEY<TAB>VALUE"
# lines.

# kmemo KEY COMMAND...: $_kv is COMMAND's output (its trailing newlines
# dropped), run once per KEY; a failure (status 1, $_kv what it printed)
# is not remembered.
_kmemo=$T_NL
kmemo() {
	_kk=$1
	shift
	case $_kmemo in
	*"$T_NL$_kk	"*)
		_kv=${_kmemo#*"$T_NL$_kk	"}
		_kv=${_kv%%"$T_NL"*}
		return 0
		;;
	esac
	_kv=$("$@") || return 1
	case $_kv in
	*"$T_NL"*) ;;	# one line values only
	*) _kmemo="$_kmemo$_kk	$_kv$T_NL" ;;
	esac
}

# sys_copy PATH: $_kf is the copy of a system library the case copies
# ($syslibs), or PATH.
sys_copy() {
	_kf=$1
	for _s in $syslibs; do
		if [ "$(basename "$1")" = "$_s" ]; then
			_kf=$KDIR/$_s
			return 0
		fi
	done
}

# mod_file MOD: $_kf is the file MOD names: a path, or the basename or
# soname of one of the copies in $KDIR.
mod_file() {
	case $1 in
	*/*) sys_copy "$1"; return 0 ;;
	esac
	for _c in "$KDIR"/*; do
		_kf=$_c
		[ "${_c##*/}" = "$1" ] && return 0
		kmemo "soname	$_c" soname_of "$_c"
		[ "$_kv" = "$1" ] && return 0
	done
	return 1
}

# soname_of FILE -> its DT_SONAME (nothing if it has none)
soname_of() {
	readelf -dW "$1" 2>/dev/null |
		sed -n 's/.*(SONAME).*Library soname: \[\(.*\)\]$/\1/p' | head -n 1
}

# loads FILE -> "OFFSET VADDR FILESIZE ..." of its PT_LOADs, on one line
loads() {
	file_key "$1" || return 1
	cache_file "$_fk.phdrs" readelf -lW "$1" || return 1
	awk '$1 == "LOAD" { printf "%s %s %s ", $2, $3, $5 }' "$_cf"
}

# loads_off VADDR [OFFSET VADDR FILESIZE]...: $_off is the file offset of
# VADDR through the PT_LOAD that contains it (lib.sh's vaddr_to_off), or
# empty.
loads_off() {
	_lv=$1
	shift
	_off=
	while [ $# -ge 3 ]; do
		if [ $((_lv >= $2 && _lv < $2 + $3)) = 1 ]; then
			_off=$((_lv - $2 + $1))
			return 0
		fi
		shift 3
	done
}

# conv_def LINE: $_kout is the uprobe_events line (status 0), or the
# reason why there is none (status 1).  Places without MOD are in $KBIN:
# the command being run, as dprobe resolves them.
conv_def() {
	# an SDT probe named as the place, or alone: dprobe's own expansion
	# into uprobe lines (one per site), each in the private group
	case $1 in
	sdt_*:* | [pr]*' 'sdt_*:*)
		"$DPROBE" check -x "$KBIN" "$1" >"$T/sdt.conv" 2>&1 ||
			{ _kout="dprobe check: $(head -n 1 "$T/sdt.conv")"; return 1; }
		_kout=$(sed "s|^\([pr][0-9]*\):[^/]*/|\1:$GROUP/|" "$T/sdt.conv")
		return 0
		;;
	esac
	set -f
	# shellcheck disable=SC2086  # split the definition into its words
	set -- $1
	set +f
	_head=$1
	_place=$2
	shift 2
	_type=${_head%%[!pr]*}
	_type=${_type%"${_type#?}"}
	case $_head in
	[pr]*:*) _name=${_head#*:} ;;
	-*) _kout="a delete line"; return 1 ;;
	*) _kout="an unnamed event"; return 1 ;;
	esac
	_ev=${_name##*/}
	[ "$_ev" = "$_name" ] && _ev=${_name#*.}
	case $_place in
	*/*:[0-9]*)
		sys_copy "${_place%:*}"
		_file=$_kf
		_new=$_file:${_place##*:}
		;;
	*)
		_sym=${_place##*:}
		_file=$KBIN
		if [ "$_sym" != "$_place" ]; then
			mod_file "${_place%:*}" ||
				{ _kout="no copy of ${_place%:*}"; return 1; }
			_file=$_kf
		fi
		_add=0
		case $_sym in
		*+*) _add=$((${_sym#*+})); _sym=${_sym%%+*} ;;
		esac
		kmemo "vaddr	$_file	$_sym" sym_vaddr "$_file" "$_sym" ||
			{ _kout="no symbol $_sym"; return 1; }
		_va=$_kv
		kmemo "loads	$_file" loads "$_file"
		# shellcheck disable=SC2086  # $_kv: a list of numbers
		loads_off $((_va + _add)) $_kv
		_new=$_file:$(hex "$_off")
		;;
	esac
	_out="$_type:$GROUP/$_ev $_new"
	for _a in "$@"; do
		case $_a in
		*:symbol* | *:symstr*) _kout="symbol type"; return 1 ;;
		*"\$arg"*) _kout="\$argN"; return 1 ;;
		*'\"'*) _kout="immediate string"; return 1 ;;
		esac
		# @SYM[+-N] -> @+OFFS for the same bytes (spec 3.2).
		_b=${_a#*=}
		case $_b in
		@[A-Za-z_]*)
			_s=${_b#@}
			_s=${_s%%:*}
			_t=${_b#"@$_s"}
			_n=0
			case $_s in
			*[+-]*)
				_n=${_s#*[+-]}
				case $_s in *-*) _n=$((-_n)) ;; esac
				_s=${_s%%[+-]*}
				;;
			esac
			kmemo "vaddr	$_file	$_s" sym_vaddr "$_file" "$_s" ||
				{ _kout="no symbol $_s"; return 1; }
			_v=$_kv
			kmemo "bias	$_file" text_bias "$_file"
			_a=${_a%%=*}=@+$(hex $((_v + _n - _kv)))$_t
			;;
		esac
		_out="$_out $_a"
	done
	_kout=$_out
}

# ---- the kernel side -------------------------------------------------------

kwrite() {
	printf '%s\n' "$2" >>"$1"
}

# kernel_run KIND [OPTIONS] -- CMD: KIND trace or stat.  Creates the
# converted definitions (from $T/kdefs), enables them in $INST, runs CMD
# with stdout to $T/kstdout, leaves the trace in $T/ktrace and the hit
# counts in $T/kprofile ("COUNT EVENT" lines).
kernel_run() {
	_kind=$1
	shift
	: >"$T/kfilters"
	while [ $# -gt 0 ]; do
		case $1 in
		--filter) printf '%s\n' "$2" >>"$T/kfilters"; shift 2 ;;
		--) shift; break ;;
		*) echo "option $1 has no kernel equivalent" >"$T/skip"; return 2 ;;
		esac
	done
	mkdir "$INST" || { echo "cannot create $INST" >"$T/why"; return 1; }
	while IFS= read -r _l; do
		kwrite $TRACEFS/uprobe_events "$_l" ||
			{ echo "the kernel refused: $_l" >"$T/why"; return 1; }
	done <"$T/kdefs"
	while IFS= read -r _f; do
		_e=${_f%%=*}
		_e=${_e##*/}
		_e=${_e##*:}
		printf '%s' "${_f#*=}" >"$INST/events/$GROUP/$_e/filter" ||
			{ echo "the kernel refused the filter $_f" >"$T/why"; return 1; }
	done <"$T/kfilters"
	echo 1 >"$INST/events/$GROUP/enable" || return 1
	: >"$INST/trace"
	# shellcheck disable=SC2086  # $KENV, $KPRELOAD: NAME=VALUE words or nothing
	setarch -R env ${KENV:-} ${KPRELOAD:-} "$@" >"$T/kstdout" 2>&1 </dev/null
	echo $? >"$T/krc"
	echo 0 >"$INST/events/$GROUP/enable"
	cat "$INST/trace" >"$T/ktrace"
	# uprobe_profile: "  PATH EVENT HITS", one line per probe.
	awk -v d="$KDIR/" 'index($1, d) == 1 { n[$2] += $3 }
		END { for (e in n) print n[e], e }' \
		$TRACEFS/uprobe_profile | sort -k2 >"$T/kprofile"
	rmdir "$INST"
	echo "-:$GROUP/" >>$TRACEFS/uprobe_events
	return 0
}

# conv_defs: the case's $defs (placeholders replaced) converted into
# $T/kdefs.  Returns 2 (reason in $T/skip) if one has no uprobe form.
conv_defs() {
	printf '%s\n' "${defs:-}" | subst >"$T/defs.txt" || return 1
	: >"$T/kdefs"
	while IFS= read -r _l; do
		case $_l in '' | '#'*) continue ;; esac
		conv_def "$_l" ||
			{ echo "cannot convert: $_kout: $_l" >"$T/skip"; return 2; }
		printf '%s\n' "$_kout" >>"$T/kdefs"
	done <"$T/defs.txt"
}

# dprobe_run SUBCMD [OPTIONS] -- CMD: dprobe on the converted definitions,
# the same copies and command line, the same way.
dprobe_run() {
	_sub=$1
	shift
	_e=
	while IFS= read -r _l; do
		_shq "$_l"
		_e="$_e -e $_q"
	done <"$T/kdefs"
	[ "$_sub" = trace ] && _e="$_e -o $(shquote "$T/devents")"
	eval "set -- $_e \"\$@\""
	record_cmd "$_sub" "$@"
	: >"$T/devents"
	# shellcheck disable=SC2086
	t_timeout "$TMO" env ${KENV:-} ${kengine:+DPROBE_ENGINE=$kengine} \
		setarch -R "$DPROBE" "$_sub" "$@" \
		>"$T/dstdout" 2>"$T/dstderr" </dev/null
	echo $? >"$T/drc"
	cat "$T/devents" >>"$T/devents.all"
	cat "$T/dstderr" >>"$T/dstderr.all"
}

# kbin [OPTIONS] -- CMD ...: KBIN = CMD if it is a file, else $P.
kbin() {
	KBIN=$P
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		shift
	done
	[ $# -ge 2 ] && [ -f "$2" ] && KBIN=$2
	:
}

# Replacements for lib.sh's dp_trace/dp_stat while a case runs here.  A
# case may run several; traces and outputs are collected in *.all.
# dprobe runs first: the kernel's run gets the agent's preload only if
# dprobe used the in-process engine (it may hand a session to ptrace).
dp_trace() {
	kbin "$@"
	conv_defs || return $?
	[ $kernel_only = 1 ] || dprobe_run trace "$@"
	KPRELOAD=$(kpreload)
	kernel_run trace "$@" || return $?
	cat "$T/ktrace" >>"$T/ktrace.all"
	cat "$T/kstdout" >>"$T/kstdout.all"
	exit_status
}

# The files a case may read after dp_trace (lib.sh's names): dprobe's
# events, output and exit status, else the program's under the kernel.
exit_status() {
	for _pair in "events devents" "stdout dstdout" "stderr dstderr"; do
		# shellcheck disable=SC2086  # two words
		set -- $_pair
		if [ -f "$T/$2" ]; then
			cp "$T/$2" "$T/$1"
		else
			: >"$T/$1"
		fi
	done
	if [ -f "$T/drc" ]; then
		cp "$T/drc" "$T/rc"
	else
		cp "$T/krc" "$T/rc"
	fi
}

dp_stat() {
	KSTAT=1
	kbin "$@"
	conv_defs || return $?
	[ $kernel_only = 1 ] || dprobe_run stat "$@"
	KPRELOAD=$(kpreload)
	kernel_run stat "$@" || return $?
	cat "$T/kstdout" >>"$T/kstdout.all"
	exit_status
}

# Private copies of whatever a case builds itself (see lib.sh).
build_prog() {
	_bp=$(build_prog_real "$@") || return 1
	cp "$_bp" "$KDIR/" || return 1
	printf '%s\n' "$KDIR/$(basename "$_bp")"
}

# Expected event lines of the case (no "> " program output, no "# "
# lines), values only, sorted when the case sorts.
exp_events() {
	grep -v -e '^> ' -e '^# ' "$T/exp" | values_only >"$T/exp.ev"
	[ -n "$sort_events" ] && LC_ALL=C sort -o "$T/exp.ev" "$T/exp.ev"
	:
}

run_one() {
	(
		# the settings a case may make (see README.md), and defaults
		# shellcheck disable=SC2034
		{
			desc='' prog='' variant='' args='' opts='' defs='' needs=''
			json='' sort_events='' stdout_events='' kdiff=no libs=''
			KENV='' KSTAT='' syslibs='' DP_WRAP='' kexpect=events kengine=
		}
		levels="O0 O2"
		# shellcheck disable=SC1090
		. "$1"
		case " $levels " in *" $LEVEL "*) ;; *) exit 3 ;; esac
		[ "$kdiff" = yes ] || exit 3
		for need in $needs; do
			command -v "$need" >/dev/null 2>&1 ||
				{ echo "needs $need" >"$T/skip"; exit 2; }
		done
		KDIR=$T/k
		mkdir -p "$KDIR"
		# a case about an installed program builds nothing
		P=
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
		# System libraries: a private copy found through LD_LIBRARY_PATH
		# (set by env right before the program, so setarch and env
		# themselves keep the system's libraries).
		for _s in $syslibs; do
			cp "/lib/x86_64-linux-gnu/$_s" "$KDIR/" || exit 1
			KENV="LD_LIBRARY_PATH=$KDIR"
		done
		cd "$T" || exit 1
		: >"$T/ktrace.all"
		: >"$T/kstdout.all"
		: >"$T/devents.all"
		: >"$T/dstderr.all"
		if command -v case_run >/dev/null 2>&1; then
			case_run
		else
			# shellcheck disable=SC2086
			dp_trace $opts -- "$P" $args
		fi
		[ $? = 2 ] && exit 2
		[ -s "$T/why" ] && exit 1
		expected | subst >"$T/exp" || exit 1
		bad=0
		if [ -n "$KSTAT" ]; then
			# counts: expected "# stat N GRP:EVENT" vs uprobe_profile
			sed -n -E 's/^# stat ([0-9]+) [^ ]+:([^ ]+)$/\1 \2/p' \
				"$T/exp" | sort -k2 >"$T/exp.ev"
			cp "$T/kprofile" "$T/kernel.ev"
		else
			exp_events
			norm_klines <"$T/ktrace.all" >"$T/kernel.full"
			values_only <"$T/kernel.full" >"$T/kernel.ev"
			if [ -n "$sort_events" ]; then
				LC_ALL=C sort -o "$T/kernel.ev" "$T/kernel.ev"
				LC_ALL=C sort -o "$T/kernel.full" "$T/kernel.full"
			fi
		fi
		# The comm column of the kernel's `trace` comes from a cache
		# read when the trace is printed: "<...>" for threads it did
		# not keep, or even the name of an earlier task with the same
		# pid.  So it is not compared ($comm fetchargs still are).
		for _f in exp.ev kernel.ev kernel.full; do
			[ -f "$T/$_f" ] || continue	# stat: counts only
			sed -i 's/^[^ ]* /- /' "$T/$_f"
			[ -n "$sort_events" ] && LC_ALL=C sort -o "$T/$_f" "$T/$_f"
		done
		# kexpect=none: the case's expectation is not a list of events
		# (only dprobe and the kernel are compared)
		if [ "$kexpect" != none ] &&
			! t_check "$T/exp.ev" "$T/kernel.ev" >"$T/diff.kernel"; then
			echo "kernel vs expected:" >>"$T/why"
			bad=1
		fi
		grep "^> " "$T/exp" >"$T/exp.out"
		sed "s/^/> /" "$T/kstdout.all" >"$T/kstdout.q"
		if [ "$kexpect" != none ] &&
			! t_check "$T/exp.out" "$T/kstdout.q" >"$T/diff.kstdout"; then
			echo "program output under the kernel probes differs:" >>"$T/why"
			bad=1
		fi
		if [ $kernel_only = 0 ]; then
			if [ -n "$KSTAT" ]; then
				stat_of "$T/dstderr.all" |
					sed -n -E 's/^# stat ([0-9]+) [^ ]+:([^ ]+)$/\1 \2/p' |
					sort -k2 >"$T/dprobe.ev"
				cp "$T/kprofile" "$T/kernel.cmp"
			else
				norm_trace <"$T/devents.all" >"$T/dprobe.ev"
				sed -i 's/^[^ ]* /- /' "$T/dprobe.ev"
				cp "$T/kernel.full" "$T/kernel.cmp"
				[ -n "$sort_events" ] &&
					LC_ALL=C sort -o "$T/dprobe.ev" "$T/dprobe.ev"
			fi
			if ! t_check "$T/kernel.cmp" "$T/dprobe.ev" >"$T/diff.dprobe"; then
				echo "dprobe vs kernel:" >>"$T/why"
				bad=1
			fi
		fi
		exit $bad
	)
}

if [ $# -gt 0 ]; then
	cases=
	for c in "$@"; do
		cases="$cases $E2E/cases/${c%.sh}.sh"
	done
else
	cases=$(ls "$E2E"/cases/*.sh)
fi

for c in $cases; do
	name=$(basename "$c" .sh)
	for LEVEL in $LEVELS; do
		export LEVEL
		T=$WORK/$name.$LEVEL
		mkdir -p "$T"
		export T
		run_one "$c"
		rc=$?
		kclean || { echo "kernel-ref: cleanup failed after $name" >&2; rc=1; }
		case $rc in
		0) t_pass "$name ($LEVEL) kernel" ;;
		2) t_skip "$name ($LEVEL) kernel" "$(cat "$T/skip")" ;;
		3) ;;
		*)
			t_fail "$name ($LEVEL) kernel"
			[ -s "$T/why" ] && sed 's/^/    /' "$T/why"
			for d in diff.kernel diff.kstdout diff.dprobe; do
				[ -s "$T/$d" ] && head -n 40 "$T/$d" | sed 's/^/    /'
			done
			[ -s "$T/cmd" ] && echo "    repro (dprobe): $(cat "$T/cmd")"
			;;
		esac
	done
done
t_end
