# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='a probe on every instruction of work(), getenv, strtol, qsort and bsearch: the program runs as untraced'
# Every instruction of these functions gets a probe (offsets from
# objdump), so every kind of instruction they contain is displaced and
# run out of line or emulated.  The program's output must be what it
# prints untraced, and each function's entry probe must hit once per
# call: work 4 times (insns), getenv 2, strtol 3 (atoi calls it), qsort
# 1, bsearch 5 (libc).  Nothing is lost or missed.  The kernel
# comparison (kernel-ref.sh) checks the hit count of every probe.
levels='O0 O2'
kdiff=yes
kexpect=none
syslibs=libc.so.6
sort_events=1
LIBC=/lib/x86_64-linux-gnu/libc.so.6
prog=libc
case_run() {
	defs=
	for fn in getenv strtol qsort bsearch; do
		for off in $(disasm "$LIBC" $fn | cut -f1); do
			defs="$defs
p:${fn}_$off libc.so.6:$fn+$off"
		done
	done
	E2E_VAR=e2e-value dp_trace -- "$P"
	cp "$T/events" "$T/events.libc"
	cp "$T/stdout" "$T/stdout.libc"
	cp "$T/stderr" "$T/stderr.libc"
	cp "$T/rc" "$T/rc.libc"
	I=$(build_prog insns) || exit 1
	defs=
	for off in $(disasm "$I" work | cut -f1); do
		defs="$defs
p:work_$off work+$off"
	done
	dp_trace -- "$I"
	E2E_VAR=e2e-value "$P" >"$T/untraced.libc" 2>&1
	"$I" >"$T/untraced.insns" 2>&1
}
case_result() {
	for p in libc insns; do
		ev=$T/events
		out=$T/stdout
		err=$T/stderr
		rc=$(cat "$T/rc")
		if [ $p = libc ]; then
			ev=$T/events.libc
			out=$T/stdout.libc
			err=$T/stderr.libc
			rc=$(cat "$T/rc.libc")
		fi
		echo "# $p: exit=$rc"
		diff "$T/untraced.$p" "$out" >/dev/null ||
			echo "# $p: output differs from the untraced run"
		norm_trace <"$ev" | sed -n -E 's/^[^ ]+ ([a-z]+)_0: .*/\1/p' |
			sort | uniq -c | sed -E 's/^ *([0-9]+) (.*)/# \2 entered \1 times/'
		summary_of "$err" | sed -E 's/[0-9]+ events/N events/'
	done
}
expected() {
	cat <<'EOF2'
# libc: exit=0
# bsearch entered 5 times
# getenv entered 2 times
# qsort entered 1 times
# strtol entered 3 times
# dprobe: N events, 0 filtered, 0 missed, 0 lost
# insns: exit=0
# work entered 4 times
# dprobe: N events, 0 filtered, 0 missed, 0 lost
EOF2
}
