# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='--format otlp: OTLP/JSON log records, checked against the JSON mapping and --format json'
# json.sh's probes on args (every value type: string, char, s16, u32[2],
# x16, a faulted string; and a return), traced twice: --format otlp,
# then --format json.  python3 checks the OTLP lines against the
# protocol's JSON mapping (lowerCamelCase keys, one AnyValue kind each,
# intValue and the times decimal strings, times within a day of now,
# traceId/spanId absent or hex) and that every event of the json run is
# there, with the same fields and values and the same place.  Built
# without PIE, so both runs have the same addresses.
prog=args
levels=O0
variant=nopie
needs=python3
defs='p:jrec take_rec tag=+0(%di):string c=+0(%di):char neg=+10(%di):s16 u=+12(%di):u32[2] bits=+8(%di):x16 nul=+0(%cx):string
r:jret take_rec ret=$retval:s64'
case_run() {
	dp_trace --format json -- "$P" &&
		mv "$T/events" "$T/json" &&
		dp_trace --format otlp -- "$P"
}
case_result() {
	python3 - "$T/events" "$T/json" <<'PY' 2>&1
import json, re, sys, time
now = time.time_ns()
lines = open(sys.argv[1]).read().splitlines()
bad = []
def need(ok, what):
    if not ok:
        bad.append(what)
def keys(o, allowed, where):
    for k in o:
        need(re.fullmatch(r"[a-z][A-Za-z]*", k) and k in allowed, f"{where}: key {k}")
def value(v, where):
    """An AnyValue as a Python value; {} (no value) is None."""
    keys(v, {"stringValue", "intValue", "doubleValue", "boolValue", "arrayValue", "kvlistValue", "bytesValue"}, where)
    need(len(v) <= 1, f"{where}: {len(v)} kinds")
    if "intValue" in v:
        need(isinstance(v["intValue"], str) and re.fullmatch(r"-?\d+", v["intValue"]), f"{where}: intValue {v['intValue']!r}")
        return int(v["intValue"])
    if "arrayValue" in v:
        keys(v["arrayValue"], {"values"}, where)
        return [value(e, where) for e in v["arrayValue"]["values"]]
    if "stringValue" in v:
        need(isinstance(v["stringValue"], str), where)
        return v["stringValue"]
    return v.get("doubleValue", v.get("boolValue"))
def attrs(a, where):
    out = {}
    for kv in a:
        keys(kv, {"key", "value"}, where)
        need(kv["key"] not in out, f"{where}: {kv['key']} twice")
        out[kv["key"]] = value(kv["value"], where + "." + kv["key"])
    return out
def nanos(s, where):
    need(isinstance(s, str) and re.fullmatch(r"\d+", s), f"{where}: {s!r} not a decimal string")
    need(abs(int(s) - now) < 86400 * 10**9, f"{where}: {s} not within a day of now")
got = []
for n, line in enumerate(lines):
    req = json.loads(line)
    keys(req, {"resourceLogs"}, "request")
    for rl in req["resourceLogs"]:
        keys(rl, {"resource", "scopeLogs", "schemaUrl"}, "resourceLogs")
        keys(rl["resource"], {"attributes", "droppedAttributesCount"}, "resource")
        res = attrs(rl["resource"]["attributes"], "resource")
        need(res.get("service.name") == "dprobe", "service.name")
        for sl in rl["scopeLogs"]:
            keys(sl, {"scope", "logRecords", "schemaUrl"}, "scopeLogs")
            keys(sl["scope"], {"name", "version"}, "scope")
            need(sl["scope"]["name"] == "dprobe", "scope name")
            for r in sl["logRecords"]:
                keys(r, {"timeUnixNano", "observedTimeUnixNano", "severityNumber", "severityText", "body", "attributes", "traceId", "spanId", "flags"}, "logRecord")
                nanos(r["timeUnixNano"], "timeUnixNano")
                nanos(r["observedTimeUnixNano"], "observedTimeUnixNano")
                need(r.get("severityNumber") == 9 and r.get("severityText") == "INFO", "severity")
                for k, w in (("traceId", 32), ("spanId", 16)):
                    need(k not in r or re.fullmatch("[0-9a-f]{%d}" % w, r[k]), k)
                a = attrs(r["attributes"], "logRecord")
                need(value(r["body"], "body").startswith(a["event.name"] + ": "), "body")
                need(res.get("process.pid") == a["thread.id"], "process.pid")
                need(res.get("process.executable.name") == a["thread.name"] == "args", "process name")
                got.append(a)
def place(a, pre):
    return {k: a[pre + k] for k in ("ip", "func", "ret_ip", "symbol", "ret_symbol") if pre + k in a}
mine = sorted(json.dumps([a["event.name"], a["event.group"], {k: v for k, v in a.items() if "." not in k}, place(a, "probe.")], sort_keys=True) for a in got)
ref = []
for line in open(sys.argv[2]):
    e = json.loads(line)
    p = {k: e[k] for k in ("ip", "func", "ret_ip") if k in e}
    p.update({o: e[j] for j, o in (("sym", "symbol"), ("ret_sym", "ret_symbol")) if j in e})
    ref.append(json.dumps([e["event"], e["group"], e["args"], p], sort_keys=True))
print("# records", len(got), "in lines", "yes" if lines else "none")
print("# mapping errors", len(bad), bad[:3])
print("# same events as --format json", mine == sorted(ref))
if mine != sorted(ref):
    print("\n".join(mine), "\n--\n", "\n".join(sorted(ref)))
PY
	echo "# exit=$(cat "$T/rc")"
}
expected() {
	cat <<'EOF2'
# records 2 in lines yes
# mapping errors 0 []
# same events as --format json True
# exit=0
EOF2
}
