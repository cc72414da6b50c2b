// SPDX-License-Identifier: GPL-2.0
/* entry.c built with -fpatchable-function-entry=5,5 (lib.sh: prog_flags) */
#include "entry.c"
