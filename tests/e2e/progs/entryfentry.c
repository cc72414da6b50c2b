// SPDX-License-Identifier: GPL-2.0
/* entry.c built with -pg -mfentry -mnop-mcount (lib.sh: prog_flags) */
#include "entry.c"
