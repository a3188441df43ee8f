/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pipeline's live RX path: the RX lcores' loop, one poll of a queue
 * (completed batches consumed, packets received into the open batch and
 * described, the batch submitted when due), the --rx-rate limiter, the
 * drops when no slot or export room is free, and the mbufs' return to
 * their pools. Batch completion (poll_done) is here too: the file reader
 * and the stop use it without the live parts. What it counts beyond the
 * packets (latencies, poll gaps, --poll-phases) goes through the inline
 * helpers of pipeline_internal.h.
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_pause.h>

#include "pipeline_internal.h"

/* Polls without a packet before an idle queue sleeps (unless busy_poll). */
#define IDLE_SPINS 2048u
#define IDLE_SLEEP_NS 20000L

/* What a PMD hands an RX queue is nearly always one segment from the
 * queue's pool with a reference count of one and nothing attached (a
 * pinned external buffer belongs to its mbuf): such an mbuf goes back to
 * mp by a plain put, as rte_mbuf_raw_free() would. ext: the ol_flags bit
 * that may be set, RTE_MBUF_F_EXTERNAL for a pool of pinned external
 * buffers (mbuf_ext_ok()), else 0. Reads the mbuf's first cache line
 * only (rte_pktmbuf_free_bulk() also reads the second: next, shinfo). */
static inline bool
mbuf_plain(const struct rte_mbuf *m, const struct rte_mempool *mp, uint64_t ext)
{
	return m->pool == mp && m->nb_segs == 1 && rte_mbuf_refcnt_read(m) == 1 &&
	       (m->ol_flags & ~ext & (RTE_MBUF_F_INDIRECT | RTE_MBUF_F_EXTERNAL)) == 0;
}

static inline uint64_t
mbuf_ext_ok(struct rte_mempool *mp)
{
	return (rte_pktmbuf_priv_flags(mp) & RTE_PKTMBUF_POOL_F_PINNED_EXT_BUF) ?
		       RTE_MBUF_F_EXTERNAL :
		       0;
}

/* Give mbufs back: one put when every one is plain (mbuf_plain), else
 * DPDK's general path. Dev machine, cpu backend, one lcore of net_null:
 * 61 -> 74 Mpps against rte_pktmbuf_free_bulk(). A completed batch's
 * mbufs do not come here: rx_describe() checked them while they were in
 * cache (b->free_pool). */
static void
mbufs_free(struct rte_mbuf **m, unsigned n)
{
	struct rte_mempool *mp = m[0]->pool;
	const uint64_t ext = mbuf_ext_ok(mp);

	for (unsigned i = 0; i < n; i++)
		if (!mbuf_plain(m[i], mp, ext)) {
			rte_pktmbuf_free_bulk(m, n);
			return;
		}
	rte_mempool_put_bulk(mp, (void **)m, n);
}

/* Consume one DONE batch: records to the writer, mbufs back, counters. */
static void
consume(struct gcap_pipeline *pl, unsigned qi, struct gcap_batch *b, bool live,
	uint64_t now)
{
	struct pl_queue *q = &pl->q[qi];
	const struct gcap_batch_result *res = b->res;
	struct gcap_xbuf *xb = b->xbuf;

	STAT_ADD(q->st.captured, res->n_captured);
	STAT_ADD(q->st.captured_bytes, res->captured_bytes);
	STAT_ADD(q->st.filtered, res->n_filtered);
	STAT_ADD(q->st.drop_writer, res->n_truncated);
	STAT_ADD(q->st.batches, 1);
	STAT_ADD(q->st.exec_ns, res->exec_ns);
	if (live) {
		/* the round trip that spaces the lanes' submissions (gcap_pl_submit_due) */
		uint64_t cyc = now - b->submit_t;

		q->cycle_ewma = q->cycle_ewma ? (q->cycle_ewma * 7 + cyc) / 8 : cyc;
	}
	if (b->flags & GCAP_BATCH_SPAN) {
		/* the executor found the span's records: numbered from q->seq
		 * on, as the reader would have numbered them */
		STAT_ADD(q->st.rx_pkts, res->n_found);
		STAT_ADD(q->st.rx_bytes, res->found_bytes);
		STAT_ADD(q->st.file_span_walks, res->span_walks);
		for (unsigned k = 0; k < 4; k++)
			STAT_ADD(q->st.file_span_ns[k], res->span_ns[k]);
		q->seq += res->n_found;
		if (res->span_stop < q->span_stop)
			q->span_stop = res->span_stop;
		b->burst_end[0] =
			(uint16_t)(res->n_found < 65535u ? res->n_found : 65535u);
	}
	lat_batch_done(pl, q, b, live, now);
	if (xb != NULL) {
		if (live && q->inflight == 1 && q->held == NULL &&
		    !atomic_load_explicit(&pl->stop_rx, memory_order_relaxed)) {
			/* the only batch out: its region is the newest, and the
			 * next batch may grow it (records stay in order) */
			if (xb->nrec == res->n_captured) /* its first records */
				q->held_since = now;
			q->held = xb;
		} else {
			/* its region comes back in the order taken: through
			 * the writer, or at once (gcap_pl_xbuf_retire) */
			gcap_pl_xbuf_retire(q, xb);
		}
	}
	if (live && b->n > 0) {
		/* back from the executor a round trip later, the mbufs' headers
		 * have left the cache: rx_describe() checked them, and found
		 * them plain or not */
		if (b->free_pool != NULL)
			rte_mempool_put_bulk(b->free_pool, b->mbufs, b->n);
		else
			rte_pktmbuf_free_bulk((struct rte_mbuf **)b->mbufs, b->n);
	}
	pl->conf.ops->batch_release(pl->conf.ex, qi, b);
	q->inflight--;
}

/* Consume queue qi's finished batches. The clock is read as each is found:
 * a time read before looking (the poll's) would be stale by whatever came
 * between (a preempted lcore, other batches consumed), and the latencies
 * short by as much. */
unsigned
gcap_pl_poll_done(struct gcap_pipeline *pl, unsigned qi, bool live)
{
	const struct gcap_exec_ops *ops = pl->conf.ops;
	struct gcap_batch *b;
	unsigned n = 0;

	while ((b = ops->batch_poll(pl->conf.ex, qi)) != NULL) {
		uint64_t now = now_ns(CLOCK_MONOTONIC);

		if (n == 0 && live && pl->conf.busy_poll)
			poll_gap_check(&pl->q[qi], now);
		consume(pl, qi, b, live, now);
		n++;
	}
	return n;
}

/* --rx-rate: how many packets queue q may take now, at most max. Packets
 * come as a NIC at that rate delivers them: the credit grows by one every
 * 1/rate seconds, and what was not taken accumulates up to one batch (a
 * poll after a pause gets a burst, a fast poll one or a few packets).
 * Benchmarks only; 0 = no limit. */
static unsigned
rate_budget(const struct gcap_pipeline *pl, struct pl_queue *q, uint64_t now,
	    unsigned max)
{
	double rate = (double)pl->conf.rx_rate_pps, floor_vt, credit;

	if (pl->conf.rx_rate_pps == 0)
		return max;
	floor_vt = (double)now - (double)pl->conf.batch_max * 1e9 / rate;
	if (q->rate_vt < floor_vt)
		q->rate_vt = floor_vt;
	credit = ((double)now - q->rate_vt) * rate / 1e9;
	if (credit < 1.0)
		return 0;
	return credit < (double)max ? (unsigned)credit : max;
}

/* Charge n packets taken from queue q to its --rx-rate credit. */
static void
rate_take(const struct gcap_pipeline *pl, struct pl_queue *q, unsigned n)
{
	if (pl->conf.rx_rate_pps != 0)
		q->rate_vt += (double)n * 1e9 / (double)pl->conf.rx_rate_pps;
}

/* --backpressure: the time of queue q's wait (there is one) up to now,
 * to its cause's count. */
static inline void
bp_wait_add(struct pl_queue *q, uint64_t now)
{
	if (now <= q->bp_since)
		return;
	if (q->bp_writer)
		STAT_ADD(q->st.bp_wait_writer_ns, now - q->bp_since);
	else
		STAT_ADD(q->st.bp_wait_exec_ns, now - q->bp_since);
}

/* --backpressure: the wait of queue q's port, if any, ends at now. */
static inline void
bp_wait_end(struct pl_queue *q, uint64_t now)
{
	if (likely(q->bp_since == 0))
		return;
	bp_wait_add(q, now);
	q->bp_since = 0;
}

/* A wait still going on counts up to now (the counters grow while a
 * port waits, not only when it ends). */
static inline void
bp_wait_flush(struct pl_queue *q, uint64_t now)
{
	if (likely(q->bp_since == 0))
		return;
	bp_wait_add(q, now);
	q->bp_since = now;
}

/* Whether queue q's port already waits for that (writer: the writer's
 * room, else an executor slot). */
static inline bool
bp_waiting_for(const struct pl_queue *q, bool writer)
{
	return q->bp_since != 0 && q->bp_writer == writer;
}

/* --backpressure: queue q's port waits from now for the writer's export
 * room (writer) or for an executor slot; a wait for the other ends. */
static inline void
bp_wait_begin(struct pl_queue *q, bool writer, uint64_t now)
{
	if (bp_waiting_for(q, writer))
		return;
	bp_wait_end(q, now);
	q->bp_since = now;
	q->bp_writer = writer;
}

/* Packets polled while no batch slot or export buffer is free: dropped and
 * counted (unless --backpressure, which leaves them in the port). */
static unsigned
rx_drop(struct gcap_pipeline *pl, unsigned qi, bool no_slot, uint64_t now)
{
	struct pl_queue *q = &pl->q[qi];
	struct rte_mbuf *drop[64];
	uint64_t bytes = 0;
	uint16_t n;

	if (pl->conf.backpressure)
		return 0;
	n = (uint16_t)rate_budget(pl, q, now, 64);
	if (n > 0)
		n = rte_eth_rx_burst(q->src.port_id, q->src.rx_queue, drop, n);
	if (n == 0)
		return 0;
	rate_take(pl, q, n);
	for (unsigned i = 0; i < n; i++)
		bytes += drop[i]->pkt_len;
	mbufs_free(drop, n);
	STAT_ADD(q->st.rx_pkts, n);
	STAT_ADD(q->st.rx_bytes, bytes);
	if (no_slot)
		STAT_ADD(q->st.drop_pipeline, n);
	else
		STAT_ADD(q->st.drop_writer, n);
	return n;
}

/* Copy chained packet m whole to dst (room for m->pkt_len). @return the
 * bytes copied: the chain walked by its own lengths, as some drivers
 * (net_pcap) give a pkt_len their segments lack. */
static uint32_t
chain_copy(uint8_t *dst, const struct rte_mbuf *m)
{
	const struct rte_mbuf *seg = m;
	uint32_t got = 0;

	for (unsigned k = 0; seg != NULL && k < m->nb_segs; k++, seg = seg->next) {
		uint32_t l = seg->data_len;

		if (l > m->pkt_len - got)
			l = m->pkt_len - got;
		memcpy(dst + got, rte_pktmbuf_mtod(seg, const void *), l);
		got += l;
	}
	return got;
}

/* Descriptors for the n packets just received at b->mbufs[first..], and
 * whether the batch's mbufs can still go back in one put (b->free_pool:
 * checked here, where their headers are in cache, not when the batch is
 * done). A chained packet is copied whole into the slot's staging area;
 * where it does not fit in what is left, the batch ends before it
 * (*used: the packets taken, the rest stay at b->mbufs[first + *used..]
 * for the next batch, whose empty staging holds it); where it can never
 * be copied whole (the CPU may not read the mbufs, or it is larger than
 * the staging), it is freed and counted in drop_chained, never recorded
 * cut. @return the packets kept, now at b->mbufs[first..]; the received
 * ones counted. */
static unsigned
rx_describe(const struct gcap_pipeline *pl, struct pl_queue *q, struct gcap_batch *b,
	    unsigned first, unsigned n, unsigned *used)
{
	uint64_t wall = now_ns(CLOCK_REALTIME), bytes = 0;
	uint32_t snap = pl->conf.snaplen ? pl->conf.snaplen : UINT32_MAX;
	/* in locals: the descriptor stores could alias the queue's fields,
	 * which the compiler would then load and store per packet */
	uint32_t seq = q->seq, rec_bytes = q->rec_bytes;
	const uint16_t port = q->src.port_index, queue = q->src.rx_queue;
	const struct gcap_rx_clock clock =
		q->src.clock ? *q->src.clock : (struct gcap_rx_clock){ 0 };
	struct rte_mempool *mp =
		first == 0 ? ((struct rte_mbuf *)b->mbufs[0])->pool : b->free_pool;
	const uint64_t ext = mp != NULL ? mbuf_ext_ok(mp) : 0;
	bool plain = mp != NULL;
	unsigned i, w = first, cut = 0;

	for (i = first; i < first + n; i++) {
		struct rte_mbuf *m = b->mbufs[i];
		struct gcap_pkt *p = &b->pkts[w];

		/* an address only: in gpu memory mode the bytes are in VRAM */
		p->addr = (uint64_t)(uintptr_t)rte_pktmbuf_mtod(m, void *);
		p->caplen = m->data_len;
		if (unlikely(m->nb_segs > 1)) {
			uint8_t *dst = b->stage + b->stage_used;

			if (!q->linearize || m->pkt_len > b->stage_size) {
				bytes += m->pkt_len;
				rte_pktmbuf_free(m);
				cut++;
				continue;
			}
			if (m->pkt_len > b->stage_size - b->stage_used)
				break; /* (stage_used > 0: the batch has packets) */
			p->addr = (uint64_t)(uintptr_t)dst;
			p->caplen = chain_copy(dst, m);
			b->stage_used += (p->caplen + 63u) & ~63u;
			if (b->stage_used > b->stage_size)
				b->stage_used = b->stage_size;
		}
		plain &= mbuf_plain(m, mp, ext);
		b->mbufs[w++] = m;
		p->wirelen = m->pkt_len;
		p->ts_ns = rx_time(&clock, m, wall);
		p->port = port;
		p->queue = queue;
		p->seq = seq++;
		rec_bytes += GCAP_REC_SIZE(p->caplen < snap ? p->caplen : snap);
		bytes += m->pkt_len;
	}
	b->free_pool = plain ? mp : NULL;
	q->seq = seq;
	q->rec_bytes = rec_bytes;
	*used = i - first;
	STAT_ADD(q->st.rx_pkts, i - first);
	STAT_ADD(q->st.rx_bytes, bytes);
	if (cut > 0)
		STAT_ADD(q->st.drop_chained, cut);
	return w - first;
}

/* Hand queue qi's open batch to the executor. */
static void
rx_submit(struct gcap_pipeline *pl, unsigned qi)
{
	const struct gcap_pipeline_conf *c = &pl->conf;
	struct pl_queue *q = &pl->q[qi];
	struct gcap_batch *b = q->cur;
	const struct gcap_xbuf *held = q->held;

	b->xbuf = gcap_pl_xbuf_bind(q, q->rec_bytes);
	if (b->xbuf == NULL) {
		/* no room for its records: the writer is behind */
		const bool stopping =
			atomic_load_explicit(&pl->stop_rx, memory_order_relaxed);

		q->xneed = q->rec_bytes;
		/* the port waits once the batch takes no more packets (until
		 * then the poll goes on filling it); the stop's drain is not
		 * the port's wait */
		if (c->backpressure && !stopping &&
		    (b->n >= c->batch_max || q->ncarry > 0) &&
		    !bp_waiting_for(q, true)) /* (no clock read then) */
			bp_wait_begin(q, true, now_ns(CLOCK_MONOTONIC));
		if (c->backpressure || stopping)
			return; /* the batch waits (and the port with it; at
				 * stop, the drain retries until its deadline) */
		mbufs_free((struct rte_mbuf **)b->mbufs, b->n);
		STAT_ADD(q->st.drop_writer, b->n);
		/* the last numbered: the executor sees every number once */
		q->seq -= b->n;
		b->n = 0;
		q->cur = NULL; /* the slot stays free: batch_get gives it again */
		return;
	}
	q->xneed = 0;
	q->cur = NULL;
	b->submit_t = now_ns(CLOCK_MONOTONIC);
	q->last_submit = b->submit_t;
	bp_wait_end(q, b->submit_t);
	if (c->ops->batch_submit(c->ex, qi, b) < 0) {
		/* cannot happen with a slot from batch_get; count, never leak */
		mbufs_free((struct rte_mbuf **)b->mbufs, b->n);
		STAT_ADD(q->st.drop_pipeline, b->n);
		gcap_pl_xbuf_unbind(q, b->xbuf, held);
		b->n = 0;
		return;
	}
	poll_gap_skip_submit(pl, q);
	q->inflight++;
}

/* Open a batch for queue qi (q->cur). @return false when no slot
 * (*no_slot) or no export buffer is free (the slot, if any, stays free). */
static bool
rx_open(struct gcap_pipeline *pl, unsigned qi, bool *no_slot)
{
	struct pl_queue *q = &pl->q[qi];
	struct gcap_batch *b = pl->conf.ops->batch_get(pl->conf.ex, qi);

	*no_slot = b == NULL;
	if (b == NULL || !xbuf_ready(q))
		return false;
	b->n = 0;
	b->stage_used = 0;
	b->free_pool = NULL;
	lat_batch_open(q, b);
	q->cur = b;
	q->rec_bytes = 0;
	return true;
}

/* The carried packets join the open batch first, as many as its staging
 * takes (the older first). @return whether some are still left: the
 * batch is full. */
static bool
rx_take_carry(const struct gcap_pipeline *pl, struct pl_queue *q, struct gcap_batch *b)
{
	unsigned n = q->ncarry, used, kept;

	if (n > pl->conf.batch_max - b->n)
		n = pl->conf.batch_max - b->n;
	memcpy((struct rte_mbuf **)b->mbufs + b->n, q->carry, n * sizeof(*q->carry));
	kept = rx_describe(pl, q, b, b->n, n, &used);
	if (kept > 0) {
		lat_arrival(b, q->carry_t, kept);
		b->n += kept;
	}
	q->ncarry -= used;
	memmove(q->carry, q->carry + used, q->ncarry * sizeof(*q->carry));
	return q->ncarry > 0;
}

/*
 * One RX poll of queue qi. @return packets received.
 *
 * Batching follows the load: the packets of a poll join the queue's open
 * batch, which goes to the executor when it is full, when nothing is in
 * flight, or when one of the executor's lanes (GPU blocks of the queue) is
 * idle and the last submission is at least a lane's share of a batch's
 * round trip old (cycle / lanes): submissions spread evenly over the
 * lanes instead of bunching behind the first (two lanes taken at once
 * finish at once, and every packet then waits a whole round trip). At
 * low load a batch is what one poll brought and waits for nothing; under
 * load it grows while the lanes are busy, so that per-batch costs
 * (doorbells, PCIe round trips) are paid for more packets. A batch whose
 * staging has no room for the next chained packet is full too: that
 * packet and those after it (the carry) start the next batch, before
 * the port is polled again.
 */
static unsigned
rx_poll(struct gcap_pipeline *pl, unsigned qi)
{
	const struct gcap_pipeline_conf *c = &pl->conf;
	struct pl_queue *q = &pl->q[qi];
	struct gcap_batch *b;
	uint64_t mono, t[GCAP_POLL_PHASES];
	unsigned want, n = 0;
	const unsigned chunk = c->rx_burst ? c->rx_burst : c->batch_max;
	const bool ph = c->poll_phases;
	bool full = false, no_slot;

	poll_phase_mark(ph, t, 0);
	gcap_pl_poll_done(pl, qi, true);
	poll_phase_mark(ph, t, GCAP_PHASE_DONE);
	/* the packets received now (and the held buffer's age, the rate's
	 * credit, the lanes' spacing) */
	mono = now_ns(CLOCK_MONOTONIC);
	if (c->busy_poll) /* (an idle lcore that sleeps makes its own gaps) */
		poll_gap_check(q, mono);
	bp_wait_flush(q, mono);
	xbuf_release_held(q, mono, false);
	if (q->cur == NULL) {
		if (!rx_open(pl, qi, &no_slot)) {
			if (c->backpressure)
				bp_wait_begin(q, !no_slot, mono);
			poll_phases_skip(q);
			return rx_drop(pl, qi, no_slot, mono);
		}
		bp_wait_end(q, mono);
	}
	b = q->cur;
	if (unlikely(q->ncarry > 0))
		full = rx_take_carry(pl, q, b);
	want = full ? 0 : rate_budget(pl, q, mono, c->batch_max - b->n);
	poll_phase_mark(ph, t, GCAP_PHASE_PREP);
	while (n < want) {
		unsigned ask = want - n < chunk ? want - n : chunk;
		uint16_t got = rte_eth_rx_burst(q->src.port_id, q->src.rx_queue,
						(struct rte_mbuf **)b->mbufs + b->n + n,
						(uint16_t)ask);

		n += got;
		if (got < ask) /* the port has no more now */
			break;
	}
	poll_phase_mark(ph, t, GCAP_PHASE_RX);
	if (c->time_order)
		order_mark(q, n == 0 && b->n == 0, want > 0, mono);
	if (n > 0) {
		unsigned used, kept;

		rate_take(pl, q, n);
		kept = rx_describe(pl, q, b, b->n, n, &used);
		if (kept > 0) {
			lat_arrival(b, mono, kept);
			b->n += kept;
		}
		if (unlikely(used < n)) {
			/* the rest wait for the next batch, in order */
			q->ncarry = n - used;
			memcpy(q->carry,
			       (struct rte_mbuf **)b->mbufs + b->n - kept + used,
			       q->ncarry * sizeof(*q->carry));
			q->carry_t = mono;
			full = true;
		}
		STAT_ADD(q->st.polls, 1);
	}
	poll_phase_mark(ph, t, GCAP_PHASE_DESCRIBE);
	if (b->n > 0 && (full || b->n >= c->batch_max || gcap_pl_submit_due(q, mono)))
		rx_submit(pl, qi);
	poll_phases_end(pl, q, ph, t);
	return n;
}

int
gcap_pl_rx_lcore_main(void *arg)
{
	struct gcap_pipeline *pl = arg;
	const struct gcap_pipeline_conf *c = &pl->conf;
	unsigned lcore = rte_lcore_id();
	unsigned mine[RTE_MAX_LCORE];
	unsigned nmine = 0, idle = 0;
	uint64_t deadline;
	struct rusage ru0;
	bool ru_ok = getrusage(RUSAGE_THREAD, &ru0) == 0;

	for (unsigned i = 0; i < c->nqueues && nmine < RTE_MAX_LCORE; i++)
		if (pl->q[i].src.lcore == lcore)
			mine[nmine++] = i;
	while (!atomic_load_explicit(&pl->stop_rx, memory_order_relaxed)) {
		unsigned got = 0;

		for (unsigned k = 0; k < nmine; k++) {
			got += rx_poll(pl, mine[k]);
			STAT_ADD(pl->q[mine[k]].beat, 1);
		}
		if (got > 0 || c->busy_poll) {
			idle = 0;
			continue;
		}
		if (++idle < IDLE_SPINS) {
			rte_pause();
		} else {
			struct timespec ts = { 0, IDLE_SLEEP_NS };

			nanosleep(&ts, NULL);
		}
	}
	/* drain: what was received is submitted, whatever the batch's size
	 * (a batch may wait for the writer's room here), and
	 * what was submitted completes (bounded: a faulted executor never
	 * completes; the main thread then stops it) */
	const uint64_t drain_t0 = now_ns(CLOCK_MONOTONIC);

	for (unsigned k = 0; k < nmine; k++) /* the ports are polled no more */
		bp_wait_end(&pl->q[mine[k]], drain_t0);
	deadline = drain_t0 + 2000000000u;
	for (;;) {
		uint64_t left = 0;

		for (unsigned k = 0; k < nmine; k++) {
			struct pl_queue *q = &pl->q[mine[k]];
			bool no_slot;

			if (q->ncarry > 0 &&
			    (q->cur != NULL || rx_open(pl, mine[k], &no_slot)))
				(void)rx_take_carry(pl, q, q->cur);
			if (q->cur != NULL && q->cur->n > 0)
				rx_submit(pl, mine[k]);
			gcap_pl_poll_done(pl, mine[k], true);
			/* the port is polled no more: a queue with nothing on
			 * its way stays quiet, so that the merge does not wait
			 * the window for it */
			if (c->time_order)
				order_mark(q, q->cur == NULL || q->cur->n == 0, true,
					   now_ns(CLOCK_MONOTONIC));
			left += q->inflight + (q->cur != NULL && q->cur->n > 0) +
				q->ncarry;
		}
		if (left == 0)
			break;
		/* until the stop's own mark, once it has set one (a batch may
		 * wait for the writer's room as long as the writer has to
		 * write what it holds), else its own 2 s */
		uint64_t by = atomic_load_explicit(&pl->drain_by, memory_order_relaxed);

		if (now_ns(CLOCK_MONOTONIC) > (by != 0 ? by : deadline))
			break;
		rte_pause();
	}
	for (unsigned k = 0; k < nmine; k++) {
		struct pl_queue *q = &pl->q[mine[k]];

		xbuf_release_held(q, 0, true);
		if (q->cur != NULL && q->cur->n > 0) {
			/* the writer never made room: count, never leak */
			mbufs_free((struct rte_mbuf **)q->cur->mbufs, q->cur->n);
			STAT_ADD(q->st.drop_writer, q->cur->n);
			q->seq -= q->cur->n;
			q->cur->n = 0;
		}
		if (q->ncarry > 0) {
			/* no batch slot came for them: count, never leak */
			uint64_t bytes = 0;

			for (unsigned i = 0; i < q->ncarry; i++)
				bytes += q->carry[i]->pkt_len;
			mbufs_free(q->carry, q->ncarry);
			STAT_ADD(q->st.rx_pkts, q->ncarry);
			STAT_ADD(q->st.rx_bytes, bytes);
			STAT_ADD(q->st.drop_pipeline, q->ncarry);
			q->ncarry = 0;
		}
		/* all it will hand over is with the writer (release: after
		 * the held buffer) */
		atomic_store_explicit(&q->quiet_at, UINT64_MAX, memory_order_release);
	}
	if (ru_ok && nmine > 0)
		gcap_pl_lcore_usage(&pl->q[mine[0]].st, &ru0);
	/* everything this lcore wrote happens before the main thread's
	 * gcap_pl_rx_lcores_join() (its own ordering, not the EAL's) */
	atomic_fetch_add_explicit(&pl->rx_exited, 1, memory_order_release);
	return 0;
}

/* Wait for every RX lcore to return, then take their writes in: the
 * acquire pairs with each lcore's release in gcap_pl_rx_lcore_main().
 * The EAL's own wait orders them too, but inside DPDK, where a race
 * detector (and a reader of this file) cannot see it. The EAL's wait has
 * no deadline: it is called once every lcore has returned. */
bool
gcap_pl_rx_lcores_join_by(struct gcap_pipeline *pl, uint64_t deadline_ns)
{
	while (atomic_load_explicit(&pl->rx_exited, memory_order_acquire) <
	       pl->nlaunched) {
		struct timespec ts = { 0, 1000000 };

		if (now_ns(CLOCK_MONOTONIC) >= deadline_ns)
			return false;
		nanosleep(&ts, NULL);
	}
	rte_eal_mp_wait_lcore();
	return true;
}

void
gcap_pl_rx_lcores_join(struct gcap_pipeline *pl)
{
	(void)gcap_pl_rx_lcores_join_by(pl, UINT64_MAX);
}
