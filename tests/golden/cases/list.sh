# dprobe list -x: the example's functions at link-time addresses (a non-PIE
# -O0 build, so the addresses are fixed), then each kind of bad input.
"$DPROBE" list -x "$EXAMPLE" 'w*'
"$DPROBE" list --binary "$EXAMPLE" '[mrw]*'
"$DPROBE" list -x "$EXAMPLE" 'nomatch*'
echo "exit=$?"
"$DPROBE" list -x /nonexistent/app
echo "exit=$?"
"$DPROBE" list -x tests/golden/cases/list.sh
echo "exit=$?"
"$DPROBE" list -x tests/golden/cases
echo "exit=$?"
"$DPROBE" list -p 2147483647
echo "exit=$?"
"$DPROBE" list -p 12abc 2>&1 | head -1
"$DPROBE" list -p 12abc 2>/dev/null
echo "exit=$?"
"$DPROBE" list -x "$EXAMPLE" -p 1 2>&1 | head -1
"$DPROBE" list 'w*'
