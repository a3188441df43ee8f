/* SPDX-License-Identifier: BSD-3-Clause */
/* kernels/examples/dns: crafted queries with exact verdicts and state, and
 * the corpus against an independent DNS parse. */
#include <check.h>
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

#include "kt_util.h"
/* the kernel's state layout (the loader runs its own build of this file) */
#include "kernels/examples/dns/dns.c"

char gcap_kernel_errmsg[GCAP_KERNEL_ERR_SIZE];

static const uint8_t A4[16] = { 192, 0, 2, 1 };
static const uint8_t R4[16] = { 192, 0, 2, 53 };

static uint32_t
run(struct gcap_khost *k, const uint8_t *b, uint32_t len)
{
	uint8_t *g = kt_guard_copy(b, len);
	struct gcap_kpkt p = kt_view(g, len);
	uint32_t v = gcap_khost_run(k, &p);
	kt_guard_free(g, len);
	return v;
}

static uint32_t
query(struct gcap_khost *k, int ipv, const char *name, uint16_t dport, uint8_t proto)
{
	uint8_t dns[512], b[2048];
	struct kt_spec s = {
		.ipv = ipv, .proto = proto, .sport = 33333, .dport = dport, .payload = dns
	};
	memcpy(s.src, A4, 16);
	memcpy(s.dst, R4, 16);
	if (ipv == 6) {
		s.nvlan = 1;
		s.next = 1;
		s.ext[0] = 0;
	}
	s.plen = kt_dns_query(name, 1, dns);
	return run(k, b, kt_build(&s, b));
}

static int64_t
count_of(const struct gcap_kstate *st, const char *name)
{
	for (uint32_t i = 0; i < DNS_SLOTS; i++)
		if (gcap_hslot_used(&st->names.slot[i]) && st->nlen[i] == strlen(name) &&
		    memcmp(st->name[i], name, st->nlen[i]) == 0)
			return (int64_t)st->count[i];
	return -1;
}

START_TEST(crafted)
{
	struct gcap_khost *k =
		kt_load(kt_example("dns"), "example.com, .Evil.ORG.,top=3");
	const struct gcap_kstate *st = gcap_khost_state(k);
	ck_assert_uint_eq(st->nsuffix, 2);
	ck_assert_uint_eq(st->top, 3);

	ck_assert_uint_eq(query(k, 4, "www.example.com", 53, 17), GCAP_CAPTURE);
	ck_assert_uint_eq(query(k, 4, "WWW.Example.COM", 53, 17), GCAP_CAPTURE);
	ck_assert_uint_eq(query(k, 4, "example.com", 53, 17), GCAP_CAPTURE);
	ck_assert_uint_eq(query(k, 4, "badexample.com", 53, 17), GCAP_DROP);
	ck_assert_uint_eq(query(k, 4, "example.com.au", 53, 17), GCAP_DROP);
	ck_assert_uint_eq(query(k, 6, "a.b.evil.org", 53, 17), GCAP_CAPTURE);
	ck_assert_uint_eq(query(k, 4, "", 53, 17), GCAP_DROP); /* root */
	/* not DNS queries to port 53 over UDP */
	ck_assert_uint_eq(query(k, 4, "www.example.com", 5353, 17), GCAP_DROP);
	ck_assert_uint_eq(query(k, 4, "www.example.com", 53, 6), GCAP_DROP);

	/* a response is not counted */
	uint8_t dns[512], b[2048];
	struct kt_spec s = {
		.ipv = 4, .proto = 17, .sport = 1, .dport = 53, .payload = dns
	};
	s.plen = kt_dns_query("www.example.com", 2, dns);
	dns[2] |= 0x80;
	ck_assert_uint_eq(run(k, b, kt_build(&s, b)), GCAP_DROP);

	/* malformed: label overruns, compression pointer, short header,
	 * capture cut inside the name */
	s.plen = kt_dns_query("www.example.com", 3, dns);
	dns[12] = 60;
	ck_assert_uint_eq(run(k, b, kt_build(&s, b)), GCAP_DROP);
	s.plen = kt_dns_query("www.example.com", 4, dns);
	dns[12] = 0xc0;
	ck_assert_uint_eq(run(k, b, kt_build(&s, b)), GCAP_DROP);
	s.plen = 11;
	ck_assert_uint_eq(run(k, b, kt_build(&s, b)), GCAP_DROP);
	s.plen = kt_dns_query("www.example.com", 5, dns);
	uint32_t n = kt_build(&s, b);
	ck_assert_uint_eq(run(k, b, n - 10), GCAP_DROP);

	ck_assert_uint_eq(st->udp53, 12);
	ck_assert_uint_eq(st->queries, 7);
	ck_assert_uint_eq(st->matched, 4);
	ck_assert_uint_eq(st->malformed, 4);
	ck_assert_uint_eq(st->names.used, 6);
	ck_assert_uint_eq(st->names.full, 0);
	ck_assert_int_eq(count_of(st, "www.example.com"), 2);
	ck_assert_int_eq(count_of(st, "example.com"), 1);
	ck_assert_int_eq(count_of(st, "a.b.evil.org"), 1);
	ck_assert_int_eq(count_of(st, ""), 1);

	char *txt = NULL;
	size_t tl;
	FILE *f = open_memstream(&txt, &tl);
	ck_assert_int_eq(gcap_khost_report_json(k, f, NULL), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(txt, "\"suffixes\": [\n    \"example.com\",\n"
					  "    \"evil.org\"\n  ]"));
	ck_assert_ptr_nonnull(strstr(txt, "\"top\": [\n    {\n      \"name\": "
					  "\"www.example.com\",\n      \"count\": 2,\n"
					  "      \"matched\": true\n    },"));
	/* top=3: three entries */
	int entries = 0;
	for (const char *c = strstr(txt, "\"top\""); (c = strstr(c, "\"name\"")); c++)
		entries++;
	ck_assert_int_eq(entries, 3);
	free(txt);
	gcap_khost_free(k);
}
END_TEST

START_TEST(bad_args)
{
	char eb[GCAP_ERRBUF_SIZE];
	ck_assert_ptr_null(gcap_khost_load(kt_example("dns"), "top=x", eb));
	ck_assert_int_eq(errno, ECANCELED);
	ck_assert_ptr_nonnull(strstr(eb, "bad top=x"));
	ck_assert_ptr_null(gcap_khost_load(kt_example("dns"), "@/nonexistent", eb));
	ck_assert_ptr_nonnull(strstr(eb, "/nonexistent: cannot open"));
	/* @FILE with comments */
	char *p = kt_write_tmp("sfx.txt", "# watch list\nexample.com evil.org\n"
					  "\n tcpdump.org # project\n");
	char arg[4200];
	snprintf(arg, sizeof(arg), "@%s", p);
	struct gcap_khost *k = kt_load(kt_example("dns"), arg);
	const struct gcap_kstate *st = gcap_khost_state(k);
	ck_assert_uint_eq(st->nsuffix, 3);
	ck_assert_int_eq(memcmp(st->sfx[2], "tcpdump.org", 11), 0);
	gcap_khost_free(k);
	free(p);
}
END_TEST

/* ---- corpus: an independent parse ---- */

struct name_count {
	char name[256];
	uint64_t n;
};

/* Question name as lower-case text; -1 malformed (independent code). */
static int
my_qname(const uint8_t *p, uint32_t len, char *out)
{
	uint32_t o = 12, n = 0;
	for (;;) {
		if (o >= len)
			return -1;
		uint32_t l = p[o];
		if (l == 0)
			break;
		if (l >= 64 || o + 1 + l > len || n + !!n + l > 253)
			return -1;
		if (n)
			out[n++] = '.';
		for (uint32_t i = 0; i < l; i++)
			out[n++] = (char)tolower(p[o + 1 + i]);
		o += 1 + l;
	}
	out[n] = '\0';
	return (int)n;
}

static bool
ends_with_label(const char *name, const char *sfx)
{
	size_t n = strlen(name), l = strlen(sfx);
	return l <= n && strcmp(name + n - l, sfx) == 0 &&
	       (l == n || name[n - l - 1] == '.');
}

START_TEST(corpus)
{
	const char *path = kt_corpus();
	char pe[PCAP_ERRBUF_SIZE];
	pcap_t *pc = pcap_open_offline(path, pe);
	ck_assert_msg(pc != NULL, "%s", pe);
	struct gcap_khost *k = kt_load(kt_example("dns"), "example.com,tcpdump.org");
	const struct gcap_kstate *st = gcap_khost_state(k);
	static struct name_count names[4096];
	uint32_t nnames = 0;
	uint64_t udp53 = 0, queries = 0, matched = 0, malformed = 0, pkts = 0;
	struct pcap_pkthdr *h;
	const u_char *d;
	while (pcap_next_ex(pc, &h, &d) == 1) {
		struct gcap_kpkt kp = kt_view(d, h->caplen);
		uint32_t v = gcap_khost_run(k, &kp);
		pkts++;
		struct kt_flow f;
		kt_parse(d, h->caplen, &f);
		bool want = false;
		if (f.ipv && f.proto == 17 && f.ports && f.dport == 53) {
			udp53++;
			char nm[512];
			if (f.pllen < 12)
				malformed++;
			else if (!(f.pl[2] & 0x80) && (f.pl[4] | f.pl[5])) {
				int r = my_qname(f.pl, f.pllen, nm);
				if (r < 0)
					malformed++;
				else {
					queries++;
					uint32_t i;
					for (i = 0; i < nnames; i++)
						if (!strcmp(names[i].name, nm))
							break;
					if (i == nnames) {
						ck_assert_uint_lt(nnames, 4096);
						snprintf(names[nnames++].name, 256,
							 "%.255s", nm);
					}
					names[i].n++;
					want = ends_with_label(nm, "example.com") ||
					       ends_with_label(nm, "tcpdump.org");
					matched += want;
				}
			}
		}
		ck_assert_msg(v == (want ? GCAP_CAPTURE : GCAP_DROP),
			      "packet %llu: verdict %x", (unsigned long long)pkts, v);
	}
	pcap_close(pc);
	ck_assert_uint_gt(queries, 0);
	ck_assert_uint_gt(matched, 0);
	ck_assert_uint_eq(st->udp53, udp53);
	ck_assert_uint_eq(st->queries, queries);
	ck_assert_uint_eq(st->matched, matched);
	ck_assert_uint_eq(st->malformed, malformed);
	ck_assert_uint_eq(st->names.used, nnames);
	for (uint32_t i = 0; i < nnames; i++)
		ck_assert_msg(count_of(st, names[i].name) == (int64_t)names[i].n,
			      "name %s: kernel %lld, independent %llu", names[i].name,
			      (long long)count_of(st, names[i].name),
			      (unsigned long long)names[i].n);
	gcap_khost_free(k);
}
END_TEST

int
main(void)
{
	const TTest *const tests[] = { crafted, bad_args, NULL };

	return kt_run_example("dns", 120, tests, corpus);
}
