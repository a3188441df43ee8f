/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writer suite, refused configurations and files that cannot be
 * written: the errno and the exact message, nothing left behind, and a
 * rotation whose next file cannot be opened.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wt_util.h"

START_TEST(test_bad_conf)
{
	struct gcap_writer_conf c = wt_conf1(wt_path("bad.pcap"));
	static struct gcap_writer_if badlt[] = { { .name = "x", .linktype = -1 } };
	char eb[GCAP_ERRBUF_SIZE];

	errno = 0;
	ck_assert_ptr_null(gcap_writer_open(NULL, eb));
	ck_assert_int_eq(errno, EINVAL);
	c.path = "";
	ck_assert_ptr_null(gcap_writer_open(&c, eb));
	ck_assert_int_eq(errno, EINVAL);
	c.path = NULL;
	ck_assert_ptr_null(gcap_writer_open(&c, eb));
	ck_assert_int_eq(errno, EINVAL);
	c = wt_conf1(wt_path("bad.pcap"));
	c.nifs = 0;
	ck_assert_ptr_null(gcap_writer_open(&c, eb));
	ck_assert_int_eq(errno, EINVAL);
	c = wt_conf1(wt_path("bad.pcap"));
	c.ifs = badlt;
	ck_assert_ptr_null(gcap_writer_open(&c, eb));
	ck_assert_int_eq(errno, EINVAL);
	c = wt_conf1(wt_path("bad.pcap"));
	c.fmt = (enum gcap_fmt)7;
	ck_assert_ptr_null(gcap_writer_open(&c, eb));
	ck_assert_int_eq(errno, EINVAL);
	c = wt_conf1(wt_path("bad.pcap"));
	c.max_files = 3; /* -W without -C or -G */
	ck_assert_ptr_null(gcap_writer_open(&c, eb));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_msg(strstr(eb, "-W") != NULL, "%s", eb);
	/* SHB comments: past the most, a NULL one, none where some are said */
	static const char *many[GCAP_WRITER_MAX_COMMENTS + 1];
	static const char *const holed[] = { "a", NULL };

	for (unsigned i = 0; i <= GCAP_WRITER_MAX_COMMENTS; i++)
		many[i] = "c";
	c = wt_conf1(wt_path("bad.pcap"));
	c.comments = many;
	c.ncomments = GCAP_WRITER_MAX_COMMENTS + 1;
	ck_assert_ptr_null(gcap_writer_open(&c, eb));
	ck_assert_int_eq(errno, EINVAL);
	c.comments = holed;
	c.ncomments = 2;
	ck_assert_ptr_null(gcap_writer_open(&c, eb));
	ck_assert_int_eq(errno, EINVAL);
	c.comments = NULL;
	c.ncomments = 1;
	ck_assert_ptr_null(gcap_writer_open(&c, eb));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert(!wt_exists(wt_path("bad.pcap")));
	/* NULL-safe entry points */
	ck_assert_int_eq(gcap_writer_close(NULL, NULL, eb), 0);
	ck_assert_int_eq(gcap_writer_flush(NULL), -EINVAL);
	ck_assert_int_eq(gcap_writer_tick(NULL, 0), -EINVAL);
}
END_TEST

static void
expect_open_error(const char *path, int err)
{
	struct gcap_writer_conf c = wt_conf1(path);
	char eb[GCAP_ERRBUF_SIZE] = "", want[600];

	errno = 0;
	ck_assert_ptr_null(gcap_writer_open(&c, eb));
	ck_assert_msg(errno == err, "%s: errno %d (%s), want %d", path, errno,
		      strerror(errno), err);
	snprintf(want, sizeof(want), "cannot write '%s': %s", path, strerror(err));
	ck_assert_str_eq(eb, want);
}

START_TEST(test_open_enoent_eisdir)
{
	expect_open_error(wt_path("no/such/dir/x.pcap"), ENOENT);
	expect_open_error(wt_dir, EISDIR);
}
END_TEST

START_TEST(test_open_eacces)
{
	/* root passes permission checks: drop to nobody in a child */
	char dir[600];
	pid_t pid;
	int st;

	snprintf(dir, sizeof(dir), "%s/ro", wt_dir);
	ck_assert_int_eq(mkdir(dir, 0555), 0);
	ck_assert_int_eq(chmod(wt_dir, 0755), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char path[700], eb[GCAP_ERRBUF_SIZE] = "", want[800];
		struct gcap_writer_conf c;

		if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
			_exit(10);
		snprintf(path, sizeof(path), "%s/x.pcap", dir);
		c = wt_conf1(path);
		errno = 0;
		if (gcap_writer_open(&c, eb) != NULL)
			_exit(11);
		if (errno != EACCES)
			_exit(12);
		snprintf(want, sizeof(want), "cannot write '%s': %s", path,
			 strerror(EACCES));
		_exit(strcmp(eb, want) == 0 ? 0 : 13);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d", st);
	ck_assert(!wt_exists(wt_path("ro/x.pcap")));
}
END_TEST

START_TEST(test_open_dev_full)
{
	/* the header cannot be written: the open fails, ENOSPC */
	expect_open_error("/dev/full", ENOSPC);
}
END_TEST

START_TEST(test_open_proc_file)
{
	/* a file that opens but refuses writes (EIO or EACCES by kernel) */
	struct gcap_writer_conf c = wt_conf1("/proc/version");
	char eb[GCAP_ERRBUF_SIZE] = "", want[300];

	errno = 0;
	ck_assert_ptr_null(gcap_writer_open(&c, eb));
	ck_assert_int_ne(errno, 0);
	snprintf(want, sizeof(want), "cannot write '/proc/version': %s", strerror(errno));
	ck_assert_str_eq(eb, want);
	ck_assert(wt_exists("/proc/version"));
}
END_TEST

START_TEST(test_rotate_open_error)
{
	/* the next file cannot be created: the error is sticky */
	const char *p = wt_path("rot.pcap");
	struct gcap_writer_conf c = wt_conf1(p);
	struct gcap_writer *w;
	char eb[GCAP_ERRBUF_SIZE] = "";
	struct wt_rec r;

	c.rotate_bytes = 24 + R100;
	w = wt_open(&c);
	wt_write_n(w, 0, 2, 100, 1);
	ck_assert_int_eq(mkdir(wt_path("rot.pcap1"), 0755), 0); /* in the way */
	wt_mkrec(&r, 2, 100, 1);
	ck_assert_int_eq(gcap_writer_write(w, &r.h, r.data), -EISDIR);
	ck_assert_int_eq(gcap_writer_write(w, &r.h, r.data), -EISDIR);
	ck_assert_msg(strstr(gcap_writer_errmsg(w), "rot.pcap1") != NULL, "%s",
		      gcap_writer_errmsg(w));
	ck_assert_int_eq(gcap_writer_close(w, NULL, eb), -EISDIR);
	ck_assert_msg(strstr(eb, "cannot write") != NULL, "%s", eb);
	wt_check_file(p, 0, 2, 100, 65535, DLT_EN10MB);
}
END_TEST

TCase *
wt_tcase_open_errors(void)
{
	TCase *tc = wt_tcase("open_errors");

	tcase_add_test(tc, test_bad_conf);
	tcase_add_test(tc, test_open_enoent_eisdir);
	tcase_add_test(tc, test_open_eacces);
	tcase_add_test(tc, test_open_dev_full);
	tcase_add_test(tc, test_open_proc_file);
	tcase_add_test(tc, test_rotate_open_error);
	return tc;
}
