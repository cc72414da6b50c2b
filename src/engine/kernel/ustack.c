// SPDX-License-Identifier: GPL-2.0
/*
 * User stacks on the kernel engine (dprobe trace --stack): the kernel's
 * options/userstacktrace, set in the run's own instance, makes it write
 * after each event's record a `user_stack` entry (ftrace's
 * FTRACE_ENTRY(user_stack): the common header, the tgid, then
 * `unsigned long caller[8]`, ended early by a 0) of the same thread on
 * the same CPU: the interrupted ip, then the frame-pointer chain.  Its
 * id and layout are read from events/ftrace/user_stack/format rather
 * than assumed; read.c pairs each entry with the record before it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/kernel/session.h"
#include "event/kformat.h"
#include "event/record.h"
#include "util/util.h"

#define USTACK_FORMAT	"events/ftrace/user_stack/format"

static bool wanted(const struct dp_kernel *k)
{
	for (size_t i = 0; i < k->nkevs; i++)
		if (k->kevs[i].ev && k->kevs[i].ev->stack)
			return true;
	return false;
}

/* The entry's id and its caller array, from its format text. */
static int parse_format(struct dp_kernel *k, const char *fmt)
{
	const char *id = strstr(fmt, "\nID: "), *pos = fmt;
	struct dp_kfield f;

	if (!id)
		return -EINVAL;
	k->ustack.id = (unsigned)strtoul(id + 5, NULL, 10);
	while (dp_kformat_next(&pos, &f) > 0) {
		if (strcmp(f.name, "caller") || !f.count ||
		    f.size != f.count * 8 || f.offset < DP_TP_HEAD_SIZE)
			continue;
		k->ustack.off = f.offset;
		k->ustack.n = f.count < DP_KUSTACK_MAX ? f.count :
			      DP_KUSTACK_MAX;
		return k->ustack.id ? 0 : -EINVAL;
	}
	return -EINVAL;
}

int dp_kustack_prepare(struct dp_kernel *k, char *why, size_t whylen)
{
	char *fmt;
	int ret;

	if (!wanted(k))
		return 0;
	ret = dp_tfs_read(&k->tfs, USTACK_FORMAT, &fmt, NULL);
	if (ret) {
		dp_say(why, whylen, "--stack: this kernel has no user stack "
		    "entries (%s/%s: %s)", k->tfs.root, USTACK_FORMAT,
		    dp_kstrerror(ret));
		return ret;
	}
	ret = parse_format(k, fmt);
	free(fmt);
	if (ret)
		dp_say(why, whylen, "--stack: %s/%s has no caller array of "
		    "64-bit addresses", k->tfs.root, USTACK_FORMAT);
	else
		k->ustack.on = true;
	return ret;
}

unsigned dp_kustack_frames(const struct dp_kernel *k, const uint8_t *rec,
			   size_t len, pid_t tid, uint64_t *out)
{
	unsigned n = 0;

	if (!k->ustack.on || len < k->ustack.off + 8 * (size_t)k->ustack.n ||
	    dp_rec_load(rec + DP_REC_TYPE_OFF, 2) != k->ustack.id ||
	    (pid_t)dp_rec_load(rec + DP_REC_PID_OFF, 4) != tid)
		return 0;
	for (; n < k->ustack.n; n++) {
		uint64_t ip = dp_rec_load(rec + k->ustack.off + 8 * n, 8);

		/* the kernel's own printer stops at the first 0 */
		if (!ip)
			break;
		out[n] = ip;
	}
	return n;
}
