/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pipeline's lifecycle: create (a queue's rings, stash and export
 * memory set up from the executor's buffers), start (the writer thread,
 * then the RX lcores), the stop and what it drains, health and the
 * finished flag, destroy. The parts it starts live beside it:
 * pipeline_rx.c (RX lcores), pipeline_file.c (-r), pipeline_writer.c,
 * pipeline_xmem.c (export memory), pipeline_stats.c (counters read
 * back); pipeline_internal.h has their shared state.
 */
#include <errno.h>
#include <stddef.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf_dyn.h>

#include "pipeline_internal.h"

/* what the RX lcores load on every turn and what the writer stores per
 * record never share a cache line (the struct is 64-byte aligned) */
_Static_assert(offsetof(struct gcap_pipeline, stop_rx) / 64 !=
			       offsetof(struct gcap_pipeline, written) / 64 &&
		       offsetof(struct gcap_pipeline, stop_rx) / 64 !=
			       offsetof(struct gcap_pipeline, handed) / 64 &&
		       _Alignof(struct gcap_pipeline) >= 64,
	       "the writer's counters share a line with the RX lcores' flags");

struct gcap_pipeline *
gcap_pipeline_create(const struct gcap_pipeline_conf *conf, char *errbuf)
{
	struct gcap_pipeline *pl;

	if (conf->ops == NULL || conf->ex == NULL || conf->nqueues == 0 ||
	    conf->nwriters == 0 || conf->nwriters > GCAP_MAX_OUTPUTS ||
	    conf->batch_max == 0 ||
	    conf->batch_max >
		    (conf->queues != NULL ? GCAP_BATCH_MAX : GCAP_FILE_BATCH_MAX))
		return gcap_err_null(errbuf, EINVAL, "pipeline: invalid configuration");
	/* aligned: its fields of different threads lie on different lines */
	if (posix_memalign((void **)&pl, 64, sizeof(*pl)) != 0) {
		pl = NULL;
		goto nomem;
	}
	memset(pl, 0, sizeof(*pl));
	pl->conf = *conf;
	pl->real_off = (int64_t)(now_ns(CLOCK_REALTIME) - now_ns(CLOCK_MONOTONIC));
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
		if (gcap_pl_xmem_init(q) < 0) {
			gcap_pipeline_destroy(pl);
			return gcap_err_null(
				errbuf, EINVAL,
				"pipeline: the export "
				"buffers of queue %u do not lie back to back",
				i);
		}
		while (ring < q->nxbufs)
			ring <<= 1;
		q->stash = calloc(q->nxbufs, sizeof(*q->stash));
		if (conf->queues != NULL &&
		    (q->carry = calloc(conf->batch_max, sizeof(*q->carry))) == NULL)
			goto nomem;
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
		q->linearize =
			conf->ops->cpu_reads == NULL || conf->ops->cpu_reads(conf->ex, i);
		if (q->lanes == 0)
			q->lanes = 1;
	}
	return pl;
nomem:
	gcap_pipeline_destroy(pl);
	return gcap_err_null(errbuf, ENOMEM, "pipeline: out of memory");
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
		free(pl->q[i].carry);
		free(pl->q[i].xend);
		free(pl->q[i].xstart);
	}
	free(pl->q);
	free(pl->raw_ts);
	pthread_mutex_destroy(&pl->err_lock);
	free(pl);
}

int
gcap_pipeline_start(struct gcap_pipeline *pl, char *errbuf)
{
	const struct gcap_pipeline_conf *c = &pl->conf;
	bool launched[RTE_MAX_LCORE] = { false };
	int r;

	if (c->queues == NULL)
		return gcap_err(errbuf, EINVAL, "pipeline: no live sources");
	if (c->poll_phases && (r = gcap_pl_phases_init(pl, errbuf)) < 0)
		return r;
	r = gcap_pl_writer_start(pl, errbuf);
	if (r < 0)
		return r;
	for (unsigned i = 0; i < c->nqueues; i++) {
		unsigned lc = pl->q[i].src.lcore;

		if (lc >= RTE_MAX_LCORE || launched[lc])
			continue;
		r = rte_eal_remote_launch(gcap_pl_rx_lcore_main, pl, lc);
		if (r != 0) {
			atomic_store(&pl->stop_rx, 1);
			gcap_pl_rx_lcores_join(pl);
			gcap_pl_writer_join(pl);
			return gcap_err(errbuf, EBUSY, "cannot launch RX on lcore %u: %s",
					lc, strerror(-r));
		}
		launched[lc] = true;
		pl->nlaunched++;
	}
	pl->lcores_started = true;
	return 0;
}

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

	if (r == 0 && pl->conf.ops->watchdog != NULL)
		r = pl->conf.ops->watchdog(pl->conf.ex, msg);
	if (r < 0) {
		pl_set_error(pl, r, msg);
		return gcap_err(errbuf, -r, "%s", msg);
	}
	return 0;
}

bool
gcap_pipeline_abandoned(const struct gcap_pipeline *pl)
{
	return atomic_load(&((struct gcap_pipeline *)pl)->abandoned) != 0;
}

/* Take every queue's completed batches to the writer, again and again
 * until none is in flight or the clock passes until (once: one pass).
 * @return the batches still in flight. */
static uint64_t
take_done(struct gcap_pipeline *pl, uint64_t until, bool once)
{
	const struct gcap_pipeline_conf *c = &pl->conf;
	long nap = 20000;

	for (;;) {
		uint64_t left = 0;
		unsigned n = 0;

		for (unsigned i = 0; i < c->nqueues; i++) {
			n += gcap_pl_poll_done(pl, i, c->queues != NULL);
			left += pl->q[i].inflight;
		}
		if (n > 0)
			pl_bell_ring(&pl->wbell); /* file mode's writer sleeps */
		if (left == 0 || once || now_ns(CLOCK_MONOTONIC) > until)
			return left;
		/* a batch that does not come (a stuck kernel) is looked for
		 * less and less often, up to every millisecond */
		nap = n > 0 ? 20000 : (nap < 500000 ? nap * 2 : 1000000);
		struct timespec ts = { 0, nap };

		nanosleep(&ts, NULL);
	}
}

int
gcap_pipeline_stop(struct gcap_pipeline *pl, unsigned timeout_ms, char *errbuf)
{
	const struct gcap_pipeline_conf *c = &pl->conf;
	const uint64_t quarter = (uint64_t)timeout_ms * 250000u;
	char msg[GCAP_ERRBUF_SIZE] = "";
	uint64_t left = 0;
	int r;

	uint64_t now = now_ns(CLOCK_MONOTONIC);
	uint64_t by = now + (uint64_t)timeout_ms * 1000000u;

	/* the lcores and the writer are done by then; the lcores' drain may
	 * wait (for the writer's room) three quarters of it: the rest is
	 * theirs to return in, and the writer's to finish */
	atomic_store(&pl->drain_by, by - quarter);
	atomic_store(&pl->stop_rx, 1);
	if (pl->lcores_started) {
		/* bounded: an lcore inside an inline kernel that never returns
		 * is left running (the others finish their drain meanwhile) */

		if (!gcap_pl_rx_lcores_join_by(pl, by))
			atomic_store(&pl->abandoned, 1);
		pl->lcores_started = false;
	}
	/* a thread of ours left running (an lcore here, the -r reader in
	 * gcap_pipeline_run_file()) still owns its queues */
	bool ours_left = atomic_load(&pl->abandoned);

	/* file mode drains here (live mode's lcores have drained already):
	 * batches are taken as they complete, before the executor's stop,
	 * which waits its whole time for one that never completes (a stuck
	 * inline kernel); those done before it are written meanwhile */
	if (!ours_left)
		left = take_done(pl, by - quarter, false);
	/* the executor finishes what is in flight, then its workers quit,
	 * within what is left of the stop's time (a quarter at least) */
	now = now_ns(CLOCK_MONOTONIC);
	r = c->ops->stop(
		c->ex,
		(unsigned)(((by > now + quarter ? by - now : quarter) + 999999u) /
			   1000000u),
		msg);
	if (r < 0)
		pl_set_error(pl, r, msg);
	if (r == -EBUSY)
		atomic_store(&pl->abandoned, 1);
	if (ours_left)
		pl_set_error(pl, -EBUSY,
			     "a capture thread did not return from the executor by the "
			     "stop: left running");
	/* what the executor finished since; with a worker of it left running
	 * (-EBUSY) what is done is taken once: the rest never will be */
	now = now_ns(CLOCK_MONOTONIC);
	if (by < now + quarter)
		by = now + quarter; /* the writer's quarter, to write it */
	if (!ours_left && left > 0 && take_done(pl, by - quarter, r == -EBUSY) > 0 &&
	    r != -EBUSY)
		pl_set_error(pl, -ETIMEDOUT,
			     "batches still in flight after the stop timeout");
	/* bounded too: an output whose reader stalls is given up on (the
	 * writer has written all along, and has a quarter of the time at
	 * least after the last batch came) */
	gcap_pl_writer_join_by(pl, by);
	if (pl->error < 0)
		return gcap_err(errbuf, -pl->error, "%s", pl->errmsg);
	return 0;
}
