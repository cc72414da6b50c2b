// SPDX-License-Identifier: GPL-2.0
/*
 * e2e target: unwind.c built with frame pointers (tests/e2e/lib.sh), to
 * check that both ways of taking a stack agree where both can.
 */
#include "unwind.c"
