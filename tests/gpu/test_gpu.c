/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * GPU executor suite (needs a GPU: exits 77 without one). Every batch's
 * export buffer is compared byte for byte with what libpcap's bpf_filter()
 * says it must hold (gpu_ref.h).
 *
 * Each check test runs in its own process (CK_FORK): the parent never
 * touches CUDA, so each child initialises it afresh and a test that makes
 * the kernel fault cannot poison the others.
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <pcap/pcap.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "gpucap/gcap_exec.h"
#include "gpucap/gcap_filter.h"
#include "gpucap/gcap_gpu.h"
#include "gpu_ref.h"
#include "gpu_util.h"

static const struct gcap_exec_ops *ops;

/* Wait for the oldest batch of queue q to be DONE: fails the test after
 * 30 s or on a fault, never hangs. */
static struct gcap_batch *
wait_done(struct gcap_exec *ex, unsigned q)
{
	char err[GCAP_ERRBUF_SIZE] = "";
	double t0 = now_s();
	struct gcap_batch *b;

	while ((b = ops->batch_poll(ex, q)) == NULL) {
		ck_assert_msg(ops->health(ex, err) == 0, "health: %s", err);
		ck_assert_msg(now_s() - t0 < 30.0,
			      "queue %u: no batch done "
			      "within 30 s",
			      q);
	}
	return b;
}

static uint64_t
xrand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* ldb [4]; jset #1 -> reject; accept: packets whose byte 4 is even */
static struct bpf_insn even_insns[] = {
	{ 0x30, 0, 0, 4 },
	{ 0x45, 1, 0, 1 },
	{ 0x06, 0, 0, 65535 },
	{ 0x06, 0, 0, 0 },
};

static void
base_conf(struct gcap_exec_conf *c, struct bpf_program *progs)
{
	memset(c, 0, sizeof(*c));
	progs[0].bf_len = 4;
	progs[0].bf_insns = even_insns;
	progs[1].bf_len = 0;
	progs[1].bf_insns = NULL;
	c->nqueues = 1;
	c->ring_size = 16;
	c->batch_max = 128;
	c->nxbufs = 16;
	c->xbuf_size = 128 * GCAP_REC_SIZE(128);
	c->stage_size = 128 * 136;
	c->snaplen = 100;
	c->nfilters = 2;
	c->filters = progs;
	c->linktype = DLT_EN10MB;
	c->mem = GCAP_MEM_HOST;
	/* GCAP_GPU_BLOCKS=N: N blocks share each queue's batches */
	if (getenv("GCAP_GPU_BLOCKS") != NULL)
		c->blocks_per_queue =
			(unsigned)strtoul(getenv("GCAP_GPU_BLOCKS"), NULL, 10);
}

/* Fill slot b with n synthetic packets (seq in bytes 0..3 and in desc). */
static void
fill_batch(struct gcap_batch *b, unsigned n, unsigned q, uint32_t *seq, uint64_t *rs)
{
	uint32_t off = 0;
	unsigned i;
	bool align = xrand(rs) & 1;

	for (i = 0; i < n; i++) {
		struct gcap_pkt *d = &b->pkts[i];
		uint32_t len = 60 + (uint32_t)(xrand(rs) % 69);
		uint8_t *p = b->stage + off;
		uint32_t k;

		if (off + len > b->stage_size)
			ck_abort_msg("stage too small");
		memcpy(p, seq, 4);
		p[4] = (uint8_t)xrand(rs);
		for (k = 5; k < len; k++)
			p[k] = (uint8_t)(*seq + k);
		d->addr = (uint64_t)(uintptr_t)p;
		d->caplen = len;
		d->wirelen = len + ((xrand(rs) & 1) ? 0 : 1000);
		d->ts_ns = (uint64_t)*seq * 1000u + 7;
		d->port = (uint16_t)q;
		d->queue = (uint16_t)q;
		d->seq = (*seq)++;
		off += len;
		if (align)
			off = (off + 7u) & ~7u;
	}
	b->n = n;
	b->stage_used = off;
}

/* Check a DONE batch against the reference; returns records checked. */
static unsigned
check_batch(const struct gcap_exec_conf *c, struct gcap_batch *b, uint8_t *scratch)
{
	struct ref_out ro;

	ref_batch(c->filters, c->nfilters, c->snaplen, b->pkts, b->n, scratch,
		  b->xbuf->size, 0, 0, &ro);
	/* plain ifs: a passing ck_assert costs a syscall (about 5 us) */
	if (b->xbuf->nrec != ro.nrec || b->xbuf->len != ro.len)
		ck_abort_msg("batch %" PRIu64 ": xbuf nrec %u len %u, expected "
			     "%u %u",
			     b->seq, b->xbuf->nrec, b->xbuf->len, ro.nrec, ro.len);
	if (b->res->n_captured != ro.res.n_captured ||
	    b->res->n_filtered != ro.res.n_filtered ||
	    b->res->n_truncated != ro.res.n_truncated ||
	    b->res->captured_bytes != ro.res.captured_bytes)
		ck_abort_msg("batch %" PRIu64 ": counters %u/%u/%u/%" PRIu64
			     ", expected %u/%u/%u/%" PRIu64,
			     b->seq, b->res->n_captured, b->res->n_filtered,
			     b->res->n_truncated, b->res->captured_bytes,
			     ro.res.n_captured, ro.res.n_filtered, ro.res.n_truncated,
			     ro.res.captured_bytes);
	if (memcmp(b->res->out_pkts, ro.res.out_pkts, sizeof(ro.res.out_pkts)))
		ck_abort_msg("batch %" PRIu64 ": out_pkts differ", b->seq);
	if (memcmp(b->xbuf->data, scratch, ro.len))
		ck_abort_msg("batch %" PRIu64 ": records differ", b->seq);
	return ro.nrec;
}

struct stress_arg {
	struct gcap_exec *ex;
	const struct gcap_exec_conf *c;
	unsigned q;
	uint64_t batches;
	uint64_t pkts, recs;
	int fail;
};

/* One queue's producer/consumer: submit batches of random sizes, check
 * every completed one; the records of a queue carry consecutive sequence
 * numbers in submission order (none lost, duplicated or reordered). */
static void *
stress_thread(void *arg)
{
	struct stress_arg *a = arg;
	const struct gcap_exec_conf *c = a->c;
	struct gcap_xbuf *xb;
	uint64_t rs = 0x9e3779b97f4a7c15ull * (a->q + 1), sub = 0, done = 0;
	uint32_t seq = 0, next_seq = 0;
	uint8_t *scratch = malloc(c->xbuf_size);
	unsigned nx = ops->xbufs(a->ex, a->q, &xb);

	ck_assert_ptr_nonnull(scratch);
	ck_assert_uint_eq(nx, c->nxbufs);
	double last = now_s();

	while (done < a->batches) {
		struct gcap_batch *b;
		uint64_t done0 = done;

		while (sub < a->batches && (b = ops->batch_get(a->ex, a->q))) {
			unsigned n = 1 + (unsigned)(xrand(&rs) % c->batch_max);

			if (b->seq != sub)
				ck_abort_msg("slot seq %" PRIu64, b->seq);
			fill_batch(b, n, a->q, &seq, &rs);
			b->xbuf = &xb[sub % nx];
			b->xbuf->len = 0;
			b->xbuf->nrec = 0;
			if (ops->batch_submit(a->ex, a->q, b) != 0)
				ck_abort_msg("batch_submit failed");
			sub++;
		}
		while ((b = ops->batch_poll(a->ex, a->q))) {
			const uint8_t *r = b->xbuf->data;
			int64_t prev = (int64_t)next_seq - 1;
			unsigned k;

			if (b->seq != done || b->pkts[0].seq != next_seq)
				ck_abort_msg("queue %u: batch %" PRIu64 " polled "
					     "out of order",
					     a->q, b->seq);
			a->recs += check_batch(c, b, scratch);
			/* sequence numbers inside the records, in order */
			for (k = 0; k < b->xbuf->nrec; k++) {
				const struct gcap_rec *h = (const void *)r;
				uint32_t in;

				memcpy(&in, r + sizeof(*h), 4);
				if (in != h->seq || (int64_t)h->seq <= prev)
					ck_abort_msg("queue %u: record seq %u "
						     "(bytes %u) after %" PRId64,
						     a->q, h->seq, in, prev);
				prev = h->seq;
				r += GCAP_REC_SIZE(h->caplen);
			}
			next_seq = b->pkts[b->n - 1].seq + 1;
			a->pkts += b->n;
			ops->batch_release(a->ex, a->q, b);
			done++;
		}
		if (done != done0)
			last = now_s();
		else {
			char e[GCAP_ERRBUF_SIZE] = "";

			ck_assert_msg(now_s() - last < 30.0,
				      "queue %u: stuck at "
				      "batch %" PRIu64 " (health %d: %s)",
				      a->q, done, ops->health(a->ex, e), e);
		}
	}
	ck_assert_uint_eq(next_seq, seq);
	free(scratch);
	return NULL;
}

static void
run_stress(enum gcap_mem mem, unsigned nq, uint64_t total)
{
	struct gcap_exec_conf c;
	struct bpf_program progs[2];
	char err[GCAP_ERRBUF_SIZE] = "";
	struct stress_arg a[8];
	pthread_t th[8];
	struct gcap_exec *ex;
	uint64_t pk = 0, rc = 0;
	double t0;
	unsigned q;

	base_conf(&c, progs);
	c.nqueues = nq;
	c.ring_size = 32;
	c.nxbufs = 32;
	c.mem = mem;
	ex = ops->create(&c, err);
	ck_assert_msg(ex != NULL, "create: %s", err);
	t0 = now_s();
	for (q = 0; q < nq; q++) {
		a[q] = (struct stress_arg){ ex, &c, q, total / nq, 0, 0, 0 };
		pthread_create(&th[q], NULL, stress_thread, &a[q]);
	}
	for (q = 0; q < nq; q++) {
		pthread_join(th[q], NULL);
		pk += a[q].pkts;
		rc += a[q].recs;
	}
	printf("stress mem=%s: %u queues, %" PRIu64 " batches, %" PRIu64
	       " packets, %" PRIu64 " records in %.2f s (%.0f batches/s)\n",
	       gcap_mem_name(mem), nq, total / nq * nq, pk, rc, now_s() - t0,
	       (total / nq * nq) / (now_s() - t0));
	ck_assert_int_eq(ops->health(ex, err), 0);
	ck_assert_msg(ops->stop(ex, 5000, err) == 0, "stop: %s", err);
	ops->destroy(ex);
}

static uint64_t
env_u64(const char *name, uint64_t dflt)
{
	const char *s = getenv(name);

	return s ? strtoull(s, NULL, 10) : dflt;
}

START_TEST(test_doorbell_stress)
{
	run_stress(GCAP_MEM_HOST, 4, env_u64("GCAP_GPU_STRESS_BATCHES", 1000000));
}
END_TEST

START_TEST(test_copy_stress)
{
	run_stress(GCAP_MEM_COPY, 2, env_u64("GCAP_GPU_COPY_BATCHES", 50000));
}
END_TEST

/* Copy mode with eight queues on one GPU and CUDA_DEVICE_MAX_CONNECTIONS
 * unset (8 work queues): the queues share six copy streams, none shares
 * the persistent kernel's work queue (a copy stream that did would never
 * run: a queue stuck for 30 s fails), and the executor leaves the
 * environment alone (asking for 32 work queues made each context start
 * 0.7 s slower). */
START_TEST(test_copy_many_queues)
{
	unsetenv("CUDA_DEVICE_MAX_CONNECTIONS");
	run_stress(GCAP_MEM_COPY, 8, env_u64("GCAP_GPU_COPY_BATCHES", 50000) / 4);
	ck_assert_ptr_null(getenv("CUDA_DEVICE_MAX_CONNECTIONS"));
}
END_TEST

/* Default blocks per queue: four in host mode (the H200 has the SMs); in
 * copy mode no more than eight a GPU (more blocks polling starved the copy
 * engines): 2 queues x 4, 4 x 2, 8 x 1. */
START_TEST(test_default_blocks)
{
	static const unsigned nq[] = { 2, 4, 8 }, want[] = { 4, 2, 1 };
	struct gcap_exec_conf c;
	struct bpf_program progs[2];
	char err[GCAP_ERRBUF_SIZE] = "";
	struct gcap_exec *ex;

	base_conf(&c, progs);
	c.nqueues = 2;
	c.ring_size = 32;
	c.nxbufs = 32;
	c.blocks_per_queue = 0; /* whatever GCAP_GPU_BLOCKS says */
	ex = ops->create(&c, err);
	ck_assert_msg(ex != NULL, "create: %s", err);
	printf("default blocks: host, 2 queues: %u", ops->lanes(ex, 0));
	ck_assert_uint_eq(ops->lanes(ex, 1), 4);
	ops->destroy(ex);
	c.mem = GCAP_MEM_COPY;
	for (unsigned i = 0; i < 3; i++) {
		c.nqueues = nq[i];
		ex = ops->create(&c, err);
		ck_assert_msg(ex != NULL, "create: %s", err);
		printf("; copy, %u queues: %u", nq[i], ops->lanes(ex, 0));
		ck_assert_uint_eq(ops->lanes(ex, nq[i] - 1), want[i]);
		ops->destroy(ex);
	}
	printf("\n");
}
END_TEST

/* Copy mode when a batch does not fit in the VRAM staging: the rest of
 * the packets are read in place, results unchanged. */
START_TEST(test_copy_overflow)
{
	struct gcap_exec_conf c;
	struct bpf_program progs[2];
	char err[GCAP_ERRBUF_SIZE] = "";
	struct gcap_exec *ex;
	struct gcap_batch *b;
	struct gcap_xbuf *xb;
	uint8_t *scratch;
	unsigned i, n = 16;

	base_conf(&c, progs);
	c.batch_max = 16;
	c.mem = GCAP_MEM_COPY;
	c.snaplen = 9000;
	c.stage_size = 16 * 9008;
	c.xbuf_size = 16 * GCAP_REC_SIZE(9000);
	ex = ops->create(&c, err);
	ck_assert_msg(ex != NULL, "create: %s", err);
	ops->xbufs(ex, 0, &xb);
	b = ops->batch_get(ex, 0);
	ck_assert_msg(b != NULL, "batch_get: %s",
		      ops->health(ex, err) ? err : "ring full");
	for (i = 0; i < n; i++) {
		uint8_t *p = b->stage + i * 9008;
		unsigned k;

		for (k = 0; k < 9000; k++)
			p[k] = (uint8_t)(i * 7 + k);
		p[4] = 0;
		b->pkts[i] = (struct gcap_pkt){
			(uint64_t)(uintptr_t)p, i, 9000, 9000, 0, 0, i
		};
	}
	b->n = n;
	b->xbuf = &xb[0];
	xb[0].len = xb[0].nrec = 0;
	ck_assert_int_eq(ops->batch_submit(ex, 0, b), 0);
	scratch = malloc(c.xbuf_size);
	b = wait_done(ex, 0);
	ck_assert_uint_eq(check_batch(&c, b, scratch), n);
	ops->batch_release(ex, 0, b);
	free(scratch);
	ck_assert_int_eq(ops->stop(ex, 5000, err), 0);
	ops->destroy(ex);
}
END_TEST

/* Export buffer too small: records stop at the first that does not fit,
 * the rest are counted truncated (the reference does the same). Also
 * appends after records already in the buffer. */
START_TEST(test_truncation)
{
	struct gcap_exec_conf c;
	struct bpf_program progs[2];
	char err[GCAP_ERRBUF_SIZE] = "";
	struct gcap_exec *ex;
	struct gcap_batch *b;
	struct gcap_xbuf *xb;
	struct ref_out ro;
	uint8_t *scratch;
	uint64_t rs = 42;
	uint32_t seq = 0;
	int round;

	base_conf(&c, progs);
	c.xbuf_size = 4096;
	ex = ops->create(&c, err);
	ck_assert_msg(ex != NULL, "create: %s", err);
	ops->xbufs(ex, 0, &xb);
	scratch = calloc(1, c.xbuf_size);
	xb[0].len = xb[0].nrec = 0;
	for (round = 0; round < 3; round++) {
		uint32_t blen = xb[0].len, bnrec = xb[0].nrec;

		b = ops->batch_get(ex, 0);
		ck_assert_msg(b != NULL, "batch_get: %s",
			      ops->health(ex, err) ? err : "ring full");
		fill_batch(b, 1 + round * 20, 0, &seq, &rs);
		b->xbuf = &xb[0]; /* appended to, batch after batch */
		ck_assert_int_eq(ops->batch_submit(ex, 0, b), 0);
		b = wait_done(ex, 0);
		ref_batch(c.filters, c.nfilters, c.snaplen, b->pkts, b->n, scratch,
			  c.xbuf_size, blen, bnrec, &ro);
		ck_assert_uint_eq(xb[0].len, ro.len);
		ck_assert_uint_eq(xb[0].nrec, ro.nrec);
		ck_assert_uint_eq(b->res->n_truncated, ro.res.n_truncated);
		ck_assert_uint_eq(b->res->n_captured, ro.res.n_captured);
		ck_assert_int_eq(memcmp(xb[0].data, scratch, ro.len), 0);
		ops->batch_release(ex, 0, b);
	}
	ck_assert_uint_gt(ro.res.n_truncated, 0);
	free(scratch);
	ck_assert_int_eq(ops->stop(ex, 5000, err), 0);
	ops->destroy(ex);
}
END_TEST

/* Quit under full load: every ring full of big batches of 64 filters,
 * stop() drains them and ends the kernel in bounded time. */
START_TEST(test_quit_full_load)
{
	struct gcap_exec_conf c;
	struct bpf_program progs[GCAP_MAX_OUTPUTS];
	char err[GCAP_ERRBUF_SIZE] = "";
	struct gcap_exec *ex;
	struct gcap_batch *b;
	struct gcap_xbuf *xb;
	uint64_t rs = 7;
	uint32_t seq = 0;
	unsigned q, j, nsub = 0, ndone = 0;
	double t0;
	int rc;

	base_conf(&c, progs);
	for (j = 0; j < GCAP_MAX_OUTPUTS; j++)
		progs[j] = progs[j & 1];
	c.nfilters = GCAP_MAX_OUTPUTS;
	c.nqueues = 8;
	c.ring_size = 64;
	c.nxbufs = 64;
	ex = ops->create(&c, err);
	ck_assert_msg(ex != NULL, "create: %s", err);
	for (q = 0; q < c.nqueues; q++) {
		ops->xbufs(ex, q, &xb);
		while ((b = ops->batch_get(ex, q)) != NULL) {
			fill_batch(b, c.batch_max, q, &seq, &rs);
			b->xbuf = &xb[nsub % c.nxbufs];
			b->xbuf->len = b->xbuf->nrec = 0;
			ck_assert_int_eq(ops->batch_submit(ex, q, b), 0);
			nsub++;
		}
	}
	ck_assert_uint_eq(nsub, c.nqueues * c.ring_size);
	t0 = now_s();
	rc = ops->stop(ex, 10000, err);
	printf("quit under load: stop() took %.3f s for %u batches: %d %s\n",
	       now_s() - t0, nsub, rc, err);
	ck_assert_msg(rc == 0, "stop: %s", err);
	ck_assert(now_s() - t0 < 10.0);
	for (q = 0; q < c.nqueues; q++) {
		while ((b = ops->batch_poll(ex, q)) != NULL) {
			ck_assert_uint_eq(b->res->n_captured + b->res->n_filtered +
						  b->res->n_truncated,
					  b->n);
			ops->batch_release(ex, q, b);
			ndone++;
		}
		ck_assert_ptr_null(ops->batch_get(ex, q));
	}
	ck_assert_uint_eq(ndone, nsub);
	ops->destroy(ex);
}
END_TEST

static void
env_keep(const char *name, const char *val, char *keep, size_t n)
{
	const char *old = getenv(name);

	if (keep != NULL)
		snprintf(keep, n, "%s", old ? old : "");
	if (val != NULL && val[0])
		setenv(name, val, 1);
	else
		unsetenv(name);
}

/* Copy mode needs a CUDA work queue for a copy stream besides the kernel's
 * and the state's: with fewer (CUDA_DEVICE_MAX_CONNECTIONS=2) create
 * refuses with a message instead of hanging a copy stream behind the
 * persistent kernel. With 4 work queues four copy queues share two
 * streams, with GCAP_GPU_COPY_STREAMS=1 one: every batch still arrives
 * once, in order (the stress checks each packet's sequence number). */
START_TEST(test_copy_work_queues)
{
	struct gcap_exec_conf c;
	struct bpf_program progs[2];
	char err[GCAP_ERRBUF_SIZE] = "", keep[16], keep_cs[16];
	struct gcap_exec *ex;

	/* the driver reads the variable when the first context is made */
	env_keep("CUDA_DEVICE_MAX_CONNECTIONS", "4", keep, sizeof(keep));
	run_stress(GCAP_MEM_COPY, 4, 20000);
	env_keep("GCAP_GPU_COPY_STREAMS", "1", keep_cs, sizeof(keep_cs));
	run_stress(GCAP_MEM_COPY, 4, 20000);
	env_keep("GCAP_GPU_COPY_STREAMS", keep_cs, NULL, 0);
	env_keep("CUDA_DEVICE_MAX_CONNECTIONS", "2", NULL, 0);
	base_conf(&c, progs);
	c.mem = GCAP_MEM_COPY;
	c.nqueues = 4;
	ex = ops->create(&c, err);
	env_keep("CUDA_DEVICE_MAX_CONNECTIONS", keep, NULL, 0);
	printf("copy mode, 4 queues, 2 work queues: %s\n", err);
	ck_assert_ptr_null(ex);
	ck_assert_msg(strstr(err, "CUDA work queues") != NULL, "%s", err);
}
END_TEST

/* A ring of submitted batches is full whatever the slots' statuses say
 * (copy mode: a submitted slot reads FREE until its copies are done), then
 * every batch completes once, in order. */
START_TEST(test_copy_ring_full)
{
	struct gcap_exec_conf c;
	struct bpf_program progs[2];
	char err[GCAP_ERRBUF_SIZE] = "";
	struct gcap_exec *ex;
	struct gcap_batch *b;
	struct gcap_xbuf *xb;
	uint64_t rs = 5, want = 0;
	uint32_t seq = 0;
	unsigned i, round;

	base_conf(&c, progs);
	c.mem = GCAP_MEM_COPY;
	ex = ops->create(&c, err);
	ck_assert_msg(ex != NULL, "create: %s", err);
	ops->xbufs(ex, 0, &xb);
	for (round = 0; round < 50; round++) {
		for (i = 0; i < c.ring_size; i++) {
			b = ops->batch_get(ex, 0);
			ck_assert_msg(b != NULL, "round %u slot %u: %s", round, i,
				      ops->health(ex, err) ? err : "ring full");
			fill_batch(b, c.batch_max, 0, &seq, &rs);
			b->xbuf = &xb[i];
			xb[i].len = xb[i].nrec = 0;
			ck_assert_int_eq(ops->batch_submit(ex, 0, b), 0);
		}
		/* ring_size in flight: no slot may be handed out again */
		ck_assert_ptr_null(ops->batch_get(ex, 0));
		for (i = 0; i < c.ring_size; i++) {
			b = wait_done(ex, 0);
			ck_assert_uint_eq(b->seq, want);
			want++;
			ops->batch_release(ex, 0, b);
		}
	}
	printf("copy ring full: 50 rounds of %u batches\n", c.ring_size);
	ck_assert_int_eq(ops->stop(ex, 5000, err), 0);
	ops->destroy(ex);
}
END_TEST

/* An injected kernel fault: health() reports it naming the kernel, stop()
 * returns -EIO without hanging. */
START_TEST(test_kernel_fault)
{
	struct gcap_exec_conf c;
	struct bpf_program progs[2];
	char err[GCAP_ERRBUF_SIZE] = "";
	struct gcap_exec *ex;
	struct gcap_batch *b;
	struct gcap_xbuf *xb;
	uint64_t rs = 9;
	uint32_t seq = 0;
	double t0;
	int rc = 0, i;

	setenv("GCAP_GPU_FAULT_AT", "3", 1);
	base_conf(&c, progs);
	/* the fault is at block 0's third batch: one block takes every
	 * batch of the queue (with the default four, block 0 would see only
	 * two of the five) */
	c.blocks_per_queue = 1;
	ex = ops->create(&c, err);
	unsetenv("GCAP_GPU_FAULT_AT");
	ck_assert_msg(ex != NULL, "create: %s", err);
	ops->xbufs(ex, 0, &xb);
	for (i = 0; i < 5; i++) {
		b = ops->batch_get(ex, 0);
		ck_assert_msg(b != NULL, "batch_get: %s",
			      ops->health(ex, err) ? err : "ring full");
		fill_batch(b, 10, 0, &seq, &rs);
		b->xbuf = &xb[i];
		xb[i].len = xb[i].nrec = 0;
		ck_assert_int_eq(ops->batch_submit(ex, 0, b), 0);
	}
	t0 = now_s();
	while (now_s() - t0 < 20 && (rc = ops->health(ex, err)) == 0)
		usleep(1000);
	printf("fault: health() = %d after %.3f s: %s\n", rc, now_s() - t0, err);
	ck_assert_int_eq(rc, -EIO);
	ck_assert_msg(strstr(err, "gcap_pipeline_kernel") != NULL, "%s", err);
	t0 = now_s();
	err[0] = '\0';
	rc = ops->stop(ex, 3000, err);
	printf("fault: stop() = %d after %.3f s: %s\n", rc, now_s() - t0, err);
	ck_assert_int_eq(rc, -EIO);
	ck_assert(now_s() - t0 < 5.0);
	ops->destroy(ex);
}
END_TEST

/* Corpus packets, many filters: the GPU's records equal bpf_filter()'s
 * verdicts, in host and copy modes. */
static const char *exprs[] = {
	"",
	"tcp",
	"udp",
	"icmp",
	"arp",
	"ip6",
	"tcp port 80",
	"udp port 53",
	"vlan",
	"ip and len > 500",
	"tcp[tcpflags] & tcp-syn != 0",
	"not ip",
	"ether broadcast",
	"ip multicast",
	"portrange 1-1024",
	"greater 1000",
	"less 100",
	"ip[8] < 64",
	"net 10.0.0.0/8",
	"icmp6",
	"port 443 or port 22",
	"ip6 and tcp",
	"udp[8:2] > 100",
	"ether[12:2] = 0x0800",
};

static void
run_corpus(enum gcap_mem mem, bool compiled)
{
	const unsigned nf = sizeof(exprs) / sizeof(exprs[0]);
	struct bpf_program progs[sizeof(exprs) / sizeof(exprs[0])];
	struct gcap_exec_conf c;
	char err[GCAP_ERRBUF_SIZE] = "", perr[PCAP_ERRBUF_SIZE];
	struct gcap_exec *ex;
	struct gcap_xbuf *xb;
	struct pcap_pkthdr *h;
	const u_char *data;
	uint8_t *scratch;
	pcap_t *pc;
	const char *path = corpus_path();
	uint64_t npk = 0, nrec = 0, nb = 0;
	unsigned j;
	int r = 1;

	if (path == NULL) {
		printf("corpus: mix-en10mb.pcap not found, skipped\n");
		return;
	}
	pc = pcap_open_offline(path, perr);
	ck_assert_msg(pc != NULL, "%s", perr);
	for (j = 0; j < nf; j++)
		ck_assert_int_eq(
			gcap_filter_compile(exprs[j], DLT_EN10MB, 262144, &progs[j], err),
			0);
	memset(&c, 0, sizeof(c));
	c.nqueues = 1;
	c.ring_size = 8;
	c.batch_max = 256;
	c.nxbufs = 8;
	c.xbuf_size = 256 * GCAP_REC_SIZE(1600);
	c.stage_size = 256 * 10000;
	c.snaplen = 1500;
	c.nfilters = nf;
	c.filters = progs;
	c.linktype = DLT_EN10MB;
	c.mem = mem;
	c.compile_filters = compiled;
	ex = ops->create(&c, err);
	ck_assert_msg(ex != NULL, "create: %s", err);
	ops->xbufs(ex, 0, &xb);
	scratch = malloc(c.xbuf_size);
	while (r == 1) {
		struct gcap_batch *b = ops->batch_get(ex, 0);
		uint32_t off = 0;

		ck_assert_msg(b != NULL, "batch_get: %s",
			      ops->health(ex, err) ? err : "ring full");
		b->n = 0;
		while (b->n < c.batch_max && (r = pcap_next_ex(pc, &h, &data)) == 1) {
			struct gcap_pkt *d = &b->pkts[b->n];

			if (off + h->caplen > c.stage_size) {
				/* keep it for the next batch: not needed here,
				 * the corpus has no packet this big */
				ck_abort_msg("stage too small");
			}
			memcpy(b->stage + off, data, h->caplen);
			d->addr = (uint64_t)(uintptr_t)(b->stage + off);
			d->caplen = h->caplen;
			d->wirelen = h->len;
			d->ts_ns = (uint64_t)h->ts.tv_sec * 1000000000ull +
				   (uint64_t)h->ts.tv_usec * 1000u;
			d->port = 0;
			d->queue = 0;
			d->seq = (uint32_t)npk++;
			off = (off + h->caplen + 7u) & ~7u;
			b->n++;
		}
		if (b->n == 0)
			break;
		b->xbuf = &xb[nb % c.nxbufs];
		b->xbuf->len = b->xbuf->nrec = 0;
		ck_assert_int_eq(ops->batch_submit(ex, 0, b), 0);
		nb++;
		b = wait_done(ex, 0);
		nrec += check_batch(&c, b, scratch);
		ops->batch_release(ex, 0, b);
	}
	printf("corpus mem=%s%s: %" PRIu64 " packets, %u filters, %" PRIu64
	       " records, all equal to bpf_filter()\n",
	       gcap_mem_name(mem), compiled ? " (compiled filters)" : "", npk, nf, nrec);
	ck_assert_uint_gt(npk, 1000);
	ck_assert_uint_gt(nrec, 0);
	free(scratch);
	pcap_close(pc);
	ck_assert_int_eq(ops->stop(ex, 5000, err), 0);
	ops->destroy(ex);
	for (j = 0; j < nf; j++)
		gcap_filter_free(&progs[j]);
}

START_TEST(test_corpus_host)
{
	run_corpus(GCAP_MEM_HOST, false);
}
END_TEST

START_TEST(test_corpus_compiled)
{
	run_corpus(GCAP_MEM_HOST, true);
}
END_TEST

START_TEST(test_corpus_copy)
{
	run_corpus(GCAP_MEM_COPY, false);
}
END_TEST

/* Pools through DPDK (net_null, a software port): host mode gives a pool
 * of pinned data rooms the kernel reads in place; gpu mode is refused with
 * a clear message; auto falls back to host. */
START_TEST(test_pools)
{
	char *eal[16] = { "test_gpu",    "--no-huge",   "-m",     "256",
			  "--no-pci",    "--no-shconf", "--vdev", "net_null0",
			  "--log-level", "*:error",     NULL };
	int neal = 10;
	struct gcap_exec_conf c;
	struct bpf_program progs[2];
	char err[GCAP_ERRBUF_SIZE] = "";
	struct gcap_exec *ex;
	struct rte_mempool *mp;
	struct rte_mbuf *m[8];
	struct gcap_batch *b;
	struct gcap_xbuf *xb;
	uint8_t *scratch;
	unsigned i;

	/* a bundle on the GPU machine carries the PMDs as plugins */
	if (getenv("GPUCAP_EAL_PLUGINS")) {
		eal[neal++] = "-d";
		eal[neal++] = getenv("GPUCAP_EAL_PLUGINS");
	}
	ck_assert_int_ge(rte_eal_init(neal, eal), 0);
	ck_assert_uint_ge(rte_eth_dev_count_avail(), 1);
	base_conf(&c, progs);
	c.mem = GCAP_MEM_GPU;
	ex = ops->create(&c, err);
	ck_assert_msg(ex != NULL, "create: %s", err);
	mp = ops->pool_create(ex, 0, 0, "gpu_pool", 1024, 2048 + 128, SOCKET_ID_ANY, err);
	printf("gpu mode on net_null: %s\n", err);
	ck_assert_ptr_null(mp);
	ck_assert_msg(strstr(err, "software port") != NULL, "%s", err);
	ops->destroy(ex);

	c.mem = GCAP_MEM_AUTO;
	ex = ops->create(&c, err);
	ck_assert_msg(ex != NULL, "create: %s", err);
	mp = ops->pool_create(ex, 0, 0, "auto_pool", 1024, 2048 + 128, SOCKET_ID_ANY,
			      err);
	ck_assert_msg(mp != NULL, "auto pool: %s", err);
	ck_assert_int_eq(rte_pktmbuf_alloc_bulk(mp, m, 8), 0);
	ops->xbufs(ex, 0, &xb);
	b = ops->batch_get(ex, 0);
	for (i = 0; i < 8; i++) {
		uint8_t *p = rte_pktmbuf_mtod(m[i], uint8_t *);
		unsigned k;

		for (k = 0; k < 100; k++)
			p[k] = (uint8_t)(k + i);
		p[4] = (uint8_t)(2 * i);
		b->pkts[i] =
			(struct gcap_pkt){ (uint64_t)(uintptr_t)p, i, 100, 100, 0, 0, i };
		b->mbufs[i] = m[i];
	}
	b->n = 8;
	b->xbuf = &xb[0];
	xb[0].len = xb[0].nrec = 0;
	ck_assert_int_eq(ops->batch_submit(ex, 0, b), 0);
	b = wait_done(ex, 0);
	scratch = malloc(c.xbuf_size);
	ck_assert_uint_eq(check_batch(&c, b, scratch), 8);
	ops->batch_release(ex, 0, b);
	free(scratch);
	rte_pktmbuf_free_bulk(m, 8);
	ck_assert_int_eq(ops->stop(ex, 5000, err), 0);
	rte_mempool_free(mp);
	ops->destroy(ex);
}
END_TEST

/* Two pipeline queues on the same GPU listed twice and, when there are
 * two GPUs, one queue per GPU (--gpu 0,1). */
START_TEST(test_multi_gpu)
{
	struct gcap_exec_conf c;
	struct bpf_program progs[2];
	char err[GCAP_ERRBUF_SIZE] = "";
	struct gcap_exec *ex;
	int gpus[2] = { 0, 1 }, n = 0;
	uint64_t rs = 3;
	unsigned q;

	ck_assert_int_eq(gcap_gpu_probe(&n, err), 0);
	if (n < 2)
		gpus[1] = 0;
	base_conf(&c, progs);
	c.nqueues = 4;
	c.gpus = gpus;
	c.ngpus = 2;
	ex = ops->create(&c, err);
	ck_assert_msg(ex != NULL, "create: %s", err);
	for (q = 0; q < c.nqueues; q++) {
		struct gcap_xbuf *xb;
		struct gcap_batch *b = ops->batch_get(ex, q);
		uint32_t seq = 0;
		uint8_t *scratch = malloc(c.xbuf_size);

		ops->xbufs(ex, q, &xb);
		ck_assert_msg(b != NULL, "batch_get: %s",
			      ops->health(ex, err) ? err : "ring full");
		fill_batch(b, 50, q, &seq, &rs);
		b->xbuf = &xb[0];
		xb[0].len = xb[0].nrec = 0;
		ck_assert_int_eq(ops->batch_submit(ex, q, b), 0);
		b = wait_done(ex, q);
		check_batch(&c, b, scratch);
		ops->batch_release(ex, q, b);
		free(scratch);
	}
	printf("multi-gpu: %d GPU(s) usable, 4 queues checked\n", n);
	ck_assert_int_eq(ops->stop(ex, 5000, err), 0);
	ops->destroy(ex);
}
END_TEST

/* GCAP_GPU_TESTS=name,name runs only those (e.g. under compute-sanitizer) */
#define ADD(tc, fn)                                            \
	do {                                                   \
		const char *only = getenv("GCAP_GPU_TESTS");   \
		if (only == NULL || strstr(only, #fn) != NULL) \
			tcase_add_test(tc, fn);                \
	} while (0)

int
main(void)
{
	char msg[GCAP_ERRBUF_SIZE];
	Suite *s;
	SRunner *sr;
	TCase *tc;
	int nf;

	/* probe in a child: CUDA must not be initialised before check forks */
	if (probe_in_child(msg, sizeof(msg)) != 0) {
		printf("no usable GPU (%s): skipped\n", msg);
		return 77;
	}
	printf("GPU probe: %s\n", msg);
	ops = gcap_exec_gpu_ops();
	if (ops == NULL) {
		printf("no gpu executor in this build: skipped\n");
		return 77;
	}
	s = suite_create("gpu");
	tc = tcase_create("executor");
	tcase_set_timeout(tc, 300);
	ADD(tc, test_truncation);
	ADD(tc, test_corpus_host);
	ADD(tc, test_corpus_copy);
	ADD(tc, test_corpus_compiled);
	ADD(tc, test_copy_overflow);
	ADD(tc, test_kernel_fault);
	ADD(tc, test_quit_full_load);
	ADD(tc, test_pools);
	ADD(tc, test_multi_gpu);
	ADD(tc, test_copy_work_queues);
	ADD(tc, test_copy_ring_full);
	ADD(tc, test_copy_stress);
	ADD(tc, test_copy_many_queues);
	ADD(tc, test_default_blocks);
	ADD(tc, test_doorbell_stress);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? 1 : 0;
}
