/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writer suite, rotation as tcpdump does it: -C by size with its file
 * numbers, the -W ring and its zero padding, -G by time with strftime
 * names, -W with -G stopping, -G with -C.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "wt_util.h"

START_TEST(test_rotate_C)
{
	const char *p = wt_path("c.pcap");
	struct gcap_writer_conf c = wt_conf1(p);
	struct gcap_writer *w;

	/* larger than 24 + 2 records: a file takes 3 records */
	c.rotate_bytes = 24 + 2 * R100;
	w = wt_open(&c);
	ck_assert_str_eq(gcap_writer_filename(w), p);
	wt_write_n(w, 0, 10, 100, 1);
	ck_assert_str_eq(gcap_writer_filename(w), wt_path("c.pcap3"));
	wt_close(w, NULL);
	wt_check_file(wt_path("c.pcap"), 0, 3, 100, 65535, DLT_EN10MB);
	wt_check_file(wt_path("c.pcap1"), 3, 3, 100, 65535, DLT_EN10MB);
	wt_check_file(wt_path("c.pcap2"), 6, 3, 100, 65535, DLT_EN10MB);
	wt_check_file(wt_path("c.pcap3"), 9, 1, 100, 65535, DLT_EN10MB);
	ck_assert_uint_eq(wt_count_files(), 4);
}
END_TEST

START_TEST(test_rotate_C_W_ring)
{
	const char *p = wt_path("ring.pcap");
	struct gcap_writer_conf c = wt_conf1(p);
	struct gcap_writer *w;

	c.rotate_bytes = 24 + 2 * R100;
	c.max_files = 3;
	w = wt_open(&c);
	/* with -W the first file is numbered too, width of W-1 = 1 digit */
	ck_assert_str_eq(gcap_writer_filename(w), wt_path("ring.pcap0"));
	wt_write_n(w, 0, 11, 100, 1);
	wt_close(w, NULL);
	/* 0-2 went to ring0, 3-5 ring1, 6-8 ring2, 9-10 ring0 again */
	wt_check_file(wt_path("ring.pcap0"), 9, 2, 100, 65535, DLT_EN10MB);
	wt_check_file(wt_path("ring.pcap1"), 3, 3, 100, 65535, DLT_EN10MB);
	wt_check_file(wt_path("ring.pcap2"), 6, 3, 100, 65535, DLT_EN10MB);
	ck_assert(!wt_exists(p));
	ck_assert(!wt_exists(wt_path("ring.pcap3")));
	ck_assert_uint_eq(wt_count_files(), 3);
}
END_TEST

START_TEST(test_rotate_C_W_padding)
{
	struct gcap_writer_conf c = wt_conf1(wt_path("pad.pcapng"));
	struct gcap_writer *w;
	struct wt_ng ni;

	/* W=11: numbers 0..10, two digits; a pcapng file per record */
	c.rotate_bytes = 1;
	c.max_files = 11;
	w = wt_open(&c);
	ck_assert_str_eq(gcap_writer_filename(w), wt_path("pad.pcapng00"));
	wt_write_n(w, 0, 10, 0, 1);
	ck_assert_str_eq(gcap_writer_filename(w), wt_path("pad.pcapng10"));
	/* the first record already found file 00 (header only) too large */
	wt_ng_parse(wt_path("pad.pcapng00"), &ni);
	ck_assert_uint_eq(ni.nshb, 1);
	ck_assert_uint_eq(ni.nepb, 0);
	/* records 10 and 11 wrap to 00 and 01 */
	wt_write_n(w, 10, 2, 0, 1);
	ck_assert_str_eq(gcap_writer_filename(w), wt_path("pad.pcapng01"));
	wt_close(w, NULL);
	ck_assert_uint_eq(wt_count_files(), 11);
	wt_check_file(wt_path("pad.pcapng00"), 10, 1, 0, 65535, DLT_EN10MB);
	wt_check_file(wt_path("pad.pcapng01"), 11, 1, 0, 65535, DLT_EN10MB);
	for (unsigned k = 2; k <= 10; k++) {
		char n[32];

		snprintf(n, sizeof(n), "pad.pcapng%02u", k);
		wt_check_file(wt_path(n), k - 1, 1, 0, 65535, DLT_EN10MB);
		wt_ng_parse(wt_path(n), &ni);
		ck_assert_uint_eq(ni.nshb, 1);
		ck_assert_uint_eq(ni.nidb, 1);
		ck_assert_uint_eq(ni.nepb, 1);
	}

	/* W=10: still one digit (9 is the largest number), W=1: no number */
	wt_teardown();
	wt_setup();
	c = wt_conf1(wt_path("w10.pcap"));
	c.rotate_bytes = 1000;
	c.max_files = 10;
	w = wt_open(&c);
	ck_assert_str_eq(gcap_writer_filename(w), wt_path("w10.pcap0"));
	wt_close(w, NULL);
	c = wt_conf1(wt_path("w1.pcap"));
	c.rotate_bytes = 24 + R100 - 1;
	c.max_files = 1;
	w = wt_open(&c);
	ck_assert_str_eq(gcap_writer_filename(w), wt_path("w1.pcap"));
	wt_write_n(w, 0, 3, 100, 1);
	ck_assert_str_eq(gcap_writer_filename(w), wt_path("w1.pcap"));
	wt_close(w, NULL);
	wt_check_file(wt_path("w1.pcap"), 2, 1, 100, 65535, DLT_EN10MB);
}
END_TEST

START_TEST(test_rotate_G)
{
	struct gcap_writer_conf c = wt_conf1(wt_path("g-%Y%m%d-%H%M%S.pcap"));
	struct gcap_writer *w;
	struct wt_rec r;

	wt_utc();
	c.rotate_secs = 10;
	w = wt_open(&c);
	ck_assert_str_eq(gcap_writer_filename(w), wt_path("g-20240102-030405.pcap"));
	wt_mkrec(&r, 0, 100, 1); /* at T0 + 0 */
	ck_assert_int_eq(gcap_writer_write(w, &r.h, r.data), 0);
	ck_assert_int_eq(gcap_writer_tick(w, T0 + 5 * NS), 0);
	ck_assert_int_eq(gcap_writer_tick(w, T0 + 10 * NS - 1), 0);
	ck_assert_str_eq(gcap_writer_filename(w), wt_path("g-20240102-030405.pcap"));
	/* 10 s: a tick rotates, the new period starts at the tick's time */
	ck_assert_int_eq(gcap_writer_tick(w, T0 + 12 * NS), 0);
	ck_assert_str_eq(gcap_writer_filename(w), wt_path("g-20240102-030417.pcap"));
	/* the clock never goes back */
	ck_assert_int_eq(gcap_writer_tick(w, T0), 0);
	ck_assert_int_eq(wt_write_at(w, 1, T0 + 13 * NS), 0);
	/* a record's own time rotates too (the writer's clock) */
	ck_assert_int_eq(wt_write_at(w, 2, T0 + 22 * NS), 0);
	ck_assert_str_eq(gcap_writer_filename(w), wt_path("g-20240102-030427.pcap"));
	/* but not one stamped further ahead of the ticks than a period (a
	 * clock that jumped): the next tick rotates as ever */
	ck_assert_int_eq(wt_write_at(w, 3, T0 + 10 * 365 * 86400 * NS), 0);
	ck_assert_str_eq(gcap_writer_filename(w), wt_path("g-20240102-030427.pcap"));
	ck_assert_int_eq(gcap_writer_tick(w, T0 + 33 * NS), 0);
	ck_assert_str_eq(gcap_writer_filename(w), wt_path("g-20240102-030438.pcap"));
	wt_close(w, NULL);
	wt_check_file(wt_path("g-20240102-030405.pcap"), 0, 1, 100, 65535, DLT_EN10MB);
	ck_assert_uint_eq(wt_count_files(), 4);
	ck_assert_int_eq(wt_fsize(wt_path("g-20240102-030417.pcap")), 24 + R100);
	ck_assert_int_eq(wt_fsize(wt_path("g-20240102-030427.pcap")), 24 + 2 * R100);
}
END_TEST

START_TEST(test_rotate_G_W_stops)
{
	struct gcap_writer_conf c = wt_conf1(wt_path("gw-%H%M%S.pcapng"));
	struct gcap_writer_if_stats st = { 9, 8, 7, 0 };
	struct gcap_writer *w;
	struct wt_ng ni;
	struct wt_rec r;

	wt_utc();
	c.rotate_secs = 60;
	c.max_files = 2;
	w = wt_open(&c);
	/* -W alone with -G: no number in the name */
	ck_assert_str_eq(gcap_writer_filename(w), wt_path("gw-030405.pcapng"));
	wt_write_n(w, 0, 2, 100, 1);
	ck_assert_int_eq(gcap_writer_tick(w, T0 + 60 * NS), 0);
	ck_assert_str_eq(gcap_writer_filename(w), wt_path("gw-030505.pcapng"));
	ck_assert_int_eq(wt_write_at(w, 2, T0 + 61 * NS), 0);
	/* the next period would be file 3: done */
	ck_assert_int_eq(wt_write_at(w, 3, T0 + 120 * NS), -ECANCELED);
	ck_assert_int_eq(wt_write_at(w, 3, T0 + 120 * NS), -ECANCELED);
	ck_assert_int_eq(gcap_writer_tick(w, T0 + 500 * NS), -ECANCELED);
	wt_mkrec(&r, 3, 100, 1);
	ck_assert_int_eq(
		gcap_writer_write_buf(w, (const uint8_t *)&r, GCAP_REC_SIZE(100), 0),
		-ECANCELED);
	uint64_t nrec;

	gcap_writer_counts(w, &nrec, NULL);
	ck_assert_uint_eq(nrec, 3);
	wt_close(w, &st); /* done is not an error */
	ck_assert_uint_eq(wt_count_files(), 2);
	wt_ng_parse(wt_path("gw-030505.pcapng"), &ni);
	ck_assert_uint_eq(ni.nepb, 1);
	ck_assert_uint_eq(ni.nisb, 1); /* stats land in the last file */
	ck_assert_uint_eq(ni.isb_recv[0], 9);
	wt_ng_parse(wt_path("gw-030405.pcapng"), &ni);
	ck_assert_uint_eq(ni.nepb, 2);
	ck_assert_uint_eq(ni.nisb, 0);

	/* tick alone ends it, too */
	wt_teardown();
	wt_setup();
	c = wt_conf1(wt_path("gt.pcap"));
	c.rotate_secs = 1;
	c.max_files = 1;
	w = wt_open(&c);
	ck_assert_int_eq(gcap_writer_tick(w, T0 + NS / 2), 0);
	ck_assert_int_eq(gcap_writer_tick(w, T0 + NS), -ECANCELED);
	wt_close(w, NULL);
	ck_assert_uint_eq(wt_count_files(), 1);
}
END_TEST

START_TEST(test_rotate_G_C)
{
	struct gcap_writer_conf c = wt_conf1(wt_path("gc-%M%S.pcap"));
	struct gcap_writer *w;

	wt_utc();
	c.rotate_secs = 10;
	c.rotate_bytes = 24 + R100; /* 2 records a file */
	w = wt_open(&c);
	/* tcpdump: -G with -C and no -W: the first file has no number */
	ck_assert_str_eq(gcap_writer_filename(w), wt_path("gc-0405.pcap"));
	wt_write_n(w, 0, 5, 100, 1); /* all at T0 + ~5 ms */
	ck_assert_str_eq(gcap_writer_filename(w), wt_path("gc-0405.pcap2"));
	/* a time rotation restarts the numbering */
	ck_assert_int_eq(wt_write_at(w, 5, T0 + 10 * NS), 0);
	ck_assert_str_eq(gcap_writer_filename(w), wt_path("gc-0415.pcap"));
	wt_close(w, NULL);
	wt_check_file(wt_path("gc-0405.pcap"), 0, 2, 100, 65535, DLT_EN10MB);
	wt_check_file(wt_path("gc-0405.pcap1"), 2, 2, 100, 65535, DLT_EN10MB);
	wt_check_file(wt_path("gc-0405.pcap2"), 4, 1, 100, 65535, DLT_EN10MB);
	ck_assert_uint_eq(wt_count_files(), 4);

	/* with -W: numbered from 0, the ring wraps, -W does not stop */
	wt_teardown();
	wt_setup();
	c = wt_conf1(wt_path("gcw-%M%S.pcap"));
	c.rotate_secs = 10;
	c.rotate_bytes = 24 + R100;
	c.max_files = 2;
	w = wt_open(&c);
	ck_assert_str_eq(gcap_writer_filename(w), wt_path("gcw-0405.pcap0"));
	wt_write_n(w, 0, 5, 100, 1);
	for (unsigned k = 1; k <= 3; k++)
		ck_assert_int_eq(gcap_writer_tick(w, T0 + k * 10 * NS), 0);
	ck_assert_str_eq(gcap_writer_filename(w), wt_path("gcw-0435.pcap0"));
	wt_close(w, NULL);
	wt_check_file(wt_path("gcw-0405.pcap0"), 4, 1, 100, 65535, DLT_EN10MB);
	wt_check_file(wt_path("gcw-0405.pcap1"), 2, 2, 100, 65535, DLT_EN10MB);
	ck_assert_uint_eq(wt_count_files(), 5);
}
END_TEST

/* -G where the next name is the current file's (no time format, or one
 * coarser than the period; SIGHUP twice in its second): the file goes on
 * whole, where reopening it (tcpdump's way) would cut what it holds */
START_TEST(test_rotate_G_same_name)
{
	struct gcap_writer_conf c = wt_conf1(wt_path("same.pcap"));
	struct gcap_writer *w;

	wt_utc();
	c.rotate_secs = 1;
	w = wt_open(&c);
	wt_write_n(w, 0, 2, 100, 1);
	ck_assert_int_eq(gcap_writer_tick(w, T0 + 2 * NS), 0); /* a period later */
	wt_write_n(w, 2, 2, 100, 1);
	ck_assert_int_eq(gcap_writer_rotate(w), 0); /* SIGHUP */
	wt_write_n(w, 4, 2, 100, 1);
	ck_assert_str_eq(gcap_writer_filename(w), wt_path("same.pcap"));
	wt_close(w, NULL);
	wt_check_file(wt_path("same.pcap"), 0, 6, 100, 65535, DLT_EN10MB);
	ck_assert_uint_eq(wt_count_files(), 1);
}
END_TEST

/* -G of a caller that never ticks: the records' own times are its clock,
 * however far apart */
START_TEST(test_rotate_G_records_only)
{
	struct gcap_writer_conf c = wt_conf1(wt_path("gr-%H%M%S.pcap"));
	struct gcap_writer *w;

	wt_utc();
	c.rotate_secs = 10;
	w = wt_open(&c);
	wt_write_n(w, 0, 1, 100, 1);
	ck_assert_int_eq(wt_write_at(w, 1, T0 + 3600 * NS), 0);
	ck_assert_str_eq(gcap_writer_filename(w), wt_path("gr-040405.pcap"));
	wt_close(w, NULL);
	ck_assert_uint_eq(wt_count_files(), 2);
}
END_TEST

/* -G with -W: a file SIGHUP starts is not one of -W's periods and does
 * not end the output; the period's end does */
START_TEST(test_rotate_G_W_sighup)
{
	struct gcap_writer_conf c = wt_conf1(wt_path("gh-%H%M%S.pcap"));
	struct gcap_writer *w;
	struct timespec now;
	uint64_t t;

	wt_utc();
	c.rotate_secs = 60;
	c.max_files = 1;
	w = wt_open(&c);
	wt_write_n(w, 0, 1, 100, 1);
	ck_assert_int_eq(gcap_writer_rotate(w), 0); /* SIGHUP: a new file, now */
	clock_gettime(CLOCK_REALTIME, &now);
	t = (uint64_t)now.tv_sec * NS + (uint64_t)now.tv_nsec;
	ck_assert_int_eq(wt_write_at(w, 1, t), 0);
	/* its period over: the one file -W allows is done */
	ck_assert_int_eq(gcap_writer_tick(w, t + 61 * NS), -ECANCELED);
	wt_close(w, NULL);
	ck_assert_uint_eq(wt_count_files(), 2);
}
END_TEST

/* -G with -C where the new period's names are the last one's: the files
 * go on, numbered on, where restarting the numbers would reopen the
 * first file and cut it */
START_TEST(test_rotate_G_C_same_names)
{
	struct gcap_writer_conf c = wt_conf1(wt_path("gcs.pcap"));
	struct gcap_writer *w;

	wt_utc();
	c.rotate_secs = 10;
	c.rotate_bytes = 24 + R100; /* 2 records a file */
	w = wt_open(&c);
	wt_write_n(w, 0, 5, 100, 1);
	ck_assert_int_eq(gcap_writer_tick(w, T0 + 10 * NS), 0); /* a period later */
	wt_write_n(w, 5, 2, 100, 1);
	ck_assert_str_eq(gcap_writer_filename(w), wt_path("gcs.pcap3"));
	wt_close(w, NULL);
	wt_check_file(wt_path("gcs.pcap"), 0, 2, 100, 65535, DLT_EN10MB);
	wt_check_file(wt_path("gcs.pcap1"), 2, 2, 100, 65535, DLT_EN10MB);
	wt_check_file(wt_path("gcs.pcap2"), 4, 2, 100, 65535, DLT_EN10MB);
	wt_check_file(wt_path("gcs.pcap3"), 6, 1, 100, 65535, DLT_EN10MB);
	ck_assert_uint_eq(wt_count_files(), 4);
}
END_TEST

START_TEST(test_rotate_no_strftime_without_G)
{
	const char *p = wt_path("lit-%Y.pcap");
	struct gcap_writer_conf c = wt_conf1(p);

	c.rotate_bytes = 100;
	wt_close(wt_open(&c), NULL);
	ck_assert(wt_exists(p)); /* taken literally, as tcpdump does */
}
END_TEST

TCase *
wt_tcase_rotation(void)
{
	TCase *tc = wt_tcase("rotation");

	tcase_add_test(tc, test_rotate_C);
	tcase_add_test(tc, test_rotate_C_W_ring);
	tcase_add_test(tc, test_rotate_C_W_padding);
	tcase_add_test(tc, test_rotate_G);
	tcase_add_test(tc, test_rotate_G_W_stops);
	tcase_add_test(tc, test_rotate_G_C);
	tcase_add_test(tc, test_rotate_G_same_name);
	tcase_add_test(tc, test_rotate_G_W_sighup);
	tcase_add_test(tc, test_rotate_G_records_only);
	tcase_add_test(tc, test_rotate_G_C_same_names);
	tcase_add_test(tc, test_rotate_no_strftime_without_G);
	return tc;
}
