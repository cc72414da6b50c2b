# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='trace --ts ns: nanosecond timestamps (9 decimals) in text and JSON lines, never going back'
# progs/lat.c "beat 12": 12 calls of beat(k), 10 ms apart.  Each text
# line is the kernel's prefix with SECS.NNNNNNNNN (nine decimals) before
# ": b: "; each JSON line has "ts":SECS.NNNNNNNNN.  The times never go
# back, and two calls 10 ms apart are at least 10,000,000 ns apart.
prog=lat
defs='p:b beat k=%di:s64'
levels=O2

case_run() {
	dp_trace --ts ns -- "$P" beat 12
	mv "$T/events" "$T/text"
	dp_trace --ts ns --json -- "$P" beat 12
}

# "N lines, M well-formed, ..." for a list of timestamps in $T/ts
ts_check() {
	awk -v what="$1" '
	{ n++; split($0, p, "."); ns = p[1] * 1000000000 + p[2] }
	NR > 1 && ns < last { back++ }
	NR > 1 && ns - last < 10000000 { close_++ }
	{ last = ns }
	END { print what ": " n " timestamps, " back + 0 " going back, " close_ + 0 " closer than 10 ms" }' "$T/ts"
}

case_result() {
	echo "text: $(grep -cE '^ *[^ ].{0,15}-[0-9]+ +\[[0-9]{3}\] \.\.\.\.\. +[0-9]+\.[0-9]{9}: b: \(beat\+0x0/0x[0-9a-f]+\) k=[0-9]+$' "$T/text") lines of the form"
	sed -nE 's/.* ([0-9]+\.[0-9]{9}): b: .*/\1/p' "$T/text" >"$T/ts"
	ts_check text
	echo "json: $(grep -cE '^\{"event":"b","group":"kprobes","id":[0-9]+,"ts":[0-9]+\.[0-9]{9},"cpu":' "$T/events") lines of the form"
	sed -nE 's/.*"ts":([0-9]+\.[0-9]{9}),.*/\1/p' "$T/events" >"$T/ts"
	ts_check json
	summary_of "$T/stderr"
}

expected() {
	cat <<'EOF2'
text: 12 lines of the form
text: 12 timestamps, 0 going back, 0 closer than 10 ms
json: 12 lines of the form
json: 12 timestamps, 0 going back, 0 closer than 10 ms
# dprobe: 12 events, 0 filtered, 0 missed, 0 lost
EOF2
}
