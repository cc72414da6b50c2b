# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='--json: one object per event'
# The keys of src/output/json.c: event, group, id, ts, cpu, pid, tgid,
# comm, then ip and sym (entry) or func, ret_ip, sym, ret_sym (return),
# then args and, when a string faulted, faults.  ts/cpu/pid are replaced
# (pid = tgid: one thread).  Symbol places are in group kprobes; ids are
# given from 1000 in definition order.  Values: take_rec(&rec1, "hello
# world", &out1, NULL): tag "record", char 'r' as a string, neg -5 as a
# number, u32[2] as an array, x16 as a hex string, NULL string null and
# listed in faults.  take_rec returns 0xbeef + 'h' + 7 + 0 = 48990.
# Built without PIE: ip/func/ret_ip are link-time addresses.
prog=args
variant=nopie
json=1
opts=--json
defs='p:jrec take_rec tag=+0(%di):string c=+0(%di):char neg=+10(%di):s16 u=+12(%di):u32[2] bits=+8(%di):x16 nul=+0(%cx):string
r:jret take_rec ret=$retval:s64'
expected() {
	cat <<'EOF2'
{"event":"jrec","group":"kprobes","id":1000,"ts":TS,"cpu":CPU,"pid":PID,"tgid":PID,"comm":"args","ip":"{vaddr:take_rec}","sym":"take_rec+0x0/{size:take_rec}","args":{"tag":"record","c":"r","neg":-5,"u":[1,4294967295],"bits":"0xbeef","nul":null},"faults":["nul"]}
{"event":"jret","group":"kprobes","id":1001,"ts":TS,"cpu":CPU,"pid":PID,"tgid":PID,"comm":"args","func":"{vaddr:take_rec}","ret_ip":"{retaddr:main:take_rec}","sym":"take_rec","ret_sym":"{retsite:main:take_rec}","args":{"ret":48990}}
> args: ok
# dprobe: 2 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
