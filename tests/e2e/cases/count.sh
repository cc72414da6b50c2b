# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='dprobe count --by: counts by a field, comm and pid, most first, as the kernel hist text with bars; --filter'
# progs/lat.c "beat 60": beat(k) 60 times, k cycling 0 1 1 2 2 2: 10
# calls with k = 0, 20 with 1, 30 with 2.  Most first: 2, 1, 0.  The bar
# of the largest is 40 columns, the others n * 40 / 30 rounded: 27 and
# 13.  By comm,pid: one entry, the program's name and its pid (the pid
# written as PID here, its width too).  With --filter 'k > 0' the k = 0 calls are not
# counted.  The program's line, dprobe's summary and exit status after.
prog=lat
timestamps=no	# no trace line is compared: run-all.sh's timens pass skips it
defs=''

c_run() {
	_n=$1
	shift
	record_cmd count "$@" -- "$P" beat 60
	t_timeout "$TMO" "$DPROBE" count -e 'p:b beat k=%di:s64' "$@" \
		-- "$P" beat 60 >"$T/$_n.out" 2>"$T/$_n.err" </dev/null
	echo $? >"$T/$_n.rc"
}

case_run() {
	c_run k --by k
	c_run comm --by comm,pid
	c_run filt --by k --filter 'b=k > 0'
}

case_result() {
	for _n in k comm filt; do
		echo "== $_n"
		sed -e 's/pid: *[0-9][0-9]* }/pid: PID }/' -e 's/^/> /' "$T/$_n.out"
		summary_of "$T/$_n.err"
		echo "# exit=$(cat "$T/$_n.rc")"
	done
}

expected() {
	cat <<'EOF2'
== k
> lat: 60 beats
> kprobes/b/hist:
> # event histogram
> #
> # trigger info: hist:keys=k:vals=hitcount:sort=hitcount.descending:size=2048 [active]
> #
> 
> { k:          2 } hitcount:         30  |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|
> { k:          1 } hitcount:         20  |@@@@@@@@@@@@@@@@@@@@@@@@@@@             |
> { k:          0 } hitcount:         10  |@@@@@@@@@@@@@                           |
> 
> Totals:
>     Hits: 60
>     Entries: 3
>     Dropped: 0
# dprobe: 60 events, 0 filtered, 0 missed, 0 lost
# exit=0
== comm
> lat: 60 beats
> kprobes/b/hist:
> # event histogram
> #
> # trigger info: hist:keys=comm,pid:vals=hitcount:sort=hitcount.descending:size=2048 [active]
> #
> 
> { comm: lat                                               , pid: PID } hitcount:         60  |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|
> 
> Totals:
>     Hits: 60
>     Entries: 1
>     Dropped: 0
# dprobe: 60 events, 0 filtered, 0 missed, 0 lost
# exit=0
== filt
> lat: 60 beats
> kprobes/b/hist:
> # event histogram
> #
> # trigger info: hist:keys=k:vals=hitcount:sort=hitcount.descending:size=2048 [active]
> #
> 
> { k:          2 } hitcount:         30  |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|
> { k:          1 } hitcount:         20  |@@@@@@@@@@@@@@@@@@@@@@@@@@@             |
> 
> Totals:
>     Hits: 50
>     Entries: 2
>     Dropped: 0
# dprobe: 50 events, 10 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
