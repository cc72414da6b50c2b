# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='arguments, members and locals by name (DWARF): the values the program prints, at -O0 and -O2'
# dwarf.c: handle(r, n, who) three times, each r a struct msg of main()'s
# table (a bitfield pair, a char array, a char pointer, a linked next, an
# int array, a union); it returns r->id + n; helper(k, &r->hdr), a static
# function, keeps k * 3 + len in a volatile local.  The definitions name
# what they fetch: parameters (n, who: named after themselves), member
# chains (r->hdr.flag, r->next->id, r->vals[2], r->u.b[1]), $retval and a
# parameter at the return (typed from the declarations, read through the
# values saved at entry), and perf probe's FUNC:LINE with a local
# (helper:3 is the printf line, where local is stored).  The expected
# values are main()'s table; the program prints the same values itself.
# The third message's next is NULL: r->next->id cannot be read there and
# is 0 in the record (the program prints -1).
prog=dwarf
defs='p:h {bin}:handle n who id=r->id len=r->hdr.len kind=r->hdr.kind flag=r->hdr.flag prio=r->hdr.prio name=r->name text=r->text nextid=r->next->id v2=r->vals[2] ui=r->u.i ub1=r->u.b[1]
r:hr {bin}:handle $retval n
p:hp {bin}:helper k hlen=h->len
p:hl {bin}:helper:3 local'
expected() {
	# n who id len kind flag prio name text nextid v2 ui ub1 | local
	while read -r n who id len kind flag prio name text nextid v2 ui ub1; do
		[ "$text" = '-' ] && text=
		text=$(echo "$text" | tr _ ' ')
		echo "dwarf h: (handle+0x0/{size:handle}) n=$n who=\"$who\" id=$id len=$len kind=$kind flag=$flag prio=$prio name=\"$name\" text=\"$text\" nextid=$nextid v2=$v2 ui=$ui ub1=$ub1"
		echo "dwarf hr: ({retsite:main:handle} <- handle) arg1=$((id + n)) n=$n"
		k=$((n - 1))
		echo "dwarf hp: (helper+0x0/{size:helper}) k=$k hlen=$len"
		echo "dwarf hl: (helper+{lineoff:helper:3}/{size:helper}) local=$((k * 3 + len))"
	done <<'EOF2'
1 main 42 300 9 5 17 alpha hello_world 7 3 258 1
2 loop 7 12 1 0 31 beta second -3 7 65535 255
3 loop -3 65535 255 7 0 gamma - 0 -3 -1 255
EOF2
	cat <<'EOF2'
> handle: n=1 who="main" id=42 len=300 kind=9 flag=5 prio=17 name="alpha" text="hello world" nextid=7 v2=3 ui=258 ub1=1
> handle returns 43
> helper: k=0 local=300
> handle: n=2 who="loop" id=7 len=12 kind=1 flag=0 prio=31 name="beta" text="second" nextid=-3 v2=7 ui=65535 ub1=255
> handle returns 9
> helper: k=1 local=15
> handle: n=3 who="loop" id=-3 len=65535 kind=255 flag=7 prio=0 name="gamma" text="" nextid=-1 v2=-3 ui=-1 ub1=255
> handle returns 0
> helper: k=2 local=65541
# dprobe: 12 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
