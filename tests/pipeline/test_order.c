/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The writer thread's merge (dataplane/pipeline_order.c) and its plain
 * path (gcap_pl_write_xbuf) against a model, without ports or lcores:
 * queues' export buffers laid out as the RX lcores leave them (each
 * queue's records in time order, bursts of one time, many times shared
 * between queues, buffers of random sizes), handed to the merge, and the
 * file read back with libpcap. The merge must write the records in the
 * order of (time, queue, place in the queue): the earliest first, a tie
 * to the lower queue; records of one burst go as one run where there is
 * one output, record by record where there are two, and both must give
 * that order. -c stops after exactly its count; with marks of the
 * queues' idle polls the merge writes exactly the records not later
 * than them; what it writes without waiting is counted, run or not,
 * and under --backpressure it waits for a queue that is not quiet
 * (or quiet too long ago);
 * without the merge each buffer's records go as they are.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include "gpucap/gcap_writer.h"
#include "../../dataplane/pipeline_internal.h"

#define MAXQ 8u
#define MAXREC 6000u
#define T0 (1700000000ull * 1000000000ull)
/* room for 8 records of 200 bytes, or 20 of 20 */
#define XBUF_BYTES 2048u

struct ref {
	uint64_t ts;
	unsigned q, pos, id;
	uint64_t outmask;
};

struct model {
	struct gcap_pipeline pl;
	struct gcap_pipeline_queue srcs[MAXQ];
	uint8_t *mem;
	unsigned nq, n;
	unsigned used[MAXQ];     /* buffers with records */
	unsigned npos[MAXQ];     /* records */
	struct ref recs[MAXREC]; /* in the order they were laid out */
	char dir[64];
};

static uint64_t
xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* The records' order in a file: time, then queue, then place. */
static int
ref_cmp(const void *a, const void *b)
{
	const struct ref *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->q != y->q)
		return x->q < y->q ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Queues and their buffers, no record yet. */
static void
model_init(struct model *m, unsigned nq, unsigned n)
{
	struct gcap_pipeline *pl = &m->pl;
	/* every buffer holds a record at least; a queue draws about n / nq */
	const unsigned nb = 2 * n / nq + 8;
	uint8_t *p;

	memset(m, 0, sizeof(*m));
	m->nq = nq;
	pl->q = calloc(nq, sizeof(*pl->q));
	m->mem = calloc((size_t)nq * nb, XBUF_BYTES);
	ck_assert_ptr_nonnull(pl->q);
	ck_assert_ptr_nonnull(m->mem);
	p = m->mem;
	for (unsigned q = 0; q < nq; q++) {
		struct pl_queue *pq = &pl->q[q];
		uint32_t ring = 1;

		while (ring < nb)
			ring <<= 1;
		pq->nxbufs = nb;
		pq->xbufs = calloc(nb, sizeof(*pq->xbufs));
		ck_assert_ptr_nonnull(pq->xbufs);
		ck_assert_int_eq(gcap_spsc_init(&pq->full, ring), 0);
		ck_assert_int_eq(gcap_spsc_init(&pq->free, ring), 0);
		/* no queue's held buffers force the merge early */
		pq->xa.cap = UINT64_MAX / 2;
		for (unsigned k = 0; k < nb; k++, p += XBUF_BYTES) {
			pq->xbufs[k].data = p;
			pq->xbufs[k].size = XBUF_BYTES;
			pq->xbufs[k].queue = (uint16_t)q;
			pq->xbufs[k].index = (uint16_t)k;
		}
	}
	strcpy(m->dir, "/tmp/gcap-order-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(m->dir));
}

/* Record m->n to queue q at time ts, in a new buffer where cut (or where
 * the queue has none): its bytes start with its id. */
static void
model_add(struct model *m, unsigned q, uint64_t ts, uint32_t caplen, uint64_t outmask,
	  bool cut)
{
	struct pl_queue *pq = &m->pl.q[q];
	const unsigned id = m->n;
	struct gcap_xbuf *xb;
	struct gcap_rec r = { .ts_ns = ts,
			      .outmask = outmask,
			      .caplen = caplen,
			      .wirelen = caplen,
			      .seq = id,
			      .queue = (uint16_t)q };

	ck_assert_uint_lt(id, MAXREC);
	if (m->used[q] == 0 || cut) {
		ck_assert_uint_lt(m->used[q], pq->nxbufs);
		m->used[q]++;
	}
	xb = &pq->xbufs[m->used[q] - 1];
	ck_assert_uint_le(xb->len + GCAP_REC_SIZE(caplen), xb->size);
	memcpy(xb->data + xb->len, &r, sizeof(r));
	memset(xb->data + xb->len + sizeof(r), 0x5a, GCAP_REC_SIZE(caplen) - sizeof(r));
	memcpy(xb->data + xb->len + sizeof(r), &id, sizeof(id));
	xb->len += GCAP_REC_SIZE(caplen);
	xb->nrec++;
	m->recs[id] = (struct ref){
		.ts = ts, .q = q, .pos = m->npos[q]++, .id = id, .outmask = outmask
	};
	m->n++;
}

/* n records over nq queues from seed: bursts of 1..40 records of one
 * time to one queue; a queue's next burst is 0..2 steps of 10 ns later
 * than its last, so that times tie across queues often; buffers of 1..8
 * records, as batches complete. Two outputs: each record's outmask is
 * 1, 2 or 3. */
static void
model_fill(struct model *m, unsigned nq, unsigned n, uint64_t seed, bool two)
{
	uint64_t qts[MAXQ];
	unsigned inbuf[MAXQ] = { 0 };

	model_init(m, nq, n);
	for (unsigned q = 0; q < nq; q++)
		qts[q] = T0;
	while (m->n < n) {
		const unsigned q = (unsigned)(xorshift(&seed) % nq);
		unsigned burst = 1 + (unsigned)(xorshift(&seed) % 40);

		qts[q] += 10 * (xorshift(&seed) % 3);
		for (; burst > 0 && m->n < n; burst--) {
			const bool cut = inbuf[q] == 8 || xorshift(&seed) % 4 == 0;
			const uint32_t caplen = 20 + (uint32_t)(xorshift(&seed) % 180);

			inbuf[q] = cut ? 1 : inbuf[q] + 1;
			model_add(m, q, qts[q], caplen, two ? 1 + xorshift(&seed) % 3 : 1,
				  cut);
		}
	}
}

/* The merge's clock where the now it was given may be stale (0: no
 * later than that now). */
static uint64_t test_mono;

static uint64_t
test_clock(void)
{
	return test_mono;
}

/* Open nw writers (pcap, no I/O thread) and the merge (time order). */
static void
model_open(struct model *m, struct gcap_writer **w, unsigned nw, bool order,
	   uint64_t max_packets)
{
	static const struct gcap_writer_if eth = { .name = "t0", .linktype = DLT_EN10MB };
	struct gcap_pipeline *pl = &m->pl;
	char eb[GCAP_ERRBUF_SIZE], path[128];

	for (unsigned k = 0; k < nw; k++) {
		struct gcap_writer_conf wc = {
			.path = path, .fmt = GCAP_FMT_PCAP, .nifs = 1, .ifs = &eth
		};

		snprintf(path, sizeof(path), "%s/out%u.pcap", m->dir, k);
		w[k] = gcap_writer_open(&wc, eb);
		ck_assert_msg(w[k] != NULL, "%s", eb);
	}
	pl->conf.nqueues = m->nq;
	pl->conf.queues = m->srcs;
	pl->conf.time_order = order;
	pl->conf.order_window_ms = 60000;
	pl->conf.nwriters = nw;
	pl->conf.writers = w;
	pl->conf.max_packets = max_packets;
	pthread_mutex_init(&pl->err_lock, NULL);
	ck_assert_int_eq(gcap_pl_order_create(pl, eb), 0);
	gcap_pl_order_set_clock(pl, test_clock);
	test_mono = 0;
	for (unsigned q = 0; q < m->nq; q++)
		for (unsigned x = 0; x < m->used[q]; x++)
			ck_assert_int_eq(
				gcap_spsc_push(&pl->q[q].full, &pl->q[q].xbufs[x]), 0);
}

static void
model_close(struct gcap_writer **w, unsigned nw)
{
	char eb[GCAP_ERRBUF_SIZE];

	for (unsigned i = 0; i < nw; i++)
		ck_assert_msg(gcap_writer_close(w[i], NULL, eb) == 0, "%s", eb);
}

/* Output k's record ids, read back with libpcap. @return their count. */
static unsigned
model_read(const struct model *m, unsigned k, unsigned *ids)
{
	char eb[PCAP_ERRBUF_SIZE], path[128];
	struct pcap_pkthdr *h;
	const u_char *d;
	unsigned n = 0;
	pcap_t *p;

	snprintf(path, sizeof(path), "%s/out%u.pcap", m->dir, k);
	p = pcap_open_offline(path, eb);
	ck_assert_msg(p != NULL, "%s", eb);
	while (pcap_next_ex(p, &h, &d) == 1) {
		ck_assert_uint_lt(n, MAXREC);
		memcpy(&ids[n++], d, sizeof(ids[0]));
	}
	pcap_close(p);
	return n;
}

static void
model_free(struct model *m)
{
	char cmd[96];

	gcap_pl_order_destroy(&m->pl);
	for (unsigned q = 0; q < m->nq; q++) {
		gcap_spsc_fini(&m->pl.q[q].full);
		gcap_spsc_fini(&m->pl.q[q].free);
		free(m->pl.q[q].xbufs);
	}
	free(m->pl.q);
	free(m->mem);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", m->dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* ids must be the records of the model's order whose outmask has bit k,
 * the first want of them. */
static void
expect_order(struct model *m, const unsigned *ids, unsigned got, unsigned k,
	     unsigned want, const char *what)
{
	struct ref *s = malloc(m->n * sizeof(*s));
	unsigned j = 0;

	ck_assert_ptr_nonnull(s);
	memcpy(s, m->recs, m->n * sizeof(*s));
	qsort(s, m->n, sizeof(*s), ref_cmp);
	for (unsigned i = 0; i < m->n && j < want; i++) {
		if (!(s[i].outmask >> k & 1))
			continue;
		ck_assert_msg(j < got, "%s: %u records written, more wanted", what, got);
		ck_assert_msg(ids[j] == s[i].id,
			      "%s: record %u is %u, want %u (time %llu, queue %u)", what,
			      j, ids[j], s[i].id, (unsigned long long)s[i].ts, s[i].q);
		j++;
	}
	ck_assert_msg(got == j, "%s: %u records written, want %u", what, got, j);
	free(s);
}

START_TEST(test_merge_order)
{
	static struct model m;
	static unsigned ids[MAXREC];
	static const unsigned nqs[] = { 2, 3, 5, 8 };
	struct gcap_writer *w[2];
	char what[64];

	for (unsigned two = 0; two < 2; two++)
		for (unsigned c = 0; c < sizeof(nqs) / sizeof(nqs[0]); c++) {
			const unsigned nw = two ? 2 : 1;
			bool any = false;

			model_fill(&m, nqs[c], MAXREC, 0x9e3779b97f4a7c15ull + c, two);
			model_open(&m, w, nw, true, 0);
			/* as the writer thread: while every queue has records,
			 * then (as at the stop) everything */
			ck_assert_int_eq(gcap_pl_order_run(&m.pl, 0, false, &any), 0);
			ck_assert_int_eq(gcap_pl_order_run(&m.pl, 0, true, &any), 0);
			ck_assert_uint_eq(gcap_pipeline_order_forced(&m.pl), 0);
			model_close(w, nw);
			for (unsigned k = 0; k < nw; k++) {
				unsigned got = model_read(&m, k, ids);

				snprintf(what, sizeof(what), "%u queues, output %u of %u",
					 nqs[c], k, nw);
				expect_order(&m, ids, got, k, MAXREC, what);
			}
			model_free(&m);
		}
}
END_TEST

START_TEST(test_merge_count)
{
	static struct model m;
	static unsigned ids[MAXREC];
	struct gcap_writer *w[1];
	bool any = false;
	unsigned got;

	/* -c in the middle of a burst */
	model_fill(&m, 4, MAXREC, 77, false);
	model_open(&m, w, 1, true, 2345);
	ck_assert_int_eq(gcap_pl_order_run(&m.pl, 0, true, &any), 1);
	ck_assert_uint_eq(gcap_pipeline_written(&m.pl), 2345);
	gcap_pl_order_release(&m.pl, false);
	model_close(w, 1);
	got = model_read(&m, 0, ids);
	expect_order(&m, ids, got, 0, 2345, "-c 2345");
	model_free(&m);
}
END_TEST

START_TEST(test_merge_idle_marks)
{
	static struct model m;
	static unsigned ids[MAXREC];
	struct gcap_writer *w[1];

	for (unsigned c = 0; c < 2; c++) {
		unsigned got, want = 0;
		uint64_t mark;
		bool any = false;

		if (c == 0) {
			/* queue 0: a burst at the mark, the next one after it,
			 * in one buffer; queue 1 later still; queue 2 has
			 * nothing: the merge stops at the mark, inside the
			 * run the burst starts */
			model_init(&m, 3, 64);
			for (unsigned i = 0; i < 20; i++)
				model_add(&m, 0, T0 + (i < 10 ? 100 : 110), 20, 1, false);
			for (unsigned i = 0; i < 5; i++)
				model_add(&m, 1, T0 + 200, 20, 1, false);
			mark = T0 + 105;
		} else {
			/* queues 0..3 at random, queue 4 with nothing: the
			 * mark is the time of the middle record */
			model_fill(&m, 4, MAXREC, 4242, false);
			m.nq = 5;
			m.pl.q = realloc(m.pl.q, 5 * sizeof(*m.pl.q));
			ck_assert_ptr_nonnull(m.pl.q);
			memset(&m.pl.q[4], 0, sizeof(m.pl.q[4]));
			m.pl.q[4].nxbufs = 1;
			m.pl.q[4].xbufs = calloc(1, sizeof(*m.pl.q[4].xbufs));
			ck_assert_ptr_nonnull(m.pl.q[4].xbufs);
			ck_assert_int_eq(gcap_spsc_init(&m.pl.q[4].full, 2), 0);
			ck_assert_int_eq(gcap_spsc_init(&m.pl.q[4].free, 2), 0);
			m.pl.q[4].xa.cap = UINT64_MAX / 2;
			mark = m.recs[m.n / 2].ts;
		}
		for (unsigned i = 0; i < m.n; i++)
			want += m.recs[i].ts <= mark;
		/* every queue's idle poll: nothing of mine before the mark */
		model_open(&m, w, 1, true, 0);
		for (unsigned q = 0; q < m.nq; q++)
			atomic_store(&m.pl.q[q].idle_wm, mark);
		ck_assert_int_eq(gcap_pl_order_run(&m.pl, 0, false, &any), 0);
		ck_assert_uint_eq(gcap_pipeline_written(&m.pl), want);
		gcap_pl_order_release(&m.pl, false);
		model_close(w, 1);
		got = model_read(&m, 0, ids);
		expect_order(&m, ids, got, 0, want,
			     c == 0 ? "idle marks, one run" : "idle marks");
		model_free(&m);
	}
}
END_TEST

/* A queue with nothing and no mark, and the other's held buffers past a
 * quarter of its export memory: the merge does not wait, and counts
 * every record it wrote so (order_forced), those of a run too. Under
 * --backpressure it waits while that queue is not quiet (its records are
 * on their way, or its quiet poll is ORDER_QUIET_NS old: its lcore may
 * have lost its CPU since, also where the pass began in time but ran
 * long: the clock read then says), then goes on once it is (or its lcore
 * has handed over all it will), or once the window passed. */
START_TEST(test_merge_forced)
{
	static struct model m;
	static unsigned ids[MAXREC];
	static const char *const what[] = { "forced",
					    "--backpressure, quiet",
					    "--backpressure, the window",
					    "--backpressure, quiet again",
					    "--backpressure, its lcore done",
					    "--backpressure, quiet by a stale now" };
	const uint64_t now = 1000000000u, window = 60000ull * 1000000u;
	struct gcap_writer *w[1];

	for (unsigned c = 0; c < 6; c++) {
		bool any = false;
		unsigned got;

		model_init(&m, 2, 64);
		for (unsigned i = 0; i < 30; i++)
			model_add(&m, 0, T0 + (i < 20 ? 100 : 110), 20, 1, i == 20);
		m.pl.q[0].xa.cap = 4 * XBUF_BYTES;
		m.pl.conf.backpressure = c > 0;
		model_open(&m, w, 1, true, 0);
		/* case 3: its quiet poll is too old */
		if (c == 3)
			atomic_store(&m.pl.q[1].quiet_at, now - ORDER_QUIET_NS);
		/* case 5: quiet by the now the run was given, not by the clock
		 * (the pass began that long before: a writer behind) */
		if (c == 5) {
			atomic_store(&m.pl.q[1].quiet_at, now - ORDER_QUIET_NS + 1);
			test_mono = now + 1000000u;
		}
		if (c > 0) {
			/* queue 1 is not quiet: nothing goes, however full */
			ck_assert_int_eq(gcap_pl_order_run(&m.pl, now, false, &any), 0);
			if (c == 5)
				test_mono = now + window + 1000000u;
			ck_assert_int_eq(
				gcap_pl_order_run(&m.pl, now + window - 1, false, &any),
				0);
			ck_assert_uint_eq(gcap_pipeline_written(&m.pl), 0);
			ck_assert_uint_eq(gcap_pipeline_order_forced(&m.pl), 0);
			/* the writer thread spins for them, not sleeps */
			ck_assert(gcap_pl_order_soon(&m.pl));
		}
		/* a poll just after the writer's clock, or just in time */
		if (c == 1)
			atomic_store(&m.pl.q[1].quiet_at, now + 5);
		if (c == 3)
			atomic_store(&m.pl.q[1].quiet_at, now - ORDER_QUIET_NS + 1);
		/* case 4: its lcore has handed over all it will */
		if (c == 4)
			atomic_store(&m.pl.q[1].quiet_at, UINT64_MAX);
		/* case 5: a poll just before the clock's now */
		if (c == 5)
			atomic_store(&m.pl.q[1].quiet_at, test_mono - 1);
		ck_assert_int_eq(gcap_pl_order_run(&m.pl, c == 2 ? now + window : now,
						   false, &any),
				 0);
		ck_assert_uint_eq(gcap_pipeline_written(&m.pl), 30);
		ck_assert_uint_eq(gcap_pipeline_order_forced(&m.pl), 30);
		ck_assert(!gcap_pl_order_soon(&m.pl));
		model_close(w, 1);
		got = model_read(&m, 0, ids);
		expect_order(&m, ids, got, 0, 30, what[c]);
		model_free(&m);
	}
}
END_TEST

/* An RX lcore's poll makes its queue quiet (quiet_at: the poll's time)
 * only where it asked the port, got nothing and holds nothing on its way
 * to the writer; any other poll makes it not quiet (0), and the mark
 * follows (host's clock). A quiet queue's time is stored again every
 * ORDER_QUIET_STEP_NS of quiet polls. */
START_TEST(test_quiet_mark)
{
	static struct pl_queue q;
	static struct gcap_xbuf held;
	static const struct {
		bool empty, polled;
		uint64_t inflight;
		int held; /* -1: none; else a held buffer of so many records */
		unsigned ncarry;
		bool quiet, mark;
	} c[] = {
		{ true, true, 0, -1, 0, true, true },    /* idle */
		{ false, true, 0, -1, 0, false, false }, /* got packets */
		{ true, true, 0, -1, 0, true, true },
		{ true, false, 0, -1, 0, false, true }, /* --rx-rate skipped it */
		{ true, true, 1, -1, 0, false, false }, /* a batch in flight */
		{ true, true, 0, 2, 0, false, false },  /* records held */
		{ true, true, 0, 0, 0, true, true },    /* a batch all filtered */
		{ true, true, 0, -1, 3, false, false }, /* packets carried */
		{ true, true, 0, -1, 0, true, true },
	};
	uint64_t mono = 1000000000u, at;

	for (unsigned i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		mono += 2 * ORDER_QUIET_STEP_NS;
		q.inflight = c[i].inflight;
		held.nrec = c[i].held > 0 ? (uint32_t)c[i].held : 0;
		q.held = c[i].held >= 0 ? &held : NULL;
		q.ncarry = c[i].ncarry;
		atomic_store(&q.idle_wm, 0);
		order_mark(&q, c[i].empty, c[i].polled, mono);
		at = atomic_load(&q.quiet_at);
		ck_assert_msg(c[i].quiet ? at >= mono && at <= mono + 1 : at == 0,
			      "case %u: quiet at %llu, poll at %llu", i,
			      (unsigned long long)at, (unsigned long long)mono);
		ck_assert_msg((atomic_load(&q.idle_wm) != 0) == c[i].mark,
			      "case %u: mark", i);
	}
	/* quiet on: stored again a step later, not before */
	order_mark(&q, true, true, mono + ORDER_QUIET_STEP_NS - 2);
	ck_assert_uint_eq(atomic_load(&q.quiet_at), at);
	order_mark(&q, true, true, mono + ORDER_QUIET_STEP_NS + 2);
	ck_assert_uint_ge(atomic_load(&q.quiet_at), mono + ORDER_QUIET_STEP_NS + 2);
}
END_TEST

/* Without the merge: each buffer's records as they are, queue after
 * queue; -c stops inside a buffer. */
START_TEST(test_plain_buffers)
{
	static struct model m;
	static unsigned ids[MAXREC];
	struct gcap_writer *w[1];

	for (unsigned c = 0; c < 2; c++) {
		const uint64_t max = c == 0 ? 0 : 3001;
		unsigned got, k = 0;
		int r = 0;

		model_fill(&m, 3, MAXREC, 99 + c, false);
		model_open(&m, w, 1, false, max);
		for (unsigned q = 0; q < m.nq && r == 0; q++)
			for (unsigned x = 0; x < m.used[q] && r == 0; x++) {
				uint32_t done;

				r = gcap_pl_write_xbuf(&m.pl, &m.pl.q[q].xbufs[x], &done);
				if (r == 0)
					ck_assert_uint_eq(done, m.pl.q[q].xbufs[x].nrec);
			}
		ck_assert_int_eq(r, max != 0);
		model_close(w, 1);
		got = model_read(&m, 0, ids);
		ck_assert_uint_eq(got, max != 0 ? max : MAXREC);
		for (unsigned q = 0; q < m.nq; q++)
			for (unsigned i = 0; i < m.n && k < got; i++)
				if (m.recs[i].q == q)
					ck_assert_uint_eq(ids[k++], m.recs[i].id);
		ck_assert_uint_eq(k, got);
		model_free(&m);
	}
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("order");
	TCase *tc = tcase_create("merge");
	SRunner *sr;
	int nf;

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_merge_order);
	tcase_add_test(tc, test_merge_count);
	tcase_add_test(tc, test_merge_idle_marks);
	tcase_add_test(tc, test_merge_forced);
	tcase_add_test(tc, test_quiet_mark);
	tcase_add_test(tc, test_plain_buffers);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? 0 : 1;
}
