# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# What the in-process benchmark scripts (agent_bench.sh, tp_bench.sh)
# share.  The sourcing script sets B (build dir), SAMPLES (a scratch
# file), SECONDS_PER_RUN and REPEATS, and defines run_once ARGS... N,
# which runs one configuration N times and prints "<ns for the loop> <N>".

ns_per_call() {	# ARGS... N -> ns per call
	out=$(run_once "$@") || return 1
	echo "$out" | awk '{ printf "%.3f\n", $1 / $2 }'
}

median() {
	sort -n | awk '{ v[NR] = $1 } END {
		if (NR % 2) print v[(NR + 1) / 2]
		else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# measure PILOT ARGS... -> "N MIN MEDIAN": N for about SECONDS_PER_RUN
# seconds (two significant digits) from a pilot run of PILOT, then
# REPEATS runs of N.
measure() {
	pilot=$1
	shift
	p=$(ns_per_call "$@" "$pilot") || { echo n/a; return; }
	n=$(awk -v p="$p" -v s="$SECONDS_PER_RUN" 'BEGIN {
		n = s * 1e9 / p; e = 1; while (n >= 100) { n /= 10; e *= 10 }
		printf "%d\n", int(n + 0.5) * e }')
	: >"$SAMPLES"
	r=0
	while [ $r -lt "$REPEATS" ]; do
		ns_per_call "$@" "$n" >>"$SAMPLES" || { echo n/a; return; }
		r=$((r + 1))
	done
	echo "$n $(sort -n "$SAMPLES" | head -n 1) $(median <"$SAMPLES")"
}

# table NAMES BASE FLOOR RATIOS: stdin "ID N MIN MEDIAN" lines, NAMES a
# file of "ID<TAB>description" lines -> a Markdown table with ovh =
# median - BASE's median, then each of RATIOS (IDs) over FLOOR's ovh.
table() {
	awk -v base_id="$2" -v floor_id="$3" -v ratios="$4" -F '\t' '
	FILENAME == ARGV[1] { name[$1] = $2; next }
	FNR == 1 && !head {
		print "| case | N | min ns/call | median ns/call | ovh ns/call |"
		print "| --- | ---: | ---: | ---: | ---: |"
		head = 1
	}
	{
		split($0, f, " ")
		id = f[1]
		if (f[2] == "n/a") {
			printf "| %s | n/a | n/a | n/a | n/a |\n", name[id]
			next
		}
		if (id == base_id) base = f[4]
		ovh = id == base_id ? "-" : sprintf("%.1f", f[4] - base)
		o[id] = f[4] - base
		printf "| %s | %d | %.1f | %.1f | %s |\n", name[id], f[2], f[3],
			f[4], ovh
	}
	END {
		if (o[floor_id] <= 0) exit
		print ""
		k = split(ratios, m, " ")
		for (i = 1; i <= k; i++)
			if (m[i] in o)
				printf "%s / floor (over base): %.2f\n", m[i],
					o[m[i]] / o[floor_id]
	}' "$1" -
}
