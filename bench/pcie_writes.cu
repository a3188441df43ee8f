/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The way back of a batch, alone: one block (one pipeline queue) copies a
 * record of R bytes from device memory into pinned host memory, then its
 * thread 0 releases a flag at system scope, as the pipeline kernel releases
 * DONE. The release waits until the copy's stores are performed, so its
 * time is the part of the pipeline's "back" that a large record adds. Per
 * record, on the GPU's global timer: the copy's issue (until the block's
 * barrier after it) and the release. Which copy, and which host memory,
 * make the way back short?
 *
 *   copies (--copy):
 *     warp4    one warp, 4-byte loads and stores, four a lane in flight
 *              (the pipeline's gcap_warp_copy before the block copy)
 *     warp16   one warp, 16-byte loads and stores, two a lane in flight
 *     block4   every warp of the block, 4-byte, four a lane in flight
 *     block16  every warp of the block, 16-byte, two a lane in flight
 *   host memory (--mem):
 *     alloc    cudaHostAlloc(mapped, portable): the export buffers' kind
 *     huge     2 MiB huge pages (MAP_HUGETLB) made known with
 *              cudaHostRegister(mapped, portable)
 *   destination (--dst):
 *     walk     each record after the last, through the block's region
 *              (REGION MiB): the export ring's pattern
 *     same     every record at the region's start
 *
 * Records start 64 bytes apart plus a 32-byte header (as a record's packet
 * bytes follow its header), so that 16-byte stores are aligned. Between
 * records thread 0 waits GAP us, so that each record's stores meet an
 * idle link, as the mixed capture's rare large records do.
 *
 *   nvcc -O2 -arch=sm_90 bench/pcie_writes.cu -o pcie_writes
 *   ./pcie_writes [--rec B,...] [--blocks N,...] [--copy C,...] [--mem M]
 *                 [--dst D] [--n RECORDS] [--gap US] [--threads T]
 *                 [--region MIB]
 *
 * Output: one markdown table row per case (issue and release, p50 and p99
 * in us; the record's bytes over its p50 issue plus release in GB/s); exit
 * 0, 2 (usage or CUDA error), 77 (no GPU), 3 (--mem huge with too few huge
 * pages reserved).
 */
#include <cuda_runtime.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <type_traits>

#define CK(x)                                                        \
	do {                                                         \
		cudaError_t e_ = (x);                                \
		if (e_ != cudaSuccess) {                             \
			fprintf(stderr, "pcie_writes: %s: %s\n", #x, \
				cudaGetErrorString(e_));             \
			exit(2);                                     \
		}                                                    \
	} while (0)

enum copy {
	C_WARP4,
	C_WARP16,
	C_BLOCK4,
	C_BLOCK16,
	C_N
};
static const char *const copy_name[C_N] = { "warp4", "warp16", "block4", "block16" };

static __device__ __forceinline__ unsigned long long
gtimer(void)
{
	unsigned long long t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

/* Copy rec bytes (a multiple of 16): threads [0, nthr) take part, thread
 * index t, each pass every load in flight before any store. */
template <int W, int K>
static __device__ __forceinline__ void
copy_rec(unsigned char *__restrict__ dst, const unsigned char *__restrict__ src,
	 unsigned rec, unsigned t, unsigned nthr)
{
	typedef typename std::conditional<W == 16, uint4, unsigned>::type word;
	const word *s = (const word *)src;
	word *d = (word *)dst;
	unsigned nw = rec / W, base, k;

	for (base = 0; base < nw; base += K * nthr) {
		word v[K];

#pragma unroll
		for (k = 0; k < K; k++) {
			unsigned w = base + k * nthr + t;

			if (w < nw)
				v[k] = s[w];
		}
#pragma unroll
		for (k = 0; k < K; k++) {
			unsigned w = base + k * nthr + t;

			if (w < nw)
				d[w] = v[k];
		}
	}
}

template <int C>
__global__ void
wback(const unsigned char *src, unsigned char *dst, size_t region, unsigned rec,
      unsigned n, int walk, unsigned gap_ns, unsigned *flags, unsigned long long *times)
{
	unsigned char *mine = dst + (size_t)blockIdx.x * region;
	unsigned stride = ((rec + 32u + 63u) & ~63u), per = (unsigned)(region / stride);
	unsigned tid = threadIdx.x, i;
	unsigned long long t0 = 0, t1, t2;

	for (i = 0; i < n; i++) {
		unsigned char *d = mine + (walk ? (size_t)(i % per) * stride : 0) + 32u;

		if (tid == 0)
			t0 = gtimer();
		__syncthreads();
		if (C == C_WARP4 && tid < 32u)
			copy_rec<4, 4>(d, src, rec, tid, 32u);
		else if (C == C_WARP16 && tid < 32u)
			copy_rec<16, 2>(d, src, rec, tid, 32u);
		else if (C == C_BLOCK4)
			copy_rec<4, 4>(d, src, rec, tid, blockDim.x);
		else if (C == C_BLOCK16)
			copy_rec<16, 2>(d, src, rec, tid, blockDim.x);
		__syncthreads();
		if (tid == 0) {
			t1 = gtimer();
			asm volatile("st.release.sys.u32 [%0], %1;"
				     :
				     : "l"(flags + blockIdx.x * 32u), "r"(i)
				     : "memory");
			t2 = gtimer();
			times[((size_t)blockIdx.x * n + i) * 2] = t1 - t0;
			times[((size_t)blockIdx.x * n + i) * 2 + 1] = t2 - t1;
			while (gtimer() - t2 < gap_ns)
				;
		}
	}
}

typedef void (*launch_fn)(unsigned, unsigned, const unsigned char *, unsigned char *,
			  size_t, unsigned, unsigned, int, unsigned, unsigned *,
			  unsigned long long *);

template <int C>
static void
launch(unsigned blocks, unsigned threads, const unsigned char *src, unsigned char *dst,
       size_t region, unsigned rec, unsigned n, int walk, unsigned gap_ns,
       unsigned *flags, unsigned long long *times)
{
	wback<C><<<blocks, threads>>>(src, dst, region, rec, n, walk, gap_ns, flags,
				      times);
}

static const launch_fn launches[C_N] = { launch<C_WARP4>, launch<C_WARP16>,
					 launch<C_BLOCK4>, launch<C_BLOCK16> };

static int
cmp_u64(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a;
	unsigned long long y = *(const unsigned long long *)b;

	return x < y ? -1 : x > y;
}

/* p50 and p99 of m values, in us */
static void
pct(unsigned long long *v, size_t m, double *p50, double *p99)
{
	qsort(v, m, sizeof(*v), cmp_u64);
	*p50 = v[m / 2] / 1e3;
	*p99 = v[(m * 99) / 100] / 1e3;
}

/* Parse "a,b,c" into at most max unsigned values; 0 on a bad list. */
static unsigned
parse_list(const char *s, unsigned *out, unsigned max)
{
	unsigned n = 0;
	char *e;

	while (*s && n < max) {
		errno = 0;
		out[n++] = (unsigned)strtoul(s, &e, 0);
		if (errno || e == s || (*e && *e != ','))
			return 0;
		s = *e ? e + 1 : e;
	}
	return *s ? 0 : n;
}

static int
usage(void)
{
	fprintf(stderr, "usage: pcie_writes [--rec B,...] [--blocks N,...] "
			"[--copy warp4,warp16,block4,block16] [--mem alloc|huge] "
			"[--dst walk|same] [--n RECORDS] [--gap US] [--threads T] "
			"[--region MIB]\n");
	return 2;
}

int
main(int argc, char **argv)
{
	unsigned recs[16] = { 1024, 8192, 65536, 81920 }, nrecs = 4;
	unsigned blks[8] = { 1, 8 }, nblks = 2;
	unsigned n = 2000, gap = 20, threads = 256, region_mib = 32, maxb = 0;
	const char *copies = "warp4,warp16,block4,block16", *mem = "alloc",
		   *dstk = "walk";
	unsigned char *src, *host = NULL, *dhost;
	unsigned *flags;
	unsigned long long *times, *h, *v;
	cudaDeviceProp prop;
	size_t region, len;
	int ndev = 0, walk;
	unsigned i, c, b, r;

	for (i = 1; i < (unsigned)argc; i++) {
		const char *a = argv[i],
			   *val = i + 1 < (unsigned)argc ? argv[i + 1] : NULL;

		if (val == NULL)
			return usage();
		i++;
		if (!strcmp(a, "--rec"))
			nrecs = parse_list(val, recs, 16);
		else if (!strcmp(a, "--blocks"))
			nblks = parse_list(val, blks, 8);
		else if (!strcmp(a, "--copy"))
			copies = val;
		else if (!strcmp(a, "--mem"))
			mem = val;
		else if (!strcmp(a, "--dst"))
			dstk = val;
		else if (!strcmp(a, "--n"))
			n = (unsigned)strtoul(val, NULL, 0);
		else if (!strcmp(a, "--gap"))
			gap = (unsigned)strtoul(val, NULL, 0);
		else if (!strcmp(a, "--threads"))
			threads = (unsigned)strtoul(val, NULL, 0);
		else if (!strcmp(a, "--region"))
			region_mib = (unsigned)strtoul(val, NULL, 0);
		else
			return usage();
	}
	walk = !strcmp(dstk, "walk");
	for (r = 0; r < nrecs; r++)
		if (recs[r] == 0 || recs[r] % 16 || recs[r] > (1u << 20))
			nrecs = 0;
	for (b = 0; b < nblks; b++)
		if (blks[b] == 0 || blks[b] > 132)
			nblks = 0;
		else if (blks[b] > maxb)
			maxb = blks[b];
	if (nrecs == 0 || nblks == 0 || n < 100 || threads < 32 || threads > 1024 ||
	    threads % 32 || region_mib == 0 || (!walk && strcmp(dstk, "same")) ||
	    (strcmp(mem, "alloc") && strcmp(mem, "huge"))) {
		fprintf(stderr, "pcie_writes: records a multiple of 16 up to 1 MiB, "
				"1 to 132 blocks, --n >= 100, --threads a multiple of "
				"32 up to 1024, --region > 0, --dst walk or same, "
				"--mem alloc or huge\n");
		return 2;
	}
	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
		fprintf(stderr, "pcie_writes: no GPU\n");
		return 77;
	}
	CK(cudaGetDeviceProperties(&prop, 0));
	region = (size_t)region_mib << 20;
	len = region * maxb;
	if (!strcmp(mem, "huge")) {
		void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_POPULATE,
			       -1, 0);

		if (p == MAP_FAILED) {
			fprintf(stderr,
				"pcie_writes: %zu MiB of 2 MiB huge pages: %s "
				"(reserve them: /proc/sys/vm/nr_hugepages)\n",
				len >> 20, strerror(errno));
			return 3;
		}
		host = (unsigned char *)p;
		CK(cudaHostRegister(host, len,
				    cudaHostRegisterMapped | cudaHostRegisterPortable));
	} else {
		CK(cudaHostAlloc((void **)&host, len,
				 cudaHostAllocMapped | cudaHostAllocPortable));
	}
	memset(host, 0, len);
	CK(cudaHostGetDevicePointer((void **)&dhost, host, 0));
	CK(cudaHostAlloc((void **)&flags, 132 * 128,
			 cudaHostAllocMapped | cudaHostAllocPortable));
	CK(cudaMalloc((void **)&src, 1u << 20));
	CK(cudaMemset(src, 0x5a, 1u << 20));
	CK(cudaMalloc((void **)&times, (size_t)maxb * n * 16));
	h = (unsigned long long *)malloc((size_t)maxb * n * 16);
	v = (unsigned long long *)malloc((size_t)maxb * n * 8);
	if (h == NULL || v == NULL)
		return 2;
	printf("# the way back alone: %s, %u threads a block, host memory %s, "
	       "records %s, %u a block, %u us apart, %u MiB a block\n\n",
	       prop.name, threads, mem, dstk, n, gap, region_mib);
	printf("| copy | blocks | record B | issue p50 / p99 us | release p50 / p99 us "
	       "| GB/s at p50 |\n|---|---|---|---|---|---|\n");
	for (c = 0; c < C_N; c++) {
		if (strstr(copies, copy_name[c]) == NULL)
			continue;
		for (b = 0; b < nblks; b++)
			for (r = 0; r < nrecs; r++) {
				unsigned nb = blks[b], skip = n / 10;
				size_t m = 0, k, j;
				double i50, i99, r50, r99;

				if ((size_t)(recs[r] + 96u) > region) {
					fprintf(stderr,
						"pcie_writes: --region too small\n");
					return 2;
				}
				launches[c](nb, threads, src, dhost, region, recs[r], n,
					    walk, gap * 1000u, (unsigned *)flags, times);
				CK(cudaDeviceSynchronize());
				CK(cudaGetLastError());
				CK(cudaMemcpy(h, times, (size_t)nb * n * 16,
					      cudaMemcpyDeviceToHost));
				/* the first tenth warms the caches and TLBs */
				for (k = 0; k < nb; k++)
					for (j = skip; j < n; j++)
						v[m++] = h[(k * n + j) * 2];
				pct(v, m, &i50, &i99);
				m = 0;
				for (k = 0; k < nb; k++)
					for (j = skip; j < n; j++)
						v[m++] = h[(k * n + j) * 2 + 1];
				pct(v, m, &r50, &r99);
				printf("| %s | %u | %u | %.2f / %.2f | %.2f / %.2f | "
				       "%.2f |\n",
				       copy_name[c], nb, recs[r], i50, i99, r50, r99,
				       recs[r] / ((i50 + r50) * 1e3));
				fflush(stdout);
			}
	}
	return 0;
}
