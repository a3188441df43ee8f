/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The emulated GPUDirect NIC's driver side, on the RX lcores: what a
 * ConnectX PMD does inside rte_eth_rx_burst(). An RX callback on each
 * queue reads the completion entries of the packets the burst took
 * (lengths, chain length, RX timestamp) into their first mbufs, then hands
 * the NIC as many fresh buffers as they used, from the queue's pool (the
 * lcore's mempool cache: the mbufs it freed last), reset. The rings
 * between the two sides are single-producer, single-consumer: completion
 * entries (NIC to driver, posted before their mbufs on the RX ring, in
 * the same order) and buffers handed out (driver to NIC). The feeding
 * threads (gpunic_feed.c) are the NIC: they take handed-out buffers, have
 * the GPU write them, and post completions; of the mbuf headers they
 * touch only a chain's links and its later segments' lengths. So the RX
 * lcores' per-packet work, and the floor's, is that of a real NIC's
 * queue.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>

#include <rte_branch_prediction.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "gpucap/gcap_gpunic.h"
#include "exec_gpu_internal.h"
#include "gpunic_nic.h"

/* entries read or buffers handed out at once */
#define DRV_CHUNK 64u

/* Hand the NIC the buffers q owes it, as many as the pool gives. Runs on
 * the queue's RX lcore (or, at start, before it polls). */
static void
drv_rearm(struct nic_queue *q)
{
	struct rte_mbuf *m[DRV_CHUNK];
	struct nic_post p[DRV_CHUNK];

	while (q->drv.owed > 0) {
		unsigned c = q->drv.owed < DRV_CHUNK ? q->drv.owed : DRV_CHUNK;

		/* fewer at a time when the pool is short: what it has goes */
		while (rte_pktmbuf_alloc_bulk(q->mp, m, c) != 0) {
			q->drv.nobuf++;
			if (c == 1)
				return;
			c /= 2;
		}
		for (unsigned i = 0; i < c; i++) {
			p[i].m = m[i];
			p[i].addr = (uint64_t)rte_pktmbuf_mtod(m[i], uintptr_t);
		}
		/* room: the ring holds every buffer the queue has, twice */
		if (rte_ring_enqueue_bulk_elem(q->posted, p, sizeof(p[0]), c, NULL) !=
		    c) {
			rte_pktmbuf_free_bulk(m, c);
			return;
		}
		q->drv.owed -= c;
	}
}

/* After the burst took n first mbufs from queue q's RX ring: their
 * completion entries (posted before them, in the same order), then the
 * buffers they used handed out again. */
static uint16_t
drv_rx(uint16_t port, uint16_t qid, struct rte_mbuf **pkts, uint16_t n, uint16_t max,
       void *arg)
{
	struct nic_queue *q = arg;
	const struct gcap_gpunic *nic = q->nic;
	struct nic_cqe e[DRV_CHUNK];
	unsigned segs = 0;

	(void)qid;
	(void)max;
	/* acquire: what the NIC put on the RX ring before it, the next poll
	 * takes (gcap_gpunic_idle) */
	q->drv.floor_prev = q->drv.floor_cur;
	q->drv.floor_cur = atomic_load_explicit(&q->floor, memory_order_acquire);
	for (unsigned off = 0; off < n; off += DRV_CHUNK) {
		unsigned c = n - off < DRV_CHUNK ? n - off : DRV_CHUNK;

		/* there: entries go before their mbufs, in the same order */
		rte_ring_dequeue_bulk_elem(q->cq, e, sizeof(e[0]), c, NULL);
		for (unsigned i = 0; i < c; i++) {
			struct rte_mbuf *m = pkts[off + i];

			m->data_len = e[i].len;
			m->pkt_len = e[i].wirelen;
			m->nb_segs = e[i].nsegs;
			m->port = port;
			*RTE_MBUF_DYNFIELD(m, nic->ts_off, rte_mbuf_timestamp_t *) =
				e[i].ts_ns;
			m->ol_flags |= nic->ts_flag;
			segs += e[i].nsegs;
		}
	}
	q->drv.owed += segs;
	if (unlikely(atomic_load_explicit(&q->drv.lost, memory_order_relaxed) != 0))
		q->drv.owed +=
			atomic_exchange_explicit(&q->drv.lost, 0, memory_order_relaxed);
	drv_rearm(q);
	return n;
}

int
gcap_gpunic_driver_start(struct gcap_gpunic *nic, char *errbuf)
{
	for (unsigned i = 0; i < nic->nq; i++) {
		struct nic_queue *q = &nic->q[i];

		/* the queue's buffers, handed out by the main lcore before
		 * the queue's lcore can poll */
		q->drv.owed = NIC_POSTED - (unsigned)rte_ring_count(q->posted);
		drv_rearm(q);
		if (q->cb == NULL) {
			q->cb = rte_eth_add_rx_callback(nic->port_id, (uint16_t)i, drv_rx,
							q);
			if (q->cb == NULL)
				return gcap_err(
					errbuf, rte_errno ? rte_errno : EINVAL,
					"%s queue %u: rte_eth_add_rx_callback: %s",
					nic->name, i, rte_strerror(rte_errno));
		}
	}
	return 0;
}

/* Before the port stops (the port kind's stop), no lcore polling: the
 * callbacks off, the buffers still handed out back to their pools. (DPDK
 * keeps a removed callback's memory, since an lcore might still be in it;
 * none is here. A port already closed keeps its callbacks registered:
 * close does not clear them, so this must come first.) */
void
gcap_gpunic_driver_stop(struct gcap_gpunic *nic)
{
	for (unsigned i = 0; nic->q != NULL && i < nic->nq; i++) {
		struct nic_queue *q = &nic->q[i];
		struct nic_post p[DRV_CHUNK];
		unsigned got;

		/* a port already closed took its callbacks with it */
		if (q->cb != NULL && nic->have_port &&
		    rte_eth_dev_is_valid_port(nic->port_id))
			rte_eth_remove_rx_callback(nic->port_id, (uint16_t)i, q->cb);
		q->cb = NULL;
		while (q->posted != NULL &&
		       (got = rte_ring_dequeue_burst_elem(q->posted, p, sizeof(p[0]),
							  DRV_CHUNK, NULL)) > 0)
			for (unsigned k = 0; k < got; k++)
				rte_pktmbuf_free(p[k].m);
		q->drv.owed = 0;
		atomic_store_explicit(&q->drv.lost, 0, memory_order_relaxed);
	}
}

uint64_t
gcap_gpunic_idle(void *arg, uint16_t queue)
{
	const struct gcap_gpunic *nic = arg;

	/* read before this poll took from the RX ring: every batch stamped
	 * before it was there, and this poll found nothing */
	return queue < nic->nq ? nic->q[queue].drv.floor_prev : 0;
}
