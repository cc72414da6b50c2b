/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's syscall events (events/syscalls/sys_enter_NAME and
 * sys_exit_NAME) made without the kernel: their `format` text from the
 * architecture's table of system calls (arch/arch.h), byte for byte as
 * the kernel writes it but for the ID, and their records from what an
 * engine saw at a system call's entry or exit (the ptrace engine's
 * syscall stops).  The events are kernel tracepoints to the rest of
 * dprobe (dp_registry_kernel_tp()): the same fields, filters and trace
 * lines whoever made the record.
 */
#ifndef DPROBE_EVENT_SYSCALLS_H
#define DPROBE_EVENT_SYSCALLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/arch.h"
#include "event/event.h"

#define DP_SYSCALLS_GROUP	"syscalls"

/* The `format` text of @sc's entry or exit event with id @id (malloc'd,
 * NULL when out of memory). */
char *dp_syscall_format(const struct dp_syscall *sc, bool exit, unsigned id);

/* Every system call's two events in @reg; how many were made. */
unsigned dp_registry_syscalls(struct dp_registry *reg);
/* Those whose names match @glob (fnmatch(3): "sys_enter_open*"); how many
 * match (made now or before), -ENOMEM. */
int dp_registry_syscalls_glob(struct dp_registry *reg, const char *glob);

/* The system call @ev is an event of (*@exit: its exit), or NULL. */
const struct dp_syscall *dp_syscall_of_event(const struct dp_event *ev,
					     bool *exit);

/*
 * @ev's record (of thread @tid) into @buf (@cap bytes): at the entry,
 * system call @nr with @args (DP_SYSCALL_MAX_ARGS values, those past its
 * arguments ignored); at the exit, its return value @ret.  Returns the
 * record's length, 0 if it does not fit.  Its layout is @ev's, whatever
 * @nr is.
 */
size_t dp_syscall_record(const struct dp_event *ev, bool exit, long nr,
			 const uint64_t *args, int64_t ret, int tid,
			 uint8_t *buf, size_t cap);

#endif
