/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Functions of the kernel's vDSO, found by reading its ELF image in our
 * own memory (getauxval(AT_SYSINFO_EHDR)), not through dlsym() or libc's
 * wrappers: those are library functions a user may probe, and the hit
 * path must not run into a probe of its own.
 */
#ifndef DPROBE_AGENT_VDSO_H
#define DPROBE_AGENT_VDSO_H

#include <stddef.h>

#include "engine/agent/agent.h"

/*
 * The address of the vDSO's function @name (e.g. "__vdso_getcpu"), or
 * NULL: no vDSO, no such function, an image that does not read as a
 * sane x86-64 ELF, or code that may touch more than general registers
 * (the hit path saves no SIMD or x87 state).  Control thread only.
 */
DP_HIDDEN void *dp_vdso_sym(const char *name);

/* For tests/agent/vdso_lookup.c: the same on an image at @image, e.g.
 * a patched copy of the vDSO (its first page and its loaded segment
 * readable; NULL is refused), and the check of code alone: the function
 * at @code, all it reaches inside its @len bytes, touches general
 * registers only. */
DP_HIDDEN void *dp_vdso_sym_in(const void *image, const char *name);
DP_HIDDEN bool dp_vdso_code_ok(const void *code, size_t len);

#endif
