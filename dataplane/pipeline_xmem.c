/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pipeline queues' export memory: how large it is made
 * (gcap_pipeline_xmem_size), how a queue's export buffers become one
 * memory, and the regions of it that batches take and give back through
 * the writer (xarena.h does the byte ring; this file the descriptors
 * around it). Every call but the sizing runs on the queue's own thread
 * (its RX lcore, or the file reader). The per-poll tests (xbuf_ready,
 * xbuf_release_held) are inline in pipeline_internal.h.
 */
#include <errno.h>
#include <stdint.h>

#include "pipeline_internal.h"

int
gcap_pipeline_xmem_size(unsigned ring_size, unsigned batch_max, uint32_t max_caplen,
			uint32_t stage, unsigned *nxbufs, uint32_t *xbuf_size)
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

/* The executor's export buffers of q, back to back, become one memory
 * that each batch takes a region of (xarena.h): their count bounds the
 * batches between submission and the writer, their memory the bytes. */
int
gcap_pl_xmem_init(struct pl_queue *q)
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

/* The xbufs the writer is done with: their regions come back (the writer
 * returns them in the order they were taken), they wait in the stash. */
void
gcap_pl_xbufs_reclaim(struct pl_queue *q)
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
void
gcap_pl_xbuf_retire(struct pl_queue *q, struct gcap_xbuf *xb)
{
	size_t i = (size_t)(xb - q->xbufs);

	if (xb->nrec == 0) {
		if (q->xstart[i] != q->xa.tail)
			gcap_pl_xbufs_reclaim(q); /* older ones may be back */
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

/* An xbuf with a region of need bytes for one batch's records, or NULL
 * (no xbuf, or no room: the writer is behind). */
struct gcap_xbuf *
gcap_pl_xbuf_bind(struct pl_queue *q, uint32_t need)
{
	struct gcap_xbuf *xb;
	uint64_t start, end;
	uint8_t *p = NULL;

	if ((xb = q->held) != NULL) {
		/* grow the held region in place if it can, else it goes to
		 * the writer before any region is taken after it */
		uint64_t *e = &q->xend[xb - q->xbufs];
		uint64_t grown = (uint64_t)xb->size + need <= UINT32_MAX - 64 ?
					 gcap_xarena_extend(&q->xa, *e, need) :
					 0;

		q->held = NULL;
		if (grown != 0) {
			xb->size += (uint32_t)(grown - *e);
			*e = grown;
			return xb;
		}
		gcap_pl_xbuf_retire(q, xb);
	}
	start = q->xa.head;
	if (q->nstash > 0)
		p = gcap_xarena_take(&q->xa, need, &end);
	if (p == NULL) {
		gcap_pl_xbufs_reclaim(q);
		start = q->xa.head;
		if (q->nstash == 0 || (p = gcap_xarena_take(&q->xa, need, &end)) == NULL)
			return NULL;
	}
	xb = q->stash[--q->nstash];
	xb->data = p;
	xb->size = need;
	xb->len = 0;
	xb->nrec = 0;
	xb->flags = 0;
	q->xend[xb - q->xbufs] = end;
	q->xstart[xb - q->xbufs] = start;
	return xb;
}

/* Undo gcap_pl_xbuf_bind() for a batch the executor refused. Its region
 * is the newest: a fresh one goes back at once, a grown one (held before
 * the bind) is held again, larger. */
void
gcap_pl_xbuf_unbind(struct pl_queue *q, struct gcap_xbuf *xb,
		    const struct gcap_xbuf *held)
{
	uint64_t *end = &q->xend[xb - q->xbufs];

	if (xb == held) {
		q->held = xb;
	} else {
		gcap_xarena_untake(&q->xa, *end, xb->size);
		*end = 0;
		q->stash[q->nstash++] = xb;
	}
}
