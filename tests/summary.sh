#!/bin/sh
# Sum the per-stage results that `make test` collected in $DPROBE_RESULTS
# (lines "stage passed failed skipped") into one closing line.
set -u
f=${DPROBE_RESULTS:?}
[ -s "$f" ] || { echo "no test results in $f"; exit 1; }
awk '{ p += $2; f += $3; s += $4
       if ($3 > 0) bad = bad " " $1
       if ($4 > 0) skip = skip " " $1 }
     END {
	if (skip != "") print "skipped in:" skip
	if (bad != "") print "failed in:" bad
	printf "%d passed, %d failed, %d skipped\n", p, f, s
	exit f > 0 }' "$f"
