/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writer suite, files named as dumpcap's -b names them
 * (GCAP_NAMES_DUMPCAP): PREFIX_NNNNN_YYYYmmddHHMMSS.EXT from the first
 * file on, the path's suffix kept, a ring of max_files that removes its
 * oldest file and nothing else, -b duration: that numbers on without
 * stopping at max_files, -b interval: on the clock's multiples and
 * nametimenum:2's order.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "wt_util.h"

/* T0 is 2024-01-02 03:04:05 UTC */
#define STAMP0 "20240102030405"

/* A tick secs after T0 rotates (or not) to the file named name. */
static void
tick_to(struct gcap_writer *w, unsigned secs, const char *name)
{
	ck_assert_int_eq(gcap_writer_tick(w, T0 + secs * NS), 0);
	ck_assert_str_eq(gcap_writer_filename(w), wt_path(name));
}

START_TEST(test_dc_names)
{
	const char *p = wt_path("cap.pcap");
	struct gcap_writer_conf c = wt_conf1(p);
	struct gcap_writer *w;

	wt_utc();
	c.names = GCAP_NAMES_DUMPCAP;
	c.rotate_packets = 3;
	w = wt_open(&c);
	/* the first file is numbered too, before the suffix; never cap.pcap */
	ck_assert_str_eq(gcap_writer_filename(w), wt_path("cap_00001_" STAMP0 ".pcap"));
	wt_write_n(w, 0, 10, 100, 1);
	ck_assert_str_eq(gcap_writer_filename(w), wt_path("cap_00004_" STAMP0 ".pcap"));
	wt_close(w, NULL);
	wt_check_file(wt_path("cap_00001_" STAMP0 ".pcap"), 0, 3, 100, 65535, DLT_EN10MB);
	wt_check_file(wt_path("cap_00002_" STAMP0 ".pcap"), 3, 3, 100, 65535, DLT_EN10MB);
	wt_check_file(wt_path("cap_00003_" STAMP0 ".pcap"), 6, 3, 100, 65535, DLT_EN10MB);
	wt_check_file(wt_path("cap_00004_" STAMP0 ".pcap"), 9, 1, 100, 65535, DLT_EN10MB);
	ck_assert(!wt_exists(p));
	ck_assert_uint_eq(wt_count_files(), 4);
}
END_TEST

/* The suffix is the last component's: a '.' of a directory is not one,
 * a name without one gets none; the time is the file's opening. */
START_TEST(test_dc_names_split)
{
	struct gcap_writer_conf c = wt_conf1(wt_path("d.x/cap"));
	struct gcap_writer *w;

	wt_utc();
	ck_assert_int_eq(mkdir(wt_path("d.x"), 0700), 0);
	c.names = GCAP_NAMES_DUMPCAP;
	c.rotate_packets = 1; /* a file per record */
	w = wt_open(&c);
	ck_assert_str_eq(gcap_writer_filename(w), wt_path("d.x/cap_00001_" STAMP0));
	wt_write_n(w, 0, 1, 100, 1);
	ck_assert_str_eq(gcap_writer_filename(w), wt_path("d.x/cap_00002_" STAMP0));
	/* a record 65 s on: the file opened after it is named by the
	 * writer's clock, which the record moved */
	ck_assert_int_eq(wt_write_at(w, 1, T0 + 65 * NS), 0);
	ck_assert_str_eq(gcap_writer_filename(w),
			 wt_path("d.x/cap_00003_20240102030510"));
	wt_close(w, NULL);
	wt_check_file(wt_path("d.x/cap_00001_" STAMP0), 0, 1, 100, 65535, DLT_EN10MB);

	c = wt_conf1(wt_path("two.dots.pcapng"));
	c.names = GCAP_NAMES_DUMPCAP;
	c.rotate_packets = 5;
	w = wt_open(&c);
	ck_assert_str_eq(gcap_writer_filename(w),
			 wt_path("two.dots_00001_" STAMP0 ".pcapng"));
	wt_close(w, NULL);
}
END_TEST

/* files:3 with a new file every 2 records: the ring holds the last three
 * files, numbered on (dumpcap's numbers do not wrap at files:N), the
 * older ones removed. */
START_TEST(test_dc_ring)
{
	struct gcap_writer_conf c = wt_conf1(wt_path("r.pcap"));
	struct gcap_writer *w;

	wt_utc();
	c.names = GCAP_NAMES_DUMPCAP;
	c.rotate_packets = 2;
	c.max_files = 3;
	w = wt_open(&c);
	wt_write_n(w, 0, 11, 100, 1);
	ck_assert_str_eq(gcap_writer_filename(w), wt_path("r_00006_" STAMP0 ".pcap"));
	wt_close(w, NULL);
	ck_assert_uint_eq(wt_count_files(), 3);
	for (int k = 1; k <= 3; k++) {
		char n[64];

		snprintf(n, sizeof(n), "r_%05d_" STAMP0 ".pcap", k);
		ck_assert_msg(!wt_exists(wt_path(n)), "%s was not removed", n);
	}
	wt_check_file(wt_path("r_00004_" STAMP0 ".pcap"), 6, 2, 100, 65535, DLT_EN10MB);
	wt_check_file(wt_path("r_00005_" STAMP0 ".pcap"), 8, 2, 100, 65535, DLT_EN10MB);
	wt_check_file(wt_path("r_00006_" STAMP0 ".pcap"), 10, 1, 100, 65535, DLT_EN10MB);
}
END_TEST

/* The ring removes only the file it made: one another program put at
 * an old file's name (after -z moved ours away) stays. */
START_TEST(test_dc_ring_foreign)
{
	const char *second = wt_path("f_00002_" STAMP0 ".pcap");
	struct gcap_writer_conf c = wt_conf1(wt_path("f.pcap"));
	struct gcap_writer *w;
	FILE *f;

	wt_utc();
	c.names = GCAP_NAMES_DUMPCAP;
	c.rotate_packets = 1;
	c.max_files = 2;
	w = wt_open(&c);
	wt_write_n(w, 0, 1, 100, 1); /* file 1 full: file 2 opens */
	wt_write_n(w, 1, 1, 100, 1); /* file 2 full: file 1 goes, 3 opens */
	ck_assert(!wt_exists(wt_path("f_00001_" STAMP0 ".pcap")));
	ck_assert_str_eq(gcap_writer_filename(w), wt_path("f_00003_" STAMP0 ".pcap"));
	/* file 2 moved away, another file at its name */
	ck_assert_int_eq(rename(second, wt_path("moved.pcap")), 0);
	f = fopen(second, "w");
	ck_assert_ptr_nonnull(f);
	fputs("not ours\n", f);
	fclose(f);
	wt_write_n(w, 2, 1, 100, 1); /* file 3 full: file 2's slot, 4 opens */
	wt_close(w, NULL);
	ck_assert_int_eq(wt_fsize(second), 9);
	wt_check_file(wt_path("moved.pcap"), 1, 1, 100, 65535, DLT_EN10MB);
	wt_check_file(wt_path("f_00003_" STAMP0 ".pcap"), 2, 1, 100, 65535, DLT_EN10MB);
	ck_assert(wt_exists(wt_path("f_00004_" STAMP0 ".pcap")));
	ck_assert_uint_eq(wt_count_files(), 4);
}
END_TEST

/* -b duration: with files: a ring by time that goes on where tcpdump's
 * -G -W stops; SIGHUP's rotation numbers on too. */
START_TEST(test_dc_duration_ring)
{
	struct gcap_writer_conf c = wt_conf1(wt_path("t.pcapng"));
	struct gcap_writer *w;

	wt_utc();
	c.names = GCAP_NAMES_DUMPCAP;
	c.rotate_secs = 10;
	c.max_files = 2;
	w = wt_open(&c);
	tick_to(w, 10, "t_00002_20240102030415.pcapng");
	ck_assert_int_eq(gcap_writer_tick(w, T0 + 20 * NS), 0);
	tick_to(w, 30, "t_00004_20240102030435.pcapng");
	ck_assert_int_eq(wt_write_at(w, 0, T0 + 31 * NS), 0);
	ck_assert_int_eq(gcap_writer_rotate(w), 0);
	ck_assert(strncmp(gcap_writer_filename(w), wt_path("t_00005_"),
			  strlen(wt_path("t_00005_"))) == 0);
	wt_close(w, NULL);
	ck_assert_uint_eq(wt_count_files(), 2);
	ck_assert(wt_exists(wt_path("t_00004_20240102030435.pcapng")));
}
END_TEST

/* -b interval:10: files end on the clock's multiples of 10 s (T0 is at
 * :05, so the first ends at :10), not 10 s after each one's start; with
 * nametimenum:2 the time comes before the number; with duration: beside
 * it, at whichever end comes first, as dumpcap switches at either. */
START_TEST(test_dc_interval_timenum)
{
	struct gcap_writer_conf c = wt_conf1(wt_path("i.pcap"));
	struct gcap_writer *w;

	wt_utc();
	c.names = GCAP_NAMES_DUMPCAP_TIMENUM;
	c.rotate_interval = 10;
	w = wt_open(&c);
	ck_assert_str_eq(gcap_writer_filename(w), wt_path("i_" STAMP0 "_00001.pcap"));
	tick_to(w, 4, "i_" STAMP0 "_00001.pcap");
	tick_to(w, 5, "i_20240102030410_00002.pcap");  /* :10 */
	tick_to(w, 14, "i_20240102030410_00002.pcap"); /* :19 */
	tick_to(w, 16, "i_20240102030421_00003.pcap"); /* :21 */
	/* the next end is :30, not 10 s after :21 */
	tick_to(w, 25, "i_20240102030430_00004.pcap"); /* :30 */
	wt_close(w, NULL);
	ck_assert_uint_eq(wt_count_files(), 4);

	/* with duration:7 beside it, whichever end comes first: :10 (the
	 * interval), then :17 (7 s on), then :20 (the interval again) */
	c = wt_conf1(wt_path("b.pcap"));
	c.names = GCAP_NAMES_DUMPCAP;
	c.rotate_interval = 10;
	c.rotate_secs = 7;
	w = wt_open(&c);
	tick_to(w, 5, "b_00002_20240102030410.pcap");  /* :10 */
	tick_to(w, 11, "b_00002_20240102030410.pcap"); /* :16 */
	tick_to(w, 12, "b_00003_20240102030417.pcap"); /* :17 */
	tick_to(w, 15, "b_00004_20240102030420.pcap"); /* :20 */
	wt_close(w, NULL);
}
END_TEST

/* The record that fills a file ends it, as dumpcap switches right after
 * writing it: the next file is open before any further record, and
 * -a files: is done then (an idle link brings no next record). */
START_TEST(test_dc_switch_after)
{
	struct gcap_writer_conf c = wt_conf1(wt_path("s.pcap"));
	struct gcap_writer *w;

	wt_utc();
	c.names = GCAP_NAMES_DUMPCAP;
	c.rotate_packets = 5;
	c.stop_files = 2;
	w = wt_open(&c);
	wt_write_n(w, 0, 5, 100, 1);
	ck_assert_str_eq(gcap_writer_filename(w), wt_path("s_00002_" STAMP0 ".pcap"));
	ck_assert_int_eq(gcap_writer_tick(w, T0 + NS), 0);
	wt_write_n(w, 5, 5, 100, 1);
	ck_assert_int_eq(gcap_writer_tick(w, T0 + NS), -ECANCELED);
	ck_assert_int_eq(wt_write_at(w, 10, T0 + NS), -ECANCELED);
	wt_close(w, NULL);
	wt_check_file(wt_path("s_00002_" STAMP0 ".pcap"), 5, 5, 100, 65535, DLT_EN10MB);
	ck_assert_uint_eq(wt_count_files(), 2);

	/* -a filesize: (stop_bytes) ends with the record that reaches it */
	c = wt_conf1(wt_path("z.pcap"));
	c.stop_bytes = 24 + 2 * R100;
	w = wt_open(&c);
	wt_write_n(w, 0, 1, 100, 1);
	ck_assert_int_eq(gcap_writer_tick(w, T0 + NS), 0);
	wt_write_n(w, 1, 1, 100, 1);
	ck_assert_int_eq(gcap_writer_tick(w, T0 + NS), -ECANCELED);
	wt_close(w, NULL);
	wt_check_file(wt_path("z.pcap"), 0, 2, 100, 65535, DLT_EN10MB);
}
END_TEST

/* A name of dumpcap's that exists is another capture's (the same -w in
 * that second): it is not written over. */
START_TEST(test_dc_exists)
{
	const char *first = wt_path("e_00001_" STAMP0 ".pcap");
	struct gcap_writer_conf c = wt_conf1(wt_path("e.pcap"));
	char eb[GCAP_ERRBUF_SIZE];
	FILE *f;

	wt_utc();
	f = fopen(first, "w");
	ck_assert_ptr_nonnull(f);
	fputs("another run's\n", f);
	fclose(f);
	c.names = GCAP_NAMES_DUMPCAP;
	c.rotate_packets = 1;
	ck_assert_ptr_null(gcap_writer_open(&c, eb));
	ck_assert_int_eq(errno, EEXIST);
	ck_assert_ptr_nonnull(strstr(eb, "not written over"));
	ck_assert_int_eq(wt_fsize(first), 14);
}
END_TEST

/* dumpcap's names need a condition to switch files; the naming is
 * checked. */
START_TEST(test_dc_refused)
{
	struct gcap_writer_conf c = wt_conf1(wt_path("x.pcap"));
	char eb[GCAP_ERRBUF_SIZE];

	c.names = GCAP_NAMES_DUMPCAP;
	ck_assert_ptr_null(gcap_writer_open(&c, eb));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_nonnull(strstr(eb, "-b"));
	c = wt_conf1(wt_path("x.pcap"));
	c.names = (enum gcap_names)7;
	ck_assert_ptr_null(gcap_writer_open(&c, eb));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_uint_eq(wt_count_files(), 0);
}
END_TEST

TCase *
wt_tcase_names(void)
{
	TCase *tc = wt_tcase("names");

	tcase_add_test(tc, test_dc_names);
	tcase_add_test(tc, test_dc_names_split);
	tcase_add_test(tc, test_dc_ring);
	tcase_add_test(tc, test_dc_ring_foreign);
	tcase_add_test(tc, test_dc_duration_ring);
	tcase_add_test(tc, test_dc_interval_timenum);
	tcase_add_test(tc, test_dc_switch_after);
	tcase_add_test(tc, test_dc_exists);
	tcase_add_test(tc, test_dc_refused);
	return tc;
}
