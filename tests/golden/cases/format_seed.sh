"$DPROBE" format -x "$EXAMPLE" "p:myprobe work a=%di:s32 name=+0(%si):string" "r:myretprobe work \$retval"
