/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The emulated GPUDirect NIC's feeding threads: per RX queue, the NIC's
 * side of a real queue (the driver's side runs on the RX lcores,
 * gpunic_driver.c). A thread takes buffers the driver handed out, writes
 * one descriptor per segment (per 4 KiB piece of a larger one) to pinned
 * memory, and launches the DMA kernel once per batch; once it sees the
 * launch's completion word, it posts a completion entry per packet
 * (lengths, RX timestamp), links a chain's mbufs and sets their lengths
 * after the first (the only headers it touches), and enqueues the
 * packets' first mbufs on the RX ring; with loop=1 it then publishes the
 * queue's floor, the driver's idle mark. At stop, every mbuf held goes back
 * and what bounded each queue is logged. With agent=cpu the thread makes
 * the copy itself (tests and machines without a GPU).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_pause.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "gpucap/gcap_thread.h"
#include "gpucap/gcap_gpunic.h"
#include "exec_gpu_internal.h"
#include "gpunic_nic.h"

static uint64_t
clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* loop=1: the host's clock for queue q, never before what it stamped
 * or published last (the clock may be stepped back, and the writer's
 * time order counts on each queue's times going forward) */
static uint64_t
nic_clock(const struct nic_queue *q)
{
	uint64_t t = clock_ns(CLOCK_REALTIME);

	return t < q->last_ts ? q->last_ts : t;
}

static unsigned
segs_of(const struct nic_queue *q, const struct gcap_nic_pkt *p)
{
	return p->caplen <= q->room ? 1u : (p->caplen + q->room - 1) / q->room;
}

/* Back to the pool: n buffers taken from the driver, not linked. */
static void
nic_free_posts(const struct nic_post *p, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		rte_pktmbuf_free_seg(p[i].m);
}

/* Launch the next batch of queue q. @return whether one went. */
static bool
nic_launch(struct gcap_gpunic *nic, struct nic_queue *q)
{
	struct nic_slot *sl = &q->slot[q->head % NIC_SLOTS];
	unsigned n = 0, nsegs = 0, ndesc = 0, k = 0, d = 0, grid;
	CUdeviceptr dd, dn;
	void *args[6];

	if (q->head - q->tail == NIC_SLOTS) {
		q->slots_full++;
		return false;
	}
	if (q->nlist == 0 || (q->cur == q->nlist && !nic->args.loop))
		return false;
	/* loop=1: a batch runs on past the list's end into its next pass,
	 * so that every launch is a whole one whatever the list's length */
	for (size_t li = q->cur; n < NIC_BATCH; n++, li++) {
		if (li == q->nlist) {
			if (!nic->args.loop)
				break;
			li = 0;
		}
		const struct gcap_nic_pkt *p = &nic->cap.pkts[q->list[li]];
		unsigned s = segs_of(q, p);
		/* at most: one piece per segment, one more per NIC_CHUNK */
		unsigned pd = s + p->caplen / NIC_CHUNK;

		if (nsegs + s > NIC_SEGS || ndesc + pd > NIC_DESCS)
			break;
		nsegs += s;
		ndesc += pd;
	}
	if (n == 0)
		return false;
	/* room for the packets in flight and these (and so for their
	 * completion entries: that ring holds the RX ring's and a burst
	 * more, gpunic.c) */
	if (rte_ring_free_count(q->ring) < q->held + n) {
		q->ring_full++;
		return false;
	}
	if (rte_ring_dequeue_bulk_elem(q->posted, sl->post, sizeof(sl->post[0]), nsegs,
				       NULL) == 0) {
		q->nombuf++;
		return false;
	}
	for (size_t i = 0, li = q->cur; i < n; i++, li++) {
		if (li == q->nlist)
			li = 0;

		uint32_t pi = q->list[li];
		const struct gcap_nic_pkt *p = &nic->cap.pkts[pi];
		uint32_t left = p->caplen, off = (uint32_t)p->off;

		sl->pkt[i] = pi;
		do {
			uint32_t l = left < q->room ? left : q->room;
			uint64_t dst = sl->post[k].addr;
			uint32_t at = 0;

			/* the segment in pieces of NIC_CHUNK, a warp each (an
			 * empty one too: a launch has at least one) */
			do {
				sl->desc[d].dst = dst + at;
				sl->desc[d].src = off + at;
				sl->desc[d].len = l - at < NIC_CHUNK ? l - at : NIC_CHUNK;
				d++;
				at += NIC_CHUNK;
			} while (at < l);
			off += l;
			left -= l;
			k++;
		} while (left > 0);
	}
	sl->npkts = n;
	sl->nsegs = nsegs;
	sl->ndesc = d;
	sl->seq = q->seq++;
	dd = (CUdeviceptr)(uintptr_t)sl->desc;
	dn = (CUdeviceptr)(uintptr_t)sl->done;
	args[0] = &dd;
	args[1] = &sl->ndesc;
	args[2] = &nic->stage;
	args[3] = &q->ctr;
	args[4] = &dn;
	args[5] = &sl->seq;
	grid = (d + 7) / 8;
	q->t_launch[q->head % NIC_SLOTS] = clock_ns(CLOCK_MONOTONIC);
	if (nic->args.cpu_agent) {
		/* agent=cpu: the copy the DMA kernel would make */
		for (unsigned j = 0; j < d; j++)
			memcpy((void *)(uintptr_t)sl->desc[j].dst,
			       nic->cap.bytes + sl->desc[j].src, sl->desc[j].len);
		__atomic_store_n(sl->done, sl->seq, __ATOMIC_RELEASE);
	} else if (nic->cu->LaunchKernel(nic->fn, grid, 1, 1, 256, 1, 1, 0, q->stream,
					 args, NULL) != CUDA_SUCCESS) {
		/* back to the pool, and the driver owes the NIC as many */
		nic_free_posts(sl->post, nsegs);
		atomic_fetch_add_explicit(&q->drv.lost, nsegs, memory_order_relaxed);
		q->seq--;
		return false;
	}
	q->cur += n;
	if (nic->args.loop)
		q->cur %= q->nlist;
	q->held += n;
	q->head++;
	q->launches++;
	return true;
}

/* Completions of queue q, in order: a completion entry per packet, then
 * its first mbuf on the RX ring (the driver reads the entries in the
 * order it takes the mbufs). @return whether any. */
static bool
nic_complete(struct gcap_gpunic *nic, struct nic_queue *q)
{
	bool any = false;

	while (q->tail != q->head) {
		struct nic_slot *sl = &q->slot[q->tail % NIC_SLOTS];
		struct rte_mbuf *heads[NIC_BATCH];
		struct nic_cqe cqe[NIC_BATCH];
		unsigned k = 0;
		uint64_t ts = 0;

		if (__atomic_load_n(sl->done, __ATOMIC_ACQUIRE) != sl->seq)
			break;
		q->busy_ns +=
			clock_ns(CLOCK_MONOTONIC) - q->t_launch[q->tail % NIC_SLOTS];
		/* loop=1: the time the batch arrived, on the host's clock, as a
		 * NIC stamps arrivals. The file's times would give each queue
		 * a clock of its own: the queues hold different numbers of
		 * the file's packets, so at one rate their passes, and their
		 * times, drift apart, and no time order across them holds */
		if (nic->args.loop) {
			ts = nic_clock(q);
			q->last_ts = ts;
		}
		for (unsigned i = 0; i < sl->npkts; i++) {
			const struct gcap_nic_pkt *p = &nic->cap.pkts[sl->pkt[i]];
			uint32_t left = p->caplen, l = left < q->room ? left : q->room;
			uint16_t ns = (uint16_t)segs_of(q, p);

			heads[i] = sl->post[k].m;
			/* the length on the wire, as the file has it */
			cqe[i] =
				(struct nic_cqe){ .ts_ns = nic->args.loop ? ts : p->ts_ns,
						  .wirelen = p->wirelen,
						  .len = (uint16_t)l,
						  .nsegs = ns };
			/* a chain: its links and the other rooms' lengths */
			for (uint16_t j = 1; j < ns; j++) {
				struct rte_mbuf *s = sl->post[k + j].m;

				left -= l;
				l = left < q->room ? left : q->room;
				s->data_len = (uint16_t)l;
				sl->post[k + j - 1].m->next = s;
			}
			k += ns;
		}
		/* room was checked before the launch */
		rte_ring_enqueue_bulk_elem(q->cq, cqe, sizeof(cqe[0]), sl->npkts, NULL);
		rte_ring_enqueue_bulk(q->ring, (void **)heads, sl->npkts, NULL);
		q->held -= sl->npkts;
		q->tail++;
		any = true;
	}
	return any;
}

/* loop=1: every batch of q stamped so far is on the RX ring (after
 * nic_complete): publish the time no later one is stamped before, as the
 * driver's idle mark (gcap_gpunic_idle), so that a queue that has nothing
 * does not hold the writer's time order. Stamps never go below it. */
static void
nic_floor(const struct gcap_gpunic *nic, struct nic_queue *q)
{
	uint64_t t;

	if (!nic->args.loop)
		return;
	t = nic_clock(q);
	if (t - atomic_load_explicit(&q->floor, memory_order_relaxed) < NIC_FLOOR_NS)
		return;
	q->last_ts = t;
	/* release: the batches on the RX ring before it */
	atomic_store_explicit(&q->floor, t, memory_order_release);
}

struct feeder {
	struct gcap_gpunic *nic;
	unsigned first, step;
};

static void *
nic_feeder(void *arg)
{
	struct feeder *f = arg;
	struct gcap_gpunic *nic = f->nic;
	unsigned idle = 0;

	if (nic->ctx != NULL)
		nic->cu->CtxSetCurrent(nic->ctx);
	while (!atomic_load_explicit(&nic->stop, memory_order_relaxed)) {
		bool work = false, inflight = false;

		for (unsigned i = f->first; i < nic->nq; i += f->step) {
			struct nic_queue *q = &nic->q[i];
			bool done = nic_complete(nic, q), launched;

			nic_floor(nic, q);
			launched = nic_launch(nic, q);
			/* buffers a failed launch gave back (lost) are handed
			 * out again only when the capture polls: not a stall */
			bool stalled = !launched && q->head == q->tail &&
				       atomic_load_explicit(&q->drv.lost,
							    memory_order_relaxed) == 0;

			work |= done || launched;
			inflight |= q->head != q->tail;
			/* stored when it changes: the line is not written
			 * on every turn */
			if (stalled !=
			    atomic_load_explicit(&q->stalled, memory_order_relaxed))
				atomic_store_explicit(&q->stalled, stalled,
						      memory_order_release);
		}
		/* a launch in flight: its completion is polled for, as a
		 * driver polls its completion queue; nothing to do: pause,
		 * then sleep */
		if (work || inflight) {
			idle = 0;
			if (!work)
				rte_pause();
		} else if (++idle < 4096) {
			rte_pause();
		} else {
			struct timespec ts = { 0, 20000 };

			nanosleep(&ts, NULL);
		}
	}
	free(f);
	return NULL;
}

/* prefill=1: wait (at most 10 s) until the NIC has filled every queue
 * as far as it can before the capture takes anything (each one stalled:
 * its packets delivered, its RX ring full, or the buffers handed out
 * used, which chained packets use faster than the ring's slots), so that
 * a capture whose kernel launches serialise (compute-sanitizer) finds
 * them there before its persistent kernel starts. */
static void
nic_prefill(struct gcap_gpunic *nic)
{
	/* by the clock: a sleep of 20 us can take several times that */
	for (uint64_t end = clock_ns(CLOCK_MONOTONIC) + 10000000000u;
	     clock_ns(CLOCK_MONOTONIC) < end;) {
		struct timespec ts = { 0, 20000 };
		bool all = true;

		for (unsigned k = 0; k < nic->nq; k++)
			all = all && atomic_load_explicit(&nic->q[k].stalled,
							  memory_order_acquire);
		if (all) {
			unsigned n = 0;

			for (unsigned k = 0; k < nic->nq; k++)
				n += rte_ring_count(nic->q[k].ring);
			GPU_LOG(INFO,
				"%s: prefill=1: %u packets in the RX rings, as many as "
				"the NIC can deliver before they are taken\n",
				nic->name, n);
			return;
		}
		nanosleep(&ts, NULL);
	}
	GPU_LOG(WARNING, "%s: prefill=1: the RX rings were not filled in 10 s\n",
		nic->name);
}

/* The CPUs the feeding threads may use: those the process was allowed at
 * its start (a taskset's, a container's) but the RX lcores' (the thread
 * that starts them is the main lcore, pinned to one CPU, which they
 * would otherwise all share); all of those when nothing is left.
 * @return how many the lcores leave (0: none, *set is then all). */
static int
feeder_cpus(cpu_set_t *set)
{
	unsigned cpus[CPU_SETSIZE], lc;
	int n = gcap_cpus_at_start(cpus, CPU_SETSIZE);
	cpu_set_t all;

	CPU_ZERO(set);
	if (n > 0) {
		for (int i = 0; i < n; i++)
			CPU_SET((int)cpus[i], set);
	} else {
		long on = sysconf(_SC_NPROCESSORS_ONLN);

		for (long c = 0; c < on && c < CPU_SETSIZE; c++)
			CPU_SET((int)c, set);
	}
	all = *set;
	RTE_LCORE_FOREACH_WORKER(lc)
	{
		rte_cpuset_t cs = rte_lcore_cpuset(lc);

		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &cs))
				CPU_CLR(c, set);
	}
	n = CPU_COUNT(set);
	if (n == 0)
		*set = all;
	return n;
}

/* How many feeding threads by default: one per queue where the CPUs the
 * RX lcores leave hold them besides the writer and the main thread, else
 * the most that divides the queues evenly. A NIC needs no CPU to receive;
 * feeders that crowd the pipeline's own threads off their CPUs would make
 * every capture on this port slower than the same capture on a real one. */
static unsigned
feeders_default(unsigned nq, int free_cpus)
{
	int room = free_cpus - 2;
	unsigned n = nq;

	while (n > 1 && (nq % n != 0 || (int)n > room))
		n--;
	return n;
}

int
gcap_gpunic_start(struct gcap_gpunic *nic, char *errbuf)
{
	unsigned n;
	int free_cpus;
	pthread_attr_t attr;
	cpu_set_t cpus;

	free_cpus = feeder_cpus(&cpus);
	n = nic->args.feeders ? nic->args.feeders : feeders_default(nic->nq, free_cpus);
	if (n > nic->nq)
		n = nic->nq;
	if (n > sizeof(nic->th) / sizeof(nic->th[0]))
		n = sizeof(nic->th) / sizeof(nic->th[0]);
	for (unsigned q = 0; q < nic->nq; q++) {
		if (nic->q[q].mp == NULL)
			return gcap_err(errbuf, EINVAL, "%s: queue %u has no pool",
					nic->name, q);
		atomic_store(&nic->q[q].stalled, false); /* a restart's */
		atomic_store(&nic->q[q].floor, 0);
		nic->q[q].drv.floor_cur = nic->q[q].drv.floor_prev = 0;
	}
	/* the buffers handed out and the driver on the lcores, before the
	 * NIC runs */
	int rc = gcap_gpunic_driver_start(nic, errbuf);

	if (rc)
		return rc;
	atomic_store(&nic->stop, false);
	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(cpus), &cpus);
	for (unsigned i = 0; i < n; i++) {
		struct feeder *f = malloc(sizeof(*f));
		int r;

		if (f == NULL) {
			pthread_attr_destroy(&attr);
			gcap_gpunic_stop(nic);
			return gcap_err(errbuf, ENOMEM, "out of memory");
		}
		f->nic = nic;
		f->first = i;
		f->step = n;
		r = gcap_thread_start(&nic->th[i], &attr, nic_feeder, f);
		if (r != 0) {
			free(f);
			pthread_attr_destroy(&attr);
			gcap_gpunic_stop(nic);
			return gcap_err(errbuf, r, "pthread_create: %s", strerror(r));
		}
		/* named, so that top -H tells them from the writer */
		pthread_setname_np(nic->th[i], "gpunic-feed");
		nic->nth++;
	}
	pthread_attr_destroy(&attr);
	GPU_LOG(INFO, "%s: %u feeding thread(s) for %u queue(s), on %d CPU(s)%s\n",
		nic->name, n, nic->nq, CPU_COUNT(&cpus),
		nic->args.feeders ? "" :
				    "; as many as those CPUs hold beside the writer and "
				    "the main thread");
	if (nic->args.prefill)
		nic_prefill(nic);
	return 0;
}

void
gcap_gpunic_stop(struct gcap_gpunic *nic)
{
	if (nic == NULL)
		return;
	atomic_store(&nic->stop, true);
	for (unsigned i = 0; i < nic->nth; i++)
		pthread_join(nic->th[i], NULL);
	nic->nth = 0;
	if (nic->ctx != NULL)
		nic->cu->CtxSetCurrent(nic->ctx);
	for (unsigned i = 0; nic->q != NULL && i < nic->nq; i++) {
		struct nic_queue *q = &nic->q[i];
		struct rte_mbuf *m[64];
		unsigned got;

		if (q->stream != NULL && nic->cu != NULL)
			nic->cu->StreamSynchronize(q->stream);
		/* launched, not completed: back to the pool unlinked */
		for (; q->tail != q->head; q->tail++) {
			struct nic_slot *sl = &q->slot[q->tail % NIC_SLOTS];

			nic_free_posts(sl->post, sl->nsegs);
			q->held -= sl->npkts;
		}
		while (q->ring != NULL &&
		       (got = rte_ring_dequeue_burst(q->ring, (void **)m, 64, NULL)) > 0)
			rte_pktmbuf_free_bulk(m, got);
		if (q->cq != NULL)
			rte_ring_reset(q->cq);
		if (q->launches > 0)
			GPU_LOG(INFO,
				"%s queue %u: %" PRIu64 " launches, %.1f us launch to "
				"completion seen, waits for buffers %" PRIu64
				", for RX ring room %" PRIu64 ", for a slot %" PRIu64
				"; the driver's allocations that failed %" PRIu64 "\n",
				nic->name, i, q->launches,
				(double)q->busy_ns / 1e3 / (double)q->launches, q->nombuf,
				q->ring_full, q->slots_full, q->drv.nobuf);
		q->launches = q->busy_ns = q->nombuf = q->ring_full = q->slots_full = 0;
		q->drv.nobuf = 0;
	}
	gcap_gpunic_driver_stop(nic);
}
