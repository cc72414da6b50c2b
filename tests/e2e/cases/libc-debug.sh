# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='a static function of libc named only in its debug file (libc6-dbg): _int_malloc and its argument by name'
# mallocs.c allocates 5000, 70000 and 300000 bytes, each beyond the
# thread cache, so each reaches _int_malloc(av, bytes), which libc.so.6's
# own symbols do not name: the place and bytes come from the debug file
# libc6-dbg installs under /usr/lib/debug/.build-id.  libc calls
# _int_malloc for its own buffers too: the filter keeps the three.
prog=mallocs
levels=O2
needs=root
defs='p:im libc.so.6:_int_malloc bytes'
opts='--filter im=bytes==5000||bytes==70000||bytes==300000'
case_run() {
	id=$(readelf -n "$(ldd "$P" | awk '/libc.so.6/ { print $3 }')" |
		awk '/Build ID/ { print $3 }')
	LIBCDBG=/usr/lib/debug/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug
	if [ ! -e "$LIBCDBG" ]; then
		echo "needs libc6-dbg (libc's debug file)" >"$T/skip"
		exit 2
	fi
	dp_trace $opts -- "$P"
}
# how many of libc's own allocations the filter dropped is libc's business
case_result() {
	trace_result | sed 's/ [0-9]* filtered,/ N filtered,/'
}
expected() {
	for b in 5000 70000 300000; do
		echo "mallocs im: (_int_malloc+0x0/{size@LIBCDBG:_int_malloc}) bytes=$b"
	done
	cat <<'EOF2'
> mallocs: done
# dprobe: 3 events, N filtered, 0 missed, 0 lost
# exit=0
EOF2
}
