/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The gpu executor's ops table (gcap_exec_gpu_ops()) and its life: the
 * configuration checks, the devices opened and the queues spread over them,
 * the blocks per queue, the setup of every part in order (module, memory,
 * rings, queue tables) before the first batch, destroy, and reading an
 * inline kernel's state back. The top of the executor's parts
 * (exec_gpu_internal.h): it calls them, none calls it.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpucap/gcap_thread.h"
#include "gpucap/gcap_exec.h"
#include "exec_gpu_internal.h"

/* packet head bytes each thread loads at once before the filter: Ethernet,
 * two VLAN tags, IPv4 with options or IPv6, and the ports (pipeline.cuh) */
#define GPU_PREFETCH_DEFAULT 128u
/* longest wait for a kernel state copy */
#define STATE_COPY_TIMEOUT_MS 5000u
/* blocks per queue when the configuration leaves it to the executor: the
 * most of these that the ring and every GPU's SMs allow */
#define GPU_AUTO_BLOCKS 4u
/* default blocks per queue with file spans at most: finding a span's
 * records waits on VRAM more than it works, so spans go side by side */
#define GPU_SPAN_BLOCKS 16u
/* copy mode: default blocks per GPU at most (see gpu_create) */
#define GPU_COPY_POLLERS 8u

static int
conf_check(const struct gcap_exec_conf *c, char *errbuf)
{
	if (c->nqueues == 0)
		return gcap_err(errbuf, EINVAL, "gpu executor: no queues");
	if (c->ring_size < 2 || (c->ring_size & (c->ring_size - 1)))
		return gcap_err(errbuf, EINVAL,
				"gpu executor: ring size %u is "
				"not a power of two >= 2",
				c->ring_size);
	if (c->batch_max == 0 || c->batch_max > GCAP_FILE_BATCH_MAX)
		return gcap_err(errbuf, EINVAL,
				"gpu executor: batch size %u "
				"not in 1..%u",
				c->batch_max, GCAP_FILE_BATCH_MAX);
	if (c->nxbufs == 0 || c->nxbufs > 65535)
		return gcap_err(errbuf, EINVAL,
				"gpu executor: %u export "
				"buffers per queue",
				c->nxbufs);
	if (c->xbuf_size < 64 || (c->xbuf_size & 7))
		return gcap_err(errbuf, EINVAL,
				"gpu executor: export buffer "
				"size %u (a multiple of 8, >= 64)",
				c->xbuf_size);
	if (c->nfilters == 0 || c->nfilters > GCAP_MAX_OUTPUTS || c->filters == NULL)
		return gcap_err(errbuf, EINVAL,
				"gpu executor: %u filters "
				"(1..%u)",
				c->nfilters, GCAP_MAX_OUTPUTS);
	if (c->snaplen == 0)
		return gcap_err(errbuf, EINVAL, "gpu executor: snap length 0");
	if (c->ngpus > 0 && c->gpus == NULL)
		return gcap_err(errbuf, EINVAL, "gpu executor: ngpus without gpus");
	if (c->mem == GCAP_MEM_PLAIN)
		return gcap_err(errbuf, EINVAL,
				"gpu executor: memory mode "
				"'plain' is for the cpu executor");
	return 0;
}

static int
dev_open(struct gcap_exec *ex, struct gpu_dev *d, int ordinal, char *errbuf)
{
	const struct gcap_cu *cu = ex->cu;
	int count = 0, rc;

	d->ordinal = ordinal;
	rc = gcap_cu_err(cu, cu->DeviceGetCount(&count), errbuf, "cuDeviceGetCount");
	if (rc)
		return rc;
	if (ordinal < 0 || ordinal >= count)
		return gcap_err(errbuf, ENODEV,
				"gpu executor: no GPU %d "
				"(%d present)",
				ordinal, count);
	rc = gcap_cu_err(cu, cu->DeviceGet(&d->dev, ordinal), errbuf, "cuDeviceGet");
	if (rc)
		return rc;
	if (!gcap_gpu_dev_usable(cu, d->dev))
		return gcap_err(errbuf, ENOTSUP,
				"GPU %d cannot map host memory "
				"with unified addressing",
				ordinal);
	cu->DeviceGetAttribute(&d->sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d->dev);
	sigset_t old;

	gcap_sigs_hold(&old); /* the context's threads (gcap_thread.h) */
	rc = gcap_cu_err(cu, cu->DevicePrimaryCtxRetain(&d->ctx, d->dev), errbuf,
			 "cuDevicePrimaryCtxRetain");
	gcap_sigs_restore(&old);
	if (rc)
		return rc;
	d->ctx_held = true;
	return gcap_gpu_ctx_on(ex, d, errbuf);
}

/* which GPU runs which queues: "GPU 1 (NVIDIA H200, 0000:2a:00.0):
 * queues 1,3" (--gpu 0,1 spreads them round-robin) */
static void
log_dev_queues(const struct gcap_exec *ex, const struct gpu_dev *d)
{
	char name[64] = "?", bus[32] = "?", qs[128] = "";
	size_t n = 0;
	unsigned q;

	ex->cu->DeviceGetName(name, sizeof(name), d->dev);
	ex->cu->DeviceGetPCIBusId(bus, sizeof(bus), d->dev);
	for (q = 0; q < ex->conf.nqueues && n < sizeof(qs) - 12; q++)
		if (ex->qs[q].dev == d)
			n += (size_t)snprintf(qs + n, sizeof(qs) - n, "%s%u",
					      n ? "," : "", q);
	if (q < ex->conf.nqueues)
		snprintf(qs + n, sizeof(qs) - n, ",...");
	GPU_LOG(INFO, "GPU %d (%s, %s): %u block(s), queues %s\n", d->ordinal, name, bus,
		d->nblocks, qs);
}

/* Queue table and kernel stream of one device (before any launch). */
static int
dev_prepare(struct gcap_exec *ex, struct gpu_dev *d, char *errbuf)
{
	const struct gcap_cu *cu = ex->cu;
	struct gcap_gpu_qdesc *qd;
	unsigned q, n = 0;
	int rc;

	qd = calloc((size_t)ex->conf.nqueues * ex->bpq, sizeof(*qd));
	if (qd == NULL)
		return gcap_err(errbuf, ENOMEM, "gpu executor: out of memory");
	for (q = 0; q < ex->conf.nqueues; q++) {
		if (ex->qs[q].dev != d)
			continue;
		/* block k of the queue takes slots k, k + bpq, ...: bpq divides
		 * the ring, so each slot always has the same block */
		for (unsigned k = 0; k < ex->bpq; k++, n++) {
			qd[n].slots = (uint64_t)(uintptr_t)ex->qs[q].slots;
			qd[n].ring_size = ex->conf.ring_size;
			qd[n].queue = q;
			qd[n].first = k;
			qd[n].step = ex->bpq;
			/* where slot s's descriptors are read: VRAM in copy
			 * mode, the batch's own (pinned) array otherwise */
			qd[n].pkts =
				ex->conf.mem == GCAP_MEM_COPY ?
					(uint64_t)ex->qs[q].vpkts :
					(uint64_t)(uintptr_t)ex->qs[q].batches[0].pkts;
			qd[n].res = (uint64_t)(uintptr_t)ex->qs[q].batches[0].res;
			qd[n].xbufs = (uint64_t)(uintptr_t)ex->qs[q].xbufs;
			qd[n].batch_max = ex->conf.batch_max;
			gcap_gpu_span_qdesc(ex, &ex->qs[q], &qd[n]);
		}
	}
	d->nblocks = n;
	rc = gcap_cu_err(cu, cu->MemAlloc(&d->qdesc, (n + 1) * sizeof(qd[0])), errbuf,
			 "cuMemAlloc(queue table)");
	if (!rc && n)
		rc = gcap_cu_err(cu, cu->MemcpyHtoD(d->qdesc, qd, n * sizeof(qd[0])),
				 errbuf, "cuMemcpyHtoD(queue table)");
	free(qd);
	if (!rc)
		rc = gcap_cu_err(cu,
				 cu->StreamCreate(&d->kstream, CU_STREAM_NON_BLOCKING),
				 errbuf, "cuStreamCreate(kernel)");
	return rc;
}

static void
gpu_destroy(struct gcap_exec *ex)
{
	const struct gcap_cu *cu;
	unsigned i, q;

	if (ex == NULL)
		return;
	cu = ex->cu;
	if (cu != NULL && !ex->stopped && ex->launched == 1)
		gcap_gpu_stop(ex, 2000, NULL);
	if (cu != NULL && !ex->kernel_alive) {
		for (q = 0; ex->qs && q < ex->conf.nqueues; q++) {
			struct gpu_queue *qs = &ex->qs[q];

			if (qs->dev)
				cu->CtxSetCurrent(qs->dev->ctx);
			if (qs->vpkts)
				cu->MemFree(qs->vpkts);
			if (qs->vdata)
				cu->MemFree(qs->vdata);
			gcap_gpu_span_free(ex, qs);
			if (qs->host)
				cu->MemFreeHost(qs->host);
		}
		gcap_gpu_pools_free(ex);
		if (ex->quit)
			cu->MemFreeHost(ex->quit);
		if (ex->kstate_host)
			cu->MemFreeHost(ex->kstate_host);
		for (i = 0; i < ex->ndev; i++) {
			struct gpu_dev *d = &ex->dev[i];

			if (!d->ctx_held)
				continue;
			cu->CtxSetCurrent(d->ctx);
			if (d->kstream)
				cu->StreamDestroy(d->kstream);
			if (d->sstream)
				cu->StreamDestroy(d->sstream);
			for (q = 0; q < d->ncs; q++)
				if (d->cstreams[q])
					cu->StreamDestroy(d->cstreams[q]);
			if (d->qdesc)
				cu->MemFree(d->qdesc);
			if (d->insns)
				cu->MemFree(d->insns);
			if (d->progs)
				cu->MemFree(d->progs);
			if (d->kstate)
				cu->MemFree(d->kstate);
			if (d->mod)
				cu->ModuleUnload(d->mod);
			cu->CtxSetCurrent(NULL);
			cu->DevicePrimaryCtxRelease(d->dev);
		}
	}
	/* A kernel that could not be ended still reads the rings: their
	 * memory is leaked on purpose rather than freed under it. */
	for (q = 0; ex->qs && q < ex->conf.nqueues; q++) {
		free(ex->qs[q].batches);
		free(ex->qs[q].cp_dst);
		free(ex->qs[q].cp_src);
		free(ex->qs[q].cp_len);
	}
	free(ex->qs);
	gcap_khost_free(ex->kernel);
	pthread_mutex_destroy(&ex->launch_lock);
	free(ex);
}

static struct gcap_exec *
gpu_create(const struct gcap_exec_conf *conf, char *errbuf)
{
	struct gcap_exec *ex;
	int ords[GPU_MAX_DEVS], rc;
	unsigned i, q, nord;
	const char *fa;

	if (conf == NULL)
		return gcap_err_null(errbuf, EINVAL,
				     "gpu executor: no "
				     "configuration");
	rc = conf_check(conf, errbuf);
	if (rc) {
		errno = -rc;
		return NULL;
	}
	ex = calloc(1, sizeof(*ex));
	if (ex == NULL)
		return gcap_err_null(errbuf, ENOMEM,
				     "gpu executor: out of "
				     "memory");
	pthread_mutex_init(&ex->launch_lock, NULL);
	ex->conf = *conf;
	ex->conf.gpus = NULL;
	ex->conf.kernel_path = NULL;
	ex->conf.kernel_arg = NULL;
	/* 0: chosen below, once the kernel and the GPUs are known */
	ex->bpq = conf->blocks_per_queue ? conf->blocks_per_queue : 1;
	if ((ex->bpq & (ex->bpq - 1)) != 0 || ex->bpq > conf->ring_size) {
		rc = gcap_err(errbuf, EINVAL,
			      "gpu executor: %u blocks per queue: "
			      "a power of two, at most the ring size (%u)",
			      ex->bpq, conf->ring_size);
		goto fail;
	}
	/* a batch larger than a block is filtered in chunks of the block */
	ex->threads = (conf->batch_max + 31u) & ~31u;
	if (ex->threads > GCAP_GPU_THREADS_MAX)
		ex->threads = GCAP_GPU_THREADS_MAX;
	if (ex->threads < 64)
		ex->threads = 64;
	fa = getenv("GCAP_GPU_FAULT_AT");
	if (fa != NULL)
		ex->fault_at = (unsigned)strtoul(fa, NULL, 10);
	/* GCAP_GPU_PREFETCH=N (bytes, 0 = off): the benchmark's knob */
	fa = getenv("GCAP_GPU_PREFETCH");
	ex->prefetch =
		fa != NULL ? (unsigned)strtoul(fa, NULL, 10) : GPU_PREFETCH_DEFAULT;
	if (conf->kernel_path != NULL) {
		/* the cpu executor's host build first: it validates the source
		 * (FILE:LINE errors, no GPU needed), runs the init hook on the
		 * host state that is uploaded below, and writes the report */
		ex->kernel = gcap_khost_load(conf->kernel_path, conf->kernel_arg, errbuf);
		if (ex->kernel == NULL) {
			rc = -errno;
			goto fail;
		}
		ex->kstate_size = gcap_khost_state_size(ex->kernel);
		ex->budget_ms = conf->kernel_budget_ms ? conf->kernel_budget_ms :
							 GCAP_KERNEL_BUDGET_MS;
		if (gcap_khost_ordered(ex->kernel) && ex->bpq > 1) {
			rc = gcap_err(errbuf, EINVAL,
				      "gpu executor: %s orders "
				      "packets by key (gcap_kernel_order), which "
				      "holds with one block per queue: drop "
				      "--gpu-blocks %u",
				      conf->kernel_path, ex->bpq);
			goto fail;
		}
	}

	ex->cu = gcap_cu_load(errbuf);
	if (ex->cu == NULL) {
		rc = -errno;
		goto fail;
	}

	nord = conf->ngpus ? conf->ngpus : 1;
	if (nord > GPU_MAX_DEVS) {
		rc = gcap_err(errbuf, EINVAL, "gpu executor: at most %d GPUs",
			      GPU_MAX_DEVS);
		goto fail;
	}
	for (i = 0; i < nord; i++)
		ords[i] = conf->ngpus ? conf->gpus[i] : 0;

	ex->qs = calloc(conf->nqueues, sizeof(*ex->qs));
	if (ex->qs == NULL) {
		rc = gcap_err(errbuf, ENOMEM, "gpu executor: out of memory");
		goto fail;
	}
	/* queue q on gpus[q % ngpus]; one context per distinct device */
	for (q = 0; q < conf->nqueues; q++) {
		int ord = ords[q % nord];
		struct gpu_dev *d = NULL;

		for (i = 0; i < ex->ndev; i++)
			if (ex->dev[i].ordinal == ord)
				d = &ex->dev[i];
		if (d == NULL) {
			d = &ex->dev[ex->ndev++];
			rc = dev_open(ex, d, ord, errbuf);
			if (rc)
				goto fail;
		}
		ex->qs[q].q = q;
		ex->qs[q].dev = d;
		ex->qs[q].mem = ex->conf.mem;
		d->nq++;
	}
	if (ex->kernel != NULL && ex->ndev > 1) {
		/* one state: per-device copies could not be merged generically */
		rc = gcap_err(errbuf, ENOTSUP,
			      "gpu executor: an inline kernel "
			      "runs on one GPU (its state lives in that GPU's "
			      "memory); the queues map to %u GPUs",
			      ex->ndev);
		goto fail;
	}
	if (conf->blocks_per_queue == 0 &&
	    (ex->kernel == NULL || !gcap_khost_ordered(ex->kernel))) {
		/* default: four (else two) blocks per queue where the ring and
		 * every GPU's SMs allow: the pipeline spreads a queue's batches
		 * over them, so a batch waits for a free block a quarter of a
		 * round trip instead of half (H200: p99 at 5 Mpps on one queue
		 * 18 us instead of 25); one for ordered kernels, which need it.
		 * In copy mode no more than GPU_COPY_POLLERS blocks a GPU: the
		 * copy engines set the pace there, and more blocks polling the
		 * doorbells starved them (one H200, 64 B, lossless: 24 queues
		 * 8.1 Mpps with four blocks a queue, 16.4 with two, 17.2 with
		 * one; 28 queues 1.3 and 17.0; 8 queues 17.2-17.4 with four
		 * and 17.6 with one, p50/p99 at half rate 263/321 us and
		 * 69/117; but one queue 15.1 with four, 9.6 with one) */
		for (unsigned cand = conf->file_spans ? GPU_SPAN_BLOCKS : GPU_AUTO_BLOCKS;
		     cand > 1; cand /= 2) {
			bool fits = conf->ring_size >= cand;

			for (i = 0; i < ex->ndev; i++) {
				unsigned most = (unsigned)ex->dev[i].sms;

				if (conf->mem == GCAP_MEM_COPY)
					most = GPU_COPY_POLLERS;
				if (most > 0 && ex->dev[i].nq * cand > most)
					fits = false;
			}
			if (fits) {
				ex->bpq = cand;
				break;
			}
		}
	}

	for (i = 0; i < ex->ndev; i++) {
		struct gpu_dev *d = &ex->dev[i];

		/* every block must be resident at once */
		if (d->sms > 0 && d->nq * ex->bpq > (unsigned)d->sms) {
			rc = gcap_err(errbuf, ENOSPC,
				      "gpu executor: %u queues x %u "
				      "blocks on GPU %d, which has %d SMs",
				      d->nq, ex->bpq, d->ordinal, d->sms);
			goto fail;
		}
		if (d->nq > 1024) {
			rc = gcap_err(errbuf, ENOSPC,
				      "gpu executor: too many "
				      "queues");
			goto fail;
		}
		if (conf->mem == GCAP_MEM_COPY) {
			rc = gcap_gpu_copy_streams(d, errbuf);
			if (rc)
				goto fail;
		}
		rc = gcap_gpu_ctx_on(ex, d, errbuf);
		if (!rc)
			rc = gcap_gpu_dev_load(ex, d, errbuf);
		if (rc)
			goto fail;
	}
	rc = gcap_gpu_ctx_on(ex, &ex->dev[0], errbuf);
	if (!rc)
		rc = gcap_gpu_host_alloc(ex, (void **)&ex->quit, 64, errbuf, "quit flag");
	/* where gcap_kstate_copy puts the state when it is read back */
	if (!rc && ex->kernel != NULL)
		rc = gcap_gpu_host_alloc(ex, &ex->kstate_host, ex->kstate_size, errbuf,
					 "inline kernel state copy");
	if (rc)
		goto fail;
	for (q = 0; q < conf->nqueues; q++) {
		rc = gcap_gpu_ctx_on(ex, ex->qs[q].dev, errbuf);
		if (!rc)
			rc = gcap_gpu_queue_setup(ex, &ex->qs[q], errbuf);
		if (rc)
			goto fail;
	}
	for (i = 0; i < ex->ndev; i++) {
		rc = gcap_gpu_ctx_on(ex, &ex->dev[i], errbuf);
		if (!rc)
			rc = dev_prepare(ex, &ex->dev[i], errbuf);
		if (rc)
			goto fail;
	}
	GPU_LOG(INFO,
		"%u queue(s) on %u GPU(s), batches of %u, %u threads per block, "
		"memory mode %s\n",
		conf->nqueues, ex->ndev, conf->batch_max, ex->threads,
		gcap_mem_name(conf->mem));
	for (i = 0; i < ex->ndev; i++)
		log_dev_queues(ex, &ex->dev[i]);
	return ex;
fail:
	gpu_destroy(ex);
	errno = -rc;
	return NULL;
}

/* Read the inline kernel's state back (gcap_kstate_copy into pinned
 * memory, on a stream of its own) and write the report with the host build's
 * hook, as the cpu executor does. After stop() (or before the first batch)
 * this is the final state; while the persistent kernel runs the copy runs
 * beside it (a non-blocking stream, blocks on the SMs it leaves) and the
 * report is a snapshot: each 8-byte word as it was at some moment of the
 * copy, words of a key being inserted possibly half-written. */
static int
gpu_kernel_state(struct gcap_exec *ex, const char *path, char *errbuf)
{
	const struct gcap_cu *cu = ex->cu;
	struct gpu_dev *d = &ex->dev[0];
	unsigned long long dst, src, n;
	void *args[3] = { &dst, &src, &n };
	unsigned blocks;
	uint64_t t0;
	int rc;

	if (path == NULL)
		return 0;
	if (ex->kernel == NULL)
		return gcap_err(errbuf, EINVAL, "no inline kernel is loaded");
	if (ex->ndev == 0 || d->kstate == 0 || d->kcopy == NULL)
		return gcap_err(errbuf, EINVAL,
				"gpu executor: no kernel state "
				"on a GPU");
	if (d->faulted)
		return gcap_err(errbuf, EIO,
				"gpu executor: kernel state lost: "
				"the persistent kernel on GPU %d failed",
				d->ordinal);
	dst = (unsigned long long)(uintptr_t)ex->kstate_host;
	src = d->kstate;
	n = ex->kstate_size;
	blocks = (unsigned)((n / 8u + 255u) / 256u);
	if (blocks == 0)
		blocks = 1;
	if (blocks > 1024)
		blocks = 1024;
	rc = gcap_gpu_ctx_on(ex, d, errbuf);
	/* its own stream: the kernel stream holds the persistent kernel */
	if (!rc && d->sstream == 0)
		rc = gcap_cu_err(cu,
				 cu->StreamCreate(&d->sstream, CU_STREAM_NON_BLOCKING),
				 errbuf, "cuStreamCreate(state)");
	if (!rc)
		rc = gcap_cu_err(cu,
				 cu->LaunchKernel(d->kcopy, blocks, 1, 1, 256, 1, 1, 0,
						  d->sstream, args, NULL),
				 errbuf, "cuLaunchKernel(gcap_kstate_copy)");
	/* bounded: a GPU whose SMs the persistent blocks fill may not run
	 * the copy beside them; the copy then stays queued and a later call
	 * (after stop, at the latest) waits for it in stream order */
	t0 = now_ms();
	while (!rc) {
		CUresult q = cu->StreamQuery(d->sstream);

		if (q == CUDA_SUCCESS)
			break;
		if (q != CUDA_ERROR_NOT_READY) {
			rc = gcap_cu_err(cu, q, errbuf,
					 "reading the inline "
					 "kernel state back");
			break;
		}
		if (now_ms() - t0 > STATE_COPY_TIMEOUT_MS) {
			rc = gcap_err(errbuf, ETIMEDOUT,
				      "gpu executor: the "
				      "kernel state copy did not run within "
				      "%u ms",
				      STATE_COPY_TIMEOUT_MS);
			break;
		}
		sched_yield();
	}
	if (rc)
		return rc;
	return gcap_khost_report_file(ex->kernel, path, ex->kstate_host, errbuf);
}

static const struct gcap_khost *
gpu_kernel(struct gcap_exec *ex)
{
	return ex->kernel;
}

static const struct gcap_exec_ops gpu_ops = {
	.name = "gpu",
	.create = gpu_create,
	.destroy = gpu_destroy,
	.xbufs = gcap_gpu_xbufs,
	.batch_get = gcap_gpu_batch_get,
	.batch_submit = gcap_gpu_batch_submit,
	.batch_poll = gcap_gpu_batch_poll,
	.batch_release = gcap_gpu_batch_release,
	.lanes = gcap_gpu_lanes,
	.pool_create = gcap_gpu_pool_create,
	.cpu_reads = gcap_gpu_cpu_reads,
	.health = gcap_gpu_health,
	.watchdog = gcap_gpu_watchdog,
	.stop = gcap_gpu_stop,
	.kernel_state = gpu_kernel_state,
	.kernel = gpu_kernel,
};

const struct gcap_exec_ops *
gcap_exec_gpu_ops(void)
{
	return &gpu_ops;
}
