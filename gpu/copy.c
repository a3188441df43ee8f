/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Copy mode: the batch's packets and descriptors move into VRAM with the
 * copy engines (cuMemcpyBatchAsync, else one cuMemcpyHtoDAsync per copy)
 * on a copy stream of the queue's GPU, and a stream memory operation rings
 * the doorbell after them. Owns the copy streams, each queue's VRAM
 * staging, and the span checks that let a batch move as one copy.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "exec_gpu_internal.h"

/* copy mode: streams per GPU (GCAP_GPU_COPY_STREAMS, up to _MAX, and no
 * more than CUDA_DEVICE_MAX_CONNECTIONS allows) */
#define GPU_COPY_STREAMS 6u
/* bytes of VRAM staging per packet slot in copy mode: room for the span
 * of a batch's data rooms, not only its bytes (see gcap_gpu_submit_copy) */
#define COPY_BYTES_PER_PKT 4096u
/* a gap of up to this many bytes between two packets still joins a run:
 * one copy more costs the copy engines about a microsecond, which moves
 * tens of kilobytes */
#define COPY_RUN_GAP 16384u

/*
 * Copy mode's streams on one GPU. Streams share the driver's hardware work
 * queues (CUDA_DEVICE_MAX_CONNECTIONS, 8 by default, read when a context
 * is created): a copy stream that shared one with the kernel's stream
 * would wait behind the persistent kernel, which never ends. So a GPU gets
 * at most that many, less the kernel's and the state snapshot's, and by
 * default no more than GPU_COPY_STREAMS: its queues take them in turn (a
 * stream keeps each queue's copies before its doorbell, whichever lcore
 * issued them). More streams did not copy faster (one H200, 64-byte
 * packets, 28 queues at four blocks each: 0.93 / 1.22 / 1.29 / 1.31 Mpps
 * on 1 / 2 / 6 / 28 streams; that collapse was the blocks, see
 * GPU_COPY_POLLERS, exec_gpu.c), and sharing them keeps copy mode within
 * the driver's default work queues (32 made each context start 0.7 s
 * slower).
 */
int
gcap_gpu_copy_streams(struct gpu_dev *d, char *errbuf)
{
	const char *mc = getenv("CUDA_DEVICE_MAX_CONNECTIONS");
	const char *cs = getenv("GCAP_GPU_COPY_STREAMS");
	unsigned conns = mc ? (unsigned)strtoul(mc, NULL, 10) : 8;
	unsigned most = cs ? (unsigned)strtoul(cs, NULL, 10) : GPU_COPY_STREAMS;

	if (conns < 3)
		return gcap_err(errbuf, ENOSPC,
				"gpu executor: copy mode on GPU "
				"%d needs 3 CUDA work queues (a copy stream, the "
				"kernel's, the state's), CUDA_DEVICE_MAX_CONNECTIONS "
				"is %u",
				d->ordinal, conns);
	if (most == 0 || most > GPU_COPY_STREAMS_MAX)
		most = GPU_COPY_STREAMS;
	d->ncs = d->nq < conns - 2 ? d->nq : conns - 2;
	if (d->ncs > most)
		d->ncs = most;
	return 0;
}

int
gcap_gpu_copy_setup(struct gcap_exec *ex, struct gpu_queue *qs, char *errbuf)
{
	const struct gcap_exec_conf *c = &ex->conf;
	size_t npk = (size_t)c->ring_size * c->batch_max;
	unsigned i;
	int rc;

	qs->copy_bytes = c->batch_max * COPY_BYTES_PER_PKT;
	/* the device's streams in turn: the first ncs queues create them */
	i = qs->dev->nqs++ % qs->dev->ncs;
	if (qs->dev->cstreams[i] == NULL) {
		rc = gcap_cu_err(ex->cu,
				 ex->cu->StreamCreate(&qs->dev->cstreams[i],
						      CU_STREAM_NON_BLOCKING),
				 errbuf, "cuStreamCreate(copy)");
		if (rc)
			return rc;
	}
	qs->cstream = qs->dev->cstreams[i];
	rc = gcap_cu_err(ex->cu,
			 ex->cu->MemAlloc(&qs->vpkts, npk * sizeof(struct gcap_pkt)),
			 errbuf, "cuMemAlloc(copy descriptors)");
	if (rc)
		return rc;
	rc = gcap_cu_err(
		ex->cu,
		ex->cu->MemAlloc(&qs->vdata, (size_t)c->ring_size * qs->copy_bytes),
		errbuf, "cuMemAlloc(copy staging)");
	if (rc)
		return rc;
	qs->cp_dst = calloc(c->batch_max + 1, sizeof(*qs->cp_dst));
	qs->cp_src = calloc(c->batch_max + 1, sizeof(*qs->cp_src));
	qs->cp_len = calloc(c->batch_max + 1, sizeof(*qs->cp_len));
	if (!qs->cp_dst || !qs->cp_src || !qs->cp_len)
		return gcap_err(errbuf, ENOMEM, "gpu executor: out of memory");
	return 0;
}

/* true when [lo, hi) lies inside one pool's data rooms: memory that is
 * mapped and pinned end to end (two pools may have unmapped space between
 * them). The list is fixed before the capture starts. */
static bool
span_in_pool(const struct gcap_exec *ex, uint64_t lo, uint64_t hi)
{
	const struct gpu_pool_mem *pm;

	for (pm = ex->pools; pm != NULL; pm = pm->next) {
		uint64_t a = (uint64_t)(uintptr_t)pm->addr;

		if (lo >= a && hi <= a + pm->len)
			return true;
	}
	return false;
}

/* Copy mode: move the batch's packets and its descriptors into VRAM with
 * the copy engines, then let a stream memory operation ring the doorbell.
 * The engines pay per copy far more than per byte, so the packets move as
 * few copies as possible: the whole span of the batch's data rooms when it
 * fits the slot's staging (mbufs of one pool, taken together, lie close),
 * else runs of packets joined across gaps of up to COPY_RUN_GAP bytes. */
int
gcap_gpu_submit_copy(struct gcap_exec *ex, struct gpu_queue *qs, unsigned s,
		     struct gcap_batch *b)
{
	const struct gcap_cu *cu = ex->cu;
	struct gcap_pkt *sh = qs->shadow + (size_t)s * ex->conf.batch_max;
	CUdeviceptr vbase = qs->vdata + (CUdeviceptr)s * qs->copy_bytes;
	uint64_t run_src = 0, run_end = 0, run_off = 0, off = 0;
	size_t nr = 0, k;
	uint64_t lo = UINT64_MAX, hi = 0;
	bool open = false, full = false;
	unsigned i;
	CUresult r;

	for (i = 0; i < b->n; i++) {
		const struct gcap_pkt *d = &b->pkts[i];

		if (d->caplen == 0)
			continue;
		lo = d->addr < lo ? d->addr : lo;
		hi = d->addr + d->caplen > hi ? d->addr + d->caplen : hi;
	}
	if (hi > lo && hi - (lo & ~(uint64_t)7u) <= qs->copy_bytes &&
	    span_in_pool(ex, lo, hi)) {
		lo &= ~(uint64_t)7u; /* the alignment modulo 8 is kept */
		for (i = 0; i < b->n; i++) {
			sh[i] = b->pkts[i];
			if (sh[i].caplen != 0)
				sh[i].addr = vbase + (sh[i].addr - lo);
		}
		qs->cp_src[0] = (CUdeviceptr)lo;
		qs->cp_dst[0] = vbase;
		qs->cp_len[0] = hi - lo;
		nr = 1;
		goto descriptors;
	}
	for (i = 0; i < b->n; i++) {
		const struct gcap_pkt *d = &b->pkts[i];
		uint64_t end = d->addr + d->caplen;

		sh[i] = *d;
		if (d->caplen == 0 || full)
			continue;
		if (open && d->addr >= run_end && d->addr - run_end <= COPY_RUN_GAP &&
		    run_off + (end - run_src) <= qs->copy_bytes) {
			run_end = end;
		} else {
			if (open) {
				qs->cp_len[nr - 1] = run_end - run_src;
				off = run_off + (run_end - run_src);
			}
			/* keep the source's alignment modulo 8 */
			off = ((off + 7u) & ~(uint64_t)7u) + (d->addr & 7u);
			if (off + d->caplen > qs->copy_bytes) {
				/* staging full: the rest is read in place */
				open = false;
				full = true;
				continue;
			}
			run_src = d->addr;
			run_end = end;
			run_off = off;
			qs->cp_src[nr] = (CUdeviceptr)run_src;
			qs->cp_dst[nr] = vbase + run_off;
			nr++;
			open = true;
		}
		sh[i].addr = vbase + run_off + (d->addr - run_src);
	}
	if (open)
		qs->cp_len[nr - 1] = run_end - run_src;
descriptors:
	qs->cp_src[nr] = (CUdeviceptr)(uintptr_t)sh;
	qs->cp_dst[nr] =
		qs->vpkts + (CUdeviceptr)s * ex->conf.batch_max * sizeof(struct gcap_pkt);
	qs->cp_len[nr] = (size_t)b->n * sizeof(struct gcap_pkt);
	nr++;

	if (cu->MemcpyBatchAsync13 || cu->MemcpyBatchAsync12) {
		CUmemcpyAttributes at;
		size_t idx = 0, fail = 0;

		memset(&at, 0, sizeof(at));
		at.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
		at.srcLocHint.type = CU_MEM_LOCATION_TYPE_HOST;
		at.dstLocHint.type = CU_MEM_LOCATION_TYPE_DEVICE;
		at.dstLocHint.id = qs->dev->dev;
		if (cu->MemcpyBatchAsync13)
			r = cu->MemcpyBatchAsync13(qs->cp_dst, qs->cp_src, qs->cp_len, nr,
						   &at, &idx, 1, qs->cstream);
		else
			r = cu->MemcpyBatchAsync12(qs->cp_dst, qs->cp_src, qs->cp_len, nr,
						   &at, &idx, 1, &fail, qs->cstream);
		if (r != CUDA_SUCCESS)
			return gcap_cu_err(cu, r, NULL, "cuMemcpyBatchAsync");
	} else {
		for (k = 0; k < nr; k++) {
			r = cu->MemcpyHtoDAsync(qs->cp_dst[k],
						(const void *)(uintptr_t)qs->cp_src[k],
						qs->cp_len[k], qs->cstream);
			if (r != CUDA_SUCCESS)
				return gcap_cu_err(cu, r, NULL, "cuMemcpyHtoDAsync");
		}
	}
	/* the doorbell, in stream order after the copies (with the default
	 * flags the write is preceded by a memory barrier) */
	r = cu->StreamWriteValue32(qs->cstream,
				   (CUdeviceptr)(uintptr_t)&qs->slots[s].status,
				   GCAP_GPU_READY, CU_STREAM_WRITE_VALUE_DEFAULT);
	return gcap_cu_err(cu, r, NULL, "cuStreamWriteValue32(doorbell)");
}
