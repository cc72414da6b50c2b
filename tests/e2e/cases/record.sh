# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='record + report: a trace.dat that dprobe report prints as trace does live, and trace-cmd report reads'
# args.c's main calls take_ints(-7, ...) and take_rec(&rec1, ...): the
# same definitions traced live (the events below), recorded with
# `dprobe record`, then read back three ways:
#   - `dprobe report` prints the very lines trace printed live (their
#     normalised form: comm, event, body);
#   - `trace-cmd report` (trace-cmd's own reader, libtracecmd, what
#     KernelShark uses) lists the same events with the same field values
#     (the name=value words after the place, which trace-cmd prints as
#     the raw address its print fmt says), arrays left out: the
#     kernel's own format declares a fixed array "u32 u32s[]", which
#     trace-cmd reads as empty;
#   - `dprobe report --format json` has every field too;
#   - hist triggers on the recording: the time from each ints to its
#     ret as a synthetic event `lat` (one call: one of each);
#   - `report --filter 'ints=a > 0' --format tracedat`: a recording of
#     what the filter keeps (ret and mem: ints has a=-7), read back;
# and a second `record` into the same file is refused without --force;
# a `record --compress` (version 7, zstd) reads the same in dprobe
# report and trace-cmd report.
prog=args
# the output does not depend on the build level
levels=O2
needs=trace-cmd
defs='p:ints take_ints a=%di:s64 b=%si:u32 c=%dx:x16
p:mem take_rec tag=+0(%di):string u32s=+12(%di):u32[2] first=+0(+24(%di)):string
r:ret take_ints $retval:s64'
case_run() {
	dp_trace -- "$P" $args || return
	_e=$(defs_eargs)
	eval "set -- $_e"
	t_timeout "$TMO" "$DPROBE" record -o "$T/rec.dat" "$@" -- "$P" \
		>"$T/rec.out" 2>"$T/rec.err" </dev/null
	echo $? >"$T/rec.rc"
	t_timeout "$TMO" "$DPROBE" record -o "$T/rec.dat" "$@" -- "$P" \
		>/dev/null 2>"$T/again.err" </dev/null
	echo $? >"$T/again.rc"
	t_timeout "$TMO" "$DPROBE" record --compress -o "$T/recz.dat" "$@" \
		-- "$P" >/dev/null 2>&1 </dev/null
	echo $? >"$T/recz.rc"
	"$DPROBE" report "$T/recz.dat" >"$T/reportz" 2>/dev/null
	trace-cmd report "$T/recz.dat" >"$T/tcz" 2>/dev/null
	"$DPROBE" report "$T/rec.dat" >"$T/report" 2>"$T/report.err"
	"$DPROBE" report --format json "$T/rec.dat" >"$T/report.json" \
		2>/dev/null
	trace-cmd report "$T/rec.dat" >"$T/tc" 2>"$T/tc.err"
	# a recording of the records a filter keeps, read back
	"$DPROBE" report "$T/rec.dat" --filter 'ints=a > 0' --format tracedat \
		-o "$T/sub.dat" 2>/dev/null
	"$DPROBE" report "$T/sub.dat" >"$T/sub" 2>"$T/sub.err"
	# a latency between two recorded events, as ftrace computes one
	"$DPROBE" report "$T/rec.dat" -e 's:lat u64 ns' \
		--trigger 'ints=hist:keys=common_pid:t0=common_timestamp' \
		--trigger 'ret=hist:keys=common_pid:d=common_timestamp-$t0:onmatch(kprobes.ints).trace(lat,$d)' \
		--trigger 'lat=hist:keys=common_pid:vals=ns' >"$T/lat" 2>&1
}
# EVENT name=value...: the fields of a trace line, its context and its
# parenthesised place left out.
fields_of() {
	sed -E -e 's/^.*\] [^:]*[0-9]: ([a-z_]+): +/\1 /' \
		-e 's/^([a-z_]+) \([^)]*\)/\1/' -e 's/  +/ /g' \
		-e 's/ [a-z0-9_]+=\{[^}]*\}//g' "$1"
}
case_result() {
	trace_result
	echo "# record exit=$(cat "$T/rec.rc")"
	norm_trace <"$T/report" >"$T/report.norm"
	norm_trace <"$T/events" >"$T/live.norm"
	if cmp -s "$T/report.norm" "$T/live.norm"; then
		echo "# report = live"
	else
		echo "# report differs from live:"
		diff "$T/live.norm" "$T/report.norm"
	fi
	grep -v '^cpus=' "$T/tc" >"$T/tc.lines"
	fields_of "$T/tc.lines" >"$T/tc.fields"
	fields_of "$T/report" >"$T/report.fields"
	if cmp -s "$T/tc.fields" "$T/report.fields"; then
		echo "# trace-cmd report = dprobe report ($(wc -l <"$T/tc.fields") events)"
	else
		echo "# trace-cmd report differs:"
		diff "$T/report.fields" "$T/tc.fields"
	fi
	sed -E 's/.*"event":"([a-z]+)".*"args":(\{[^}]*\}).*/\1 \2/' \
		"$T/report.json"
	grep -E '^(synthetic/lat/hist|    Hits)' "$T/lat"
	echo "# filtered into a recording:"
	norm_trace <"$T/sub"
	grep '^dprobe: ' "$T/sub.err"
	echo "# again exit=$(cat "$T/again.rc")"
	sed "s|$T/rec\\.dat|FILE|" "$T/again.err"
	# --compress: version 7, zstd; read the same both ways
	echo "# compressed exit=$(cat "$T/recz.rc") version=$(head -c 11 \
		"$T/recz.dat" | tail -c 1)"
	norm_trace <"$T/reportz" | cmp -s - "$T/live.norm" &&
		echo "# compressed report = live"
	grep -v '^cpus=' "$T/tcz" >"$T/tcz.lines"
	fields_of "$T/tcz.lines" | cmp -s - "$T/report.fields" &&
		echo "# compressed trace-cmd report = dprobe report"
}
expected() {
	cat <<'EOF2'
args ints: (take_ints+0x0/{size:take_ints}) a=-7 b=1432778632 c=0xff
args ret: ({retsite:main:take_ints} <- take_ints) arg1=1234605616436508529
args mem: (take_rec+0x0/{size:take_rec}) tag="record" u32s={1,4294967295} first="alpha"
> args: ok
# dprobe: 3 events, 0 filtered, 0 missed, 0 lost
# exit=0
# record exit=0
# report = live
# trace-cmd report = dprobe report (3 events)
ints {"a":-7,"b":1432778632,"c":"0xff"}
ret {"arg1":1234605616436508529}
mem {"tag":"record","u32s":[1,4294967295],"first":"alpha"}
    Hits: 1
    Hits: 1
synthetic/lat/hist:
    Hits: 1
# filtered into a recording:
args ret: ({retsite:main:take_ints} <- take_ints) arg1=1234605616436508529
args mem: (take_rec+0x0/{size:take_rec}) tag="record" u32s={1,4294967295} first="alpha"
dprobe: 2 events, 0 filtered, 0 lost
# again exit=2
dprobe record: FILE exists: give --force to overwrite it, or -o another name
# compressed exit=0 version=7
# compressed report = live
# compressed trace-cmd report = dprobe report
EOF2
}
