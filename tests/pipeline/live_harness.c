/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The live tests' harness (live_harness.h): net_null and net_pcap ports
 * under the EAL, the delayed executor (the cpu executor, answering
 * delay_ns after a submission, checking each packet on its way in) and
 * run(), one capture through the pipeline with it.
 */
#include <check.h>
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

#include "live_harness.h"

static struct gcap_port ports[NPORTS];
struct rte_mempool *pools[NPORTS];
unsigned cur_port;
unsigned rx_lcore;
static char tmpdir[512];
cpu_set_t allowed;

uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct live_mock mk;

static struct gcap_exec_ops mock_ops;

uint64_t in_step_ns;
int64_t in_real_off;
uint64_t stall_ns;
unsigned stall_every;
bool stall_in_submit;
bool run_phases;
unsigned run_rx_burst;
unsigned run_batch;
unsigned run_nxbufs;
size_t run_xmem;
uint32_t run_stage;
uint64_t run_min_stalls;

/* ---- the delayed executor (live_harness.h) ---- */

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

void
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
live_main(const char *prog, const char *suite, void (*add_tests)(TCase *tc))
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
			.prog = prog,
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
	s = suite_create(suite);
	tc = tcase_create("live");
	tcase_set_timeout(tc, 60);
	add_tests(tc);
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
