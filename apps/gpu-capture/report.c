/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpu-capture's reports: what a run counted, summed over its queues and
 * ports, printed as the --stats line and the summary at exit, written as
 * --summary-json (through the shared JSON writer, gcap_json.h) and handed
 * to the writers as per-interface statistics. Apart from the runs so that
 * every report reads the same sums.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpucap/gcap_common.h"
#include "gpucap/gcap_json.h"
#include "gpucap/gcap_outfile.h"
#include "app_err.h"
#include "report.h"

/* the poll gaps' bounds (us), as gcap_queue_stats.poll_gaps counts them */
static const unsigned gap_us[GCAP_POLL_GAP_BUCKETS] = GCAP_POLL_GAP_US;

static const char *const phase_names[GCAP_POLL_PHASES] = GCAP_POLL_PHASE_NAMES;

static void
sum_queues(const struct app *a, unsigned port_index, bool all, struct app_totals *t)
{
	struct gcap_queue_stats *s = malloc(sizeof(*s));

	memset(t, 0, sizeof(*t));
	if (s == NULL)
		return;
	for (unsigned i = 0; i < a->nqueues; i++) {
		if (!all && a->queues != NULL && a->queues[i].port_index != port_index)
			continue;
		gcap_pipeline_queue_stats(a->pl, i, s);
		t->q.rx_pkts += s->rx_pkts;
		t->q.rx_bytes += s->rx_bytes;
		t->q.captured += s->captured;
		t->q.captured_bytes += s->captured_bytes;
		t->q.filtered += s->filtered;
		t->q.drop_pipeline += s->drop_pipeline;
		t->q.drop_writer += s->drop_writer;
		t->q.drop_chained += s->drop_chained;
		t->q.batches += s->batches;
		t->q.exec_ns += s->exec_ns;
		t->q.cycle_ns += s->cycle_ns;
		t->q.polls += s->polls;
		for (unsigned k = 0; k < GCAP_POLL_GAP_BUCKETS; k++)
			t->q.poll_gaps[k] += s->poll_gaps[k];
		t->q.poll_gap_ns += s->poll_gap_ns;
		t->q.bp_wait_exec_ns += s->bp_wait_exec_ns;
		t->q.bp_wait_writer_ns += s->bp_wait_writer_ns;
		if (s->poll_gap_max_ns > t->q.poll_gap_max_ns)
			t->q.poll_gap_max_ns = s->poll_gap_max_ns;
		t->q.lcore_minflt += s->lcore_minflt;
		t->q.lcore_majflt += s->lcore_majflt;
		t->q.lcore_nvcsw += s->lcore_nvcsw;
		t->q.lcore_nivcsw += s->lcore_nivcsw;
		for (unsigned k = 0; k < GCAP_POLL_PHASES; k++) {
			t->q.phase_ns[k] += s->phase_ns[k];
			t->q.phase_long[k] += s->phase_long[k];
		}
	}
	free(s);
	if (all)
		t->write_failed = gcap_pipeline_write_failed(a->pl);
	for (unsigned p = 0; p < a->nports; p++) {
		struct gcap_port_stats ps;

		if (!all && p != port_index)
			continue;
		if (gcap_port_stats(&a->ports[p], &ps) == 0) {
			t->imissed += ps.imissed;
			t->rx_nombuf += ps.rx_nombuf;
		}
	}
}

/* tcpdump's plural: "1 packet", "0 packets" */
#define PLURAL(n) ((n) == 1 ? "" : "s")

static uint64_t
dropped(const struct app_totals *t)
{
	return t->imissed + t->rx_nombuf + t->q.drop_pipeline + t->q.drop_writer +
	       t->q.drop_chained + t->write_failed;
}

void
app_totals_read(const struct app *a, int port, struct app_totals *t)
{
	sum_queues(a, port < 0 ? 0 : (unsigned)port, port < 0, t);
}

uint64_t
app_totals_dropped(const struct app_totals *t)
{
	return dropped(t);
}

void
app_io_wait(const struct app *a, uint64_t *waits, uint64_t *ns)
{
	*waits = a->io_waits;
	*ns = a->io_wait_ns;
	for (unsigned i = 0; i < a->nwriters; i++) {
		uint64_t n, t;

		gcap_writer_io_wait(a->writers[i], &n, &t);
		*waits += n;
		*ns += t;
	}
}

void
app_report_stats_line(const struct app *a, struct app_totals *prev, double dt)
{
	struct app_totals t;

	sum_queues(a, 0, true, &t);
	fprintf(stderr,
		"gpu-capture: %.3f Mpps %.3f Gb/s | received %" PRIu64
		" captured %" PRIu64 " written %" PRIu64 " dropped %" PRIu64,
		(double)(t.q.rx_pkts - prev->q.rx_pkts) / dt / 1e6,
		(double)(t.q.rx_bytes - prev->q.rx_bytes) * 8 / dt / 1e9, t.q.rx_pkts,
		t.q.captured, gcap_pipeline_written(a->pl), dropped(&t));
	if (t.q.drop_chained > 0) /* a named reason: never a silent cut */
		fprintf(stderr, " (chained %" PRIu64 ")", t.q.drop_chained);
	for (unsigned p = 0; a->nports > 1 && p < a->nports; p++) {
		struct app_totals pt;

		sum_queues(a, p, false, &pt);
		fprintf(stderr, " | %s rx %" PRIu64 " drop %" PRIu64, a->ports[p].name,
			pt.q.rx_pkts, dropped(&pt));
	}
	/* busy RX lcores that lost their CPUs in this interval */
	if (a->o->busy_poll && t.q.poll_gaps[1] > prev->q.poll_gaps[1] && a->nqueues > 0)
		fprintf(stderr,
			" | poll gaps >= 10 us %.0f/s per queue (longest so far %.0f us)",
			(double)(t.q.poll_gaps[1] - prev->q.poll_gaps[1]) / dt /
				a->nqueues,
			(double)t.q.poll_gap_max_ns / 1e3);
	fputc('\n', stderr);
	*prev = t;
}

void
app_report_status(const struct app *a, struct app_totals *prev, double dt, char *buf,
		  size_t len)
{
	struct app_totals t;

	sum_queues(a, 0, true, &t);
	snprintf(buf, len,
		 "capturing: %.3f Mpps %.3f Gb/s | received %" PRIu64 " captured %" PRIu64
		 " written %" PRIu64 " dropped %" PRIu64,
		 (double)(t.q.rx_pkts - prev->q.rx_pkts) / dt / 1e6,
		 (double)(t.q.rx_bytes - prev->q.rx_bytes) * 8 / dt / 1e9, t.q.rx_pkts,
		 t.q.captured, gcap_pipeline_written(a->pl), dropped(&t));
	*prev = t;
}

/* Busy-polling RX lcores that paused >= 10 us: say so (what every packet
 * in flight waited, and how a NIC's ring fills); docs/tuning.md says what
 * to change on the host. */
static void
print_poll_gaps(const struct app *a, const struct app_totals *t, double secs)
{
	const unsigned *us = gap_us;

	if (!a->o->busy_poll || t->q.poll_gaps[1] == 0 || secs <= 0 || a->nqueues == 0)
		return;
	fprintf(stderr,
		"RX polls paused >= %u us %" PRIu64
		" times (%.1f/s per queue; >= %u us: %.1f/s), "
		"longest %.0f us, %.2f%% of the time in gaps of %u us or more: the RX "
		"lcores "
		"lost their CPUs, or at full load a poll's own work took that long "
		"(their threads: %" PRIu64 " involuntary context switches, %" PRIu64
		" page faults; see docs/tuning.md)\n",
		us[1], t->q.poll_gaps[1], (double)t->q.poll_gaps[1] / secs / a->nqueues,
		us[3], (double)t->q.poll_gaps[3] / secs / a->nqueues,
		(double)t->q.poll_gap_max_ns / 1e3,
		(double)t->q.poll_gap_ns / 1e7 / secs / a->nqueues, us[0],
		t->q.lcore_nivcsw, t->q.lcore_minflt + t->q.lcore_majflt);
}

/* --poll-phases: the RX lcores' timed polling, every phase together (ns) */
static uint64_t
phases_total(const struct gcap_queue_stats *st)
{
	uint64_t all = 0;

	for (unsigned k = 0; k < GCAP_POLL_PHASES; k++)
		all += st->phase_ns[k];
	return all;
}

/* --poll-phases: each phase's share of the RX lcores' polling time, and
 * its spans of GCAP_POLL_PHASE_LONG_US or more per second and queue */
static void
print_poll_phases(const struct app *a, const struct app_totals *t, double secs)
{
	uint64_t all = phases_total(&t->q);

	if (!a->o->poll_phases || secs <= 0 || a->nqueues == 0)
		return;
	if (all == 0)
		return;
	fprintf(stderr,
		"RX poll phases (share of the time; spans >= %u us per s per queue):",
		GCAP_POLL_PHASE_LONG_US);
	for (unsigned k = 0; k < GCAP_POLL_PHASES; k++)
		fprintf(stderr, "%s %s %.1f%% (%.0f)", k ? "," : "", phase_names[k],
			100.0 * (double)t->q.phase_ns[k] / (double)all,
			(double)t->q.phase_long[k] / secs / a->nqueues);
	fprintf(stderr, "\n");
}

void
app_report_summary(const struct app *a, uint64_t captured, double secs)
{
	struct app_totals t;

	sum_queues(a, 0, true, &t);
	/* tcpdump's lines first, its words and plurals, for the scripts
	 * that read them: the capture's own buffers' drops (libpcap's
	 * ps_drop) "by kernel", the port's (imissed, rx_nombuf: ps_ifdrop)
	 * "by interface" where there are any; what a write lost (ENOSPC, a
	 * reader gone) is neither, named on the line of reasons */
	uint64_t ifdrop = t.imissed + t.rx_nombuf,
		 kdrop = t.q.drop_pipeline + t.q.drop_writer + t.q.drop_chained;

	fprintf(stderr, "%" PRIu64 " packet%s captured\n", captured, PLURAL(captured));
	/* several outputs: what each one's files hold (a packet may be in
	 * several; what a failed write cut back is lost there only) */
	for (unsigned i = 0; a->nclosed > 1 && i < a->nclosed; i++) {
		uint64_t lost = gcap_pipeline_output_lost(a->pl, i);

		fprintf(stderr, "  %" PRIu64 " written to %s", a->out_kept[i],
			a->o->outs[i].path);
		if (lost > 0)
			fprintf(stderr, " (%" PRIu64 " lost at a failed write)", lost);
		fputc('\n', stderr);
	}
	fprintf(stderr, "%" PRIu64 " packet%s received by filter\n", t.q.rx_pkts,
		PLURAL(t.q.rx_pkts));
	fprintf(stderr, "%" PRIu64 " packet%s dropped by kernel\n", kdrop, PLURAL(kdrop));
	if (ifdrop > 0)
		fprintf(stderr, "%" PRIu64 " packet%s dropped by interface\n", ifdrop,
			PLURAL(ifdrop));
	if (dropped(&t) > 0)
		fprintf(stderr,
			"  dropped: imissed %" PRIu64 ", rx_nombuf %" PRIu64
			", pipeline full %" PRIu64 ", writer behind %" PRIu64
			", chained %" PRIu64 ", write failed %" PRIu64 "\n",
			t.imissed, t.rx_nombuf, t.q.drop_pipeline, t.q.drop_writer,
			t.q.drop_chained, t.write_failed);
	uint64_t forced = gcap_pipeline_order_forced(a->pl);

	if (forced > 0)
		fprintf(stderr,
			"%" PRIu64 " packets written before a queue that had nothing "
			"(--time-order-window passed, or its export memory filled): the "
			"file may step back in time after them\n",
			forced);
	uint64_t waits, wait_ns;

	app_io_wait(a, &waits, &wait_ns);
	if (waits > 0)
		fprintf(stderr,
			"%.3f s waited for the outputs' storage (%" PRIu64
			" times every buffer of an output's I/O thread was full): the "
			"outputs took the records slower than they came\n",
			(double)wait_ns / 1e9, waits);
	if (t.q.bp_wait_exec_ns + t.q.bp_wait_writer_ns > 0)
		fprintf(stderr,
			"%.3f s the ports waited for the writer and %.3f s for the "
			"executor (--backpressure, over %u queue%s of %.3f s): their "
			"packets stayed in the ports meanwhile\n",
			(double)t.q.bp_wait_writer_ns / 1e9,
			(double)t.q.bp_wait_exec_ns / 1e9, a->nqueues,
			a->nqueues == 1 ? "" : "s", secs);
	for (unsigned p = 0; a->nports > 1 && p < a->nports; p++) {
		struct app_totals pt;

		sum_queues(a, p, false, &pt);
		fprintf(stderr,
			"  %s: received %" PRIu64 ", captured %" PRIu64
			", filtered out %" PRIu64 ", dropped %" PRIu64 "\n",
			a->ports[p].name, pt.q.rx_pkts, pt.q.captured, pt.q.filtered,
			dropped(&pt));
	}
	print_poll_gaps(a, &t, secs);
	print_poll_phases(a, &t, secs);
}

/* Drops the host made: the pipeline's and the writer's (isb_osdrop). */
static uint64_t
host_dropped(const struct app_totals *t)
{
	return t->q.drop_pipeline + t->q.drop_writer + t->q.drop_chained +
	       t->write_failed;
}

void
app_report_if_stats(const struct app *a, struct gcap_writer_if_stats *st)
{
	struct app_totals t;

	if (a->pl == NULL)
		return; /* nothing counted yet */
	if (a->nports == 0) {
		sum_queues(a, 0, true, &t);
		st[0].received = t.q.rx_pkts;
		st[0].dropped = 0;
		st[0].os_dropped = host_dropped(&t);
		st[0].filter_accepted = t.q.captured;
		return;
	}
	for (unsigned p = 0; p < a->nports; p++) {
		/* one port: the run's totals, write failures included */
		sum_queues(a, p, a->nports == 1, &t);
		st[p].received = t.q.rx_pkts + t.imissed + t.rx_nombuf;
		st[p].dropped = t.imissed + t.rx_nombuf; /* the NIC's */
		st[p].os_dropped = host_dropped(&t);
		st[p].filter_accepted = t.q.captured;
	}
}

/* ------------------------------------------------------ --summary-json */

/* "p50", "p99", "p999" of the packets' latency (or the part kind), in us */
static void
json_latency(struct gcap_json *j, const struct app *a, enum gcap_lat_kind kind)
{
	gcap_json_key_f64(j, "p50", gcap_pipeline_latency_of_ns(a->pl, kind, 50) / 1e3,
			  1);
	gcap_json_key_f64(j, "p99", gcap_pipeline_latency_of_ns(a->pl, kind, 99) / 1e3,
			  1);
	gcap_json_key_f64(j, "p999", gcap_pipeline_latency_of_ns(a->pl, kind, 99.9) / 1e3,
			  1);
}

/* where the latency's tail is: the batch's round trip (submit to
 * verdict), the executor's own time, and the two legs around it, per
 * packet */
static void
json_latency_parts(struct gcap_json *j, const struct app *a)
{
	static const struct {
		const char *name;
		enum gcap_lat_kind kind;
	} parts[] = {
		{ "cycle", GCAP_LAT_CYCLE },
		{ "exec", GCAP_LAT_EXEC },
		{ "in", GCAP_LAT_IN },
		{ "back", GCAP_LAT_BACK },
	};
	static const double pct[] = { 50, 99 };
	char key[32];

	gcap_json_object_begin(j, "latency_parts_us");
	for (unsigned i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		for (unsigned k = 0; k < sizeof(pct) / sizeof(pct[0]); k++) {
			snprintf(key, sizeof(key), "%s_p%.0f", parts[i].name, pct[k]);
			gcap_json_key_f64(j, key,
					  gcap_pipeline_latency_of_ns(
						  a->pl, parts[i].kind, pct[k]) /
						  1e3,
					  1);
		}
	gcap_json_object_end(j);
}

/* busy-poll gaps (docs/tuning.md): per queue and second, by bound */
static void
json_poll_gaps(struct gcap_json *j, const struct app_totals *t, double per)
{
	char key[32];

	gcap_json_object_begin(j, "poll_gaps");
	for (unsigned k = 0; k < GCAP_POLL_GAP_BUCKETS; k++) {
		snprintf(key, sizeof(key), "ge%uus_per_s", gap_us[k]);
		gcap_json_key_f64(j, key, per > 0 ? (double)t->q.poll_gaps[k] / per : 0.0,
				  1);
	}
	gcap_json_key_f64(j, "longest_us", (double)t->q.poll_gap_max_ns / 1e3, 1);
	gcap_json_key_f64(j, "time_pct",
			  per > 0 ? (double)t->q.poll_gap_ns / 1e7 / per : 0.0, 3);
	gcap_json_object_end(j);
}

/* --poll-phases: where the RX lcores' time and long spans went */
static void
json_poll_phases(struct gcap_json *j, const struct app_totals *t, double per)
{
	uint64_t all = phases_total(&t->q);
	char key[32];

	snprintf(key, sizeof(key), "ge%uus_per_s", GCAP_POLL_PHASE_LONG_US);
	gcap_json_object_begin(j, "poll_phases");
	for (unsigned k = 0; k < GCAP_POLL_PHASES; k++) {
		gcap_json_object_begin(j, phase_names[k]);
		gcap_json_key_f64(
			j, "time_pct",
			all ? 100.0 * (double)t->q.phase_ns[k] / (double)all : 0.0, 2);
		gcap_json_key_f64(j, key,
				  per > 0 ? (double)t->q.phase_long[k] / per : 0.0, 1);
		gcap_json_object_end(j);
	}
	gcap_json_object_end(j);
}

/* each queue's own counters (and, with --poll-phases, its long spans by
 * phase) */
static void
json_queue(struct gcap_json *j, const struct app *a, const struct gcap_queue_stats *s)
{
	gcap_json_object_begin(j, NULL);
	gcap_json_key_u64(j, "rx", s->rx_pkts);
	gcap_json_key_u64(j, "captured", s->captured);
	gcap_json_key_u64(j, "filtered", s->filtered);
	gcap_json_key_u64(j, "pipeline_full", s->drop_pipeline);
	gcap_json_key_u64(j, "writer_behind", s->drop_writer);
	gcap_json_key_u64(j, "batches", s->batches);
	gcap_json_key_u64(j, "poll_gaps_ge10us", s->poll_gaps[1]);
	gcap_json_key_f64(j, "poll_gap_longest_us", (double)s->poll_gap_max_ns / 1e3, 1);
	if (a->o->poll_phases) {
		gcap_json_object_begin(j, "phase_long");
		for (unsigned k = 0; k < GCAP_POLL_PHASES; k++)
			gcap_json_key_u64(j, phase_names[k], s->phase_long[k]);
		gcap_json_object_end(j);
	}
	gcap_json_object_end(j);
}

static void
json_summary(struct gcap_json *j, const struct app *a, const struct app_totals *t,
	     struct gcap_queue_stats *s, double secs)
{
	/* CPU time of every thread (RX lcores, writer, main, driver threads)
	 * since the capture started */
	double cpu = app_cpu_seconds() - a->cpu_start;
	double per = secs > 0 && a->nqueues > 0 ? secs * a->nqueues : 0.0;
	const struct gcap_queue_stats *q = &t->q;

	gcap_json_key_str(j, "backend", a->ops->name);
	gcap_json_key_f64(j, "seconds", secs, 6);
	gcap_json_key_f64(j, "cpu_seconds", cpu, 3);
	gcap_json_key_f64(j, "cores_used", secs > 0 ? cpu / secs : 0.0, 2);
	gcap_json_key_u64(j, "received", q->rx_pkts);
	gcap_json_key_u64(j, "received_bytes", q->rx_bytes);
	gcap_json_key_u64(j, "captured", q->captured);
	gcap_json_key_u64(j, "written", gcap_pipeline_written(a->pl));
	/* several outputs: each one's (the summary's lines) */
	if (a->nclosed > 1) {
		gcap_json_array_begin(j, "outputs");
		for (unsigned i = 0; i < a->nclosed; i++) {
			gcap_json_object_begin(j, NULL);
			gcap_json_key_str(j, "path", a->o->outs[i].path);
			gcap_json_key_u64(j, "written", a->out_kept[i]);
			gcap_json_key_u64(j, "write_failed",
					  gcap_pipeline_output_lost(a->pl, i));
			gcap_json_object_end(j);
		}
		gcap_json_array_end(j);
	}
	gcap_json_key_u64(j, "order_forced", gcap_pipeline_order_forced(a->pl));
	uint64_t waits, wait_ns;

	app_io_wait(a, &waits, &wait_ns);
	gcap_json_key_u64(j, "io_waits", waits);
	gcap_json_key_f64(j, "io_wait_seconds", (double)wait_ns / 1e9, 6);
	/* --backpressure: the queues' time held for either, summed */
	gcap_json_object_begin(j, "backpressure_wait_seconds");
	gcap_json_key_f64(j, "executor", (double)q->bp_wait_exec_ns / 1e9, 6);
	gcap_json_key_f64(j, "writer", (double)q->bp_wait_writer_ns / 1e9, 6);
	gcap_json_object_end(j);
	gcap_json_key_u64(j, "filtered", q->filtered);
	gcap_json_object_begin(j, "dropped");
	gcap_json_key_u64(j, "imissed", t->imissed);
	gcap_json_key_u64(j, "rx_nombuf", t->rx_nombuf);
	gcap_json_key_u64(j, "pipeline_full", q->drop_pipeline);
	gcap_json_key_u64(j, "writer_behind", q->drop_writer);
	gcap_json_key_u64(j, "chained", q->drop_chained);
	gcap_json_key_u64(j, "write_failed", t->write_failed);
	gcap_json_object_end(j);
	gcap_json_key_f64(j, "rx_mpps", secs > 0 ? (double)q->rx_pkts / secs / 1e6 : 0.0,
			  4);
	gcap_json_key_f64(j, "rx_gbps",
			  secs > 0 ? (double)q->rx_bytes * 8 / secs / 1e9 : 0.0, 4);
	gcap_json_object_begin(j, "latency_us");
	json_latency(j, a, GCAP_LAT_TOTAL);
	gcap_json_object_end(j);
	json_latency_parts(j, a);
	/* batching as the load made it, and the executor's share of the
	 * latency (its own time per batch; the rest is doorbells and waits) */
	gcap_json_key_u64(j, "batches", q->batches);
	gcap_json_key_f64(j, "batch_mean",
			  q->batches ? (double)(q->rx_pkts - q->drop_pipeline -
						q->drop_writer - q->drop_chained) /
					       (double)q->batches :
				       0.0,
			  1);
	gcap_json_key_f64(
		j, "exec_us_mean",
		q->batches ? (double)q->exec_ns / (double)q->batches / 1e3 : 0.0, 2);
	gcap_json_key_f64(
		j, "cycle_us_mean",
		q->batches ? (double)q->cycle_ns / (double)q->batches / 1e3 : 0.0, 2);
	/* how the RX lcores' polls cut the traffic: packets per poll that
	 * received some, and how often such a poll came on each queue */
	gcap_json_key_u64(j, "rx_polls", q->polls);
	gcap_json_key_f64(j, "pkts_per_poll",
			  q->polls ? (double)q->rx_pkts / (double)q->polls : 0.0, 1);
	gcap_json_key_f64(j, "poll_interval_us",
			  q->polls ? secs * 1e6 * a->nqueues / (double)q->polls : 0.0, 2);
	json_poll_gaps(j, t, per);
	/* the RX lcore threads' page faults and context switches */
	gcap_json_object_begin(j, "rx_lcores");
	gcap_json_key_u64(j, "minor_faults", q->lcore_minflt);
	gcap_json_key_u64(j, "major_faults", q->lcore_majflt);
	gcap_json_key_u64(j, "voluntary_switches", q->lcore_nvcsw);
	gcap_json_key_u64(j, "involuntary_switches", q->lcore_nivcsw);
	gcap_json_object_end(j);
	/* the latency of the packets no poll gap reached, and their share:
	 * how much of the tail is the RX lcores losing their CPUs */
	if (a->o->busy_poll) {
		uint64_t all = gcap_pipeline_latency_count(a->pl, GCAP_LAT_TOTAL);
		uint64_t calm = gcap_pipeline_latency_count(a->pl, GCAP_LAT_NO_GAP);

		gcap_json_object_begin(j, "latency_no_gap_us");
		json_latency(j, a, GCAP_LAT_NO_GAP);
		gcap_json_key_f64(j, "share", all ? (double)calm / (double)all : 0.0, 4);
		gcap_json_object_end(j);
	}
	if (a->o->poll_phases)
		json_poll_phases(j, t, per);
	gcap_json_array_begin(j, "queues");
	for (unsigned i = 0; i < a->nqueues; i++) {
		gcap_pipeline_queue_stats(a->pl, i, s);
		json_queue(j, a, s);
	}
	gcap_json_array_end(j);
}

int
app_report_json(const struct app *a, double secs)
{
	char eb[GCAP_ERRBUF_SIZE];
	/* a symbolic link planted in /tmp is refused, not followed */
	int fd = gcap_open_output(a->o->summary_json,
				  O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666, eb);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	struct app_totals t;
	struct gcap_queue_stats *s = malloc(sizeof(*s));
	struct gcap_json j;
	int r;

	if (f == NULL || s == NULL) {
		int e = errno;

		if (f != NULL)
			fclose(f);
		else if (fd >= 0)
			close(fd);
		free(s);
		if (fd == -ELOOP)
			app_err("%s", eb);
		else
			app_err("cannot write %s: %s", a->o->summary_json,
				strerror(fd < 0 ? -fd : e));
		return -1;
	}
	sum_queues(a, 0, true, &t);
	gcap_json_begin(&j, f);
	json_summary(&j, a, &t, s, secs);
	r = gcap_json_end(&j);
	free(s);
	return fclose(f) == 0 && r == 0 ? 0 : -1;
}
