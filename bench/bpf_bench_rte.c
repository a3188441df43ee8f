/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bpf_bench: the DPDK rte_bpf engine. Classic BPF from libpcap is converted
 * to eBPF (rte_bpf_convert), loaded and JIT-compiled; converted programs
 * read the packet through an mbuf, so every packet is presented as one
 * fake single-segment mbuf over the benchmark buffer (no mempool).
 *
 * data_len and pkt_len are 16/32-bit fields set to the captured length
 * (capped at 65535, the width of data_len): loads past them return 0 from
 * the program as in bpf_filter(); "len" (BPF_LEN) reads pkt_len, i.e. the
 * captured length, where bpf_filter() gives the wire length. The filters
 * of the benchmark use neither; the verdicts are checked against
 * bpf_filter() on every packet before anything is timed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_bpf.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "bpf_bench.h"

int
gcap_bench_rte_init(char *err, size_t errlen)
{
	char *argv[] = { "bpf_bench",
			 "-l",
			 "0",
			 "--no-huge",
			 "--no-pci",
			 "--no-shconf",
			 "--no-telemetry",
			 "--log-level=error",
			 "-m",
			 "128",
			 NULL };
	int argc = (int)(sizeof(argv) / sizeof(argv[0])) - 1;

	if (rte_eal_init(argc, argv) < 0) {
		snprintf(err, errlen, "rte_eal_init: %s", rte_strerror(rte_errno));
		return -(rte_errno ? rte_errno : EIO);
	}
	return 0;
}

int
gcap_bench_rte_load(const struct bpf_program *prog, struct gcap_bench_rte *out, char *err,
		    size_t errlen)
{
	struct rte_bpf_prm *prm;
	struct rte_bpf_jit jit;
	struct rte_bpf *bpf;

	memset(out, 0, sizeof(*out));
	prm = rte_bpf_convert(prog);
	if (prm == NULL) {
		snprintf(err, errlen, "rte_bpf_convert: %s", rte_strerror(rte_errno));
		return -(rte_errno ? rte_errno : EINVAL);
	}
	bpf = rte_bpf_load(prm);
	rte_free(prm);
	if (bpf == NULL) {
		snprintf(err, errlen, "rte_bpf_load: %s", rte_strerror(rte_errno));
		return -(rte_errno ? rte_errno : EINVAL);
	}
	if (rte_bpf_get_jit(bpf, &jit) != 0 || jit.func == NULL) {
		rte_bpf_destroy(bpf);
		snprintf(err, errlen, "rte_bpf_get_jit: no JIT code for this program");
		return -ENOTSUP;
	}
	out->bpf = bpf;
	out->fn = jit.func;
	return 0;
}

static inline void
fake_mbuf(struct rte_mbuf *m, const uint8_t *pkt, uint32_t caplen)
{
	uint16_t len = caplen > UINT16_MAX ? UINT16_MAX : (uint16_t)caplen;

	m->buf_addr = (void *)(uintptr_t)pkt;
	m->data_len = len;
	m->pkt_len = len;
}

static void
mbuf_init(struct rte_mbuf *m)
{
	memset(m, 0, sizeof(*m));
	m->nb_segs = 1;
	m->next = NULL;
	m->data_off = 0;
}

uint64_t
gcap_bench_rte_mask(const struct gcap_bench_rte *progs, unsigned np, const uint8_t *pkt,
		    uint32_t caplen)
{
	struct rte_mbuf m;
	uint64_t mask = 0;
	unsigned k;

	mbuf_init(&m);
	fake_mbuf(&m, pkt, caplen);
	for (k = 0; k < np; k++)
		if (progs[k].fn(&m) != 0)
			mask |= 1ull << k;
	return mask;
}

void
gcap_bench_rte_count(const struct gcap_bench_rte *progs, unsigned np, const uint8_t *base,
		     const struct gcap_bench_desc *d, uint64_t n, uint64_t start,
		     uint64_t count, uint64_t *any, uint64_t *bits)
{
	struct rte_mbuf m __rte_cache_aligned;
	uint64_t j = start % n, a = 0, b = 0;

	mbuf_init(&m);
	while (count > 0) {
		uint64_t run = n - j < count ? n - j : count, i;

		for (i = j; i < j + run; i++) {
			uint64_t mask = 0;
			unsigned k;

			fake_mbuf(&m, base + d[i].off, d[i].caplen);
			for (k = 0; k < np; k++)
				if (progs[k].fn(&m) != 0)
					mask |= 1ull << k;
			a += mask != 0;
			b += (uint64_t)__builtin_popcountll(mask);
		}
		count -= run;
		j = 0;
	}
	*any += a;
	*bits += b;
}
