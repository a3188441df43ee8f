/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bpf_bench: the packets every engine reads. A pcap is read into memory
 * (its "base" packets) and replicated into one contiguous buffer: an array
 * of descriptors (offset, caplen, wirelen) at its start, then the packet
 * bytes, each packet 8-byte aligned. Separate from the engines so that
 * all of them, CPU and GPU, see the same layout; where the buffer lives
 * (anonymous memory here, pinned host memory in bpf_bench_gpu.c) is the
 * caller's choice.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bpf_bench_internal.h"

int
gcap_bench_pkts_load(const char *path, uint32_t snap, struct bb_pkts *pk, int *linktype)
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
		fprintf(stderr, "bpf_bench: %s: %s (using the %u packets before)\n", path,
			pcap_geterr(p), pk->nbase);
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

/* cyclic copies: descriptors + aligned bytes, after a fixed 4 KiB */
uint64_t
gcap_bench_pkts_fit(const struct bb_pkts *pk, size_t size)
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
	return n;
}

int
gcap_bench_pkts_map(struct bb_pkts *pk, size_t mb)
{
	pk->buf = mmap(NULL, pk->size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pk->buf == MAP_FAILED) {
		fprintf(stderr, "bpf_bench: mmap %zu MiB: %s\n", mb, strerror(errno));
		return -1;
	}
	return 0;
}

void
gcap_bench_pkts_fill(struct bb_pkts *pk)
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
		size_t len = cnt == pk->nbase ?
				     per :
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
