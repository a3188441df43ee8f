/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bpf_bench: the GPU engines, compiled filter and interpreter, each over
 * the packets in VRAM and over the same packets in pinned, device-mapped
 * host memory. The CUDA driver comes through gpucap's loader (gpu/cuda.c);
 * the kernels through NVRTC (bpf_bench_nvrtc.c). Before it is timed, an
 * engine's per-packet verdicts on one copy of the pcap are checked against
 * bpf_filter(); every timed pass's match counts are checked too. Passes
 * are timed with CUDA events, the L2 cache evicted before each unless
 * --no-flush.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"
#include "gpucap/gcap_rtc.h"

#include "bpf_bench_internal.h"

#define BB_BLOCK 256

/* the device's state; what the report prints of it is in bb_ctx.gpu */
struct bb_gpu {
	CUdevice dev;
	CUcontext ctx;
	CUdeviceptr vram;    /* copy of the buffer */
	CUdeviceptr pinned;  /* device view of pk.buf */
	CUdeviceptr scratch; /* evicts L2 between timed passes */
	size_t scratch_sz;
	CUdeviceptr out;   /* 2 counters */
	CUdeviceptr masks; /* per-packet masks of the verify kernel */
	CUevent e0, e1;
};

/* the kernels of one set */
struct bb_gset {
	CUmodule mod;
	CUfunction fcount, fverify;
	CUdeviceptr insns, offs, lens; /* interpreter programs */
	int grid_c, grid_i;
};

static const struct gcap_cu *g_cu;
static struct bb_gpu g_gpu;
static struct bb_gset g_gset[BB_NSETS];
static CUmodule g_mod_i; /* interpreter kernel */
static CUfunction g_fcount_i, g_fverify_i;

static const char *
cu_name(CUresult r)
{
	const char *n = "CUDA_ERROR_?";

	if (g_cu != NULL)
		g_cu->GetErrorName(r, &n);
	return n;
}

#define CK(call)                                                                    \
	do {                                                                        \
		CUresult r_ = (call);                                               \
		if (r_ != CUDA_SUCCESS) {                                           \
			fprintf(stderr, "bpf_bench: %s: %s\n", #call, cu_name(r_)); \
			exit(1);                                                    \
		}                                                                   \
	} while (0)

/* the entry points bpf_bench needs beyond the gpu module's required ones */
static const char *
cu_missing(const struct gcap_cu *cu)
{
	if (cu->DeviceTotalMem == NULL)
		return "cuDeviceTotalMem";
	if (cu->CtxSynchronize == NULL)
		return "cuCtxSynchronize";
	if (cu->MemcpyDtoH == NULL)
		return "cuMemcpyDtoH";
	if (cu->EventCreate == NULL)
		return "cuEventCreate";
	if (cu->EventRecord == NULL)
		return "cuEventRecord";
	if (cu->EventSynchronize == NULL)
		return "cuEventSynchronize";
	if (cu->EventElapsedTime == NULL)
		return "cuEventElapsedTime";
	if (cu->OccupancyMaxActiveBlocksPerMultiprocessor == NULL)
		return "cuOccupancyMaxActiveBlocksPerMultiprocessor";
	return NULL;
}

int
gcap_bench_gpu_open(struct bb_ctx *c, char *why)
{
	struct bb_gpuinfo *gi = &c->gpu;
	const struct gcap_cu *cu;
	const char *miss;
	int n = 0;

	cu = gcap_cu_load(why);
	if (cu == NULL)
		return -1;
	miss = cu_missing(cu);
	if (miss != NULL) {
		snprintf(why, GCAP_ERRBUF_SIZE, "CUDA driver lacks %s", miss);
		return -1;
	}
	g_cu = cu;
	if (cu->DeviceGetCount(&n) != CUDA_SUCCESS || n < 1) {
		snprintf(why, GCAP_ERRBUF_SIZE, "no CUDA device");
		return -1;
	}
	gi->drv = cu->version;
	CK(cu->DeviceGet(&g_gpu.dev, 0));
	CK(cu->DeviceGetName(gi->name, sizeof(gi->name), g_gpu.dev));
	CK(cu->DeviceGetAttribute(&gi->sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
				  g_gpu.dev));
	CK(cu->DeviceGetAttribute(
		&gi->ccmaj, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, g_gpu.dev));
	CK(cu->DeviceGetAttribute(
		&gi->ccmin, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, g_gpu.dev));
	CK(cu->DeviceGetAttribute(&gi->l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, g_gpu.dev));
	CK(cu->DeviceTotalMem(&gi->totalmem, g_gpu.dev));
	CK(cu->DevicePrimaryCtxRetain(&g_gpu.ctx, g_gpu.dev));
	CK(cu->CtxSetCurrent(g_gpu.ctx));
	CK(cu->EventCreate(&g_gpu.e0, CU_EVENT_DEFAULT));
	CK(cu->EventCreate(&g_gpu.e1, CU_EVENT_DEFAULT));
	return 0;
}

void
gcap_bench_gpu_pin(struct bb_ctx *c)
{
	void *p = NULL;

	CK(g_cu->MemHostAlloc(&p, c->pk.size,
			      CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE));
	c->pk.buf = p;
	c->pk.pinned = 1;
	CK(g_cu->MemHostGetDevicePointer(&g_gpu.pinned, p, 0));
}

void
gcap_bench_gpu_upload(struct bb_ctx *c)
{
	size_t m = c->pk.nbase * sizeof(uint64_t);

	CK(g_cu->MemAlloc(&g_gpu.vram, c->pk.used));
	CK(g_cu->MemcpyHtoD(g_gpu.vram, c->pk.buf, c->pk.used));
	g_gpu.scratch_sz = (size_t)c->gpu.l2 * 4;
	if (g_gpu.scratch_sz < (64u << 20))
		g_gpu.scratch_sz = 64u << 20;
	CK(g_cu->MemAlloc(&g_gpu.scratch, g_gpu.scratch_sz));
	CK(g_cu->MemAlloc(&g_gpu.out, 16));
	CK(g_cu->MemAlloc(&g_gpu.masks, m));
}

static void
load_module(const void *img, struct bb_rtc *rt, CUmodule *mod, CUfunction *fcount,
	    CUfunction *fverify)
{
	double t0 = gcap_bench_now();

	CK(g_cu->ModuleLoadData(mod, img));
	rt->modload_ms = (gcap_bench_now() - t0) * 1e3;
	CK(g_cu->ModuleGetFunction(fcount, *mod, "bb_count"));
	CK(g_cu->ModuleGetFunction(fverify, *mod, "bb_verify"));
}

static int
grid_for(const struct bb_ctx *c, CUfunction f)
{
	int nb = 0;

	CK(g_cu->OccupancyMaxActiveBlocksPerMultiprocessor(&nb, f, BB_BLOCK, 0));
	if (nb < 1)
		nb = 1;
	return nb * c->gpu.sms;
}

/* the interpreter's programs of set s, concatenated, in device memory */
static void
upload_progs(const struct bb_set *s, struct bb_gset *g)
{
	unsigned offs[BB_MAXP], lens[BB_MAXP], k, tot = 0;
	struct bpf_insn *all;

	for (k = 0; k < s->np; k++) {
		offs[k] = tot;
		lens[k] = s->progs[k].bf_len;
		tot += lens[k];
	}
	all = malloc((tot ? tot : 1) * sizeof(*all));
	if (all == NULL)
		exit(1);
	for (k = 0; k < s->np; k++)
		memcpy(all + offs[k], s->progs[k].bf_insns, lens[k] * sizeof(*all));
	CK(g_cu->MemAlloc(&g->insns, (tot ? tot : 1) * sizeof(*all)));
	CK(g_cu->MemAlloc(&g->offs, sizeof(offs)));
	CK(g_cu->MemAlloc(&g->lens, sizeof(lens)));
	CK(g_cu->MemcpyHtoD(g->insns, all, tot * sizeof(*all)));
	CK(g_cu->MemcpyHtoD(g->offs, offs, sizeof(offs)));
	CK(g_cu->MemcpyHtoD(g->lens, lens, sizeof(lens)));
	free(all);
}

/* NVRTC for every set (and the interpreter); with a GPU, load modules */
static void
compile_all(struct bb_ctx *c, int maj, int min)
{
	unsigned si;
	size_t len;
	void *img;

	img = gcap_bench_nvrtc_interp(maj, min, &c->rtc_i, &len);
	if (img != NULL && c->have_gpu)
		load_module(img, &c->rtc_i, &g_mod_i, &g_fcount_i, &g_fverify_i);
	free(img);
	for (si = 0; si < BB_NSETS; si++) {
		const struct bb_set *s = &c->sets[si];
		struct bb_gset *g = &g_gset[si];

		if (gcap_bench_nvrtc_compiled(s, maj, min, &c->rtc[si], &img, &len) != 0)
			continue;
		if (img != NULL && c->have_gpu) {
			load_module(img, &c->rtc[si], &g->mod, &g->fcount, &g->fverify);
			g->grid_c = grid_for(c, g->fcount);
		}
		free(img);
		if (c->have_gpu && c->rtc_i.ok) {
			upload_progs(s, g);
			g->grid_i = grid_for(c, g_fcount_i);
		}
	}
}

int
gcap_bench_gpu_compile(struct bb_ctx *c, char *why)
{
	unsigned si;

	if (gcap_rtc_load(why) != 0) {
		for (si = 0; si < BB_NSETS; si++)
			snprintf(c->rtc[si].err, sizeof(c->rtc[si].err), "%s", why);
		snprintf(c->rtc_i.err, sizeof(c->rtc_i.err), "%s", why);
		return -1;
	}
	if (c->have_gpu)
		compile_all(c, c->gpu.ccmaj, c->gpu.ccmin);
	else
		compile_all(c, c->o.arch / 10, c->o.arch % 10);
	return 0;
}

static void
gpu_launch(CUfunction f, int grid, CUdeviceptr base, uint64_t n, CUdeviceptr out,
	   const struct bb_gset *g, unsigned np)
{
	CUdeviceptr desc = base;
	unsigned long long nn = n;
	void *args[] = { &base,
			 &desc,
			 &nn,
			 &out,
			 (void *)&g->insns,
			 (void *)&g->offs,
			 (void *)&g->lens,
			 &np };

	CK(g_cu->LaunchKernel(f, (unsigned)grid, 1, 1, BB_BLOCK, 1, 1, 0, NULL, args,
			      NULL));
}

/* per-packet verdicts of one copy of the pcap; returns the mismatches */
static unsigned
gpu_verify(struct bb_ctx *c, unsigned si, CUfunction fv, CUdeviceptr base)
{
	const struct bb_set *s = &c->sets[si];
	uint64_t m = c->pk.n < c->pk.nbase ? c->pk.n : c->pk.nbase, i;
	uint64_t *h = malloc(m * sizeof(*h));
	unsigned bad = 0;

	if (h == NULL)
		exit(1);
	CK(g_cu->MemsetD8(g_gpu.masks, 0xa5, m * sizeof(*h)));
	gpu_launch(fv, (int)((m + BB_BLOCK - 1) / BB_BLOCK), base, m, g_gpu.masks,
		   &g_gset[si], s->np);
	CK(g_cu->CtxSynchronize());
	CK(g_cu->MemcpyDtoH(h, g_gpu.masks, m * sizeof(*h)));
	for (i = 0; i < m; i++)
		if (h[i] != s->ref[i])
			bad++;
	free(h);
	return bad;
}

void
gcap_bench_gpu_engine(struct bb_ctx *c, unsigned si, enum bb_engine e)
{
	const struct bb_set *s = &c->sets[si];
	struct bb_gset *g = &g_gset[si];
	int interp = e == E_GPU_I_VRAM || e == E_GPU_I_PIN;
	CUdeviceptr base =
		(e == E_GPU_C_VRAM || e == E_GPU_I_VRAM) ? g_gpu.vram : g_gpu.pinned;
	CUfunction fc = interp ? g_fcount_i : g->fcount;
	CUfunction fv = interp ? g_fverify_i : g->fverify;
	int grid = interp ? g->grid_i : g->grid_c;
	uint64_t ea, eb, h[2];
	double best = 0;
	unsigned bad, r;
	char why[160];

	if (!interp && !c->rtc[si].ok) {
		gcap_bench_record(c, si, e, -2, 0, 0, 0, 0, c->rtc[si].err);
		return;
	}
	if (interp && !c->rtc_i.ok) {
		gcap_bench_record(c, si, e, -2, 0, 0, 0, 0, c->rtc_i.err);
		return;
	}
	bad = gpu_verify(c, si, fv, base);
	if (bad) {
		snprintf(why, sizeof(why),
			 "verdicts differ from bpf_filter() on %u "
			 "of %u packets",
			 bad, c->pk.nbase);
		gcap_bench_record(c, si, e, -1, 0, 0, 0, 0, why);
		return;
	}
	gcap_bench_expect_prefix(s, &c->pk, c->pk.n, &ea, &eb);
	for (r = 0; r <= c->o.reps; r++) { /* pass 0 warms up */
		float ms = 0;

		CK(g_cu->MemsetD8(g_gpu.out, 0, 16));
		if (!c->o.no_flush)
			CK(g_cu->MemsetD8(g_gpu.scratch, (unsigned char)r,
					  g_gpu.scratch_sz));
		CK(g_cu->EventRecord(g_gpu.e0, NULL));
		gpu_launch(fc, grid, base, c->pk.n, g_gpu.out, g, s->np);
		CK(g_cu->EventRecord(g_gpu.e1, NULL));
		CK(g_cu->EventSynchronize(g_gpu.e1));
		CK(g_cu->EventElapsedTime(&ms, g_gpu.e0, g_gpu.e1));
		CK(g_cu->MemcpyDtoH(h, g_gpu.out, sizeof(h)));
		if (h[0] != ea || h[1] != eb) {
			snprintf(why, sizeof(why),
				 "matches %" PRIu64 "/%" PRIu64
				 " != bpf_filter() %" PRIu64 "/%" PRIu64,
				 h[0], h[1], ea, eb);
			gcap_bench_record(c, si, e, -1, c->pk.n, ms * 1e-3,
					  c->pk.cap_bytes, 0, why);
			return;
		}
		if (r == 1 || (r > 1 && ms * 1e-3 < best))
			best = ms * 1e-3;
	}
	snprintf(why, sizeof(why), "grid %d x %d, %s", grid, BB_BLOCK,
		 c->o.no_flush ? "L2 warm" : "L2 flushed before each pass");
	gcap_bench_record(c, si, e, 1, c->pk.n, best, c->pk.cap_bytes, 0, why);
}
