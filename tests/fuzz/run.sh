#!/bin/sh
# Run libFuzzer targets for a bounded time.
#
#   sh tests/fuzz/run.sh SECONDS NAME...
#
# For each NAME, runs build-fuzz/fuzz-NAME for SECONDS on the corpus
# build-fuzz/corpus-NAME (kept between runs so coverage accumulates; seeded
# from tests/fuzz/seeds-NAME/ when that exists) and prints one line.  A
# finding (crash, timeout, out-of-memory, leak) leaves its input in
# build-fuzz/artifacts-NAME/ and the full output in build-fuzz/fuzz-NAME.log;
# both paths are printed.  With DPROBE_RESULTS set, one line per fuzzer is
# appended to that file: "fuzz-NAME <passed> <failed> <skipped>".
# Exits 1 if any fuzzer found something, 2 on bad usage.

usage() {
	echo "usage: sh tests/fuzz/run.sh SECONDS NAME..." >&2
	exit 2
}

[ $# -ge 2 ] || usage
secs=$1
shift
case $secs in
'' | *[!0-9]* | 0) usage ;;
esac

# Resolve a relative results path against the caller's directory first.
results=${DPROBE_RESULTS:-}
case $results in
'' | /*) ;;
*) results=$(pwd)/$results ;;
esac

cd "$(dirname "$0")/../.." || exit 2
root=$(pwd)

npass=0 nfail=0 nskip=0
record() {
	npass=$((npass + $2)) nfail=$((nfail + $3)) nskip=$((nskip + $4))
	if [ -n "$results" ]; then
		echo "fuzz-$1 $2 $3 $4" >>"$results"
	fi
}

# Copy every seed file into the corpus (libFuzzer adds new inputs there).
seed() {
	[ -d "$1" ] || return 0
	find "$1" -type f -exec cp -p {} "$2"/ \;
}

# "Done 123 runs in 30 second(s)" -> "123 runs in 30 s"
summary() {
	sed -n 's/^Done \([0-9]*\) runs in \([0-9]*\) second.*/\1 runs in \2 s/p' "$1" |
		tail -n 1
}

found=0
for name in "$@"; do
	bin=build-fuzz/fuzz-$name
	corpus=build-fuzz/corpus-$name
	art=build-fuzz/artifacts-$name/
	log=build-fuzz/fuzz-$name.log

	if [ ! -x "$bin" ]; then
		echo "fuzz-$name: SKIP ($bin not built)"
		record "$name" 0 0 1
		continue
	fi
	mkdir -p "$corpus" "$art"
	seed "tests/fuzz/seeds-$name" "$corpus"

	"$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix="$art" "$corpus" >"$log" 2>&1
	rc=$?

	if [ "$rc" -eq 0 ]; then
		n=$(find "$corpus" -type f | wc -l)
		echo "fuzz-$name: ok ($(summary "$log"), corpus $((n)) inputs)"
		record "$name" 1 0 0
		continue
	fi

	found=1
	record "$name" 0 1 0
	unit=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
	# e.g. "AddressSanitizer: heap-buffer-overflow lang.c:12 in f"
	what=$(sed -n 's/^SUMMARY: //p' "$log" | tail -n 1)
	echo "fuzz-$name: FAIL (exit $rc${what:+: $what})"
	if [ -n "$unit" ]; then
		case $unit in
		/*) ;;
		*) unit=$root/${unit#./} ;;
		esac
		echo "  input: $unit"
	else
		# no input saved (e.g. the fuzzer did not start): show why
		tail -n 5 "$log" | sed 's/^/  | /'
	fi
	echo "  log:   $root/$log"
done

echo "fuzz: $npass passed, $nfail failed, $nskip skipped"
exit "$found"
