/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bpf_bench: the filter sets and their reference verdicts. Six sets of
 * tcpdump expressions, compiled by libpcap: "ip", "tcp port 80 or udp
 * port 53", one long expression of 100+ instructions, and 1, 8 and 64
 * distinct filters (a 64-bit mask per packet). bpf_filter() gives every
 * base packet's mask; its prefix sums give the matches expected over any
 * range of the buffer, against which every engine's counts are checked.
 * Separate from the engines so that all of them check against the same
 * reference.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpucap/gcap_filter.h"

#include "bpf_bench_internal.h"

static const unsigned g_tcp_ports[16] = { 80,  443, 22,   21,   25,  110,  143, 23,
					  139, 445, 3389, 8080, 179, 1723, 993, 5060 };
static const unsigned g_udp_ports[16] = { 53,   123, 161, 67, 500,  514,  520,  1812,
					  5353, 137, 138, 69, 1900, 4500, 7000, 3784 };

/* distinct expression number i of the multi-filter sets */
static char *
multi_expr(unsigned i)
{
	char buf[128];

	switch (i % 4) {
	case 0: snprintf(buf, sizeof(buf), "tcp port %u", g_tcp_ports[i / 4]); break;
	case 1: snprintf(buf, sizeof(buf), "udp port %u", g_udp_ports[i / 4]); break;
	case 2: snprintf(buf, sizeof(buf), "host 10.0.%u.%u", i / 4, 1 + i); break;
	default: snprintf(buf, sizeof(buf), "net 192.168.%u.0/24", i / 4); break;
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
			o += (size_t)snprintf(buf + o, sizeof(buf) - o,
					      "%shost 172.16.%u.%u", i ? " or " : "", i,
					      2 * i + 1);
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

int
gcap_bench_sets_make(struct bb_set *sets, int linktype)
{
	char *lx = long_expr(linktype);
	unsigned i;

	memset(sets, 0, sizeof(*sets) * BB_NSETS);
	if (lx == NULL) {
		fprintf(stderr,
			"bpf_bench: could not build a filter of 100+ instructions\n");
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
	sets[4].label = strdup("8 filters: tcp port N / udp port N / host 10.0.x.y / net "
			       "192.168.x.0/24");
	sets[5].label = strdup("64 filters: tcp port N / udp port N / host 10.0.x.y / "
			       "net 192.168.x.0/24");
	if (sets[2].insns < 100) {
		fprintf(stderr, "bpf_bench: long filter has only %u instructions\n",
			sets[2].insns);
		return -1;
	}
	return 0;
}

static uint64_t
pcap_mask(const struct bb_set *s, const uint8_t *p, uint32_t wirelen, uint32_t caplen)
{
	uint64_t m = 0;
	unsigned k;

	for (k = 0; k < s->np; k++)
		if (bpf_filter(s->progs[k].bf_insns, p, wirelen, caplen) != 0)
			m |= 1ull << k;
	return m;
}

int
gcap_bench_set_ref(struct bb_set *s, const struct bb_pkts *pk)
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
		s->pre_bits[i + 1] =
			s->pre_bits[i] + (uint64_t)__builtin_popcountll(s->ref[i]);
	}
	return 0;
}

void
gcap_bench_expect_prefix(const struct bb_set *s, const struct bb_pkts *pk, uint64_t k,
			 uint64_t *any, uint64_t *bits)
{
	uint64_t c = k / pk->nbase, r = k % pk->nbase;

	*any = c * s->pre_any[pk->nbase] + s->pre_any[r];
	*bits = c * s->pre_bits[pk->nbase] + s->pre_bits[r];
}

void
gcap_bench_expect_range(const struct bb_set *s, const struct bb_pkts *pk, uint64_t start,
			uint64_t count, uint64_t *any, uint64_t *bits)
{
	uint64_t j = start % pk->n, a0, b0, a1, b1;

	*any = *bits = 0;
	while (count > 0) {
		uint64_t run = pk->n - j < count ? pk->n - j : count;

		gcap_bench_expect_prefix(s, pk, j, &a0, &b0);
		gcap_bench_expect_prefix(s, pk, j + run, &a1, &b1);
		*any += a1 - a0;
		*bits += b1 - b0;
		count -= run;
		j = 0;
	}
}
