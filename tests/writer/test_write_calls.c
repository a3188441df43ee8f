/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writer suite, the write(2)s themselves: each buffer's bytes start where
 * the file offset they reach starts within a cache line, whichever way
 * the file got there (records of every length, flushes at odd points, a
 * rotation, pcap and pcapng, stdout a file already written to). This
 * binary defines writev, which the writer's library calls: it passes
 * every call on and, while a test watches, checks each call to a file of
 * the test's directory against the file's offset.
 */
#include <check.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "wt_util.h"

/* the watch: calls to files of the test's directory, those whose bytes
 * started off the file offset's place in a cache line, and the first such */
static struct {
	bool on;
	unsigned calls, off_place;
	uintptr_t first_src;
	off_t first_at;
} watch;

/* whether fd is a file in wt_dir */
static bool
watched(int fd)
{
	char link[64], to[PATH_MAX];
	size_t n = strlen(wt_dir);
	ssize_t len;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	len = readlink(link, to, sizeof(to) - 1);
	return len > (ssize_t)n && strncmp(to, wt_dir, n) == 0 && to[n] == '/';
}

ssize_t
writev(int fd, const struct iovec *iov, int n)
{
	static ssize_t (*real)(int, const struct iovec *, int);

	if (real == NULL)
		real = (ssize_t(*)(int, const struct iovec *, int))dlsym(RTLD_NEXT,
									 "writev");
	if (watch.on && n > 0 && watched(fd)) {
		off_t at = lseek(fd, 0, SEEK_CUR);

		watch.calls++;
		if ((uintptr_t)iov[0].iov_base % 64 != (uint64_t)at % 64 &&
		    watch.off_place++ == 0) {
			watch.first_src = (uintptr_t)iov[0].iov_base;
			watch.first_at = at;
		}
	}
	return real(fd, iov, n);
}

/* Watch every write to the test's directory from now on (the headers'
 * too: call it before the writer opens). */
static void
watch_start(void)
{
	watch.calls = watch.off_place = 0;
	watch.on = true;
}

/* Records of every length through w, flushed at odd points; then close w
 * and check what the watch saw. */
static void
watch_writes(struct gcap_writer *w)
{
	struct wt_rec r;

	for (unsigned i = 0; i < 15000; i++) {
		wt_mkrec(&r, i, wt_vlen(i), 1);
		ck_assert_int_eq(gcap_writer_write(w, &r.h, r.data), 0);
		if (i % 997 == 0) /* flushes that leave the offset anywhere */
			ck_assert_int_eq(gcap_writer_flush(w), 0);
	}
	ck_assert_int_eq(gcap_writer_flush(w), 0);
	watch.on = false;
	wt_close(w, NULL);
	/* flushes every 997 records: a dozen writes or more */
	ck_assert_uint_ge(watch.calls, 12);
	ck_assert_msg(watch.off_place == 0,
		      "%u of %u writes from %#lx (%lu in a line) to offset %lld (%lld)",
		      watch.off_place, watch.calls, (unsigned long)watch.first_src,
		      (unsigned long)(watch.first_src % 64), (long long)watch.first_at,
		      (long long)(watch.first_at % 64));
}

START_TEST(test_writes_share_alignment)
{
	static const char *const names[] = { "al.pcap", "al.pcapng" };

	for (unsigned k = 0; k < 2; k++) {
		struct gcap_writer_conf c = wt_conf1(wt_path(names[k]));

		c.rotate_bytes = 6u << 20; /* one rotation in about 11 MB */
		watch_start();
		watch_writes(wt_open(&c));
	}
}
END_TEST

START_TEST(test_stdout_file_at_offset)
{
	/* stdout a file that holds 5 bytes already: the output starts
	 * there (the writer's base), its header too */
	struct gcap_writer_conf c = wt_conf1("-");
	int fd, saved;

	fd = open(wt_path("so.pcap"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "01234", 5), 5);
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	ck_assert_int_ge(saved, 0);
	ck_assert_int_eq(dup2(fd, STDOUT_FILENO), STDOUT_FILENO);
	close(fd);
	watch_start();
	watch_writes(wt_open(&c));
	ck_assert_int_eq(dup2(saved, STDOUT_FILENO), STDOUT_FILENO);
	close(saved);
}
END_TEST

TCase *
wt_tcase_write_calls(void)
{
	TCase *tc = wt_tcase("write_calls");

	tcase_add_test(tc, test_writes_share_alignment);
	tcase_add_test(tc, test_stdout_file_at_offset);
	return tc;
}
