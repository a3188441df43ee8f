/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bpf_bench internals shared by the libpcap side of the program: main and
 * options (bpf_bench.c), the packet buffer (bpf_bench_pkts.c), the filter
 * sets and their reference verdicts (bpf_bench_sets.c), the CPU engines
 * (bpf_bench_cpu.c), the GPU engines (bpf_bench_gpu.c, bpf_bench_nvrtc.c)
 * and the report (bpf_bench_report.c). It includes libpcap's headers, so
 * the rte_bpf engine (bpf_bench_rte.c) sees only bpf_bench.h.
 *
 * The calls between the parts go one way: main calls every part; the
 * engines call the sets (expected matches) and the report (results); the
 * GPU engines call NVRTC; packets, sets, NVRTC and the report call no
 * other part. What the report prints of the engines' work (results,
 * NVRTC times, the GPU's description) lives in struct bb_ctx.
 */
#ifndef GCAP_BENCH_BPF_INTERNAL_H
#define GCAP_BENCH_BPF_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <pcap/pcap.h>

#include "gpucap/gcap_bpfc.h"
#include "gpucap/gcap_common.h"

#include "bench_clock.h"
#include "bpf_bench.h"

#define BB_MAXP GCAP_BPFC_MAX_PROGS
#define BB_NSETS 6

struct bb_opts {
	const char *pcap;
	const char *json;
	int cpu_only;
	int no_rte;
	int no_flush;
	size_t mb;
	uint32_t snap;
	unsigned threads;
	unsigned reps;
	double cpu_secs;
	int arch; /* NVRTC target without a GPU (--cpu-only), e.g. 90 */
};

/* the packets: the pcap, and the buffer of its cyclic copies */
struct bb_pkts {
	unsigned nbase;         /* packets in the pcap */
	uint8_t **bdata;        /* their bytes */
	uint32_t *bcap, *bwire; /* stored caplen (after --snap), wirelen */
	uint64_t n;             /* packets in the buffer (cyclic copies) */
	size_t size;            /* bytes of the buffer */
	size_t used;            /* bytes filled */
	uint8_t *buf;           /* descriptors at 0, then bytes */
	struct gcap_bench_desc *desc;
	uint64_t wire_bytes, cap_bytes;
	int pinned; /* buf from cuMemHostAlloc */
};

/* one filter set: up to BB_MAXP programs, one bit each in a packet's mask */
struct bb_set {
	const char *name; /* short name */
	char *label;      /* expression or description */
	unsigned np;
	struct bpf_program progs[BB_MAXP];
	char *exprs[BB_MAXP];
	unsigned insns;               /* total BPF instructions */
	uint64_t *ref;                /* bpf_filter() mask per base packet */
	uint64_t *pre_any, *pre_bits; /* prefix sums over base packets */
	struct gcap_bench_rte rte[BB_MAXP];
	int rte_ok;
	char rte_err[256];
};

enum bb_engine {
	E_GPU_C_VRAM,
	E_GPU_C_PIN,
	E_GPU_I_VRAM,
	E_GPU_I_PIN,
	E_PCAP_1,
	E_PCAP_N,
	E_RTE_1,
	E_RTE_N,
	E_COUNT
};

/* one engine's result on one set */
struct bb_res {
	int state; /* 0 not run, 1 ok, -1 wrong verdicts, -2 failed */
	double mpps, gbps, secs;
	uint64_t pkts;
	unsigned threads;
	char why[160];
};

/* what NVRTC did for one source */
struct bb_rtc {
	int ok;
	size_t src_len, cubin_len;
	double cold_ms, hit_ms, modload_ms;
	int hit;
	char err[GCAP_ERRBUF_SIZE];
};

/* the GPU, as the report describes it */
struct bb_gpuinfo {
	char name[256];
	int drv; /* cuDriverGetVersion */
	int sms, ccmaj, ccmin, l2;
	size_t totalmem;
};

struct bb_ctx {
	struct bb_opts o;
	struct bb_pkts pk;
	struct bb_set sets[BB_NSETS];
	int linktype;
	int *cpus;
	unsigned ncpus;
	int have_gpu;
	struct bb_gpuinfo gpu;
	char layout[64];
	struct bb_res res[BB_NSETS][E_COUNT];
	struct bb_rtc rtc[BB_NSETS]; /* compiled filter of each set */
	struct bb_rtc rtc_i;         /* interpreter kernel */
	int bad;                     /* a wrong verdict or an error somewhere */
};

/* ---- packets (bpf_bench_pkts.c) ---- */

/** Read a pcap into pk (base packets, caplen cut at snap when not 0).
 *  @return 0; -1 with a message on stderr. */
int
gcap_bench_pkts_load(const char *path, uint32_t snap, struct bb_pkts *pk, int *linktype);

/** @return how many packets (cyclic copies) fit in size bytes. */
uint64_t gcap_bench_pkts_fit(const struct bb_pkts *pk, size_t size);

/** pk->buf: pk->size bytes of anonymous memory (no GPU).
 *  @return 0; -1 with a message on stderr. */
int gcap_bench_pkts_map(struct bb_pkts *pk, size_t mb);

/** Lay pk->n packets out in pk->buf: descriptors, then the bytes. */
void gcap_bench_pkts_fill(struct bb_pkts *pk);

/* ---- filter sets (bpf_bench_sets.c) ---- */

/** Compile the BB_NSETS filter sets for linktype.
 *  @return 0; -1 with a message on stderr. */
int gcap_bench_sets_make(struct bb_set *sets, int linktype);

/** bpf_filter()'s masks of every base packet, and their prefix sums.
 *  @return 0; -1 out of memory. */
int gcap_bench_set_ref(struct bb_set *s, const struct bb_pkts *pk);

/** Expected matches over the first k packets of the buffer. */
void gcap_bench_expect_prefix(const struct bb_set *s, const struct bb_pkts *pk,
			      uint64_t k, uint64_t *any, uint64_t *bits);

/** Expected matches over count packets from buffer index start, wrapping. */
void
gcap_bench_expect_range(const struct bb_set *s, const struct bb_pkts *pk, uint64_t start,
			uint64_t count, uint64_t *any, uint64_t *bits);

/* ---- CPU engines (bpf_bench_cpu.c) ---- */

/** Load a set's programs into rte_bpf and check them on every base packet
 *  (s->rte_ok: 1 ok, -1 wrong verdicts, 0 failed; s->rte_err says why). */
void gcap_bench_rte_prepare(const struct bb_ctx *c, struct bb_set *s);

/** Time bpf_filter() (rte 0) or rte_bpf (rte 1) on set si, nthreads
 *  threads; records the result as engine e. */
void gcap_bench_cpu_engine(struct bb_ctx *c, unsigned si, int rte, unsigned nthreads,
			   enum bb_engine e);

/* ---- NVRTC (bpf_bench_nvrtc.c) ---- */

/** Compile the interpreter kernel for sm_<maj><min> (cold, then cache hit).
 *  @return the CUBIN (malloc'd, *len bytes) or NULL (rt->err says why). */
void *gcap_bench_nvrtc_interp(int maj, int min, struct bb_rtc *rt, size_t *len);

/** Translate set s to C and compile it as the compiled-filter kernel.
 *  @return -1 when the translation fails (rt->err says why); else 0 with
 *          *img the CUBIN (malloc'd, *len bytes) or NULL (rt->err). */
int gcap_bench_nvrtc_compiled(const struct bb_set *s, int maj, int min, struct bb_rtc *rt,
			      void **img, size_t *len);

/* ---- GPU engines (bpf_bench_gpu.c) ---- */

/** Load the CUDA driver, open GPU 0, fill c->gpu.
 *  @return 0; -1 with a message in why when there is no usable GPU. */
int gcap_bench_gpu_open(struct bb_ctx *c, char *why);

/** pk.buf: pk.size bytes of pinned, device-mapped host memory. */
void gcap_bench_gpu_pin(struct bb_ctx *c);

/** The filled buffer copied to VRAM; the L2 scratch, counters, masks. */
void gcap_bench_gpu_upload(struct bb_ctx *c);

/** NVRTC for every set and the interpreter (the GPU's architecture, or
 *  --arch without one); with a GPU, load the modules.
 *  @return 0; -1 when NVRTC cannot be loaded (message in why). */
int gcap_bench_gpu_compile(struct bb_ctx *c, char *why);

/** Check and time GPU engine e on set si; records the result. */
void gcap_bench_gpu_engine(struct bb_ctx *c, unsigned si, enum bb_engine e);

/* ---- report (bpf_bench_report.c) ---- */

/** Append JSON lines to path from now on. @return 0 or a negative errno. */
int gcap_bench_json_open(const char *path);

/** Close the JSON lines file (if open). */
void gcap_bench_json_close(void);

/** Store one engine's result (state as in struct bb_res) and write its JSON
 *  line; a negative state marks the run bad. */
void gcap_bench_record(struct bb_ctx *c, unsigned si, enum bb_engine e, int state,
		       uint64_t pkts, double secs, uint64_t bytes, unsigned threads,
		       const char *why);

/** The report's head: commit, machine, GPU, packets, buffer, threads. */
void gcap_bench_head(const struct bb_ctx *c, unsigned nthr);

/** The tables: throughput, Gb/s, filter sets, NVRTC, targets. */
void gcap_bench_report(const struct bb_ctx *c, unsigned nthr);

#endif /* GCAP_BENCH_BPF_INTERNAL_H */
