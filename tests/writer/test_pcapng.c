/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writer suite, pcapng: SHB, IDBs (names, link types, if_tsresol,
 * if_filter), EPB interface ids and ISBs checked by parsing the blocks, plus
 * libpcap, tshark and capinfos reading the files; the choice of format.
 */
#include <check.h>
#include <errno.h>
#include <pcap/pcap.h>
#include <stdio.h>

#include "wt_util.h"

static uint32_t
file_magic(const char *path)
{
	uint32_t m = 0;
	FILE *f = fopen(path, "rb");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fread(&m, 4, 1, f), 1);
	fclose(f);
	return m;
}

START_TEST(test_pcapng_three_ifs)
{
	const char *p = wt_path("n.pcapng");
	struct gcap_writer_conf c = wt_conf1(p);
	struct gcap_writer_if_stats st[3] = {
		{ 100, 1, 10, 1 },
		{ 200, 2, 20, 2 },
		{ 300, 3, 30, 3 },
	};
	struct gcap_writer *w;
	struct wt_ng ni;

	c.nifs = 3;
	c.ifs = wt_eth3;
	c.filter_expr = "tcp port 80 or udp";
	c.app_name = "gpucap test";
	c.snaplen = 1000;
	w = wt_open(&c);
	ck_assert_int_eq(file_magic(p), 0x0a0d0d0a); /* AUTO: .pcapng */
	wt_write_n(w, 0, 120, 0, 3);
	wt_close(w, st);

	wt_check_file(p, 0, 120, 0, 1000, DLT_EN10MB);
	wt_ng_parse(p, &ni);
	ck_assert_uint_eq(ni.nshb, 1);
	ck_assert_str_eq(ni.userappl, "gpucap test");
	ck_assert_uint_eq(ni.nidb, 3);
	ck_assert_uint_eq(ni.nepb, 120);
	ck_assert_uint_eq(ni.nisb, 3);
	ck_assert_uint_eq(ni.nother, 0);
	for (unsigned i = 0; i < 3; i++) {
		ck_assert_uint_eq(ni.linktype[i], 1);
		ck_assert_uint_eq(ni.snaplen[i], 1000);
		ck_assert_str_eq(ni.ifname[i], wt_eth3[i].name);
		ck_assert_int_eq(ni.tsresol[i], 9);
		ck_assert_str_eq(ni.filter[i], "tcp port 80 or udp");
		ck_assert_uint_eq(ni.isb_if[i], i);
		ck_assert_uint_eq(ni.isb_recv[i], st[i].received);
		ck_assert_uint_eq(ni.isb_drop[i], st[i].dropped);
		ck_assert_uint_eq(ni.isb_acc[i], st[i].filter_accepted);
		ck_assert(ni.isb_has_start[i] && ni.isb_has_end[i]);
		ck_assert_uint_eq(ni.isb_start[i], T0);
		ck_assert_uint_ge(ni.isb_end[i], T0);
	}
	for (unsigned i = 0; i < 120; i++)
		ck_assert_uint_eq(ni.epb_if[i], i % 3);

	if (wt_have_tool("/usr/bin/tshark")) {
		unsigned ifid[128], len[128];

		ck_assert_int_eq(wt_tshark_read(p, ifid, len, 128), 120);
		for (unsigned i = 0; i < 120; i++) {
			struct wt_rec r;

			wt_mkrec(&r, i, wt_vlen(i), 3);
			ck_assert_uint_eq(ifid[i], i % 3);
			ck_assert_uint_eq(len[i], r.h.wirelen);
		}
	}
	if (wt_have_tool("/usr/bin/capinfos")) {
		ck_assert_int_eq(wt_capinfos_num(p, "-c", "Number of packets"), 120);
		ck_assert_int_eq(wt_capinfos_num(p, "-I", "Number of interfaces"), 3);
	}
}
END_TEST

START_TEST(test_pcapng_minimal_no_stats)
{
	static struct gcap_writer_if noname[] = { { .name = NULL,
						    .linktype = DLT_EN10MB } };
	const char *p = wt_path("min.pcapng");
	struct gcap_writer_conf c = wt_conf1(p);
	struct gcap_writer *w;
	struct wt_ng ni;

	c.ifs = noname;
	w = wt_open(&c);
	wt_write_n(w, 0, 4, 0, 1);
	wt_close(w, NULL);
	wt_check_file(p, 0, 4, 0, 65535, DLT_EN10MB);
	wt_ng_parse(p, &ni);
	ck_assert_uint_eq(ni.nshb, 1);
	ck_assert_str_eq(ni.userappl, "");
	ck_assert_uint_eq(ni.nidb, 1);
	ck_assert_str_eq(ni.ifname[0], "");
	ck_assert_str_eq(ni.filter[0], "");
	ck_assert_int_eq(ni.tsresol[0], 9);
	ck_assert_uint_eq(ni.nepb, 4);
	ck_assert_uint_eq(ni.nisb, 0); /* no stats: no ISB */
}
END_TEST

START_TEST(test_pcapng_mixed_linktypes)
{
	static struct gcap_writer_if mixed[] = {
		{ .name = "eth0", .linktype = DLT_EN10MB },
		{ .name = "tun0", .linktype = DLT_RAW },
	};
	const char *p = wt_path("mixed.pcapng");
	struct gcap_writer_conf c = wt_conf1(p);
	struct gcap_writer_if_stats st[2] = { { 5, 0, 5, 1 }, { 7, 1, 6, 2 } };
	struct gcap_writer *w;
	struct wt_ng ni;

	c.nifs = 2;
	c.ifs = mixed;
	w = wt_open(&c);
	wt_write_n(w, 0, 10, 60, 2);
	wt_close(w, st);
	wt_ng_parse(p, &ni);
	ck_assert_uint_eq(ni.nidb, 2);
	ck_assert_uint_eq(ni.linktype[0], 1);
	ck_assert_uint_eq(ni.linktype[1], 101);
	ck_assert_uint_eq(ni.nepb, 10);
	ck_assert_uint_eq(ni.nisb, 2);
	if (wt_have_tool("/usr/bin/tshark")) {
		unsigned ifid[16], len[16];

		ck_assert_int_eq(wt_tshark_read(p, ifid, len, 16), 10);
		for (unsigned i = 0; i < 10; i++)
			ck_assert_uint_eq(ifid[i], i % 2);
	}
}
END_TEST

START_TEST(test_pcapng_bad_port)
{
	const char *p = wt_path("port.pcapng");
	struct gcap_writer_conf c = wt_conf1(p);
	struct gcap_writer *w = wt_open(&c);
	struct wt_rec r;

	wt_mkrec(&r, 0, 60, 1);
	r.h.port = 1; /* one interface only */
	ck_assert_int_eq(gcap_writer_write(w, &r.h, r.data), -EINVAL);
	/* not sticky: the writer goes on */
	wt_write_n(w, 0, 2, 60, 1);
	wt_close(w, NULL);
	wt_check_file(p, 0, 2, 60, 65535, DLT_EN10MB);
}
END_TEST

START_TEST(test_fmt_select)
{
	struct gcap_writer_conf c;
	struct gcap_writer *w;

	c = wt_conf1(wt_path("x.cap"));
	wt_close(wt_open(&c), NULL);
	ck_assert_uint_eq(file_magic(wt_path("x.cap")), 0xa1b23c4d);

	c = wt_conf1(wt_path("x.pcapng.gz"));
	wt_close(wt_open(&c), NULL);
	ck_assert_uint_eq(file_magic(wt_path("x.pcapng.gz")), 0xa1b23c4d);

	c = wt_conf1(wt_path("y.pcapng"));
	c.fmt = GCAP_FMT_PCAP;
	wt_close(wt_open(&c), NULL);
	ck_assert_uint_eq(file_magic(wt_path("y.pcapng")), 0xa1b23c4d);

	c = wt_conf1(wt_path("z.pcap"));
	c.fmt = GCAP_FMT_PCAPNG;
	w = wt_open(&c);
	wt_write_n(w, 0, 3, 0, 1);
	wt_close(w, NULL);
	ck_assert_uint_eq(file_magic(wt_path("z.pcap")), 0x0a0d0d0a);
	wt_check_file(wt_path("z.pcap"), 0, 3, 0, 65535, DLT_EN10MB);
}
END_TEST

TCase *
wt_tcase_pcapng(void)
{
	TCase *tc = wt_tcase("pcapng");

	tcase_add_test(tc, test_pcapng_three_ifs);
	tcase_add_test(tc, test_pcapng_minimal_no_stats);
	tcase_add_test(tc, test_pcapng_mixed_linktypes);
	tcase_add_test(tc, test_pcapng_bad_port);
	tcase_add_test(tc, test_fmt_select);
	return tc;
}
