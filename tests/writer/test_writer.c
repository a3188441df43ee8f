/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writer suite: files are written, then read back with libpcap (and with
 * tshark/capinfos when installed), and pcapng blocks are parsed to check
 * what libpcap does not expose. One binary; its check cases come from the
 * parts, one file per concern (test_pcap.c, test_pcapng.c, test_output.c,
 * test_rotation.c, test_names.c, test_open_errors.c, test_write_errors.c, test_metadata.c,
 * test_write_calls.c, test_io_wait.c).
 * With --behind, every writer writes from a thread of its own
 * (write_behind): the same cases, the same files.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "wt_util.h"

static Suite *
writer_suite(void)
{
	Suite *s = suite_create("writer");

	suite_add_tcase(s, wt_tcase_pcap());
	suite_add_tcase(s, wt_tcase_pcapng());
	suite_add_tcase(s, wt_tcase_durability());
	suite_add_tcase(s, wt_tcase_export_buffers());
	suite_add_tcase(s, wt_tcase_rotation());
	suite_add_tcase(s, wt_tcase_names());
	suite_add_tcase(s, wt_tcase_stdout());
	suite_add_tcase(s, wt_tcase_open_errors());
	suite_add_tcase(s, wt_tcase_write_errors());
	suite_add_tcase(s, wt_tcase_metadata());
	suite_add_tcase(s, wt_tcase_write_calls());
	suite_add_tcase(s, wt_tcase_io_wait());
	return s;
}

int
main(int argc, char **argv)
{
	SRunner *sr;
	int failed;

	wt_behind = argc > 1 && strcmp(argv[1], "--behind") == 0;
	sr = srunner_create(writer_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
