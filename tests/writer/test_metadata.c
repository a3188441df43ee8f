/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writer suite, the metadata of a capture: the pcapng options dumpcap
 * writes (SHB, IDB, EPB), microsecond precision, the ISBs of every file a
 * rotation closes and the hook told of each closed file, rotation by
 * record count and on demand, and the format a name resolves to.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <pcap/pcap.h>

#include "wt_util.h"

static const uint8_t mac0[6] = { 0x02, 0x00, 0x5e, 0x10, 0x20, 0x30 };

static struct gcap_writer_if meta_ifs[2] = {
	{
		.name = "net_pcap0,rx_pcap=a.pcap",
		.linktype = DLT_EN10MB,
		.description = "net_pcap",
		.os = "Linux 6.1",
		.hardware = "pcap file",
		.mac = mac0,
		.speed = 10000000000ull,
	},
	{
		.name = "0000:3b:00.0",
		.linktype = DLT_EN10MB,
		.filter = "udp",
	},
};

START_TEST(test_ng_options)
{
	const char *p = wt_path("meta.pcapng");
	struct gcap_writer_conf c = wt_conf1(p);
	struct gcap_writer_if_stats st[2] = { { 10, 1, 9, 2 }, { 20, 3, 17, 4 } };
	struct gcap_writer *w;
	struct wt_ng ni;

	c.nifs = 2;
	c.ifs = meta_ifs;
	c.app_name = "gpu-capture 1.0";
	c.shb_os = "Linux 6.1.0";
	c.shb_hardware = "Some CPU";
	c.epb_rx = true;
	w = wt_open(&c);
	for (unsigned i = 0; i < 6; i++) {
		struct wt_rec r;

		wt_mkrec(&r, i, 60, 2);
		r.h.queue = (uint16_t)(i % 3);
		ck_assert_int_eq(gcap_writer_write(w, &r.h, r.data), 0);
	}
	wt_close(w, st);
	wt_ng_parse(p, &ni);
	ck_assert_str_eq(ni.userappl, "gpu-capture 1.0");
	ck_assert_str_eq(ni.shb_os, "Linux 6.1.0");
	ck_assert_str_eq(ni.shb_hw, "Some CPU");
	ck_assert_uint_eq(ni.nidb, 2);
	ck_assert_str_eq(ni.ifname[0], "net_pcap0,rx_pcap=a.pcap");
	ck_assert_str_eq(ni.if_descr[0], "net_pcap");
	ck_assert_str_eq(ni.if_os[0], "Linux 6.1");
	ck_assert_str_eq(ni.if_hw[0], "pcap file");
	ck_assert(ni.if_has_mac[0]);
	ck_assert_mem_eq(ni.if_mac[0], mac0, 6);
	ck_assert_uint_eq(ni.if_speed[0], 10000000000ull);
	ck_assert_int_eq(ni.tsresol[0], 9);
	/* no filter anywhere: no if_filter on interface 0; its own on 1 */
	ck_assert(!ni.if_has_filter[0]);
	ck_assert_str_eq(ni.filter[1], "udp");
	ck_assert_str_eq(ni.if_descr[1], "");
	ck_assert(!ni.if_has_mac[1]);
	ck_assert_uint_eq(ni.if_speed[1], 0);
	ck_assert_uint_eq(ni.nepb, 6);
	for (unsigned i = 0; i < 6; i++) {
		ck_assert_uint_eq(ni.epb_flags[i], 1); /* inbound */
		ck_assert_uint_eq(ni.epb_queue[i], i % 3);
	}
	ck_assert_uint_eq(ni.nisb, 2);
	for (unsigned i = 0; i < 2; i++) {
		ck_assert_uint_eq(ni.isb_recv[i], st[i].received);
		ck_assert_uint_eq(ni.isb_drop[i], st[i].dropped);
		ck_assert_uint_eq(ni.isb_acc[i], st[i].filter_accepted);
		ck_assert_uint_eq(ni.isb_osdrop[i], st[i].os_dropped);
		ck_assert_uint_eq(ni.isb_usrdeliv[i], 3); /* 6 records, 2 ports */
	}
	if (wt_have_tool("/usr/bin/tshark")) {
		unsigned ifid[8], len[8];

		ck_assert_int_eq(wt_tshark_read(p, ifid, len, 8), 6);
	}
}
END_TEST

/* Without epb_rx (a file read back) the EPBs carry no options; the
 * conf's filter is every interface's if_filter. */
START_TEST(test_ng_no_epb_opts)
{
	const char *p = wt_path("plain.pcapng");
	struct gcap_writer_conf c = wt_conf1(p);
	struct gcap_writer *w;
	struct wt_ng ni;

	c.filter_expr = "tcp";
	w = wt_open(&c);
	wt_write_n(w, 0, 4, 0, 1);
	wt_close(w, NULL);
	wt_ng_parse(p, &ni);
	ck_assert_str_eq(ni.filter[0], "tcp");
	ck_assert_str_eq(ni.shb_os, "");
	for (unsigned i = 0; i < 4; i++)
		ck_assert_uint_eq(ni.epb_nopts[i], 0);
}
END_TEST

START_TEST(test_micro_pcap)
{
	const char *p = wt_path("us.pcap");
	struct gcap_writer_conf c = wt_conf1(p);
	char eb[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *d;
	struct gcap_writer *w;
	pcap_t *pc;

	c.ts_micro = true;
	w = wt_open(&c);
	wt_write_n(w, 0, 5, 60, 1);
	wt_close(w, NULL);
	pc = pcap_open_offline_with_tstamp_precision(p, PCAP_TSTAMP_PRECISION_NANO, eb);
	ck_assert_ptr_nonnull(pc);
	/* the file says microseconds: libpcap scales them up */
	for (unsigned i = 0; i < 5; i++) {
		struct wt_rec r;

		wt_mkrec(&r, i, 60, 1);
		ck_assert_int_eq(pcap_next_ex(pc, &h, &d), 1);
		ck_assert_uint_eq((uint64_t)h->ts.tv_sec * NS + (uint64_t)h->ts.tv_usec,
				  r.h.ts_ns / 1000 * 1000);
	}
	pcap_close(pc);
}
END_TEST

START_TEST(test_micro_pcapng)
{
	const char *p = wt_path("us.pcapng");
	struct gcap_writer_conf c = wt_conf1(p);
	struct gcap_writer_if_stats st = { 1, 0, 1, 0 };
	struct gcap_writer *w;
	struct wt_ng ni;

	c.ts_micro = true;
	w = wt_open(&c);
	wt_write_n(w, 0, 3, 60, 1);
	wt_close(w, &st);
	wt_ng_parse(p, &ni);
	ck_assert_int_eq(ni.tsresol[0], 6);
	for (unsigned i = 0; i < 3; i++) {
		struct wt_rec r;

		wt_mkrec(&r, i, 60, 1);
		ck_assert_uint_eq(ni.epb_ts[i], r.h.ts_ns / 1000);
	}
	ck_assert_uint_eq(ni.isb_start[0], T0 / 1000);
}
END_TEST

struct stats_ctx {
	unsigned calls;
	char closed[8][256];
	unsigned nclosed;
};

static void
fake_stats(void *arg, struct gcap_writer_if_stats *st, unsigned nifs)
{
	struct stats_ctx *x = arg;

	x->calls++;
	for (unsigned i = 0; i < nifs; i++) {
		st[i].received = 100 * x->calls + i;
		st[i].dropped = x->calls;
		st[i].filter_accepted = 10 * x->calls;
		st[i].os_dropped = 2 * x->calls;
	}
}

static void
note_closed(void *arg, const char *path)
{
	struct stats_ctx *x = arg;

	ck_assert_uint_lt(x->nclosed, 8);
	snprintf(x->closed[x->nclosed++], 256, "%s", path);
}

/* -b packets:10 with 25 records: 3 files, each with its own ISBs (the
 * counters of the moment it closed, usrdeliv counting every file so
 * far), and the hook told of the two closed by rotation. */
START_TEST(test_rotate_packets_isbs)
{
	const char *p = wt_path("r.pcapng");
	struct gcap_writer_conf c = wt_conf1(p);
	struct gcap_writer_if_stats last = { 7, 6, 5, 4 };
	struct stats_ctx x = { 0 };
	struct gcap_writer *w;
	struct wt_ng ni;

	c.rotate_packets = 10;
	c.stats_fn = fake_stats;
	c.stats_arg = &x;
	c.closed_fn = note_closed;
	c.closed_arg = &x;
	w = wt_open(&c);
	wt_write_n(w, 0, 25, 60, 1);
	wt_close(w, &last);
	ck_assert_uint_eq(x.calls, 2);
	ck_assert_uint_eq(x.nclosed, 2);
	ck_assert_str_eq(x.closed[0], p);
	ck_assert_str_eq(x.closed[1], wt_path("r.pcapng1"));
	for (unsigned k = 0; k < 3; k++) {
		char name[256];

		snprintf(name, sizeof(name), "%s%s", p, k == 0 ? "" : k == 1 ? "1" : "2");
		wt_ng_parse(name, &ni);
		ck_assert_uint_eq(ni.nepb, k < 2 ? 10 : 5);
		ck_assert_uint_eq(ni.nisb, 1);
		ck_assert_uint_eq(ni.isb_usrdeliv[0], k < 2 ? 10 * (k + 1) : 25);
		ck_assert_uint_eq(ni.isb_recv[0], k < 2 ? 100 * (k + 1) : 7);
		ck_assert_uint_eq(ni.isb_osdrop[0], k < 2 ? 2 * (k + 1) : 4);
		ck_assert(ni.isb_has_start[0] && ni.isb_start[0] == T0);
	}
	ck_assert(!wt_exists(wt_path("r.pcapng3")));
}
END_TEST

/* Rotation on demand (SIGHUP): -C's names without -C; not for stdout. */
START_TEST(test_rotate_now)
{
	const char *p = wt_path("h.pcap");
	struct gcap_writer_conf c = wt_conf1(p);
	struct gcap_writer *w;

	w = wt_open(&c);
	wt_write_n(w, 0, 3, 60, 1);
	ck_assert_int_eq(gcap_writer_rotate(w), 0);
	wt_write_n(w, 3, 4, 60, 1);
	ck_assert_int_eq(gcap_writer_rotate(w), 0);
	wt_close(w, NULL);
	wt_check_file(p, 0, 3, 60, 65535, DLT_EN10MB);
	wt_check_file(wt_path("h.pcap1"), 3, 4, 60, 65535, DLT_EN10MB);
	wt_check_file(wt_path("h.pcap2"), 0, 0, 60, 65535, DLT_EN10MB);

	c = wt_conf1("-");
	w = gcap_writer_open(&c, (char[GCAP_ERRBUF_SIZE]){ 0 });
	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(gcap_writer_rotate(w), -EINVAL);
	gcap_writer_close(w, NULL, (char[GCAP_ERRBUF_SIZE]){ 0 });
}
END_TEST

START_TEST(test_fmt_of)
{
	ck_assert_int_eq(gcap_writer_fmt_of("a.pcapng", GCAP_FMT_AUTO), GCAP_FMT_PCAPNG);
	ck_assert_int_eq(gcap_writer_fmt_of("a.pcap", GCAP_FMT_AUTO), GCAP_FMT_PCAP);
	ck_assert_int_eq(gcap_writer_fmt_of("-", GCAP_FMT_AUTO), GCAP_FMT_PCAP);
	ck_assert_int_eq(gcap_writer_fmt_of("a.pcap", GCAP_FMT_PCAPNG), GCAP_FMT_PCAPNG);
	ck_assert_int_eq(gcap_writer_fmt_of("a.pcapng", GCAP_FMT_PCAP), GCAP_FMT_PCAP);
}
END_TEST

TCase *
wt_tcase_metadata(void)
{
	TCase *tc = wt_tcase("metadata");

	tcase_add_test(tc, test_ng_options);
	tcase_add_test(tc, test_ng_no_epb_opts);
	tcase_add_test(tc, test_micro_pcap);
	tcase_add_test(tc, test_micro_pcapng);
	tcase_add_test(tc, test_rotate_packets_isbs);
	tcase_add_test(tc, test_rotate_now);
	tcase_add_test(tc, test_fmt_of);
	return tc;
}
