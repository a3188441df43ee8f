/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The emulated GPUDirect NIC: an ethdev from rte_eth_from_rings() whose RX
 * rings are filled as a ConnectX RX queue receiving into GPU memory fills
 * them. Here: the arguments checked, the captures (gpunic_file.c) staged
 * once in VRAM and spread over the queues by symmetric flow hash (file
 * order within a queue), the DMA kernel (kernels/gpunic_dma.cu) loaded,
 * the ethdev made, and each queue's pool checked and mapped for the GPU's
 * writes. The feeding threads, the NIC's side (buffers handed out filled
 * by one launch of the DMA kernel per batch, completion entries posted),
 * are gpunic_feed.c's; the driver's side on the RX lcores (completions
 * read, buffers handed out) is gpunic_driver.c's.
 * The CPU never touches a packet byte, and with --mem gpu cannot (the
 * data rooms are VRAM).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "gpucap/gcap_thread.h"
#include "gpucap/gcap_gpunic.h"
#include "exec_gpu_internal.h"
#include "gpunic_internal.h"
#include "gpunic_nic.h"

/* Which ports are emulated NICs: --mem gpu asks by port id (pools.c), as
 * DPDK's own tables are by port id. */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t g_is_nic[RTE_MAX_ETHPORTS]; /* 1: an emulated NIC, 2: GPU agent */

static uint8_t
nic_kind(uint16_t port_id)
{
	uint8_t r = 0;

	pthread_mutex_lock(&g_lock);
	if (port_id < RTE_MAX_ETHPORTS)
		r = g_is_nic[port_id];
	pthread_mutex_unlock(&g_lock);
	return r;
}

bool
gcap_gpunic_is(uint16_t port_id)
{
	return nic_kind(port_id) != 0;
}

bool
gcap_gpunic_gpu_writes(uint16_t port_id)
{
	return nic_kind(port_id) == 2;
}

uint32_t
gcap_gpunic_max_frame(const struct gcap_gpunic *nic)
{
	return nic != NULL ? nic->cap.maxlen : 0;
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

	if (rc == 0 && !a.cpu_agent)
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

/* Each queue's slots in [base, base + NIC_SLOTS * (descriptors + 64)). */
static void
nic_slots(struct nic_queue *q, unsigned char *base)
{
	for (unsigned s = 0; s < NIC_SLOTS; s++) {
		q->slot[s].desc =
			(struct nic_desc *)(base +
					    s * NIC_DESCS * sizeof(struct nic_desc));
		q->slot[s].done =
			(uint32_t *)(base +
				     NIC_SLOTS * NIC_DESCS * sizeof(struct nic_desc) +
				     64 * s);
		*q->slot[s].done = UINT32_MAX;
	}
	q->seq = 1;
}

/* agent=cpu: descriptors in ordinary memory, the captures where they were
 * read; the feeding threads copy (tests, machines without a GPU). */
static int
nic_cpu_setup(struct gcap_gpunic *nic, char *errbuf)
{
	size_t per = NIC_SLOTS * (NIC_DESCS * sizeof(struct nic_desc) + 64);

	nic->pinned = aligned_alloc(64, per * nic->nq);
	if (nic->pinned == NULL)
		return gcap_err(errbuf, ENOMEM, "out of memory");
	for (unsigned i = 0; i < nic->nq; i++)
		nic_slots(&nic->q[i], (unsigned char *)nic->pinned + per * i);
	return 0;
}

static int
nic_cuda_setup(struct gcap_gpunic *nic, char *errbuf)
{
	const struct gcap_cu *cu = nic->cu;
	size_t per = NIC_SLOTS * (NIC_DESCS * sizeof(struct nic_desc) + 64);
	CUdeviceptr dp = 0;
	int rc;

	sigset_t old;

	gcap_sigs_hold(&old); /* the context's threads (gcap_thread.h) */
	rc = gcap_cu_err(cu, cu->DevicePrimaryCtxRetain(&nic->ctx, nic->dev), errbuf,
			 "cuDevicePrimaryCtxRetain");
	gcap_sigs_restore(&old);
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
		nic_slots(q, base);
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
	/* cache-line aligned: the driver's counters have a line of their
	 * own (struct nic_queue) */
	nic->q = aligned_alloc(RTE_CACHE_LINE_SIZE, nqueues * sizeof(*nic->q));
	if (nic->q != NULL)
		memset(nic->q, 0, nqueues * sizeof(*nic->q));
	rc = nic->q == NULL ? gcap_err(errbuf, ENOMEM, "out of memory") :
			      gcap_nic_args_parse(args, false, &nic->args, errbuf);
	if (!rc && !nic->args.cpu_agent)
		rc = nic_gpu(&nic->cu, nic->args.gpu, &nic->dev, errbuf);
	if (!rc)
		rc = gcap_nic_capture_read(&nic->args, &nic->cap, errbuf);
	if (!rc)
		rc = nic_spread(nic, errbuf);
	if (!rc)
		rc = nic->args.cpu_agent ? nic_cpu_setup(nic, errbuf) :
					   nic_cuda_setup(nic, errbuf);
	if (!rc) {
		/* the RX timestamp field, as net_pcap and mlx5 fill it */
		rc = rte_mbuf_dyn_rx_timestamp_register(&nic->ts_off, &nic->ts_flag);
		if (rc)
			rc = gcap_err(errbuf, rte_errno ? rte_errno : EINVAL,
				      "cannot register the RX timestamp field: %s",
				      rte_strerror(rte_errno));
	}
	for (unsigned i = 0; !rc && i < nqueues; i++) {
		struct nic_queue *q = &nic->q[i];
		char rn[RTE_RING_NAMESIZE], cn[RTE_RING_NAMESIZE], pn[RTE_RING_NAMESIZE];

		q->nic = nic;
		snprintf(rn, sizeof(rn), "%s_q%u", ring_prefix, i);
		snprintf(cn, sizeof(cn), "%s_c%u", ring_prefix, i);
		snprintf(pn, sizeof(pn), "%s_p%u", ring_prefix, i);
		q->ring = rte_ring_create(rn, NIC_RING, socket,
					  RING_F_SP_ENQ | RING_F_SC_DEQ);
		/* completion entries: the RX ring's packets' and a burst
		 * the driver is reading; buffers handed out: every buffer
		 * the queue has */
		if (q->ring != NULL)
			q->cq = rte_ring_create_elem(cn, sizeof(struct nic_cqe),
						     2 * NIC_RING, socket,
						     RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (q->cq != NULL)
			q->posted = rte_ring_create_elem(pn, sizeof(struct nic_post),
							 2 * NIC_RING, socket,
							 RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (q->posted == NULL)
			rc = gcap_err(errbuf, rte_errno, "rte_ring_create(%s): %s",
				      q->ring == NULL ? rn :
				      q->cq == NULL   ? cn :
							pn,
				      rte_strerror(rte_errno));
		rx[i] = q->ring;
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
			/* the CPU agent writes like a software port */
			pthread_mutex_lock(&g_lock);
			g_is_nic[id] = nic->args.cpu_agent ? 1 : 2;
			pthread_mutex_unlock(&g_lock);
			GPU_LOG(INFO,
				"%s: emulated GPUDirect NIC, %zu packets (%zu bytes)%s, "
				"%u queue(s)%s\n",
				ethdev_name, nic->cap.npkts, nic->cap.len,
				nic->args.cpu_agent ? ", written by the CPU (agent=cpu)" :
						      " staged in VRAM",
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
	int rc = 0;

	if (nic->args.cpu_agent) {
		for (unsigned q = 0; q < nic->nq; q++) {
			struct rte_mbuf *m = rte_pktmbuf_alloc(pools[q]);

			if (m == NULL)
				return gcap_err(errbuf, ENOMEM, "pool %s: no mbuf",
						pools[q]->name);
			nic->q[q].room = rte_pktmbuf_tailroom(m);
			rte_pktmbuf_free(m);
			nic->q[q].mp = pools[q];
			GPU_LOG(INFO,
				"%s queue %u: the CPU writes the data rooms "
				"(agent=cpu)\n",
				nic->name, q);
		}
		return 0;
	}
	rc = gcap_cu_err(nic->cu, nic->cu->CtxSetCurrent(nic->ctx), errbuf,
			 "cuCtxSetCurrent");
	for (unsigned q = 0; !rc && q < nic->nq; q++)
		rc = nic_attach_pool(nic, q, pools[q], errbuf);
	return rc;
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
		g_is_nic[nic->port_id] = 0;
		pthread_mutex_unlock(&g_lock);
	}
	for (unsigned i = 0; nic->q != NULL && i < nic->nq; i++) {
		struct nic_queue *q = &nic->q[i];

		if (q->ctr)
			cu->MemFree(q->ctr);
		rte_ring_free(q->ring);
		rte_ring_free(q->cq);
		rte_ring_free(q->posted);
		free(q->list);
	}
	for (unsigned i = 0; i < nic->nstreams; i++)
		cu->StreamDestroy(nic->streams[i]);
	rte_ring_free(nic->txr);
	for (unsigned i = 0; i < nic->nreg; i++)
		cu->MemHostUnregister(nic->reg[i]);
	if (nic->pinned && nic->args.cpu_agent)
		free(nic->pinned);
	else if (nic->pinned)
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
