# latency, count, top and trace --ts: bad options are said in one line
# before the usage (exit 2), bad places, filters and keys with the
# kernel's errors, before anything runs; then count on the example
err=$(mktemp) || exit 2
run() {
	"$DPROBE" "$@" 2> "$err"; echo "-> $?"
	head -n 4 "$err"
}
run latency
run latency -- "$EXAMPLE"
run latency work
run latency work --by cpu -- "$EXAMPLE"
run latency work --interval 0 -- "$EXAMPLE"
run latency work --engine nosuch -- "$EXAMPLE"
run latency work --duration -1 -- "$EXAMPLE"
run latency nosuchfunc -- "$EXAMPLE"
run latency 'work a=%di:s32' --filter 'b == 1' -- "$EXAMPLE"
run count -e 'p:w work' -- "$EXAMPLE"
run count -e 'p:w work' --by nofield -- "$EXAMPLE"
run count -e 'p:w work a=%di:s32' --by a.bogus -- "$EXAMPLE"
run count -e 'p:w work a=%di:s32' --by a,comm,pid,tid -- "$EXAMPLE"
run count -e 'p:w work a=%di:s32' --by a --interval soon -- "$EXAMPLE"
run count --by a -- "$EXAMPLE"
run top -e 'p:w work' -n 0 -- "$EXAMPLE"
run top -e 'p:w work' --interval 0.001 -- "$EXAMPLE"
run top -e 'p:w work' --by '' -- "$EXAMPLE"
run trace --ts ms -e 'p:w work' -- "$EXAMPLE"
# the example calls work(0..2): one each, equal counts sorted by key
"$DPROBE" count -e 'p:w work a=%di:s32' --by a -- "$EXAMPLE" 2> "$err"; echo "-> $?"
cat "$err"
rm -f "$err"
