"$DPROBE" check -x "$EXAMPLE" 'p:a wrok' 'p:b work+2' 'r:c work+4' 'p:d run_job+1' 'p:e work+4096' 'p:f work $arg1 $arg2:string'
