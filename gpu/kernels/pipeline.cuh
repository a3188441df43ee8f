/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The persistent pipeline kernel: one block per pipeline queue, resident for
 * the whole capture. Thread 0 polls the doorbell of the queue's next ring
 * slot (acquire load at system scope, pinned host memory), the whole block
 * filters the batch's packets in parallel, computes the export record
 * offsets with a block-wide prefix sum (records stay in packet order, back
 * to back), the warps copy the captured bytes into the export buffer, and
 * thread 0 publishes DONE with a release store at system scope.
 *
 * This file is compiled twice: at build time by nvcc (interpreter variant,
 * embedded as a fatbin) and, for compiled filters, at run time by NVRTC
 * behind the code gcap_bpfc generates (GCAP_GPU_COMPILED_FILTERS defined,
 * gcap_flt_mask() provided). It includes only gpucap's plain C headers
 * and, with an inline kernel, inline_kernel.cuh.
 *
 * Hooks (defined before this file is included):
 *  - GCAP_GPU_COMPILED_FILTERS: outmask = gcap_flt_mask(p, wirelen, caplen)
 *    instead of interpreting each program;
 *  - GCAP_GPU_INLINE_KERNEL: an inline kernel's source (gcap_kernel.h,
 *    struct gcap_kstate, gcap_kernel()) comes before this file;
 *    gcap_gpu_inline_chunk() then runs gcap_kernel() on every packet some
 *    filter passed, on the state at kp->kstate, and applies its verdict
 *    with gcap_verdict_apply() exactly as the cpu executor does (ordered
 *    kernels: GCAP_KERNEL_ORDERED, packets of one order key in packet
 *    order, inline_kernel.cuh); gcap_kstate_copy() is added for the host
 *    to read the state back.
 */
#ifndef GCAP_GPU_PIPELINE_CUH
#define GCAP_GPU_PIPELINE_CUH

#include "gcap_gpu_abi.h"
#ifndef GCAP_GPU_COMPILED_FILTERS
#include "gcap_bpf_interp.h"
#endif

#ifdef GCAP_GPU_INLINE_KERNEL
#include "inline_kernel.cuh"

/* The kernel's view of a packet descriptor. */
static __device__ __forceinline__ void
gcap_gpu_kpkt(struct gcap_kpkt *kpkt, const struct gcap_pkt *d, const unsigned char *p)
{
	kpkt->data = p;
	kpkt->caplen = d->caplen;
	kpkt->wirelen = d->wirelen;
	kpkt->ts_ns = d->ts_ns;
	kpkt->port = d->port;
	kpkt->queue = d->queue;
	kpkt->seq = d->seq;
}
#endif

static __device__ __forceinline__ unsigned int
gcap_ld_acquire_sys(const unsigned int *p)
{
	unsigned int v;

	asm volatile("ld.acquire.sys.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
	return v;
}

static __device__ __forceinline__ unsigned long long
gcap_ld_acquire_sys64(const unsigned long long *p)
{
	unsigned long long v;

	asm volatile("ld.acquire.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
	return v;
}

static __device__ __forceinline__ unsigned long long
gcap_globaltimer(void)
{
	unsigned long long t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

static __device__ __forceinline__ void
gcap_st_release_sys(unsigned int *p, unsigned int v)
{
	asm volatile("st.release.sys.u32 [%0], %1;" : : "l"(p), "r"(v) : "memory");
}

/* Exclusive prefix sum over the block (blockDim.x a multiple of 32); every
 * thread must call it. *total gets the sum over the block. */
static __device__ __forceinline__ unsigned int
gcap_block_scan(unsigned int v, unsigned int *total, unsigned int *s_warp)
{
	unsigned int lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
	unsigned int nwarps = blockDim.x >> 5, x = v, o, prefix;

	for (o = 1; o < 32u; o <<= 1) {
		unsigned int y = __shfl_up_sync(0xffffffffu, x, o);

		if (lane >= o)
			x += y;
	}
	if (lane == 31u)
		s_warp[warp] = x;
	__syncthreads();
	if (warp == 0) {
		unsigned int w = lane < nwarps ? s_warp[lane] : 0u;

		for (o = 1; o < 32u; o <<= 1) {
			unsigned int y = __shfl_up_sync(0xffffffffu, w, o);

			if (lane >= o)
				w += y;
		}
		if (lane < nwarps)
			s_warp[lane] = w;
	}
	__syncthreads();
	prefix = warp ? s_warp[warp - 1] : 0u;
	*total = s_warp[nwarps - 1];
	__syncthreads();
	return prefix + x - v;
}

/* 16 bytes from p, read as aligned words of LW bytes (p is LW-aligned);
 * LW 0: p is not 4-aligned, and five aligned 4-byte words are read and
 * shifted (each holds a byte of the 16, so it lies in their pages). */
template <int LW>
static __device__ __forceinline__ uint4
gcap_ld16(const unsigned char *p)
{
	if (LW == 16)
		return *(const uint4 *)p;
	if (LW == 8) {
		const unsigned long long *q = (const unsigned long long *)p;
		unsigned long long a = q[0], b = q[1];

		return make_uint4((unsigned int)a, (unsigned int)(a >> 32),
				  (unsigned int)b, (unsigned int)(b >> 32));
	}
	if (LW == 4) {
		const unsigned int *q = (const unsigned int *)p;

		return make_uint4(q[0], q[1], q[2], q[3]);
	}
	const unsigned int *q = (const unsigned int *)((unsigned long long)p & ~3ull);
	unsigned int sh = 8u * (unsigned int)((unsigned long long)p & 3u);
	unsigned int w0 = q[0], w1 = q[1], w2 = q[2], w3 = q[3], w4 = q[4];

	return make_uint4(__funnelshift_r(w0, w1, sh), __funnelshift_r(w1, w2, sh),
			  __funnelshift_r(w2, w3, sh), __funnelshift_r(w3, w4, sh));
}

/* n16 16-byte words from s to d (16-aligned), threads t of nthr, two
 * words a thread in flight before any store: one round trip a pass when
 * the source is host memory, and 16-byte stores to the export buffer. */
template <int LW>
static __device__ __forceinline__ void
gcap_copy_body(uint4 *d, const unsigned char *s, unsigned int n16, unsigned int t,
	       unsigned int nthr)
{
	unsigned int base, k;

	for (base = 0; base < n16; base += 2u * nthr) {
		uint4 v[2];

#pragma unroll
		for (k = 0; k < 2u; k++) {
			unsigned int w = base + k * nthr + t;

			if (w < n16)
				v[k] = gcap_ld16<LW>(s + 16u * w);
		}
#pragma unroll
		for (k = 0; k < 2u; k++) {
			unsigned int w = base + k * nthr + t;

			if (w < n16)
				d[w] = v[k];
		}
	}
}

/* The 8 bytes of a record at offset o: the packet's bytes below len, zero
 * beyond (the record's padding). */
static __device__ __forceinline__ unsigned long long
gcap_ld8_edge(const unsigned char *src, unsigned int o, unsigned int len)
{
	unsigned long long v = 0;
	unsigned int b;

#pragma unroll
	for (b = 0; b < 8u; b++)
		if (o + b < len)
			v |= (unsigned long long)src[o + b] << (8u * b);
	return v;
}

/* Copy len bytes and zero the record's padding up to the next multiple of
 * 8, with threads t of nthr (a warp, or the whole block for a large
 * record). dst is 8-aligned. Every store is an aligned 16- or 8-byte one:
 * the body in 16-byte words from dst's first 16-aligned byte, the 8 bytes
 * before it and the tail in 8-byte words. The source is read only within
 * [src, src + len), or in aligned words that hold a byte of it. */
static __device__ __forceinline__ void
gcap_copy(unsigned char *dst, const unsigned char *src, unsigned int len, unsigned int t,
	  unsigned int nthr)
{
	unsigned int padded = (len + 7u) & ~7u;
	unsigned int h = (unsigned int)((unsigned long long)dst & 8u);
	unsigned int n16, e, nedge, k, a;

	if (h > padded)
		h = padded;
	n16 = len > h ? (len - h) >> 4 : 0u;
	a = (unsigned int)((unsigned long long)(src + h) & 15u);
	if (a == 0)
		gcap_copy_body<16>((uint4 *)(dst + h), src + h, n16, t, nthr);
	else if ((a & 7u) == 0)
		gcap_copy_body<8>((uint4 *)(dst + h), src + h, n16, t, nthr);
	else if ((a & 3u) == 0)
		gcap_copy_body<4>((uint4 *)(dst + h), src + h, n16, t, nthr);
	else
		gcap_copy_body<0>((uint4 *)(dst + h), src + h, n16, t, nthr);
	e = h + 16u * n16;
	nedge = (h ? 1u : 0u) + ((padded - e) >> 3);
	for (k = t; k < nedge; k += nthr) {
		unsigned int o = h ? (k ? e + 8u * (k - 1u) : 0u) : e + 8u * k;

		*(unsigned long long *)(dst + o) = gcap_ld8_edge(src, o, len);
	}
}

/* Most bytes of a packet's head the prefetch loads (kp->prefetch is cut to
 * it): the sectors it spans, a word each, are loads unrolled in one go. */
#define GCAP_GPU_PREFETCH_MAX 256u
/* 16-byte words a thread copies in one pass of the block over a large
 * record (gcap_copy_body): records of this many passes' bytes and more are
 * copied by the whole block. */
#define GCAP_GPU_BLOCK_COPY_WORDS 2u
#define GCAP_GPU_PREFETCH_SECTORS (GCAP_GPU_PREFETCH_MAX / 32u + 1u)

/* Load the first n bytes of a packet (at most caplen) at once, a word per
 * 32-byte sector, all loads in flight together (unrolled and predicated: a
 * loop that summed each word as it came would wait out a PCIe round trip
 * per sector): the filter's byte loads that follow, one dependent on the
 * other, then hit the SM's L1 instead of crossing PCIe one after the
 * other (host memory). The words read lie in the sectors that hold the
 * packet's bytes, so in its pages. Returns their sum without waiting for
 * them: gcap_gpu_wait() on it waits, so that the thread can ask for other
 * things in between. */
static __device__ __forceinline__ unsigned int
gcap_gpu_prefetch(const unsigned char *p, unsigned int caplen, unsigned int n)
{
	unsigned long long a = (unsigned long long)p & ~31ull;
	unsigned long long e;
	unsigned int v[GCAP_GPU_PREFETCH_SECTORS], acc = 0, k;

	if (n > GCAP_GPU_PREFETCH_MAX)
		n = GCAP_GPU_PREFETCH_MAX;
	e = (unsigned long long)p + (caplen < n ? caplen : n);
#pragma unroll
	for (k = 0; k < GCAP_GPU_PREFETCH_SECTORS; k++)
		v[k] = a + 32u * k < e ? __ldca((const unsigned int *)(a + 32u * k)) : 0u;
#pragma unroll
	for (k = 0; k < GCAP_GPU_PREFETCH_SECTORS; k++)
		acc += v[k];
	return acc;
}

/* Wait for the loads behind v (and keep them: v is used). */
static __device__ __forceinline__ void
gcap_gpu_wait(unsigned int v)
{
	asm volatile("" : : "r"(v));
}

struct gcap_gpu_shared {
	unsigned int warp[32];
	/* a span slot (find_span.cuh): its description, and what its finding
	 * gives the batch code and the results */
	struct gcap_gpu_span sp;
	const unsigned long long *raw; /* the records' own time fields, or NULL */
	unsigned long long entry, seq0, found_bytes, span_stop;
	unsigned int span, broken, exitp, span_stopped, n_found, walks;
	unsigned int span_ns[4];                   /* GCAP_SPAN_T_* */
	unsigned int span_c;                       /* its sub-chunks' size */
	unsigned char agree[GCAP_GPU_THREADS_MAX]; /* the join's round */
	unsigned long long out[GCAP_MAX_OUTPUTS];
	unsigned long long bytes;
	unsigned long long xdata;
	unsigned long long t0; /* doorbell seen (GPU global timer, ns) */
	unsigned int cmd, n, xsize, len, nrec, stopped;
	unsigned int n_captured, n_filtered, n_truncated, chunk_bytes;
	const struct gcap_pkt *pkts;
	struct gcap_gpu_xbuf *xbuf;
	struct gcap_gpu_result *res;
	unsigned short list[GCAP_GPU_THREADS_MAX];
	unsigned int off[GCAP_GPU_THREADS_MAX];
	unsigned int cap[GCAP_GPU_THREADS_MAX];
	unsigned long long src[GCAP_GPU_THREADS_MAX];
#ifdef GCAP_KERNEL_ORDERED
	uint64_t okey[GCAP_GPU_THREADS_MAX];
	uint32_t omax;
#endif
};

/* The inline kernel on the packets of one chunk that some filter passed;
 * every thread of the block calls it (active: the thread has a packet).
 * The cpu executor's semantics (dataplane/exec_cpu.c): the verdict gives
 * the outmask and a snap length that the capture snap length then cuts
 * further. Ordered kernels (gcap_kern_entry.h, "Ordered kernels"):
 * packets sharing an order key run one after the other in packet order. */
static __device__ __forceinline__ void
gcap_gpu_inline_chunk(const struct gcap_gpu_kparams *kp, struct gcap_gpu_shared *s,
		      bool active, unsigned long long *mask, const struct gcap_pkt *d,
		      const unsigned char *p, unsigned int *caplen)
{
#ifdef GCAP_GPU_INLINE_KERNEL
	struct gcap_kpkt kpkt;
	bool run = active && *mask != 0;
	uint32_t v, snap = 0;
	uint64_t m = 0;

	if (run)
		gcap_gpu_kpkt(&kpkt, d, p);
#ifdef GCAP_KERNEL_ORDERED
	v = gcap_kernel_block_run(run, &kpkt, (struct gcap_kstate *)kp->kstate, s->okey,
				  &s->omax);
#else
	(void)s;
	v = gcap_kernel_block_run(run, &kpkt, (struct gcap_kstate *)kp->kstate, NULL,
				  NULL);
#endif
	if (!run)
		return;
	gcap_verdict_apply(v, *mask, kpkt.caplen, &m, &snap);
	*mask = m;
	if (snap < *caplen)
		*caplen = snap;
#else
	(void)kp;
	(void)s;
	(void)active;
	(void)mask;
	(void)d;
	(void)p;
	(void)caplen;
#endif
}

/* Verdict of every output for one packet. */
static __device__ __forceinline__ unsigned long long
gcap_gpu_outmask(const struct gcap_gpu_kparams *kp, const unsigned char *p,
		 unsigned int wirelen, unsigned int caplen)
{
#ifdef GCAP_GPU_COMPILED_FILTERS
	(void)kp;
	return gcap_flt_mask(p, wirelen, caplen);
#else
	const struct gcap_gpu_prog *progs = (const struct gcap_gpu_prog *)kp->progs;
	const struct gcap_bpf_insn *insns = (const struct gcap_bpf_insn *)kp->insns;
	unsigned long long mask = 0;
	unsigned int j;

	for (j = 0; j < kp->nfilters; j++) {
		struct gcap_gpu_prog pr = progs[j];

		if (pr.len == 0 ||
		    gcap_bpf_interp(insns + pr.off, pr.len, p, wirelen, caplen))
			mask |= 1ull << j;
	}
	return mask;
#endif
}

/* One batch: every thread of the block takes part. */
static __device__ void
gcap_gpu_batch(const struct gcap_gpu_kparams *kp, struct gcap_gpu_shared *s)
{
	unsigned int tid = threadIdx.x, nthr = blockDim.x;
	unsigned int lane = tid & 31u, warp = tid >> 5, nwarps = nthr >> 5;
	unsigned int c0, k, total, nw, big, pf = 0;
	unsigned long long xdata = 0;
	unsigned int xsize = 0, xlen = 0, xnrec = 0;
	struct gcap_pkt d0;

	/* Two round trips before the filter, not three: thread 0 asks for
	 * the export buffer's fields first, so that they cross PCIe with the
	 * descriptors; every thread then asks for its packet's head (which
	 * needs its descriptor) and waits for it only after the barrier.
	 * (Thread 0 used to wait for its own head, then read the fields.) */
	if (tid == 0) {
		xdata = s->xbuf->data;
		xsize = s->xbuf->size;
		xlen = s->xbuf->len;
		xnrec = s->xbuf->nrec;
	}
	if (tid < s->n) {
		d0 = s->pkts[tid];
		if (kp->prefetch)
			pf = gcap_gpu_prefetch((const unsigned char *)d0.addr, d0.caplen,
					       kp->prefetch);
	}
	if (tid < GCAP_MAX_OUTPUTS)
		s->out[tid] = 0;
	if (tid == 0) {
		s->bytes = 0;
		s->n_captured = s->n_filtered = s->n_truncated = 0;
		s->stopped = 0;
		s->xdata = xdata;
		s->xsize = xsize;
		s->len = xlen;
		s->nrec = xnrec;
	}
	__syncthreads();
	gcap_gpu_wait(pf);

	for (c0 = 0; c0 < s->n; c0 += nthr) {
		unsigned int i = c0 + tid, sz = 0, excl, wflag = 0, widx;
		unsigned long long mask = 0;
		struct gcap_pkt d;
		const unsigned char *p = NULL;
		unsigned int cap = 0;

		if (i < s->n) {
			if (c0 == 0) {
				d = d0;
			} else {
				d = s->pkts[i];
				if (kp->prefetch)
					gcap_gpu_wait(gcap_gpu_prefetch(
						(const unsigned char *)d.addr, d.caplen,
						kp->prefetch));
			}
			p = (const unsigned char *)d.addr;
			mask = gcap_gpu_outmask(kp, p, d.wirelen, d.caplen);
			cap = d.caplen < kp->snaplen ? d.caplen : kp->snaplen;
		}
		gcap_gpu_inline_chunk(kp, s, i < s->n, &mask, &d, p, &cap);
		if (mask)
			sz = GCAP_REC_SIZE(cap);
		excl = gcap_block_scan(sz, &total, s->warp);
		if (mask && !s->stopped &&
		    (unsigned long long)s->len + excl + sz <= s->xsize)
			wflag = 1;
		widx = gcap_block_scan(wflag, &nw, s->warp);
		if (i < s->n) {
			if (!mask)
				atomicAdd(&s->n_filtered, 1u);
			else if (!wflag)
				atomicAdd(&s->n_truncated, 1u);
		}
		if (wflag) {
			struct gcap_rec *r =
				(struct gcap_rec *)(s->xdata + s->len + excl);
			unsigned long long m = mask;

			/* a span's records keep the file's own time fields */
			r->ts_ns = s->raw ? s->raw[i] : d.ts_ns;
			r->outmask = mask;
			r->caplen = cap;
			r->wirelen = d.wirelen;
			r->port = d.port;
			r->queue = d.queue;
			r->seq = d.seq;
			s->list[widx] = (unsigned short)tid;
			s->off[tid] = s->len + excl;
			s->cap[tid] = cap;
			s->src[tid] = d.addr;
			atomicAdd(&s->bytes, (unsigned long long)d.wirelen);
			while (m) {
				int j = __ffsll((long long)m) - 1;

				atomicAdd(&s->out[j], 1ull);
				m &= m - 1;
			}
		}
		/* records of this chunk that were written end at the last one */
		if (wflag && widx == nw - 1)
			s->chunk_bytes = excl + sz;
		/* A record of a block pass or more is copied by the whole
		 * block, the others by a warp each. One warp alone on a record
		 * of tens of KiB makes a load round trip per KiB, and holds
		 * the batch's DONE for tens of microseconds; the queue's later
		 * batches, done on its other blocks, wait with it (the RX
		 * lcore takes them in order). */
		big = GCAP_GPU_BLOCK_COPY_WORDS * 16u * nthr;
		if (__syncthreads_or(wflag && cap >= big)) {
			for (k = 0; k < nw; k++) {
				unsigned int t = s->list[k];

				if (s->cap[t] >= big)
					gcap_copy(
						(unsigned char *)(s->xdata + s->off[t] +
								  sizeof(struct gcap_rec)),
						(const unsigned char *)s->src[t],
						s->cap[t], tid, nthr);
			}
		}
		for (k = warp; k < nw; k += nwarps) {
			unsigned int t = s->list[k];

			if (s->cap[t] < big)
				gcap_copy((unsigned char *)(s->xdata + s->off[t] +
							    sizeof(struct gcap_rec)),
					  (const unsigned char *)s->src[t], s->cap[t],
					  lane, 32u);
		}
		__syncthreads();
		if (tid == 0) {
			if (nw) {
				s->len += s->chunk_bytes;
				s->nrec += nw;
				s->n_captured += nw;
			}
			/* first record that did not fit: stop for the batch */
			if (s->n_truncated)
				s->stopped = 1;
		}
		__syncthreads();
	}

	/* the outputs there are: every store to host memory is one more
	 * that the release of DONE waits for */
	if (tid < kp->nfilters)
		s->res->out_pkts[tid] = s->out[tid];
	if (tid == 0) {
		s->res->n_captured = s->n_captured;
		s->res->n_filtered = s->n_filtered;
		s->res->n_truncated = s->n_truncated;
		s->res->exec_ns = (unsigned int)(gcap_globaltimer() - s->t0);
		s->res->captured_bytes = s->bytes;
		s->res->start_ns = s->t0;
		s->res->n_found = s->n_found;
		s->res->span_walks = s->walks;
		for (k = 0; k < 4u; k++)
			s->res->span_ns[k] = s->span_ns[k];
		s->res->found_bytes = s->found_bytes;
		s->res->span_stop = s->span_stop;
		s->xbuf->len = s->len;
		s->xbuf->nrec = s->nrec;
	}
	/* every thread's stores, then the barrier, then (in the caller)
	 * thread 0's release store of DONE at system scope: the barrier
	 * orders the other threads' stores before it, and the release is
	 * cumulative. One release per batch: a fence per thread costs
	 * microseconds each. */
	__syncthreads();
}

#include "find_span.cuh"

extern "C" __global__ void
__launch_bounds__(GCAP_GPU_THREADS_MAX) gcap_pipeline_kernel(struct gcap_gpu_kparams kp)
{
	__shared__ struct gcap_gpu_shared s;
	__shared__ struct gcap_span_sub sub[GCAP_GPU_THREADS_MAX];
	const struct gcap_gpu_qdesc *qd =
		&((const struct gcap_gpu_qdesc *)kp.queues)[blockIdx.x];
	struct gcap_gpu_slot *slots = (struct gcap_gpu_slot *)qd->slots;
	unsigned int mask = qd->ring_size - 1u, head = qd->first, batches = 0;
	const unsigned int *quit = (const unsigned int *)kp.quit;

	for (;;) {
		struct gcap_gpu_slot *sl = &slots[head & mask];

		if (threadIdx.x == 0) {
			unsigned int spins = 0, st;
			unsigned long long w = 0;

			for (;;) {
				/* status (low half) and arg in one read */
				w = gcap_ld_acquire_sys64(
					(const unsigned long long *)&sl->status);
				st = (unsigned int)w;
				if (st == GCAP_GPU_READY)
					break;
				if ((++spins & 63u) == 0 && gcap_ld_acquire_sys(quit)) {
					st = GCAP_GPU_FREE;
					break;
				}
			}
			/* no fence here: the load is an acquire at system
			 * scope, and the barrier below passes the order on to
			 * the block's other threads */
			s.t0 = gcap_globaltimer();
			s.cmd = st;
			if (st == GCAP_GPU_READY) {
				unsigned int arg = (unsigned int)(w >> 32);
				unsigned int slot = head & mask;

				s.n = GCAP_GPU_ARG_N(arg);
				s.span = (s.n & GCAP_GPU_ARG_SPAN) != 0;
				s.raw = NULL;
				s.n_found = 0;
				s.walks = 0;
				s.span_ns[0] = s.span_ns[1] = s.span_ns[2] =
					s.span_ns[3] = 0;
				s.found_bytes = 0;
				s.span_stop = GCAP_SPAN_GOES_ON;
				if (s.span) {
					const struct gcap_gpu_chain *ch =
						(const struct gcap_gpu_chain *)qd->chain;

					s.sp = ((const struct gcap_gpu_span *)
							qd->spans)[slot];
					/* sub-chunks sized by a recent span's
					 * records, as far as they are known now:
					 * one size for the whole block */
					s.span_c = gcap_span_chunk(
						s.sp.len, blockDim.x,
						gcap_ld_relaxed_gpu64(
							(const unsigned long long *)&ch
								->avg));
				}
				s.pkts = (const struct gcap_pkt *)qd->pkts +
					 (size_t)slot * qd->batch_max;
				s.xbuf = (struct gcap_gpu_xbuf *)qd->xbufs +
					 GCAP_GPU_ARG_XBUF(arg);
				s.res = (struct gcap_gpu_result *)qd->res + slot;
				batches++;
				if (kp.fault_at && blockIdx.x == 0 &&
				    batches == kp.fault_at)
					asm volatile("trap;");
			}
		}
		__syncthreads();
		if (s.cmd != GCAP_GPU_READY)
			return;
		if (s.span)
			gcap_gpu_span_find(&kp, qd, head & mask, &s, sub);
		gcap_gpu_batch(&kp, &s);
		/* the block's stores, the barrier (end of gcap_gpu_batch),
		 * then thread 0's release store at system scope, which is
		 * cumulative over what the barrier ordered before it (a
		 * separate fence before it would be a second MEMBAR.SYS) */
		if (threadIdx.x == 0)
			gcap_st_release_sys(&sl->status, GCAP_GPU_DONE);
		head += qd->step;
	}
}

#ifdef GCAP_GPU_INLINE_KERNEL
/* Copy n bytes from device memory (the kernel state) to dst (pinned,
 * device-mapped host memory): how the executor reads the state back after
 * the persistent kernel has ended. Words when both are 8-byte aligned. */
extern "C" __global__ void
gcap_kstate_copy(unsigned long long dst, unsigned long long src, unsigned long long n)
{
	unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
	unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
	unsigned long long nw = ((dst | src) & 7ull) ? 0ull : n >> 3, k;

	for (k = i; k < nw; k += stride)
		((unsigned long long *)dst)[k] = ((const unsigned long long *)src)[k];
	for (k = nw * 8ull + i; k < n; k += stride)
		((unsigned char *)dst)[k] = ((const unsigned char *)src)[k];
}
#endif

#endif /* GCAP_GPU_PIPELINE_CUH */
