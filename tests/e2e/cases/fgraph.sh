# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
desc='--tracer function_graph over a whole program: recursion, longjmp, a C++ exception, threads, in the kernel'"'"'s format'
# fgraph.cc, read from its source:
#   main -> fact(3) -> fact(2) -> fact(1) -> leaf(0): a leaf, then three
#           closing braces
#   main -> do_jump -> jumper(2) -> jumper(1) -> jumper(0), which longjmps
#           back into do_jump: the three jumper calls never return (their
#           returns are missed) and are closed as unwound when do_jump's
#           next call, leaf(1), comes at a stack pointer above them
#   main -> do_throw -> thrower(2) -> (1) -> (0), which throws; the catch
#           in do_throw calls leaf(2): the throwers are closed as unwound,
#           and do_throw's own return, which the catch gave back its
#           return probe, closes it
#   two threads one after the other: worker -> leaf, each after a thread
#           switch block; main closes last, after a switch back.
# GCC's thrower.cold / do_throw.cold parts (-O2) are not function
# entries: skipped, and counted.  Durations, the CPU column and the
# switch blocks' names are normalised (D, one line per switch).
# The agent's catch hook is the in-process engine's: on the ptrace
# engine a throw drops every return of the thread in flight (do_throw's
# and main's too), so the case runs on the in-process engine.
prog=fgraph
timestamps=no
needs=g++
engines='auto agent'
levels=O2
opts='--tracer function_graph'
fg_norm() {
	awk '
	/^#/ || /^$/ || /^ -+$/ { next }
	/=>/ { print "-- thread switch --"; next }
	{
		sub(/^ *[0-9]+\) /, "")
		bar = index($0, "|")
		dur = substr($0, 1, bar - 1)
		d = (dur ~ /us/) ? "D" : "-"
		print d " |" substr($0, bar + 1)
	}' "$T/events"
}
case_result() {
	fg_norm
	sed 's/^/> /' "$T/stdout"
	grep -o 'function_graph: 8 functions,' "$T/stderr" | tr -d ,
	summary_of "$T/stderr"
	echo "# exit=$(cat "$T/rc")"
}
expected() {
	cat <<'EOF2'
- |  main() {
- |    fact() {
- |      fact() {
- |        fact() {
D |          leaf();
D |        }
D |      }
D |    }
- |    do_jump() {
- |      jumper() {
- |        jumper() {
- |          jumper() {
- |          } /* jumper (unwound) */
- |        } /* jumper (unwound) */
- |      } /* jumper (unwound) */
D |      leaf();
D |    }
- |    do_throw() {
- |      thrower() {
- |        thrower() {
- |          thrower() {
- |          } /* thrower (unwound) */
- |        } /* thrower (unwound) */
- |      } /* thrower (unwound) */
D |      leaf();
D |    }
-- thread switch --
- |  worker() {
D |    leaf();
D |  }
-- thread switch --
- |  worker() {
D |    leaf();
D |  }
-- thread switch --
D |  }
> fgraph: 6 2 3
function_graph: 8 functions
# dprobe: 32 events, 0 filtered, 6 missed, 0 lost
# exit=0
EOF2
}
