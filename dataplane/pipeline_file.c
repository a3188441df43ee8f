/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pipeline's file path (-r): the calling thread reads the capture
 * file with libpcap into batches of queue 0, copying each packet into the
 * slot's staging area, and waits (never drops) for slots and export room;
 * the writer thread writes as in live mode. No EAL is needed. A stop
 * ends the reading before the next packet; the open batch then waits for
 * the writer's room at most FILE_STOP_WAIT_NS (an output whose reader
 * stalls must not hold the stop) and is counted as writer behind if it
 * never gets it.
 *
 * The reading runs on a thread of its own while the calling thread
 * watches it: an inline kernel (cpu executor) runs on the reader, and one
 * that never returns must neither hold the stop nor escape the
 * executor's watchdog. A reader still inside the executor past the stop's
 * wait is left running (gcap_pipeline_abandoned()).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include <pcap/pcap.h>

#include "pipeline_internal.h"

/* how long, once stopped, the last batch waits for the writer's room, as
 * the RX lcores' drain does */
#define FILE_STOP_WAIT_NS 2000000000u
/* how long, once stopped, the watcher waits for the reader: its batch's
 * wait above and the batch's own work */
#define READER_STOP_WAIT_NS 5000000000u
/* how often the watcher looks at the reader (the join wakes at once when
 * the reader returns) */
#define WATCH_NS 20000000u

/* the reader thread's arguments and result */
struct file_run {
	struct gcap_pipeline *pl;
	pcap_t *p;
	int rc;
	char errbuf[GCAP_ERRBUF_SIZE];
};

/* File mode waits for the executor or the writer: -ECANCELED once the
 * outputs are done (-c), -EIO if the executor failed, else 0 after a
 * moment. */
static int
file_wait(struct gcap_pipeline *pl)
{
	struct timespec ts = { 0, 20000 };

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
	/* wait (never drop) for the writer's room; a stop waits too, but
	 * bounded: what was read is written unless the writer is stuck */
	uint64_t deadline = 0;

	while ((b->xbuf = gcap_pl_xbuf_bind(q, q->rec_bytes)) == NULL) {
		gcap_pl_poll_done(pl, 0, false);
		if (atomic_load(&pl->stop_rx) && deadline == 0)
			deadline = now_ns(CLOCK_MONOTONIC) + FILE_STOP_WAIT_NS;
		if (deadline != 0 && (now_ns(CLOCK_MONOTONIC) > deadline ||
				      atomic_load(&pl->abort_write))) {
			STAT_ADD(q->st.drop_writer, b->n);
			q->seq -= b->n;
			b->n = 0;
			return -ECANCELED;
		}
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

		gcap_pl_poll_done(pl, 0, false);
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

static int
file_read(struct gcap_pipeline *pl, pcap_t *p, char *errbuf)
{
	const struct gcap_pipeline_conf *c = &pl->conf;
	struct pl_queue *q = &pl->q[0];
	struct pcap_pkthdr *h;
	const u_char *data;
	bool nano = pcap_get_tstamp_precision(p) == PCAP_TSTAMP_PRECISION_NANO;
	const uint32_t snap = c->snaplen ? c->snaplen : UINT32_MAX;
	int r = 0, rd;
	char msg[GCAP_ERRBUF_SIZE] = "";

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
		if (h->caplen > b->stage_size - b->stage_used || b->n == c->batch_max) {
			if ((r = file_submit(pl, q)) < 0 ||
			    (r = file_acquire(pl, q)) < 0) {
				r = r == -ECANCELED ? 0 : r;
				break;
			}
			b = q->cur;
			if (h->caplen > b->stage_size) {
				snprintf(msg, sizeof(msg),
					 "packet of %u bytes is larger than the staging "
					 "buffer",
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
		d->ts_ns = (uint64_t)(h->ts.tv_sec < 0 ? (uint32_t)h->ts.tv_sec :
							 h->ts.tv_sec) *
				   1000000000u +
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

		if (r2 < 0 && r2 != -ECANCELED && r == 0)
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

static void *
file_reader(void *arg)
{
	struct file_run *fr = arg;

	fr->rc = file_read(fr->pl, fr->p, fr->errbuf);
	return NULL;
}

int
gcap_pipeline_run_file(struct gcap_pipeline *pl, pcap_t *p, char *errbuf)
{
	const struct gcap_pipeline_conf *c = &pl->conf;
	struct file_run *fr = calloc(1, sizeof(*fr));
	char msg[GCAP_ERRBUF_SIZE] = "";
	uint64_t deadline = 0;
	int r, wd = 0;

	if (fr == NULL)
		return gcap_err(errbuf, ENOMEM, "pipeline: out of memory");
	fr->pl = pl;
	fr->p = p;
	r = gcap_pl_writer_start(pl, errbuf);
	if (r == 0 && (r = pthread_create(&pl->reader, NULL, file_reader, fr)) != 0)
		r = gcap_err(errbuf, r, "cannot start the file reader: %s", strerror(r));
	if (r < 0) {
		free(fr);
		return r;
	}
	for (;;) {
		struct timespec ts;
		uint64_t now;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += WATCH_NS;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		if (pthread_timedjoin_np(pl->reader, NULL, &ts) == 0)
			break;
		if (wd == 0 && c->ops->watchdog != NULL &&
		    (wd = c->ops->watchdog(c->ex, msg)) < 0) {
			/* a batch given up: the reader stops (unless it is the
			 * thread inside the batch) */
			pl_set_error(pl, wd, msg);
			atomic_store(&pl->stop_rx, 1);
		}
		now = now_ns(CLOCK_MONOTONIC);
		if (deadline == 0 &&
		    (atomic_load(&pl->stop_rx) || atomic_load(&pl->finished)))
			deadline = now + READER_STOP_WAIT_NS;
		if (deadline != 0 && now > deadline) {
			/* the reader never came back from the executor: left
			 * running, with fr (it still writes there); the stop
			 * reports why (gcap_exec_ops.stop) */
			atomic_store(&pl->abandoned, 1);
			return wd < 0 ? gcap_err(errbuf, -wd, "%s", msg) : 0;
		}
	}
	r = fr->rc;
	if (r < 0)
		snprintf(errbuf, GCAP_ERRBUF_SIZE, "%s", fr->errbuf);
	if (wd < 0) /* the first error, whatever the reader ended with */
		r = gcap_err(errbuf, -wd, "%s", msg);
	free(fr);
	return r;
}
