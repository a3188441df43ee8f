/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A batch that never completes, in the -r pipeline: the gpu executor's
 * case of an inline kernel stuck on the GPU (its stop cannot end the
 * block inside the kernel and returns -EBUSY), played by the cpu executor
 * behind a mock that never reports one batch done and, as the gpu one
 * does, spends its whole stop time waiting for it. The stop must return
 * (-EBUSY, the executor's message), the pipeline must say a worker was
 * left running, and the batches done before the stuck one must reach the
 * file: those done as the stop begins are taken before the executor's
 * wait (taken_first), those done within that wait after it, with the
 * writer's time to write them (done_in_wait).
 */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include "gpucap/gcap_exec.h"
#include "gpucap/gcap_pipeline.h"
#include "gpucap/gcap_writer.h"

#define BATCH 16u
#define STUCK 2u /* batches 0 and 1 complete, 2 and later never */

static struct gcap_exec_ops mock;
static uint64_t polled; /* batches handed back done */
/* no batch is seen done until then: completions come after the reader
 * has submitted its last batch, as a GPU's may */
static bool late;
static bool late_in_wait;    /* set by the executor's stop, at its start */
static uint64_t polled_then; /* polled as the executor's stop began */

static struct gcap_batch *
mock_poll(struct gcap_exec *ex, unsigned q)
{
	struct gcap_batch *b;

	if (!late || polled >= STUCK)
		return NULL;
	b = gcap_exec_cpu_ops.batch_poll(ex, q);
	polled += b != NULL;
	return b;
}

static int
mock_stop(struct gcap_exec *ex, unsigned timeout_ms, char *errbuf)
{
	struct timespec ts = { timeout_ms / 1000u,
			       (long)(timeout_ms % 1000u) * 1000000L };

	(void)ex;
	polled_then = polled;
	if (late_in_wait)
		late = true;
	nanosleep(&ts, NULL); /* the stuck batch's wait, to its end */
	return gcap_err(errbuf, EBUSY, "mock: a worker inside a batch was left running");
}

static size_t
count_records(const char *path)
{
	char perr[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *d;
	pcap_t *p = pcap_open_offline(path, perr);
	size_t n = 0;

	ck_assert_msg(p != NULL, "%s: %s", path, perr);
	while (pcap_next_ex(p, &h, &d) == 1)
		n++;
	pcap_close(p);
	return n;
}

/* The -r run of 48 packets whose third batch never completes, stopped;
 * the two batches before it complete as the stop begins or (in_wait)
 * only within the executor's stop. */
static void
run_stuck(bool in_wait)
{
	const char *root = getenv("GCAP_SOURCE_ROOT");
	char in_path[4096], dir[] = "/tmp/gcap-stuck-XXXXXX", out[4096];
	char err[GCAP_ERRBUF_SIZE] = "", perr[PCAP_ERRBUF_SIZE];
	struct bpf_program all;
	struct gcap_exec_conf ec = {
		.nqueues = 1,
		.ring_size = 8,
		.batch_max = BATCH,
		.nxbufs = 16,
		.xbuf_size = 65536,
		.stage_size = 65536,
		.snaplen = 65535,
		.nfilters = 1,
		.filters = &all,
		.linktype = DLT_EN10MB,
	};
	struct gcap_writer_if wif = { .name = "in", .linktype = DLT_EN10MB };
	struct gcap_writer_conf wc = {
		.path = out,
		.fmt = GCAP_FMT_AUTO,
		.snaplen = 65535,
		.nifs = 1,
		.ifs = &wif,
	};
	struct gcap_writer *w;
	struct gcap_exec *ex;
	struct gcap_pipeline *pl;
	pcap_t *in;
	int r;

	polled = polled_then = 0;
	late = false;
	late_in_wait = in_wait;
	memset(&all, 0, sizeof(all)); /* no instructions: every packet */
	snprintf(in_path, sizeof(in_path), "%s/tests/data/eth-be.pcap",
		 root ? root : ".");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(out, sizeof(out), "%s/out.pcap", dir);
	mock = gcap_exec_cpu_ops;
	mock.batch_poll = mock_poll;
	mock.stop = mock_stop;
	ex = mock.create(&ec, err);
	ck_assert_msg(ex != NULL, "executor: %s", err);
	w = gcap_writer_open(&wc, err);
	ck_assert_msg(w != NULL, "writer: %s", err);
	{
		struct gcap_pipeline_conf pc = {
			.ops = &mock,
			.ex = ex,
			.nqueues = 1,
			.batch_max = BATCH,
			.nwriters = 1,
			.writers = &w,
			.flush_ms = 100,
		};

		pl = gcap_pipeline_create(&pc, err);
	}
	ck_assert_msg(pl != NULL, "pipeline: %s", err);
	in = pcap_open_offline_with_tstamp_precision(in_path, PCAP_TSTAMP_PRECISION_NANO,
						     perr);
	ck_assert_msg(in != NULL, "%s: %s", in_path, perr);
	/* 48 packets, three batches: the reader is done after the third */
	r = gcap_pipeline_run_file(pl, in, err);
	ck_assert_msg(r == 0, "run_file: %d: %s", r, err);
	ck_assert(!gcap_pipeline_abandoned(pl));
	if (!in_wait)
		late = true;
	r = gcap_pipeline_stop(pl, 1000, err);
	ck_assert_int_eq(r, -EBUSY);
	ck_assert_msg(strstr(err, "mock: a worker inside a batch") != NULL, "%s", err);
	ck_assert(gcap_pipeline_abandoned(pl));
	/* done as the stop began: taken before the executor's wait */
	ck_assert_uint_eq(polled_then, in_wait ? 0 : STUCK);
	/* what was done before the stuck batch is in the file */
	ck_assert_uint_eq(gcap_pipeline_written(pl), STUCK * BATCH);
	ck_assert_int_eq(gcap_writer_close(w, NULL, err), 0);
	ck_assert_uint_eq(count_records(out), STUCK * BATCH);
	/* gpu-capture would _exit here; the mock runs nothing, so the test
	 * can take everything down (and leaves no leak to the sanitizers) */
	gcap_pipeline_destroy(pl);
	mock.destroy(ex);
	pcap_close(in);
	unlink(out);
	rmdir(dir);
}

START_TEST(test_taken_first)
{
	run_stuck(false);
}
END_TEST

START_TEST(test_done_in_wait)
{
	run_stuck(true);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("stuck");
	TCase *tc = tcase_create("stuck");
	SRunner *sr;
	int nf;

	tcase_add_test(tc, test_taken_first);
	tcase_add_test(tc, test_done_in_wait);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? 1 : 0;
}
