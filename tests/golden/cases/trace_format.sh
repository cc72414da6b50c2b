# --format picks the renderer: json gives what --json gives, text what
# no option gives.  The events go to files (-o) so the program's own
# output stays apart; timestamps, CPUs and process ids vary from run to
# run and are masked.
t=$(mktemp -d) || exit 2
def='p:a work a=%di:s32 name=+0(%si):string'
mask() {
	sed -e 's/"ts":[0-9.]*,"cpu":[0-9]*,"pid":[0-9]*,"tgid":[0-9]*/"ts":T,"cpu":C,"pid":P,"tgid":P/' \
	    -e 's/^ *work-[0-9]* *\[[0-9]*\] \(.....\) *[0-9.]*:/work-P [C] \1 T:/' "$1"
}
"$DPROBE" trace --format json -o "$t/format-json" -e "$def" -- "$EXAMPLE"; echo "-> $?"
"$DPROBE" trace --json -o "$t/json" -e "$def" -- "$EXAMPLE"; echo "-> $?"
"$DPROBE" trace --format text -o "$t/format-text" -e "$def" -- "$EXAMPLE"; echo "-> $?"
"$DPROBE" trace -o "$t/text" -e "$def" -- "$EXAMPLE"; echo "-> $?"
for f in format-json json format-text text; do
	mask "$t/$f" > "$t/$f.masked"
done
cat "$t/format-json.masked"
cmp "$t/format-json.masked" "$t/json.masked" && echo "--json: the same"
cat "$t/format-text.masked"
cmp "$t/format-text.masked" "$t/text.masked" && echo "no --format: the same"
rm -rf "$t"
