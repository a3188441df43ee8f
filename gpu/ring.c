/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The gpu executor's rings: one persistent kernel per GPU, one block (or
 * several, the lanes) per pipeline queue, fed through a ring of doorbell
 * slots per queue in pinned, device-mapped host memory. See docs/gpu.md
 * for the protocol. Owns the ring layout, the launch with the first batch,
 * the batch calls of the ops table, and health and stop.
 *
 * Host side of the doorbells (single producer, single consumer per queue):
 *   submit: write the slot (n, descriptor, xbuf and result addresses), then
 *           a release store of READY (x86: a compiler barrier and a store;
 *           the GPU reads pinned memory coherently over PCIe). In copy
 *           mode the copy engines move the batch into VRAM and a stream
 *           memory operation stores READY after the copies (stream order,
 *           with the default memory barrier). In gpu mode,
 *           cuFlushGPUDirectRDMAWrites first where the device needs it,
 *           as rte_gpu_wmb() does (pools.c decides).
 *   poll:   acquire load of the status; DONE means the results, the records
 *           and xbuf->len/nrec are visible.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec_gpu_internal.h"

/* the kernel's views of the host structures must match them */
_Static_assert(sizeof(struct gcap_gpu_xbuf) == sizeof(struct gcap_xbuf), "xbuf layout");
_Static_assert(offsetof(struct gcap_gpu_xbuf, len) == offsetof(struct gcap_xbuf, len),
	       "xbuf layout");
_Static_assert(offsetof(struct gcap_gpu_xbuf, nrec) == offsetof(struct gcap_xbuf, nrec),
	       "xbuf layout");
_Static_assert(offsetof(struct gcap_gpu_xbuf, size) == offsetof(struct gcap_xbuf, size),
	       "xbuf layout");
_Static_assert(sizeof(struct gcap_gpu_result) == sizeof(struct gcap_batch_result),
	       "result layout");
_Static_assert(offsetof(struct gcap_gpu_result, out_pkts) ==
		       offsetof(struct gcap_batch_result, out_pkts),
	       "result layout");
_Static_assert(offsetof(struct gcap_gpu_result, start_ns) ==
		       offsetof(struct gcap_batch_result, start_ns),
	       "result layout");
_Static_assert(sizeof(struct gcap_gpu_slot) == 64, "one line per slot");

static size_t
al64(size_t x)
{
	return (x + 63u) & ~(size_t)63u;
}

int
gcap_gpu_queue_setup(struct gcap_exec *ex, struct gpu_queue *qs, char *errbuf)
{
	const struct gcap_exec_conf *c = &ex->conf;
	size_t o_slots = 0, o_pkts, o_res, o_xb, o_shadow, o_stage, o_xdata, tot;
	size_t npk = (size_t)c->ring_size * c->batch_max;
	uint8_t *h;
	unsigned i;
	int rc;

	o_pkts = al64(o_slots + c->ring_size * sizeof(struct gcap_gpu_slot));
	o_res = al64(o_pkts + npk * sizeof(struct gcap_pkt));
	o_xb = al64(o_res + c->ring_size * sizeof(struct gcap_batch_result));
	o_shadow = al64(o_xb + c->nxbufs * sizeof(struct gcap_xbuf));
	o_stage = al64(o_shadow +
		       (c->mem == GCAP_MEM_COPY ? npk * sizeof(struct gcap_pkt) : 0));
	o_xdata = al64(o_stage + (size_t)c->ring_size * c->stage_size);
	tot = o_xdata + (size_t)c->nxbufs * c->xbuf_size;

	rc = gcap_gpu_host_alloc(ex, &qs->host, tot, errbuf, "doorbell ring");
	if (rc)
		return rc;
	h = qs->host;
	qs->slots = (struct gcap_gpu_slot *)(h + o_slots);
	qs->xbufs = (struct gcap_xbuf *)(h + o_xb);
	qs->xdata = h + o_xdata;
	qs->batches = calloc(c->ring_size, sizeof(*qs->batches));
	if (qs->batches == NULL)
		return gcap_err(errbuf, ENOMEM, "gpu executor: out of memory");
	for (i = 0; i < c->nxbufs; i++) {
		qs->xbufs[i].data = qs->xdata + (size_t)i * c->xbuf_size;
		qs->xbufs[i].size = c->xbuf_size;
		qs->xbufs[i].queue = (uint16_t)qs->q;
		qs->xbufs[i].index = (uint16_t)i;
	}
	for (i = 0; i < c->ring_size; i++) {
		struct gcap_batch *b = &qs->batches[i];

		b->pkts = (struct gcap_pkt *)(h + o_pkts) + (size_t)i * c->batch_max;
		b->res = (struct gcap_batch_result *)(h + o_res) + i;
		b->queue = (uint16_t)qs->q;
		b->stage = c->stage_size ? h + o_stage + (size_t)i * c->stage_size : NULL;
		b->stage_size = c->stage_size;
		qs->slots[i].status = GCAP_GPU_FREE;
	}
	rc = gcap_gpu_span_setup(ex, qs, errbuf);
	if (rc || c->mem != GCAP_MEM_COPY)
		return rc;

	qs->shadow = (struct gcap_pkt *)(h + o_shadow);
	return gcap_gpu_copy_setup(ex, qs, errbuf);
}

/* Start the persistent kernel: one block per queue of the device. */
static int
dev_launch(struct gcap_exec *ex, struct gpu_dev *d, char *errbuf)
{
	struct gcap_gpu_kparams kp;
	void *args[1] = { &kp };
	int rc;

	if (d->nq == 0)
		return 0;
	memset(&kp, 0, sizeof(kp));
	kp.queues = d->qdesc;
	kp.quit = (uint64_t)(uintptr_t)ex->quit;
	kp.insns = d->insns;
	kp.progs = d->progs;
	kp.nfilters = ex->conf.nfilters;
	kp.snaplen = ex->conf.snaplen;
	kp.fault_at = ex->fault_at;
	kp.prefetch = ex->prefetch;
	kp.kstate = d->kstate;
	rc = gcap_cu_err(ex->cu,
			 ex->cu->LaunchKernel(d->fn, d->nblocks, 1, 1, ex->threads, 1, 1,
					      0, d->kstream, args, NULL),
			 errbuf, "cuLaunchKernel(" KERNEL_NAME ")");
	if (rc)
		return rc;
	d->launched = true;
	return 0;
}

unsigned
gcap_gpu_xbufs(struct gcap_exec *ex, unsigned q, struct gcap_xbuf **xbufs)
{
	if (q >= ex->conf.nqueues) {
		*xbufs = NULL;
		return 0;
	}
	*xbufs = ex->qs[q].xbufs;
	return ex->conf.nxbufs;
}

static int
launch_all(struct gcap_exec *ex)
{
	unsigned i;
	int rc = 0;

	pthread_mutex_lock(&ex->launch_lock);
	if (ex->launched == 0) {
		for (i = 0; i < ex->ndev && !rc; i++) {
			rc = gcap_gpu_ctx_on(ex, &ex->dev[i], ex->launch_err);
			if (!rc)
				rc = dev_launch(ex, &ex->dev[i], ex->launch_err);
		}
		ex->launch_rc = rc;
		__atomic_store_n(&ex->launched, rc ? -1 : 1, __ATOMIC_RELEASE);
	}
	rc = ex->launch_rc;
	pthread_mutex_unlock(&ex->launch_lock);
	return rc;
}

struct gcap_batch *
gcap_gpu_batch_get(struct gcap_exec *ex, unsigned q)
{
	struct gpu_queue *qs = &ex->qs[q];
	unsigned s = (unsigned)(qs->prod & (ex->conf.ring_size - 1));
	struct gcap_batch *b;

	if (__atomic_load_n(&ex->launched, __ATOMIC_ACQUIRE) != 1 &&
	    (ex->stopped || launch_all(ex) != 0))
		return NULL;
	/* a full ring by count first: in copy mode a submitted slot reads
	 * FREE until the copy stream writes its READY, and with the copies
	 * behind (the copy engines are copy mode's bottleneck) the oldest
	 * slot could be handed out again while in flight: its batch was
	 * overwritten and never completed (copy mode at full rate stalled,
	 * with "batches still in flight" at stop) */
	if (qs->prod - qs->cons >= ex->conf.ring_size ||
	    __atomic_load_n(&qs->slots[s].status, __ATOMIC_ACQUIRE) != GCAP_GPU_FREE ||
	    ex->stopped)
		return NULL;
	b = &qs->batches[s];
	b->n = 0;
	b->flags = 0;
	b->stage_used = 0;
	b->seq = qs->prod;
	return b;
}

int
gcap_gpu_batch_submit(struct gcap_exec *ex, unsigned q, struct gcap_batch *b)
{
	struct gpu_queue *qs = &ex->qs[q];
	unsigned s = (unsigned)(qs->prod & (ex->conf.ring_size - 1));
	struct gcap_gpu_slot *sl = &qs->slots[s];
	uint32_t arg;
	int rc;

	bool span = (b->flags & GCAP_BATCH_SPAN) != 0;

	if (b != &qs->batches[s] || (b->n == 0 && !span) || b->n > ex->conf.batch_max ||
	    b->xbuf == NULL || b->xbuf < qs->xbufs ||
	    b->xbuf >= qs->xbufs + ex->conf.nxbufs)
		return -EINVAL;
	if (ex->stopped)
		return -ESHUTDOWN;
	arg = GCAP_GPU_ARG(span ? GCAP_GPU_ARG_SPAN : b->n, b->xbuf - qs->xbufs);
	sl->seq = b->seq;
	if (span || qs->mem == GCAP_MEM_COPY || qs->mem == GCAP_MEM_GPU) {
		if (gcap_gpu_tls_ctx != qs->dev->ctx) {
			if (ex->cu->CtxSetCurrent(qs->dev->ctx) != CUDA_SUCCESS)
				return -EIO;
			gcap_gpu_tls_ctx = qs->dev->ctx;
		}
	}
	if (span) {
		/* the span stream writes READY after the copy */
		sl->arg = arg;
		rc = gcap_gpu_submit_span(ex, qs, s, b);
		if (rc)
			return rc;
	} else if (ex->conf.mem == GCAP_MEM_COPY) {
		/* the stream writes READY after the copies */
		sl->arg = arg;
		rc = gcap_gpu_submit_copy(ex, qs, s, b);
		if (rc)
			return rc;
	} else {
		/* qs->mem, not conf.mem: --mem auto may have chosen gpu */
		if (qs->mem == GCAP_MEM_GPU && qs->dev->wmb)
			ex->cu->FlushGPUDirectRDMAWrites(
				CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX,
				CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER);
		/* READY and arg in one store: the GPU reads them in one load */
		__atomic_store_n((uint64_t *)&sl->status,
				 GCAP_GPU_READY | (uint64_t)arg << 32, __ATOMIC_RELEASE);
	}
	qs->prod++;
	return 0;
}

struct gcap_batch *
gcap_gpu_batch_poll(struct gcap_exec *ex, unsigned q)
{
	struct gpu_queue *qs = &ex->qs[q];
	unsigned s = (unsigned)(qs->cons & (ex->conf.ring_size - 1));

	if (qs->cons == qs->prod ||
	    __atomic_load_n(&qs->slots[s].status, __ATOMIC_ACQUIRE) != GCAP_GPU_DONE)
		return NULL;
	qs->cons++;
	return &qs->batches[s];
}

void
gcap_gpu_batch_release(struct gcap_exec *ex, unsigned q, struct gcap_batch *b)
{
	struct gpu_queue *qs = &ex->qs[q];
	size_t s = (size_t)(b - qs->batches);

	if (s < ex->conf.ring_size)
		__atomic_store_n(&qs->slots[s].status, GCAP_GPU_FREE, __ATOMIC_RELEASE);
}

/* Blocks of the persistent kernel that share each queue's batches. */
unsigned
gcap_gpu_lanes(struct gcap_exec *ex, unsigned q)
{
	(void)q;
	return ex->bpq;
}

/* ---- health and stop -------------------------------------------------- */

/* A fault raised by code the device ran (not by the API): with an inline
 * kernel loaded, its unchecked loads and stores are where such a fault
 * comes from (the filters check every access against caplen). */
static bool
device_fault(CUresult r)
{
	switch (r) {
	case CUDA_ERROR_ILLEGAL_ADDRESS:
	case CUDA_ERROR_MISALIGNED_ADDRESS:
	case CUDA_ERROR_INVALID_ADDRESS_SPACE:
	case CUDA_ERROR_ILLEGAL_INSTRUCTION:
	case CUDA_ERROR_INVALID_PC:
	case CUDA_ERROR_HARDWARE_STACK_ERROR:
	case CUDA_ERROR_ASSERT:
	case CUDA_ERROR_LAUNCH_FAILED: return true;
	default: return false;
	}
}

/* What the persistent kernel on d is called in a message: the inline
 * kernel when a fault is likely its own. */
static void
kernel_what(const struct gcap_exec *ex, const struct gpu_dev *d, CUresult r, char *what,
	    size_t size)
{
	if (ex->kernel != NULL && device_fault(r))
		snprintf(what, size,
			 "inline kernel %s faulted on GPU %d (in " KERNEL_NAME ")",
			 gcap_khost_path(ex->kernel), d->ordinal);
	else
		snprintf(what, size, "persistent kernel " KERNEL_NAME " on GPU %d",
			 d->ordinal);
}

/* 0: running (or ended after quit); -EIO: fault (message in errbuf). */
static int
dev_check(struct gcap_exec *ex, struct gpu_dev *d, char *errbuf)
{
	CUresult r;
	char what[GCAP_ERRBUF_SIZE / 2];
	unsigned q;

	if (!d->launched)
		return 0;
	if (d->faulted)
		return gcap_err(errbuf, EIO,
				"persistent kernel " KERNEL_NAME
				" on GPU %d failed earlier",
				d->ordinal);
	if (ex->cu->CtxSetCurrent(d->ctx) != CUDA_SUCCESS)
		return gcap_err(errbuf, EIO, "GPU %d: cuCtxSetCurrent failed",
				d->ordinal);
	gcap_gpu_tls_ctx = d->ctx;
	r = ex->cu->StreamQuery(d->kstream);
	if (r == CUDA_SUCCESS) {
		d->finished = true;
		if (!ex->stopped && !*(volatile uint32_t *)ex->quit) {
			d->faulted = true;
			return gcap_err(errbuf, EIO,
					"persistent kernel " KERNEL_NAME
					" on GPU %d ended on its own",
					d->ordinal);
		}
		return 0;
	}
	if (r != CUDA_ERROR_NOT_READY) {
		d->faulted = true;
		kernel_what(ex, d, r, what, sizeof(what));
		gcap_cu_err(ex->cu, r, errbuf, what);
		return -EIO;
	}
	for (q = 0; q < ex->conf.nqueues; q++) {
		struct gpu_queue *qs = &ex->qs[q];

		if (qs->dev != d || !qs->cstream)
			continue;
		r = ex->cu->StreamQuery(qs->cstream);
		if (r != CUDA_SUCCESS && r != CUDA_ERROR_NOT_READY) {
			d->faulted = true;
			snprintf(what, sizeof(what),
				 "copy stream of queue %u "
				 "on GPU %d",
				 q, d->ordinal);
			gcap_cu_err(ex->cu, r, errbuf, what);
			return -EIO;
		}
	}
	return 0;
}

int
gcap_gpu_health(struct gcap_exec *ex, char *errbuf)
{
	unsigned i;
	int rc;

	if (__atomic_load_n(&ex->launched, __ATOMIC_ACQUIRE) < 0)
		return gcap_err(errbuf, EIO, "%s", ex->launch_err);
	for (i = 0; i < ex->ndev; i++) {
		rc = dev_check(ex, &ex->dev[i], errbuf);
		if (rc)
			return rc;
	}
	return 0;
}

/* The oldest batch of a queue that the GPU holds (READY: not yet DONE; the
 * kernel writes no state in between), by its sequence number; the same
 * one still there budget_ms after it was first seen is stuck. Reads the
 * slots only (the submitting thread owns the queue's counters). */
int
gcap_gpu_watchdog(struct gcap_exec *ex, char *errbuf)
{
	uint64_t now = now_ms();

	if (ex->kernel == NULL)
		return 0;
	for (unsigned q = 0; q < ex->conf.nqueues; q++) {
		struct gpu_queue *qs = &ex->qs[q];
		uint64_t oldest = 0;

		for (unsigned s = 0; s < ex->conf.ring_size; s++) {
			const struct gcap_gpu_slot *sl = &qs->slots[s];
			uint64_t seq;

			if ((uint32_t)__atomic_load_n((const uint64_t *)&sl->status,
						      __ATOMIC_ACQUIRE) != GCAP_GPU_READY)
				continue;
			seq = __atomic_load_n(&sl->seq, __ATOMIC_RELAXED) + 1;
			if (oldest == 0 || seq < oldest)
				oldest = seq;
		}
		if (oldest == 0 || oldest != qs->wd_seq) {
			qs->wd_seq = oldest;
			qs->wd_ms = now;
			continue;
		}
		if (now - qs->wd_ms > ex->budget_ms)
			return gcap_err(
				errbuf, ETIME,
				"inline kernel %s is stuck: a batch of queue %u has "
				"been on GPU %d for %.1f s, over the budget of %u ms "
				"(--kernel-budget); the capture stops without it",
				gcap_khost_path(ex->kernel), q, qs->dev->ordinal,
				(double)(now - qs->wd_ms) / 1e3, ex->budget_ms);
	}
	return 0;
}

static bool
queues_drained(struct gcap_exec *ex)
{
	unsigned q;
	uint64_t k;

	for (q = 0; q < ex->conf.nqueues; q++) {
		struct gpu_queue *qs = &ex->qs[q];

		for (k = qs->cons; k < qs->prod; k++) {
			unsigned s = (unsigned)(k & (ex->conf.ring_size - 1));

			if (__atomic_load_n(&qs->slots[s].status, __ATOMIC_ACQUIRE) !=
			    GCAP_GPU_DONE)
				return false;
		}
	}
	return true;
}

int
gcap_gpu_stop(struct gcap_exec *ex, unsigned timeout_ms, char *errbuf)
{
	uint64_t deadline = now_ms() + timeout_ms;
	unsigned i;
	int rc = 0;
	bool all;

	if (ex->stopped) {
		if (ex->stop_rc)
			gcap_err(errbuf, -ex->stop_rc,
				 "gpu executor: stopped "
				 "earlier with an error");
		return ex->stop_rc;
	}
	pthread_mutex_lock(&ex->launch_lock);
	ex->stopped = true;
	if (ex->launched == 0)
		ex->launched = -1; /* never launch after stop */
	pthread_mutex_unlock(&ex->launch_lock);
	/* 1. drain: every submitted batch reaches DONE */
	for (;;) {
		rc = gcap_gpu_health(ex, errbuf);
		if (rc)
			break;
		if (queues_drained(ex))
			break;
		if (now_ms() > deadline) {
			rc = gcap_err(errbuf, ETIMEDOUT,
				      "gpu executor: batches "
				      "still in flight after %u ms",
				      timeout_ms);
			break;
		}
		usleep(50);
	}
	/* 2. quit flag, then wait for every kernel to return */
	__atomic_store_n(ex->quit, 1u, __ATOMIC_RELEASE);
	for (;;) {
		all = true;
		for (i = 0; i < ex->ndev; i++) {
			struct gpu_dev *d = &ex->dev[i];
			int r2;

			if (!d->launched || d->finished)
				continue;
			r2 = dev_check(ex, d, rc ? NULL : errbuf);
			if (r2) {
				if (!rc || rc == -ETIMEDOUT)
					rc = r2;
				continue;
			}
			if (!d->finished)
				all = false;
		}
		if (all)
			break;
		if (now_ms() > deadline) {
			if (ex->kernel != NULL)
				/* a batch the inline kernel never finished: the
				 * block inside it cannot see the quit flag */
				rc = gcap_err(errbuf, EBUSY,
					      "inline kernel %s is stuck: a batch on the "
					      "GPU did not finish within %u ms of the "
					      "executor's stop, "
					      "and " KERNEL_NAME
					      " cannot see its quit flag "
					      "inside it; left running until the process "
					      "ends",
					      gcap_khost_path(ex->kernel), timeout_ms);
			else if (!rc)
				rc = gcap_err(errbuf, ETIMEDOUT,
					      "persistent "
					      "kernel " KERNEL_NAME " did not "
					      "end within %u ms of the quit "
					      "flag",
					      timeout_ms);
			ex->kernel_alive = true;
			break;
		}
		usleep(50);
	}
	/* a faulted context cannot run anything any more: nothing alive */
	for (i = 0; i < ex->ndev; i++)
		if (ex->dev[i].launched && !ex->dev[i].finished && !ex->dev[i].faulted)
			ex->kernel_alive = true;
	/* a kernel left running still reads the rings and pools: the caller
	 * must not take them down (gcap_exec_ops.stop) */
	if (ex->kernel_alive && rc != -EBUSY)
		rc = gcap_err(
			errbuf, EBUSY,
			"persistent kernel " KERNEL_NAME " did not end within %u ms "
			"of the executor's stop; left running until the process ends",
			timeout_ms);
	ex->stop_rc = rc;
	return rc;
}
