// SPDX-License-Identifier: GPL-2.0
/*
 * src/engine/agent/vdso.c on this kernel's vDSO, built into this program
 * by tests/agent/hit_syscalls.sh:
 *
 *   found NAME yes|no        dp_vdso_sym(NAME) found a usable function
 *   named NAME yes|no        the image holds the name at all
 *
 * The agent calls __vdso_clock_gettime and __vdso_getcpu; getrandom
 * (6.11 and later) uses SSE registers and must be refused.  Then what
 * other kernels and CPUs put there, on every machine: the scanner on a
 * few bytes of code, and on a copy of this vDSO patched as a kernel with
 * rdpid (getcpu's lsl + nop becomes rdpid) or with IBT (endbr64 at
 * clock_gettime's entry) would have it, and with SSE there instead:
 *
 *   accept WHAT yes|no|skip WANT [why]
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <Zydis/Zydis.h>

#include "engine/agent/vdso.h"

static const unsigned char ENDBR64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
static const unsigned char RDPID[] = { 0xf3, 0x0f, 0xc7, 0xf8 };	/* rax */
static const unsigned char MOVAPS[] = { 0x0f, 0x28, 0xc1 };	/* xmm0, xmm1 */

static ZydisDecoder dec;

/* The [vdso] mapping: its start and size. */
static void *vdso_map(size_t *size)
{
	char line[256];
	unsigned long lo, hi;
	void *at = NULL;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]") &&
		    sscanf(line, "%lx-%lx", &lo, &hi) == 2) {
			at = (void *)lo;
			*size = hi - lo;
		}
	if (f)
		fclose(f);
	return at;
}

/* A fresh copy of the vDSO, and @name's code in it; NULL if refused. */
static unsigned char *copy_of(const char *name, unsigned char **copy)
{
	size_t size = 0;
	void *v = vdso_map(&size);

	free(*copy);
	*copy = v ? malloc(size) : NULL;
	if (!*copy)
		return NULL;
	memcpy(*copy, v, size);
	return dp_vdso_sym_in(*copy, name);
}

static void accept(const char *what, const char *got, const char *want,
		   const char *why)
{
	printf("accept %s %s %s%s%s\n", what, got, want, why ? " " : "",
	       why ? why : "");
}

static void code(const char *what, const unsigned char *c, size_t n,
		 const char *want)
{
	accept(what, dp_vdso_code_ok(c, n) ? "yes" : "no", want, NULL);
}

/* getcpu's lsl, and the 1-byte nop the alternative pads it with,
 * replaced by rdpid, as the kernel does on a CPU with rdpid. */
static void patch_getcpu(void)
{
	unsigned char *copy = NULL, *p = copy_of("__vdso_getcpu", &copy);
	ZydisDecodedInstruction in;
	ZydisDecodedOperand op[ZYDIS_MAX_OPERAND_COUNT];
	const char *why = "found no lsl in __vdso_getcpu";

	for (int i = 0; p && i < 64; i++) {
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, p, 15, &in, op)) ||
		    in.meta.category == ZYDIS_CATEGORY_RET)
			break;
		if (in.mnemonic == ZYDIS_MNEMONIC_RDPID) {
			why = "this vDSO's getcpu has rdpid already";
			break;
		}
		if (in.mnemonic == ZYDIS_MNEMONIC_LSL) {
			if (in.length == 4 || (in.length == 3 && p[3] == 0x90)) {
				memcpy(p, RDPID, sizeof(RDPID));
				accept("vdso:getcpu+rdpid",
				       dp_vdso_sym_in(copy, "__vdso_getcpu") ?
				       "yes" : "no", "yes", NULL);
				free(copy);
				return;
			}
			why = "getcpu's lsl is not 4 bytes with its padding";
			break;
		}
		p += in.length;
	}
	if (!copy || !p)
		why = "__vdso_getcpu missing or refused";
	accept("vdso:getcpu+rdpid", "skip", "yes", why);
	free(copy);
}

/* The first whole instructions of clock_gettime, 4 bytes or more and no
 * branch among them, replaced by @insn and nops. */
static void patch_entry(const char *what, const unsigned char *insn,
			size_t n, const char *want)
{
	unsigned char *copy = NULL, *p = copy_of("__vdso_clock_gettime", &copy);
	ZydisDecodedInstruction in;
	size_t len = 0;
	const char *why = NULL;

	while (p && !why && len < n) {
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&dec, NULL,
				p + len, 15, &in)))
			why = "clock_gettime's entry does not decode";
		else if (in.mnemonic == ZYDIS_MNEMONIC_ENDBR64 && insn == ENDBR64)
			why = "this vDSO has endbr64 already";
		else if (in.meta.branch_type != ZYDIS_BRANCH_TYPE_NONE ||
			 in.meta.category == ZYDIS_CATEGORY_RET)
			why = "a branch in clock_gettime's first bytes";
		else
			len += in.length;
	}
	if (!p)
		why = "__vdso_clock_gettime missing or refused";
	if (why) {
		accept(what, "skip", want, why);
	} else {
		memset(p, 0x90, len);
		memcpy(p, insn, n);
		accept(what, dp_vdso_sym_in(copy, "__vdso_clock_gettime") ?
		       "yes" : "no", want, NULL);
	}
	free(copy);
}

/* The [vdso] mapping holds @name's bytes (the dynamic string table). */
static int named(const char *name)
{
	char line[256];
	unsigned long lo, hi;
	FILE *f = fopen("/proc/self/maps", "r");
	int hit = 0;

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]") &&
		    sscanf(line, "%lx-%lx", &lo, &hi) == 2)
			hit = memmem((void *)lo, hi - lo, name, strlen(name) + 1) != NULL;
	if (f)
		fclose(f);
	return hit;
}

int main(void)
{
	static const char *names[] = {
		"__vdso_clock_gettime", "__vdso_getcpu", "__vdso_getrandom",
	};

	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		printf("found %s %s\nnamed %s %s\n", names[i],
		       dp_vdso_sym(names[i]) ? "yes" : "no", names[i],
		       named(names[i]) ? "yes" : "no");

	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	{
		static const unsigned char ok[] = {	/* endbr64; rdpid; ret */
			0xf3, 0x0f, 0x1e, 0xfa, 0xf3, 0x0f, 0xc7, 0xf8, 0xc3,
		}, ok32[] = { 0xf3, 0x0f, 0x1e, 0xfb, 0xc3 },
		sse[] = {				/* endbr64; movaps; ret */
			0xf3, 0x0f, 0x1e, 0xfa, 0x0f, 0x28, 0xc1, 0xc3,
		}, cet[] = { 0xf3, 0x48, 0x0f, 0x1e, 0xc8, 0xc3 }; /* rdsspq */

		code("code:endbr64+rdpid", ok, sizeof(ok), "yes");
		code("code:endbr32", ok32, sizeof(ok32), "yes");
		code("code:endbr64+movaps", sse, sizeof(sse), "no");
		code("code:rdsspq", cet, sizeof(cet), "no");
	}
	patch_getcpu();
	patch_entry("vdso:clock_gettime+endbr64", ENDBR64, sizeof(ENDBR64), "yes");
	patch_entry("vdso:clock_gettime+movaps", MOVAPS, sizeof(MOVAPS), "no");
	return 0;
}
