/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared by the live pipeline's tests (test_live.c: batching and
 * delivery; test_live_timing.c: the RX lcore's timing and placement): the
 * EAL and its ports, set up once per process, an executor that answers
 * after a set delay, and run(), one capture through it that checks every
 * packet reached the executor once, in order, and was written or counted.
 */
#ifndef GCAP_TEST_LIVE_HARNESS_H
#define GCAP_TEST_LIVE_HARNESS_H

#include <check.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_mempool.h>

#include "gpucap/gcap_pipeline.h"

#define RING 16u
#define BATCH 256u
#define SNAP 128u

/* port 0: an ordinary mbuf pool; port 1: a pool of pinned external
 * buffers (what the gpu executor's host and gpu modes give the ports);
 * port 2: net_pcap reading tests/data/eth-mix.pcap once, whose 8 KB frame
 * comes as a chain of mbufs (infinite_rx refuses such frames); port 3:
 * net_pcap reading JUMBO_N frames of JUMBO_LEN bytes once (written by
 * live_main()), each a chain */
#define NPORTS 4u
#define JUMBO_N 64u
#define JUMBO_LEN 9000u
/* the ports' pools; the port run() captures from; its RX lcore */
extern struct rte_mempool *pools[NPORTS];
extern unsigned cur_port;
extern unsigned rx_lcore;
extern cpu_set_t allowed; /* the process's CPUs before the EAL */

uint64_t mono_ns(void);

/* ---- the delayed executor: the cpu executor, its batches DONE delay_ns
 * after their submission, with a given number of lanes ---- */
struct live_mock {
	uint64_t delay_ns;
	unsigned lanes;
	uint64_t done_at[RING];
	uint64_t head, tail;
	uint64_t batches, pkts, max_n, small; /* small: under 8 packets */
	uint64_t stalls;                      /* pauses injected (stall_ns) */
	uint64_t one_put, chained; /* batches with free_pool set; with a chain */
	bool put_bad;              /* free_pool set on a batch with an mbuf not plain */
	uint64_t jumbo, jumbo_cut; /* JUMBO_LEN packets seen; of those not whole */
	uint32_t next_seq;
	bool seq_bad;
	bool seq_started;
};
extern struct live_mock mk;

/* Nonzero: the mock reports a start time as a GPU would, on a clock 1 s
 * ahead of the host's real time, batch k seen (k % 4) * in_step_ns after
 * its submission (test_in_back_split). Outside mk: run() clears mk. */
extern uint64_t in_step_ns;
/* CLOCK_REALTIME - CLOCK_MONOTONIC, read once per run: read per batch, a
 * stall between its two reads would lower one batch's start time and with
 * it the floor of a whole 0.1 s window (each "in" of it too long) */
extern int64_t in_real_off;

/* Nonzero: the mock holds the RX lcore stall_ns (busy) in the poll that
 * returns every stall_every-th batch, as a preempted or stalled vCPU
 * would (test_poll_gaps); mk.stalls counts them. Outside mk, as above. */
extern uint64_t stall_ns;
extern unsigned stall_every;
/* The pause in mock_submit instead of mock_poll (test_poll_phases). */
extern bool stall_in_submit;
/* run() with --poll-phases (test_poll_phases). */
extern bool run_phases;
/* run() with --rx-burst (test_rx_burst; 0: the default). */
extern unsigned run_rx_burst;
/* run()'s batches (test_free_paths; 0: BATCH). */
extern unsigned run_batch;
/* run()'s export buffer descriptors and their bytes in all
 * (test_small_batches_writer_slack; 0: RING * 2 of a batch's records each). */
extern unsigned run_nxbufs;
extern size_t run_xmem;
/* run()'s staging bytes per batch slot (test_jumbo_whole; 0: as live). */
extern uint32_t run_stage;
/* Nonzero: run() lasts (past its ms, at most RUN_MAX_MS) until the mock
 * has injected this many pauses: a loaded machine gives the RX lcore
 * fewer turns in the same time, and the tests judge the pauses, not how
 * many the machine allowed (test_poll_gaps, test_poll_phases). */
extern uint64_t run_min_stalls;
#define RUN_MAX_MS 60000u

/* ---- one capture ---- */

struct run_result {
	struct gcap_queue_stats st;
	uint64_t written; /* records the pipeline wrote */
	uint64_t in_file; /* records libpcap reads back */
	double secs;
	uint64_t lat_p1_ns; /* RX-to-verdict, 1st percentile */
	uint64_t lat_p50_ns, lat_p99_ns;
	uint64_t cycle_p1_ns, cycle_p50_ns, cycle_p99_ns;    /* submit-to-verdict */
	uint64_t exec_p50_ns;                                /* the executor's own time */
	uint64_t in_p1_ns, in_p50_ns, in_p99_ns, back_p1_ns; /* its doorbells */
	uint64_t no_gap_p99_ns; /* of the packets no poll gap reached */
};

/* A capture of ms milliseconds (run_min_stalls may make it longer) from
 * port cur_port on rx_lcore, through the delayed executor at delay_ns and
 * lanes, rate packets a second (0: unpaced), written to a file and read
 * back. Fails the test unless every packet reached the executor once and
 * in order, and every one was written or counted as dropped. */
void run(uint64_t delay_ns, unsigned lanes, uint64_t rate, unsigned ms, bool backpressure,
	 struct run_result *out);

/* The main() of a live test executable prog: the EAL and its ports set
 * up, add_tests' tests run in one process (the EAL lives in it: no fork
 * per test), the ports closed. @return the exit status (77: no EAL
 * here). */
int live_main(const char *prog, const char *suite, void (*add_tests)(TCase *tc));

#endif
