/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The cpu executor's workers (cpu_workers), driven directly: more
 * workers than CPUs take one-packet batches from a small ring while a
 * thread keeps signalling the process, and the workers (the only threads
 * that take the signal) stall in the handler wherever it lands: between
 * any two of a worker's steps, others take batches and the submitter
 * submits more, as on a machine with many cores. Every batch must
 * complete exactly once, in order, with its own packet's record: a worker
 * that took a batch not yet submitted filtered a slot being filled (or an
 * old one), and the one really submitted then never completed or
 * completed twice.
 */
#include <check.h>
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include "gpucap/gcap_exec.h"

#define RING 4u
#define BATCHES 300000u
#define PKT 64u
/* no completion for this long: a submitted batch that never completes */
#define STALL_NS 20000000000ull
/* a worker stalls this long in the signal handler; a signal this often */
#define STALL_SIG_NS 30000u
#define PEST_NS 20000u

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static atomic_int pest_stop;

/* The signal: a stall of STALL_SIG_NS wherever the worker was. */
static void
on_sig(int sig)
{
	struct timespec t0, t;

	(void)sig;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((uint64_t)(t.tv_sec - t0.tv_sec) * 1000000000u + (uint64_t)t.tv_nsec -
		       (uint64_t)t0.tv_nsec <
	       STALL_SIG_NS);
}

/* Signal the workers in turn (their threads: all of /proc/self/task but
 * this one and the submitter) until told to stop. */
static void *
pest_main(void *arg)
{
	pid_t self = (pid_t)syscall(SYS_gettid), main_tid = *(pid_t *)arg;
	pid_t tids[256];
	unsigned n = 0;
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;

	while (d != NULL && (e = readdir(d)) != NULL && n < 256) {
		pid_t t = (pid_t)atoi(e->d_name);

		if (t > 0 && t != self && t != main_tid)
			tids[n++] = t;
	}
	if (d != NULL)
		closedir(d);
	for (unsigned i = 0; n > 0 && !atomic_load(&pest_stop); i++) {
		const struct timespec ts = { 0, PEST_NS };

		syscall(SYS_tgkill, getpid(), tids[i % n], SIGUSR1);
		if (i % n == n - 1)
			nanosleep(&ts, NULL);
	}
	return NULL;
}

/* Batch k's one packet: k in its first bytes, the rest a pattern of k. */
static void
fill_pkt(uint8_t *p, uint32_t k)
{
	memcpy(p, &k, sizeof(k));
	for (unsigned i = sizeof(k); i < PKT; i++)
		p[i] = (uint8_t)(k * 31u + i);
}

static void
run_workers(unsigned nworkers)
{
	char err[GCAP_ERRBUF_SIZE] = "";
	struct bpf_program all = { 0 }; /* no instructions: accepts every packet */
	struct gcap_exec_conf ec = {
		.nqueues = 1,
		.ring_size = RING,
		.batch_max = 1,
		.nxbufs = RING,
		.xbuf_size = GCAP_REC_SIZE(PKT) * 2,
		.stage_size = PKT,
		.snaplen = 65535,
		.nfilters = 1,
		.filters = &all,
		.linktype = DLT_EN10MB,
		.cpu_workers = nworkers,
	};
	struct sigaction sa = { .sa_handler = on_sig, .sa_flags = SA_RESTART };
	struct gcap_exec *ex;
	struct gcap_xbuf *xbufs;
	uint32_t sub = 0, done = 0;
	uint64_t last;
	uint8_t want[PKT];
	sigset_t set;
	pthread_t pest;
	pid_t main_tid = (pid_t)syscall(SYS_gettid);

	/* the workers start with SIGUSR1 open; this thread and the pest
	 * block it */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	ck_assert_int_eq(sigaction(SIGUSR1, &sa, NULL), 0);
	ck_assert_int_eq(pthread_sigmask(SIG_UNBLOCK, &set, NULL), 0);
	ex = gcap_exec_cpu_ops.create(&ec, err);
	ck_assert_msg(ex != NULL, "create: %s", err);
	ck_assert_int_eq(pthread_sigmask(SIG_BLOCK, &set, NULL), 0);
	atomic_store(&pest_stop, 0);
	ck_assert_int_eq(pthread_create(&pest, NULL, pest_main, &main_tid), 0);
	last = mono_ns();
	ck_assert_uint_eq(gcap_exec_cpu_ops.xbufs(ex, 0, &xbufs), RING);
	while (done < BATCHES) {
		struct gcap_batch *b;

		/* submit what the ring has room for */
		while (sub < BATCHES &&
		       (b = gcap_exec_cpu_ops.batch_get(ex, 0)) != NULL) {
			struct gcap_xbuf *xb = &xbufs[sub % RING];

			fill_pkt(b->stage, sub);
			b->pkts[0] = (struct gcap_pkt){
				.addr = (uint64_t)(uintptr_t)b->stage,
				.ts_ns = sub,
				.caplen = PKT,
				.wirelen = PKT,
				.seq = sub,
			};
			b->n = 1;
			b->stage_used = PKT;
			xb->len = xb->nrec = 0;
			b->xbuf = xb;
			ck_assert_int_eq(gcap_exec_cpu_ops.batch_submit(ex, 0, b), 0);
			sub++;
		}
		/* take back what completed, oldest first */
		while ((b = gcap_exec_cpu_ops.batch_poll(ex, 0)) != NULL) {
			const struct gcap_xbuf *xb = b->xbuf;
			const struct gcap_rec *r = (const struct gcap_rec *)xb->data;

			ck_assert_ptr_eq(xb, &xbufs[done % RING]);
			ck_assert_msg(b->res->n_captured == 1 && xb->nrec == 1 &&
					      xb->len == GCAP_REC_SIZE(PKT),
				      "batch %u: %u captured, %u records of %u bytes "
				      "(one of %u expected)",
				      done, b->res->n_captured, xb->nrec, xb->len,
				      GCAP_REC_SIZE(PKT));
			fill_pkt(want, done);
			ck_assert_msg(r->seq == done && r->caplen == PKT &&
					      memcmp(r + 1, want, PKT) == 0,
				      "batch %u: the record is batch %u's", done, r->seq);
			gcap_exec_cpu_ops.batch_release(ex, 0, b);
			done++;
			last = mono_ns();
		}
		ck_assert_msg(mono_ns() - last < STALL_NS,
			      "batch %u of %u submitted never completed", done, sub);
	}
	atomic_store(&pest_stop, 1);
	pthread_join(pest, NULL);
	ck_assert_int_eq(gcap_exec_cpu_ops.stop(ex, 1000, err), 0);
	gcap_exec_cpu_ops.destroy(ex);
}

START_TEST(workers_many)
{
	/* a count that is no power of two, far above this machine's CPUs */
	run_workers(14);
}
END_TEST

START_TEST(workers_one)
{
	run_workers(1);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("cpu_workers");
	TCase *tc = tcase_create("order");
	SRunner *sr;
	int nfail;

	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, workers_one);
	tcase_add_test(tc, workers_many);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nfail = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nfail == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
