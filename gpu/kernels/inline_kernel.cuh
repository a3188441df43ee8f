/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The executor side of inline kernels on the GPU: running gcap_kernel() on
 * the packets of a block, one per thread, an ordered kernel's packets of
 * one order key in thread order (gcap_kern_entry.h, "Ordered kernels").
 * Kernel sources never call it, so it is not part of gcap_kernel.h: the
 * persistent kernel (pipeline.cuh) and bench/kernel_bench.cu include it
 * after gcap_kernel.h and the kernel source, with GCAP_KERNEL_ORDERED
 * defined before both for an ordered kernel. Device code only.
 */
#ifndef GCAP_GPU_INLINE_KERNEL_CUH
#define GCAP_GPU_INLINE_KERNEL_CUH

/**
 * The rounds of an ordered kernel's block. Every thread of the block
 * calls it with its packet's order key (GCAP_ORDER_NONE for none, or for
 * no packet); keys is blockDim.x words of shared memory, max one shared
 * word. @return the thread's round: the number of lower threads of the
 * block that hold the same key; *rounds gets the number of rounds the
 * block needs (1 + the largest round).
 * Running round r's packets between barriers, r = 0, 1, ..., runs the
 * packets of one key in thread order.
 */
GCAP_DEV uint32_t
gcap_order_round(uint64_t key, uint64_t *keys, uint32_t *max, uint32_t *rounds)
{
	uint32_t t = threadIdx.x, r = 0;

	if (t == 0)
		*max = 0;
	keys[t] = key;
	__syncthreads();
	if (key != GCAP_ORDER_NONE) {
		for (uint32_t j = 0; j < t; j++)
			r += keys[j] == key;
		if (r)
			atomicMax(max, r);
	}
	__syncthreads();
	*rounds = *max + 1u;
	return r;
}

/**
 * Run gcap_kernel() on the block's packets, one per thread (run: this
 * thread has a packet for it). Every thread of the block calls it. An
 * ordered kernel (GCAP_KERNEL_ORDERED defined before gcap_kernel.h)
 * runs the packets that share an order key in thread order, one round
 * each, with keys (blockDim.x shared words) and max (one shared word);
 * otherwise all at once and keys/max are unused.
 * @return the verdict (GCAP_DROP for a thread without a packet).
 */
GCAP_DEV uint32_t
gcap_kernel_block_run(bool run, const struct gcap_kpkt *pkt, struct gcap_kstate *st,
		      uint64_t *keys, uint32_t *max)
{
#ifdef GCAP_KERNEL_ORDERED
	uint32_t v = 0, rounds;
	uint64_t key = run ? gcap_kernel_order(pkt, st) : GCAP_ORDER_NONE;
	uint32_t r = gcap_order_round(key, keys, max, &rounds);

	for (uint32_t k = 0; k < rounds; k++) {
		if (run && k == r)
			v = gcap_kernel(pkt, st);
		/* round k's stores to the state, seen by round k + 1 */
		__syncthreads();
	}
	return v;
#else
	(void)keys;
	(void)max;
	return run ? gcap_kernel(pkt, st) : 0u;
#endif
}

#endif /* GCAP_GPU_INLINE_KERNEL_CUH */
