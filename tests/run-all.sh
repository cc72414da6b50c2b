#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# make test's scheduler: runs every test stage, LANES at a time (default:
# the number of CPUs, at least 2; two stages that mostly wait share a
# lane), each into its own log, and ends with the one closing line of
# tests/summary.sh.
#
#   sh tests/run-all.sh [STAGE...]      (default: every stage; the named
#                                        ones each in a lane of its own)
#
# Everything the stages run is built first by `make test-builds` (release
# and ASan, side by side), so no two stages ever build the same file.  A
# stage is a command line whose runners record "NAME P F S" lines in a
# results file of the stage's own; they are added to $DPROBE_RESULTS when
# it ends.  A stage that exits non-zero without having recorded a
# failure, or that recorded nothing at all, counts as one failure of its
# own ("make-NAME"), so a runner that dies early can never pass.  When a
# stage fails, the tail of its log is printed.  Nothing is cached between runs:
# the results file and the logs are made anew.
#
# The e2e programs are built once, by test-build (tests/e2e/progs.sh),
# for every stage that runs them.  The stages that put the kernel's
# uprobes on them (kernel-engine, e2e-kernel-ref) run copies in folders
# of their own, made by test-build too: a uprobe patches the file's page
# cache, so another stage running the same file at that moment would
# find the kernel's int3 in it.  What binutils says about a program is
# cached by its content, in one folder for all.
#
# The time-namespace stages (timens-*) run the suites again in a time
# namespace whose monotonic and boot clocks read a few seconds (e2e at
# -O2 only: the clock, not the compiler, is what changes; and only the
# cases whose result can hold a timestamp: a case that compares no trace
# line, such as the soak cases, says timestamps=no), so that no expected
# output can depend on the machine's uptime (the width of the seconds
# column of a trace line changes below 10,000 s).
#
# Env: DPROBE_RESULTS (set by the Makefile), TEST_LANES, TEST_LOGS (default
# build/test-logs).
set -u
cd "$(dirname "$0")/.." || exit 2
top=$(pwd)
: "${DPROBE_RESULTS:?set by make test}"
logs=${TEST_LOGS:-$top/build/test-logs}
lanes=${TEST_LANES:-$(nproc 2>/dev/null || echo 2)}
[ "$lanes" -ge 2 ] 2>/dev/null || lanes=2
B=$top/build
MK="make --no-print-directory"

# NAME|COMMAND, longest first (seconds measured on 2 CPUs, in a full
# run: e2e-auto 230, e2e-ptrace 200, timens-e2e 145 before it ran only
# the cases with timestamps, unit-asan 85, e2e-kernel-ref 85, ftrace
# 80, agent 80, fs and timens-fs 70 each, fuzz 60, kernel-engine 45,
# qemu 45, unit-release 35, the rest 10 or less): a lane that finishes
# takes the next one, so the long ones must not come last.  A stage
# marked "&" runs beside the one before it, in the same lane: fs and
# timens-fs mostly wait on FUSE requests, using half a CPU or so each;
# kernel-engine and qemu on the kernel and a booting VM (a sixth of a
# CPU each, measured: "CPU" in the verdict lines; qemu's guest, emulated,
# is left no more company); the three golden runs and the safety sweep
# (a quarter of a CPU each, private scratch folders, none on the
# kernel's tracefs) and lib and layers (a fifth, none) too.
stages() {
	cat <<EOF
e2e-auto|sh tests/e2e/run.sh $B/dprobe
e2e-ptrace|DPROBE_ENGINE=ptrace sh tests/e2e/run.sh $B/dprobe
timens-e2e|E2E_LEVELS=O2 E2E_TIMESTAMPED=1 sh tests/timens.sh sh tests/e2e/run.sh $B/dprobe
unit-asan|$MK BUILD=asan unit
e2e-kernel-ref|E2E_BUILD=$B/tests/e2e-kref E2E_SYMCACHE=$B/tests/e2e/symcache sh tests/e2e/kernel-ref.sh $B/dprobe
ftrace|$MK ftracetest
agent|$MK agent-test
fs|$MK fs-test
&timens-fs|sh tests/timens.sh sh tests/fs/run.sh $B/dprobe
fuzz|$MK fuzz-short
kernel-engine|E2E_BUILD=$B/tests/e2e-kengine E2E_SYMCACHE=$B/tests/e2e/symcache $MK kernel-engine
&qemu|$MK qemu-test
unit-release|$MK unit
golden-asan|$MK BUILD=asan golden
&safety|$MK safety
&timens-golden|sh tests/timens.sh sh tests/golden/run.sh $B/dprobe
&golden-release|$MK golden
install|$MK install-test
kernel-diff|$MK kernel-diff
lib|sh tests/lib-test.sh
&layers|sh tests/layers.sh
EOF
}

now() { date +%s; }
start=$(now)
elapsed() {
	_s=$(($(now) - start))
	printf '%d:%02d' $((_s / 60)) $((_s % 60))
}

# cpu_secs NAME: $_cpu is the CPU time (user and system) of this shell's
# children that ended, in whole seconds (`times` run in this shell: in
# a pipeline or $(...) it would count a subshell's).
cpu_secs() {
	times >"$logs/$1.times"
	_cpu=$(sed -n '2s/[ms]/ /gp' "$logs/$1.times" |
		awk '{ printf "%d\n", ($1 + $3) * 60 + $2 + $4 + 0.5 }')
	rm -f "$logs/$1.times"
}

# run_stage NAME COMMAND: the stage's log and results file, its verdict
# line (with its wall and CPU seconds: a stage that mostly waits can
# share a lane), and a failure of its own when it failed without saying so.
run_stage() {
	_log=$logs/$1.log
	_res=$logs/$1.results
	_t0=$(now)
	cpu_secs "$1"
	_c0=$_cpu
	DPROBE_RESULTS=$_res sh -c "$2" >"$_log" 2>&1 </dev/null
	_rc=$?
	_secs=$(($(now) - _t0))
	cpu_secs "$1"
	_took="${_secs}s (CPU $((_cpu - _c0))s)"
	_last=$(grep -E '[0-9]+ passed, [0-9]+ failed' "$_log" | tail -n 1)
	_failed=$(awk '{ f += $3 } END { print f + 0 }' "$_res" 2>/dev/null)
	if [ "$_rc" -ne 0 ] && [ "${_failed:-0}" -eq 0 ]; then
		echo "make-$1 0 1 0" >>"$_res"
	fi
	[ -s "$_res" ] || echo "make-$1 0 1 0" >>"$_res"
	cat "$_res" >>"$DPROBE_RESULTS"
	if [ "$_rc" -eq 0 ] && [ "${_failed:-0}" -eq 0 ]; then
		echo "[$(elapsed)] $1: ok in ${_took}${_last:+ ($_last)}"
	else
		echo "[$(elapsed)] $1: FAILED (exit $_rc) in ${_took}${_last:+ ($_last)}"
		echo "---- last lines of $_log ----"
		tail -n 60 "$_log" | sed 's/^/  | /'
		echo "----"
	fi
}

# A lane takes the next stage number under a lock (mkdir is atomic) until
# none is left.
take() {
	until mkdir "$queue/lock" 2>/dev/null; do sleep 0.1; done
	_n=$(cat "$queue/next")
	echo $((_n + 1)) >"$queue/next"
	rmdir "$queue/lock"
	echo "$_n"
}

# A line of the queue is one stage, or stages that share a lane (tabs
# between them), run side by side.
lane() {
	while :; do
		_i=$(take)
		_line=$(sed -n "${_i}p" "$queue/list")
		[ -n "$_line" ] || return 0
		case $_line in
		*"$tab"*)
			while [ -n "$_line" ]; do
				_one=${_line%%"$tab"*}
				case $_line in
				*"$tab"*) _line=${_line#*"$tab"} ;;
				*) _line= ;;
				esac
				run_stage "${_one%%|*}" "${_one#*|}" &
			done
			wait
			;;
		*) run_stage "${_line%%|*}" "${_line#*|}" ;;
		esac
	done
}
tab=$(printf '\t')

rm -rf "$logs"
mkdir -p "$logs" || exit 2
rm -f "$DPROBE_RESULTS"
queue=$(mktemp -d /tmp/dprobe-test-queue.XXXXXX) || exit 2
trap 'rm -rf "$queue"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [ $# -gt 0 ]; then
	for s in "$@"; do
		stages | sed -n "s/^&\{0,1\}\($s|\)/\1/p" | grep . ||
			{ echo "no stage $s" >&2; exit 2; }
	done >"$queue/list"
else
	# a stage marked "&" shares the lane of the one before it
	stages | awk '/^&/ { l = l "\t" substr($0, 2); next }
		{ if (n++) print l; l = $0 } END { if (n) print l }' >"$queue/list"
fi
echo 1 >"$queue/next"

echo "[$(elapsed)] building (release and ASan)"
if ! $MK -j"$lanes" test-builds >"$logs/build.log" 2>&1; then
	echo "make-build 0 1 0" >>"$DPROBE_RESULTS"
	# the parallel jobs bury the failing one: its errors first
	grep -E -A3 'error:|\*\*\*|cannot build' "$logs/build.log" | head -n 30
	echo "--- the build log's end ($logs/build.log):"
	tail -n 15 "$logs/build.log"
	sh tests/summary.sh
	exit 1
fi
echo "[$(elapsed)] built; running $(tr '\t' '\n' <"$queue/list" | grep -c .) stages, $lanes at a time"

i=0
while [ $i -lt "$lanes" ]; do
	lane &
	i=$((i + 1))
done
wait
echo "[$(elapsed)] all stages done; logs in $logs"
sh tests/summary.sh
