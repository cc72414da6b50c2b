# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='--format ctf: a CTF 1.8 directory that babeltrace2 lists with the fields --format json gives'
# args.c's main calls take_ints(-7, 0x1122334455667788, 255, ...) and
# take_rec(&rec1, ...), which returns 0xbeef + 'h' + 7 + 0 = 48990;
# rec1 is tag "record", bits 0xbeef, neg -5, u32s {1, 4294967295},
# names {"alpha", "beta", "gamma"}.  The same run twice, --format json
# then --format ctf -o DIR; babeltrace2 lists DIR: every event with the
# hostname, the CPU, vpid/vtid/procname (pid = tgid: one thread) and
# the fields: ints in decimal, x-types and addresses in hex (babeltrace2
# writes its digits in capitals: made small here), strings and the char
# quoted, arrays as babeltrace2 writes them.  Then each event's fields
# as --format json gave them, converted to that form: the same.  The
# times go forward, and the clock's offset makes them the wall clock of
# the run; the trace's environment says domain ust, tracer dprobe.
# Built without PIE: ip/func/ret_ip are link-time addresses.
prog=args
variant=nopie
# what is written does not depend on how the program was built
levels=O2
needs='babeltrace2 python3'
stdout_events=1
defs='p:cints take_ints a=%di:s64 b=%si:x64 c=%dx:u8
p:crec take_rec tag=+0(%di):string c=+0(%di):char neg=+10(%di):s16 u=+12(%di):u32[2] bits=+8(%di):x16 names=+24(%di):string[3]
r:cret take_rec ret=$retval:s64'
case_run() {
	dp_trace --format json -o "$T/json" -- "$P"
	mv "$T/stdout" "$T/json.stdout"
	date +%s >"$T/t0"
	dp_trace --format ctf -o "$T/ctf" -- "$P"
	date +%s >"$T/t1"
}
case_result() {
	babeltrace2 --names=all --fields=all "$T/ctf" >"$T/bt.all" 2>&1
	babeltrace2 "$T/ctf" >"$T/bt" 2>&1
	babeltrace2 --clock-cycles "$T/ctf" >"$T/bt.cycles" 2>&1
	babeltrace2 --clock-seconds "$T/ctf" >"$T/bt.secs" 2>&1
	python3 - "$T" "$(hostname)" <<'PY' 2>&1
import json, re, sys
T, host = sys.argv[1], sys.argv[2]
line = re.compile(r'^\[(\S+)\] \(\S+\) (\S+) (\S+): \{ cpu_id = (\d+) \}, '
                  r'\{ vpid = (\d+), vtid = (\d+), procname = "(.*)" \}, '
                  r'\{ (.*) \}$')
def events(name):
    out = []
    for l in open(name):
        m = line.match(l.rstrip('\n'))
        if not m:
            print("BADLINE:", l.rstrip('\n'))
            continue
        out.append(m.groups())
    return out
lower = lambda s: re.sub(r'0x[0-9A-F]+', lambda m: m.group(0).lower(), s)
bt = events(T + "/bt")
for ts, h, name, cpu, vpid, vtid, comm, fields in bt:
    pid = "PID" if vpid == vtid else "TID"
    print("%s%s: { cpu_id = CPU }, { vpid = PID, vtid = %s, procname = \"%s\" }, { %s }"
          % ("" if h == host else "HOST " + h + " ", name, pid, comm, lower(fields)))
# the same events from --format json, as babeltrace2 writes fields
def val(v):
    if v is None:
        return '"(fault)"'
    if isinstance(v, list):
        return "[ " + ", ".join("[%d] = %s" % (i, val(e)) for i, e in enumerate(v)) + " ]"
    if isinstance(v, str):
        return v if v.startswith("0x") else json.dumps(v)
    return str(v)
js = [json.loads(l) for l in open(T + "/json")]
same = 0
for j, b in zip(js, bt):
    head = [("__probe_ip", j.get("ip")), ("__probe_func", j.get("func")),
            ("__probe_ret_ip", j.get("ret_ip"))]
    f = ["%s = %s" % (k, v) for k, v in head if v] + \
        ["%s = %s" % (k, val(v)) for k, v in j["args"].items()]
    want = (j["group"] + ":" + j["event"], str(j["tgid"]), str(j["pid"]),
            j["comm"], ", ".join(f))
    got = (b[2], b[4], b[5], b[6], lower(b[7]))
    if want[0] == got[0] and want[3:] == got[3:] and want[1] == want[2] and got[1] == got[2]:
        same += 1
    else:
        print("# json", want, "\n# ctf ", got)
print("# json", len(js), "events, ctf", len(bt), "events,", same, "the same")
cyc = [int(e[0]) for e in events(T + "/bt.cycles")]
print("# times forward:", cyc == sorted(cyc) and len(cyc) == len(bt) and cyc[0] > 0)
t0, t1 = int(open(T + "/t0").read()), int(open(T + "/t1").read())
secs = [float(e[0]) for e in events(T + "/bt.secs")]
print("# wall clock in the run:", all(t0 - 1 <= s <= t1 + 1 for s in secs))
env = open(T + "/bt.all").readline()
print("# env: hostname", "trace:hostname = %s," % host in env,
      "domain ust", "trace:domain = ust," in env)
PY
	find "$T/ctf" -type f | sed "s#^$T/ctf/##" | sed 's/^stream_[0-9]*$/stream_N/' | sort -u
	head -n 1 "$T/ctf/metadata"
	grep -e 'tracer_name' -e 'freq' "$T/ctf/metadata"
	cat "$T/stdout" "$T/json.stdout" | sed 's/^/> /'
	echo "# exit=$(cat "$T/rc")"
}
expected() {
	cat <<'EOF2'
kprobes:cints: { cpu_id = CPU }, { vpid = PID, vtid = PID, procname = "args" }, { __probe_ip = {vaddr:take_ints}, a = -7, b = 0x1122334455667788, c = 255 }
kprobes:crec: { cpu_id = CPU }, { vpid = PID, vtid = PID, procname = "args" }, { __probe_ip = {vaddr:take_rec}, tag = "record", c = "r", neg = -5, u = [ [0] = 1, [1] = 4294967295 ], bits = 0xbeef, names = [ [0] = "alpha", [1] = "beta", [2] = "gamma" ] }
kprobes:cret: { cpu_id = CPU }, { vpid = PID, vtid = PID, procname = "args" }, { __probe_func = {vaddr:take_rec}, __probe_ret_ip = {retaddr:main:take_rec}, ret = 48990 }
# json 3 events, ctf 3 events, 3 the same
# times forward: True
# wall clock in the run: True
# env: hostname True domain ust True
metadata
stream_N
/* CTF 1.8 */
	tracer_name = "dprobe";
	freq = 1000000000;
> args: ok
> args: ok
# exit=0
EOF2
}
