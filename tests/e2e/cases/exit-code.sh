# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc="dprobe exits with the traced command's exit status"
# exitcode 3: work(3), then exit(3): dprobe's status is 3.
prog=exitcode
args=3
kdiff=yes
defs='p:w work a=%di:s64'
expected() {
	cat <<'EOF2'
exitcode w: (work+0x0/{size:work}) a=3
# dprobe: 1 events, 0 filtered, 0 missed, 0 lost
# exit=3
EOF2
}
