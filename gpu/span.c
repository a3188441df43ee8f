/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Span slots of the gpu executor (-r of a plain pcap file, records found
 * on the GPU): each slot's VRAM for the span's bytes, the records found in
 * it and the walks that find them, the queue's chain that joins spans in
 * order, and the submission: the span's bytes move from the staging area
 * into VRAM in one copy on the queue's span stream, and a stream memory
 * operation rings the doorbell after it. The kernel side is
 * kernels/find_span.cuh.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "exec_gpu_internal.h"

_Static_assert(sizeof(struct gcap_gpu_span) == 64, "span layout");
_Static_assert(offsetof(struct gcap_gpu_result, n_found) ==
		       offsetof(struct gcap_batch_result, n_found),
	       "result layout");
_Static_assert(offsetof(struct gcap_gpu_result, span_stop) ==
		       offsetof(struct gcap_batch_result, span_stop),
	       "result layout");
_Static_assert(offsetof(struct gcap_gpu_xbuf, flags) == offsetof(struct gcap_xbuf, flags),
	       "xbuf layout");

/* records a slot of stage bytes can hold: each has a 16-byte header */
static uint32_t
found_max(uint32_t stage)
{
	return GCAP_SPAN_LIST(stage);
}

/* list entries a slot's walks take: nsub sub-chunks of c bytes list
 * (len / c + 1) * (c / 16 + 1) at most, c no more than len and len / c no
 * more than the threads (gcap_span_chunk) */
static uint32_t
list_max(uint32_t stage)
{
	return 2u * GCAP_SPAN_LIST(stage) + 2u * GCAP_GPU_THREADS_MAX;
}

int
gcap_gpu_span_setup(struct gcap_exec *ex, struct gpu_queue *qs, char *errbuf)
{
	const struct gcap_cu *cu = ex->cu;
	const struct gcap_exec_conf *c = &ex->conf;
	size_t ring = c->ring_size, stage = c->stage_size;
	int rc;

	if (!c->file_spans)
		return 0;
	if (stage <= GCAP_SPAN_TAIL)
		return gcap_err(errbuf, EINVAL,
				"gpu executor: span slots need more than %u bytes of "
				"staging, have %zu",
				GCAP_SPAN_TAIL, stage);
	qs->found_max = found_max(c->stage_size);
	qs->list_max = list_max(c->stage_size);
	rc = gcap_cu_err(cu, cu->StreamCreate(&qs->sstream, CU_STREAM_NON_BLOCKING),
			 errbuf, "cuStreamCreate(spans)");
	if (!rc)
		rc = gcap_cu_err(cu, cu->MemAlloc(&qs->vspan, ring * stage), errbuf,
				 "cuMemAlloc(span bytes)");
	if (!rc)
		rc = gcap_cu_err(
			cu,
			cu->MemAlloc(&qs->vfound, ring * qs->found_max *
							  (sizeof(struct gcap_pkt) +
							   sizeof(uint64_t))),
			errbuf, "cuMemAlloc(span records)");
	if (!rc)
		rc = gcap_cu_err(
			cu,
			cu->MemAlloc(&qs->vlists, ring * qs->list_max * sizeof(uint32_t) +
							  sizeof(struct gcap_gpu_chain)),
			errbuf, "cuMemAlloc(span walks)");
	if (!rc)
		rc = gcap_cu_err(
			cu,
			cu->MemsetD8(qs->vlists + ring * qs->list_max * sizeof(uint32_t),
				     0, sizeof(struct gcap_gpu_chain)),
			errbuf, "cuMemsetD8(span chain)");
	if (!rc)
		rc = gcap_gpu_host_alloc(ex, (void **)&qs->spans,
					 ring * sizeof(struct gcap_gpu_span), errbuf,
					 "span descriptions");
	return rc;
}

void
gcap_gpu_span_qdesc(const struct gcap_exec *ex, const struct gpu_queue *qs,
		    struct gcap_gpu_qdesc *qd)
{
	size_t ring = ex->conf.ring_size;

	if (!ex->conf.file_spans)
		return;
	qd->found_max = qs->found_max;
	qd->list_max = qs->list_max;
	qd->spans = (uint64_t)(uintptr_t)qs->spans;
	qd->found = (uint64_t)qs->vfound;
	qd->raw = (uint64_t)qs->vfound + ring * qs->found_max * sizeof(struct gcap_pkt);
	qd->lists = (uint64_t)qs->vlists;
	qd->chain = (uint64_t)qs->vlists + ring * qs->list_max * sizeof(uint32_t);
}

void
gcap_gpu_span_free(const struct gcap_exec *ex, struct gpu_queue *qs)
{
	const struct gcap_cu *cu = ex->cu;

	if (qs->sstream)
		cu->StreamDestroy(qs->sstream);
	if (qs->vspan)
		cu->MemFree(qs->vspan);
	if (qs->vfound)
		cu->MemFree(qs->vfound);
	if (qs->vlists)
		cu->MemFree(qs->vlists);
	if (qs->spans)
		cu->MemFreeHost(qs->spans);
}

int
gcap_gpu_submit_span(struct gcap_exec *ex, struct gpu_queue *qs, unsigned s,
		     const struct gcap_batch *b)
{
	const struct gcap_cu *cu = ex->cu;
	const struct gcap_batch_span *in = &b->span;
	struct gcap_gpu_span *sp = &qs->spans[s];
	CUdeviceptr dst = qs->vspan + (CUdeviceptr)s * ex->conf.stage_size;
	CUresult r;

	if (!ex->conf.file_spans || b->n != 0 || b->stage == NULL ||
	    in->avail > ex->conf.stage_size || in->len > in->avail ||
	    in->snap > GCAP_SPAN_CAPLEN_MAX ||
	    (in->index == 0 && (in->entry < in->off || in->entry - in->off > in->avail)))
		return -EINVAL;
	sp->data = (uint64_t)dst;
	sp->off = in->off;
	sp->index = in->index;
	sp->entry = in->entry;
	sp->len = in->len;
	sp->avail = in->avail;
	sp->snap = in->snap;
	sp->flags = in->flags;
	if (in->avail > 0) {
		r = cu->MemcpyHtoDAsync(dst, b->stage, in->avail, qs->sstream);
		if (r != CUDA_SUCCESS)
			return gcap_cu_err(cu, r, NULL, "cuMemcpyHtoDAsync(span)");
	}
	/* the doorbell, in stream order after the copy (with the default
	 * flags the write is preceded by a memory barrier) */
	r = cu->StreamWriteValue32(qs->sstream,
				   (CUdeviceptr)(uintptr_t)&qs->slots[s].status,
				   GCAP_GPU_READY, CU_STREAM_WRITE_VALUE_DEFAULT);
	return gcap_cu_err(cu, r, NULL, "cuStreamWriteValue32(doorbell)");
}
