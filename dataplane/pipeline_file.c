/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pipeline's file path (-r): a reader thread fills batches of queue
 * 0 from capture file readers (gcap_capfile.h) and submits them; the
 * writer thread writes as in live mode. No EAL is needed.
 *
 * One input is read straight into each batch slot's staging area in
 * large reads, its records described where they lie (no copy per
 * record). A plain file is mapped instead: an executor that works in the
 * reader's thread reads its records in the mapping; for one that reads
 * the staging (the gpu one) each batch's records, one span of the
 * mapping, are copied there by the copier's threads (pipeline_copy.c)
 * while the reader finds the next batch's; or, for an executor that finds
 * records itself, the mapping goes out in spans (pipeline_file_span.c)
 * and the reader reads on from where they stop. Several inputs are
 * merged in time order (the earliest record first; on a tie the later
 * input, as mergecap orders them), each read into its own buffer and its
 * records copied into the staging area.
 *
 * The reader waits (never drops) for a slot and for export room; the
 * writer sleeps while it has nothing to write; each wakes the other
 * (pipeline_file_batch.c). A stop ends the reading before the next batch;
 * the open batch then waits for the writer's room a bounded time (an
 * output whose reader stalls must not hold the stop) and is counted as
 * writer behind if it never gets it.
 *
 * The reading runs on a thread of its own while the calling thread
 * watches it: an inline kernel or a filter (cpu executor) runs on the
 * reader or on the executor's workers, and one that never returns must
 * neither hold the stop nor escape the executor's watchdog. A reader
 * still inside the executor past the stop's wait is left running
 * (gcap_pipeline_abandoned()), with its inputs.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <pcap/pcap.h>

#include "gpucap/gcap_thread.h"
#include "gpucap/gcap_capfile.h"
#include "pipeline_internal.h"

/* how long, once stopped, the watcher waits for the reader: its batch's
 * wait above and the batch's own work */
#define READER_STOP_WAIT_NS 5000000000u
/* how often the watcher looks at the reader (the join wakes at once when
 * the reader returns) */
#define WATCH_NS 20000000u

/* the reader thread's arguments and result */
struct file_run {
	struct gcap_pipeline *pl;
	struct gcap_capfile *const *in;
	const uint16_t *port_base;
	unsigned nin;
	int rc;
	char errbuf[GCAP_ERRBUF_SIZE];
};

/* The n packets just put in batch b (from b->n on), or to be copied there
 * from src with their addresses moved by delta (in the same pass):
 * numbered, their records' room and the counters. */
static void
file_describe(const struct gcap_pipeline *pl, struct pl_queue *q, struct gcap_batch *b,
	      unsigned n, uint16_t port_base, const uint64_t *raw,
	      const struct gcap_pkt *src, uintptr_t delta)
{
	const uint32_t snap = pl->conf.snaplen ? pl->conf.snaplen : UINT32_MAX;
	uint32_t seq = q->seq, rec = q->rec_bytes;
	uint64_t bytes = 0;

	for (unsigned i = b->n; i < b->n + n; i++) {
		struct gcap_pkt *d = &b->pkts[i];

		if (src != NULL) {
			*d = src[i - b->n];
			d->addr += delta;
		}
		pl->raw_ts[seq & pl->raw_mask] = raw[i - b->n];
		d->port = (uint16_t)(d->port + port_base);
		d->queue = 0;
		d->seq = seq++;
		rec += GCAP_REC_SIZE(d->caplen < snap ? d->caplen : snap);
		bytes += d->wirelen;
	}
	q->seq = seq;
	q->rec_bytes = rec;
	b->n += n;
	STAT_ADD(q->st.rx_pkts, n);
	STAT_ADD(q->st.rx_bytes, bytes);
}

/* A reader's failure as the pipeline's error. */
static int
file_fail(struct gcap_pipeline *pl, struct gcap_capfile *cf, int r, bool name)
{
	char msg[GCAP_ERRBUF_SIZE];
	const char *m = gcap_capfile_errmsg(cf);

	if (name)
		snprintf(msg, sizeof(msg), "%s: %s", gcap_capfile_name(cf),
			 m[0] ? m : strerror(-r));
	else
		snprintf(msg, sizeof(msg), "%s", m[0] ? m : strerror(-r));
	pl_set_error(pl, r, msg);
	return r;
}

/* One input, read in place into each slot's staging. */
static int
file_run_one(struct gcap_pipeline *pl, struct gcap_capfile *cf, uint16_t port_base)
{
	struct pl_queue *q = &pl->q[0];
	uint64_t *raw = calloc(pl->conf.batch_max, sizeof(*raw));
	int r = 0;

	if (raw == NULL)
		return -ENOMEM;

	/* an executor that works in this thread reads the packets where
	 * they lie: in the file's mapping, not even read into the staging */
	gcap_capfile_use_map(cf, pl->conf.ops->submit_works);
	for (;;) {
		struct gcap_batch *b;
		uint32_t used;
		int n;

		if ((b = gcap_pl_file_next(pl, q, &r)) == NULL)
			break;
		n = gcap_capfile_fill(cf, b->stage, b->stage_size, b->pkts, raw,
				      pl->conf.batch_max, &used);
		if (n <= 0) { /* -ECANCELED: a stop ended a pipe's wait */
			r = n == 0 || n == -ECANCELED ? 0 : file_fail(pl, cf, n, false);
			break;
		}
		file_describe(pl, q, b, (unsigned)n, port_base, raw, NULL, 0);
		b->stage_used = used;
		if ((r = gcap_pl_file_submit(pl, q)) < 0) {
			r = r == -ECANCELED ? 0 : r;
			break;
		}
	}
	free(raw);
	return r;
}

/* One mapped input for an executor that reads each batch's staging area:
 * the records are found in the mapping (into d and raw), and while their
 * span is copied into the slot's staging the next batch's are found. */
static int
file_run_span(struct gcap_pipeline *pl, struct gcap_capfile *cf, uint16_t port_base)
{
	struct pl_queue *q = &pl->q[0];
	const unsigned max = pl->conf.batch_max;
	struct gcap_pkt *d = calloc(max, sizeof(*d));
	uint64_t *raw = calloc(max, sizeof(*raw));
	uint8_t *buf = NULL; /* what libpcap reads after damage */
	struct pl_copier *cp = NULL;
	const uint8_t *span = NULL;
	uint32_t size = 0, used = 0;
	bool ahead = false; /* d and raw hold the next batch's n */
	int r = 0, n = 0;

	if (d == NULL || raw == NULL)
		r = -ENOMEM;
	else
		cp = gcap_pl_copier_start(pl->conf.file_copiers, &r);
	while (cp != NULL) {
		struct gcap_batch *b;

		if ((b = gcap_pl_file_next(pl, q, &r)) == NULL)
			break;
		if (buf == NULL) { /* the slots' staging size, known now */
			size = b->stage_size;
			if ((buf = malloc(size)) == NULL) {
				r = -ENOMEM;
				break;
			}
		}
		if (!ahead)
			n = gcap_capfile_fill_span(cf, buf, size, d, raw, max, &used,
						   &span);
		ahead = false;
		if (n <= 0) {
			r = n == 0 || n == -ECANCELED ? 0 : file_fail(pl, cf, n, false);
			break;
		}
		gcap_pl_copier_post(cp, b->stage, span, used);
		/* the records where the copy puts them */
		file_describe(pl, q, b, (unsigned)n, port_base, raw, d,
			      (uintptr_t)b->stage - (uintptr_t)span);
		b->stage_used = used;
		/* the next batch's records, unless libpcap's are in buf, which
		 * is being copied */
		if (span != buf) {
			n = gcap_capfile_fill_span(cf, buf, size, d, raw, max, &used,
						   &span);
			ahead = true;
		}
		uint64_t t0 = now_ns(CLOCK_MONOTONIC);

		gcap_pl_copier_wait(cp);
		STAT_ADD(q->st.file_wait_copy_ns, now_ns(CLOCK_MONOTONIC) - t0);
		if ((r = gcap_pl_file_submit(pl, q)) < 0) {
			r = r == -ECANCELED ? 0 : r;
			break;
		}
	}
	gcap_pl_copier_stop(cp);
	free(buf);
	free(raw);
	free(d);
	return r;
}

/* One input of a merge: its buffer and the records read into it. */
struct cursor {
	struct gcap_capfile *cf;
	uint8_t *buf;
	struct gcap_pkt *d;
	uint64_t *raw;
	unsigned n, i;
	bool end;
	uint16_t port_base;
};

/* The cursor's next record, reading on where it has none. @return 1, 0
 * at its end, or an error (its records so far were taken). */
static int
cursor_ready(struct gcap_pipeline *pl, struct cursor *c, uint32_t size)
{
	uint32_t used;
	int n;

	if (c->end)
		return 0;
	if (c->i < c->n)
		return 1;
	n = gcap_capfile_fill(c->cf, c->buf, size, c->d, c->raw, pl->conf.batch_max,
			      &used);
	if (n <= 0) {
		c->end = true;
		return n == -ECANCELED ? 0 : n; /* a stop ended a pipe's wait */
	}
	c->n = (unsigned)n;
	c->i = 0;
	return 1;
}

/* Several inputs, merged in time order; the first error of an input ends
 * that input (what it had is written) and is returned at the end. */
static int
file_run_merge(struct gcap_pipeline *pl, struct gcap_capfile *const *in,
	       const uint16_t *port_base, unsigned nin)
{
	struct pl_queue *q = &pl->q[0];
	const uint32_t size = gcap_pipeline_file_stage(pl->conf.batch_max);
	struct cursor *cs = calloc(nin, sizeof(*cs));
	int r = 0, err = 0;

	if (cs == NULL)
		return -ENOMEM;
	for (unsigned k = 0; k < nin; k++) {
		cs[k].cf = in[k];
		cs[k].port_base = port_base != NULL ? port_base[k] : 0;
		cs[k].buf = malloc(size);
		cs[k].d = calloc(pl->conf.batch_max, sizeof(*cs[k].d));
		cs[k].raw = calloc(pl->conf.batch_max, sizeof(*cs[k].raw));
		if (cs[k].buf == NULL || cs[k].d == NULL || cs[k].raw == NULL) {
			r = -ENOMEM;
			goto out;
		}
	}
	for (bool more = true; more;) {
		struct gcap_batch *b;

		if ((b = gcap_pl_file_next(pl, q, &r)) == NULL)
			break;
		while (b->n < pl->conf.batch_max) {
			struct cursor *best = NULL;
			uint64_t best_t = 0;

			for (unsigned k = 0; k < nin; k++) {
				int rr = cursor_ready(pl, &cs[k], size);

				if (rr < 0 && err == 0)
					err = file_fail(pl, cs[k].cf, rr, true);
				if (rr <= 0)
					continue;
				/* on a tie the later input, as mergecap */
				uint64_t t = cs[k].d[cs[k].i].ts_ns;

				if (best == NULL || t <= best_t) {
					best = &cs[k];
					best_t = t;
				}
			}
			if (best == NULL) {
				more = false;
				break;
			}
			struct gcap_pkt *src = &best->d[best->i];
			uint32_t at = (b->stage_used + 63u) & ~63u;

			if (src->caplen > b->stage_size || at > b->stage_size ||
			    src->caplen > b->stage_size - at)
				break; /* the next batch takes it */
			b->pkts[b->n] = *src;
			memcpy(b->stage + at, (const void *)(uintptr_t)src->addr,
			       src->caplen);
			b->pkts[b->n].addr = (uint64_t)(uintptr_t)(b->stage + at);
			b->stage_used = at + src->caplen;
			file_describe(pl, q, b, 1, best->port_base, &best->raw[best->i],
				      NULL, 0);
			best->i++;
		}
		if ((r = gcap_pl_file_submit(pl, q)) < 0) {
			r = r == -ECANCELED ? 0 : r;
			break;
		}
	}
out:
	for (unsigned k = 0; k < nin; k++) {
		free(cs[k].buf);
		free(cs[k].d);
		free(cs[k].raw);
	}
	free(cs);
	return r < 0 ? r : err;
}

/* The reading (the reader thread): one input or a merge, to the end. */
static int
file_read(struct gcap_pipeline *pl, struct gcap_capfile *const *in,
	  const uint16_t *port_base, unsigned nin, char *errbuf)
{
	struct pl_queue *q = &pl->q[0];
	bool more = true;
	int r = 0;

	if (nin == 1 && pl->conf.file_spans && (port_base == NULL || port_base[0] == 0))
		r = gcap_pl_file_run_spans(pl, in[0], &more);
	if (r == 0 && more) { /* else the spans read it all, or failed */
		if (nin == 1 && !pl->conf.ops->submit_works && gcap_capfile_mapped(in[0]))
			r = file_run_span(pl, in[0],
					  port_base != NULL ? port_base[0] : 0);
		else if (nin == 1)
			r = file_run_one(pl, in[0], port_base != NULL ? port_base[0] : 0);
		else
			r = file_run_merge(pl, in, port_base, nin);
	}
	if (q->cur != NULL && q->cur->n > 0 && r < 0) {
		/* a batch filled but not submitted (an executor failure) */
		q->seq -= q->cur->n;
		q->cur->n = 0;
	}
	q->cur = NULL;
	if (r < 0 && pl->error == 0)
		pl_set_error(pl, r, strerror(-r));
	return r < 0 ? gcap_err(errbuf, -r, "%s", pl->errmsg) : 0;
}

static void *
file_reader(void *arg)
{
	struct file_run *fr = arg;
	struct gcap_queue_stats *st = &fr->pl->q[0].st;
	uint64_t t0 = now_ns(CLOCK_MONOTONIC);
	struct rusage ru;

	fr->rc = file_read(fr->pl, fr->in, fr->port_base, fr->nin, fr->errbuf);
	STAT_ADD(st->file_ns, now_ns(CLOCK_MONOTONIC) - t0);
	if (getrusage(RUSAGE_THREAD, &ru) == 0)
		STAT_ADD(st->file_cpu_ns,
			 ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) *
					 1000000000u +
				 ((uint64_t)ru.ru_utime.tv_usec +
				  (uint64_t)ru.ru_stime.tv_usec) *
					 1000u);
	return NULL;
}

/* Every record between the reader and the writer gets its own time
 * fields' slot. They are at most the open batch's and those of the
 * batches that hold export memory: each of those holds an export buffer
 * (one batch each in file mode), and a region of at least
 * GCAP_REC_SIZE(0) bytes for each of its records, given back in order.
 * The lesser bound counts (with large batches the first is the larger
 * by far); a power of two, for the mask. */
static uint64_t
raw_ts_slots(unsigned batch_max, unsigned nxbufs, uint64_t xmem)
{
	uint64_t n = ((uint64_t)nxbufs + 1) * batch_max, sz = 1;
	uint64_t by_bytes = xmem / GCAP_REC_SIZE(0) + batch_max;

	if (by_bytes < n)
		n = by_bytes;
	while (sz < n)
		sz <<= 1;
	return sz;
}

uint32_t
gcap_pipeline_file_stage(unsigned batch_max)
{
	uint64_t b = (uint64_t)batch_max * 512u;

	return b > GCAP_PIPELINE_STAGE_FILE ? (uint32_t)b : GCAP_PIPELINE_STAGE_FILE;
}

uint64_t
gcap_pipeline_file_mem(unsigned ring_size, unsigned batch_max, unsigned nxbufs,
		       uint32_t xbuf_size, unsigned ninputs)
{
	uint64_t ts = raw_ts_slots(batch_max, nxbufs, (uint64_t)nxbufs * xbuf_size);
	/* an input's records found ahead (descriptors and time fields) and
	 * its buffer: for libpcap's records, or for each input merged */
	uint64_t in = (uint64_t)batch_max * (sizeof(struct gcap_pkt) + sizeof(uint64_t)) +
		      gcap_pipeline_file_stage(batch_max);

	return ts * sizeof(uint64_t) +
	       (uint64_t)ring_size * batch_max * sizeof(struct gcap_pkt) + ninputs * in;
}

static int
raw_ts_alloc(struct gcap_pipeline *pl)
{
	const struct pl_queue *q = &pl->q[0];
	uint64_t sz = raw_ts_slots(pl->conf.batch_max, q->nxbufs, q->xa.cap);

	free(pl->raw_ts);
	pl->raw_ts = calloc(sz, sizeof(*pl->raw_ts));
	if (pl->raw_ts == NULL)
		return -ENOMEM;
	pl->raw_mask = (uint32_t)(sz - 1);
	return 0;
}

int
gcap_pipeline_run_inputs(struct gcap_pipeline *pl, struct gcap_capfile *const *in,
			 const uint16_t *port_base, unsigned nin, char *errbuf)
{
	const struct gcap_pipeline_conf *c = &pl->conf;
	struct file_run *fr;
	char msg[GCAP_ERRBUF_SIZE] = "";
	uint64_t deadline = 0;
	int r, wd = 0;

	if (nin == 0 || in == NULL)
		return gcap_err(errbuf, EINVAL, "pipeline: no input");
	fr = calloc(1, sizeof(*fr));
	if (fr == NULL || raw_ts_alloc(pl) < 0) {
		free(fr);
		return gcap_err(errbuf, ENOMEM, "pipeline: out of memory");
	}
	fr->pl = pl;
	fr->in = in;
	fr->port_base = port_base;
	fr->nin = nin;
	r = gcap_pl_writer_start(pl, errbuf);
	if (r == 0 && (r = gcap_thread_start(&pl->reader, NULL, file_reader, fr)) != 0)
		r = gcap_err(errbuf, r, "cannot start the file reader: %s", strerror(r));
	else if (r == 0)
		pthread_setname_np(pl->reader, "gcap-reader"); /* for top -H */
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
			pl_bell_ring(&pl->rbell);
		}
		now = now_ns(CLOCK_MONOTONIC);
		if (deadline == 0 &&
		    (atomic_load(&pl->stop_rx) || atomic_load(&pl->finished))) {
			deadline = now + READER_STOP_WAIT_NS;
			/* a reader waiting for a pipe's bytes comes back */
			for (unsigned i = 0; i < nin; i++)
				gcap_capfile_stop(in[i]);
		}
		if (deadline != 0 && now > deadline) {
			/* the reader never came back from the executor: left
			 * running, with fr and the inputs (it still uses
			 * them); the stop reports why (gcap_exec_ops.stop) */
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

int
gcap_pipeline_run_file(struct gcap_pipeline *pl, pcap_t *p, char *errbuf)
{
	struct gcap_capfile *cf = gcap_capfile_from_pcap(p, errbuf);
	int r;

	if (cf == NULL)
		return -ENOMEM;
	r = gcap_pipeline_run_inputs(pl, &cf, NULL, 1, errbuf);
	if (!atomic_load(&pl->abandoned)) /* else the reader may still use it */
		gcap_capfile_close(cf);
	return r;
}
