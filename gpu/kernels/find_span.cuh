/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A span slot of the persistent kernel (-r of a plain pcap file on the gpu
 * backend): the block finds the span's records in VRAM (gcap_span.h) and
 * turns them into the slot's descriptors, which the batch code then
 * filters and writes as it does a batch the host described.
 *
 * Every thread walks its sub-chunk from a guessed first record while
 * thread 0 waits for the previous span's exit (the queue's chain in VRAM:
 * spans come in order, and a block with the next span is resident beside
 * it, so the wait is for work already running). When every list begins
 * where the one before it exits, the lists are the span's records as
 * they are; else thread 0 joins them, walking again where a guess was
 * wrong. The exit goes on to the next span before the descriptors are
 * written, so that the chain waits only for the finding.
 *
 * Included by pipeline.cuh after its helpers.
 */
#ifndef GCAP_GPU_FIND_SPAN_CUH
#define GCAP_GPU_FIND_SPAN_CUH

static __device__ __forceinline__ unsigned long long
gcap_ld_acquire_gpu64(const unsigned long long *p)
{
	unsigned long long v;

	asm volatile("ld.acquire.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
	return v;
}

/* A load at GPU scope that no stale line of the SM's own cache answers:
 * the chain's fields, which other blocks write, after its acquire. */
static __device__ __forceinline__ unsigned long long
gcap_ld_relaxed_gpu64(const unsigned long long *p)
{
	unsigned long long v;

	asm volatile("ld.relaxed.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
	return v;
}

static __device__ __forceinline__ void
gcap_st_release_gpu64(unsigned long long *p, unsigned long long v)
{
	asm volatile("st.release.gpu.u64 [%0], %1;" : : "l"(p), "l"(v) : "memory");
}

/* The span's entry from the chain (thread 0): 0, or 1 when the chain is
 * broken (an earlier span stopped), or 2 when the capture quit first. */
static __device__ __forceinline__ unsigned int
gcap_gpu_span_entry(const struct gcap_gpu_kparams *kp, struct gcap_gpu_chain *ch,
		    struct gcap_gpu_shared *s)
{
	const struct gcap_gpu_span *sp = &s->sp;
	unsigned int spins = 0;

	if (sp->index == 0) {
		s->entry = sp->entry;
		s->seq0 = 0;
		return 0;
	}
	while (gcap_ld_acquire_gpu64((const unsigned long long *)&ch->index) != sp->index)
		if ((++spins & 63u) == 0 &&
		    gcap_ld_acquire_sys((const unsigned int *)kp->quit))
			return 2;
	s->entry = gcap_ld_relaxed_gpu64((const unsigned long long *)&ch->next);
	s->seq0 = gcap_ld_relaxed_gpu64((const unsigned long long *)&ch->seq);
	return gcap_ld_relaxed_gpu64((const unsigned long long *)&ch->broken) ? 1u : 0u;
}

/* Find the records of span slot slot (s->sp) into its descriptors; every
 * thread of the block calls it. Sets s->n, s->pkts, s->raw and the span's
 * results. */
static __device__ void
gcap_gpu_span_find(const struct gcap_gpu_kparams *kp, const struct gcap_gpu_qdesc *qd,
		   unsigned int slot, struct gcap_gpu_shared *s,
		   struct gcap_span_sub *sub)
{
	const unsigned int tid = threadIdx.x;
	const struct gcap_gpu_span *sp = &s->sp;
	struct gcap_gpu_chain *ch = (struct gcap_gpu_chain *)qd->chain;
	uint32_t *lists = (uint32_t *)qd->lists + (unsigned long long)slot * qd->list_max;
	struct gcap_pkt *found =
		(struct gcap_pkt *)qd->found + (unsigned long long)slot * qd->found_max;
	unsigned long long *raw =
		(unsigned long long *)qd->raw + (unsigned long long)slot * qd->found_max;
	const unsigned int len = sp->len;
	const unsigned int c = s->span_c; /* the block's one size */
	const unsigned int cap = GCAP_SPAN_LIST(c);
	unsigned int nsub = c ? (len + c - 1u) / c : 0u, cnt = 0, base, total, entry;
	unsigned int walks = 0;
	unsigned long long t0 = 0, t1;
	unsigned long long bytes = 0;
	struct gcap_span_view v;

	v.p = (const uint8_t *)sp->data;
	v.avail = sp->avail;
	v.snap = sp->snap;
	v.flags = sp->flags;
	if (tid < nsub) {
		struct gcap_span_sub *sj = &sub[tid];

		sj->lo = tid * c;
		sj->hi = sj->lo + c < len ? sj->lo + c : len;
		gcap_span_guess(&v, sj, lists + (unsigned long long)tid * cap,
				tid == 0 && sp->index == 0 ?
					(unsigned int)(sp->entry - sp->off) :
					GCAP_SPAN_UNKNOWN);
	}
	__syncthreads(); /* every guess walked */
	if (tid == 0) {
		s->found_bytes = 0;
		s->walks = 0;
		t1 = gcap_globaltimer();
		s->span_ns[GCAP_SPAN_T_GUESS] = (unsigned int)(t1 - s->t0);
		s->broken = gcap_gpu_span_entry(kp, ch, s);
		t0 = gcap_globaltimer();
		s->span_ns[GCAP_SPAN_T_WAIT] = (unsigned int)(t0 - t1);
	}
	__syncthreads();
	if (s->broken)
		nsub = 0;
	entry = (unsigned int)(s->entry - sp->off);
	/* the join (gcap_span.h): rounds until every sub-chunk agrees with
	 * where the one before it leaves off */
	for (;;) {
		unsigned int at = entry, at_stop = 0;
		int ok = 1;

		if (tid < nsub) {
			if (tid > 0) {
				at = sub[tid - 1].exit;
				at_stop = sub[tid - 1].stop;
			}
			ok = gcap_span_agrees(&sub[tid], at);
			s->agree[tid] = (unsigned char)ok;
		}
		if (__syncthreads_and(ok))
			break;
		/* the one before agrees with its own: it does not move now */
		if (!ok && (tid == 0 || s->agree[tid - 1]))
			gcap_span_fix(&v, &sub[tid],
				      lists + (unsigned long long)tid * cap, at, at_stop,
				      &walks);
		__syncthreads();
	}
	if (tid == 0 && !s->broken) {
		s->exitp = nsub ? sub[nsub - 1].exit : entry;
		s->span_stopped = nsub ? sub[nsub - 1].stop : 0u;
	}
	if (walks)
		atomicAdd(&s->walks, walks);
	if (tid == 0)
		s->span_ns[GCAP_SPAN_T_JOIN] = (unsigned int)(gcap_globaltimer() - t0);
	if (tid < nsub)
		cnt = sub[tid].n - sub[tid].from;
	base = gcap_block_scan(cnt, &total, s->warp);
	if (tid == 0) {
		bool stopped = s->broken == 0 && s->span_stopped;

		/* the next span's entry, before this one's descriptors */
		if (s->broken == 0) {
			ch->next = sp->off + s->exitp;
			ch->seq = s->seq0 + total;
			if (total > 0 && s->exitp > entry)
				ch->avg = (s->exitp - entry) / total;
			ch->broken = s->span_stopped;
		} else {
			ch->broken = 1;
		}
		if (s->broken != 2)
			gcap_st_release_gpu64((unsigned long long *)&ch->index,
					      sp->index + 1u);
		s->n = total;
		s->n_found = total;
		t0 = gcap_globaltimer(); /* the descriptors from here */
		s->span_stop = stopped ? sp->off + s->exitp : GCAP_SPAN_GOES_ON;
		s->pkts = found;
		s->raw = raw;
	}
	if (cnt > 0) {
		const uint32_t *l = lists + (unsigned long long)tid * cap;
		const unsigned long long unit =
			(sp->flags & GCAP_SPAN_NANO) ? 1ull : 1000ull;
		unsigned int i, k = base;

		for (i = sub[tid].from; i < sub[tid].n; i++, k++) {
			uint32_t p = l[i];
			uint32_t sec = gcap_span_u32(&v, p),
				 frac = gcap_span_u32(&v, p + 4u);
			struct gcap_pkt d;

			d.addr = sp->data + p + GCAP_SPAN_RHDR;
			d.ts_ns = (unsigned long long)sec * 1000000000ull + frac * unit;
			d.caplen = gcap_span_u32(&v, p + 8u);
			d.wirelen = gcap_span_u32(&v, p + 12u);
			d.port = 0;
			d.queue = (uint16_t)qd->queue;
			d.seq = (uint32_t)(s->seq0 + k);
			found[k] = d;
			raw[k] = (unsigned long long)sec << 32 | frac;
			bytes += d.wirelen;
		}
	}
	if (bytes)
		atomicAdd(&s->found_bytes, bytes);
	__syncthreads();
	if (tid == 0)
		s->span_ns[GCAP_SPAN_T_DESCRIBE] =
			(unsigned int)(gcap_globaltimer() - t0);
}

#endif /* GCAP_GPU_FIND_SPAN_CUH */
