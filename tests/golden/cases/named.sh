# Named events: application tracepoints (GROUP:NAME) and SDT probes
# (sdt_PROVIDER:NAME), looked up with -x; t: lines; what is not a name.
TP=$(dirname "$DPROBE")/examples/tracepoint_example
"$DPROBE" check 'p:x sdt_foo' 'p:myprobe' 't:g/e app:req v=$arg1:s32' 't tick'
echo "rc=$?"
"$DPROBE" check --json 'shop:order' 'p:pyret sdt_x:y'
echo "rc=$?"
"$DPROBE" check -x "$TP" shop:order shop:nosuch 't:tp/o shop:order a=+0($arg2):string'
echo "rc=$?"
"$DPROBE" format -x "$TP" shop:restock
echo "rc=$?"
"$DPROBE" list -x "$TP" 'shop:*'
