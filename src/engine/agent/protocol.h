/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The control channel between dprobe and the agent (libdprobe.so) inside
 * a traced process: a SOCK_SEQPACKET unix socket, one text message per
 * packet, so neither side needs framing and a dead peer reads as EOF.
 *
 * Every channel is one end of a socket pair: nothing has a name another
 * user could see (/proc/net/unix), connect to or flood.
 *
 * A command dprobe launches inherits one end of the hub, a pair dprobe
 * made: DP_AGENT_ENV_SOCK is "FD:PID[:f]", the descriptor's number and
 * dprobe's pid.  The library's constructor takes it only if it is a
 * seqpacket unix socket of a pair process PID made (SO_PEERCRED), and
 * never in a set-user-ID or set-capability program (AT_SECURE).  Each
 * agent joins by making a pair of its own and sending one end over the
 * hub ("NEW <pid>" + the descriptor), which dprobe takes only if that
 * pair is the process's own; the hub carries nothing else, and no agent
 * ever reads from it.  Without ":f" the agent then closes the hub and
 * takes LD_PRELOAD and DP_AGENT_ENV_SOCK out of the environment; with
 * ":f" (-f) it keeps both, so that every program it runs joins too
 * (the hub is not close-on-exec), and a fork child joins before fork()
 * returns in it, saying "fork <ppid>" in its HELLO: it keeps its
 * parent's probes, dprobe sends it rings of its own (RINGS) and ARM.
 * Without -f a fork child says "UNTRACED <pid>" on its parent's channel
 * (one packet, never waited for), puts every probed byte back and
 * closes it.
 *
 * In a running process, the ptrace engine injects the library and calls
 * dprobe_agent_attach() ("f" with -f, else NULL) while every other
 * thread is stopped: it makes the pair and returns the number of
 * dprobe's end; dprobe takes it out of the process with pidfd_getfd()
 * (which needs the rights ptrace needs) and checks it is a pair the
 * target made.  The agent closes its copy of that end at dprobe's first
 * message, or after 10 s if dprobe never comes.  With -f it also makes
 * the hub (a pair of the target's: the PID in DP_AGENT_ENV_SOCK is the
 * target's then) and sends dprobe its end right after HELLO.  Everything
 * the agent keeps in the program's descriptor table is made at such a
 * moment, when no thread of the program can open anything: a number
 * the agent took even for an instant would shift the program's (the
 * control thread works in a table of its own, agent/channel.c).
 *
 *   agent -> dprobe   HELLO <version> <pid> <clock> [fork <ppid>]
 *                     <clock>: "tsc" (record stamps are rdtscp ticks, the
 *                     record's CPU comes from TSC_AUX) or "mono"
 *                     (CLOCK_MONOTONIC ns, CPU from getcpu)
 *   agent -> dprobe   HUB                          + the hub's end (-p -f)
 *   dprobe -> agent   RINGS                        + the ring memfd
 *                     PROBE <slot> <addr> <foffs> <flags> <line>
 *                         one location of a probe: <addr> where it goes,
 *                         <foffs> the run-time address of file offset 0
 *                         of its object (@+OFFS), <flags> DP_AGENT_F_*,
 *                         <line> the definition (its fetch program)
 *                     SYM <slot> <arg> <addr>      run-time address of the
 *                                                  @SYM of argument <arg>
 *                     REF <slot> <addr>            run-time address of the
 *                                                  location's reference
 *                                                  counter (uprobe (REF), an
 *                                                  SDT semaphore): +1 while
 *                                                  it is armed
 *                     A t: definition's <addr> is its tracepoint's struct
 *                     dp_tracepoint (include/dprobe/tracepoint.h).
 *   agent -> dprobe   OK <slot> <how>              registered; <how>: the
 *                                                  strategy ("optimized",
 *                                                  or "int3" and why not)
 *                     ERR <slot> <errno> <text>    refused
 *                     AGGMEM                       + the session's hist
 *                                                  tables (event/agg.h), once
 *                     AGG <slot> <off> <bits> <recsize> <nkeys> <nvals>
 *                         <field>...               a DP_AGENT_F_AGG probe's
 *                                                  hits go to the tables at
 *                                                  <off> (a slot's each);
 *                                                  a <field> is
 *                                                  OFF:SIZE:SIGNED:MODE:ARG,
 *                                                  keys then values
 *   dprobe -> agent   HOLD                         (before ARM, dprobe show)
 *                                                  the constructor goes on
 *                                                  serving after ARM, until
 *                                                  GO: main() waits
 *   dprobe -> agent   ARM                          register and enable
 *                                                  what is not yet
 *   agent -> dprobe   ARMED <n>                    (after the OK/ERRs)
 *   dprobe -> agent   DISARM / ENABLE              disable / enable all
 *   agent -> dprobe   DISARMED / ENABLED
 *   dprobe -> agent   SHOW <slot>                  what the location's
 *   agent -> dprobe   SHOWN <slot> <addr> <armed> <opt> <emulated>
 *                     <patch> <nbytes> <detour> <dlen> <tail> <xol>
 *                     <orig> <how>                 site did to the code:
 *                         the jmp's place and bytes replaced, the detour
 *                         (<dlen> bytes) and its tail (the relocated
 *                         region, a jmp back) when one was built, the
 *                         out-of-line slot (0: emulated or none), the
 *                         original code from <addr> (hex, without our
 *                         bytes), the strategy as in OK; or ERR
 *   dprobe -> agent   GO                           end a HOLD
 *   dprobe -> agent   STATS
 *   agent -> dprobe   STAT <slot> <missed> [<slot> <missed>]...  ...  END
 *                     the slots that missed hits (the others missed
 *                     none), as many pairs per message as fit; also
 *                     sent unasked at the program's exit.
 *   agent -> dprobe   UNTRACED <pid>               a fork child, not
 *                                                  followed (any time)
 *   agent -> dprobe   RINGSTAKEN                   the program unmapped
 *                                                  (or mapped over) the
 *                                                  rings: it records
 *                                                  nothing from now on
 *   agent -> dprobe   MAPS                         objects were loaded or
 *                                                  unloaded (any time after
 *                                                  the first ARM): dprobe
 *                                                  reads the maps again,
 *                                                  sends the new locations
 *                                                  (PROBE..., ARM) and drops
 *                                                  the ones that went:
 *   dprobe -> agent   DROP <start> <end>           unregister every location
 *                                                  in [start, end)
 *   agent -> dprobe   DROPPED <n>
 *   dprobe -> agent   SYNCED                       MAPS is done (the thread
 *                                                  that loaded waits for it)
 *   dprobe -> agent   SLOT <slot> <0|1>            switch a location's
 *   agent -> dprobe   SLOTTED <n>                  probes off or on (a site
 *                                                  with none on is disarmed)
 *   dprobe -> agent   IFUNC <symbol> <path>        the implementation the
 *   agent -> dprobe   IFUNC <addr> | ERR ...       loader binds an IFUNC
 *                                                  symbol of that object to
 *   agent -> dprobe   EXEC <seq> <pid> <why> <path>
 *                     with -f, before an exec whose program will have
 *                     no agent (<why>: "static", "setid", "nopreload"):
 *                     process <pid> (this one, or a vfork child of it)
 *                     is about to run <path>; dprobe takes it with the
 *                     ptrace engine, which places the probes in the new
 *                     image before it runs
 *   dprobe -> agent   EXECGO <seq> <0|1>           exec now (1: taken)
 *   agent -> dprobe   EXECFAIL <seq>               the exec failed: the
 *                                                  process goes on here
 *   agent -> dprobe   EXECLATE <pid> <why> <path>  child <pid> of this
 *                     process already runs <path> (posix_spawn() exec'd
 *                     it out of sight): taken from now on, no answer
 *                     dprobe reads the channel all the time it traces,
 *                     so neither side waits on a full socket.
 *   dprobe -> agent   DETACH                       unregister everything
 *   agent -> dprobe   BYE
 *
 * Records: one per hit of an enabled probe, in the ring of the hitting
 * thread; the ring header's info is DP_AGENT_INFO(cpu, slot) and its ts
 * the clock above.  A probe with DP_AGENT_F_COUNT records no payload
 * (dprobe only counts it).  A probe with DP_AGENT_F_STACK (dprobe trace
 * --stack) appends the user stack at the hit to its record: the record
 * (padded to 8 bytes), then N return addresses (8 bytes each, innermost
 * first), then one 8-byte word DP_AGENT_STACK_WORD(N).  dprobe knows
 * which slots carry one and believes none of it: N must be at most
 * DP_STACK_MAX and fit in the record with the word, else the record is
 * counted lost.  With DP_AGENT_F_DWARF too (dprobe trace --call-graph
 * dwarf) the agent walks nothing: it appends a snapshot instead, for
 * dprobe to unwind with the CFI (sym/unwind.h): after the padded record,
 * struct dp_agent_snap_head (the first frames as above and the
 * registers), then the L bytes copied from the stack pointer up (as many
 * of DP_AGENT_DWARF_SIZE(flags) as are mapped), padded to 8, then one
 * word DP_AGENT_SNAP_WORD(L).  dprobe believes none of it either.
 * With DP_AGENT_F_STACKMAX too (the stack tracer), the probe records
 * only when the hitting thread's stack is deeper than any the process
 * recorded since the slot was last switched on (SLOT), and the frames
 * are followed by one depth each (bytes from the top of the thread's
 * stack to the lowest byte of that frame; 0: not known), then the word
 * DP_AGENT_DEPTHS_WORD(N).
 * If the channel closes without DETACH (dprobe died), the
 * agent restores every probed byte and goes quiet.
 */
#ifndef DPROBE_AGENT_PROTOCOL_H
#define DPROBE_AGENT_PROTOCOL_H

#include <stdint.h>

#define DP_AGENT_VERSION	8
#define DP_AGENT_ENV_SOCK	"DPROBE_AGENT_SOCK"
#define DP_AGENT_ATTACH_FN	"dprobe_agent_attach"
#define DP_AGENT_MSG_MAX	8192

#define DP_AGENT_F_COUNT	1u	/* count only: an empty record */
#define DP_AGENT_F_STACK	2u	/* the user stack after the record */
#define DP_AGENT_F_ENTRY	4u	/* the address starts a function: the
					 * caller is in the return address at
					 * [sp], not yet in the frame chain */
#define DP_AGENT_F_AGG		8u	/* counted and added to hist tables
					 * (AGG), never recorded */
#define DP_AGENT_F_DWARF	16u	/* with F_STACK: a snapshot of the
					 * registers and the stack instead */
#define DP_AGENT_F_LAT		32u	/* with F_AGG, on a return probe: its
					 * record is made as below, not
					 * fetched, and timed from the entry */
#define DP_AGENT_F_STACKMAX	64u	/* with F_STACK: only a new deepest
					 * stack of the process, with each
					 * frame's depth (the stack tracer) */
/* A DP_AGENT_F_LAT probe's record: event/agg.h's DP_AGG_LAT_*. */
/* The stack bytes a DP_AGENT_F_DWARF probe copies, in the flags' high half
 * (8-byte units). */
#define DP_AGENT_DWARF_FLAGS(bytes)	((uint32_t)((bytes) / 8u) << 16)
#define DP_AGENT_DWARF_SIZE(flags)	(((uint32_t)(flags) >> 16) * 8u)

/* The last word of a record with a stack: a tag and the frame count. */
#define DP_AGENT_STACK_TAG	0x4b545344u	/* "DSTK" */
#define DP_AGENT_STACK_WORD(n) \
	(((uint64_t)DP_AGENT_STACK_TAG << 32) | (uint32_t)(n))
/* Bytes a stack adds to a record at most: the frames and the word. */
#define DP_AGENT_STACK_BYTES(max) (8u * ((max) + 1u))

/*
 * dprobe's side: the stack at the end of the @*len bytes of a record at
 * @rec, of a location sent with DP_AGENT_F_STACK, into @out (at most
 * @max frames, *@n of them); *@len becomes the record's own length.  The
 * ring is the traced program's to write: -1 (nothing changed) unless the
 * tag is there, the count is 1 to @max and the frames fit in the record.
 */
/*
 * The count in the last word of a record's @len bytes at @b, when its
 * tag is @tag, the count is 1 to @max and that many entries of @per
 * bytes fit before the word; 0 otherwise.
 */
static inline uint32_t dp_agent_tail_count(const unsigned char *b,
					   uint32_t len, uint32_t tag,
					   unsigned max, unsigned per)
{
	uint64_t w;
	uint32_t cnt;

	if (len < 8)
		return 0;
	__builtin_memcpy(&w, b + len - 8, 8);
	cnt = (uint32_t)w;
	if ((uint32_t)(w >> 32) != tag || !cnt || cnt > max ||
	    (uint64_t)cnt * per + 8 > len)
		return 0;
	return cnt;
}

static inline int dp_agent_stack_take(const void *rec, uint32_t *len,
				      uint64_t *out, unsigned max,
				      unsigned *n)
{
	const unsigned char *b = (const unsigned char *)rec;
	uint32_t cnt = dp_agent_tail_count(b, *len, DP_AGENT_STACK_TAG, max,
					   8);

	if (!cnt)
		return -1;
	*len -= 8 + cnt * 8;
	__builtin_memcpy(out, b + *len, (size_t)cnt * 8);
	*n = cnt;
	return 0;
}

/* The last word of a DP_AGENT_F_STACKMAX record: frames, then depths. */
#define DP_AGENT_DEPTHS_TAG	0x44545344u	/* "DSTD" */
#define DP_AGENT_DEPTHS_WORD(n) \
	(((uint64_t)DP_AGENT_DEPTHS_TAG << 32) | (uint32_t)(n))

/*
 * dprobe's side of a DP_AGENT_F_STACKMAX record: as dp_agent_stack_take(),
 * with each frame's depth into @depth (at most @max of them too).
 */
static inline int dp_agent_depths_take(const void *rec, uint32_t *len,
				       uint64_t *out, uint64_t *depth,
				       unsigned max, unsigned *n)
{
	const unsigned char *b = (const unsigned char *)rec;
	uint32_t cnt = dp_agent_tail_count(b, *len, DP_AGENT_DEPTHS_TAG, max,
					   16);

	if (!cnt)
		return -1;
	*len -= 8 + cnt * 16;
	__builtin_memcpy(out, b + *len, (size_t)cnt * 8);
	__builtin_memcpy(depth, b + *len + cnt * 8, (size_t)cnt * 8);
	*n = cnt;
	return 0;
}

/* What a snapshot starts with (DP_AGENT_F_DWARF). */
#define DP_AGENT_SNAP_NREGS	17	/* x86-64's DWARF numbers 0-16 */
struct dp_agent_snap_head {
	uint64_t first;			/* the probed address (or function) */
	uint64_t ret_ip;		/* a return probe: where it returned */
	uint64_t regs[DP_AGENT_SNAP_NREGS];	/* rax rdx rcx rbx rsi rdi rbp
						 * rsp r8-r15 rip */
};
#define DP_AGENT_SNAP_TAG	0x46524744u	/* "DGRF" */
#define DP_AGENT_SNAP_WORD(len) \
	(((uint64_t)DP_AGENT_SNAP_TAG << 32) | (uint32_t)(len))
/* Bytes a snapshot of @size stack bytes adds to a record at most. */
#define DP_AGENT_SNAP_BYTES(size) \
	(7u + (uint32_t)sizeof(struct dp_agent_snap_head) + \
	 (((uint32_t)(size) + 7u) & ~7u) + 8u)

/*
 * dprobe's side: the snapshot at the end of the @*len bytes of a record
 * at @rec into @head, and where its @*slen stack bytes are (inside
 * @rec); *@len becomes the record's own length.  -1 (nothing changed)
 * unless the tag is there, the length is at most @max and it all fits.
 */
static inline int dp_agent_snap_take(const void *rec, uint32_t *len,
				     uint32_t max,
				     struct dp_agent_snap_head *head,
				     const uint8_t **stack, uint32_t *slen)
{
	const unsigned char *b = (const unsigned char *)rec;
	uint64_t w, need;
	uint32_t n;

	if (*len < 8)
		return -1;
	__builtin_memcpy(&w, b + *len - 8, 8);
	n = (uint32_t)w;
	need = sizeof(*head) + (((uint64_t)n + 7) & ~7ull) + 8;
	if ((uint32_t)(w >> 32) != DP_AGENT_SNAP_TAG || n > max || need > *len)
		return -1;
	*len -= (uint32_t)need;
	__builtin_memcpy(head, b + *len, sizeof(*head));
	*stack = b + *len + sizeof(*head);
	*slen = n;
	return 0;
}

/* Ring record info: CPU in the low 16 bits, probe slot above. */
#define DP_AGENT_MAX_SLOTS	65535u
#define DP_AGENT_INFO(cpu, slot) \
	(((uint32_t)(cpu) & 0xffffu) | ((uint32_t)(slot) << 16))
#define DP_AGENT_INFO_CPU(info)	((info) & 0xffffu)
#define DP_AGENT_INFO_SLOT(info) ((info) >> 16)

#endif
