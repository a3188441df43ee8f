/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inline kernel throughput: one example kernel,
 * built for the GPU by nvcc from the same source (KFILE) and for the CPU
 * by gcap_khost (the cpu executor's loader), over the same packets:
 *
 *   - GPU, packets and descriptors in VRAM: one launch over all packets,
 *     one thread per packet, cudaEvent timed, L2 evicted before each pass;
 *   - GPU, packets and descriptors in pinned, device-mapped host memory
 *     (cudaHostAllocMapped: the kernel reads them over PCIe), same kernel;
 *   - CPU, the host build's entry point on N threads (nproc capped at 16,
 *     pinned to distinct CPUs, one shared state updated with the kernel's
 *     atomics, as the cpu executor runs it) and on 1 thread.
 *
 * The state is reset to its initialised image before every pass, so every
 * pass does the same work (first-seen inserts included). Best of --reps.
 * After each mode the final state's JSON report is compared with the
 * 1-thread CPU's; a difference fails the run (exit 1).
 *
 *   nvcc -O2 -arch=sm_90 -I. -Iinclude -DKFILE='"kernels/examples/dns/dns.c"' \
 *        bench/kernel_bench.cu khost.o common.o -ldl -lpthread -o kb-dns
 *   ./kb-dns [options] FILE.pcap KERNEL.c [ARG]
 *
 * Output: "Machine: ..." (one line), one markdown table row ("| ..."),
 * one JSON line ("{...}"); bench/kernel_bench.sh assembles them.
 * Exit 0, 1 (reports differ), 2 (usage, load or CUDA error), 77 (no GPU
 * and no --cpu-only).
 */
#include <cuda_runtime.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include KFILE                           /* the device build: GCAP_DEVICE is defined */
#include "gpu/kernels/inline_kernel.cuh" /* gcap_kernel_block_run() */

extern "C" {
struct gcap_khost;
struct gcap_khost *gcap_khost_load(const char *, const char *, char *);
void *gcap_khost_state(struct gcap_khost *);
size_t gcap_khost_state_size(const struct gcap_khost *);
int gcap_khost_report_json(const struct gcap_khost *, FILE *, const void *);
bool gcap_khost_ordered(const struct gcap_khost *);
}

/* the host build's entry point, as gcap_khost_entry() returns it */
typedef uint32_t (*host_entry_fn)(const struct gcap_kpkt *, struct gcap_kstate *);
extern "C" host_entry_fn gcap_khost_entry(const struct gcap_khost *);

#define CK(x)                                                         \
	do {                                                          \
		cudaError_t e_ = (x);                                 \
		if (e_ != cudaSuccess) {                              \
			fprintf(stderr, "kernel_bench: %s: %s\n", #x, \
				cudaGetErrorString(e_));              \
			exit(2);                                      \
		}                                                     \
	} while (0)

/* One thread per packet, as the gpu executor runs a chunk: an ordered
 * kernel (GCAP_KERNEL_ORDERED, which kernel_bench.sh defines when the
 * source has gcap_kernel_order) runs each block's packets that share an
 * order key one round after the other, so its cost is measured. */
__global__ void
run_all(const struct gcap_kpkt *p, unsigned n, struct gcap_kstate *st, uint32_t *v)
{
	__shared__ uint64_t keys[1024];
	__shared__ uint32_t mx;
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	uint32_t r = gcap_kernel_block_run(i < n, i < n ? &p[i] : p, st, keys, &mx);

	if (i < n)
		v[i] = r;
}

static double
now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

struct pcap_in {
	uint8_t *raw;
	unsigned n;
	uint64_t *off;
	uint32_t *cap, *wire;
	uint64_t *ts;
};

/* A minimal pcap reader (either byte order, us or ns). */
static void
read_pcap(const char *path, struct pcap_in *in)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		exit(2);
	}
	fseek(f, 0, SEEK_END);
	long sz = ftell(f);
	fseek(f, 0, SEEK_SET);
	if (sz < 24) {
		fprintf(stderr, "%s: not a pcap\n", path);
		exit(2);
	}
	in->raw = (uint8_t *)malloc(sz);
	if (fread(in->raw, 1, sz, f) != (size_t)sz) {
		perror("read");
		exit(2);
	}
	fclose(f);
	uint32_t magic;
	memcpy(&magic, in->raw, 4);
	bool swap = magic == 0xd4c3b2a1 || magic == 0x4d3cb2a1;
	bool ns = magic == 0xa1b23c4d || magic == 0x4d3cb2a1;
	size_t o = 24;
	unsigned n = 0, cap = 1024;
	in->off = (uint64_t *)malloc(cap * 8);
	in->cap = (uint32_t *)malloc(cap * 4);
	in->wire = (uint32_t *)malloc(cap * 4);
	in->ts = (uint64_t *)malloc(cap * 8);
	while (o + 16 <= (size_t)sz) {
		uint32_t h[4];
		memcpy(h, in->raw + o, 16);
		if (swap)
			for (int i = 0; i < 4; i++)
				h[i] = __builtin_bswap32(h[i]);
		if (o + 16 + h[2] > (size_t)sz)
			break;
		if (n == cap) {
			cap *= 2;
			in->off = (uint64_t *)realloc(in->off, cap * 8);
			in->cap = (uint32_t *)realloc(in->cap, cap * 4);
			in->wire = (uint32_t *)realloc(in->wire, cap * 4);
			in->ts = (uint64_t *)realloc(in->ts, cap * 8);
		}
		in->off[n] = o + 16;
		in->cap[n] = h[2];
		in->wire[n] = h[3];
		in->ts[n] =
			(uint64_t)h[0] * 1000000000ull + (uint64_t)h[1] * (ns ? 1 : 1000);
		n++;
		o += 16 + h[2];
	}
	if (!n) {
		fprintf(stderr, "%s: no packets\n", path);
		exit(2);
	}
	in->n = n;
}

static char *
report(struct gcap_khost *k, const void *st)
{
	char *t = NULL;
	size_t l = 0;
	FILE *f = open_memstream(&t, &l);
	gcap_khost_report_json(k, f, st);
	fclose(f);
	return t;
}

/* ---- CPU: N threads over contiguous slices, one shared state ---- */

struct cpu_run {
	host_entry_fn entry;
	struct gcap_kstate *st;
	const struct gcap_kpkt *p;
	uint32_t *v;
	unsigned n, threads, ncpu;
	pthread_barrier_t go;
};

struct cpu_thr {
	struct cpu_run *r;
	unsigned id;
	double t0, t1; /* this thread's start (after the barrier) and end */
};

static void *
cpu_worker(void *arg)
{
	struct cpu_thr *t = (struct cpu_thr *)arg;
	struct cpu_run *r = t->r;
	unsigned lo = (unsigned)((uint64_t)r->n * t->id / r->threads);
	unsigned hi = (unsigned)((uint64_t)r->n * (t->id + 1) / r->threads);
	cpu_set_t cs;
	CPU_ZERO(&cs);
	CPU_SET(t->id % r->ncpu, &cs);
	pthread_setaffinity_np(pthread_self(), sizeof(cs), &cs);
	pthread_barrier_wait(&r->go);
	t->t0 = now();
	for (unsigned i = lo; i < hi; i++)
		r->v[i] = r->entry(&r->p[i], r->st);
	t->t1 = now();
	return NULL;
}

/* One pass on `threads` threads; returns seconds from the first thread's
 * start to the last thread's end, as the threads saw them (the main thread
 * may share a core with a worker and wake late: it does not time). */
static double
cpu_pass(struct cpu_run *r, unsigned threads)
{
	pthread_t tid[64];
	struct cpu_thr th[64];
	r->threads = threads;
	pthread_barrier_init(&r->go, NULL, threads + 1);
	for (unsigned t = 0; t < threads; t++) {
		th[t].r = r;
		th[t].id = t;
		if (pthread_create(&tid[t], NULL, cpu_worker, &th[t]) != 0) {
			perror("pthread_create");
			exit(2);
		}
	}
	pthread_barrier_wait(&r->go);
	double t0 = 1e300, t1 = 0;
	for (unsigned t = 0; t < threads; t++) {
		pthread_join(tid[t], NULL);
		t0 = th[t].t0 < t0 ? th[t].t0 : t0;
		t1 = th[t].t1 > t1 ? th[t].t1 : t1;
	}
	double dt = t1 - t0;
	pthread_barrier_destroy(&r->go);
	return dt;
}

static unsigned
count_captured(const uint32_t *v, unsigned n)
{
	unsigned c = 0;
	for (unsigned i = 0; i < n; i++)
		c += (v[i] & GCAP_CAPTURE) != 0;
	return c;
}

struct result {
	double mpps;
	unsigned captured;
	bool report_same;
	bool ran;
};

static void
usage(const char *me)
{
	fprintf(stderr,
		"usage: %s [--cpu-only] [--packets N] [--snap N | --full] [--reps R]\n"
		"          [--threads N] [--name NAME] FILE.pcap KERNEL.c [ARG]\n"
		"  --packets N  replicate the pcap to N packets (default 4194304)\n"
		"  --snap N     cut every packet to N captured bytes (default 1514)\n"
		"  --full       keep full captured lengths\n"
		"  --reps R     best of R timed passes per mode (default 3)\n"
		"  --threads N  CPU threads (default nproc, at most 16)\n"
		"  --cpu-only   no GPU needed: the CPU modes only\n",
		me);
	exit(2);
}

static const char *
json_str(char *buf, size_t sz, const char *s)
{
	size_t o = 0;
	for (; *s && o + 7 < sz; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			buf[o++] = '\\';
			buf[o++] = (char)c;
		} else if (c < 0x20) {
			o += snprintf(buf + o, sz - o, "\\u%04x", c);
		} else {
			buf[o++] = (char)c;
		}
	}
	buf[o] = '\0';
	return buf;
}

int
main(int argc, char **argv)
{
	bool cpu_only = false;
	unsigned long npk = 4194304, snap = 1514;
	unsigned reps = 3, threads = 0;
	const char *name = NULL;
	int a = 1;
	for (; a < argc && argv[a][0] == '-' && argv[a][1] == '-'; a++) {
		const char *o = argv[a];
		const char *val = a + 1 < argc ? argv[a + 1] : NULL;
		if (!strcmp(o, "--cpu-only"))
			cpu_only = true;
		else if (!strcmp(o, "--full"))
			snap = 0;
		else if (!strcmp(o, "--packets") && val)
			npk = strtoul(val, NULL, 0), a++;
		else if (!strcmp(o, "--snap") && val)
			snap = strtoul(val, NULL, 0), a++;
		else if (!strcmp(o, "--reps") && val)
			reps = (unsigned)strtoul(val, NULL, 0), a++;
		else if (!strcmp(o, "--threads") && val)
			threads = (unsigned)strtoul(val, NULL, 0), a++;
		else if (!strcmp(o, "--name") && val)
			name = val, a++;
		else
			usage(argv[0]);
	}
	if (argc - a < 2 || npk == 0 || npk > 0xffffffffull || reps == 0)
		usage(argv[0]);
	const char *pcap = argv[a], *kfile = argv[a + 1];
	const char *arg = argc - a > 2 ? argv[a + 2] : NULL;
	if (!name) {
		const char *b = strrchr(kfile, '/');
		static char nb[128];
		snprintf(nb, sizeof(nb), "%s", b ? b + 1 : kfile);
		char *dot = strrchr(nb, '.');
		if (dot)
			*dot = '\0';
		name = nb;
	}

	unsigned ncpu = (unsigned)sysconf(_SC_NPROCESSORS_ONLN);
	if (!threads)
		threads = ncpu < 16 ? ncpu : 16;
	if (threads > 64)
		threads = 64;

	/* the GPU, or exit 77 */
	char gpu_name[256] = "none";
	size_t l2 = 0;
	if (!cpu_only) {
		int nd = 0;
		cudaError_t e = cudaGetDeviceCount(&nd);
		if (e != cudaSuccess || nd == 0) {
			fprintf(stderr,
				"kernel_bench: no GPU (%s); --cpu-only runs "
				"the CPU modes alone\n",
				e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
			return 77;
		}
		CK(cudaSetDeviceFlags(cudaDeviceMapHost));
		cudaDeviceProp prop;
		CK(cudaGetDeviceProperties(&prop, 0));
		snprintf(gpu_name, sizeof(gpu_name), "%s", prop.name);
		l2 = (size_t)prop.l2CacheSize;
	}

	char cpu_model[256] = "unknown";
	FILE *ci = fopen("/proc/cpuinfo", "r");
	if (ci) {
		char line[512];
		while (fgets(line, sizeof(line), ci))
			if (!strncmp(line, "model name", 10)) {
				char *c = strchr(line, ':');
				if (c) {
					c += 1 + strspn(c + 1, " \t");
					c[strcspn(c, "\n")] = '\0';
					snprintf(cpu_model, sizeof(cpu_model), "%s", c);
				}
				break;
			}
		fclose(ci);
	}
	const char *commit = getenv("GCAP_COMMIT");
	if (!commit || !*commit)
		commit = "unknown";

	/* the kernel, host build */
	char eb[512];
	struct gcap_khost *k = gcap_khost_load(kfile, arg, eb);
	if (!k) {
		fprintf(stderr, "kernel_bench: %s\n", eb);
		return 2;
	}
#ifdef GCAP_KERNEL_ORDERED
	const bool ordered_build = true;
#else
	const bool ordered_build = false;
#endif
	if (gcap_khost_ordered(k) != ordered_build) {
		fprintf(stderr,
			"kernel_bench: %s %s gcap_kernel_order but the "
			"device build was made %s GCAP_KERNEL_ORDERED\n",
			kfile, ordered_build ? "lacks" : "defines",
			ordered_build ? "with" : "without");
		return 2;
	}
	size_t ss = gcap_khost_state_size(k);
	if (ss != sizeof(struct gcap_kstate)) {
		fprintf(stderr, "kernel_bench: state size: host %zu, device build %zu\n",
			ss, sizeof(struct gcap_kstate));
		return 2;
	}
	struct gcap_kstate *hst = (struct gcap_kstate *)gcap_khost_state(k);
	void *st0 = malloc(ss);
	memcpy(st0, hst, ss); /* the initialised state */

	/* the packets, replicated to npk, each 8-byte aligned */
	struct pcap_in in;
	read_pcap(pcap, &in);
	unsigned n = (unsigned)npk;
	uint64_t bytes = 0, capbytes = 0;
	for (unsigned i = 0; i < n; i++) {
		uint32_t c = in.cap[i % in.n];
		if (snap && c > snap)
			c = (uint32_t)snap;
		capbytes += c;
		bytes += (c + 7) & ~7u;
	}
	uint8_t *hbuf;
	if (cpu_only) {
		hbuf = (uint8_t *)aligned_alloc(4096, (bytes + 4095) & ~4095ull);
		if (!hbuf) {
			perror("aligned_alloc");
			return 2;
		}
	} else {
		CK(cudaHostAlloc((void **)&hbuf, bytes, cudaHostAllocMapped));
	}
	struct gcap_kpkt *hp = (struct gcap_kpkt *)calloc(n, sizeof(*hp));
	uint64_t *off = (uint64_t *)malloc((size_t)n * 8);
	if (!hp || !off) {
		perror("calloc");
		return 2;
	}
	uint64_t o = 0, ts_span = in.ts[in.n - 1] - in.ts[0] + 1000;
	for (unsigned i = 0; i < n; i++) {
		unsigned j = i % in.n;
		uint32_t c = in.cap[j];
		if (snap && c > snap)
			c = (uint32_t)snap;
		memcpy(hbuf + o, in.raw + in.off[j], c);
		off[i] = o;
		hp[i].data = hbuf + o;
		hp[i].caplen = c;
		hp[i].wirelen = in.wire[j] > c ? in.wire[j] : c;
		hp[i].ts_ns = in.ts[j] + (uint64_t)(i / in.n) * ts_span;
		hp[i].seq = i;
		o += (c + 7) & ~7u;
	}
	uint32_t *vc = (uint32_t *)malloc((size_t)n * 4);
	uint32_t *vg = (uint32_t *)malloc((size_t)n * 4);

	/* CPU: 1 thread first (the reference report), then N */
	struct cpu_run cr;
	cr.entry = gcap_khost_entry(k);
	cr.st = hst;
	cr.p = hp;
	cr.v = vc;
	cr.n = n;
	cr.ncpu = ncpu ? ncpu : 1;
	struct result r1 = {}, rn = {}, rv = {}, rp = {};
	char *ref = NULL;
	unsigned tc[2] = { 1, threads };
	struct result *rc[2] = { &r1, &rn };
	for (int m = 0; m < 2; m++) {
		double best = 1e30;
		for (unsigned r = 0; r < reps; r++) {
			memcpy(hst, st0, ss);
			double dt = cpu_pass(&cr, tc[m]);
			if (dt < best)
				best = dt;
		}
		rc[m]->mpps = n / best / 1e6;
		rc[m]->captured = count_captured(vc, n);
		char *rep = report(k, NULL);
		if (!ref) {
			ref = rep;
			rc[m]->report_same = true;
		} else {
			rc[m]->report_same = !strcmp(ref, rep);
			if (!rc[m]->report_same)
				fprintf(stderr,
					"kernel_bench: %s: CPU %u threads report "
					"differs:\n"
					"--- 1 thread\n%s--- %u threads\n%s",
					name, tc[m], ref, tc[m], rep);
			free(rep);
		}
		rc[m]->ran = true;
	}

	/* GPU: VRAM, then pinned mapped host memory */
	if (!cpu_only) {
		struct gcap_kstate *dst;
		uint32_t *dv;
		uint8_t *flush = NULL;
		size_t flush_sz = l2 ? 4 * l2 : (size_t)256 << 20;
		CK(cudaMalloc(&dst, ss));
		CK(cudaMalloc(&dv, (size_t)n * 4));
		CK(cudaMalloc(&flush, flush_sz));
		cudaEvent_t e0, e1;
		CK(cudaEventCreate(&e0));
		CK(cudaEventCreate(&e1));

		/* descriptors: staging copy with the data pointers of each mode */
		struct gcap_kpkt *sp =
			(struct gcap_kpkt *)malloc((size_t)n * sizeof(*sp));
		memcpy(sp, hp, (size_t)n * sizeof(*sp));

		/* VRAM */
		uint8_t *dbuf;
		struct gcap_kpkt *dp;
		CK(cudaMalloc(&dbuf, bytes));
		CK(cudaMemcpy(dbuf, hbuf, bytes, cudaMemcpyHostToDevice));
		for (unsigned i = 0; i < n; i++)
			sp[i].data = dbuf + off[i];
		CK(cudaMalloc(&dp, (size_t)n * sizeof(*dp)));
		CK(cudaMemcpy(dp, sp, (size_t)n * sizeof(*dp), cudaMemcpyHostToDevice));

		/* pinned: descriptors in mapped host memory too */
		uint8_t *mbuf;
		struct gcap_kpkt *hpd, *mp;
		CK(cudaHostGetDevicePointer((void **)&mbuf, hbuf, 0));
		CK(cudaHostAlloc((void **)&hpd, (size_t)n * sizeof(*hpd),
				 cudaHostAllocMapped));
		for (unsigned i = 0; i < n; i++) {
			hpd[i] = hp[i];
			hpd[i].data = mbuf + off[i];
		}
		CK(cudaHostGetDevicePointer((void **)&mp, hpd, 0));
		free(sp);

		struct gcap_kpkt *modes[2] = { dp, mp };
		struct result *rg[2] = { &rv, &rp };
		void *gst = malloc(ss);
		const unsigned T = 256;
		for (int m = 0; m < 2; m++) {
			float best = 1e30f;
			CK(cudaMemcpy(dst, st0, ss, cudaMemcpyHostToDevice));
			run_all<<<(n + T - 1) / T, T>>>(modes[m], n, dst,
							dv); /* warm-up */
			CK(cudaGetLastError());
			CK(cudaDeviceSynchronize());
			for (unsigned r = 0; r < reps; r++) {
				CK(cudaMemcpy(dst, st0, ss, cudaMemcpyHostToDevice));
				CK(cudaMemset(flush, r & 0xff, flush_sz));
				CK(cudaEventRecord(e0));
				run_all<<<(n + T - 1) / T, T>>>(modes[m], n, dst, dv);
				CK(cudaEventRecord(e1));
				CK(cudaGetLastError());
				CK(cudaEventSynchronize(e1));
				float ms;
				CK(cudaEventElapsedTime(&ms, e0, e1));
				if (ms < best)
					best = ms;
			}
			rg[m]->mpps = n / (best / 1e3) / 1e6;
			CK(cudaMemcpy(vg, dv, (size_t)n * 4, cudaMemcpyDeviceToHost));
			rg[m]->captured = count_captured(vg, n);
			CK(cudaMemcpy(gst, dst, ss, cudaMemcpyDeviceToHost));
			char *rep = report(k, gst);
			rg[m]->report_same = !strcmp(ref, rep);
			if (!rg[m]->report_same)
				fprintf(stderr,
					"kernel_bench: %s: GPU (%s) report differs:\n"
					"--- cpu 1 thread\n%s--- gpu\n%s",
					name, m ? "pinned" : "VRAM", ref, rep);
			free(rep);
			rg[m]->ran = true;
		}
	}

	/* output */
	double target = !strcmp(name, "sigmatch") || !strcmp(name, "flowfirst") ? 20 : 0;
	double ratio_v = rv.ran ? rv.mpps / rn.mpps : 0;
	double ratio_p = rp.ran ? rp.mpps / rn.mpps : 0;
	double mean = (double)capbytes / n;
	bool ok = r1.report_same && rn.report_same && (!rv.ran || rv.report_same) &&
		  (!rp.ran || rp.report_same);
	char snapbuf[32];
	snprintf(snapbuf, sizeof(snapbuf), "%lu", snap);

	printf("Machine: %u CPUs (%s), GPU %s, commit %s\n", ncpu, cpu_model, gpu_name,
	       commit);
	char v1[32] = "-", v2[32] = "-", v3[32] = "-", v4[32] = "-", tg[48] = "-";
	if (rv.ran) {
		snprintf(v1, sizeof(v1), "%.1f", rv.mpps);
		snprintf(v2, sizeof(v2), "%.1f", rp.mpps);
		snprintf(v3, sizeof(v3), "%.1fx", ratio_v);
		snprintf(v4, sizeof(v4), "%.1fx", ratio_p);
	}
	if (target > 0)
		snprintf(tg, sizeof(tg), ">= %.0fx: %s", target,
			 rv.ran ? (ratio_v >= target ? "met" : "NOT met") : "no GPU");
	printf("| %s | %s | %u | %.0f | %s | %s | %.1f (%u thr) | %.2f | %s | %s | %s | "
	       "%s |\n",
	       name, arg ? arg : "", n, mean, v1, v2, rn.mpps, threads, r1.mpps, v3, v4,
	       tg, ok ? "identical" : "DIFFERENT");

	char ja[1024], jc[512], jg[512], jm[512];
	printf("{\"bench\":\"kernel\",\"kernel\":\"%s\",\"arg\":\"%s\",\"commit\":\"%s\","
	       "\"nproc\":%u,\"cpu_model\":\"%s\",\"gpu\":\"%s\",\"packets\":%u,"
	       "\"pcap_packets\":%u,\"snap\":%s,\"mean_caplen\":%.1f,\"reps\":%u,"
	       "\"cpu_threads\":%u,\"cpu_n_mpps\":%.3f,\"cpu_1_mpps\":%.3f,",
	       name, json_str(ja, sizeof(ja), arg ? arg : ""),
	       json_str(jm, sizeof(jm), commit), ncpu,
	       json_str(jc, sizeof(jc), cpu_model), json_str(jg, sizeof(jg), gpu_name), n,
	       in.n, snap ? snapbuf : "null", mean, reps, threads, rn.mpps, r1.mpps);
	if (rv.ran)
		printf("\"gpu_vram_mpps\":%.3f,\"gpu_pinned_mpps\":%.3f,"
		       "\"ratio_vram_cpu_n\":%.2f,\"ratio_pinned_cpu_n\":%.2f,",
		       rv.mpps, rp.mpps, ratio_v, ratio_p);
	else
		printf("\"gpu_vram_mpps\":null,\"gpu_pinned_mpps\":null,"
		       "\"ratio_vram_cpu_n\":null,\"ratio_pinned_cpu_n\":null,");
	if (target > 0)
		printf("\"target_ratio\":%.0f,\"target_met\":%s,", target,
		       rv.ran ? (ratio_v >= target ? "true" : "false") : "null");
	else
		printf("\"target_ratio\":null,\"target_met\":null,");
	printf("\"captured\":{\"cpu_1\":%u,\"cpu_n\":%u", r1.captured, rn.captured);
	if (rv.ran)
		printf(",\"gpu_vram\":%u,\"gpu_pinned\":%u", rv.captured, rp.captured);
	printf("},\"reports_identical\":%s}\n", ok ? "true" : "false");
	return ok ? 0 : 1;
}
