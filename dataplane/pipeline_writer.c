/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pipeline's writer thread: it takes the export buffers of done
 * batches from every queue, writes their records to the outputs they
 * name (-c counts here), flushes and rotates the outputs on time, and
 * hands the buffers back to their queues. A thread of its own so that
 * file I/O never stalls an RX lcore.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "pipeline_internal.h"

/* Write one export buffer's records to the outputs they name. */
static int
write_xbuf(struct gcap_pipeline *pl, const struct gcap_xbuf *xb)
{
	const struct gcap_pipeline_conf *c = &pl->conf;
	const uint64_t outs =
		c->nwriters >= 64 ? UINT64_MAX : (UINT64_C(1) << c->nwriters) - 1;
	const uint8_t *data;
	struct gcap_rec rec;
	uint32_t off = 0;

	for (uint32_t i = 0; i < xb->nrec; i++) {
		uint64_t m;

		if (gcap_rec_step(xb->data, xb->len, &off, &rec, &data) <= 0)
			return -EINVAL;
		if (c->max_packets != 0 &&
		    atomic_load_explicit(&pl->written, memory_order_relaxed) >=
			    c->max_packets)
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
						stopped =
							true; /* -W with -G: last file done */
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
					pl_set_error(pl, r,
						     gcap_writer_errmsg(c->writers[j]));
					stopped = true;
				}
			}
			last_flush = now;
		}
		if (!any) {
			if (done)
				break;
			struct timespec ts = { 0, 50000 };

			nanosleep(&ts, NULL);
		}
	}
	return NULL;
}

int
gcap_pl_writer_start(struct gcap_pipeline *pl, char *errbuf)
{
	int r = pthread_create(&pl->writer, NULL, writer_main, pl);

	if (r != 0)
		return gcap_err(errbuf, r, "cannot start the writer thread: %s",
				strerror(r));
	pl->writer_started = true;
	return 0;
}

void
gcap_pl_writer_join(struct gcap_pipeline *pl)
{
	atomic_store(&pl->producers_done, 1);
	if (pl->writer_started) {
		pthread_join(pl->writer, NULL);
		pl->writer_started = false;
	}
}
