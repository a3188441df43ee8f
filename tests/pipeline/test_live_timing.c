/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RX lcore's timing and placement in the live pipeline, on the
 * net_null port and delayed executor of live_harness.h: what tells a
 * capture's stalls apart. Checks that a batch's cycle splits into its
 * doorbells' "in" and "back" whatever the executor's clock, that the main
 * lcore stays off the RX lcore's CPU, and that the lcore held in a poll or
 * a submission, or sharing its CPU with a busy thread, shows as poll gaps,
 * as a long span of the phase it happened in and as involuntary switches.
 */
#include <check.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <rte_lcore.h>

#include "gpucap/gcap_exec.h"
#include "gpucap/gcap_pipeline.h"
#include "../../dataplane/pipeline_internal.h"
#include "live_harness.h"

static int64_t
real_minus_mono(void)
{
	struct timespec r, m;

	clock_gettime(CLOCK_REALTIME, &r);
	clock_gettime(CLOCK_MONOTONIC, &m);
	return (int64_t)(r.tv_sec - m.tv_sec) * 1000000000 + (r.tv_nsec - m.tv_nsec);
}

/* The doorbells' parts: an executor whose clock is 1 s ahead of the host's
 * and which sees batches 0, 50, 100, 150 us after their submission in
 * turn, answering 200 us after it. "in" must come out as those delays (the
 * floor takes the clocks' offset out), "back" as the rest of the cycle. */
START_TEST(test_in_back_split)
{
	struct run_result r;

	in_step_ns = 50000;
	in_real_off = real_minus_mono();
	run(200000, 1, 100000, 400, false, &r);
	in_step_ns = 0;
	ck_assert_uint_gt(mk.batches, 100);
	printf("in p1/p50/p99 %" PRIu64 "/%" PRIu64 "/%" PRIu64 " us, back p1 %" PRIu64
	       " us\n",
	       r.in_p1_ns / 1000u, r.in_p50_ns / 1000u, r.in_p99_ns / 1000u,
	       r.back_p1_ns / 1000u);
	ck_assert_msg(r.in_p1_ns <= 1000,
		      "in p1 %" PRIu64 " ns: the clocks' "
		      "offset was not taken out",
		      r.in_p1_ns);
	ck_assert_msg(r.in_p50_ns >= 49000 && r.in_p50_ns <= 102000,
		      "in p50 %" PRIu64 " ns, expected 50 or 100 us", r.in_p50_ns);
	ck_assert_msg(r.in_p99_ns >= 149000 && r.in_p99_ns <= 152000,
		      "in p99 %" PRIu64 " ns, expected 150 us", r.in_p99_ns);
	/* a cycle is at least 200 us, "in" at most 150 */
	ck_assert_msg(r.back_p1_ns >= 45000,
		      "back p1 %" PRIu64 " ns, expected "
		      "at least 50 us less the executor's time",
		      r.back_p1_ns);
}
END_TEST

/* The main lcore (control, stats, the writer thread it starts) runs on
 * the allowed CPUs that no RX lcore polls, so it never takes a polling
 * core; on all of them only where the RX lcores have every one. */
START_TEST(test_main_off_rx_cpus)
{
	rte_cpuset_t main_set = rte_lcore_cpuset(rte_get_main_lcore());
	rte_cpuset_t rx_set = rte_lcore_cpuset(rx_lcore), now;
	int rx_cpu = -1;

	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &rx_set))
			rx_cpu = i;
	ck_assert_int_eq(CPU_COUNT(&rx_set), 1);
	ck_assert_int_eq(sched_getaffinity(0, sizeof(now), &now), 0);
	printf("CPUs: %d allowed, RX lcore on %d, main on %d (thread %d)\n",
	       CPU_COUNT(&allowed), rx_cpu, CPU_COUNT(&main_set), CPU_COUNT(&now));
	if (CPU_COUNT(&allowed) > 1) {
		ck_assert(!CPU_ISSET(rx_cpu, &main_set));
		ck_assert(!CPU_ISSET(rx_cpu, &now));
		ck_assert_int_eq(CPU_COUNT(&main_set), CPU_COUNT(&allowed) - 1);
	} else {
		ck_assert(CPU_EQUAL(&main_set, &allowed));
	}
}
END_TEST

/* An RX lcore held 100 us in every 20th batch's poll shows in the queue's
 * poll gaps: every pause counted (but those of the final drain, which
 * polls outside the RX loop), in each bucket it reaches, as long as it
 * was. The dev machine's own pauses only add to the counts. The batches
 * held up (the one found as the pause began, at least: 1 in 20) take the
 * total p99 to 100 us and more; the latency of the packets no gap
 * reached leaves them out, so its p99 is below the total's. */
START_TEST(test_poll_gaps)
{
	static const unsigned us[GCAP_POLL_GAP_BUCKETS] = GCAP_POLL_GAP_US;
	struct run_result r;
	uint64_t injected;

	stall_ns = 100000;
	stall_every = 20;
	run_min_stalls = 60;
	run(20000, 4, 1000000, 400, false, &r);
	injected = mk.stalls;
	stall_ns = 0;
	stall_every = 0;
	run_min_stalls = 0;
	printf("poll gaps: %" PRIu64
	       " pauses of 100 us injected; counted >= 5/10/20/50 us: "
	       "%" PRIu64 "/%" PRIu64 "/%" PRIu64 "/%" PRIu64 ", longest %" PRIu64
	       " us, %" PRIu64 " us in all\n",
	       injected, r.st.poll_gaps[0], r.st.poll_gaps[1], r.st.poll_gaps[2],
	       r.st.poll_gaps[3], r.st.poll_gap_max_ns / 1000u, r.st.poll_gap_ns / 1000u);
	ck_assert_uint_gt(injected, 50);
	ck_assert_uint_eq(us[GCAP_POLL_GAP_BUCKETS - 1], 50);
	ck_assert_uint_ge(r.st.poll_gaps[GCAP_POLL_GAP_BUCKETS - 1] + RING / 20 + 1,
			  injected);
	for (unsigned k = 0; k + 1 < GCAP_POLL_GAP_BUCKETS; k++)
		ck_assert_uint_ge(r.st.poll_gaps[k], r.st.poll_gaps[k + 1]);
	ck_assert_uint_ge(r.st.poll_gap_max_ns, 100000u);
	ck_assert_uint_ge(r.st.poll_gap_ns, (injected - RING / 20 - 1) * 100000u);
	printf("latency p99 %" PRIu64 " us, of the packets no gap reached %" PRIu64
	       " us\n",
	       r.lat_p99_ns / 1000u, r.no_gap_p99_ns / 1000u);
	ck_assert_uint_ge(r.lat_p99_ns, 100000u);
	ck_assert_uint_gt(r.no_gap_p99_ns, 0);
	/* below the whole p99, not below a time: a loaded machine delays
	 * every packet, and those of the gaps still more */
	ck_assert_uint_lt(r.no_gap_p99_ns, r.lat_p99_ns);
}
END_TEST

/* --poll-phases: a poll's time is split between its phases, and a long
 * span is counted in the phase it happened in: pauses injected where
 * completions are consumed land in "done", pauses injected in the
 * executor's submission in "submit", whatever else the machine does (its
 * own stalls only add, to any phase: they are shown, not judged). Off:
 * nothing. A pause in submit is the cpu executor's own work, not a poll
 * gap: the rule, on a queue's state, and the gaps shown. */
START_TEST(test_poll_phases)
{
	static const char *const names[GCAP_POLL_PHASES] = GCAP_POLL_PHASE_NAMES;
	struct run_result r[2];
	uint64_t injected[2];

	run(20000, 4, 1000000, 200, false, &r[0]);
	for (unsigned k = 0; k < GCAP_POLL_PHASES; k++) {
		ck_assert_uint_eq(r[0].st.phase_ns[k], 0);
		ck_assert_uint_eq(r[0].st.phase_long[k], 0);
	}
	run_phases = true;
	stall_ns = 100000;
	stall_every = 10;
	run_min_stalls = 60;
	for (unsigned w = 0; w < 2; w++) {
		uint64_t all = 0;

		stall_in_submit = w == 1;
		run(20000, 4, 1000000, 400, false, &r[w]);
		injected[w] = mk.stalls;
		printf("%u pauses of 100 us injected in %s; phases (ms, spans >= %u us):",
		       (unsigned)injected[w], w ? "submit" : "done",
		       GCAP_POLL_PHASE_LONG_US);
		for (unsigned k = 0; k < GCAP_POLL_PHASES; k++) {
			all += r[w].st.phase_ns[k];
			printf(" %s %.1f (%" PRIu64 ")", names[k],
			       r[w].st.phase_ns[k] / 1e6, r[w].st.phase_long[k]);
		}
		printf("; run %.3f s\n", r[w].secs);
		ck_assert_uint_gt(injected[w], 50);
		/* the RX lcore polled for (nearly) the whole run */
		ck_assert_uint_le(all, (uint64_t)(r[w].secs * 1e9));
		ck_assert_uint_ge(all, (uint64_t)(r[w].secs * 1e9 * 0.5));
		/* each pause is a long span of its phase, and its time */
		ck_assert_uint_ge(
			r[w].st.phase_long[w ? GCAP_PHASE_SUBMIT : GCAP_PHASE_DONE],
			injected[w] * 9 / 10);
		ck_assert_uint_ge(
			r[w].st.phase_ns[w ? GCAP_PHASE_SUBMIT : GCAP_PHASE_DONE],
			injected[w] * 9 / 10 * stall_ns);
	}
	stall_ns = 0;
	stall_every = 0;
	stall_in_submit = false;
	run_phases = false;
	run_min_stalls = 0;
	/* a pause in the executor's submit is the cpu executor's own work
	 * (submit_works: its filters), not a poll gap; one in done is */
	printf("poll gaps >= 50 us: %" PRIu64 " with the pauses in done, %" PRIu64
	       " in submit\n",
	       r[0].st.poll_gaps[GCAP_POLL_GAP_BUCKETS - 1],
	       r[1].st.poll_gaps[GCAP_POLL_GAP_BUCKETS - 1]);
	ck_assert_uint_ge(r[0].st.poll_gaps[GCAP_POLL_GAP_BUCKETS - 1],
			  injected[0] * 9 / 10);
	/* how many gaps the submit run has besides is the machine's load
	 * (preemptions are gaps too); the rule that keeps the submit's own
	 * work out of them, on a queue's state: a submit that began 100 us
	 * ago moves the last poll's time on by as much */
	{
		struct gcap_pipeline pl;
		struct pl_queue q;
		struct gcap_exec_ops plain = gcap_exec_cpu_ops;
		uint64_t t = mono_ns();

		memset(&pl, 0, sizeof(pl));
		memset(&q, 0, sizeof(q));
		pl.conf.ops = &gcap_exec_cpu_ops;
		pl.conf.busy_poll = true;
		q.prev_poll = t - 100000;
		q.last_submit = t - 100000;
		poll_gap_skip_submit(&pl, &q);
		ck_assert_uint_ge(q.prev_poll, t);
		poll_gap_check(&q, q.prev_poll + 1000);
		ck_assert_uint_eq(q.gaps, 0);
		/* an executor whose submit only hands the batch over: the
		 * lcore's time in it is a gap like any other */
		plain.submit_works = false;
		pl.conf.ops = &plain;
		q.prev_poll = t - 100000;
		q.last_submit = t - 100000;
		poll_gap_skip_submit(&pl, &q);
		ck_assert_uint_eq(q.prev_poll, t - 100000);
	}
}
END_TEST

/* Busy on one CPU for hog_ns: another thread on the RX lcore's CPU. */
static uint64_t hog_ns;

static void *
hog_main(void *arg)
{
	const rte_cpuset_t *set = arg;
	uint64_t until;

	pthread_setaffinity_np(pthread_self(), sizeof(*set), set);
	until = mono_ns() + hog_ns;
	while (mono_ns() < until)
		;
	return NULL;
}

/* A thread sharing the RX lcore's CPU (the scheduler then takes turns)
 * shows as involuntary context switches of the lcore, kept in its first
 * queue's stats, and as long poll gaps. */
START_TEST(test_lcore_switches)
{
	rte_cpuset_t rx_set = rte_lcore_cpuset(rx_lcore);
	struct run_result quiet, shared;
	pthread_t hog;

	run(20000, 4, 1000000, 300, false, &quiet);
	hog_ns = 200000000;
	ck_assert_int_eq(pthread_create(&hog, NULL, hog_main, &rx_set), 0);
	run(20000, 4, 1000000, 300, false, &shared);
	pthread_join(hog, NULL);
	printf("RX lcore alone: %" PRIu64 " involuntary switches, %" PRIu64 " voluntary, "
	       "%" PRIu64 " page faults, %" PRIu64 " gaps >= 50 us; sharing its CPU: "
	       "%" PRIu64 " involuntary, %" PRIu64 " gaps >= 50 us, longest %" PRIu64
	       " us\n",
	       quiet.st.lcore_nivcsw, quiet.st.lcore_nvcsw,
	       quiet.st.lcore_minflt + quiet.st.lcore_majflt, quiet.st.poll_gaps[3],
	       shared.st.lcore_nivcsw, shared.st.poll_gaps[3],
	       shared.st.poll_gap_max_ns / 1000u);
	/* a busy thread pinned to the lcore's CPU for 200 ms must switch it
	 * out; how often the quiet run was switched is the machine's load */
	ck_assert_uint_ge(shared.st.lcore_nivcsw, 3);
	ck_assert_uint_ge(shared.st.poll_gap_max_ns, 1000000u);
}
END_TEST

static void
add_tests(TCase *tc)
{
	tcase_add_test(tc, test_in_back_split);
	tcase_add_test(tc, test_main_off_rx_cpus);
	tcase_add_test(tc, test_poll_gaps);
	tcase_add_test(tc, test_poll_phases);
	tcase_add_test(tc, test_lcore_switches);
}

int
main(void)
{
	return live_main("test_live_timing", "pipeline-live-timing", add_tests);
}
