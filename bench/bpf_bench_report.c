/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bpf_bench: the report. A markdown report on stdout (the machine, the
 * throughput tables in Mpps and Gb/s, the filter sets, NVRTC's compile
 * times, the targets) and, with --json FILE, one JSON line per machine,
 * result, NVRTC kernel and target set, appended to FILE. The engines hand
 * their results in through gcap_bench_record(); everything else printed
 * is in struct bb_ctx, so this part calls no other.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gcap_config.h"

#include "bpf_bench_internal.h"

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

int
gcap_bench_json_open(const char *path)
{
	g_json = fopen(path, "a");
	return g_json != NULL ? 0 : -errno;
}

void
gcap_bench_json_close(void)
{
	if (g_json != NULL)
		fclose(g_json);
	g_json = NULL;
}

static const char *const g_eng_name[E_COUNT] = {
	"gpu-compiled-vram", "gpu-compiled-pinned", "gpu-interp-vram",
	"gpu-interp-pinned", "bpf_filter-1",        "bpf_filter-N",
	"rte_bpf-1",         "rte_bpf-N",
};

void
gcap_bench_record(struct bb_ctx *c, unsigned si, enum bb_engine e, int state,
		  uint64_t pkts, double secs, uint64_t bytes, unsigned threads,
		  const char *why)
{
	struct bb_res *r = &c->res[si][e];
	char b1[512], b2[256];

	r->state = state;
	r->pkts = pkts;
	r->secs = secs;
	r->threads = threads;
	r->mpps = secs > 0 ? (double)pkts / secs / 1e6 : 0;
	r->gbps = secs > 0 ? (double)bytes * 8 / secs / 1e9 : 0;
	snprintf(r->why, sizeof(r->why), "%s", why ? why : "");
	if (state < 0)
		c->bad = 1;
	jsonl("{\"type\":\"result\",\"layout\":\"%s\",\"set\":\"%s\",\"filter\":\"%s\","
	      "\"nprogs\":%u,\"insns\":%u,\"engine\":\"%s\",\"threads\":%u,"
	      "\"state\":\"%s\",\"pkts\":%" PRIu64 ",\"secs\":%.6f,\"mpps\":%.3f,"
	      "\"gbps_cap\":%.3f,\"note\":\"%s\"}",
	      c->layout, c->sets[si].name, jstr(c->sets[si].label, b1, sizeof(b1)),
	      c->sets[si].np, c->sets[si].insns, g_eng_name[e], threads,
	      state == 1  ? "ok" :
	      state == -1 ? "wrong" :
			    "failed",
	      pkts, secs, r->mpps, r->gbps, jstr(r->why, b2, sizeof(b2)));
}

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

void
gcap_bench_head(const struct bb_ctx *c, unsigned nthr)
{
	char cpu_model[256], commit[128], b1[512], b2[512];

	read_cpu_model(cpu_model, sizeof(cpu_model));
	read_commit(commit, sizeof(commit));
	printf("# bpf_bench: filter throughput, GPU vs CPU\n\n");
	printf("- commit: %s\n", commit);
	printf("- machine: %ld CPUs online (%u usable), %s\n",
	       sysconf(_SC_NPROCESSORS_ONLN), c->ncpus, cpu_model);
	if (c->have_gpu)
		printf("- GPU: %s, sm_%d%d, %d SMs, L2 %d MiB, %zu GiB, CUDA driver "
		       "API %d.%d\n",
		       c->gpu.name, c->gpu.ccmaj, c->gpu.ccmin, c->gpu.sms,
		       c->gpu.l2 >> 20, c->gpu.totalmem >> 30, c->gpu.drv / 1000,
		       (c->gpu.drv % 1000) / 10);
	else
		printf("- GPU: none (--cpu-only)\n");
	printf("- packets: %s, %u packets (linktype %d), %s\n", c->o.pcap, c->pk.nbase,
	       c->linktype, c->layout);
	printf("- buffer: %" PRIu64 " packets (%.2f copies), %.2f GiB used of %zu MiB "
	       "(descriptors + bytes, 8-byte aligned), mean caplen %.0f B, "
	       "mean wirelen %.0f B%s\n",
	       c->pk.n, (double)c->pk.n / c->pk.nbase, (double)c->pk.used / (1 << 30),
	       c->o.mb, (double)c->pk.cap_bytes / c->pk.n,
	       (double)c->pk.wire_bytes / c->pk.n,
	       c->have_gpu ? "; the same in VRAM (cuMemAlloc) and in pinned host "
			     "memory (cuMemHostAlloc DEVICEMAP); the CPU engines read "
			     "the pinned copy" :
			     "");
	printf("- CPU threads for N: %u (pinned to CPUs %d..), 1-thread runs on CPU %d\n",
	       nthr, c->cpus[0], c->cpus[0]);
	jsonl("{\"type\":\"machine\",\"commit\":\"%s\",\"nproc\":%ld,\"cpus\":%u,"
	      "\"cpu\":\"%s\",\"gpu\":\"%s\",\"sms\":%d,\"driver\":%d,\"layout\":\"%s\","
	      "\"pcap_pkts\":%u,\"buf_pkts\":%" PRIu64 ",\"buf_bytes\":%zu,"
	      "\"threads\":%u}",
	      commit, sysconf(_SC_NPROCESSORS_ONLN), c->ncpus,
	      jstr(cpu_model, b1, sizeof(b1)),
	      c->have_gpu ? jstr(c->gpu.name, b2, sizeof(b2)) : "none", c->gpu.sms,
	      c->gpu.drv, c->layout, c->pk.nbase, c->pk.n, c->pk.used, nthr);
	fflush(stdout);
}

static void
cell(const struct bb_res *r, char *buf, size_t len)
{
	switch (r->state) {
	case 1: snprintf(buf, len, "%.1f", r->mpps); break;
	case -1: snprintf(buf, len, "WRONG"); break;
	case -2: snprintf(buf, len, "failed"); break;
	default: snprintf(buf, len, "-"); break;
	}
}

static double
best_cpu_n(const struct bb_ctx *c, unsigned si, const char **which)
{
	double b = 0;

	*which = "none";
	if (c->res[si][E_PCAP_N].state == 1 && c->res[si][E_PCAP_N].mpps > b) {
		b = c->res[si][E_PCAP_N].mpps;
		*which = "bpf_filter";
	}
	if (c->res[si][E_RTE_N].state == 1 && c->res[si][E_RTE_N].mpps > b) {
		b = c->res[si][E_RTE_N].mpps;
		*which = "rte_bpf";
	}
	return b;
}

void
gcap_bench_report(const struct bb_ctx *c, unsigned nthr)
{
	unsigned si, e;
	char b[64];

	printf("\n## Throughput, Mpps (%s)\n\n", c->layout);
	printf("CPU columns: N = %u threads. GPU: best of %u passes over all %" PRIu64
	       " packets; CPU: best of %u runs.\n\n",
	       nthr, c->o.reps, c->pk.n, c->o.reps);
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
			cell(&c->res[si][e], b, sizeof(b));
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
			if (c->res[si][e].state == 1)
				printf(" %.0f |", c->res[si][e].gbps);
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
			if (c->res[si][e].state < 0)
				printf("- **%s / %s: %s**\n", c->sets[si].name,
				       g_eng_name[e], c->res[si][e].why);
	for (si = 0; si < BB_NSETS; si++)
		if (!c->o.no_rte && c->sets[si].rte_ok != 1)
			printf("- rte_bpf, %s: %s\n", c->sets[si].name,
			       c->sets[si].rte_err);

	printf("\n## NVRTC (%s)\n\n",
	       c->have_gpu ? "sm of this GPU" : "no GPU: compile only");
	printf("| kernel | source bytes | CUBIN bytes | cold compile ms | cache hit ms "
	       "| cuModuleLoadData ms |\n|---|---:|---:|---:|---:|---:|\n");
	for (si = 0; si <= BB_NSETS; si++) {
		const struct bb_rtc *rt = si < BB_NSETS ? &c->rtc[si] : &c->rtc_i;
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
		       c->have_gpu ? (snprintf(b, sizeof(b), "%.2f", rt->modload_ms), b) :
				     "-");
		jsonl("{\"type\":\"nvrtc\",\"layout\":\"%s\",\"kernel\":\"%s\","
		      "\"src_bytes\":%zu,\"cubin_bytes\":%zu,\"cold_ms\":%.3f,"
		      "\"hit_ms\":%.3f,\"cache_hit\":%d,\"modload_ms\":%.3f}",
		      c->layout, jstr(nm, b1, sizeof(b1)), rt->src_len, rt->cubin_len,
		      rt->cold_ms, rt->hit_ms, rt->hit, rt->modload_ms);
	}

	/* the throughput targets: GPU Mpps, GPU over the best N-thread CPU */
	printf("\n## Targets\n\n");
	{
		const char *w1, *w2, *w3;
		double c1 = best_cpu_n(c, 1, &w1), c0 = best_cpu_n(c, 0, &w3);
		double c64 = best_cpu_n(c, 5, &w2);
		const struct bb_res *g1 = &c->res[1][E_GPU_C_VRAM];
		const struct bb_res *g0 = &c->res[0][E_GPU_C_VRAM];
		const struct bb_res *g64 = &c->res[5][E_GPU_C_VRAM];
		double r1 = g1->state == 1 && c1 > 0 ? g1->mpps / c1 : 0;
		double r0 = g0->state == 1 && c0 > 0 ? g0->mpps / c0 : 0;
		double r64 = g64->state == 1 && c64 > 0 ? g64->mpps / c64 : 0;

		printf("| target | measured | met |\n|---|---|---|\n");
		if (g0->state == 1)
			printf("| compiled GPU, single filter `ip`, VRAM >= 10,000 Mpps "
			       "| "
			       "%.0f Mpps | %s |\n",
			       g0->mpps, g0->mpps >= 10000 ? "yes" : "no");
		if (g1->state == 1)
			printf("| compiled GPU, single filter `tcp port 80 or udp port "
			       "53`, "
			       "VRAM >= 10,000 Mpps | %.0f Mpps | %s |\n",
			       g1->mpps, g1->mpps >= 10000 ? "yes" : "no");
		if (r0 > 0)
			printf("| `ip`: >= 15x the %u-thread CPU (best: %s, %.0f Mpps) "
			       "| %.1fx | %s |\n",
			       nthr, w3, c0, r0, r0 >= 15 ? "yes" : "no");
		if (r1 > 0)
			printf("| `tcp port 80 or udp port 53`: >= 15x the %u-thread CPU "
			       "(best: %s, %.0f Mpps) | %.1fx | %s |\n",
			       nthr, w1, c1, r1, r1 >= 15 ? "yes" : "no");
		if (r64 > 0)
			printf("| 64 filters: >= 20x the %u-thread CPU (best: %s, %.1f "
			       "Mpps) "
			       "| %.1fx (GPU %.0f Mpps) | %s |\n",
			       nthr, w2, c64, r64, g64->mpps, r64 >= 20 ? "yes" : "no");
		if (!c->have_gpu)
			printf("| (no GPU in this run: GPU targets not measured) | - | - "
			       "|\n");
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
