# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='the symbol type on a symbol place: return address, %ip'
# At the entry of take_many, $stack0 and +0($stack) hold the address main
# returns to (the instruction after its call of take_many), printed as
# sym+off/size; %ip is the probe address, take_many+0x0.  (symbol is
# refused on uprobe_events, so there is no kernel comparison.)
prog=args
defs='p:sym take_many ra=$stack0:symbol ra2=+0($stack):symbol ip=%ip:symbol'
expected() {
	cat <<'EOF2'
args sym: (take_many+0x0/{size:take_many}) ra={retsite:main:take_many} ra2={retsite:main:take_many} ip=take_many+0x0/{size:take_many}
> args: ok
# dprobe: 1 events, 0 filtered, 0 missed, 0 lost
# exit=0
EOF2
}
