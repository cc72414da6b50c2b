// SPDX-License-Identifier: GPL-2.0
/*
 * Probes on the instructions that are emulated (call, ret, jmp, jcc,
 * loop, jrcxz, indirect call and jmp) and on instructions run out of line
 * that depend on where they run (%rip-relative loads, stores and lea,
 * syscall, push).  Each function must still compute what it computes
 * unprobed, the pre handler must run once per execution and the post
 * handler must see the ip the instruction went to.
 */
#include <errno.h>
#include <stdint.h>
#include <unistd.h>

#include <dprobe/kprobes.h>

#include "agent_test.h"

#define FN(name) "\t.globl " #name "\n\t.type " #name ", @function\n" #name ":\n"
#define END_FN(name) "\t.size " #name ", . - " #name "\n"
#define LABEL(name) "\t.globl " #name "\n" #name ":\n"

__asm__(
	"\t.text\n"
	/* x + 1 + 10, through a direct call */
	FN(insn_call)
	"\tpush %rbx\n"
	LABEL(insn_call_site)
	"\tcall insn_callee\n"
	LABEL(insn_call_ret)
	"\tadd $10, %rax\n"
	"\tpop %rbx\n"
	"\tret\n"
	END_FN(insn_call)
	FN(insn_callee)
	"\tlea 1(%rdi), %rax\n"
	LABEL(insn_ret_site)
	"\tret\n"
	END_FN(insn_callee)
	/* x + 5 over a short jmp, x + 6 over a near one */
	FN(insn_jmp)
	"\tmov %rdi, %rax\n"
	LABEL(insn_jmp_site)
	"\tjmp 1f\n"
	"\txor %eax, %eax\n"
	LABEL(insn_jmp_target)
	"1:\tadd $5, %rax\n"
	"\tret\n"
	END_FN(insn_jmp)
	FN(insn_jmp32)
	"\tmov %rdi, %rax\n"
	LABEL(insn_jmp32_site)
	"\t.byte 0xe9\n\t.long insn_jmp32_target - . - 4\n"
	"\txor %eax, %eax\n"
	LABEL(insn_jmp32_target)
	"\tadd $6, %rax\n"
	"\tret\n"
	END_FN(insn_jmp32)
	/* x < 10 ? 2x : x + 1, short and near jcc */
	FN(insn_jcc)
	"\tmov %rdi, %rax\n"
	"\tcmp $10, %rdi\n"
	LABEL(insn_jcc_site)
	"\tjl 1f\n"
	"\tadd $1, %rax\n"
	"\tret\n"
	LABEL(insn_jcc_target)
	"1:\tadd %rax, %rax\n"
	"\tret\n"
	END_FN(insn_jcc)
	FN(insn_jcc32)
	"\tmov %rdi, %rax\n"
	"\tcmp $10, %rdi\n"
	LABEL(insn_jcc32_site)
	"\t.byte 0x0f, 0x8c\n\t.long insn_jcc32_target - . - 4\n"
	"\tadd $1, %rax\n"
	"\tret\n"
	LABEL(insn_jcc32_target)
	"\tadd %rax, %rax\n"
	"\tret\n"
	END_FN(insn_jcc32)
	/* x * 3 by a loop */
	FN(insn_loop)
	"\tmov %rdi, %rcx\n"
	"\txor %eax, %eax\n"
	LABEL(insn_loop_body)
	"\tadd $3, %rax\n"
	LABEL(insn_loop_site)
	"\tloop insn_loop_body\n"
	"\tret\n"
	END_FN(insn_loop)
	/* x == 0 ? 0 : 1 */
	FN(insn_jrcxz)
	"\tmov %rdi, %rcx\n"
	"\txor %eax, %eax\n"
	LABEL(insn_jrcxz_site)
	"\tjrcxz 1f\n"
	"\tmov $1, %eax\n"
	LABEL(insn_jrcxz_target)
	"1:\tret\n"
	END_FN(insn_jrcxz)
	/* x + 1 + 20 through call *%rax */
	FN(insn_icall)
	"\tpush %rbx\n"
	"\tlea insn_callee(%rip), %rax\n"
	LABEL(insn_icall_site)
	"\tcall *%rax\n"
	"\tadd $20, %rax\n"
	"\tpop %rbx\n"
	"\tret\n"
	END_FN(insn_icall)
	/* x + 7 through jmp *mem(%rip) */
	FN(insn_ijmp)
	LABEL(insn_ijmp_site)
	"\tjmp *insn_ptr(%rip)\n"
	END_FN(insn_ijmp)
	FN(insn_ijmp_target)
	"\tlea 7(%rdi), %rax\n"
	"\tret\n"
	END_FN(insn_ijmp_target)
	/* x + 1000 from a %rip-relative load */
	FN(insn_riprel)
	LABEL(insn_riprel_site)
	"\tmov insn_data(%rip), %rax\n"
	"\tadd %rdi, %rax\n"
	"\tret\n"
	END_FN(insn_riprel)
	/* the same through lea */
	FN(insn_lea)
	LABEL(insn_lea_site)
	"\tlea insn_data(%rip), %rax\n"
	"\tmov (%rax), %rax\n"
	"\tadd %rdi, %rax\n"
	"\tret\n"
	END_FN(insn_lea)
	/* x stored %rip-relative and read back */
	FN(insn_store)
	LABEL(insn_store_site)
	"\tmov %rdi, insn_data2(%rip)\n"
	"\tmov insn_data2(%rip), %rax\n"
	"\tret\n"
	END_FN(insn_store)
	/* getpid() by a syscall run out of line */
	FN(insn_syscall)
	"\tmov $39, %eax\n"
	LABEL(insn_syscall_site)
	"\tsyscall\n"
	"\tret\n"
	END_FN(insn_syscall)
	/* x through push/pop */
	FN(insn_push)
	LABEL(insn_push_site)
	"\tpush %rdi\n"
	"\tpop %rax\n"
	"\tret\n"
	END_FN(insn_push)
	"\t.data\n"
	"insn_data: .quad 1000\n"
	"insn_data2: .quad 0\n"
	"insn_ptr: .quad insn_ijmp_target\n"
	"\t.text\n");

typedef long (*fn_t)(long);

#define DECL(x) extern long x(long); extern const char x##_site[];
DECL(insn_call) DECL(insn_jmp) DECL(insn_jmp32) DECL(insn_jcc)
DECL(insn_jcc32) DECL(insn_loop) DECL(insn_jrcxz) DECL(insn_icall)
DECL(insn_ijmp) DECL(insn_riprel) DECL(insn_lea) DECL(insn_store)
DECL(insn_syscall) DECL(insn_push)
extern long insn_callee(long);
extern const char insn_ret_site[], insn_call_ret[], insn_jmp_target[],
	insn_jmp32_target[], insn_jcc_target[], insn_jcc32_target[],
	insn_loop_body[], insn_jrcxz_target[], insn_ijmp_target[];

struct icase {
	const char *name;
	fn_t fn;
	const char *site;
	long arg, want;
	const char *post_ip;	/* where the instruction goes */
	int post_off;		/* or site + post_off when post_ip is NULL */
	int hits;
};

static int pre_hits, post_hits;
static unsigned long last_post_ip, pre_ip;

static int on_pre(struct kprobe *p, struct pt_regs *regs)
{
	(void)p;
	pre_hits++;
	pre_ip = regs->ip;
	return 0;
}

static void on_post(struct kprobe *p, struct pt_regs *regs, unsigned long f)
{
	(void)p;
	(void)f;
	post_hits++;
	last_post_ip = regs->ip;
}

static void run_case(const struct icase *c)
{
	struct kprobe kp = { .addr = (kprobe_opcode_t *)c->site,
			     .pre_handler = on_pre, .post_handler = on_post };
	unsigned long want_ip = c->post_ip ? (unsigned long)c->post_ip :
			       (unsigned long)c->site + c->post_off;
	int err;

	BEGIN(c->name);
	err = register_kprobe(&kp);
	CHECK_EQ(err, 0);
	pre_hits = post_hits = 0;
	last_post_ip = 0;
	CHECK_EQ(c->fn(c->arg), c->want);
	CHECK_EQ(pre_hits, c->hits);
	CHECK_EQ(post_hits, c->hits);
	CHECK_EQ(pre_ip, (unsigned long)c->site + 1);
	CHECK(last_post_ip == want_ip, "post ip %#lx, want %#lx (site %p)",
	      last_post_ip, want_ip, (void *)c->site);
	unregister_kprobe(&kp);
	CHECK_EQ(c->fn(c->arg), c->want);
	END();
}

int main(void)
{
	const struct icase cases[] = {
		{ "emulated call rel32", insn_call, insn_call_site, 1, 12,
		  (const char *)insn_callee, 0, 1 },
		{ "emulated ret", insn_call, insn_ret_site, 2, 13,
		  insn_call_ret, 0, 1 },
		{ "emulated jmp rel8", insn_jmp, insn_jmp_site, 3, 8,
		  insn_jmp_target, 0, 1 },
		{ "emulated jmp rel32", insn_jmp32, insn_jmp32_site, 3, 9,
		  insn_jmp32_target, 0, 1 },
		{ "emulated jcc rel8, taken", insn_jcc, insn_jcc_site, 4, 8,
		  insn_jcc_target, 0, 1 },
		{ "emulated jcc rel8, not taken", insn_jcc, insn_jcc_site, 40,
		  41, NULL, 2, 1 },
		{ "emulated jcc rel32, taken", insn_jcc32, insn_jcc32_site, 5,
		  10, insn_jcc32_target, 0, 1 },
		{ "emulated jcc rel32, not taken", insn_jcc32, insn_jcc32_site,
		  50, 51, NULL, 6, 1 },
		{ "emulated loop (hit per iteration)", insn_loop,
		  insn_loop_site, 4, 12, NULL, 2, 4 },
		{ "emulated jrcxz, taken", insn_jrcxz, insn_jrcxz_site, 0, 0,
		  insn_jrcxz_target, 0, 1 },
		{ "emulated jrcxz, not taken", insn_jrcxz, insn_jrcxz_site, 9,
		  1, NULL, 2, 1 },
		{ "emulated call *%rax", insn_icall, insn_icall_site, 1, 22,
		  (const char *)insn_callee, 0, 1 },
		{ "emulated jmp *mem(%rip)", insn_ijmp, insn_ijmp_site, 1, 8,
		  insn_ijmp_target, 0, 1 },
		{ "out of line: %rip-relative load", insn_riprel,
		  insn_riprel_site, 5, 1005, NULL, 7, 1 },
		{ "out of line: %rip-relative lea", insn_lea, insn_lea_site, 6,
		  1006, NULL, 7, 1 },
		{ "out of line: %rip-relative store", insn_store,
		  insn_store_site, 77, 77, NULL, 7, 1 },
		{ "out of line: syscall", insn_syscall, insn_syscall_site, 0,
		  getpid(), NULL, 2, 1 },
		{ "out of line: push", insn_push, insn_push_site, 31, 31, NULL,
		  1, 1 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i]);
	return t_exit();
}
