/* SPDX-License-Identifier: BSD-3-Clause */
/* kernels/examples/flowfirst: crafted flows (both directions, uni, ICMP,
 * non-IP) with exact verdicts; the corpus against an independent flow
 * count: never more than N captured per flow, exactly the first N. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "kt_util.h"
#include "kernels/examples/flowfirst/flowfirst.c"

char gcap_kernel_errmsg[GCAP_KERNEL_ERR_SIZE];

static const uint8_t A[16] = { 10, 1, 0, 1 };
static const uint8_t B[16] = { 10, 1, 0, 2 };

static uint32_t
pkt(struct gcap_khost *k, const uint8_t *src, uint16_t sp, const uint8_t *dst,
    uint16_t dp, uint8_t proto)
{
	uint8_t b[2048];
	struct kt_spec s = { .ipv = 4,
			     .proto = proto,
			     .sport = sp,
			     .dport = dp,
			     .payload = "x",
			     .plen = 1 };
	memcpy(s.src, src, 16);
	memcpy(s.dst, dst, 16);
	uint32_t n = kt_build(&s, b);
	uint8_t *g = kt_guard_copy(b, n);
	struct gcap_kpkt p = kt_view(g, n);
	uint32_t v = gcap_khost_run(k, &p);
	kt_guard_free(g, n);
	return v;
}

START_TEST(crafted_bi)
{
	struct gcap_khost *k = kt_load(kt_example("flowfirst"), "n=2");
	const struct gcap_kstate *st = gcap_khost_state(k);
	ck_assert_uint_eq(pkt(k, A, 1000, B, 80, 6), GCAP_CAPTURE);
	ck_assert_uint_eq(pkt(k, B, 80, A, 1000, 6), GCAP_CAPTURE);
	ck_assert_uint_eq(pkt(k, A, 1000, B, 80, 6), GCAP_DROP);
	ck_assert_uint_eq(pkt(k, B, 80, A, 1000, 6), GCAP_DROP);
	/* another port: another flow; UDP with the same ports: another flow */
	ck_assert_uint_eq(pkt(k, A, 1001, B, 80, 6), GCAP_CAPTURE);
	ck_assert_uint_eq(pkt(k, A, 1000, B, 80, 17), GCAP_CAPTURE);
	/* ICMP: a flow of addresses and protocol */
	for (int i = 0; i < 3; i++)
		ck_assert_uint_eq(pkt(k, i & 1 ? B : A, 0, i & 1 ? A : B, 0, 1),
				  i < 2 ? GCAP_CAPTURE : GCAP_DROP);
	/* not IP: always captured */
	uint8_t b[2048];
	static const uint8_t arp_body[28] = "arp.....";
	struct kt_spec arp = { .ethertype = 0x0806,
			       .payload = arp_body,
			       .plen = sizeof(arp_body) };
	uint32_t n = kt_build(&arp, b);
	for (int i = 0; i < 3; i++) {
		struct gcap_kpkt p = kt_view(b, n);
		ck_assert_uint_eq(gcap_khost_run(k, &p), GCAP_CAPTURE);
	}
	ck_assert_uint_eq(st->packets, 9);
	ck_assert_uint_eq(st->captured, 6);
	ck_assert_uint_eq(st->other, 3);
	ck_assert_uint_eq(st->flows.used, 4);

	char *txt = NULL;
	size_t tl;
	FILE *f = open_memstream(&txt, &tl);
	ck_assert_int_eq(gcap_khost_report_json(k, f, NULL), 0);
	fclose(f);
	ck_assert_ptr_nonnull(
		strstr(txt, "\"top\": [\n    {\n      \"a\": \"10.1.0.1\",\n"
			    "      \"a_port\": 1000,\n      \"b\": \"10.1.0.2\",\n"
			    "      \"b_port\": 80,\n      \"proto\": 6,\n"
			    "      \"packets\": 4\n    },"));
	ck_assert_ptr_nonnull(strstr(txt, "\"dropped\": 3,"));
	free(txt);
	gcap_khost_free(k);
}
END_TEST

START_TEST(crafted_uni_and_args)
{
	struct gcap_khost *k = kt_load(kt_example("flowfirst"), "1,uni");
	ck_assert_uint_eq(pkt(k, A, 1000, B, 80, 6), GCAP_CAPTURE);
	ck_assert_uint_eq(pkt(k, B, 80, A, 1000, 6), GCAP_CAPTURE);
	ck_assert_uint_eq(pkt(k, A, 1000, B, 80, 6), GCAP_DROP);
	ck_assert_uint_eq(pkt(k, B, 80, A, 1000, 6), GCAP_DROP);
	gcap_khost_free(k);
	k = kt_load(kt_example("flowfirst"), "0");
	ck_assert_uint_eq(pkt(k, A, 1000, B, 80, 6), GCAP_DROP);
	gcap_khost_free(k);
	char eb[GCAP_ERRBUF_SIZE];
	ck_assert_ptr_null(gcap_khost_load(kt_example("flowfirst"), "n=-1", eb));
	ck_assert_int_eq(errno, ECANCELED);
	ck_assert_ptr_nonnull(strstr(eb, "bad argument 'n=-1'"));
}
END_TEST

struct flow {
	uint8_t key[40];
	uint64_t seen, captured;
};

static int
flow_cmp(const void *a, const void *b)
{
	return memcmp(a, b, 40);
}

START_TEST(corpus)
{
	const uint64_t N = 3;
	char pe[PCAP_ERRBUF_SIZE];
	pcap_t *pc = pcap_open_offline(kt_corpus(), pe);
	ck_assert_msg(pc != NULL, "%s", pe);
	struct gcap_khost *k = kt_load(kt_example("flowfirst"), "n=3");
	const struct gcap_kstate *st = gcap_khost_state(k);
	size_t cap = 1 << 16, nf = 0;
	struct flow *fl = calloc(cap, sizeof(*fl));
	uint64_t other = 0, ippk = 0, captured = 0;
	struct pcap_pkthdr *h;
	const u_char *d;
	while (pcap_next_ex(pc, &h, &d) == 1) {
		struct gcap_kpkt kp = kt_view(d, h->caplen);
		uint32_t v = gcap_khost_run(k, &kp);
		struct kt_flow f;
		kt_parse(d, h->caplen, &f);
		if (!f.ipv) {
			other++;
			ck_assert_uint_eq(v, GCAP_CAPTURE);
			continue;
		}
		ippk++;
		/* bidirectional key: the smaller (address, port) end first */
		uint8_t e1[18], e2[18], key[40] = { 0 };
		memcpy(e1, f.src, 16);
		e1[16] = (uint8_t)(f.sport >> 8);
		e1[17] = (uint8_t)f.sport;
		memcpy(e2, f.dst, 16);
		e2[16] = (uint8_t)(f.dport >> 8);
		e2[17] = (uint8_t)f.dport;
		bool sw = memcmp(e1, e2, 18) > 0;
		memcpy(key, sw ? e2 : e1, 18);
		memcpy(key + 18, sw ? e1 : e2, 18);
		key[36] = f.proto;
		key[37] = (uint8_t)f.ipv;
		size_t i;
		for (i = 0; i < nf; i++) /* linear: the corpus has few flows */
			if (!memcmp(fl[i].key, key, 40))
				break;
		if (i == nf) {
			ck_assert_uint_lt(nf, cap);
			memcpy(fl[nf++].key, key, 40);
		}
		bool want = fl[i].seen++ < N;
		ck_assert_uint_eq(v, want ? GCAP_CAPTURE : GCAP_DROP);
		if (v == GCAP_CAPTURE) {
			fl[i].captured++;
			captured++;
		}
		ck_assert_uint_le(fl[i].captured, N);
	}
	pcap_close(pc);
	qsort(fl, nf, sizeof(*fl), flow_cmp);
	for (size_t i = 0; i < nf; i++)
		ck_assert_uint_eq(fl[i].captured, fl[i].seen < N ? fl[i].seen : N);
	ck_assert_uint_gt(nf, 10);
	ck_assert_uint_eq(st->flows.used, nf);
	ck_assert_uint_eq(st->flows.full, 0);
	ck_assert_uint_eq(st->packets, ippk);
	ck_assert_uint_eq(st->captured, captured);
	ck_assert_uint_eq(st->other, other);
	ck_assert_uint_eq(st->untracked, 0);
	free(fl);
	gcap_khost_free(k);
}
END_TEST

int
main(void)
{
	const TTest *const tests[] = { crafted_bi, crafted_uni_and_args, NULL };

	return kt_run_example("flowfirst", 120, tests, corpus);
}
