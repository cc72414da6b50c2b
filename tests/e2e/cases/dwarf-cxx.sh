# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='C++ names: places by readable name (an overload chosen by its parameters, a const method, a template), members through this, readable names in trace lines; --no-demangle; overloads and misspellings named'
# cxx.cc: two rounds; in round r a 3+2r by 4+2r ns::Widget draws
# draw(int r+1) and draw(double r+0.5), then ns::twice<int>(area()),
# area() returning w * h.  The places are written as C++ names and
# become the mangled symbols; members are read through this (DWARF);
# trace lines show the readable name without its parameters, as perf
# does; --no-demangle keeps the symbol.  dprobe check names the
# overloads of an ambiguous name and the near ones of a misspelt name.
prog=cxx
defs='p:di {bin}:ns::Widget::draw(int) n w=this->w_ h=this->h_
p:ar {bin}:ns::Widget::area()const w=this->w_
r:arr {bin}:ns::Widget::area $retval
p:tw {bin}:ns::twice<int> v'
case_run() {
	dp_trace -- "$P"
	"$DPROBE" trace --no-demangle -o "$T/raw" \
		-e "p:di $P:ns::Widget::draw(int) n" -- "$P" >/dev/null 2>&1
	"$DPROBE" check -x "$P" "p:x $P:ns::Widget::draw" \
		"p:y $P:ns::Widget::drw" >"$T/check" 2>&1
}
case_result() {
	trace_result
	norm_trace <"$T/raw"
	grep '^  (' "$T/check"
}
expected() {
	for r in 0 1; do
		w=$((3 + 2 * r)) h=$((4 + 2 * r))
		echo "cxx di: (ns::Widget::draw+0x0/{size:_ZN2ns6Widget4drawEi}) n=$((r + 1)) w=$w h=$h"
		echo "cxx ar: (ns::Widget::area+0x0/{size:_ZNK2ns6Widget4areaEv}) w=$w"
		echo "cxx arr: ({retsite:main:_ZNK2ns6Widget4areaEv} <- ns::Widget::area) arg1=$(printf '0x%x' $((w * h)))"
		echo "cxx tw: (ns::twice<int>+0x0/{size:_ZN2ns5twiceIiEET_S1_}) v=$((w * h))"
	done
	cat <<'EOF2'
> draw(int 1) on 3x4
> draw(double 0.5) on 3x4
> area 3*4
> twice<int>(12)
> draw(int 2) on 5x6
> draw(double 1.5) on 5x6
> area 5*6
> twice<int>(30)
# dprobe: 8 events, 0 filtered, 0 missed, 0 lost
# exit=0
cxx di: (_ZN2ns6Widget4drawEi+0x0/{size:_ZN2ns6Widget4drawEi}) n=1
cxx di: (_ZN2ns6Widget4drawEi+0x0/{size:_ZN2ns6Widget4drawEi}) n=2
  (ns::Widget::draw is overloaded: ns::Widget::draw(int), ns::Widget::draw(double); name one with its parameters)
  (no function ns::Widget::drw in {bin}; did you mean: ns::Widget::draw(int), ns::Widget::draw(double)?)
EOF2
}
