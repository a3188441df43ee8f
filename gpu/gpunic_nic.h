/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Internal to the emulated GPUDirect NIC's CUDA side: its state, shared
 * by gpunic.c (set-up, pools, the ethdev), gpunic_feed.c (the feeding
 * threads: the NIC) and gpunic_driver.c (the driver, on the RX lcores).
 * See gcap_gpunic.h.
 */
#ifndef GCAP_GPUNIC_NIC_H
#define GCAP_GPUNIC_NIC_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "cuda_internal.h"
#include "gpunic_internal.h"

/* packets per launch, and segments (a packet larger than a data room is
 * a chain, as with scattered RX). A launch costs about the same whatever
 * it carries, and the GPU starts only so many a second: with small
 * batches the launches, not the copies, bound the NIC, and more so
 * beside the capture's own kernel. The RX ring (NIC_RING) still caps the
 * packets in flight and delivered, so the largest batches leave fewer
 * launches in flight, not more packets. */
#define NIC_BATCH 1024u
#define NIC_SEGS 2048u
/* the DMA kernel's work items: a warp copies one piece of at most
 * NIC_CHUNK bytes, so that a large segment (a data room of --mem gpu
 * holds the largest frame) is copied by several warps side by side, as
 * a NIC's DMA writes it at the link's pace, not by one warp alone whose
 * loop of dependent loads would hold the whole launch back */
#define NIC_CHUNK 4096u
#define NIC_DESCS 4096u
/* launches in flight per queue */
#define NIC_SLOTS 4u
/* the RX ring: what a real queue's descriptor ring holds; as many
 * buffers the driver keeps handed out to each queue */
#define NIC_RING 4096u
#define NIC_POSTED (NIC_RING - 1u)
/* launch streams, shared by the queues: with the persistent kernel's and
 * the state snapshot's, within the driver's 8 hardware work queues
 * (CUDA_DEVICE_MAX_CONNECTIONS), so that no launch waits behind the
 * persistent kernel (copy.c says more) */
#define NIC_STREAMS 4u
#define NIC_MAX_QUEUES 128u
/* the least time between two floors a queue publishes (the RX lcore reads
 * the line at every poll) */
#define NIC_FLOOR_NS 4000u
#define NIC_MAX_REG 64u

/* the DMA kernel's descriptor (struct gcap_gpunic_desc, gpunic_dma.cu) */
struct nic_desc {
	uint64_t dst;
	uint32_t src;
	uint32_t len;
};
_Static_assert(sizeof(struct nic_desc) == 16, "descriptor layout");

/* A buffer the driver handed out (gpunic_driver.c): the mbuf, and where
 * its data room starts, as a receive descriptor gives the NIC the
 * address without the NIC reading the mbuf. */
struct nic_post {
	struct rte_mbuf *m;
	uint64_t addr;
};

/* A completion entry: what the driver sets in a packet's first mbuf. */
struct nic_cqe {
	uint64_t ts_ns;   /* the RX timestamp */
	uint32_t wirelen; /* the packet's length on the wire */
	uint16_t len;     /* bytes in its first data room */
	uint16_t nsegs;   /* data rooms it takes (a chain, where more than one) */
};
_Static_assert(sizeof(struct nic_post) == 16 && sizeof(struct nic_cqe) == 16,
	       "ring element layout");

extern const unsigned char gcap_gpunic_fatbin[];

struct nic_slot {
	struct nic_desc *desc;          /* pinned, NIC_DESCS */
	uint32_t *done;                 /* pinned completion word */
	struct nic_post post[NIC_SEGS]; /* its segments' buffers, in order */
	uint32_t pkt[NIC_BATCH];        /* packet indices */
	unsigned npkts, nsegs, ndesc;
	uint32_t seq;
};

struct nic_queue {
	struct gcap_gpunic *nic;
	struct rte_ring *ring;   /* RX: the packets' first mbufs */
	struct rte_ring *cq;     /* their completion entries, in the same order */
	struct rte_ring *posted; /* buffers handed out, for the NIC to fill */
	struct rte_mempool *mp;
	const struct rte_eth_rxtx_callback *cb;
	uint32_t *list; /* its packets, in file order */
	size_t nlist, cur;
	uint32_t room; /* bytes a data room takes */
	CUstream stream;
	CUdeviceptr ctr; /* the kernel's block counter */
	struct nic_slot slot[NIC_SLOTS];
	unsigned head, tail; /* launches: issued, completed */
	unsigned held;       /* packets in flight */
	uint32_t seq;
	/* loop=1: the last batch's stamp, or the floor published since: no
	 * later batch is stamped before it */
	uint64_t last_ts;
	/* what bounds the NIC (logged at stop): launches, the time from a
	 * launch to its completion seen, and the launches that waited for
	 * buffers handed out, for room in the RX ring, for a free slot */
	uint64_t launches, busy_ns, nombuf, ring_full, slots_full;
	uint64_t t_launch[NIC_SLOTS];
	/* nothing in flight, the last try launched nothing (the files
	 * delivered, the RX ring full or the buffers handed out used) and
	 * no launch failed and lost buffers: until the driver takes packets,
	 * the NIC can do no more (prefill) */
	_Atomic bool stalled;
	/* the driver's side, written by the RX lcore at every poll
	 * (gpunic_driver.c), on a line of its own: buffers it owes the NIC
	 * (the pool had none), allocations that failed; and buffers the NIC
	 * lost (a launch that failed freed them; it adds them there, rarely,
	 * and the driver hands out as many more) */
	struct {
		unsigned owed;
		_Atomic unsigned lost;
		uint64_t nobuf;
		/* the floor (below) read at this poll and at the one before:
		 * what was stamped before the older one was on the RX ring
		 * before this poll took from it */
		uint64_t floor_cur, floor_prev;
	} drv __rte_cache_aligned;
	/* loop=1: a time no batch the NIC delivers later is stamped before,
	 * published once every batch stamped so far is on the RX ring (the
	 * driver's idle mark: gcap_gpunic_idle); on a line of its own, the
	 * NIC's to write at most every NIC_FLOOR_NS */
	_Atomic uint64_t floor __rte_cache_aligned;
};

struct gcap_gpunic {
	struct gcap_nic_args args;
	struct gcap_nic_capture cap;
	const struct gcap_cu *cu;
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction fn;
	CUdeviceptr stage; /* the captures in VRAM (GPU agent) */
	void *pinned;      /* descriptors and completion words (malloc'd: CPU agent) */
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

/* gpunic_driver.c: the driver's side of every queue, on the RX lcores */
int gcap_gpunic_driver_start(struct gcap_gpunic *nic, char *errbuf);
void gcap_gpunic_driver_stop(struct gcap_gpunic *nic);

#endif /* GCAP_GPUNIC_NIC_H */
