/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Internal to the gpu executor: its state (devices, queues, pools) and the
 * functions its parts share. The parts, bottom up (each calls only parts
 * listed before it):
 *   device.c  probe, choice, the context current on this thread, the log
 *   code.c    the CUDA translation unit (gpu_internal.h)
 *   module.c  compile and load the kernel module, upload the filters
 *   pools.c   pinned host memory, the mbuf pools of each memory mode
 *   copy.c    copy mode: streams, VRAM staging, the copies of a batch
 *   ring.c    the doorbell rings, the launch, health and stop
 *   exec_gpu.c  the ops table: create, destroy, kernel state
 */
#ifndef GCAP_EXEC_GPU_INTERNAL_H
#define GCAP_EXEC_GPU_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <rte_log.h>

#include "gpucap/gcap_exec.h"
#include "gpucap/gcap_khost.h"
#include "cuda_internal.h"
#include "kernels/gcap_gpu_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GPU_MAX_DEVS 16
/* copy mode: streams per GPU at most (GCAP_GPU_COPY_STREAMS, copy.c) */
#define GPU_COPY_STREAMS_MAX 30u
#define KERNEL_NAME "gcap_pipeline_kernel"

/** The module's log type (device.c registers it). */
extern int gcap_gpu_logtype;

#define GPU_LOG(level, ...)                                                   \
	rte_log(RTE_LOG_##level,                                              \
		gcap_gpu_logtype >= 0 ? gcap_gpu_logtype : RTE_LOGTYPE_USER1, \
		"gpucap.gpu: " __VA_ARGS__)

/** The context current on this thread, as far as this module set it. */
extern __thread CUcontext gcap_gpu_tls_ctx;

struct gpu_dev {
	int ordinal;
	CUdevice dev;
	CUcontext ctx;
	bool ctx_held;
	CUmodule mod;
	CUfunction fn;
	CUstream kstream;
	CUstream sstream; /* state snapshots beside the running kernel */
	CUstream cstreams[GPU_COPY_STREAMS_MAX]; /* copy mode, shared by its queues */
	unsigned ncs; /* copy streams in use (0: not copy mode) */
	unsigned nqs; /* queues set up so far (their copy stream) */
	CUdeviceptr insns, progs, qdesc;
	CUdeviceptr kstate; /* inline kernel state (VRAM), or 0 */
	CUfunction kcopy;   /* gcap_kstate_copy, with an inline kernel */
	unsigned nq;
	unsigned nblocks; /* nq x blocks per queue */
	bool launched;
	bool finished; /* the kernel returned (StreamQuery SUCCESS) */
	bool faulted;
	/* gpu memory mode: cuFlushGPUDirectRDMAWrites before each doorbell,
	 * where the GPU does not order a NIC's writes itself (pools.c) */
	bool wmb;
	int sms;
};

struct gpu_queue {
	unsigned q;
	struct gpu_dev *dev;
	enum gcap_mem mem; /* conf.mem, or what auto chose for the pool */
	void *host;        /* one pinned, mapped allocation */
	struct gcap_gpu_slot *slots;
	struct gcap_batch *batches; /* ring_size, ordinary memory */
	struct gcap_xbuf *xbufs;    /* nxbufs, in host */
	uint8_t *xdata;
	uint64_t prod, cons;
	/* copy mode */
	CUstream cstream;
	CUdeviceptr vpkts, vdata;
	struct gcap_pkt *shadow; /* ring_size * batch_max, in host */
	CUdeviceptr *cp_dst, *cp_src;
	size_t *cp_len;
	uint32_t copy_bytes; /* VRAM staging bytes per slot */
	/* span slots (file_spans, span.c): the span stream, VRAM for each
	 * slot's bytes, records (and their time fields) and walks, then the
	 * chain; the slots' descriptions in pinned memory */
	CUstream sstream;
	CUdeviceptr vspan, vfound, vlists;
	struct gcap_gpu_span *spans;
	uint32_t found_max, list_max;
	/* the watchdog's view (its thread only): the oldest batch it saw in
	 * the GPU's hands (sequence + 1, 0: none) and when */
	uint64_t wd_seq;
	uint64_t wd_ms;
};

struct gpu_pool_mem {
	struct gpu_pool_mem *next;
	void *addr; /* what was registered */
	size_t len;
	void *host;       /* cuMemHostAlloc'ed, or NULL */
	CUdeviceptr dptr; /* cuMemAlloc'ed, or 0 */
	struct gpu_dev *dev;
	struct rte_device *rdev; /* DMA-mapped for this device, or NULL */
	bool registered;
};

struct gcap_exec {
	struct gcap_exec_conf conf;
	const struct gcap_cu *cu;
	unsigned ndev;
	struct gpu_dev dev[GPU_MAX_DEVS];
	struct gpu_queue *qs;
	uint32_t *quit; /* pinned, mapped */
	unsigned threads;
	unsigned bpq; /* blocks per queue */
	unsigned fault_at;
	unsigned prefetch; /* bytes of packet head loaded before the filter */
	bool stopped;
	int stop_rc;
	bool kernel_alive;  /* stop() could not end a kernel: leak */
	unsigned budget_ms; /* an inline kernel's time on one batch (watchdog) */
	/* The kernels start with the first batch_get(): every allocation
	 * (pools included) happens before, since freeing (and on some
	 * drivers allocating) device or pinned memory waits for running
	 * kernels, which never end on their own. */
	pthread_mutex_t launch_lock;
	int launched; /* 0, 1: launched, -1: failed */
	int launch_rc;
	char launch_err[GCAP_ERRBUF_SIZE];
	struct gpu_pool_mem *pools;
	/* inline kernel: the host build (validation, init, report), its
	 * state in VRAM on the one device, a pinned copy to read it back */
	struct gcap_khost *kernel;
	size_t kstate_size;
	void *kstate_host;
};

static inline uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---- device.c ---- */

/** Can the device map host memory with unified addressing? */
int gcap_gpu_dev_usable(const struct gcap_cu *cu, CUdevice d);

/** Make d's context current on this thread (and remember it). */
int gcap_gpu_ctx_on(struct gcap_exec *ex, struct gpu_dev *d, char *errbuf);

/* ---- module.c ---- */

/**
 * Load the kernel module into d's (current) context: the embedded fatbin,
 * or the NVRTC build with compiled filters or an inline kernel; then the
 * inline kernel's state and the filter programs into VRAM.
 */
int gcap_gpu_dev_load(struct gcap_exec *ex, struct gpu_dev *d, char *errbuf);

/* ---- pools.c ---- */

/** Pinned, device-mapped host memory whose device address is its host
 *  address, zeroed; "what" names it in the messages. */
int gcap_gpu_host_alloc(struct gcap_exec *ex, void **p, size_t len, char *errbuf,
			const char *what);

/** Free every pool's memory (undo the DMA maps and registrations). */
void gcap_gpu_pools_free(struct gcap_exec *ex);

struct rte_mempool *
gcap_gpu_pool_create(struct gcap_exec *ex, unsigned q, uint16_t port_id, const char *name,
		     unsigned n_mbufs, uint16_t data_room, int socket, char *errbuf);
bool gcap_gpu_cpu_reads(struct gcap_exec *ex, unsigned q);

/* ---- copy.c ---- */

/** How many copy streams device d gets (d->ncs), from its queues and the
 *  driver's work queues. */
int gcap_gpu_copy_streams(struct gpu_dev *d, char *errbuf);

/** Queue qs's copy mode part: its copy stream, the VRAM staging and
 *  descriptors, the copy lists (qs->shadow set already). */
int gcap_gpu_copy_setup(struct gcap_exec *ex, struct gpu_queue *qs, char *errbuf);

/** Copy slot s's batch into VRAM, then ring its doorbell in stream order. */
int gcap_gpu_submit_copy(struct gcap_exec *ex, struct gpu_queue *qs, unsigned s,
			 struct gcap_batch *b);

/* ---- span.c ---- */

/** Queue qs's span part (with conf.file_spans; else nothing): its stream,
 *  each slot's VRAM, the chain. */
int gcap_gpu_span_setup(struct gcap_exec *ex, struct gpu_queue *qs, char *errbuf);

/** Queue qs's span fields of its queue table entry qd. */
void gcap_gpu_span_qdesc(const struct gcap_exec *ex, const struct gpu_queue *qs,
			 struct gcap_gpu_qdesc *qd);

/** Free what gcap_gpu_span_setup made (its device's context current). */
void gcap_gpu_span_free(const struct gcap_exec *ex, struct gpu_queue *qs);

/** Copy span batch b of slot s into VRAM, then ring its doorbell in
 *  stream order. @return 0, -EINVAL for a span out of range, or the
 *  CUDA error's errno. */
int gcap_gpu_submit_span(struct gcap_exec *ex, struct gpu_queue *qs, unsigned s,
			 const struct gcap_batch *b);

/* ---- ring.c ---- */

/** Queue qs's ring in pinned memory: slots, descriptors, results, export
 *  buffers, staging; in copy mode its copy part too. */
int gcap_gpu_queue_setup(struct gcap_exec *ex, struct gpu_queue *qs, char *errbuf);

unsigned gcap_gpu_xbufs(struct gcap_exec *ex, unsigned q, struct gcap_xbuf **xbufs);
struct gcap_batch *gcap_gpu_batch_get(struct gcap_exec *ex, unsigned q);
int gcap_gpu_batch_submit(struct gcap_exec *ex, unsigned q, struct gcap_batch *b);
struct gcap_batch *gcap_gpu_batch_poll(struct gcap_exec *ex, unsigned q);
void gcap_gpu_batch_release(struct gcap_exec *ex, unsigned q, struct gcap_batch *b);
unsigned gcap_gpu_lanes(struct gcap_exec *ex, unsigned q);
int gcap_gpu_health(struct gcap_exec *ex, char *errbuf);
/** An inline kernel's batch in the GPU's hands past its budget: -ETIME. */
int gcap_gpu_watchdog(struct gcap_exec *ex, char *errbuf);
int gcap_gpu_stop(struct gcap_exec *ex, unsigned timeout_ms, char *errbuf);

#ifdef __cplusplus
}
#endif

#endif /* GCAP_EXEC_GPU_INTERNAL_H */
