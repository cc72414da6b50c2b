// SPDX-License-Identifier: GPL-2.0
/* util/ptab.h (hash-indexed pointers) and the registry's index built on it. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event/event.h"
#include "util/ptab.h"

Test(ptab, finds_every_entry_after_growing)
{
	struct dp_ptab t = { 0 };
	static int v[5000];

	for (int i = 0; i < 5000; i++)
		cr_assert_eq(dp_ptab_add(&t, dp_hash_u64((uint64_t)i), &v[i]), 0);
	cr_assert_eq(t.n, 5000);
	cr_assert_leq(2 * t.n, t.cap);
	for (int i = 0; i < 5000; i++) {
		size_t pos = DP_PTAB_START;
		void **e = dp_ptab_next(&t, dp_hash_u64((uint64_t)i), &pos);

		cr_assert(e && *e == &v[i]);
	}
	dp_ptab_free(&t);
	cr_assert_eq(t.cap, 0);
}

Test(ptab, entries_sharing_a_hash_are_all_found)
{
	struct dp_ptab t = { 0 };
	int a, b, c, seen = 0;
	size_t pos = DP_PTAB_START;
	void **e;

	dp_ptab_add(&t, 7, &a);
	dp_ptab_add(&t, 7, &b);
	dp_ptab_add(&t, 8, &c);
	while ((e = dp_ptab_next(&t, 7, &pos)))
		seen |= *e == &a ? 1 : *e == &b ? 2 : 4;
	cr_assert_eq(seen, 3);
	pos = DP_PTAB_START;
	cr_assert_null(dp_ptab_next(&t, 9, &pos));
	dp_ptab_free(&t);
}

/* Many events, one event of many probes, deletes (the index rebuilt),
 * and a list relinked from outside: the registry's rules hold. */
Test(ptab, registry_index_keeps_the_rules)
{
	struct dp_registry reg;
	char line[64];

	dp_registry_init(&reg);
	for (int i = 0; i < 3000; i++) {
		snprintf(line, sizeof(line), "p:g/e%d fn%d", i, i);
		cr_assert_eq(dp_registry_apply(&reg, line, NULL, NULL), 0);
		snprintf(line, sizeof(line), "p:g/all fn%d", i);
		cr_assert_eq(dp_registry_apply(&reg, line, NULL, NULL), 0);
	}
	cr_assert_eq(dp_registry_apply(&reg, "p:g/all fn17", NULL, NULL), -EEXIST);
	cr_assert_eq(dp_registry_find(&reg, "g", "e2999")->id, 1000 + 2999 + 1);	/* "all" took 1001 */
	cr_assert_eq(dp_registry_apply(&reg, "-:g/e5", NULL, NULL), 0);
	cr_assert_null(dp_registry_find(&reg, "g", "e5"));
	/* the lowest free id again, as the kernel hands them out */
	cr_assert_eq(dp_registry_apply(&reg, "p:g/new fn1", NULL, NULL), 0);
	cr_assert_eq(dp_registry_find(&reg, "g", "new")->id, 1000 + 5 + 1);
	/* cut the list as the mount does: lookups follow */
	struct dp_event *rest = reg.events->next;

	reg.events->next = NULL;
	dp_registry_relinked(&reg);
	cr_assert_null(dp_registry_find(&reg, "g", "e7"));
	reg.events->next = rest;
	dp_registry_relinked(&reg);
	cr_assert_not_null(dp_registry_find(&reg, "g", "e7"));
	dp_registry_free(&reg);
}
