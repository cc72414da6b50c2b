# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='dprobe top, not on a terminal: a block per interval, most first, counts starting again; -n; the last block at exit'
# progs/lat.c "beat 240": beat(k) every 10 ms, about 2.5 s, k cycling
# 0 1 1 2 2 2 (40, 80 and 120 calls).  With --interval 0.5, standard
# output a file: blocks one after the other, at least 3 (how many
# depends on the machine's speed), numbered from 1, the last one said to
# be the partial one; in each block the entries most first; over all
# blocks the counts add up to 40, 80 and 120 exactly (each interval
# counts anew, nothing lost or counted twice).  Then -n 1 with an
# interval longer than the run: one block, the largest entry alone and
# "# 2 more entries not shown", the Totals of all three.
prog=lat
timestamps=no	# no trace line is compared: run-all.sh's timens pass skips it
defs=''
levels=O2

t_run() {
	_n=$1
	shift
	record_cmd top "$@" -- "$P" beat 240
	t_timeout "$TMO" "$DPROBE" top -e 'p:b beat k=%di:s64' --by k "$@" \
		-- "$P" beat 240 >"$T/$_n.out" 2>"$T/$_n.err" </dev/null
	echo $? >"$T/$_n.rc"
}

case_run() {
	t_run blocks -n 3 --interval 0.5
	t_run one -n 1 --interval 600
}

case_result() {
	awk '
	/^# dprobe top: interval / {
		n++
		if ($5 != n) bad = bad " numbered " $5 " for " n
		last = $0
		prev = -1
	}
	/^{ k: / {
		k = $3
		c = $6
		sum[k] += c
		if (prev >= 0 && c > prev) bad = bad " unsorted in " n
		prev = c
	}
	END {
		print (n >= 3 ? "3 blocks or more" : n " blocks")
		print (last ~ /, the last \(partial\)$/ ? "the last one partial" : "last: " last)
		print "k=0 " sum[0] ", k=1 " sum[1] ", k=2 " sum[2]
		print "problems:" (bad ? bad : " none")
	}' "$T/blocks.out"
	summary_of "$T/blocks.err"
	echo "# exit=$(cat "$T/blocks.rc")"
	grep -v '^lat: ' "$T/one.out"
	summary_of "$T/one.err"
	echo "# exit=$(cat "$T/one.rc")"
}

expected() {
	cat <<'EOF2'
3 blocks or more
the last one partial
k=0 40, k=1 80, k=2 120
problems: none
# dprobe: 240 events, 0 filtered, 0 missed, 0 lost
# exit=0
# dprobe top: interval 1 (600s), by k, at most 1 entry each, the last (partial)
kprobes/b/hist:
# event histogram
#
# trigger info: hist:keys=k:vals=hitcount:sort=hitcount.descending:size=2048 [active]
#

{ k:          2 } hitcount:        120  |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|
# 2 more entries not shown

Totals:
    Hits: 240
    Entries: 3
    Dropped: 0
# dprobe: 240 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
