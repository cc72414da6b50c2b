# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='--format chrome: entry and return paired into slices, for Perfetto and chrome://tracing'
# fib.c's fib(6): 25 calls, recursive.  Every call is one complete
# slice ("X") named after the entry event, with the entry's n and the
# return's value as args: fib(n) for each n, durations not negative,
# each slice inside its caller's (same thread), the file one JSON
# document, the thread and the process named "fib".  python3 reads it.
prog=fib
args=6
needs=python3
defs='p:fib fib n=%di:s32
r:fibret fib ret=$retval:s64'
case_run() {
	dp_trace --format chrome -- "$P" $args
}
case_result() {
	python3 - "$T/events" <<'PY' 2>&1
import json, sys, collections
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
print("# displayTimeUnit", d.get("displayTimeUnit"))
print("# phases", sorted(collections.Counter(e["ph"] for e in ev).items()))
fib = lambda n: n if n < 2 else fib(n - 1) + fib(n - 2)
xs = sorted((e for e in ev if e["ph"] == "X"), key=lambda e: e["ts"])
bad = [e for e in xs if e["name"] != "fib" or e["dur"] < 0 or
       e["args"]["return"]["ret"] != fib(e["args"]["entry"]["n"])]
print("# slices wrong", len(bad))
# nesting: a slice starting inside another ends inside it
stack, crossed = [], 0
for e in xs:
    while stack and e["ts"] >= stack[-1]:
        stack.pop()
    if stack and e["ts"] + e["dur"] > stack[-1]:
        crossed += 1
    stack.append(e["ts"] + e["dur"])
print("# slices crossing", crossed)
print("# names", sorted(set((e["name"], e["args"]["name"]) for e in ev if e["ph"] == "M")))
PY
	echo "# exit=$(cat "$T/rc")"
}
expected() {
	cat <<'EOF2'
# displayTimeUnit ns
# phases [('M', 2), ('X', 25)]
# slices wrong 0
# slices crossing 0
# names [('process_name', 'fib'), ('thread_name', 'fib')]
# exit=0
EOF2
}
