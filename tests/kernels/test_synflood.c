/* SPDX-License-Identifier: BSD-3-Clause */
/* kernels/examples/synflood: crafted SYN / SYN-ACK sequences with exact
 * verdicts and counters; the corpus against an independent count. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "kt_util.h"
#include "kernels/examples/synflood/synflood.c"

char gcap_kernel_errmsg[GCAP_KERNEL_ERR_SIZE];

static uint32_t
tcp(struct gcap_khost *k, int ipv, const uint8_t *src, const uint8_t *dst, uint8_t flags)
{
	uint8_t b[2048];
	struct kt_spec s = { .ipv = ipv,
			     .proto = 6,
			     .sport = 40000,
			     .dport = 80,
			     .tcp_flags = flags,
			     .tcp_optlen = 20 };
	memcpy(s.src, src, 16);
	memcpy(s.dst, dst, 16);
	uint32_t n = kt_build(&s, b);
	uint8_t *g = kt_guard_copy(b, n);
	struct gcap_kpkt p = kt_view(g, n);
	uint32_t v = gcap_khost_run(k, &p);
	kt_guard_free(g, n);
	return v;
}

static int32_t
slot_of(const struct gcap_kstate *st, int ipv, const uint8_t *a)
{
	uint8_t key[16] = { 0 };
	if (ipv == 4) {
		key[10] = key[11] = 0xff;
		memcpy(key + 12, a, 4);
	} else
		memcpy(key, a, 16);
	struct gcap_hkey k;
	gcap_hkey_set(&k, key, 16);
	return gcap_hash_find(st->srv.slot, SF_SLOTS, &k);
}

START_TEST(crafted)
{
	static const uint8_t C[16] = { 198, 51, 100, 7 };
	static const uint8_t S1[16] = { 203, 0, 113, 1 };
	static const uint8_t S2[16] = { 203, 0, 113, 2 };
	static const uint8_t S6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 0x80 };
	static const uint8_t C6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 0x01 };
	struct gcap_khost *k = kt_load(kt_example("synflood"), "threshold=3,top=2");
	const struct gcap_kstate *st = gcap_khost_state(k);
	ck_assert_uint_eq(st->threshold, 3);
	uint32_t want[6] = { GCAP_DROP,    GCAP_DROP,    GCAP_DROP,
			     GCAP_CAPTURE, GCAP_CAPTURE, GCAP_CAPTURE };
	for (int i = 0; i < 6; i++)
		ck_assert_uint_eq(tcp(k, 4, C, S1, GCAP_TCP_SYN), want[i]);
	ck_assert_uint_eq(tcp(k, 4, S1, C, GCAP_TCP_SYN | GCAP_TCP_ACK), GCAP_DROP);
	ck_assert_uint_eq(tcp(k, 4, C, S1, GCAP_TCP_ACK), GCAP_DROP);
	ck_assert_uint_eq(tcp(k, 4, C, S1, GCAP_TCP_RST), GCAP_DROP);
	for (int i = 0; i < 3; i++)
		ck_assert_uint_eq(tcp(k, 4, C, S2, GCAP_TCP_SYN), GCAP_DROP);
	for (int i = 0; i < 4; i++)
		ck_assert_uint_eq(
			tcp(k, 6, C6, S6, GCAP_TCP_SYN | GCAP_TCP_ECE | GCAP_TCP_CWR),
			want[i]);
	ck_assert_uint_eq(tcp(k, 6, S6, C6, GCAP_TCP_SYN | GCAP_TCP_ACK), GCAP_DROP);
	ck_assert_uint_eq(st->syn, 13);
	ck_assert_uint_eq(st->synack, 2);
	ck_assert_uint_eq(st->captured, 4);
	ck_assert_uint_eq(st->srv.used, 3);
	int32_t s1 = slot_of(st, 4, S1), s2 = slot_of(st, 4, S2), s6 = slot_of(st, 6, S6);
	ck_assert_int_ge(s1, 0);
	ck_assert_int_ge(s2, 0);
	ck_assert_int_ge(s6, 0);
	ck_assert_uint_eq(st->srv_syn[s1], 6);
	ck_assert_uint_eq(st->srv_synack[s1], 1);
	ck_assert_uint_eq(st->srv_syn[s2], 3);
	ck_assert_uint_eq(st->srv_syn[s6], 4);
	ck_assert_uint_eq(st->srv_synack[s6], 1);
	ck_assert_int_lt(slot_of(st, 4, C), 0);

	char *txt = NULL;
	size_t tl;
	FILE *f = open_memstream(&txt, &tl);
	ck_assert_int_eq(gcap_khost_report_json(k, f, NULL), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(txt, "\"servers_over_threshold\": 2,"));
	ck_assert_ptr_nonnull(strstr(txt, "\"addr\": \"203.0.113.1\",\n      "
					  "\"syn\": 6,\n      \"synack\": 1,\n      "
					  "\"over_threshold\": true"));
	ck_assert_ptr_nonnull(strstr(txt, "\"addr\": \"2001:db8:0:0:0:0:0:80\""));
	ck_assert_ptr_null(strstr(txt, "203.0.113.2")); /* top=2 */
	free(txt);
	gcap_khost_free(k);

	char eb[GCAP_ERRBUF_SIZE];
	ck_assert_ptr_null(gcap_khost_load(kt_example("synflood"), "lots", eb));
	ck_assert_int_eq(errno, ECANCELED);
	ck_assert_ptr_nonnull(strstr(eb, "bad argument: lots"));
	k = kt_load(kt_example("synflood"), "7");
	ck_assert_uint_eq(((const struct gcap_kstate *)gcap_khost_state(k))->threshold,
			  7);
	gcap_khost_free(k);
}
END_TEST

struct srv {
	int ipv;
	uint8_t a[16];
	uint64_t syn, synack;
};

START_TEST(corpus)
{
	char pe[PCAP_ERRBUF_SIZE];
	pcap_t *pc = pcap_open_offline(kt_corpus(), pe);
	ck_assert_msg(pc != NULL, "%s", pe);
	const uint64_t thr = 2;
	struct gcap_khost *k = kt_load(kt_example("synflood"), "threshold=2");
	const struct gcap_kstate *st = gcap_khost_state(k);
	static struct srv srv[8192];
	uint32_t nsrv = 0;
	uint64_t syn = 0, synack = 0, captured = 0;
	struct pcap_pkthdr *h;
	const u_char *d;
	while (pcap_next_ex(pc, &h, &d) == 1) {
		struct gcap_kpkt kp = kt_view(d, h->caplen);
		uint32_t v = gcap_khost_run(k, &kp);
		struct kt_flow f;
		kt_parse(d, h->caplen, &f);
		uint32_t want = GCAP_DROP;
		if (f.ipv && f.proto == 6 && f.ports && (f.tcp_flags & 2)) {
			bool sa = f.tcp_flags & 0x10;
			const uint8_t *a = sa ? f.src : f.dst;
			uint32_t i;
			for (i = 0; i < nsrv; i++)
				if (srv[i].ipv == f.ipv && !memcmp(srv[i].a, a, 16))
					break;
			if (i == nsrv) {
				ck_assert_uint_lt(nsrv, 8192);
				srv[nsrv].ipv = f.ipv;
				memcpy(srv[nsrv++].a, a, 16);
			}
			if (sa) {
				synack++;
				srv[i].synack++;
			} else {
				syn++;
				if (++srv[i].syn > thr) {
					want = GCAP_CAPTURE;
					captured++;
				}
			}
		}
		ck_assert_uint_eq(v, want);
	}
	pcap_close(pc);
	ck_assert_uint_gt(syn, 0);
	ck_assert_uint_gt(captured, 0);
	ck_assert_uint_eq(st->syn, syn);
	ck_assert_uint_eq(st->synack, synack);
	ck_assert_uint_eq(st->captured, captured);
	ck_assert_uint_eq(st->srv.used, nsrv);
	for (uint32_t i = 0; i < nsrv; i++) {
		int32_t s = slot_of(st, srv[i].ipv, srv[i].a);
		ck_assert_int_ge(s, 0);
		ck_assert_uint_eq(st->srv_syn[s], srv[i].syn);
		ck_assert_uint_eq(st->srv_synack[s], srv[i].synack);
	}
	gcap_khost_free(k);
}
END_TEST

int
main(void)
{
	const TTest *const tests[] = { crafted, NULL };

	return kt_run_example("synflood", 120, tests, corpus);
}
