# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='function_graph against uftrace: the same calls, in the same order, at the same depths'
# uftrace, another tracer nobody here wrote, records fgraph.cc built with
# -pg (its mcount hook in every function: fgraphpg.cc); dprobe traces the
# plain build with --tracer function_graph.  Both outputs are reduced to
# their calls in order, each as its depth and name ("  fact" for a call
# at depth 1), from the lines that open a call (`name() {`) or are one
# (`name();`).  They must be the same up to the longjmp: uftrace's depth
# is wrong after a longjmp (it keeps the jumper frames open), so from
# do_jump on only the names and their order are compared.  Library
# calls (uftrace's PLT hooks) are left out: --no-libcall.
prog=fgraph
timestamps=no
needs='g++ uftrace'
engines='auto agent'
levels=O2
opts='--tracer function_graph --trace-option nofuncgraph-cpu,nofuncgraph-duration,nofuncgraph-overhead'
calls() {	# function_graph lines (no columns) -> "DEPTH NAME" per call
	awk '/^#/ { next }
	{ sub(/^[^|]*\| ?/, "") }
	/^ *[A-Za-z_][A-Za-z0-9_:]*\(\) \{$/ || /^ *[A-Za-z_][A-Za-z0-9_:]*\(\);$/ {
		match($0, /^ */)
		name = substr($0, RLENGTH + 1)
		sub(/\(.*/, "", name)
		print RLENGTH / 2, name
	}'
}
case_run() {
	dp_trace $opts -- "$P" || return
	PG=$(build_prog fgraphpg) || exit 1
	(cd "$T" && uftrace record -d "$T/uf" "$PG" >"$T/uf.out" 2>&1) ||
		{ echo "uftrace record failed: $(tail -n 3 "$T/uf.out")" >"$T/skip"; exit 2; }
	uftrace replay -d "$T/uf" --no-libcall -f none >"$T/uf.txt" 2>&1
}
case_result() {
	calls <"$T/events" >"$T/dp.calls"
	calls <"$T/uf.txt" >"$T/uf.calls"
	# up to do_jump: depth and name; from there on, names
	for f in dp uf; do
		awk '$2 == "do_jump" { j = 1 } { print j ? $2 : $0 }' \
			"$T/$f.calls" >"$T/$f.cmp"
	done
	if cmp -s "$T/dp.cmp" "$T/uf.cmp"; then
		echo "# same calls: $(wc -l <"$T/dp.cmp")"
	else
		diff "$T/uf.cmp" "$T/dp.cmp" | sed 's/^/# /'
	fi
}
expected() {
	echo "# same calls: 19"
}
