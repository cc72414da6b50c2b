// SPDX-License-Identifier: GPL-2.0
/*
 * fgraph.cc built with -pg (tests/e2e/lib.sh), for uftrace's mcount
 * tracing: the fgraph-uftrace case compares its call structure with
 * dprobe's of fgraph.
 */
#include "fgraph.cc"
