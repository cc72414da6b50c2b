/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Static tracepoints for applications, in the manner of the kernel's
 * DECLARE_TRACE()/DEFINE_TRACE()/TRACE_EVENT(): hook points written into
 * the code ahead of time, off until a probe function is registered, and
 * described in the binary so that `dprobe` finds and enables them
 * without running the program's code.
 *
 * Usage, in a header (once per tracepoint):
 *
 *	#include <dprobe/tracepoint.h>
 *
 *	DP_TRACE_EVENT(myapp, open_file,
 *		TP_PROTO(int id, const char *path, const unsigned char *key),
 *		TP_ARGS(id, path, key),
 *		TP_FIELDS(tp_field(int, id) tp_string(path)
 *			  tp_array(unsigned char, key, 16)))
 *
 * and in exactly one .c file of the object (the executable, or a shared
 * library), before including that header:
 *
 *	#define DP_CREATE_TRACE_POINTS
 *	#include "myapp_events.h"
 *
 * The object is linked with -ldprobe.  Each tracepoint gives:
 *
 *	trace_open_file(id, path, key)	fire it: calls every registered probe
 *	trace_open_file_enabled()	true while some probe is registered
 *	register_trace_open_file(probe, data)
 *	unregister_trace_open_file(probe, data)
 *
 * where a probe is void probe(void *data, int id, const char *path,
 * const unsigned char *key): a probe of another type does not compile.
 * The kernel's split is there too: DP_DECLARE_TRACE(group, name, TP_PROTO,
 * TP_ARGS) in a header, DP_DEFINE_TRACE(group, name, TP_PROTO, TP_ARGS,
 * TP_FIELDS) in one .c file after it.
 *
 * Fields.  Every argument is one field, in the prototype's order, named
 * as the argument: tp_field(type, arg) an integer (a pointer argument may
 * be recorded as an integer of its size), tp_pid(arg) a process or thread
 * id (an int or pid_t argument, a field the `format` file calls pid_t as
 * the kernel's sched events do), tp_string(arg) a pointer to a
 * NUL-terminated string, tp_array(type, arg, count) a pointer to count
 * (1 to DP_TP_MAX_ARRAY) integers of that type.  Arguments are integers or pointers, 1 to
 * DP_TP_MAX_ARGS of them; the compiler checks that TP_FIELDS names the
 * arguments of TP_ARGS in order, that an integer field has its
 * argument's size, and that string and array arguments point to the
 * right type.  dprobe turns the fields into an event `format`.
 *
 * Cost.  Disabled, trace_NAME() is a 5-byte nop followed by the code
 * after it (asm goto): the call to the probes is out of line, in cold
 * code.  The nop and where it would jump are noted in the section
 * __dp_jump_table; when the first probe registers, libdprobe turns every
 * nop of that tracepoint into a jmp to the out-of-line call, and back
 * into the nop when the last one goes (the kernel's static keys and
 * text_poke_bp(): an int3 first, then the rest, then the first byte,
 * each write followed by a serialisation of every core; a thread that
 * meets the int3 in between is sent on by libdprobe's SIGTRAP handler).
 * What the compiler adds around the site for the rare call comes on top:
 * in a small function with no stack frame, GCC adds a stack adjustment
 * (3 instructions per call in all, counted by callgrind in
 * tests/agent/tp_callgrind.sh); clang may save registers in the prologue.
 * With -DDP_TP_NO_JUMP_LABEL, or a compiler without asm goto, a
 * tracepoint is a load of its probe count and a branch instead (5
 * instructions there).  Enabled, a hit costs the jump, two calls into
 * libdprobe (the read side of a grace period, below) and one direct call
 * of each probe with (data, args...) in the plain SysV calling
 * convention: a few nanoseconds over the probe's own work (`make
 * tp-bench` compares it with a hand-written hook).
 *
 * Probes and the grace period.  A tracepoint's probes are a NULL-
 * terminated array of {func, data} that registering and unregistering
 * replace (copy on update, under libdprobe's registration mutex) and
 * publish with a release store.  Firing never locks: it holds a read side
 * of libdprobe's grace period (a per-thread counter, no atomic
 * instruction) while it walks the array.  Unregister returns only after a
 * grace period, when no thread can still be running that probe, so its
 * data may be freed at once; the replaced array is freed then too.
 * Firing is async-signal-safe; registering is not.
 *
 * Errors of the registration functions, as negative errno values:
 *   -EINVAL   not a tracepoint (magic, version), a NULL probe, or a
 *             prototype that differs from the tracepoint's (spaces aside)
 *   -EFAULT   the tracepoint's address cannot be read
 *   -EEXIST   this (probe, data) pair is already registered
 *   -ENOENT   unregistering a pair that is not registered
 *   -ENOMEM   out of memory
 *   -EBUSY    called from inside a probe (or a kprobe handler): the array
 *             being walked would be freed under the caller; or one of
 *             the tracepoint's nops cannot be turned into a jmp: an int3
 *             that is not libdprobe's is on it, or a jump-optimised
 *             kprobe over it could not be undone (a thread stayed
 *             between its endbr64 and its jmp)
 *   other     libdprobe cannot patch code here (its initialisation failed)
 *
 * Limits:
 *  - Tracepoints are per object: struct dp_tracepoint is hidden, so an
 *    executable and a library can each have a tracepoint of the same
 *    name, and trace_NAME() fires the one of the object it is compiled
 *    into.  Every object that defines tracepoints links with -ldprobe.
 *  - Names are C identifiers; a name is unique in its object (the
 *    symbols made from it are), and up to DP_TP_NAME_LEN - 1 characters,
 *    the group up to DP_TP_GROUP_LEN - 1, the prototype up to
 *    DP_TP_PROTO_LEN - 1, argument names up to DP_TP_FIELD_NAME_LEN - 1.
 *  - The prototype is written TP_PROTO(...) inside the macros (its text
 *    is kept as written, before macro expansion: bool stays bool), with
 *    at least one argument.  TP_ARGS lists its parameters in order (as in
 *    the kernel, this is not checked against TP_PROTO).
 *  - Probes must not register or unregister (-EBUSY), and should return
 *    promptly: unregistering waits for them.
 *  - Unregister an object's probes before dlclose()ing it.
 *  - The nops are patched by libdprobe only; code under valgrind or
 *    another tool that caches translations may not see the jmp.
 *  - A kprobe (include/dprobe/kprobes.h) may sit on a nop or a jmp:
 *    its handlers run, then the nop or the jmp as the key says, in
 *    whichever order the two were registered.  Jump optimisation
 *    leaves the sites alone and never covers a site's target.
 *  - C only (GNU C11 or later, GCC or clang), x86-64 for the jumps.
 */
#ifndef DPROBE_TRACEPOINT_H
#define DPROBE_TRACEPOINT_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the ABI: what dprobe reads from the ELF file ----------------------- */

#define DP_TRACEPOINT_MAGIC	0x70747064u	/* "dptp" little-endian */
#define DP_TRACEPOINT_VERSION	1
#define DP_TP_MAX_ARGS		8
#define DP_TP_GROUP_LEN		32
#define DP_TP_NAME_LEN		64
#define DP_TP_PROTO_LEN		256
#define DP_TP_FIELD_NAME_LEN	32
/* the longest array an event records (the probe language's limit) */
#define DP_TP_MAX_ARRAY		64

enum dp_tp_field_kind { DP_TPF_INT = 1, DP_TPF_STRING = 2, DP_TPF_ARRAY = 3 };
/* The C type an INT field's `format` line names: by default s32, u64...
 * from its size and sign; DP_TPT_PID_T "pid_t", as the kernel's own
 * tracepoints declare their pids (hist triggers match synthetic event
 * fields by that name).  A reader that knows no such value keeps the
 * default. */
enum dp_tp_field_type { DP_TPT_DEFAULT = 0, DP_TPT_PID_T = 1 };

struct dp_tp_field {			/* 40 bytes */
	char name[DP_TP_FIELD_NAME_LEN];	/* the argument's name */
	uint8_t kind;			/* enum dp_tp_field_kind */
	uint8_t size;			/* INT: sizeof the integer (1, 2, 4, 8);
					 * ARRAY: sizeof one element; STRING: 1 */
	uint8_t is_signed;		/* integer / element signedness */
	uint8_t type;			/* INT: enum dp_tp_field_type */
	uint16_t count;			/* ARRAY: number of elements; else 0 */
	uint16_t reserved2;
};

struct dp_tracepoint_func {
	void *func;
	void *data;
};

/*
 * One per tracepoint, in the writable section __dp_tracepoints, one after
 * another: dprobe walks the section from the file by sizeof(struct
 * dp_tracepoint), checking the magic; an entry's run-time address is the
 * section's address + the load bias + index * sizeof.  The constant part
 * holds no pointer, so it needs no relocation (PIE, shared libraries).
 */
struct dp_tracepoint {
	/* constant part */
	uint32_t magic;			/* DP_TRACEPOINT_MAGIC */
	uint16_t version;		/* DP_TRACEPOINT_VERSION */
	uint16_t nargs;			/* fields[0..nargs): the arguments */
	char group[DP_TP_GROUP_LEN];
	char name[DP_TP_NAME_LEN];
	char proto[DP_TP_PROTO_LEN];	/* "int id, const char *path" */
	struct dp_tp_field fields[DP_TP_MAX_ARGS];
	/* run-time part: zero in the file, written by libdprobe only */
	uint32_t key;			/* probes registered: > 0 is enabled */
	uint32_t reserved;
	struct dp_tracepoint_func *funcs;	/* NULL-terminated, or NULL */
	uint64_t reserved2;
} __attribute__((aligned(64)));

#ifndef __cplusplus
_Static_assert(sizeof(struct dp_tp_field) == 40, "dp_tp_field ABI");
_Static_assert(__builtin_offsetof(struct dp_tracepoint, fields) == 360,
	       "dp_tracepoint ABI");
_Static_assert(__builtin_offsetof(struct dp_tracepoint, key) == 680,
	       "dp_tracepoint ABI");
_Static_assert(sizeof(struct dp_tracepoint) == 704, "dp_tracepoint ABI");
#endif

/*
 * An entry of __dp_jump_table, one per trace_NAME() (and
 * trace_NAME_enabled()) site, each field relative to its own address as
 * the kernel's jump entries: the nop, where its jmp goes, the tracepoint.
 * An entry whose key is 0 is a placeholder.
 */
struct dp_jump_entry {
	int32_t code;
	int32_t target;
	int64_t key;
};

/* ---- the runtime, in libdprobe.so --------------------------------------- */

/*
 * @func is called as void func(void *data, <the prototype's arguments>).
 * @proto: the prototype as TP_PROTO wrote it (compared without regard to
 * spaces), or NULL for a generic probe that reads every argument as a
 * 64-bit integer.
 */
int dp_tracepoint_probe_register(struct dp_tracepoint *tp, void *func,
				 void *data, const char *proto);
int dp_tracepoint_probe_unregister(struct dp_tracepoint *tp, void *func,
				   void *data);

/* For the code below only. */
struct __dp_tp_read {
	const struct dp_tracepoint_func *funcs;	/* NULL: nothing to call */
	void *token;
};
struct __dp_tp_read __dp_tp_begin(struct dp_tracepoint *tp);
void __dp_tp_end(void *token);
void __dp_jump_table_register(const struct dp_jump_entry *start,
			      const struct dp_jump_entry *stop);
void __dp_jump_table_unregister(const struct dp_jump_entry *start);

/* ---- preprocessor tools -------------------------------------------------- */

#define __DP_STR_(...) #__VA_ARGS__
#define __DP_STR(...) __DP_STR_(__VA_ARGS__)
#define __DP_CAT_(a, b) a##b
#define __DP_CAT(a, b) __DP_CAT_(a, b)
#define __DP_PARAMS(...) __VA_ARGS__
#define __DP_UNPAREN(...) __VA_ARGS__
#define __DP_CALL(m, ...) m(__VA_ARGS__)

/* How many arguments (1 to 10; an empty list counts as 1). */
#define __DP_NARG(...) __DP_NARG_(__VA_ARGS__, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define __DP_NARG_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, n, ...) n

/*
 * TP_FIELDS is a sequence of tuples, "(a, ...) (b, ...)": each __DP_SEQ_i
 * takes one and leaves the next macro name in front of the rest, which
 * turns it into a list "(a, ...), (b, ...), __DP_SEQ_k" whose last item
 * is left over.
 */
#define __DP_SEQ_1(...) (__VA_ARGS__), __DP_SEQ_2
#define __DP_SEQ_2(...) (__VA_ARGS__), __DP_SEQ_3
#define __DP_SEQ_3(...) (__VA_ARGS__), __DP_SEQ_4
#define __DP_SEQ_4(...) (__VA_ARGS__), __DP_SEQ_5
#define __DP_SEQ_5(...) (__VA_ARGS__), __DP_SEQ_6
#define __DP_SEQ_6(...) (__VA_ARGS__), __DP_SEQ_7
#define __DP_SEQ_7(...) (__VA_ARGS__), __DP_SEQ_8
#define __DP_SEQ_8(...) (__VA_ARGS__), __DP_SEQ_9
#define __DP_SEQ_9(...) (__VA_ARGS__), __DP_SEQ_10

#define __DP_NFIELDS(seq) (__DP_NARG(__DP_SEQ_1 seq) - 1)

/* m(c, i, kind, type, arg, count) for each field i of @seq. */
#define __DP_EACH(m, c, seq) __DP_EACH_(m, c, __DP_SEQ_1 seq)
#define __DP_EACH_(m, c, ...) \
	__DP_CAT(__DP_EACH_, __DP_NARG(__VA_ARGS__))(m, c, __VA_ARGS__)
#define __DP_EACH_1(m, c, z)
#define __DP_EACH_2(m, c, a, z) __DP_CALL(m, c, 0, __DP_UNPAREN a)
#define __DP_EACH_3(m, c, a, b, z) \
	__DP_EACH_2(m, c, a, z) __DP_CALL(m, c, 1, __DP_UNPAREN b)
#define __DP_EACH_4(m, c, a, b, d, z) \
	__DP_EACH_3(m, c, a, b, z) __DP_CALL(m, c, 2, __DP_UNPAREN d)
#define __DP_EACH_5(m, c, a, b, d, e, z) \
	__DP_EACH_4(m, c, a, b, d, z) __DP_CALL(m, c, 3, __DP_UNPAREN e)
#define __DP_EACH_6(m, c, a, b, d, e, f, z) \
	__DP_EACH_5(m, c, a, b, d, e, z) __DP_CALL(m, c, 4, __DP_UNPAREN f)
#define __DP_EACH_7(m, c, a, b, d, e, f, g, z) \
	__DP_EACH_6(m, c, a, b, d, e, f, z) __DP_CALL(m, c, 5, __DP_UNPAREN g)
#define __DP_EACH_8(m, c, a, b, d, e, f, g, h, z) \
	__DP_EACH_7(m, c, a, b, d, e, f, g, z) __DP_CALL(m, c, 6, __DP_UNPAREN h)
#define __DP_EACH_9(m, c, a, b, d, e, f, g, h, i, z) \
	__DP_EACH_8(m, c, a, b, d, e, f, g, h, z) __DP_CALL(m, c, 7, __DP_UNPAREN i)
#define __DP_EACH_10(m, c, a, b, d, e, f, g, h, i, j, z) \
	__DP_EACH_9(m, c, a, b, d, e, f, g, h, i, z) __DP_CALL(m, c, 8, __DP_UNPAREN j)

/* The i-th name of TP_ARGS, padded so that a missing one is __dp_none. */
#define __DP_PAD __dp_none, __dp_none, __dp_none, __dp_none, __dp_none, \
	__dp_none, __dp_none, __dp_none, __dp_none
#define __DP_ARG_0(a, ...) a
#define __DP_ARG_1(a, b, ...) b
#define __DP_ARG_2(a, b, c, ...) c
#define __DP_ARG_3(a, b, c, d, ...) d
#define __DP_ARG_4(a, b, c, d, e, ...) e
#define __DP_ARG_5(a, b, c, d, e, f, ...) f
#define __DP_ARG_6(a, b, c, d, e, f, g, ...) g
#define __DP_ARG_7(a, b, c, d, e, f, g, h, ...) h
#define __DP_ARG_8(a, b, c, d, e, f, g, h, i, ...) i
#define __DP_ARG_I(i, args) __DP_CAT(__DP_ARG_, i) args

/* ---- the user's macros ---------------------------------------------------- */

#define TP_PROTO(...) __VA_ARGS__
#define TP_ARGS(...) __VA_ARGS__
#define TP_FIELDS(...) __VA_ARGS__
#define tp_field(type, arg) (__dp_int, type, arg, 0)
#define tp_pid(arg) (__dp_pid, int, arg, 0)
#define tp_string(arg) (__dp_string, char, arg, 0)
#define tp_array(type, arg, count) (__dp_array, type, arg, count)

/* ---- the descriptors of the fields ------------------------------------------ */

#define __DP_SIGNED(type) ((type)-1 < (type)1)
#define __DP_DESC(c, i, kind, type, arg, count) \
	__DP_DESC_##kind(type, arg, count)
#define __DP_DESC___dp_int(t_, a_, n_)					\
	{ .name = #a_, .kind = DP_TPF_INT, .size = sizeof(t_),		\
	  .is_signed = __DP_SIGNED(t_) },
#define __DP_DESC___dp_pid(t_, a_, n_)					\
	{ .name = #a_, .kind = DP_TPF_INT, .size = sizeof(t_),		\
	  .is_signed = 1, .type = DP_TPT_PID_T },
#define __DP_DESC___dp_string(t_, a_, n_)				\
	{ .name = #a_, .kind = DP_TPF_STRING, .size = 1 },
#define __DP_DESC___dp_array(t_, a_, n_)				\
	{ .name = #a_, .kind = DP_TPF_ARRAY, .size = sizeof(t_),	\
	  .is_signed = __DP_SIGNED(t_), .count = (n_) },

/* ---- compile-time checks of the fields ----------------------------------- */

/* __builtin_classify_type(): 1 integer, 2 char, 3 enum, 4 bool, 5 pointer */
#define __DP_IS_INT(x) \
	(__builtin_classify_type(x) >= 1 && __builtin_classify_type(x) <= 4)
#define __DP_IS_PTR(x) (__builtin_classify_type(x) == 5)
#define __DP_INT_SIZE(n) ((n) == 1 || (n) == 2 || (n) == 4 || (n) == 8)
#define __DP_IS_CHAR(t)							\
	(__builtin_types_compatible_p(t, char) ||			\
	 __builtin_types_compatible_p(t, signed char) ||		\
	 __builtin_types_compatible_p(t, unsigned char))

/* Statements in a function whose parameters are the prototype's. */
#define __DP_CHECK(c, i, kind, type, arg, count)			\
	_Static_assert(!__builtin_strcmp(#arg,				\
					 __DP_STR(__DP_ARG_I(i, c))),	\
		       "field " #i " (" #arg ") is not argument " #i	\
		       " of TP_ARGS");					\
	_Static_assert(sizeof(#arg) <= DP_TP_FIELD_NAME_LEN,		\
		       "argument name " #arg " is too long");		\
	(void)sizeof(arg);						\
	__DP_CHECK_##kind(type, arg, count)
#define __DP_CHECK___dp_int(type, arg, count)				\
	_Static_assert(__DP_IS_INT((type)0) &&				\
		       __DP_INT_SIZE(sizeof(type)),			\
		       "tp_field(" #type ", " #arg "): not an integer type "	\
		       "of 1, 2, 4 or 8 bytes");			\
	_Static_assert(__DP_IS_INT(arg) || __DP_IS_PTR(arg),		\
		       "argument " #arg " is not an integer or a pointer"); \
	_Static_assert(sizeof(type) == sizeof(arg),			\
		       "tp_field(" #type ", " #arg "): the argument has "	\
		       "another size");
#define __DP_CHECK___dp_pid(type, arg, count)				\
	_Static_assert(__DP_IS_INT(arg) && sizeof(arg) == 4 &&		\
		       __DP_SIGNED(__typeof__(arg)),			\
		       "tp_pid(" #arg "): not a 4-byte signed integer "	\
		       "(pid_t)");
#define __DP_CHECK___dp_string(type, arg, count)			\
	_Static_assert(__DP_IS_PTR(arg) &&				\
		       __DP_IS_CHAR(__typeof__(*(arg))),		\
		       "tp_string(" #arg "): not a pointer to char");
#define __DP_CHECK___dp_array(type, arg, count)				\
	_Static_assert(__DP_IS_INT((type)0) &&				\
		       __DP_INT_SIZE(sizeof(type)),			\
		       "tp_array(" #type ", " #arg "): not an integer type " \
		       "of 1, 2, 4 or 8 bytes");			\
	_Static_assert(__DP_IS_PTR(arg) &&				\
		       __builtin_types_compatible_p(__typeof__(*(arg)), type), \
		       "tp_array(" #type ", " #arg "): not a pointer to " #type); \
	_Static_assert((count) > 0 && (count) <= DP_TP_MAX_ARRAY,	\
		       "tp_array(" #type ", " #arg "): count out of range");

/* ---- the static branch ------------------------------------------------------- */

#if defined(__x86_64__) && !defined(DP_TP_NO_JUMP_LABEL) &&		\
	((defined(__clang__) && __clang_major__ >= 9) ||		\
	 (!defined(__clang__) && defined(__GNUC__) && __GNUC__ >= 5))
#define DP_TP_JUMP_LABEL 1
/*
 * GCC takes the jump's side as likely unless told: the label's cold
 * attribute keeps the registers the call needs out of the prologue.
 */
#ifdef __clang__
#define __DP_COLD_LABEL
#else
#define __DP_COLD_LABEL __attribute__((cold))
#endif
/*
 * A 5-byte nop and its jump-table entry.  The tracepoint is named in the
 * asm text, not passed as an "i" operand, which -fPIC refuses: its
 * offset from the entry is resolved by the linker (it is hidden).
 */
#define __DP_TP_BRANCH(name)						\
static inline __attribute__((always_inline, unused)) bool		\
__dp_tp_on_##name(void)							\
{									\
	__asm__ goto("1: .byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n\t"	\
		     ".pushsection __dp_jump_table, \"a\"\n\t"		\
		     ".balign 8\n\t"					\
		     ".long 1b - ., %l[on] - .\n\t"			\
		     ".quad " __DP_STR(__dp_tracepoint_##name) " - .\n\t" \
		     ".popsection"					\
		     : : : : on);					\
	return false;							\
on: __DP_COLD_LABEL;							\
	return true;							\
}
#else
#define __DP_TP_BRANCH(name)						\
static inline __attribute__((always_inline, unused)) bool		\
__dp_tp_on_##name(void)							\
{									\
	return __atomic_load_n(&__dp_tracepoint_##name.key,		\
			       __ATOMIC_RELAXED) != 0;			\
}
#endif

/*
 * A placeholder entry, so that every object that defines tracepoints has
 * the section and its __start/__stop symbols, even with no jump in it.
 */
#define __DP_TP_TABLE_PLACEHOLDER					\
	__asm__(".pushsection __dp_jump_table, \"a\"\n\t"		\
		".balign 8\n\t"						\
		".long 0, 0\n\t"					\
		".quad 0\n\t"						\
		".popsection");

/* The object's jump table (linker-made symbols, hidden: per object). */
extern const struct dp_jump_entry __start___dp_jump_table[]
	__attribute__((visibility("hidden")));
extern const struct dp_jump_entry __stop___dp_jump_table[]
	__attribute__((visibility("hidden")));

/* ---- declaring and defining -------------------------------------------------- */

#define __DP_DECLARE(group, name, pstr, proto, args)			\
extern struct dp_tracepoint __dp_tracepoint_##name			\
	__attribute__((visibility("hidden")));				\
__attribute__((visibility("hidden"), cold))				\
void __dp_tp_call_##name(proto);					\
__DP_TP_BRANCH(name)							\
static inline __attribute__((always_inline, unused)) void		\
trace_##name(proto)							\
{									\
	if (__builtin_expect(__dp_tp_on_##name(), 0))			\
		__dp_tp_call_##name(args);				\
}									\
static inline __attribute__((always_inline, unused)) bool		\
trace_##name##_enabled(void)						\
{									\
	return __dp_tp_on_##name();					\
}									\
static inline __attribute__((unused)) int				\
register_trace_##name(void (*probe)(void *__data, proto), void *__data)	\
{									\
	return dp_tracepoint_probe_register(&__dp_tracepoint_##name,	\
					    (void *)probe, __data,	\
					    pstr);			\
}									\
static inline __attribute__((unused)) int				\
unregister_trace_##name(void (*probe)(void *__data, proto), void *__data) \
{									\
	return dp_tracepoint_probe_unregister(&__dp_tracepoint_##name,	\
					      (void *)probe, __data);	\
}

/*
 * The descriptor, the compile-time checks, the out-of-line call of the
 * probes, and a constructor/destructor pair that hands the object's jump
 * table to libdprobe (idempotent: one pair per tracepoint).
 */
#define __DP_DEFINE(group_, name_, pstr_, proto_, args_, fields_)	\
_Static_assert(sizeof(#group_) <= DP_TP_GROUP_LEN,			\
	       "tracepoint group " #group_ ": too long");		\
_Static_assert(sizeof(#name_) <= DP_TP_NAME_LEN,			\
	       "tracepoint name " #name_ ": too long");			\
_Static_assert(sizeof(pstr_) <= DP_TP_PROTO_LEN,			\
	       "tracepoint " #name_ ": prototype too long");		\
_Static_assert(__DP_NARG(args_) <= DP_TP_MAX_ARGS,			\
	       "tracepoint " #name_ ": too many arguments");		\
_Static_assert(__DP_NARG(args_) == __DP_NFIELDS(fields_),		\
	       "tracepoint " #name_ ": TP_FIELDS must describe every "	\
	       "argument of TP_ARGS");					\
__attribute__((section("__dp_tracepoints"), used, aligned(64),		\
	       visibility("hidden")))					\
struct dp_tracepoint __dp_tracepoint_##name_ = {			\
	.magic = DP_TRACEPOINT_MAGIC,					\
	.version = DP_TRACEPOINT_VERSION,				\
	.nargs = __DP_NARG(args_),					\
	.group = #group_,						\
	.name = #name_,							\
	.proto = pstr_,							\
	.fields = { __DP_EACH(__DP_DESC, ~, fields_) },			\
};									\
static inline __attribute__((unused)) void				\
__dp_tp_check_##name_(proto_)						\
{									\
	__DP_EACH(__DP_CHECK, (args_, __DP_PAD), fields_)		\
}									\
__attribute__((noinline, visibility("hidden"))) void			\
__dp_tp_call_##name_(proto_)						\
{									\
	struct __dp_tp_read __dp_r =					\
		__dp_tp_begin(&__dp_tracepoint_##name_);		\
	const struct dp_tracepoint_func *__dp_f = __dp_r.funcs;		\
									\
	if (!__dp_f)							\
		return;							\
	do {								\
		((void (*)(void *, proto_))__dp_f->func)(__dp_f->data,	\
							 args_);	\
	} while ((++__dp_f)->func);					\
	__dp_tp_end(__dp_r.token);					\
}									\
__DP_TP_TABLE_PLACEHOLDER						\
__attribute__((constructor)) static void __dp_tp_ctor_##name_(void)	\
{									\
	__dp_jump_table_register(__start___dp_jump_table,		\
				 __stop___dp_jump_table);		\
}									\
__attribute__((destructor)) static void __dp_tp_dtor_##name_(void)	\
{									\
	__dp_jump_table_unregister(__start___dp_jump_table);		\
}

/*
 * The prototype's text as written: pasted to TP_PROTO, the argument is
 * not macro-expanded first (bool stays bool), then stringified.
 */
#define __DP_PSTR_TP_PROTO(...) #__VA_ARGS__

#define DP_DECLARE_TRACE(group_, name_, proto_, args_)			\
	__DP_DECLARE(group_, name_, __DP_PSTR_##proto_,			\
		     __DP_PARAMS(proto_), __DP_PARAMS(args_))
#define DP_DEFINE_TRACE(group_, name_, proto_, args_, fields_)		\
	__DP_DEFINE(group_, name_, __DP_PSTR_##proto_,			\
		    __DP_PARAMS(proto_), __DP_PARAMS(args_), fields_)

#ifdef __cplusplus
}
#endif

#endif /* DPROBE_TRACEPOINT_H */

/*
 * Outside the include guard: whether DP_TRACE_EVENT also defines follows
 * DP_CREATE_TRACE_POINTS at each inclusion, so the .c file that creates
 * the tracepoints gets them even if this header came in earlier.
 */
#undef DP_TRACE_EVENT
#ifdef DP_CREATE_TRACE_POINTS
#define DP_TRACE_EVENT(group_, name_, proto_, args_, fields_)		\
	__DP_DECLARE(group_, name_, __DP_PSTR_##proto_,			\
		     __DP_PARAMS(proto_), __DP_PARAMS(args_))		\
	__DP_DEFINE(group_, name_, __DP_PSTR_##proto_,			\
		    __DP_PARAMS(proto_), __DP_PARAMS(args_), fields_)
#else
#define DP_TRACE_EVENT(group_, name_, proto_, args_, fields_)		\
	__DP_DECLARE(group_, name_, __DP_PSTR_##proto_,			\
		     __DP_PARAMS(proto_), __DP_PARAMS(args_))
#endif
