/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Internal: the memory layout the persistent kernel and the host side of
 * the gpu executor share (doorbell slots, queue table, kernel parameters).
 * Plain C, fixed layout; compiles with a host C compiler, nvcc and NVRTC.
 * Addresses are 64-bit device addresses (with unified addressing, the same
 * value as the host address for pinned, mapped host memory).
 */
#ifndef GCAP_GPU_ABI_H
#define GCAP_GPU_ABI_H

#include "gcap_pkt.h"
#include "gcap_span.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Doorbell states of a slot (gcap_gpu_slot.status). */
#define GCAP_GPU_FREE 0u
#define GCAP_GPU_READY 1u
#define GCAP_GPU_DONE 2u

/** Most threads per block of the persistent kernel. */
#define GCAP_GPU_THREADS_MAX 512u

/**
 * One doorbell slot, in pinned, device-mapped host memory (one cache line
 * each, so that the CPU's stores and the GPU's polls of neighbouring slots
 * do not share a line). status and arg form one aligned 64-bit word: the
 * GPU's poll (one 64-bit acquire load) gets the READY and what the batch
 * is in the same PCIe read; the descriptors and results of slot s lie at
 * fixed places (struct gcap_gpu_qdesc), so nothing else is read first.
 */
struct gcap_gpu_slot {
	uint32_t status; /**< FREE/READY (CPU writes), DONE (GPU writes) */
	uint32_t arg;    /**< GCAP_GPU_ARG(n, xbuf index), valid with READY */
	uint64_t seq;    /**< batch sequence number (debugging) */
	uint64_t pad[6];
};

/** A READY slot's arg: n descriptors, export buffer xbuf of the queue. */
#define GCAP_GPU_ARG(n, xbuf) ((uint32_t)(n) | ((uint32_t)(xbuf) << 16))
#define GCAP_GPU_ARG_N(a) ((a)&0xffffu)
#define GCAP_GPU_ARG_XBUF(a) ((a) >> 16)
/** In a READY slot's n: the slot holds a span of a pcap file, whose
 *  records the block finds (the queue's gcap_gpu_span of the slot);
 *  above any batch's count. */
#define GCAP_GPU_ARG_SPAN 0x8000u

/** A span slot's description (struct gcap_batch_span, and where its bytes
 *  lie in VRAM), in pinned host memory, one per slot. 64 bytes. */
struct gcap_gpu_span {
	uint64_t data; /**< device address of its bytes (file offset off) */
	uint64_t off;
	uint64_t index; /**< spans of the run before it */
	uint64_t entry; /**< index 0: the file offset of its first record */
	uint32_t len, avail, snap, flags;
	uint64_t pad[2];
};

/** Where a queue's spans are joined (VRAM, zeroed at the start): span
 *  index gives its successor the file offset of its first record and the
 *  records before it, once it has published index + 1. */
struct gcap_gpu_chain {
	uint64_t index;  /**< the span whose entry next and seq are */
	uint64_t next;   /**< its first record's file offset */
	uint64_t seq;    /**< records of the spans before it */
	uint64_t broken; /**< an earlier span stopped: none of the later
			  *   ones has records (the host reads on) */
	uint64_t avg;    /**< bytes a record in the last span published (0:
			  *   none yet): the next spans' sub-chunk size */
};

/** Device view of struct gcap_xbuf (same layout; checked on the host). */
struct gcap_gpu_xbuf {
	uint64_t data;
	uint32_t size;
	uint32_t len;
	uint32_t nrec;
	uint16_t queue;
	uint16_t index;
	uint32_t flags;
};

/** Device view of struct gcap_batch_result (same layout; checked). */
struct gcap_gpu_result {
	uint32_t n_captured;
	uint32_t n_filtered;
	uint32_t n_truncated;
	uint32_t exec_ns;
	uint64_t captured_bytes;
	uint64_t start_ns;
	uint32_t n_found;
	uint32_t span_walks;
	uint64_t found_bytes;
	uint64_t span_stop;
	uint32_t span_ns[4];
	uint64_t out_pkts[GCAP_MAX_OUTPUTS];
};

/** One pipeline queue as one block of the kernel sees it. */
struct gcap_gpu_qdesc {
	uint64_t slots;     /**< device address of ring_size slots */
	uint32_t ring_size; /**< power of two */
	uint32_t queue;     /**< pipeline queue index */
	uint32_t first;     /**< first slot this block takes */
	uint32_t step;      /**< blocks on the queue: slots first + k * step */
	uint64_t pkts;      /**< descriptors of slot s: pkts + s * batch_max */
	uint64_t res;       /**< result of slot s: res + s */
	uint64_t xbufs;     /**< the queue's export buffers (gcap_gpu_xbuf) */
	uint32_t batch_max;
	/** span slots (GCAP_GPU_ARG_SPAN): found_max records and list_max
	 *  list entries a slot */
	uint32_t found_max;
	uint64_t spans; /**< ring_size gcap_gpu_span (pinned host memory) */
	uint64_t found; /**< slot s's records: found + s * found_max (VRAM) */
	uint64_t raw;   /**< their time fields as the file has them (VRAM) */
	uint64_t lists; /**< slot s's walks: lists + s * list_max (VRAM) */
	uint64_t chain; /**< the queue's gcap_gpu_chain (VRAM) */
	uint32_t list_max;
	uint32_t pad;
};

/** One filter program: ninsn instructions at insns + off (8 bytes each). */
struct gcap_gpu_prog {
	uint32_t off;
	uint32_t len; /**< 0: accept every packet */
};

/** The persistent kernel's parameters (passed by value). */
struct gcap_gpu_kparams {
	uint64_t queues; /**< device address of gridDim.x qdescs */
	uint64_t quit;   /**< device address of the uint32 quit flag */
	uint64_t insns;  /**< device address of the BPF instructions */
	uint64_t progs;  /**< device address of nfilters gcap_gpu_prog */
	uint32_t nfilters;
	uint32_t snaplen;
	uint32_t fault_at; /**< debug: trap on this (1-based) batch of block 0 */
	uint32_t prefetch; /**< bytes of each packet's head loaded at once
			    *   before the filter runs (0: none) */
	/** device address of the inline kernel's struct gcap_kstate (0: none;
	 *  only read by a TU built with GCAP_GPU_INLINE_KERNEL) */
	uint64_t kstate;
};

#ifdef __cplusplus
}
#endif

#endif /* GCAP_GPU_ABI_H */
