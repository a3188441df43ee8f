/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The kernel API and the host loader: parsing of crafted packets, bounded
 * loads on guard-page packets, verdict encoding, the concurrent hash
 * table, JSON reports, the loader's error paths, and a cache no other
 * object or link can stand in.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kt_util.h"

static const uint8_t A4[16] = { 10, 0, 0, 1 };
static const uint8_t B4[16] = { 10, 0, 0, 2 };
static const uint8_t A6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
static const uint8_t B6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 2 };

static uint32_t
build(struct kt_spec *s, uint8_t *b)
{
	return kt_build(s, b);
}

/* Parse through a guard-page copy so that any overread faults. */
static uint32_t
parse(const uint8_t *b, uint32_t len, struct gcap_parsed *p)
{
	uint8_t *g = kt_guard_copy(b, len);
	struct gcap_kpkt k = kt_view(g, len);
	uint32_t f = gcap_parse(&k, p);
	kt_guard_free(g, len);
	return f;
}

START_TEST(parse_ipv4_tcp)
{
	uint8_t b[2048];
	struct gcap_parsed p;
	struct kt_spec s = { .ipv = 4,
			     .proto = 6,
			     .sport = 1234,
			     .dport = 80,
			     .tcp_flags = GCAP_TCP_SYN | GCAP_TCP_ACK,
			     .tcp_optlen = 12,
			     .payload = "hello",
			     .plen = 5 };
	memcpy(s.src, A4, 16);
	memcpy(s.dst, B4, 16);
	uint32_t n = build(&s, b);
	ck_assert_uint_eq(n, 14 + 20 + 32 + 5);
	uint32_t f = parse(b, n, &p);
	ck_assert_uint_eq(f, GCAP_PF_ETH | GCAP_PF_IPV4 | GCAP_PF_TCP);
	ck_assert_uint_eq(p.ethertype, 0x0800);
	ck_assert_uint_eq(p.l3_off, 14);
	ck_assert_uint_eq(p.l3_hlen, 20);
	ck_assert_uint_eq(p.l4_off, 34);
	ck_assert_uint_eq(p.l4_hlen, 32);
	ck_assert_uint_eq(p.sport, 1234);
	ck_assert_uint_eq(p.dport, 80);
	ck_assert_uint_eq(p.tcp_flags, GCAP_TCP_SYN | GCAP_TCP_ACK);
	ck_assert_uint_eq(p.tcp_seq, 0x1000);
	ck_assert_uint_eq(p.tcp_ack, 0x2000);
	ck_assert_uint_eq(p.payload_off, 66);
	ck_assert_uint_eq(p.payload_len, 5);
	ck_assert_uint_eq(p.l4_proto, 6);
	ck_assert_uint_eq(p.ttl, 64);
	ck_assert_mem_eq(p.src, A4, 16);
	ck_assert_mem_eq(p.dst, B4, 16);
}
END_TEST

START_TEST(parse_vlan_qinq_options_padding)
{
	uint8_t b[2048];
	struct gcap_parsed p;
	struct kt_spec s = { .nvlan = 2,
			     .tpid = { 0x88a8, 0x8100 },
			     .tci = { 0x0064, 0x20c8 },
			     .ipv = 4,
			     .ip_optlen = 8,
			     .proto = 17,
			     .sport = 5353,
			     .dport = 53,
			     .payload = "abcd",
			     .plen = 4 };
	uint32_t n = build(&s, b);
	ck_assert_uint_eq(n, 14 + 8 + 28 + 8 + 4);
	/* Ethernet padding after the datagram is not payload */
	uint32_t f = parse(b, 80, &p);
	ck_assert_uint_eq(f, GCAP_PF_ETH | GCAP_PF_VLAN | GCAP_PF_IPV4 | GCAP_PF_IPOPT |
				     GCAP_PF_UDP);
	ck_assert_uint_eq(p.nvlan, 2);
	ck_assert_uint_eq(p.vlan[0], 0x0064);
	ck_assert_uint_eq(p.vlan[1], 0x20c8);
	ck_assert_uint_eq(p.l3_off, 22);
	ck_assert_uint_eq(p.l3_hlen, 28);
	ck_assert_uint_eq(p.l4_off, 50);
	ck_assert_uint_eq(p.payload_off, 58);
	ck_assert_uint_eq(p.payload_len, 4);
	ck_assert_uint_eq(p.l3_len, 40);

	/* single 802.1Q tag, ICMP echo */
	struct kt_spec s2 = { .nvlan = 1,
			      .tci = { 7 },
			      .ipv = 4,
			      .proto = 1,
			      .icmp_type = 8,
			      .icmp_code = 0 };
	n = build(&s2, b);
	f = parse(b, n, &p);
	ck_assert_uint_eq(f, GCAP_PF_ETH | GCAP_PF_VLAN | GCAP_PF_IPV4 | GCAP_PF_ICMP);
	ck_assert_uint_eq(p.nvlan, 1);
	ck_assert_uint_eq(p.vlan[0], 7);
	ck_assert_uint_eq(p.icmp_type, 8);

	/* five tags: more than the parser walks */
	struct kt_spec s3 = { .ipv = 4, .proto = 17 };
	n = build(&s3, b);
	uint8_t big[2048];
	memcpy(big, b, 12);
	for (int i = 0; i < 5; i++)
		memcpy(big + 12 + 4 * i, "\x81\x00\x00\x01", 4);
	memcpy(big + 32, b + 12, n - 12);
	f = parse(big, n + 20, &p);
	ck_assert(f & GCAP_PF_BADHDR);
	ck_assert(!(f & GCAP_PF_IPV4));
}
END_TEST

START_TEST(parse_ipv6_ext_headers)
{
	uint8_t b[2048];
	struct gcap_parsed p;
	struct kt_spec s = { .ipv = 6,
			     .next = 4,
			     .ext = { 0, 43, 51, 60 },
			     .proto = 17,
			     .sport = 1000,
			     .dport = 53,
			     .payload = "xyz",
			     .plen = 3 };
	memcpy(s.src, A6, 16);
	memcpy(s.dst, B6, 16);
	uint32_t n = build(&s, b);
	uint32_t f = parse(b, n, &p);
	ck_assert_uint_eq(f, GCAP_PF_ETH | GCAP_PF_IPV6 | GCAP_PF_IPOPT | GCAP_PF_UDP);
	ck_assert_uint_eq(p.n_ext, 4);
	ck_assert_uint_eq(p.l4_off, 14 + 40 + 64);
	ck_assert_uint_eq(p.l4_proto, 17);
	ck_assert_uint_eq(p.dport, 53);
	ck_assert_uint_eq(p.payload_len, 3);
	ck_assert_mem_eq(p.src, A6, 16);
	ck_assert_mem_eq(p.dst, B6, 16);

	/* first fragment: L4 header present */
	struct kt_spec fr = { .ipv = 6,
			      .next = 1,
			      .ext = { 44 },
			      .mf = true,
			      .proto = 6,
			      .sport = 1,
			      .dport = 2,
			      .tcp_flags = GCAP_TCP_SYN };
	n = build(&fr, b);
	f = parse(b, n, &p);
	ck_assert_uint_eq(f, GCAP_PF_ETH | GCAP_PF_IPV6 | GCAP_PF_IPOPT | GCAP_PF_FRAG |
				     GCAP_PF_TCP);
	/* later fragment: none */
	fr.frag_off = 1480;
	fr.payload = "zzzzzzzz";
	fr.plen = 8;
	n = build(&fr, b);
	f = parse(b, n, &p);
	ck_assert_uint_eq(f, GCAP_PF_ETH | GCAP_PF_IPV6 | GCAP_PF_IPOPT | GCAP_PF_FRAG |
				     GCAP_PF_FRAG_LATER);
	ck_assert_uint_eq(p.frag_off, 1480);
	ck_assert_uint_eq(p.sport, 0);

	/* ICMPv6 */
	struct kt_spec ic = { .ipv = 6, .proto = 58, .icmp_type = 135, .icmp_code = 0 };
	n = build(&ic, b);
	f = parse(b, n, &p);
	ck_assert_uint_eq(f, GCAP_PF_ETH | GCAP_PF_IPV6 | GCAP_PF_ICMP6);
	ck_assert_uint_eq(p.icmp_type, 135);

	/* IPv4 later fragment */
	struct kt_spec f4 = {
		.ipv = 4, .proto = 17, .frag_off = 8, .payload = "12345678", .plen = 8
	};
	n = build(&f4, b);
	f = parse(b, n, &p);
	ck_assert_uint_eq(f,
			  GCAP_PF_ETH | GCAP_PF_IPV4 | GCAP_PF_FRAG | GCAP_PF_FRAG_LATER);
	ck_assert_uint_eq(p.frag_off, 8);
}
END_TEST

/* Every prefix of complex packets parses without reading past caplen. */
START_TEST(parse_truncated_every_length)
{
	uint8_t b[2048];
	struct gcap_parsed p;
	struct kt_spec specs[3] = {
		{ .nvlan = 2,
		  .ipv = 6,
		  .next = 3,
		  .ext = { 0, 44, 51 },
		  .proto = 6,
		  .tcp_optlen = 8,
		  .payload = "data",
		  .plen = 4 },
		{ .nvlan = 1,
		  .ipv = 4,
		  .ip_optlen = 40,
		  .proto = 17,
		  .payload = "q",
		  .plen = 1 },
		{ .ipv = 4, .proto = 1, .icmp_type = 3 },
	};
	for (int i = 0; i < 3; i++) {
		uint32_t n = build(&specs[i], b);
		for (uint32_t len = 0; len <= n; len++) {
			uint32_t f = parse(b, len, &p);
			if (len < n && len >= 14) {
				/* cut inside the headers: marked truncated;
				 * cut in the payload: fewer payload bytes */
				ck_assert_msg((f & GCAP_PF_TRUNC) ||
						      p.payload_off + p.payload_len ==
							      len,
					      "spec %d len %u flags %x", i, len, f);
			}
			ck_assert_uint_le(p.payload_off + p.payload_len, len);
		}
	}
}
END_TEST

START_TEST(verdict_encoding)
{
	uint64_t m;
	uint32_t snap;
	ck_assert_uint_eq(GCAP_DROP, 0);
	ck_assert(!gcap_verdict_apply(GCAP_DROP, 0x3, 100, &m, &snap));
	ck_assert_uint_eq(m, 0);
	ck_assert(gcap_verdict_apply(GCAP_CAPTURE, 0x5, 100, &m, &snap));
	ck_assert_uint_eq(m, 0x5);
	ck_assert_uint_eq(snap, 100);
	ck_assert(gcap_verdict_apply(GCAP_SNAP(64), 0x1, 100, &m, &snap));
	ck_assert_uint_eq(snap, 64);
	ck_assert(gcap_verdict_apply(GCAP_SNAP(640), 0x1, 100, &m, &snap));
	ck_assert_uint_eq(snap, 100);
	ck_assert_uint_eq(GCAP_SNAP(0), GCAP_CAPTURE);
	ck_assert_uint_eq(GCAP_VERDICT_SNAPLEN(GCAP_SNAP(1u << 30)),
			  GCAP_VERDICT_SNAP_MAX);
	ck_assert(gcap_verdict_apply(GCAP_OUTPUT(63), 0x1, 100, &m, &snap));
	ck_assert_uint_eq(m, 1ull << 63);
	ck_assert(gcap_verdict_apply(GCAP_OUTPUT(2) | GCAP_SNAP(10), 0, 100, &m, &snap));
	ck_assert_uint_eq(m, 4);
	ck_assert_uint_eq(snap, 10);
	/* capture, but no output matched */
	ck_assert(!gcap_verdict_apply(GCAP_CAPTURE, 0, 100, &m, &snap));
	/* bits without the capture bit mean drop */
	ck_assert(!gcap_verdict_apply(0x40ffffffu, 1, 100, &m, &snap));
	ck_assert_uint_eq(GCAP_OUTPUT(5), 0xc5000000u);
}
END_TEST

/* Concurrent inserts: every key lands in exactly one slot. */
#define HT_SLOTS 4096u
#define HT_KEYS 2500u
static struct gcap_hslot ht_slots[HT_SLOTS];
static uint32_t ht_used, ht_full;
static uint64_t ht_count[HT_SLOTS];

static void *
ht_worker(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	for (uint32_t r = 0; r < 4; r++)
		for (uint32_t i = 0; i < HT_KEYS; i++) {
			/* a permutation of 0..HT_KEYS-1, different per thread and round */
			uint32_t key = (i * 7u + seed * 131u + r * 17u) % HT_KEYS;
			struct gcap_hkey k;
			uint32_t kb[4] = { key, ~key, 0, 0 };
			gcap_hkey_set(&k, kb, 8);
			int32_t s = gcap_hash_insert(ht_slots, HT_SLOTS, &ht_used,
						     &ht_full, &k, NULL);
			if (s >= 0)
				gcap_atomic_add_u64(&ht_count[s], 1);
		}
	return NULL;
}

START_TEST(hash_concurrent)
{
	pthread_t t[8];
	for (uintptr_t i = 0; i < 8; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, ht_worker, (void *)i), 0);
	for (int i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	ck_assert_msg(ht_used == HT_KEYS, "used %u full %u", ht_used, ht_full);
	ck_assert_uint_eq(ht_full, 0);
	uint64_t sum = 0;
	for (uint32_t i = 0; i < HT_SLOTS; i++)
		sum += ht_count[i];
	ck_assert_uint_eq(sum, 8ull * 4 * HT_KEYS);
	for (uint32_t key = 0; key < HT_KEYS; key++) {
		struct gcap_hkey k;
		uint32_t kb[4] = { key, ~key, 0, 0 };
		gcap_hkey_set(&k, kb, 8);
		int32_t s = gcap_hash_find(ht_slots, HT_SLOTS, &k);
		ck_assert_int_ge(s, 0);
	}
	uint32_t idx[HT_KEYS];
	ck_assert_uint_eq(gcap_hash_sorted(ht_slots, HT_SLOTS, ht_count, idx, HT_KEYS),
			  HT_KEYS);
}
END_TEST

START_TEST(hash_full)
{
	struct gcap_hslot slots[8];
	uint32_t used = 0, full = 0;
	memset(slots, 0, sizeof(slots));
	for (uint32_t i = 0; i < 8; i++) {
		struct gcap_hkey k;
		gcap_hkey_set(&k, &i, 4);
		bool ins;
		ck_assert_int_ge(gcap_hash_insert(slots, 8, &used, &full, &k, &ins), 0);
		ck_assert(ins);
		ck_assert_int_ge(gcap_hash_insert(slots, 8, &used, &full, &k, &ins), 0);
		ck_assert(!ins);
	}
	uint32_t nine = 9;
	struct gcap_hkey k;
	gcap_hkey_set(&k, &nine, 4);
	ck_assert_int_eq(gcap_hash_insert(slots, 8, &used, &full, &k, NULL), -1);
	ck_assert_int_eq(gcap_hash_find(slots, 8, &k), -1);
	ck_assert_uint_eq(used, 8);
	ck_assert_uint_eq(full, 1);
}
END_TEST

/* ---- loader ---- */

static const char *good_src =
	"#include <gpucap/gcap_kernel.h>\n"
	"struct gcap_kstate { uint64_t n; uint64_t arg; };\n"
	"GCAP_KERNEL uint32_t gcap_kernel(const struct gcap_kpkt *pkt,\n"
	"                                 struct gcap_kstate *st)\n"
	"{\n"
	"\tgcap_atomic_add_u64(&st->n, 1);\n"
	"\treturn pkt->caplen > 10 ? GCAP_SNAP(10) : GCAP_OUTPUT(3);\n"
	"}\n"
	"#ifndef GCAP_DEVICE\n"
	"#include <stdlib.h>\n"
	"int gcap_kernel_init(struct gcap_kstate *st, const char *a)\n"
	"{\n"
	"\tif (a && !strcmp(a, \"fail\"))\n"
	"\t\treturn gcap_kernel_error(\"refused %s\", a);\n"
	"\tst->arg = a ? strtoull(a, NULL, 10) : 7;\n"
	"\treturn 0;\n"
	"}\n"
	"void gcap_kernel_report(const struct gcap_kstate *st, struct gcap_json *j)\n"
	"{\n"
	"\tgcap_json_key_u64(j, \"n\", st->n);\n"
	"\tgcap_json_key_u64(j, \"arg\", st->arg);\n"
	"\tgcap_json_array_begin(j, \"list\");\n"
	"\tgcap_json_key_str(j, NULL, \"a\\\"b\\n\");\n"
	"\tgcap_json_object_begin(j, NULL);\n"
	"\tgcap_json_key_bool(j, \"t\", 1);\n"
	"\tgcap_json_object_end(j);\n"
	"\tgcap_json_array_end(j);\n"
	"\tgcap_json_array_begin(j, \"empty\");\n"
	"\tgcap_json_array_end(j);\n"
	"}\n"
	"#endif\n";

START_TEST(load_run_report)
{
	char *path = kt_write_tmp("good.c", good_src);
	struct gcap_khost *k = kt_load(path, "42");
	ck_assert_uint_eq(gcap_khost_state_size(k), 16);
	uint8_t b[64] = { 0 };
	struct gcap_kpkt p = kt_view(b, 64);
	ck_assert_uint_eq(gcap_khost_run(k, &p), GCAP_SNAP(10));
	p.caplen = 4;
	ck_assert_uint_eq(gcap_khost_run(k, &p), GCAP_OUTPUT(3));
	const uint64_t *st = gcap_khost_state(k);
	ck_assert_uint_eq(st[0], 2);
	ck_assert_uint_eq(st[1], 42);
	size_t len;
	ck_assert_str_eq(gcap_khost_source(k, &len), good_src);
	ck_assert_uint_eq(len, strlen(good_src));
	ck_assert_str_eq(gcap_khost_path(k), path);
	ck_assert(gcap_khost_has_report(k));
	ck_assert(!gcap_khost_ordered(k));

	char *txt = NULL;
	size_t tl = 0;
	FILE *f = open_memstream(&txt, &tl);
	ck_assert_int_eq(gcap_khost_report_json(k, f, NULL), 0);
	fclose(f);
	ck_assert_str_eq(txt, "{\n  \"n\": 2,\n  \"arg\": 42,\n  \"list\": [\n"
			      "    \"a\\\"b\\u000a\",\n    {\n      \"t\": true\n    }\n"
			      "  ],\n  \"empty\": []\n}\n");
	free(txt);

	/* a state override (the GPU's copy) is what gets reported */
	uint64_t other[2] = { 99, 5 };
	f = open_memstream(&txt, &tl);
	ck_assert_int_eq(gcap_khost_report_json(k, f, other), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(txt, "\"n\": 99,"));
	free(txt);

	/* reset re-runs init */
	ck_assert_int_eq(gcap_khost_reset(k, NULL), 0);
	ck_assert_uint_eq(st[0], 0);
	ck_assert_uint_eq(st[1], 42);

	/* the second load comes from the cache: same object */
	struct gcap_khost *k2 = kt_load(path, NULL);
	ck_assert_str_eq(gcap_khost_object(k), gcap_khost_object(k2));
	ck_assert_uint_eq(gcap_khost_hash(k), gcap_khost_hash(k2));
	ck_assert_uint_eq(((uint64_t *)gcap_khost_state(k2))[1], 7);
	gcap_khost_free(k2);
	gcap_khost_free(k);

	/* no cache: compiled into a temporary directory */
	char eb[GCAP_ERRBUF_SIZE];
	struct gcap_khost_opts o = { .no_cache = true };
	k = gcap_khost_load_opts(path, NULL, &o, eb);
	ck_assert_msg(k != NULL, "%s", eb);
	ck_assert_uint_eq(gcap_khost_run(k, &p), GCAP_OUTPUT(3));
	gcap_khost_free(k);
	free(path);
}
END_TEST

/* Ordered kernels are found by their gcap_kernel_order (the gpu executor
 * then orders packets by key): the two examples whose verdicts depend on
 * earlier packets define it, the two others do not. */
START_TEST(examples_ordered)
{
	static const struct {
		const char *name, *arg;
		bool ordered;
	} ex[] = {
		{ "dns", "example.com", false },
		{ "synflood", "5", true },
		{ "flowfirst", "3", true },
	};
	for (unsigned i = 0; i < GCAP_ARRAY_SIZE(ex); i++) {
		struct gcap_khost *k = kt_load(kt_example(ex[i].name), ex[i].arg);
		ck_assert_msg(gcap_khost_ordered(k) == ex[i].ordered, "%s", ex[i].name);
		gcap_khost_free(k);
	}
}
END_TEST

/* The parts of gcap_kernel.h, each with its include guard. */
static const struct {
	const char *file, *guard;
} parts[] = {
	{ "gcap_kern_base.h", "GCAP_KERN_BASE_H" },
	{ "gcap_kern_pkt.h", "GCAP_KERN_PKT_H" },
	{ "gcap_kern_verdict.h", "GCAP_KERN_VERDICT_H" },
	{ "gcap_kern_atomic.h", "GCAP_KERN_ATOMIC_H" },
	{ "gcap_kern_parse.h", "GCAP_KERN_PARSE_H" },
	{ "gcap_kern_hash.h", "GCAP_KERN_HASH_H" },
	{ "gcap_kern_entry.h", "GCAP_KERN_ENTRY_H" },
	{ "gcap_json.h", "GCAP_JSON_H" },
};

/* The loader's copy of the header (what NVRTC compiles) is one text: every
 * part inlined once, no quoted include left. Each part, included first,
 * compiles in the host build: it includes the parts it needs. */
START_TEST(header_parts)
{
	char *path = kt_write_tmp("good.c", good_src);
	struct gcap_khost *k = kt_load(path, NULL);
	size_t len;
	const char *hdr = gcap_khost_header(k, &len);
	ck_assert_uint_eq(strlen(hdr), len);
	ck_assert_ptr_null(strstr(hdr, "#include \""));
	for (unsigned i = 0; i < GCAP_ARRAY_SIZE(parts); i++) {
		char def[64];
		snprintf(def, sizeof(def), "\n#define %s\n", parts[i].guard);
		const char *at = strstr(hdr, def);
		ck_assert_msg(at != NULL, "%s not inlined", parts[i].file);
		ck_assert_msg(strstr(at + 1, def) == NULL, "%s inlined twice",
			      parts[i].file);
	}
	gcap_khost_free(k);
	free(path);

	for (unsigned i = 0; i < GCAP_ARRAY_SIZE(parts); i++) {
		char src[512];
		snprintf(src, sizeof(src),
			 "#include <gpucap/%s>\n"
			 "#include <gpucap/gcap_kernel.h>\n"
			 "struct gcap_kstate { int x; };\n"
			 "GCAP_KERNEL uint32_t gcap_kernel(const struct gcap_kpkt *p,\n"
			 "                                 struct gcap_kstate *st)\n"
			 "{ return GCAP_DROP; }\n",
			 parts[i].file);
		path = kt_write_tmp("part.c", src);
		gcap_khost_free(kt_load(path, NULL));
		free(path);
	}
}
END_TEST

static void
expect_fail(const char *name, const char *src, const char *args, int err,
	    const char *msg_prefix_after_path)
{
	char *path = kt_write_tmp(name, src);
	char eb[GCAP_ERRBUF_SIZE] = "";
	char log[8192];
	struct gcap_khost_opts o = { .log = log, .log_size = sizeof(log) };
	errno = 0;
	struct gcap_khost *k = gcap_khost_load_opts(path, args, &o, eb);
	ck_assert_ptr_null(k);
	ck_assert_int_eq(errno, err);
	char want[1024];
	snprintf(want, sizeof(want), "%s%s", path, msg_prefix_after_path);
	ck_assert_msg(strncmp(eb, want, strlen(want)) == 0,
		      "errbuf '%s' does not start with '%s'", eb, want);
	free(path);
}

START_TEST(err_syntax)
{
	expect_fail("syntax.c",
		    "#include <gpucap/gcap_kernel.h>\n"
		    "struct gcap_kstate { int x; };\n"
		    "GCAP_KERNEL uint32_t gcap_kernel(const struct gcap_kpkt *p,\n"
		    "                                 struct gcap_kstate *st)\n"
		    "{\n"
		    "\treturn GCAP_DROP\n"
		    "}\n",
		    NULL, ENOEXEC, ":7: error:");
	/* an undeclared function is an error, with its line */
	expect_fail("undeclared.c",
		    "#include <gpucap/gcap_kernel.h>\n"
		    "struct gcap_kstate { int x; };\n"
		    "GCAP_KERNEL uint32_t gcap_kernel(const struct gcap_kpkt *p,\n"
		    "                                 struct gcap_kstate *st)\n"
		    "{\n"
		    "\treturn no_such_helper(p);\n"
		    "}\n",
		    NULL, ENOEXEC, ":6: error:");
	/* the log has the rewritten diagnostics */
	char *path = kt_write_tmp("syntax2.c", "int x = ;\n");
	char eb[GCAP_ERRBUF_SIZE], log[8192];
	struct gcap_khost_opts o = { .log = log, .log_size = sizeof(log) };
	ck_assert_ptr_null(gcap_khost_load_opts(path, NULL, &o, eb));
	char want[1024];
	snprintf(want, sizeof(want), "%s:1: error:", path);
	ck_assert_ptr_nonnull(strstr(log, want));
	free(path);
}
END_TEST

START_TEST(err_no_entry)
{
	expect_fail("noentry.c",
		    "#include <gpucap/gcap_kernel.h>\n"
		    "struct gcap_kstate { int x; };\n"
		    "GCAP_KERNEL uint32_t my_kernel(const struct gcap_kpkt *p,\n"
		    "                               struct gcap_kstate *st)\n"
		    "{ return GCAP_DROP; }\n",
		    NULL, ENOSYS, ": no function gcap_kernel");
	expect_fail("nostate.c",
		    "#include <gpucap/gcap_kernel.h>\n"
		    "GCAP_KERNEL uint32_t gcap_kernel(const struct gcap_kpkt *p,\n"
		    "                                 struct gcap_kstate *st)\n"
		    "{ return GCAP_DROP; }\n",
		    NULL, ENOEXEC, ": no struct gcap_kstate defined");
	/* a wrong signature conflicts with the header's prototype */
	expect_fail("badsig.c",
		    "#include <gpucap/gcap_kernel.h>\n"
		    "struct gcap_kstate { int x; };\n"
		    "GCAP_KERNEL int gcap_kernel(const struct gcap_kpkt *p)\n"
		    "{ return 0; }\n",
		    NULL, ENOEXEC, ":3: error:");
}
END_TEST

START_TEST(err_state_too_large)
{
	expect_fail("big.c",
		    "#include <gpucap/gcap_kernel.h>\n"
		    "struct gcap_kstate { uint8_t huge[3ull << 30]; };\n"
		    "GCAP_KERNEL uint32_t gcap_kernel(const struct gcap_kpkt *p,\n"
		    "                                 struct gcap_kstate *st)\n"
		    "{ return GCAP_DROP; }\n",
		    NULL, EFBIG, ": state too large");
}
END_TEST

START_TEST(err_init_and_missing)
{
	expect_fail("initfail.c", good_src, "fail", ECANCELED,
		    ": gcap_kernel_init failed (-1): refused fail");
	char eb[GCAP_ERRBUF_SIZE];
	errno = 0;
	ck_assert_ptr_null(gcap_khost_load("/nonexistent/k.c", NULL, eb));
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_ptr_nonnull(strstr(eb, "/nonexistent/k.c"));
	setenv("GCAP_INCLUDE_DIR", "/nonexistent", 1);
	char *path = kt_write_tmp("inc.c", good_src);
	ck_assert_ptr_null(gcap_khost_load(path, NULL, eb));
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_ptr_nonnull(strstr(eb, "GCAP_INCLUDE_DIR"));
	unsetenv("GCAP_INCLUDE_DIR");
	free(path);
}
END_TEST

/*
 * A kernel that asks for bytes past caplen through every helper; run on
 * packets that end at a PROT_NONE page. It must see false / 0 / NULL and
 * never fault.
 */
static const char *oob_src =
	"#include <gpucap/gcap_kernel.h>\n"
	"struct gcap_kstate { uint64_t ok, bad, sum; };\n"
	"GCAP_KERNEL uint32_t gcap_kernel(const struct gcap_kpkt *pkt,\n"
	"                                 struct gcap_kstate *st)\n"
	"{\n"
	"\tuint32_t n = pkt->caplen, v32; uint16_t v16; uint8_t v8;\n"
	"\tuint8_t buf[8];\n"
	"\tstruct gcap_parsed p;\n"
	"\tgcap_parse(pkt, &p);\n"
	"\t/* past the end: all must fail */\n"
	"\tint fails = !gcap_load_u8(pkt, n, &v8) + !gcap_load_u16be(pkt, n - 1, &v16)\n"
	"\t\t+ !gcap_load_u32be(pkt, n - 3, &v32) + !gcap_load_u32le(pkt, n - 1, &v32)\n"
	"\t\t+ !gcap_load_u16le(pkt, 0xffffffffu, &v16)\n"
	"\t\t+ !gcap_load_u32be(pkt, 0xfffffffeu, &v32)\n"
	"\t\t+ !gcap_load_bytes(pkt, n - 2, buf, 8)\n"
	"\t\t+ (gcap_ptr(pkt, n, 1) == 0) + (gcap_ptr(pkt, 1, 0xffffffffu) == 0)\n"
	"\t\t+ (gcap_byte(pkt, n) == 0) + (gcap_byte(pkt, n + 100000) == 0)\n"
	"\t\t+ (gcap_avail(pkt, n + 1) == 0);\n"
	"\tif (fails == 12 && v32 == 0 && v16 == 0)\n"
	"\t\tgcap_atomic_add_u64(&st->ok, 1);\n"
	"\telse\n"
	"\t\tgcap_atomic_add_u64(&st->bad, 1);\n"
	"\t/* the last byte itself is readable */\n"
	"\tif (n && gcap_load_u8(pkt, n - 1, &v8))\n"
	"\t\tgcap_atomic_add_u64(&st->sum, v8);\n"
	"\tif (n >= 4 && gcap_load_u32be(pkt, n - 4, &v32) && gcap_ptr(pkt, 0, n))\n"
	"\t\tgcap_atomic_add_u64(&st->sum, 1000);\n"
	"\treturn p.payload_len ? GCAP_CAPTURE : GCAP_DROP;\n"
	"}\n";

START_TEST(oob_bounded)
{
	char *path = kt_write_tmp("oob.c", oob_src);
	struct gcap_khost *k = kt_load(path, NULL);
	const uint64_t *st = gcap_khost_state(k);
	uint8_t b[2048];
	struct kt_spec s = { .nvlan = 1,
			     .ipv = 6,
			     .next = 2,
			     .ext = { 0, 60 },
			     .proto = 6,
			     .payload = "payload!",
			     .plen = 8 };
	uint32_t n = build(&s, b);
	for (uint32_t i = 0; i < n; i++)
		b[i] |= 1; /* every last byte is odd, non-zero */
	uint64_t want_sum = 0, runs = 0;
	for (uint32_t len = 0; len <= n; len++) {
		uint8_t *g = kt_guard_copy(b, len);
		struct gcap_kpkt p = kt_view(g, len);
		gcap_khost_run(k, &p);
		kt_guard_free(g, len);
		runs++;
		if (len)
			want_sum += b[len - 1];
		if (len >= 4)
			want_sum += 1000;
	}
	ck_assert_uint_eq(st[0], runs);
	ck_assert_uint_eq(st[1], 0);
	ck_assert_uint_eq(st[2], want_sum);
	gcap_khost_free(k);
	free(path);
}
END_TEST

/* a second kernel: other state size, other verdict */
static const char *drop_src =
	"#include <gpucap/gcap_kernel.h>\n"
	"struct gcap_kstate { uint64_t n; };\n"
	"GCAP_KERNEL uint32_t gcap_kernel(const struct gcap_kpkt *pkt,\n"
	"                                 struct gcap_kstate *st)\n"
	"{ (void)pkt; st->n++; return GCAP_DROP; }\n";

static struct gcap_khost *
load_in(const char *path, const char *cache)
{
	char eb[GCAP_ERRBUF_SIZE] = "";
	struct gcap_khost_opts o = { .cache_dir = cache };
	struct gcap_khost *k = gcap_khost_load_opts(path, NULL, &o, eb);
	ck_assert_msg(k != NULL, "load %s: %s", path, eb);
	return k;
}

static char *
read_text(const char *path)
{
	static char buf[256];
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = '\0';
	return buf;
}

/* A cached object is used only under its own key: one kernel's object
 * copied to another's name is rebuilt, not run. */
START_TEST(cache_key_checked)
{
	char cache[] = "/tmp/gcap-kc-XXXXXX", cmd[PATH_MAX * 2 + 16];
	ck_assert_ptr_nonnull(mkdtemp(cache));
	char *good = kt_write_tmp("good.c", good_src);
	char *drop = kt_write_tmp("drop.c", drop_src);
	struct gcap_khost *a = load_in(good, cache);
	struct gcap_khost *b = load_in(drop, cache);
	snprintf(cmd, sizeof(cmd), "cp %s %s", gcap_khost_object(a),
		 gcap_khost_object(b));
	gcap_khost_free(a);
	gcap_khost_free(b);
	ck_assert_int_eq(system(cmd), 0);
	b = load_in(drop, cache);
	ck_assert_uint_eq(gcap_khost_state_size(b), 8);
	uint8_t pkt[64] = { 0 };
	struct gcap_kpkt p = kt_view(pkt, 64);
	ck_assert_uint_eq(gcap_khost_run(b, &p), GCAP_DROP);
	gcap_khost_free(b);
	free(good);
	free(drop);
}
END_TEST

/* Links planted where a compile once put its unit, log and object
 * (predictable names in the cache) are never written through. */
START_TEST(cache_temp_links)
{
	char cache[] = "/tmp/gcap-kt-XXXXXX", other[] = "/tmp/gcap-ko-XXXXXX";
	char victim[64], link[PATH_MAX];
	static const char *const ext[] = { "c", "log", "so.tmp" };
	ck_assert_ptr_nonnull(mkdtemp(cache));
	ck_assert_ptr_nonnull(mkdtemp(other));
	char *good = kt_write_tmp("good.c", good_src);
	struct gcap_khost *k = load_in(good, other);
	unsigned long long h = (unsigned long long)gcap_khost_hash(k);
	gcap_khost_free(k);
	snprintf(victim, sizeof(victim), "%s/victim", other);
	FILE *f = fopen(victim, "w");
	ck_assert_ptr_nonnull(f);
	fputs("precious\n", f);
	fclose(f);
	for (unsigned i = 0; i < 3; i++) {
		snprintf(link, sizeof(link), "%s/k-%016llx.%ld.%s", cache, h,
			 (long)getpid(), ext[i]);
		ck_assert_int_eq(symlink(victim, link), 0);
	}
	k = load_in(good, cache);
	ck_assert_str_eq(read_text(victim), "precious\n");
	gcap_khost_free(k);
	free(good);
}
END_TEST

/* A cache named through a symbolic link is used by the directory the
 * link named when it was checked, not by the link: one on the way that
 * another user owns could point elsewhere after the check. */
START_TEST(cache_by_resolved_path)
{
	char real[] = "/tmp/gcap-kr-XXXXXX", link[64], canon[PATH_MAX];
	ck_assert_ptr_nonnull(mkdtemp(real));
	ck_assert_ptr_nonnull(realpath(real, canon));
	snprintf(link, sizeof(link), "%s.link", real);
	ck_assert_int_eq(symlink(real, link), 0);
	char *good = kt_write_tmp("good.c", good_src);
	struct gcap_khost *k = load_in(good, link);
	const char *obj = gcap_khost_object(k);
	size_t n = strlen(canon);
	ck_assert_msg(strncmp(obj, canon, n) == 0 && obj[n] == '/',
		      "object %s, not in %s", obj, canon);
	gcap_khost_free(k);
	ck_assert_int_eq(unlink(link), 0);
	free(good);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("kernels-khost");
	TCase *t = tcase_create("api");
	tcase_add_test(t, parse_ipv4_tcp);
	tcase_add_test(t, parse_vlan_qinq_options_padding);
	tcase_add_test(t, parse_ipv6_ext_headers);
	tcase_add_test(t, parse_truncated_every_length);
	tcase_add_test(t, verdict_encoding);
	tcase_add_test(t, hash_concurrent);
	tcase_add_test(t, hash_full);
	suite_add_tcase(s, t);
	t = tcase_create("loader");
	tcase_set_timeout(t, 120);
	tcase_add_test(t, load_run_report);
	tcase_add_test(t, examples_ordered);
	tcase_add_test(t, header_parts);
	tcase_add_test(t, err_syntax);
	tcase_add_test(t, err_no_entry);
	tcase_add_test(t, err_state_too_large);
	tcase_add_test(t, err_init_and_missing);
	tcase_add_test(t, oob_bounded);
	tcase_add_test(t, cache_key_checked);
	tcase_add_test(t, cache_temp_links);
	tcase_add_test(t, cache_by_resolved_path);
	suite_add_tcase(s, t);
	return s;
}

int
main(void)
{
	SRunner *r = srunner_create(suite());
	srunner_run_all(r, CK_NORMAL);
	int failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? 1 : 0;
}
