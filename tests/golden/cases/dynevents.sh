# The dynamic-events kinds beyond p and r, as `dprobe check` takes them:
# fprobes (f:), tracepoint probes (t:) and synthetic events (s:), with
# the kernel's listings, auto names and errors.
"$DPROBE" check 'f vfs_read' 'f vfs_read%return $retval' \
	'f8:g/e libc.so.6:malloc%return $arg1' 't sched_switch' \
	't:tp/e myapp:open_file $arg1 $arg2' \
	's:lat u64 lat; pid_t pid; char comm[16]; char path[]' \
	's:synthetic/stk unsigned long st[]'; echo "-> $?"
"$DPROBE" check 'f vfs_read %ax'; echo "-> $?"
"$DPROBE" check 'f100 vfs_read'; echo "-> $?"
"$DPROBE" check 'f vfs_read+8'; echo "-> $?"
"$DPROBE" check 't kfree $retval'; echo "-> $?"
"$DPROBE" check 't kfr-ee'; echo "-> $?"
"$DPROBE" check 's:other/x u64 a'; echo "-> $?"
"$DPROBE" check 's:x unsigned a'; echo "-> $?"
"$DPROBE" check 's:x u64 a; char b[1000]'; echo "-> $?"
"$DPROBE" check 's:x u64 a' 's:x u32 b'; echo "-> $?"
