/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pipeline's writer thread: it takes the export buffers of done
 * batches from every queue, writes their records to the outputs they
 * name (in time order across queues: pipeline_order.c), flushes and
 * rotates the outputs on time and when asked (SIGUSR2, SIGHUP), and
 * hands the buffers back to their queues. A thread of its own so that
 * file I/O never stalls an RX lcore. Its join is bounded: an output whose
 * reader stalls is interrupted (SIGURG to the thread, the file made
 * non-blocking) and what it did not take is counted, not waited for.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include <rte_pause.h>

#include "gpucap/gcap_thread.h"
#include "pipeline_internal.h"

/* The longest the writer spins while the merge waits for records on
 * their way (gcap_pl_order_soon): a held buffer's XBUF_HOLD_NS. Longer,
 * the queue's lcore has lost its CPU (and a spin may take it): sleep. */
#define WRITER_SPIN_NS XBUF_HOLD_NS

int
gcap_pl_write_xbuf(struct gcap_pipeline *pl, const struct gcap_xbuf *xb, uint32_t *done)
{
	const struct gcap_pipeline_conf *c = &pl->conf;
	/* a file's own time fields (records found by the executor carry
	 * them): each record's own, so no run */
	const bool raw = pl->raw_ts != NULL && !(xb->flags & GCAP_XBUF_RAW_TS);
	/* where a run takes nothing (one output of several, rotation, -U),
	 * the rest of the buffer goes record by record */
	bool run = !raw, taken;
	const uint8_t *data;
	struct gcap_rec rec;
	uint32_t off = 0;

	*done = 0;
	for (uint32_t i = 0; i < xb->nrec; i++, *done = i) {
		int r;

		if (run) {
			const uint32_t k =
				gcap_pl_write_run(pl, xb, &off, xb->nrec - i, UINT64_MAX);

			run = k > 0;
			i += k;
			*done = i;
			if (i == xb->nrec)
				break;
		}
		if (gcap_rec_step(xb->data, xb->len, &off, &rec, &data) <= 0)
			return -EINVAL;
		if (raw)
			rec.ts_ns = pl->raw_ts[rec.seq & pl->raw_mask];
		r = gcap_pl_write_rec(pl, &rec, data, &taken);
		if (r != 0) {
			if (taken) /* in a file: not among those lost */
				*done = i + 1;
			return r;
		}
	}
	if (c->max_packets != 0 &&
	    atomic_load_explicit(&pl->written, memory_order_relaxed) >= c->max_packets)
		return 1;
	return 0;
}

/* A write's result: -c reached or an output done stop the outputs; an
 * error stops them as failed. @return whether it stopped them. */
static bool
write_result(struct gcap_pipeline *pl, int r, bool *failed)
{
	if (r == 1 || gcap_pl_output_ended(pl, r)) {
		atomic_store(&pl->finished, 1); /* -c reached, or -W with -G done */
		/* a reader gone: what follows reaches no file, counted as
		 * write failed (not an error of the run) */
		if (r == -EPIPE)
			*failed = true;
		return true;
	}
	if (r < 0) {
		/* the writer's message is set already */
		pl_set_error(pl, r, strerror(-r));
		*failed = true;
		return true;
	}
	return false;
}

/* SIGUSR2 and SIGHUP, through gcap_pipeline_request_flush/_rotate: every
 * output flushed, or each moved on to its next file. */
static bool
serve_requests(struct gcap_pipeline *pl, bool *failed)
{
	const struct gcap_pipeline_conf *c = &pl->conf;
	/* a load first: an exchange on every turn would take the line,
	 * which the RX lcores read, away from them each time */
	bool rotate = atomic_load_explicit(&pl->want_rotate, memory_order_relaxed) &&
		      atomic_exchange(&pl->want_rotate, 0) != 0;
	bool flush = atomic_load_explicit(&pl->want_flush, memory_order_relaxed) &&
		     atomic_exchange(&pl->want_flush, 0) != 0;
	bool stop = false;

	for (unsigned j = 0; (rotate || flush) && j < c->nwriters; j++) {
		struct gcap_writer *w = c->writers[j];
		int r = 0;

		if (rotate && strcmp(gcap_writer_filename(w), "-") != 0)
			r = gcap_writer_rotate(w);
		if (r == 0)
			r = gcap_writer_flush(w);
		if (gcap_pl_output_ended(pl, r)) {
			atomic_store(&pl->finished, 1);
			stop = true;
			*failed = *failed || r == -EPIPE; /* counted, as above */
		} else if (r < 0) {
			pl_set_error(pl, r, gcap_writer_errmsg(w));
			*failed = stop = true;
		}
	}
	return stop;
}

/* At the end: what is buffered goes to the files, and what a failed
 * write cut back (records taken but not in the file) counts as lost, an
 * output's own (gcap_pipeline_output_lost) and the run's. With one output
 * written is then what its files hold; with several, a record one of them
 * lost may be in another's, so written stays what any output took. */
static void
count_lost(struct gcap_pipeline *pl)
{
	const struct gcap_pipeline_conf *c = &pl->conf;
	uint64_t lost = 0, w = atomic_load(&pl->written);

	for (unsigned j = 0; j < c->nwriters; j++) {
		uint64_t kept;
		int r = gcap_writer_flush(c->writers[j]);

		if (r < 0 && !gcap_pl_output_ended(pl, r))
			pl_set_error(pl, r, gcap_writer_errmsg(c->writers[j]));
		gcap_writer_counts(c->writers[j], &kept, NULL);
		pl->out_lost[j] = pl->handed[j] > kept ? pl->handed[j] - kept : 0;
		lost += pl->out_lost[j];
	}
	STAT_ADD(pl->write_failed, lost);
	if (c->nwriters == 1)
		atomic_store(&pl->written, w > lost ? w - lost : 0);
}

/* File mode, nothing to write: sleep until the reader rings (records,
 * or the end) or at most ns. */
static void
writer_wait(struct gcap_pipeline *pl, uint64_t ns)
{
	unsigned seen = pl_bell_arm(&pl->wbell);

	if (atomic_load(&pl->producers_done) || atomic_load(&pl->abort_write)) {
		pl_bell_disarm(&pl->wbell);
		return;
	}
	for (unsigned i = 0; i < pl->conf.nqueues; i++)
		if (gcap_spsc_count(&pl->q[i].full) > 0) {
			pl_bell_disarm(&pl->wbell);
			return;
		}
	pl_bell_wait(&pl->wbell, seen, ns > 100000000u ? 100000000u : ns);
}

static void *
writer_main(void *arg)
{
	struct gcap_pipeline *pl = arg;
	const struct gcap_pipeline_conf *c = &pl->conf;
	uint64_t last_flush = now_ns(CLOCK_MONOTONIC);
	uint64_t flush_ns = (uint64_t)(c->flush_ms ? c->flush_ms : 1000) * 1000000u;
	bool stopped = false;    /* outputs are done: consume without writing */
	bool failed = false;     /* ... because a write failed or the stop aborted */
	uint64_t spin_since = 0; /* the merge waits for records on their way */

	/* the outputs' clock is the wall clock, ticked from before the first
	 * record: one stamped far ahead then does not move it */
	for (unsigned j = 0; j < c->nwriters; j++)
		(void)gcap_writer_tick(c->writers[j], now_ns(CLOCK_REALTIME));
	for (;;) {
		bool any = false;
		bool done = atomic_load(&pl->producers_done);
		uint64_t now;

		STAT_ADD(pl->writer_beat, 1);
		if (!stopped && atomic_load(&pl->abort_write))
			stopped = failed = true;
		if (!stopped && serve_requests(pl, &failed))
			stopped = true;
		if (pl->order != NULL && !stopped) {
			/* after producers_done, every buffer is here: all out */
			int r = gcap_pl_order_run(pl, now_ns(CLOCK_MONOTONIC), done,
						  &any);

			if (write_result(pl, r, &failed))
				stopped = true;
		}
		if (stopped) /* what the merge holds goes back unwritten */
			gcap_pl_order_release(pl, failed);
		/* without the merge (or once stopped), buffers as they come */
		const unsigned npop = pl->order == NULL || stopped ? c->nqueues : 0;

		for (unsigned i = 0; i < npop; i++) {
			struct pl_queue *q = &pl->q[i];
			/* what the queue holds now, not until it runs dry: a
			 * queue that keeps up with the writer (large records,
			 * --backpressure) would keep it from the others, whose
			 * RX lcores then wait for their buffers */
			unsigned n = gcap_spsc_count(&q->full);
			struct gcap_xbuf *xb;

			while (n-- > 0 && (xb = gcap_spsc_pop(&q->full)) != NULL) {
				uint32_t done = 0;

				any = true;
				if (!stopped &&
				    write_result(pl, gcap_pl_write_xbuf(pl, xb, &done),
						 &failed))
					stopped = true;
				if (failed)
					STAT_ADD(pl->write_failed, xb->nrec - done);
				xb->len = 0;
				xb->nrec = 0;
				gcap_spsc_push(&q->free, xb);
			}
		}
		if (any)
			pl_bell_ring(&pl->rbell); /* a file reader may wait for them */
		now = now_ns(CLOCK_MONOTONIC);
		if (!stopped && now - last_flush >= flush_ns) {
			uint64_t wall = now_ns(CLOCK_REALTIME);

			for (unsigned j = 0; j < c->nwriters; j++) {
				int r = gcap_writer_tick(c->writers[j], wall);

				/* on its way, not waited for: a slow file
				 * stalls the writer no more than its pace */
				if (r == 0)
					r = gcap_writer_push(c->writers[j]);
				if (gcap_pl_output_ended(pl, r)) {
					stopped = true;
					failed = failed || r == -EPIPE; /* counted */
					atomic_store(&pl->finished, 1);
				} else if (r < 0) {
					pl_set_error(pl, r,
						     gcap_writer_errmsg(c->writers[j]));
					stopped = failed = true;
				}
			}
			last_flush = now;
		}
		if (any || !gcap_pl_order_soon(pl))
			spin_since = 0;
		else if (spin_since == 0)
			spin_since = now;
		if (!any) {
			if (done)
				break;
			if (c->queues == NULL) {
				/* file mode: asleep until the reader rings or
				 * the next flush is due */
				writer_wait(pl, last_flush + flush_ns - now);
			} else if (spin_since != 0 && now - spin_since < WRITER_SPIN_NS) {
				/* the records the merge waits for come soon,
				 * mostly sooner than a sleep wakes, and every
				 * other queue waits too */
				for (unsigned k = 0; k < 64; k++)
					rte_pause();
			} else {
				struct timespec ts = { 0, 50000 };

				nanosleep(&ts, NULL);
			}
		}
	}
	gcap_pl_order_release(pl, failed);
	count_lost(pl);
	atomic_store(&pl->writer_exited, 1);
	return NULL;
}

/* SIGURG only interrupts a blocked write(2) of the writer thread. */
static void
on_kick(int sig)
{
	(void)sig;
}

int
gcap_pl_writer_start(struct gcap_pipeline *pl, char *errbuf)
{
	struct sigaction sa, old;
	int r;

	/* a handler without SA_RESTART: the write returns EINTR (SIGURG's
	 * default would ignore it and leave the write blocked); one the
	 * program installed itself is kept */
	if (sigaction(SIGURG, NULL, &old) == 0 && old.sa_handler == SIG_DFL) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_kick;
		sigemptyset(&sa.sa_mask);
		(void)sigaction(SIGURG, &sa, NULL);
	}
	r = gcap_pl_order_create(pl, errbuf);
	if (r < 0)
		return r;
	r = gcap_thread_start(&pl->writer, NULL, writer_main, pl);
	if (r != 0) {
		gcap_pl_order_destroy(pl);
		return gcap_err(errbuf, r, "cannot start the writer thread: %s",
				strerror(r));
	}
	pthread_setname_np(pl->writer, "gcap-writer"); /* for top -H */
	pl->writer_started = true;
	return 0;
}

void
gcap_pl_writer_join_by(struct gcap_pipeline *pl, uint64_t deadline_ns)
{
	const struct gcap_pipeline_conf *c = &pl->conf;
	struct timespec ts = { 0, 1000000 };

	atomic_store(&pl->producers_done, 1);
	pl_bell_ring(&pl->wbell);
	if (!pl->writer_started)
		return;
	while (!atomic_load(&pl->writer_exited) && !atomic_load(&pl->abort_write) &&
	       now_ns(CLOCK_MONOTONIC) < deadline_ns)
		nanosleep(&ts, NULL);
	if (!atomic_load(&pl->writer_exited)) {
		pl_set_error(pl, -ETIMEDOUT,
			     "an output did not take its records in time: the stop "
			     "dropped the rest (counted as write failed)");
		atomic_store(&pl->abort_write, 1);
		pl_bell_ring(&pl->wbell);
	}
	/* the thread sees abort_write between writes; a write blocked on a
	 * stalled reader ends with the kick (EINTR, then EAGAIN) */
	while (!atomic_load(&pl->writer_exited)) {
		for (unsigned j = 0; j < c->nwriters; j++)
			gcap_writer_interrupt(c->writers[j]);
		pthread_kill(pl->writer, SIGURG);
		ts.tv_nsec = 10000000;
		nanosleep(&ts, NULL);
	}
	pthread_join(pl->writer, NULL);
	gcap_pl_order_destroy(pl);
	pl->writer_started = false;
}

void
gcap_pipeline_request_flush(struct gcap_pipeline *pl)
{
	if (pl != NULL)
		atomic_store(&pl->want_flush, 1);
}

void
gcap_pipeline_request_rotate(struct gcap_pipeline *pl)
{
	if (pl != NULL)
		atomic_store(&pl->want_rotate, 1);
}

void
gcap_pl_writer_join(struct gcap_pipeline *pl)
{
	gcap_pl_writer_join_by(pl, UINT64_MAX);
}

uint64_t
gcap_pipeline_write_failed(const struct gcap_pipeline *pl)
{
	return __atomic_load_n(&pl->write_failed, __ATOMIC_RELAXED);
}

uint64_t
gcap_pipeline_output_lost(const struct gcap_pipeline *pl, unsigned i)
{
	return i < pl->conf.nwriters ? pl->out_lost[i] : 0;
}

uint64_t
gcap_pipeline_order_forced(const struct gcap_pipeline *pl)
{
	return __atomic_load_n(&pl->order_forced, __ATOMIC_RELAXED);
}
