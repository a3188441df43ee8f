/* SPDX-License-Identifier: BSD-3-Clause */
/* kernels/examples/sigmatch: the automaton on crafted payloads (overlaps,
 * suffix chains, binary and case-folded patterns), pattern file errors,
 * and the corpus against a naive search of every pattern. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "kt_util.h"
#include "kernels/examples/sigmatch/sigmatch.c"

char gcap_kernel_errmsg[GCAP_KERNEL_ERR_SIZE];

static uint32_t
feed(struct gcap_khost *k, uint8_t proto, const void *pl, uint32_t plen)
{
	uint8_t b[2048];
	struct kt_spec s = { .ipv = 4,
			     .proto = proto,
			     .sport = 1,
			     .dport = 2,
			     .payload = pl,
			     .plen = plen };
	uint32_t n = kt_build(&s, b);
	uint8_t *g = kt_guard_copy(b, n);
	struct gcap_kpkt p = kt_view(g, n);
	uint32_t v = gcap_khost_run(k, &p);
	kt_guard_free(g, n);
	return v;
}

static const char *small = "# test patterns\n"
			   "he\n"
			   "she\n"
			   "his\n"
			   "hers\n"
			   "\\x00\\xffA\n"
			   "\n"
			   "he\n"
			   "\\#tag\n"
			   "CaseD\n";

START_TEST(crafted)
{
	char *pf = kt_write_tmp("p.txt", small);
	struct gcap_khost *k = kt_load(kt_example("sigmatch"), pf);
	const struct gcap_kstate *st = gcap_khost_state(k);
	ck_assert_uint_eq(st->npat, 8);
	ck_assert_uint_eq(st->dups, 1);
	ck_assert_uint_eq(feed(k, 6, "ushers", 6), GCAP_CAPTURE);
	ck_assert_uint_eq(st->pat_hits[0], 1); /* he */
	ck_assert_uint_eq(st->pat_hits[1], 1); /* she */
	ck_assert_uint_eq(st->pat_hits[3], 1); /* hers */
	ck_assert_uint_eq(st->hits, 3);
	ck_assert_uint_eq(feed(k, 17, "hehehe his", 10), GCAP_CAPTURE);
	ck_assert_uint_eq(st->pat_hits[0], 4);
	ck_assert_uint_eq(st->pat_hits[2], 1);
	ck_assert_uint_eq(feed(k, 17,
			       "x\0\xff"
			       "A#tag",
			       8),
			  GCAP_CAPTURE);
	ck_assert_uint_eq(st->pat_hits[4], 1);
	ck_assert_uint_eq(st->pat_hits[6], 1);
	/* case matters without nocase */
	ck_assert_uint_eq(feed(k, 6, "cased HE", 8), GCAP_DROP);
	ck_assert_uint_eq(feed(k, 6, "CaseD", 5), GCAP_CAPTURE);
	/* not TCP/UDP, or no payload: not scanned */
	ck_assert_uint_eq(feed(k, 1, "she", 3), GCAP_DROP);
	ck_assert_uint_eq(feed(k, 6, "", 0), GCAP_DROP);
	ck_assert_uint_eq(st->packets, 5);
	ck_assert_uint_eq(st->matched, 4);
	ck_assert_uint_eq(st->pat_hits[5], 0); /* the duplicate "he" */

	char *txt = NULL;
	size_t tl;
	FILE *f = open_memstream(&txt, &tl);
	ck_assert_int_eq(gcap_khost_report_json(k, f, NULL), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(txt, "\"patterns\": 7,"));
	ck_assert_ptr_nonnull(strstr(txt,
				     "\"top\": [\n    {\n      \"pattern\": \"he\",\n"
				     "      \"line_index\": 0,\n      \"hits\": 4\n"));
	ck_assert_ptr_nonnull(strstr(txt, "\"pattern\": \"\\u0000\\u00ffA\""));
	free(txt);
	gcap_khost_free(k);

	char arg[4200];
	snprintf(arg, sizeof(arg), "nocase,file=%s,top=1", pf);
	k = kt_load(kt_example("sigmatch"), arg);
	st = gcap_khost_state(k);
	ck_assert_uint_eq(feed(k, 6, "cased HE", 8), GCAP_CAPTURE);
	ck_assert_uint_eq(st->pat_hits[0], 1);
	ck_assert_uint_eq(st->pat_hits[7], 1);
	gcap_khost_free(k);
	free(pf);
}
END_TEST

START_TEST(bad_pattern_files)
{
	char eb[GCAP_ERRBUF_SIZE];
	ck_assert_ptr_null(gcap_khost_load(kt_example("sigmatch"), "/nonexistent", eb));
	ck_assert_int_eq(errno, ECANCELED);
	ck_assert_ptr_nonnull(strstr(eb, "/nonexistent: cannot open the pattern file"));
	char *pf = kt_write_tmp("bad.txt", "ok\nbad\\q\n");
	ck_assert_ptr_null(gcap_khost_load(kt_example("sigmatch"), pf, eb));
	ck_assert_ptr_nonnull(strstr(eb, ":2: bad pattern"));
	free(pf);
	pf = kt_write_tmp("empty.txt", "# nothing\n\n");
	ck_assert_ptr_null(gcap_khost_load(kt_example("sigmatch"), pf, eb));
	ck_assert_ptr_nonnull(strstr(eb, "no patterns"));
	free(pf);
}
END_TEST

/* The default pattern file over the corpus, against memmem per pattern. */
START_TEST(corpus)
{
	char pe[PCAP_ERRBUF_SIZE];
	pcap_t *pc = pcap_open_offline(kt_corpus(), pe);
	ck_assert_msg(pc != NULL, "%s", pe);
	struct gcap_khost *k = kt_load(kt_example("sigmatch"), NULL);
	const struct gcap_kstate *st = gcap_khost_state(k);
	ck_assert_uint_ge(st->npat, 1000);
	uint64_t *want = calloc(st->npat, sizeof(*want));
	bool *first = calloc(st->npat, sizeof(*first));
	for (uint32_t i = 0; i < st->npat; i++) {
		first[i] = true;
		for (uint32_t j = 0; j < i && first[i]; j++)
			first[i] = !(st->patlen[j] == st->patlen[i] &&
				     !memcmp(st->pat[j], st->pat[i], st->patlen[i]));
	}
	uint64_t matched = 0, pkts = 0;
	struct pcap_pkthdr *h;
	const u_char *d;
	while (pcap_next_ex(pc, &h, &d) == 1) {
		struct gcap_kpkt kp = kt_view(d, h->caplen);
		uint32_t v = gcap_khost_run(k, &kp);
		struct gcap_parsed p;
		gcap_parse(&kp, &p);
		uint64_t hits = 0;
		pkts++;
		if ((p.flags & (GCAP_PF_TCP | GCAP_PF_UDP)) && p.payload_len) {
			const uint8_t *pl = d + p.payload_off;
			for (uint32_t i = 0; i < st->npat; i++) {
				if (!first[i])
					continue;
				const uint8_t *c = pl, *e = pl + p.payload_len;
				const uint8_t *m;
				while ((m = memmem(c, (size_t)(e - c), st->pat[i],
						   st->patlen[i]))) {
					want[i]++;
					hits++;
					c = m + 1;
				}
			}
		}
		matched += hits != 0;
		ck_assert_msg(v == (hits ? GCAP_CAPTURE : GCAP_DROP), "packet %llu",
			      (unsigned long long)pkts);
	}
	pcap_close(pc);
	ck_assert_uint_gt(matched, 0);
	ck_assert_uint_eq(st->matched, matched);
	for (uint32_t i = 0; i < st->npat; i++)
		ck_assert_msg(st->pat_hits[i] == want[i],
			      "pattern %u '%.*s': %llu != %llu", i, st->patlen[i],
			      st->pat[i], (unsigned long long)st->pat_hits[i],
			      (unsigned long long)want[i]);
	free(want);
	free(first);
	gcap_khost_free(k);
}
END_TEST

int
main(void)
{
	const TTest *const tests[] = { crafted, bad_pattern_files, NULL };

	return kt_run_example("sigmatch", 240, tests, corpus);
}
