# shellcheck shell=sh disable=SC2016,SC2034  # defs hold literal $vars; the runner reads the settings
# follow-spawntree with the places written as plain symbols, as a user
# would write them for the program dprobe launches: "job" names the
# command's executable (spawntree).  The shells between the levels are
# images without it: there the probe is simply not present (a place
# not in an exec'd image is pending there), and tracing goes on; each
# node that execs spawntree again has it.  So the same 34 events as
# follow-spawntree (same tree, same order, processes [1] to [7]), the
# same output, exit 0: its run, result and expectation, these settings.
# shellcheck source=tests/e2e/cases/follow-spawntree.sh
. "$E2E/cases/follow-spawntree.sh"
desc='-f with a plain symbol place ("job") across execs of other programs (sh): absent there, armed again in the program'
defs='p:job job id=%di:s64 n=%si:s64
r:jobr job ret=$retval:s64'
