# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='PATH:OFFSET(REF): the reference counter (an SDT semaphore) counts each armed uprobe once'
# semaphore.c keeps an unsigned short "semaphore" in a section .probes
# of its writable data, as SDT semaphores are; calls() runs other(i) and
# work(i) for i = 1..3 and work prints the value it reads.  The kernel
# adds 1 to the counter at file offset REF for each uprobe (one inode and
# offset) with that counter when it installs it in the process, before
# main runs (update_ref_ctr() in kernel/events/uprobes.c), and takes it
# back when it removes it.  Four runs, each a fresh process:
#   1. a probe on work without (REF): the program sees 0;
#   2. with (REF) at the semaphore's file offset ({off:semaphore}, as
#      for any symbol in a PT_LOAD): it sees 1;
#   3. an entry and a return probe on work, both with (REF): one place,
#      one uprobe, so still 1;
#   4. work and other, both with (REF): two uprobes, so 2.
# Built without PIE, so the places print link-time addresses; the return
# probe prints (where calls() resumes <- work).  work(i) = i * 10 and
# other(i) = i + 100, so the sum is 111 + 122 + 133 = 366.
prog=semaphore
variant=nopie
kdiff=yes
REF='({off:semaphore})'
defs1='p:w {bin}:{off:work} i=%di:s64'
defs2="p:w {bin}:{off:work}$REF i=%di:s64"
defs3="p:w {bin}:{off:work}$REF i=%di:s64
r:wr {bin}:{off:work}$REF ret=\$retval:s64"
defs4="p:w {bin}:{off:work}$REF i=%di:s64
p:o {bin}:{off:other}$REF i=%di:s64"
case_run() {
	: >"$T/runs.events"
	: >"$T/runs.out"
	: >"$T/runs.notes"
	for run in 1 2 3 4; do
		eval "defs=\$defs$run"
		dp_trace -- "$P" || return $?
		norm_trace <"$T/events" >>"$T/runs.events"
		sed 's/^/> /' "$T/stdout" >>"$T/runs.out"
		summary_of "$T/stderr" >>"$T/runs.notes"
		echo "# exit=$(cat "$T/rc")" >>"$T/runs.notes"
	done
}
case_result() {
	cat "$T/runs.events" "$T/runs.out" "$T/runs.notes"
}
expected() {
	# events, run after run
	for i in 1 2 3; do
		echo "semaphore w: ({vaddr:work}) i=$i"
	done
	for i in 1 2 3; do
		echo "semaphore w: ({vaddr:work}) i=$i"
	done
	for i in 1 2 3; do
		echo "semaphore w: ({vaddr:work}) i=$i"
		echo "semaphore wr: ({retaddr:calls:work} <- {vaddr:work}) ret=$((i * 10))"
	done
	for i in 1 2 3; do
		echo "semaphore o: ({vaddr:other}) i=$i"
		echo "semaphore w: ({vaddr:work}) i=$i"
	done
	# what the program saw, run after run
	for sem in 0 1 1 2; do
		for i in 1 2 3; do
			echo "> semaphore: work($i) sem=$sem"
		done
		echo "> semaphore: sum 366"
	done
	for n in 3 3 6 6; do
		echo "# dprobe: $n events, 0 filtered, 0 missed, 0 lost"
		echo "# exit=0"
	done
}
