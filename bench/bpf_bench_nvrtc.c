/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bpf_bench: the GPU kernels' CUDA C and its compilation by NVRTC (through
 * gcap_rtc). Both kernels have the same shape, one thread per packet,
 * grid-stride, one atomic per block (bb_count) and a per-packet variant
 * for the verdict check (bb_verify); they differ in bb_eval(): the set's
 * programs translated to C by gcap_bpfc (compiled filter), or
 * gcap_bpf_interp() over the programs in device memory (interpreter).
 * Each source is compiled twice, into a fresh cache and from it, for the
 * report's cold and cache-hit times. No CUDA driver calls: this part also
 * runs without a GPU (--cpu-only, for --arch).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpucap/gcap_rtc.h"

#include "bpf_bench_internal.h"
#include "bpf_bench_interp_src.h" /* bb_interp_src: gcap_bpf_interp.h */

/* shared by both kernels: bb_eval() is defined before it */
static const char g_kernel_tail[] =
	"struct bb_desc { unsigned long long off; unsigned int caplen;\n"
	"                 unsigned int wirelen; };\n"
	"extern \"C\" __global__ void\n"
	"bb_count(const unsigned char *__restrict__ base,\n"
	"         const bb_desc *__restrict__ d, unsigned long long n,\n"
	"         unsigned long long *out, const void *__restrict__ insns,\n"
	"         const unsigned int *__restrict__ offs,\n"
	"         const unsigned int *__restrict__ lens, unsigned int np)\n"
	"{\n"
	"  __shared__ unsigned long long s_any[32], s_bits[32];\n"
	"  unsigned long long any = 0, bits = 0, i;\n"
	"  unsigned int lane = threadIdx.x & 31u, w = threadIdx.x >> 5;\n"
	"  for (i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
	"       i < n; i += (unsigned long long)gridDim.x * blockDim.x) {\n"
	"    bb_desc e = d[i];\n"
	"    unsigned long long m = bb_eval(base + e.off, e.wirelen, e.caplen,\n"
	"                                   insns, offs, lens, np);\n"
	"    any += m != 0ull;\n"
	"    bits += (unsigned long long)__popcll(m);\n"
	"  }\n"
	"  for (int o = 16; o > 0; o >>= 1) {\n"
	"    any += __shfl_down_sync(0xffffffffu, any, o);\n"
	"    bits += __shfl_down_sync(0xffffffffu, bits, o);\n"
	"  }\n"
	"  if (lane == 0) { s_any[w] = any; s_bits[w] = bits; }\n"
	"  __syncthreads();\n"
	"  if (threadIdx.x == 0) {\n"
	"    unsigned int nw = (blockDim.x + 31u) >> 5;\n"
	"    for (unsigned int k = 1; k < nw; k++) { any += s_any[k]; bits += s_bits[k]; "
	"}\n"
	"    if (any) atomicAdd(&out[0], any);\n"
	"    if (bits) atomicAdd(&out[1], bits);\n"
	"  }\n"
	"}\n"
	"extern \"C\" __global__ void\n"
	"bb_verify(const unsigned char *__restrict__ base,\n"
	"          const bb_desc *__restrict__ d, unsigned long long n,\n"
	"          unsigned long long *masks, const void *__restrict__ insns,\n"
	"          const unsigned int *__restrict__ offs,\n"
	"          const unsigned int *__restrict__ lens, unsigned int np)\n"
	"{\n"
	"  unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + "
	"threadIdx.x;\n"
	"  if (i < n) {\n"
	"    bb_desc e = d[i];\n"
	"    masks[i] = bb_eval(base + e.off, e.wirelen, e.caplen, insns, offs, lens, "
	"np);\n"
	"  }\n"
	"}\n";

static const char g_compiled_eval[] =
	"static __device__ __forceinline__ unsigned long long\n"
	"bb_eval(const unsigned char *p, unsigned int wl, unsigned int cl,\n"
	"        const void *insns, const unsigned int *offs,\n"
	"        const unsigned int *lens, unsigned int np)\n"
	"{\n"
	"  return flt_mask(p, wl, cl);\n"
	"}\n";

static const char g_interp_eval[] =
	"static __device__ __forceinline__ unsigned long long\n"
	"bb_eval(const unsigned char *p, unsigned int wl, unsigned int cl,\n"
	"        const void *insns, const unsigned int *offs,\n"
	"        const unsigned int *lens, unsigned int np)\n"
	"{\n"
	"  const struct gcap_bpf_insn *in = (const struct gcap_bpf_insn *)insns;\n"
	"  unsigned long long m = 0;\n"
	"  for (unsigned int k = 0; k < np; k++)\n"
	"    if (gcap_bpf_interp(in + offs[k], lens[k], p, wl, cl) != 0u)\n"
	"      m |= 1ull << k;\n"
	"  return m;\n"
	"}\n";

static char *
concat3(const char *a, const char *b, const char *c)
{
	size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
	char *s = malloc(la + lb + lc + 2);

	if (s == NULL)
		return NULL;
	memcpy(s, a, la);
	s[la] = '\n';
	memcpy(s + la + 1, b, lb);
	memcpy(s + la + 1 + lb, c, lc + 1);
	return s;
}

static void
rm_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char p[4096];

	if (d != NULL) {
		while ((de = readdir(d)) != NULL) {
			if (de->d_name[0] == '.')
				continue;
			snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
			unlink(p);
		}
		closedir(d);
	}
	rmdir(dir);
}

/*
 * Compile src twice through gcap_rtc: into a fresh cache directory (cold:
 * NVRTC runs) and again from it (hit: the entry is read and checked).
 * Returns the CUBIN (malloc'd) or NULL.
 */
static void *
rtc_twice(const char *src, const char *name, int maj, int min, struct bb_rtc *rt,
	  size_t *len)
{
	struct gcap_rtc_info info;
	char dir[] = "/tmp/bpf_bench-rtc-XXXXXX";
	void *img = NULL, *img2 = NULL;
	size_t l2 = 0;
	int rc;

	memset(rt, 0, sizeof(*rt));
	rt->src_len = strlen(src);
	if (mkdtemp(dir) == NULL) {
		snprintf(rt->err, sizeof(rt->err), "mkdtemp: %s", strerror(errno));
		return NULL;
	}
	memset(&info, 0, sizeof(info));
	rc = gcap_rtc_compile(src, name, maj, min, NULL, 0, dir, 0, &img, len, &info,
			      rt->err);
	if (rc != 0) {
		if (info.log != NULL)
			fprintf(stderr, "bpf_bench: NVRTC log for %s:\n%s\n", name,
				info.log);
		gcap_rtc_info_clear(&info);
		rm_dir(dir);
		return NULL;
	}
	rt->cold_ms = info.compile_ms + info.load_ms;
	gcap_rtc_info_clear(&info);
	memset(&info, 0, sizeof(info));
	rc = gcap_rtc_compile(src, name, maj, min, NULL, 0, dir, 0, &img2, &l2, &info,
			      rt->err);
	if (rc == 0) {
		rt->hit = info.cache_hit;
		rt->hit_ms = info.compile_ms + info.load_ms;
		free(img2);
	}
	gcap_rtc_info_clear(&info);
	rm_dir(dir);
	rt->cubin_len = *len;
	rt->ok = 1;
	return img;
}

void *
gcap_bench_nvrtc_interp(int maj, int min, struct bb_rtc *rt, size_t *len)
{
	char *src = concat3(bb_interp_src, g_interp_eval, g_kernel_tail);
	void *img;

	img = src ? rtc_twice(src, "bpf_bench_interp.cu", maj, min, rt, len) : NULL;
	free(src);
	return img;
}

int
gcap_bench_nvrtc_compiled(const struct bb_set *s, int maj, int min, struct bb_rtc *rt,
			  void **img, size_t *len)
{
	char eb[GCAP_ERRBUF_SIZE];
	char *tu =
		gcap_bpfc_translate(s->progs, s->np, "flt", GCAP_BPFC_F_NO_COMMENTS, eb);
	char *src;

	*img = NULL;
	if (tu == NULL) {
		snprintf(rt->err, sizeof(rt->err), "%s", eb);
		return -1;
	}
	src = concat3(tu, g_compiled_eval, g_kernel_tail);
	free(tu);
	*img = src ? rtc_twice(src, "bpf_bench_compiled.cu", maj, min, rt, len) : NULL;
	free(src);
	return 0;
}
