/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test helper: what an executor must write for one batch, computed on the
 * host with libpcap's bpf_filter() (through gcap_filter_run), following
 * gcap_exec.h: records in packet order, caplen = min(caplen, snaplen),
 * padded to 8 bytes, stop at the first record that does not fit.
 */
#ifndef GCAP_TEST_GPU_REF_H
#define GCAP_TEST_GPU_REF_H

#include <stdint.h>
#include <string.h>

#include "gpucap/gcap_exec.h"
#include "gpucap/gcap_filter.h"

struct ref_out {
	uint32_t len, nrec;
	struct gcap_batch_result res;
};

/* Append the batch's records to buf (which holds base_len bytes already). */
static inline void
ref_batch(const struct bpf_program *progs, unsigned nprogs, uint32_t snaplen,
	  const struct gcap_pkt *pkts, unsigned n, uint8_t *buf, uint32_t size,
	  uint32_t base_len, uint32_t base_nrec, struct ref_out *o)
{
	unsigned i, j;
	int stopped = 0;

	memset(o, 0, sizeof(*o));
	o->len = base_len;
	o->nrec = base_nrec;
	for (i = 0; i < n; i++) {
		const struct gcap_pkt *d = &pkts[i];
		const uint8_t *p = (const uint8_t *)(uintptr_t)d->addr;
		uint64_t mask = 0;
		uint32_t cap, sz;
		struct gcap_rec r;

		for (j = 0; j < nprogs; j++)
			if (gcap_filter_run(&progs[j], p, d->wirelen, d->caplen))
				mask |= 1ull << j;
		if (!mask) {
			o->res.n_filtered++;
			continue;
		}
		cap = d->caplen < snaplen ? d->caplen : snaplen;
		sz = GCAP_REC_SIZE(cap);
		if (stopped || (uint64_t)o->len + sz > size) {
			stopped = 1;
			o->res.n_truncated++;
			continue;
		}
		memset(&r, 0, sizeof(r));
		r.ts_ns = d->ts_ns;
		r.outmask = mask;
		r.caplen = cap;
		r.wirelen = d->wirelen;
		r.port = d->port;
		r.queue = d->queue;
		r.seq = d->seq;
		memcpy(buf + o->len, &r, sizeof(r));
		memcpy(buf + o->len + sizeof(r), p, cap);
		memset(buf + o->len + sizeof(r) + cap, 0, sz - sizeof(r) - cap);
		o->len += sz;
		o->nrec++;
		o->res.n_captured++;
		o->res.captured_bytes += d->wirelen;
		for (j = 0; j < nprogs; j++)
			if (mask & (1ull << j))
				o->res.out_pkts[j]++;
	}
}

#endif
