# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='dprobe list -L, -V and -v: the lines a FUNC:N place takes, the variables a definition can name there, the prototypes; -L and -V as perf probe shows them'
# dwarf.c at -O0 (every statement line has code of its own): helper()'s
# source, perf probe -L's way: "<FUNC@FILE:0>", its declaration line 0
# (the entry), each later line with code of its own numbered as helper:N
# counts (the opening brace has only the entry's code: not numbered), and
# the lines after its end up to the next code; the variables a definition
# can read at helper:3 (its printf line) and at handle's entry, sorted,
# types without qualifiers, as perf probe -V lists them; the prototypes
# of the functions whose names start with h (sorted, with qualifiers).
# Where perf is installed, its -L and -V answers must be the same bytes.
prog=dwarf
timestamps=no	# no trace line is compared: run-all.sh's timens pass skips it
levels=O0
engines=auto
case_run() {
	{
		"$DPROBE" list -x "$P" -L helper
		"$DPROBE" list -x "$P" -V helper:3
		"$DPROBE" list -x "$P" -V handle
		"$DPROBE" list -x "$P" -v 'h*' | LC_ALL=C sort
		"$DPROBE" list -x "$P" -L nosuch
		echo "exit=$?"
	} >"$T/stdout" 2>&1
	echo 0 >"$T/rc"
	: >"$T/perfdiff"
	command -v perf >/dev/null 2>&1 || return 0
	for a in "-L helper" "-L handle" "-V helper:3" "-V handle" "-V helper:0"; do
		# shellcheck disable=SC2086  # $a: the option and its argument
		perf probe -x "$P" $a >"$T/perf.out" 2>&1
		# shellcheck disable=SC2086
		"$DPROBE" list -x "$P" $a >"$T/dprobe.out" 2>&1
		cmp -s "$T/perf.out" "$T/dprobe.out" ||
			{ echo "# $a differs from perf probe:"; diff "$T/perf.out" "$T/dprobe.out"; } >>"$T/perfdiff"
	done
}
case_result() {
	cat "$T/stdout" "$T/perfdiff"
}
expected() {
	tab=$(printf '\t')
	cat <<EOF2
<helper@$E2E/progs/dwarf.c:0>
      0  static __attribute__((noipa)) int helper(int k, struct hdr *h)
         {
      2  ${tab}volatile int local = k * 3 + h->len;
      3  ${tab}printf("helper: k=%d local=%d\n", k, local);
      4  ${tab}return local;
      5  }
         
         int main(void)
         {
Available variables at helper:3
${tab}@<helper+$(line_off "$P" helper 3)>
${tab}${tab}int${tab}k
${tab}${tab}int${tab}local
${tab}${tab}struct hdr*${tab}h
Available variables at handle
${tab}@<handle+0>
${tab}${tab}char*${tab}who
${tab}${tab}int${tab}n
${tab}${tab}struct msg*${tab}r
int handle(struct msg* r, int n, const char* who)
int helper(int k, struct hdr* h)
dprobe list: no function nosuch in {bin}
exit=1
EOF2
}
