// SPDX-License-Identifier: GPL-2.0
/*
 * e2e target: arguments, members and locals by name (the debug
 * information).  main() hands three messages to handle(), each linked
 * to the next, and calls helper() (a static function) for each; both
 * print what they were given in the form dprobe's events print it
 * (NAME=VALUE, strings quoted), so the events of a probe by name can be
 * checked against the program's own words:
 *
 *   handle: n=N who="W" id=I len=L kind=K flag=F prio=P name="S"
 *           text="T" nextid=X v2=V ui=U ub1=B        (one line)
 *   handle returns R                                 (R = id + n)
 *   helper: k=K local=L                              (L = k * 3 + len)
 *
 * A message's hdr holds bitfields, name is a char array, text a char
 * pointer, vals an int array, u a union; the last message's next is
 * NULL, printed as nextid=-1 (its probe reads nothing there: the
 * record's value is 0, and the case says so).
 */
#include <stdio.h>

struct hdr {
	unsigned short len;
	unsigned char kind;
	unsigned flag : 3, prio : 5;
};

union val {
	int i;
	unsigned char b[4];
};

struct msg {
	int id;
	struct hdr hdr;
	char name[16];
	const char *text;
	struct msg *next;
	int vals[4];
	union val u;
	long (*cb)(long);
};

static long twice(long x)
{
	return 2 * x;
}

__attribute__((noipa)) int handle(struct msg *r, int n, const char *who)
{
	printf("handle: n=%d who=\"%s\" id=%d len=%u kind=%u flag=%u prio=%u "
	       "name=\"%s\" text=\"%s\" nextid=%d v2=%d ui=%d ub1=%u\n", n, who,
	       r->id, r->hdr.len, r->hdr.kind, r->hdr.flag, r->hdr.prio,
	       r->name, r->text, r->next ? r->next->id : -1, r->vals[2],
	       r->u.i, r->u.b[1]);
	return r->id + n;
}

static __attribute__((noipa)) int helper(int k, struct hdr *h)
{
	volatile int local = k * 3 + h->len;
	printf("helper: k=%d local=%d\n", k, local);
	return local;
}

int main(void)
{
	static struct msg m[3] = {
		{ 42, { 300, 9, 5, 17 }, "alpha", "hello world", &m[1],
		  { 1, 2, 3, 4 }, { .i = 258 }, twice },
		{ 7, { 12, 1, 0, 31 }, "beta", "second", &m[2],
		  { 5, 6, 7, 8 }, { .i = 65535 }, twice },
		{ -3, { 65535, 255, 7, 0 }, "gamma", "", NULL,
		  { -1, -2, -3, -4 }, { .i = -1 }, twice },
	};
	static const char *const who[3] = { "main", "loop", "loop" };
	volatile int count = 3;	/* one call site: the loop is not unrolled */
	int sum = 0;

	for (int i = 0; i < count; i++) {
		int r = handle(&m[i], i + 1, who[i]);

		printf("handle returns %d\n", r);
		sum += helper(i, &m[i].hdr) + (int)m[i].cb(1);
	}
	return sum == 0;
}
