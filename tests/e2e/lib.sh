# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Helpers shared by tests/e2e/run.sh, tests/e2e/kernel-ref.sh and the case
# files (which run.sh sources, one at a time, in a subshell).  Facts about
# the test programs come from binutils (nm, readelf, objdump), never from
# dprobe, so a case's expectation does not trust the code under test.
#
# Variables the runners set before a case runs:
#   E2E       tests/e2e (absolute)          DPROBE  the dprobe under test
#   BUILD     where programs are built      LEVEL   O0 or O2
#   T         the case's scratch directory  TMO     per-command timeout (s)
# It sources tests/lib.sh, the runners' counts and skips.

# shellcheck source=tests/lib.sh
. "$E2E/../lib.sh"

# ---- building the programs -------------------------------------------------

# Extra compiler arguments per program (the rest is "-g -$LEVEL").
prog_flags() {
	case $1 in
	threads | busy | stackends | fgraph | deeprec) echo "-pthread" ;;
	fgraphpg) echo "-pthread -pg" ;;
	dl) echo "-ldl" ;;
	stack | stackbad | stackmax | unwindfp) echo "-fno-omit-frame-pointer" ;;
	unwind) echo "-fomit-frame-pointer" ;;
	# compilers' entry sites (-mnop-mcount wants code that is not PIC)
	entryfentry) echo "-pg -mfentry -mnop-mcount -fno-pie -no-pie" ;;
	entrypatch) echo "-fpatchable-function-entry=5" ;;
	# M of the N nops before the symbol: 2 at it, or none
	entrypatch75 | waiterpatch75) echo "-fpatchable-function-entry=7,5" ;;
	entrypatch55) echo "-fpatchable-function-entry=5,5" ;;
	# tracepoint.h, and libdprobe.so's runtime next to dprobe
	tpoints) echo "-pthread -I$E2E/../../include -L$(dirname "$DPROBE")" \
		"-ldprobe -Wl,-rpath,$(dirname "$DPROBE")" ;;
	*) echo "" ;;
	esac
}

# stale OUT SRC: OUT is missing or older than SRC.
stale() {
	[ ! -e "$1" ] || [ -n "$(find "$2" -newer "$1")" ]
}

# build_prog NAME [VARIANT] -> prints the path of the built program.
# VARIANT "nopie" builds a non-PIE executable (fixed addresses).  Builds
# are cached under $BUILD/$LEVEL[-VARIANT]/ and redone when the source is
# newer; each build goes to a temporary name and is renamed into place, so
# runs in parallel (make test runs several) never see a half-written file.
# The dlopen library dllib.c is built as libe2edl.so.
# (kernel-ref.sh redefines build_prog to hand out private copies.)
build_prog() {
	build_prog_real "$@"
}

build_prog_real() {
	_name=$1
	_var=${2:-}
	_dir=$BUILD/$LEVEL${_var:+-$_var}
	_pie=
	[ "$_var" = nopie ] && _pie="-fno-pie -no-pie"
	[ "$_var" = static ] && _pie="-static"
	mkdir -p "$_dir" || return 1
	if [ "$_name" = libe2edl.so ]; then
		_src=$E2E/progs/dllib.c
		_out=$_dir/libe2edl.so
		if stale "$_out" "$_src"; then
			gcc -g "-$LEVEL" -shared -fPIC -Wl,-soname,libe2edl.so \
				-o "$_out.$$" "$_src" >"$_dir/$_name.log.$$" 2>&1 ||
				{ cat "$_dir/$_name.log.$$" >&2; return 1; }
			mv -f "$_out.$$" "$_out"
			rm -f "$_dir/$_name.log.$$"
		fi
		echo "$_out"
		return 0
	fi
	_out=$_dir/$_name
	if [ -e "$E2E/progs/$_name.cc" ]; then
		_src=$E2E/progs/$_name.cc
		_cc=g++
	else
		_src=$E2E/progs/$_name.c
		_cc=gcc
	fi
	if stale "$_out" "$_src"; then
		# shellcheck disable=SC2046,SC2086  # flag lists are word lists
		$_cc -g "-$LEVEL" -Wall $_pie -o "$_out.$$" "$_src" \
			$(prog_flags "$_name") >"$_out.log.$$" 2>&1 ||
			{ cat "$_out.log.$$" >&2; return 1; }
		mv -f "$_out.$$" "$_out"
		rm -f "$_out.log.$$"
	fi
	echo "$_out"
}

# ---- ELF facts -------------------------------------------------------------

# file_key FILE: $_fk is a name for FILE's content (its MD5): the key of
# the caches below.  nm loads the LTO plugins each time it starts (~0.1 s
# on a loaded machine) and a case asks for dozens of symbols, so each
# content is read once per build folder, also when kernel-ref.sh copies
# the file.  (These helpers set variables and read files rather than
# print through pipes: each process started costs milliseconds, and the
# runners ask thousands of questions.)
file_key() {
	_fkv=$(md5sum <"$1" 2>/dev/null) || return 1
	_fk=${_fkv%% *}
}

# cache_file NAME COMMAND...: $_cf is $BUILD/symcache/NAME (or
# $E2E_SYMCACHE/NAME: a folder of copies can share the cache of the
# programs it copies), which holds COMMAND's output (written to a
# temporary name and renamed: parallel runs share it).
cache_file() {
	_cd=${E2E_SYMCACHE:-$BUILD/symcache}
	_cf=$_cd/$1
	shift
	[ -e "$_cf" ] && return 0
	[ -d "$_cd" ] || mkdir -p "$_cd" || return 1
	_cfn=$_cf
	"$@" >"$_cfn.$$" || { rm -f "$_cfn.$$"; return 1; }
	mv -f "$_cfn.$$" "$_cfn"
	_cf=$_cfn
}

# cached NAME COMMAND...: COMMAND's output, kept as cache_file keeps it.
cached() {
	cache_file "$@" || return 1
	cat "$_cf"
}

nm_both() {
	nm -S --defined-only "$1" 2>/dev/null
	nm -S -D --defined-only "$1" 2>/dev/null
	return 0
}

# sym_info FILE SYM -> "VADDR SIZE" in hex without 0x (first definition;
# .symtab first, then .dynsym; symbol versions are ignored).
sym_info() {
	file_key "$1" || return 1
	cache_file "$_fk.nm" nm_both "$1" || return 1
	awk -v s="$2" 'NF == 4 {
		n = $4; sub(/@.*/, "", n)
		if (n == s && $3 ~ /^[TtWwiDdBbRrV]$/) { print $1, $2; exit }
	}' "$_cf"
}

sym_vaddr() {
	_si=$(sym_info "$1" "$2")
	[ -n "$_si" ] || { echo "e2e: no symbol $2 in $1" >&2; return 1; }
	echo "$((0x${_si% *}))"
}

sym_size() {
	_si=$(sym_info "$1" "$2")
	[ -n "$_si" ] || { echo "e2e: no symbol $2 in $1" >&2; return 1; }
	echo "$((0x${_si#* }))"
}

# vaddr_to_off FILE VADDR -> file offset (decimal), through the PT_LOAD
# that contains VADDR.
vaddr_to_off() {
	file_key "$1" || return 1
	cache_file "$_fk.phdrs" readelf -lW "$1" || return 1
	awk '$1 == "LOAD" { print $2, $3, $5 }' "$_cf" |
	while read -r _o _v _fs; do
		if [ $(($2 >= _v && $2 < _v + _fs)) = 1 ]; then
			echo $(($2 - _v + _o))
			return 0
		fi
	done
}

# text_bias FILE -> vaddr - file offset of the first executable PT_LOAD:
# what the kernel subtracts to make @+OFFS (spec 3.2).
text_bias() {
	file_key "$1" || return 1
	cache_file "$_fk.phdrs" readelf -lW "$1" || return 1
	awk '$1 == "LOAD" && index($0, "E 0x") { print $2, $3; exit }' "$_cf" |
	{ read -r _o _v && echo $((_v - _o)); }
}

# disasm FILE SYM -> "OFFSET<TAB>INSN" lines for the instructions of SYM
# (OFFSET decimal, from the symbol start).
disasm() {
	file_key "$1" || return 1
	cached "$_fk.dis.$2" disasm_real "$1" "$2"
}

disasm_real() {
	_va=$(sym_vaddr "$1" "$2") || return 1
	_sz=$(sym_size "$1" "$2") || return 1
	_dbase=$_va
	objdump -d --no-show-raw-insn --start-address="$_va" \
		--stop-address=$((_va + _sz)) "$1" |
	awk '/^ *[0-9a-f]+:\t/ {
		a = $1; sub(/:$/, "", a); line = $0; sub(/^[^\t]*\t/, "", line)
		printf "%s\t%s\n", a, line }' |
	while IFS='	' read -r _a _i; do
		printf '%d\t%s\n' $((0x$_a - _dbase)) "$_i"
	done
}

# insn_off FILE SYM K -> offset of SYM's K-th instruction (0-based).
insn_off() {
	_r=$(disasm "$1" "$2" | sed -n "$(($3 + 1))p" | cut -f1)
	[ -n "$_r" ] || { echo "e2e: $2 has no instruction $3" >&2; return 1; }
	echo "$_r"
}

# line_off FILE FUNC N [IN] -> offset in FUNC (or IN, where FUNC is
# inlined) of the lowest statement address there of source line (FUNC's
# declaration line + N), FUNC declared in progs/$(basename FILE).c
line_off() {
	_src=$E2E/progs/$(basename "$1").c
	_decl=$(grep -n "^[A-Za-z_].*[ *]$2(" "$_src" | grep -v ';' | head -n 1 | cut -d: -f1)
	[ -n "$_decl" ] || { echo "e2e: no declaration of $2 in $_src" >&2; return 1; }
	_line=$((_decl + $3))
	_in=${4:-$2}
	_lo=$(sym_vaddr "$1" "$_in") || return 1
	_hi=$((_lo + $(sym_size "$1" "$_in")))
	_a=
	for _h in $(objdump --dwarf=decodedline "$1" | awk -v l="$_line" \
			-v f="$(basename "$_src")" '$1 == f && $2 == l && $NF == "x" { print $3 }'); do
		[ $((_h)) -ge "$_lo" ] && [ $((_h)) -lt "$_hi" ] || continue
		if [ -z "$_a" ] || [ $((_h)) -lt "$_a" ]; then _a=$((_h)); fi
	done
	[ -n "$_a" ] || { echo "e2e: no code for line $_line of $_src in $_in" >&2; return 1; }
	echo $((_a - _lo))
}

# inl_entry FILE CALLER -> offset in CALLER of the (only) inlined copy's
# entry, from readelf's DWARF dump
inl_entry() {
	_lo=$(sym_vaddr "$1" "$2") || return 1
	_hi=$((_lo + $(sym_size "$1" "$2")))
	for _h in $(readelf --debug-dump=info "$1" | awk '
		/DW_TAG_inlined_subroutine/ { inl = 1; pc = ""; next }
		/DW_TAG_/ { if (inl && pc != "") print pc; inl = 0 }
		inl && /DW_AT_entry_pc/ { pc = $NF; next }
		inl && /DW_AT_low_pc/ && pc == "" { pc = $NF }
		END { if (inl && pc != "") print pc }'); do
		if [ $((_h)) -ge "$_lo" ] && [ $((_h)) -lt "$_hi" ]; then
			echo $((_h - _lo))
			return 0
		fi
	done
	echo "e2e: no inlined copy in $2" >&2
	return 1
}

# call_site FILE CALLER CALLEE [N] -> offset in CALLER of the instruction
# after its N-th (1-based, default the only) `call` to CALLEE; CALLEE "*"
# means an indirect call.  That is where CALLEE returns to.
call_site() {
	_pat="call +[0-9a-f]+ <$3>\$"
	[ "$3" = "*" ] && _pat='call +\*'
	_lst=$(disasm "$1" "$2" | awk -F '\t' -v pat="$_pat" '
		found { print $1; found = 0 }
		$2 ~ pat { found = 1; n++ }
		END { if (found) print "END" }')
	_n=$(printf '%s\n' "$_lst" | grep -c .)
	if [ -z "${4:-}" ] && [ "$_n" != 1 ]; then
		echo "e2e: $2 has $_n calls to $3, not 1" >&2
		return 1
	fi
	_r=$(printf '%s\n' "$_lst" | sed -n "${4:-1}p")
	case $_r in
	'' | END) echo "e2e: no return site for call $3 in $2" >&2; return 1 ;;
	esac
	echo "$_r"
}

hex() {
	printf '0x%x' "$1"
}

# ---- placeholders ----------------------------------------------------------
#
# Definitions and expected output may hold {KIND[@VAR]:ARGS}, replaced
# with facts of the program $P (or of the file in variable VAR):
#   {size:SYM}                 0x<st_size of SYM>
#   {vaddr:SYM}                0x<link-time address of SYM>
#   {off:SYM}                  0x<file offset of SYM> (PATH:OFFSET places)
#   {insn:SYM:K}               0x<offset of SYM's K-th instruction>
#   {insnoff:SYM:K}            0x<file offset of that instruction>
#   {insnva:SYM:K}             0x<link-time address of that instruction>
#   {retsite:CALLER:CALLEE[:N]} CALLER+0x<off>/0x<size>: where a call of
#                              CALLEE from CALLER returns, as a return
#                              probe on a symbol place prints it
#   {retaddr:CALLER:CALLEE[:N]} 0x<link-time address> of that return site
#   {foffs:SYM}                0x<OFFS> such that @+OFFS reads SYM
#   {lineoff:FUNC:N}           0x<offset in FUNC of line N after its
#                              declaration line (perf probe's FUNC:N): the
#                              lowest statement address of that line
#                              (objdump --dwarf=decodedline), the
#                              declaration found in progs/PROG.c
#   {linein:CALLER:FUNC:N}     0x<offset in CALLER of the lowest statement
#                              address of line N after FUNC's declaration
#                              (FUNC inlined into CALLER)
#   {inlentry:CALLER}          0x<offset in CALLER of the entry of the
#                              function inlined there (readelf's
#                              DW_TAG_inlined_subroutine: DW_AT_entry_pc,
#                              else DW_AT_low_pc)
#   {bin}                      the file's path

ph_value() {
	_kind=${1%%:*}
	_args=
	case $1 in *:*) _args=${1#*:} ;; esac
	_f=${P:-}
	case $_kind in
	*@*)
		eval "_f=\${${_kind#*@}}"
		_kind=${_kind%@*}
		;;
	esac
	_a1=${_args%%:*}
	_a2=${_args#*:}
	_a3=
	case $_a2 in *:*) _a3=${_a2#*:}; _a2=${_a2%%:*} ;; esac
	case $_kind in
	bin) echo "$_f" ;;
	size) hex "$(sym_size "$_f" "$_a1")" ;;
	vaddr) hex "$(sym_vaddr "$_f" "$_a1")" ;;
	off)
		_v=$(sym_vaddr "$_f" "$_a1") || return 1
		_o=$(vaddr_to_off "$_f" "$_v")
		[ -n "$_o" ] || return 1
		hex "$_o"
		;;
	insn) _o=$(insn_off "$_f" "$_a1" "$_a2") && hex "$_o" ;;
	insnva | insnoff)
		_o=$(insn_off "$_f" "$_a1" "$_a2") || return 1
		_v=$(($(sym_vaddr "$_f" "$_a1") + _o))
		[ "$_kind" = insnoff ] && _v=$(vaddr_to_off "$_f" "$_v")
		hex "$_v"
		;;
	retsite)
		_o=$(call_site "$_f" "$_a1" "$_a2" "$_a3") || return 1
		echo "$_a1+$(hex "$_o")/$(hex "$(sym_size "$_f" "$_a1")")"
		;;
	retaddr)
		_o=$(call_site "$_f" "$_a1" "$_a2" "$_a3") || return 1
		hex $(($(sym_vaddr "$_f" "$_a1") + _o))
		;;
	lineoff)
		_o=$(line_off "$_f" "$_a1" "$_a2") || return 1
		hex "$_o"
		;;
	inlentry)
		_o=$(inl_entry "$_f" "$_a1") || return 1
		hex "$_o"
		;;
	linein)
		_o=$(line_off "$_f" "$_a2" "$_a3" "$_a1") || return 1
		hex "$_o"
		;;
	foffs)
		_v=$(sym_vaddr "$_f" "$_a1") || return 1
		hex $((_v - $(text_bias "$_f")))
		;;
	*) echo "e2e: unknown placeholder {$1}" >&2; return 1 ;;
	esac
}

PH_RE='\{(bin|size|vaddr|off|insn|insnva|insnoff|retsite|retaddr|foffs|lineoff|inlentry|linein)(@[A-Za-z_][A-Za-z0-9_]*)?(:[^{}]*)?\}'

# subst: stdin -> stdout with every placeholder replaced.  Fails (and says
# which) if one cannot be worked out.
subst() {
	_in=$(cat; echo x)
	_in=${_in%x}
	# no placeholder in it: the input as the awk below prints it (each
	# line ended by a newline), without starting grep, sort and awk
	case $_in in
	*'{'[a-z]*) ;;
	'') return 0 ;;
	*"$T_NL") printf '%s' "$_in"; return 0 ;;
	*) printf '%s\n' "$_in"; return 0 ;;
	esac
	_map=$T/.ph.$$
	: >"$_map"
	for _tok in $(printf '%s' "$_in" | grep -oE "$PH_RE" | sort -u); do
		_inner=${_tok#\{}
		_inner=${_inner%\}}
		if ! _val=$(ph_value "$_inner") || [ -z "$_val" ]; then
			echo "e2e: cannot work out {$_inner}" >&2
			return 1
		fi
		printf '%s\t%s\n' "$_tok" "$_val" >>"$_map"
	done
	printf '%s' "$_in" | awk -F '\t' -v map="$_map" '
		BEGIN { while ((getline l < map) > 0) {
			split(l, kv, "\t"); k[++n] = kv[1]; v[n] = kv[2] } }
		{ line = $0
		  for (i = 1; i <= n; i++) {
			out = ""
			while ((p = index(line, k[i])) > 0) {
				out = out substr(line, 1, p - 1) v[i]
				line = substr(line, p + length(k[i]))
			}
			line = out line
		  }
		  print line }'
}

# ---- normalising output ----------------------------------------------------

# norm_trace: dprobe trace lines -> "COMM BODY".  The prefix must be
# exactly the kernel's "%16s-%-7d [%03d] ..... %5lu.%06lu: "; a line that
# is not is kept whole behind "BADLINE: ".  Timestamps must not go back
# within one thread ("# time goes back" otherwise).
norm_trace() {
	awk '
	# 1 if the line is a well-formed trace line; sets comm, tid, ts, body
	function parse(line,   rest, sp, pad, secs) {
		if (length(line) < 40 || substr(line, 17, 1) != "-")
			return 0
		comm = substr(line, 1, 16)
		if (comm !~ /[^ ]$/)
			return 0
		sub(/^ +/, "", comm)
		rest = substr(line, 18)
		if (!match(rest, /^[0-9]+/))
			return 0
		tid = substr(rest, 1, RLENGTH)
		rest = substr(rest, RLENGTH + 1)
		match(rest, /^ +/)
		sp = RLENGTH
		if (length(tid) >= 7 ? sp != 1 : length(tid) + sp != 8)
			return 0
		rest = substr(rest, sp + 1)
		if (!match(rest, /^\[[0-9][0-9][0-9]\] \.\.\.\.\. +/))
			return 0
		pad = RLENGTH - 11
		rest = substr(rest, RLENGTH + 1)
		if (!match(rest, /^[0-9]+\.[0-9][0-9][0-9][0-9][0-9][0-9]: /))
			return 0
		secs = substr(rest, 1, RLENGTH - 9)
		if (length(secs) >= 5 ? pad != 1 : pad + length(secs) != 6)
			return 0
		ts = secs * 1000000 + substr(rest, RLENGTH - 8, 6)
		body = substr(rest, RLENGTH + 1)
		return 1
	}
	{
		if (!parse($0)) {
			print "BADLINE: " $0
		} else {
			if (tid in last && ts < last[tid])
				print "# time goes back for tid " tid " at: " $0
			last[tid] = ts
			print comm " " body
		}
	}'
}

# norm_klines: kernel trace lines (any flags) -> "COMM BODY"; header
# lines dropped.
norm_klines() {
	sed -n -E 's/^ *(.*[^ ])-[0-9]+ +\[[0-9]{3}\] .{5} +[0-9]+\.[0-9]{6}: /\1 /p'
}

# values_only: "COMM EVENT: (PLACE) ARGS" -> "COMM EVENT: ARGS" (the place
# part differs between symbol and PATH:OFFSET places).
values_only() {
	sed -E 's/^([^ ]+ [^ ]+:) \([^)]*\)/\1/'
}

# norm_json: JSON lines with the run-dependent numbers replaced.
norm_json() {
	sed -E -e 's/"ts":[0-9]+\.[0-9]{6}(,|})/"ts":TS\1/' \
		-e 's/"cpu":[0-9]+,/"cpu":CPU,/' \
		-e 's/"pid":([0-9]+),"tgid":\1,/"pid":PID,"tgid":PID,/' \
		-e 's/"pid":[0-9]+,"tgid":[0-9]+,/"pid":TID,"tgid":PID,/'
}

# The closing summary and the stat counts, from dprobe's stderr.
summary_of() {
	grep -E '^dprobe: [0-9]+ events, [0-9]+ filtered, [0-9]+ missed, [0-9]+ lost$' "$1" |
		tail -n 1 | sed 's/^/# /'
}

stat_of() {
	sed -n -E -e 's/^ *([0-9][0-9,]*) +([^ ]+:[^ ]+)( .*)?$/# stat \1 \2/p' \
		-e 's/^ *[0-9]+\.[0-9]+ +seconds time elapsed *$/# seconds time elapsed/p' \
		"$1" | sed -E ':a;s/^(# stat [0-9]*),/\1/;ta'
}

# ---- running dprobe --------------------------------------------------------

shquote() {
	_shq "$1"
	printf '%s' "$_q"
}

# _shq WORD: $_q is WORD quoted for sh ('...', each ' as '\''), its
# trailing newlines dropped (as a command substitution drops them).  No
# process is started: the runners quote every word of every command.
_shq() {
	_sq_in=$1
	while :; do
		case $_sq_in in
		*"$T_NL") _sq_in=${_sq_in%"$T_NL"} ;;
		*) break ;;
		esac
	done
	_q=
	while :; do
		case $_sq_in in
		*\'*)
			_q="$_q${_sq_in%%\'*}'\\''"
			_sq_in=${_sq_in#*\'}
			;;
		*)
			_q="'$_q$_sq_in'"
			return 0
			;;
		esac
	done
}
T_NL='
'

# The case's $defs, placeholders replaced, as quoted "-e DEF" words.
defs_eargs() {
	printf '%s\n' "${defs:-}" | subst >"$T/defs.txt" || return 1
	while IFS= read -r _l; do
		case $_l in '' | '#'*) continue ;; esac
		_shq "$_l"
		printf -- '-e %s ' "$_q"
	done <"$T/defs.txt"
}

# record_cmd SUBCMD ARGS: the command line, quoted, in $T/cmd (shown when a
# case fails, to reproduce it by hand).
record_cmd() {
	_shq "$T"
	_c="cd $_q && "
	_shq "$DPROBE"
	_c="$_c$_q"
	for _w in "$@"; do
		_shq "$_w"
		_c="$_c $_q"
	done
	printf "%s\n" "$_c" >"$T/cmd"
}

# dp_trace [OPTIONS] -- CMD [ARGS]: dprobe trace with the case's defs.
# $DP_WRAP (e.g. "setarch -R") is put in front of dprobe.
# Events go to $T/events (-o) unless $stdout_events is set; the traced
# program's stdout to $T/stdout, dprobe's stderr to $T/stderr, the exit
# status to $T/rc.
dp_trace() {
	_e=$(defs_eargs) || { echo 125 >"$T/rc"; return 1; }
	_o="-o $(shquote "$T/events")"
	[ -n "${stdout_events:-}" ] && _o=
	: >"$T/events"
	eval "set -- $_e $_o \"\$@\""
	record_cmd trace "$@"
	# shellcheck disable=SC2086  # $DP_WRAP: a command prefix or nothing
	t_timeout "$TMO" ${DP_WRAP:-} "$DPROBE" trace "$@" \
		>"$T/stdout" 2>"$T/stderr" </dev/null
	echo $? >"$T/rc"
}

# dp_stat [OPTIONS] -- CMD [ARGS]: dprobe stat with the case's defs.
dp_stat() {
	_e=$(defs_eargs) || { echo 125 >"$T/rc"; return 1; }
	eval "set -- $_e \"\$@\""
	: >"$T/events"
	record_cmd stat "$@"
	# shellcheck disable=SC2086
	t_timeout "$TMO" ${DP_WRAP:-} "$DPROBE" stat "$@" \
		>"$T/stdout" 2>"$T/stderr" </dev/null
	echo $? >"$T/rc"
}

# The default result of a trace case: events, the program's output
# ("> " lines), the summary and the exit status.  $events_by names a
# function that prints the events instead (numbered_events, or a case's
# own); else $sort_events sorts them (several processes or threads).
trace_result() {
	if [ -n "${events_by:-}" ]; then
		"$events_by"
	elif [ -n "${json:-}" ]; then
		norm_json <"$T/events"
	elif [ -n "${sort_events:-}" ]; then
		norm_trace <"$T/events" | LC_ALL=C sort
	else
		norm_trace <"$T/events"
	fi
	sed 's/^/> /' "$T/stdout"
	summary_of "$T/stderr"
	echo "# exit=$(cat "$T/rc")"
}

stat_result() {
	sed 's/^/> /' "$T/stdout"
	stat_of "$T/stderr"
	echo "# exit=$(cat "$T/rc")"
}

# ---- process trees (-f) ----------------------------------------------------

# numbered_events: the events of $T/events normalised as norm_trace does,
# each behind "[N] ", N numbering the threads in the order of their first
# event.  For a process tree whose calls come in a fixed order, this says
# which events came from the same process (and that a child's are not
# its parent's) without depending on PIDs.
numbered_events() {
	awk '{ t = substr($0, 18); sub(/ .*/, "", t); print t }' \
		"$T/events" >"$T/tids"
	norm_trace <"$T/events" | awk -v tids="$T/tids" '
		/^# time goes back/ { print; next }
		{ getline t < tids
		  if (!(t in n)) n[t] = ++k
		  print "[" n[t] "] " $0 }'
}

# engine_check: in case_check, after dprobe ran with DPROBE_VERBOSE=1 in
# its environment (it names the engine it took on stderr, "dprobe: engine
# agent: ..."): fails unless that is the engine of this pass, the
# in-process engine ("agent") when $DPROBE_ENGINE is auto or unset, so a
# case meant for it cannot pass on the ptrace engine unnoticed.
engine_check() {
	_want=${DPROBE_ENGINE:-auto}
	[ "$_want" = auto ] && _want=agent
	grep -q "^dprobe: engine $_want:" "$T/stderr" && return 0
	echo "dprobe did not take the $_want engine; it said:"
	grep '^dprobe: engine' "$T/stderr" ||
		echo "(nothing: was DPROBE_VERBOSE=1 in its environment?)"
	return 1
}

# ---- processes -------------------------------------------------------------

# start_bg OUT CMD [ARGS]: start CMD in the background with stdout to OUT
# and wait (10 s at most) for its first line; BG_PID is its pid.
start_bg() {
	t_start_bg "$@"
	# shellcheck disable=SC2034  # for the case that called
	BG_PID=$T_PID
	t_wait_line "$1" '' 10
}

# runtime_addr PID FILE SYM -> the address of SYM in PID (decimal), from
# the mapping of FILE that holds its file offset.
runtime_addr() {
	_v=$(sym_vaddr "$2" "$3") || return 1
	_off=$(vaddr_to_off "$2" "$_v")
	_ino=$(stat -L -c %i "$2")
	while read -r _range _perm _moff _dev _mino _path; do
		[ "$_mino" = "$_ino" ] || continue
		_lo=$((0x${_range%-*}))
		_hi=$((0x${_range#*-}))
		_moff=$((0x$_moff))
		if [ $((_off >= _moff && _off < _moff + _hi - _lo)) = 1 ]; then
			echo $((_lo + _off - _moff))
			return 0
		fi
	done <"/proc/$1/maps"
	return 1
}

# counters PID ADDR...: the 8-byte counters at the ADDRs (as the
# program printed them) in PID, as decimal numbers, one a line
counters() {
	_cp=$1
	shift
	for _ca in "$@"; do
		dd if="/proc/$_cp/mem" bs=8 count=1 iflag=skip_bytes \
			skip=$((_ca)) 2>/dev/null | od -An -tu8 | tr -d ' \n'
		echo
	done
}

# code_sums PID [PATH...]: "RANGE PATH MD5" for each executable mapping of
# a file (of the PATHs only, when given)
code_sums() {
	_sp=$1
	shift
	_want=" $* "
	while read -r _range _perm _off _dev _ino _path; do
		case $_perm in *x*) ;; *) continue ;; esac
		case $_path in /*) ;; *) continue ;; esac
		[ $# = 0 ] || case $_want in *" $_path "*) ;; *) continue ;; esac
		_lo=$((0x${_range%-*}))
		_hi=$((0x${_range#*-}))
		echo "$_range $_path $(dd if="/proc/$_sp/mem" bs=65536 \
			iflag=skip_bytes,count_bytes skip=$_lo count=$((_hi - _lo)) \
			2>/dev/null | md5sum | cut -d' ' -f1)"
	done <"/proc/$_sp/maps"
}

# peek PID ADDR -> the byte at ADDR in PID, two hex digits.
peek() {
	dd if="/proc/$1/mem" bs=1 skip="$2" count=1 2>/dev/null |
		od -An -tx1 | tr -d ' \n'
}

# wait_armed PID FILE SYM: wait (10 s at most) until the first byte of SYM
# in PID is no longer the file's: a probe (int3, or an optimised jmp) is armed.
wait_armed() {
	_addr=$(runtime_addr "$1" "$2" "$3") || return 1
	# an int3 (ptrace engine) or a jmp over it (optimised, agent engine)
	_orig=$(file_byte "$2" "$3")
	_i=0
	while [ "$(peek "$1" "$_addr")" = "$_orig" ]; do
		[ $_i -ge 1000 ] && return 1
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.01
		_i=$((_i + 1))
	done
}

# wait_restored PID FILE SYM: wait (10 s at most) until the first 16
# bytes of SYM in PID are the file's again: the probe there is gone
# (an optimised probe's jmp covers 5 bytes or more).
wait_restored() {
	_addr=$(runtime_addr "$1" "$2" "$3") || return 1
	_o=$(vaddr_to_off "$2" "$(sym_vaddr "$2" "$3")")
	_orig=$(dd if="$2" bs=1 skip="$_o" count=16 2>/dev/null | od -An -tx1 | tr -d ' \n')
	_i=0
	while [ "$(dd if="/proc/$1/mem" bs=1 skip="$_addr" count=16 2>/dev/null |
		od -An -tx1 | tr -d ' \n')" != "$_orig" ]; do
		[ $_i -ge 1000 ] && return 1
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.01
		_i=$((_i + 1))
	done
}

# file_byte FILE SYM -> the first byte of SYM in FILE, two hex digits.
file_byte() {
	_o=$(vaddr_to_off "$1" "$(sym_vaddr "$1" "$2")")
	dd if="$1" bs=1 skip="$_o" count=1 2>/dev/null | od -An -tx1 |
		tr -d ' \n'
}

# rand N -> a pseudo-random number in [0, N), seeded from /dev/urandom.
rand() {
	_s=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
	echo $((_s % $1))
}
