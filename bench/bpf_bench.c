/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bpf_bench: filter throughput (issue 4, "Benchmark"). One process, the
 * same packets for every engine:
 *   - compiled GPU filter: libpcap BPF -> C (gcap_bpfc) -> NVRTC (gcap_rtc)
 *     -> one thread per packet, grid-stride, one atomic per block; over
 *     packets in VRAM and over the same packets in pinned host memory;
 *   - GPU interpreter: the same kernel shape with gcap_bpf_interp() over the
 *     programs in device memory;
 *   - libpcap bpf_filter() on 1 and N threads;
 *   - DPDK rte_bpf (cBPF converted to eBPF, JIT) on 1 and N threads.
 * Packets: a pcap replicated into one contiguous buffer (descriptor array
 * of offset/caplen/wirelen, then the bytes, 8-byte aligned). Several
 * filters give a 64-bit mask per packet. Every engine's verdicts are
 * checked against bpf_filter(): per packet on one copy of the pcap, and by
 * match counts on every timed run.
 *
 * Output: a markdown report on stdout, JSON lines with --json FILE.
 * Exit: 0; 1 on an error or a wrong verdict; 2 usage; 77 when the GPU
 * parts cannot run (no driver or GPU) and --cpu-only was not given.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>
#include <pcap/pcap.h>

#include "gcap_config.h"
#include "gpucap/gcap_bpfc.h"
#include "gpucap/gcap_filter.h"
#include "gpucap/gcap_rtc.h"

#include "bpf_bench.h"
#include "bpf_bench_interp_src.h" /* bb_interp_src: gcap_bpf_interp.h */

#define BB_MAXP GCAP_BPFC_MAX_PROGS
#define BB_NSETS 6
#define BB_BLOCK 256

/* ------------------------------------------------------------------ */
/* options, output */

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

static FILE *g_json;

static void
jsonl(const char *fmt, ...)
{
	va_list ap;

	if (g_json == NULL)
		return;
	va_start(ap, fmt);
	vfprintf(g_json, fmt, ap);
	va_end(ap);
	fputc('\n', g_json);
	fflush(g_json);
}

/* a JSON string body: quotes and backslashes escaped */
static const char *
jstr(const char *s, char *buf, size_t len)
{
	size_t o = 0;

	for (; *s != '\0' && o + 3 < len; s++) {
		if (*s == '"' || *s == '\\')
			buf[o++] = '\\';
		buf[o++] = (char)((unsigned char)*s < 0x20 ? ' ' : *s);
	}
	buf[o] = '\0';
	return buf;
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------------ */
/* packets */

struct bb_pkts {
	unsigned nbase;          /* packets in the pcap */
	uint8_t **bdata;         /* their bytes */
	uint32_t *bcap, *bwire;  /* stored caplen (after --snap), wirelen */
	uint64_t n;              /* packets in the buffer (cyclic copies) */
	size_t size;             /* bytes of the buffer */
	size_t used;             /* bytes filled */
	uint8_t *buf;            /* descriptors at 0, then bytes */
	struct gcap_bench_desc *desc;
	uint64_t wire_bytes, cap_bytes;
	int pinned;              /* buf from cuMemHostAlloc */
};

static int
load_pcap(const char *path, uint32_t snap, struct bb_pkts *pk, int *linktype)
{
	char eb[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *data;
	unsigned cap = 0;
	pcap_t *p;
	int rc;

	p = pcap_open_offline(path, eb);
	if (p == NULL) {
		fprintf(stderr, "bpf_bench: %s\n", eb);
		return -1;
	}
	*linktype = pcap_datalink(p);
	while ((rc = pcap_next_ex(p, &h, &data)) == 1) {
		uint32_t cl = h->caplen;

		if (snap != 0 && cl > snap)
			cl = snap;
		if (pk->nbase == cap) {
			cap = cap ? cap * 2 : 4096;
			pk->bdata = realloc(pk->bdata, cap * sizeof(*pk->bdata));
			pk->bcap = realloc(pk->bcap, cap * sizeof(*pk->bcap));
			pk->bwire = realloc(pk->bwire, cap * sizeof(*pk->bwire));
			if (!pk->bdata || !pk->bcap || !pk->bwire)
				goto nomem;
		}
		pk->bdata[pk->nbase] = malloc(cl ? cl : 1);
		if (pk->bdata[pk->nbase] == NULL)
			goto nomem;
		memcpy(pk->bdata[pk->nbase], data, cl);
		pk->bcap[pk->nbase] = cl;
		pk->bwire[pk->nbase] = h->len;
		pk->nbase++;
	}
	if (rc == -1)
		fprintf(stderr, "bpf_bench: %s: %s (using the %u packets before)\n",
			path, pcap_geterr(p), pk->nbase);
	pcap_close(p);
	if (pk->nbase == 0) {
		fprintf(stderr, "bpf_bench: %s: no packets\n", path);
		return -1;
	}
	return 0;
nomem:
	fprintf(stderr, "bpf_bench: out of memory reading %s\n", path);
	pcap_close(p);
	return -1;
}

static size_t
align8(size_t x)
{
	return (x + 7) & ~(size_t)7;
}

/* how many cyclic copies fit in size bytes: descriptors + aligned bytes */
static uint64_t
count_fit(const struct bb_pkts *pk, size_t size, size_t *bytes_out)
{
	size_t per_copy = 0, bytes = 0, fixed = 4096;
	uint64_t n, copies;
	unsigned i;

	for (i = 0; i < pk->nbase; i++)
		per_copy += sizeof(struct gcap_bench_desc) + align8(pk->bcap[i]);
	copies = size > fixed ? (size - fixed) / per_copy : 0;
	n = copies * pk->nbase;
	bytes = copies * per_copy;
	for (i = 0; i < pk->nbase; i++) {
		size_t b = sizeof(struct gcap_bench_desc) + align8(pk->bcap[i]);

		if (fixed + bytes + b > size)
			break;
		bytes += b;
		n++;
	}
	*bytes_out = bytes;
	return n;
}

static void
fill_buffer(struct bb_pkts *pk)
{
	size_t off = align8(pk->n * sizeof(struct gcap_bench_desc)), first, per;
	uint64_t j, k;
	unsigned b;

	off = (off + 255) & ~(size_t)255;
	first = off;
	pk->desc = (struct gcap_bench_desc *)pk->buf;
	/* the first copy packet by packet, the others as whole blocks */
	for (b = 0; b < pk->nbase && b < pk->n; b++) {
		uint32_t cl = pk->bcap[b];

		pk->desc[b].off = off;
		pk->desc[b].caplen = cl;
		pk->desc[b].wirelen = pk->bwire[b];
		memcpy(pk->buf + off, pk->bdata[b], cl);
		memset(pk->buf + off + cl, 0, align8(cl) - cl);
		off += align8(cl);
	}
	per = off - first;
	for (j = pk->nbase; j < pk->n; j += pk->nbase) {
		uint64_t cnt = pk->n - j < pk->nbase ? pk->n - j : pk->nbase;
		size_t delta = (size_t)(j / pk->nbase) * per;
		size_t len = cnt == pk->nbase ? per :
			     (size_t)(pk->desc[cnt - 1].off - first +
				      align8(pk->desc[cnt - 1].caplen));

		memcpy(pk->buf + first + delta, pk->buf + first, len);
		for (k = 0; k < cnt; k++) {
			pk->desc[j + k] = pk->desc[k];
			pk->desc[j + k].off += delta;
		}
		off = first + delta + len;
	}
	pk->wire_bytes = pk->cap_bytes = 0;
	for (b = 0; b < pk->nbase; b++) {
		uint64_t times = pk->n / pk->nbase + (b < pk->n % pk->nbase);

		pk->wire_bytes += times * pk->bwire[b];
		pk->cap_bytes += times * pk->bcap[b];
	}
	pk->used = off;
}

/* ------------------------------------------------------------------ */
/* filter sets */

struct bb_gset; /* GPU state of one set */

struct bb_set {
	const char *name;       /* short name */
	char *label;            /* expression or description */
	unsigned np;
	struct bpf_program progs[BB_MAXP];
	char *exprs[BB_MAXP];
	unsigned insns;         /* total BPF instructions */
	uint64_t *ref;          /* bpf_filter() mask per base packet */
	uint64_t *pre_any, *pre_bits; /* prefix sums over base packets */
	struct gcap_bench_rte rte[BB_MAXP];
	int rte_ok;
	char rte_err[256];
};

static const unsigned g_tcp_ports[16] = { 80, 443, 22, 21, 25, 110, 143, 23,
	139, 445, 3389, 8080, 179, 1723, 993, 5060 };
static const unsigned g_udp_ports[16] = { 53, 123, 161, 67, 500, 514, 520,
	1812, 5353, 137, 138, 69, 1900, 4500, 7000, 3784 };

/* distinct expression number i of the multi-filter sets */
static char *
multi_expr(unsigned i)
{
	char buf[128];

	switch (i % 4) {
	case 0:
		snprintf(buf, sizeof(buf), "tcp port %u", g_tcp_ports[i / 4]);
		break;
	case 1:
		snprintf(buf, sizeof(buf), "udp port %u", g_udp_ports[i / 4]);
		break;
	case 2:
		snprintf(buf, sizeof(buf), "host 10.0.%u.%u", i / 4, 1 + i);
		break;
	default:
		snprintf(buf, sizeof(buf), "net 192.168.%u.0/24", i / 4);
		break;
	}
	return strdup(buf);
}

static int
set_add(struct bb_set *s, char *expr, int linktype)
{
	char eb[GCAP_ERRBUF_SIZE];
	int rc;

	rc = gcap_filter_compile(expr, linktype, 262144, &s->progs[s->np], eb);
	if (rc != 0) {
		fprintf(stderr, "bpf_bench: filter '%s': %s\n", expr, eb);
		return -1;
	}
	if (gcap_bpfc_check(&s->progs[s->np], eb) != 0) {
		fprintf(stderr, "bpf_bench: filter '%s': %s\n", expr, eb);
		return -1;
	}
	s->exprs[s->np] = expr;
	s->insns += s->progs[s->np].bf_len;
	s->np++;
	return 0;
}

/* one long expression: host/port clauses joined with "or" until the program
 * has at least 100 instructions */
static char *
long_expr(int linktype)
{
	static char buf[8192];
	size_t o = 0;
	unsigned i;

	buf[0] = '\0';
	for (i = 0; i < 64; i++) {
		struct bpf_program p;
		char eb[GCAP_ERRBUF_SIZE];
		int ok;

		switch (i % 3) {
		case 0:
			o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%stcp port %u",
					      i ? " or " : "", g_tcp_ports[(i / 3) % 16]);
			break;
		case 1:
			o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%shost 172.16.%u.%u",
					      i ? " or " : "", i, 2 * i + 1);
			break;
		default:
			o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%sudp port %u",
					      i ? " or " : "", g_udp_ports[(i / 3) % 16]);
			break;
		}
		if (gcap_filter_compile(buf, linktype, 262144, &p, eb) != 0)
			return NULL;
		ok = p.bf_len >= 100;
		gcap_filter_free(&p);
		if (ok)
			return strdup(buf);
	}
	return NULL;
}

static int
make_sets(struct bb_set *sets, int linktype)
{
	char *lx = long_expr(linktype);
	unsigned i;

	memset(sets, 0, sizeof(*sets) * BB_NSETS);
	if (lx == NULL) {
		fprintf(stderr, "bpf_bench: could not build a filter of 100+ instructions\n");
		return -1;
	}
	sets[0].name = "ip";
	sets[1].name = "tcp80-udp53";
	sets[2].name = "long";
	sets[3].name = "multi-1";
	sets[4].name = "multi-8";
	sets[5].name = "multi-64";
	if (set_add(&sets[0], strdup("ip"), linktype) ||
	    set_add(&sets[1], strdup("tcp port 80 or udp port 53"), linktype) ||
	    set_add(&sets[2], lx, linktype))
		return -1;
	for (i = 0; i < 3; i++)
		sets[i].label = strdup(sets[i].exprs[0]);
	for (i = 0; i < 64; i++) {
		if (i < 1 && set_add(&sets[3], multi_expr(i), linktype))
			return -1;
		if (i < 8 && set_add(&sets[4], multi_expr(i), linktype))
			return -1;
		if (set_add(&sets[5], multi_expr(i), linktype))
			return -1;
	}
	sets[3].label = strdup(sets[3].exprs[0]);
	sets[4].label = strdup("8 filters: tcp port N / udp port N / host 10.0.x.y / net 192.168.x.0/24");
	sets[5].label = strdup("64 filters: tcp port N / udp port N / host 10.0.x.y / net 192.168.x.0/24");
	if (sets[2].insns < 100) {
		fprintf(stderr, "bpf_bench: long filter has only %u instructions\n",
			sets[2].insns);
		return -1;
	}
	return 0;
}

static uint64_t
pcap_mask(const struct bb_set *s, const uint8_t *p, uint32_t wirelen,
	  uint32_t caplen)
{
	uint64_t m = 0;
	unsigned k;

	for (k = 0; k < s->np; k++)
		if (bpf_filter(s->progs[k].bf_insns, p, wirelen, caplen) != 0)
			m |= 1ull << k;
	return m;
}

static int
make_ref(struct bb_set *s, const struct bb_pkts *pk)
{
	unsigned i;

	s->ref = calloc(pk->nbase, sizeof(*s->ref));
	s->pre_any = calloc(pk->nbase + 1u, sizeof(uint64_t));
	s->pre_bits = calloc(pk->nbase + 1u, sizeof(uint64_t));
	if (!s->ref || !s->pre_any || !s->pre_bits)
		return -1;
	for (i = 0; i < pk->nbase; i++) {
		s->ref[i] = pcap_mask(s, pk->bdata[i], pk->bwire[i], pk->bcap[i]);
		s->pre_any[i + 1] = s->pre_any[i] + (s->ref[i] != 0);
		s->pre_bits[i + 1] = s->pre_bits[i] +
				     (uint64_t)__builtin_popcountll(s->ref[i]);
	}
	return 0;
}

/* expected matches over the first k packets of the buffer */
static void
expect_prefix(const struct bb_set *s, const struct bb_pkts *pk, uint64_t k,
	      uint64_t *any, uint64_t *bits)
{
	uint64_t c = k / pk->nbase, r = k % pk->nbase;

	*any = c * s->pre_any[pk->nbase] + s->pre_any[r];
	*bits = c * s->pre_bits[pk->nbase] + s->pre_bits[r];
}

/* expected matches over count packets from buffer index start, wrapping */
static void
expect_range(const struct bb_set *s, const struct bb_pkts *pk, uint64_t start,
	     uint64_t count, uint64_t *any, uint64_t *bits)
{
	uint64_t j = start % pk->n, a0, b0, a1, b1;

	*any = *bits = 0;
	while (count > 0) {
		uint64_t run = pk->n - j < count ? pk->n - j : count;

		expect_prefix(s, pk, j, &a0, &b0);
		expect_prefix(s, pk, j + run, &a1, &b1);
		*any += a1 - a0;
		*bits += b1 - b0;
		count -= run;
		j = 0;
	}
}

/* ------------------------------------------------------------------ */
/* results */

enum bb_engine {
	E_GPU_C_VRAM, E_GPU_C_PIN, E_GPU_I_VRAM, E_GPU_I_PIN,
	E_PCAP_1, E_PCAP_N, E_RTE_1, E_RTE_N, E_COUNT
};

static const char *const g_eng_name[E_COUNT] = {
	"gpu-compiled-vram", "gpu-compiled-pinned", "gpu-interp-vram",
	"gpu-interp-pinned", "bpf_filter-1", "bpf_filter-N", "rte_bpf-1",
	"rte_bpf-N",
};

struct bb_res {
	int state;     /* 0 not run, 1 ok, -1 wrong verdicts, -2 failed */
	double mpps, gbps, secs;
	uint64_t pkts;
	unsigned threads;
	char why[160];
};

static struct bb_res g_res[BB_NSETS][E_COUNT];
static int g_bad; /* a wrong verdict or an error somewhere */

struct bb_ctx {
	struct bb_opts o;
	struct bb_pkts pk;
	struct bb_set sets[BB_NSETS];
	int linktype;
	int *cpus;
	unsigned ncpus;
	int have_gpu;
	char layout[64];
};

static void
record(struct bb_ctx *c, unsigned si, enum bb_engine e, int state,
       uint64_t pkts, double secs, uint64_t bytes, unsigned threads,
       const char *why)
{
	struct bb_res *r = &g_res[si][e];
	char b1[512], b2[256];

	r->state = state;
	r->pkts = pkts;
	r->secs = secs;
	r->threads = threads;
	r->mpps = secs > 0 ? (double)pkts / secs / 1e6 : 0;
	r->gbps = secs > 0 ? (double)bytes * 8 / secs / 1e9 : 0;
	snprintf(r->why, sizeof(r->why), "%s", why ? why : "");
	if (state < 0)
		g_bad = 1;
	jsonl("{\"type\":\"result\",\"layout\":\"%s\",\"set\":\"%s\",\"filter\":\"%s\","
	      "\"nprogs\":%u,\"insns\":%u,\"engine\":\"%s\",\"threads\":%u,"
	      "\"state\":\"%s\",\"pkts\":%" PRIu64 ",\"secs\":%.6f,\"mpps\":%.3f,"
	      "\"gbps_cap\":%.3f,\"note\":\"%s\"}",
	      c->layout, c->sets[si].name, jstr(c->sets[si].label, b1, sizeof(b1)),
	      c->sets[si].np, c->sets[si].insns, g_eng_name[e], threads,
	      state == 1 ? "ok" : state == -1 ? "wrong" : "failed", pkts, secs,
	      r->mpps, r->gbps, jstr(r->why, b2, sizeof(b2)));
}

/* wire bytes of count packets from index start */
static uint64_t
range_bytes(const struct bb_pkts *pk, uint64_t start, uint64_t count)
{
	/* exact enough: the mean over the buffer */
	return (uint64_t)((double)pk->cap_bytes / (double)pk->n * (double)count);
	(void)start;
}

/* ------------------------------------------------------------------ */
/* CPU engines */

struct bb_work {
	const struct bb_ctx *c;
	const struct bb_set *s;
	int rte;
	uint64_t start, count;
	uint64_t any, bits;
	double t0, t1;
	pthread_barrier_t *bar;
};

static void
pcap_count(const struct bb_set *s, const struct bb_pkts *pk, uint64_t start,
	   uint64_t count, uint64_t *any, uint64_t *bits)
{
	const struct gcap_bench_desc *d = pk->desc;
	const uint8_t *base = pk->buf;
	uint64_t j = start % pk->n, a = 0, b = 0;
	unsigned np = s->np;

	while (count > 0) {
		uint64_t run = pk->n - j < count ? pk->n - j : count, i;

		for (i = j; i < j + run; i++) {
			const u_char *p = base + d[i].off;
			uint64_t m = 0;
			unsigned k;

			for (k = 0; k < np; k++)
				if (bpf_filter(s->progs[k].bf_insns, p, d[i].wirelen,
					       d[i].caplen) != 0)
					m |= 1ull << k;
			a += m != 0;
			b += (uint64_t)__builtin_popcountll(m);
		}
		count -= run;
		j = 0;
	}
	*any += a;
	*bits += b;
}

static void *
cpu_worker(void *arg)
{
	struct bb_work *w = arg;

	pthread_barrier_wait(w->bar);
	w->t0 = now_s();
	if (w->rte)
		gcap_bench_rte_count(w->s->rte, w->s->np, w->c->pk.buf,
				     w->c->pk.desc, w->c->pk.n, w->start, w->count,
				     &w->any, &w->bits);
	else
		pcap_count(w->s, &w->c->pk, w->start, w->count, &w->any, &w->bits);
	w->t1 = now_s();
	return NULL;
}

/* run nthreads threads of per packets each; returns seconds (<0 on error) */
static double
cpu_sample(const struct bb_ctx *c, const struct bb_set *s, int rte,
	   unsigned nthreads, uint64_t per, uint64_t *any, uint64_t *bits,
	   uint64_t *eany, uint64_t *ebits)
{
	struct bb_work w[64];
	pthread_t th[64];
	pthread_barrier_t bar;
	double t0 = 1e300, t1 = 0;
	unsigned t;

	pthread_barrier_init(&bar, NULL, nthreads);
	*any = *bits = *eany = *ebits = 0;
	for (t = 0; t < nthreads; t++) {
		pthread_attr_t at;
		cpu_set_t cs;

		memset(&w[t], 0, sizeof(w[t]));
		w[t].c = c;
		w[t].s = s;
		w[t].rte = rte;
		/* threads start far apart in the buffer */
		w[t].start = (c->pk.n / nthreads) * t;
		w[t].count = per;
		w[t].bar = &bar;
		pthread_attr_init(&at);
		CPU_ZERO(&cs);
		CPU_SET(c->cpus[t % c->ncpus], &cs);
		pthread_attr_setaffinity_np(&at, sizeof(cs), &cs);
		if (pthread_create(&th[t], &at, cpu_worker, &w[t]) != 0) {
			fprintf(stderr, "bpf_bench: pthread_create failed\n");
			exit(1);
		}
		pthread_attr_destroy(&at);
	}
	for (t = 0; t < nthreads; t++) {
		uint64_t a, b;

		pthread_join(th[t], NULL);
		*any += w[t].any;
		*bits += w[t].bits;
		expect_range(s, &c->pk, w[t].start, w[t].count, &a, &b);
		*eany += a;
		*ebits += b;
		if (w[t].t0 < t0)
			t0 = w[t].t0;
		if (w[t].t1 > t1)
			t1 = w[t].t1;
	}
	pthread_barrier_destroy(&bar);
	return t1 - t0;
}

static void
cpu_engine(struct bb_ctx *c, unsigned si, int rte, unsigned nthreads,
	   enum bb_engine e)
{
	const struct bb_set *s = &c->sets[si];
	uint64_t any, bits, eany, ebits, per, cal;
	double secs, best = 0;
	unsigned r;
	char why[160];

	/* calibrate on one thread: per-thread packets for about cpu_secs */
	cal = c->pk.n < 20000 ? c->pk.n : 20000;
	secs = cpu_sample(c, s, rte, 1, cal, &any, &bits, &eany, &ebits);
	per = (uint64_t)((double)cal / (secs > 1e-6 ? secs : 1e-6) * c->o.cpu_secs);
	if (per < 20000)
		per = 20000;
	for (r = 0; r < c->o.reps; r++) {
		secs = cpu_sample(c, s, rte, nthreads, per, &any, &bits, &eany, &ebits);
		if (any != eany || bits != ebits) {
			snprintf(why, sizeof(why), "matches %" PRIu64 "/%" PRIu64
				 " != bpf_filter() %" PRIu64 "/%" PRIu64, any, bits,
				 eany, ebits);
			record(c, si, e, -1, per * nthreads, secs,
			       range_bytes(&c->pk, 0, per * nthreads), nthreads, why);
			return;
		}
		if (r == 0 || secs < best)
			best = secs;
	}
	snprintf(why, sizeof(why), "%" PRIu64 " pkts/thread, matches checked", per);
	record(c, si, e, 1, per * nthreads, best,
	       range_bytes(&c->pk, 0, per * nthreads), nthreads, why);
}

/* rte_bpf: load, check every base packet against bpf_filter() */
static void
rte_prepare(struct bb_ctx *c, struct bb_set *s)
{
	char err[256];
	unsigned k, i, bad = 0;

	for (k = 0; k < s->np; k++) {
		if (gcap_bench_rte_load(&s->progs[k], &s->rte[k], err, sizeof(err))) {
			snprintf(s->rte_err, sizeof(s->rte_err), "'%.60s': %.180s",
				 s->exprs[k], err);
			return;
		}
	}
	for (i = 0; i < c->pk.nbase; i++)
		if (gcap_bench_rte_mask(s->rte, s->np, c->pk.bdata[i],
					c->pk.bcap[i]) != s->ref[i])
			bad++;
	if (bad) {
		snprintf(s->rte_err, sizeof(s->rte_err),
			 "verdicts differ from bpf_filter() on %u of %u packets",
			 bad, c->pk.nbase);
		s->rte_ok = -1;
		return;
	}
	s->rte_ok = 1;
}

/* ------------------------------------------------------------------ */
/* GPU: the driver API through dlopen */

struct bb_cu {
	CUresult (*Init)(unsigned);
	CUresult (*DriverGetVersion)(int *);
	CUresult (*GetErrorName)(CUresult, const char **);
	CUresult (*DeviceGetCount)(int *);
	CUresult (*DeviceGet)(CUdevice *, int);
	CUresult (*DeviceGetName)(char *, int, CUdevice);
	CUresult (*DeviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
	CUresult (*DeviceTotalMem)(size_t *, CUdevice);
	CUresult (*DevicePrimaryCtxRetain)(CUcontext *, CUdevice);
	CUresult (*CtxSetCurrent)(CUcontext);
	CUresult (*CtxSynchronize)(void);
	CUresult (*MemAlloc)(CUdeviceptr *, size_t);
	CUresult (*MemFree)(CUdeviceptr);
	CUresult (*MemHostAlloc)(void **, size_t, unsigned);
	CUresult (*MemFreeHost)(void *);
	CUresult (*MemHostGetDevicePointer)(CUdeviceptr *, void *, unsigned);
	CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);
	CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);
	CUresult (*MemsetD8)(CUdeviceptr, unsigned char, size_t);
	CUresult (*ModuleLoadData)(CUmodule *, const void *);
	CUresult (*ModuleUnload)(CUmodule);
	CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
	CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned,
				 unsigned, unsigned, unsigned, unsigned,
				 CUstream, void **, void **);
	CUresult (*EventCreate)(CUevent *, unsigned);
	CUresult (*EventRecord)(CUevent, CUstream);
	CUresult (*EventSynchronize)(CUevent);
	CUresult (*EventElapsedTime)(float *, CUevent, CUevent);
	CUresult (*OccupancyMaxActiveBlocksPerMultiprocessor)(int *, CUfunction,
							      int, size_t);
};

typedef CUresult (*bb_getproc_fn)(const char *, void **, int, cuuint64_t,
				  CUdriverProcAddressQueryResult *);

struct bb_gpu {
	struct bb_cu cu;
	int drv;
	CUdevice dev;
	CUcontext ctx;
	char name[256];
	int sms, ccmaj, ccmin, l2;
	size_t totalmem;
	CUdeviceptr vram;       /* copy of the buffer */
	CUdeviceptr pinned;     /* device view of pk.buf */
	CUdeviceptr scratch;    /* evicts L2 between timed passes */
	size_t scratch_sz;
	CUdeviceptr out;        /* 2 counters */
	CUdeviceptr masks;      /* per-packet masks of the verify kernel */
	CUevent e0, e1;
};

static struct bb_gpu g_gpu;

static const char *
cu_name(CUresult r)
{
	const char *n = "CUDA_ERROR_?";

	if (g_gpu.cu.GetErrorName != NULL)
		g_gpu.cu.GetErrorName(r, &n);
	return n;
}

#define CK(call)                                                              \
	do {                                                                  \
		CUresult r_ = (call);                                         \
		if (r_ != CUDA_SUCCESS) {                                     \
			fprintf(stderr, "bpf_bench: %s: %s\n", #call, cu_name(r_)); \
			exit(1);                                              \
		}                                                             \
	} while (0)

/* 0; -1 with a message when there is no usable GPU */
static int
gpu_open(char *why, size_t len)
{
	struct bb_cu *cu = &g_gpu.cu;
	bb_getproc_fn gp;
	void *lib;
	int n = 0;
	CUresult r;

	lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		snprintf(why, len, "no CUDA driver (dlopen libcuda.so.1: %s)", dlerror());
		return -1;
	}
	gp = (bb_getproc_fn)dlsym(lib, "cuGetProcAddress_v2");
	if (gp == NULL) {
		snprintf(why, len, "CUDA driver too old (no cuGetProcAddress_v2)");
		return -1;
	}
#define SYM(f, nm)                                                            \
	do {                                                                  \
		CUdriverProcAddressQueryResult st_;                           \
		void *fn_ = NULL;                                             \
		if (gp(nm, &fn_, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &st_) != \
			    CUDA_SUCCESS || fn_ == NULL) {                    \
			snprintf(why, len, "CUDA driver lacks %s", nm);       \
			return -1;                                            \
		}                                                             \
		*(void **)&cu->f = fn_;                                       \
	} while (0)
	SYM(Init, "cuInit");
	SYM(DriverGetVersion, "cuDriverGetVersion");
	SYM(GetErrorName, "cuGetErrorName");
	SYM(DeviceGetCount, "cuDeviceGetCount");
	SYM(DeviceGet, "cuDeviceGet");
	SYM(DeviceGetName, "cuDeviceGetName");
	SYM(DeviceGetAttribute, "cuDeviceGetAttribute");
	SYM(DeviceTotalMem, "cuDeviceTotalMem");
	SYM(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
	SYM(CtxSetCurrent, "cuCtxSetCurrent");
	SYM(CtxSynchronize, "cuCtxSynchronize");
	SYM(MemAlloc, "cuMemAlloc");
	SYM(MemFree, "cuMemFree");
	SYM(MemHostAlloc, "cuMemHostAlloc");
	SYM(MemFreeHost, "cuMemFreeHost");
	SYM(MemHostGetDevicePointer, "cuMemHostGetDevicePointer");
	SYM(MemcpyHtoD, "cuMemcpyHtoD");
	SYM(MemcpyDtoH, "cuMemcpyDtoH");
	SYM(MemsetD8, "cuMemsetD8");
	SYM(ModuleLoadData, "cuModuleLoadData");
	SYM(ModuleUnload, "cuModuleUnload");
	SYM(ModuleGetFunction, "cuModuleGetFunction");
	SYM(LaunchKernel, "cuLaunchKernel");
	SYM(EventCreate, "cuEventCreate");
	SYM(EventRecord, "cuEventRecord");
	SYM(EventSynchronize, "cuEventSynchronize");
	SYM(EventElapsedTime, "cuEventElapsedTime");
	SYM(OccupancyMaxActiveBlocksPerMultiprocessor,
	    "cuOccupancyMaxActiveBlocksPerMultiprocessor");
#undef SYM
	r = cu->Init(0);
	if (r != CUDA_SUCCESS) {
		snprintf(why, len, "cuInit: %s", cu_name(r));
		return -1;
	}
	if (cu->DeviceGetCount(&n) != CUDA_SUCCESS || n < 1) {
		snprintf(why, len, "no CUDA device");
		return -1;
	}
	cu->DriverGetVersion(&g_gpu.drv);
	CK(cu->DeviceGet(&g_gpu.dev, 0));
	CK(cu->DeviceGetName(g_gpu.name, sizeof(g_gpu.name), g_gpu.dev));
	CK(cu->DeviceGetAttribute(&g_gpu.sms,
				  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, g_gpu.dev));
	CK(cu->DeviceGetAttribute(&g_gpu.ccmaj,
				  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, g_gpu.dev));
	CK(cu->DeviceGetAttribute(&g_gpu.ccmin,
				  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, g_gpu.dev));
	CK(cu->DeviceGetAttribute(&g_gpu.l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE,
				  g_gpu.dev));
	CK(cu->DeviceTotalMem(&g_gpu.totalmem, g_gpu.dev));
	CK(cu->DevicePrimaryCtxRetain(&g_gpu.ctx, g_gpu.dev));
	CK(cu->CtxSetCurrent(g_gpu.ctx));
	CK(cu->EventCreate(&g_gpu.e0, CU_EVENT_DEFAULT));
	CK(cu->EventCreate(&g_gpu.e1, CU_EVENT_DEFAULT));
	return 0;
}

/* ------------------------------------------------------------------ */
/* GPU kernels (CUDA C for NVRTC) */

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
	"    for (unsigned int k = 1; k < nw; k++) { any += s_any[k]; bits += s_bits[k]; }\n"
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
	"  unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
	"  if (i < n) {\n"
	"    bb_desc e = d[i];\n"
	"    masks[i] = bb_eval(base + e.off, e.wirelen, e.caplen, insns, offs, lens, np);\n"
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

/* what NVRTC did for one source */
struct bb_rtc {
	int ok;
	size_t src_len, cubin_len;
	double cold_ms, hit_ms, modload_ms;
	int hit;
	char err[GCAP_ERRBUF_SIZE];
};

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
rtc_twice(const char *src, const char *name, int maj, int min,
	  struct bb_rtc *rt, size_t *len)
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
	rc = gcap_rtc_compile(src, name, maj, min, NULL, 0, dir, 0, &img, len,
			      &info, rt->err);
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
	rc = gcap_rtc_compile(src, name, maj, min, NULL, 0, dir, 0, &img2, &l2,
			      &info, rt->err);
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

struct bb_gset {
	struct bb_rtc rtc_c;       /* compiled filter */
	CUmodule mod;
	CUfunction fcount, fverify;
	CUdeviceptr insns, offs, lens; /* interpreter programs */
	int grid_c, grid_i;
};

static struct bb_gset g_gset[BB_NSETS];
static struct bb_rtc g_rtc_i;     /* interpreter kernel */
static CUmodule g_mod_i;
static CUfunction g_fcount_i, g_fverify_i;

static void
load_module(const void *img, struct bb_rtc *rt, CUmodule *mod,
	    CUfunction *fcount, CUfunction *fverify)
{
	double t0 = now_s();

	CK(g_gpu.cu.ModuleLoadData(mod, img));
	rt->modload_ms = (now_s() - t0) * 1e3;
	CK(g_gpu.cu.ModuleGetFunction(fcount, *mod, "bb_count"));
	CK(g_gpu.cu.ModuleGetFunction(fverify, *mod, "bb_verify"));
}

static int
grid_for(CUfunction f)
{
	int nb = 0;

	CK(g_gpu.cu.OccupancyMaxActiveBlocksPerMultiprocessor(&nb, f, BB_BLOCK, 0));
	if (nb < 1)
		nb = 1;
	return nb * g_gpu.sms;
}

static void
gpu_launch(CUfunction f, int grid, CUdeviceptr base, uint64_t n,
	   CUdeviceptr out, const struct bb_gset *g, unsigned np)
{
	CUdeviceptr desc = base;
	unsigned long long nn = n;
	void *args[] = { &base, &desc, &nn, &out, (void *)&g->insns,
			 (void *)&g->offs, (void *)&g->lens, &np };

	CK(g_gpu.cu.LaunchKernel(f, (unsigned)grid, 1, 1, BB_BLOCK, 1, 1, 0, NULL,
				 args, NULL));
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
	CK(g_gpu.cu.MemsetD8(g_gpu.masks, 0xa5, m * sizeof(*h)));
	gpu_launch(fv, (int)((m + BB_BLOCK - 1) / BB_BLOCK), base, m, g_gpu.masks,
		   &g_gset[si], s->np);
	CK(g_gpu.cu.CtxSynchronize());
	CK(g_gpu.cu.MemcpyDtoH(h, g_gpu.masks, m * sizeof(*h)));
	for (i = 0; i < m; i++)
		if (h[i] != s->ref[i])
			bad++;
	free(h);
	return bad;
}

static void
gpu_engine(struct bb_ctx *c, unsigned si, enum bb_engine e)
{
	const struct bb_set *s = &c->sets[si];
	struct bb_gset *g = &g_gset[si];
	int interp = e == E_GPU_I_VRAM || e == E_GPU_I_PIN;
	CUdeviceptr base = (e == E_GPU_C_VRAM || e == E_GPU_I_VRAM) ? g_gpu.vram
								    : g_gpu.pinned;
	CUfunction fc = interp ? g_fcount_i : g->fcount;
	CUfunction fv = interp ? g_fverify_i : g->fverify;
	int grid = interp ? g->grid_i : g->grid_c;
	uint64_t ea, eb, h[2];
	double best = 0;
	unsigned bad, r;
	char why[160];

	if (!interp && !g->rtc_c.ok) {
		record(c, si, e, -2, 0, 0, 0, 0, g->rtc_c.err);
		return;
	}
	if (interp && !g_rtc_i.ok) {
		record(c, si, e, -2, 0, 0, 0, 0, g_rtc_i.err);
		return;
	}
	bad = gpu_verify(c, si, fv, base);
	if (bad) {
		snprintf(why, sizeof(why), "verdicts differ from bpf_filter() on %u "
			 "of %u packets", bad, c->pk.nbase);
		record(c, si, e, -1, 0, 0, 0, 0, why);
		return;
	}
	expect_prefix(s, &c->pk, c->pk.n, &ea, &eb);
	for (r = 0; r <= c->o.reps; r++) { /* pass 0 warms up */
		float ms = 0;

		CK(g_gpu.cu.MemsetD8(g_gpu.out, 0, 16));
		if (!c->o.no_flush)
			CK(g_gpu.cu.MemsetD8(g_gpu.scratch, (unsigned char)r,
					     g_gpu.scratch_sz));
		CK(g_gpu.cu.EventRecord(g_gpu.e0, NULL));
		gpu_launch(fc, grid, base, c->pk.n, g_gpu.out, g, s->np);
		CK(g_gpu.cu.EventRecord(g_gpu.e1, NULL));
		CK(g_gpu.cu.EventSynchronize(g_gpu.e1));
		CK(g_gpu.cu.EventElapsedTime(&ms, g_gpu.e0, g_gpu.e1));
		CK(g_gpu.cu.MemcpyDtoH(h, g_gpu.out, sizeof(h)));
		if (h[0] != ea || h[1] != eb) {
			snprintf(why, sizeof(why), "matches %" PRIu64 "/%" PRIu64
				 " != bpf_filter() %" PRIu64 "/%" PRIu64, h[0], h[1],
				 ea, eb);
			record(c, si, e, -1, c->pk.n, ms * 1e-3, c->pk.cap_bytes, 0, why);
			return;
		}
		if (r == 1 || (r > 1 && ms * 1e-3 < best))
			best = ms * 1e-3;
	}
	snprintf(why, sizeof(why), "grid %d x %d, %s", grid, BB_BLOCK,
		 c->o.no_flush ? "L2 warm" : "L2 flushed before each pass");
	record(c, si, e, 1, c->pk.n, best, c->pk.cap_bytes, 0, why);
}

/* NVRTC for every set (and the interpreter); with a GPU, load modules */
static void
gpu_compile_all(struct bb_ctx *c, int maj, int min)
{
	char eb[GCAP_ERRBUF_SIZE];
	unsigned si;
	size_t len;
	void *img;
	char *src;

	src = concat3(bb_interp_src, g_interp_eval, g_kernel_tail);
	img = src ? rtc_twice(src, "bpf_bench_interp.cu", maj, min, &g_rtc_i, &len)
		  : NULL;
	free(src);
	if (img != NULL && c->have_gpu)
		load_module(img, &g_rtc_i, &g_mod_i, &g_fcount_i, &g_fverify_i);
	free(img);
	for (si = 0; si < BB_NSETS; si++) {
		struct bb_set *s = &c->sets[si];
		struct bb_gset *g = &g_gset[si];
		char *tu = gcap_bpfc_translate(s->progs, s->np, "flt",
					       GCAP_BPFC_F_NO_COMMENTS, eb);

		if (tu == NULL) {
			snprintf(g->rtc_c.err, sizeof(g->rtc_c.err), "%s", eb);
			continue;
		}
		src = concat3(tu, g_compiled_eval, g_kernel_tail);
		free(tu);
		img = src ? rtc_twice(src, "bpf_bench_compiled.cu", maj, min,
				      &g->rtc_c, &len) : NULL;
		free(src);
		if (img != NULL && c->have_gpu) {
			load_module(img, &g->rtc_c, &g->mod, &g->fcount, &g->fverify);
			g->grid_c = grid_for(g->fcount);
		}
		free(img);
		if (c->have_gpu && g_rtc_i.ok) {
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
				memcpy(all + offs[k], s->progs[k].bf_insns,
				       lens[k] * sizeof(*all));
			CK(g_gpu.cu.MemAlloc(&g->insns, (tot ? tot : 1) * sizeof(*all)));
			CK(g_gpu.cu.MemAlloc(&g->offs, sizeof(offs)));
			CK(g_gpu.cu.MemAlloc(&g->lens, sizeof(lens)));
			CK(g_gpu.cu.MemcpyHtoD(g->insns, all, tot * sizeof(*all)));
			CK(g_gpu.cu.MemcpyHtoD(g->offs, offs, sizeof(offs)));
			CK(g_gpu.cu.MemcpyHtoD(g->lens, lens, sizeof(lens)));
			free(all);
			g->grid_i = grid_for(g_fcount_i);
		}
	}
}

/* ------------------------------------------------------------------ */
/* report */

static void
read_cpu_model(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];

	snprintf(buf, len, "unknown");
	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		char *p = strchr(line, ':');

		if (strncmp(line, "model name", 10) == 0 && p != NULL) {
			p++;
			while (*p == ' ' || *p == '\t')
				p++;
			p[strcspn(p, "\n")] = '\0';
			snprintf(buf, len, "%s", p);
			break;
		}
	}
	fclose(f);
}

static void
read_commit(char *buf, size_t len)
{
	const char *e = getenv("GCAP_COMMIT");
	char cmd[1200];
	FILE *p;

	snprintf(buf, len, "unknown");
	if (e != NULL && *e != '\0') {
		snprintf(buf, len, "%s", e);
		return;
	}
	snprintf(cmd, sizeof(cmd), "git -C '%s' rev-parse --short HEAD 2>/dev/null",
		 GCAP_SOURCE_ROOT);
	p = popen(cmd, "r");
	if (p == NULL)
		return;
	if (fgets(buf, (int)len, p) == NULL)
		snprintf(buf, len, "unknown");
	buf[strcspn(buf, "\n")] = '\0';
	pclose(p);
}

static void
cell(const struct bb_res *r, char *buf, size_t len)
{
	switch (r->state) {
	case 1:
		snprintf(buf, len, "%.1f", r->mpps);
		break;
	case -1:
		snprintf(buf, len, "WRONG");
		break;
	case -2:
		snprintf(buf, len, "failed");
		break;
	default:
		snprintf(buf, len, "-");
		break;
	}
}

static double
best_cpu_n(unsigned si, const char **which)
{
	double b = 0;

	*which = "none";
	if (g_res[si][E_PCAP_N].state == 1 && g_res[si][E_PCAP_N].mpps > b) {
		b = g_res[si][E_PCAP_N].mpps;
		*which = "bpf_filter";
	}
	if (g_res[si][E_RTE_N].state == 1 && g_res[si][E_RTE_N].mpps > b) {
		b = g_res[si][E_RTE_N].mpps;
		*which = "rte_bpf";
	}
	return b;
}

static void
report(struct bb_ctx *c, unsigned nthr)
{
	unsigned si, e;
	char b[64];

	printf("\n## Throughput, Mpps (%s)\n\n", c->layout);
	printf("CPU columns: N = %u threads. GPU: best of %u passes over all %" PRIu64
	       " packets; CPU: best of %u runs.\n\n", nthr, c->o.reps, c->pk.n, c->o.reps);
	printf("| filter set | progs | insns | matches/copy |");
	for (e = 0; e < E_COUNT; e++)
		printf(" %s |", g_eng_name[e]);
	printf("\n|---|---:|---:|---:|");
	for (e = 0; e < E_COUNT; e++)
		printf("---:|");
	printf("\n");
	for (si = 0; si < BB_NSETS; si++) {
		const struct bb_set *s = &c->sets[si];

		printf("| %s | %u | %u | %" PRIu64 " |", s->name, s->np, s->insns,
		       s->pre_any[c->pk.nbase]);
		for (e = 0; e < E_COUNT; e++) {
			cell(&g_res[si][e], b, sizeof(b));
			printf(" %s |", b);
		}
		printf("\n");
	}
	printf("\nGb/s of packet bytes in the buffer (captured bytes; the filters "
	       "read the headers only):\n\n");
	printf("| filter set |");
	for (e = 0; e < E_COUNT; e++)
		printf(" %s |", g_eng_name[e]);
	printf("\n|---|");
	for (e = 0; e < E_COUNT; e++)
		printf("---:|");
	printf("\n");
	for (si = 0; si < BB_NSETS; si++) {
		printf("| %s |", c->sets[si].name);
		for (e = 0; e < E_COUNT; e++) {
			if (g_res[si][e].state == 1)
				printf(" %.0f |", g_res[si][e].gbps);
			else
				printf(" - |");
		}
		printf("\n");
	}
	printf("\nFilter sets:\n\n");
	for (si = 0; si < BB_NSETS; si++)
		printf("- `%s`: %s\n", c->sets[si].name, c->sets[si].label);
	for (si = 0; si < BB_NSETS; si++)
		for (e = 0; e < E_COUNT; e++)
			if (g_res[si][e].state < 0)
				printf("- **%s / %s: %s**\n", c->sets[si].name,
				       g_eng_name[e], g_res[si][e].why);
	for (si = 0; si < BB_NSETS; si++)
		if (!c->o.no_rte && c->sets[si].rte_ok != 1)
			printf("- rte_bpf, %s: %s\n", c->sets[si].name,
			       c->sets[si].rte_err);

	printf("\n## NVRTC (%s)\n\n", c->have_gpu ? "sm of this GPU" : "no GPU: compile only");
	printf("| kernel | source bytes | CUBIN bytes | cold compile ms | cache hit ms "
	       "| cuModuleLoadData ms |\n|---|---:|---:|---:|---:|---:|\n");
	for (si = 0; si <= BB_NSETS; si++) {
		const struct bb_rtc *rt = si < BB_NSETS ? &g_gset[si].rtc_c : &g_rtc_i;
		const char *nm = si < BB_NSETS ? c->sets[si].name : "interpreter";
		char b1[256];

		if (!rt->ok) {
			printf("| %s | %zu | - | failed: %s | - | - |\n", nm, rt->src_len,
			       rt->err);
			continue;
		}
		printf("| %s%s | %zu | %zu | %.1f | %.2f%s | %s |\n",
		       si < BB_NSETS ? "compiled " : "", nm, rt->src_len, rt->cubin_len,
		       rt->cold_ms, rt->hit_ms, rt->hit ? "" : " (miss!)",
		       c->have_gpu ? (snprintf(b, sizeof(b), "%.2f", rt->modload_ms), b)
				   : "-");
		jsonl("{\"type\":\"nvrtc\",\"layout\":\"%s\",\"kernel\":\"%s\","
		      "\"src_bytes\":%zu,\"cubin_bytes\":%zu,\"cold_ms\":%.3f,"
		      "\"hit_ms\":%.3f,\"cache_hit\":%d,\"modload_ms\":%.3f}",
		      c->layout, jstr(nm, b1, sizeof(b1)), rt->src_len, rt->cubin_len,
		      rt->cold_ms, rt->hit_ms, rt->hit, rt->modload_ms);
	}

	/* the targets */
	printf("\n## Targets (issue 4)\n\n");
	{
		const char *w1, *w2, *w3;
		double c1 = best_cpu_n(1, &w1), c0 = best_cpu_n(0, &w3);
		double c64 = best_cpu_n(5, &w2);
		const struct bb_res *g1 = &g_res[1][E_GPU_C_VRAM];
		const struct bb_res *g0 = &g_res[0][E_GPU_C_VRAM];
		const struct bb_res *g64 = &g_res[5][E_GPU_C_VRAM];
		double r1 = g1->state == 1 && c1 > 0 ? g1->mpps / c1 : 0;
		double r0 = g0->state == 1 && c0 > 0 ? g0->mpps / c0 : 0;
		double r64 = g64->state == 1 && c64 > 0 ? g64->mpps / c64 : 0;

		printf("| target | measured | met |\n|---|---|---|\n");
		if (g0->state == 1)
			printf("| compiled GPU, single filter `ip`, VRAM >= 10,000 Mpps | "
			       "%.0f Mpps | %s |\n", g0->mpps,
			       g0->mpps >= 10000 ? "yes" : "no");
		if (g1->state == 1)
			printf("| compiled GPU, single filter `tcp port 80 or udp port 53`, "
			       "VRAM >= 10,000 Mpps | %.0f Mpps | %s |\n", g1->mpps,
			       g1->mpps >= 10000 ? "yes" : "no");
		if (r0 > 0)
			printf("| `ip`: >= 15x the %u-thread CPU (best: %s, %.0f Mpps) "
			       "| %.1fx | %s |\n", nthr, w3, c0, r0, r0 >= 15 ? "yes" : "no");
		if (r1 > 0)
			printf("| `tcp port 80 or udp port 53`: >= 15x the %u-thread CPU "
			       "(best: %s, %.0f Mpps) | %.1fx | %s |\n", nthr, w1, c1, r1,
			       r1 >= 15 ? "yes" : "no");
		if (r64 > 0)
			printf("| 64 filters: >= 20x the %u-thread CPU (best: %s, %.1f Mpps) "
			       "| %.1fx (GPU %.0f Mpps) | %s |\n", nthr, w2, c64, r64,
			       g64->mpps, r64 >= 20 ? "yes" : "no");
		if (!c->have_gpu)
			printf("| (no GPU in this run: GPU targets not measured) | - | - |\n");
		jsonl("{\"type\":\"targets\",\"layout\":\"%s\",\"gpu_ip_vram_mpps\":%.3f,"
		      "\"gpu_tcp80udp53_vram_mpps\":%.3f,\"cpu_n_best_ip_mpps\":%.3f,"
		      "\"cpu_n_best_tcp80udp53_mpps\":%.3f,\"ratio_ip\":%.3f,"
		      "\"ratio_tcp80udp53\":%.3f,\"gpu_64_vram_mpps\":%.3f,"
		      "\"cpu_n_best_64_mpps\":%.3f,\"ratio_64\":%.3f,\"threads\":%u}",
		      c->layout, g0->state == 1 ? g0->mpps : 0,
		      g1->state == 1 ? g1->mpps : 0, c0, c1, r0, r1,
		      g64->state == 1 ? g64->mpps : 0, c64, r64, nthr);
	}
}

/* ------------------------------------------------------------------ */

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: bpf_bench [options] FILE.pcap\n"
		"  --cpu-only      CPU engines only (and NVRTC compile for --arch)\n"
		"  --mb N          buffer size in MiB (default 4096, 1024 with --cpu-only)\n"
		"  --snap N        store at most N bytes of each packet (0: all, default)\n"
		"  --threads N     CPU threads for the N-thread runs (default nproc, max 16)\n"
		"  --reps N        timed repetitions, best kept (default 3)\n"
		"  --cpu-secs S    length of one CPU run (default 0.25)\n"
		"  --no-rte        skip DPDK rte_bpf (no EAL)\n"
		"  --no-flush      do not evict the GPU L2 cache before each GPU pass\n"
		"  --arch NN       NVRTC architecture without a GPU (default 90)\n"
		"  --json FILE     append JSON lines to FILE\n"
		"exit: 0 ok, 1 error or wrong verdicts, 2 usage, 77 no GPU (without --cpu-only)\n");
}

static int
parse_uint(const char *s, unsigned long long max, unsigned long long *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	if (s == NULL || *s == '\0' || *s == '-')
		return -1;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v > max)
		return -1;
	*out = v;
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "cpu-only", no_argument, NULL, 'c' },
		{ "mb", required_argument, NULL, 'm' },
		{ "snap", required_argument, NULL, 's' },
		{ "threads", required_argument, NULL, 't' },
		{ "reps", required_argument, NULL, 'r' },
		{ "cpu-secs", required_argument, NULL, 'S' },
		{ "no-rte", no_argument, NULL, 'R' },
		{ "no-flush", no_argument, NULL, 'F' },
		{ "arch", required_argument, NULL, 'a' },
		{ "json", required_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct bb_ctx c;
	char why[512], cpu_model[256], commit[128], b1[512], b2[512];
	unsigned long long v;
	unsigned si, nthr;
	cpu_set_t cs;
	int opt, i;
	double t0;

	c.o.reps = 3;
	c.o.cpu_secs = 0.25;
	c.o.arch = 90;
	while ((opt = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (opt) {
		case 'c': c.o.cpu_only = 1; break;
		case 'R': c.o.no_rte = 1; break;
		case 'F': c.o.no_flush = 1; break;
		case 'j': c.o.json = optarg; break;
		case 'm':
			if (parse_uint(optarg, 1ull << 20, &v) || v < 1)
				goto bad;
			c.o.mb = (size_t)v;
			break;
		case 's':
			if (parse_uint(optarg, 1u << 30, &v))
				goto bad;
			c.o.snap = (uint32_t)v;
			break;
		case 't':
			if (parse_uint(optarg, 64, &v) || v < 1)
				goto bad;
			c.o.threads = (unsigned)v;
			break;
		case 'r':
			if (parse_uint(optarg, 100, &v) || v < 1)
				goto bad;
			c.o.reps = (unsigned)v;
			break;
		case 'a':
			if (parse_uint(optarg, 200, &v) || v < 30)
				goto bad;
			c.o.arch = (int)v;
			break;
		case 'S': {
			char *end;

			c.o.cpu_secs = strtod(optarg, &end);
			if (*end != '\0' || !(c.o.cpu_secs > 0 && c.o.cpu_secs <= 60))
				goto bad;
			break;
		}
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	c.o.pcap = argv[optind];
	if (c.o.mb == 0)
		c.o.mb = c.o.cpu_only ? 1024 : 4096;

	/* the CPUs the threads are pinned to, before the EAL pins this one */
	CPU_ZERO(&cs);
	sched_getaffinity(0, sizeof(cs), &cs);
	c.cpus = calloc(CPU_SETSIZE, sizeof(int));
	for (i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &cs))
			c.cpus[c.ncpus++] = i;
	if (c.ncpus == 0)
		c.cpus[c.ncpus++] = 0;
	nthr = c.o.threads ? c.o.threads : (c.ncpus < 16 ? c.ncpus : 16);

	if (!c.o.cpu_only) {
		if (gpu_open(why, sizeof(why)) != 0) {
			fprintf(stderr, "bpf_bench: GPU parts skipped: %s "
				"(use --cpu-only for the CPU engines)\n", why);
			return 77;
		}
		c.have_gpu = 1;
	}
	if (c.o.json != NULL) {
		g_json = fopen(c.o.json, "a");
		if (g_json == NULL) {
			fprintf(stderr, "bpf_bench: %s: %s\n", c.o.json, strerror(errno));
			return 1;
		}
	}

	if (load_pcap(c.o.pcap, c.o.snap, &c.pk, &c.linktype) != 0)
		return 1;
	if (make_sets(c.sets, c.linktype) != 0)
		return 1;
	for (si = 0; si < BB_NSETS; si++)
		if (make_ref(&c.sets[si], &c.pk) != 0)
			return 1;

	/* the buffer: pinned and device-mapped with a GPU */
	{
		size_t bytes;

		c.pk.size = c.o.mb << 20;
		c.pk.n = count_fit(&c.pk, c.pk.size, &bytes);
		if (c.pk.n == 0) {
			fprintf(stderr, "bpf_bench: --mb %zu holds no packet\n", c.o.mb);
			return 1;
		}
		t0 = now_s();
		if (c.have_gpu) {
			void *p = NULL;

			CK(g_gpu.cu.MemHostAlloc(&p, c.pk.size, CU_MEMHOSTALLOC_DEVICEMAP |
						 CU_MEMHOSTALLOC_PORTABLE));
			c.pk.buf = p;
			c.pk.pinned = 1;
			CK(g_gpu.cu.MemHostGetDevicePointer(&g_gpu.pinned, p, 0));
		} else {
			c.pk.buf = mmap(NULL, c.pk.size, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (c.pk.buf == MAP_FAILED) {
				fprintf(stderr, "bpf_bench: mmap %zu MiB: %s\n", c.o.mb,
					strerror(errno));
				return 1;
			}
		}
		fill_buffer(&c.pk);
		if (c.have_gpu) {
			size_t m = c.pk.nbase * sizeof(uint64_t);

			CK(g_gpu.cu.MemAlloc(&g_gpu.vram, c.pk.used));
			CK(g_gpu.cu.MemcpyHtoD(g_gpu.vram, c.pk.buf, c.pk.used));
			g_gpu.scratch_sz = (size_t)g_gpu.l2 * 4;
			if (g_gpu.scratch_sz < (64u << 20))
				g_gpu.scratch_sz = 64u << 20;
			CK(g_gpu.cu.MemAlloc(&g_gpu.scratch, g_gpu.scratch_sz));
			CK(g_gpu.cu.MemAlloc(&g_gpu.out, 16));
			CK(g_gpu.cu.MemAlloc(&g_gpu.masks, m));
		}
		fprintf(stderr, "bpf_bench: buffer of %" PRIu64 " packets built in %.1f s\n",
			c.pk.n, now_s() - t0);
	}
	snprintf(c.layout, sizeof(c.layout), "%s",
		 c.o.snap ? "" : "full packets");
	if (c.o.snap)
		snprintf(c.layout, sizeof(c.layout), "snap %u", c.o.snap);

	read_cpu_model(cpu_model, sizeof(cpu_model));
	read_commit(commit, sizeof(commit));
	printf("# bpf_bench: filter throughput, GPU vs CPU\n\n");
	printf("- commit: %s\n", commit);
	printf("- machine: %ld CPUs online (%u usable), %s\n",
	       sysconf(_SC_NPROCESSORS_ONLN), c.ncpus, cpu_model);
	if (c.have_gpu)
		printf("- GPU: %s, sm_%d%d, %d SMs, L2 %d MiB, %zu GiB, CUDA driver "
		       "API %d.%d\n", g_gpu.name, g_gpu.ccmaj, g_gpu.ccmin, g_gpu.sms,
		       g_gpu.l2 >> 20, g_gpu.totalmem >> 30, g_gpu.drv / 1000,
		       (g_gpu.drv % 1000) / 10);
	else
		printf("- GPU: none (--cpu-only)\n");
	printf("- packets: %s, %u packets (linktype %d), %s\n", c.o.pcap,
	       c.pk.nbase, c.linktype, c.layout);
	printf("- buffer: %" PRIu64 " packets (%.2f copies), %.2f GiB used of %zu MiB "
	       "(descriptors + bytes, 8-byte aligned), mean caplen %.0f B, "
	       "mean wirelen %.0f B%s\n",
	       c.pk.n, (double)c.pk.n / c.pk.nbase, (double)c.pk.used / (1 << 30),
	       c.o.mb, (double)c.pk.cap_bytes / c.pk.n,
	       (double)c.pk.wire_bytes / c.pk.n,
	       c.have_gpu ? "; the same in VRAM (cuMemAlloc) and in pinned host "
			    "memory (cuMemHostAlloc DEVICEMAP); the CPU engines read "
			    "the pinned copy" : "");
	printf("- CPU threads for N: %u (pinned to CPUs %d..), 1-thread runs on CPU %d\n",
	       nthr, c.cpus[0], c.cpus[0]);
	jsonl("{\"type\":\"machine\",\"commit\":\"%s\",\"nproc\":%ld,\"cpus\":%u,"
	      "\"cpu\":\"%s\",\"gpu\":\"%s\",\"sms\":%d,\"driver\":%d,\"layout\":\"%s\","
	      "\"pcap_pkts\":%u,\"buf_pkts\":%" PRIu64 ",\"buf_bytes\":%zu,"
	      "\"threads\":%u}",
	      commit, sysconf(_SC_NPROCESSORS_ONLN), c.ncpus,
	      jstr(cpu_model, b1, sizeof(b1)),
	      c.have_gpu ? jstr(g_gpu.name, b2, sizeof(b2)) : "none",
	      g_gpu.sms, g_gpu.drv, c.layout, c.pk.nbase, c.pk.n, c.pk.used, nthr);
	fflush(stdout);

	/* NVRTC: for the GPU's architecture, or --arch without one */
	if (gcap_rtc_load(why) == 0) {
		if (c.have_gpu)
			gpu_compile_all(&c, g_gpu.ccmaj, g_gpu.ccmin);
		else
			gpu_compile_all(&c, c.o.arch / 10, c.o.arch % 10);
	} else {
		for (si = 0; si < BB_NSETS; si++)
			snprintf(g_gset[si].rtc_c.err, sizeof(g_gset[si].rtc_c.err),
				 "%s", why);
		snprintf(g_rtc_i.err, sizeof(g_rtc_i.err), "%s", why);
		if (c.have_gpu) {
			fprintf(stderr, "bpf_bench: %s\n", why);
			g_bad = 1;
		}
	}

	if (!c.o.no_rte) {
		if (gcap_bench_rte_init(why, sizeof(why)) != 0) {
			fprintf(stderr, "bpf_bench: %s (rte_bpf skipped)\n", why);
			for (si = 0; si < BB_NSETS; si++)
				snprintf(c.sets[si].rte_err, sizeof(c.sets[si].rte_err),
					 "%.250s", why);
			g_bad = 1;
		} else {
			for (si = 0; si < BB_NSETS; si++)
				rte_prepare(&c, &c.sets[si]);
		}
	}

	for (si = 0; si < BB_NSETS; si++) {
		struct bb_set *s = &c.sets[si];

		fprintf(stderr, "bpf_bench: set %s (%u programs, %u insns)\n", s->name,
			s->np, s->insns);
		if (c.have_gpu) {
			gpu_engine(&c, si, E_GPU_C_VRAM);
			gpu_engine(&c, si, E_GPU_C_PIN);
			gpu_engine(&c, si, E_GPU_I_VRAM);
			gpu_engine(&c, si, E_GPU_I_PIN);
		}
		cpu_engine(&c, si, 0, 1, E_PCAP_1);
		cpu_engine(&c, si, 0, nthr, E_PCAP_N);
		if (!c.o.no_rte) {
			if (s->rte_ok == 1) {
				cpu_engine(&c, si, 1, 1, E_RTE_1);
				cpu_engine(&c, si, 1, nthr, E_RTE_N);
			} else {
				record(&c, si, E_RTE_1, s->rte_ok == -1 ? -1 : -2, 0, 0, 0,
				       1, s->rte_err);
				record(&c, si, E_RTE_N, s->rte_ok == -1 ? -1 : -2, 0, 0, 0,
				       nthr, s->rte_err);
			}
		}
	}
	report(&c, nthr);
	if (g_bad)
		printf("\n**Some engine failed or gave wrong verdicts (see above).**\n");
	if (g_json != NULL)
		fclose(g_json);
	return g_bad ? 1 : 0;
bad:
	fprintf(stderr, "bpf_bench: bad value for an option: %s\n", optarg);
	usage(stderr);
	return 2;
}
