/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * GPU machine check: one example kernel, compiled for the GPU by nvcc from
 * the same source, against its CPU build (loaded with gcap_khost) over a
 * pcap file. Verdicts per packet, the final state's JSON report (the GPU
 * state rendered by the host report hook) and a rough throughput figure.
 *
 *   nvcc -O2 -arch=sm_90 -I include -DKFILE='"kernels/examples/dns/dns.c"' \
 *        tests/kernels/gpu_equiv.cu khost.o common.o -ldl -o equiv
 *   ./equiv FILE.pcap KERNEL.c [ARG]
 *
 * Exit 0 when the reports are identical and every order-independent
 * verdict matches; see tests/kernels/gpu_equiv.sh.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include KFILE  /* the device build: GCAP_DEVICE is defined */

extern "C" {
struct gcap_khost;
struct gcap_khost *gcap_khost_load(const char *, const char *, char *);
uint32_t gcap_khost_run(struct gcap_khost *, const struct gcap_kpkt *);
void *gcap_khost_state(struct gcap_khost *);
size_t gcap_khost_state_size(const struct gcap_khost *);
int gcap_khost_report_json(const struct gcap_khost *, FILE *, const void *);
}

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); exit(2); } } while (0)

__global__ void run_batch(const struct gcap_kpkt *p, unsigned n,
			  struct gcap_kstate *st, uint32_t *v)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		v[i] = gcap_kernel(&p[i], st);
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* A minimal pcap reader (either byte order, us or ns). */
static uint8_t *read_pcap(const char *path, size_t *nbytes, unsigned *npkts,
			  uint64_t **offs, uint32_t **caps, uint32_t **wires)
{
	FILE *f = fopen(path, "rb");
	if (!f) { perror(path); exit(2); }
	fseek(f, 0, SEEK_END);
	long sz = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *raw = (uint8_t *)malloc(sz);
	if (fread(raw, 1, sz, f) != (size_t)sz) { perror("read"); exit(2); }
	fclose(f);
	uint32_t magic;
	memcpy(&magic, raw, 4);
	bool swap = magic == 0xd4c3b2a1 || magic == 0x4d3cb2a1;
	size_t o = 24;
	unsigned n = 0, cap = 1024;
	*offs = (uint64_t *)malloc(cap * 8);
	*caps = (uint32_t *)malloc(cap * 4);
	*wires = (uint32_t *)malloc(cap * 4);
	while (o + 16 <= (size_t)sz) {
		uint32_t h[4];
		memcpy(h, raw + o, 16);
		if (swap)
			for (int i = 0; i < 4; i++)
				h[i] = __builtin_bswap32(h[i]);
		if (o + 16 + h[2] > (size_t)sz)
			break;
		if (n == cap) {
			cap *= 2;
			*offs = (uint64_t *)realloc(*offs, cap * 8);
			*caps = (uint32_t *)realloc(*caps, cap * 4);
			*wires = (uint32_t *)realloc(*wires, cap * 4);
		}
		(*offs)[n] = o + 16;
		(*caps)[n] = h[2];
		(*wires)[n] = h[3];
		n++;
		o += 16 + h[2];
	}
	*nbytes = (size_t)sz;
	*npkts = n;
	return raw;
}

static char *report(struct gcap_khost *k, const void *st)
{
	char *t = NULL;
	size_t l = 0;
	FILE *f = open_memstream(&t, &l);
	gcap_khost_report_json(k, f, st);
	fclose(f);
	return t;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s FILE.pcap KERNEL.c [ARG]\n", argv[0]);
		return 2;
	}
	const char *arg = argc > 3 ? argv[3] : NULL;
	char eb[512];
	struct gcap_khost *k = gcap_khost_load(argv[2], arg, eb);
	if (!k) { fprintf(stderr, "%s\n", eb); return 2; }
	size_t ss = gcap_khost_state_size(k);
	if (ss != sizeof(struct gcap_kstate)) {
		fprintf(stderr, "state size: host %zu, device build %zu\n", ss,
			sizeof(struct gcap_kstate));
		return 1;
	}
	void *st0 = malloc(ss);
	memcpy(st0, gcap_khost_state(k), ss);  /* the initialised state */

	size_t nb;
	unsigned n;
	uint64_t *offs;
	uint32_t *caps, *wires;
	uint8_t *raw = read_pcap(argv[1], &nb, &n, &offs, &caps, &wires);

	/* CPU reference */
	uint32_t *vc = (uint32_t *)malloc(n * 4), *vg = (uint32_t *)malloc(n * 4);
	struct gcap_kpkt *hp = (struct gcap_kpkt *)calloc(n, sizeof(*hp));
	double t0 = now();
	for (unsigned i = 0; i < n; i++) {
		struct gcap_kpkt p = {};
		p.data = raw + offs[i];
		p.caplen = caps[i];
		p.wirelen = wires[i];
		p.seq = i;
		vc[i] = gcap_khost_run(k, &p);
	}
	double tcpu = now() - t0;
	char *rc = report(k, NULL);

	/* GPU: packets in VRAM, batches of 512 in order, as the executor */
	uint8_t *draw;
	struct gcap_kpkt *dp;
	struct gcap_kstate *dst;
	uint32_t *dv;
	CK(cudaMalloc(&draw, nb));
	CK(cudaMemcpy(draw, raw, nb, cudaMemcpyHostToDevice));
	for (unsigned i = 0; i < n; i++) {
		hp[i].data = draw + offs[i];
		hp[i].caplen = caps[i];
		hp[i].wirelen = wires[i];
		hp[i].seq = i;
	}
	CK(cudaMalloc(&dp, n * sizeof(*dp)));
	CK(cudaMemcpy(dp, hp, n * sizeof(*dp), cudaMemcpyHostToDevice));
	CK(cudaMalloc(&dst, ss));
	CK(cudaMemcpy(dst, st0, ss, cudaMemcpyHostToDevice));
	CK(cudaMalloc(&dv, n * 4));
	const unsigned B = 512;
	for (unsigned o = 0; o < n; o += B) {
		unsigned m = n - o < B ? n - o : B;
		run_batch<<<(m + 127) / 128, 128>>>(dp + o, m, dst, dv + o);
		CK(cudaGetLastError());
	}
	CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(vg, dv, n * 4, cudaMemcpyDeviceToHost));
	void *gst = malloc(ss);
	CK(cudaMemcpy(gst, dst, ss, cudaMemcpyDeviceToHost));
	char *rg = report(k, gst);

	unsigned diff = 0, capc = 0, capg = 0;
	for (unsigned i = 0; i < n; i++) {
		diff += vc[i] != vg[i];
		capc += (vc[i] & GCAP_CAPTURE) != 0;
		capg += (vg[i] & GCAP_CAPTURE) != 0;
	}
	bool same = strcmp(rc, rg) == 0;

	/* throughput: the whole file as one launch, repeated (state keeps
	 * accumulating; counters only) */
	const int R = 20;
	cudaEvent_t e0, e1;
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	run_batch<<<(n + 255) / 256, 256>>>(dp, n, dst, dv);
	CK(cudaEventRecord(e0));
	for (int r = 0; r < R; r++)
		run_batch<<<(n + 255) / 256, 256>>>(dp, n, dst, dv);
	CK(cudaEventRecord(e1));
	CK(cudaEventSynchronize(e1));
	float ms;
	CK(cudaEventElapsedTime(&ms, e0, e1));

	printf("%s: %u packets, captured cpu %u gpu %u, verdict differences %u, "
	       "reports %s\n", argv[2], n, capc, capg, diff,
	       same ? "identical" : "DIFFERENT");
	printf("  cpu 1 thread %.2f Mpps; gpu (VRAM, %u-packet launch) %.2f Mpps\n",
	       n / tcpu / 1e6, n, (double)n * R / (ms / 1e3) / 1e6);
	if (!same)
		printf("--- cpu\n%s--- gpu\n%s", rc, rg);
	return same && capc == capg ? 0 : 1;
}
