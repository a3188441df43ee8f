/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writer suite, the waits for storage (gcap_writer_io_wait) and
 * gcap_writer_push: a writer whose I/O thread is stuck on a FIFO nobody
 * reads fills its ring and waits, and says so once the reader lets it on;
 * a push hands a part-filled buffer over and returns while the thread
 * is stuck, and the thread writes it without a flush; a writer without
 * an I/O thread never counts a wait. Nothing here depends on timing: the
 * reader starts only once the writing thread is asleep with its ring's
 * bytes framed, or once the push returned.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "wt_util.h"

/* past three of the ring's 2 MiB buffers: the writer fills a fourth
 * before it can wait, and the FIFO takes 64 KiB at most */
#define FRAMED_FIRST (6u << 20)
#define RECORDS 100000u /* 11.6 MB of 100-byte records */

struct gate {
	const char *path;
	struct gcap_writer *_Atomic w;
	pid_t writing;    /* the writing thread's id */
	atomic_bool open; /* read from now on (else: when the writer sleeps) */
	size_t want;      /* read this much, then stop (0: to the end) */
	size_t got;
	bool was_asleep;
};

/* The writing thread's state letter ('R', 'S', ...) from its stat. */
static char
thread_state(pid_t tid)
{
	char p[64], line[512], *e;
	FILE *f;

	snprintf(p, sizeof(p), "/proc/self/task/%d/stat", (int)tid);
	f = fopen(p, "r");
	if (f == NULL)
		return '?';
	e = fgets(line, sizeof(line), f) ? strrchr(line, ')') : NULL;
	fclose(f);
	return e != NULL && e[1] == ' ' ? e[2] : '?';
}

/* Open the FIFO, read nothing until told to or until the writer has
 * framed what its ring holds and sleeps (it sleeps nowhere else once
 * writing but, for an instant, on the ring's lock: so asleep twice, 5 ms
 * apart, with nothing framed between), then read. */
static void *
gate_read(void *arg)
{
	struct gate *g = arg;
	const struct timespec ms = { 0, 1000000 };
	char buf[65536];
	int fd = open(g->path, O_RDONLY);
	uint64_t last = 0;
	unsigned asleep = 0;

	for (unsigned i = 0; fd >= 0 && !atomic_load(&g->open) && i < 120000; i++) {
		struct gcap_writer *w = atomic_load(&g->w);
		uint64_t bytes = 0;

		gcap_writer_counts(w, NULL, &bytes);
		if (w != NULL && bytes >= FRAMED_FIRST && thread_state(g->writing) == 'S')
			asleep = bytes == last ? asleep + 1 : 1;
		else
			asleep = 0;
		last = bytes;
		if (asleep >= 2) {
			g->was_asleep = true;
			break;
		}
		for (unsigned k = 0; k < (asleep ? 5u : 1u); k++)
			nanosleep(&ms, NULL);
	}
	for (ssize_t n; fd >= 0 && (g->want == 0 || g->got < g->want) &&
			(n = read(fd, buf, sizeof(buf))) > 0;)
		g->got += (size_t)n;
	if (fd >= 0)
		close(fd);
	return NULL;
}

START_TEST(test_full_ring_counted)
{
	const char *p = wt_path("wait.fifo");
	struct gcap_writer_conf c = wt_conf1(p);
	struct gate g = { .path = p, .writing = (pid_t)syscall(SYS_gettid) };
	uint64_t waits, ns, nrec;
	pthread_t rd;

	c.write_behind = true;
	ck_assert_int_eq(mkfifo(p, 0600), 0);
	ck_assert_int_eq(pthread_create(&rd, NULL, gate_read, &g), 0);
	struct gcap_writer *w = wt_open(&c);

	atomic_store(&g.w, w);
	wt_write_n(w, 0, RECORDS, 100, 1);
	ck_assert_int_eq(gcap_writer_flush(w), 0);
	gcap_writer_io_wait(w, &waits, &ns);
	gcap_writer_counts(w, &nrec, NULL);
	wt_close(w, NULL);
	pthread_join(rd, NULL);
	ck_assert_msg(g.was_asleep, "the writing thread never slept with its ring full");
	ck_assert_uint_ge(waits, 1);
	ck_assert_uint_gt(ns, 0);
	ck_assert_uint_eq(nrec, RECORDS);
	/* every record reached the reader */
	ck_assert_uint_eq(g.got, 24 + (size_t)RECORDS * R100);
}
END_TEST

START_TEST(test_push_on_its_way)
{
	/* a part-filled buffer: a flush would wait for the stuck thread,
	 * a push returns, and the thread writes it without another call */
	const unsigned n = 5000; /* 580 KB: under a buffer */
	const char *p = wt_path("push.fifo");
	struct gcap_writer_conf c = wt_conf1(p);
	struct gate g = { .path = p, .want = 24 + (size_t)n * R100 };
	uint64_t waits = 1, ns = 1;
	pthread_t rd;

	c.write_behind = true;
	atomic_store(&g.open, false);
	ck_assert_int_eq(mkfifo(p, 0600), 0);
	ck_assert_int_eq(pthread_create(&rd, NULL, gate_read, &g), 0);
	struct gcap_writer *w = wt_open(&c);

	wt_write_n(w, 0, n, 100, 1);
	ck_assert_int_eq(gcap_writer_push(w), 0);
	/* the reader takes every record's bytes before close flushes */
	atomic_store(&g.open, true);
	pthread_join(rd, NULL);
	ck_assert_uint_eq(g.got, g.want);
	gcap_writer_io_wait(w, &waits, &ns);
	ck_assert_uint_eq(waits, 0);
	wt_close(w, NULL);
	ck_assert_int_eq(gcap_writer_push(NULL), -EINVAL);
}
END_TEST

START_TEST(test_no_thread_no_waits)
{
	const char *p = wt_path("sync.pcap");
	struct gcap_writer_conf c = wt_conf1(p);
	uint64_t waits = 1, ns = 1;

	c.write_behind = false;
	struct gcap_writer *w = wt_open(&c);

	wt_write_n(w, 0, RECORDS, 100, 1);
	ck_assert_int_eq(gcap_writer_flush(w), 0);
	gcap_writer_io_wait(w, &waits, &ns);
	wt_close(w, NULL);
	ck_assert_uint_eq(waits, 0);
	ck_assert_uint_eq(ns, 0);
	gcap_writer_io_wait(NULL, &waits, &ns);
	ck_assert_uint_eq(waits + ns, 0);
}
END_TEST

TCase *
wt_tcase_io_wait(void)
{
	TCase *tc = wt_tcase("io_wait");

	tcase_add_test(tc, test_full_ring_counted);
	tcase_add_test(tc, test_push_on_its_way);
	tcase_add_test(tc, test_no_thread_no_waits);
	return tc;
}
