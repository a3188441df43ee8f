/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bpf_bench: filter throughput. One process, the same packets for every
 * engine:
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
 * This file holds the options and the order of the steps; the parts are
 * described in bpf_bench_internal.h.
 *
 * Output: a markdown report on stdout, JSON lines with --json FILE.
 * Exit: 0; 1 on an error or a wrong verdict; 2 usage; 77 when the GPU
 * parts cannot run (no driver or GPU) and --cpu-only was not given.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf_bench_internal.h"

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: bpf_bench [options] FILE.pcap\n"
		"  --cpu-only      CPU engines only (and NVRTC compile for --arch)\n"
		"  --mb N          buffer size in MiB (default 4096, 1024 with "
		"--cpu-only)\n"
		"  --snap N        store at most N bytes of each packet (0: all, "
		"default)\n"
		"  --threads N     CPU threads for the N-thread runs (default nproc, max "
		"16)\n"
		"  --reps N        timed repetitions, best kept (default 3)\n"
		"  --cpu-secs S    length of one CPU run (default 0.25)\n"
		"  --no-rte        skip DPDK rte_bpf (no EAL)\n"
		"  --no-flush      do not evict the GPU L2 cache before each GPU pass\n"
		"  --arch NN       NVRTC architecture without a GPU (default 90)\n"
		"  --json FILE     append JSON lines to FILE\n"
		"exit: 0 ok, 1 error or wrong verdicts, 2 usage, 77 no GPU (without "
		"--cpu-only)\n");
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

/* the options into o; -1 to go on, else the exit status */
static int
parse_opts(int argc, char **argv, struct bb_opts *o)
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
	unsigned long long v;
	int opt;

	o->reps = 3;
	o->cpu_secs = 0.25;
	o->arch = 90;
	while ((opt = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (opt) {
		case 'c': o->cpu_only = 1; break;
		case 'R': o->no_rte = 1; break;
		case 'F': o->no_flush = 1; break;
		case 'j': o->json = optarg; break;
		case 'm':
			if (parse_uint(optarg, 1ull << 20, &v) || v < 1)
				goto bad;
			o->mb = (size_t)v;
			break;
		case 's':
			if (parse_uint(optarg, 1u << 30, &v))
				goto bad;
			o->snap = (uint32_t)v;
			break;
		case 't':
			if (parse_uint(optarg, 64, &v) || v < 1)
				goto bad;
			o->threads = (unsigned)v;
			break;
		case 'r':
			if (parse_uint(optarg, 100, &v) || v < 1)
				goto bad;
			o->reps = (unsigned)v;
			break;
		case 'a':
			if (parse_uint(optarg, 200, &v) || v < 30)
				goto bad;
			o->arch = (int)v;
			break;
		case 'S': {
			char *end;

			o->cpu_secs = strtod(optarg, &end);
			if (*end != '\0' || !(o->cpu_secs > 0 && o->cpu_secs <= 60))
				goto bad;
			break;
		}
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	o->pcap = argv[optind];
	if (o->mb == 0)
		o->mb = o->cpu_only ? 1024 : 4096;
	return -1;
bad:
	fprintf(stderr, "bpf_bench: bad value for an option: %s\n", optarg);
	usage(stderr);
	return 2;
}

/* the buffer: pinned and device-mapped with a GPU; 0 or -1 */
static int
build_buffer(struct bb_ctx *c)
{
	double t0;

	c->pk.size = c->o.mb << 20;
	c->pk.n = gcap_bench_pkts_fit(&c->pk, c->pk.size);
	if (c->pk.n == 0) {
		fprintf(stderr, "bpf_bench: --mb %zu holds no packet\n", c->o.mb);
		return -1;
	}
	t0 = gcap_bench_now();
	if (c->have_gpu)
		gcap_bench_gpu_pin(c);
	else if (gcap_bench_pkts_map(&c->pk, c->o.mb) != 0)
		return -1;
	gcap_bench_pkts_fill(&c->pk);
	if (c->have_gpu)
		gcap_bench_gpu_upload(c);
	fprintf(stderr, "bpf_bench: buffer of %" PRIu64 " packets built in %.1f s\n",
		c->pk.n, gcap_bench_now() - t0);
	return 0;
}

/* every engine on set si */
static void
run_set(struct bb_ctx *c, unsigned si, unsigned nthr)
{
	struct bb_set *s = &c->sets[si];

	fprintf(stderr, "bpf_bench: set %s (%u programs, %u insns)\n", s->name, s->np,
		s->insns);
	if (c->have_gpu) {
		gcap_bench_gpu_engine(c, si, E_GPU_C_VRAM);
		gcap_bench_gpu_engine(c, si, E_GPU_C_PIN);
		gcap_bench_gpu_engine(c, si, E_GPU_I_VRAM);
		gcap_bench_gpu_engine(c, si, E_GPU_I_PIN);
	}
	gcap_bench_cpu_engine(c, si, 0, 1, E_PCAP_1);
	gcap_bench_cpu_engine(c, si, 0, nthr, E_PCAP_N);
	if (!c->o.no_rte) {
		if (s->rte_ok == 1) {
			gcap_bench_cpu_engine(c, si, 1, 1, E_RTE_1);
			gcap_bench_cpu_engine(c, si, 1, nthr, E_RTE_N);
		} else {
			gcap_bench_record(c, si, E_RTE_1, s->rte_ok == -1 ? -1 : -2, 0, 0,
					  0, 1, s->rte_err);
			gcap_bench_record(c, si, E_RTE_N, s->rte_ok == -1 ? -1 : -2, 0, 0,
					  0, nthr, s->rte_err);
		}
	}
}

int
main(int argc, char **argv)
{
	static struct bb_ctx c;
	char why[GCAP_ERRBUF_SIZE];
	unsigned si, nthr;
	cpu_set_t cs;
	int rc, i;

	rc = parse_opts(argc, argv, &c.o);
	if (rc >= 0)
		return rc;

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
		if (gcap_bench_gpu_open(&c, why) != 0) {
			fprintf(stderr,
				"bpf_bench: GPU parts skipped: %s "
				"(use --cpu-only for the CPU engines)\n",
				why);
			return 77;
		}
		c.have_gpu = 1;
	}
	if (c.o.json != NULL && gcap_bench_json_open(c.o.json) != 0) {
		fprintf(stderr, "bpf_bench: %s: %s\n", c.o.json, strerror(errno));
		return 1;
	}

	if (gcap_bench_pkts_load(c.o.pcap, c.o.snap, &c.pk, &c.linktype) != 0)
		return 1;
	if (gcap_bench_sets_make(c.sets, c.linktype) != 0)
		return 1;
	for (si = 0; si < BB_NSETS; si++)
		if (gcap_bench_set_ref(&c.sets[si], &c.pk) != 0)
			return 1;
	if (build_buffer(&c) != 0)
		return 1;
	snprintf(c.layout, sizeof(c.layout), "%s", c.o.snap ? "" : "full packets");
	if (c.o.snap)
		snprintf(c.layout, sizeof(c.layout), "snap %u", c.o.snap);
	gcap_bench_head(&c, nthr);

	if (gcap_bench_gpu_compile(&c, why) != 0 && c.have_gpu) {
		fprintf(stderr, "bpf_bench: %s\n", why);
		c.bad = 1;
	}
	if (!c.o.no_rte) {
		if (gcap_bench_rte_init(why, sizeof(why)) != 0) {
			fprintf(stderr, "bpf_bench: %s (rte_bpf skipped)\n", why);
			for (si = 0; si < BB_NSETS; si++)
				snprintf(c.sets[si].rte_err, sizeof(c.sets[si].rte_err),
					 "%.250s", why);
			c.bad = 1;
		} else {
			for (si = 0; si < BB_NSETS; si++)
				gcap_bench_rte_prepare(&c, &c.sets[si]);
		}
	}

	for (si = 0; si < BB_NSETS; si++)
		run_set(&c, si, nthr);
	gcap_bench_report(&c, nthr);
	if (c.bad)
		printf("\n**Some engine failed or gave wrong verdicts (see above).**\n");
	gcap_bench_json_close();
	return c.bad ? 1 : 0;
}
