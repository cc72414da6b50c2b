/* SPDX-License-Identifier: GPL-2.0 */
/* Internal to lang/: looking up a fetch type by name. */
#ifndef DPROBE_LANG_TYPES_H
#define DPROBE_LANG_TYPES_H

#include <stdbool.h>

#include "lang/kstrto.h"
#include "lang/lang.h"

/* 0, or -1 if @name is no type (BAD_TYPE). */
int dp_find_type(const char *name, bool kernel_place, struct dp_type *t);
/* The same in a t: line, which also takes "pid_t" (an s32). */
int dp_find_tp_type(const char *name, bool kernel_place, struct dp_type *t);

#endif
