/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The emulated GPUDirect NIC: an ethdev from rte_eth_from_rings() whose RX
 * rings are filled as a ConnectX RX queue receiving into GPU memory fills
 * them. The captures (gpunic_file.c) are staged once in VRAM; per queue, a
 * feeding thread (the NIC's side of the queue) takes free mbufs from the
 * queue's pool, writes a descriptor per segment (the data room's address,
 * the packet's place in the stage, its length) into pinned memory, and
 * launches the "DMA" kernel (kernels/gpunic_dma.cu), which writes the bytes
 * into the data rooms and publishes a completion word. On completion the
 * thread sets what a driver sets from a completion entry (lengths, the
 * file's time in the RX timestamp field, the chain) and enqueues the mbufs
 * on the RX ring. One launch per batch of packets; the CPU never touches a
 * packet byte, and with --mem gpu cannot (the data rooms are VRAM).
 * Queues get the packets by symmetric flow hash, in file order within a
 * queue. Without loop=1 every packet is delivered once.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_mempool.h>
#include <rte_pause.h>
#include <rte_ring.h>

#include "gpucap/gcap_gpunic.h"
#include "exec_gpu_internal.h"
#include "gpunic_internal.h"

/* packets per launch, and segments (a packet larger than a data room is
 * a chain, as with scattered RX) */
#define NIC_BATCH 512u
#define NIC_SEGS 1024u
/* launches in flight per queue */
#define NIC_SLOTS 4u
/* the RX ring: what a real queue's descriptor ring holds */
#define NIC_RING 4096u
/* launch streams, shared by the queues: with the persistent kernel's and
 * the state snapshot's, within the driver's 8 hardware work queues
 * (CUDA_DEVICE_MAX_CONNECTIONS), so that no launch waits behind the
 * persistent kernel (copy.c says more) */
#define NIC_STREAMS 4u
#define NIC_MAX_QUEUES 128u
#define NIC_MAX_REG 64u

/* the DMA kernel's descriptor (struct gcap_gpunic_desc, gpunic_dma.cu) */
struct nic_desc {
	uint64_t dst;
	uint32_t src;
	uint32_t len;
};
_Static_assert(sizeof(struct nic_desc) == 16, "descriptor layout");

extern const unsigned char gcap_gpunic_fatbin[];

struct nic_slot {
	struct nic_desc *desc; /* pinned, NIC_SEGS */
	uint32_t *done;        /* pinned completion word */
	struct rte_mbuf *segs[NIC_SEGS];
	uint32_t pkt[NIC_BATCH]; /* packet indices */
	unsigned npkts, nsegs;
	uint32_t seq;
};

struct nic_queue {
	struct rte_ring *ring;
	struct rte_mempool *mp;
	uint32_t *list; /* its packets, in file order */
	size_t nlist, cur;
	uint32_t room; /* bytes a data room takes */
	CUstream stream;
	CUdeviceptr ctr; /* the kernel's block counter */
	struct nic_slot slot[NIC_SLOTS];
	unsigned head, tail; /* launches: issued, completed */
	unsigned held;       /* packets in flight */
	uint32_t seq;
	uint64_t nombuf;
};

struct gcap_gpunic {
	struct gcap_nic_args args;
	struct gcap_nic_capture cap;
	const struct gcap_cu *cu;
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction fn;
	CUdeviceptr stage;
	void *pinned;
	unsigned nq;
	struct nic_queue *q;
	struct rte_ring *txr;
	uint16_t port_id;
	bool have_port;
	int ts_off;
	uint64_t ts_flag;
	CUstream streams[NIC_STREAMS];
	unsigned nstreams;
	pthread_t th[64];
	unsigned nth;
	atomic_bool stop;
	void *reg[NIC_MAX_REG]; /* host memory this NIC registered */
	unsigned nreg;
	char name[64];
};

/* Which ports are emulated NICs: --mem gpu asks by port id (pools.c), as
 * DPDK's own tables are by port id. */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static bool g_is_nic[RTE_MAX_ETHPORTS];

bool
gcap_gpunic_is(uint16_t port_id)
{
	bool r = false;

	pthread_mutex_lock(&g_lock);
	if (port_id < RTE_MAX_ETHPORTS)
		r = g_is_nic[port_id];
	pthread_mutex_unlock(&g_lock);
	return r;
}

static int
nic_gpu(const struct gcap_cu **cu, int gpu, CUdevice *dev, char *errbuf)
{
	char why[GCAP_ERRBUF_SIZE];
	int n = 0;

	*cu = gcap_cu_load(why);
	if (*cu == NULL)
		return gcap_err(errbuf, errno ? errno : ENODEV,
				"the emulated GPUDirect NIC needs a GPU: %s", why);
	if ((*cu)->DeviceGetCount(&n) != CUDA_SUCCESS || n == 0)
		return gcap_err(errbuf, ENODEV,
				"the emulated GPUDirect NIC needs a GPU: none found");
	if (gpu >= n)
		return gcap_err(errbuf, ENODEV, "gpu=%d: no such GPU (%d found)", gpu, n);
	if ((*cu)->PointerGetAttribute == NULL || (*cu)->MemHostRegister == NULL)
		return gcap_err(errbuf, ENOTSUP,
				"the emulated GPUDirect NIC: CUDA driver too old");
	return gcap_cu_err(*cu, (*cu)->DeviceGet(dev, gpu), errbuf, "cuDeviceGet");
}

int
gcap_gpunic_check(const char *args, char *errbuf)
{
	struct gcap_nic_args a;
	const struct gcap_cu *cu;
	CUdevice dev;
	int rc = gcap_nic_args_parse(args, true, &a, errbuf);

	if (rc == 0)
		rc = nic_gpu(&cu, a.gpu, &dev, errbuf);
	gcap_nic_args_free(&a);
	return rc;
}

/* ---- set-up ------------------------------------------------------------ */

/* Spread the packets over the queues by flow hash, file order kept. */
static int
nic_spread(struct gcap_gpunic *nic, char *errbuf)
{
	size_t *cnt = calloc(nic->nq, sizeof(*cnt));

	if (cnt == NULL)
		return gcap_err(errbuf, ENOMEM, "out of memory");
	for (size_t i = 0; i < nic->cap.npkts; i++)
		cnt[nic->cap.pkts[i].hash % nic->nq]++;
	for (unsigned q = 0; q < nic->nq; q++) {
		nic->q[q].list = malloc((cnt[q] ? cnt[q] : 1) * sizeof(uint32_t));
		if (nic->q[q].list == NULL) {
			free(cnt);
			return gcap_err(errbuf, ENOMEM, "out of memory");
		}
	}
	free(cnt);
	for (size_t i = 0; i < nic->cap.npkts; i++) {
		struct nic_queue *q = &nic->q[nic->cap.pkts[i].hash % nic->nq];

		q->list[q->nlist++] = (uint32_t)i;
	}
	return 0;
}

static int
nic_cuda_setup(struct gcap_gpunic *nic, char *errbuf)
{
	const struct gcap_cu *cu = nic->cu;
	size_t per = NIC_SLOTS * (NIC_SEGS * sizeof(struct nic_desc) + 64);
	CUdeviceptr dp = 0;
	int rc;

	rc = gcap_cu_err(cu, cu->DevicePrimaryCtxRetain(&nic->ctx, nic->dev), errbuf,
			 "cuDevicePrimaryCtxRetain");
	if (rc)
		return rc;
	rc = gcap_cu_err(cu, cu->CtxSetCurrent(nic->ctx), errbuf, "cuCtxSetCurrent");
	if (!rc)
		rc = gcap_cu_err(cu, cu->ModuleLoadData(&nic->mod, gcap_gpunic_fatbin),
				 errbuf, "cuModuleLoadData(gpunic DMA kernel)");
	if (!rc)
		rc = gcap_cu_err(
			cu, cu->ModuleGetFunction(&nic->fn, nic->mod, "gcap_gpunic_dma"),
			errbuf, "cuModuleGetFunction(gcap_gpunic_dma)");
	/* the wire: every packet in VRAM, written there once */
	if (!rc)
		rc = gcap_cu_err(cu, cu->MemAlloc(&nic->stage, nic->cap.len + 8), errbuf,
				 "cuMemAlloc(staged captures)");
	if (!rc)
		rc = gcap_cu_err(cu,
				 cu->MemcpyHtoD(nic->stage, nic->cap.bytes, nic->cap.len),
				 errbuf, "cuMemcpyHtoD(staged captures)");
	if (!rc)
		rc = gcap_cu_err(cu,
				 cu->MemHostAlloc(&nic->pinned, per * nic->nq,
						  CU_MEMHOSTALLOC_DEVICEMAP |
							  CU_MEMHOSTALLOC_PORTABLE),
				 errbuf, "cuMemHostAlloc(gpunic descriptors)");
	if (rc)
		return rc;
	if (cu->MemHostGetDevicePointer(&dp, nic->pinned, 0) != CUDA_SUCCESS ||
	    dp != (CUdeviceptr)(uintptr_t)nic->pinned)
		return gcap_err(
			errbuf, ENOTSUP,
			"pinned memory has a device address different from its host one");
	for (unsigned i = 0; i < nic->nq; i++) {
		struct nic_queue *q = &nic->q[i];
		unsigned char *base = (unsigned char *)nic->pinned + per * i;

		if (i < NIC_STREAMS) {
			rc = gcap_cu_err(cu,
					 cu->StreamCreate(&nic->streams[i],
							  CU_STREAM_NON_BLOCKING),
					 errbuf, "cuStreamCreate(gpunic)");
			if (rc)
				return rc;
			nic->nstreams++;
		}
		q->stream = nic->streams[i % NIC_STREAMS];
		rc = gcap_cu_err(cu, cu->MemAlloc(&q->ctr, sizeof(uint32_t)), errbuf,
				 "cuMemAlloc(gpunic counter)");
		if (!rc)
			rc = gcap_cu_err(cu, cu->MemsetD8(q->ctr, 0, sizeof(uint32_t)),
					 errbuf, "cuMemsetD8(gpunic counter)");
		if (rc)
			return rc;
		for (unsigned s = 0; s < NIC_SLOTS; s++) {
			q->slot[s].desc =
				(struct nic_desc *)(base +
						    s * NIC_SEGS *
							    sizeof(struct nic_desc));
			q->slot[s].done = (uint32_t *)(base +
						       NIC_SLOTS * NIC_SEGS *
							       sizeof(struct nic_desc) +
						       64 * s);
			*q->slot[s].done = UINT32_MAX;
		}
		q->seq = 1;
	}
	return 0;
}

struct gcap_gpunic *
gcap_gpunic_create(const char *ethdev_name, const char *args, unsigned nqueues,
		   int socket, uint16_t *port_id, char *errbuf)
{
	/* ring names: the ethdev's without the driver's prefix */
	const char *ring_prefix =
		strncmp(ethdev_name, "net_ring_", 9) == 0 ? ethdev_name + 9 : ethdev_name;
	struct gcap_gpunic *nic;
	struct rte_ring *rx[NIC_MAX_QUEUES];
	int rc, id;

	if (nqueues == 0 || nqueues > NIC_MAX_QUEUES)
		return gcap_err_null(errbuf, EINVAL, "%u RX queues (1..%u)", nqueues,
				     NIC_MAX_QUEUES);
	nic = calloc(1, sizeof(*nic));
	if (nic == NULL)
		return gcap_err_null(errbuf, ENOMEM, "out of memory");
	nic->nq = nqueues;
	snprintf(nic->name, sizeof(nic->name), "%s", ethdev_name);
	nic->q = calloc(nqueues, sizeof(*nic->q));
	rc = nic->q == NULL ? gcap_err(errbuf, ENOMEM, "out of memory") :
			      gcap_nic_args_parse(args, false, &nic->args, errbuf);
	if (!rc)
		rc = nic_gpu(&nic->cu, nic->args.gpu, &nic->dev, errbuf);
	if (!rc)
		rc = gcap_nic_capture_read(&nic->args, &nic->cap, errbuf);
	if (!rc)
		rc = nic_spread(nic, errbuf);
	if (!rc)
		rc = nic_cuda_setup(nic, errbuf);
	if (!rc) {
		/* the RX timestamp field, as net_pcap and mlx5 fill it */
		rc = rte_mbuf_dyn_rx_timestamp_register(&nic->ts_off, &nic->ts_flag);
		if (rc)
			rc = gcap_err(errbuf, rte_errno ? rte_errno : EINVAL,
				      "cannot register the RX timestamp field: %s",
				      rte_strerror(rte_errno));
	}
	for (unsigned i = 0; !rc && i < nqueues; i++) {
		char rn[RTE_RING_NAMESIZE];

		snprintf(rn, sizeof(rn), "%s_q%u", ring_prefix, i);
		nic->q[i].ring = rte_ring_create(rn, NIC_RING, socket,
						 RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (nic->q[i].ring == NULL)
			rc = gcap_err(errbuf, rte_errno, "rte_ring_create(%s): %s", rn,
				      rte_strerror(rte_errno));
		rx[i] = nic->q[i].ring;
	}
	if (!rc) {
		char rn[RTE_RING_NAMESIZE];

		snprintf(rn, sizeof(rn), "%s_tx", ring_prefix);
		nic->txr = rte_ring_create(rn, 64, socket, RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (nic->txr == NULL)
			rc = gcap_err(errbuf, rte_errno, "rte_ring_create(%s): %s", rn,
				      rte_strerror(rte_errno));
	}
	if (!rc) {
		id = rte_eth_from_rings(ethdev_name, rx, nqueues, &nic->txr, 1,
					socket >= 0 ? (unsigned)socket : 0);
		if (id < 0)
			rc = gcap_err(errbuf, rte_errno ? rte_errno : EINVAL,
				      "rte_eth_from_rings(%s): %s", ethdev_name,
				      rte_strerror(rte_errno));
		else {
			nic->port_id = (uint16_t)id;
			nic->have_port = true;
			*port_id = nic->port_id;
			pthread_mutex_lock(&g_lock);
			g_is_nic[id] = true;
			pthread_mutex_unlock(&g_lock);
			GPU_LOG(INFO,
				"%s: emulated GPUDirect NIC, %zu packets (%zu bytes) "
				"staged "
				"in VRAM of GPU %d, %u queue(s)%s\n",
				ethdev_name, nic->cap.npkts, nic->cap.len, nic->args.gpu,
				nqueues, nic->args.loop ? ", looped" : "");
		}
	}
	if (rc) {
		gcap_gpunic_destroy(nic);
		errno = -rc;
		return NULL;
	}
	return nic;
}

/* ---- the pools: what the GPU writes into ------------------------------- */

struct reg_ctx {
	struct gcap_gpunic *nic;
	int rc;
	char *errbuf;
};

static void
reg_chunk(struct rte_mempool *mp, void *opaque, struct rte_mempool_memhdr *mh,
	  unsigned idx)
{
	struct reg_ctx *r = opaque;
	struct gcap_gpunic *nic = r->nic;
	CUresult cr;

	if (r->rc)
		return;
	if (nic->nreg == NIC_MAX_REG) {
		r->rc = gcap_err(r->errbuf, ENOSPC, "pool %s: too many memory chunks",
				 mp->name);
		return;
	}
	cr = nic->cu->MemHostRegister(mh->addr, mh->len,
				      CU_MEMHOSTREGISTER_DEVICEMAP |
					      CU_MEMHOSTREGISTER_PORTABLE);
	if (cr == CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED)
		return;
	r->rc = gcap_cu_err(nic->cu, cr, r->errbuf,
			    "cuMemHostRegister(pool memory, the NIC's DMA mapping)");
	if (!r->rc)
		nic->reg[nic->nreg++] = mh->addr;
	(void)idx;
}

/* Where queue q's data rooms are, and the mapping the GPU's writes need:
 * device memory of this GPU or pinned host memory as they are, other
 * host memory registered (as a NIC under VFIO maps it). */
static int
nic_attach_pool(struct gcap_gpunic *nic, unsigned qi, struct rte_mempool *mp,
		char *errbuf)
{
	const struct gcap_cu *cu = nic->cu;
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	unsigned type = 0;
	int ord = -1;
	CUdeviceptr dp = 0;
	CUresult cr;
	void *a;
	const char *what;

	if (m == NULL)
		return gcap_err(errbuf, ENOMEM, "pool %s: no mbuf", mp->name);
	a = rte_pktmbuf_mtod(m, void *);
	nic->q[qi].room = rte_pktmbuf_tailroom(m);
	rte_pktmbuf_free(m);
	if (nic->q[qi].room < 64)
		return gcap_err(errbuf, EINVAL, "pool %s: data rooms of %u bytes",
				mp->name, nic->q[qi].room);
	cr = cu->PointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
				     (CUdeviceptr)(uintptr_t)a);
	if (cr == CUDA_SUCCESS && type == CU_MEMORYTYPE_DEVICE) {
		cu->PointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
					(CUdeviceptr)(uintptr_t)a);
		if (ord != nic->args.gpu)
			return gcap_err(
				errbuf, ENOTSUP,
				"queue %u's data rooms are on GPU %d, the NIC writes "
				"with GPU %d (gpu=N)",
				qi, ord, nic->args.gpu);
		what = "device memory (CU_MEMORYTYPE_DEVICE)";
	} else if (cr == CUDA_SUCCESS) {
		what = "pinned host memory (CU_MEMORYTYPE_HOST)";
	} else {
		struct reg_ctx r = { nic, 0, errbuf };

		rte_mempool_mem_iter(mp, reg_chunk, &r);
		if (r.rc)
			return r.rc;
		what = "host memory, registered for the GPU's writes";
	}
	if (type != CU_MEMORYTYPE_DEVICE &&
	    (cu->MemHostGetDevicePointer(&dp, a, 0) != CUDA_SUCCESS ||
	     dp != (CUdeviceptr)(uintptr_t)a))
		return gcap_err(
			errbuf, ENOTSUP,
			"pool %s: the GPU cannot write its data rooms at their host "
			"address",
			mp->name);
	nic->q[qi].mp = mp;
	GPU_LOG(INFO, "%s queue %u: data rooms in %s; the GPU writes them\n", nic->name,
		qi, what);
	return 0;
}

int
gcap_gpunic_attach(struct gcap_gpunic *nic, struct rte_mempool *const *pools,
		   char *errbuf)
{
	int rc = gcap_cu_err(nic->cu, nic->cu->CtxSetCurrent(nic->ctx), errbuf,
			     "cuCtxSetCurrent");

	for (unsigned q = 0; !rc && q < nic->nq; q++)
		rc = nic_attach_pool(nic, q, pools[q], errbuf);
	return rc;
}

/* ---- the feeding threads ----------------------------------------------- */

static unsigned
segs_of(const struct nic_queue *q, const struct gcap_nic_pkt *p)
{
	return p->caplen <= q->room ? 1u : (p->caplen + q->room - 1) / q->room;
}

/* Launch the next batch of queue q. @return whether one went. */
static bool
nic_launch(struct gcap_gpunic *nic, struct nic_queue *q)
{
	struct nic_slot *sl = &q->slot[q->head % NIC_SLOTS];
	unsigned n = 0, nsegs = 0, k = 0, grid;
	CUdeviceptr dd, dn;
	void *args[6];

	if (q->head - q->tail == NIC_SLOTS)
		return false;
	if (q->cur == q->nlist) {
		if (!nic->args.loop || q->nlist == 0)
			return false;
		q->cur = 0;
	}
	while (n < NIC_BATCH && q->cur + n < q->nlist) {
		unsigned s = segs_of(q, &nic->cap.pkts[q->list[q->cur + n]]);

		if (nsegs + s > NIC_SEGS)
			break;
		nsegs += s;
		n++;
	}
	if (n == 0 || rte_ring_free_count(q->ring) < q->held + n)
		return false;
	if (rte_pktmbuf_alloc_bulk(q->mp, sl->segs, nsegs) != 0) {
		q->nombuf++;
		return false;
	}
	for (unsigned i = 0; i < n; i++) {
		uint32_t pi = q->list[q->cur + i];
		const struct gcap_nic_pkt *p = &nic->cap.pkts[pi];
		uint32_t left = p->caplen, off = (uint32_t)p->off;

		sl->pkt[i] = pi;
		do {
			uint32_t l = left < q->room ? left : q->room;

			sl->desc[k].dst = (uint64_t)(uintptr_t)rte_pktmbuf_mtod(
				sl->segs[k], void *);
			sl->desc[k].src = off;
			sl->desc[k].len = l;
			off += l;
			left -= l;
			k++;
		} while (left > 0);
	}
	sl->npkts = n;
	sl->nsegs = nsegs;
	sl->seq = q->seq++;
	dd = (CUdeviceptr)(uintptr_t)sl->desc;
	dn = (CUdeviceptr)(uintptr_t)sl->done;
	args[0] = &dd;
	args[1] = &sl->nsegs;
	args[2] = &nic->stage;
	args[3] = &q->ctr;
	args[4] = &dn;
	args[5] = &sl->seq;
	grid = (nsegs + 7) / 8;
	if (nic->cu->LaunchKernel(nic->fn, grid, 1, 1, 256, 1, 1, 0, q->stream, args,
				  NULL) != CUDA_SUCCESS) {
		rte_pktmbuf_free_bulk(sl->segs, nsegs);
		q->seq--;
		return false;
	}
	q->cur += n;
	q->held += n;
	q->head++;
	return true;
}

/* Completions of queue q, in order: what a driver sets from its
 * completion entries, then the RX ring. @return whether any. */
static bool
nic_complete(struct gcap_gpunic *nic, struct nic_queue *q)
{
	bool any = false;

	while (q->tail != q->head) {
		struct nic_slot *sl = &q->slot[q->tail % NIC_SLOTS];
		struct rte_mbuf *heads[NIC_BATCH];
		unsigned k = 0;

		if (__atomic_load_n(sl->done, __ATOMIC_ACQUIRE) != sl->seq)
			break;
		for (unsigned i = 0; i < sl->npkts; i++) {
			const struct gcap_nic_pkt *p = &nic->cap.pkts[sl->pkt[i]];
			struct rte_mbuf *m = sl->segs[k], *prev = NULL;
			uint32_t left = p->caplen;
			uint16_t ns = 0;

			heads[i] = m;
			do {
				struct rte_mbuf *s = sl->segs[k++];
				uint32_t l = left < q->room ? left : q->room;

				s->data_len = (uint16_t)l;
				if (prev != NULL)
					prev->next = s;
				prev = s;
				left -= l;
				ns++;
			} while (left > 0);
			m->nb_segs = ns;
			m->pkt_len = p->wirelen > p->caplen ? p->wirelen : p->caplen;
			m->port = nic->port_id;
			*RTE_MBUF_DYNFIELD(m, nic->ts_off, rte_mbuf_timestamp_t *) =
				p->ts_ns;
			m->ol_flags |= nic->ts_flag;
		}
		/* room was checked before the launch */
		rte_ring_enqueue_bulk(q->ring, (void **)heads, sl->npkts, NULL);
		q->held -= sl->npkts;
		q->tail++;
		any = true;
	}
	return any;
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

	nic->cu->CtxSetCurrent(nic->ctx);
	while (!atomic_load_explicit(&nic->stop, memory_order_relaxed)) {
		bool work = false;

		for (unsigned i = f->first; i < nic->nq; i += f->step) {
			work |= nic_complete(nic, &nic->q[i]);
			work |= nic_launch(nic, &nic->q[i]);
		}
		if (work) {
			idle = 0;
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

/* prefill=1: wait (at most 10 s) until every queue's ring holds all its
 * packets or is nearly full, so that a capture whose kernel launches
 * serialise (compute-sanitizer) finds them there before its persistent
 * kernel starts. */
static void
nic_prefill(struct gcap_gpunic *nic)
{
	for (unsigned i = 0; i < 500000; i++) {
		bool all = true;

		for (unsigned k = 0; k < nic->nq; k++) {
			struct nic_queue *q = &nic->q[k];
			unsigned n = rte_ring_count(q->ring);

			if (n < q->nlist && n + NIC_BATCH < NIC_RING)
				all = false;
		}
		if (all)
			return;
		struct timespec ts = { 0, 20000 };

		nanosleep(&ts, NULL);
	}
}

/* The CPUs the feeding threads may use: the online ones but the RX
 * lcores' (the thread that starts them is the main lcore, pinned to one
 * CPU, which they would otherwise all share); all when nothing is left. */
static void
feeder_cpus(cpu_set_t *set)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned lc;
	cpu_set_t all;

	CPU_ZERO(set);
	for (long c = 0; c < n && c < CPU_SETSIZE; c++)
		CPU_SET((int)c, set);
	all = *set;
	RTE_LCORE_FOREACH_WORKER(lc)
	{
		rte_cpuset_t cs = rte_lcore_cpuset(lc);

		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &cs))
				CPU_CLR(c, set);
	}
	if (CPU_COUNT(set) == 0)
		*set = all;
}

int
gcap_gpunic_start(struct gcap_gpunic *nic, char *errbuf)
{
	unsigned n = nic->args.feeders ? nic->args.feeders : nic->nq;
	pthread_attr_t attr;
	cpu_set_t cpus;

	if (n > nic->nq)
		n = nic->nq;
	if (n > sizeof(nic->th) / sizeof(nic->th[0]))
		n = sizeof(nic->th) / sizeof(nic->th[0]);
	for (unsigned q = 0; q < nic->nq; q++)
		if (nic->q[q].mp == NULL)
			return gcap_err(errbuf, EINVAL, "%s: queue %u has no pool",
					nic->name, q);
	atomic_store(&nic->stop, false);
	feeder_cpus(&cpus);
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
		r = pthread_create(&nic->th[i], &attr, nic_feeder, f);
		if (r != 0) {
			free(f);
			pthread_attr_destroy(&attr);
			gcap_gpunic_stop(nic);
			return gcap_err(errbuf, r, "pthread_create: %s", strerror(r));
		}
		nic->nth++;
	}
	pthread_attr_destroy(&attr);
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

		if (q->stream != NULL)
			nic->cu->StreamSynchronize(q->stream);
		/* launched, not completed: back to the pool unlinked */
		for (; q->tail != q->head; q->tail++) {
			struct nic_slot *sl = &q->slot[q->tail % NIC_SLOTS];

			rte_pktmbuf_free_bulk(sl->segs, sl->nsegs);
			q->held -= sl->npkts;
		}
		while (q->ring != NULL &&
		       (got = rte_ring_dequeue_burst(q->ring, (void **)m, 64, NULL)) > 0)
			rte_pktmbuf_free_bulk(m, got);
	}
}

void
gcap_gpunic_destroy(struct gcap_gpunic *nic)
{
	const struct gcap_cu *cu;

	if (nic == NULL)
		return;
	gcap_gpunic_stop(nic);
	cu = nic->cu;
	if (nic->have_port) {
		pthread_mutex_lock(&g_lock);
		g_is_nic[nic->port_id] = false;
		pthread_mutex_unlock(&g_lock);
	}
	for (unsigned i = 0; nic->q != NULL && i < nic->nq; i++) {
		struct nic_queue *q = &nic->q[i];

		if (q->ctr)
			cu->MemFree(q->ctr);
		rte_ring_free(q->ring);
		free(q->list);
	}
	for (unsigned i = 0; i < nic->nstreams; i++)
		cu->StreamDestroy(nic->streams[i]);
	rte_ring_free(nic->txr);
	for (unsigned i = 0; i < nic->nreg; i++)
		cu->MemHostUnregister(nic->reg[i]);
	if (nic->pinned)
		cu->MemFreeHost(nic->pinned);
	if (nic->stage)
		cu->MemFree(nic->stage);
	if (nic->mod)
		cu->ModuleUnload(nic->mod);
	if (nic->ctx)
		cu->DevicePrimaryCtxRelease(nic->dev);
	gcap_nic_capture_free(&nic->cap);
	gcap_nic_args_free(&nic->args);
	free(nic->q);
	free(nic);
}
