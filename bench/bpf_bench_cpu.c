/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bpf_bench: the CPU engines, libpcap bpf_filter() and DPDK rte_bpf (the
 * JIT itself is in bpf_bench_rte.c), on 1 and N pinned threads over the
 * packet buffer. One thread calibrates how many packets a run of about
 * --cpu-secs takes; every timed run's match counts are checked against
 * the reference sums of its range.
 */
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf_bench_internal.h"

struct bb_work {
	const struct bb_ctx *c;
	const struct bb_set *s;
	int rte;
	uint64_t start, count;
	uint64_t any, bits;
	double t0, t1;
	pthread_barrier_t *bar;
};

/* captured bytes of count packets: the mean over the buffer is exact
 * enough */
static uint64_t
range_bytes(const struct bb_pkts *pk, uint64_t count)
{
	return (uint64_t)((double)pk->cap_bytes / (double)pk->n * (double)count);
}

static void
pcap_count(const struct bb_set *s, const struct bb_pkts *pk, uint64_t start,
	   uint64_t count, uint64_t *any, uint64_t *bits)
{
	const struct gcap_bench_desc *d = pk->desc;
	const uint8_t *base = pk->buf;
	uint64_t j = start % pk->n, a = 0, b = 0;
	unsigned np = s->np;

	while (count > 0) {
		uint64_t run = pk->n - j < count ? pk->n - j : count, i;

		for (i = j; i < j + run; i++) {
			const u_char *p = base + d[i].off;
			uint64_t m = 0;
			unsigned k;

			for (k = 0; k < np; k++)
				if (bpf_filter(s->progs[k].bf_insns, p, d[i].wirelen,
					       d[i].caplen) != 0)
					m |= 1ull << k;
			a += m != 0;
			b += (uint64_t)__builtin_popcountll(m);
		}
		count -= run;
		j = 0;
	}
	*any += a;
	*bits += b;
}

static void *
cpu_worker(void *arg)
{
	struct bb_work *w = arg;

	pthread_barrier_wait(w->bar);
	w->t0 = gcap_bench_now();
	if (w->rte)
		gcap_bench_rte_count(w->s->rte, w->s->np, w->c->pk.buf, w->c->pk.desc,
				     w->c->pk.n, w->start, w->count, &w->any, &w->bits);
	else
		pcap_count(w->s, &w->c->pk, w->start, w->count, &w->any, &w->bits);
	w->t1 = gcap_bench_now();
	return NULL;
}

/* run nthreads threads of per packets each; returns the seconds from the
 * first thread's start to the last one's end */
static double
cpu_sample(const struct bb_ctx *c, const struct bb_set *s, int rte, unsigned nthreads,
	   uint64_t per, uint64_t *any, uint64_t *bits, uint64_t *eany, uint64_t *ebits)
{
	struct bb_work w[64];
	pthread_t th[64];
	pthread_barrier_t bar;
	double t0 = 1e300, t1 = 0;
	unsigned t;

	pthread_barrier_init(&bar, NULL, nthreads);
	*any = *bits = *eany = *ebits = 0;
	for (t = 0; t < nthreads; t++) {
		pthread_attr_t at;
		cpu_set_t cs;

		memset(&w[t], 0, sizeof(w[t]));
		w[t].c = c;
		w[t].s = s;
		w[t].rte = rte;
		/* threads start far apart in the buffer */
		w[t].start = (c->pk.n / nthreads) * t;
		w[t].count = per;
		w[t].bar = &bar;
		pthread_attr_init(&at);
		CPU_ZERO(&cs);
		CPU_SET(c->cpus[t % c->ncpus], &cs);
		pthread_attr_setaffinity_np(&at, sizeof(cs), &cs);
		if (pthread_create(&th[t], &at, cpu_worker, &w[t]) != 0) {
			fprintf(stderr, "bpf_bench: pthread_create failed\n");
			exit(1);
		}
		pthread_attr_destroy(&at);
	}
	for (t = 0; t < nthreads; t++) {
		uint64_t a, b;

		pthread_join(th[t], NULL);
		*any += w[t].any;
		*bits += w[t].bits;
		gcap_bench_expect_range(s, &c->pk, w[t].start, w[t].count, &a, &b);
		*eany += a;
		*ebits += b;
		if (w[t].t0 < t0)
			t0 = w[t].t0;
		if (w[t].t1 > t1)
			t1 = w[t].t1;
	}
	pthread_barrier_destroy(&bar);
	return t1 - t0;
}

void
gcap_bench_cpu_engine(struct bb_ctx *c, unsigned si, int rte, unsigned nthreads,
		      enum bb_engine e)
{
	const struct bb_set *s = &c->sets[si];
	uint64_t any, bits, eany, ebits, per, cal;
	double secs, best = 0;
	unsigned r;
	char why[160];

	/* calibrate on one thread: per-thread packets for about cpu_secs */
	cal = c->pk.n < 20000 ? c->pk.n : 20000;
	secs = cpu_sample(c, s, rte, 1, cal, &any, &bits, &eany, &ebits);
	per = (uint64_t)((double)cal / (secs > 1e-6 ? secs : 1e-6) * c->o.cpu_secs);
	if (per < 20000)
		per = 20000;
	for (r = 0; r < c->o.reps; r++) {
		secs = cpu_sample(c, s, rte, nthreads, per, &any, &bits, &eany, &ebits);
		if (any != eany || bits != ebits) {
			snprintf(why, sizeof(why),
				 "matches %" PRIu64 "/%" PRIu64
				 " != bpf_filter() %" PRIu64 "/%" PRIu64,
				 any, bits, eany, ebits);
			gcap_bench_record(c, si, e, -1, per * nthreads, secs,
					  range_bytes(&c->pk, per * nthreads), nthreads,
					  why);
			return;
		}
		if (r == 0 || secs < best)
			best = secs;
	}
	snprintf(why, sizeof(why), "%" PRIu64 " pkts/thread, matches checked", per);
	gcap_bench_record(c, si, e, 1, per * nthreads, best,
			  range_bytes(&c->pk, per * nthreads), nthreads, why);
}

void
gcap_bench_rte_prepare(const struct bb_ctx *c, struct bb_set *s)
{
	char err[256];
	unsigned k, i, bad = 0;

	for (k = 0; k < s->np; k++) {
		if (gcap_bench_rte_load(&s->progs[k], &s->rte[k], err, sizeof(err))) {
			snprintf(s->rte_err, sizeof(s->rte_err), "'%.60s': %.180s",
				 s->exprs[k], err);
			return;
		}
	}
	for (i = 0; i < c->pk.nbase; i++)
		if (gcap_bench_rte_mask(s->rte, s->np, c->pk.bdata[i], c->pk.bcap[i]) !=
		    s->ref[i])
			bad++;
	if (bad) {
		snprintf(s->rte_err, sizeof(s->rte_err),
			 "verdicts differ from bpf_filter() on %u of %u packets", bad,
			 c->pk.nbase);
		s->rte_ok = -1;
		return;
	}
	s->rte_ok = 1;
}
