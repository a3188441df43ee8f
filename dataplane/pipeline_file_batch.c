/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The file path's batches (-r): the reader's wait for a slot and for the
 * writer's export room (never a drop), the submission, the completed
 * batches rung to the writer, and the drain that waits for every batch in
 * flight. The reader waits asleep on a bell (pipeline_internal.h) that
 * costs nothing while neither side waits; a stop bounds its wait for the
 * writer (FILE_STOP_WAIT_NS).
 */
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>

#include "pipeline_internal.h"

/* how long, once stopped, the last batch waits for the writer's room, as
 * the RX lcores' drain does */
#define FILE_STOP_WAIT_NS 2000000000u
/* the longest sleep of a reader waiting for the writer (a missed ring
 * costs at most this) */
#define FILE_WAIT_MAX_NS 20000000u
/* a reader waiting for the executor's slots yields this many times, then
 * sleeps FILE_SLOT_SLEEP_NS between looks (an executor that completes in
 * the caller's thread, the cpu one, never makes it wait) */
#define FILE_SLOT_YIELDS 64u
#define FILE_SLOT_SLEEP_NS 20000u
/* export buffers of records waiting before the reader wakes the writer */
#define FILE_WAKE_XBUFS 8u
/* File mode is stopped (-c reached, an output done) or the executor
 * failed: -ECANCELED or -EIO; else 0. */
static int
file_check(struct gcap_pipeline *pl)
{
	if (atomic_load(&pl->finished))
		return -ECANCELED;
	if (pl->conf.ops->health(pl->conf.ex, NULL) < 0)
		return -EIO;
	return 0;
}

/* Completed batches: consumed, their records rung to the writer. */
static void
file_poll_done(struct gcap_pipeline *pl)
{
	struct pl_queue *q = &pl->q[0];

	/* the writer is woken for several buffers at a time (a wake-up per
	 * batch would cost more than most batches' writing), or when the
	 * reader is about to wait for it */
	if (gcap_pl_poll_done(pl, 0, false) > 0 &&
	    gcap_spsc_count(&q->full) >= FILE_WAKE_XBUFS)
		pl_bell_ring(&pl->wbell);
}

/* Wait for the writer to hand export buffers back: asleep until it rings
 * (or a bounded time, for a stop). */
static void
file_wait_writer(struct gcap_pipeline *pl, struct pl_queue *q)
{
	uint64_t t0 = now_ns(CLOCK_MONOTONIC);
	unsigned seen;

	pl_bell_ring(&pl->wbell); /* whatever it has not been woken for */
	seen = pl_bell_arm(&pl->rbell);

	if (gcap_spsc_count(&q->free) > 0 || atomic_load(&pl->stop_rx) ||
	    atomic_load(&pl->finished))
		pl_bell_disarm(&pl->rbell);
	else
		pl_bell_wait(&pl->rbell, seen, FILE_WAIT_MAX_NS);
	STAT_ADD(q->st.file_wait_writer_ns, now_ns(CLOCK_MONOTONIC) - t0);
}

/* Wait for the executor to complete a batch (the gpu one's are seen by
 * looking at its ring). */
static void
file_wait_exec(struct pl_queue *q, unsigned *spins)
{
	uint64_t t0 = now_ns(CLOCK_MONOTONIC);

	if (++*spins < FILE_SLOT_YIELDS) {
		sched_yield();
	} else {
		struct timespec ts = { 0, FILE_SLOT_SLEEP_NS };

		nanosleep(&ts, NULL);
	}
	STAT_ADD(q->st.file_wait_exec_ns, now_ns(CLOCK_MONOTONIC) - t0);
}

int
gcap_pl_file_submit(struct gcap_pipeline *pl, struct pl_queue *q)
{
	struct gcap_batch *b = q->cur;
	uint64_t deadline = 0;
	int r;

	if (b == NULL || (b->n == 0 && !(b->flags & GCAP_BATCH_SPAN))) {
		q->cur = NULL;
		return 0;
	}
	if (q->rec_bytes > q->xa.cap)
		return -E2BIG; /* export memory smaller than one batch's records */
	/* wait (never drop) for the writer's room; a stop waits too, but
	 * bounded: what was read is written unless the writer is stuck */
	while ((b->xbuf = gcap_pl_xbuf_bind(q, q->rec_bytes)) == NULL) {
		file_poll_done(pl);
		if (atomic_load(&pl->stop_rx) && deadline == 0)
			deadline = now_ns(CLOCK_MONOTONIC) + FILE_STOP_WAIT_NS;
		if (deadline != 0 && (now_ns(CLOCK_MONOTONIC) > deadline ||
				      atomic_load(&pl->abort_write))) {
			STAT_ADD(q->st.drop_writer, b->n);
			q->seq -= b->n;
			b->n = 0;
			return -ECANCELED;
		}
		if ((r = file_check(pl)) < 0)
			return r;
		if (q->inflight > 0) {
			unsigned spins = 0;

			file_wait_exec(q, &spins);
		} else {
			file_wait_writer(pl, q);
		}
	}
	q->cur = NULL;
	if (b->flags & GCAP_BATCH_SPAN)
		b->xbuf->flags |= GCAP_XBUF_RAW_TS;
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

int
gcap_pl_file_drain(struct gcap_pipeline *pl, struct pl_queue *q)
{
	unsigned spins = 0;
	int r;

	while (q->inflight > 0) {
		if (gcap_pl_poll_done(pl, 0, false) > 0) {
			pl_bell_ring(&pl->wbell); /* nothing more will come soon */
			spins = 0;
			continue;
		}
		if ((r = file_check(pl)) == -EIO)
			return r;
		file_wait_exec(q, &spins);
	}
	return 0;
}

/* Wait (never drop) for a free slot and export buffer for queue 0. */
static int
file_acquire(struct gcap_pipeline *pl, struct pl_queue *q)
{
	const struct gcap_exec_ops *ops = pl->conf.ops;
	unsigned spins = 0;

	for (;;) {
		int r;

		file_poll_done(pl);
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
		if ((r = file_check(pl)) < 0)
			return r;
		if (q->cur == NULL)
			file_wait_exec(q, &spins);
		else
			file_wait_writer(pl, q);
	}
}

struct gcap_batch *
gcap_pl_file_next(struct gcap_pipeline *pl, struct pl_queue *q, int *r)
{
	*r = 0;
	if (atomic_load(&pl->finished) || atomic_load(&pl->stop_rx))
		return NULL;
	if ((*r = file_acquire(pl, q)) < 0) {
		*r = *r == -ECANCELED ? 0 : *r;
		return NULL;
	}
	return q->cur;
}
