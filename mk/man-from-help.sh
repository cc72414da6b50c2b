#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The manual pages, made from the help the dprobe binary prints, so that
# a page can never say something else than --help:
#
#   sh mk/man-from-help.sh DPROBE OUTDIR DOCDIR 'CMD...'
#
# writes OUTDIR/dprobe.1 (from `dprobe --help` and `dprobe help
# --commands`) and OUTDIR/dprobe-CMD.1 for every command (from `dprobe
# help CMD`).  CMD... is the list mk/install.mk installs: when the binary
# has a command that is not in it, or the list names one the binary does
# not have, no page is written and the script fails, so the build does.
# DOCDIR is where the docs/ files the help names are installed.
#
# The help's layout is kept as it reads: unindented lines are filled
# paragraphs, "  -x, --opt ARG   text" lines (and their deeper-indented
# continuations) are tagged paragraphs, any other indented block is shown
# as it is.
set -eu

DPROBE=$1 OUT=$2 DOCDIR=$3 WANT=$4
TAGLINE="kprobe-based event tracing for user-space processes"

die() { echo "man-from-help.sh: $*" >&2; exit 1; }

version=$("$DPROBE" --version) || die "'$DPROBE --version' failed"
version=${version#dprobe }
# SOURCE_DATE_EPOCH keeps the pages reproducible (Debian's convention)
date=$(date -u -d "@${SOURCE_DATE_EPOCH:-$(date +%s)}" +%Y-%m-%d)
cmds=$("$DPROBE" help --commands) || die "'$DPROBE help --commands' failed"
[ -n "$cmds" ] || die "'$DPROBE help --commands' listed nothing"

# The binary's commands and the installed list must be the same set.
have=$(printf '%s\n' "$cmds" | cut -f1 | sort | tr '\n' ' ')
# shellcheck disable=SC2086  # a list
want=$(printf '%s\n' $WANT | sort | tr '\n' ' ')
for c in $have; do
	case " $want " in *" $c "*) ;; *)
		die "command '$c' has no manual page: add it to MAN_CMDS in mk/install.mk" ;;
	esac
done
for c in $want; do
	case " $have " in *" $c "*) ;; *)
		die "MAN_CMDS in mk/install.mk names '$c', which '$DPROBE' does not have" ;;
	esac
done

# roff-safe text: backslashes, dashes, and a leading . or ' (a request)
escape() {
	sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/^\([.']\)/\\\\\&\1/"
}

header() {	# NAME-IN-CAPS NAME SUMMARY
	printf '.TH %s 1 "%s" "dprobe %s" "dprobe manual"\n' "$1" "$date" "$version"
	# no hyphens inserted in option and file names, no stretched NAME line
	printf '.nh\n.ad l\n'
	printf '.SH NAME\n%s \\- %s\n' "$(printf %s "$2" | escape)" \
		"$(printf %s "$3" | escape)"
}

# `usage: ` lines (and their indented continuations) as SYNOPSIS
synopsis() {
	printf '.SH SYNOPSIS\n.nf\n'
	sed -n -e '/^$/q' -e 's/^usage: //p' -e 's/^       //p' | escape
	printf '.fi\n'
}

# Everything after the first blank line of `dprobe help CMD`
body() {
	sed '1,/^$/d' | escape | awk '
	function flush() {
		if (mode == "item" && text != "")
			print (text ~ /^[.\047]/ ? "\\&" : "") text
		text = ""
	}
	function to(m) {
		flush()
		if (mode == "verb" && m != "verb") print ".fi"
		if (m == "verb" && mode != "verb") print ".nf"
		mode = m
	}
	BEGIN { print ".SH DESCRIPTION"; mode = "none" }
	/^$/ { to("none"); next }
	/^[^ ]/ { if (mode != "para") { to("para"); print ".PP" } print; next }
	/^    / && mode == "item" { sub(/^ +/, ""); text = text " " $0; next }
	# an option (-x, --opt, "-- CMD") or an argument in capitals (GLOB)
	/^  (\\-(\\-)?[A-Za-z]|\\-\\- |[A-Z][A-Z]+( |$))/ {
		to("item")
		line = substr($0, 3)
		if (match(line, /  +/)) {
			term = substr(line, 1, RSTART - 1)
			text = substr(line, RSTART + RLENGTH)
		} else {
			term = line; text = ""
		}
		printf ".TP\n\\fB%s\\fR\n", term
		next
	}
	{ to("verb"); print }
	END { to("none") }'
}

see_also() {	# extra text
	printf '.SH SEE ALSO\n%s\n.PP\nThe docs/ files the help names are installed in\n.IR %s .\n' \
		"$1" "$(printf %s "$DOCDIR" | escape)"
}

command_page() {	# CMD SUMMARY
	help=$("$DPROBE" help "$1") || die "'$DPROBE help $1' failed"
	case $help in "usage: "*) ;; *) die "'$DPROBE help $1' shows no usage line" ;; esac
	{
		header "DPROBE-$(printf %s "$1" | tr a-z A-Z)" "dprobe-$1" "$2"
		printf '%s\n' "$help" | synopsis
		printf '%s\n' "$help" | body
		see_also "\\fBdprobe\\fR(1)"
	} >"$OUT/dprobe-$1.1.tmp"
	mv "$OUT/dprobe-$1.1.tmp" "$OUT/dprobe-$1.1"
}

main_page() {
	usage=$("$DPROBE" --help) || die "'$DPROBE --help' failed"
	{
		header DPROBE dprobe "$TAGLINE"
		printf '%s\n' "$usage" | sed -n 's/^usage: //p; s/^       //p' |
			{ printf '.SH SYNOPSIS\n.nf\n'; escape; printf '.fi\n'; }
		printf '.SH DESCRIPTION\n'
		printf 'dprobe takes the probe definitions of the kernel'\''s kprobe_events\n'
		printf 'and uprobe_events and traces user\\-space processes with them.\n'
		printf '\\fBdprobe \\fICOMMAND\\fB \\-\\-help\\fR and \\fBdprobe help \\fICOMMAND\\fR\n'
		printf 'print what \\fBdprobe\\-\\fICOMMAND\\fR(1) holds.\n'
		printf '.SH COMMANDS\n'
		printf '%s\n' "$cmds" | while IFS='	' read -r c s; do
			printf '.TP\n\\fBdprobe\\-%s\\fR(1)\n%s\n' "$c" "$(printf %s "$s" | escape)"
		done
		printf '.SH OPTIONS\n.TP\n\\fB\\-\\-help\\fR, \\fB\\-h\\fR\nthe usage of every command\n'
		printf '.TP\n\\fB\\-\\-version\\fR\nthe version\n'
		see_also "$(printf '%s\n' "$cmds" | cut -f1 |
			sed 's/.*/\\fBdprobe\\-&\\fR(1)/' | paste -sd, - | sed 's/,/, /g')"
	} >"$OUT/dprobe.1.tmp"
	mv "$OUT/dprobe.1.tmp" "$OUT/dprobe.1"
}

mkdir -p "$OUT"
printf '%s\n' "$cmds" | while IFS='	' read -r c s; do
	command_page "$c" "$s"
done
main_page
