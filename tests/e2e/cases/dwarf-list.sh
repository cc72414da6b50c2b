# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='dprobe list -L, -V and -v: the lines a FUNC:N place takes, the variables a definition can name there, the prototypes'
# dwarf.c at -O0 (every statement line has code of its own): helper()'s
# source from its declaration, each line with code numbered from 0 as
# helper:N counts (the opening brace has the prologue); the variables
# at helper:3 (its printf line) and at handle's entry, with their
# declared types; and the prototypes of the functions whose names start
# with h (sorted), as perf probe -L, -V and --funcs show them.
prog=dwarf
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
}
case_result() {
	cat "$T/stdout"
}
expected() {
	tab=$(printf '\t')
	cat <<EOF2
      0  static __attribute__((noipa)) int helper(int k, struct hdr *h)
      1  {
      2  ${tab}volatile int local = k * 3 + h->len;
      3  ${tab}printf("helper: k=%d local=%d\n", k, local);
      4  ${tab}return local;
      5  }
Available variables at helper:3
        @<helper+$(line_off "$P" helper 3)>
${tab}${tab}int${tab}k
${tab}${tab}struct hdr*${tab}h
${tab}${tab}volatile int${tab}local
Available variables at handle
        @<handle+0>
${tab}${tab}struct msg*${tab}r
${tab}${tab}int${tab}n
${tab}${tab}const char*${tab}who
int handle(struct msg* r, int n, const char* who)
int helper(int k, struct hdr* h)
dprobe list: no function nosuch in {bin}
exit=1
EOF2
}
