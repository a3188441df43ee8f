/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The executor's memory: pinned, device-mapped host memory (rings, flags,
 * data rooms), and the mbuf pools of each memory mode (gpu: data rooms in
 * VRAM for GPUDirect RDMA; host and copy: in pinned host memory; auto:
 * gpu where the NIC can, else host), registered with DPDK and DMA-mapped
 * for the port's device.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_memory.h>

#include "gpucap/gcap_gpunic.h"
#include "exec_gpu_internal.h"

#define GPU_PAGE (64u * 1024u)

int
gcap_gpu_host_alloc(struct gcap_exec *ex, void **p, size_t len, char *errbuf,
		    const char *what)
{
	CUdeviceptr dp = 0;
	char w[96];
	int rc;

	snprintf(w, sizeof(w), "cuMemHostAlloc(%zu bytes, %s)", len, what);
	rc = gcap_cu_err(ex->cu,
			 ex->cu->MemHostAlloc(p, len,
					      CU_MEMHOSTALLOC_DEVICEMAP |
						      CU_MEMHOSTALLOC_PORTABLE),
			 errbuf, w);
	if (rc)
		return rc;
	memset(*p, 0, len);
	/* with unified addressing the device address is the host address */
	if (ex->cu->MemHostGetDevicePointer(&dp, *p, 0) != CUDA_SUCCESS ||
	    dp != (CUdeviceptr)(uintptr_t)*p) {
		ex->cu->MemFreeHost(*p);
		*p = NULL;
		return gcap_err(errbuf, ENOTSUP,
				"pinned memory (%s) has a "
				"device address different from its host address",
				what);
	}
	return 0;
}

static void
pool_mem_free(struct gcap_exec *ex, struct gpu_pool_mem *pm)
{
	if (pm->rdev)
		rte_dev_dma_unmap(pm->rdev, pm->addr, (uint64_t)(uintptr_t)pm->addr,
				  pm->len);
	if (pm->registered)
		rte_extmem_unregister(pm->addr, pm->len);
	if (pm->dev)
		ex->cu->CtxSetCurrent(pm->dev->ctx);
	if (pm->host)
		ex->cu->MemFreeHost(pm->host);
	if (pm->dptr)
		ex->cu->MemFree(pm->dptr);
	free(pm);
}

void
gcap_gpu_pools_free(struct gcap_exec *ex)
{
	struct gpu_pool_mem *pm, *next;

	for (pm = ex->pools; pm != NULL; pm = next) {
		next = pm->next;
		pool_mem_free(ex, pm);
	}
	ex->pools = NULL;
}

/* Can the port's device DMA into [addr, addr+len)? Tries the mapping. */
static int
pool_dma_map(struct gpu_pool_mem *pm, uint16_t port_id, bool need_dma, char *errbuf)
{
	struct rte_eth_dev_info info;
	int rc;

	rc = rte_eth_dev_info_get(port_id, &info);
	if (rc)
		return gcap_err(errbuf, -rc < 0 ? EINVAL : -rc,
				"port %u: "
				"rte_eth_dev_info_get: %s",
				port_id, rte_strerror(-rc));
	if (info.device == NULL)
		return gcap_err(errbuf, ENOTSUP,
				"port %u (%s): no device to "
				"DMA-map",
				port_id, info.driver_name);
	/* The vdev bus accepts any mapping (it has nothing to map), but a
	 * software port copies packets with the CPU: into VRAM, a crash.
	 * The emulated GPUDirect NIC is a vdev whose writes the GPU makes
	 * (its mapping is its own, gcap_gpunic_attach()). */
	if (need_dma && strcmp(rte_bus_name(rte_dev_bus(info.device)), "vdev") == 0 &&
	    !gcap_gpunic_gpu_writes(port_id))
		return gcap_err(errbuf, ENOTSUP,
				"port %u (driver %s) is a "
				"software port: its CPU copies packets, it "
				"cannot DMA into GPU memory",
				port_id, info.driver_name);
	rte_errno = 0;
	rc = rte_dev_dma_map(info.device, pm->addr, (uint64_t)(uintptr_t)pm->addr,
			     pm->len);
	if (rc) {
		int e = rte_errno ? rte_errno : ENOTSUP;

		return gcap_err(errbuf, e,
				"port %u (driver %s) cannot DMA-map "
				"external memory (rte_dev_dma_map: %s)",
				port_id, info.driver_name, rte_strerror(e));
	}
	pm->rdev = info.device;
	return 0;
}

static bool
dev_gdr(struct gcap_exec *ex, struct gpu_dev *d)
{
	int v = 0;

	ex->cu->DeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED,
				   d->dev);
	return v != 0;
}

/* Whether a doorbell needs cuFlushGPUDirectRDMAWrites first, as DPDK's
 * cuda driver decides for rte_gpu_wmb(): only where the GPU does not
 * order the writes of a peer device for its own kernels
 * (GPU_DIRECT_RDMA_WRITES_ORDERING none) and the flush can be asked from
 * the host. GCAP_GPU_WMB=1 flushes always, 0 never (to measure it). */
static bool
dev_wmb(struct gcap_exec *ex, struct gpu_dev *d)
{
	const char *env = getenv("GCAP_GPU_WMB");
	int order = 0, opts = 0;

	if (ex->cu->FlushGPUDirectRDMAWrites == NULL)
		return false;
	if (env != NULL && (env[0] == '0' || env[0] == '1'))
		return env[0] == '1';
	ex->cu->DeviceGetAttribute(
		&order, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING, d->dev);
	ex->cu->DeviceGetAttribute(
		&opts, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS, d->dev);
	return order == CU_GPU_DIRECT_RDMA_WRITES_ORDERING_NONE &&
	       (opts & CU_FLUSH_GPU_DIRECT_RDMA_WRITES_OPTION_HOST) != 0;
}

/* Data rooms in VRAM for GPUDirect RDMA (DPDK gpudev's recipe). */
static int
pool_mem_gpu(struct gcap_exec *ex, struct gpu_dev *d, struct gpu_pool_mem *pm, size_t len,
	     uint16_t port_id, char *errbuf)
{
	const struct gcap_cu *cu = ex->cu;
	unsigned one = 1;
	CUdeviceptr p;
	int rc;

	d->wmb = dev_wmb(ex, d);
	GPU_LOG(INFO, "GPU %d: %s before each doorbell in gpu memory mode\n", d->ordinal,
		d->wmb ? "cuFlushGPUDirectRDMAWrites" :
			 "no flush (the GPU orders RDMA writes)");
	/* the emulated NIC is the GPU's own engine: no peer to reach it */
	if (!gcap_gpunic_gpu_writes(port_id) && !dev_gdr(ex, d))
		return gcap_err(errbuf, ENOTSUP,
				"GPU %d does not support "
				"GPUDirect RDMA",
				d->ordinal);
	pm->len = (len + GPU_PAGE - 1) & ~(size_t)(GPU_PAGE - 1);
	rc = gcap_cu_err(cu, cu->MemAlloc(&pm->dptr, pm->len + GPU_PAGE), errbuf,
			 "cuMemAlloc(mbuf data rooms)");
	if (rc)
		return rc;
	p = (pm->dptr + GPU_PAGE - 1) & ~(CUdeviceptr)(GPU_PAGE - 1);
	pm->addr = (void *)(uintptr_t)p;
	rc = gcap_cu_err(
		cu, cu->PointerSetAttribute(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, p),
		errbuf, "cuPointerSetAttribute(SYNC_MEMOPS)");
	if (rc)
		return rc;
	if (rte_extmem_register(pm->addr, pm->len, NULL, 0, GPU_PAGE))
		return gcap_err(errbuf, rte_errno,
				"rte_extmem_register(VRAM, "
				"%zu bytes): %s",
				pm->len, rte_strerror(rte_errno));
	pm->registered = true;
	return pool_dma_map(pm, port_id, true, errbuf);
}

/* Data rooms in pinned, device-mapped host memory. */
static int
pool_mem_host(struct gcap_exec *ex, struct gpu_pool_mem *pm, size_t len, uint16_t port_id,
	      char *errbuf)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	int rc;

	pm->len = (len + pg - 1) & ~(pg - 1);
	rc = gcap_gpu_host_alloc(ex, &pm->host, pm->len, errbuf, "mbuf data rooms");
	if (rc)
		return rc;
	pm->addr = pm->host;
	if (rte_extmem_register(pm->addr, pm->len, NULL, 0, pg))
		return gcap_err(errbuf, rte_errno,
				"rte_extmem_register(%zu "
				"bytes): %s",
				pm->len, rte_strerror(rte_errno));
	pm->registered = true;
	/* a NIC under VFIO needs the mapping; software ports have none */
	if (pool_dma_map(pm, port_id, false, NULL) == 0)
		GPU_LOG(DEBUG, "port %u: pinned data rooms DMA-mapped\n", port_id);
	return 0;
}

struct rte_mempool *
gcap_gpu_pool_create(struct gcap_exec *ex, unsigned q, uint16_t port_id, const char *name,
		     unsigned n_mbufs, uint16_t data_room, int socket, char *errbuf)
{
	struct gpu_queue *qs;
	struct gpu_dev *d;
	struct gpu_pool_mem *pm, *saved = ex->pools;
	struct rte_pktmbuf_extmem em;
	struct rte_mempool *mp;
	enum gcap_mem mode = ex->conf.mem;
	char why[GCAP_ERRBUF_SIZE];
	size_t len;
	int rc;

	if (q >= ex->conf.nqueues || n_mbufs == 0 || data_room <= RTE_PKTMBUF_HEADROOM)
		return gcap_err_null(errbuf, EINVAL, "gpu pool: bad arguments");
	if (__atomic_load_n(&ex->launched, __ATOMIC_ACQUIRE) != 0)
		return gcap_err_null(errbuf, EBUSY,
				     "gpu pool: create the pools "
				     "before the first batch (the kernels are "
				     "running)");
	qs = &ex->qs[q];
	d = qs->dev;
	rc = gcap_gpu_ctx_on(ex, d, errbuf);
	if (rc) {
		errno = -rc;
		return NULL;
	}
	gcap_gpu_tls_ctx = d->ctx;
	len = (size_t)n_mbufs * data_room;
	pm = calloc(1, sizeof(*pm));
	if (pm == NULL)
		return gcap_err_null(errbuf, ENOMEM, "gpu pool: out of memory");
	pm->dev = d;
	if (mode == GCAP_MEM_AUTO || mode == GCAP_MEM_GPU) {
		rc = pool_mem_gpu(ex, d, pm, len, port_id, why);
		if (rc && mode == GCAP_MEM_GPU) {
			pool_mem_free(ex, pm);
			return gcap_err_null(errbuf, -rc,
					     "--mem gpu refused for "
					     "port %u: %s; it needs a NIC that "
					     "DMAs into GPU memory (GPUDirect "
					     "RDMA: ConnectX with mlx5 and "
					     "nvidia-peermem); use --mem host or "
					     "copy",
					     port_id, why);
		}
		if (rc) {
			pool_mem_free(ex, pm);
			GPU_LOG(INFO,
				"--mem auto: port %u queue %u uses host "
				"memory, not GPU memory: %s\n",
				port_id, q, why);
			pm = calloc(1, sizeof(*pm));
			if (pm == NULL)
				return gcap_err_null(errbuf, ENOMEM,
						     "gpu pool: "
						     "out of memory");
			pm->dev = d;
			mode = GCAP_MEM_HOST;
		} else if (mode == GCAP_MEM_AUTO) {
			GPU_LOG(INFO,
				"--mem auto: port %u queue %u receives "
				"into GPU memory (GPUDirect RDMA%s)\n",
				port_id, q,
				gcap_gpunic_gpu_writes(port_id) ? ", emulated NIC" : "");
			mode = GCAP_MEM_GPU;
		}
	}
	if (mode == GCAP_MEM_HOST || mode == GCAP_MEM_COPY) {
		rc = pool_mem_host(ex, pm, len, port_id, errbuf);
		if (rc) {
			pool_mem_free(ex, pm);
			errno = -rc;
			return NULL;
		}
	}
	em.buf_ptr = pm->addr;
	em.buf_iova = rte_eal_iova_mode() == RTE_IOVA_VA ?
			      (rte_iova_t)(uintptr_t)pm->addr :
			      RTE_BAD_IOVA;
	em.buf_len = pm->len;
	em.elt_size = data_room;
	mp = rte_pktmbuf_pool_create_extbuf(name, n_mbufs, 0, 0, data_room, socket, &em,
					    1);
	if (mp == NULL) {
		int e = rte_errno ? rte_errno : ENOMEM;

		pool_mem_free(ex, pm);
		return gcap_err_null(errbuf, e,
				     "rte_pktmbuf_pool_create_extbuf"
				     "(%s): %s",
				     name, rte_strerror(e));
	}
	pm->next = saved;
	ex->pools = pm;
	qs->mem = mode;
	return mp;
}

bool
gcap_gpu_cpu_reads(struct gcap_exec *ex, unsigned q)
{
	return q < ex->conf.nqueues && ex->qs[q].mem != GCAP_MEM_GPU &&
	       ex->qs[q].mem != GCAP_MEM_AUTO;
}
