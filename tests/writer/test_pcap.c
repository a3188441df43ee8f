/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writer suite, pcap: the nanosecond file header byte by byte, records
 * read back with libpcap, the snap length, link types (one per file, DLT
 * to LINKTYPE) and tshark/capinfos reading the files.
 */
#include <check.h>
#include <errno.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <string.h>

#include "wt_util.h"

START_TEST(test_pcap_roundtrip)
{
	const char *p = wt_path("a.pcap");
	struct gcap_writer_conf c = wt_conf1(p);
	struct gcap_writer *w = wt_open(&c);
	uint64_t nrec, nbytes, want = 24;

	ck_assert_str_eq(gcap_writer_filename(w), p);
	wt_write_n(w, 0, 200, 0, 1);
	for (unsigned i = 0; i < 200; i++)
		want += 16 + wt_vlen(i);
	gcap_writer_counts(w, &nrec, &nbytes);
	ck_assert_uint_eq(nrec, 200);
	ck_assert_uint_eq(nbytes, want);
	wt_close(w, NULL);

	ck_assert_int_eq(wt_fsize(p), (long long)want);
	/* the file header, byte by byte */
	uint8_t h[24];
	FILE *f = fopen(p, "rb");

	ck_assert_int_eq(fread(h, 1, 24, f), 24);
	fclose(f);
	ck_assert_uint_eq(wt_rd32(h), 0xa1b23c4d);
	ck_assert_uint_eq(wt_rd16(h + 4), 2);
	ck_assert_uint_eq(wt_rd16(h + 6), 4);
	ck_assert_uint_eq(wt_rd32(h + 8), 0);
	ck_assert_uint_eq(wt_rd32(h + 12), 0);
	ck_assert_uint_eq(wt_rd32(h + 16), 65535);
	ck_assert_uint_eq(wt_rd32(h + 20), 1);
	wt_check_file(p, 0, 200, 0, 65535, DLT_EN10MB);
}
END_TEST

START_TEST(test_pcap_snaplen)
{
	const char *p = wt_path("snap.pcap");
	struct gcap_writer_conf c = wt_conf1(p);
	struct gcap_writer *w;

	c.snaplen = 64;
	w = wt_open(&c);
	wt_write_n(w, 0, 50, 0, 1); /* 14..1500 bytes: most are cut */
	wt_close(w, NULL);
	wt_check_file(p, 0, 50, 0, 64, DLT_EN10MB);
}
END_TEST

/* hdr_snaplen: what the header says (a file's own snapshot, -r); the
 * records are cut at the smaller of it and snaplen */
START_TEST(test_pcap_hdr_snaplen)
{
	static const struct {
		uint32_t snaplen, hdr, says, cut;
	} cases[] = { { 65535, 524288, 524288, 65535 }, { 65535, 100, 100, 100 } };

	for (unsigned k = 0; k < 2; k++) {
		const char *p = wt_path("hdr.pcap");
		struct gcap_writer_conf c = wt_conf1(p);
		struct gcap_writer *w;
		uint8_t h[24];
		FILE *f;

		c.snaplen = cases[k].snaplen;
		c.hdr_snaplen = cases[k].hdr;
		w = wt_open(&c);
		wt_write_n(w, 0, 50, 0, 1);
		wt_close(w, NULL);
		f = fopen(p, "rb");
		ck_assert_ptr_nonnull(f);
		ck_assert_int_eq(fread(h, 1, 24, f), 24);
		fclose(f);
		ck_assert_uint_eq(wt_rd32(h + 16), cases[k].says);
		/* the bytes on disk (libpcap would cut a longer record to the
		 * header's length as it reads it) */
		long long want = 24;

		for (unsigned i = 0; i < 50; i++)
			want += 16 +
				(wt_vlen(i) < cases[k].cut ? wt_vlen(i) : cases[k].cut);
		ck_assert_int_eq(wt_fsize(p), want);
		wt_check_file(p, 0, 50, 0, cases[k].cut, DLT_EN10MB);
	}
}
END_TEST

/* around the snap length: shorter, exactly, one more, much longer */
START_TEST(test_pcap_snaplen_exact)
{
	static const uint32_t lens[] = { 10, 63, 64, 65, 200, 1500, 0, 64 };
	const char *p = wt_path("snap2.pcap");
	struct gcap_writer_conf c = wt_conf1(p);
	struct gcap_writer *w;
	unsigned ids[8];
	long long want = 24;

	for (int fmt = 0; fmt < 2; fmt++) {
		c.fmt = fmt ? GCAP_FMT_PCAPNG : GCAP_FMT_PCAP;
		c.snaplen = 64;
		w = wt_open(&c);
		for (unsigned i = 0; i < 8; i++) {
			struct wt_rec r;

			wt_mkrec(&r, i, lens[i], 1);
			ck_assert_int_eq(gcap_writer_write(w, &r.h, r.data), 0);
			ids[i] = i;
			if (!fmt)
				want += 16 + (lens[i] < 64 ? lens[i] : 64);
		}
		wt_close(w, NULL);
		/* 64 bytes kept at most, len stays the wire length */
		wt_check_file_ids(p, ids, 8, 0, lens, 64, DLT_EN10MB);
		if (!fmt)
			ck_assert_int_eq(wt_fsize(p), want);
	}
}
END_TEST

START_TEST(test_pcap_dlt_raw)
{
	static struct gcap_writer_if raw[] = { { .name = "tun0", .linktype = DLT_RAW } };
	const char *p = wt_path("raw.pcap");
	struct gcap_writer_conf c = wt_conf1(p);
	struct gcap_writer *w;

	c.ifs = raw;
	w = wt_open(&c);
	wt_write_n(w, 0, 3, 40, 1);
	wt_close(w, NULL);
	/* LINKTYPE_RAW (101) in the file, DLT_RAW again through libpcap */
	FILE *f = fopen(p, "rb");
	uint8_t h[24];

	ck_assert_int_eq(fread(h, 1, 24, f), 24);
	fclose(f);
	ck_assert_uint_eq(wt_rd32(h + 20), 101);
	wt_check_file(p, 0, 3, 40, 65535, DLT_RAW);
}
END_TEST

START_TEST(test_pcap_multi_if_same_linktype)
{
	const char *p = wt_path("m.pcap");
	struct gcap_writer_conf c = wt_conf1(p);
	struct gcap_writer *w;

	c.nifs = 3;
	c.ifs = wt_eth3;
	w = wt_open(&c);
	wt_write_n(w, 0, 9, 0, 3); /* ports 0,1,2: pcap ignores the port */
	wt_close(w, NULL);
	wt_check_file(p, 0, 9, 0, 65535, DLT_EN10MB);
}
END_TEST

START_TEST(test_pcap_mixed_linktypes_einval)
{
	static struct gcap_writer_if mixed[] = {
		{ .name = "eth0", .linktype = DLT_EN10MB },
		{ .name = "tun0", .linktype = DLT_RAW },
	};
	const char *p = wt_path("mixed.pcap");
	struct gcap_writer_conf c = wt_conf1(p);
	char eb[GCAP_ERRBUF_SIZE] = "";

	c.nifs = 2;
	c.ifs = mixed;
	errno = 0;
	ck_assert_ptr_null(gcap_writer_open(&c, eb));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_msg(strstr(eb, "pcap has one link type") != NULL, "%s", eb);
	ck_assert_msg(strstr(eb, "pcapng") != NULL, "%s", eb);
	ck_assert(!wt_exists(p));
}
END_TEST

START_TEST(test_tshark_pcap)
{
	const char *p = wt_path("t.pcap");
	struct gcap_writer_conf c = wt_conf1(p);
	struct gcap_writer *w;
	unsigned ifid[64], len[64];

	if (!wt_have_tool("/usr/bin/tshark"))
		return;
	w = wt_open(&c);
	wt_write_n(w, 0, 37, 0, 1);
	wt_close(w, NULL);
	ck_assert_int_eq(wt_tshark_read(p, ifid, len, 64), 37);
	for (unsigned i = 0; i < 37; i++) {
		struct wt_rec r;

		wt_mkrec(&r, i, wt_vlen(i), 1);
		ck_assert_uint_eq(len[i], r.h.wirelen);
	}
	if (wt_have_tool("/usr/bin/capinfos"))
		ck_assert_int_eq(wt_capinfos_num(p, "-c", "Number of packets"), 37);
}
END_TEST

TCase *
wt_tcase_pcap(void)
{
	TCase *tc = wt_tcase("pcap");

	tcase_add_test(tc, test_pcap_roundtrip);
	tcase_add_test(tc, test_pcap_snaplen);
	tcase_add_test(tc, test_pcap_snaplen_exact);
	tcase_add_test(tc, test_pcap_hdr_snaplen);
	tcase_add_test(tc, test_pcap_dlt_raw);
	tcase_add_test(tc, test_pcap_multi_if_same_linktype);
	tcase_add_test(tc, test_pcap_mixed_linktypes_einval);
	tcase_add_test(tc, test_tshark_pcap);
	return tc;
}
