# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='tracepoints: an unknown one, and the ptrace engine, are refused before the program runs'
# Nothing runs: the program's own line never appears and dprobe exits 1.
# A t: definition's errors are the kernel's tprobe errors (trace_fprobe),
# the caret on the argument's expression as for kprobes.
prog=tpoints
timestamps=no	# no trace line is compared: run-all.sh's timens pass skips it
levels=O2
engines=auto
case_run() {
	"$DPROBE" trace -e tp:nosuch -- "$P" >"$T/out1" 2>&1
	echo "# rc=$?" >>"$T/out1"
	"$DPROBE" trace --engine ptrace -e tp:tick -- "$P" >"$T/out2" 2>&1
	echo "# rc=$?" >>"$T/out2"
	"$DPROBE" trace -e 't:g/e tp:tick v=$retval' -- "$P" >"$T/out3" 2>&1
	echo "# rc=$?" >>"$T/out3"
	# a tprobe reads arguments, not registers (the kernel's BAD_VAR)
	"$DPROBE" trace -e 't:g/e tp:tick i=$arg1:s32 cs=%cs' -- "$P" \
		>"$T/out4" 2>&1
	echo "# rc=$?" >>"$T/out4"
}
case_result() {
	sed "s|$P|PROG|g" "$T/out1" "$T/out2" "$T/out3" "$T/out4"
}
expected() {
	cat <<'EOF2'
dprobe: no tracepoint tp:nosuch in PROG or the libraries it loads
# rc=1
dprobe: tracepoints are enabled by the in-process engine, not --engine ptrace
# rc=1
trace_fprobe: error: $retval is not available on probe
  Command: t:g/e tp:tick v=$retval
                           ^
# rc=1
trace_fprobe: error: Invalid $-variable specified
  Command: t:g/e tp:tick i=$arg1:s32 cs=%cs
                                        ^
# rc=1
EOF2
}
