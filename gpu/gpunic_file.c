/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The emulated GPUDirect NIC's input, no CUDA here: its arguments
 * (rx_pcap=, loop=, gpu=, feeders=, prefill=, agent=) and the captures
 * read into one buffer with each packet's time, lengths and flow hash,
 * the "wire" that gpunic.c stages in VRAM.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include "gpucap/gcap_common.h"
#include "gpucap/gcap_kern_hash.h"
#include "gpunic_internal.h"

void
gcap_nic_args_free(struct gcap_nic_args *a)
{
	for (unsigned i = 0; i < a->nfiles; i++)
		free(a->files[i]);
	a->nfiles = 0;
}

static int
parse_uint(const char *v, unsigned max, unsigned *out)
{
	char *end;
	unsigned long x;

	if (v[0] < '0' || v[0] > '9')
		return -EINVAL;
	errno = 0;
	x = strtoul(v, &end, 10);
	if (errno != 0 || *end != '\0' || x > max)
		return -EINVAL;
	*out = (unsigned)x;
	return 0;
}

static int
check_file(const char *path, char *errbuf)
{
	char perr[PCAP_ERRBUF_SIZE];
	pcap_t *pc;

	if (access(path, R_OK) != 0)
		return gcap_err(errbuf, errno, "%s: %s", path, strerror(errno));
	pc = pcap_open_offline(path, perr);
	if (pc == NULL)
		return gcap_err(errbuf, EINVAL, "%s: %s", path, perr);
	pcap_close(pc);
	return 0;
}

int
gcap_nic_args_parse(const char *s, bool check_files, struct gcap_nic_args *a,
		    char *errbuf)
{
	char kv[PATH_MAX + 16];
	unsigned v;
	int rc;

	memset(a, 0, sizeof(*a));
	while (s != NULL && *s != '\0') {
		const char *end = strchr(s, ',');
		size_t len = end ? (size_t)(end - s) : strlen(s);
		char *val;

		if (len >= sizeof(kv))
			return gcap_err(errbuf, ENAMETOOLONG, "argument too long");
		memcpy(kv, s, len);
		kv[len] = '\0';
		s = end ? end + 1 : NULL;
		val = strchr(kv, '=');
		if (val == NULL || val[1] == '\0')
			return gcap_err(errbuf, EINVAL, "'%s': expected KEY=VALUE", kv);
		*val++ = '\0';
		if (strcmp(kv, "rx_pcap") == 0) {
			if (a->nfiles == GCAP_NIC_MAX_FILES)
				return gcap_err(errbuf, EINVAL,
						"more than %d rx_pcap files",
						GCAP_NIC_MAX_FILES);
			if (check_files && (rc = check_file(val, errbuf)) != 0)
				return rc;
			a->files[a->nfiles] = strdup(val);
			if (a->files[a->nfiles] == NULL)
				return gcap_err(errbuf, ENOMEM, "out of memory");
			a->nfiles++;
		} else if (strcmp(kv, "loop") == 0) {
			if (parse_uint(val, 1, &v) != 0)
				return gcap_err(errbuf, EINVAL,
						"loop=%s: expected 0 or 1", val);
			a->loop = v == 1;
		} else if (strcmp(kv, "agent") == 0) {
			if (strcmp(val, "gpu") != 0 && strcmp(val, "cpu") != 0)
				return gcap_err(errbuf, EINVAL,
						"agent=%s: expected gpu or cpu", val);
			a->cpu_agent = strcmp(val, "cpu") == 0;
		} else if (strcmp(kv, "prefill") == 0) {
			if (parse_uint(val, 1, &v) != 0)
				return gcap_err(errbuf, EINVAL,
						"prefill=%s: expected 0 or 1", val);
			a->prefill = v == 1;
		} else if (strcmp(kv, "gpu") == 0) {
			if (parse_uint(val, 63, &v) != 0)
				return gcap_err(errbuf, EINVAL,
						"gpu=%s: expected a GPU number", val);
			a->gpu = (int)v;
		} else if (strcmp(kv, "feeders") == 0) {
			if (parse_uint(val, 64, &v) != 0 || v == 0)
				return gcap_err(errbuf, EINVAL,
						"feeders=%s: expected 1..64", val);
			a->feeders = v;
		} else {
			return gcap_err(errbuf, EINVAL,
					"unknown key '%s' (rx_pcap, loop, gpu, feeders, "
					"prefill or agent)",
					kv);
		}
	}
	if (a->nfiles == 0)
		return gcap_err(errbuf, EINVAL, "no rx_pcap=FILE: the NIC needs packets");
	return 0;
}

static uint32_t
rd32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Symmetric flow hash of an Ethernet frame, as a NIC's RSS with a
 * symmetric key: addresses (and TCP/UDP ports) of both directions give
 * the same value. 0 for what is not IP (the first queue, as RSS does). */
static uint32_t
flow_hash(const unsigned char *p, uint32_t len)
{
	uint32_t off = 14, a = 0, b = 0, pa = 0, pb = 0, l4 = 0;
	unsigned proto = 0;
	uint16_t et;

	if (len < 14)
		return 0;
	et = (uint16_t)(p[12] << 8 | p[13]);
	while ((et == 0x8100 || et == 0x88a8) && len >= off + 4) {
		et = (uint16_t)(p[off + 2] << 8 | p[off + 3]);
		off += 4;
	}
	if (et == 0x0800 && len >= off + 20) {
		a = rd32(p + off + 12);
		b = rd32(p + off + 16);
		proto = p[off + 9];
		/* first fragment or none: the ports are there */
		if ((rd32(p + off + 4) & 0x1fff) == 0)
			l4 = off + (uint32_t)(p[off] & 0xf) * 4;
	} else if (et == 0x86dd && len >= off + 40) {
		for (unsigned i = 0; i < 4; i++) {
			a = gcap_mix32(a ^ rd32(p + off + 8 + 4 * i));
			b = gcap_mix32(b ^ rd32(p + off + 24 + 4 * i));
		}
		proto = p[off + 6];
		l4 = off + 40;
	} else {
		return 0;
	}
	if ((proto == 6 || proto == 17) && l4 != 0 && len >= l4 + 4) {
		pa = (uint32_t)(p[l4] << 8 | p[l4 + 1]);
		pb = (uint32_t)(p[l4 + 2] << 8 | p[l4 + 3]);
	}
	/* order-free: the same for both directions (every bit of it spreads
	 * over the queues: no bit may be forced) */
	return gcap_mix32((a ^ b) + (a < b ? a : b) * 31u + (pa ^ pb) * 131u + proto);
}

void
gcap_nic_capture_free(struct gcap_nic_capture *c)
{
	free(c->pkts);
	free(c->bytes);
	memset(c, 0, sizeof(*c));
}

static int
grow(void **p, size_t *cap, size_t need, size_t elt)
{
	size_t n = *cap ? *cap : 1024;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	q = realloc(*p, n * elt);
	if (q == NULL)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

int
gcap_nic_capture_read(const struct gcap_nic_args *a, struct gcap_nic_capture *c,
		      char *errbuf)
{
	size_t pcap_cap = 0, bcap = 0;

	memset(c, 0, sizeof(*c));
	for (unsigned f = 0; f < a->nfiles; f++) {
		char perr[PCAP_ERRBUF_SIZE];
		pcap_t *pc = pcap_open_offline_with_tstamp_precision(
			a->files[f], PCAP_TSTAMP_PRECISION_NANO, perr);
		struct pcap_pkthdr *h;
		const unsigned char *d;
		int r;

		if (pc == NULL) {
			gcap_nic_capture_free(c);
			return gcap_err(errbuf, EINVAL, "%s: %s", a->files[f], perr);
		}
		while ((r = pcap_next_ex(pc, &h, &d)) == 1) {
			struct gcap_nic_pkt *k;
			size_t off = (c->len + 7u) & ~(size_t)7u;

			if (grow((void **)&c->pkts, &pcap_cap, c->npkts + 1,
				 sizeof(*c->pkts)) ||
			    grow((void **)&c->bytes, &bcap, off + h->caplen + 8, 1)) {
				pcap_close(pc);
				gcap_nic_capture_free(c);
				return gcap_err(errbuf, ENOMEM,
						"out of memory reading %s", a->files[f]);
			}
			k = &c->pkts[c->npkts++];
			/* a classic pcap's seconds are 32 unsigned bits, which
			 * libpcap may hand over negative: the same bits again
			 * in the output, as tcpdump writes them */
			k->ts_ns = (h->ts.tv_sec < 0 ? (uint64_t)(uint32_t)h->ts.tv_sec :
						       (uint64_t)h->ts.tv_sec) *
					   1000000000u +
				   (uint64_t)h->ts.tv_usec;
			k->off = off;
			k->caplen = h->caplen;
			k->wirelen = h->len;
			k->hash = flow_hash(d, h->caplen);
			memcpy(c->bytes + off, d, h->caplen);
			c->len = off + h->caplen;
			if (h->caplen > c->maxlen)
				c->maxlen = h->caplen;
		}
		/* r == -1: a damaged record ends the file; what came before
		 * stays, as tcpdump -r writes it */
		pcap_close(pc);
	}
	if (c->len > UINT32_MAX) {
		gcap_nic_capture_free(c);
		return gcap_err(errbuf, EINVAL, "the captures exceed 4 GiB");
	}
	if (c->npkts == 0) {
		gcap_nic_capture_free(c);
		return gcap_err(errbuf, EINVAL, "the captures hold no packet");
	}
	return 0;
}
