/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The emulated GPUDirect NIC's "DMA engine" (gpu/gpunic.c): one launch
 * writes a batch of packets from the capture staged in VRAM into the
 * mbufs' data rooms (VRAM, or pinned host memory over PCIe, as a NIC's
 * DMA would), then publishes a completion word in pinned host memory that
 * the feeding thread polls, as a driver polls a completion queue. The CPU
 * never copies a packet byte. Descriptors are read from pinned host
 * memory, as a NIC reads its RX descriptors.
 */

/* One segment to write: must match struct nic_desc in gpu/gpunic_nic.h. */
struct gcap_gpunic_desc {
	unsigned long long dst; /* data room address (device or mapped host) */
	unsigned int src;       /* offset in the staged capture */
	unsigned int len;       /* bytes */
};

/* A warp per descriptor (a segment, or a piece of at most 4 KiB of a
 * larger one: NIC_CHUNK in gpunic_nic.h): 8-byte words where both ends allow it, then the
 * tail. Each block's thread 0 fences at system scope after the block's
 * barrier and counts the block done (a counter in device memory, reset
 * for the next launch on the stream); the last block stores seq into
 * *done with release semantics at system scope: every byte written
 * before is visible to the CPU and to any kernel that reads after it. */
extern "C" __global__ void
gcap_gpunic_dma(const struct gcap_gpunic_desc *desc, unsigned int n,
		const unsigned char *stage, unsigned int *ctr, unsigned int *done,
		unsigned int seq)
{
	unsigned int lane = threadIdx.x & 31u;
	unsigned int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
	unsigned int nwarps = (gridDim.x * blockDim.x) >> 5;

	for (unsigned int i = warp; i < n; i += nwarps) {
		/* one 16-byte read across PCIe, not three */
		uint4 v = ((const uint4 *)desc)[i];
		struct gcap_gpunic_desc d;

		d.dst = (unsigned long long)v.y << 32 | v.x;
		d.src = v.z;
		d.len = v.w;
		const unsigned char *s = stage + d.src;
		unsigned char *t = (unsigned char *)d.dst;
		unsigned int k = 0;

		if (((d.dst | (unsigned long long)(size_t)s) & 7ull) == 0) {
			unsigned int nw = d.len >> 3;

			for (k = lane; k < nw; k += 32u)
				((unsigned long long *)t)[k] =
					((const unsigned long long *)s)[k];
			k = nw << 3;
		}
		for (k += lane; k < d.len; k += 32u)
			t[k] = s[k];
	}
	/* the block's writes, then one system-scope fence for all of them
	 * (cumulative over what the barrier ordered before it, the pattern
	 * of cooperative groups' grid sync): a fence in every thread is a
	 * flush of the GPU's writes each, thousands a batch */
	__syncthreads();
	if (threadIdx.x == 0) {
		unsigned int prev;

		__threadfence_system();
		prev = atomicAdd(ctr, 1u);

		if (prev == gridDim.x - 1u) {
			*ctr = 0u;
			__threadfence_system();
			asm volatile("st.release.sys.u32 [%0], %1;"
				     :
				     : "l"(done), "r"(seq)
				     : "memory");
		}
	}
}
