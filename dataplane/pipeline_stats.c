/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pipeline's statistics and instrumentation, out of the packet path:
 * the queues' counters and latency histograms read back (relaxed
 * snapshots, percentiles), and the rare or once-a-run parts of what the
 * RX lcores measure (a poll gap counted, the lcore's own page faults and
 * context switches, the --poll-phases clock). What runs per poll or per
 * batch (latency histograms, the latency split, gap checks, phase marks)
 * is inline in pipeline_internal.h.
 */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <sys/resource.h>

#include "pipeline_internal.h"

int
gcap_pl_phases_init(struct gcap_pipeline *pl, char *errbuf)
{
	uint64_t hz = rte_get_tsc_hz();

	if (hz == 0)
		return gcap_err(errbuf, ENOTSUP,
				"--poll-phases: the TSC "
				"rate is unknown");
	pl->ph_mult = (1000000000ull << 20) / hz;
	pl->ph_long = hz / 1000000u * GCAP_POLL_PHASE_LONG_US;
	return 0;
}

/* A busy poll of queue q came gap ns after the one before, and gap is at
 * least poll_gap_us[0]: count it (rare; out of line). */
void __attribute__((cold, noinline))
gcap_pl_poll_gap_record(struct pl_queue *q, uint64_t gap)
{
	for (unsigned i = 0; i < GCAP_POLL_GAP_BUCKETS; i++)
		if (gap >= poll_gap_us[i] * 1000ull)
			STAT_ADD(q->st.poll_gaps[i], 1);
	STAT_ADD(q->st.poll_gap_ns, gap);
	if (gap > q->st.poll_gap_max_ns)
		__atomic_store_n(&q->st.poll_gap_max_ns, gap, __ATOMIC_RELAXED);
	q->gaps++;
}

/* Called by the RX lcore as it returns, ru0 read as it started. */
void
gcap_pl_lcore_usage(struct gcap_queue_stats *st, const struct rusage *ru0)
{
	struct rusage ru1;

	if (getrusage(RUSAGE_THREAD, &ru1) != 0)
		return;
	STAT_ADD(st->lcore_minflt, (uint64_t)(ru1.ru_minflt - ru0->ru_minflt));
	STAT_ADD(st->lcore_majflt, (uint64_t)(ru1.ru_majflt - ru0->ru_majflt));
	STAT_ADD(st->lcore_nvcsw, (uint64_t)(ru1.ru_nvcsw - ru0->ru_nvcsw));
	STAT_ADD(st->lcore_nivcsw, (uint64_t)(ru1.ru_nivcsw - ru0->ru_nivcsw));
}

void
gcap_pipeline_queue_stats(const struct gcap_pipeline *pl, unsigned qi,
			  struct gcap_queue_stats *out)
{
	const struct gcap_queue_stats *s = &pl->q[qi].st;

#define LD(f) out->f = __atomic_load_n(&s->f, __ATOMIC_RELAXED)
	LD(rx_pkts);
	LD(rx_bytes);
	LD(captured);
	LD(captured_bytes);
	LD(filtered);
	LD(drop_pipeline);
	LD(drop_writer);
	LD(drop_chained);
	LD(batches);
	LD(exec_ns);
	LD(cycle_ns);
	LD(polls);
	for (unsigned i = 0; i < GCAP_LAT_BUCKETS; i++) {
		LD(lat[i]);
		LD(lat_no_gap[i]);
	}
	for (unsigned i = 0; i < GCAP_LAT_PART_BUCKETS; i++) {
		LD(lat_cycle[i]);
		LD(lat_exec[i]);
		LD(lat_in[i]);
		LD(lat_back[i]);
	}
	for (unsigned i = 0; i < GCAP_POLL_GAP_BUCKETS; i++)
		LD(poll_gaps[i]);
	LD(poll_gap_ns);
	LD(bp_wait_exec_ns);
	LD(bp_wait_writer_ns);
	LD(poll_gap_max_ns);
	LD(lcore_minflt);
	LD(lcore_majflt);
	LD(lcore_nvcsw);
	LD(lcore_nivcsw);
	for (unsigned i = 0; i < GCAP_POLL_PHASES; i++) {
		LD(phase_ns[i]);
		LD(phase_long[i]);
	}
	LD(file_ns);
	LD(file_cpu_ns);
	LD(file_wait_exec_ns);
	LD(file_wait_writer_ns);
	LD(file_wait_copy_ns);
	LD(file_spans);
	LD(file_span_bytes);
	LD(file_span_stop);
	LD(file_span_walks);
	for (unsigned i = 0; i < 4; i++)
		LD(file_span_ns[i]);
#undef LD
}

uint64_t
gcap_pipeline_written(const struct gcap_pipeline *pl)
{
	return atomic_load(&((struct gcap_pipeline *)pl)->written);
}

/* the bucket count of a kind's histograms */
static unsigned
lat_buckets(enum gcap_lat_kind kind)
{
	return kind == GCAP_LAT_TOTAL || kind == GCAP_LAT_NO_GAP ? GCAP_LAT_BUCKETS :
								   GCAP_LAT_PART_BUCKETS;
}

/* queue q's histogram of a kind (lat_buckets(kind) entries) */
static const uint64_t *
lat_hist(const struct gcap_pipeline *pl, unsigned q, enum gcap_lat_kind kind)
{
	const struct gcap_queue_stats *st = &pl->q[q].st;

	switch (kind) {
	case GCAP_LAT_CYCLE: return st->lat_cycle;
	case GCAP_LAT_EXEC: return st->lat_exec;
	case GCAP_LAT_IN: return st->lat_in;
	case GCAP_LAT_BACK: return st->lat_back;
	case GCAP_LAT_NO_GAP: return st->lat_no_gap;
	default: return st->lat;
	}
}

uint64_t
gcap_pipeline_latency_count(const struct gcap_pipeline *pl, enum gcap_lat_kind kind)
{
	uint64_t total = 0;
	unsigned nb = lat_buckets(kind);

	for (unsigned q = 0; q < pl->conf.nqueues; q++) {
		const uint64_t *h = lat_hist(pl, q, kind);

		for (unsigned i = 0; i < nb; i++)
			total += __atomic_load_n(&h[i], __ATOMIC_RELAXED);
	}
	return total;
}

uint64_t
gcap_pipeline_latency_of_ns(const struct gcap_pipeline *pl, enum gcap_lat_kind kind,
			    double pct)
{
	uint64_t total = gcap_pipeline_latency_count(pl, kind), want, acc = 0;
	unsigned nb = lat_buckets(kind);

	if (total == 0)
		return 0;
	want = (uint64_t)((double)total * pct / 100.0);
	if (want == 0)
		want = 1;
	for (unsigned i = 0; i < nb; i++) {
		for (unsigned q = 0; q < pl->conf.nqueues; q++)
			acc += __atomic_load_n(&lat_hist(pl, q, kind)[i],
					       __ATOMIC_RELAXED);
		if (acc >= want)
			return (uint64_t)(i + 1) * 1000u;
	}
	return (uint64_t)nb * 1000u;
}

uint64_t
gcap_pipeline_latency_ns(const struct gcap_pipeline *pl, double pct)
{
	return gcap_pipeline_latency_of_ns(pl, GCAP_LAT_TOTAL, pct);
}

uint64_t
gcap_pipeline_beat(const struct gcap_pipeline *pl, unsigned q)
{
	if (q == UINT_MAX)
		return __atomic_load_n(&pl->writer_beat, __ATOMIC_RELAXED);
	return q < pl->conf.nqueues ? __atomic_load_n(&pl->q[q].beat, __ATOMIC_RELAXED) :
				      0;
}
