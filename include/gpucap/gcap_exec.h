/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The executor interface: what runs filters (and inline kernels) over
 * batches of packets. Two executors implement it: "cpu" (on the RX lcores)
 * and "gpu" (persistent CUDA kernels). The pipeline only talks to this ops
 * table, so both give the same results by construction of the pipeline and
 * are tested against each other.
 *
 * Life of a batch slot, per pipeline queue (single producer, single
 * consumer: the RX lcore that owns the queue):
 *
 *   FREE  --batch_get/fill/batch_submit-->  READY  --executor-->  DONE
 *   DONE  --batch_poll/consume/batch_release-->  FREE
 *
 * Slots are used in ring order: batch_get returns the slot after the last
 * submitted one when it is FREE, batch_poll returns the oldest submitted slot
 * when it is DONE. Nothing here allocates, locks or logs per batch.
 */
#ifndef GCAP_EXEC_H
#define GCAP_EXEC_H

#include <stdbool.h>
#include <stdint.h>

#include "gcap_common.h"
#include "gcap_pkt.h"
#include "gcap_span.h"

#ifdef __cplusplus
extern "C" {
#endif

struct bpf_program;
struct gcap_exec;
struct gcap_khost;
struct rte_mempool;

/**
 * An export buffer: records (struct gcap_rec + bytes) back to back, written
 * by the executor, read by the writer thread. Lives in memory the executor
 * can write (pinned host memory for the gpu executor).
 *
 * The executor lays a queue's nxbufs buffers out back to back, xbuf_size
 * bytes each; the pipeline uses that as one memory and points each buffer
 * at a region of it sized to one batch (data and size change from batch to
 * batch, set before batch_submit): an executor reads data, size, len and
 * nrec from the buffer for every batch, never from its own layout.
 */
struct gcap_xbuf {
	uint8_t *data;  /**< size bytes, 8-byte aligned */
	uint32_t size;  /**< capacity */
	uint32_t len;   /**< bytes of records written */
	uint32_t nrec;  /**< records written */
	uint16_t queue; /**< pipeline queue that owns it */
	uint16_t index; /**< index within that queue's pool */
	uint32_t flags; /**< GCAP_XBUF_*, set by the pipeline as it binds it */
};

/** The records carry the file's own time fields in ts_ns (the form of
 *  gcap_capfile_fill()'s raw), not nanoseconds: records a gpu executor
 *  found in a span of the file itself. */
#define GCAP_XBUF_RAW_TS 1u

/** Per-batch results, valid once the batch is DONE. */
struct gcap_batch_result {
	/** packets that matched at least one output and whose record was
	 *  written to the export buffer */
	uint32_t n_captured;
	uint32_t n_filtered; /**< packets that matched no output */
	/** packets that matched but whose record did not fit: the executor
	 *  stops writing at the first record that does not fit, and counts it
	 *  and every later matching packet of the batch here (the pipeline
	 *  counts them as "writer behind" drops) */
	uint32_t n_truncated;
	/** the executor's own time on the batch in ns (gpu: from the doorbell
	 *  seen to DONE, by the GPU's clock); 0 where not measured */
	uint32_t exec_ns;
	uint64_t captured_bytes; /**< wire bytes of the n_captured packets */
	/** when the executor took the batch up, in ns on the CLOCK_REALTIME
	 *  scale (gpu: the GPU's global timer at the doorbell, which the
	 *  driver keeps near the host's real-time clock); 0 where not
	 *  measured. Latency accounting only. */
	uint64_t start_ns;
	/** a span batch (GCAP_BATCH_SPAN): the records the executor found in
	 *  it, their wire bytes (below), and the file offset of the record
	 *  its finding stopped at (one the executor does not take: the
	 *  reader goes on from there), or GCAP_SPAN_GOES_ON (gcap_span.h) */
	uint32_t n_found;
	/** its sub-chunks walked again where a guess was wrong (see
	 *  gcap_span.h) */
	uint32_t span_walks;
	uint64_t found_bytes;
	uint64_t span_stop;
	/** where a span's time went on the executor, ns (GPU clock): its
	 *  guesses and walks, the wait for the span before it, the join, the
	 *  records described (GCAP_SPAN_T_*) */
	uint32_t span_ns[4];
	/** written records per output (the first nfilters entries) */
	uint64_t out_pkts[GCAP_MAX_OUTPUTS];
};

/** Arrival times a batch keeps apart (latency accounting). */
#define GCAP_BATCH_BURSTS 64
/** Polls closer than this to the last time kept share it (ns). */
#define GCAP_BURST_GRAIN_NS 500u

/** gcap_batch.flags: the batch is a span of a plain pcap file whose
 *  records the executor finds (gcap_batch.span; an executor created
 *  with file_spans). */
#define GCAP_BATCH_SPAN 1u
/** A span batch: the file's bytes [off, off + avail) in the staging area;
 *  the records that start in the first len bytes are its own. */
struct gcap_batch_span {
	uint64_t off;   /**< file offset of stage[0] */
	uint64_t index; /**< spans of the run before it (they come in order) */
	uint64_t entry; /**< index 0: file offset of its first record */
	uint32_t len;   /**< bytes whose records are the span's */
	uint32_t avail; /**< bytes in stage: len and the longest record's tail
			 *   (GCAP_SPAN_TAIL), or up to the file's end */
	uint32_t snap;  /**< longest caplen the executor takes (the file's
			 *   snapshot, at most GCAP_SPAN_CAPLEN_MAX) */
	uint32_t flags; /**< GCAP_SPAN_SWAP, GCAP_SPAN_NANO (gcap_span.h) */
};

/** One batch slot. */
struct gcap_batch {
	struct gcap_pkt *pkts; /**< batch_max descriptors, executor-readable */
	uint32_t n;            /**< descriptors filled by the source */
	uint16_t queue;        /**< pipeline queue */
	uint16_t flags;        /**< GCAP_BATCH_SPAN, or 0 */
	/** where the executor writes export records: after the len bytes
	 *  (nrec records) of earlier batches already there, updating both */
	struct gcap_xbuf *xbuf;
	uint8_t *stage; /**< stage_size bytes for sources that copy
	                              packet bytes (file reader), executor-readable */
	uint32_t stage_size;
	uint32_t stage_used;
	uint64_t seq;                  /**< batch sequence number within the queue */
	struct gcap_batch_span span;   /**< with GCAP_BATCH_SPAN (n is 0) */
	struct gcap_batch_result *res; /**< results, executor-written */
	void *mbufs[GCAP_BATCH_MAX];   /**< source bookkeeping (rte_mbuf pointers) */
	/** source bookkeeping: packets [burst_end[i - 1], burst_end[i]) were
	 *  received by the poll at burst_t[i] (CLOCK_MONOTONIC ns) or by
	 *  later ones (less than GCAP_BURST_GRAIN_NS after it, or merged
	 *  into it when the entries ran out) */
	uint16_t nbursts;
	uint64_t submit_t; /**< source bookkeeping: CLOCK_MONOTONIC ns of batch_submit */
	uint32_t gap_mark; /**< source bookkeeping: the queue's poll gaps when opened */
	/** source bookkeeping: the pool every mbuf of the batch goes back to
	 *  in one put, or NULL (some need DPDK's general path) */
	void *free_pool;
	uint16_t burst_end[GCAP_BATCH_BURSTS];
	uint64_t burst_t[GCAP_BATCH_BURSTS];
};

/** What an executor is created with. */
struct gcap_exec_conf {
	unsigned nqueues;   /**< pipeline queues (RX queues, or 1 for a file) */
	unsigned ring_size; /**< batch slots per queue, a power of two */
	/** packets per batch: <= GCAP_BATCH_MAX for live queues, <=
	 *  GCAP_FILE_BATCH_MAX for a file */
	unsigned batch_max;
	unsigned nxbufs;    /**< export buffers per queue (descriptors; see gcap_xbuf) */
	uint32_t xbuf_size; /**< bytes of export memory per buffer, laid out back to back */
	uint32_t stage_size; /**< staging bytes per batch slot (0: none) */
	uint32_t snaplen;    /**< longest caplen written to records */
	unsigned nfilters;   /**< outputs; 1..GCAP_MAX_OUTPUTS */
	/** nfilters programs; a program with bf_len 0 accepts every packet. */
	const struct bpf_program *filters;
	int linktype;         /**< DLT of the packets (for compiled filters) */
	enum gcap_mem mem;    /**< memory mode (gpu executor) */
	const int *gpus;      /**< GPU ordinals; queue q runs on gpus[q % ngpus] */
	unsigned ngpus;       /**< 0: the default device choice */
	bool compile_filters; /**< gpu: translate BPF to CUDA C (else interpret) */
	/** gpu: thread blocks sharing one queue's batches, block k taking the
	 *  slots k, k + B, k + 2B, ... (a power of two that divides
	 *  ring_size); 0: the executor's choice (2 where the SMs allow, 1 for
	 *  an ordered inline kernel) */
	unsigned blocks_per_queue;
	const char *kernel_path; /**< inline kernel source, or NULL */
	const char *kernel_arg;  /**< argument for the kernel's init hook, or NULL */
	/** time (ms) one batch may take before the watchdog calls it stuck
	 *  (cpu: the thread's CPU time in the batch, its filters and inline
	 *  kernel; gpu, with an inline kernel: how long the GPU has held the
	 *  queue's oldest batch); 0: GCAP_KERNEL_BUDGET_MS */
	unsigned kernel_budget_ms;
	/** cpu: threads that filter a one-queue pipeline's batches (several
	 *  at a time, completed in order); 0: the submitting thread filters
	 *  them, as on live queues. Not with an inline kernel (its state is
	 *  one thread's). */
	unsigned cpu_workers;
	/** gpu, file mode: the pipeline may submit span batches
	 *  (GCAP_BATCH_SPAN) of up to stage_size bytes, whose records the
	 *  executor finds */
	bool file_spans;
};

/** Default of gcap_exec_conf.kernel_budget_ms: 5 s of CPU time on one
 *  batch (at most GCAP_BATCH_MAX packets) is 10 ms a packet, far from any
 *  kernel that keeps up with a link, and far above a loaded machine's
 *  scheduling delays (the budget counts the thread's CPU time, not the
 *  time it waited for a core). */
#define GCAP_KERNEL_BUDGET_MS 5000u

/** An executor's operations. */
struct gcap_exec_ops {
	const char *name;
	/** batch_submit does the batch's work (the filters) on the calling
	 *  lcore before it returns, as the cpu executor does: the pipeline
	 *  does not count that time as time the lcore lost (poll gaps) */
	bool submit_works;

	/**
	 * Create an executor. @return NULL with errno set and a message in
	 * errbuf (GCAP_ERRBUF_SIZE) on failure.
	 */
	struct gcap_exec *(*create)(const struct gcap_exec_conf *conf, char *errbuf);

	/** Stop (see stop) if needed and free everything. NULL is a no-op. */
	void (*destroy)(struct gcap_exec *ex);

	/** Export buffers of queue q: *xbufs gets an array of nxbufs. @return nxbufs. */
	unsigned (*xbufs)(struct gcap_exec *ex, unsigned q, struct gcap_xbuf **xbufs);

	/** The next FREE slot of queue q, or NULL when the ring is full. */
	struct gcap_batch *(*batch_get)(struct gcap_exec *ex, unsigned q);

	/**
	 * Publish a filled slot (FREE -> READY). b->n may be 0 only if the
	 * slot is not submitted at all, or for a span batch (GCAP_BATCH_SPAN).
	 * @return 0, or a negative errno: -EINVAL for a slot that is not the
	 * next, a count or export buffer out of range, or a span the executor
	 * was not created for.
	 */
	int (*batch_submit)(struct gcap_exec *ex, unsigned q, struct gcap_batch *b);

	/** The oldest DONE slot of queue q, or NULL if none is done yet. */
	struct gcap_batch *(*batch_poll)(struct gcap_exec *ex, unsigned q);

	/** Hand a consumed slot back (DONE -> FREE). */
	void (*batch_release)(struct gcap_exec *ex, unsigned q, struct gcap_batch *b);

	/**
	 * How many batches of queue q the executor works on at the same time
	 * (the GPU blocks sharing the queue). A live source keeps adding
	 * packets to a batch that is not full while that many are in flight,
	 * and submits it as soon as fewer are. NULL op: 1.
	 * @return the number of lanes, at least 1.
	 */
	unsigned (*lanes)(struct gcap_exec *ex, unsigned q);

	/**
	 * Create the mbuf pool that RX queue q of DPDK port port_id receives
	 * into, in the executor's memory mode (data rooms of data_room bytes).
	 * NULL op: the pipeline creates an ordinary pool (cpu executor).
	 * @return the pool, or NULL with errno set and a message in errbuf.
	 */
	struct rte_mempool *(*pool_create)(struct gcap_exec *ex, unsigned q,
					   uint16_t port_id, const char *name,
					   unsigned n_mbufs, uint16_t data_room,
					   int socket, char *errbuf);

	/**
	 * Whether the CPU may read the packet bytes of queue q's mbufs (once
	 * its pool exists): false where the data rooms are device memory the
	 * process has no mapping of (--mem gpu, or what --mem auto chose for
	 * the port). The pipeline then never copies a chained packet whole.
	 * NULL op: true.
	 */
	bool (*cpu_reads)(struct gcap_exec *ex, unsigned q);

	/**
	 * Check for an asynchronous fault (e.g. a sticky CUDA error).
	 * @return 0, or -EIO with a message in errbuf.
	 */
	int (*health)(struct gcap_exec *ex, char *errbuf);

	/**
	 * Look for work that will not end (an inline kernel in an endless
	 * loop; on the cpu, bpf_filter() looping on a crafted packet): called
	 * by one monitoring thread only, while the capture runs. NULL op:
	 * nothing to watch.
	 * @return 0, or -ETIME with a message naming the kernel (or the
	 *         filter) in errbuf (the batch is given up: it never completes).
	 */
	int (*watchdog)(struct gcap_exec *ex, char *errbuf);

	/**
	 * Finish the batches in flight, then end the workers (quit flag),
	 * waiting at most timeout_ms. DONE batches stay pollable.
	 * @return 0; -ETIMEDOUT if the wait expired; -EIO on a fault
	 *         (message in errbuf); -EBUSY when a worker is still running
	 *         an inline kernel that did not return: the executor's memory
	 *         is still in use, destroy() must not be called, and the
	 *         process should end (_exit) once its outputs are closed.
	 */
	int (*stop)(struct gcap_exec *ex, unsigned timeout_ms, char *errbuf);

	/**
	 * Write the inline kernel's state as JSON to path (NULL: no-op).
	 * @return 0 or a negative errno.
	 */
	int (*kernel_state)(struct gcap_exec *ex, const char *path, char *errbuf);

	/**
	 * The inline kernel's host build (gcap_khost.h), for its name and the
	 * address range of its code. @return it, or NULL without a kernel.
	 */
	const struct gcap_khost *(*kernel)(struct gcap_exec *ex);
};

/** The cpu executor (always built). */
extern const struct gcap_exec_ops gcap_exec_cpu_ops;

/** The gpu executor, or NULL when this build has no CUDA. */
const struct gcap_exec_ops *gcap_exec_gpu_ops(void);

#ifdef __cplusplus
}
#endif

#endif /* GCAP_EXEC_H */
