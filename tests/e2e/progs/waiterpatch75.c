// SPDX-License-Identifier: GPL-2.0
/* waiter.c built with -fpatchable-function-entry=7,5 (lib.sh: prog_flags) */
#include "waiter.c"
