/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bpf_bench: what the DPDK rte_bpf engine (bpf_bench_rte.c) shares with the
 * rest of the program (through bpf_bench_internal.h): the packet
 * descriptor and the rte_bpf calls. Kept apart from bpf_bench_internal.h
 * because DPDK's bpf_def.h and libpcap's pcap/bpf.h define the same
 * macros, so this header includes neither.
 */
#ifndef GCAP_BENCH_BPF_H
#define GCAP_BENCH_BPF_H

#include <stdint.h>

struct bpf_program;

/** One packet of the benchmark buffer (the GPU kernels see the same). */
struct gcap_bench_desc {
	uint64_t off;     /**< from the start of the buffer, 8-byte aligned */
	uint32_t caplen;  /**< bytes stored */
	uint32_t wirelen; /**< length on the wire */
};

/** One classic BPF program converted to eBPF and JIT-compiled by rte_bpf. */
struct gcap_bench_rte {
	void *bpf;              /**< struct rte_bpf * */
	uint64_t (*fn)(void *); /**< the JIT code, takes a struct rte_mbuf * */
};

/**
 * Initialise a minimal EAL (no hugepages, no PCI, no shared config, lcore 0) for
 * rte_bpf_convert(), which allocates with rte_malloc.
 * @return 0 or a negative errno (message in err).
 */
int gcap_bench_rte_init(char *err, size_t errlen);

/**
 * rte_bpf_convert() + rte_bpf_load() + rte_bpf_get_jit().
 * @return 0; -ENOTSUP when there is no JIT; another negative errno.
 */
int gcap_bench_rte_load(const struct bpf_program *prog, struct gcap_bench_rte *out,
			char *err, size_t errlen);

/** Mask of the programs (bit k: program k) that accept one packet. */
uint64_t gcap_bench_rte_mask(const struct gcap_bench_rte *progs, unsigned np,
			     const uint8_t *pkt, uint32_t caplen);

/**
 * Run np programs over count packets of the buffer starting at index
 * start (wrapping at n): adds to *any the packets some program accepts and
 * to *bits the (packet, program) matches.
 */
void
gcap_bench_rte_count(const struct gcap_bench_rte *progs, unsigned np, const uint8_t *base,
		     const struct gcap_bench_desc *d, uint64_t n, uint64_t start,
		     uint64_t count, uint64_t *any, uint64_t *bits);

#endif /* GCAP_BENCH_BPF_H */
