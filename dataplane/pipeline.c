/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_pause.h>

#include "gpucap/gcap_pipeline.h"
#include "spsc.h"
#include "xarena.h"

/* Store a counter that other threads read with relaxed loads. */
#define STAT_ADD(field, n) \
	__atomic_store_n(&(field), (field) + (n), __ATOMIC_RELAXED)

/* Longest a live queue keeps a finished batch's export buffer for the
 * next batches' records (at low load one batch is in flight at a time:
 * the next grows the same region, and the writer is not woken per
 * batch). */
#define XBUF_HOLD_NS 1000000u

/* Polls without a packet before an idle queue sleeps (unless busy_poll). */
#define IDLE_SPINS 2048u
#define IDLE_SLEEP_NS 20000L

struct pl_queue {
	struct gcap_queue_stats st;
	struct gcap_spsc full; /* xbufs of consumed batches, to the writer */
	struct gcap_spsc free; /* xbufs written, back from the writer */
	struct gcap_xbuf *xbufs;    /* descriptors; their memory is xa's */
	unsigned nxbufs;
	struct gcap_xarena xa;      /* the queue's export memory */
	uint64_t *xend;             /* per xbuf: its region's end in xa, 0: none */
	uint64_t *xstart;           /* per xbuf: xa's head when it was taken */
	uint32_t xneed;             /* record bytes a batch found no room for */
	struct gcap_xbuf *held;     /* done, kept for the next batch's records */
	uint64_t held_since;        /* when held got its first records */
	struct gcap_batch *cur;     /* slot being filled, not yet submitted */
	uint32_t rec_bytes;         /* most record bytes the open batch makes */
	struct gcap_xbuf **stash;   /* xbufs without a region, on this side */
	unsigned nstash;
	uint64_t inflight;          /* submitted, not yet consumed */
	uint32_t seq;
	unsigned lanes;             /* batches the executor works on at once */
	uint64_t last_submit;       /* when the last batch was submitted (ns) */
	uint64_t cycle_ewma;        /* submit-to-done time, moving average (ns) */
	/* "in" latency's floor (see lat_in_back): the least raw value of the
	 * last epoch and of this one, which began at in_epoch */
	int64_t in_ref, in_min;
	uint64_t in_epoch;
	double rate_vt;             /* rate limiter: when the credit was zero (ns) */
	uint64_t prev_poll;         /* the last busy poll's time (ns), 0: none yet */
	uint32_t gaps;              /* poll gaps so far (batches' gap_mark) */
	uint64_t ph_end;            /* --poll-phases: the last poll's end (TSC) */
	bool linearize;             /* the CPU may read the mbufs: copy chains whole */
	struct gcap_pipeline_queue src;
};

struct gcap_pipeline {
	struct gcap_pipeline_conf conf;
	struct pl_queue *q;
	pthread_t writer;
	bool writer_started;
	bool lcores_started;
	atomic_int stop_rx;       /* sources must stop */
	atomic_uint rx_exited;    /* RX lcores that have returned (release) */
	atomic_int producers_done; /* no more xbufs will be pushed */
	atomic_int finished;      /* the pipeline wants to stop by itself */
	atomic_uint_fast64_t written;
	/* --poll-phases: ns = cycles * ph_mult >> 20; long span in cycles */
	uint64_t ph_mult, ph_long;
	int64_t real_off;         /* CLOCK_REALTIME - CLOCK_MONOTONIC (ns) */
	int error;                /* first error (negative errno) */
	char errmsg[GCAP_ERRBUF_SIZE];
	pthread_mutex_t err_lock; /* only on error paths, never per packet */
};

static uint64_t
now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void
pl_set_error(struct gcap_pipeline *pl, int err, const char *msg)
{
	pthread_mutex_lock(&pl->err_lock);
	if (pl->error == 0) {
		pl->error = err;
		snprintf(pl->errmsg, sizeof(pl->errmsg), "%s", msg);
	}
	pthread_mutex_unlock(&pl->err_lock);
	atomic_store(&pl->finished, 1);
}

/* The executor's export buffers of q, back to back, become one memory
 * that each batch takes a region of (xarena.h): their count bounds the
 * batches between submission and the writer, their memory the bytes. */
static int
xmem_init(struct pl_queue *q)
{
	uint32_t sz = q->nxbufs > 0 ? q->xbufs[0].size : 0;

	if (q->nxbufs == 0 || sz == 0)
		return -EINVAL;
	for (unsigned k = 0; k < q->nxbufs; k++)
		if (q->xbufs[k].size != sz ||
		    q->xbufs[k].data != q->xbufs[0].data + (size_t)k * sz)
			return -EINVAL;
	gcap_xarena_init(&q->xa, q->xbufs[0].data, (uint64_t)q->nxbufs * sz);
	return q->xa.cap > 0 ? 0 : -EINVAL;
}

struct gcap_pipeline *
gcap_pipeline_create(const struct gcap_pipeline_conf *conf, char *errbuf)
{
	struct gcap_pipeline *pl;

	if (conf->ops == NULL || conf->ex == NULL || conf->nqueues == 0 ||
	    conf->nwriters == 0 || conf->nwriters > GCAP_MAX_OUTPUTS ||
	    conf->batch_max == 0 || conf->batch_max > GCAP_BATCH_MAX) {
		gcap_err(errbuf, EINVAL, "pipeline: invalid configuration");
		errno = EINVAL;
		return NULL;
	}
	pl = calloc(1, sizeof(*pl));
	if (pl == NULL)
		goto nomem;
	pl->conf = *conf;
	pl->real_off = (int64_t)(now_ns(CLOCK_REALTIME) -
				 now_ns(CLOCK_MONOTONIC));
	pthread_mutex_init(&pl->err_lock, NULL);
	if (posix_memalign((void **)&pl->q, 64, conf->nqueues * sizeof(*pl->q)) != 0) {
		pl->q = NULL;
		goto nomem;
	}
	memset(pl->q, 0, conf->nqueues * sizeof(*pl->q));
	for (unsigned i = 0; i < conf->nqueues; i++) {
		struct pl_queue *q = &pl->q[i];
		uint32_t ring = 1;

		q->nxbufs = conf->ops->xbufs(conf->ex, i, &q->xbufs);
		if (xmem_init(q) < 0) {
			gcap_err(errbuf, EINVAL, "pipeline: the export buffers "
				 "of queue %u do not lie back to back", i);
			gcap_pipeline_destroy(pl);
			errno = EINVAL;
			return NULL;
		}
		while (ring < q->nxbufs)
			ring <<= 1;
		q->stash = calloc(q->nxbufs, sizeof(*q->stash));
		q->xend = calloc(q->nxbufs, sizeof(*q->xend));
		q->xstart = calloc(q->nxbufs, sizeof(*q->xstart));
		if (q->stash == NULL || q->xend == NULL || q->xstart == NULL ||
		    gcap_spsc_init(&q->full, ring) < 0 ||
		    gcap_spsc_init(&q->free, ring) < 0)
			goto nomem;
		for (unsigned k = 0; k < q->nxbufs; k++)
			q->stash[q->nstash++] = &q->xbufs[k];
		if (conf->queues != NULL)
			q->src = conf->queues[i];
		q->lanes = conf->ops->lanes ? conf->ops->lanes(conf->ex, i) : 1;
		q->linearize = conf->ops->cpu_reads == NULL ||
			       conf->ops->cpu_reads(conf->ex, i);
		if (q->lanes == 0)
			q->lanes = 1;
	}
	return pl;
nomem:
	gcap_pipeline_destroy(pl);
	gcap_err(errbuf, ENOMEM, "pipeline: out of memory");
	errno = ENOMEM;
	return NULL;
}

int
gcap_pipeline_xmem_size(unsigned ring_size, unsigned batch_max,
			uint32_t max_caplen, uint32_t stage,
			unsigned *nxbufs, uint32_t *xbuf_size)
{
	uint64_t batch_bytes, mem, n, each;

	if (ring_size == 0 || batch_max == 0)
		return -EINVAL;
	batch_bytes = (uint64_t)batch_max * GCAP_REC_SIZE(max_caplen) + stage;
	mem = (uint64_t)ring_size * 2 * batch_bytes;
	n = (uint64_t)ring_size * GCAP_PIPELINE_XBUFS_PER_SLOT;
	if (n > 65535)
		n = 65535;
	if (n > mem / 64)
		n = mem / 64;
	if (n == 0)
		n = 1;
	each = (mem / n) & ~(uint64_t)63;
	if (each > UINT32_MAX)
		return -E2BIG;
	*nxbufs = (unsigned)n;
	*xbuf_size = (uint32_t)each;
	return 0;
}

void
gcap_pipeline_destroy(struct gcap_pipeline *pl)
{
	if (pl == NULL)
		return;
	for (unsigned i = 0; pl->q != NULL && i < pl->conf.nqueues; i++) {
		gcap_spsc_fini(&pl->q[i].full);
		gcap_spsc_fini(&pl->q[i].free);
		free(pl->q[i].stash);
		free(pl->q[i].xend);
		free(pl->q[i].xstart);
	}
	free(pl->q);
	pthread_mutex_destroy(&pl->err_lock);
	free(pl);
}

/* ---------------------------------------------------------------- writer */

/* Write one export buffer's records to the outputs they name. */
static int
write_xbuf(struct gcap_pipeline *pl, const struct gcap_xbuf *xb)
{
	const struct gcap_pipeline_conf *c = &pl->conf;
	const uint64_t outs = c->nwriters >= 64 ? UINT64_MAX :
			      (UINT64_C(1) << c->nwriters) - 1;
	const uint8_t *data;
	struct gcap_rec rec;
	uint32_t off = 0;

	for (uint32_t i = 0; i < xb->nrec; i++) {
		uint64_t m;

		if (gcap_rec_step(xb->data, xb->len, &off, &rec, &data) <= 0)
			return -EINVAL;
		if (c->max_packets != 0 &&
		    atomic_load_explicit(&pl->written, memory_order_relaxed) >= c->max_packets)
			return 1;
		m = rec.outmask & outs;
		if (m == 0)
			continue; /* a kernel's GCAP_OUTPUT(i) past the outputs */
		for (; m != 0; m &= m - 1) {
			struct gcap_writer *w = c->writers[__builtin_ctzll(m)];
			int r = gcap_writer_write(w, &rec, data);

			if (r < 0 && r != -ECANCELED)
				pl_set_error(pl, r, gcap_writer_errmsg(w));
			if (r < 0)
				return r;
		}
		atomic_fetch_add_explicit(&pl->written, 1, memory_order_relaxed);
	}
	if (c->max_packets != 0 &&
	    atomic_load_explicit(&pl->written, memory_order_relaxed) >= c->max_packets)
		return 1;
	return 0;
}

static void *
writer_main(void *arg)
{
	struct gcap_pipeline *pl = arg;
	const struct gcap_pipeline_conf *c = &pl->conf;
	uint64_t last_flush = now_ns(CLOCK_MONOTONIC);
	uint64_t flush_ns = (uint64_t)(c->flush_ms ? c->flush_ms : 1000) * 1000000u;
	bool stopped = false; /* outputs are done: consume without writing */

	for (;;) {
		bool any = false;
		bool done = atomic_load(&pl->producers_done);
		uint64_t now;

		for (unsigned i = 0; i < c->nqueues; i++) {
			struct pl_queue *q = &pl->q[i];
			struct gcap_xbuf *xb;

			while ((xb = gcap_spsc_pop(&q->full)) != NULL) {
				any = true;
				if (!stopped) {
					int r = write_xbuf(pl, xb);

					if (r == 1) {
						stopped = true; /* -c reached */
						atomic_store(&pl->finished, 1);
					} else if (r == -ECANCELED) {
						stopped = true; /* -W with -G: last file done */
						atomic_store(&pl->finished, 1);
					} else if (r < 0) {
						/* the writer's message is set already */
						pl_set_error(pl, r, strerror(-r));
						stopped = true;
					}
				}
				xb->len = 0;
				xb->nrec = 0;
				gcap_spsc_push(&q->free, xb);
			}
		}
		now = now_ns(CLOCK_MONOTONIC);
		if (!stopped && now - last_flush >= flush_ns) {
			uint64_t wall = now_ns(CLOCK_REALTIME);

			for (unsigned j = 0; j < c->nwriters; j++) {
				int r = gcap_writer_tick(c->writers[j], wall);

				if (r == 0)
					r = gcap_writer_flush(c->writers[j]);
				if (r == -ECANCELED) {
					stopped = true;
					atomic_store(&pl->finished, 1);
				} else if (r < 0) {
					pl_set_error(pl, r, gcap_writer_errmsg(c->writers[j]));
					stopped = true;
				}
			}
			last_flush = now;
		}
		if (!any) {
			if (done)
				break;
			struct timespec ts = {0, 50000};

			nanosleep(&ts, NULL);
		}
	}
	return NULL;
}

static int
writer_start(struct gcap_pipeline *pl, char *errbuf)
{
	int r = pthread_create(&pl->writer, NULL, writer_main, pl);

	if (r != 0)
		return gcap_err(errbuf, r, "cannot start the writer thread: %s", strerror(r));
	pl->writer_started = true;
	return 0;
}

static void
writer_join(struct gcap_pipeline *pl)
{
	atomic_store(&pl->producers_done, 1);
	if (pl->writer_started) {
		pthread_join(pl->writer, NULL);
		pl->writer_started = false;
	}
}

/* ------------------------------------------------------ batch completion */

/* n packets into a histogram of nb 1-us buckets (the last: overflow) */
static void
lat_record(uint64_t *hist, unsigned nb, uint64_t ns, uint32_t n)
{
	uint64_t b = ns / 1000u;

	if (b >= nb)
		b = nb - 1;
	STAT_ADD(hist[b], n);
}

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
	       RTE_MBUF_F_EXTERNAL : 0;
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

/* Poll gaps' bounds (us): gcap_queue_stats.poll_gaps[i] counts those of
 * at least poll_gap_us[i]; shorter than poll_gap_us[0] is no gap. */
static const unsigned poll_gap_us[GCAP_POLL_GAP_BUCKETS] = GCAP_POLL_GAP_US;

/* A busy poll of queue q came gap ns after the one before, and gap is at
 * least poll_gap_us[0]: count it (rare; out of line). */
static void __attribute__((cold, noinline))
poll_gap_record(struct pl_queue *q, uint64_t gap)
{
	for (unsigned i = 0; i < GCAP_POLL_GAP_BUCKETS; i++)
		if (gap >= poll_gap_us[i] * 1000ull)
			STAT_ADD(q->st.poll_gaps[i], 1);
	STAT_ADD(q->st.poll_gap_ns, gap);
	if (gap > q->st.poll_gap_max_ns)
		__atomic_store_n(&q->st.poll_gap_max_ns, gap, __ATOMIC_RELAXED);
	q->gaps++;
}

/* The queue's loop read the clock at now (busy polling): count a gap since
 * the read before. The reads are the poll's (rx_poll) and the first batch
 * found done (poll_done), so that a stall is counted before the batches
 * it delayed are consumed. */
static inline void
poll_gap_check(struct pl_queue *q, uint64_t now)
{
	if (unlikely(now - q->prev_poll >= poll_gap_us[0] * 1000ull) &&
	    q->prev_poll != 0)
		poll_gap_record(q, now - q->prev_poll);
	q->prev_poll = now;
}

/* Epoch of the "in" floor: the GPU's global timer drifts against the
 * host's clock (H200: about 1.8 us a second), far less than this. */
#define IN_EPOCH_NS 100000000u

/* The doorbells' parts of a batch's cycle. "in": submit -> the executor
 * saw it, beyond the quickest such time of the last 0.1-0.2 s; measured
 * across two clocks (the GPU's global timer, the host's real time) whose
 * offset and slow drift the floor takes out. "back": the rest of the
 * cycle outside the executor (the quickest "in", DONE crossing back, the
 * lcore noticing it). */
static void
lat_in_back(const struct gcap_pipeline *pl, struct pl_queue *q,
	    const struct gcap_batch *b, uint64_t cyc)
{
	int64_t raw = (int64_t)(b->res->start_ns -
				(b->submit_t + (uint64_t)pl->real_off));
	int64_t in, back;

	if (q->in_epoch == 0 || b->submit_t - q->in_epoch > IN_EPOCH_NS) {
		q->in_ref = q->in_epoch == 0 ? raw : q->in_min;
		q->in_min = raw;
		q->in_epoch = b->submit_t;
	} else if (raw < q->in_min) {
		q->in_min = raw;
	}
	in = raw - (q->in_min < q->in_ref ? q->in_min : q->in_ref);
	back = (int64_t)cyc - in - (int64_t)b->res->exec_ns;

	lat_record(q->st.lat_in, GCAP_LAT_PART_BUCKETS,
		   in > 0 ? (uint64_t)in : 0, b->n);
	lat_record(q->st.lat_back, GCAP_LAT_PART_BUCKETS,
		   back > 0 ? (uint64_t)back : 0, b->n);
}

/* The xbufs the writer is done with: their regions come back (the writer
 * returns them in the order they were taken), they wait in the stash. */
static void
xbufs_reclaim(struct pl_queue *q)
{
	struct gcap_xbuf *xb;

	while ((xb = gcap_spsc_pop(&q->free)) != NULL) {
		uint64_t *end = &q->xend[xb - q->xbufs];

		if (*end != 0)
			gcap_xarena_release(&q->xa, *end);
		*end = 0;
		q->stash[q->nstash++] = xb;
	}
}

/* An xbuf whose batch is done: to the writer; but one without records
 * whose region is the oldest out comes back at once (most batches under
 * a selective filter: the writer would only hand it back, and the two
 * rings' cache lines would cross between the cores per batch). */
static void
xbuf_retire(struct pl_queue *q, struct gcap_xbuf *xb)
{
	size_t i = (size_t)(xb - q->xbufs);

	if (xb->nrec == 0) {
		if (q->xstart[i] != q->xa.tail)
			xbufs_reclaim(q); /* older ones may be back */
		if (q->xstart[i] == q->xa.tail) {
			gcap_xarena_release(&q->xa, q->xend[i]);
			q->xend[i] = 0;
			q->stash[q->nstash++] = xb;
			return;
		}
	}
	/* the full ring holds every xbuf of the queue: cannot fail */
	gcap_spsc_push(&q->full, xb);
}

/* Retire queue q's held xbuf: with force, or when it has records older
 * than XBUF_HOLD_NS. */
static void
xbuf_release_held(struct pl_queue *q, uint64_t now, bool force)
{
	if (q->held == NULL ||
	    (!force && (q->held->nrec == 0 || now - q->held_since < XBUF_HOLD_NS)))
		return;
	xbuf_retire(q, q->held);
	q->held = NULL;
}

/* A free xbuf, and room for the records of the last batch that found
 * none (the writer is behind until then). */
static bool
xbuf_room(const struct pl_queue *q)
{
	return q->nstash > 0 && (q->xneed == 0 ||
	       gcap_xarena_place(&q->xa, q->xneed) != UINT64_MAX);
}

/* Whether queue q can open a batch: a held xbuf, or xbuf_room() (after
 * taking back what the writer is done with, if it takes that). */
static bool
xbuf_ready(struct pl_queue *q)
{
	if (q->held != NULL || xbuf_room(q))
		return true;
	xbufs_reclaim(q);
	return xbuf_room(q);
}

/* An xbuf with a region of need bytes for one batch's records, or NULL
 * (no xbuf, or no room: the writer is behind). */
static struct gcap_xbuf *
xbuf_bind(struct pl_queue *q, uint32_t need)
{
	struct gcap_xbuf *xb;
	uint64_t start, end;
	uint8_t *p = NULL;

	if ((xb = q->held) != NULL) {
		/* grow the held region in place if it can, else it goes to
		 * the writer before any region is taken after it */
		uint64_t *e = &q->xend[xb - q->xbufs];
		uint64_t grown = (uint64_t)xb->size + need <= UINT32_MAX - 64 ?
				 gcap_xarena_extend(&q->xa, *e, need) : 0;

		q->held = NULL;
		if (grown != 0) {
			xb->size += (uint32_t)(grown - *e);
			*e = grown;
			return xb;
		}
		xbuf_retire(q, xb);
	}
	start = q->xa.head;
	if (q->nstash > 0)
		p = gcap_xarena_take(&q->xa, need, &end);
	if (p == NULL) {
		xbufs_reclaim(q);
		start = q->xa.head;
		if (q->nstash == 0 ||
		    (p = gcap_xarena_take(&q->xa, need, &end)) == NULL)
			return NULL;
	}
	xb = q->stash[--q->nstash];
	xb->data = p;
	xb->size = need;
	xb->len = 0;
	xb->nrec = 0;
	q->xend[xb - q->xbufs] = end;
	q->xstart[xb - q->xbufs] = start;
	return xb;
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
	{
		uint32_t from = 0;

		if (live) {
			uint64_t cyc = now - b->submit_t;

			STAT_ADD(q->st.cycle_ns, cyc);
			q->cycle_ewma = q->cycle_ewma ?
					(q->cycle_ewma * 7 + cyc) / 8 : cyc;
			lat_record(q->st.lat_cycle, GCAP_LAT_PART_BUCKETS,
				   cyc, b->n);
			lat_record(q->st.lat_exec, GCAP_LAT_PART_BUCKETS,
				   res->exec_ns, b->n);
			if (res->start_ns != 0)
				lat_in_back(pl, q, b, cyc);
		}
		bool no_gap = live && b->gap_mark == q->gaps;

		/* each poll's packets with their own arrival time (the last
		 * entry ends at b->n) */
		for (unsigned i = 0; i < b->nbursts; i++) {
			lat_record(q->st.lat, GCAP_LAT_BUCKETS,
				   now - b->burst_t[i], b->burst_end[i] - from);
			if (no_gap)
				lat_record(q->st.lat_no_gap, GCAP_LAT_BUCKETS,
					   now - b->burst_t[i], b->burst_end[i] - from);
			from = b->burst_end[i];
		}
	}
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
			 * the writer, or here (xbuf_retire) */
			xbuf_retire(q, xb);
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
static unsigned
poll_done(struct gcap_pipeline *pl, unsigned qi, bool live)
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

/* ------------------------------------------------------------ live (RX) */

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

/* Descriptors for the n packets just received at b->mbufs[first..], and
 * whether the batch's mbufs can still go back in one put (b->free_pool:
 * checked here, where their headers are in cache, not when the batch is
 * done). */
static uint64_t
rx_describe(const struct gcap_pipeline *pl, struct pl_queue *q,
	    struct gcap_batch *b, unsigned first, unsigned n)
{
	uint64_t wall = now_ns(CLOCK_REALTIME), bytes = 0;
	uint32_t snap = pl->conf.snaplen ? pl->conf.snaplen : UINT32_MAX;
	/* in locals: the descriptor stores could alias the queue's fields,
	 * which the compiler would then load and store per packet */
	uint32_t seq = q->seq, rec_bytes = q->rec_bytes;
	const uint16_t port = q->src.port_index, queue = q->src.rx_queue;
	struct rte_mempool *mp = first == 0 ?
		((struct rte_mbuf *)b->mbufs[0])->pool : b->free_pool;
	const uint64_t ext = mp != NULL ? mbuf_ext_ok(mp) : 0;
	bool plain = mp != NULL;

	for (unsigned i = first; i < first + n; i++) {
		struct rte_mbuf *m = b->mbufs[i];
		struct gcap_pkt *p = &b->pkts[i];

		plain &= mbuf_plain(m, mp, ext);

		/* an address only: in gpu memory mode the bytes are in VRAM */
		p->addr = (uint64_t)(uintptr_t)rte_pktmbuf_mtod(m, void *);
		p->caplen = m->data_len;
		if (unlikely(m->nb_segs > 1) && q->linearize &&
		    m->pkt_len <= b->stage_size - b->stage_used) {
			/* a chained (jumbo) packet: one copy into the slot's
			 * staging area so that the executor sees it whole */
			uint8_t *dst = b->stage + b->stage_used;
			uint32_t got = 0;
			const struct rte_mbuf *seg = m;

			/* walk the chain by its own lengths: some drivers
			 * (net_pcap) give a pkt_len their segments lack */
			for (unsigned k = 0; seg != NULL && k < m->nb_segs; k++, seg = seg->next) {
				uint32_t l = seg->data_len;

				if (l > m->pkt_len - got)
					l = m->pkt_len - got;
				memcpy(dst + got, rte_pktmbuf_mtod(seg, const void *), l);
				got += l;
			}
			p->addr = (uint64_t)(uintptr_t)dst;
			p->caplen = got;
			b->stage_used += (got + 63u) & ~63u;
			if (b->stage_used > b->stage_size)
				b->stage_used = b->stage_size;
		}
		p->wirelen = m->pkt_len;
		p->ts_ns = wall;
		p->port = port;
		p->queue = queue;
		p->seq = seq++;
		rec_bytes += GCAP_REC_SIZE(p->caplen < snap ? p->caplen : snap);
		bytes += m->pkt_len;
	}
	b->free_pool = plain ? mp : NULL;
	q->seq = seq;
	q->rec_bytes = rec_bytes;
	return bytes;
}

/* Merge a batch's arrival times in pairs: entry k takes entries 2k and
 * 2k + 1 (the earlier time, the later end). */
static void
bursts_halve(struct gcap_batch *b)
{
	unsigned k;

	for (k = 0; 2 * k + 1 < b->nbursts; k++) {
		b->burst_t[k] = b->burst_t[2 * k];
		b->burst_end[k] = b->burst_end[2 * k + 1];
	}
	b->nbursts = (uint16_t)k;
}

/* Hand queue qi's open batch to the executor. */
static void
rx_submit(struct gcap_pipeline *pl, unsigned qi)
{
	const struct gcap_pipeline_conf *c = &pl->conf;
	struct pl_queue *q = &pl->q[qi];
	struct gcap_batch *b = q->cur;
	const struct gcap_xbuf *held = q->held;

	b->xbuf = xbuf_bind(q, q->rec_bytes);
	if (b->xbuf == NULL) {
		/* no room for its records: the writer is behind */
		q->xneed = q->rec_bytes;
		if (c->backpressure ||
		    atomic_load_explicit(&pl->stop_rx, memory_order_relaxed))
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
	if (c->ops->batch_submit(c->ex, qi, b) < 0) {
		/* cannot happen with a slot from batch_get; count, never leak
		 * (the region is the newest: a fresh one goes back at once, a
		 * grown one is held again, larger) */
		uint64_t *end = &q->xend[b->xbuf - q->xbufs];

		mbufs_free((struct rte_mbuf **)b->mbufs, b->n);
		STAT_ADD(q->st.drop_pipeline, b->n);
		if (b->xbuf == held) {
			q->held = b->xbuf;
		} else {
			gcap_xarena_untake(&q->xa, *end, b->xbuf->size);
			*end = 0;
			q->stash[q->nstash++] = b->xbuf;
		}
		b->n = 0;
		return;
	}
	if (c->ops->submit_works && c->busy_poll && q->prev_poll != 0)
		/* the cpu executor filtered the batch just now: the lcore's
		 * own work, not a pause of its polling (a batch of 256 takes
		 * it 5 us or more, which would count as a gap every poll) */
		q->prev_poll += now_ns(CLOCK_MONOTONIC) - q->last_submit;
	q->inflight++;
}

/* The open batch of q is due: nothing in flight, or a lane idle and the
 * last submission a lane's share of a round trip old (see rx_poll). */
static inline bool
submit_due(const struct pl_queue *q, uint64_t now)
{
	return q->inflight == 0 ||
	       (q->inflight < q->lanes &&
		now - q->last_submit >= q->cycle_ewma / q->lanes);
}

/* --poll-phases: account one poll's phases, t[0] its start and t[k + 1]
 * the end of phase k + 1 (GCAP_PHASE_DONE..SUBMIT); GCAP_PHASE_LOOP runs
 * from the queue's last poll's end. */
static void
phases_record(const struct gcap_pipeline *pl, struct pl_queue *q,
	      const uint64_t *t)
{
	for (unsigned i = 0; i < GCAP_POLL_PHASES; i++) {
		uint64_t d;

		if (i == GCAP_PHASE_LOOP) {
			if (q->ph_end == 0)
				continue;
			d = t[0] - q->ph_end;
		} else {
			d = t[i] - t[i - 1];
		}
		STAT_ADD(q->st.phase_ns[i], d * pl->ph_mult >> 20);
		if (unlikely(d >= pl->ph_long))
			STAT_ADD(q->st.phase_long[i], 1);
	}
	q->ph_end = t[GCAP_POLL_PHASES - 1];
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
 * (doorbells, PCIe round trips) are paid for more packets.
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

	if (ph)
		t[0] = rte_rdtsc();
	poll_done(pl, qi, true);
	if (ph)
		t[GCAP_PHASE_DONE] = rte_rdtsc();
	/* the packets received now (and the held buffer's age, the rate's
	 * credit, the lanes' spacing) */
	mono = now_ns(CLOCK_MONOTONIC);
	if (c->busy_poll) /* (an idle lcore that sleeps makes its own gaps) */
		poll_gap_check(q, mono);
	xbuf_release_held(q, mono, false);
	if (q->cur == NULL) {
		b = c->ops->batch_get(c->ex, qi);
		if (b == NULL || !xbuf_ready(q)) {
			q->ph_end = 0; /* a dropping poll is not timed */
			return rx_drop(pl, qi, b == NULL, mono);
		}
		b->n = 0;
		b->stage_used = 0;
		b->nbursts = 0;
		b->free_pool = NULL;
		b->gap_mark = q->gaps;
		q->cur = b;
		q->rec_bytes = 0;
	}
	b = q->cur;
	want = rate_budget(pl, q, mono, c->batch_max - b->n);
	if (ph)
		t[GCAP_PHASE_PREP] = rte_rdtsc();
	while (n < want) {
		unsigned ask = want - n < chunk ? want - n : chunk;
		uint16_t got = rte_eth_rx_burst(q->src.port_id, q->src.rx_queue,
						(struct rte_mbuf **)b->mbufs + b->n + n,
						(uint16_t)ask);

		n += got;
		if (got < ask) /* the port has no more now */
			break;
	}
	if (ph)
		t[GCAP_PHASE_RX] = rte_rdtsc();
	if (n > 0) {
		uint64_t bytes;

		/* a new arrival time where it differs from the last kept by
		 * the grain; with every entry spent, pairs merge (each keeps
		 * its earlier time: latencies stay upper bounds, off by at
		 * most the merged span) so the whole batch stays covered */
		if (b->nbursts == 0 ||
		    mono - b->burst_t[b->nbursts - 1] >= GCAP_BURST_GRAIN_NS) {
			if (b->nbursts == GCAP_BATCH_BURSTS)
				bursts_halve(b);
			b->burst_t[b->nbursts++] = mono;
		}
		b->burst_end[b->nbursts - 1] = (uint16_t)(b->n + n);
		rate_take(pl, q, n);
		bytes = rx_describe(pl, q, b, b->n, n);
		b->n += n;
		STAT_ADD(q->st.polls, 1);
		STAT_ADD(q->st.rx_pkts, n);
		STAT_ADD(q->st.rx_bytes, bytes);
	}
	if (ph)
		t[GCAP_PHASE_DESCRIBE] = rte_rdtsc();
	if (b->n > 0 && (b->n >= c->batch_max || submit_due(q, mono)))
		rx_submit(pl, qi);
	if (ph) {
		t[GCAP_PHASE_SUBMIT] = rte_rdtsc();
		phases_record(pl, q, t);
	}
	return n;
}

static int
rx_lcore_main(void *arg)
{
	struct gcap_pipeline *pl = arg;
	const struct gcap_pipeline_conf *c = &pl->conf;
	unsigned lcore = rte_lcore_id();
	unsigned mine[RTE_MAX_LCORE];
	unsigned nmine = 0, idle = 0;
	uint64_t deadline;
	struct rusage ru0, ru1;
	bool ru_ok = getrusage(RUSAGE_THREAD, &ru0) == 0;

	for (unsigned i = 0; i < c->nqueues && nmine < RTE_MAX_LCORE; i++)
		if (pl->q[i].src.lcore == lcore)
			mine[nmine++] = i;
	while (!atomic_load_explicit(&pl->stop_rx, memory_order_relaxed)) {
		unsigned got = 0;

		for (unsigned k = 0; k < nmine; k++)
			got += rx_poll(pl, mine[k]);
		if (got > 0 || c->busy_poll) {
			idle = 0;
			continue;
		}
		if (++idle < IDLE_SPINS) {
			rte_pause();
		} else {
			struct timespec ts = {0, IDLE_SLEEP_NS};

			nanosleep(&ts, NULL);
		}
	}
	/* drain: what was received is submitted, whatever the batch's size
	 * (a batch may wait for the writer's room here), and
	 * what was submitted completes (bounded: a faulted executor never
	 * completes; the main thread then stops it) */
	deadline = now_ns(CLOCK_MONOTONIC) + 2000000000u;
	for (;;) {
		uint64_t left = 0;

		for (unsigned k = 0; k < nmine; k++) {
			struct pl_queue *q = &pl->q[mine[k]];

			if (q->cur != NULL && q->cur->n > 0)
				rx_submit(pl, mine[k]);
			poll_done(pl, mine[k], true);
			left += q->inflight + (q->cur != NULL && q->cur->n > 0);
		}
		if (left == 0 || now_ns(CLOCK_MONOTONIC) > deadline)
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
	}
	if (ru_ok && nmine > 0 && getrusage(RUSAGE_THREAD, &ru1) == 0) {
		struct gcap_queue_stats *st = &pl->q[mine[0]].st;

		STAT_ADD(st->lcore_minflt, (uint64_t)(ru1.ru_minflt - ru0.ru_minflt));
		STAT_ADD(st->lcore_majflt, (uint64_t)(ru1.ru_majflt - ru0.ru_majflt));
		STAT_ADD(st->lcore_nvcsw, (uint64_t)(ru1.ru_nvcsw - ru0.ru_nvcsw));
		STAT_ADD(st->lcore_nivcsw, (uint64_t)(ru1.ru_nivcsw - ru0.ru_nivcsw));
	}
	/* everything this lcore wrote happens before the main thread's
	 * rx_lcores_join() (its own ordering, not the EAL's) */
	atomic_fetch_add_explicit(&pl->rx_exited, 1, memory_order_release);
	return 0;
}

/* Wait for every RX lcore to return, then take their writes in: the
 * acquire pairs with each lcore's release in rx_lcore_main(). The EAL's
 * own wait orders them too, but inside DPDK, where a race detector (and a
 * reader of this file) cannot see it. */
static void
rx_lcores_join(struct gcap_pipeline *pl)
{
	rte_eal_mp_wait_lcore();
	(void)atomic_load_explicit(&pl->rx_exited, memory_order_acquire);
}

int
gcap_pipeline_start(struct gcap_pipeline *pl, char *errbuf)
{
	const struct gcap_pipeline_conf *c = &pl->conf;
	bool launched[RTE_MAX_LCORE] = {false};
	int r;

	if (c->queues == NULL)
		return gcap_err(errbuf, EINVAL, "pipeline: no live sources");
	if (c->poll_phases) {
		uint64_t hz = rte_get_tsc_hz();

		if (hz == 0)
			return gcap_err(errbuf, ENOTSUP, "--poll-phases: the TSC "
					"rate is unknown");
		pl->ph_mult = (1000000000ull << 20) / hz;
		pl->ph_long = hz / 1000000u * GCAP_POLL_PHASE_LONG_US;
	}
	r = writer_start(pl, errbuf);
	if (r < 0)
		return r;
	for (unsigned i = 0; i < c->nqueues; i++) {
		unsigned lc = pl->q[i].src.lcore;

		if (lc >= RTE_MAX_LCORE || launched[lc])
			continue;
		r = rte_eal_remote_launch(rx_lcore_main, pl, lc);
		if (r != 0) {
			atomic_store(&pl->stop_rx, 1);
			rx_lcores_join(pl);
			writer_join(pl);
			return gcap_err(errbuf, EBUSY, "cannot launch RX on lcore %u: %s",
					lc, strerror(-r));
		}
		launched[lc] = true;
	}
	pl->lcores_started = true;
	return 0;
}

/* ------------------------------------------------------------- offline */

/* File mode waits for the executor or the writer: -ECANCELED once the
 * outputs are done (-c), -EIO if the executor failed, else 0 after a
 * moment. */
static int
file_wait(struct gcap_pipeline *pl)
{
	struct timespec ts = {0, 20000};

	if (atomic_load(&pl->finished))
		return -ECANCELED;
	if (pl->conf.ops->health(pl->conf.ex, NULL) < 0)
		return -EIO;
	nanosleep(&ts, NULL);
	return 0;
}

static int
file_submit(struct gcap_pipeline *pl, struct pl_queue *q)
{
	struct gcap_batch *b = q->cur;
	int r;

	if (b == NULL || b->n == 0) {
		q->cur = NULL;
		return 0;
	}
	if (q->rec_bytes > q->xa.cap)
		return -E2BIG; /* export memory smaller than one batch's records */
	/* wait (never drop) for the writer's room; a stop waits too: what
	 * was read is written */
	while ((b->xbuf = xbuf_bind(q, q->rec_bytes)) == NULL) {
		poll_done(pl, 0, false);
		if ((r = file_wait(pl)) < 0)
			return r;
	}
	q->cur = NULL;
	/* the file's packets count from their submission */
	b->burst_t[0] = now_ns(CLOCK_MONOTONIC);
	b->burst_end[0] = (uint16_t)b->n;
	b->nbursts = 1;
	r = pl->conf.ops->batch_submit(pl->conf.ex, 0, b);
	if (r < 0)
		return r;
	q->inflight++;
	return 0;
}

/* Wait (never drop) for a free slot and export buffer for queue 0. */
static int
file_acquire(struct gcap_pipeline *pl, struct pl_queue *q)
{
	const struct gcap_exec_ops *ops = pl->conf.ops;

	for (;;) {
		int r;

		poll_done(pl, 0, false);
		if (q->cur == NULL)
			q->cur = ops->batch_get(pl->conf.ex, 0);
		if (q->cur != NULL && xbuf_ready(q)) {
			q->cur->n = 0;
			q->cur->stage_used = 0;
			q->cur->nbursts = 0;
			q->rec_bytes = 0;
			return 0;
		}
		if (atomic_load(&pl->stop_rx))
			return -ECANCELED;
		if ((r = file_wait(pl)) < 0)
			return r;
	}
}

int
gcap_pipeline_run_file(struct gcap_pipeline *pl, pcap_t *p, char *errbuf)
{
	const struct gcap_pipeline_conf *c = &pl->conf;
	struct pl_queue *q = &pl->q[0];
	struct pcap_pkthdr *h;
	const u_char *data;
	bool nano = pcap_get_tstamp_precision(p) == PCAP_TSTAMP_PRECISION_NANO;
	const uint32_t snap = c->snaplen ? c->snaplen : UINT32_MAX;
	int r = 0, rd;
	char msg[GCAP_ERRBUF_SIZE] = "";

	r = writer_start(pl, errbuf);
	if (r < 0)
		return r;
	for (;;) {
		struct gcap_batch *b;
		struct gcap_pkt *d;

		if (atomic_load(&pl->finished) || atomic_load(&pl->stop_rx))
			break;
		if (q->cur == NULL && (r = file_acquire(pl, q)) < 0) {
			r = r == -ECANCELED ? 0 : r;
			break;
		}
		rd = pcap_next_ex(p, &h, &data);
		if (rd == PCAP_ERROR_BREAK)
			break;
		if (rd < 0) {
			snprintf(msg, sizeof(msg), "%s", pcap_geterr(p));
			r = -EIO;
			break;
		}
		if (rd == 0)
			continue;
		b = q->cur;
		if (h->caplen > b->stage_size - b->stage_used ||
		    b->n == c->batch_max) {
			if ((r = file_submit(pl, q)) < 0 ||
			    (r = file_acquire(pl, q)) < 0) {
				r = r == -ECANCELED ? 0 : r;
				break;
			}
			b = q->cur;
			if (h->caplen > b->stage_size) {
				snprintf(msg, sizeof(msg),
					 "packet of %u bytes is larger than the staging buffer",
					 h->caplen);
				r = -E2BIG;
				break;
			}
		}
		d = &b->pkts[b->n++];
		memcpy(b->stage + b->stage_used, data, h->caplen);
		d->addr = (uint64_t)(uintptr_t)(b->stage + b->stage_used);
		d->caplen = h->caplen;
		d->wirelen = h->len;
		/* pcap's seconds are unsigned 32-bit; libpcap 1.10 sign-extends them */
		d->ts_ns = (uint64_t)(h->ts.tv_sec < 0 ? (uint32_t)h->ts.tv_sec : h->ts.tv_sec) * 1000000000u +
			   (uint64_t)h->ts.tv_usec * (nano ? 1u : 1000u);
		d->port = 0;
		d->queue = 0;
		d->seq = q->seq++;
		q->rec_bytes += GCAP_REC_SIZE(h->caplen < snap ? h->caplen : snap);
		b->stage_used += (h->caplen + 63u) & ~63u;
		if (b->stage_used > b->stage_size)
			b->stage_used = b->stage_size;
		STAT_ADD(q->st.rx_pkts, 1);
		STAT_ADD(q->st.rx_bytes, h->len);
	}
	if (r == 0 || r == -EIO) {
		int r2 = file_submit(pl, q);

		if (r2 < 0 && r == 0)
			r = r2;
	} else if (q->cur != NULL) {
		q->cur->n = 0;
	}
	if (r < 0 && msg[0] != '\0')
		pl_set_error(pl, r, msg);
	else if (r < 0)
		pl_set_error(pl, r, strerror(-r));
	return r < 0 ? gcap_err(errbuf, -r, "%s", pl->errmsg) : 0;
}

/* -------------------------------------------------------------- control */

void
gcap_pipeline_request_stop(struct gcap_pipeline *pl)
{
	atomic_store(&pl->stop_rx, 1);
}

bool
gcap_pipeline_finished(const struct gcap_pipeline *pl)
{
	return atomic_load(&((struct gcap_pipeline *)pl)->finished) != 0;
}

int
gcap_pipeline_health(struct gcap_pipeline *pl, char *errbuf)
{
	char msg[GCAP_ERRBUF_SIZE] = "";
	int r = pl->conf.ops->health(pl->conf.ex, msg);

	if (r < 0) {
		pl_set_error(pl, r, msg);
		return gcap_err(errbuf, -r, "%s", msg);
	}
	return 0;
}

int
gcap_pipeline_stop(struct gcap_pipeline *pl, unsigned timeout_ms, char *errbuf)
{
	const struct gcap_pipeline_conf *c = &pl->conf;
	char msg[GCAP_ERRBUF_SIZE] = "";
	int r;

	atomic_store(&pl->stop_rx, 1);
	if (pl->lcores_started) {
		rx_lcores_join(pl);
		pl->lcores_started = false;
	}
	/* the executor finishes what is in flight, then its workers quit */
	r = c->ops->stop(c->ex, timeout_ms, msg);
	if (r < 0)
		pl_set_error(pl, r, msg);
	/* file mode drains here; live mode's lcores have drained already,
	 * but a slow executor may have finished batches since */
	{
		uint64_t deadline = now_ns(CLOCK_MONOTONIC) +
				    (uint64_t)timeout_ms * 1000000u;

		for (;;) {
			uint64_t left = 0;

			for (unsigned i = 0; i < c->nqueues; i++) {
				poll_done(pl, i, c->queues != NULL);
				left += pl->q[i].inflight;
			}
			if (left == 0)
				break;
			if (now_ns(CLOCK_MONOTONIC) > deadline) {
				pl_set_error(pl, -ETIMEDOUT,
					     "batches still in flight after the stop timeout");
				break;
			}
			struct timespec ts = {0, 20000};

			nanosleep(&ts, NULL);
		}
	}
	writer_join(pl);
	if (pl->error < 0)
		return gcap_err(errbuf, -pl->error, "%s", pl->errmsg);
	return 0;
}

/* ---------------------------------------------------------------- stats */

void
gcap_pipeline_queue_stats(const struct gcap_pipeline *pl, unsigned qi,
			  struct gcap_queue_stats *out)
{
	const struct gcap_queue_stats *s = &pl->q[qi].st;

#define LD(f) out->f = __atomic_load_n(&s->f, __ATOMIC_RELAXED)
	LD(rx_pkts);
	LD(rx_bytes);
	LD(captured);
	LD(captured_bytes);
	LD(filtered);
	LD(drop_pipeline);
	LD(drop_writer);
	LD(batches);
	LD(exec_ns);
	LD(cycle_ns);
	LD(polls);
	for (unsigned i = 0; i < GCAP_LAT_BUCKETS; i++) {
		LD(lat[i]);
		LD(lat_no_gap[i]);
	}
	for (unsigned i = 0; i < GCAP_LAT_PART_BUCKETS; i++) {
		LD(lat_cycle[i]);
		LD(lat_exec[i]);
		LD(lat_in[i]);
		LD(lat_back[i]);
	}
	for (unsigned i = 0; i < GCAP_POLL_GAP_BUCKETS; i++)
		LD(poll_gaps[i]);
	LD(poll_gap_ns);
	LD(poll_gap_max_ns);
	LD(lcore_minflt);
	LD(lcore_majflt);
	LD(lcore_nvcsw);
	LD(lcore_nivcsw);
	for (unsigned i = 0; i < GCAP_POLL_PHASES; i++) {
		LD(phase_ns[i]);
		LD(phase_long[i]);
	}
#undef LD
}

uint64_t
gcap_pipeline_written(const struct gcap_pipeline *pl)
{
	return atomic_load(&((struct gcap_pipeline *)pl)->written);
}

/* the bucket count of a kind's histograms */
static unsigned
lat_buckets(enum gcap_lat_kind kind)
{
	return kind == GCAP_LAT_TOTAL || kind == GCAP_LAT_NO_GAP ?
	       GCAP_LAT_BUCKETS : GCAP_LAT_PART_BUCKETS;
}

/* queue q's histogram of a kind (lat_buckets(kind) entries) */
static const uint64_t *
lat_hist(const struct gcap_pipeline *pl, unsigned q, enum gcap_lat_kind kind)
{
	const struct gcap_queue_stats *st = &pl->q[q].st;

	switch (kind) {
	case GCAP_LAT_CYCLE:
		return st->lat_cycle;
	case GCAP_LAT_EXEC:
		return st->lat_exec;
	case GCAP_LAT_IN:
		return st->lat_in;
	case GCAP_LAT_BACK:
		return st->lat_back;
	case GCAP_LAT_NO_GAP:
		return st->lat_no_gap;
	default:
		return st->lat;
	}
}

uint64_t
gcap_pipeline_latency_count(const struct gcap_pipeline *pl,
			    enum gcap_lat_kind kind)
{
	uint64_t total = 0;
	unsigned nb = lat_buckets(kind);

	for (unsigned q = 0; q < pl->conf.nqueues; q++) {
		const uint64_t *h = lat_hist(pl, q, kind);

		for (unsigned i = 0; i < nb; i++)
			total += __atomic_load_n(&h[i], __ATOMIC_RELAXED);
	}
	return total;
}

uint64_t
gcap_pipeline_latency_of_ns(const struct gcap_pipeline *pl,
			    enum gcap_lat_kind kind, double pct)
{
	uint64_t total = gcap_pipeline_latency_count(pl, kind), want, acc = 0;
	unsigned nb = lat_buckets(kind);

	if (total == 0)
		return 0;
	want = (uint64_t)((double)total * pct / 100.0);
	if (want == 0)
		want = 1;
	for (unsigned i = 0; i < nb; i++) {
		for (unsigned q = 0; q < pl->conf.nqueues; q++)
			acc += __atomic_load_n(&lat_hist(pl, q, kind)[i],
					       __ATOMIC_RELAXED);
		if (acc >= want)
			return (uint64_t)(i + 1) * 1000u;
	}
	return (uint64_t)nb * 1000u;
}

uint64_t
gcap_pipeline_latency_ns(const struct gcap_pipeline *pl, double pct)
{
	return gcap_pipeline_latency_of_ns(pl, GCAP_LAT_TOTAL, pct);
}
