/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What bounds --mem host on eight lcores: the number of the GPU's reads of
 * pinned host memory, or their bytes? The pipeline's GPU reads, for every
 * packet, its descriptor (32 bytes, contiguous with the batch's others) and
 * the packet's head (one read of its own: data rooms are 2 KiB apart). This
 * program does only that, with no pipeline, no CPU and no filter, and reports
 * items a second:
 *
 *   head     one 4-byte load per slot, slots STRIDE apart (one sector each)
 *   head64   two loads per slot, 32 bytes apart (the two sectors of a line)
 *   descN    N contiguous bytes per item (N = 8, 16 or 32), nothing else
 *   descN+head  the pipeline's pattern: an item's descriptor (N bytes), then
 *            the head at the address read from it (dependent loads)
 *
 * If the link is bound by bytes, desc16+head runs faster than desc32+head by
 * the bytes saved; if it is bound by reads (requests in flight), both run as
 * fast as head. Heads are read with ld.global.cv (fetched again every time,
 * so that the L2 cache never answers) from a pinned, device-mapped buffer of
 * SLOTS x STRIDE bytes (default 65536 x 2048, 128 MiB); descriptors with
 * ld.global.cg (the two halves of a 32-byte one share a fetch, as the
 * pipeline's do) from 4 Mi descriptors of pinned memory (128 MiB, more than
 * the L2 cache, read once a pass).
 *
 *   nvcc -O2 -arch=sm_90 bench/pcie_reads.cu -o pcie_reads
 *   ./pcie_reads [--slots N] [--stride B] [--ms T] [--blocks B] [--only PAT]
 *
 * Output: one markdown table row per pattern (items/s, useful bytes/s);
 * exit 0, 2 (usage or CUDA error), 77 (no GPU).
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK(x)                                                       \
	do {                                                        \
		cudaError_t e_ = (x);                               \
		if (e_ != cudaSuccess) {                            \
			fprintf(stderr, "pcie_reads: %s: %s\n", #x, \
				cudaGetErrorString(e_));            \
			exit(2);                                    \
		}                                                   \
	} while (0)

#define NDESC (4u << 20)

enum pat {
	P_HEAD,
	P_HEAD64,
	P_DESC,
	P_DESC_HEAD
};

/* Items i = tid, tid + nthreads, ... < n (n and the grid multiples of 32:
 * whole warps run the loop); rep shifts the slot each item
 * reads so that every pass walks the slots in a different order. */
template <int PAT, int DESC>
__global__ void
reads(const unsigned char *base, const unsigned char *desc, unsigned slots,
      unsigned stride, unsigned n, unsigned rep, unsigned *sink)
{
	unsigned acc = 0, i;

	for (i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += gridDim.x * blockDim.x) {
		unsigned s = (i * 40503u + rep * 977u) % slots;
		const unsigned char *p = base + (size_t)s * stride;

		if (PAT == P_HEAD) {
			acc += __ldcv((const unsigned *)p);
		} else if (PAT == P_HEAD64) {
			unsigned a = __ldcv((const unsigned *)p);
			unsigned b = __ldcv((const unsigned *)(p + 32));

			acc += a + b;
		} else {
			const unsigned char *d = desc + (size_t)i * DESC;
			unsigned long long addr;

			if (DESC == 8) {
				addr = __ldcg((const unsigned long long *)d);
			} else if (DESC == 16) {
				ulonglong2 v = __ldcg((const ulonglong2 *)d);

				addr = v.x;
				acc += (unsigned)v.y;
			} else {
				/* the warp's 32 descriptors (1 KiB) in two
				 * coalesced 16-byte loads a lane, as one
				 * contiguous read; item lane's address is the
				 * first half of lane 2 * lane's (mod 32) */
				unsigned lane = threadIdx.x & 31u;
				const unsigned char *w =
					desc + (size_t)(i - lane) * DESC + lane * 16u;
				ulonglong2 v0 = __ldcg((const ulonglong2 *)w);
				ulonglong2 v1 = __ldcg((const ulonglong2 *)(w + 512));
				unsigned long long a0 =
					__shfl_sync(0xffffffffu, v0.x, (2u * lane) & 31u);
				unsigned long long a1 =
					__shfl_sync(0xffffffffu, v1.x, (2u * lane) & 31u);

				addr = lane < 16u ? a0 : a1;
				acc += (unsigned)(v0.y + v1.y);
			}
			if (PAT == P_DESC_HEAD)
				acc += __ldcv((const unsigned *)addr);
			else
				acc += (unsigned)addr;
		}
	}
	if (acc == 0xdeadbeefu)
		*sink = acc;
}

struct run {
	const char *name;
	void (*launch)(unsigned, unsigned, const unsigned char *, const unsigned char *,
		       unsigned, unsigned, unsigned, unsigned, unsigned *);
	unsigned useful; /* bytes a pattern needs per item */
	unsigned desc;   /* its descriptors' width (0: none) */
};

template <int PAT, int DESC>
static void
launch(unsigned blocks, unsigned threads, const unsigned char *base,
       const unsigned char *desc, unsigned slots, unsigned stride, unsigned n,
       unsigned rep, unsigned *sink)
{
	reads<PAT, DESC><<<blocks, threads>>>(base, desc, slots, stride, n, rep, sink);
}

int
main(int argc, char **argv)
{
	unsigned slots = 65536, stride = 2048, ms = 500, blocks = 0, i;
	unsigned threads = 256, sms;
	const char *only = NULL;
	unsigned char *host, *dhost, *desc, *ddesc;
	unsigned *sink;
	cudaDeviceProp prop;
	int ndev = 0;
	static const struct run runs[] = {
		{ "head", launch<P_HEAD, 0>, 4, 8 },
		{ "head64", launch<P_HEAD64, 0>, 64, 8 },
		{ "desc8", launch<P_DESC, 8>, 8, 8 },
		{ "desc16", launch<P_DESC, 16>, 16, 16 },
		{ "desc32", launch<P_DESC, 32>, 32, 32 },
		{ "desc8+head", launch<P_DESC_HEAD, 8>, 12, 8 },
		{ "desc16+head", launch<P_DESC_HEAD, 16>, 20, 16 },
		{ "desc32+head", launch<P_DESC_HEAD, 32>, 36, 32 },
	};

	for (i = 1; i < (unsigned)argc; i++) {
		unsigned *v = NULL;

		if (!strcmp(argv[i], "--only") && i + 1 < (unsigned)argc) {
			only = argv[++i];
			continue;
		}
		if (!strcmp(argv[i], "--slots"))
			v = &slots;
		else if (!strcmp(argv[i], "--stride"))
			v = &stride;
		else if (!strcmp(argv[i], "--ms"))
			v = &ms;
		else if (!strcmp(argv[i], "--blocks"))
			v = &blocks;
		if (v == NULL || i + 1 >= (unsigned)argc) {
			fprintf(stderr, "usage: pcie_reads [--slots N] [--stride B] "
					"[--ms T] [--blocks B] [--only PATTERN]\n");
			return 2;
		}
		*v = (unsigned)strtoul(argv[++i], NULL, 0);
	}
	if (slots < 1024 || stride < 64 || (stride & 63) || ms == 0) {
		fprintf(stderr, "pcie_reads: --slots >= 1024, --stride a multiple "
				"of 64, --ms > 0\n");
		return 2;
	}
	for (i = 0; only != NULL && i < sizeof(runs) / sizeof(runs[0]); i++)
		if (strcmp(only, runs[i].name) == 0)
			break;
	if (only != NULL && i == sizeof(runs) / sizeof(runs[0])) {
		fprintf(stderr,
			"pcie_reads: no pattern '%s' (head, head64, "
			"desc8, desc16, desc32, desc8+head, desc16+head, "
			"desc32+head)\n",
			only);
		return 2;
	}
	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
		fprintf(stderr, "pcie_reads: no GPU\n");
		return 77;
	}
	CK(cudaGetDeviceProperties(&prop, 0));
	sms = (unsigned)prop.multiProcessorCount;
	if (blocks == 0)
		blocks = sms * 8;
	CK(cudaHostAlloc((void **)&host, (size_t)slots * stride, cudaHostAllocMapped));
	CK(cudaHostAlloc((void **)&desc, (size_t)NDESC * 32, cudaHostAllocMapped));
	CK(cudaHostGetDevicePointer((void **)&dhost, host, 0));
	CK(cudaHostGetDevicePointer((void **)&ddesc, desc, 0));
	CK(cudaMalloc((void **)&sink, sizeof(*sink)));
	memset(host, 1, (size_t)slots * stride);
	printf("# PCIe read ceiling: %s, %u SMs, %u blocks x %u threads, "
	       "%u slots %u B apart, %u descriptors, %u ms per pattern\n\n",
	       prop.name, sms, blocks, threads, slots, stride, NDESC, ms);
	printf("| pattern | M items/s | useful GB/s |\n|---|---|---|\n");
	for (i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		cudaEvent_t t0, t1;
		unsigned n = NDESC, rep = 0;
		unsigned long long items = 0;
		float el = 0;
		unsigned k;

		if (only != NULL && strcmp(only, runs[i].name) != 0)
			continue;

		/* descriptor k (of this pattern's width) holds slot
		 * (k * 7) % slots's address */
		for (k = 0; k < NDESC; k++) {
			unsigned long long a = (unsigned long long)(uintptr_t)dhost +
					       (size_t)((k * 7u) % slots) * stride;

			memcpy(desc + (size_t)k * runs[i].desc, &a, 8);
		}
		CK(cudaEventCreate(&t0));
		CK(cudaEventCreate(&t1));
		runs[i].launch(blocks, threads, dhost, ddesc, slots, stride, n, 0,
			       sink); /* warm up */
		CK(cudaDeviceSynchronize());
		CK(cudaEventRecord(t0));
		do {
			for (k = 0; k < 8; k++, rep++) {
				runs[i].launch(blocks, threads, dhost, ddesc, slots,
					       stride, n, rep, sink);
				items += n;
			}
			CK(cudaEventRecord(t1));
			CK(cudaEventSynchronize(t1));
			CK(cudaEventElapsedTime(&el, t0, t1));
		} while (el < (float)ms);
		CK(cudaGetLastError());
		printf("| %s | %.1f | %.2f |\n", runs[i].name, items / (el * 1e3),
		       items * runs[i].useful / (el * 1e6));
		CK(cudaEventDestroy(t0));
		CK(cudaEventDestroy(t1));
	}
	return 0;
}
