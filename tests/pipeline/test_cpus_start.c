/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gcap_cpus_at_start() (base/common.c): the CPUs the process was allowed
 * when it started, as they were then. The emulated NIC counts its default
 * feeding threads from them after the EAL has pinned the main thread to
 * one CPU, so the answer must not follow the calling thread's affinity
 * once it narrows. Needs two CPUs to narrow to one (77 otherwise).
 */
#include <check.h>
#include <errno.h>
#include <sched.h>
#include <stdlib.h>

#include "gpucap/gcap_common.h"

static cpu_set_t at_main;

START_TEST(test_same_as_at_main)
{
	unsigned cpus[CPU_SETSIZE];
	int n = gcap_cpus_at_start(cpus, CPU_SETSIZE);

	ck_assert_int_eq(n, CPU_COUNT(&at_main));
	for (int i = 0; i < n; i++) {
		ck_assert(CPU_ISSET(cpus[i], &at_main));
		if (i > 0)
			ck_assert_uint_lt(cpus[i - 1], cpus[i]);
	}
	ck_assert_int_eq(gcap_cpus_at_start(NULL, 0), n);
	if (n > 1)
		ck_assert_int_eq(gcap_cpus_at_start(cpus, (unsigned)n - 1), -E2BIG);
}
END_TEST

START_TEST(test_not_the_thread_now)
{
	unsigned cpus[CPU_SETSIZE];
	cpu_set_t one, now;
	int n;

	/* the thread pinned to the first CPU, as the EAL pins the main one */
	CPU_ZERO(&one);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &at_main)) {
			CPU_SET(c, &one);
			break;
		}
	ck_assert_int_eq(sched_setaffinity(0, sizeof(one), &one), 0);
	ck_assert_int_eq(sched_getaffinity(0, sizeof(now), &now), 0);
	ck_assert_int_eq(CPU_COUNT(&now), 1);
	n = gcap_cpus_at_start(cpus, CPU_SETSIZE);
	ck_assert_int_eq(n, CPU_COUNT(&at_main));
	ck_assert_int_gt(n, 1);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("cpus_at_start");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	if (sched_getaffinity(0, sizeof(at_main), &at_main) != 0)
		return 99;
	if (CPU_COUNT(&at_main) < 2)
		return 77; /* one CPU: nothing to narrow */
	tcase_add_test(tc, test_same_as_at_main);
	tcase_add_test(tc, test_not_the_thread_now);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
