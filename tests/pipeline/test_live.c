/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Live pipeline (RX lcore, batching, --rx-rate, stop) on a net_null port,
 * with an executor that answers after a set delay: what a GPU behind PCIe
 * looks like to the RX lcore. Checks that batches grow while the
 * executor's lanes are busy and stay small when they are idle, that every
 * packet reaches the executor once and in order, that --rx-rate never
 * delivers more than asked, and that a batch still open at stop is
 * submitted and written.
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/time.h>
#include <unistd.h>
#include <pcap/pcap.h>
#include <sched.h>

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "gpucap/gcap_exec.h"
#include "gpucap/gcap_filter.h"
#include "gpucap/gcap_pipeline.h"
#include "gpucap/gcap_port.h"
#include "gpucap/gcap_writer.h"
#include "../../dataplane/pipeline_internal.h"

#define RING 16u
#define BATCH 256u
#define SNAP 128u

/* port 0: an ordinary mbuf pool; port 1: a pool of pinned external
 * buffers (what the gpu executor's host and gpu modes give the ports);
 * port 2: net_pcap reading tests/data/eth-mix.pcap once, whose 8 KB frame
 * comes as a chain of mbufs (infinite_rx refuses such frames); port 3:
 * net_pcap reading JUMBO_N frames of JUMBO_LEN bytes once (written by
 * main()), each a chain */
#define NPORTS 4u
#define JUMBO_N 64u
#define JUMBO_LEN 9000u
static struct gcap_port ports[NPORTS];
static struct rte_mempool *pools[NPORTS];
static unsigned cur_port;
static unsigned rx_lcore;
static char tmpdir[512];
static cpu_set_t allowed; /* the process's CPUs before the EAL */

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- the delayed executor: the cpu executor, its batches DONE delay_ns
 * after their submission, with a given number of lanes ---- */

static struct {
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
} mk;

static struct gcap_exec_ops mock_ops;

/* Nonzero: the mock reports a start time as a GPU would, on a clock 1 s
 * ahead of the host's real time, batch k seen (k % 4) * in_step_ns after
 * its submission (test_in_back_split). Outside mk: run() clears mk. */
static uint64_t in_step_ns;
/* CLOCK_REALTIME - CLOCK_MONOTONIC, read once per run: read per batch, a
 * stall between its two reads would lower one batch's start time and with
 * it the floor of a whole 0.1 s window (each "in" of it too long) */
static int64_t in_real_off;

static int64_t
real_minus_mono(void)
{
	struct timespec r, m;

	clock_gettime(CLOCK_REALTIME, &r);
	clock_gettime(CLOCK_MONOTONIC, &m);
	return (int64_t)(r.tv_sec - m.tv_sec) * 1000000000 + (r.tv_nsec - m.tv_nsec);
}

/* Nonzero: the mock holds the RX lcore stall_ns (busy) in the poll that
 * returns every stall_every-th batch, as a preempted or stalled vCPU
 * would (test_poll_gaps); mk.stalls counts them. Outside mk, as above. */
static uint64_t stall_ns;
static unsigned stall_every;
/* The pause in mock_submit instead of mock_poll (test_poll_phases). */
static bool stall_in_submit;
/* run() with --poll-phases (test_poll_phases). */
static bool run_phases;
/* run() with --rx-burst (test_rx_burst; 0: the default). */
static unsigned run_rx_burst;
/* run()'s batches (test_free_paths; 0: BATCH). */
static unsigned run_batch;
/* run()'s export buffer descriptors and their bytes in all
 * (test_small_batches_writer_slack; 0: RING * 2 of a batch's records each). */
static unsigned run_nxbufs;
static size_t run_xmem;
/* run()'s staging bytes per batch slot (test_jumbo_whole; 0: as live). */
static uint32_t run_stage;
/* Nonzero: run() lasts (past its ms, at most RUN_MAX_MS) until the mock
 * has injected this many pauses: a loaded machine gives the RX lcore
 * fewer turns in the same time, and the tests judge the pauses, not how
 * many the machine allowed (test_poll_gaps, test_poll_phases). */
static uint64_t run_min_stalls;
#define RUN_MAX_MS 60000u

/* Hold the RX lcore stall_ns, busy. */
static void
mock_stall(void)
{
	uint64_t until = mono_ns() + stall_ns;

	while (mono_ns() < until)
		;
	__atomic_fetch_add(&mk.stalls, 1, __ATOMIC_RELAXED);
}

static int
mock_submit(struct gcap_exec *ex, unsigned q, struct gcap_batch *b)
{
	int r;
	bool chain = false;

	for (uint32_t i = 0; i < b->n; i++) {
		const struct rte_mbuf *m = b->mbufs[i];

		if (mk.seq_started && b->pkts[i].seq != mk.next_seq)
			mk.seq_bad = true;
		mk.seq_started = true;
		mk.next_seq = b->pkts[i].seq + 1;
		/* one put at done only for mbufs that DPDK would free so */
		if (b->free_pool != NULL && (m->pool != b->free_pool || m->nb_segs != 1 ||
					     rte_mbuf_refcnt_read(m) != 1 ||
					     (m->ol_flags & RTE_MBUF_F_INDIRECT) != 0))
			mk.put_bad = true;
		chain |= m->nb_segs > 1;
		if (b->pkts[i].wirelen == JUMBO_LEN) {
			const uint8_t *d = (const uint8_t *)(uintptr_t)b->pkts[i].addr;

			mk.jumbo++;
			/* whole: every byte, the last one (0x5a) included */
			if (b->pkts[i].caplen != JUMBO_LEN || d[JUMBO_LEN - 1] != 0x5a ||
			    d[JUMBO_LEN / 2] != (uint8_t)(JUMBO_LEN / 2))
				mk.jumbo_cut++;
		}
	}
	mk.one_put += b->free_pool != NULL;
	mk.chained += chain;
	r = gcap_exec_cpu_ops.batch_submit(ex, q, b);
	if (r < 0)
		return r;
	if (in_step_ns != 0)
		b->res->start_ns = b->submit_t + (uint64_t)in_real_off + 1000000000u +
				   (mk.batches % 4) * in_step_ns;
	mk.done_at[mk.head++ % RING] = mono_ns() + mk.delay_ns;
	mk.batches++;
	if (stall_ns != 0 && stall_in_submit && mk.batches % stall_every == 0)
		mock_stall();
	mk.pkts += b->n;
	if (b->n > mk.max_n)
		mk.max_n = b->n;
	if (b->n < 8)
		mk.small++;
	return 0;
}

static struct gcap_batch *
mock_poll(struct gcap_exec *ex, unsigned q)
{
	struct gcap_batch *b;

	if (mk.tail == mk.head || mono_ns() < mk.done_at[mk.tail % RING])
		return NULL;
	b = gcap_exec_cpu_ops.batch_poll(ex, q);
	if (b != NULL)
		mk.tail++;
	if (b != NULL && stall_ns != 0 && !stall_in_submit && mk.tail % stall_every == 0)
		mock_stall();
	return b;
}

static unsigned
mock_lanes(struct gcap_exec *ex, unsigned q)
{
	(void)ex;
	(void)q;
	return mk.lanes;
}

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

static void
run(uint64_t delay_ns, unsigned lanes, uint64_t rate, unsigned ms, bool backpressure,
    struct run_result *out)
{
	char err[GCAP_ERRBUF_SIZE] = "", path[600];
	struct bpf_program prog;
	struct gcap_exec *ex;
	struct gcap_writer *w;
	struct gcap_pipeline *pl;
	struct gcap_writer_if wif = { .name = ports[cur_port].name,
				      .linktype = DLT_EN10MB };
	struct gcap_pipeline_queue src = {
		.port_id = ports[cur_port].port_id,
		.rx_queue = 0,
		.port_index = 0,
		.lcore = rx_lcore,
	};
	uint64_t t0;
	pcap_t *p;
	struct pcap_pkthdr *h;
	const u_char *d;

	memset(&mk, 0, sizeof(mk));
	mk.delay_ns = delay_ns;
	mk.lanes = lanes;
	ck_assert_int_eq(gcap_filter_compile("", DLT_EN10MB, SNAP, &prog, err), 0);
	{
		struct gcap_exec_conf ec = {
			.nqueues = 1,
			.ring_size = RING,
			.batch_max = run_batch ? run_batch : BATCH,
			.nxbufs = run_nxbufs ? run_nxbufs : RING * 2,
			.xbuf_size = run_nxbufs ?
					     (uint32_t)(run_xmem / run_nxbufs) & ~63u :
					     BATCH * GCAP_REC_SIZE(SNAP),
			.stage_size = run_stage ? run_stage : GCAP_PIPELINE_STAGE_LIVE,
			.snaplen = SNAP,
			.nfilters = 1,
			.filters = &prog,
			.linktype = DLT_EN10MB,
		};

		ex = mock_ops.create(&ec, err);
		ck_assert_msg(ex != NULL, "executor: %s", err);
	}
	snprintf(path, sizeof(path), "%s/live.pcap", tmpdir);
	{
		struct gcap_writer_conf wc = {
			.path = path,
			.snaplen = SNAP,
			.nifs = 1,
			.ifs = &wif,
		};

		w = gcap_writer_open(&wc, err);
		ck_assert_msg(w != NULL, "writer: %s", err);
	}
	{
		struct gcap_pipeline_conf pc = {
			.ops = &mock_ops,
			.ex = ex,
			.nqueues = 1,
			.queues = &src,
			.batch_max = run_batch ? run_batch : BATCH,
			.nwriters = 1,
			.writers = &w,
			.busy_poll = true,
			.backpressure = backpressure,
			.rx_rate_pps = rate,
			.snaplen = SNAP,
			.flush_ms = 100,
			.poll_phases = run_phases,
			.rx_burst = run_rx_burst,
		};

		pl = gcap_pipeline_create(&pc, err);
		ck_assert_msg(pl != NULL, "pipeline: %s", err);
	}
	t0 = mono_ns();
	ck_assert_msg(gcap_pipeline_start(pl, err) == 0, "start: %s", err);
	usleep(ms * 1000u);
	while (__atomic_load_n(&mk.stalls, __ATOMIC_RELAXED) < run_min_stalls &&
	       mono_ns() - t0 < RUN_MAX_MS * 1000000ull)
		usleep(1000);
	gcap_pipeline_request_stop(pl);
	ck_assert_msg(gcap_pipeline_stop(pl, 5000, err) == 0, "stop: %s", err);
	out->secs = (double)(mono_ns() - t0) / 1e9;
	gcap_pipeline_queue_stats(pl, 0, &out->st);
	out->written = gcap_pipeline_written(pl);
	out->lat_p1_ns = gcap_pipeline_latency_ns(pl, 1);
	out->lat_p50_ns = gcap_pipeline_latency_ns(pl, 50);
	out->lat_p99_ns = gcap_pipeline_latency_ns(pl, 99);
	out->cycle_p1_ns = gcap_pipeline_latency_of_ns(pl, GCAP_LAT_CYCLE, 1);
	out->cycle_p50_ns = gcap_pipeline_latency_of_ns(pl, GCAP_LAT_CYCLE, 50);
	out->cycle_p99_ns = gcap_pipeline_latency_of_ns(pl, GCAP_LAT_CYCLE, 99);
	out->exec_p50_ns = gcap_pipeline_latency_of_ns(pl, GCAP_LAT_EXEC, 50);
	out->in_p1_ns = gcap_pipeline_latency_of_ns(pl, GCAP_LAT_IN, 1);
	out->in_p50_ns = gcap_pipeline_latency_of_ns(pl, GCAP_LAT_IN, 50);
	out->in_p99_ns = gcap_pipeline_latency_of_ns(pl, GCAP_LAT_IN, 99);
	out->back_p1_ns = gcap_pipeline_latency_of_ns(pl, GCAP_LAT_BACK, 1);
	out->no_gap_p99_ns = gcap_pipeline_latency_of_ns(pl, GCAP_LAT_NO_GAP, 99);
	gcap_pipeline_destroy(pl);
	ck_assert_msg(gcap_writer_close(w, NULL, err) == 0, "close: %s", err);
	mock_ops.destroy(ex);
	gcap_filter_free(&prog);

	p = pcap_open_offline(path, err);
	ck_assert_msg(p != NULL, "%s: %s", path, err);
	out->in_file = 0;
	{
		struct timeval prev = { 0, 0 };

		/* one queue: records in arrival order (timestamps per poll) */
		while (pcap_next_ex(p, &h, &d) == 1) {
			ck_assert_msg(timercmp(&prev, &h->ts, <=),
				      "record %" PRIu64 " is older than the one before",
				      out->in_file + 1);
			prev = h->ts;
			out->in_file++;
		}
	}
	pcap_close(p);
	unlink(path);
	printf("delay %" PRIu64 " us, lanes %u, rate %" PRIu64 " pps, %u ms: rx %" PRIu64
	       ", batches %" PRIu64 " (mean %.1f, max %" PRIu64 "), written %" PRIu64
	       ", drops %" PRIu64 "/%" PRIu64 ", latency p50 %" PRIu64 " us (submit-to-"
	       "verdict %" PRIu64 ")\n",
	       delay_ns / 1000u, lanes, rate, ms, out->st.rx_pkts, mk.batches,
	       mk.batches ? (double)mk.pkts / (double)mk.batches : 0.0, mk.max_n,
	       out->written, out->st.drop_pipeline, out->st.drop_writer,
	       out->lat_p50_ns / 1000u, out->cycle_p50_ns / 1000u);
	ck_assert_msg(!mk.seq_bad, "a packet reached the executor twice, late or never");
	ck_assert_msg(!mk.put_bad,
		      "a batch with an mbuf DPDK must free was to go back in one put");
	/* every packet not dropped before reaching the executor reached it
	 * (a "writer behind" drop is either: no export buffer at the poll,
	 * no room for the batch's records at its submission, or a record
	 * that did not fit after the executor saw the packet) */
	ck_assert_uint_le(mk.pkts, out->st.rx_pkts - out->st.drop_pipeline);
	ck_assert_uint_ge(mk.pkts,
			  out->st.rx_pkts - out->st.drop_pipeline - out->st.drop_writer);
	ck_assert_uint_eq(out->in_file, out->written);
}

/* The executor busy (one lane, 200 us per batch): packets wait in the open
 * batch instead of taking a slot each, so the ring never fills and nothing
 * is dropped; batches grow to about rate x delay. */
START_TEST(test_batches_grow_under_load)
{
	struct run_result r;

	run(200000, 1, 1000000, 400, false, &r);
	ck_assert_uint_gt(r.st.rx_pkts, 10000);
	ck_assert_msg(r.st.drop_pipeline == 0,
		      "%" PRIu64 " packets dropped for want of a slot: batches "
		      "did not grow while the executor was busy",
		      r.st.drop_pipeline);
	ck_assert_msg(mk.pkts >= 50 * mk.batches,
		      "mean batch %.1f packets, "
		      "expected about 200",
		      (double)mk.pkts / (double)mk.batches);
	/* the writer thread may lag on a loaded machine: what it could not
	 * take is counted, never lost silently */
	ck_assert_uint_eq(r.written + r.st.drop_writer, r.st.rx_pkts);
	/* no packet's verdict can come sooner than the executor answers */
	ck_assert_msg(r.lat_p1_ns >= 200000,
		      "latency p1 %" PRIu64 " ns is "
		      "below the executor's 200 us",
		      r.lat_p1_ns);
	/* the parts: the delay is between submit and verdict, outside the
	 * (cpu) executor's own time; a packet's latency holds its cycle */
	ck_assert_msg(r.cycle_p1_ns >= 200000,
		      "submit-to-verdict p1 %" PRIu64 " ns is below the 200 us delay",
		      r.cycle_p1_ns);
	ck_assert_msg(r.exec_p50_ns < 200000,
		      "executor time p50 %" PRIu64
		      " ns holds the delay it does not spend",
		      r.exec_p50_ns);
	ck_assert_uint_ge(r.lat_p99_ns, r.cycle_p99_ns);
	/* how long a packet waited in the open batch depends on how the
	 * machine schedules the RX lcore: shown, not judged (the capture
	 * bench measures it) */
	printf("latency p50 %.0f us: cycle p50 %.0f us, mean batch %.0f packets\n",
	       (double)r.lat_p50_ns / 1e3, (double)r.cycle_p50_ns / 1e3,
	       (double)mk.pkts / (double)mk.batches);
}
END_TEST

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

/* Two lanes: submissions spread over them (one every half round trip)
 * instead of the second lane taking a packet or two right after the first
 * and both finishing together (half the batches tiny, every other packet
 * waiting a whole round trip). The rule itself, on a queue's state: */
START_TEST(test_lanes_spread)
{
	struct pl_queue q;
	struct run_result r;

	memset(&q, 0, sizeof(q));
	q.lanes = 2;
	q.cycle_ewma = 200000;
	q.last_submit = 1000000;
	ck_assert(gcap_pl_submit_due(&q, 1000000)); /* idle: at once */
	q.inflight = 1;
	ck_assert(!gcap_pl_submit_due(&q, 1000000 + 99999)); /* not yet */
	ck_assert(gcap_pl_submit_due(&q, 1000000 + 100000)); /* half a round trip */
	q.inflight = 2;
	ck_assert(!gcap_pl_submit_due(&q, 1000000 + 500000)); /* no lane free */
	q.lanes = 4;
	q.inflight = 3;
	ck_assert(!gcap_pl_submit_due(&q, 1000000 + 49999));
	ck_assert(gcap_pl_submit_due(&q, 1000000 + 50000)); /* a quarter */
	/* and through the pipeline: every packet accounted for, and the
	 * spread as the machine's scheduling let it happen, shown */
	run(200000, 2, 1000000, 400, false, &r);
	printf("two lanes: %" PRIu64 " of %" PRIu64 " batches under 8 packets, mean "
	       "%.1f packets\n",
	       mk.small, mk.batches, (double)mk.pkts / (double)mk.batches);
	ck_assert_uint_eq(r.st.drop_pipeline, 0);
	ck_assert_uint_eq(r.written + r.st.drop_writer, r.st.rx_pkts);
}
END_TEST

/* The executor idle: what a poll brought goes at once, so there are as
 * many batches as polls that received packets, however the machine
 * schedules the lcore. The rate limiter delivers at most what it is asked
 * for. */
START_TEST(test_low_load_small_batches)
{
	struct run_result r;
	double want;

	run(0, 1, 200000, 300, false, &r);
	want = 200000.0 * r.secs;
	ck_assert_msg((double)r.st.rx_pkts <= want * 1.02 + BATCH,
		      "--rx-rate 200000 delivered %" PRIu64 " packets in %.3f s",
		      r.st.rx_pkts, r.secs);
	ck_assert_msg(r.st.rx_pkts >= 1000,
		      "--rx-rate 200000 delivered only %" PRIu64 " packets in %.3f s",
		      r.st.rx_pkts, r.secs);
	/* the last poll's packets may go at the stop, in the batch after */
	ck_assert_msg(mk.batches >= r.st.polls && mk.batches <= r.st.polls + 1,
		      "%" PRIu64 " batches from %" PRIu64 " polls that received "
		      "packets: packets waited for a fuller batch",
		      mk.batches, r.st.polls);
	ck_assert_uint_eq(r.st.drop_pipeline + r.st.drop_writer, 0);
	ck_assert_uint_eq(r.written, r.st.rx_pkts);
}
END_TEST

/* Four lanes at 200 kpps in batches of at most 8 packets (against export
 * memory sized for BATCH): 25,000 small batches a second, several in
 * flight at a time, each done on its own. Were export buffers owned whole
 * by a batch, 32 of them would be 1.3 ms of slack and the writer would
 * fall behind; with the memory carved per batch and the descriptors as
 * the pipeline sizes them (4,096, each a small share) they are 160 ms,
 * and nothing is dropped. The memory is the sizing's times 4: CI's writer
 * shares a CPU with the rest. (At 1 Mpps the slack was 33 ms, which a
 * loaded machine running the sanitizer build took from the writer.)
 * Batches of 8 by configuration keep them small however the machine
 * schedules the lcore: with polls of 8 alone, an lcore that a loaded
 * machine left waiting took many polls into one open batch. */
START_TEST(test_small_batches_writer_slack)
{
	struct run_result r;

	{
		uint32_t each;

		ck_assert_int_eq(
			gcap_pipeline_xmem_size(RING, BATCH, SNAP, 0, &run_nxbufs, &each),
			0);
		ck_assert_uint_eq(run_nxbufs, RING * GCAP_PIPELINE_XBUFS_PER_SLOT);
		run_xmem = (size_t)run_nxbufs * each * 4;
	}
	run_rx_burst = 8;
	run_batch = 8;
	run(20000, 4, 200000, 300, false, &r);
	run_rx_burst = 0;
	run_batch = 0;
	run_nxbufs = 0;
	ck_assert_uint_le(mk.max_n, 8);
	ck_assert_msg(r.st.drop_pipeline + r.st.drop_writer == 0,
		      "%" PRIu64 " pipeline, %" PRIu64 " writer drops",
		      r.st.drop_pipeline, r.st.drop_writer);
	ck_assert_uint_eq(r.written, r.st.rx_pkts);
}
END_TEST

/* An export memory of one batch against an unpaced port: the writer is
 * behind most of the time. Every packet received is written or counted as
 * dropped, and the executor still sees each packet number once, in order
 * (a batch dropped at submission gives its numbers back). */
START_TEST(test_writer_behind_counted)
{
	struct run_result r;

	run_nxbufs = 4;
	run_xmem = (size_t)BATCH * GCAP_REC_SIZE(SNAP);
	run(0, 4, 0, 200, false, &r);
	run_nxbufs = 0;
	ck_assert_msg(r.st.drop_writer > 0, "no writer-behind drop: the writer "
					    "kept up with one batch of export memory");
	ck_assert_uint_eq(r.st.rx_pkts,
			  r.written + r.st.drop_writer + r.st.drop_pipeline);
}
END_TEST

/* Stop while a batch is open (the executor's one lane busy for 300 ms):
 * the open batch is submitted, completes, and is written. */
START_TEST(test_stop_submits_open_batch)
{
	struct run_result r;

	run(300000000, 1, 5000, 60, false, &r);
	ck_assert_uint_gt(r.st.rx_pkts, 20);
	ck_assert_uint_ge(mk.batches, 2);
	ck_assert_uint_eq(r.st.drop_pipeline + r.st.drop_writer, 0);
	ck_assert_msg(r.written == r.st.rx_pkts,
		      "received %" PRIu64 ", written %" PRIu64
		      ": the open batch was lost at stop",
		      r.st.rx_pkts, r.written);
}
END_TEST

/* Every mbuf is back in its pool after a capture of about 70 times the
 * pool's size, for an ordinary pool and for one of pinned external buffers
 * (the RX lcore returns plain mbufs to the pool in one put, the rest
 * through rte_pktmbuf_free_bulk). */
START_TEST(test_mbufs_return)
{
	for (cur_port = 0; cur_port < 2; cur_port++) {
		uint64_t total = 0;
		unsigned avail = 0, runs = 0;

		/* runs until 20 pools' worth went through: a loaded machine
		 * takes more of them */
		while (total <= 20u * pools[cur_port]->size && runs < 40) {
			struct run_result r;

			run(0, 1, 2000000, 300, false, &r);
			runs++;
			total += r.st.rx_pkts;
			avail = rte_mempool_avail_count(pools[cur_port]);
			ck_assert_uint_eq(r.st.drop_pipeline, 0);
			ck_assert_msg(avail == pools[cur_port]->size,
				      "%s pool: %u of %u "
				      "mbufs back after the capture",
				      cur_port ? "pinned" : "ordinary", avail,
				      pools[cur_port]->size);
		}
		printf("%s pool: %" PRIu64
		       " packets through %u mbufs in %u runs, %u back\n",
		       cur_port ? "pinned external buffer" : "ordinary", total,
		       pools[cur_port]->size, runs, avail);
		ck_assert_uint_gt(total, 20u * pools[cur_port]->size);
	}
	cur_port = 0;
}
END_TEST

/* --rx-burst: receive calls of 1 and of 5 packets still fill a poll's
 * whole room in the open batch (the executor busy 100 us a batch, so
 * batches wait and grow), every packet reaches the executor once and in
 * order (run()), and every mbuf goes back to its pool. A poll that made
 * one call would take at most that many packets. */
START_TEST(test_rx_burst)
{
	static const unsigned bursts[] = { 1, 5 };

	for (unsigned i = 0; i < 2; i++) {
		struct run_result r;
		double per_poll;

		run_rx_burst = bursts[i];
		run(100000, 1, 0, 300, true, &r);
		run_rx_burst = 0;
		ck_assert_uint_gt(r.st.polls, 0);
		per_poll = (double)r.st.rx_pkts / (double)r.st.polls;
		printf("--rx-burst %u: %" PRIu64 " packets in %" PRIu64
		       " polls (%.1f a poll), batches of %.1f, largest %" PRIu64 "\n",
		       bursts[i], r.st.rx_pkts, r.st.polls, per_poll,
		       (double)mk.pkts / (double)mk.batches, mk.max_n);
		ck_assert_msg(per_poll > 8.0 * bursts[i],
			      "--rx-burst %u: %.1f "
			      "packets a poll: the poll stopped after a call",
			      bursts[i], per_poll);
		ck_assert_uint_eq(mk.max_n, BATCH);
		/* (at full rate the file's writer may fall behind: records
		 * that found no room are counted, not lost) */
		ck_assert_uint_eq(r.st.drop_pipeline, 0);
		ck_assert_uint_eq(r.written + r.st.drop_writer, r.st.rx_pkts);
		ck_assert_uint_eq(rte_mempool_avail_count(pools[0]), pools[0]->size);
	}
}
END_TEST

/* Batches go back to their pool in one put (decided while the mbufs were
 * in cache) unless one of their mbufs needs DPDK's general path: here the
 * chained 8 KB frame of a net_pcap port. Plain batches take the put,
 * chained ones never (mock_submit checks each), and every mbuf, segments
 * included, is back in the pool after the capture. */
START_TEST(test_free_paths)
{
	struct run_result r;
	unsigned avail;

	cur_port = 2; /* batches of 8: the file is read once, in one poll */
	run_batch = 8;
	run(0, 1, 20000, 300, false, &r);
	run_batch = 0;
	cur_port = 0;
	avail = rte_mempool_avail_count(pools[2]);
	printf("net_pcap: %" PRIu64 " batches, %" PRIu64 " in one put, %" PRIu64
	       " with a chain; %u of %u mbufs back\n",
	       mk.batches, mk.one_put, mk.chained, avail, pools[2]->size);
	ck_assert_uint_gt(mk.chained, 0);
	ck_assert_uint_gt(mk.one_put, 0);
	ck_assert_uint_le(mk.one_put + mk.chained, mk.batches);
	ck_assert_uint_eq(r.st.drop_pipeline, 0);
	ck_assert_uint_eq(avail, pools[2]->size);
}
END_TEST

/* A batch's chained packets that exceed its staging area: net_pcap's
 * JUMBO_N chained 9,000-byte frames, all in one poll, staging for one
 * (16 KiB). Every one reaches the executor whole (each batch ends where
 * the next would not fit), in order, none dropped, every mbuf back. */
START_TEST(test_jumbo_whole)
{
	struct run_result r;
	unsigned avail;

	cur_port = 3;
	run_batch = JUMBO_N;
	run_stage = 16u << 10;
	run(0, 1, 0, 300, false, &r);
	run_batch = 0;
	run_stage = 0;
	cur_port = 0;
	avail = rte_mempool_avail_count(pools[3]);
	printf("jumbo: %" PRIu64 " of %u frames seen, %" PRIu64 " not whole, %" PRIu64
	       " batches, %" PRIu64 " written, %" PRIu64 " dropped chained\n",
	       mk.jumbo, JUMBO_N, mk.jumbo_cut, mk.batches, r.written, r.st.drop_chained);
	ck_assert_uint_eq(mk.jumbo, JUMBO_N);
	ck_assert_uint_eq(mk.jumbo_cut, 0);
	ck_assert_uint_eq(r.st.rx_pkts, JUMBO_N);
	ck_assert_uint_eq(r.written, JUMBO_N);
	ck_assert_uint_eq(r.st.drop_chained + r.st.drop_pipeline + r.st.drop_writer, 0);
	ck_assert_uint_ge(mk.batches, JUMBO_N);
	ck_assert_uint_eq(avail, pools[3]->size);
}
END_TEST

/* JUMBO_N frames of JUMBO_LEN bytes to path: byte k is k & 0xff, the
 * last 0x5a. @return 0, -1 on error. */
static int
write_jumbo(const char *path)
{
	static uint8_t d[JUMBO_LEN];
	pcap_t *p = pcap_open_dead(DLT_EN10MB, 65535);
	pcap_dumper_t *dp = p ? pcap_dump_open(p, path) : NULL;
	struct pcap_pkthdr h = { .caplen = JUMBO_LEN, .len = JUMBO_LEN };

	if (dp == NULL) {
		if (p)
			pcap_close(p);
		return -1;
	}
	for (unsigned k = 0; k < JUMBO_LEN; k++)
		d[k] = (uint8_t)k;
	d[JUMBO_LEN - 1] = 0x5a;
	for (unsigned i = 0; i < JUMBO_N; i++) {
		h.ts.tv_sec = (time_t)i;
		pcap_dump((u_char *)dp, &h, d);
	}
	pcap_dump_close(dp);
	pcap_close(p);
	return 0;
}

/* A pool whose data rooms are external memory, pinned to their mbufs. */
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

static struct rte_mempool *
pinned_pool(const char *name, unsigned n)
{
	struct rte_pktmbuf_extmem ext;
	size_t len = (size_t)n * RTE_MBUF_DEFAULT_BUF_SIZE;
	void *mem = rte_malloc(NULL, len, 4096);

	if (mem == NULL)
		return NULL;
	ext.buf_ptr = mem;
	ext.buf_iova = rte_malloc_virt2iova(mem);
	ext.buf_len = len;
	ext.elt_size = RTE_MBUF_DEFAULT_BUF_SIZE;
	return rte_pktmbuf_pool_create_extbuf(name, n, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					      SOCKET_ID_ANY, &ext, 1);
}

int
main(void)
{
	char err[GCAP_ERRBUF_SIZE] = "";
	const char *tmp = getenv("TMPDIR");
	struct rte_mempool *mp;
	static char pcap_spec[1024], jumbo_spec[1024];
	unsigned ids[4];
	Suite *s;
	TCase *tc;
	SRunner *sr;
	int nfail;

	mock_ops = gcap_exec_cpu_ops;
	mock_ops.name = "delayed";
	mock_ops.batch_submit = mock_submit;
	mock_ops.batch_poll = mock_poll;
	mock_ops.lanes = mock_lanes;

	{
		const char *root = getenv("GCAP_SOURCE_ROOT");

		snprintf(pcap_spec, sizeof(pcap_spec),
			 "net_pcap0,rx_pcap=%s/tests/data/eth-mix.pcap",
			 root ? root : ".");
	}
	snprintf(tmpdir, sizeof(tmpdir), "%s/gcap-live-XXXXXX",
		 tmp && tmp[0] ? tmp : "/tmp");
	if (mkdtemp(tmpdir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(jumbo_spec, sizeof(jumbo_spec), "net_pcap1,rx_pcap=%s/jumbo.pcap",
		 tmpdir);
	if (write_jumbo(jumbo_spec + strlen("net_pcap1,rx_pcap=")) < 0) {
		fprintf(stderr, "cannot write %s\n", jumbo_spec);
		return 1;
	}
	if (gcap_port_parse("net_null0,size=64,copy=1", 0, &ports[0], err) < 0 ||
	    gcap_port_parse("net_null1,size=64,copy=1", 1, &ports[1], err) < 0 ||
	    gcap_port_parse(pcap_spec, 2, &ports[2], err) < 0 ||
	    gcap_port_parse(jumbo_spec, 3, &ports[3], err) < 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	{
		struct gcap_eal_conf ec = {
			.prog = "test_live",
			.ports = ports,
			.nports = NPORTS,
			.nlcores = 2,
			.mem_mb = 256,
		};

		sched_getaffinity(0, sizeof(allowed), &allowed);
		if (gcap_eal_init(&ec, err) < 0) {
			/* no usable EAL here (e.g. no net_null driver) */
			printf("SKIP: EAL: %s\n", err);
			unlink(jumbo_spec + strlen("net_pcap1,rx_pcap="));
			rmdir(tmpdir);
			return 77;
		}
	}
	if (gcap_rx_lcores(ids, 4) < 1) {
		fprintf(stderr, "no RX lcore\n");
		return 1;
	}
	rx_lcore = ids[0];
	pools[0] = rte_pktmbuf_pool_create("live_pool", 8191, 256, 0,
					   RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	pools[1] = pinned_pool("live_ext_pool", 8191);
	pools[2] = rte_pktmbuf_pool_create("live_pcap_pool", 8191, 256, 0,
					   RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	pools[3] = rte_pktmbuf_pool_create("live_jumbo_pool", 8191, 256, 0,
					   RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	for (unsigned i = 0; i < NPORTS; i++) {
		mp = pools[i];
		if (mp == NULL || gcap_port_find(&ports[i], err) < 0 ||
		    gcap_port_configure(&ports[i], 1, 1024, &mp, err) < 0 ||
		    gcap_port_start(&ports[i], err) < 0) {
			fprintf(stderr, "%s: %s\n", ports[i].spec,
				mp ? err : rte_strerror(rte_errno));
			return 1;
		}
	}
	s = suite_create("pipeline-live");
	tc = tcase_create("live");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_batches_grow_under_load);
	tcase_add_test(tc, test_lanes_spread);
	tcase_add_test(tc, test_in_back_split);
	tcase_add_test(tc, test_low_load_small_batches);
	tcase_add_test(tc, test_stop_submits_open_batch);
	tcase_add_test(tc, test_small_batches_writer_slack);
	tcase_add_test(tc, test_writer_behind_counted);
	tcase_add_test(tc, test_mbufs_return);
	tcase_add_test(tc, test_rx_burst);
	tcase_add_test(tc, test_free_paths);
	tcase_add_test(tc, test_jumbo_whole);
	tcase_add_test(tc, test_main_off_rx_cpus);
	tcase_add_test(tc, test_poll_gaps);
	tcase_add_test(tc, test_poll_phases);
	tcase_add_test(tc, test_lcore_switches);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	/* the EAL lives in this process: no fork per test */
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	nfail = srunner_ntests_failed(sr);
	srunner_free(sr);
	for (unsigned i = 0; i < NPORTS; i++) /* net_pcap's files close here */
		gcap_port_close(&ports[i]);
	snprintf(jumbo_spec, sizeof(jumbo_spec), "%s/jumbo.pcap", tmpdir);
	unlink(jumbo_spec);
	rmdir(tmpdir);
	return nfail == 0 ? 0 : 1;
}
