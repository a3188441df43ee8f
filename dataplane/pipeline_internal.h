/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pipeline's shared internals (private to dataplane/pipeline*.c): the
 * state of a pipeline and of its queues, the calls between its parts, and
 * the helpers that the packet path runs per poll or per batch, kept
 * static inline here so that splitting the pipeline into files costs the
 * packet path no call it did not make before.
 *
 * The parts and who calls whom (one way):
 *   pipeline.c          lifecycle       -> rx, writer, xmem, stats
 *   pipeline_file.c     the -r reader   -> rx (completion), writer, xmem, copy
 *   pipeline_copy.c     the -r reader's helpers copying spans into staging
 *   pipeline_rx.c       RX lcores and batch completion -> xmem, stats
 *   pipeline_writer.c   the writer thread
 *   pipeline_xmem.c     the queues' export memory
 *   pipeline_stats.c    counters, latencies, poll gaps and phases
 */
#ifndef GCAP_PIPELINE_INTERNAL_H
#define GCAP_PIPELINE_INTERNAL_H

#include <linux/futex.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <rte_branch_prediction.h>
#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include "gpucap/gcap_pipeline.h"
#include "spsc.h"
#include "xarena.h"

/* Store a counter that other threads read with relaxed loads. */
#define STAT_ADD(field, n) __atomic_store_n(&(field), (field) + (n), __ATOMIC_RELAXED)

/* Longest a live queue keeps a finished batch's export buffer for the
 * next batches' records (at low load one batch is in flight at a time:
 * the next grows the same region, and the writer is not woken per
 * batch). */
#define XBUF_HOLD_NS 1000000u
/* A queue's quiet poll holds this long (pl_queue.quiet_at): an RX lcore
 * that lost its CPU right after one is not taken as quiet for longer,
 * while its port may be filling; one that sleeps between idle polls
 * (IDLE_SLEEP_NS, and the timer's slack) marks again well within it. So
 * a record the merge writes without waiting for a quiet queue is at most
 * about this much later than a packet the queue's port stamps after (a
 * mark is judged by the clock, read after the mark, not by when the
 * merge's pass began). */
#define ORDER_QUIET_NS 250000u
#define ORDER_QUIET_STEP_NS 10000u

/* Epoch of the "in" floor: the GPU's global timer drifts against the
 * host's clock (H200: about 1.8 us a second), far less than this. */
#define IN_EPOCH_NS 100000000u

/* A wake-up between two threads that costs nothing when nobody waits: the
 * side that made progress rings (one load when no one waits, a futex wake
 * when one does); the waiting side arms, checks its condition again, and
 * sleeps until a ring or its timeout. */
struct pl_bell {
	atomic_uint seq;
	atomic_uint waiters;
};

static inline void
pl_bell_ring(struct pl_bell *b)
{
	/* the progress (a ring push) before the look at the waiters: pairs
	 * with the waiter's arm before its look at the condition */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&b->waiters, memory_order_relaxed) == 0)
		return;
	atomic_fetch_add(&b->seq, 1);
	syscall(SYS_futex, &b->seq, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

/* Arm: from now on a ring wakes the wait. @return the ring count. */
static inline unsigned
pl_bell_arm(struct pl_bell *b)
{
	atomic_fetch_add(&b->waiters, 1);
	atomic_thread_fence(memory_order_seq_cst);
	return atomic_load(&b->seq);
}

/* Sleep until a ring after the arm that returned seen, or timeout_ns;
 * then disarm. */
static inline void
pl_bell_wait(struct pl_bell *b, unsigned seen, uint64_t timeout_ns)
{
	struct timespec ts = { (time_t)(timeout_ns / 1000000000u),
			       (long)(timeout_ns % 1000000000u) };

	if (atomic_load(&b->seq) == seen)
		syscall(SYS_futex, &b->seq, FUTEX_WAIT_PRIVATE, seen, &ts, NULL, 0);
	atomic_fetch_sub(&b->waiters, 1);
}

/* Disarm without waiting (the condition held). */
static inline void
pl_bell_disarm(struct pl_bell *b)
{
	atomic_fetch_sub(&b->waiters, 1);
}

struct pl_queue {
	struct gcap_queue_stats st;
	struct gcap_spsc full;   /* xbufs of consumed batches, to the writer */
	struct gcap_spsc free;   /* xbufs written, back from the writer */
	struct gcap_xbuf *xbufs; /* descriptors; their memory is xa's */
	unsigned nxbufs;
	struct gcap_xarena xa; /* the queue's export memory */
	uint64_t *xend;        /* per xbuf: its region's end in xa, 0: none */
	uint64_t *xstart;      /* per xbuf: xa's head when it was taken */
	uint32_t xneed;        /* record bytes a batch found no room for */
	/* --backpressure: since when the queue's port waits for the executor
	 * (a slot) or the writer (export room), 0: it does not */
	uint64_t bp_since;
	bool bp_writer;           /* ... and for which */
	struct gcap_xbuf *held;   /* done, kept for the next batch's records */
	uint64_t held_since;      /* when held got its first records */
	struct gcap_batch *cur;   /* slot being filled, not yet submitted */
	uint32_t rec_bytes;       /* most record bytes the open batch makes */
	struct gcap_xbuf **stash; /* xbufs without a region, on this side */
	unsigned nstash;
	uint64_t inflight; /* submitted, not yet consumed */
	uint32_t seq;
	/* file mode, span batches consumed: where the executor's finding
	 * stopped (the first record it did not take), or GCAP_SPAN_GOES_ON */
	uint64_t span_stop;
	unsigned lanes;       /* batches the executor works on at once */
	uint64_t last_submit; /* when the last batch was submitted (ns) */
	uint64_t cycle_ewma;  /* submit-to-done time, moving average (ns) */
	/* "in" latency's floor (see lat_in_back): the least raw value of the
	 * last epoch and of this one, which began at in_epoch */
	int64_t in_ref, in_min;
	uint64_t in_epoch;
	double rate_vt;     /* rate limiter: when the credit was zero (ns) */
	uint64_t prev_poll; /* the last busy poll's time (ns), 0: none yet */
	uint32_t gaps;      /* poll gaps so far (batches' gap_mark) */
	uint64_t ph_end;    /* --poll-phases: the last poll's end (TSC) */
	bool linearize;     /* the CPU may read the mbufs: copy chains whole */
	/* received, not yet described: the packets of a poll that came after
	 * a chained one the open batch's staging had no room for; they go
	 * first into the next batch (batch_max entries, live queues only) */
	struct rte_mbuf **carry;
	unsigned ncarry;
	uint64_t carry_t; /* the poll that received them (monotonic ns) */
	/* a queue on the host's clock that had nothing at a poll: its time
	 * (CLOCK_REALTIME ns), before any record it gives later (the time
	 * order's merge need not wait for it; 0: none yet) */
	atomic_uint_fast64_t idle_wm;
	/* when its RX lcore's last poll asked the port, got nothing and
	 * found nothing of the queue on its way to the writer (monotonic ns;
	 * 0: the last poll did not; UINT64_MAX: the lcore has handed over
	 * all it will): the queue is quiet while that is less than
	 * ORDER_QUIET_NS old, and under --backpressure the merge waits
	 * for a queue that has nothing and is not quiet, however full the
	 * others are. Stored every ORDER_QUIET_STEP_NS at most (quiet_mark:
	 * the lcore's own copy) */
	atomic_uint_fast64_t quiet_at;
	uint64_t quiet_mark;
	struct gcap_pipeline_queue src;
	uint64_t beat; /* turns of its RX lcore's loop (relaxed; liveness) */
};

struct gcap_pipeline {
	struct gcap_pipeline_conf conf;
	struct pl_queue *q;
	pthread_t writer;
	bool writer_started;
	pthread_t reader; /* file mode: the thread that reads and submits */
	bool lcores_started;
	unsigned nlaunched; /* RX lcores launched */
	/* a worker (RX lcore, file reader) never returned from the executor
	 * (an inline kernel stuck): it is left running, see
	 * gcap_pipeline_abandoned() */
	atomic_int abandoned;
	atomic_int stop_rx;        /* sources must stop */
	atomic_uint rx_exited;     /* RX lcores that have returned (release) */
	atomic_int producers_done; /* no more xbufs will be pushed */
	atomic_int finished;       /* the pipeline wants to stop by itself */
	atomic_int abort_write;    /* the stop stopped waiting for the writer */
	atomic_int writer_exited;  /* the writer thread has returned */
	/* until when the RX lcores' drain may wait (3/4 of
	 * gcap_pipeline_stop's timeout; 0: not called yet, their own 2 s) */
	atomic_uint_fast64_t drain_by;
	/* The writer thread's counters, stored per record: on lines of their
	 * own, away from the flags every RX lcore loads on every turn
	 * (stop_rx above), which would otherwise bounce between the writer's
	 * CPU and theirs at each record. The pipeline is allocated aligned. */
	alignas(64) atomic_uint_fast64_t written; /* only the writer stores */
	uint64_t writer_beat; /* turns of the writer's loop (relaxed; liveness) */
	/* records that reached no file: discarded after a write error or
	 * the stop's abort, or cut back by a failed write (the writer
	 * thread's, read relaxed) */
	uint64_t write_failed;
	/* records the time-order merge wrote while a queue had nothing and
	 * could still bring an earlier one: the window had passed or a
	 * queue's held buffers filled their share (the writer's, relaxed) */
	uint64_t order_forced;
	uint64_t handed[GCAP_MAX_OUTPUTS];   /* records taken by writer i */
	uint64_t out_lost[GCAP_MAX_OUTPUTS]; /* of those, not in its files */
	alignas(64) struct pl_order *order;  /* the time-order merge, or NULL */
	atomic_int want_flush;               /* gcap_pipeline_request_flush() */
	atomic_int want_rotate;              /* gcap_pipeline_request_rotate() */
	/* --poll-phases: ns = cycles * ph_mult >> 20; long span in cycles */
	uint64_t ph_mult, ph_long;
	int64_t real_off; /* CLOCK_REALTIME - CLOCK_MONOTONIC (ns) */
	/* file mode: records for the writer (rung by the reader), export
	 * buffers back to the reader (rung by the writer) */
	struct pl_bell wbell, rbell;
	/* file mode: each record's own time fields by its seq (the writer
	 * writes them back as they were, gcap_capfile_fill's raw), for every
	 * record that can be between the reader and the writer */
	uint64_t *raw_ts;
	uint32_t raw_mask;
	int error; /* first error (negative errno) */
	char errmsg[GCAP_ERRBUF_SIZE];
	pthread_mutex_t err_lock; /* only on error paths, never per packet */
};

static inline uint64_t
now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A raw reading of the port's clock c in ns since the epoch. */
static inline uint64_t
clock_ns(const struct gcap_rx_clock *c, uint64_t raw)
{
	int64_t d = (int64_t)(raw - c->raw0);

	return c->ns0 + (uint64_t)(((__int128)d * (__int128)c->mult) >> 32);
}

/* A received packet's time: the port's RX timestamp where the packet
 * has one (struct gcap_rx_clock), else host, the host's clock at the
 * poll. */
static inline uint64_t
rx_time(const struct gcap_rx_clock *c, const struct rte_mbuf *m, uint64_t host)
{
	if (likely((m->ol_flags & c->flag) == 0))
		return host;
	return clock_ns(c, *RTE_MBUF_DYNFIELD(m, c->off, const uint64_t *));
}

/* Queue q's poll at mono, for the writer's time order: empty, it
 * received nothing and its open batch (if any) is empty; polled, it
 * asked the port (--rx-rate may skip that). Where it also holds nothing
 * on its way to the writer (no batch in flight, no records held, none
 * carried), on the host's clock, every record it gives later is stamped
 * after now, which the merge may count on (release: what it handed the
 * writer before comes first). A port clock promises that only where the
 * port gives an idle mark (gcap_rx_clock.idle), and only after a poll
 * that found the port empty: one that --rx-rate skipped leaves packets
 * the port stamped already. Such a poll also makes the queue quiet; one
 * that finds anything, or skips the port, makes it not quiet. */
static inline void
order_mark(struct pl_queue *q, bool empty, bool polled, uint64_t mono)
{
	const struct gcap_rx_clock *c = q->src.clock;
	/* a held buffer without records (its batch all filtered out) holds
	 * nothing the writer waits for */
	const bool idle = empty && q->inflight == 0 &&
			  (q->held == NULL || q->held->nrec == 0) && q->ncarry == 0;
	const uint64_t at = idle && polled ? mono | 1 : 0; /* never 0 when quiet */
	uint64_t t;

	if (at == 0 ? q->quiet_mark != 0 : at - q->quiet_mark >= ORDER_QUIET_STEP_NS) {
		q->quiet_mark = at;
		/* release, as the mark */
		atomic_store_explicit(&q->quiet_at, at, memory_order_release);
	}
	if (!idle)
		return;
	if (c == NULL || c->flag == 0) {
		t = now_ns(CLOCK_REALTIME);
	} else if (c->idle != NULL && polled) {
		uint64_t raw = c->idle(c->idle_ctx, q->src.rx_queue);

		if (raw == 0)
			return;
		t = clock_ns(c, raw);
	} else {
		return;
	}
	atomic_store_explicit(&q->idle_wm, t, memory_order_release);
}

/* Keep the run's first error (and its message); the pipeline then wants
 * to stop. */
static inline void
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

/* An output that is done, not failed: -W with -G, -a files:, or the only
 * output a pipe or FIFO whose reader went away (-w - | head: EPIPE), which
 * ends the capture as tcpdump's SIGPIPE does (beside other outputs it is
 * that output's failure: they lose what follows). */
static inline bool
gcap_pl_output_ended(const struct gcap_pipeline *pl, int r)
{
	return r == -ECANCELED || (r == -EPIPE && pl->conf.nwriters == 1);
}

/* ------------------------------------------------- pipeline_writer.c */

/* Start the writer thread. @return 0 or -errno (message in errbuf). */
int gcap_pl_writer_start(struct gcap_pipeline *pl, char *errbuf);
/* No more xbufs will come: the writer writes what it has, and is joined.
 * Past deadline_ns (CLOCK_MONOTONIC) it stops waiting: the outputs are interrupted, what was not
 * written is counted as write_failed. */
void gcap_pl_writer_join_by(struct gcap_pipeline *pl, uint64_t deadline_ns);
/* As gcap_pl_writer_join_by, with no deadline. */
void gcap_pl_writer_join(struct gcap_pipeline *pl);
/* One export buffer's records, in order, to the outputs they name (what
 * the writer does without the merge); *done gets the records taken
 * (written, or past the outputs). @return as gcap_pl_write_rec, or
 * -EINVAL for a corrupt buffer. */
int
gcap_pl_write_xbuf(struct gcap_pipeline *pl, const struct gcap_xbuf *xb, uint32_t *done);

/* ---------------------------------------------------- pipeline_order.c */

struct pl_order;

/* One record to the outputs its outmask names; *taken: whether one of
 * them took it (then it is written, though a later one failed or
 * stopped). @return 0; 1 when -c is reached (the record not written); a
 * writer's negative errno. */
int gcap_pl_write_rec(struct gcap_pipeline *pl, const struct gcap_rec *rec,
		      const uint8_t *data, bool *taken);
/* Records of xb from *off on, up to max, while each one's time is at
 * most ts_max, written as one run (gcap_writer_write_run) where there is
 * one output. @return the records written, *off past them; 0 where
 * none is (the caller goes on record by record). */
uint32_t gcap_pl_write_run(struct gcap_pipeline *pl, const struct gcap_xbuf *xb,
			   uint32_t *off, uint32_t max, uint64_t ts_max);
/* pl->order, where conf asks for time order with several live queues.
 * @return 0 or -ENOMEM (message in errbuf). */
int gcap_pl_order_create(struct gcap_pipeline *pl, char *errbuf);
void gcap_pl_order_destroy(struct gcap_pipeline *pl);
/* Take the queues' finished buffers and write what the merge lets go
 * (everything with all); *any: something was taken or written.
 * @return as gcap_pl_write_rec, or -EINVAL for a corrupt buffer. */
int gcap_pl_order_run(struct gcap_pipeline *pl, uint64_t now, bool all, bool *any);
/* Whether the last gcap_pl_order_run() stopped to wait, under
 * --backpressure, for a queue whose records are on their way while the
 * others' held buffers fill their memory: they come soon (a batch's
 * round trip; a held buffer's XBUF_HOLD_NS at most), unless the queue's
 * lcore lost its CPU, and the window bounds the wait. */
bool gcap_pl_order_soon(const struct gcap_pipeline *pl);
/* The monotonic clock the merge reads where the now it was given may be
 * stale (NULL: CLOCK_MONOTONIC's); tests give their own. */
void gcap_pl_order_set_clock(struct gcap_pipeline *pl, uint64_t (*clock)(void));
/* Give every held buffer back to its queue; lost: its records that were
 * not written count as write_failed. */
void gcap_pl_order_release(struct gcap_pipeline *pl, bool lost);

/* ----------------------------------------------------- pipeline_rx.c */

/* An RX lcore's loop (rte_eal_remote_launch()): polls the queues given to
 * its lcore until stop_rx, then drains them. */
int gcap_pl_rx_lcore_main(void *arg);
/* Wait for every RX lcore to return, and take their writes in; past
 * deadline_ns (CLOCK_MONOTONIC) stop waiting. @return false when one has
 * not returned by then (it is left running). */
bool gcap_pl_rx_lcores_join_by(struct gcap_pipeline *pl, uint64_t deadline_ns);
/* As gcap_pl_rx_lcores_join_by(), with no deadline. */
void gcap_pl_rx_lcores_join(struct gcap_pipeline *pl);
/* Consume queue qi's finished batches (live: an RX lcore's queue, its
 * mbufs freed and its cycle timed). @return how many. */
unsigned gcap_pl_poll_done(struct gcap_pipeline *pl, unsigned qi, bool live);

/* --------------------------------------------------- pipeline_copy.c */

/* ---- file mode (pipeline_file.c, pipeline_file_span.c) ---- */

/* Queue 0's next slot to fill (q->cur), waiting (never dropping) for a
 * slot and export room; NULL at a stop (*r 0) or an error (*r < 0). */
struct gcap_batch *
gcap_pl_file_next(struct gcap_pipeline *pl, struct pl_queue *q, int *r);
/* Submit q->cur (its export region bound first, waiting for the writer's
 * room). @return 0, -ECANCELED at a stop, or the executor's error. */
int gcap_pl_file_submit(struct gcap_pipeline *pl, struct pl_queue *q);
/* Wait until every submitted batch of q is consumed. @return 0, or -EIO
 * when the executor failed first. */
int gcap_pl_file_drain(struct gcap_pipeline *pl, struct pl_queue *q);
/* One mapped plain pcap input handed to the executor in spans whose
 * records it finds (conf.file_spans): *more says whether records are
 * left for the reader's own path (the executor stopped at one, or the
 * input was not one for spans). @return 0 or a negative errno. */
int gcap_pl_file_run_spans(struct gcap_pipeline *pl, struct gcap_capfile *cf, bool *more);

struct pl_copier;
/* nthreads helpers (0: the poster copies). @return the copier, or NULL
 * with *err a negative errno. */
struct pl_copier *gcap_pl_copier_start(unsigned nthreads, int *err);
/* Copy len bytes from src to dst, on the helpers; the poster waits
 * (gcap_pl_copier_wait) before it posts again or reads dst. */
void gcap_pl_copier_post(struct pl_copier *c, void *dst, const void *src, size_t len);
/* Until the posted copy is done. */
void gcap_pl_copier_wait(struct pl_copier *c);
/* End the helpers (no copy posted and not waited for) and free c (NULL:
 * no-op). */
void gcap_pl_copier_stop(struct pl_copier *c);

/* --------------------------------------------------- pipeline_xmem.c */

/* Queue q's export buffers as one memory. @return 0; -EINVAL when they
 * do not lie back to back, equal in size. */
int gcap_pl_xmem_init(struct pl_queue *q);
/* Take back the xbufs (and regions) that the writer is done with. */
void gcap_pl_xbufs_reclaim(struct pl_queue *q);
/* An xbuf whose batch is done: to the writer, or back at once. */
void gcap_pl_xbuf_retire(struct pl_queue *q, struct gcap_xbuf *xb);
/* An xbuf with room for need bytes of records, or NULL (writer behind). */
struct gcap_xbuf *gcap_pl_xbuf_bind(struct pl_queue *q, uint32_t need);
/* Undo the bind of xb for a batch the executor refused; held: the xbuf
 * that q held before the bind. */
void gcap_pl_xbuf_unbind(struct pl_queue *q, struct gcap_xbuf *xb,
			 const struct gcap_xbuf *held);

/* Retire queue q's held xbuf: with force, or when it has records older
 * than XBUF_HOLD_NS. */
static inline void
xbuf_release_held(struct pl_queue *q, uint64_t now, bool force)
{
	if (q->held == NULL ||
	    (!force && (q->held->nrec == 0 || now - q->held_since < XBUF_HOLD_NS)))
		return;
	gcap_pl_xbuf_retire(q, q->held);
	q->held = NULL;
}

/* A free xbuf, and room for the records of the last batch that found
 * none (the writer is behind until then). */
static inline bool
xbuf_room(const struct pl_queue *q)
{
	return q->nstash > 0 &&
	       (q->xneed == 0 || gcap_xarena_place(&q->xa, q->xneed) != UINT64_MAX);
}

/* Whether queue q can open a batch: a held xbuf, or xbuf_room() (after
 * taking back what the writer is done with, if it takes that). */
static inline bool
xbuf_ready(struct pl_queue *q)
{
	if (q->held != NULL || xbuf_room(q))
		return true;
	gcap_pl_xbufs_reclaim(q);
	return xbuf_room(q);
}

/* -------------------------------------------------- pipeline_stats.c */

/* --poll-phases: the TSC's rate for the phases' times. @return 0;
 * -ENOTSUP when the rate is unknown (message in errbuf). */
int gcap_pl_phases_init(struct gcap_pipeline *pl, char *errbuf);
/* A poll gap of gap ns (at least poll_gap_us[0]): count it. */
void gcap_pl_poll_gap_record(struct pl_queue *q, uint64_t gap);
/* An RX lcore's page faults and context switches since ru0, into st. */
void gcap_pl_lcore_usage(struct gcap_queue_stats *st, const struct rusage *ru0);

/* Poll gaps' bounds (us): gcap_queue_stats.poll_gaps[i] counts those of
 * at least poll_gap_us[i]; shorter than poll_gap_us[0] is no gap. */
static const unsigned poll_gap_us[GCAP_POLL_GAP_BUCKETS] = GCAP_POLL_GAP_US;

/* The queue's loop read the clock at now (busy polling): count a gap since
 * the read before. The reads are the poll's (rx_poll) and the first batch
 * found done (poll_done), so that a stall is counted before the batches
 * it delayed are consumed. */
static inline void
poll_gap_check(struct pl_queue *q, uint64_t now)
{
	if (unlikely(now - q->prev_poll >= poll_gap_us[0] * 1000ull) && q->prev_poll != 0)
		gcap_pl_poll_gap_record(q, now - q->prev_poll);
	q->prev_poll = now;
}

/* Queue q's batch was just submitted (at q->last_submit): where the cpu
 * executor filtered it then, that was the lcore's own work, not a pause
 * of its polling (a batch of 256 takes it 5 us or more, which would count
 * as a gap every poll). */
static inline void
poll_gap_skip_submit(const struct gcap_pipeline *pl, struct pl_queue *q)
{
	if (pl->conf.ops->submit_works && pl->conf.busy_poll && q->prev_poll != 0)
		q->prev_poll += now_ns(CLOCK_MONOTONIC) - q->last_submit;
}

/* --poll-phases: t[i] is now (t[0]: the poll's start, t[k]: the end of
 * phase k). Nothing without ph. */
static inline void
poll_phase_mark(bool ph, uint64_t *t, unsigned i)
{
	if (ph)
		t[i] = rte_rdtsc();
}

/* --poll-phases: this poll is not timed (it drops what it polls), and the
 * next one's GCAP_PHASE_LOOP has no start. */
static inline void
poll_phases_skip(struct pl_queue *q)
{
	q->ph_end = 0;
}

/* --poll-phases: the poll ends now; account its phases, t[0] its start
 * and t[k] the end of phase k (GCAP_PHASE_DONE..SUBMIT); GCAP_PHASE_LOOP
 * runs from the queue's last poll's end. Nothing without ph. */
static inline void
poll_phases_end(const struct gcap_pipeline *pl, struct pl_queue *q, bool ph, uint64_t *t)
{
	if (!ph)
		return;
	t[GCAP_PHASE_SUBMIT] = rte_rdtsc();
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

/* n packets into a histogram of nb 1-us buckets (the last: overflow) */
static inline void
lat_record(uint64_t *hist, unsigned nb, uint64_t ns, uint32_t n)
{
	uint64_t b = ns / 1000u;

	if (b >= nb)
		b = nb - 1;
	STAT_ADD(hist[b], n);
}

/* A batch of queue q opens: no arrival time yet, and the queue's poll
 * gaps so far (a gap before its verdict leaves it out of GCAP_LAT_NO_GAP). */
static inline void
lat_batch_open(const struct pl_queue *q, struct gcap_batch *b)
{
	b->nbursts = 0;
	b->gap_mark = q->gaps;
}

/* Merge a batch's arrival times in pairs: entry k takes entries 2k and
 * 2k + 1 (the earlier time, the later end). */
static inline void
bursts_halve(struct gcap_batch *b)
{
	unsigned k;

	for (k = 0; 2 * k + 1 < b->nbursts; k++) {
		b->burst_t[k] = b->burst_t[2 * k];
		b->burst_end[k] = b->burst_end[2 * k + 1];
	}
	b->nbursts = (uint16_t)k;
}

/* The n packets a poll at mono adds to batch b (after its b->n): a new
 * arrival time where it differs from the last kept by the grain; with
 * every entry spent, pairs merge (each keeps its earlier time: latencies
 * stay upper bounds, off by at most the merged span) so the whole batch
 * stays covered. */
static inline void
lat_arrival(struct gcap_batch *b, uint64_t mono, unsigned n)
{
	if (b->nbursts == 0 || mono - b->burst_t[b->nbursts - 1] >= GCAP_BURST_GRAIN_NS) {
		if (b->nbursts == GCAP_BATCH_BURSTS)
			bursts_halve(b);
		b->burst_t[b->nbursts++] = mono;
	}
	b->burst_end[b->nbursts - 1] = (uint16_t)(b->n + n);
}

/* The doorbells' parts of a batch's cycle. "in": submit -> the executor
 * saw it, beyond the quickest such time of the last 0.1-0.2 s; measured
 * across two clocks (the GPU's global timer, the host's real time) whose
 * offset and slow drift the floor takes out. "back": the rest of the
 * cycle outside the executor (the quickest "in", DONE crossing back, the
 * lcore noticing it). */
static inline void
lat_in_back(const struct gcap_pipeline *pl, struct pl_queue *q,
	    const struct gcap_batch *b, uint64_t cyc)
{
	int64_t raw =
		(int64_t)(b->res->start_ns - (b->submit_t + (uint64_t)pl->real_off));
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

	lat_record(q->st.lat_in, GCAP_LAT_PART_BUCKETS, in > 0 ? (uint64_t)in : 0, b->n);
	lat_record(q->st.lat_back, GCAP_LAT_PART_BUCKETS, back > 0 ? (uint64_t)back : 0,
		   b->n);
}

/* Batch b of queue q is done, its verdict seen at now: its latencies
 * (live: its cycle and the cycle's parts too) into q's histograms. */
static inline void
lat_batch_done(const struct gcap_pipeline *pl, struct pl_queue *q,
	       const struct gcap_batch *b, bool live, uint64_t now)
{
	const struct gcap_batch_result *res = b->res;
	uint32_t from = 0;

	if (live) {
		uint64_t cyc = now - b->submit_t;

		STAT_ADD(q->st.cycle_ns, cyc);
		lat_record(q->st.lat_cycle, GCAP_LAT_PART_BUCKETS, cyc, b->n);
		lat_record(q->st.lat_exec, GCAP_LAT_PART_BUCKETS, res->exec_ns, b->n);
		if (res->start_ns != 0)
			lat_in_back(pl, q, b, cyc);
	}
	bool no_gap = live && b->gap_mark == q->gaps;

	/* each poll's packets with their own arrival time (the last entry
	 * ends at b->n) */
	for (unsigned i = 0; i < b->nbursts; i++) {
		lat_record(q->st.lat, GCAP_LAT_BUCKETS, now - b->burst_t[i],
			   b->burst_end[i] - from);
		if (no_gap)
			lat_record(q->st.lat_no_gap, GCAP_LAT_BUCKETS,
				   now - b->burst_t[i], b->burst_end[i] - from);
		from = b->burst_end[i];
	}
}

/* The open batch of q is due: nothing in flight, or a lane idle and the
 * last submission a lane's share of a round trip old (see rx_poll), so
 * that submissions spread over the lanes instead of bunching. */
static inline bool
gcap_pl_submit_due(const struct pl_queue *q, uint64_t now)
{
	return q->inflight == 0 || (q->inflight < q->lanes &&
				    now - q->last_submit >= q->cycle_ewma / q->lanes);
}

#endif /* GCAP_PIPELINE_INTERNAL_H */
